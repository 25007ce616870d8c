package main

import (
	"strings"
	"testing"
)

// TestNoClaimWithoutMeasurement: a count not measured says so and shows
// no time (formerly kv printed measured_threads=8 median_ns=0.0, omp-env
// "0.0 ns/episode" and "measured unpinned", show --json "median_ns": 0);
// show says what barriers.Auto builds apart from what was measured.
func TestNoClaimWithoutMeasurement(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	// 12 threads on the file's 8 CPUs: not measured; 16's algorithm
	// (cond) runs only in Go, so what OS threads run stands in.
	code, out, errOut := execLine("export", "--format", "kv", "--threads", "12", exportTestdata)
	if code != 0 || strings.Contains(out, "median_ns") || !strings.Contains(out, "measured_threads=16") || !strings.Contains(out, "rule=substituted") || strings.Contains(out, "cond") {
		t.Errorf("kv --threads 12: exit %d\n%s%s", code, out, errOut)
	}
	// 6 threads: not measured, the nearest count's (8) algorithm.
	code, out, _ = execLine("export", "--format", "kv", "--threads", "6", exportTestdata)
	if code != 0 || strings.Contains(out, "median_ns") || !strings.Contains(out, "measured_threads=8") || !strings.Contains(out, "rule=nearest") {
		t.Errorf("kv --threads 6: exit %d\n%s", code, out)
	}
	code, out, _ = execLine("export", "--format", "omp-env", "--threads", "12", exportTestdata)
	if code != 0 || strings.Contains(out, "0.0 ns") || strings.Contains(out, "measured unpinned") || !strings.Contains(out, "not measured") {
		t.Errorf("omp-env --threads 12: exit %d\n%s", code, out)
	}
	code, out, _ = execLine("show", "--threads", "12", "--json", exportTestdata)
	if code != 0 || !strings.Contains(out, `"median_ns": null`) || !strings.Contains(out, `"measured": false`) || !strings.Contains(out, `"auto_policy": "auto"`) {
		t.Errorf("show --threads 12 --json: exit %d\n%s", code, out)
	}
	// Measured: what Auto builds (policy auto), then what was measured
	// (policy spin, its time), apart.
	code, out, _ = execLine("show", "--threads", "2", exportTestdata)
	if code != 0 || !strings.Contains(out, "barriers.Auto builds mcs, policy auto (default)\n") || !strings.Contains(out, "measured: mcs with policy spin, 61.7 ns/episode") {
		t.Errorf("show --threads 2: exit %d\n%s", code, out)
	}
	code, out, _ = execLine("show", "--threads", "12", exportTestdata)
	if code != 0 || strings.Contains(out, "ns/episode") || !strings.Contains(out, "measured: nothing for 12 threads") {
		t.Errorf("show --threads 12: exit %d\n%s", code, out)
	}
}
