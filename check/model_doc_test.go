package check

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/latency"
	"github.com/barriertune/barriertune/model"
	"github.com/barriertune/barriertune/results"
)

// TestModelDoc writes the tables of docs/model.md's "Predictions at scale"
// when BARRIERTUNE_WRITE_MODEL_DOC names the output file:
//
//	BARRIERTUNE_MODEL_SCALE_MODEL=default BARRIERTUNE_WRITE_MODEL_DOC=/tmp/model-doc.md go test -run TestModelDoc ./check
//
// For each machine of docMachines it runs the simulated check (what
// `check --simulate --latency FILE -o OUT` does) and the plan (`check
// --plan --latency FILE --json`). Without the variable it checks, on one
// machine, what the tables rest on: the winner ranges cover every thread
// count 2..N exactly once.
func TestModelDoc(t *testing.T) {
	out := os.Getenv("BARRIERTUNE_WRITE_MODEL_DOC")
	dir := filepath.Join("..", "..", "shared", "latency")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("no ../shared/latency")
	}
	machines := docMachines
	if out == "" {
		machines = machines[:1]
	}
	var winners, versus, cost strings.Builder
	winners.WriteString("| machine | CPUs | clustered tree | predicted winner by thread count (simulated check) |\n|---|---|---|---|\n")
	versus.WriteString("| machine | threads | hybrid composition | hybrid ns | best flat | flat ns | flat / hybrid |\n|---|---|---|---|---|---|---|\n")
	cost.WriteString("| machine | CPUs | pruned plan (measurements, est. time) | exhaustive | paper's configuration sets | simulate took here (measured) |\n|---|---|---|---|---|---|\n")
	for _, name := range machines {
		m, topo, err := latency.LoadFile(filepath.Join(dir, name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		cfg := ScaleConfig{Topology: topo, Costs: m.Costs(), Model: docModel()}
		start := time.Now()
		f, p, err := Simulate(SimulateConfig{ScaleConfig: cfg, Machine: name})
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		ranges, covered := winnerRanges(f)
		if covered != len(m.CPUs)-1 {
			t.Fatalf("%s: winner ranges cover %d thread counts, want %d", name, covered, len(m.CPUs)-1)
		}
		syn, err := topo.Synthetic()
		if err != nil {
			syn = "asymmetric"
		}
		fmt.Fprintf(&winners, "| %s | %d | %s | %s |\n", name, len(m.CPUs), syn, ranges)
		for _, e := range p.Plan {
			if !versusRow(e.Threads, p.PUs) {
				continue
			}
			flatName, flatNS := "", math.NaN()
			for _, pr := range e.preds {
				if !math.IsNaN(pr.ns) && pr.alg != "hybrid" {
					flatName, flatNS = pr.name, pr.ns
					break
				}
			}
			hy := e.hybridAny
			if math.IsNaN(hy.ns) || hy.ns > flatNS*(1+1e-9) {
				t.Fatalf("%s, %d threads: hybrid %.1f ns predicted slower than flat %s %.1f ns", name, e.Threads, hy.ns, flatName, flatNS)
			}
			ratio := fmt.Sprintf("%.2fx", flatNS/hy.ns)
			if strings.HasPrefix(hy.composition, "flat:") {
				ratio = "1 (degenerates to flat)"
			}
			fmt.Fprintf(&versus, "| %s | %d | %s | %.0f | %s | %.0f | %s |\n", name, e.Threads, hy.composition, hy.ns, flatName, flatNS, ratio)
		}
		fmt.Fprintf(&cost, "| %s | %d | %d (%s) | %d (%s) | %s (%s) | %s |\n", name, p.PUs, p.Cost.Pruned, humanSeconds(p.Cost.PrunedS),
			p.Cost.Exhaustive, humanSeconds(p.Cost.ExhaustiveS), p.Cost.Paper, humanSeconds(p.Cost.PaperS), took.Round(time.Millisecond))
	}
	if out == "" {
		return
	}
	doc := fmt.Sprintf("Model: `%s`. All figures predicted except the last column of the cost table.\n\n#### Predicted winner per thread count\n\n%s\n#### Hybrid against the best flat algorithm (predicted, best placement)\n\n%s\n#### Tuning cost (measurements: one candidate on one placement; times estimated)\n\n%s",
		docModel(), winners.String(), versus.String(), cost.String())
	if err := os.WriteFile(out, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}

// versusRow keeps the hybrid-against-flat table short: 8, 16, 32, 64 and
// the whole machine.
func versusRow(t, pus int) bool { return t == 8 || t == 16 || t == 32 || t == 64 || t == pus }

// winnerRanges writes the winners of f's thread counts as ranges
// ("2 dissemination · 3-8 static-tree(8) · ...") and returns how many
// thread counts they cover.
func winnerRanges(f *results.File) (string, int) {
	label := func(c *results.Choice) string {
		if c.FanIn > 0 && model.TakesFanIn(c.Algorithm) {
			return fmt.Sprintf("%s(%d)", c.Algorithm, c.FanIn)
		}
		return c.Algorithm
	}
	var parts []string
	covered := 0
	for i := 0; i < len(f.Threads); {
		if f.Threads[i].Best == nil {
			i++
			continue
		}
		l := label(f.Threads[i].Best)
		j := i
		for j+1 < len(f.Threads) && f.Threads[j+1].Best != nil && label(f.Threads[j+1].Best) == l && f.Threads[j+1].Threads == f.Threads[j].Threads+1 {
			j++
		}
		covered += j - i + 1
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d %s", f.Threads[i].Threads, f.Threads[j].Threads, l))
		} else {
			parts = append(parts, fmt.Sprintf("%d %s", f.Threads[i].Threads, l))
		}
		i = j + 1
	}
	return strings.Join(parts, " · "), covered
}
