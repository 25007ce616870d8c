// Command ompbench measures what barriertune's OpenMP export does to the
// real OpenMP runtimes: the check's OpenMP loops
// (cmd/internal/ompcheck/csrc/omploop.c; -shape barrier, the plain
// barrier loop, or stencil, 256 points per thread and a barrier per step)
// built with gcc -fopenmp (GNU libgomp) and clang -fopenmp (LLVM libomp)
// run under the runtime's defaults and under the environment
// `barriertune omp-run` gives a program of that runtime at each thread
// count (OMP_NUM_THREADS set when the program starts), in one
// interleaved run: every round takes the comparisons (a runtime at a
// count, defaults against export) in a shuffled order, and runs each
// comparison's two sides back to back, -runs times each in ABBA order
// (default, export, export, default; the reverse in the next round), so
// that load or a host state that comes and goes hits both sides alike.
// A side's time in a round is the geometric mean of its runs.
// It prints the medians and the ratios (export over default) as a
// Markdown table; a row whose export sets nothing the runtime reads says
// so, and calls its two sides the same (the same program in the same
// environment cannot be slower; its ratio is the noise of two runs of one
// thing, printed beside). With
// -agree it then times every setting the results file records in 3 runs
// of 0.5 s and prints the recorded time over their median. The load
// (uptime's) is printed before and after.
//
// The lab note's figures:
//
//	go run ./cmd/scripts/ompbench -threads 2,3,4,8 -rounds 5 -agree -keep /tmp/omp-a.json
//	go run ./cmd/scripts/ompbench -threads 2,4,8 -rounds 7 -shape stencil -results /tmp/omp-a.json
//	go run ./cmd/scripts/ompbench -threads 2,3,4,8 -rounds 7 -shape stencil -before /tmp/omp-a.json -keep /tmp/omp-b.json
//	go run ./cmd/scripts/ompbench -threads 2,3,4,8 -rounds 5 -budget 20s
//
// Run it from the module root:
//
//	go run ./cmd/scripts/ompbench
//
// Without -results it first runs a short check for the thread counts
// (barriertune check --threads ... --budget ...) into a temporary
// directory, so the export is this machine's. A runtime whose compiler or
// OpenMP library is missing is skipped with the reason. Every child
// process runs under a timeout and is killed by its pid when it overruns.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/ompcheck"
	"github.com/barriertune/barriertune/cmd/scripts/internal/lab"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/results"
)

func main() { lab.Main("ompbench", run) }

// config is one cell of the table: a runtime at a thread count, under its
// defaults or under our export.
type config struct {
	rt      *runtimeBin
	threads int
	export  bool
	env     []string // the export's variables (export only)
	samples []float64
}

type runtimeBin struct {
	name, lib string
	prog      *ompcheck.Program
}

func run() error {
	resultsFile := flag.String("results", "", "results file to export from (default: run a short check for the thread counts first)")
	threadsFlag := flag.String("threads", "", "thread counts, comma-separated (default: 2 and 4x the allowed CPUs)")
	rounds := flag.Int("rounds", 15, "rounds; each runs every comparison (a runtime at a count, defaults and export) once, -runs times a side (3..1000)")
	seconds := flag.Float64("seconds", 0.15, "wall time of one run of the barrier loop, in seconds (0.01..10)")
	work := flag.Int("work", 64, "work per step: multiply-adds each thread does between barriers (0..1000000)")
	shape := flag.String("shape", "barrier", "the loop timed: barrier (the plain barrier loop) or stencil (256 points per thread, a barrier per step)")
	before := flag.String("before", "", "the results file of a check run just before this one's: print whether both chose the same OpenMP settings, or settings within 3% of each other, then measure as usual")
	keep := flag.String("keep", "", "with no -results: copy the check's results file to this path (for later runs' -results and -before)")
	agree := flag.Bool("agree", false, "also time every setting the file records (defaults and chosen, per runtime and count) in 3 runs of 0.5 s and print each recorded time over that run's median")
	runs := flag.Int("runs", 2, "runs of each configuration a round, back to back with the other side of its comparison (1..4): 2 runs default, export, export, default (or the reverse), so that a drift within the round cancels")
	budget := flag.Duration("budget", 60*time.Second, "the check's --budget when no -results is given (the OpenMP step takes what the algorithms leave of it, half where MPI is measured too)")
	flag.Parse()
	if flag.NArg() > 0 {
		return lab.Usagef("unexpected argument %q (ompbench takes flags only)", flag.Arg(0))
	}
	if *rounds < 3 || *rounds > 1000 {
		return lab.Usagef("-rounds %d out of range (want 3 to 1000)", *rounds)
	}
	if !(*seconds >= 0.01 && *seconds <= 10) {
		return lab.Usagef("-seconds %g out of range (want 0.01 to 10)", *seconds)
	}
	if *runs < 1 || *runs > 4 {
		return lab.Usagef("-runs %d out of range (want 1 to 4)", *runs)
	}
	if *shape != "barrier" && *shape != "stencil" {
		return lab.Usagef("-shape %q: want barrier or stencil", *shape)
	}
	if *work < 0 || *work > 1000000 {
		return lab.Usagef("-work %d out of range (want 0 to 1000000)", *work)
	}
	allowed, err := osal.Allowed()
	if err != nil {
		return fmt.Errorf("reading the allowed CPUs: %w", err)
	}
	cpus := allowed.Len()
	counts := []int{2, 4 * cpus}
	if *threadsFlag != "" {
		if counts, err = lab.Counts("-threads", *threadsFlag, "thread", 1024); err != nil {
			return err
		}
	}

	tool, dir, err := lab.BuildTool("ompbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if *resultsFile == "" {
		*resultsFile = filepath.Join(dir, "results.json")
		list := make([]string, len(counts))
		for i, n := range counts {
			list[i] = strconv.Itoa(n)
		}
		fmt.Fprintf(os.Stderr, "ompbench: no -results: running barriertune check --threads %s --budget %s\n", strings.Join(list, ","), *budget)
		fmt.Printf("Check: barriertune check --threads %s --budget %s, load before %s\n", strings.Join(list, ","), *budget, lab.Load())
		if out, err := lab.Run(*budget+2*time.Minute, nil, true, tool, "check", "-q", "--threads", strings.Join(list, ","), "--budget", budget.String(), "-o", *resultsFile); err != nil {
			return fmt.Errorf("barriertune check: %v\n%s", err, out)
		}
		fmt.Printf("load after %s\n\n", lab.Load())
		if *keep != "" {
			data, err := os.ReadFile(*resultsFile)
			if err == nil {
				err = os.WriteFile(*keep, data, 0o644)
			}
			if err != nil {
				return fmt.Errorf("-keep: %w", err)
			}
		}
		if f, err := readResults(*resultsFile); err == nil {
			fmt.Printf("The check's OpenMP record (%g s):\n\n", f.OpenMP.Seconds)
			for _, r := range f.OpenMP.Runtimes {
				for _, c := range r.Counts {
					fmt.Printf("- %s, %d threads: %s (defaults %s, pairs %d, runs %d) %s\n", r.Name, c.Threads, choiceName(c), formatNs(c.DefaultNs), c.Pairs, c.Runs, oneLine(c.NotDecided+" "+c.NotMeasured+" "+c.Why))
				}
			}
			fmt.Println()
		}
	}

	if *before != "" {
		fa, err := readResults(*before)
		if err != nil {
			return err
		}
		fb, err := readResults(*resultsFile)
		if err != nil {
			return err
		}
		fmt.Printf("Two checks' OpenMP choices (%s, then this one's):\n\n| runtime | threads | first | second | |\n|---|---|---|---|---|\n", *before)
		for _, r := range stability(fa, fb) {
			fmt.Println(r)
		}
		fmt.Printf("\nHost state: the first check's %s; the second's %s\n\n", recordedFloors(fa.OpenMP), recordedFloors(fb.OpenMP))
	}

	var rts []*runtimeBin
	for _, tc := range ompcheck.Toolchains() {
		p, err := ompcheck.Build(context.Background(), tc, dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ompbench: %s skipped: %v\n", tc.Runtime, err)
			continue
		}
		rts = append(rts, &runtimeBin{name: tc.Compiler, lib: tc.Runtime, prog: p})
	}
	if len(rts) == 0 {
		return fmt.Errorf("no OpenMP compiler works here (want gcc with libgomp, or clang with libomp: apt-get install gcc clang libomp-dev)")
	}

	// The exported environment a program of each runtime gets at each
	// count: what `barriertune omp-run` applies, with OMP_NUM_THREADS set
	// when the program starts.
	exports := map[string][]string{}
	fmt.Printf("Exports used (OMP_NUM_THREADS=N barriertune omp-run --runtime R --print):\n\n")
	for _, rt := range rts {
		for _, n := range counts {
			env := append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
				return strings.HasPrefix(kv, "OMP_") || strings.HasPrefix(kv, "KMP_") || strings.HasPrefix(kv, "GOMP_")
			}), "OMP_NUM_THREADS="+strconv.Itoa(n))
			out, err := lab.Run(time.Minute, env, false, tool, "omp-run", "--results", *resultsFile, "--runtime", rt.lib, "--print", "--", tool)
			if err != nil {
				return fmt.Errorf("barriertune omp-run --print at %d threads: %w", n, err)
			}
			vars := strings.Fields(string(out))
			exports[rt.lib+strconv.Itoa(n)] = vars
			fmt.Printf("- %s, %d threads: `%s`\n", rt.lib, n, strings.Join(vars, " "))
		}
	}
	fmt.Printf("\nLoad before: %s\n", lab.Load())

	var cells []*config
	for _, rt := range rts {
		for _, n := range counts {
			cells = append(cells, &config{rt: rt, threads: n}, &config{rt: rt, threads: n, export: true, env: exports[rt.lib+strconv.Itoa(n)]})
		}
	}
	limit := time.Duration(*seconds*float64(time.Second)) + 20*time.Second
	fmt.Fprintf(os.Stderr, "ompbench: %d configurations x %d rounds x %d runs of %g s\n", len(cells), *rounds, *runs, *seconds)
	start := time.Now()
	pairs := make([]int, len(cells)/2)
	for i := range pairs {
		pairs[i] = i
	}
	for r := 0; r < *rounds; r++ {
		rand.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
		for _, p := range pairs {
			d, e := cells[2*p], cells[2*p+1]
			got := map[*config][]float64{}
			for _, c := range pairOrder(d, e, r+p, *runs) {
				ns, err := runLoop(limit, c.env, c.rt.prog, *seconds, *work, c.threads, *shape)
				if err != nil {
					return fmt.Errorf("%s, %d threads, %s: %w", c.rt.lib, c.threads, label(c), err)
				}
				got[c] = append(got[c], ns)
			}
			d.samples = append(d.samples, geomean(got[d]))
			e.samples = append(e.samples, geomean(got[e]))
		}
	}

	host, _ := os.Hostname()
	fmt.Printf("\nMeasured %s on %s: %d allowed CPUs, %s, the %s loop, %d rounds of %g s per run, work %d, in %s.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), host, cpus, runtime.GOARCH, *shape, *rounds, *seconds, *work, time.Since(start).Round(time.Second))
	fmt.Printf("Load: %s\n\n", lab.Load())
	fmt.Printf("| runtime | threads | default ns/barrier (median) | export ns/barrier (median) | export / default | median of per-round ratios | export faster in | export sets |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|\n")
	for i := 0; i < len(cells); i += 2 {
		d, e := cells[i], cells[i+1]
		ratios := make([]float64, len(d.samples))
		faster := 0
		for k := range d.samples {
			ratios[k] = e.samples[k] / d.samples[k]
			if ratios[k] < 1 {
				faster++
			}
		}
		over := ""
		if d.threads > cpus {
			over = fmt.Sprintf(" (on %d CPUs)", cpus)
		}
		sets := strings.Join(e.env, " ")
		ratio, perRound := formatRatio(lab.Median(e.samples)/lab.Median(d.samples)), formatRatio(lab.Median(ratios))
		if sets == "" {
			// The same program in the same environment: it cannot be
			// slower; what the runs read is the machine's spread.
			sets = "nothing this runtime reads: the same program and environment as its defaults"
			ratio, perRound = "same ("+ratio+": noise)", "same ("+perRound+": noise)"
		}
		fmt.Printf("| %s (%s) | %d%s | %s | %s | %s | %s | %d/%d rounds | %s |\n",
			d.rt.lib, d.rt.name, d.threads, over, formatNs(lab.Median(d.samples)), formatNs(lab.Median(e.samples)),
			ratio, perRound, faster, len(ratios), sets)
	}
	if *agree {
		return agreement(*resultsFile, rts, limit)
	}
	return nil
}

// agreement times every setting the results file records (each
// runtime's defaults and its chosen setting, per count) in 3 runs of
// 0.5 s of the plain barrier loop and prints the recorded time over the
// median of those runs.
func agreement(resultsFile string, rts []*runtimeBin, limit time.Duration) error {
	f, err := readResults(resultsFile)
	if err != nil {
		return err
	}
	before := lab.HostFloor()
	fmt.Printf("\nRecorded times against a 0.5 s run of the same loop and setting (median of 3; load %s):\n\n", lab.Load())
	defer func() {
		after := lab.HostFloor()
		fmt.Printf("\nHost state: %s\n", floorWords(f.OpenMP, before, after))
	}()
	fmt.Printf("| runtime | threads | setting | recorded | 0.5 s runs (median of 3) | recorded / long |\n|---|---|---|---|---|---|\n")
	for _, rt := range rts {
		r := f.OpenMP.Runtime(rt.lib)
		if r == nil {
			continue
		}
		for _, c := range r.Counts {
			type rec struct {
				env []string
				ns  float64
			}
			recs := []rec{{nil, c.DefaultNs}}
			if len(c.Best) > 0 {
				recs = append(recs, rec{c.Best, c.BestNs})
			}
			for _, x := range recs {
				if x.ns <= 0 {
					continue
				}
				var long []float64
				for i := 0; i < 3; i++ {
					ns, err := runLoop(limit, x.env, rt.prog, 0.5, 64, c.Threads, "barrier")
					if err != nil {
						return fmt.Errorf("%s, %d threads, %v: %w", rt.lib, c.Threads, x.env, err)
					}
					long = append(long, ns)
				}
				name := strings.Join(x.env, " ")
				if name == "" {
					name = "defaults"
				}
				m := lab.Median(long)
				fmt.Printf("| %s | %d | %s | %s | %s | %s |\n", rt.lib, c.Threads, name, formatNs(x.ns), formatNs(m), formatRatio(x.ns/m))
			}
		}
	}
	return nil
}

// pairOrder is the order in which a round runs a comparison's two
// sides, runs times each, back to back: ABBA for 2 (A, B, B, A), ABBAAB
// for 3, and so on, A the defaults when parity is even, the export when
// odd, so that a drift within the round (the host's state, another
// process's load) lands on both sides alike and which side runs first
// alternates from round to round.
func pairOrder(d, e *config, parity, runs int) []*config {
	a, b := d, e
	if parity%2 != 0 {
		a, b = e, d
	}
	out := make([]*config, 0, 2*runs)
	for i := 0; i < runs; i++ {
		if i%2 == 0 {
			out = append(out, a, b)
		} else {
			out = append(out, b, a)
		}
	}
	return out
}

// geomean is the geometric mean of xs (all positive): a side's time in
// a round, so that a ratio of two sides is the mean of its runs' ratios.
func geomean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(xs)))
}

func label(c *config) string {
	if c.export {
		return "export"
	}
	return "default"
}

// runLoop runs the barrier loop once (ompcheck.Program.Run: the
// runtimes' variables of this environment removed, env's added, killed by
// its process group past limit) and returns its ns per barrier.
func runLoop(limit time.Duration, env []string, p *ompcheck.Program, seconds float64, work, threads int, shape string) (float64, error) {
	t, err := p.Run(context.Background(), ompcheck.Sample{Threads: threads, Seconds: seconds, Warmup: 0.05, Work: work, Env: env, Limit: limit, Shapes: shape})
	if err != nil {
		return 0, err
	}
	if shape == "stencil" {
		return t.StencilNs(), nil
	}
	return t.NsPerBarrier(), nil
}

// stability compares the OpenMP choices of two results files (two checks
// in a row): per runtime and count, the same setting, or settings whose
// recorded times are within 3% of each other (the check's margin), or
// not. It returns the table's rows.
func stability(a, b *results.File) []string {
	var rows []string
	for _, ra := range a.OpenMP.Runtimes {
		rb := b.OpenMP.Runtime(ra.Name)
		for _, ca := range ra.Counts {
			cb := rb.Count(ca.Threads)
			if cb == nil {
				rows = append(rows, fmt.Sprintf("| %s | %d | %s | (not in the second) | - |", ra.Name, ca.Threads, choiceName(ca)))
				continue
			}
			verdict := "differ"
			ta, tb := chosenNs(ca), chosenNs(*cb)
			switch {
			case choiceName(ca) == choiceName(*cb):
				verdict = "same"
			case ta > 0 && tb > 0 && max(ta, tb) <= 1.03*min(ta, tb):
				verdict = "within 3%"
			}
			rows = append(rows, fmt.Sprintf("| %s | %d | %s | %s | %s |", ra.Name, ca.Threads, choiceName(ca), choiceName(*cb), verdict))
		}
	}
	return rows
}

// choiceName is a count's choice in words: its setting, "defaults", or
// "not decided"/"not measured".
func choiceName(c results.OpenMPCount) string {
	switch {
	case c.NotMeasured != "":
		return "not measured"
	case c.NotDecided != "":
		return "not decided"
	case len(c.Best) == 0:
		return "defaults"
	}
	return strings.Join(c.Best, " ")
}

// chosenNs is the recorded time of a count's choice.
func chosenNs(c results.OpenMPCount) float64 {
	if len(c.Best) > 0 {
		return c.BestNs
	}
	return c.DefaultNs
}

func readResults(path string) (*results.File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := results.Parse(data, path)
	if err != nil {
		return nil, err
	}
	if f.OpenMP == nil {
		return nil, fmt.Errorf("%s has no OpenMP measurement", path)
	}
	return f, nil
}

// oneLine keeps s to one line, "" when it is blank.
func oneLine(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return strings.Join(strings.Fields(s), " ")
}

func formatNs(ns float64) string {
	if ns >= 10000 {
		return strconv.FormatFloat(ns/1000, 'f', 1, 64) + " µs"
	}
	return strconv.FormatFloat(ns, 'f', 0, 64) + " ns"
}

// formatRatio keeps two significant digits below 0.1 (0.0014x, not 0.00x).
func formatRatio(r float64) string {
	if r < 0.1 {
		return strconv.FormatFloat(r, 'g', 2, 64) + "x"
	}
	return strconv.FormatFloat(r, 'f', 2, 64) + "x"
}

// recordedFloors says what floors a check's OpenMP step recorded.
func recordedFloors(o *results.OpenMP) string {
	if o == nil || !(o.HostFloorBeforeNs > 0) {
		return "step recorded no floor"
	}
	return fmt.Sprintf("step read the floor at %.0f ns before and %.0f ns after", o.HostFloorBeforeNs, o.HostFloorAfterNs)
}

// floorWords compares the floors the check recorded with those read
// around the agreement runs: the times compare only in one host state.
func floorWords(o *results.OpenMP, before, after float64) string {
	now := fmt.Sprintf("these runs read it at %.0f ns before and %.0f ns after", before, after)
	if o == nil || !(o.HostFloorBeforeNs > 0) || !(before > 0) || !(after > 0) {
		return "the check's " + recordedFloors(o) + "; " + now
	}
	lo := min(o.HostFloorBeforeNs, o.HostFloorAfterNs, before, after)
	hi := max(o.HostFloorBeforeNs, o.HostFloorAfterNs, before, after)
	if hi >= ompcheck.HostMovedFactor*lo {
		return "the check's " + recordedFloors(o) + "; " + now + fmt.Sprintf(": NOT one host state (%gx or more apart), so the ratios above compare two states", ompcheck.HostMovedFactor)
	}
	return "the check's " + recordedFloors(o) + "; " + now + ": one host state"
}
