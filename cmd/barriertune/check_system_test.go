//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
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
