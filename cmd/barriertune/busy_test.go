package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/store"
	"github.com/barriertune/barriertune/cmd/internal/sysload"
	"github.com/barriertune/barriertune/internal/cpuhog"
	"github.com/barriertune/barriertune/results"
)

// TestBusyCheck: a check beside CPU-bound processes says the machine is
// busy before it measures and in its table, records it in the file, and
// leaves a file written on a quiet machine byte for byte (its run goes
// beside it, to FILE.busy, and the output says so); show says busy too.
// The quiet files: one recording a quiet check, one from before the load
// was recorded.
func TestBusyCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("measures beside CPU-bound processes for a few seconds; skipped with -short")
	}
	if _, err := (sysload.Proc{}).Read(); err != nil {
		t.Skip("the system does not say how busy it is:", err)
	}
	dir := t.TempDir()
	old := copyFile(t, exportTestdata, dir)
	f, err := results.Read(old)
	if err != nil {
		t.Fatal(err)
	}
	f.Load = &results.Load{Readings: 50, Seconds: 5, LoadAvgStart: 0.1, LoadAvgEnd: 0.1}
	recorded := filepath.Join(dir, "quiet.json")
	if err := store.Write(recorded, f); err != nil {
		t.Fatal(err)
	}
	kill := cpuhog.Start(t, runtime.NumCPU(), 40*time.Second)
	time.Sleep(50 * time.Millisecond) // let them spin
	defer kill()
	for _, path := range []string{old, recorded} {
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		code, out, errOut := execLine("check", "-o", path, "--threads", "2", "--algorithms", "central,dissemination", "--sample-time", "100us", "--budget", "6s")
		after, _ := os.ReadFile(path)
		if code != 0 {
			t.Fatalf("check: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
		}
		if !strings.Contains(errOut, "note: the machine is busy now (") {
			t.Errorf("check did not say the machine was busy before measuring:\n%s", errOut)
		}
		if !strings.Contains(out, "BUSY: the machine was busy while the check measured") {
			t.Errorf("the table does not say busy:\n%s", out)
		}
		if !strings.Contains(out, path+" keeps its results, measured on a quiet machine; this run, measured on a busy one, went beside it to "+path+".busy") {
			t.Errorf("the output does not say where the busy run went:\n%s", out)
		}
		if !bytes.Equal(before, after) {
			t.Errorf("%s changed under a busy check", path)
		}
		b, err := results.Read(path + ".busy")
		if err != nil || !b.Busy() || b.Load.Readings < 2 || b.Load.OtherRunnableMax < 1 {
			t.Fatalf("the busy run's file: %v, load %+v", err, b.Load)
		}
		shown, err := run(t, "show", path+".busy")
		if err != nil || !strings.Contains(shown, "BUSY: the machine was busy") {
			t.Errorf("show of the busy file: %v\n%s", err, shown)
		}
	}
	// --system says so before it measures, naming the node; the check is
	// cut short by its context (the message comes first).
	sys := filepath.Join(dir, "etc", "results.json")
	if err := os.Mkdir(filepath.Dir(sys), 0o755); err != nil {
		t.Fatal(err)
	}
	o := &checkOptions{global: &globalOptions{}, budget: time.Second, sampleTime: 100 * time.Microsecond, setsLimit: 1, threads: "2", algorithms: []string{"central"},
		system: systemFlag{on: true, path: sys, euid: func() int { return 0 }}}
	if err := o.system.apply(o); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	err = runCheck(ctx, o, &out, &errOut)
	if !strings.Contains(errOut.String(), "note: this node is busy now (") {
		t.Errorf("check --system on a busy node did not say so before measuring (%v):\n%s", err, errOut.String())
	}
}
