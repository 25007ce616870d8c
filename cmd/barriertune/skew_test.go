package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/results"
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
	err := benchSkews(&b, []int{0}, cands, "5us", measure.Options{Samples: 3, SampleTarget: 50 * time.Microsecond}, false, "")
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

// TestBenchSkewPlot: --plot with --skew draws the skew run (formerly it
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

// TestSkewSaysBlocks: bench --skew labels the blocking baselines' policy
// "blocks", as plain bench does, in the table and the JSON.
func TestSkewSaysBlocks(t *testing.T) {
	cands := []measure.Candidate{{Algorithm: "central", Policy: barriers.Spin}, {Algorithm: "cond", Policy: barriers.Spin}}
	for _, asJSON := range []bool{false, true} {
		var b bytes.Buffer
		if err := benchSkews(&b, []int{0}, cands, "1us", measure.Options{Samples: 2, SampleTarget: 20 * time.Microsecond}, asJSON, ""); err != nil {
			t.Skipf("cannot run on CPU 0: %v", err)
		}
		if asJSON {
			var got struct {
				Skew []struct {
					Algorithm, Policy string
					Results           []struct{ Policy string }
				}
			}
			if err := json.Unmarshal(b.Bytes(), &got); err != nil || len(got.Skew) != 2 {
				t.Fatalf("%v:\n%s", err, b.String())
			}
			for _, r := range got.Skew {
				if (r.Policy == "blocks") != (r.Algorithm == "cond") || (r.Results[0].Policy == "blocks") != (r.Algorithm == "cond") {
					t.Errorf("json: %s's policy %q (results: %q)", r.Algorithm, r.Policy, r.Results[0].Policy)
				}
			}
			continue
		}
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.Contains(l, "cond") && !strings.Contains(l, "blocks") {
				t.Errorf("cond's line %q does not say blocks", l)
			}
		}
	}
}

// TestSkewPlotLogAxis: a y range wider than a factor of ten is drawn on a
// log axis, so that the spinning lines are not flattened at the bottom.
func TestSkewPlotLogAxis(t *testing.T) {
	skews := []time.Duration{0, time.Microsecond, 10 * time.Microsecond}
	run := func(alg, policy string, ns ...float64) skewRun {
		r := skewRun{Algorithm: alg, Policy: policy}
		for _, v := range ns {
			r.Results = append(r.Results, measure.Result{Summary: results.Summary{MedianNs: v}})
		}
		return r
	}
	wide := []skewRun{run("central", "spin", 170, 180, 200), run("cond", "blocks", 21000, 24000, 22000)}
	p, err := skewPlot([]int{0, 1}, skews, wide)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Y.Scale.(plot.LogScale); !ok {
		t.Errorf("y 170..24000 ns: scale %T, want a log scale", p.Y.Scale)
	}
	narrow := []skewRun{run("central", "spin", 170, 180, 200), run("mcs", "spin", 190, 300, 400)}
	if p, err = skewPlot([]int{0, 1}, skews, narrow); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Y.Scale.(plot.LogScale); ok {
		t.Errorf("y 170..400 ns on a log scale")
	}
}
