package check

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/model"
)

func latencyFiles(t testing.TB) []string {
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "latency", "*.csv"))
	if len(files) == 0 {
		t.Skip("no latency matrices at ../shared/latency")
	}
	return files
}

func TestReadLatencyCSV(t *testing.T) {
	m, err := readLatencyCSV(strings.NewReader(",,\n10,,\n50,60,\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Latency(0, 1) != 10 || m.Latency(2, 1) != 60 || m.Latency(1, 2) != 60 || m.Latency(0, 0) != 10 || m.Latency(0, 3) == m.Latency(0, 3) {
		t.Fatalf("matrix %v", m.NS)
	}
	for in, want := range map[string]string{
		",\n":             "1 rows",
		",,\n10,,\n":      "row 0 has 3 fields",
		",\nx,\n":         `"x"`,
		",\n-3,\n":        `"-3"`,
		",,\n1,,\n2,,,\n": "row 2 has 4 fields",
	} {
		if _, err := readLatencyCSV(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to mention %s", in, err, want)
		}
	}
}

// TestLatencyTree clusters every shared matrix: the tree holds every CPU,
// and two CPUs sharing the lowest level are closer than two that share
// only the machine.
func TestLatencyTree(t *testing.T) {
	for _, f := range latencyFiles(t) {
		m, err := ReadLatencyFile(f)
		if err != nil {
			t.Fatal(err)
		}
		topo, err := LatencyTree(m, filepath.Base(f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if got := len(topo.PUs()); got != len(m.NS) {
			t.Fatalf("%s: %d PUs, want %d", f, got, len(m.NS))
		}
		syn, _ := topo.Synthetic()
		t.Logf("%s: %d CPUs: %s", filepath.Base(f), len(m.NS), syn)
	}
	if _, err := ReadLatencyFile(filepath.Join(t.TempDir(), "none.csv")); err == nil || !os.IsNotExist(errorsUnwrapAll(err)) {
		t.Fatalf("missing file: %v", err)
	}
}

func errorsUnwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}

// TestLevelLatencies: on a tree with known costs every level's median is
// that level's latency and every pair is counted once.
func TestLevelLatencies(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:2 l3:2 core:2 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	got := levelLatencies(topo, model.NewTreeCosts(topo))
	want := []LevelLatency{
		{"Core", 8, model.SameCoreNS}, {"L3Cache", 16, model.SameL3NS},
		{"Package", 32, model.SamePackageNS}, {"Machine", 64, model.AcrossNS},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("levelLatencies = %+v, want %+v", got, want)
	}
}
