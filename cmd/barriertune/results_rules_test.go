package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/store"
	"github.com/barriertune/barriertune/results"
)

// TestCheckKeepsAGoodFile: a run that measures nothing fails and leaves
// the complete file alone; a less complete run goes to FILE.partial and
// says so.
func TestCheckKeepsAGoodFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	if _, err := run(t, "check", "--threads", "2", "--algorithms", "central", "--sample-time", "20us", "--budget", "5s", "-o", path); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = run(t, "check", "--threads", "2", "--algorithms", "central", "--budget", "1ns", "-o", path)
	if err == nil || exitCode(err) == 0 || !strings.Contains(err.Error(), "nothing was measured") || !strings.Contains(err.Error(), "unchanged") {
		t.Errorf("1ns budget: exit %d, %v", exitCode(err), err)
	}
	if now, _ := os.ReadFile(path); string(now) != string(good) {
		t.Error("a run that measured nothing changed the complete file")
	}
	if _, err := os.Stat(path + ".partial"); err == nil {
		t.Error("a run that measured nothing wrote a .partial file")
	}
	out, err := run(t, "check", "--threads", "3", "--algorithms", "central", "--sample-time", "20us", "--budget", "5s", "-o", path)
	// On a machine busy now and quiet before, the run goes beside the file
	// for that reason first (TestBusyCheck).
	beside, why := path+".partial", "keeps its complete results"
	if f, err := results.Read(path); err == nil && !f.Busy() && strings.Contains(out, "BUSY:") {
		beside, why = path+store.BusySuffix, "keeps its results, measured on a quiet machine"
	}
	if err != nil || !strings.Contains(out, "results written to "+beside) || !strings.Contains(out, why) {
		t.Errorf("less complete run: %v\n%s", err, out)
	}
	if now, _ := os.ReadFile(path); string(now) != string(good) {
		t.Error("a less complete run replaced the complete file")
	}
}
