package check

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cmd/internal/ompcheck"
	"github.com/barriertune/barriertune/results"
)

// noOpenMP is the live measurer with toolchains that are not installed.
type noOpenMP struct{ Hardware }

func (noOpenMP) OpenMPToolchains() []ompcheck.Toolchain {
	return []ompcheck.Toolchain{{Runtime: ompcheck.LibGOMP, Compiler: "barriertune-no-gcc"}, {Runtime: ompcheck.LibOMP, Compiler: "barriertune-no-clang"}}
}

func openMPFile() *results.File {
	return &results.File{Machine: results.Machine{AllowedCPUs: "0-1"}, Threads: []results.Threads{
		{Threads: 2, Best: &results.Choice{CPUs: []int{0, 1}, Spec: results.Spec{Algorithm: "central", Policy: "spin"}}},
	}}
}

// TestOpenMPMissingToolchain: without a compiler, each runtime is
// recorded as not measured, saying why, and the step returns at once.
func TestOpenMPMissingToolchain(t *testing.T) {
	f := openMPFile()
	start := time.Now()
	measureOpenMP(context.Background(), f, Config{Budget: time.Minute, Algorithms: catalog.Names()}, noOpenMP{}, start.Add(time.Minute))
	if f.OpenMP == nil || len(f.OpenMP.Runtimes) != 2 {
		t.Fatalf("got %+v, want both runtimes recorded", f.OpenMP)
	}
	for _, r := range f.OpenMP.Runtimes {
		if !strings.Contains(r.NotMeasured, "compiler not found") || len(r.Counts) != 0 {
			t.Errorf("%s: %+v, want not measured: compiler not found", r.Name, r)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the step took %s without a compiler", d)
	}
}

// TestOpenMPBudgetShare: the step takes at most OpenMPShare of the
// budget, and with less than minOpenMPWindow left it measures nothing and
// says why; a simulated file is left alone.
func TestOpenMPBudgetShare(t *testing.T) {
	f := openMPFile()
	now := time.Now()
	measureOpenMP(context.Background(), f, Config{Budget: 6 * time.Second, Algorithms: catalog.Names()}, noOpenMP{}, now.Add(6*time.Second))
	if f.OpenMP == nil || !strings.Contains(f.OpenMP.Runtimes[0].NotMeasured, "the budget left 2s") {
		t.Errorf("a 6 s budget: %+v, want not measured: the budget left 2s (a third)", f.OpenMP)
	}
	f = openMPFile()
	measureOpenMP(context.Background(), f, Config{Budget: time.Minute, Algorithms: catalog.Names()}, noOpenMP{}, now.Add(time.Second))
	if f.OpenMP == nil || !strings.Contains(f.OpenMP.Runtimes[1].NotMeasured, "less than the 3s") {
		t.Errorf("1 s left: %+v, want not measured: less than the 3s", f.OpenMP)
	}
	f = openMPFile()
	measureOpenMP(context.Background(), f, Config{Budget: time.Minute, Algorithms: []string{"central"}}, noOpenMP{}, now.Add(time.Minute))
	if f.OpenMP != nil {
		t.Errorf("a check restricted to central got an OpenMP record: %+v", f.OpenMP)
	}
	f = openMPFile()
	f.Simulated = true
	measureOpenMP(context.Background(), f, Config{Budget: time.Minute, Algorithms: catalog.Names()}, noOpenMP{}, now.Add(time.Minute))
	if f.OpenMP != nil {
		t.Errorf("a simulated file got an OpenMP record: %+v", f.OpenMP)
	}
}

// TestOpenMPVerdict: the verdict is the check's own: within 3% is not
// faster, a larger gap the test cannot separate is not either, a clear one
// is.
func TestOpenMPVerdict(t *testing.T) {
	def := []float64{1000, 1010, 990, 1005, 995, 1002, 998}
	if v := openMPVerdict(def, []float64{990, 985, 992, 988, 991, 987, 989}); v.Faster || !strings.HasPrefix(v.Test, "within 3%") {
		t.Errorf("1%% faster: %+v, want within 3%%", v)
	}
	if v := openMPVerdict(def[:2], []float64{500, 1500}); v.Faster {
		t.Errorf("two noisy runs: %+v, want not separable", v)
	}
	v := openMPVerdict(def, []float64{600, 610, 590, 605, 595, 602, 598})
	if !v.Faster || v.MarginPct < 60 || v.MarginPct > 75 {
		t.Errorf("0.6x: %+v, want faster by about 67%%", v)
	}
}
