package check

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/latency"
	"github.com/barriertune/barriertune/model"
)

// docMachines are the ../shared/latency machines docs/model-scale.md shows.
var docMachines = []string{
	"amd-ryzen-7-2700x", "amd-ryzen-9-5950x", "dual-intel-xeon-e5-2630-v4", "amd-ryzen-threadripper-3960x",
	"dual-intel-xeon-gold-6242", "intel-xeon-e5-2695-v4", "intel-xeon-platinum-8275cl", "amd-epyc-7773x",
}

// docSynthetic are trees without a matrix (typical latencies per level).
var docSynthetic = []string{"pack:2 l3:4 core:8 pu:2", "pack:4 l3:4 core:8 pu:2"}

// TestModelScaleDoc writes docs/model-scale.md's tables when
// BARRIERTUNE_WRITE_MODEL_SCALE names the output file:
//
//	BARRIERTUNE_WRITE_MODEL_SCALE=$PWD/docs/model-scale-tables.md go test -run ModelScaleDoc ./check
//
// Without it, it checks the invariant the tables rest on for one machine:
// the plan's hybrid is never predicted slower than the best flat algorithm.
func TestModelScaleDoc(t *testing.T) {
	out := os.Getenv("BARRIERTUNE_WRITE_MODEL_SCALE")
	dir := filepath.Join("..", "..", "shared", "latency")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("no ../shared/latency")
	}
	machines := docMachines
	if out == "" {
		machines = machines[1:2]
	}
	var b strings.Builder
	var costRows []string
	for _, name := range machines {
		m, topo, err := latency.LoadFile(filepath.Join(dir, name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		row, err := docMachine(&b, name, topo, m.Costs())
		if err != nil {
			t.Fatal(err)
		}
		costRows = append(costRows, row)
	}
	if out == "" {
		return
	}
	for _, syn := range docSynthetic {
		topo, err := hwtree.FromSynthetic(syn)
		if err != nil {
			t.Fatal(err)
		}
		row, err := docMachine(&b, "synthetic "+syn, topo, model.NewTreeCosts(topo))
		if err != nil {
			t.Fatal(err)
		}
		costRows = append(costRows, row)
	}
	var doc strings.Builder
	doc.WriteString("### Tuning cost (measurements: one candidate on one placement)\n\n")
	doc.WriteString("| machine | PUs | pruned plan | measured / inferred counts | exhaustive | paper's method | planning took |\n|---|---|---|---|---|---|---|\n")
	for _, r := range costRows {
		doc.WriteString(r)
	}
	doc.WriteString("\n")
	doc.WriteString(b.String())
	if err := os.WriteFile(out, []byte(doc.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// docMachine writes one machine's section and returns its tuning-cost row.
func docMachine(b *strings.Builder, name string, topo *hwtree.Topology, c model.Costs) (string, error) {
	start := time.Now()
	p, err := PlanScale(ScaleConfig{Topology: topo, Costs: c, Model: docModel()})
	if err != nil {
		return "", err
	}
	took := time.Since(start)
	syn, err := topo.Synthetic()
	if err != nil {
		syn = "asymmetric"
	}
	fmt.Fprintf(b, "### %s (%d PUs, tree %s)\n\n", name, p.PUs, syn)
	b.WriteString("| threads | predicted winner | ns | best flat | ns | hybrid composition | hybrid ns | hybrid vs flat |\n|---|---|---|---|---|---|---|---|\n")
	for _, e := range p.Plan {
		flatName, flatNS := "", math.NaN()
		for _, pr := range e.preds {
			if !math.IsNaN(pr.ns) && pr.alg != "hybrid" {
				flatName, flatNS = pr.name, pr.ns
				break
			}
		}
		hyNS, comp := e.hybridAny.ns, e.hybridAny.composition
		if !docRow(e.Threads, p.PUs) {
			continue
		}
		if math.IsNaN(hyNS) || hyNS > flatNS*(1+1e-9) {
			return "", fmt.Errorf("%s, %d threads: hybrid %.1f ns predicted slower than flat %s %.1f ns", name, e.Threads, hyNS, flatName, flatNS)
		}
		vs := fmt.Sprintf("%.2fx", flatNS/hyNS)
		if strings.HasPrefix(comp, "flat:") {
			vs = "= flat (no level pays)"
		}
		hy := fmt.Sprintf("%.0f", hyNS)
		fmt.Fprintf(b, "| %d | %s | %.0f | %s | %.0f | %s | %s | %s |\n", e.Threads, e.PredictedWinner, e.PredictedNs, flatName, flatNS, comp, hy, vs)
	}
	b.WriteString("\n")
	return fmt.Sprintf("| %s | %d | %d (%.0f s) | %d / %d | %d (%.0f s) | %s (%s) | %s |\n", name, p.PUs, p.Cost.Pruned, p.Cost.PrunedS,
		p.Measured, p.Inferred, p.Cost.Exhaustive, p.Cost.ExhaustiveS, p.Cost.Paper, humanSeconds(p.Cost.PaperS), took.Round(time.Millisecond)), nil
}

// docRow keeps the tables short: 2..8, multiples of 8, and the maximum.
func docRow(t, pus int) bool { return t <= 8 || t%8 == 0 || t == pus }

func humanSeconds(s float64) string {
	switch {
	case s < 120:
		return fmt.Sprintf("%.0f s", s)
	case s < 7200:
		return fmt.Sprintf("%.0f min", s/60)
	case s < 2*86400:
		return fmt.Sprintf("%.0f h", s/3600)
	case s < 2*365*86400:
		return fmt.Sprintf("%.0f days", s/86400)
	}
	return fmt.Sprintf("%.2g years", s/(365*86400))
}

// docModel is the cost model of the tables: BARRIERTUNE_MODEL_SCALE_MODEL
// (default critical-path).
func docModel() model.Kind {
	if k := os.Getenv("BARRIERTUNE_MODEL_SCALE_MODEL"); k != "" {
		return model.Kind(k)
	}
	return model.CriticalPathModel
}
