package mpicheck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/child"
	"github.com/barriertune/barriertune/cmd/internal/pairs"
)

// Sample is one launch of the loop in its run mode.
type Sample struct {
	// Ranks is the launch's rank count (above the CPUs through the
	// implementation's oversubscription: Open MPI's --oversubscribe;
	// MPICH's launcher starts any count on the local node).
	Ranks int
	// Seconds is how long the timed chunks run, Chunk one chunk's target
	// (defaults 0.05 s and 0.005 s); MaxBarriers caps the barriers of the
	// launch (default 1,000,000), so that an implementation that takes
	// milliseconds a barrier (MPICH busy-polling above the CPUs) stops.
	Seconds, Chunk float64
	MaxBarriers    int
	// Env are the setting's variables (NAME=VALUE: Open MPI's
	// OMPI_MCA_name, MPICH's MPIR_CVAR_), added to an environment from
	// which every such variable was removed.
	Env []string
	// Args are launcher options placed before the program (--tune FILE).
	Args []string
	// Limit is the wall time after which the launch's process group is
	// killed (the run hung); 0: Seconds plus 20 s.
	Limit time.Duration
}

// Timing is what one launch measured.
type Timing struct {
	// NsPerBarrier is the median over the chunks of the slowest rank's
	// time a barrier; Chunks are the chunks' times, in order.
	NsPerBarrier float64
	Chunks       []float64
	// SpreadNs is the median over the chunks of how far apart the ranks
	// left the chunk's last barrier.
	SpreadNs float64
	// Library is the first line of MPI_Get_library_version.
	Library string
	// Stderr is what the launch wrote on stderr.
	Stderr string
}

// The ways a launch fails, wrapped with what happened.
var (
	// ErrHung: the run overran its limit and its process group was
	// killed (child.ErrHung).
	ErrHung = child.ErrHung
	// ErrCrashed: the run died on a signal or exited with a failure
	// (child.ErrCrashed; for a launch, also a rank that died or output
	// that was not the loop's).
	ErrCrashed = child.ErrCrashed
	// ErrRefused: the implementation refused the setting.
	ErrRefused = errors.New("refused by the implementation")
)

// Run launches the loop once as s says and returns its timing.
func (p *Program) Run(ctx context.Context, s Sample) (Timing, error) {
	if s.Ranks < 1 {
		panic(fmt.Sprintf("mpicheck: Sample.Ranks %d, want at least 1", s.Ranks))
	}
	if s.Seconds <= 0 {
		s.Seconds = 0.05
	}
	if s.Chunk <= 0 || s.Chunk > s.Seconds {
		s.Chunk = min(0.005, s.Seconds)
	}
	if s.MaxBarriers <= 0 {
		s.MaxBarriers = 1_000_000
	}
	limit := s.Limit
	if limit <= 0 {
		limit = time.Duration(s.Seconds*float64(time.Second)) + 20*time.Second
	}
	if err := p.checkCVARs(ctx, s.Env); err != nil {
		return Timing{}, err
	}
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	args := p.launchArgs(s.Ranks, s.Args)
	args = append(args, p.Path, "run", ftoa(s.Seconds), ftoa(s.Chunk), strconv.Itoa(s.MaxBarriers))
	out, err := child.Run(rctx, p.env(s.Env), p.Launcher, args...)
	stderr := strings.TrimSpace(string(out.Stderr))
	if err != nil {
		if w := p.refusedCVAR(stderr); w != "" && ctx.Err() == nil && !out.Killed {
			return Timing{}, fmt.Errorf("%w: %s", ErrRefused, w)
		}
		return Timing{}, child.Failure(ctx, out, err, limit, 3)
	}
	t := Timing{Stderr: stderr}
	var spreads []float64
	ranks := 0
	for _, l := range strings.Split(string(out.Stdout), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 4 && f[0] == "chunk":
			ns, e1 := strconv.ParseFloat(f[2], 64)
			sp, e2 := strconv.ParseFloat(f[3], 64)
			if e1 != nil || e2 != nil || !(ns > 0) || sp < 0 {
				return Timing{}, fmt.Errorf("%w: unexpected output %q", ErrCrashed, l)
			}
			t.Chunks = append(t.Chunks, ns)
			spreads = append(spreads, sp)
		case len(f) == 4 && f[0] == "ranks":
			ranks, _ = strconv.Atoi(f[1])
		case len(f) > 1 && f[0] == "library":
			t.Library = strings.TrimSpace(strings.TrimPrefix(l, "library"))
		}
	}
	if len(t.Chunks) == 0 {
		return Timing{}, fmt.Errorf("%w: no chunk timed (stdout %q)", ErrCrashed, child.FirstLines(out.Stdout, 2))
	}
	if ranks != s.Ranks {
		return Timing{}, fmt.Errorf("%w: the launch ran %d ranks, want %d", ErrRefused, ranks, s.Ranks)
	}
	if w := p.warned(stderr); w != "" {
		return Timing{}, fmt.Errorf("%w: %s", ErrRefused, w)
	}
	t.NsPerBarrier, t.SpreadNs = pairs.Median(t.Chunks), pairs.Median(spreads)
	if p.Version == "" {
		p.Version = t.Library
	}
	return t, nil
}

// launchArgs are the launcher's options for n ranks on this node.
func (p *Program) launchArgs(n int, extra []string) []string {
	var args []string
	switch p.Name {
	case OpenMPI:
		args = []string{"--oversubscribe", "-np", strconv.Itoa(n)}
		if p.CPUSet != "" {
			args = append(args, "--cpu-set", p.CPUSet)
		}
	default:
		args = []string{"-np", strconv.Itoa(n)}
	}
	return append(args, extra...)
}

// env is this process's environment less the implementations' own
// variables (OMPI_MCA_, MPIR_CVAR_, MPICH_), plus root's permission (Open
// MPI, as root), the installation's parameter file only (Open MPI), and
// the setting's.
func (p *Program) env(setting []string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OMPI_MCA_") || strings.HasPrefix(kv, "OMPI_ALLOW_RUN_AS_ROOT") || strings.HasPrefix(kv, "MPIR_CVAR_") || strings.HasPrefix(kv, "MPICH_") {
			continue
		}
		out = append(out, kv)
	}
	if p.Root != "" {
		out = append(out, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	}
	if p.Name == OpenMPI && p.ParamFiles != "" && !slices.ContainsFunc(setting, func(kv string) bool { return strings.HasPrefix(kv, "OMPI_MCA_mca_param_files=") }) {
		out = append(out, "OMPI_MCA_mca_param_files="+p.ParamFiles)
	}
	return append(out, setting...)
}

// warned is the implementation's complaint about a setting on stderr, or
// "": Open MPI's "WARNING" banners (an unknown MCA parameter, a bad
// value), MPICH's "Unknown" or "invalid" CVAR reports.
func (p *Program) warned(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		low := strings.ToLower(l)
		if strings.Contains(low, "warning") || strings.Contains(low, "invalid") || strings.Contains(low, "unknown") || strings.Contains(low, "error") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

func ftoa(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
