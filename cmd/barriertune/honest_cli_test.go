package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/store"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/results"
)

// One test per class of the third round of a new user's rough edges:
// output that says only what is true, corrupt files refused, every
// malformed flag value a usage error.

// TestPlanFloorsArePairs: check --plan names each floor's two CPUs as a
// pair, as show does ("Package 0,8"), never as a CPU range.
func TestPlanFloorsArePairs(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("GOMAXPROCS is 1: the plan measures no floor")
	}
	out, err := run(t, "check", "--plan", "--synthetic", "pack:2 l3:2 core:4 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "floors first:") {
			line = l
		}
	}
	if line != "floors first: Core 0,1, L3Cache 0,2, Package 0,8, Machine 0,16" {
		t.Errorf("floors line %q", line)
	}
}

// TestCorruptTimeRefused: show and export refuse a file with a negative
// time, naming the field; exit 1.
func TestCorruptTimeRefused(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("BARRIERTUNE_RESULTS", "")
	data, err := os.ReadFile(exportTestdata)
	if err != nil {
		t.Fatal(err)
	}
	bad := regexp.MustCompile(`"median_ns": [0-9.]+`).ReplaceAllString(string(data), `"median_ns": -5`)
	p := filepath.Join(t.TempDir(), "neg.json")
	if err := os.WriteFile(p, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"show", p}, {"show", p, "--threads", "2"}, {"export", "--format", "kv", p}, {"plot", "-o", filepath.Join(t.TempDir(), "x.svg"), p}} {
		code, _, errOut := execLine(args...)
		if code != 1 || !strings.Contains(errOut, "median_ns is -5") || !strings.Contains(errOut, "corrupt") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// TestMalformedFlagValuesExit2: a flag value that cannot be read is a
// usage error (exit 2), whichever command and parser read it.
func TestMalformedFlagValuesExit2(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("BARRIERTUNE_RESULTS", "")
	p := copyFile(t, exportTestdata, t.TempDir())
	for _, args := range [][]string{
		{"show", p, "--threads", "2", "--allowed", ""},
		{"show", p, "--allowed", ""},
		{"show", p, "--allowed", "x"},
		{"export", "--format", "kv", p, "--allowed", ""},
		{"plot", "-o", filepath.Join(t.TempDir(), "x.svg"), p, "--allowed", "0-"},
		{"topo", "--synthetic", "pack:x"},
		{"topo", "--synthetic", ""},
		{"sets", "--synthetic", "pack:x", "--threads", "2"},
		{"check", "--plan", "--synthetic", "pu:0"},
		{"topo", "--xml", ""},
		{"bench", "--cpus", "a,b"},
		{"bench", "--skew", "x"},
	} {
		code, _, errOut := execLine(args...)
		if code != 2 {
			t.Errorf("%q: exit %d, want 2 (malformed flag value); stderr %q", args, code, errOut)
		}
	}
}

// TestWordsForUsers: what the commands print names things a user can see:
// no source-tree path, no other command's name, no doubled program name.
func TestWordsForUsers(t *testing.T) {
	dir := t.TempDir()
	m := filepath.Join(dir, "m.csv")
	if err := os.WriteFile(m, []byte(",\n150,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"model", "--latency", m, "--threads", "2"},
		{"check", "--simulate", "--synthetic", "core:2 pu:1", "-o", filepath.Join(dir, "s.json")},
		{"check", "--plan", "--synthetic", "core:2 pu:1", "-v"},
	} {
		code, out, errOut := execLine(args...)
		if code != 0 || strings.Contains(out+errOut, "internal/") || strings.Contains(out+errOut, "testdata") {
			t.Errorf("%q: exit %d; names a source path:\n%s%s", args, code, out, errOut)
		}
	}
	code, _, errOut := execLine("completion")
	if code != 2 || strings.Contains(errOut, "barriertune: barriertune") || !strings.Contains(errOut, "bash") {
		t.Errorf("completion without a shell: exit %d, stderr %q", code, errOut)
	}
}

// TestLatencyProgressNamesLatency: latency's progress lines (-v) say
// latency and count the pairs, not bench.
func TestLatencyProgressNamesLatency(t *testing.T) {
	allowed, err := osal.Allowed()
	if err != nil || allowed.Len() < 2 || runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two allowed CPUs and GOMAXPROCS >= 2 to ping-pong")
	}
	m := allowed.Members()[:2]
	code, _, errOut := execLine("latency", "-v", "--cpus", strconv.Itoa(m[0])+","+strconv.Itoa(m[1]), "--samples", "1")
	if code != 0 || !strings.Contains(errOut, "latency: 1/1 pair") || strings.Contains(errOut, "bench") {
		t.Errorf("latency -v: exit %d, stderr %q", code, errOut)
	}
}

// TestShowInsideFewerCPUs: show --allowed with fewer CPUs than a count's
// threads prints no tie footnote for a table without margins, and its
// robust column offers no spinning algorithm for a count that has more
// threads than the allowed CPUs.
func TestShowInsideFewerCPUs(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("BARRIERTUNE_RESULTS", "")
	p := filepath.Join(t.TempDir(), "s.json")
	if code, _, errOut := execLine("check", "--simulate", "--synthetic", "core:2 pu:1", "-o", p, "-q"); code != 0 {
		t.Fatal(errOut)
	}
	code, out, errOut := execLine("show", p, "--allowed", "0")
	if code != 0 {
		t.Fatal(errOut)
	}
	if strings.Contains(out, "\ntie ") {
		t.Errorf("a tie footnote for a table with no margin:\n%s", out)
	}
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] == "threads" || strings.Trim(f[0], "0123456789") != "" {
			continue
		}
		rows++
		robust := l[strings.LastIndex(l, "  ")+2:]
		if name, _, _ := strings.Cut(robust, " "); name != f[1] || !strings.Contains(l, "round-robin over 0 ") {
			t.Errorf("%s threads on 1 CPU: robust %q, best %s (a choice for a CPU per thread)", f[0], robust, f[1])
		}
	}
	if rows != 3 {
		t.Errorf("%d rows:\n%s", rows, out)
	}
}

// TestHybridNamesWhole: show and the --simulate listing never cut a
// hybrid's composition: a long name is a key in the table, spelled out in
// full under it; the listing's columns line up.
func TestHybridNamesWhole(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("BARRIERTUNE_RESULTS", "")
	p := filepath.Join(t.TempDir(), "s.json")
	code, out, errOut := execLine("check", "--simulate", "--synthetic", "pack:2 l3:2 core:4 pu:2", "-o", p)
	if code != 0 {
		t.Fatal(errOut)
	}
	col := -1
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, " ns predicted"); i >= 0 {
			if col >= 0 && i != col {
				t.Errorf("listing not aligned (%d, %d):\n%s", col, i, out)
				break
			}
			col = i
		}
	}
	f, err := results.Read(p)
	if err != nil {
		t.Fatal(err)
	}
	long := ""
	for _, th := range f.Threads {
		if d := th.Best.Describe(); len(d) > 32 {
			long = d
		}
	}
	if long == "" {
		t.Fatal("no winner with a long name to show")
	}
	code, out, errOut = execLine("show", p)
	if code != 0 || strings.Contains(out, "bytes)") || !strings.Contains(out, "= "+long) {
		t.Errorf("show: exit %d, %s cut or not spelled out:\n%s%s", code, long, out, errOut)
	}
}

// TestExportsNeverClaimZero: no export prints a time of 0 for a choice
// that was not measured (the C header's median_ns is NAN there), and
// every format names its results file with -v, kv (which has no comment
// syntax) on stderr.
func TestExportsNeverClaimZero(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("BARRIERTUNE_RESULTS", "")
	code, out, errOut := execLine("export", "--format", "c-header", exportTestdata)
	if code != 0 {
		t.Fatal(errOut)
	}
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "\t{") {
			continue
		}
		rows++
		measured := strings.Contains(l, `"measured"`)
		if strings.HasSuffix(l, " 0.0},") || measured == strings.HasSuffix(l, " NAN},") {
			t.Errorf("c-header row %q: a time of 0, or NAN where measured", l)
		}
	}
	if rows < 3 || !strings.Contains(out, "NAN") {
		t.Errorf("%d rows, none unmeasured:\n%s", rows, out)
	}
	for _, format := range []string{"kv", "env", "omp-env", "c-header"} {
		code, out, errOut := execLine("export", "--format", format, "-v", exportTestdata)
		if code != 0 || !strings.Contains(out+errOut, "results file: "+exportTestdata) {
			t.Errorf("export --format %s -v: exit %d, names no results file:\n%s\n%s", format, code, out, errOut)
		}
	}
}

// exportFixture is the export tests' results file, parsed, with this
// process's own files out of the way (an empty per-user directory, no
// $BARRIERTUNE_RESULTS).
func exportFixture(t *testing.T) *results.File {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("BARRIERTUNE_RESULTS", "")
	data, err := os.ReadFile(exportTestdata)
	if err != nil {
		t.Fatal(err)
	}
	f, err := results.Parse(data, exportTestdata)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestShowSaysHowCondRan: where the table names cond or channel, a line
// says whether they ran on pinned, locked OS threads (a kernel wake-up)
// or as goroutines (as a Go program meets sync.Cond), per thread count.
func TestShowSaysHowCondRan(t *testing.T) {
	f := exportFixture(t)
	// Every runner-up becomes cond: pinned where each thread has a CPU.
	named := 0
	for i := range f.Threads {
		if b := f.Threads[i].Best; b != nil {
			b.RunnerUp = "cond"
			named++
		}
	}
	p := filepath.Join(t.TempDir(), "r.json")
	if err := store.Write(p, f); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := execLine("show", p)
	if code != 0 || named == 0 {
		t.Fatal(errOut)
	}
	out = strings.Join(strings.Fields(out), " ") // wrapped lines read as one
	if !strings.Contains(out, "cond and channel ran on pinned, locked OS threads at 1, 2, 4, 8 threads") || !strings.Contains(out, "as goroutines at 16 threads") {
		t.Errorf("no line says how cond ran:\n%s", out)
	}
	// A simulated 2-CPU machine whose runner-up is cond where threads
	// outnumber CPUs: inside CPU 0 the table shows no runner-up, so no
	// cond and no line.
	sim := filepath.Join(t.TempDir(), "s.json")
	if code, _, errOut := execLine("check", "--simulate", "--synthetic", "core:2 pu:1", "-o", sim, "-q"); code != 0 {
		t.Fatal(errOut)
	}
	code, out, _ = execLine("show", sim)
	if code != 0 || !strings.Contains(out, "sync.Cond") {
		t.Fatalf("no cond line for the simulated file:\n%s", out)
	}
	code, out, _ = execLine("show", sim, "--allowed", "0")
	if code != 0 || strings.Contains(out, "sync.Cond") {
		t.Errorf("a cond line under a table that shows none:\n%s", out)
	}
	// Only 16 threads, more than the 8 CPUs, names cond.
	code, out, _ = execLine("show", exportTestdata)
	out = strings.Join(strings.Fields(out), " ")
	if code != 0 || strings.Contains(out, "pinned, locked") || !strings.Contains(out, "cond and channel ran as goroutines at 16 threads") {
		t.Errorf("the cond line of a table with cond at 16 threads:\n%s", out)
	}
}

// TestPlotEverySeriesItsOwn: a plot of the 14 algorithms draws 14 series
// colours, tick labels are plain numbers, and the legend's column leaves
// room for a fallback font a fifth wider than Liberation.
func TestPlotEverySeriesItsOwn(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("BARRIERTUNE_RESULTS", "")
	dir := t.TempDir()
	p, svg := filepath.Join(dir, "s.json"), filepath.Join(dir, "p.svg")
	if code, _, errOut := execLine("check", "--simulate", "--synthetic", "pack:1 core:4 pu:2", "-o", p, "-q"); code != 0 {
		t.Fatal(errOut)
	}
	if code, _, errOut := execLine("plot", "-o", svg, p); code != 0 {
		t.Fatal(errOut)
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	if !strings.Contains(doc, "PREDICTED by the cost model, not measured") {
		t.Errorf("the plot of a simulated file does not say it is predicted")
	}
	colours := map[string]bool{}
	for _, m := range regexp.MustCompile(`stroke:(#[0-9A-Fa-f]{6})`).FindAllStringSubmatch(doc, -1) {
		colours[strings.ToUpper(m[1])] = true
	}
	for _, neutral := range []string{"#000000", "#C0C0C0", "#282828", "#505050", "#787878", "#A0A0A0"} {
		delete(colours, neutral) // axes, grid, floors
	}
	if len(colours) < 14 {
		t.Errorf("%d series colours for 14 algorithms: %v", len(colours), colours)
	}
	// A narrow range: a linear axis, whose labels read 175.00, 1250.00.
	f, err := results.Read("../../results/testdata/check-2cpu.json")
	if err != nil {
		t.Fatal(err)
	}
	lin, err := resultsPlot(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]float64{{170, 330}, {1000, 1500}, {100, 1300}} {
		for _, tk := range lin.Y.Tick.Marker.Ticks(r[0], r[1]) {
			if strings.HasSuffix(tk.Label, ".00") || strings.HasSuffix(tk.Label, "0") && strings.Contains(tk.Label, ".") {
				t.Errorf("y from %v to %v: tick %v labelled %q", r[0], r[1], tk.Value, tk.Label)
			}
		}
	}
	// The legend column: from the plot's right edge (20 cm) to the image's.
	w := regexp.MustCompile(`<svg width="([0-9.]+)pt"`).FindStringSubmatch(doc)
	longest := 0
	for _, m := range regexp.MustCompile(`(?s)font-size:12px"\s*>([^<]*)</text>`).FindAllStringSubmatch(doc, -1) {
		if l := strings.TrimSpace(m[1]); strings.HasPrefix(l, "floor") || strings.HasPrefix(l, "all-static") {
			longest = max(longest, len(l))
		}
	}
	width, _ := strconv.ParseFloat(w[1], 64)
	// Liberation Serif at 12 px averages about 5.5 pt a character; DejaVu
	// Serif about 6.6: the column must hold the longest entry in the
	// latter, after the entry's 20 pt sample of line and marker.
	if col := width - 566.93; longest == 0 || col < 20+float64(longest)*6.6 {
		t.Errorf("legend column %.0f pt for an entry of %d characters", col, longest)
	}
}

// TestReadmeInstallWorks: the README's install section leads with a
// command that works from a clone; go install ...@latest, which fails
// while the module is unpublished, is only a later note.
func TestReadmeInstallWorks(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "## Install")
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, _ := strings.Cut(section, "```\n")
	block, _, _ = strings.Cut(block, "```")
	if !ok || strings.Contains(block, "@latest") || !strings.Contains(block, "./cmd/barriertune") {
		t.Errorf("the install section's first command block:\n%s", block)
	}
}

// TestShowSaysOSThreads: where the file recorded what OS threads get above
// the allowed CPUs (os_threads, what the C exports use), show says it
// under the table; a file without says nothing of it.
func TestShowSaysOSThreads(t *testing.T) {
	f := exportFixture(t)
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.json")
	if err := store.Write(plain, f); err != nil {
		t.Fatal(err)
	}
	last := &f.Threads[len(f.Threads)-1]
	last.OSThreads = &results.Choice{Spec: results.Spec{Algorithm: "combining", Policy: "park"}, CPUs: last.Best.CPUs, Label: "oversubscribed, OS threads", MedianNs: 179286}
	with := filepath.Join(dir, "with.json")
	if err := store.Write(with, f); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := execLine("show", with)
	if code != 0 {
		t.Fatal(errOut)
	}
	want := fmt.Sprintf("on OS threads (what C, C++ and OpenMP programs run; barriertune export uses these): combining 179.3 µs at %d threads", last.Threads)
	if !strings.Contains(out, want) {
		t.Errorf("show does not say what OS threads get; want %q in:\n%s", want, out)
	}
	if code, out, _ := execLine("show", plain); code != 0 || strings.Contains(out, "on OS threads") {
		t.Errorf("a file without os_threads: exit %d, output:\n%s", code, out)
	}
}
