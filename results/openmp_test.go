package results_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/results"
)

// TestOpenMPBeforeSchema: a file written before v1.5 reads, with no
// OpenMP record; one written now keeps it through a round trip.
func TestOpenMPBeforeSchema(t *testing.T) {
	data, err := os.ReadFile("testdata/check-2cpu.json")
	if err != nil {
		t.Fatal(err)
	}
	f, err := results.Parse(data, "check-2cpu.json")
	if err != nil {
		t.Fatalf("a v1.1 file does not read: %v", err)
	}
	if f.OpenMP != nil {
		t.Fatalf("a v1.1 file has an OpenMP record: %+v", f.OpenMP)
	}
	if f.OpenMP.Runtime(results.Schema) != nil {
		t.Fatal("Runtime on a nil record is not nil")
	}
	f.Schema = results.Schema
	f.OpenMP = &results.OpenMP{Loop: "loop", Share: "1/3", Runtimes: []results.OpenMPRuntime{
		{Name: "libomp", Compiler: "/usr/bin/clang", Library: "/usr/lib/libomp.so.5", Version: "LLVM OMP version 5.0",
			Counts: []results.OpenMPCount{{Threads: 8, DefaultNs: 20000, Best: []string{"KMP_PLAIN_BARRIER_PATTERN=linear,linear"}, BestNs: 12000, MarginPct: 66.7, Test: "p=0.001", Settings: 12, Runs: 90}}},
		{Name: "libgomp", Compiler: "gcc", NotMeasured: "gcc: compiler not found"},
	}}
	out, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := results.Parse(out, "new.json")
	if err != nil {
		t.Fatalf("the file with an OpenMP record does not read back: %v", err)
	}
	c := g.OpenMP.Runtime("libomp").Count(8)
	if c == nil || c.BestNs != 12000 || len(c.Best) != 1 || g.OpenMP.Runtime("libgomp").NotMeasured == "" {
		t.Fatalf("the OpenMP record did not survive: %+v", g.OpenMP)
	}
	if g.OpenMP.Runtime("libomp").Count(4) != nil {
		t.Fatal("Count(4) found a count that is not there")
	}
}

// TestOpenMPRefusesUnsafeSetting: a file whose setting could break out of
// the shell file omp-env writes is refused, naming the setting.
func TestOpenMPRefusesUnsafeSetting(t *testing.T) {
	data, err := os.ReadFile("testdata/check-2cpu.json")
	if err != nil {
		t.Fatal(err)
	}
	f, err := results.Parse(data, "x")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"PATH=/tmp", "KMP_X$(id)=1", "OMP_=1", "GOMP_SPINCOUNT"} {
		f.OpenMP = &results.OpenMP{Runtimes: []results.OpenMPRuntime{{Name: "libgomp", Counts: []results.OpenMPCount{{Threads: 2, Best: []string{bad}}}}}}
		out, _ := json.Marshal(f)
		if _, err := results.Parse(out, "x"); err == nil || !strings.Contains(err.Error(), "NAME=VALUE") {
			t.Errorf("setting %q: got %v, want a refusal naming NAME=VALUE", bad, err)
		}
	}
}
