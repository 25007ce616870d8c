package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cmd/internal/export"
	"github.com/barriertune/barriertune/cmd/internal/mpicheck"
	"github.com/barriertune/barriertune/cmd/internal/pairs"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

// The MPI step: where Open MPI or MPICH is installed (its compiler
// wrapper and launcher), the check times MPI_Barrier among ranks of this
// node under the implementation's defaults and under settings of its own
// knobs, per measured count as a rank count (cmd/internal/mpicheck), and
// records what it found in the file (results.MPI). For Open MPI it then
// times the launch-level settings (binding, mapping, coll/sm: read when a
// job starts) in launches of their own, in what the algorithms' search
// left; and for each implementation it runs the loop through the file
// `export` would write, as a user would, at each count the file changes,
// and records whether it reproduced the chosen time. It runs after the
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
		case strings.EqualFold(r, RuntimeNone):
			return nil, fmt.Errorf("runtime %q: none measures no runtime, so it stands alone (--runtimes none), not in a list", r)
		case !slices.Contains(Runtimes(), r):
			near := ""
			if l := strings.ToLower(r); slices.Contains(Runtimes(), l) {
				near = fmt.Sprintf("; did you mean %q?", l)
			}
			return nil, fmt.Errorf("runtime %q: unknown%s (accepted: %s, or none alone)", r, near, strings.Join(Runtimes(), ", "))
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
	outer := ctx // ended by a signal, not by the step's window
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
	} else if why := busyProbe(ctx, m, allowedList(f.Machine.AllowedCPUs)); why != "" {
		busy = why
	}
	// One implementation at a time, built when its turn comes (Open MPI
	// first): each but the last leaves one count's share to those after.
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
		during := stepWatch(m, allowedList(f.Machine.AllowedCPUs))
		choices := mpicheck.Tune(ictx, tune)
		if why := during(); busy == "" && why != "" {
			busy = why
		}
		r := &rec.Implementations[len(rec.Implementations)-1]
		r.Version = p.Version // the first launch's report
		r.Counts = mpiCounts(choices, busy)
		if outer.Err() != nil {
			stoppedCounts(r.Counts, context.Cause(outer))
		}
		if p.Name == mpicheck.OpenMPI {
			measureLaunch(ictx, r, p, tune, cfg.Topology, busy)
		}
		iend := end
		if d, ok := ictx.Deadline(); ok && d.Before(end) {
			iend = d
		}
		verifyMPI(ictx, f, r, p, dir, m, iend, tune.Progress)
		icancel()
	}
}

// mpiCounts are Tune's choices as the file records them (on a busy
// machine, none chosen).
func mpiCounts(choices []mpicheck.Choice, busy string) []results.MPICount {
	var out []results.MPICount
	for _, c := range choices {
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
		out = append(out, mc)
	}
	return out
}

// stoppedCounts marks the counts of a step a signal stopped: a count
// that chose nothing may have been cut before a setting could win, so
// its "the defaults stay" is no decision ("not decided: the check was
// stopped"), and a file that holds one is not replaced by this one
// (check --resume and writeCheckResults); a setting chosen before the
// signal stays chosen (it passed its confirmation).
func stoppedCounts(counts []results.MPICount, cause error) {
	for i := range counts {
		c := &counts[i]
		if c.Best != "" || c.NotMeasured != "" || strings.HasPrefix(c.Why, "MPICH costs") {
			continue // chosen, not measured, or a cost above the CPUs (nothing to decide)
		}
		c.Why = fmt.Sprintf("not decided: the check was stopped (%v) while it measured; run the check again", cause)
	}
}

// verifyPairs is the pairs of launches the check's verification runs at
// a count, launchCost what one launch is taken to cost before one was
// timed.
const (
	verifyPairs = 3
	launchCost  = time.Second
)

// measureLaunch times Open MPI's launch-level settings (binding, mapping,
// coll/sm) at every count, each run a launch paired with a launch of the
// count's export without it (its chosen algorithm, forced), in what the
// algorithms' search left of ctx less what the verification of the
// counts that chose an algorithm needs; it records them in r (launch,
// launch_chosen, launch_why; on a busy machine none is chosen).
func measureLaunch(ctx context.Context, r *results.MPIImplementation, p *mpicheck.Program, tune mpicheck.Config, topo *hwtree.Topology, busy string) {
	packages, numa := 1, 1
	if topo != nil {
		packages, numa = max(len(topo.Objects(hwtree.Package)), 1), max(len(topo.NUMANodes()), 1)
	}
	measured := false
	for _, c := range r.Counts {
		measured = measured || c.NotMeasured == ""
	}
	if !measured {
		r.LaunchWhy = append(r.LaunchWhy, "launch-level settings: not measured: the algorithms' search measured no count (see the counts)")
		return
	}
	cands, notes := mpicheck.LaunchCandidates(p, tune.Ranks, tune.CPUs, packages, numa)
	r.LaunchWhy = append(r.LaunchWhy, notes...)
	if len(cands) == 0 {
		return
	}
	chosen := map[int]string{}
	for _, c := range r.Counts {
		if c.Best != "" {
			chosen[c.Ranks] = c.Best
		}
	}
	// The verification of the counts that chose an algorithm comes first
	// (with one launch to spare: it starts a count only with its pairs'
	// time left).
	reserve := time.Duration(len(chosen)*2*verifyPairs+1) * launchCost
	lctx, cancel := ctx, context.CancelFunc(func() {})
	if d, ok := ctx.Deadline(); ok {
		lctx, cancel = context.WithDeadline(ctx, d.Add(-reserve))
	}
	defer cancel()
	base := func(n int) ([]string, string) {
		if s := chosen[n]; s != "" {
			return append([]string{"OMPI_MCA_coll_tuned_use_dynamic_rules=1"}, mpicheck.LaunchEnv(s)...), s + " (the count's chosen setting)"
		}
		return nil, "the defaults"
	}
	rs := mpicheck.TuneLaunch(lctx, tune, mpicheck.LaunchConfig{Program: p, Candidates: cands, Ranks: tune.Ranks, Base: base})
	for _, lr := range rs {
		for _, c := range lr.Counts {
			mc := results.MPICount{Ranks: c.Ranks, Setting: lr.Setting, Baseline: c.Baseline, Settings: 1, Runs: c.Runs, Why: c.Why, Slower: c.Slower}
			switch {
			case c.Failed != "":
				mc.Failed = []string{lr.Setting + ": " + c.Failed}
			case !c.Measured:
				mc.NotMeasured = strings.TrimPrefix(c.Why, "not measured: ")
				mc.Why = ""
			default:
				mc.DefaultNs, mc.DefaultSpreadNs, mc.BestNs, mc.SpreadNs = roundTo(c.BaseNs, 1), roundTo(c.BaseSpreadNs, 1), roundTo(c.Ns, 1), roundTo(c.SpreadNs, 1)
				mc.Ratio, mc.MarginPct, mc.Test = roundTo(c.Ratio, 3), roundTo(c.MarginPct, 1), c.Test
				if c.Faster && busy == "" {
					mc.Best = lr.Setting
				}
			}
			r.Launch = append(r.Launch, mc)
		}
		why := lr.Why
		if lr.Chosen && busy != "" {
			why = fmt.Sprintf("measured faster (%s), but the machine was busy (%s): none is chosen", lr.Why, busy)
		} else if lr.Chosen {
			r.LaunchChosen = lr.Setting
		}
		r.LaunchWhy = append(r.LaunchWhy, fmt.Sprintf("%s: %s; what it does: %s", lr.Setting, why, lr.Scope))
	}
}

// verifyMPI runs the loop through the exported file of r's
// implementation (written into dir as `export --format NAME` writes it:
// Open MPI through mpirun --tune, MPICH's assignments in the launch's
// environment) against the defaults, verifyPairs pairs at each count the
// file changes (export.MPIChecks), until end, and records in each count
// whether the file reproduced the check's time (verify, verify_ratio,
// verify_why); a count the time does not reach says so.
func verifyMPI(ctx context.Context, f *results.File, r *results.MPIImplementation, p *mpicheck.Program, dir string, m Measurer, end time.Time, progress func(string)) {
	checks := export.MPIChecks(f, r.Name, 0)
	if len(checks) == 0 {
		return
	}
	// The counts that chose a setting as faster first.
	slices.SortStableFunc(checks, func(a, b mpicheck.Check) int {
		switch {
		case a.Faster == b.Faster:
			return 0
		case a.Faster:
			return -1
		}
		return 1
	})
	record := func(n int, verify, why string, ratio float64) {
		for k := range r.Counts {
			if r.Counts[k].Ranks == n {
				r.Counts[k].Verify, r.Counts[k].VerifyWhy, r.Counts[k].VerifyRatio = verify, why, roundTo(ratio, 3)
				return
			}
		}
		r.Counts = append(r.Counts, results.MPICount{Ranks: n, NotMeasured: "not measured by the algorithms' search", Verify: verify, VerifyWhy: why, VerifyRatio: roundTo(ratio, 3)})
	}
	later := fmt.Sprintf("run `barriertune export --format %s -o FILE --verify`", r.Name)
	vc := mpicheck.VerifyConfig{Pairs: verifyPairs, Margin: TieFraction, Progress: progress}
	var env map[int][]string
	if r.Name == mpicheck.OpenMPI {
		path := filepath.Join(dir, "barriertune-openmpi.conf")
		var b, rules bytes.Buffer
		err := export.Write(&b, f, "openmpi", export.Options{RulesPath: path + export.MPIRulesSuffix, Rules: &rules})
		if err == nil {
			err = os.WriteFile(path, b.Bytes(), 0o644)
		}
		if err == nil && rules.Len() > 0 {
			err = os.WriteFile(path+export.MPIRulesSuffix, rules.Bytes(), 0o644)
		}
		if err != nil {
			for _, c := range checks {
				record(c.Ranks, "not_verified", "not verified: the export failed: "+err.Error(), 0)
			}
			return
		}
		vc.Args = []string{"--tune", path}
	} else {
		env = map[int][]string{}
		for _, c := range checks {
			var b bytes.Buffer
			if err := export.Write(&b, f, r.Name, export.Options{Threads: c.Ranks}); err == nil {
				for _, l := range strings.Split(b.String(), "\n") {
					if name, value, ok := strings.Cut(strings.TrimSpace(l), "="); ok && strings.HasPrefix(name, "MPIR_CVAR_") {
						env[c.Ranks] = append(env[c.Ranks], name+"="+strings.Trim(value, "'"))
					}
				}
			}
		}
	}
	cost := launchCost
	for _, c := range checks {
		need := time.Duration(2*verifyPairs) * cost
		if left := end.Sub(m.Now()); left < need || ctx.Err() != nil {
			record(c.Ranks, "not_verified", fmt.Sprintf("not verified: the budget ran out (%s left, %s needed); %s", max(left, 0).Round(100*time.Millisecond), need.Round(100*time.Millisecond), later), 0)
			continue
		}
		if env != nil {
			vc.Env = env[c.Ranks]
		}
		t0 := m.Now()
		vctx, cancel := m.Bound(ctx, end)
		v := p.Verify(vctx, vc, []mpicheck.Check{c})[0]
		cancel()
		cost = max(m.Now().Sub(t0)/time.Duration(2*verifyPairs), 100*time.Millisecond)
		switch {
		case v.Err != nil && errors.Is(v.Err, context.DeadlineExceeded):
			record(c.Ranks, "not_verified", "not verified: the budget ran out; "+later, 0)
		case v.Err != nil:
			record(c.Ranks, "not_verified", v.Describe(), 0)
		case v.OK:
			record(c.Ranks, "reproduced", v.Describe(), v.Ratio)
		case v.Passed() || v.Faster:
			record(c.Ranks, "faster", v.Describe(), v.Ratio)
		default:
			record(c.Ranks, "not_reproduced", v.Describe(), v.Ratio)
		}
	}
}
