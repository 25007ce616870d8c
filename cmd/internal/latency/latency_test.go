package latency

import (
	"context"
	"runtime"
	"time"

	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/measure"

	"github.com/barriertune/barriertune/hwtree"
)

const four = `,,,
10,,,
50,52,,
51,49,11,
`

func TestReadCSV(t *testing.T) {
	m, err := ReadCSV(strings.NewReader(four))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.CPUs) != 4 || m.Latency(0, 1) != 10 || m.Latency(1, 0) != 10 || m.Latency(3, 2) != 11 || m.Latency(2, 2) != 0 {
		t.Fatalf("got %v", m.NS)
	}
	if !math.IsNaN(m.Latency(0, 9)) {
		t.Error("unknown CPU should be NaN")
	}
}

func TestReadCSVErrors(t *testing.T) {
	for _, in := range []string{"", ",\n", "1,,\n,,\n", ",,\nx,,\n", ",,\n-1,,\n", ",,\n1,,2\n", ",,,,\n1,\n"} {
		if _, err := ReadCSV(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
	big := strings.Repeat(",\n", MaxCPUs+1)
	if _, err := ReadCSV(strings.NewReader(big)); err == nil {
		t.Error("oversized matrix accepted")
	}
}

func TestClusterAndLevels(t *testing.T) {
	m, _ := ReadCSV(strings.NewReader(four))
	parts := Partitions(m)
	if len(parts) != 1 || len(parts[0]) != 2 {
		t.Fatalf("partitions %v; want {0,1},{2,3}", parts)
	}
	topo, err := Cluster(m)
	if err != nil {
		t.Fatal(err)
	}
	if g := topo.Objects(hwtree.Core); len(g) != 2 || g[0].CPUSet.Len() != 2 {
		t.Fatalf("cores %v", g)
	}
	lv := Levels(m, topo)
	if len(lv) != 2 || lv[0].Level != "Core" || lv[0].Pairs != 2 || lv[0].MedianNs != 10.5 ||
		lv[1].Level != "Machine" || lv[1].Pairs != 4 || lv[1].MedianNs != 50.5 {
		t.Fatalf("levels %+v", lv)
	}
}

// sharedTrees are the trees the clustering must find on some shared
// matrices, as their vendors document them: SMT pairs as cores, one L3 per
// CCX/CCD on AMD, one package per socket on the dual Xeons.
var sharedTrees = map[string]string{
	"amd-ryzen-9-5950x.csv":          "L3Cache:2 Core:8 PU:2",
	"amd-epyc-7773x.csv":             "L3Cache:8 Core:8 PU:2",
	"amd-ryzen-7-2700x.csv":          "L3Cache:2 Core:4 PU:2",
	"dual-intel-xeon-e5-2630-v4.csv": "Package:2 Core:10 PU:2",
	"dual-intel-xeon-gold-6242.csv":  "Package:2 Core:16 PU:2",
	"intel-core-i9-9900k.csv":        "Core:8 PU:2",
	"aws-graviton2.csv":              "Core:64 PU:1",
}

// On every real matrix the clustering gives a valid tree over all CPUs
// whose levels' medians grow outwards.
func TestClusterShared(t *testing.T) {
	files, _ := filepath.Glob("../../../../shared/latency/*.csv")
	if len(files) == 0 {
		t.Skip("../shared/latency is absent")
	}
	for _, path := range files {
		m, err := ReadCSVFile(path)
		if err != nil {
			t.Fatal(err)
		}
		topo, err := Cluster(m)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(topo.CPUs()) != len(m.CPUs) {
			t.Fatalf("%s: tree has %d CPUs, matrix %d", path, len(topo.CPUs()), len(m.CPUs))
		}
		if want, ok := sharedTrees[filepath.Base(path)]; ok {
			if got, err := topo.Synthetic(); err != nil || got != want {
				t.Errorf("%s: clustered tree %q (%v), want %q", filepath.Base(path), got, err, want)
			}
		}
		lv := Levels(m, topo)
		for i := 1; i < len(lv); i++ {
			if lv[i].MedianNs < lv[i-1].MedianNs {
				t.Errorf("%s: level %s median %.1f below inner %s %.1f", filepath.Base(path), lv[i].Level, lv[i].MedianNs, lv[i-1].Level, lv[i-1].MedianNs)
			}
		}
	}
}

func TestMeasure(t *testing.T) {
	if _, err := Measure(context.Background(), []int{0}, Options{}); err == nil {
		t.Error("one CPU accepted")
	}
	if _, err := Measure(context.Background(), []int{0, 0}, Options{}); err == nil {
		t.Error("repeated CPU accepted")
	}
	if runtime.NumCPU() < 2 || runtime.GOMAXPROCS(0) < 2 {
		t.Skip("measuring needs two CPUs")
	}
	m, err := Measure(context.Background(), []int{0, 1}, Options{Measure: measure.Options{Samples: 5, SampleTarget: 50 * time.Microsecond}})
	if err != nil {
		t.Fatal(err)
	}
	if v := m.Latency(0, 1); !(v > 0) || v != m.Latency(1, 0) {
		t.Errorf("implausible latency %v", m.NS)
	}
}

// TestTooFewCPUsSaysSo: one CPU is one CPU, not "1 CPUs".
func TestTooFewCPUsSaysSo(t *testing.T) {
	if err := checkCPUs([]int{0}); err == nil || !strings.Contains(err.Error(), "1 CPU given") || strings.Contains(err.Error(), "1 CPUs") {
		t.Errorf("one CPU: %v", err)
	}
}
