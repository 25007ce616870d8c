package check

import (
	"strings"
	"testing"

	"github.com/barriertune/barriertune/hwtree"
)

// TestPlanRuntimes: a plan says which runtime steps a live check runs
// after the algorithms, and in what share of the budget: OpenMP and MPI
// by default, one of them where --runtimes names it, none for --runtimes
// none, an experiment on some algorithms, or a simulated check.
func TestPlanRuntimes(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:1 core:2 pu:1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		cfg      Config
		omp, mpi bool
		ompWhole bool // OpenMP takes the whole window (no MPI)
	}{
		{"default", Config{Topology: topo}, true, true, false},
		{"--runtimes openmp", Config{Topology: topo, Runtimes: []string{RuntimeOpenMP}}, true, false, true},
		{"--runtimes mpich", Config{Topology: topo, Runtimes: []string{RuntimeMPICH}}, false, true, false},
		{"--runtimes none", Config{Topology: topo, Runtimes: []string{}}, false, false, false},
		{"--algorithms central", Config{Topology: topo, Algorithms: []string{"central"}}, false, false, false},
	} {
		p, err := DryRun(tc.cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		all := strings.Join(p.Runtimes, "\n")
		if got := strings.Contains(all, "OpenMP:"); got != tc.omp {
			t.Errorf("%s: OpenMP line %v, want %v: %q", tc.name, got, tc.omp, all)
		}
		if got := strings.Contains(all, "MPI:"); got != tc.mpi {
			t.Errorf("%s: MPI line %v, want %v: %q", tc.name, got, tc.mpi, all)
		}
		if tc.omp && strings.Contains(all, "half of") == tc.ompWhole {
			t.Errorf("%s: %q; want OpenMP's share to be %s", tc.name, all, map[bool]string{true: "the whole window", false: "half of it"}[tc.ompWhole])
		}
		if text := p.Text(false); tc.omp && !strings.Contains(text, "then OpenMP:") {
			t.Errorf("%s: the plan's text lacks the OpenMP step:\n%s", tc.name, text)
		}
	}
}
