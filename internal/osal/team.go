package osal

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/barriertune/barriertune/cpuset"
)

// Team runs one function on n participants at once. A pinned team gives each
// participant its own locked OS thread bound to one CPU; an unpinned team
// uses plain goroutines, which the Go scheduler switches in user space (the
// right choice when participants outnumber the CPUs).
type Team struct {
	cpus cpuset.Placement // nil for an unpinned team
	n    int
}

// NewTeam returns a team whose participant i runs on a locked OS thread
// pinned to cpus[i]. Several participants may share a CPU. Every CPU must be
// in the allowed set; the error names the CPU and that set.
func NewTeam(cpus cpuset.Placement) (*Team, error) {
	if len(cpus) == 0 {
		return nil, errors.New("a team needs at least one CPU")
	}
	allowed, err := Allowed()
	if err != nil {
		return nil, err
	}
	for _, c := range cpus {
		if !allowed.Has(c) {
			return nil, fmt.Errorf("CPU %d is not allowed for this process (allowed CPUs: %s)", c, allowed)
		}
	}
	return &Team{cpus: append([]int(nil), cpus...), n: len(cpus)}, nil
}

// NewUnpinnedTeam returns a team of n plain goroutines.
func NewUnpinnedTeam(n int) (*Team, error) {
	if n < 1 {
		return nil, fmt.Errorf("a team needs at least one participant, got %d", n)
	}
	return &Team{n: n}, nil
}

// Size returns the number of participants.
func (t *Team) Size() int { return t.n }

// CPUs returns the CPUs participants are pinned to, or nil when unpinned.
func (t *Team) CPUs() []int { return append([]int(nil), t.cpus...) }

// Pinned reports whether participants run on pinned locked threads.
func (t *Team) Pinned() bool { return t.cpus != nil }

// Breaker is the barrier a team's participants share, as RunBarrier sees
// it (osal cannot import barriers): Break releases every waiter with an
// error. A Breaker may also implement Episodes(id int) uint64, the number
// of episodes participant id has entered (barriers' algorithms do); then
// RunBarrier also detects a participant that returned while another waits
// in an episode it will never join.
type Breaker interface{ Break() }

type episodeCounter interface{ Episodes(id int) uint64 }

// watchPeriod is how often RunBarrier compares episode counts while some
// participants have returned and others run.
const watchPeriod = time.Millisecond

// Run calls fn(rank) on every participant at once and returns when all have
// returned. In a pinned team every participant is locked and pinned before
// any of them starts fn; if one cannot be pinned, none runs fn and the error
// says why. Afterwards each thread gets its former affinity back and is
// unlocked, so no thread stays pinned or locked. A participant's panic is
// returned as an error naming its rank, with its stack; Run does not
// crash. Participants waiting on a barrier for the one that panicked stay
// blocked: use RunBarrier to break the barrier.
func (t *Team) Run(fn func(rank int)) error { return t.RunBarrier(nil, fn) }

// RunBarrier is Run for participants that synchronise on b (nil: none).
// It breaks b when
//   - a participant panics (the error names its rank and holds its stack;
//     the others then fail their Wait with the barrier's broken error,
//     which is returned too), or
//   - b implements Episodes(id) uint64 and a participant has returned
//     after entering k episodes while another has entered episode k+1,
//     which cannot complete without it (checked every millisecond while
//     some participants have returned and others run, and at each return).
//
// It does not detect a participant that blocks forever elsewhere, nor one
// that returns while the others still compute and have not yet entered the
// next episode (that is found once one of them enters it).
func (t *Team) RunBarrier(b Breaker, fn func(rank int)) error {
	type result struct {
		rank     int
		err      error
		episodes uint64
	}
	counter, _ := b.(episodeCounter)
	results := make(chan result, t.n)
	run := func(r int) {
		res := result{rank: r}
		defer func() {
			if p := recover(); p != nil {
				res.err = panicError(r, p)
				if b != nil {
					b.Break()
				}
			}
			if counter != nil {
				res.episodes = counter.Episodes(r)
			}
			results <- res
		}()
		fn(r)
	}
	started, done, err := t.start(run)
	if err != nil {
		return err
	}
	var errs []error
	returned := make(map[int]uint64) // rank -> episodes entered, normal returns
	broken := false
	var tick <-chan time.Time
	for left := started; left > 0; {
		select {
		case res := <-results:
			left--
			if res.err != nil {
				errs = append(errs, res.err)
			} else if counter != nil {
				returned[res.rank] = res.episodes
			}
			if counter != nil && tick == nil && left > 0 && len(returned) > 0 {
				tk := time.NewTicker(watchPeriod)
				defer tk.Stop()
				tick = tk.C
			}
		case <-tick:
		}
		if broken || counter == nil || len(returned) == 0 || left == 0 {
			continue
		}
		if e := abandoned(counter, returned, t.n); e != nil {
			broken = true
			errs = append([]error{e}, errs...)
			b.Break()
		}
	}
	done.Wait() // pinned threads have restored their affinity
	return errors.Join(errs...)
}

// abandoned returns an error when a returned participant has entered fewer
// episodes than a running one.
func abandoned(c episodeCounter, returned map[int]uint64, n int) error {
	for r, k := range returned {
		for q := 0; q < n; q++ {
			if _, done := returned[q]; done {
				continue
			}
			if eq := c.Episodes(q); eq > k {
				return fmt.Errorf("participant %d returned after %d episodes while participant %d waits in episode %d: barrier broken", r, k, q, eq)
			}
		}
	}
	return nil
}

// panicError turns a participant's panic into an error with its stack.
func panicError(rank int, p any) error {
	if err, ok := p.(error); ok {
		return fmt.Errorf("participant %d panicked: %w\n%s", rank, err, debug.Stack())
	}
	return fmt.Errorf("participant %d panicked: %v\n%s", rank, p, debug.Stack())
}

// start launches run(rank) on every participant and returns how many
// started (all of them, or none with the pinning error) and what to wait
// for before the pinned threads are back to their former affinity.
func (t *Team) start(run func(rank int)) (int, *sync.WaitGroup, error) {
	done := new(sync.WaitGroup)
	if t.cpus == nil {
		for r := 0; r < t.n; r++ {
			go run(r)
		}
		return t.n, done, nil
	}
	var ready sync.WaitGroup
	start := make(chan bool)
	errs := make([]error, t.n)
	for r := 0; r < t.n; r++ {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			saved, err := threadAffinity()
			if err == nil {
				err = Pin(t.cpus[r])
			}
			errs[r] = err
			ready.Done()
			if err != nil {
				<-start
				return
			}
			defer func() {
				if err := restoreAffinity(saved); err != nil {
					// The thread cannot be unpinned: keep it locked so the
					// runtime discards it when the goroutine exits.
					runtime.LockOSThread()
				}
			}()
			if ok := <-start; ok {
				run(r)
			}
		}()
	}
	ready.Wait()
	if err := errors.Join(errs...); err != nil {
		close(start) // receivers see false: nobody runs fn
		done.Wait()
		return 0, nil, err
	}
	for i := 0; i < t.n; i++ {
		start <- true
	}
	return t.n, done, nil
}

// RoundRobin returns n CPUs taken in turn from allowed (in increasing
// order): the default placement when none is given.
func RoundRobin(n int, allowed cpuset.Set) []int {
	m := allowed.Members()
	out := make([]int, n)
	for i := range out {
		out[i] = m[i%len(m)]
	}
	return out
}
