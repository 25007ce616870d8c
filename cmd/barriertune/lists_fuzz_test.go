package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/barriers"
)

// FuzzParseCounts checks parseCounts' promises on any input: no panic, an
// error that names the flag, or counts within 1..barriers.MaxParticipants, each once.
func FuzzParseCounts(f *testing.F) {
	for _, s := range []string{"2,4,8", "2-8", "1", "2,2", "2-1000000000", "", "-", "1-65536", "3-2", " 2 , 3 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseCounts("--threads", s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--threads ") || exitCode(err) != exitUsage {
				t.Fatalf("error %q", err)
			}
			return
		}
		if len(got) == 0 || len(got) > barriers.MaxParticipants {
			t.Fatalf("%d counts", len(got))
		}
		sorted := slices.Sorted(slices.Values(got))
		for i, v := range sorted {
			if v < 1 || v > barriers.MaxParticipants || i > 0 && v == sorted[i-1] {
				t.Fatalf("count %d in %v", v, got)
			}
		}
	})
}

// FuzzParseCPUs checks parseCPUs' promises: no panic, a usage error, or
// CPUs within cpuset's range, at most barriers.MaxParticipants, none twice unless
// oversubscription is allowed.
func FuzzParseCPUs(f *testing.F) {
	for _, s := range []string{"0,1", "0-3,8", "0,0", "0-1000000000", "x", "3-1", "0,,1", ""} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, over bool) {
		got, err := parseCPUs("--cpus", s, over, "")
		if err != nil {
			if exitCode(err) != exitUsage || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q", err)
			}
			return
		}
		if len(got) > barriers.MaxParticipants {
			t.Fatalf("%d CPUs", len(got))
		}
		sorted := slices.Sorted(slices.Values(got))
		for i, c := range sorted {
			if c < 0 || !over && i > 0 && c == sorted[i-1] {
				t.Fatalf("CPU %d in %v", c, got)
			}
		}
	})
}
