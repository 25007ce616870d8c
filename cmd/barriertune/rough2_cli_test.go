package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/barriertune/barriertune/internal/osal"
)

// Issue 26: every rough edge a new user hit, round 2. One test per class:
// refusals, exit codes, claims without a measurement, help text that runs.

// exportTestdata is a complete results file of an 8-CPU machine.
const exportTestdata = "../../internal/export/testdata/results.json"

// copyFile copies src into dir and returns the copy's path.
func copyFile(t *testing.T, src, dir string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// execLine runs the CLI as main does and returns the exit code, stdout
// and stderr.
func execLine(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := execute(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

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

// TestPingPongDefaultCPUs: bench --pingpong without --cpus measures
// between the first two allowed CPUs (it was a usage error).
func TestPingPongDefaultCPUs(t *testing.T) {
	allowed, err := osal.Allowed()
	if err != nil || allowed.Len() < 2 || runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two allowed CPUs and GOMAXPROCS >= 2 to ping-pong")
	}
	m := allowed.Members()
	code, out, errOut := execLine("bench", "--pingpong", "--samples", "2", "--sample-time", "20us", "-q")
	want := "CPU " + strconv.Itoa(m[0]) + " <-> CPU " + strconv.Itoa(m[1])
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("bench --pingpong: exit %d, want %q in:\n%s%s", code, want, out, errOut)
	}
}

// TestNoClaimWithoutMeasurement: a count not measured says so and shows
// no time (issue 26: kv printed measured_threads=8 median_ns=0.0, omp-env
// "0.0 ns/episode" and "measured unpinned", show --json "median_ns": 0);
// show says what barriers.Auto builds apart from what was measured.
func TestNoClaimWithoutMeasurement(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	// 12 threads on the file's 8 CPUs: not measured, 16's algorithm
	// round-robin.
	code, out, errOut := execLine("export", "--format", "kv", "--threads", "12", exportTestdata)
	if code != 0 || strings.Contains(out, "median_ns") || !strings.Contains(out, "measured_threads=16") || !strings.Contains(out, "rule=oversubscribed") {
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
	if code != 0 || !strings.Contains(out, "barriers.Auto builds mcs, policy auto\n") || !strings.Contains(out, "measured: mcs with policy spin, 61.7 ns/episode") {
		t.Errorf("show --threads 2: exit %d\n%s", code, out)
	}
	code, out, _ = execLine("show", "--threads", "12", exportTestdata)
	if code != 0 || strings.Contains(out, "ns/episode") || !strings.Contains(out, "measured: nothing for 12 threads") {
		t.Errorf("show --threads 12: exit %d\n%s", code, out)
	}
}

// TestLookupNotices: an explicitly set $BARRIERTUNE_RESULTS that cannot be
// used, and a per-user file that hides a site's file, are said once on
// stderr (they were only a "skipped" clause, or nothing).
func TestLookupNotices(t *testing.T) {
	cfg, site := t.TempDir(), t.TempDir()
	// The fixture is another machine's: forced, it is used.
	t.Setenv("BARRIERTUNE_FORCE", "1")
	for _, d := range []string{filepath.Join(cfg, "barriertune"), filepath.Join(site, "barriertune")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(exportTestdata)
		if err := os.WriteFile(filepath.Join(d, "results.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("XDG_CONFIG_DIRS", site)
	t.Setenv("BARRIERTUNE_RESULTS", filepath.Join(cfg, "typo.json"))
	for _, args := range [][]string{{"show"}, {"export", "--format", "kv"}} {
		code, _, errOut := execLine(args...)
		if code != 0 || strings.Count(errOut, "$BARRIERTUNE_RESULTS="+filepath.Join(cfg, "typo.json")+" is not used") != 1 ||
			strings.Count(errOut, "hides "+filepath.Join(site, "barriertune", "results.json")) != 1 {
			t.Errorf("%q: exit %d, stderr:\n%s", args, code, errOut)
		}
		code, _, errOut = execLine(append(args, "-q")...)
		if code != 0 || errOut != "" {
			t.Errorf("%q -q: exit %d, stderr:\n%s", args, code, errOut)
		}
	}
}

// TestLatencySaveReadBack: latency -o writes the matrix (CSV, or the
// --json object for .json) and latency --from and model --latency read it
// back, as they read latency --json's output (issue 26: no CSV could be
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

// TestHelpTextRuns: every path an example names (an input, not an output)
// exists from the repository root, where the README's commands run, and
// sets' example runs there (issue 26: it named testdata/paper-example3.json,
// which exists only in internal/configsets); no help names ../shared, a
// path beside the repository, for a format docs/ describes; the help says
// each default once.
func TestHelpTextRuns(t *testing.T) {
	root := filepath.Join("..", "..")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		help := c.Long + c.Example + c.LocalFlags().FlagUsages()
		if strings.Contains(help, "../shared") {
			t.Errorf("%s: the help names ../shared", c.CommandPath())
		}
		for _, line := range strings.Split(c.Example, "\n") {
			fields := strings.Fields(line)
			for i, f := range fields {
				if i > 0 && (fields[i-1] == "-o" || fields[i-1] == "--output" || fields[i-1] == "--plot" || fields[i-1] == ">") {
					continue
				}
				ext := filepath.Ext(f)
				if !strings.Contains(f, "/") || filepath.IsAbs(f) || strings.HasPrefix(f, "~") || (ext != ".json" && ext != ".xml" && ext != ".csv") {
					continue
				}
				if _, err := os.Stat(filepath.Join(root, f)); err != nil {
					t.Errorf("%s: example %q names %s, which is not in the repository", c.CommandPath(), strings.TrimSpace(line), f)
				}
			}
		}
	}
	walk(newRootCmd())
	t.Chdir(root)
	if code, out, errOut := execLine("sets", "--topology", "internal/configsets/testdata/paper-example3.json", "--method", "paper"); code != 0 || out == "" {
		t.Errorf("sets' example from the repository root: exit %d: %s", code, errOut)
	}
	// bench --policy's default was said twice ("(default: ...)" and cobra's
	// `(default "auto")`).
	var b bytes.Buffer
	cmd := newRootCmd()
	cmd.SetOut(&b)
	cmd.SetArgs([]string{"bench", "--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `(default "auto")`) || strings.Contains(b.String(), "park at once") {
		t.Errorf("bench --help says the policy default twice, or calls auto 'park at once':\n%s", b.String())
	}
}

// TestPlotLayout: the legend has a column of its own beside the data (it
// was drawn over the data), and bench --plot says where it wrote.
func TestPlotLayout(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	svg := filepath.Join(dir, "p.svg")
	if code, _, errOut := execLine("plot", "-o", svg, exportTestdata); code != 0 {
		t.Fatalf("plot: exit %d: %s", code, errOut)
	}
	data, _ := os.ReadFile(svg)
	// 20 cm of plot (566.93 pt), then the legend's column.
	var w float64
	var err error
	if i := bytes.Index(data, []byte(`width="`)); i < 0 {
		t.Fatalf("no width in:\n%.300s", data)
	} else if w, err = strconv.ParseFloat(strings.SplitN(string(data[i+len(`width="`):]), "pt", 2)[0], 64); err != nil || w < 600 {
		t.Errorf("plot width %.1f pt (%v): no column for the legend", w, err)
	}
	allowed, err := osal.Allowed()
	if err != nil || allowed.Len() < 2 {
		return
	}
	png := filepath.Join(dir, "b.png")
	code, _, errOut := execLine("bench", "--threads", "2", "--algorithm", "central", "--samples", "2", "--sample-time", "20us", "--plot", png)
	if code != 0 || !strings.Contains(errOut, "plot written to "+png) {
		t.Errorf("bench --plot: exit %d, stderr %s", code, errOut)
	}
}

// TestPlanNamesWhatTheRunAdds: --plan's estimate said 1.8 s for a run of
// 5-7 s; it now bounds what follows the rounds (extras_s) and says that a
// live run's first round sets the pace.
func TestPlanNamesWhatTheRunAdds(t *testing.T) {
	code, out, errOut := execLine("check", "--plan", "--budget", "10s", "--synthetic", "pack:1 core:2 pu:2")
	if code != 0 || !strings.Contains(out, "then at most ") || !strings.Contains(out, "its first round sets the pace") {
		t.Errorf("check --plan: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = execLine("check", "--plan", "--json", "--budget", "10s", "--synthetic", "pack:1 core:2 pu:2")
	if code != 0 || !strings.Contains(out, `"extras_s": `) || strings.Contains(out, `"extras_s": 0,`) {
		t.Errorf("check --plan --json: exit %d, no extras_s:\n%.600s", code, out)
	}
}
