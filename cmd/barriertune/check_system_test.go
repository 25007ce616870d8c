//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/check"
	"github.com/barriertune/barriertune/cmd/internal/store"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

// TestCheckSystemMakesItsDirectory: check --system on a root where the
// system directory does not exist makes it (0755 whatever the umask) and
// writes the file there; no error names an -o nobody gave.
func TestCheckSystemMakesItsDirectory(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv(results.ResultsEnv, "")
	path := filepath.Join(t.TempDir(), "etc", "barriertune", "results.json")
	opts := &checkOptions{threads: "2", algorithms: []string{"central", "dissemination"}, budget: 5 * time.Second,
		sampleTime: check.DefaultSampleTime, setsLimit: 1, system: systemFlag{on: true, path: path, euid: func() int { return 0 }}}
	if err := opts.system.apply(opts); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	old := syscall.Umask(0o077)
	err := runCheck(context.Background(), opts, &out, &errOut)
	syscall.Umask(old)
	if err != nil {
		t.Fatalf("check --system: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "results written to "+path+"\n") || strings.Contains(out.String()+errOut.String(), "-o") {
		t.Errorf("check --system said:\n%s\n%s", out.String(), errOut.String())
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || fi.Mode() != os.ModeDir|0o755 {
		t.Errorf("%s: %v, %v; want a directory of mode 0755", filepath.Dir(path), fi.Mode(), err)
	}
	if f, err := results.Read(path); err != nil || f.Partial || f.Lookup(2) == nil {
		t.Errorf("%s: %v", path, err)
	}
	// The locks the check held (its own, the directory's) are gone.
	if entries, err := os.ReadDir(filepath.Dir(path)); err != nil || len(entries) != 1 {
		t.Errorf("%s holds %v (%v); want results.json alone", filepath.Dir(path), entries, err)
	}
}

// TestTwoChecksOneFile: two checks of one -o file at once, as processes:
// the second refuses at once, naming the first one's pid, and the first
// writes the file and leaves no lock behind.
func TestTwoChecksOneFile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two checks as subprocesses for seconds; skipped with -short")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "same.json")
	args := []string{"check", "-q", "-o", out, "--threads", "2", "--algorithms", "central", "--sample-time", "1ms", "--budget", "4s"}
	first := exec.Command(exe, args...)
	first.Env = append(os.Environ(), childEnv+"=1")
	var firstErr bytes.Buffer
	first.Stderr = &firstErr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, store.CheckLockName("same.json"))
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		if data, err := os.ReadFile(lock); err == nil && strings.TrimSpace(string(data)) == fmt.Sprint(first.Process.Pid) {
			break
		}
		if time.Since(start) > 10*time.Second {
			first.Process.Kill()
			first.Wait()
			t.Fatalf("the first check took no lock at %s in 10 s:\n%s", lock, firstErr.String())
		}
	}
	second := runCLI(t, nil, args...)
	want := fmt.Sprintf("another barriertune check (pid %d) is writing %s now", first.Process.Pid, out)
	if second.code != exitFailure || !strings.Contains(second.stderr, want) || strings.Count(second.stderr, "\n") != 1 {
		t.Errorf("second check: exit %d, stderr %q; want exit %d and %q", second.code, second.stderr, exitFailure, want)
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("first check: %v\n%s", err, firstErr.String())
	}
	if f, err := results.Read(out); err != nil || f.Lookup(2) == nil {
		t.Errorf("%s: %v", out, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%s holds %v; want same.json alone (no lock left)", dir, entries)
	}
}

// TestCheckIntoSiteDirectory: `check -o DIR/` writes this machine's file
// under its machine's name into a site directory that holds another
// machine's file and a FIFO; show finds it there through $XDG_CONFIG_DIRS
// and says which file it used and why the others were not.
func TestCheckIntoSiteDirectory(t *testing.T) {
	live, err := hwtree.FromSysfs("/")
	if err != nil {
		t.Skip(err)
	}
	site := t.TempDir()
	dir := filepath.Join(site, "barriertune")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_DIRS", "relative:"+site)
	t.Setenv(results.ResultsEnv, "")
	mine, err := results.Read(recordedFile(t, live, check.WholeTopology(live), []int{2}))
	if err != nil {
		t.Fatal(err)
	}
	foreign := *mine
	foreign.Machine.CPU.Name = "Imaginary CPU 9000"
	if err := store.Write(filepath.Join(dir, "a.json"), &foreign); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "0.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := execLine("check", "-o", dir+"/", "--threads", "2", "--algorithms", "central,dissemination", "--budget", "5s")
	if code != 0 {
		t.Fatalf("check -o %s/: exit %d\n%s", dir, code, errOut)
	}
	written := filepath.Join(dir, store.FileName(mine.Machine))
	if !strings.Contains(out, "results written to "+written+"\n") {
		t.Fatalf("check -o %s/ wrote elsewhere; want %s:\n%s", dir, written, out)
	}
	for _, args := range [][]string{{"show"}, {"show", dir + "/"}} {
		code, out, errOut = execLine(args...)
		if code != 0 || !strings.Contains(strings.Join(strings.Fields(out), " "), "file: "+written) ||
			!strings.Contains(out, "0.json") || !strings.Contains(out, "a.json") {
			t.Errorf("%q: exit %d\n%s\n%s", args, code, out, errOut)
		}
	}
	// A node that matches none: every file named, with its reason.
	if err := os.Remove(written); err != nil {
		t.Fatal(err)
	}
	_, err = run(t, "show")
	if exitCode(err) != exitFailure || !strings.Contains(fmt.Sprint(err), "a.json: recorded on another machine") || !strings.Contains(fmt.Sprint(err), "0.json: results file") {
		t.Errorf("show with no file of this machine: exit %d, %v", exitCode(err), err)
	}
}
