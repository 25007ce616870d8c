package check

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cmd/internal/mpicheck"
	"github.com/barriertune/barriertune/cmd/internal/pairs"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/results"
)

// The MPI step: where Open MPI or MPICH is installed (its compiler
// wrapper and launcher), the check times MPI_Barrier among ranks of this
// node under the implementation's defaults and under settings of its own
// knobs, per measured count as a rank count (cmd/internal/mpicheck), and
// records what it found in the file (results.MPI). It runs after the
// OpenMP step, in what it leaves of the runtimes' window (what the
// algorithms left of the budget): the algorithms' results are those of a
// check without it.

// Runtime names a check may measure (Config.Runtimes).
const (
	RuntimeOpenMP  = "openmp"
	RuntimeOpenMPI = mpicheck.OpenMPI
	RuntimeMPICH   = mpicheck.MPICH
	// RuntimeNone measures no runtime.
	RuntimeNone = "none"
)

// Runtimes are the runtime names --runtimes accepts (besides none).
func Runtimes() []string { return []string{RuntimeOpenMP, RuntimeOpenMPI, RuntimeMPICH} }

// ParseRuntimes reads a comma-separated list of runtimes (openmp,
// openmpi, mpich, or none alone); it names the value and what is accepted
// when it refuses.
func ParseRuntimes(s string) ([]string, error) {
	var out []string
	for _, r := range strings.Split(s, ",") {
		r = strings.TrimSpace(r)
		switch {
		case r == RuntimeNone && !strings.Contains(s, ","):
			return []string{}, nil
		case !slices.Contains(Runtimes(), r):
			return nil, fmt.Errorf("runtime %q: unknown (accepted: %s, or none alone)", r, strings.Join(Runtimes(), ", "))
		case slices.Contains(out, r):
			return nil, fmt.Errorf("runtime %q given twice", r)
		}
		out = append(out, r)
	}
	return out, nil
}

// wants reports whether the check measures runtime r (Config.Runtimes:
// nil is every runtime found).
func (cfg Config) wants(r string) bool {
	return cfg.Runtimes == nil || slices.Contains(cfg.Runtimes, r)
}

// mpiChunk and mpiChunks make one run's timed chunks (9 chunks of 1 ms:
// thirds of 3 for pairs.Steady).
const (
	mpiChunk  = 0.001
	mpiChunks = 9
)

// maxMPIRanks caps the rank counts launched: the check's larger counts
// (four times the PUs of a big node) would start hundreds of processes
// for one launch.
const maxMPIRanks = 256

// minMPIWindow is the least time the step starts with: a launch takes a
// second or more.
const minMPIWindow = 3 * time.Second

// mpiMeasurer builds the MPI loop (Hardware: with this machine's
// implementations; a simulation has none).
type mpiMeasurer interface {
	// MPIImplementations are the implementations to look for.
	MPIImplementations() []mpicheck.Implementation
	// BuildMPI builds the loop with im into dir.
	BuildMPI(ctx context.Context, im mpicheck.Implementation, dir string) (*mpicheck.Program, error)
}

// MPIImplementations are Open MPI and MPICH by Debian's names.
func (Hardware) MPIImplementations() []mpicheck.Implementation {
	return mpicheck.Implementations()
}

// BuildMPI builds the loop with im's wrapper (mpicheck.Build).
func (Hardware) BuildMPI(ctx context.Context, im mpicheck.Implementation, dir string) (*mpicheck.Program, error) {
	return mpicheck.Build(ctx, im, dir)
}

// mpiWanted are the implementations the check would measure: those
// Config.Runtimes names whose wrapper and launcher are on $PATH (a cheap
// look); none for a measurer that builds no MPI loop.
func mpiWanted(cfg Config, m Measurer) []mpicheck.Implementation {
	mm, ok := m.(mpiMeasurer)
	if !ok {
		return nil
	}
	var out []mpicheck.Implementation
	for _, im := range mm.MPIImplementations() {
		if cfg.wants(im.Name) {
			out = append(out, im)
		}
	}
	return out
}

// mpiVerdict is the check's verdict on a setting (openMPVerdict's rule:
// more than 3% faster and separated by a Mann-Whitney U test).
func mpiVerdict(defaults, setting []float64) pairs.Verdict {
	v := openMPVerdict(defaults, setting)
	return pairs.Verdict{Faster: v.Faster, MarginPct: v.MarginPct, Test: v.Test}
}

// measureMPI runs the MPI step for f's measured counts as rank counts
// until end (on a busy machine it measures but chooses nothing) and
// records it in f.MPI; for a simulation, a check restricted to some
// algorithms, or one told to measure no MPI implementation, it records
// nothing. Without an implementation, or without the time, the record
// says so per implementation, and the check goes on.
func measureMPI(ctx context.Context, f *results.File, cfg Config, m Measurer, end time.Time) {
	mm, ok := m.(mpiMeasurer)
	ims := mpiWanted(cfg, m)
	if !ok || len(ims) == 0 || f == nil || f.Simulated || ctx.Err() != nil || len(cfg.Algorithms) < len(catalog.Names()) {
		return
	}
	start := m.Now()
	window := end.Sub(start)
	rec := &results.MPI{
		Loop:  fmt.Sprintf("MPI_Barrier on a communicator of every rank, after 200 untimed; a run is %d chunks of about %g ms, each the slowest rank's time a barrier, and the ranks' leaving spread (cmd/internal/mpicheck/csrc/mpiloop.c)", mpiChunks, mpiChunk*1000),
		Share: fmt.Sprintf("what the OpenMP step left of what the algorithms' measurement left of the budget: %s of the %s budget", max(window, 0).Round(time.Millisecond), cfg.Budget.Round(time.Millisecond)),
	}
	f.MPI = rec
	defer func() { rec.Seconds = roundTo(m.Now().Sub(start).Seconds(), 3) }()
	var counts []int
	for _, t := range f.Threads {
		if t.Best != nil && t.Threads <= maxMPIRanks && !slices.Contains(counts, t.Threads) {
			counts = append(counts, t.Threads)
		}
	}
	slices.Sort(counts)
	notMeasured := func(im mpicheck.Implementation, why string) {
		rec.Implementations = append(rec.Implementations, results.MPIImplementation{Name: im.Name, Compiler: im.Compiler, Launcher: im.Launcher, NotMeasured: why})
	}
	var found []mpicheck.Implementation
	for _, im := range ims {
		if im.Found() {
			found = append(found, im)
		} else {
			notMeasured(im, fmt.Sprintf("%s or %s not found: %s not installed", im.Compiler, im.Launcher, im.Name))
		}
	}
	switch {
	case len(found) == 0:
		return
	case len(counts) == 0:
		for _, im := range found {
			notMeasured(im, "no count has a winner")
		}
		return
	case window < minMPIWindow:
		for _, im := range found {
			notMeasured(im, fmt.Sprintf("the budget left %s, less than the %s the step needs (run the check with a larger --budget)", max(window, 0).Round(time.Millisecond), minMPIWindow))
		}
		return
	}
	ctx, cancel := m.Bound(ctx, end)
	defer cancel()
	dir, err := os.MkdirTemp("", "barriertune-mpi-")
	if err != nil {
		for _, im := range found {
			notMeasured(im, fmt.Sprintf("no directory to build in: %v", err))
		}
		return
	}
	defer os.RemoveAll(dir)
	cpus := len(counts)
	if s, err := cpuset.ParseList(f.Machine.AllowedCPUs); err == nil {
		cpus = s.Len()
	}
	busy := ""
	if f.Busy() {
		busy = f.Load.Why
	} else if why := busyProbe(); why != "" {
		busy = why
	}
	// One implementation at a time, built when its turn comes (Open MPI
	// first): each but the last leaves one count's share to those after.
	var choices []mpicheck.Choice
	for i, im := range found {
		if cfg.Progress != nil {
			cfg.Progress(Progress{Step: fmt.Sprintf("MPI: building the barrier loop with %s (%s)", im.Compiler, im.Name)})
		}
		p, err := mm.BuildMPI(ctx, im, dir)
		if err != nil {
			notMeasured(im, err.Error())
			continue
		}
		rec.Implementations = append(rec.Implementations, results.MPIImplementation{Name: im.Name, Compiler: p.Compiler, Launcher: p.Launcher, Root: p.Root})
		ictx, icancel := ctx, context.CancelFunc(func() {})
		if i < len(found)-1 {
			left := end.Sub(m.Now())
			ictx, icancel = m.Bound(ctx, m.Now().Add(left*time.Duration(len(counts))/time.Duration(len(counts)+1)))
		}
		tune := mpicheck.Config{Programs: []*mpicheck.Program{p}, Ranks: counts, CPUs: cpus, Verdict: mpiVerdict, Now: m.Now, Chunk: mpiChunk, Chunks: mpiChunks}
		if cfg.Progress != nil {
			tune.Progress = func(s string) {
				cfg.Progress(Progress{Step: s, Elapsed: m.Now().Sub(start), Remaining: end.Sub(m.Now())})
			}
		}
		choices = append(choices, mpicheck.Tune(ictx, tune)...)
		icancel()
		rec.Implementations[len(rec.Implementations)-1].Version = p.Version // the first launch's report
	}
	for _, c := range choices {
		var r *results.MPIImplementation
		for i := range rec.Implementations {
			if rec.Implementations[i].Name == c.Impl && rec.Implementations[i].NotMeasured == "" {
				r = &rec.Implementations[i]
			}
		}
		if r == nil {
			continue
		}
		mc := results.MPICount{Ranks: c.Ranks, Failed: c.Failed, Settings: c.Settings, Runs: c.Runs}
		switch {
		case !c.Measured:
			mc.NotMeasured = c.Why
		default:
			mc.DefaultNs, mc.DefaultSpreadNs, mc.Why = roundTo(c.DefaultNs, 1), roundTo(c.DefaultSpreadNs, 1), c.Why
			switch {
			case c.Setting != "" && busy != "":
				mc.Why = fmt.Sprintf("%s was faster (%.0f against %.0f ns, defaults %+.1f%% slower), but the machine was busy (%s): a setting faster under others' load may be slower on the quiet machine, so none is chosen; run the check when it is quiet", c.Setting, c.Ns, c.DefaultNs, c.MarginPct, busy)
			case c.Setting != "":
				mc.Best, mc.BestNs, mc.SpreadNs, mc.MarginPct, mc.Test = c.Setting, roundTo(c.Ns, 1), roundTo(c.SpreadNs, 1), roundTo(c.MarginPct, 1), c.Test
			}
		}
		r.Counts = append(r.Counts, mc)
	}
}
