package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/export"
	"github.com/barriertune/barriertune/results"
)

// TestParseExportsRoundTrip parses what export writes for one count (a
// quoted OMP_PLACES included) back into exactly the measured settings plus
// OMP_NUM_THREADS, in order.
func TestParseExportsRoundTrip(t *testing.T) {
	best := []string{"OMP_PLACES={1},{0}", "OMP_PROC_BIND=close"}
	f := &results.File{Machine: results.Machine{AllowedCPUs: "0-1"},
		Threads: []results.Threads{{Threads: 2, Best: &results.Choice{Spec: results.Spec{Algorithm: "central", Policy: "spin"}, CPUs: []int{1, 0}, Pinned: true, MedianNs: 180}}},
		OpenMP: &results.OpenMP{Runtimes: []results.OpenMPRuntime{
			{Name: "libgomp", Counts: []results.OpenMPCount{{Threads: 2, Best: append([]string{"GOMP_SPINCOUNT=0"}, best...)}}},
			{Name: "libomp", Counts: []results.OpenMPCount{{Threads: 2, Best: append([]string{"KMP_BLOCKTIME=1"}, best...)}}},
		}}}
	var b bytes.Buffer
	if err := export.Write(&b, f, "omp-env", export.Options{Threads: 2}); err != nil {
		t.Fatal(err)
	}
	got, err := parseExports(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"OMP_NUM_THREADS=2", "GOMP_SPINCOUNT=0", "OMP_PLACES={1},{0}", "OMP_PROC_BIND=close", "KMP_BLOCKTIME=1"}
	if !slices.Equal(got, want) {
		t.Errorf("parsed %q, want %q\nfrom:\n%s", got, want, b.String())
	}
	notes := runtimeNotes(b.Bytes())
	if len(notes) < 2 || !strings.HasPrefix(notes[len(notes)-1], "libomp at 2 threads: KMP_BLOCKTIME=1") {
		t.Errorf("runtime notes %q, want each runtime's setting", notes)
	}
	if _, err := parseExports([]byte("if true; then\n")); err == nil {
		t.Error("an if-chain (no --threads) parsed without error")
	}
}

func TestRatio(t *testing.T) {
	if s := formatRatio(0.0044); s != "0.0044x" {
		t.Errorf("formatRatio(0.0044) = %s", s)
	}
	if s := formatRatio(0.654); s != "0.65x" {
		t.Errorf("formatRatio(0.654) = %s", s)
	}
}
