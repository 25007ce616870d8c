package mpicheck

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/child"
)

// Session is one launch of the loop in its serve mode: a communicator per
// setting, made with the setting's control variables written through the
// MPI tool interface, and one of the defaults; Run times chunks of one of
// them. A session's launch is in a process group of its own, killed as a
// whole by Close or when a run overruns its limit.
type Session struct {
	p        *Program
	ranks    int
	settings []string
	proc     *child.Proc
	// Dropped are the settings the implementation refused at the start
	// (by index from 1), with why.
	Dropped map[int]string
	// K is the barriers of one chunk.
	K      int
	dead   error
	waited bool
}

// SessionConfig says what a session launches.
type SessionConfig struct {
	// Ranks is the rank count.
	Ranks int
	// Settings are NAME=INT[,NAME=INT] control-variable settings (Open
	// MPI: coll_tuned_barrier_algorithm=1), at most 16.
	Settings []string
	// Env is added to the launch's environment (Open MPI:
	// OMPI_MCA_coll_tuned_use_dynamic_rules=1, so that the forced values
	// count).
	Env []string
	// Chunk is one chunk's target time (default 0.005 s); MaxBarriers
	// caps one run's barriers (default 1,000,000).
	Chunk       float64
	MaxBarriers int
	// Limit bounds the start (launch, communicators, warm-up); default
	// 30 s.
	Limit time.Duration
}

// StartSession launches the loop in serve mode and waits until it is
// ready.
func (p *Program) StartSession(ctx context.Context, c SessionConfig) (*Session, error) {
	if c.Ranks < 1 || len(c.Settings) > 16 {
		panic(fmt.Sprintf("mpicheck: SessionConfig with %d ranks and %d settings", c.Ranks, len(c.Settings)))
	}
	if c.Chunk <= 0 {
		c.Chunk = 0.005
	}
	if c.MaxBarriers <= 0 {
		c.MaxBarriers = 1_000_000
	}
	if c.Limit <= 0 {
		c.Limit = 30 * time.Second
	}
	args := p.launchArgs(c.Ranks, nil)
	args = append(args, p.Path, "serve", ftoa(c.Chunk), strconv.Itoa(c.MaxBarriers))
	args = append(args, c.Settings...)
	proc, err := child.Start(p.env(c.Env), p.Launcher, args...)
	if err != nil {
		return nil, fmt.Errorf("%w: starting %s: %v", ErrCrashed, p.Launcher, err)
	}
	s := &Session{p: p, ranks: c.Ranks, settings: c.Settings, proc: proc, Dropped: map[int]string{}}
	for {
		l, err := s.next(ctx, c.Limit)
		if err != nil {
			s.Close()
			return nil, err
		}
		f := strings.Fields(l)
		switch {
		case len(f) >= 2 && f[0] == "dropped":
			i, _ := strconv.Atoi(f[1])
			s.Dropped[i] = strings.Join(f[2:], " ")
		case len(f) >= 2 && f[0] == "ready":
			s.K, _ = strconv.Atoi(f[1])
			if len(f) > 2 && p.Version == "" {
				p.Version = strings.Join(f[2:], " ")
			}
			return s, nil
		}
	}
}

// next is the launch's next line within limit; an error when the launch
// ended, overran the limit (its group is then killed) or ctx ended.
func (s *Session) next(ctx context.Context, limit time.Duration) (string, error) {
	if s.dead != nil {
		return "", s.dead
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case l, ok := <-s.proc.Lines:
		if ok {
			return l, nil
		}
		werr := s.proc.Wait()
		s.waited = true
		s.dead = fmt.Errorf("%w: the launch ended (%v): %s", ErrCrashed, werr, child.FirstLines(s.proc.Stderr(), 3))
	case <-t.C:
		s.proc.Kill()
		s.dead = fmt.Errorf("%w (%s)", ErrHung, limit)
	case <-ctx.Done():
		s.proc.Kill()
		s.dead = ctx.Err()
	}
	return "", s.dead
}

// Run times n chunks (1 to 64) of setting i (0: the defaults; the
// settings count from 1) and returns each chunk's slowest-rank time a
// barrier and leaving spread, in ns. A run that overruns limit kills the
// session (ErrHung); one of a dropped setting returns ErrRefused.
func (s *Session) Run(ctx context.Context, i, n int, limit time.Duration) (ns, spread []float64, err error) {
	if i < 0 || i > len(s.settings) || n < 1 || n > 64 {
		panic(fmt.Sprintf("mpicheck: Session.Run(%d, %d)", i, n))
	}
	if why, ok := s.Dropped[i]; ok {
		return nil, nil, fmt.Errorf("%w: %s", ErrRefused, why)
	}
	if s.dead != nil {
		return nil, nil, s.dead
	}
	if _, err := fmt.Fprintf(s.proc.Stdin, "run %d %d\n", i, n); err != nil {
		s.proc.Kill()
		s.dead = fmt.Errorf("%w: writing to the launch: %v", ErrCrashed, err)
		return nil, nil, s.dead
	}
	for {
		l, err := s.next(ctx, limit)
		if err != nil {
			return nil, nil, err
		}
		f := strings.Fields(l)
		if len(f) == 2 && f[0] == "refused" {
			return nil, nil, fmt.Errorf("%w: the loop refused run %d", ErrRefused, i)
		}
		if len(f) != 2*n+3 || f[0] != "result" || f[1] != strconv.Itoa(i) || f[n+2] != "spread" {
			continue
		}
		for k := 0; k < n; k++ {
			a, e1 := strconv.ParseFloat(f[2+k], 64)
			b, e2 := strconv.ParseFloat(f[n+3+k], 64)
			if e1 != nil || e2 != nil || !(a > 0) || b < 0 {
				return nil, nil, fmt.Errorf("%w: unexpected output %q", ErrCrashed, l)
			}
			ns, spread = append(ns, a), append(spread, b)
		}
		return ns, spread, nil
	}
}

// Close ends the session: "quit", then a kill of its group if it has not
// ended within 5 s. It returns the launch's stderr.
func (s *Session) Close() string {
	if s.waited {
		return string(s.proc.Stderr())
	}
	if s.dead == nil {
		fmt.Fprintln(s.proc.Stdin, "quit")
		s.proc.Stdin.Close()
		t := time.AfterFunc(5*time.Second, s.proc.Kill)
		defer t.Stop()
		s.dead = errors.New("closed")
	} else {
		s.proc.Kill()
	}
	s.proc.Wait()
	s.waited = true
	return string(s.proc.Stderr())
}
