package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/barriertune/barriertune/cpuset"
)

func TestParseCounts(t *testing.T) {
	got, err := parseCounts("--threads", "2, 4-6,8")
	if err != nil || !equalInts(got, []int{2, 4, 5, 6, 8}) {
		t.Errorf("parseCounts = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "-1", "x", "3-2", "2,2", "2-4,3", "1-65537", "2-1000000000", "9223372036854775807", "1,"} {
		_, err := parseCounts("--threads", bad)
		if exitCode(err) != exitUsage || !strings.Contains(err.Error(), "--threads") {
			t.Errorf("parseCounts(%q) = %v, want a usage error naming --threads", bad, err)
		}
	}
}

func TestParseCPUs(t *testing.T) {
	got, err := parseCPUs("--cpus", "3,0-1, 7", false, "")
	if err != nil || !equalInts(got, []int{3, 0, 1, 7}) {
		t.Errorf("rank order kept: %v, %v", got, err)
	}
	if got, err := parseCPUs("--cpus", "0,1,0,1", true, ""); err != nil || !equalInts(got, []int{0, 1, 0, 1}) {
		t.Errorf("oversubscribed placement: %v, %v", got, err)
	}
	if got, err := parseCPUs("--cpus", "", false, ""); err != nil || got != nil {
		t.Errorf("empty: %v, %v", got, err)
	}
	for _, bad := range []string{"0,0", "0-3,2", "x", "3-1", "0,,1", "-1", "0-1000000000", "1048577"} {
		_, err := parseCPUs("--cpus", bad, false, "")
		if exitCode(err) != exitUsage || !strings.Contains(err.Error(), bad) || strings.Contains(err.Error(), "\n") {
			t.Errorf("parseCPUs(%q) = %v, want a one-line usage error naming it", bad, err)
		}
	}
	// The hint names the flag that allows a CPU twice, and only where one does.
	if _, err := parseCPUs("--cpus", "0,0", false, "--oversubscribe"); err == nil || !strings.Contains(err.Error(), "or add --oversubscribe") {
		t.Errorf("bench's hint: %v", err)
	}
	if _, err := parseCPUs("--cpus", "0,0", false, ""); err == nil || strings.Contains(err.Error(), "--oversubscribe") {
		t.Errorf("a command without --oversubscribe suggests it: %v", err)
	}
	// The caps are cpuset's, the project's one CPU-list parser.
	if _, err := parseCPUs("--cpus", "0-"+strconv.Itoa(cpuset.MaxCPU+1), true, ""); err == nil {
		t.Error("an index above cpuset.MaxCPU passed")
	}
}

func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
	}{
		{nil, 0},
		{errors.New("x"), 1},
		{usageErrorf("x"), 2},
		{&signalError{sig: syscall.SIGINT}, 130},
		{&signalError{sig: syscall.SIGTERM}, 143},
		{&exitError{code: 143, err: errors.New("x")}, 143},
	} {
		if got := exitCode(c.err); got != c.code {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.code)
		}
	}
	var out, errOut bytes.Buffer
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"--frobnicate"}, 2},
		{[]string{"frobnicate"}, 2},
		{[]string{"sets", "--limit", "x"}, 2},
		{[]string{"sets", "--limit", "-3"}, 2},
		{[]string{"show", "a", "b"}, 2},
		{[]string{"--quiet", "--verbose", "version"}, 2},
		{[]string{"topo", "--xml", "/nonexistent.xml"}, 1},
		{[]string{"version"}, 0},
	} {
		out.Reset()
		errOut.Reset()
		code := execute(context.Background(), testSystemFile(), c.args, &out, &errOut)
		if code != c.code {
			t.Errorf("%v: exit code %d, want %d (stderr %q)", c.args, code, c.code, errOut.String())
		}
		if lines := strings.Count(errOut.String(), "\n"); c.code != 0 && lines != 1 {
			t.Errorf("%v: %d lines on stderr, want 1: %q", c.args, lines, errOut.String())
		}
	}
}

func TestHelpNamesExitCodes(t *testing.T) {
	root := testRootCmd()
	for _, c := range append(root.Commands(), root) {
		if c.Hidden || c.Name() == "help" {
			continue
		}
		if !strings.Contains(c.Long, "130 interrupted by SIGINT") {
			t.Errorf("%s --help does not list the exit codes", c.CommandPath())
		}
	}
}

func TestVersionFlag(t *testing.T) {
	out, err := run(t, "--version")
	if err != nil || !strings.HasPrefix(out, "barriertune ") || !strings.Contains(out, runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("--version = %q, %v", out, err)
	}
	cmdOut, _ := run(t, "version")
	if cmdOut != out {
		t.Errorf("version %q and --version %q differ", cmdOut, out)
	}
}

// TestFlagValueCompletion asks cobra's completion entry point, as the
// shell scripts do, for flag values.
func TestFlagValueCompletion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "bench", "--algorithm", ""}, []string{"dissemination", "mcs", "all"}},
		{[]string{"__complete", "bench", "--policy", ""}, []string{"spin", "park", "auto", "yield"}},
		{[]string{"__complete", "check", "--algorithms", ""}, []string{"central", "tournament"}},
		{[]string{"__complete", "sets", "--method", ""}, []string{"exact", "paper"}},
	} {
		out, err := run(t, c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w+"\n") {
				t.Errorf("%v: completions lack %q:\n%s", c.args, w, out)
			}
		}
		if !strings.Contains(out, ":4\n") { // ShellCompDirectiveNoFileComp
			t.Errorf("%v: file completion not turned off:\n%s", c.args, out)
		}
	}
	script, err := run(t, "completion", "bash")
	if err != nil || !strings.Contains(script, "__barriertune") {
		t.Errorf("completion bash: %v", err)
	}
}

func equalInts(a, b []int) bool { return slices.Equal(a, b) }

func TestVerboseAndQuiet(t *testing.T) {
	args := []string{"bench", "--algorithm", "central", "--threads", "1", "--samples", "2", "--sample-time", "20us"}
	var out, errOut bytes.Buffer
	if code := execute(context.Background(), testSystemFile(), append(args, "--verbose"), &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "bench: 1 thread on CPU ") || !strings.Contains(errOut.String(), "algorithms central, 2 samples of 20µs") {
		t.Errorf("--verbose lacks the run's details:\n%s", errOut.String())
	}
	if !strings.Contains(out.String(), "central") {
		t.Errorf("stdout lacks the result:\n%s", out.String())
	}
	out.Reset()
	errOut.Reset()
	if code := execute(context.Background(), testSystemFile(), append(args, "--quiet"), &out, &errOut); code != 0 || errOut.Len() != 0 {
		t.Errorf("--quiet: exit %d, stderr %q", code, errOut.String())
	}
	if !strings.Contains(out.String(), "central") {
		t.Errorf("--quiet dropped the result:\n%s", out.String())
	}
}

// maxTableLine is the longest output line a command may print.
const maxTableLine = 159

// pluralSlip matches a count of one before a plural noun: "1 placements",
// "1 pairs", "(1 PUs)". Units (ns, µs, ms, s) are not plurals.
var pluralSlip = regexp.MustCompile(`(^|[^0-9.,^/x-])1 ([A-Za-z]+s)\b`)

// units end in s without being plurals.
var units = map[string]bool{"ns": true, "us": true, "µs": true, "ms": true, "s": true}

// outputCases are command lines whose output the conventions hold for:
// lines under 160 characters, no "1 <plural>s". Each helper adds its
// commands' rows; "files" are written to a temporary directory first and
// $DIR in args names it.
var outputCases = []struct {
	name string
	args []string
}{
	{"topo one PU", []string{"topo", "--synthetic", "pu:1"}},
	{"topo", []string{"topo", "--synthetic", "pack:2 l3:2 core:4 pu:2", "--cpuset"}},
	{"topo big", []string{"topo", "--synthetic", "pack:4 l3:4 core:8 pu:2", "--only", "l3", "--cpuset"}},
	{"sets one thread", []string{"sets", "--synthetic", "pu:2", "--threads", "1"}},
	{"sets", []string{"sets", "--synthetic", "pack:2 l3:2 core:4 pu:2", "--threads", "5", "--limit", "40"}},
	{"sets big", []string{"sets", "--synthetic", "pack:4 l3:4 core:8 pu:2", "--threads", "100"}},
	{"sets count", []string{"sets", "--synthetic", "pack:2 core:40 pu:2", "--count"}},
	{"bench one thread", []string{"bench", "--threads", "1", "--algorithm", "central", "--samples", "1", "--sample-time", "20us"}},
	{"bench skew", []string{"bench", "--threads", "1", "--algorithm", "central", "--samples", "1", "--sample-time", "20us", "--skew", "500"}},
	{"latency two CPUs", []string{"latency", "--from", "$DIR/m2.csv", "--matrix"}},
	{"latency 40 CPUs", []string{"latency", "--from", "$DIR/m40.csv", "--matrix"}},
	{"version", []string{"version"}},
}

// TestOutputConventions runs outputCases and checks every line of their
// output (and of errors): under 160 characters, no "1 <plural>s".
func TestOutputConventions(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{2, 40} {
		var b strings.Builder
		for i := range n {
			for j := range n {
				if j > 0 {
					b.WriteByte(',')
				}
				if j < i {
					fmt.Fprintf(&b, "%d.5", 10+(i/8)*50+j%7)
				}
			}
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%d.csv", n)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range outputCases {
		args := make([]string, len(c.args))
		for i, a := range c.args {
			args[i] = strings.ReplaceAll(a, "$DIR", dir)
		}
		var out, errOut bytes.Buffer
		if code := execute(context.Background(), testSystemFile(), args, &out, &errOut); code != 0 {
			t.Errorf("%s: exit %d: %s", c.name, code, errOut.String())
			continue
		}
		for _, line := range strings.Split(out.String()+errOut.String(), "\n") {
			if n := utf8.RuneCountInString(line); n > maxTableLine {
				t.Errorf("%s: a line of %d characters: %s", c.name, n, line[:120]+"...")
			}
			for _, m := range pluralSlip.FindAllStringSubmatch(line, -1) {
				if !units[m[2]] {
					t.Errorf("%s: %q says 1 %s", c.name, line, m[2])
				}
			}
		}
	}
}

// TestFormatCPUs: ranks in order with consecutive runs as ranges; a sorted
// set reads as cpuset's list form.
func TestFormatCPUs(t *testing.T) {
	for _, c := range []struct {
		cpus []int
		want string
	}{
		{nil, ""},
		{[]int{3}, "3"},
		{[]int{0, 1}, "0-1"},
		{[]int{0, 1, 2, 3, 8, 6, 7}, "0-3,8,6-7"},
		{[]int{0, 1, 0, 1}, "0-1,0-1"},
		{[]int{5, 4, 3}, "5,4,3"},
	} {
		if got := cpuset.FormatList(c.cpus); got != c.want {
			t.Errorf("cpuset.FormatList(%v) = %q, want %q", c.cpus, got, c.want)
		}
	}
	for _, set := range [][]int{{0}, {0, 1}, {0, 2, 3, 4, 9}, {1, 3, 5}, {0, 1, 2, 63, 64, 65, 200}} {
		if got, want := cpuset.FormatList(set), cpuset.Of(set...).String(); got != want {
			t.Errorf("sorted %v: %q, cpuset says %q", set, got, want)
		}
	}
	if onCPUs([]int{2}) != "CPU 2" || onCPUs([]int{2, 3}) != "CPUs 2-3" {
		t.Errorf("onCPUs: %q, %q", onCPUs([]int{2}), onCPUs([]int{2, 3}))
	}
}
