package check

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/export"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/results"
)

// The C program built with this machine's compiler times every candidate
// with more threads than allowed CPUs, and the choice is made from its
// samples.
func TestOSThreadsCOnHardware(t *testing.T) {
	allowed, err := osal.Allowed()
	if err != nil {
		t.Skip(err)
	}
	prog, err := Hardware{}.BuildOSThreadsC(context.Background(), t.TempDir())
	if err != nil {
		if _, lerr := exec.LookPath("cc"); lerr != nil {
			t.Skipf("no C compiler: %v", err)
		}
		t.Fatal(err)
	}
	if !strings.Contains(prog.compiler, " ") {
		t.Errorf("compiler %q names no version", prog.compiler)
	}
	n := allowed.Len() + 1
	algs := []string{"central", "dissemination"}
	run, err := prog.run(context.Background(), n, algs, 3, 200*time.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range run.Results {
		if r.Algorithm != algs[i] || r.Reps != 3 || !(r.MedianNs > 0) || r.Threads != n {
			t.Errorf("result %d: %+v, want %s with 3 samples of %d threads", i, r, algs[i], n)
		}
	}
	if c := bestOnOSThreads(run, make(cpuset.Placement, n)); c == nil {
		t.Error("no choice from the C program's samples")
	}
	// A stop ends the program; what it printed is kept, and no error.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := prog.run(ctx, n, algs, 1000, 10*time.Millisecond); err != nil {
		t.Errorf("stopped run: %v", err)
	}
	// An algorithm the header does not know is the program's error.
	if _, err := prog.run(context.Background(), n, []string{"no-such"}, 1, time.Millisecond); err == nil || !strings.Contains(err.Error(), "no-such") {
		t.Errorf("unknown algorithm: err %v, want one naming it", err)
	}
}

// The program's output is trusted only as its format allows: anything
// else is an error, except a last line cut short by a stop.
func TestParseOSThreadsC(t *testing.T) {
	algs := []string{"central", "combining"}
	good := "sample central 100.5\nsample combining 200\nsample central 110\n"
	run, err := parseOSThreadsC([]byte(good), 3, algs, false)
	if err != nil {
		t.Fatal(err)
	}
	if r := run.Results[0]; r.Reps != 2 || r.Algorithm != "central" || r.Policy != "auto" || r.Threads != 3 {
		t.Errorf("central: %+v", r)
	}
	if r := run.Results[1]; r.Reps != 1 || r.MedianNs != 200 {
		t.Errorf("combining: %+v", r)
	}
	for _, bad := range []string{
		"sample tournament 100\n", // not asked for
		"sample central -1\n",
		"sample central 0\n",
		"sample central NaN\n",
		"sample central +Inf\n",
		"sample central 1e400\n",
		"sample central\n",
		"sample central 100 extra\n",
		"central 100\n",
		"\x00\xff\n",
		"sample central 100\nsample comb",
	} {
		if _, err := parseOSThreadsC([]byte(bad), 3, algs, false); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	// Stopped: the cut last line is dropped, the rest kept.
	run, err = parseOSThreadsC([]byte("sample central 100\nsample comb"), 3, algs, true)
	if err != nil || run.Results[0].Reps != 1 || run.Results[1].Reps != 0 {
		t.Errorf("stopped: %+v, %v", run.Results, err)
	}
	// Nothing printed: every candidate without a sample.
	if run, err := parseOSThreadsC(nil, 3, algs, true); err != nil || run.Results[0].Reps != 0 {
		t.Errorf("empty: %+v, %v", run, err)
	}
}

// cFake builds a "C program" that is a shell script printing script,
// or fails to build with buildErr.
type cFake struct {
	osFake
	script   string
	buildErr error
}

func (c *cFake) BuildOSThreadsC(_ context.Context, dir string) (*cOSThreads, error) {
	if c.buildErr != nil {
		return nil, c.buildErr
	}
	bin := filepath.Join(dir, "osthreads")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+c.script), 0o755); err != nil {
		return nil, err
	}
	return &cOSThreads{bin: bin, compiler: "fakecc 1"}, nil
}

// Above the allowed CPUs the choice is the C program's, labelled with its
// compiler; where it cannot be built, or fails, Go's OS threads are timed
// instead and a cut says why.
func TestMeasureOSThreadsInC(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	file := func() *results.File {
		return &results.File{Machine: results.Machine{AllowedCPUs: "0-1"}, Threads: []results.Threads{
			{Threads: 4, Best: &results.Choice{Spec: results.Spec{Algorithm: "goroutine"}, CPUs: []int{0, 1, 0, 1}}},
		}}
	}
	var lines strings.Builder
	for i := 0; i < 9; i++ {
		for j, a := range osThreadAlgorithms {
			lines.WriteString("sample " + a + " " + []string{"900", "1500", "1800", "2000", "3000"}[j] + "\n")
		}
	}
	// The program runs the header's default wait, whatever the check's
	// environment says.
	t.Setenv("BARRIERTUNE_WAIT_POLICY", "passive")
	printed := "[ -z \"$BARRIERTUNE_WAIT_POLICY\" ] || { echo \"policy $BARRIERTUNE_WAIT_POLICY\" >&2; exit 1; }\n" +
		"cat <<'EOF'\n" + lines.String() + "EOF\n"
	f := file()
	fake := &cFake{script: printed}
	measureOSThreads(context.Background(), f, fake)
	o := f.Threads[0].OSThreads
	if o == nil || o.Algorithm != "central" || o.Label != OSThreadsCLabel+" (fakecc 1)" || o.MedianNs != 900 || o.Policy != "auto" {
		t.Fatalf("C choice %+v, want central at 900 ns labelled %q (fakecc 1)", o, OSThreadsCLabel)
	}
	if len(fake.asked) != 0 {
		t.Errorf("Go's OS threads were timed too: %v", fake.asked)
	}
	// The export says where the figure comes from.
	var h bytes.Buffer
	if err := export.Write(&h, f, "c-barrier", export.Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.String(), "900.0 ns/episode as measured in C with this header's barrier (fakecc 1)") {
		t.Errorf("c-barrier does not say its 4-thread row was timed in C:\n%s", grepLines(h.String(), "4 threads"))
	}
	for _, c := range []struct {
		name string
		fake *cFake
		cut  string
	}{
		{"no compiler", &cFake{buildErr: errString("no C compiler (looked for cc, gcc, clang)")}, "OS threads timed with Go's, not in C: no C compiler"},
		{"program fails", &cFake{script: "echo broken >&2; exit 1\n"}, "4 threads on OS threads timed with Go's, not in C: osthreads: exit status 1: broken"},
		{"prints nonsense", &cFake{script: "echo hello\n"}, "4 threads on OS threads timed with Go's, not in C: the C program printed \"hello\""},
	} {
		f := file()
		measureOSThreads(context.Background(), f, c.fake)
		o := f.Threads[0].OSThreads
		if o == nil || o.Label != OSThreadsGoLabel || len(c.fake.asked) != 1 {
			t.Errorf("%s: choice %+v after %d Go measurements, want Go's OS threads' once", c.name, o, len(c.fake.asked))
		}
		if !strings.Contains(strings.Join(f.Cuts, "\n"), c.cut) {
			t.Errorf("%s: cuts %q, want one containing %q", c.name, f.Cuts, c.cut)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// $CC names the compiler (its first word; the rest are flags); unset,
// the first of cc, gcc and clang on PATH; a $CC that names no program,
// or no compiler at all, is an error that says so.
func TestOSThreadsCompiler(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	if p, flags, err := osThreadsCompiler("gcc -O0  -g"); err != nil || p != gcc || strings.Join(flags, " ") != "-O0 -g" {
		t.Errorf("CC=gcc -O0 -g: %q %q %v", p, flags, err)
	}
	if _, _, err := osThreadsCompiler("/no/such/cc -O2"); err == nil || !strings.Contains(err.Error(), `CC="/no/such/cc -O2"`) {
		t.Errorf("CC naming no program: %v", err)
	}
	if p, flags, err := osThreadsCompiler("  "); err != nil || p == "" || len(flags) != 0 {
		t.Errorf("CC blank: %q %q %v", p, flags, err)
	}
	// The flags reach the compiler: one it refuses fails the build, and
	// the error names it.
	t.Setenv("CC", "gcc --no-such-option-barriertune")
	if _, err := (Hardware{}).BuildOSThreadsC(context.Background(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "--no-such-option-barriertune") {
		t.Errorf("CC with a bad flag: %v", err)
	}
	t.Setenv("CC", "")
	t.Setenv("PATH", t.TempDir())
	if _, _, err := osThreadsCompiler(""); err == nil || !strings.Contains(err.Error(), "no C compiler") {
		t.Errorf("empty PATH: %v", err)
	}
}

// A check stopped while the C program runs records no choice for the
// count, with a cut that says so, not one that claims Go's threads timed
// it.
func TestMeasureOSThreadsInCStopped(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	f := &results.File{Machine: results.Machine{AllowedCPUs: "0-1"}, Threads: []results.Threads{
		{Threads: 4, Best: &results.Choice{Spec: results.Spec{Algorithm: "goroutine"}, CPUs: []int{0, 1, 0, 1}}},
		{Threads: 8, Best: &results.Choice{Spec: results.Spec{Algorithm: "goroutine"}, CPUs: []int{0, 1, 0, 1, 0, 1, 0, 1}}},
	}}
	fake := &cFake{script: "exec sleep 30\n"}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	measureOSThreads(ctx, f, fake)
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("the stopped measurement returned after %v", el)
	}
	if f.Threads[0].OSThreads != nil || f.Threads[1].OSThreads != nil || len(fake.asked) != 0 {
		t.Errorf("choices %+v %+v after %d Go measurements, want none", f.Threads[0].OSThreads, f.Threads[1].OSThreads, len(fake.asked))
	}
	cuts := strings.Join(f.Cuts, "\n")
	if !strings.Contains(cuts, "4 threads on OS threads not measured: the budget ran out") || !strings.Contains(cuts, "8 threads on OS threads not measured: the budget ran out") || strings.Contains(cuts, "timed with Go's") {
		t.Errorf("cuts %q", f.Cuts)
	}
}
