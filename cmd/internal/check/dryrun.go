package check

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/barriertune/barriertune/cpuset"

	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/internal/text"
	"github.com/barriertune/barriertune/results"
)

// Plan is what Run would measure with the same Config, measuring nothing
// (check --plan): the same plan step, shown.
type Plan struct {
	PUs int `json:"pus"`
	// Simulated: the plan is for a simulated check (a ModelMeasurer).
	Simulated bool `json:"simulated,omitempty"`
	// Model ranks candidates when Pruning (the space did not fit the
	// budget); Params are its constants.
	Model   model.Kind           `json:"model"`
	Pruning bool                 `json:"pruning"`
	Params  *results.Calibration `json:"params"`
	// Exhaustive: every candidate at every count, no pruning, no cuts.
	Exhaustive bool `json:"exhaustive,omitempty"`
	// Budget is the check's budget; EstimatedS what the plan's samples
	// take, at Samples per candidate and placement in each of Rounds.
	Budget     string  `json:"budget"`
	EstimatedS float64 `json:"estimated_s"`
	// ExtrasS bounds what a live run adds after the rounds: the play-off,
	// the per-level latencies and the block and wake-up measurement.
	ExtrasS float64 `json:"extras_s"`
	Samples int     `json:"samples"`
	Rounds  int     `json:"rounds"`
	// Floors are measured first; Cuts say what the budget left out.
	Floors []PlanFloor `json:"floors"`
	Cuts   []string    `json:"cuts"`
	// Runtimes says what a live check measures after the algorithms, in
	// what they leave of the budget: the OpenMP runtimes' and the MPI
	// implementations' own knobs (Config.Runtimes), one line each; empty
	// for a simulated check, an experiment on some algorithms, or
	// --runtimes none.
	Runtimes []string `json:"runtimes"`
	// Inference is the rule for the counts not measured; Threads the
	// counts measured.
	Inference string        `json:"inference"`
	Threads   []PlanThreads `json:"threads"`
}

// PlanFloor is one floor pair the check measures first.
type PlanFloor struct {
	Level string `json:"level"`
	CPUs  [2]int `json:"cpus"`
}

// PlanThreads is one thread count of a plan.
type PlanThreads struct {
	Threads int `json:"threads"`
	// Boundary names the tree's boundaries this count is, one object's
	// PUs or cores ("L3Cache PUs", "Package cores"; BoundaryReasons): why
	// the default counts hold it.
	Boundary []string `json:"boundary,omitempty"`
	// FromRound is the first round measured (a resumed count has the
	// earlier ones); Calibration marks the count whose first round fits
	// the model before the others are pruned again.
	FromRound   int  `json:"from_round,omitempty"`
	Calibration bool `json:"calibration,omitempty"`
	// Placements are measured, each with every one of Candidates.
	Placements []PlanPlacement `json:"placements"`
	Candidates []PlanCandidate `json:"candidates"`
	// Pruned counts the candidates the model pruned; PrunedDetail gives
	// each with its prediction (Config.Verbose only).
	Pruned       int      `json:"pruned"`
	PrunedDetail []string `json:"pruned_detail,omitempty"`
	// PredictedWinner and PredictedNs: the model's best (pruned plans).
	PredictedWinner string  `json:"predicted_winner,omitempty"`
	PredictedNs     float64 `json:"predicted_ns,omitempty"`
	EstimatedS      float64 `json:"estimated_s"`
}

// PlanPlacement is one placement: its label, CPUs in thread order
// (ranges), and the hybrid's composition there when the hybrid is a
// candidate (composed on the plan's latencies; a live check composes it
// again from the floors it measures).
type PlanPlacement struct {
	Label  string `json:"label"`
	CPUs   string `json:"cpus"`
	Hybrid string `json:"hybrid,omitempty"`
}

// PlanCandidate is one candidate measured and why.
type PlanCandidate struct {
	Name      string `json:"name"`
	Algorithm string `json:"algorithm"`
	FanIn     int    `json:"fan_in,omitempty"`
	Why       string `json:"why"`
}

// planRuntimes are the plan's Runtimes lines: the runtime steps a live
// check with cfg runs after the algorithms (measureOpenMP, measureMPI),
// each skipped at run time where its compilers or launchers are missing.
func planRuntimes(cfg Config, simulated bool) []string {
	out := []string{}
	if simulated || len(cfg.Algorithms) < len(catalog.Names()) {
		return out
	}
	var mpi []string
	for _, r := range []string{RuntimeOpenMPI, RuntimeMPICH} {
		if cfg.wants(r) {
			mpi = append(mpi, r)
		}
	}
	if cfg.wants(RuntimeOpenMP) {
		share := "what the algorithms leave of the budget"
		if len(mpi) > 0 {
			share = "half of what the algorithms leave of the budget (all of it where no MPI implementation is found)"
		}
		out = append(out, "OpenMP: each runtime found (gcc's libgomp, clang's libomp) at every count, its defaults against settings of its own variables, in "+share)
	}
	if len(mpi) > 0 {
		out = append(out, "MPI: each implementation found ("+strings.Join(mpi, ", ")+") at every count as ranks, MPI_Barrier's defaults against its own algorithm settings, in the rest of the budget")
	}
	return out
}

// DryRun returns the plan Run would follow with cfg: thread counts,
// placements, candidates (fan-ins, the hybrid's compositions), rounds,
// samples, the estimated time and why each candidate was kept or pruned.
// It measures nothing; a live check prunes again after calibrating on its
// first round, which a dry run cannot foresee.
func DryRun(cfg Config) (*Plan, error) {
	cfg, err := prepareFor(cfg, true)
	if err != nil {
		return nil, err
	}
	f, prev, err := newFile(cfg, cfg.Measurer.Now())
	if err != nil {
		return nil, err
	}
	p, err := makePlan(cfg, prev)
	if err != nil {
		return nil, err
	}
	out := &Plan{PUs: len(cfg.Topology.PUs()), Simulated: f.Simulated, Model: p.kind, Pruning: p.pruning, Exhaustive: cfg.Exhaustive,
		Params: &results.Calibration{Model: string(p.kind), Params: paramsMap(p.params), FittedOn: "defaults (a live check fits them to its first round, and to every measurement when it ends)"},
		Budget: cfg.Budget.String(), EstimatedS: round3(p.estimate(cfg.SampleTarget).Seconds()), ExtrasS: round3(p.extras(cfg).Seconds()), Samples: p.samples, Rounds: p.rounds,
		Floors: []PlanFloor{}, Cuts: append([]string{}, p.cuts...), Runtimes: planRuntimes(cfg, f.Simulated), Inference: InferenceRule, Threads: []PlanThreads{}}
	if p.calib != nil {
		out.Params = p.calib
	}
	for i, pr := range p.floors {
		out.Floors = append(out.Floors, PlanFloor{Level: p.levels[i], CPUs: pr})
	}
	composer := &hybridComposer{topo: cfg.Topology}
	var jobs []hybridJob
	boundary := BoundaryReasons(cfg.Topology)
	per := perCandidate(p.samples, cfg.SampleTarget)
	for _, u := range p.units {
		t := PlanThreads{Threads: u.threads, FromRound: u.from, Calibration: u.calibrate, Pruned: len(u.pruned),
			PredictedWinner: u.predicted, PredictedNs: round3(u.predictedNs),
			EstimatedS: round3((time.Duration(len(u.sets)*max(p.rounds-u.from, 0)*(len(u.cands)+1)) * per).Seconds())}
		t.Boundary = boundary[u.threads]
		if cfg.Verbose {
			t.PrunedDetail = u.pruned
		}
		hybrid := false
		for i, c := range u.cands {
			t.Candidates = append(t.Candidates, PlanCandidate{Name: c.String(), Algorithm: c.alg, FanIn: c.fanIn, Why: u.why[i]})
			hybrid = hybrid || c.alg == algname.Hybrid
		}
		for _, s := range u.sets {
			t.Placements = append(t.Placements, PlanPlacement{Label: setLabel(s), CPUs: cpuset.FormatList(s.CPUs)})
			if hybrid {
				jobs = append(jobs, hybridJob{len(out.Threads), len(t.Placements) - 1, s.CPUs})
			}
		}
		out.Threads = append(out.Threads, t)
	}
	if len(jobs) > 0 {
		composer.costs = p.modelCosts()
	}
	composeAll(composer, jobs, func(j hybridJob, comp string) { out.Threads[j.unit].Placements[j.set].Hybrid = comp })
	return out, nil
}

// hybridJob is a placement of the plan whose hybrid is composed: the
// index of its thread count and its own, and its CPUs.
type hybridJob struct {
	unit, set int
	cpus      []int
}

// composeAll composes the hybrid of every job on GOMAXPROCS goroutines
// (the composer only reads its tree and costs) and gives each
// composition to done, in one goroutine at a time; a placement that
// cannot be composed gets none. The plan of an 8192-PU tree spent most of
// its time composing.
func composeAll(composer *hybridComposer, jobs []hybridJob, done func(hybridJob, string)) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan hybridJob)
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Go(func() {
			for j := range next {
				if comp, err := composer.compose(j.cpus); err == nil {
					mu.Lock()
					done(j, comp.String())
					mu.Unlock()
				}
			}
		})
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
}

// Triples are the (threads, CPUs, candidate) the plan measures, one
// string each ("4 0-3 mcs"), in plan order.
func (p *Plan) Triples() []string {
	var out []string
	for _, t := range p.Threads {
		for _, pl := range t.Placements {
			for _, c := range t.Candidates {
				out = append(out, fmt.Sprintf("%d %s %s", t.Threads, pl.CPUs, c.Name))
			}
		}
	}
	return out
}

// maxLine caps the plan's lines (a placement list of a big machine is
// elided in the middle).
const maxLine = 159

// Text writes the plan for people, every line under 160 characters.
func (p *Plan) Text(verbose bool) string {
	var b strings.Builder
	line := func(format string, args ...any) {
		b.WriteString(text.Elide(fmt.Sprintf(format, args...), maxLine))
		b.WriteByte('\n')
	}
	mode := "every candidate measured"
	switch {
	case p.Exhaustive:
		mode = "exhaustive"
	case p.Pruning:
		mode = fmt.Sprintf("pruned by the %s model", p.Model)
	}
	what := "check"
	if p.Simulated {
		what = "simulated check"
	}
	line("%s of %s: %s, %s, %s, %s per candidate, about %s (budget %s)", what, text.Plural(p.PUs, "PU"), text.Plural(len(p.Threads), "thread count"), mode,
		text.Plural(p.Rounds, "round"), text.Plural(p.Samples, "sample"), (time.Duration(p.EstimatedS * float64(time.Second))).Round(time.Millisecond), p.Budget)
	if !p.Simulated {
		line("then at most %s for the play-off, per-level latencies and block/wake", (time.Duration(p.ExtrasS * float64(time.Second))).Round(time.Millisecond))
		line("a live check's rounds also start and pin threads, which this does not price: its first round sets the pace, and rounds are cut or restored to fit")
	}
	if p.Pruning && !p.Simulated {
		line("a live check fits the model to its first round and prunes the later thread counts again: it may keep other candidates")
	}
	if len(p.Floors) > 0 {
		var fl []string
		for _, f := range p.Floors {
			fl = append(fl, fmt.Sprintf("%s %d,%d", f.Level, f.CPUs[0], f.CPUs[1])) // a pair, as show prints it
		}
		line("floors first: %s", strings.Join(fl, ", "))
	}
	for _, t := range p.Threads {
		head := fmt.Sprintf("%5d threads: %s, %s", t.Threads, text.Plural(len(t.Placements), "placement"), text.Plural(len(t.Candidates), "candidate"))
		if len(t.Boundary) > 0 {
			head = fmt.Sprintf("%5d threads (%s): %s, %s", t.Threads, strings.Join(t.Boundary, ", "), text.Plural(len(t.Placements), "placement"), text.Plural(len(t.Candidates), "candidate"))
		}
		if t.Pruned > 0 {
			head += fmt.Sprintf(" (%d pruned)", t.Pruned)
		}
		head += fmt.Sprintf(", ~%.1fs", t.EstimatedS)
		if t.FromRound > 0 {
			head += fmt.Sprintf(", resumed from round %d", t.FromRound+1)
		}
		if t.Calibration {
			head += ", calibrates the model"
		}
		if t.PredictedWinner != "" {
			head += fmt.Sprintf("; predicted best %s %.0f ns", t.PredictedWinner, t.PredictedNs)
		}
		line("%s", head)
		var names []string
		for _, c := range t.Candidates {
			names = append(names, c.Name)
		}
		wrap(&b, "        measure: ", names)
		var pls []string
		for _, pl := range t.Placements {
			s := pl.Label + " [" + text.Elide(pl.CPUs, 100) + "]"
			if pl.Hybrid != "" && verbose {
				s += " hybrid " + pl.Hybrid
			}
			pls = append(pls, s)
		}
		wrap(&b, "        on: ", pls)
		if verbose {
			for _, c := range t.Candidates {
				line("        %s: %s", c.Name, c.Why)
			}
			for _, d := range t.PrunedDetail {
				line("        pruned %s", d)
			}
		}
	}
	for _, c := range p.Cuts {
		line("cut: %s", c)
	}
	for _, r := range p.Runtimes {
		line("then %s", r)
	}
	line("counts not measured: %s", p.Inference)
	return b.String()
}

func round3(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return math.Round(x*1000) / 1000
}

// wrap writes items after head, separated by commas, in lines under
// 160 characters (continuations indented under the first item).
func wrap(b *strings.Builder, head string, items []string) {
	cur := head
	indent := strings.Repeat(" ", len(head))
	for i, it := range items {
		it = text.Elide(it, maxLine-len(head)-2)
		sep := ""
		if i < len(items)-1 {
			sep = ","
		}
		if cur != head && cur != indent && len(cur)+len(it)+len(sep)+1 > maxLine {
			b.WriteString(strings.TrimRight(cur, " ") + "\n")
			cur = indent
		}
		cur += it + sep + " "
	}
	b.WriteString(strings.TrimRight(cur, " ") + "\n")
}
