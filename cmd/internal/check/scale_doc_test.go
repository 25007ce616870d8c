package check

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/latency"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/hwtree"
)

// TestModelScaleDoc writes docs/model-scale.md's tuning-cost table when
// BARRIERTUNE_WRITE_MODEL_SCALE names the output file:
//
//	BARRIERTUNE_WRITE_MODEL_SCALE=/tmp/tables.md go test -run ModelScaleDoc ./check
//
// For each ../shared/latency machine with 16+ CPUs and two synthetic trees
// it plans (check --plan --latency FILE) and simulates (check --simulate)
// with the default budget, and times both. Without the variable it checks
// one synthetic tree: the simulated check measures exactly the plan's
// triples.
func TestModelScaleDoc(t *testing.T) {
	out := os.Getenv("BARRIERTUNE_WRITE_MODEL_SCALE")
	type machine struct {
		name  string
		topo  *hwtree.Topology
		costs model.Costs
	}
	var ms []machine
	for _, syn := range []string{"pack:2 l3:4 core:16 pu:2", "pack:4 l3:8 core:16 pu:2"} {
		topo, err := hwtree.FromSynthetic(syn)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, machine{"synthetic " + syn, topo, nil})
		if out == "" {
			break
		}
	}
	if out != "" {
		files, _ := filepath.Glob(filepath.Join("..", "..", "..", "..", "shared", "latency", "*.csv"))
		for _, path := range files {
			m, topo, err := latency.LoadFile(path)
			if err != nil || len(topo.PUs()) < 16 {
				continue
			}
			ms = append(ms, machine{strings.TrimSuffix(filepath.Base(path), ".csv"), topo, m.Costs()})
		}
	}
	var b strings.Builder
	b.WriteString("| machine | PUs | budget | thread counts | pruned | measurements | estimated | kept at the most threads | simulated best there | plan took | simulate took |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, budget := range []time.Duration{DefaultBudget, 5 * time.Second} {
		for _, m := range ms {
			b.WriteString(scaleRow(t, m.name, m.topo, m.costs, budget))
		}
		if out == "" {
			break
		}
	}
	if out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Log("\n" + b.String())
}

// scaleRow plans and simulates one machine with budget and writes its row.
func scaleRow(t *testing.T, name string, topo *hwtree.Topology, costs model.Costs, budget time.Duration) string {
	var b strings.Builder
	m := struct {
		name  string
		topo  *hwtree.Topology
		costs model.Costs
	}{name, topo, costs}
	{
		start := time.Now()
		p, err := DryRun(Config{Topology: m.topo, Costs: m.costs, Budget: budget})
		if err != nil {
			t.Fatal(err)
		}
		planned := time.Since(start)
		start = time.Now()
		mm, err := NewModelMeasurer(m.topo, m.costs, model.DefaultModel, model.DefaultParams(), 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Run(context.Background(), Config{Topology: m.topo, Costs: m.costs, Measurer: mm, Budget: budget})
		if err != nil {
			t.Fatal(err)
		}
		simulated := time.Since(start)
		got := fileTriples(f)
		if len(got) != len(p.Triples()) {
			t.Errorf("%s: plan %d triples, simulated %d", m.name, len(p.Triples()), len(got))
		}
		last := p.Threads[len(p.Threads)-1]
		var kept []string
		for _, c := range last.Candidates {
			kept = append(kept, c.Name)
		}
		if !p.Pruning {
			kept = []string{"every candidate"}
		}
		bestThere := "-"
		if e := f.Lookup(last.Threads); e != nil && e.Best != nil {
			bestThere = fmt.Sprintf("%s %.0f ns", e.Best.Describe(), e.Best.MedianNs)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %d | %v | %d | %.0f s | %d: %s | %s | %s | %s |\n", m.name, p.PUs, budget, len(p.Threads), p.Pruning,
			len(p.Triples()), p.EstimatedS, last.Threads, strings.Join(kept, ", "), bestThere,
			planned.Round(time.Millisecond), simulated.Round(time.Millisecond))
	}
	return b.String()
}
