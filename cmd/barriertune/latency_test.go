package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/internal/osal"
)

// TestLatencyFrom: a file that is not a matrix is named as such with the
// format accepted; a matrix read says its pairs were read, not measured,
// with the right plural.
func TestLatencyFrom(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	prose := write("README.md", "# a title\n\nSome \"quoted\" prose, with commas.\n")
	_, err := run(t, "latency", "--from", prose)
	if err == nil || !strings.Contains(err.Error(), "--from "+prose+" is not a latency matrix (want plain CSV") ||
		!strings.Contains(err.Error(), "docs/model.md") || strings.Contains(err.Error(), "../shared") || strings.Contains(err.Error(), "\n") {
		t.Errorf("latency --from README.md: %v", err)
	}
	for _, c := range []struct{ csv, want string }{
		{",\n10,\n", "2 CPUs, 1 of 1 pair read from "},
		{",,\n10,,\n20,20,\n", "3 CPUs, 3 of 3 pairs read from "},
	} {
		out, err := run(t, "latency", "--from", write("m.csv", c.csv))
		if err != nil || !strings.Contains(out, c.want) || strings.Contains(out, "measured") {
			t.Errorf("%q: %v, want %q in:\n%s", c.csv, err, c.want, out)
		}
	}
	// Errors of the file itself stay as they are.
	if _, err := run(t, "latency", "--from", filepath.Join(dir, "none.csv")); err == nil || strings.Contains(err.Error(), "not a latency matrix") {
		t.Errorf("missing file: %v", err)
	}
}

// TestLatencySaveReadBack: latency -o writes the matrix (CSV, or the
// --json object for .json) and latency --from and model --latency read it
// back, as they read latency --json's output (formerly no CSV could be
// written, and --json output was refused).
func TestLatencySaveReadBack(t *testing.T) {
	allowed, err := osal.Allowed()
	if err != nil || allowed.Len() < 2 || runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two allowed CPUs and GOMAXPROCS >= 2 to ping-pong")
	}
	m := allowed.Members()[:2]
	cpus := strconv.Itoa(m[0]) + "," + strconv.Itoa(m[1])
	dir := t.TempDir()
	csv, js, printed := filepath.Join(dir, "m.csv"), filepath.Join(dir, "m.json"), filepath.Join(dir, "printed.json")
	if code, _, errOut := execLine("latency", "--cpus", cpus, "--samples", "1", "-o", csv); code != 0 {
		t.Fatalf("latency -o: exit %d: %s", code, errOut)
	}
	if code, _, errOut := execLine("latency", "--cpus", cpus, "--samples", "1", "-o", js); code != 0 {
		t.Fatalf("latency -o .json: exit %d: %s", code, errOut)
	}
	code, out, errOut := execLine("latency", "--cpus", cpus, "--samples", "1", "--json")
	if code != 0 {
		t.Fatalf("latency --json: exit %d: %s", code, errOut)
	}
	os.WriteFile(printed, []byte(out), 0o644)
	for _, p := range []string{csv, js, printed} {
		code, out, errOut := execLine("latency", "--from", p)
		if code != 0 || !strings.Contains(out, "1 of ") || !strings.Contains(out, "read from "+p) {
			t.Errorf("latency --from %s: exit %d\n%s%s", filepath.Base(p), code, out, errOut)
		}
		code, out, errOut = execLine("model", "--latency", p, "--threads", "2", "--cpus", cpus)
		if code != 0 || !strings.Contains(out, "predicted") {
			t.Errorf("model --latency %s: exit %d\n%s%s", filepath.Base(p), code, out, errOut)
		}
	}
	// A missing directory is refused.
	if code, _, errOut := execLine("latency", "--cpus", cpus, "--samples", "1", "-o", filepath.Join(dir, "no", "m.csv")); code == 0 || !strings.Contains(errOut, "does not exist") {
		t.Errorf("latency -o into a missing directory: exit %d: %s", code, errOut)
	}
}
