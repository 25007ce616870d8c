//go:build cmatrix

package export

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCBarrierTargets builds the C barrier's property tests (prop.c and
// friends, header from the test's results file, an x86 machine's) for
// each sanitizer and target of the full C matrix and runs them, one
// subtest per build (go test -v names each; .ci/run shows them):
//
//   - asan+ubsan/{gcc,clang}: AddressSanitizer and UndefinedBehaviorSanitizer,
//     any report fatal, on every algorithm, both waits, and a hybrid;
//   - lsan/{gcc,clang}: LeakSanitizer on init/destroy cycles (cycles.c),
//     after checking that it reports a leak made on purpose;
//   - m32/{gcc,clang}: 32-bit x86 with a 64-bit time_t (-m32
//     -D_TIME_BITS=64), -Wall -Wextra -Werror and nothing but -pthread,
//     run natively or, where the kernel runs no 32-bit binaries, under
//     qemu-i386;
//   - aarch64/{gcc,clang,g++} and riscv64/{gcc,clang,g++}: cross builds,
//     strict as for -m32, run under qemu-user (the C++ class's conformance
//     program too).
//
// Each runs prop.c on every algorithm, sleepstress.c (no lost wake-up),
// sleepcpu.c (a sleeping waiter uses no CPU: on 32-bit targets a futex
// timeout read wrong spun) and warn.c where it applies. ThreadSanitizer's
// builds are TestCBarrierThreadSanitizer's and TestCXXConformance's.
func TestCBarrierTargets(t *testing.T) {
	t.Parallel()
	if !fullMatrix {
		t.Skip("the full C matrix only (-tags cmatrix)")
	}
	t.Run("asan+ubsan", func(t *testing.T) {
		for _, cc := range []string{"gcc", "clang"} {
			t.Run(cc, func(t *testing.T) {
				t.Parallel()
				tg := target{
					cc:    cTool(t, cc),
					flags: []string{"-std=c11", "-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"},
					env:   []string{"ASAN_OPTIONS=detect_leaks=1:abort_on_error=0", "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1"},
				}
				dir := headerDir(t, fixture(t))
				tg.build(t, dir, "prop", "prop.c")
				propRuns(t, tg, dir, true)
				tg.build(t, dir, "sleepstress", "sleepstress.c")
				sleepRuns(t, tg, dir, "2000")
				t.Logf("asan+ubsan/%s: prop (every algorithm, both waits, a hybrid), sleepstress: clean", cc)
			})
		}
	})
	t.Run("lsan", func(t *testing.T) {
		for _, cc := range []string{"gcc", "clang"} {
			t.Run(cc, func(t *testing.T) {
				t.Parallel()
				tg := target{cc: cTool(t, cc), flags: []string{"-std=c11", "-O1", "-g", "-fsanitize=leak"}, env: []string{"LSAN_OPTIONS=exitcode=23"}}
				dir := headerDir(t, fixture(t))
				tg.build(t, dir, "cycles", "cycles.c")
				// LeakSanitizer works here: a leak made on purpose is seen.
				out, err := tg.exec(time.Minute, dir, "cycles", "leak")
				if strings.Contains(out, "LeakSanitizer has encountered a fatal error") || strings.Contains(out, "does not work under ptrace") {
					t.Skipf("LeakSanitizer cannot run here: %s", firstLine(out))
				}
				if err == nil || !strings.Contains(out, "detected memory leaks") {
					t.Fatalf("LeakSanitizer missed the leak made on purpose (%v):\n%s", err, out)
				}
				out, err = tg.exec(time.Minute, dir, "cycles")
				if err != nil || !strings.HasPrefix(out, "ok ") || strings.Contains(out, "LeakSanitizer") {
					t.Errorf("init/destroy cycles: %v\n%s", err, out)
				}
				t.Logf("lsan/%s: %s", cc, strings.TrimSpace(out))
			})
		}
	})
	strict := []string{"-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"}
	t.Run("m32", func(t *testing.T) {
		for _, cc := range []string{"gcc", "clang"} {
			t.Run(cc, func(t *testing.T) {
				t.Parallel()
				flags := append([]string{"-m32", "-D_TIME_BITS=64", "-D_FILE_OFFSET_BITS=64"}, strict...)
				tg := target{cc: cTool(t, cc), flags: append(flags, m32Shim(t)...)}
				dir := headerDir(t, fixture(t))
				tg.build(t, dir, "warn", "warn.c")
				// This machine's kernel may run no 32-bit binaries (no IA32
				// emulation): then qemu-i386 runs them.
				if _, err := tg.exec(time.Minute, dir, "warn"); err != nil && strings.Contains(err.Error(), "exec format error") {
					q, lerr := exec.LookPath("qemu-i386")
					if lerr != nil {
						t.Skipf("built; this kernel runs no 32-bit x86 binaries and qemu-i386 is missing (.ci/run installs qemu-user)")
					}
					tg.run = []string{q}
				}
				targetRuns(t, "m32/"+cc, tg, dir)
			})
		}
	})
	for _, arch := range []string{"aarch64", "riscv64"} {
		t.Run(arch, func(t *testing.T) {
			triple := arch + "-linux-gnu"
			sysroot := "/usr/" + triple
			for _, cc := range []string{"gcc", "clang", "g++"} {
				t.Run(cc, func(t *testing.T) {
					t.Parallel()
					install := "gcc-" + triple + " g++-" + triple
					var tg target
					switch cc {
					case "gcc":
						tg = target{cc: lookTool(t, triple+"-gcc", install), flags: strict}
					case "clang":
						lookTool(t, triple+"-gcc", install) // clang takes its libc, crt files and libgcc
						tg = target{cc: cTool(t, "clang"), flags: append([]string{"--target=" + triple}, strict...)}
					case "g++":
						tg = target{cc: lookTool(t, triple+"-g++", install), flags: []string{"-std=c++20", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic"}}
					}
					if q, err := exec.LookPath("qemu-" + arch); err == nil {
						if _, err := os.Stat(sysroot); err == nil {
							tg.run = []string{q, "-L", sysroot}
						}
					}
					dir := headerDir(t, fixture(t))
					if cc == "g++" {
						tg.build(t, dir, "conform", "conform.cpp")
						if tg.run == nil {
							t.Skipf("built; qemu-%s or %s missing (.ci/run installs qemu-user)", arch, sysroot)
						}
						out, err := tg.exec(2*time.Minute, dir, "conform")
						if err != nil || out != "ok\n" {
							t.Errorf("the C++ class's conformance: %v\n%s", err, out)
						}
						t.Logf("%s/g++: conform.cpp %s: %s", arch, tg.runner(), strings.TrimSpace(out))
						return
					}
					tg.build(t, dir, "warn", "warn.c")
					if tg.run == nil {
						t.Skipf("built; qemu-%s or %s missing (.ci/run installs qemu-user)", arch, sysroot)
					}
					targetRuns(t, arch+"/"+cc, tg, dir)
				})
			}
		})
	}
}

// targetRuns builds the property programs for tg (warn.c is built) and
// runs them: warn.c, prop.c on every algorithm, sleepstress.c and
// sleepcpu.c.
func targetRuns(t *testing.T, name string, tg target, dir string) {
	t.Helper()
	for _, p := range []string{"prop", "sleepstress", "sleepcpu"} {
		tg.build(t, dir, p, p+".c")
	}
	out, err := tg.exec(time.Minute, dir, "warn")
	if err != nil {
		t.Errorf("warn: %v\n%s", err, out)
	}
	propRuns(t, tg, dir, false)
	sleepRuns(t, tg, dir, "2000")
	cpu, err := tg.exec(time.Minute, dir, "sleepcpu")
	if err != nil || !strings.HasPrefix(cpu, "ok") {
		t.Errorf("sleepcpu: %v\n%s", err, cpu)
	}
	flags := strings.Join(tg.flags, " ")
	if i := slices.Index(tg.flags, "-isystem"); i >= 0 && i+1 < len(tg.flags) {
		flags = strings.Replace(flags, tg.flags[i+1], "DIR-WITH-asm-LINK", 1)
	}
	t.Logf("%s: built with %s %s (and -pthread only), run %s: warn %q, prop on every algorithm, sleepstress; sleepcpu %s",
		name, filepath.Base(tg.cc), flags, tg.runner(), strings.TrimSpace(out), strings.TrimSpace(cpu))
}

// propRuns runs prop (built in dir) on every algorithm the header
// carries, 3 to 7 threads, with the wait that spins first and the one
// that sleeps at once (both for each algorithm when both), and on a
// three-level hybrid of 11 threads.
func propRuns(t *testing.T, tg target, dir string, both bool) {
	t.Helper()
	for i, a := range cAlgorithms() {
		n := strconv.Itoa(3 + i%5)
		blocks := []string{strconv.Itoa(i % 2)}
		if both {
			blocks = []string{"0", "1"}
		}
		for _, block := range blocks {
			out, err := tg.exec(time.Minute, dir, "prop", a.Name, n, "100", block, "1")
			if err != nil || !strings.HasPrefix(out, "ok "+a.Name+" ") {
				t.Errorf("prop %s, %s threads, block %s: %v\n%s", a.Name, n, block, err, out)
			}
		}
	}
	out, err := tg.exec(time.Minute, dir, "prop", "hybrid:central%3,tournament/4,binomial/9", "11", "100", "0", "1")
	if err != nil || !strings.HasPrefix(out, "ok hybrid 11") {
		t.Errorf("prop hybrid, 11 threads: %v\n%s", err, out)
	}
}

// sleepRuns runs sleepstress (built in dir): every wait sleeps, and a
// lost wake-up hangs it.
func sleepRuns(t *testing.T, tg target, dir, episodes string) {
	t.Helper()
	for _, a := range []string{"central", "dissemination"} {
		out, err := tg.exec(90*time.Second, dir, "sleepstress", a, "2", episodes)
		if err != nil || !strings.HasPrefix(out, "ok ") {
			t.Errorf("sleepstress %s: %v\n%s", a, err, out)
		}
	}
}
