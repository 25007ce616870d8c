package results_test

import (
	"encoding/json"
	"math"
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

// TestOpenMPRefusesHostileValues: a setting's value holding any byte a
// shell, a comment line or a terminal reads as more than text is refused
// (omp-env writes the value into a comment and a sourced export), as are
// thread counts out of range or repeated and too many counts (the
// export's blocks span every count up to the largest); the values the
// check writes read.
func TestOpenMPRefusesHostileValues(t *testing.T) {
	data, err := os.ReadFile("testdata/check-2cpu.json")
	if err != nil {
		t.Fatal(err)
	}
	f, err := results.Parse(data, "x")
	if err != nil {
		t.Fatal(err)
	}
	parse := func(counts ...results.OpenMPCount) error {
		f.OpenMP = &results.OpenMP{Runtimes: []results.OpenMPRuntime{{Name: "libomp", Counts: counts}}}
		out, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		_, err = results.Parse(out, "x")
		return err
	}
	for b := 0; b < 128; b++ {
		r := rune(b)
		plain := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(" _.,=-:+", r)
		err := parse(results.OpenMPCount{Threads: 2, Best: []string{"KMP_AFFINITY=compact" + string(r) + "x"}})
		if plain && err != nil {
			t.Errorf("value with %q: refused: %v", r, err)
		}
		if !plain && (err == nil || !strings.Contains(err.Error(), "plain value")) {
			t.Errorf("value with %q: got %v, want a refusal naming a plain value", r, err)
		}
	}
	for _, good := range []string{"KMP_AFFINITY=granularity=fine,compact", "KMP_PLAIN_BARRIER_PATTERN=linear,linear", "GOMP_CPU_AFFINITY=0-3 8 10-15:2", "GOMP_SPINCOUNT=infinite", "KMP_BLOCKTIME=0"} {
		if err := parse(results.OpenMPCount{Threads: 2, Best: []string{good}}); err != nil {
			t.Errorf("%s: refused: %v", good, err)
		}
	}
	if err := parse(results.OpenMPCount{Threads: 2, Best: []string{"GOMP_CPU_AFFINITY=" + strings.Repeat("0", 1<<17)}}); err == nil {
		t.Error("a value of 128 KiB is accepted")
	}
	for _, n := range []int{0, -1, 1<<20 + 1, math.MaxInt} {
		if err := parse(results.OpenMPCount{Threads: n}); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("thread count %d: got %v, want out of range", n, err)
		}
	}
	if err := parse(results.OpenMPCount{Threads: 2}, results.OpenMPCount{Threads: 2}); err == nil || !strings.Contains(err.Error(), "repeated") {
		t.Errorf("a repeated count: got %v", err)
	}
	many := make([]results.OpenMPCount, 5000)
	for i := range many {
		many[i].Threads = i + 1
	}
	if err := parse(many...); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("5000 counts: got %v", err)
	}
}
