package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/store"
)

// TestCheckDoesNotCallANewFileUnchanged: a check that measured nothing
// says an existing file is unchanged, and says of a file that never
// existed that nothing was written.
func TestCheckDoesNotCallANewFileUnchanged(t *testing.T) {
	t.Setenv("BARRIERTUNE_RESULTS", "")
	dir := t.TempDir()
	fresh := filepath.Join(dir, "new.json")
	code, _, errOut := execLine("check", "--budget", "1ms", "-o", fresh)
	if code == 0 || strings.Contains(errOut, "unchanged") || !strings.Contains(errOut, "no results file was written ("+fresh+" does not exist)") {
		t.Errorf("--budget 1ms -o new.json: exit %d, %q; want a failure saying no file was written, not \"unchanged\"", code, errOut)
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Errorf("%s was written", fresh)
	}
	old := filepath.Join(dir, "old.json")
	if err := os.WriteFile(old, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := execLine("check", "--budget", "1ms", "-o", old); code == 0 || !strings.Contains(errOut, old+" is unchanged") {
		t.Errorf("--budget 1ms -o old.json: exit %d, %q; want it called unchanged", code, errOut)
	}
}

// TestOutputInAVirtualFileSystem: /proc exists and takes no files; the
// check says so rather than "no such file or directory".
func TestOutputInAVirtualFileSystem(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("no /proc mounted")
	}
	code, _, errOut := execLine("check", "-o", "/proc/x.json")
	if code == 0 || strings.Contains(errOut, "no such file or directory") || !strings.Contains(errOut, "takes no new files") {
		t.Errorf("check -o /proc/x.json: exit %d, %q; want a refusal saying /proc takes no files", code, errOut)
	}
}

// TestExportWarnsOfAnotherMachinesFile: export and plot warn, as show
// does, when the file given is another machine's; a foreign or truncated
// $BARRIERTUNE_RESULTS is warned of and the output names the file used.
func TestExportWarnsOfAnotherMachinesFile(t *testing.T) {
	f := exportFixture(t)
	f.Machine.CPU.Name = "Another CPU, not this one"
	other := filepath.Join(t.TempDir(), "other.json")
	if err := store.Write(other, f); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"show", other},
		{"export", "--format", "c-barrier", other},
		{"export", "--format", "env", other},
		{"plot", "-o", filepath.Join(t.TempDir(), "p.svg"), other},
	} {
		code, _, errOut := execLine(args...)
		if code != 0 || !strings.Contains(errOut, "warning: these results are from another machine") {
			t.Errorf("%v: exit %d, stderr %q; want the other-machine warning", args, code, errOut)
		}
	}

	// A truncated $BARRIERTUNE_RESULTS: warned of, and the export names
	// the file it used instead.
	user := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "barriertune", "results.json")
	if err := os.MkdirAll(filepath.Dir(user), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, data, 0o644); err != nil {
		t.Fatal(err)
	}
	trunc := filepath.Join(t.TempDir(), "trunc.json")
	if err := os.WriteFile(trunc, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BARRIERTUNE_RESULTS", trunc)
	t.Setenv("BARRIERTUNE_FORCE", "1") // the per-user file is the fixture's machine's
	for _, format := range []string{"c-barrier", "env"} {
		code, out, errOut := execLine("export", "--format", format)
		if code != 0 {
			t.Fatalf("export --format %s with a truncated $BARRIERTUNE_RESULTS: exit %d, %s", format, code, errOut)
		}
		if !strings.Contains(errOut, trunc) || !strings.Contains(errOut, "not used") {
			t.Errorf("export --format %s: stderr %q does not warn of %s", format, errOut, trunc)
		}
		if !strings.Contains(out, "results file: "+user) {
			t.Errorf("export --format %s: the output does not name the file used, %s:\n%.400s", format, user, out)
		}
	}
}
