//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/check"
	"github.com/barriertune/barriertune/cmd/internal/configsets"
	"github.com/barriertune/barriertune/cmd/internal/store"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/results"
)

// recordedFile writes a results file for the machine whole, recorded by a
// check on topo (part of whole, or whole itself): each count of counts
// that fits topo has every exact placement class of topo measured with
// central, mcs and dissemination at made-up medians (best: the fastest);
// larger counts are measured oversubscribed, round-robin, with cond.
// installTimeout bounds each child command of these tests.
const installTimeout = 5 * time.Second

func recordedFile(t *testing.T, topo, whole *hwtree.Topology, counts []int) string {
	t.Helper()
	f := &results.File{Schema: results.Schema, Tool: results.Tool{Name: "barriertune", Version: "test"}, Machine: check.MachineOn(topo, whole),
		Budget: "1m", Cuts: []string{}, Floor: []results.Floor{}}
	cpus := topo.CPUs()
	for _, n := range counts {
		e := results.Threads{Threads: n, Source: results.Measured, Complete: true}
		if n > len(cpus) {
			rr := make([]int, n)
			for i := range rr {
				rr[i] = cpus[i%len(cpus)]
			}
			e.Measurements = []results.Measurement{{Label: "oversubscribed", CPUs: rr, Summary: results.Summary{MedianNs: 5000 + float64(n)}, Spec: results.Spec{Algorithm: "cond", Policy: "auto"}}}
		} else {
			sets, err := configsets.Enumerate(topo, n, configsets.Exact)
			if err != nil {
				t.Fatal(err)
			}
			k := 0
			for set := range sets {
				for j, a := range []string{"central", "mcs", "dissemination"} {
					k++
					e.Measurements = append(e.Measurements, results.Measurement{Label: set.Config, Config: set.Config,
						Summary: results.Summary{MedianNs: float64(100 + (k*37+j*11+n*5)%97)},
						Spec:    results.Spec{Algorithm: a, Policy: "spin"},
						CPUs:    set.CPUs, Pinned: true})
				}
			}
		}
		b := e.Measurements[0]
		for _, m := range e.Measurements {
			if m.MedianNs < b.MedianNs {
				b = m
			}
		}
		e.Best = &results.Choice{CPUs: b.CPUs, Label: b.Label, Pinned: b.Pinned, MedianNs: b.MedianNs, Spec: results.Spec{Algorithm: b.Algorithm, Policy: b.Policy}}
		f.Threads = append(f.Threads, e)
	}
	path := filepath.Join(t.TempDir(), "results.json")
	if err := store.Write(path, f); err != nil {
		t.Fatal(err)
	}
	return path
}

// shownJSON is the part of show --threads --json the tests compare.
type shownJSON struct {
	Threads   int      `json:"threads"`
	Algorithm string   `json:"algorithm"`
	Policy    string   `json:"policy"`
	CPUs      []int    `json:"cpus"`
	MedianNs  *float64 `json:"median_ns"` // null: not measured
	Rule      string   `json:"rule"`
	Source    string   `json:"source"`
	Allowed   string   `json:"allowed"`
}

// agree checks that barriers.Tuned (t), show --threads --json and export
// --format kv make the same choice for n threads inside allowed.
func agree(t *testing.T, path string, n int, allowed string, tu barriers.Tuning) {
	t.Helper()
	args := []string{"show", path, "--threads", strconv.Itoa(n), "--json"}
	if allowed != "" {
		args = append(args, "--allowed", allowed)
	}
	js, err := run(t, args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	var sh shownJSON
	if err := json.Unmarshal([]byte(js), &sh); err != nil {
		t.Fatalf("show --json: %v\n%s", err, js)
	}
	args = []string{"export", "--format", "kv", "--threads", strconv.Itoa(n), path}
	if allowed != "" {
		args = append(args, "--allowed", allowed)
	}
	kv, err := run(t, args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	field := func(k string) string {
		for _, f := range strings.Fields(kv) {
			if key, v, ok := strings.Cut(f, "="); ok && key == k {
				return v
			}
		}
		return ""
	}
	if tu.Fallback != "" {
		t.Fatalf("%d threads: Tuned fell back: %s", n, tu.Fallback)
	}
	shownNs := 0.0
	if sh.MedianNs != nil {
		shownNs = *sh.MedianNs
		if shownNs == 0 {
			t.Errorf("%d threads: show --json median_ns 0, want null when not measured", n)
		}
	}
	if sh.Threads != n || sh.Algorithm != tu.Algorithm || sh.Policy != tu.Policy || !slices.Equal(sh.CPUs, tu.CPUs) || shownNs != tu.MedianNs || sh.Rule != tu.Rule || sh.Source != path {
		t.Errorf("%d threads: show %+v, Tuned %s %s %v %.1f %s", n, sh, tu.Algorithm, tu.Policy, tu.CPUs, tu.MedianNs, tu.Rule)
	}
	cpus := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(tu.CPUs)), ","), "[]")
	if field("pinned") == "0" {
		cpus = ""
	}
	wantNs := "" // absent when not measured (formerly it was 0.0)
	if tu.MedianNs > 0 {
		wantNs = strconv.FormatFloat(tu.MedianNs, 'f', 1, 64)
	}
	if procs, err := osal.Allowed(); err == nil && allowed == "" && !osal.AtOnce(procs).Equal(procs) {
		// GOMAXPROCS (or a CPU quota) below the allowed CPUs: Auto and
		// show select within what the process runs at once; export
		// writes for C and OpenMP programs, which GOMAXPROCS does not
		// bound and whose header reads the quota itself.
		return
	}
	if procs, err := osal.Allowed(); err == nil && n > procs.Len() {
		// Above the CPUs kv names what OS threads run: the
		// check's choice on OS threads or a stand-in, never a goroutine
		// algorithm or a goroutine time.
		if alg := field("algorithm"); alg == "goroutine" || alg == "cond" || alg == "channel" || field("median_ns") != "" && field("rule") != "measured" {
			t.Errorf("%d threads above %d CPUs: export %q names a goroutine choice or time", n, procs.Len(), kv)
		}
		return
	}
	limit := -1 // the CPUs the selection was made in
	if allowed != "" {
		if set, err := cpuset.ParseList(allowed); err == nil {
			limit = set.Len()
		}
	} else if procs, err := osal.Allowed(); err == nil {
		limit = procs.Len()
	}
	if limit >= 0 && n > limit {
		// Above the CPUs kv names what OS threads run: the
		// check's choice on OS threads or a stand-in, never a goroutine
		// algorithm or a goroutine time.
		if alg := field("algorithm"); alg == "goroutine" || alg == "cond" || alg == "channel" || field("median_ns") != "" && field("rule") != "measured" {
			t.Errorf("%d threads above %d CPUs: export %q names a goroutine choice or time", n, limit, kv)
		}
		return
	}
	if field("algorithm") != tu.Algorithm || field("policy") != tu.Policy || field("cpus") != cpus || field("median_ns") != wantNs {
		t.Errorf("%d threads: export %q, Tuned %s %s %v %.1f", n, kv, tu.Algorithm, tu.Policy, tu.CPUs, tu.MedianNs)
	}
}

// TestAutoShowExportAgree: for every n from 1 to 4x the CPUs, barriers.Tuned,
// show --threads and export make the same choice: on this machine's file,
// and on a file of a larger (synthetic) machine used by force, inside this
// process's allowed CPUs.
func TestAutoShowExportAgree(t *testing.T) {
	live, err := hwtree.FromSysfs("/")
	if err != nil {
		t.Skip(err)
	}
	allowed, err := osal.Allowed()
	if err != nil {
		t.Skip(err)
	}
	// 1, 2 and twice the allowed CPUs, each once (2 is twice one CPU).
	path := recordedFile(t, live, check.WholeTopology(live), slices.Compact([]int{1, 2, max(3, 2*len(live.CPUs()))}))
	for n := 1; n <= 4*len(live.CPUs()); n++ {
		tu := barriers.TunedFrom(path, n)
		if tu.Source != path {
			t.Fatalf("Tuned(%d) = %+v, want the file %s", n, tu, path)
		}
		agree(t, path, n, "", tu)
	}
	syn, err := hwtree.FromSynthetic("pack:2 l3:2 core:2 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	big := recordedFile(t, syn, syn, []int{1, 2, 3, 4, 8, 16, 32})
	t.Setenv(results.ForceEnv, "1")
	for n := 1; n <= 4*16; n++ {
		tu := barriers.TunedFrom(big, n)
		if !strings.Contains(tu.Warning, "forced") {
			t.Fatalf("Tuned(%d) on another machine's file: %+v, want a forced warning", n, tu)
		}
		agree(t, big, n, osal.AtOnce(allowed).String(), tu) // where Tuned selects
	}
}

// TestShowSubsetChoice: show --threads N --allowed LIST chooses inside the
// list (one package, one L3, one core of a 2-package machine), the whole
// machine gets the check's best, and the lines stay under 160 characters.
func TestShowSubsetChoice(t *testing.T) {
	syn, err := hwtree.FromSynthetic("pack:2 l3:2 core:4 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	path := recordedFile(t, syn, syn, []int{2, 4})
	f, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		allowed string
		n       int
	}{{"16-31", 4}, {"8-15", 4}, {"6-7", 2}, {"7", 2}, {"0-31", 4}} {
		js, err := run(t, "show", path, "--threads", strconv.Itoa(c.n), "--allowed", c.allowed, "--json")
		if err != nil {
			t.Fatal(err)
		}
		var sh shownJSON
		if err := json.Unmarshal([]byte(js), &sh); err != nil {
			t.Fatal(err)
		}
		want, err := f.Select(c.n, mustList(t, c.allowed))
		if err != nil {
			t.Fatal(err)
		}
		if sh.Allowed != c.allowed || !slices.Equal(sh.CPUs, want.CPUs) || sh.Algorithm != want.Algorithm {
			t.Errorf("--allowed %s --threads %d: %+v, want %+v", c.allowed, c.n, sh, want)
		}
		if c.allowed == "0-31" && (!slices.Equal(sh.CPUs, f.Lookup(c.n).Best.CPUs) || sh.Rule != results.Measured) {
			t.Errorf("whole machine: %+v, want the best %v", sh, f.Lookup(c.n).Best)
		}
		text, err := run(t, "show", path, "--threads", strconv.Itoa(c.n), "--allowed", c.allowed)
		if err != nil || !strings.Contains(text, "inside CPUs "+c.allowed) || !strings.Contains(text, "rule "+want.Rule) {
			t.Errorf("show --threads text: %v\n%s", err, text)
		}
		longLines(t, text)
	}
	table, err := run(t, "show", path, "--allowed", "8-15")
	if err != nil || !strings.Contains(table, "choices inside CPUs 8-15 (--allowed)") {
		t.Errorf("show --allowed table: %v\n%s", err, table)
	}
	longLines(t, table)
	for _, bad := range []struct{ list, want string }{
		{"0-40", "32-40 not in the machine"}, {"", ""}, {" , ", "no CPU given"}, {"3-1", "ends before it starts"},
	} {
		if bad.list == "" {
			continue
		}
		_, err := run(t, "show", path, "--threads", "2", "--allowed", bad.list)
		if err == nil || !strings.Contains(err.Error(), bad.want) || exitCode(err) != exitUsage {
			t.Errorf("--allowed %q: exit %d, %v; want a usage error saying %q", bad.list, exitCode(err), err, bad.want)
		}
	}
}

func mustList(t *testing.T, s string) cpuset.Set {
	t.Helper()
	set, err := cpuset.ParseList(s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// longLines fails for lines of 160 characters or more.
func longLines(t *testing.T, out string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if len([]rune(l)) >= 160 {
			t.Errorf("line of %d characters: %s", len([]rune(l)), l)
		}
	}
}

// TestShowLookupOrder: without a file, show names every file it tried;
// with a per-user file of another machine and $BARRIERTUNE_RESULTS on
// this one, it says which it used and why the other was skipped.
func TestShowLookupOrder(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("XDG_CONFIG_DIRS", "")
	t.Setenv(results.ResultsEnv, "")
	user := filepath.Join(dir, "barriertune", "results.json")
	_, err := run(t, "show")
	want := "no results file at " + user + " (nor " + testSystemFile() + "): run barriertune check"
	if err == nil || err.Error() != want || exitCode(err) != exitFailure {
		t.Errorf("show without a file: exit %d, %v; want %q", exitCode(err), err, want)
	}
	live, err := hwtree.FromSysfs("/")
	if err != nil {
		t.Skip(err)
	}
	mine := recordedFile(t, live, check.WholeTopology(live), []int{1, 2})
	data, _ := os.ReadFile(mine)
	var f results.File
	json.Unmarshal(data, &f)
	f.Machine.CPU.Name = "Imaginary CPU 9000"
	if err := store.Write(user, &f); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "show"); err == nil || !strings.Contains(err.Error(), user+": recorded on another machine") {
		t.Errorf("only a foreign per-user file: %v", err)
	}
	t.Setenv(results.ResultsEnv, mine)
	out, err := run(t, "show", "--threads", "2")
	if err != nil || !strings.Contains(out, "file: "+mine+" ($BARRIERTUNE_RESULTS)") {
		t.Errorf("show --threads 2: %v\n%s", err, out)
	}
	t.Setenv(results.ResultsEnv, filepath.Join(dir, "none.json"))
	os.Rename(mine, user) // this machine's file as the per-user file: the missing env file is skipped
	out, err = run(t, "export", "--format", "env", "--threads", "2")
	if err != nil || !strings.Contains(out, "(the per-user file); skipped "+filepath.Join(dir, "none.json")+": no such file") {
		t.Errorf("export: %v\n%s", err, out)
	}
}

// TestCheckSystemNeedsRoot: check --system fails before measuring for a
// user who is not root, and refuses -o beside it; as root it points the
// check at the system file.
func TestCheckSystemNeedsRoot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "etc", "results.json")
	o := &checkOptions{system: systemFlag{on: true, path: path, euid: func() int { return 1000 }}}
	err := o.system.apply(o)
	if err == nil || !strings.Contains(err.Error(), "needs root") || !strings.Contains(err.Error(), path) || o.output != "" {
		t.Errorf("non-root: %v (output %q)", err, o.output)
	}
	o.output = "x.json"
	if err := o.system.apply(o); exitCode(err) != exitUsage {
		t.Errorf("--system with -o: exit %d, %v", exitCode(err), err)
	}
	o.output, o.system.euid = "", func() int { return 0 }
	if err := o.system.apply(o); err != nil || o.output != "" {
		t.Errorf("root: %v, output %q", err, o.output)
	}
	if d, err := o.destination(); err != nil || d.String() != path || !d.Create {
		t.Errorf("root: destination %+v, %v; want %s, made when missing", d, err, path)
	}
	if os.Geteuid() != 0 {
		_, err := run(t, "check", "--system", "--threads", "2")
		if err == nil || !strings.Contains(err.Error(), "needs root") {
			t.Errorf("check --system as uid %d: %v", os.Geteuid(), err)
		}
	}
}

// TestCheckOutputNamesMissingDir: -o below a directory that does not
// exist and cannot be made names that directory.
func TestCheckOutputNamesMissingDir(t *testing.T) {
	_, err := run(t, "check", "-o", "/proc/nope/x.json", "--threads", "2")
	if err == nil || !strings.Contains(err.Error(), "directory /proc/nope does not exist") {
		t.Errorf("check -o /proc/nope/x.json: %v", err)
	}
}

// TestTasksetChoosesInside: a process that taskset confines to one CPU
// gets, from this machine's file, choices on that CPU only (show's
// default allowed set is the process's own).
func TestTasksetChoosesInside(t *testing.T) {
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("no taskset")
	}
	allowed, err := osal.Allowed()
	if err != nil || allowed.Len() < 2 {
		t.Skip("needs two allowed CPUs")
	}
	live, err := hwtree.FromSysfs("/")
	if err != nil {
		t.Skip(err)
	}
	path := recordedFile(t, live, check.WholeTopology(live), []int{1, 2})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	last := allowed.Members()[allowed.Len()-1]
	for _, n := range []int{1, 2, 3} {
		ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
		cmd := exec.CommandContext(ctx, taskset, "-c", strconv.Itoa(last), exe, "show", "--threads", strconv.Itoa(n), "--json")
		cmd.Env = append(os.Environ(), childEnv+"=1", results.ResultsEnv+"="+path)
		out, err := cmd.Output()
		cancel()
		if err != nil {
			t.Fatalf("taskset -c %d show --threads %d: %v", last, n, err)
		}
		var sh shownJSON
		if err := json.Unmarshal(out, &sh); err != nil {
			t.Fatal(err)
		}
		if sh.Allowed != strconv.Itoa(last) || len(sh.CPUs) != n || slices.ContainsFunc(sh.CPUs, func(c int) bool { return c != last }) {
			t.Errorf("taskset -c %d, %d threads: %+v, want every rank on CPU %d", last, n, sh, last)
		}
		if want := map[int]string{1: results.Measured, 2: results.RuleOversubscribed, 3: results.RuleOversubscribed}[n]; sh.Rule != want {
			t.Errorf("taskset -c %d, %d threads: rule %s, want %s", last, n, sh.Rule, want)
		}
	}
}

// TestAutoAndShowWithinGOMAXPROCS: where the process runs fewer CPUs at
// once than it may use (GOMAXPROCS here; a cgroup CPU quota alike),
// barriers.Tuned and show --threads select within that many, so two
// participants under GOMAXPROCS=1 take the oversubscribed rule instead of
// a placement measured with two spinning threads; show says
// why.
func TestAutoAndShowWithinGOMAXPROCS(t *testing.T) {
	live, err := hwtree.FromSysfs("/")
	if err != nil {
		t.Skip(err)
	}
	if len(live.CPUs()) < 2 || osal.Usable() < 2 {
		t.Skip("needs 2 usable CPUs")
	}
	path := recordedFile(t, live, check.WholeTopology(live), []int{1, 2, 4})
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	if tu := barriers.TunedFrom(path, 2); tu.Rule == results.RuleOversubscribed {
		t.Fatalf("2 threads with GOMAXPROCS 2: %+v, want a selection that fits", tu)
	}
	runtime.GOMAXPROCS(1)
	for n := 1; n <= 3; n++ {
		tu := barriers.TunedFrom(path, n)
		if (n > 1) != (tu.Rule == results.RuleOversubscribed) {
			t.Errorf("%d threads, GOMAXPROCS 1: rule %q (%s)", n, tu.Rule, tu.Why)
		}
		js, err := run(t, "show", path, "--threads", strconv.Itoa(n), "--json")
		if err != nil {
			t.Fatal(err)
		}
		var sh shownJSON
		if err := json.Unmarshal([]byte(js), &sh); err != nil {
			t.Fatalf("show --json: %v\n%s", err, js)
		}
		if sh.Algorithm != tu.Algorithm || sh.Rule != tu.Rule || !slices.Equal(sh.CPUs, tu.CPUs) {
			t.Errorf("%d threads, GOMAXPROCS 1: show %s/%s on %v, Tuned %s/%s on %v", n, sh.Algorithm, sh.Rule, sh.CPUs, tu.Algorithm, tu.Rule, tu.CPUs)
		}
		if !strings.Contains(js, "GOMAXPROCS") {
			t.Errorf("%d threads, GOMAXPROCS 1: show does not say why it selects inside one CPU:\n%s", n, js)
		}
	}
}
