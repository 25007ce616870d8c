package barriers

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/barriertune/barriertune/internal/cpuhog"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/internal/workload"
)

// This file measures barriers the way programs use them: a 1D
// Jacobi stencil, each participant owning a block of cells, one barrier
// per step, on a quiet machine and with competing CPU-bound processes.
//
//   go test -run '^$' -bench Stencil ./barriers      (quiet, benchstat-ready)
//   cmd/scripts/stencil.sh                               (quiet and loaded, a table)
//
// cmd/scripts/stencil.sh runs TestStencilTable, which is skipped unless
// BARRIERTUNE_STENCIL=1: it interleaves runs of every implementation, on the
// quiet machine and with as many CPU-bound hog processes as CPUs
// (internal/cpuhog: this test binary re-executed, each spinning until
// a bound of its own and killed by pid when the loaded block ends),
// and prints the median and the worst run of each.

func TestMain(m *testing.M) {
	cpuhog.Main()
	if v := os.Getenv(pinMainEnv); v != "" {
		os.Exit(tunedOnMainThread(v))
	}
	os.Exit(m.Run())
}

// stencilShape is a loop shape: n participants, cells per participant,
// at most maxSteps steps or limit of time per run.
type stencilShape struct {
	name     string
	n, cells int
	maxSteps int
	pinned   bool // a pinned team on the first n allowed CPUs
}

func stencilShapes() []stencilShape {
	p := runtime.GOMAXPROCS(0)
	shapes := []stencilShape{{name: "fine", n: 2, cells: 256, maxSteps: 20000}}
	if p > 2 {
		shapes = append(shapes, stencilShape{name: "fine", n: p, cells: 256, maxSteps: 20000})
	}
	shapes = append(shapes,
		stencilShape{name: "coarse", n: 2, cells: 1 << 16, maxSteps: 400},
		stencilShape{name: "over", n: 4 * p, cells: 256, maxSteps: 5000},
		stencilShape{name: "fine-pinned", n: 2, cells: 256, maxSteps: 20000, pinned: true},
	)
	return shapes
}

// stencilImpl is one way to synchronise the steps: a barrier, or spawning
// the participants afresh every step (spawn).
type stencilImpl struct {
	name  string
	make  func(n int) (peerBarrier, error)
	spawn bool
}

// stencilImpls returns the implementations for a shape. Spin and the old
// AutoPolicy are left out when oversubscribed: they cost a scheduler
// time slice per step there by design (seconds per run).
func stencilImpls(pinned, over bool) []stencilImpl {
	auto := stencilImpl{"auto", func(n int) (peerBarrier, error) { return fallback(n, "stencil").New() }, false}
	spin := stencilImpl{"spin", func(n int) (peerBarrier, error) {
		return fallback(n, "stencil").New(WithPolicy(Spin))
	}, false}
	if pinned {
		return []stencilImpl{auto, spin}
	}
	out := []stencilImpl{auto}
	if !over {
		out = append(out,
			// AutoPolicy before the bounded spin: Yield with 2^16 relax hints.
			stencilImpl{"yield64k", func(n int) (peerBarrier, error) {
				return fallback(n, "stencil").New(WithPolicy(Yield), WithSpinBudget(1<<16))
			}, false},
			spin)
	}
	return append(out, []stencilImpl{
		{"cond", func(n int) (peerBarrier, error) { return workload.NewCondBarrier(n), nil }, false},
		{"chan", func(n int) (peerBarrier, error) { return newTextbookChan(n), nil }, false},
		{"waitgroup", func(n int) (peerBarrier, error) { return newTextbookWaitGroup(n), nil }, false},
		{"spawn", nil, true},
	}...)
}

// stencil is the grid (internal/workload's, which fieldbench runs too)
// and when its participants stop.
type stencil struct {
	*workload.Stencil
	stop  atomic.Int64 // the step after which every participant stops
	steps int
}

func newStencil(n, cells int) *stencil { return &stencil{Stencil: workload.NewStencil(n, cells)} }

// runStencil runs one shape with one implementation for at most maxSteps
// steps or limit, and returns ns per step. Participant 0 decides when to
// stop (every 8 steps) and publishes it before the step's barrier, so
// every participant stops after the same step.
func runStencil(sh stencilShape, im stencilImpl, limit time.Duration) (float64, error) {
	s := newStencil(sh.n, sh.cells)
	s.stop.Store(int64(sh.maxSteps))
	start := time.Now()
	if im.spawn {
		var wg sync.WaitGroup
		t := 0
		for ; t < sh.maxSteps; t++ {
			wg.Add(sh.n)
			for p := 0; p < sh.n; p++ {
				go func() {
					defer wg.Done()
					s.Step(p, t)
				}()
			}
			wg.Wait()
			if t%8 == 7 && time.Since(start) > limit {
				t++
				break
			}
		}
		return float64(time.Since(start).Nanoseconds()) / float64(t), nil
	}
	b, err := im.make(sh.n)
	if err != nil {
		return 0, err
	}
	var team *osal.Team
	if sh.pinned {
		allowed, err := osal.Allowed()
		if err != nil {
			return 0, err
		}
		if allowed.Len() < sh.n {
			return 0, fmt.Errorf("%d participants pinned need %d CPUs, %d allowed", sh.n, sh.n, allowed.Len())
		}
		team, err = osal.NewTeam(allowed.Members()[:sh.n])
		if err != nil {
			return 0, err
		}
	} else if team, err = osal.NewUnpinnedTeam(sh.n); err != nil {
		return 0, err
	}
	var steps atomic.Int64
	start = time.Now()
	err = team.Run(func(p int) {
		for t := 0; ; t++ {
			s.Step(p, t)
			if p == 0 && t%8 == 7 && time.Since(start) > limit {
				s.stop.Store(int64(t + 1))
			}
			b.Wait(p)
			if int64(t+1) >= s.stop.Load() {
				if p == 0 {
					steps.Store(int64(t + 1))
				}
				return
			}
		}
	})
	if err != nil {
		return 0, err
	}
	return float64(time.Since(start).Nanoseconds()) / float64(steps.Load()), nil
}

// BenchmarkStencil reports ns per step (ns/op) of every shape and
// implementation on whatever the machine is doing (no hogs).
func BenchmarkStencil(b *testing.B) {
	for _, sh := range stencilShapes() {
		for _, im := range stencilImpls(sh.pinned, osal.Oversubscribed(sh.n)) {
			b.Run(fmt.Sprintf("shape=%s/n=%d/impl=%s", sh.name, sh.n, im.name), func(b *testing.B) {
				one := sh
				one.maxSteps = b.N
				ns, err := runStencil(one, im, time.Hour)
				if err != nil {
					b.Skip(err)
				}
				b.ReportMetric(ns, "ns/step")
			})
		}
	}
}

// TestStencilCorrect checks that every implementation computes what one
// goroutine computes, step for step (a barrier that lets a participant
// run ahead reads a neighbour's cells of the wrong step).
func TestStencilCorrect(t *testing.T) {
	const n, cells, steps = 2, 8, 200
	want := newStencil(1, n*cells)
	for st := 0; st < steps; st++ {
		want.Step(0, st)
	}
	for _, im := range stencilImpls(false, osal.Oversubscribed(n)) {
		s := newStencil(n, cells)
		var wg sync.WaitGroup
		if im.spawn {
			for st := 0; st < steps; st++ {
				wg.Add(n)
				for p := 0; p < n; p++ {
					go func() { defer wg.Done(); s.Step(p, st) }()
				}
				wg.Wait()
			}
		} else {
			bar, err := im.make(n)
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(n)
			for p := 0; p < n; p++ {
				go func() {
					defer wg.Done()
					for st := 0; st < steps; st++ {
						s.Step(p, st)
						bar.Wait(p)
					}
				}()
			}
			wg.Wait()
		}
		if got := s.After(steps); !slices.Equal(got, want.After(steps)) {
			t.Errorf("%s: the grid after %d steps differs from one goroutine's", im.name, steps)
		}
	}
}

// TestStencilTable is the runner behind cmd/scripts/stencil.sh (skipped
// unless BARRIERTUNE_STENCIL=1). BARRIERTUNE_STENCIL_RUNS sets the runs per
// cell (default 7), BARRIERTUNE_STENCIL_HOGS the hogs of the loaded rows
// (default: as many as CPUs; 0 leaves the loaded rows out).
func TestStencilTable(t *testing.T) {
	if os.Getenv("BARRIERTUNE_STENCIL") != "1" {
		t.Skip("a measurement, not a test: run cmd/scripts/stencil.sh (BARRIERTUNE_STENCIL=1)")
	}
	runs := envInt("BARRIERTUNE_STENCIL_RUNS", 7)
	nhogs := envInt("BARRIERTUNE_STENCIL_HOGS", runtime.NumCPU())
	const limit = 150 * time.Millisecond
	type key struct{ load, shape, impl string }
	samples := map[key][]float64{}
	var order []key
	conds := []string{"quiet"}
	if nhogs > 0 {
		conds = append(conds, fmt.Sprintf("loaded(%d hogs)", nhogs))
	}
	for r := 0; r < runs; r++ {
		for _, load := range conds {
			var hs cpuhog.Hogs
			if load != "quiet" {
				var err error
				if hs, err = cpuhog.Spawn(nhogs, 30*time.Second, nil); err != nil {
					t.Fatal(err)
				}
			}
			func() {
				defer hs.Stop()
				for _, sh := range stencilShapes() {
					for _, im := range stencilImpls(sh.pinned, osal.Oversubscribed(sh.n)) {
						ns, err := runStencil(sh, im, limit)
						if err != nil {
							t.Logf("%s %s: %v", sh.name, im.name, err)
							continue
						}
						k := key{load, fmt.Sprintf("%s n=%d", sh.name, sh.n), im.name}
						if _, ok := samples[k]; !ok {
							order = append(order, k)
						}
						samples[k] = append(samples[k], ns)
					}
				}
			}()
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\nstencil: ns per step, %d runs per cell (median, worst); GOMAXPROCS=%d, %d CPUs, %s\n", runs, runtime.GOMAXPROCS(0), runtime.NumCPU(), time.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(&out, "%-18s %-14s %-10s %12s %12s %16s %16s\n", "load", "shape", "impl", "median", "worst", "cond med/median", "worst/cond med")
	for _, k := range order {
		s := samples[k]
		med, worst := medianOf(s), slices.Max(s)
		ratio, wr := "", ""
		if c := samples[key{k.load, k.shape, "cond"}]; len(c) > 0 {
			ratio = fmt.Sprintf("%.2fx", medianOf(c)/med)
			wr = fmt.Sprintf("%.2fx", worst/medianOf(c))
		}
		fmt.Fprintf(&out, "%-18s %-14s %-10s %12s %12s %16s %16s\n", k.load, k.shape, k.impl, fmtNs(med), fmtNs(worst), ratio, wr)
	}
	fmt.Print(out.String())
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

func medianOf(s []float64) float64 {
	v := slices.Clone(s)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func fmtNs(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e4:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	case ns >= 1e3:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}
