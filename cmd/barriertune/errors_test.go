package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/internal/osal"
)

// TestRefusals: what would surprise is refused or left alone.
func TestRefusals(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("BARRIERTUNE_RESULTS", "")
	dir := t.TempDir()

	// check --resume on a complete file: said, exit 0, the file untouched
	// (it was rewritten with a new time and its cuts lost).
	p := copyFile(t, exportTestdata, dir)
	before, _ := os.ReadFile(p)
	code, out, errOut := execLine("check", "--resume", p, "--budget", "1s")
	after, _ := os.ReadFile(p)
	if code != 0 || !strings.Contains(out, "is complete") || !strings.Contains(out, "unchanged") || !bytes.Equal(before, after) {
		t.Errorf("check --resume on a complete file: exit %d, changed %v\nstdout: %s\nstderr: %s", code, !bytes.Equal(before, after), out, errOut)
	}

	// -o with a missing parent directory: refused, nothing created.
	typo := filepath.Join(dir, "typo", "dir", "r.json")
	code, _, errOut = execLine("check", "-o", typo, "--budget", "1s")
	if code == 0 || !strings.Contains(errOut, "does not exist") {
		t.Errorf("check -o %s: exit %d, stderr %s", typo, code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "typo")); err == nil {
		t.Errorf("check -o created %s", filepath.Join(dir, "typo"))
	}

	// A directory is named as one, not as its mode "d---------".
	for _, args := range [][]string{{"check", "-o", dir, "--budget", "1s"}, {"show", dir}, {"latency", "--from", dir}} {
		code, _, errOut = execLine(args...)
		if code == 0 || !strings.Contains(errOut, "a directory") || strings.Contains(errOut, "d---------") {
			t.Errorf("%q: exit %d, stderr %s", args, code, errOut)
		}
	}
}

// TestSameErrorSameCode: a CPU outside the allowed set is a usage error
// (exit 2) for latency as for bench; --threads 0 is one everywhere; a
// command group without its subcommand is one.
func TestSameErrorSameCode(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	allowed, err := osal.Allowed()
	if err != nil {
		t.Skip(err)
	}
	members := allowed.Members()
	outside := members[len(members)-1] + 1
	list := "0-" + strconv.Itoa(outside)
	for _, args := range [][]string{
		{"latency", "--cpus", list, "--samples", "1"},
		{"bench", "--cpus", strconv.Itoa(members[0]) + "," + strconv.Itoa(outside), "--samples", "1"},
		{"bench", "--pingpong", "--cpus", strconv.Itoa(members[0]) + "," + strconv.Itoa(outside), "--samples", "1"},
		{"show", "--threads", "0", exportTestdata},
		{"export", "--format", "kv", "--threads", "0", exportTestdata},
		{"show", "--threads", "-1", exportTestdata},
		{"completion"},
		{"show", "a", "b"},
	} {
		code, _, errOut := execLine(args...)
		if code != exitUsage || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, want 2; stderr: %s", args, code, errOut)
		}
		if args[0] == "show" && args[1] == "--threads" && strings.Contains(errOut, "--allowed") {
			t.Errorf("%q names an unrelated flag: %s", args, errOut)
		}
		if args[0] == "show" && args[1] == "a" && (strings.Contains(errOut, "arg(s)") || !strings.Contains(errOut, "one results FILE")) {
			t.Errorf("%q: cobra's raw arity message: %s", args, errOut)
		}
	}
}
