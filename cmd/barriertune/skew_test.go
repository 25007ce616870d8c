package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/internal/measure"
)

func TestParseSkews(t *testing.T) {
	got, err := parseSkews("2us, 500,500,0")
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{0, 500, 2 * time.Microsecond}
	if len(got) != len(want) {
		t.Fatalf("parseSkews = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("parseSkews = %v, want %v", got, want)
		}
	}
	for _, bad := range []string{"", "-5", "fast", "1h", "1,,2"} {
		if _, err := parseSkews(bad); err == nil || !strings.Contains(err.Error(), "--skew") {
			t.Errorf("parseSkews(%q) = %v, want an error naming --skew", bad, err)
		}
	}
}

// TestSkewOneThread measures one thread, the late rank itself: the table
// has one column per skew and a row per algorithm.
func TestSkewOneThread(t *testing.T) {
	var b bytes.Buffer
	cands := []measure.Candidate{{Algorithm: "central", Policy: barriers.Spin}, {Algorithm: "dissemination", Policy: barriers.Spin}}
	err := runSkew(&b, []int{0}, cands, "5us", measure.Options{Samples: 3, SampleTarget: 50 * time.Microsecond}, false, "")
	if err != nil {
		t.Skipf("cannot run on CPU 0: %v", err)
	}
	out := b.String()
	for _, want := range []string{"skew 0s", "skew 5µs", "central", "dissemination"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestBenchSkewPlot: --plot with --skew draws the skew run (issue 20: it
// wrote nothing), a line per algorithm.
func TestBenchSkewPlot(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "skew.svg")
	out, err := run(t, "bench", "--threads", "1", "--algorithm", "central,dissemination", "--samples", "2",
		"--sample-time", "20us", "--skew", "500,2us", "--plot", svg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "skew 2µs") {
		t.Errorf("no skew table:\n%s", out)
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatalf("--plot with --skew wrote nothing: %v", err)
	}
	for _, want := range []string{"<svg", "central", "dissemination", "skew"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the plot lacks %q", want)
		}
	}
}
