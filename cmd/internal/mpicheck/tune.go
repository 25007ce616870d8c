package mpicheck

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/pairs"
)

// Open MPI's coll/tuned barrier algorithms (coll_tuned_barrier_algorithm;
// ompi_info --param coll tuned --level 9 lists them): 1 linear, 2 double
// ring, 3 recursive doubling, 4 bruck, 5 two-proc (2 ranks only), 6 tree.
var openMPIAlgorithms = map[int]string{1: "linear", 2: "double ring", 3: "recursive doubling", 4: "bruck", 5: "two proc", 6: "tree"}

// OpenMPIAlgorithm names Open MPI's barrier algorithm a ("" when unknown).
func OpenMPIAlgorithm(a int) string { return openMPIAlgorithms[a] }

// ForcedAlgorithm is the control variable that forces Open MPI's barrier
// algorithm (with coll_tuned_use_dynamic_rules=1).
const ForcedAlgorithm = "coll_tuned_barrier_algorithm"

// Candidates are the settings tried for impl at n ranks, NAME=VALUE:
// Open MPI's barrier algorithms (two-proc only at 2 ranks); MPICH's
// barrier CVARs, with their k values paired with the algorithm that reads
// them (mpich.go says which, and which are shared with other
// collectives). An implementation that does not know a value refuses it,
// and the setting is never chosen.
func Candidates(impl string, n int) []string {
	switch impl {
	case OpenMPI:
		var out []string
		for _, a := range []int{1, 2, 3, 4, 5, 6} {
			if a == 5 && n != 2 {
				continue
			}
			out = append(out, ForcedAlgorithm+"="+strconv.Itoa(a))
		}
		return out
	case MPICH:
		return mpichCandidates(n)
	}
	return nil
}

// Config says what Tune measures.
type Config struct {
	// Programs are the built loops, one per implementation.
	Programs []*Program
	// Ranks are the rank counts, in the order measured.
	Ranks []int
	// CPUs is how many CPUs the ranks share.
	CPUs int
	// Verdict judges a setting's times against the defaults' (required).
	Verdict func(defaults, setting []float64) pairs.Verdict
	// Progress, when set, is told where the search is, in words.
	Progress func(string)
	// Now is the clock (default time.Now); the budget is ctx's deadline.
	Now func() time.Time
	// Candidates lists the settings tried (default Candidates).
	Candidates func(impl string, n int) []string
	// Chunk is one chunk's target time (default 0.001 s), Chunks the
	// chunks of one run (default 9), RunLimit the wall time of one run
	// before its launch is killed as hung (default 10 s).
	Chunk    float64
	Chunks   int
	RunLimit time.Duration
}

// Choice is what Tune found for one implementation at one rank count.
type Choice struct {
	Impl  string
	Ranks int
	// Measured is false when the count was not reached or its defaults
	// could not be timed; Why says which (without a "not measured"
	// prefix).
	Measured bool
	// DefaultNs is the median of the defaults' runs paired with the
	// chosen setting, or of every run of the defaults when none was
	// chosen; DefaultSpreadNs the defaults' median leaving spread.
	DefaultNs, DefaultSpreadNs float64
	// Setting is the chosen setting (NAME=VALUE), "" when the defaults
	// stay; Ns its median, SpreadNs its leaving spread, MarginPct and
	// Test the verdict.
	Setting      string
	Ns, SpreadNs float64
	MarginPct    float64
	Test         string
	// Why says why the defaults stay, or how the count was measured
	// (MPICH above the CPUs: the cost, no candidates).
	Why string
	// Failed are the settings that crashed, hung or were refused.
	Failed []string
	// Settings is how many settings were timed, Runs how many runs.
	Settings, Runs int
}

func withDefaults(cfg Config) Config {
	if cfg.Verdict == nil {
		panic("mpicheck: Config.Verdict is nil")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Candidates == nil {
		cfg.Candidates = Candidates
	}
	if cfg.Chunk <= 0 {
		cfg.Chunk = 0.001
	}
	if cfg.Chunks < 3 {
		cfg.Chunks = 9
	}
	if cfg.RunLimit <= 0 {
		cfg.RunLimit = 10 * time.Second
	}
	if cfg.Progress == nil {
		cfg.Progress = func(string) {}
	}
	return cfg
}

// Tune times, for each rank count and each implementation, the defaults
// against the candidate settings with pairs.Compare (paired, interleaved
// runs; the caller's verdict; confirmation in fresh pairs; failures never
// chosen), inside ctx's deadline, shared evenly by the cells not yet
// measured, the largest count first. Open MPI's runs are chunks of one
// launch per count (Session); MPICH's are launches. MPICH above the CPUs busy-polls (milliseconds a
// barrier): there only the defaults' cost is measured, in one bounded
// launch, and nothing is chosen.
func Tune(ctx context.Context, cfg Config) []Choice {
	cfg = withDefaults(cfg)
	type cellRef struct {
		p        *Program
		n        int
		costOnly bool
	}
	// Each implementation's counts in turn (the first implementation
	// first); within one, the cells that only time the defaults first:
	// each is one launch of a few barriers, bounded, and the even shares
	// of what they leave are for the searches. The largest count first:
	// a launch there costs the most, and there a fixed rule of the rank
	// count is the likeliest to be wrong; when the time runs out, the
	// small counts keep their defaults.
	var cells []cellRef
	desc := slices.Clone(cfg.Ranks)
	slices.Sort(desc)
	slices.Reverse(desc)
	for _, p := range cfg.Programs {
		var search []cellRef
		for _, n := range desc {
			c := cellRef{p, n, p.Name == MPICH && cfg.CPUs > 0 && n > cfg.CPUs}
			if c.costOnly {
				cells = append(cells, c)
			} else {
				search = append(search, c)
			}
		}
		cells = append(cells, search...)
	}
	byKey := map[[2]int]Choice{}
	for i, c := range cells {
		// The first implementation's searches share the time left with
		// one share for all the others' (Open MPI first: MPICH gets
		// what it leaves); theirs share it evenly.
		left := 0
		for _, d := range cells[i:] {
			if !d.costOnly && (d.p == c.p || c.p != cfg.Programs[0]) {
				left++
			}
		}
		if c.p == cfg.Programs[0] && len(cfg.Programs) > 1 {
			left++
		}
		byKey[[2]int{progIndex(cfg.Programs, c.p), c.n}] = cfg.cell(ctx, c.p, c.n, max(left, 1), c.costOnly)
	}
	var out []Choice
	for _, n := range cfg.Ranks {
		for pi := range cfg.Programs {
			out = append(out, byKey[[2]int{pi, n}])
		}
	}
	return out
}

func progIndex(ps []*Program, p *Program) int {
	for i, q := range ps {
		if q == p {
			return i
		}
	}
	return -1
}

func remaining(ctx context.Context, now func() time.Time) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return time.Hour
	}
	return max(d.Sub(now()), 0)
}

// minShare is the least time a count's comparison gets once its launch
// has started (while the time left holds it): the screening, 4 pairs of
// the leaders and the confirmation, with room for a loaded machine.
const minShare = 3 * time.Second

// cell measures one implementation at n ranks, in a share of the time
// left: 1/left of it, at least minShare, once its launch has started (a
// launch takes a second or more, and the time it takes is not the
// comparison's).
func (cfg Config) cell(ctx context.Context, p *Program, n, left int, costOnly bool) (ch Choice) {
	ch = Choice{Impl: p.Name, Ranks: n}
	if ctx.Err() != nil {
		ch.Why = "the MPI share of the budget ran out"
		return ch
	}
	if costOnly {
		return cfg.costOnly(ctx, p, n)
	}
	share := func() (context.Context, context.CancelFunc) {
		// At least minShare (or all that is left): a count that can
		// decide is worth more than one more count started.
		left := max(remaining(ctx, cfg.Now)/time.Duration(left), min(remaining(ctx, cfg.Now), minShare))
		return context.WithDeadline(ctx, cfg.Now().Add(left))
	}
	cands := cfg.Candidates(p.Name, n)
	spreads := map[string][]float64{}
	var run func(ctx context.Context, setting string) (pairs.Sample, error)
	index := map[string]int{}
	for i, c := range cands {
		index[c] = i + 1
	}
	record := func(setting string, ns, sp []float64) (pairs.Sample, error) {
		if err := pairs.Steady(ns); err != nil {
			return nil, err
		}
		spreads[setting] = append(spreads[setting], pairs.Median(sp))
		return pairs.Sample{pairs.Median(ns)}, nil
	}
	switch p.Name {
	case OpenMPI:
		cfg.Progress(fmt.Sprintf("MPI %s, %d ranks: launching the loop with a communicator per barrier algorithm", p.Name, n))
		s, err := p.StartSession(ctx, SessionConfig{Ranks: n, Settings: cands, Env: []string{"OMPI_MCA_coll_tuned_use_dynamic_rules=1"}, Chunk: cfg.Chunk})
		if err != nil {
			ch.Why = "the launch failed: " + err.Error()
			if ctx.Err() != nil {
				ch.Why = "the MPI share of the budget ran out"
			}
			return ch
		}
		defer s.Close()
		var cancel context.CancelFunc
		ctx, cancel = share()
		defer cancel()
		run = func(ctx context.Context, setting string) (pairs.Sample, error) {
			ns, sp, err := s.Run(ctx, index[setting], cfg.Chunks, cfg.RunLimit)
			if err != nil {
				return nil, err
			}
			return record(setting, ns, sp)
		}
	default:
		var cancel context.CancelFunc
		ctx, cancel = share()
		defer cancel()
		run = func(ctx context.Context, setting string) (pairs.Sample, error) {
			t, err := p.Run(ctx, Sample{Ranks: n, Seconds: cfg.Chunk * float64(cfg.Chunks), Chunk: cfg.Chunk, Env: SettingEnv(setting), Limit: cfg.RunLimit, MaxBarriers: 20000})
			if err != nil {
				return nil, err
			}
			if len(t.Chunks) < 3 {
				return nil, fmt.Errorf("%w: %d chunks timed", pairs.ErrUnsteady, len(t.Chunks))
			}
			return record(setting, t.Chunks, []float64{t.SpreadNs})
		}
	}
	var screened []string
	if p.Name == OpenMPI {
		var defs []float64
		// The screening takes at most a third of the share (checked
		// between runs: a run stopped by a context kills its launch).
		cands, screened, defs = cfg.screen(ctx, cfg.Now().Add(remaining(ctx, cfg.Now)/3), run, cands)
		if len(cands) == 0 && len(defs) > 0 {
			ch.Measured, ch.DefaultNs, ch.DefaultSpreadNs = true, pairs.Median(defs), pairs.Median(spreads[""])
			ch.Settings, ch.Why = len(screened), "every setting was more than 1.3x the defaults in each screening run ("+strings.Join(screened, "; ")+")"
			return ch
		}
	}
	res := pairs.Compare(ctx, pairs.Config{
		Candidates: cands, Run: run, Verdict: cfg.Verdict, Now: cfg.Now,
		Progress: func(s string) { cfg.Progress(fmt.Sprintf("MPI %s, %d ranks: %s", p.Name, n, s)) },
	})
	ch.Runs = res.Runs
	for _, o := range res.Outcomes {
		if o.Failed != "" {
			ch.Failed = append(ch.Failed, o.Setting+": "+o.Failed)
		}
		if o.Pairs() > 0 {
			ch.Settings++
		}
	}
	var defs []float64
	for _, d := range res.DefaultTimes {
		defs = append(defs, d[0])
	}
	if len(defs) == 0 {
		ch.Why = strings.TrimPrefix(res.Why, "not decided: ")
		if ctx.Err() != nil && res.Why == "" {
			ch.Why = "the MPI share of the budget ran out"
		}
		return ch
	}
	ch.Measured = true
	ch.DefaultNs, ch.DefaultSpreadNs = pairs.Median(defs), pairs.Median(spreads[""])
	if len(screened) > 0 {
		defer func() {
			ch.Why = strings.TrimSpace(ch.Why + " (screened out before the pairs: " + strings.Join(screened, "; ") + ")")
		}()
	}
	if res.Chosen == nil {
		ch.Why = res.Why
		if ch.Why == "" {
			ch.Why = "no setting was faster than the defaults by the margin and the test"
		}
		return ch
	}
	xs, ds := res.Chosen.Times(0)
	ch.Setting, ch.Ns, ch.DefaultNs = res.Chosen.Setting, pairs.Median(xs), pairs.Median(ds)
	ch.SpreadNs = pairs.Median(spreads[ch.Setting])
	ch.MarginPct, ch.Test, ch.Why = res.Verdict.MarginPct, res.Verdict.Test, res.Why
	return ch
}

// A cost-only launch's bounds: MPICH busy-polling above the CPUs takes
// milliseconds a barrier (docs/lab/2026-12-07-mpi.md), so 20 barriers
// and a launch take a second or two there.
const (
	costBarriers = 20
	costLimit    = 15 * time.Second
	costFloor    = 3 * time.Second
)

// costOnly times MPICH's defaults above the CPUs in one bounded launch
// (at most costBarriers barriers, and at most a third of the time left or
// costLimit, whichever is less, though at least costFloor): the cost is
// reported, nothing is chosen.
func (cfg Config) costOnly(ctx context.Context, p *Program, n int) Choice {
	ch := Choice{Impl: p.Name, Ranks: n, Runs: 1}
	cfg.Progress(fmt.Sprintf("MPI %s, %d ranks on %d CPUs: timing the defaults once (it busy-polls above the CPUs)", p.Name, n, cfg.CPUs))
	limit := min(costLimit, max(remaining(ctx, cfg.Now)/3, costFloor))
	t, err := p.Run(ctx, Sample{Ranks: n, Seconds: 0.05, Chunk: 0.01, MaxBarriers: costBarriers, Limit: limit})
	if err != nil {
		ch.Why = err.Error()
		if errors.Is(err, context.DeadlineExceeded) {
			ch.Why = "the MPI share of the budget ran out"
		}
		return ch
	}
	ch.Measured, ch.DefaultNs, ch.DefaultSpreadNs = true, t.NsPerBarrier, t.SpreadNs
	ch.Why = fmt.Sprintf("MPICH costs %s a barrier at %d ranks on %d CPUs (more ranks than CPUs: its ranks busy-poll); no setting is timed here, and nothing is chosen", fmtDur(t.NsPerBarrier), n, cfg.CPUs)
	return ch
}

func fmtDur(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.1f ms", ns/1e6)
	case ns >= 1e4:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

// Describe is the choice in one line.
func (c Choice) Describe() string {
	switch {
	case !c.Measured:
		return fmt.Sprintf("%s %d ranks: %s", c.Impl, c.Ranks, c.Why)
	case c.Setting == "":
		return fmt.Sprintf("%s %d ranks: defaults %s; %s", c.Impl, c.Ranks, fmtDur(c.DefaultNs), c.Why)
	}
	return fmt.Sprintf("%s %d ranks: %s %s against the defaults' %s (%+.1f%%, %s)", c.Impl, c.Ranks, c.Setting, fmtDur(c.Ns), fmtDur(c.DefaultNs), c.MarginPct, c.Test)
}

// screenRuns and screenSlower: a candidate is screened out before the
// pairs when each of screenRuns runs of it took more than screenSlower
// times the defaults' run beside it (in-process runs of Open MPI's
// communicators cost milliseconds: the screening spares the pairs for
// the settings that may win).
const (
	screenRuns   = 2
	screenSlower = 1.3
)

// screen runs each candidate screenRuns times beside the defaults, until
// until (then it keeps every candidate), and keeps those not clearly
// slower; it returns the kept and, for the
// others, why. A candidate whose run fails is kept (the pairs record the
// failure).
func (cfg Config) screen(ctx context.Context, until time.Time, run func(context.Context, string) (pairs.Sample, error), cands []string) (kept, out []string, defs []float64) {
	slower := map[string]int{}
	ratios := map[string][]string{}
	for r := 0; r < screenRuns; r++ {
		for _, c := range cands {
			if ctx.Err() != nil || cfg.Now().After(until) {
				return cands, nil, nil
			}
			cfg.Progress(fmt.Sprintf("screening %s, run %d/%d", c, r+1, screenRuns))
			d, derr := run(ctx, "")
			x, xerr := run(ctx, c)
			if derr != nil || xerr != nil || len(d) == 0 || len(x) == 0 || !(d[0] > 0) {
				continue
			}
			defs = append(defs, d[0])
			ratios[c] = append(ratios[c], fmt.Sprintf("%.2fx", x[0]/d[0]))
			if x[0] > screenSlower*d[0] {
				slower[c]++
			}
		}
	}
	for _, c := range cands {
		if slower[c] == screenRuns {
			out = append(out, fmt.Sprintf("%s at %s the defaults", c, strings.Join(ratios[c], ", ")))
		} else {
			kept = append(kept, c)
		}
	}
	return kept, out, defs
}
