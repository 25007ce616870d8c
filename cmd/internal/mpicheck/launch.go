package mpicheck

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/child"
	"github.com/barriertune/barriertune/cmd/internal/pairs"
)

// Launch-level settings are Open MPI's MCA parameters that take effect
// when a job starts, not when a communicator is made: mpirun's binding
// and mapping of the ranks (hwloc_base_binding_policy,
// rmaps_base_mapping_policy), and which coll component serves a
// communicator (coll_sm_priority: the MPI tool interface does not let a
// program write it). Each run of one is a launch of its own, paired with
// a launch of the baseline (TuneLaunch). An MCA parameter file applies to
// every launch, whatever its rank count: a launch-level setting is chosen
// only when it was faster at some count and measured, and not slower, at
// every count.

// LaunchCandidate is a launch-level setting.
type LaunchCandidate struct {
	// Setting is MCA name=value pairs joined by commas.
	Setting string
	// Scope says what the setting does and what else it changes besides
	// MPI_Barrier.
	Scope string
	// Defaults are the rank counts at which the setting is what Open MPI
	// does anyway (binding none when oversubscribed, a core at 2 ranks
	// or fewer, with no binding policy set): there it is not timed, and
	// not slower.
	Defaults []int
}

// LaunchEnv is setting's launch environment: OMPI_MCA_name=value for
// each of its name=value pairs.
func LaunchEnv(setting string) []string {
	var env []string
	for _, kv := range strings.Split(setting, ",") {
		if kv != "" {
			env = append(env, "OMPI_MCA_"+kv)
		}
	}
	return env
}

// maxLaunchCandidates caps the launch-level settings tried: each run is
// a launch (about a second here).
const maxLaunchCandidates = 4

// smScope is what coll/sm changes besides MPI_Barrier.
const smScope = "coll/sm takes every collective it provides (Open MPI 4.1: MPI_Barrier, MPI_Bcast, MPI_Reduce and MPI_Allreduce) on every communicator of ranks on one node, in place of coll/tuned"

// placementScope is what a binding or mapping changes.
const placementScope = "it places every rank of every job, so it changes the time of all the program's work, not only MPI_Barrier"

// LaunchCandidates are the launch-level settings tried for p at the rank
// counts ranks on cpus CPUs, with packages processor packages and numa
// NUMA nodes (at most four), and notes on those not offered. Open MPI's
// own choice (ompi_info --param hwloc base): bind to a core at 2 ranks or
// fewer, to a NUMA node above, nothing when oversubscribed; map by core
// at 2 ranks or fewer, by package above. The candidates: no binding
// (where some count is within the CPUs); every rank bound to a core,
// round-robin above the CPUs (where some count is above 2); on a machine
// of several NUMA nodes or packages, ranks spread across them; coll/sm
// (where the installation has it, as ompi_info lists it) with its default
// tree degree and, where a count above 2 makes a tree, degree 2 (8 where
// the default is 2).
func LaunchCandidates(p *Program, ranks []int, cpus, packages, numa int) (cands []LaunchCandidate, notes []string) {
	if p.Name != OpenMPI {
		return nil, nil
	}
	within, above2 := false, false
	for _, n := range ranks {
		within = within || cpus <= 0 || n <= cpus
		above2 = above2 || n > 2
	}
	// The counts where a binding is Open MPI's own default.
	var over, small []int
	for _, n := range ranks {
		if p.DefaultBinding && cpus > 0 && n > cpus {
			over = append(over, n)
		}
		if p.DefaultBinding && n <= 2 && (cpus <= 0 || n <= cpus) {
			small = append(small, n)
		}
	}
	if within {
		cands = append(cands, LaunchCandidate{"hwloc_base_binding_policy=none", "binding: no rank bound (Open MPI binds each to a core at 2 ranks or fewer, to a NUMA node above, and none when oversubscribed); " + placementScope, over})
	}
	if above2 {
		cands = append(cands, LaunchCandidate{"hwloc_base_binding_policy=core:overload-allowed", "binding: every rank bound to one core, round-robin when the ranks outnumber the cores (Open MPI binds to a NUMA node above 2 ranks, and not at all when oversubscribed); " + placementScope, small})
	}
	switch {
	case numa > 1:
		cands = append(cands, LaunchCandidate{Setting: "rmaps_base_mapping_policy=numa", Scope: "mapping: consecutive ranks spread across the NUMA nodes (Open MPI maps by core at 2 ranks or fewer, by package above); " + placementScope})
	case packages > 1:
		cands = append(cands, LaunchCandidate{Setting: "rmaps_base_mapping_policy=socket", Scope: "mapping: consecutive ranks spread across the packages (Open MPI maps by core at 2 ranks or fewer, by package above); " + placementScope})
	}
	switch {
	case !p.CollSM:
		notes = append(notes, "coll/sm: not offered: ompi_info lists no coll sm component in this installation (or ompi_info was not found)")
	default:
		deg := "its default tree degree"
		if p.CollSMDegree > 0 {
			deg = fmt.Sprintf("its default tree degree (%d)", p.CollSMDegree)
		}
		cands = append(cands, LaunchCandidate{Setting: "coll_sm_priority=100", Scope: "coll/sm with " + deg + "; " + smScope})
		d := 2
		if p.CollSMDegree == 2 {
			d = 8
		}
		switch {
		case p.CollSMDegree == 0:
			notes = append(notes, "coll/sm's tree degree: not offered: ompi_info lists no coll_sm_tree_degree")
		case !above2:
			notes = append(notes, "coll/sm's tree degree: not offered: at 2 ranks every degree makes the same tree")
		case len(cands) >= maxLaunchCandidates:
			notes = append(notes, fmt.Sprintf("coll/sm with tree degree %d: not offered: %d launch-level settings at most (each run is a launch)", d, maxLaunchCandidates))
		default:
			cands = append(cands, LaunchCandidate{Setting: fmt.Sprintf("coll_sm_priority=100,coll_sm_tree_degree=%d", d), Scope: fmt.Sprintf("coll/sm with tree degree %d; %s", d, smScope)})
		}
	}
	return cands, notes
}

// probeOpenMPI reads from ompi_info (the one beside the launcher, else
// $PATH's, in the launches' environment) whether the installation has
// coll/sm, its tree degree's default, and whether a binding policy is
// set.
func (p *Program) probeOpenMPI(ctx context.Context) {
	info := filepath.Join(filepath.Dir(p.Launcher), "ompi_info")
	if _, err := exec.LookPath(info); err != nil {
		if info, err = exec.LookPath("ompi_info"); err != nil {
			return
		}
	}
	c, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if out, err := child.Run(c, p.env(nil), info, "--param", "coll", "sm", "--level", "9", "--parsable"); err == nil {
		p.CollSM, p.CollSMDegree = parseCollSM(string(out.Stdout))
	}
	if out, err := child.Run(c, p.env(nil), info, "--param", "hwloc", "base", "--level", "9", "--parsable"); err == nil {
		p.DefaultBinding = parseDefaultBinding(string(out.Stdout))
	}
}

// parseDefaultBinding reports whether ompi_info's parsable listing of
// hwloc base shows hwloc_base_binding_policy with no value.
func parseDefaultBinding(out string) bool {
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "mca:hwloc:base:param:hwloc_base_binding_policy:value:"); ok {
			return v == ""
		}
	}
	return false
}

// parseCollSM reads ompi_info's parsable listing of coll sm.
func parseCollSM(out string) (ok bool, degree int) {
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "mca:coll:sm:") {
			ok = true
		}
		if v, found := strings.CutPrefix(l, "mca:coll:sm:param:coll_sm_tree_degree:value:"); found {
			if d, err := strconv.Atoi(v); err == nil && d >= 1 && d <= 255 {
				degree = d
			}
		}
	}
	return ok, degree
}

// LaunchConfig says what TuneLaunch measures.
type LaunchConfig struct {
	// Program is Open MPI's loop.
	Program *Program
	// Candidates are the settings tried (LaunchCandidates).
	Candidates []LaunchCandidate
	// Ranks are every rank count the check measured: a setting is chosen
	// only when measured at each. The largest is timed first.
	Ranks []int
	// Base is count n's baseline: the environment of the launch each
	// run of a setting is paired with (the export's other settings at n:
	// Open MPI's forced algorithm where one was chosen) and what it is,
	// in words. Nil: the defaults.
	Base func(n int) (env []string, what string)
	// Seconds is one launch's timed span, Chunk one chunk's (defaults
	// 0.05 s and 0.005 s: a launch costs far more than its timed span).
	Seconds, Chunk float64
}

// LaunchCount is one launch-level setting at one rank count.
type LaunchCount struct {
	Ranks int
	// Measured: it had the pairs a decision needs (or was screened out
	// as slower); Why says the outcome, or why it was not measured.
	Measured bool
	Why      string
	// Baseline says what it was paired with; BaseNs and Ns are the
	// medians of the baseline's and its runs, with their leaving spreads;
	// Ratio the median of the paired ratios (setting over baseline).
	Baseline                                  string
	BaseNs, Ns, BaseSpreadNs, SpreadNs, Ratio float64
	// MarginPct and Test are the verdict (setting against baseline).
	MarginPct float64
	Test      string
	// Faster: chosen at this count (faster by the margin and test, and
	// confirmed); Slower: the baseline was faster by the margin and test,
	// or the setting was more than 1.3x in its screening pair.
	Faster, Slower bool
	// Failed says how a launch of it failed (crashed, hung, refused).
	Failed string
	Runs   int
}

// LaunchResult is one launch-level setting at every count.
type LaunchResult struct {
	LaunchCandidate
	// Counts are in LaunchConfig.Ranks' order.
	Counts []LaunchCount
	// Chosen: it is the one launch-level setting chosen (faster at some
	// count, measured and not slower at every count; of several such,
	// the one faster at the most counts, then the lowest geometric mean
	// ratio). Why says why it is or is not.
	Chosen bool
	Why    string
}

// TuneLaunch times each launch-level setting against the baseline at
// each count, the largest first, inside ctx's deadline, shared evenly by
// the counts not yet measured: one screening pair of launches each (a
// setting more than 1.3x the baseline there, and again in a second pair,
// is slower), then pairs.Compare
// on the others (paired launches in random order, the caller's verdict,
// confirmation in fresh pairs). A setting that failed or was slower at
// one count is not timed at the others (it cannot be chosen). A count
// the time did not reach is not measured, and its settings cannot be
// chosen.
func TuneLaunch(ctx context.Context, cfg Config, lc LaunchConfig) []LaunchResult {
	cfg = withDefaults(cfg)
	if lc.Seconds <= 0 {
		lc.Seconds = 0.05
	}
	if lc.Chunk <= 0 || lc.Chunk > lc.Seconds {
		lc.Chunk = lc.Seconds / 10
	}
	if lc.Base == nil {
		lc.Base = func(int) ([]string, string) { return nil, "the defaults" }
	}
	p := lc.Program
	out := make([]LaunchResult, len(lc.Candidates))
	byRanks := make([]map[int]*LaunchCount, len(lc.Candidates))
	out0 := map[string]int{}
	for i, c := range lc.Candidates {
		out[i].LaunchCandidate = c
		byRanks[i] = map[int]*LaunchCount{}
		out0[c.Setting] = i
	}
	// out: why a setting is out (failed or slower somewhere).
	outWhy := make([]string, len(lc.Candidates))
	desc := slices.Clone(lc.Ranks)
	slices.Sort(desc)
	slices.Reverse(desc)
	for k, n := range desc {
		var live []string
		for i, c := range lc.Candidates {
			switch {
			case outWhy[i] != "":
				byRanks[i][n] = &LaunchCount{Ranks: n, Why: "not timed: " + outWhy[i] + " (a launch-level setting applies to every count)"}
			case slices.Contains(c.Defaults, n):
				_, base := lc.Base(n)
				byRanks[i][n] = &LaunchCount{Ranks: n, Measured: true, Ratio: 1, Baseline: base, Why: "not timed: the same as Open MPI's own binding at this count (ompi_info shows no binding policy set): not slower"}
			default:
				live = append(live, c.Setting)
			}
		}
		if len(live) == 0 {
			continue
		}
		if ctx.Err() != nil || remaining(ctx, cfg.Now) <= 0 {
			for _, s := range live {
				byRanks[out0[s]][n] = &LaunchCount{Ranks: n, Why: "not measured: the budget ran out"}
			}
			continue
		}
		left := max(remaining(ctx, cfg.Now)/time.Duration(len(desc)-k), min(remaining(ctx, cfg.Now), minShare))
		sctx, cancel := context.WithDeadline(ctx, cfg.Now().Add(left))
		res := cfg.launchCount(sctx, lc, p, n, live)
		cancel()
		for s, lcnt := range res {
			i := out0[s]
			byRanks[i][n] = lcnt
			switch {
			case lcnt.Failed != "":
				outWhy[i] = fmt.Sprintf("failed at %d ranks", n)
			case lcnt.Slower:
				outWhy[i] = fmt.Sprintf("slower at %d ranks (%.2fx)", n, lcnt.Ratio)
			}
		}
	}
	for i := range out {
		for _, n := range lc.Ranks {
			c := byRanks[i][n]
			if c == nil {
				c = &LaunchCount{Ranks: n, Why: "not measured"}
			}
			out[i].Counts = append(out[i].Counts, *c)
		}
	}
	chooseLaunch(out)
	return out
}

// launchCount times the live settings at n ranks: the screening pair,
// then pairs.Compare on those not screened out.
func (cfg Config) launchCount(ctx context.Context, lc LaunchConfig, p *Program, n int, live []string) map[string]*LaunchCount {
	baseEnv, baseWhat := lc.Base(n)
	res := map[string]*LaunchCount{}
	for _, s := range live {
		res[s] = &LaunchCount{Ranks: n, Baseline: baseWhat}
	}
	spreads := map[string][]float64{}
	runs := map[string]int{}
	run := func(ctx context.Context, setting string) (pairs.Sample, error) {
		env := slices.Clone(baseEnv)
		if setting != "" {
			env = append(env, LaunchEnv(setting)...)
		}
		runs[setting]++
		t, err := p.Run(ctx, Sample{Ranks: n, Seconds: lc.Seconds, Chunk: lc.Chunk, Env: env, Limit: cfg.RunLimit, MaxBarriers: 200000})
		if err != nil {
			return nil, err
		}
		// A launch's first chunk still pays for its start (it took up
		// to 8 times the others at 8 ranks here): it is left out.
		chunks := t.Chunks
		if len(chunks) > 3 {
			chunks = chunks[1:]
		}
		if len(chunks) < 3 {
			// The chunks ran slower than the warm-up said (load): too
			// few to judge, run it again.
			return nil, fmt.Errorf("%w: %d chunks timed", pairs.ErrUnsteady, len(chunks))
		}
		if err := pairs.Steady(chunks); err != nil {
			return nil, err
		}
		spreads[setting] = append(spreads[setting], t.SpreadNs)
		return pairs.Sample{pairs.Median(chunks)}, nil
	}
	// steady reruns a run not in steady state (twice at most), as
	// pairs.Compare does.
	steady := func(ctx context.Context, setting string) (x pairs.Sample, err error) {
		for try := 0; try < 3; try++ {
			if x, err = run(ctx, setting); !errors.Is(err, pairs.ErrUnsteady) {
				return x, err
			}
		}
		return x, err
	}
	progress := func(s string) {
		cfg.Progress(fmt.Sprintf("MPI %s, %d ranks, launch-level settings: %s", p.Name, n, s))
	}
	// The screening: one pair each, the baseline first (a launch costs a
	// second: the pairs are for the settings that may win).
	var kept []string
	for _, s := range live {
		if ctx.Err() != nil {
			res[s].Why = "not measured: the budget ran out"
			continue
		}
		progress("screening " + s)
		d, derr := steady(ctx, "")
		if derr != nil {
			if ctx.Err() != nil {
				res[s].Why = "not measured: the budget ran out"
			} else {
				res[s].Why = "not measured: the baseline's launch failed: " + derr.Error()
			}
			continue
		}
		x, xerr := steady(ctx, s)
		switch {
		case ctx.Err() != nil:
			res[s].Why = "not measured: the budget ran out"
			continue
		case xerr != nil && !errors.Is(xerr, pairs.ErrUnsteady):
			res[s].Failed = xerr.Error()
			res[s].Why = "failed: " + xerr.Error()
			res[s].Runs = runs[s] + 1
			continue
		case xerr != nil:
			res[s].Why = "not measured: its screening launch stayed out of steady state: " + xerr.Error()
			continue
		case x[0] > screenSlower*d[0]:
			// A second pair, in the other order, before it is called
			// slower: one pair of launches is at the mercy of the load.
			x2, xerr := steady(ctx, s)
			d2, derr := steady(ctx, "")
			if xerr != nil || derr != nil || !(x2[0] > screenSlower*d2[0]) {
				break
			}
			r1, r2 := x[0]/d[0], x2[0]/d2[0]
			res[s].Measured, res[s].Slower = true, true
			res[s].BaseNs, res[s].Ns, res[s].Ratio = pairs.Median([]float64{d[0], d2[0]}), pairs.Median([]float64{x[0], x2[0]}), math.Sqrt(r1*r2)
			res[s].Runs = 4
			res[s].Why = fmt.Sprintf("slower: %.2fx and %.2fx the baseline in its two screening pairs (more than %.1fx)", r1, r2, screenSlower)
			continue
		}
		kept = append(kept, s)
	}
	if len(kept) == 0 {
		return res
	}
	r := pairs.Compare(ctx, pairs.Config{Candidates: kept, Run: run, Verdict: cfg.Verdict, Now: cfg.Now, Progress: progress})
	var defs []float64
	for _, d := range r.DefaultTimes {
		defs = append(defs, d[0])
	}
	for _, o := range r.Outcomes {
		c := res[o.Setting]
		c.Runs = runs[o.Setting] + o.Pairs()
		switch {
		case o.Failed != "":
			c.Failed, c.Why = o.Failed, "failed: "+o.Failed
			continue
		case o.Pairs() < pairs.DefaultMinPairs:
			c.Why = fmt.Sprintf("not measured: %d pairs, a decision needs %d", o.Pairs(), pairs.DefaultMinPairs)
			switch {
			case r.Need > 0:
				c.Why += fmt.Sprintf(" (%s more of launches would give them)", r.Need.Round(100*time.Millisecond))
			case r.Why == "":
				c.Why += " (the time left went to the fastest setting)"
			}
			continue
		}
		xs, ds := o.Times(0)
		v := cfg.Verdict(ds, xs)
		back := cfg.Verdict(xs, ds)
		c.Measured = true
		c.BaseNs, c.Ns, c.Ratio = pairs.Median(ds), pairs.Median(xs), o.Ratio(0)
		c.BaseSpreadNs, c.SpreadNs = pairs.Median(spreads[""]), pairs.Median(spreads[o.Setting])
		c.MarginPct, c.Test = v.MarginPct, v.Test
		switch {
		case r.Chosen == o:
			c.Faster = true
			c.Why = fmt.Sprintf("faster: %.2fx the baseline in %d pairs (baseline %+.1f%% slower; %s), confirmed in fresh pairs", c.Ratio, o.Pairs(), v.MarginPct, v.Test)
		case back.Faster:
			c.Slower = true
			c.Why = fmt.Sprintf("slower: %.2fx the baseline in %d pairs (%s)", c.Ratio, o.Pairs(), back.Test)
		case v.Faster:
			c.Why = fmt.Sprintf("faster in its pairs (%.2fx the baseline in %d pairs; %s) but not chosen: %s", c.Ratio, o.Pairs(), v.Test, cmp.Or(r.Why, "another setting was"))
		default:
			c.Why = fmt.Sprintf("not faster, not slower: %.2fx the baseline in %d pairs (%s)", c.Ratio, o.Pairs(), v.Test)
		}
	}
	return res
}

// chooseLaunch marks the one setting chosen, if any, and says why each
// is or is not.
func chooseLaunch(rs []LaunchResult) {
	best, bestFaster, bestMean := -1, 0, math.Inf(1)
	for i := range rs {
		r := &rs[i]
		var faster, measured []string
		failed, slower, unmeasured := "", "", ""
		logSum, k := 0.0, 0
		for _, c := range r.Counts {
			switch {
			case c.Failed != "" && failed == "":
				failed = fmt.Sprintf("failed at %d ranks (%s): never chosen", c.Ranks, c.Failed)
			case c.Slower && slower == "":
				slower = fmt.Sprintf("slower at %d ranks (%.2fx the baseline): an MCA parameter file applies it to every count, so it is not chosen", c.Ranks, c.Ratio)
			case !c.Measured && c.Failed == "" && unmeasured == "" && !strings.HasPrefix(c.Why, "not timed"):
				unmeasured = fmt.Sprintf("not measured at %d ranks (%s): an MCA parameter file applies it to every count, so it is chosen only when measured at each", c.Ranks, strings.TrimPrefix(c.Why, "not measured: "))
			}
			if c.Measured {
				measured = append(measured, strconv.Itoa(c.Ranks))
				if c.Ratio > 0 {
					logSum += math.Log(c.Ratio)
					k++
				}
			}
			if c.Faster {
				faster = append(faster, strconv.Itoa(c.Ranks))
			}
		}
		why := cmp.Or(failed, slower, unmeasured)
		if why == "" && len(faster) == 0 {
			why = "not faster at any count (measured at " + strings.Join(measured, ", ") + " ranks): not chosen"
		}
		if why != "" {
			r.Why = why
			continue
		}
		mean := math.Exp(logSum / float64(max(k, 1)))
		r.Why = fmt.Sprintf("faster at %s ranks, not slower at any of %s ranks (geometric mean %.2fx the baseline)", strings.Join(faster, ", "), strings.Join(measured, ", "), mean)
		if len(faster) > bestFaster || len(faster) == bestFaster && mean < bestMean {
			best, bestFaster, bestMean = i, len(faster), mean
		}
	}
	for i := range rs {
		switch {
		case i == best:
			rs[i].Chosen = true
			rs[i].Why = "chosen: " + rs[i].Why
		case best >= 0 && strings.HasPrefix(rs[i].Why, "faster at"):
			rs[i].Why = fmt.Sprintf("not chosen: %s; but %s was chosen (one launch-level setting at most: their combination was not measured)", rs[i].Why, rs[best].Setting)
		}
	}
}
