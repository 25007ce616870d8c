package main

import (
	"bytes"
	"slices"
	"strconv"
	"testing"

	"github.com/barriertune/barriertune/internal/export"
	"github.com/barriertune/barriertune/results"
)

// TestParseExportsRoundTrip parses what export writes for one count (a
// quoted OMP_PLACES included) back into exactly OMPEnv's variables plus
// OMP_NUM_THREADS, in order.
func TestParseExportsRoundTrip(t *testing.T) {
	for _, c := range []*results.Choice{
		{Spec: results.Spec{Algorithm: "dissemination", Policy: "spin"}, CPUs: []int{1, 0}, Pinned: true, MedianNs: 180},
		{Spec: results.Spec{Algorithm: "goroutine", Policy: "auto"}, CPUs: []int{0, 1, 0, 1, 0, 1, 0, 1}, MedianNs: 900},
		{Spec: results.Spec{Algorithm: "hybrid", Policy: "auto"}, CPUs: []int{0, 1}, Pinned: true, MedianNs: 200},
	} {
		n := len(c.CPUs)
		f := &results.File{Machine: results.Machine{AllowedCPUs: "0-1"}, Threads: []results.Threads{{Threads: n, Best: c}}}
		var b bytes.Buffer
		if err := export.Write(&b, f, "omp-env", export.Options{Threads: n}); err != nil {
			t.Fatal(err)
		}
		got, err := parseExports(b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"OMP_NUM_THREADS=" + strconv.Itoa(n)}
		for _, l := range export.OMPEnv(export.OMPInput{Choice: c, Threads: n, Allowed: []int{0, 1}}) {
			if l.Name != "" {
				want = append(want, l.Name+"="+l.Value)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s/%s: parsed %q, want %q\nfrom:\n%s", c.Algorithm, c.Policy, got, want, b.String())
		}
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
