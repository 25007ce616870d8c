package check

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cmd/internal/configsets"
	"github.com/barriertune/barriertune/cmd/internal/latency"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/internal/text"
	"github.com/barriertune/barriertune/results"
)

// docMachines are the ../shared/latency machines of docs/model.md's
// "Predictions at scale", smallest first.
func docMachines() []string {
	return []string{
		"amd-ryzen-7-2700x", "amd-ryzen-9-5950x", "dual-intel-xeon-e5-2630-v4", "amd-ryzen-threadripper-3960x",
		"dual-intel-xeon-gold-6242", "intel-xeon-e5-2695-v4", "intel-xeon-platinum-8275cl", "amd-epyc-7773x",
	}
}

// TestModelDoc writes the tables of docs/model.md's "Predictions at scale"
// when BARRIERTUNE_WRITE_MODEL_DOC names the output file:
//
//	BARRIERTUNE_WRITE_MODEL_DOC=/tmp/model-doc.md go test -run TestModelDoc ./check
//
// For each machine of docMachines, with the machine's matrix as the costs
// and the default model at its default constants, it runs the simulated
// check of every thread count 2..N (`check --simulate --latency FILE
// --threads 2-N`), predicts the hybrid and the best flat algorithm on the
// compact placement of every count (model.HybridFor, model.BestFlat), and
// plans the default check pruned and exhaustive (`check --plan --latency
// FILE`, with --exhaustive). Without the variable it checks, on the first
// machine, what the tables rest on: the winners cover every thread count
// 2..N exactly once (each measured or named in the cuts), the hybrid is
// never predicted slower than the best flat algorithm, and the simulated
// file carries the matrix's per-level latencies (latency.Levels).
func TestModelDoc(t *testing.T) {
	out := os.Getenv("BARRIERTUNE_WRITE_MODEL_DOC")
	dir := filepath.Join("..", "..", "..", "..", "shared", "latency")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("no ../shared/latency")
	}
	machines := docMachines()
	if out == "" {
		machines = machines[:1]
	}
	var winners, versus, cost strings.Builder
	winners.WriteString("| machine | CPUs | clustered tree | predicted winner by thread count (simulated check) |\n|---|---|---|---|\n")
	versus.WriteString("| machine | threads | hybrid composition | hybrid ns | best flat | flat ns | flat / hybrid |\n|---|---|---|---|---|---|---|\n")
	cost.WriteString("| machine | CPUs | default plan: measurements × rounds (est. time) | exhaustive plan | paper's configuration sets × algorithms | simulated check took here (measured) |\n|---|---|---|---|---|---|\n")
	for _, name := range machines {
		m, topo, err := latency.LoadFile(filepath.Join(dir, name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		costs := m.Costs()
		npus := len(topo.PUs())
		var all []int
		for n := 2; n <= npus; n++ {
			all = append(all, n)
		}

		// The winners: the simulated check of every count.
		start := time.Now()
		mm, err := NewModelMeasurer(topo, costs, model.DefaultModel, model.DefaultParams(), 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Run(context.Background(), Config{Topology: topo, Costs: costs, Measurer: mm, Threads: all})
		if err != nil {
			t.Fatalf("%s: simulated check: %v", name, err)
		}
		took := time.Since(start)
		want := latency.Levels(m, topo)
		if len(f.Latency) != len(want) {
			t.Fatalf("%s: simulated file has %d latency levels %+v, the matrix %d %+v", name, len(f.Latency), f.Latency, len(want), want)
		}
		for i, l := range f.Latency {
			if w := want[i]; l.Level != w.Level || l.Pairs != w.Pairs || math.Abs(l.MedianNs-w.MedianNs) > 1e-9*w.MedianNs {
				t.Errorf("%s: simulated file's level %d is %+v, the matrix's %+v", name, i, l, w)
			}
		}
		ranges, covered, inferred := winnerRanges(f, all)
		if covered != len(all) {
			t.Fatalf("%s: winner ranges cover %d thread counts, want %d (2..%d)", name, covered, len(all), npus)
		}
		for _, n := range all {
			if e := f.Lookup(n); (e == nil || e.Best == nil) && !slices.Contains(f.Cuts, fmt.Sprintf("%d threads skipped", n)) {
				t.Fatalf("%s: %d threads neither measured nor named in the cuts %q", name, n, f.Cuts)
			}
		}
		syn, err := topo.Synthetic()
		if err != nil {
			syn = "asymmetric"
		}
		if inferred > 0 {
			ranges += fmt.Sprintf(" (%d of %d counts inferred: %s)", inferred, len(all), strings.Join(f.Cuts, "; "))
		}
		fmt.Fprintf(&winners, "| %s | %d | %s | %s |\n", name, npus, syn, ranges)

		// The hybrid against the best flat algorithm, compact placement.
		order := model.CompactOrder(topo, m.CPUs)
		for _, n := range all {
			cpus := model.Compact(order, n)
			flatAlg, flatK, flatNS, err := model.BestFlat(model.DefaultModel, cpus, costs)
			if err != nil {
				t.Fatal(err)
			}
			comp, hyNS, err := model.HybridFor(model.DefaultModel, topo, cpus, costs)
			if err != nil {
				t.Fatal(err)
			}
			flatName := flatAlg
			if flatK > 0 {
				flatName = fmt.Sprintf("%s(%d)", flatAlg, flatK)
			}
			if math.IsNaN(hyNS) || hyNS > flatNS*(1+1e-9) {
				t.Fatalf("%s, %d threads: hybrid %s %.1f ns predicted slower than flat %s %.1f ns", name, n, comp, hyNS, flatName, flatNS)
			}
			if !versusRow(n, npus) {
				continue
			}
			ratio := fmt.Sprintf("%.2fx", flatNS/hyNS)
			if strings.HasPrefix(comp.String(), "flat:") {
				ratio = "1 (degenerates to flat)"
			}
			fmt.Fprintf(&versus, "| %s | %d | %s | %.0f | %s | %.0f | %s |\n", name, n, comp, hyNS, flatName, flatNS, ratio)
		}

		// The tuning cost: the default plan, the exhaustive one, the paper's.
		p, err := DryRun(Config{Topology: topo, Costs: costs, Threads: all})
		if err != nil {
			t.Fatal(err)
		}
		ex, err := DryRun(Config{Topology: topo, Costs: costs, Threads: all, Exhaustive: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(ex.Threads) != len(all) {
			t.Fatalf("%s: the exhaustive plan has %d thread counts, want %d", name, len(ex.Threads), len(all))
		}
		paper := new(big.Int)
		for n, c := range configsets.PaperCounts(topo) {
			if n >= 2 {
				paper.Add(paper, c)
			}
		}
		paper.Mul(paper, big.NewInt(int64(len(catalog.Names()))))
		paperS, _ := new(big.Float).Mul(new(big.Float).SetInt(paper), big.NewFloat(perCandidate(defaultSamples, DefaultSampleTime).Seconds())).Float64()
		mode := "every candidate"
		if p.Pruning {
			mode = "pruned"
		}
		if len(p.Threads) < len(all) {
			mode += fmt.Sprintf(", %d of %d counts", len(p.Threads), len(all))
		}
		fmt.Fprintf(&cost, "| %s | %d | %d × %s, %s (%s) | %d (%s) | %s (%s) | %s |\n", name, npus,
			len(p.Triples()), text.Plural(p.Rounds, "round"), mode, humanSeconds(p.EstimatedS),
			len(ex.Triples()), humanSeconds(ex.EstimatedS), paper, humanSeconds(paperS), took.Round(time.Millisecond))
	}
	if out == "" {
		return
	}
	doc := fmt.Sprintf("Model: `%s` at its default constants (model.DefaultParams). All figures predicted except the last column of the cost table.\n\n#### Predicted winner per thread count\n\n%s\n#### Hybrid against the best flat algorithm (predicted, compact placement)\n\n%s\n#### Tuning cost (measurements: one candidate on one placement; times estimated)\n\n%s",
		model.DefaultModel, winners.String(), versus.String(), cost.String())
	if err := os.WriteFile(out, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}

// versusRow keeps the hybrid-against-flat table short: 8, 16, 32, 64 and
// the whole machine.
func versusRow(t, pus int) bool { return t == 8 || t == 16 || t == 32 || t == 64 || t == pus }

// winnerRanges writes the winners of the counts as ranges ("2
// dissemination · 3-8 static-tree(8) · ...": a hybrid by its composition
// when it degenerated to one flat algorithm, else "hybrid") and returns how many counts
// they cover and how many of those f did not measure (served by the
// nearest measured count, results.File.Nearest, marked "~").
func winnerRanges(f *results.File, counts []int) (string, int, int) {
	label := func(n int) (string, bool) {
		e := f.Lookup(n)
		measured := e != nil && e.Best != nil
		if !measured {
			e = f.Nearest(n)
		}
		if e == nil || e.Best == nil {
			return "", false
		}
		c := e.Best
		l := c.Algorithm
		if c.FanIn > 0 && model.TakesFanIn(c.Algorithm) {
			l = fmt.Sprintf("%s(%d)", c.Algorithm, c.FanIn)
		}
		if strings.HasPrefix(c.Composition, "flat:") {
			l = c.Describe() // a hybrid degenerated to one flat algorithm
		}
		if !measured {
			l = "~" + l
		}
		return l, true
	}
	var parts []string
	covered, inferred := 0, 0
	for i := 0; i < len(counts); {
		l, ok := label(counts[i])
		if !ok {
			i++
			continue
		}
		j := i
		for j+1 < len(counts) && counts[j+1] == counts[j]+1 {
			next, ok := label(counts[j+1])
			if !ok || next != l {
				break
			}
			j++
		}
		covered += j - i + 1
		if strings.HasPrefix(l, "~") {
			inferred += j - i + 1
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d %s", counts[i], counts[j], l))
		} else {
			parts = append(parts, fmt.Sprintf("%d %s", counts[i], l))
		}
		i = j + 1
	}
	return strings.Join(parts, " · "), covered, inferred
}

// humanSeconds writes an estimated duration in the unit a person reads it
// in.
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
