package main

import (
	"strings"
	"testing"
)

// TestCheckRefusesCountsTheRuntimeCannotHost: a count above the Go
// runtime's thread limit is refused with one line (exit 2) before any
// work, for the check and its plan alike, naming the largest count.
func TestCheckRefusesCountsTheRuntimeCannotHost(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"check", "--threads", "65536", "--budget", "5s", "-o", dir + "/x.json"},
		{"check", "--threads", "2,20000", "--plan"},
	} {
		code, stdout, stderr := execLine(args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, stderr)
		}
		if stdout != "" {
			t.Errorf("%v: printed %q, want nothing on stdout", args, stdout)
		}
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], "at most ") || !strings.Contains(lines[0], "OS threads") {
			t.Errorf("%v: stderr %q, want one line naming the limit and the largest count", args, stderr)
		}
	}
	// A simulated machine starts no thread: its counts are not refused.
	code, _, stderr := execLine("check", "--synthetic", "pack:2 core:2 pu:1", "--threads", "20000", "--plan")
	if code != 0 {
		t.Errorf("--plan of a synthetic machine at 20000 threads: exit %d (%s), want 0", code, stderr)
	}
}
