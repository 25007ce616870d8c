package export

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/internal/catalog"
	"github.com/barriertune/barriertune/results"
)

// vars collects OMPEnv's variables by name (a name set twice fails).
func vars(t *testing.T, in OMPInput) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, l := range OMPEnv(in) {
		if l.Name == "" {
			continue
		}
		if _, dup := m[l.Name]; dup {
			t.Fatalf("%s set twice in %+v", l.Name, OMPEnv(in))
		}
		m[l.Name] = l.Value
	}
	return m
}

func seq(lo, hi int) []int {
	var v []int
	for i := lo; i <= hi; i++ {
		v = append(v, i)
	}
	return v
}

// TestWaitFollowsWhatTheWinnerDoes: spinning winners spin, parking and
// blocking ones block at once, auto spins about the block and wake-up
// cost, whatever its name says.
func TestWaitFollowsWhatTheWinnerDoes(t *testing.T) {
	two := []int{0, 1}
	for _, tc := range []struct {
		alg, policy string
		blockWake   float64
		want        Wait
		wantSpin    float64
		vars        map[string]string // "" means must be absent
	}{
		{"mcs", "spin", 0, WaitActive, 0, map[string]string{"OMP_WAIT_POLICY": "ACTIVE", "KMP_BLOCKTIME": "infinite", "GOMP_SPINCOUNT": "infinite"}},
		{"dissemination", "yield", 0, WaitActive, 0, map[string]string{"OMP_WAIT_POLICY": "ACTIVE"}},
		{"central", "park", 0, WaitPassive, 0, map[string]string{"OMP_WAIT_POLICY": "PASSIVE", "KMP_BLOCKTIME": "0", "GOMP_SPINCOUNT": "0"}},
		{"cond", "spin", 0, WaitPassive, 0, map[string]string{"OMP_WAIT_POLICY": "PASSIVE"}},
		{"channel", "auto", 0, WaitPassive, 0, map[string]string{"OMP_WAIT_POLICY": "PASSIVE"}},
		// auto: the recorded cost, bounded like AutoPolicy; 10 ns a libgomp spin.
		{"goroutine", "auto", 20e3, WaitBounded, 20e3, map[string]string{"OMP_WAIT_POLICY": "", "GOMP_SPINCOUNT": "2000", "KMP_BLOCKTIME": "1"}},
		{"mcs", "auto", 0, WaitBounded, 50e3, map[string]string{"OMP_WAIT_POLICY": "", "GOMP_SPINCOUNT": "5000", "KMP_BLOCKTIME": "1"}},
		{"mcs", "auto", 1e9, WaitBounded, 200e3, map[string]string{"GOMP_SPINCOUNT": "20000", "KMP_BLOCKTIME": "1"}},
		{"mcs", "auto", 100, WaitBounded, 5e3, map[string]string{"GOMP_SPINCOUNT": "500"}},
		{"mcs", "someday", 0, WaitDefault, 0, map[string]string{"OMP_WAIT_POLICY": "", "KMP_BLOCKTIME": "", "GOMP_SPINCOUNT": ""}},
	} {
		in := OMPInput{Choice: &results.Choice{CPUs: two, Pinned: true, Spec: results.Spec{Algorithm: tc.alg, Policy: tc.policy}}, Threads: 2, Allowed: two, BlockWakeNs: tc.blockWake}
		w, spin, why := WaitFor(in)
		if w != tc.want || spin != tc.wantSpin || why == "" {
			t.Errorf("%s/%s (block-wake %g): WaitFor = %d, %g, %q; want %d, %g", tc.alg, tc.policy, tc.blockWake, w, spin, why, tc.want, tc.wantSpin)
		}
		got := vars(t, in)
		for k, want := range tc.vars {
			if v, ok := got[k]; want == "" && ok || want != "" && v != want {
				t.Errorf("%s/%s: %s=%q (set %v), want %q", tc.alg, tc.policy, k, v, ok, want)
			}
		}
	}
}

// TestOversubscribedNeverSpins tries every algorithm under every policy
// (and an unknown one) at 1 to 4x the allowed CPUs: above the CPUs the
// threads never spin (libgomp blocks at once, libomp yields for at most
// 1 ms), are not bound, and libomp releases them from one thread.
func TestOversubscribedNeverSpins(t *testing.T) {
	policies := append(slices.Clone([]string{"auto", "spin", "yield", "park"}), "unknown")
	for _, alg := range append(catalog.Names(), "not-an-algorithm") {
		for _, p := range policies {
			for cpus := 1; cpus <= 4; cpus++ {
				allowed := seq(0, cpus-1)
				for n := 1; n <= 4*cpus; n++ {
					pinned := make([]int, n)
					for i := range pinned {
						pinned[i] = allowed[i%cpus]
					}
					for _, in := range []OMPInput{
						{Choice: &results.Choice{CPUs: pinned, Pinned: true, Spec: results.Spec{Algorithm: alg, Policy: p}}, Threads: n, Allowed: allowed, BlockWakeNs: 30e3},
						{Choice: &results.Choice{CPUs: pinned, Spec: results.Spec{Algorithm: alg, Policy: p}}, Threads: n, Allowed: allowed},
						// The allowed set unknown: the choice's distinct CPUs count.
						{Choice: &results.Choice{CPUs: pinned, Pinned: true, Spec: results.Spec{Algorithm: alg, Policy: p}}, Threads: n},
					} {
						v := vars(t, in)
						if n <= cpus {
							continue
						}
						if w, _, _ := WaitFor(in); w != WaitOversubscribed {
							t.Fatalf("%s/%s, %d threads on %d CPUs: wait %d, want oversubscribed", alg, p, n, cpus, w)
						}
						// libgomp never spins; libomp yields (it is oversubscribed) for 1 ms at most.
						if v["OMP_WAIT_POLICY"] != "PASSIVE" || v["KMP_BLOCKTIME"] != "1" || v["GOMP_SPINCOUNT"] != "0" {
							t.Fatalf("%s/%s, %d threads on %d CPUs: %v", alg, p, n, cpus, v)
						}
						if _, ok := v["OMP_PLACES"]; ok || v["OMP_PROC_BIND"] != "false" {
							t.Fatalf("%s/%s, %d threads on %d CPUs: bound (%v)", alg, p, n, cpus, v)
						}
						if v["KMP_PLAIN_BARRIER_PATTERN"] != "linear,linear" || v["KMP_FORKJOIN_BARRIER_PATTERN"] != "linear,linear" {
							t.Fatalf("%s/%s, %d threads on %d CPUs: libomp pattern %v, want linear (one thread wakes all)", alg, p, n, cpus, v)
						}
					}
				}
			}
		}
	}
}

// TestPlacesAreTheChoicesAllowedCPUs: places, when exported, are exactly
// the choice's CPUs in rank order (OMPEnv does not choose others), all of
// them allowed, with a place for every thread; a choice with a CPU
// outside the allowed set gets no places.
func TestPlacesAreTheChoicesAllowedCPUs(t *testing.T) {
	allowedSets := [][]int{{0, 1}, {1}, {2, 3, 6, 7}, seq(0, 7), {5, 9}}
	choices := [][]int{{0, 1}, {1, 0}, {1}, {3, 2}, {6, 7, 2, 3}, {0, 2, 4, 6}, {5, 9}, {9, 5, 9, 5}, {4}}
	for _, allowed := range allowedSets {
		for _, cpus := range choices {
			for n := 1; n <= 6; n++ {
				in := OMPInput{Choice: &results.Choice{CPUs: cpus, Pinned: true, Spec: results.Spec{Algorithm: "mcs", Policy: "spin"}}, Threads: n, Allowed: allowed}
				v := vars(t, in)
				places, ok := v["OMP_PLACES"]
				inside := subset(cpus, allowed)
				want := inside && n <= len(allowed) && n <= len(cpus)
				if ok != want {
					t.Errorf("choice %v, %d threads, allowed %v: places %q (exported %v), want exported %v", cpus, n, allowed, places, ok, want)
					continue
				}
				if !ok {
					if v["OMP_PROC_BIND"] != "false" {
						t.Errorf("choice %v, %d threads, allowed %v: no places but OMP_PROC_BIND=%q", cpus, n, allowed, v["OMP_PROC_BIND"])
					}
					continue
				}
				var got []int
				for _, p := range strings.Split(places, ",") {
					cpu, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(p, "{"), "}"))
					if err != nil {
						t.Fatalf("place %q: %v", p, err)
					}
					if !slices.Contains(allowed, cpu) {
						t.Errorf("place {%d} outside the allowed CPUs %v", cpu, allowed)
					}
					got = append(got, cpu)
				}
				if !slices.Equal(got, cpus) || v["OMP_PROC_BIND"] != "close" {
					t.Errorf("choice %v, allowed %v: places %v, bind %q; want the choice's CPUs, close", cpus, allowed, got, v["OMP_PROC_BIND"])
				}
			}
		}
	}
}

// TestChainGuardsOversubscription sources the multi-count export in sh:
// a count whose nearest measured block spins (8 threads, policy yield) but
// exceeds the file's 8 allowed CPUs must end up passive and unbound, and a
// count with more threads than its block's places unbound.
func TestChainGuardsOversubscription(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	f := fixture(t)
	var b bytes.Buffer
	if err := Write(&b, f, "omp-env", Options{}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "omp.env")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n                             int
		policy, bind, places          string
		blocktime, spincount, pattern string
	}{
		{2, "ACTIVE", "close", "{0},{1}", "infinite", "infinite", "tree,tree"},
		{4, "ACTIVE", "close", "{0},{2},{4},{6}", "infinite", "infinite", "tree,linear"},
		// 5 takes 4's block: it fits the CPUs (still spins) but not the places.
		{5, "ACTIVE", "false", "", "infinite", "infinite", "tree,linear"},
		{8, "ACTIVE", "close", "{0},{1},{2},{3},{4},{5},{6},{7}", "infinite", "infinite", "hyper,hyper"},
		{9, "PASSIVE", "false", "", "1", "0", "linear,linear"},
		{11, "PASSIVE", "false", "", "1", "0", "linear,linear"},
		{40, "PASSIVE", "false", "", "1", "0", "linear,linear"},
	} {
		cmd := exec.Command(sh, "-c", `. "$1" && printf '%s|%s|%s|%s|%s|%s\n' "$OMP_WAIT_POLICY" "$OMP_PROC_BIND" "${OMP_PLACES-}" "$KMP_BLOCKTIME" "$GOMP_SPINCOUNT" "$KMP_PLAIN_BARRIER_PATTERN"`, "sh", file)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "OMP_NUM_THREADS=" + strconv.Itoa(tc.n)}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("sh: %v\n%s", err, out)
		}
		want := strings.Join([]string{tc.policy, tc.bind, tc.places, tc.blocktime, tc.spincount, tc.pattern}, "|")
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("OMP_NUM_THREADS=%d: got %s, want %s", tc.n, got, want)
		}
	}
}

// TestOMPEnvUnsetThreads (issue 26): without OMP_NUM_THREADS the export
// chose the block of the largest measured count (16) but left the runtime
// its own default (one thread per CPU, 8): it now picks the block for one
// thread per allowed CPU and exports that count. A file of one count has
// no `if true` chain.
func TestOMPEnvUnsetThreads(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	f := fixture(t)
	var b bytes.Buffer
	if err := Write(&b, f, "omp-env", Options{}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "omp.env")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sh, "-c", `. "$1" && printf '%s|%s|%s\n' "$OMP_NUM_THREADS" "$OMP_WAIT_POLICY" "${OMP_PLACES-}"`, "sh", file)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sh: %v\n%s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), "8|ACTIVE|{0},{1},{2},{3},{4},{5},{6},{7}"; got != want {
		t.Errorf("OMP_NUM_THREADS unset: got %s, want %s", got, want)
	}
	one := *f
	one.Threads = f.Threads[1:2]
	b.Reset()
	if err := Write(&b, &one, "omp-env", Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "if true") || strings.Contains(b.String(), "\nfi\n") && !strings.Contains(b.String(), "\nif [") {
		t.Errorf("one count wraps its block in a chain:\n%s", b.String())
	}
}
