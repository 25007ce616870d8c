package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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

// TestLatencyFrom: a file that is not a matrix is named as such with the
// format accepted; a matrix read says its pairs were read, not measured,
// with the right plural.
func TestLatencyFrom(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	prose := write("README.md", "# a title\n\nSome \"quoted\" prose, with commas.\n")
	_, err := run(t, "latency", "--from", prose)
	if err == nil || !strings.Contains(err.Error(), "--from "+prose+" is not a latency matrix (want plain CSV") ||
		!strings.Contains(err.Error(), "docs/model.md") || strings.Contains(err.Error(), "../shared") || strings.Contains(err.Error(), "\n") {
		t.Errorf("latency --from README.md: %v", err)
	}
	for _, c := range []struct{ csv, want string }{
		{",\n10,\n", "2 CPUs, 1 of 1 pair read from "},
		{",,\n10,,\n20,20,\n", "3 CPUs, 3 of 3 pairs read from "},
	} {
		out, err := run(t, "latency", "--from", write("m.csv", c.csv))
		if err != nil || !strings.Contains(out, c.want) || strings.Contains(out, "measured") {
			t.Errorf("%q: %v, want %q in:\n%s", c.csv, err, c.want, out)
		}
	}
	// Errors of the file itself stay as they are.
	if _, err := run(t, "latency", "--from", filepath.Join(dir, "none.csv")); err == nil || strings.Contains(err.Error(), "not a latency matrix") {
		t.Errorf("missing file: %v", err)
	}
}

// TestSetsLabelsFilled: sets with the same paper config are told apart by
// their labels (issue 20: two rows "(a2, b0)" with an empty label).
func TestSetsLabelsFilled(t *testing.T) {
	out, err := run(t, "sets", "--synthetic", "pack:2 core:2 pu:2", "--threads", "2")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[0] != "2" {
			continue
		}
		rows++
		label := strings.Join(f[2:len(f)-2], " ") // threads, cpus, label..., config "(a2, b0)"
		if label == "" || seen[label+f[len(f)-2]+f[len(f)-1]] {
			t.Errorf("row %q: empty or repeated label", line)
		}
		seen[label+f[len(f)-2]+f[len(f)-1]] = true
	}
	if rows != 3 || !strings.Contains(out, "0-1 ") {
		t.Errorf("want 3 sets, CPUs as ranges:\n%s", out)
	}
}
