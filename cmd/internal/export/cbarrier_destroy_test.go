package export

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Destroy-and-free right after the serial return, while the others may
// still be leaving their waits (one partner is late, so they sleep), is
// AddressSanitizer-clean: destroy waits until every thread that entered a
// wait has left it. gcc always, clang in the full C matrix.
func TestCBarrierDestroyAfterSerial(t *testing.T) {
	iters := "100"
	if fullMatrix {
		iters = "400"
	}
	eachCC(t, func(t *testing.T, cc, path string) {
		dir := headerDir(t, fixture(t))
		compileIn(t, dir, path, "destroy", "destroy.c", "-std=c11", "-O1", "-g", "-fsanitize=address", "-fno-omit-frame-pointer", "-lm")
		for _, n := range []string{"2", "3", "5"} {
			out, err := runLimited(2*time.Minute, dir, filepath.Join(dir, "destroy"), iters, n)
			if err != nil || !strings.HasPrefix(out, "ok ") || strings.Contains(out, "AddressSanitizer") {
				t.Errorf("%s threads: %v\n%s", n, err, out)
			}
		}
	})
}

// Destroy beside participants whose partner never comes waits without
// burning a CPU: over a second the whole process (two barriers, each with
// two waiters and a destroy) uses under 5% of one CPU (a resource bound,
// not a speed: destroys that yield in a loop use up to two CPUs; naps,
// a small fraction of one; docs/lab has the figures). A BARRIERTUNE_DEBUG build
// reports each destroy that waited a second, naming the ids still inside.
// gcc always, clang in the full C matrix.
func TestCBarrierDestroyWaitsAsleep(t *testing.T) {
	eachCC(t, func(t *testing.T, cc, path string) {
		dir := headerDir(t, fixture(t))
		compileIn(t, dir, path, "destroywait", "destroywait.c", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-DBARRIERTUNE_DEBUG")
		out, err := runLimited(time.Minute, dir, filepath.Join(dir, "destroywait"))
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var pct float64
		found := false
		for _, l := range strings.Split(out, "\n") {
			if _, err := fmt.Sscanf(l, "cpu %g", &pct); err == nil {
				found = true
			}
		}
		if !found {
			t.Fatalf("output %q: no cpu line", out)
		}
		t.Logf("%s: the process used %.2f%% of a CPU over a second of destroys waiting", cc, pct)
		if pct >= 5 {
			t.Errorf("destroy beside a waiter whose partner never comes used %.1f%% of a CPU over a second, want under 5%%", pct)
		}
		if got := strings.Count(out, "has waited 1 s for participants still inside barriertune_barrier_wait: ids 1, 2;"); got != 2 {
			t.Errorf("the debug build's destroys reported %d times naming ids 1, 2, want 2:\n%s", got, out)
		}
	})
}
