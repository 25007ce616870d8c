package export

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/ompcheck"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/results"
)

// compile builds a C program with cc and the given flags, skipping when
// there is no C compiler.
func compile(t *testing.T, cc string, dir, src string, flags ...string) string {
	t.Helper()
	path, err := exec.LookPath(cc)
	if err != nil {
		t.Skipf("no %s on PATH: cannot test the export with a real client", cc)
	}
	bin := filepath.Join(dir, "prog")
	if err := os.WriteFile(filepath.Join(dir, "prog.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{}, flags...), "-o", bin, filepath.Join(dir, "prog.c"))
	if out, err := exec.Command(path, args...).CombinedOutput(); err != nil {
		if slices.Contains(flags, "-fopenmp") && (strings.Contains(string(out), "omp.h") || strings.Contains(string(out), "-lomp") || strings.Contains(string(out), "-lgomp")) {
			t.Skipf("%s has no OpenMP support here (libomp-dev for clang): %s", cc, out)
		}
		t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
	}
	return bin
}

// TestCHeaderCompilesAndLooksUp compiles a C99 program with the header
// (strict warnings as errors) and checks what barriertune_lookup returns
// for every count from 0 to 40 against results.Selector.Select, the rule
// of barriers.Auto, show and the other exports (formerly the header took
// the nearest measured count's row where they chose goroutine, round-robin,
// for more threads than CPUs).
func TestCHeaderCompilesAndLooksUp(t *testing.T) {
	f := fixture(t)
	sel, err := f.Selector()
	if err != nil {
		t.Fatal(err)
	}
	for _, allowed := range []cpuset.Set{sel.CPUs()} {
		dir := t.TempDir()
		var h bytes.Buffer
		if err := Write(&h, f, "c-header", Options{Allowed: allowed}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "barriertune.h"), h.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		flags := []string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", dir}
		// Including the header without using it must not warn either.
		compile(t, "cc", dir, "#include \"barriertune.h\"\nint main(void) { return 0; }\n", flags...)
		bin := compile(t, "cc", dir, `#include <math.h>
#include <stdio.h>
#include "barriertune.h"
int main(void)
{
	int n, i;
	for (n = 0; n <= 40; n++) {
		const struct barriertune_choice *c = barriertune_lookup(n);
		if (c == NULL) {
			printf("%d none\n", n);
			continue;
		}
		printf("%d %d %s %s %d %s %d", n, c->measured_threads, c->rule, c->algorithm, c->fan_in, c->policy, c->pinned);
		if (isnan(c->median_ns))
			printf(" none");
		else
			printf(" %.1f", c->median_ns);
		for (i = 0; i < n; i++)
			printf("%s%d", i ? "," : " ", c->cpus[i % c->ncpus]);
		printf("\n");
	}
	return 0;
}
`, flags...)
		out, err := exec.Command(bin).Output()
		if err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		want.WriteString("0 none\n")
		for n := 1; n <= 40; n++ {
			s, err := sel.Select(n, allowed)
			if err != nil {
				t.Fatal(err)
			}
			s = forThreads(f, s, allowed.Len(), false) // what a C program can run
			pinned := "1"
			if s.Rule == results.RuleOversubscribed || cpuset.Placement(s.CPUs).Oversubscribed() {
				pinned = "0"
			}
			c := &results.Choice{Spec: results.Spec{Algorithm: s.Algorithm, FanIn: s.FanIn}}
			line := strings.Join([]string{strconv.Itoa(n), strconv.Itoa(s.From), s.Rule, s.Algorithm, strconv.Itoa(fanIn(c)), s.Policy, pinned,
				"none", joinInts(s.CPUs)}, " ")
			if s.MedianNs > 0 {
				line = strings.Replace(line, " none ", " "+strconv.FormatFloat(s.MedianNs, 'f', 1, 64)+" ", 1)
			}
			want.WriteString(line + "\n")
		}
		if string(out) != want.String() {
			t.Errorf("inside %s: C lookup printed:\n%s\nwant (Select):\n%s", allowed, out, want.String())
		}
		if !strings.Contains(string(out), "\n9 16 substituted central 0 auto 0 none ") {
			t.Errorf("inside %s: no oversubscribed row:\n%s", allowed, out)
		}
	}
	dir := t.TempDir()
	flags := []string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", dir}

	// An empty table compiles too and looks nothing up.
	var e bytes.Buffer
	if err := Write(&e, &results.File{}, "c-header", Options{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "barriertune.h"), e.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := compile(t, "cc", dir, "#include \"barriertune.h\"\nint main(void) { return barriertune_lookup(4) != NULL; }\n", flags...)
	if err := exec.Command(bin).Run(); err != nil {
		t.Errorf("empty table: lookup returned an entry (%v)", err)
	}
}

// TestOMPEnvWithLibgomp compiles an OpenMP program with gcc -fopenmp and
// runs it in a shell that sourced the omp-env export of places measured
// faster for both runtimes: the runtime must see the exported places (one
// per thread, in rank order) and close binding,
// and each thread must run on its place's CPU.
func TestOMPEnvWithLibgomp(t *testing.T) {
	allowed, err := osal.Allowed()
	if err != nil {
		t.Skipf("cannot read the allowed CPUs: %v", err)
	}
	cpus := allowed.Members()
	if len(cpus) > 2 {
		cpus = cpus[:2]
	}
	slices.Reverse(cpus) // not the runtime's default order
	f := &results.File{Schema: results.Schema, Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Threads: []results.Threads{
		{Threads: len(cpus), Best: &results.Choice{CPUs: cpus, Pinned: true, MedianNs: 100, Spec: results.Spec{Algorithm: "mcs", Policy: "spin"}}},
	}}
	// Places in rank order, as if measured faster for both runtimes.
	places := make([]string, len(cpus))
	for i, c := range cpus {
		places[i] = "{" + strconv.Itoa(c) + "}"
	}
	best := []string{"OMP_PLACES=" + strings.Join(places, ","), "OMP_PROC_BIND=close"}
	f.Machine.AllowedCPUs = allowed.String()
	f.OpenMP = &results.OpenMP{Runtimes: []results.OpenMPRuntime{
		{Name: ompcheck.LibGOMP, Counts: []results.OpenMPCount{{Threads: len(cpus), Best: best}}},
		{Name: ompcheck.LibOMP, Counts: []results.OpenMPCount{{Threads: len(cpus), Best: best}}},
	}}
	dir := t.TempDir()
	var env bytes.Buffer
	if err := Write(&env, f, "omp-env", Options{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "omp.env"), env.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	compile(t, "gcc", dir, `#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
int main(void)
{
	printf("bind %d places %d\n", (int)omp_get_proc_bind(), omp_get_num_places());
	#pragma omp parallel
	{
		#pragma omp barrier
		#pragma omp critical
		printf("thread %d place %d cpu %d\n", omp_get_thread_num(), omp_get_place_num(), sched_getcpu());
	}
	return 0;
}
`, "-fopenmp", "-std=c99")
	cmd := exec.Command("sh", "-c", ". ./omp.env && exec ./prog")
	cmd.Dir = dir
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "OMP_") || strings.HasPrefix(kv, "GOMP_") || strings.HasPrefix(kv, "KMP_")
	}), "OMP_NUM_THREADS="+strconv.Itoa(len(cpus)))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("OpenMP program: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	// omp_proc_bind_close is 3.
	if want := "bind 3 places " + strconv.Itoa(len(cpus)); lines[0] != want {
		t.Fatalf("runtime saw %q, want %q (env:\n%s)", lines[0], want, env.String())
	}
	seen := 0
	for _, l := range lines[1:] {
		var th, place, cpu int
		if _, err := fmt.Sscanf(l, "thread %d place %d cpu %d", &th, &place, &cpu); err != nil {
			t.Fatalf("bad line %q: %v", l, err)
		}
		if place != th || cpu != cpus[th] {
			t.Errorf("thread %d on place %d, CPU %d; want place %d, CPU %d", th, place, cpu, th, cpus[th])
		}
		seen++
	}
	if seen != len(cpus) {
		t.Errorf("%d threads reported, want %d:\n%s", seen, len(cpus), out)
	}
}

// displayed reads what an OpenMP runtime prints under
// OMP_DISPLAY_ENV=verbose: libgomp's "  NAME = 'VALUE'" and libomp's
// "  [host] NAME='VALUE'" lines.
func displayed(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "[host]"))
		name, value, ok := strings.Cut(l, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != "" {
			continue
		}
		m[name] = strings.Trim(strings.TrimSpace(value), "'")
	}
	return m
}

// TestOMPEnvParsesInRuntimes: every setting the check tries
// (ompcheck.Candidates, at a count with a CPU per thread and one above
// the CPUs), written by the omp-env export as if measured faster for both
// runtimes, is accepted by the runtime that reads it: an OpenMP program
// built with gcc (libgomp) or clang (libomp), run with the export sourced
// under OMP_DISPLAY_ENV=verbose, prints no warning and shows the values
// (libomp's KMP_ variables, libgomp's GOMP_SPINCOUNT, both runtimes'
// OMP_PROC_BIND).
func TestOMPEnvParsesInRuntimes(t *testing.T) {
	allowed, err := osal.Allowed()
	if err != nil {
		t.Skipf("cannot read the allowed CPUs: %v", err)
	}
	src := `#include <omp.h>
#include <stdio.h>
int main(void)
{
	int n = 0;
	#pragma omp parallel
	{
		#pragma omp barrier
		#pragma omp master
		n = omp_get_num_threads();
	}
	printf("threads %d\n", n);
	return 0;
}
`
	ncpu := allowed.Len()
	for _, rt := range ompcheck.Toolchains() {
		t.Run(rt.Runtime, func(t *testing.T) {
			dir := t.TempDir()
			compile(t, rt.Compiler, dir, src, "-fopenmp")
			for _, threads := range []int{min(2, ncpu), 2 * ncpu} {
				for _, c := range ompcheck.Candidates(rt.Runtime, threads, allowed.String(), ncpu) {
					best := []string(c)
					f := &results.File{Schema: results.Schema, Machine: results.Machine{AllowedCPUs: allowed.String()},
						Threads: []results.Threads{{Threads: threads, Best: &results.Choice{CPUs: make([]int, threads), Spec: results.Spec{Algorithm: "central", Policy: "auto"}}}},
						OpenMP: &results.OpenMP{Runtimes: []results.OpenMPRuntime{
							{Name: ompcheck.LibGOMP, Counts: []results.OpenMPCount{{Threads: threads, Best: best}}},
							{Name: ompcheck.LibOMP, Counts: []results.OpenMPCount{{Threads: threads, Best: best}}},
						}}}
					var env bytes.Buffer
					if err := Write(&env, f, "omp-env", Options{Threads: threads}); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(dir, "omp.env"), env.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					cmd := exec.Command("sh", "-c", ". ./omp.env && exec ./prog")
					cmd.Dir = dir
					cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
						return strings.HasPrefix(kv, "OMP_") || strings.HasPrefix(kv, "GOMP_") || strings.HasPrefix(kv, "KMP_")
					}), "OMP_DISPLAY_ENV=verbose")
					out, err := cmd.CombinedOutput()
					if err != nil {
						t.Fatalf("%s at %d threads: %v\n%s", c, threads, err, out)
					}
					text := string(out)
					if strings.Contains(text, "Warning") || strings.Contains(text, "Invalid") {
						t.Errorf("%s at %d threads: %s complained:\n%s", c, threads, rt.Runtime, text)
					}
					if !strings.Contains(text, "threads "+strconv.Itoa(threads)+"\n") {
						t.Errorf("%s: the program did not run %d threads:\n%s", c, threads, text)
					}
					shown := displayed(text)
					for _, kv := range c.For(rt.Runtime) {
						name, want, _ := strings.Cut(kv, "=")
						got, ok := shown[name]
						if name == "OMP_PLACES" || name == "KMP_AFFINITY" || name == "GOMP_CPU_AFFINITY" {
							continue // shown as the places' list, or not at all (accepted: no warning above)
						}
						if !ok {
							t.Errorf("%s: %s did not display %s:\n%s", c, rt.Runtime, name, text)
							continue
						}
						if want == "infinite" {
							want = map[string]string{"GOMP_SPINCOUNT": "18446744073709551615", "KMP_BLOCKTIME": "2147483647"}[name]
						}
						if !strings.EqualFold(strings.TrimSpace(got), want) && !strings.HasPrefix(strings.ToLower(got), strings.ToLower(want)+",") && !(name == "OMP_PROC_BIND" && strings.HasPrefix(strings.ToLower(got), strings.ToLower(want))) {
							t.Errorf("%s: %s shows %s=%q, exported %q", c, rt.Runtime, name, got, want)
						}
					}
				}
			}
		})
	}
}
