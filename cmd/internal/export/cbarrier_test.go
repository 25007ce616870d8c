package export

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/results"
)

// The header carries every catalog algorithm a C program can run: all but
// the ones that exist only in Go (the goroutine barrier and the blocking
// baselines built on Go's sync.Cond and channels). It carries the hybrid,
// whose levels are the other algorithms it carries, up to cMaxLevels.
func TestCBarrierCarriesCatalog(t *testing.T) {
	var carried []string
	for _, a := range cAlgorithms() {
		if catalog.Rank(a.Name) == len(catalog.Names()) {
			t.Errorf("the header carries %q, which is not in the catalog", a.Name)
		}
		if a.Ident != strings.ToUpper(strings.ReplaceAll(a.Name, "-", "_")) {
			t.Errorf("%q: identifier %s, want its name in capitals", a.Name, a.Ident)
		}
		carried = append(carried, a.Name)
	}
	goOnly := []string{"goroutine", "cond", "channel"}
	for _, a := range barriers.Algorithms() {
		if slices.Contains(carried, a.Name) == slices.Contains(goOnly, a.Name) {
			t.Errorf("%s: carried %v, Go only %v", a.Name, slices.Contains(carried, a.Name), slices.Contains(goOnly, a.Name))
		}
	}
	if !strings.Contains(cBarrierTemplate, tableMarker) {
		t.Fatal("the template has no table marker")
	}
	header := cHeaderTemplate()
	for _, want := range []string{
		fmt.Sprintf("\n#define BARRIERTUNE_MAX_LEVELS %d\n", cMaxLevels),
		fmt.Sprintf("\n#define BARRIERTUNE_MAX_THREADS %d\n", barriers.MaxParticipants),
		fmt.Sprintf("\n#define BARRIERTUNE_MAX_FAN_IN %d\n", cMaxFanIn),
	} {
		if !strings.Contains(header, want) {
			t.Errorf("the header lacks %q", strings.TrimSpace(want))
		}
	}
	if strings.Contains(header, "@@BARRIERTUNE_CATALOG@@") || strings.Contains(header, "> 64") {
		t.Error("the header keeps its catalog marker or a fan-in cap of its own")
	}
}

// TestCBarrierNewAlgorithm: every catalog algorithm either appears in the
// header's X-list, with the C code that runs it (its case in the header's
// dispatch), or is refused by name (goOnly). An algorithm added to the
// catalog fails here until the header runs it or goOnly names it.
func TestCBarrierNewAlgorithm(t *testing.T) {
	header := cHeaderTemplate()
	for _, a := range barriers.Algorithms() {
		ident := strings.ToUpper(strings.ReplaceAll(a.Name, "-", "_"))
		listed := strings.Contains(header, fmt.Sprintf("\tX(%s, %q)", ident, a.Name))
		if slices.Contains(goOnly(), a.Name) {
			if listed || CRunnable(a.Name) {
				t.Errorf("%s: refused by name (goOnly) but carried", a.Name)
			}
			continue
		}
		if !listed || !CRunnable(a.Name) {
			t.Errorf("%s: neither in the header's algorithm list nor refused by name (goOnly)", a.Name)
		}
		if !strings.Contains(header, "case BARRIERTUNE_ALG_"+ident+":") {
			t.Errorf("%s: the header lists it but no C code runs it (no case BARRIERTUNE_ALG_%s); implement it or name it in goOnly", a.Name, ident)
		}
	}
}

// goroutineFile is a file whose choices for more threads than CPUs exist
// only in Go: the goroutine barrier measured at 4 threads on 2 CPUs, and
// a hybrid at 2.
func goroutineFile() *results.File {
	return &results.File{
		Schema:  results.Schema,
		Machine: results.Machine{CPU: results.CPUIdentity{Vendor: "AuthenticAMD", Name: "Example EPYC"}, AllowedCPUs: "0-1"},
		Threads: []results.Threads{
			{Threads: 2, Complete: true, Best: &results.Choice{Spec: results.Spec{Algorithm: "hybrid", Policy: "auto", Composition: "core:dissemination"}, CPUs: []int{0, 1}, Pinned: true, MedianNs: 50, RunnerUp: "hybrid"}},
			{Threads: 4, Complete: true, Best: &results.Choice{Spec: results.Spec{Algorithm: "goroutine", Policy: "auto"}, CPUs: []int{0, 1, 0, 1}, MedianNs: 600}},
		},
	}
}

var (
	cHeaderRow  = regexp.MustCompile(`(?m)^\t\{(\d+), (\d+|INT_MAX), \d+, "([a-z]+)", "([a-z-]+)",`)
	cBarrierRow = regexp.MustCompile(`(?m)^\t\{(\d+), (\d+|INT_MAX), BARRIERTUNE_ALG_([A-Z_]+), `)
)

// No C export names an algorithm a C program cannot run: where the file's
// choice exists only in Go, the row is the stand-in, says so, and claims
// no measured time.
func TestCExportsNameRunnable(t *testing.T) {
	for _, f := range []*results.File{fixture(t), goroutineFile()} {
		for _, threads := range []int{0, 2, 4, 9} {
			var h, b bytes.Buffer
			if err := Write(&h, f, "c-header", Options{Threads: threads}); err != nil {
				t.Fatal(err)
			}
			if err := Write(&b, f, "c-barrier", Options{Threads: threads}); err != nil {
				t.Fatal(err)
			}
			rows := cHeaderRow.FindAllStringSubmatch(h.String(), -1)
			if len(rows) == 0 {
				t.Fatalf("no c-header rows:\n%s", h.String())
			}
			for _, r := range rows {
				if !CRunnable(r[4]) {
					t.Errorf("c-header names %q for %s-%s threads", r[4], r[1], r[2])
				}
			}
			brows := cBarrierRow.FindAllStringSubmatch(b.String(), -1)
			if len(brows) != len(rows) {
				t.Errorf("c-barrier has %d rows, c-header %d", len(brows), len(rows))
			}
			for _, r := range brows {
				if cIdentName(r[3]) == "" {
					t.Errorf("c-barrier names BARRIERTUNE_ALG_%s for %s-%s threads", r[3], r[1], r[2])
				}
			}
		}
	}
	var h, b bytes.Buffer
	if err := Write(&h, goroutineFile(), "c-header", Options{}); err != nil {
		t.Fatal(err)
	}
	// The c-barrier carries the one-level hybrid that c-header substitutes.
	if err := Write(&b, goroutineFile(), "c-barrier", Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"static const int barriertune_levels_2[2] = {BARRIERTUNE_ALG_DISSEMINATION, 0};",
		"static const int barriertune_level_keys_2[2] = {0, 0};",
		"\t{2, 2, BARRIERTUNE_ALG_HYBRID, 0, 1, 2, barriertune_cpus_2, 50.0, \"measured: ",
		", 1, barriertune_levels_2, barriertune_level_keys_2},",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("c-barrier lacks %s:\n%s", want, b.String())
		}
	}
	for _, want := range []string{
		`{2, 2, 2, "substituted", "dissemination", 0, "auto", 1, 2, barriertune_allowed_cpus, NAN}`,
		`{3, INT_MAX, 4, "substituted", "central", 0, "auto", 0, 2, barriertune_allowed_cpus, NAN}`,
	} {
		if !strings.Contains(h.String(), want) {
			t.Errorf("c-header lacks the row %s:\n%s", want, h.String())
		}
	}
}

func cIdentName(ident string) string {
	for _, a := range cAlgorithms() {
		if a.Ident == ident {
			return a.Name
		}
	}
	return ""
}

// cTools finds a C compiler; the test skips with the reason when it is
// missing.
func cTool(t *testing.T, name string) string {
	t.Helper()
	if testing.Short() {
		// CI's -short runs (GOMAXPROCS=1, one allowed CPU) are about the
		// Go code; the C and C++ programs run in go test ./... and in the
		// full matrix.
		t.Skip("C and C++ programs are built in go test ./... and -tags cmatrix, not under -short")
	}
	if runtime.GOOS != "linux" {
		t.Skipf("the C barrier tests run on Linux (here %s)", runtime.GOOS)
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed (.ci/run installs gcc, clang and libc++)", name)
	}
	return p
}

// eachCC runs f once per C compiler, as a subtest named after it: gcc
// always, clang in the full C matrix (-tags cmatrix, run by .ci/run); a
// compiler that is missing skips its subtest.
func eachCC(t *testing.T, f func(t *testing.T, cc, path string)) {
	for _, cc := range []string{"gcc", "clang"} {
		t.Run(cc, func(t *testing.T) {
			if cc != "gcc" && !fullMatrix {
				t.Skip("one compiler outside the full C matrix (-tags cmatrix, run by .ci/run)")
			}
			f(t, cc, cTool(t, cc))
		})
	}
}

// headerDir writes the c-barrier export of f as barriertune.h in a new
// directory with the test programs, and returns the directory.
func headerDir(t *testing.T, f *results.File) string {
	t.Helper()
	dir := t.TempDir()
	var b bytes.Buffer
	if err := Write(&b, f, "c-barrier", Options{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "barriertune.h"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	srcs, err := filepath.Glob(filepath.Join("testdata", "cbarrier", "*"))
	if err != nil || len(srcs) == 0 {
		t.Fatalf("no test programs in testdata/cbarrier: %v", err)
	}
	for _, s := range srcs {
		data, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(s)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runLimited runs a command under limit (killed by its pid when it
// overruns: a hang fails the test) and returns its combined output.
func runLimited(limit time.Duration, dir, name string, args ...string) (string, error) {
	return runEnv(limit, dir, nil, name, args...)
}

// runEnv runs name with args in dir, with env added to the environment,
// killed after limit (a hang fails), and returns its combined output.
func runEnv(limit time.Duration, dir string, env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return string(out), fmt.Errorf("%s %s: killed after %s (a hang): %w", filepath.Base(name), strings.Join(args, " "), limit, err)
	}
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w", filepath.Base(name), strings.Join(args, " "), err)
	}
	return string(out), nil
}

// compileIn builds src in dir into bin; skip when the toolchain lacks what
// the flags need (a sanitizer's runtime, libc++), with its message.
func compileIn(t *testing.T, dir, cc, bin, src string, flags ...string) {
	t.Helper()
	args := append([]string{"-pthread", "-I", dir, "-o", filepath.Join(dir, bin), filepath.Join(dir, src)}, flags...)
	if out, err := runLimited(2*time.Minute, dir, cc, args...); err != nil {
		if strings.Contains(out, "cannot find -l") || strings.Contains(out, "'barrier' file not found") || strings.Contains(out, "cannot find") && strings.Contains(out, "tsan") {
			t.Skipf("%s %s: the toolchain lacks a library: %s", filepath.Base(cc), strings.Join(flags, " "), firstLine(out))
		}
		t.Fatalf("%v\n%s", err, out)
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// The barrier property for every algorithm the header carries, many n,
// random delays (some long enough that the others sleep), both waits
// (spin first, and sleep quickly as for more threads than CPUs), and
// exactly one serial return per episode; built with gcc and clang.
func TestCBarrierProperty(t *testing.T) {
	counts := []int{1, 2, 3, 4, 5, 7, 8, 9, 16, 33}
	episodes := "200"
	if testing.Short() || !fullMatrix {
		counts = []int{1, 2, 3, 5, 9}
		episodes = "100"
	}
	eachCC(t, func(t *testing.T, cc, path string) {
		dir := headerDir(t, fixture(t))
		compileIn(t, dir, path, "prop", "prop.c", "-std=c11", "-O2")
		for _, a := range cAlgorithms() {
			for _, n := range counts {
				if cc == "clang" && n != 2 && n != 5 && n != 9 {
					continue // the same code: a few counts suffice
				}
				// Spinning first with many more threads than CPUs is
				// what init never chooses: only up to 5.
				blocks := []string{"1"}
				if n <= 5 {
					blocks = append(blocks, "0")
				}
				for _, block := range blocks {
					out, err := runLimited(time.Minute, dir, filepath.Join(dir, "prop"), a.Name, strconv.Itoa(n), episodes, block, strconv.Itoa(n))
					if err != nil || !strings.HasPrefix(out, "ok "+a.Name+" ") {
						t.Errorf("%s, %d threads, block %s: %v\n%s", a.Name, n, block, err, out)
					}
				}
			}
		}
		// The portable wait (no futex): a mutex and condition variable.
		compileIn(t, dir, path, "prop-portable", "prop.c", "-std=c11", "-O2", "-DBARRIERTUNE_NO_FUTEX")
		for _, a := range []string{"dissemination", "central", "mcs"} {
			out, err := runLimited(time.Minute, dir, filepath.Join(dir, "prop-portable"), a, "5", episodes, "0", "5")
			if err != nil || !strings.HasPrefix(out, "ok "+a+" ") {
				t.Errorf("portable wait, %s: %v\n%s", a, err, out)
			}
		}
	})
}

// ThreadSanitizer finds no race in the C barrier (every algorithm, both
// waits) nor in the C++ class, with gcc and clang.
func TestCBarrierThreadSanitizer(t *testing.T) {
	if testing.Short() || !fullMatrix {
		t.Skip("the sanitizer's builds run in the full C matrix (-tags cmatrix, run by .ci/run)")
	}
	for _, c := range []struct{ cc, cxx string }{{"gcc", "g++"}, {"clang", "clang++"}} {
		t.Run(c.cc, func(t *testing.T) {
			path := cTool(t, c.cc)
			dir := headerDir(t, fixture(t))
			compileIn(t, dir, path, "prop-tsan", "prop.c", "-std=c11", "-O1", "-g", "-fsanitize=thread")
			tsan := []string{"TSAN_OPTIONS=halt_on_error=1 exitcode=66"}
			prop := filepath.Join(dir, "prop-tsan")
			for i, a := range cAlgorithms() {
				n := strconv.Itoa(3 + i%5)
				block := strconv.Itoa(i % 2)
				out, err := runEnv(2*time.Minute, dir, tsan, prop, a.Name, n, "100", block, "1")
				if strings.Contains(out, "unexpected memory mapping") {
					t.Skipf("this kernel's address layout defeats ThreadSanitizer (vm.mmap_rnd_bits too high for this toolchain): %s", firstLine(out))
				}
				if err != nil || !strings.HasPrefix(out, "ok ") {
					t.Errorf("%s, %s threads: %v\n%s", a.Name, n, err, out)
				}
			}
			for _, r := range []struct {
				what, want string
				args       []string
			}{
				// The outnumbered central barrier: its per-CPU words, the
				// deposits and their flushes (blocking first, as init
				// chooses for more threads than CPUs).
				{"outnumbered central, 6 threads", "ok central 6", []string{"central", "6", "100", "1", "1"}},
				// A three-level hybrid with uneven, interleaved groups.
				{"hybrid, 11 threads", "ok hybrid 11", []string{"hybrid:central%3,tournament/4,binomial/9", "11", "100", "0", "1"}},
			} {
				if out, err := runEnv(2*time.Minute, dir, tsan, prop, r.args...); err != nil || !strings.HasPrefix(out, r.want) {
					t.Errorf("%s: %v\n%s", r.what, err, out)
				}
			}
			cxx := cTool(t, c.cxx)
			compileIn(t, dir, cxx, "cxx-tsan", "cxx.cpp", "-std=c++20", "-O1", "-g", "-fsanitize=thread")
			if out, err := runEnv(2*time.Minute, dir, tsan, filepath.Join(dir, "cxx-tsan")); err != nil || out != "ok\n" {
				t.Errorf("C++ class under ThreadSanitizer: %v\n%s", err, out)
			}
		})
	}
}

// The header builds without a warning under -Wall -Wextra -Werror
// -pedantic as C11 and C17 with gcc and clang, as C++20 with g++ and
// clang++ (TestCXXBarrier builds the C++ class so), in the debug and
// portable variants too, and with tables of this machine and of a
// hybrid; each program runs its barrier.
func TestCBarrierWarnings(t *testing.T) {
	strict := []string{"-Wall", "-Wextra", "-Werror", "-pedantic", "-O2"}
	cases := []struct {
		cc, src string
		flags   []string
	}{
		{"gcc", "warn.c", []string{"-std=c11"}},
		{"gcc", "warn.c", []string{"-std=c17", "-DBARRIERTUNE_DEBUG", "-DBARRIERTUNE_NO_FUTEX"}},
		{"clang", "warn.c", []string{"-std=c11"}},
		{"clang", "warn.c", []string{"-std=c17", "-DBARRIERTUNE_DEBUG", "-DBARRIERTUNE_NO_FUTEX", "-DBARRIERTUNE_NO_BALANCE"}},
		{"g++", "warn.c", []string{"-x", "c++", "-std=c++20"}},
		{"clang++", "warn.c", []string{"-x", "c++", "-std=c++20", "-stdlib=libc++"}},
	}
	for k, f := range []*results.File{fixture(t), thisMachine(t), hybridFile()} {
		dir := headerDir(t, f)
		for i, c := range cases {
			name := c.cc + " " + strings.Join(c.flags, " ")
			if k >= 1 && i != 0 && i != 4 {
				continue // the table's rows: C11 and C++20 suffice
			}
			if !fullMatrix && i != 0 && (k != 0 || i != 4) {
				continue // outside the full C matrix (-tags cmatrix): gcc's C11 on each table, g++'s C++20 on the fixture's
			}
			if k == 1 {
				name += " (this machine's table)"
			}
			if k == 2 {
				name += " (a hybrid's table)"
			}
			t.Run(name, func(t *testing.T) {
				path := cTool(t, c.cc)
				flags := append(slices.Clone(c.flags), strict...)
				// The source goes last: -x c++ applies to it.
				bin := fmt.Sprintf("warn%d", i)
				args := append(flags, "-pthread", "-I", dir, "-o", filepath.Join(dir, bin), filepath.Join(dir, c.src))
				if out, err := runLimited(2*time.Minute, dir, path, args...); err != nil {
					if strings.Contains(out, "'barrier' file not found") || strings.Contains(out, "cannot find -lc++") {
						t.Skipf("%s: libc++ not installed: %s", name, firstLine(out))
					}
					t.Fatalf("%v\n%s", err, out)
				}
				if out, err := runLimited(time.Minute, dir, filepath.Join(dir, bin)); err != nil {
					t.Errorf("%v\n%s", err, out)
				}
			})
		}
	}
}

// Bad input gets its error code at once, never a hang: n = 0, n above the
// cap, an unknown algorithm, an id outside 0..n-1; in a debug build also
// an id already waiting (EBUSY) and an uninitialised barrier. gcc always,
// clang in the full C matrix.
func TestCBarrierBadInput(t *testing.T) {
	for _, cc := range []string{"gcc", "clang"} {
		for _, debug := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s debug=%v", cc, debug), func(t *testing.T) {
				if cc != "gcc" && !fullMatrix {
					t.Skip("one compiler outside the full C matrix (-tags cmatrix, run by .ci/run)")
				}
				path := cTool(t, cc)
				dir := headerDir(t, fixture(t))
				flags := []string{"-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic"}
				if debug {
					flags = append(flags, "-DBARRIERTUNE_DEBUG")
				}
				compileIn(t, dir, path, "bad", "bad.c", flags...)
				out, err := runLimited(30*time.Second, dir, filepath.Join(dir, "bad"))
				if err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				want := []string{"init n=0: 22", "init n=cap+1: 22", "wait id=-1: 22", "wait id=n: 22"}
				if debug {
					want = append(want, "debug: wait id=0 while 0 waits: 16", "debug: wait on an uninitialised barrier: 22")
				}
				for _, w := range want {
					if !strings.Contains(out, w+" (want") {
						t.Errorf("no %q in:\n%s", w, out)
					}
				}
			})
		}
	}
}

// barriertune::barrier passes the checks of std::barrier's specified
// behaviours, built without a warning (-Wall -Wextra -Werror -pedantic,
// C++20) by g++ and by clang++ with libc++, and so does std::barrier
// itself (libstdc++ and libc++): the checks test what the standard says.
func TestCXXBarrier(t *testing.T) {
	cases := []struct {
		cxx   string
		flags []string
	}{
		{"g++", nil},
		{"clang++", []string{"-stdlib=libc++"}},
	}
	for _, c := range cases {
		for _, std := range []bool{false, true} {
			if std && (testing.Short() || !fullMatrix) {
				continue // the checks' own check runs in the full C matrix (-tags cmatrix)
			}
			if c.cxx != "g++" && !fullMatrix {
				continue // one compiler outside the full C matrix (-tags cmatrix)
			}
			name := c.cxx + " " + strings.Join(c.flags, " ")
			if std {
				name += " std::barrier"
			}
			t.Run(name, func(t *testing.T) {
				path := cTool(t, c.cxx)
				dir := headerDir(t, fixture(t))
				flags := append([]string{"-std=c++20", "-O2"}, c.flags...)
				if std {
					flags = append(flags, "-DUSE_STD")
				} else {
					flags = append(flags, "-Wall", "-Wextra", "-Werror", "-pedantic")
				}
				compileIn(t, dir, path, "cxx", "cxx.cpp", flags...)
				out, err := runLimited(time.Minute, dir, filepath.Join(dir, "cxx"))
				if err != nil || out != "ok\n" {
					t.Errorf("%v\n%s", err, out)
				}
			})
		}
	}
}

// A header exported on this machine uses the table here: the row for two
// threads (tournament, or a two-level hybrid, recorded as this machine's
// best) when two CPUs are allowed; the fixture's (another CPU) never: the
// safe default.
func TestCBarrierRecognisesMachine(t *testing.T) {
	path := cTool(t, "gcc")
	hybrid := thisMachine(t)
	hybrid.Threads[0].Best.Spec = results.Spec{Algorithm: "hybrid", Policy: "auto", Composition: "core:mcs,package:dissemination", LevelKeys: [][]int{{0, 1}, {0, 0}}}
	for _, c := range []struct {
		f          *results.File
		recognised bool
		alg        string
	}{{fixture(t), false, ""}, {thisMachine(t), true, "tournament"}, {hybrid, true, "hybrid"}} {
		dir := headerDir(t, c.f)
		compileIn(t, dir, path, "warn", "warn.c", "-std=c11", "-O2")
		out, err := runLimited(time.Minute, dir, filepath.Join(dir, "warn"))
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		want := "dissemination 1000 0\n"
		switch {
		case c.recognised && runtime.NumCPU() >= 2:
			want = c.alg + " 1000 1\n"
		case c.recognised:
			want = "central 1000 1\n" // two threads on one allowed CPU
		case runtime.NumCPU() < 2:
			want = "central 1000 0\n"
		}
		if out != want {
			t.Errorf("%s's header on this machine: %q, want %q", c.f.Machine.CPU.Name, out, want)
		}
	}
}

// thisMachine is a results file recorded on this machine (its CPU and
// CPU count) whose best for two threads is tournament.
func thisMachine(t *testing.T) *results.File {
	t.Helper()
	fp, err := os.Open("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no /proc/cpuinfo: %v", err)
	}
	defer fp.Close()
	n := 0
	sc := bufio.NewScanner(fp)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 0 && f[0] == "processor" {
			n++
		}
	}
	if n < 2 {
		t.Skipf("one CPU: no two-thread row to recognise")
	}
	cpu := hostCPU()
	if cpu.Vendor == "" {
		t.Skip("no CPUID here: the header recognises no machine")
	}
	return &results.File{
		Schema:  results.Schema,
		Machine: results.Machine{CPU: cpu, AllowedCPUs: fmt.Sprintf("0-%d", n-1)},
		Threads: []results.Threads{
			{Threads: 2, Complete: true, Best: &results.Choice{Spec: results.Spec{Algorithm: "tournament", Policy: "auto"}, CPUs: []int{0, 1}, Pinned: true, MedianNs: 60}},
		},
	}
}

// Above the allowed CPUs the C exports take the check's measurement on OS
// threads: measured for its own count, the nearest's for the others,
// whatever the goroutines' best.
func TestCExportsUseOSThreads(t *testing.T) {
	f := goroutineFile()
	f.Threads[1].OSThreads = &results.Choice{Spec: results.Spec{Algorithm: "combining", Policy: "park"}, CPUs: []int{0, 1, 0, 1}, MedianNs: 9000}
	var h bytes.Buffer
	if err := Write(&h, f, "c-header", Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{3, 3, 4, "substituted", "combining", 4, "park", 0, 2, barriertune_allowed_cpus, NAN}`,
		`{4, 4, 4, "measured", "combining", 4, "park", 0, 4, barriertune_cpus_4, 9000.0}`,
		`{5, INT_MAX, 4, "substituted", "combining", 4, "park", 0, 2, barriertune_allowed_cpus, NAN}`,
	} {
		if !strings.Contains(h.String(), want) {
			t.Errorf("c-header lacks the row %s:\n%s", want, h.String())
		}
	}
	// The c-barrier's time above the CPUs was taken with Go's OS threads,
	// and its comment says it is not a C figure.
	var c bytes.Buffer
	if err := Write(&c, f, "c-barrier", Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.String(), "9000.0 ns/episode as measured with Go's OS threads (not a C figure)") {
		t.Errorf("c-barrier's row for 4 threads on 2 CPUs does not say its time is not a C figure:\n%s", c.String())
	}
}

// TestCBarrierCrowded: a wait that spins out its bound on a machine with
// more runnable tasks than online CPUs plus one and than its threads plus
// one stops spinning at once (its barrier is held busy), on one reading;
// fewer tasks, or as many as its own threads, is no evidence; the CPU
// list's ranges are counted (0-1 is 2 CPUs, 0-3,8-11 is 8); a file that
// cannot be read or parsed is no evidence. gcc and clang.
func TestCBarrierCrowded(t *testing.T) {
	cases := []struct {
		loadavg, online, want string
	}{
		{"3.00 2.00 1.00 5/120 4242\n", "0-1\n", "busy"},  // two competitors beside the pair
		{"1.00 1.00 1.00 3/120 4242\n", "0-1\n", "quiet"}, // one more than the CPUs: not yet
		{"9.00 9.00 9.00 9/120 4242\n", "0-3,8-11\n", "quiet"},
		{"9.00 9.00 9.00 10/120 4242\n", "0-3,8-11\n", "busy"},
		{"garbage\n", "0-1\n", "quiet"},
		{"3.00 2.00 1.00 5/120 4242\n", "", "quiet"}, // no CPU count
	}
	for _, cc := range []string{"gcc", "clang"} {
		t.Run(cc, func(t *testing.T) {
			path := cTool(t, cc)
			dir := headerDir(t, fixture(t))
			root := filepath.Join(dir, "root")
			loadavg, online := filepath.Join(root, "proc", "loadavg"), filepath.Join(root, sysCPUOnline)
			mkdirs(t, loadavg, online)
			compileIn(t, dir, path, "crowded", "crowded.c", "-std=c11", "-O2", testRoot(root))
			for _, c := range cases {
				if err := os.WriteFile(loadavg, []byte(c.loadavg), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(online, []byte(c.online), 0o644); err != nil {
					t.Fatal(err)
				}
				out, err := runLimited(time.Minute, dir, filepath.Join(dir, "crowded"))
				if err != nil || strings.TrimSpace(out) != c.want {
					t.Errorf("loadavg %q, online %q: %q (%v), want %s", c.loadavg, c.online, out, err, c.want)
				}
			}
		})
	}
}

// TestCBarrierRecognisesNUMANodes: a table whose tree records a NUMANode
// level is this machine's only while the nodes online, taken within the
// online CPUs, are the recorded ones: fake node directories (built in with
// BARRIERTUNE_TEST_ROOT) with the same nodes, with
// offline CPUs in a node's list, with a node of memory alone, numbered
// apart, or with none readable, one unreadable or two overlapping
// (unknown, as in the Go lookup) keep the table; joined nodes give the
// safe default. gcc for C, g++ for the same code as C++.
func TestCBarrierRecognisesNUMANodes(t *testing.T) {
	gcc := cTool(t, "gcc")
	f := thisMachine(t)
	n := 0
	if _, err := fmt.Sscanf(f.Machine.AllowedCPUs, "0-%d", &n); err != nil || n < 1 {
		t.Fatalf("this machine's CPUs %q", f.Machine.AllowedCPUs)
	}
	half := (n + 1) / 2 // nodes 0-(half-1) and half-n
	lo, hi := fmt.Sprintf("0-%d", half-1), fmt.Sprintf("%d-%d", half, n)
	if half == 1 {
		lo = "0"
	}
	if half == n {
		hi = strconv.Itoa(n)
	}
	f.Machine.Tree = &results.Tree{CPUs: f.Machine.AllowedCPUs, Levels: []results.TreeLevel{
		{Type: "Package", Sets: []string{f.Machine.AllowedCPUs}},
		{Type: "NUMANode", Sets: []string{lo, hi}},
	}}
	dir := headerDir(t, f)
	all := f.Machine.AllowedCPUs
	// One build of each reads every case's tree: the test root is
	// rewritten between the runs.
	fake := filepath.Join(dir, "root")
	type build struct{ cc, bin string }
	builds := []build{{gcc, "numa"}}
	compileIn(t, dir, gcc, "numa", "warn.c", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", testRoot(fake))
	if p, err := exec.LookPath("g++"); err == nil && fullMatrix {
		// The same code as C++ (g++ builds a .c file as C++), in the
		// full C matrix (-tags cmatrix).
		compileIn(t, dir, p, "numaxx", "warn.c", "-std=c++20", "-O2", "-Wall", "-Wextra", "-Werror", testRoot(fake))
		builds = append(builds, build{p, "numaxx"})
	}
	for _, c := range []struct {
		name       string
		online     string
		nodes      map[string]string // node name -> cpulist; nil: no node directory
		recognised bool
	}{
		{"the recorded nodes", all, map[string]string{"node0": lo, "node1": hi}, true},
		{"offline CPUs listed in a node", all, map[string]string{"node0": lo, "node1": hi + ",900-903"}, true},
		{"a node of memory alone", all, map[string]string{"node0": lo, "node1": hi, "node2": ""}, true},
		{"no node directory: unknown", all, nil, true},
		{"the nodes joined", all, map[string]string{"node0": all}, false},
		{"the nodes numbered apart", all, map[string]string{"node0": lo, "node3": hi}, true},
		{"overlapping nodes: unknown, as in Go", all, map[string]string{"node0": lo, "node1": hi, "node2": "0"}, true},
		{"a node unreadable: unknown", all, map[string]string{"node0": lo, "node1": "garbage"}, true},
		{"a node outside the table after one unreadable", all, map[string]string{"node0": all, "node1": "0-1,"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.RemoveAll(fake); err != nil {
				t.Fatal(err)
			}
			online := filepath.Join(fake, sysCPUOnline)
			mkdirs(t, online)
			if err := os.WriteFile(online, []byte(c.online+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			writeNodes(t, filepath.Join(fake, sysNodeDir), c.nodes)
			want := map[bool]string{true: " 1\n", false: " 0\n"}[c.recognised]
			for _, b := range builds {
				out, err := runLimited(time.Minute, dir, filepath.Join(dir, b.bin))
				if err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				if !strings.HasSuffix(out, want) {
					t.Errorf("%s: %q, want recognised %v", b.bin, out, c.recognised)
				}
			}
		})
	}
}

// TestCBarrierNodesFromTree: the header carries the recorded tree's
// NUMANode level, or the tree's distinct objects for a tree without one,
// and nothing without a tree; a tree whose lists
// are not the check's (outside the tree's CPUs, unparsable) is refused
// before any header is written.
func TestCBarrierNodesFromTree(t *testing.T) {
	for _, c := range []struct {
		name string
		tree *results.Tree
		want []string
	}{
		{"two nodes", &results.Tree{CPUs: "0-7", Levels: []results.TreeLevel{{Type: "Package", Sets: []string{"0-7"}}, {Type: "NUMANode", Sets: []string{"0-3", "4-7"}}}},
			[]string{"#define BARRIERTUNE_MACHINE_NNODES 2\n", "#define BARRIERTUNE_MACHINE_NODES_EXACT 1\n", "#define BARRIERTUNE_MACHINE_NBITS 8\n", `barriertune_machine_nodes[BARRIERTUNE_MACHINE_NNODES] = {"0-3", "4-7"};`}},
		{"no NUMANode level: the objects", &results.Tree{CPUs: "0-7", Levels: []results.TreeLevel{{Type: "Package", Sets: []string{"0-7"}}, {Type: "L3Cache", Sets: []string{"0-3", "4-7"}}, {Type: "Core", Sets: []string{"0-1", "2-3", "4-5", "6-7"}}}},
			[]string{"#define BARRIERTUNE_MACHINE_NNODES 7\n", "#define BARRIERTUNE_MACHINE_NODES_EXACT 0\n", `barriertune_machine_nodes[BARRIERTUNE_MACHINE_NNODES] = {"0-7", "0-3", "4-7", "0-1", "2-3", "4-5", "6-7"};`}},
		{"no tree", nil, []string{"#define BARRIERTUNE_MACHINE_NNODES 0\n"}},
		{"a node outside the tree", &results.Tree{CPUs: "0-7", Levels: []results.TreeLevel{{Type: "NUMANode", Sets: []string{"0-3", "4-9"}}}}, nil},
		{"a list that is not one", &results.Tree{CPUs: "0-7", Levels: []results.TreeLevel{{Type: "NUMANode", Sets: []string{"0-3", `4-7"};`}}}}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := fixture(t)
			f.Machine.Tree = c.tree
			var b bytes.Buffer
			err := Write(&b, f, "c-barrier", Options{})
			if c.want == nil {
				if err == nil || !strings.Contains(err.Error(), "tree") {
					t.Fatalf("a tree the check never writes: err %v, want it refused", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			table, _, _ := strings.Cut(b.String(), "#ifndef BARRIERTUNE_NCHOICES")
			for _, w := range c.want {
				if !strings.Contains(table, w) {
					t.Errorf("the table lacks %q", w)
				}
			}
			if strings.Count(table, "BARRIERTUNE_MACHINE_NNODES ") != 1 {
				t.Errorf("the table defines BARRIERTUNE_MACHINE_NNODES %d times", strings.Count(table, "BARRIERTUNE_MACHINE_NNODES "))
			}
		})
	}
}

// The files the header reads, under its BARRIERTUNE_TEST_ROOT.
const (
	sysCPUOnline = "sys/devices/system/cpu/online"
	sysNodeDir   = "sys/devices/system/node"
)

// testRoot is the compiler flag that points every file the header reads
// under root.
func testRoot(root string) string { return `-DBARRIERTUNE_TEST_ROOT="` + root + `"` }

// mkdirs makes the directories of the files paths.
func mkdirs(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// The header reads top-down: its six parts in order, each once; init,
// wait and destroy declared, with their documentation, within the first
// 300 lines; every file it reads named once, under one test root; no
// /proc/cpuinfo (the CPUs online and the affinity say how many CPUs);
// and no measured figure in a comment (they belong in docs/lab).
func TestCBarrierReadsTopDown(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, fixture(t), "c-barrier", Options{}); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	last := -1
	for i, part := range []string{"1. The interface", "2. What the export writes: the catalog and the machine's table", "3. The algorithms", "4. The wait", "5. What the header reads from the system", "6. The C++ class"} {
		head := "/* ==== " + part + " ==== */"
		if strings.Count(h, head) != 1 {
			t.Errorf("part %d: %q appears %d times, want once", i+1, head, strings.Count(h, head))
			continue
		}
		if at := strings.Index(h, head); at < last {
			t.Errorf("part %d (%s) comes before part %d", i+1, part, i)
		} else {
			last = at
		}
	}
	lines := strings.Split(h, "\n")
	first := strings.Join(lines[:min(300, len(lines))], "\n")
	for _, fn := range []string{"int barriertune_barrier_init(", "int barriertune_barrier_wait(", "void barriertune_barrier_destroy("} {
		decl := "BARRIERTUNE_API " + fn
		if !strings.Contains(first, decl) {
			t.Errorf("%s is not declared within the first 300 lines", fn)
		}
		if strings.Count(h, decl) != 1 {
			t.Errorf("%s is declared %d times", fn, strings.Count(h, decl))
		}
	}
	if n := strings.Count(h, "/sys/devices/system/cpu/online"); n != 1 {
		t.Errorf("the header names the online CPUs' file %d times, want once", n)
	}
	if strings.Contains(h, "/proc/cpuinfo") {
		t.Error("the header reads /proc/cpuinfo")
	}
	for _, path := range []string{"/sys/devices/system/node", "/proc/self/cgroup", "/sys/fs/cgroup", "/proc/loadavg", "midr_el1"} {
		if n := strings.Count(h, path); n != 1 {
			t.Errorf("the header names %s %d times, want once", path, n)
		}
	}
	for _, l := range lines {
		if m := regexp.MustCompile(`^#ifndef (BARRIERTUNE_\w+)`).FindStringSubmatch(l); m != nil {
			switch m[1] {
			case "BARRIERTUNE_H", "BARRIERTUNE_NCHOICES", "BARRIERTUNE_TEST_ROOT", "BARRIERTUNE_YIELDS", "BARRIERTUNE_SETTLED_SPIN_NS":
			default:
				t.Errorf("%s: a macro a program may set that part 1 does not list", m[1])
			}
		}
	}
	if m := regexp.MustCompile(`[0-9]\.[0-9]+(-[0-9.]+)?x\b|[0-9]+ ns\b|[0-9]+-[0-9]+x\b`).FindString(cBarrierTemplate); m != "" {
		t.Errorf("a measured figure in the header's template: %q (figures go in docs/lab)", m)
	}
}

// hostCPU is this machine's CPU identity as a results file records it.
func hostCPU() results.CPUIdentity {
	fd, _ := results.HereFinder()
	return fd.Host.CPU
}
