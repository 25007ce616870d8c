//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/export"
)

// TestExportOutputNotARegularFile: for every format, an -o that is a
// FIFO or leads to a device, and for openmpi a rules file beside it that
// is one, is refused with an error naming the path and what it is, at
// once (a FIFO once hung the export), and nothing is written: neither
// the export file nor its rules file; an -o that is a regular file is
// replaced whole.
func TestExportOutputNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	results := writeResultsWithMPI(t, filepath.Join(dir, "r.json"), map[string]any{"loop": "l", "seconds": 9, "share": "s", "implementations": []any{
		map[string]any{"name": "openmpi", "compiler": "mpicc.openmpi", "launcher": "mpirun.openmpi", "version": "Open MPI v4.1.4",
			"counts": []any{map[string]any{"ranks": 8, "default_ns": 29000, "best": "coll_tuned_barrier_algorithm=1", "best_ns": 17000, "margin_pct": 70, "test": "p", "settings": 5, "runs": 40}}},
	}})
	fifo := func(path string) {
		t.Helper()
		os.Remove(path)
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	device := func(path string) {
		t.Helper()
		os.Remove(path)
		if err := os.Symlink(os.DevNull, path); err != nil {
			t.Fatal(err)
		}
	}
	exportTo := func(args ...string) error {
		t.Helper()
		done := make(chan error, 1)
		go func() {
			_, err := run(t, append(append([]string{"export"}, args...), results)...)
			done <- err
		}()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatalf("export %v did not return: it waits on its output", args)
			return nil
		}
	}
	for _, format := range export.Formats() {
		for kind, mk := range map[string]func(string){"fifo": fifo, "character device": device} {
			out := filepath.Join(dir, format+".out")
			mk(out)
			err := exportTo("--format", format, "-o", out)
			if err == nil || !strings.Contains(err.Error(), out) || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s -o a %s: got %v, want a refusal naming %s as not a regular file", format, kind, err, out)
			}
			if _, err := os.Stat(out + export.MPIRulesSuffix); err == nil {
				t.Errorf("%s -o a %s: a rules file was written beside it", format, kind)
			}
			os.Remove(out)
		}
	}
	// The rules file beside a good -o: refused before the parameter file
	// is written.
	for kind, mk := range map[string]func(string){"fifo": fifo, "character device": device} {
		out := filepath.Join(dir, "barrier-"+strings.ReplaceAll(kind, " ", "-")+".conf")
		mk(out + export.MPIRulesSuffix)
		err := exportTo("--format", "openmpi", "-o", out)
		if err == nil || !strings.Contains(err.Error(), out+export.MPIRulesSuffix) {
			t.Errorf("rules file a %s: got %v, want a refusal naming it", kind, err)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("rules file a %s: the parameter file was written anyway", kind)
		}
	}
	// A regular file is replaced whole, its rules file with it.
	out := filepath.Join(dir, "barrier.conf")
	if err := os.WriteFile(out, []byte(strings.Repeat("old\n", 10000)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := exportTo("--format", "openmpi", "-o", out); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(out); err != nil || strings.Contains(string(b), "old") || !strings.Contains(string(b), "coll_tuned_dynamic_rules_filename = "+out+export.MPIRulesSuffix) {
		t.Errorf("the regular file was not replaced whole: %v\n%.300s", err, b)
	}
}
