//go:build cmatrix

package export

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestCXXConformance runs barriertune::barrier through conform.cpp, a
// conformance program written from what LLVM libc++'s [thread.barrier]
// tests check (see the program), with g++ and libstdc++ and with clang++
// and libc++, one subtest per build:
//
//   - conformance: -Wall -Wextra -Werror -pedantic, every check over zeroed
//     and over 0xAB-filled storage, the two runs agreeing; the same build
//     (asserts on) stops at arrive(0) and at an update above the
//     arrivals still expected (libc++'s assert.arrive);
//   - std::barrier: the same checks pass on the library's own barrier, so
//     they test what the standard says;
//   - asan+ubsan, tsan: the checks under AddressSanitizer and
//     UndefinedBehaviorSanitizer, and under ThreadSanitizer;
//   - nothrow completion: a completion not declared noexcept is refused
//     at compile time, and with BARRIERTUNE_ALLOW_THROWING_COMPLETION one
//     that throws ends the program instead of hanging the others;
//   - valgrind (g++): a short run over storage never written, so that a
//     member read before the constructor sets it is reported.
func TestCXXConformance(t *testing.T) {
	t.Parallel()
	if !fullMatrix {
		t.Skip("the full C matrix only (-tags cmatrix)")
	}
	strict := []string{"-std=c++20", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic"}
	for _, c := range []struct {
		cxx string
		lib []string
	}{{"g++", nil}, {"clang++", []string{"-stdlib=libc++"}}} {
		t.Run(c.cxx, func(t *testing.T) {
			path := cTool(t, c.cxx)
			dir := headerDir(t, fixture(t))
			t.Run("conformance", func(t *testing.T) {
				t.Parallel()
				tg := target{cc: path, flags: append(append([]string{}, strict...), c.lib...)}
				tg.build(t, dir, "conform", "conform.cpp")
				out, err := tg.exec(2*time.Minute, dir, "conform")
				if err != nil || out != "ok\n" {
					t.Errorf("%v\n%s", err, out)
				}
				for _, bad := range []string{"arrive0", "arrive-over"} {
					out, err := tg.exec(time.Minute, dir, "conform", bad)
					if err == nil || strings.Contains(out, "returned") || strings.Contains(err.Error(), "killed after") {
						t.Errorf("%s without NDEBUG: %v, want the program stopped by the header's assert\n%s", bad, err, out)
					}
				}
				t.Logf("%s conformance: every check over 0x00 and 0xAB storage; arrive(0) and arrive(10) of 5 stop the program", c.cxx)
				if c.cxx != "g++" {
					return
				}
				vg, err := exec.LookPath("valgrind")
				if err != nil {
					t.Log("valgrind not installed (.ci/run installs it): the run over storage never written is left out")
					return
				}
				vt := target{run: []string{vg, "-q", "--error-exitcode=3"}}
				out, err = vt.exec(2*time.Minute, dir, "conform", "fresh")
				if err != nil || strings.Contains(out, "uninitialised") || !strings.HasSuffix(out, "ok\n") {
					t.Errorf("under valgrind over storage never written: %v\n%s", err, out)
				}
				t.Logf("%s valgrind: over storage never written: no uninitialised read", c.cxx)
			})
			t.Run("std::barrier", func(t *testing.T) {
				t.Parallel()
				tg := target{cc: path, flags: append(append([]string{"-DUSE_STD"}, strict...), c.lib...)}
				tg.build(t, dir, "conform-std", "conform.cpp")
				if out, err := tg.exec(2*time.Minute, dir, "conform-std"); err != nil || out != "ok\n" {
					t.Errorf("the checks on std::barrier itself: %v\n%s", err, out)
				}
			})
			t.Run("asan+ubsan", func(t *testing.T) {
				t.Parallel()
				tg := target{
					cc:    path,
					flags: append([]string{"-std=c++20", "-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"}, c.lib...),
					env:   []string{"ASAN_OPTIONS=detect_leaks=1", "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1"},
				}
				tg.build(t, dir, "conform-asan", "conform.cpp")
				if out, err := tg.exec(2*time.Minute, dir, "conform-asan"); err != nil || out != "ok\n" {
					t.Errorf("%v\n%s", err, out)
				}
			})
			t.Run("tsan", func(t *testing.T) {
				t.Parallel()
				tg := target{
					cc:    path,
					flags: append([]string{"-std=c++20", "-O1", "-g", "-fsanitize=thread"}, c.lib...),
					env:   []string{"TSAN_OPTIONS=halt_on_error=1 exitcode=66"},
				}
				tg.build(t, dir, "conform-tsan", "conform.cpp")
				out, err := tg.exec(2*time.Minute, dir, "conform-tsan")
				if strings.Contains(out, "unexpected memory mapping") {
					t.Skipf("this kernel's address layout defeats ThreadSanitizer: %s", firstLine(out))
				}
				if err != nil || out != "ok\n" {
					t.Errorf("%v\n%s", err, out)
				}
			})
			t.Run("nothrow completion", func(t *testing.T) {
				t.Parallel()
				syntax := target{cc: path, flags: append([]string{"-std=c++20", "-fsyntax-only", "-DTHROWING_COMPLETION"}, c.lib...)}
				args := append([]string{"-I", dir, dir + "/conform.cpp"}, syntax.flags...)
				out, err := runLimited(2*time.Minute, dir, path, args...)
				if err == nil || !strings.Contains(out, "nothrow") {
					t.Errorf("a completion not declared noexcept: %v, want a compile error that says nothrow\n%s", err, out)
				}
				tg := target{cc: path, flags: append([]string{"-std=c++20", "-O1", "-DTHROWING_COMPLETION", "-DBARRIERTUNE_ALLOW_THROWING_COMPLETION"}, c.lib...)}
				tg.build(t, dir, "conform-throws", "conform.cpp")
				out, err = tg.exec(time.Minute, dir, "conform-throws", "throws")
				if err == nil || strings.Contains(err.Error(), "killed after") || strings.Contains(out, "went on") {
					t.Errorf("a completion that throws: %v, want the program ended (std::terminate)\n%s", err, out)
				}
			})
		})
	}
}
