package main

import (
	"strings"
	"testing"
)

// TestSetsLabelsFilled: sets with the same paper config are told apart by
// their labels (formerly two rows "(a2, b0)" with an empty label).
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
