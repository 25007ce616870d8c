// Command cbarrierbench times the exported C and C++ barrier (`barriertune
// export --format c-barrier`) against what C and C++ programs use today,
// interleaved: pthread_barrier_t, libstdc++'s and libc++'s std::barrier,
// GNU libgomp's and LLVM libomp's `#pragma omp barrier`, and the
// hand-written C dissemination barrier of cmd/scripts/cdissem (as written, and
// with its PAUSE behind a call as the header has it). Every round runs
// every candidate once, in a shuffled order, so load that comes and goes
// hits all of them alike; a candidate's figure is the median of its
// rounds. Four scenarios:
//
//   - pinned: 2 threads pinned on the first two allowed CPUs (OpenMP
//     runtimes with OMP_WAIT_POLICY=active);
//   - oversubscribed: 8 threads on the allowed CPUs, unpinned, every
//     runtime at its defaults;
//   - competing: 2 pinned threads while two CPU-bound processes (started
//     here and killed by their pid) compete for the CPUs: ours' worst round
//     against pthread_barrier_t's median round;
//   - late: 2 pinned threads, one of them 10 ms late at every episode: the
//     CPU the waiting thread burns, in percent of one CPU;
//   - over2x, over4x, over8x: two, four and eight times as many threads
//     as allowed CPUs (8 and 16 threads on 2 CPUs: 4x and 8x), unpinned, runtimes at their defaults, beside a central barrier
//     whose waiters spin with sched_yield and the Go library's best (the
//     fastest of the catalog and barriers.Auto on as many unpinned
//     goroutines, timed in a child of this program).
//
// -header FILE takes a prebuilt header (one exported on the machine that
// measured it) instead of exporting one.
//
// The host state (a one-way cache-line transfer of about 30 ns, or 300)
// changes which barrier wins where threads outnumber the CPUs, and a
// state can last under a minute. -gate NS holds each over scenario back
// until the hand-written C program's ping-pong between the first two CPUs
// reads under NS ns (every 5 s, for up to -gate-wait), with everything
// compiled before; -header-only times only the header's barriers, the
// yield central barrier and pthread_barrier_t there (about 12 s a
// scenario at -rounds 5); -repeat N takes N figures; -lock FILE is held
// (flock) from the reading through the rounds, so that other work which
// takes it keeps off the figures; -variant NAME=FLAGS times the C barrier
// compiled with other values of the header's macros beside it:
//
//	go run ./cmd/scripts/cbarrierbench -scenarios over4x,over8x -rounds 5 \
//		-header-only -gate 100 -repeat 20 -lock /tmp/measure.lock \
//		-variant spin0=-DBARRIERTUNE_SETTLED_SPIN_NS=0
//
// Run it from the module root:
//
//	go run ./cmd/scripts/cbarrierbench [-results FILE] [-rounds 7]
//
// The header is exported from -results (default: no table, so the safe
// default the header uses on a machine it does not recognise). A candidate
// whose compiler or library is missing is skipped with the reason. Every
// child runs under a time limit and is killed by its pid when it overruns.
package main

import (
	_ "embed"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/export"
	"github.com/barriertune/barriertune/cmd/scripts/internal/lab"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/internal/rawcpuid"
	"github.com/barriertune/barriertune/results"
)

//go:embed csrc/bench.c
var benchSource []byte

// dissemPath is the hand-written C dissemination barrier of cdissem,
// relative to the module root.
const dissemPath = "cmd/scripts/cdissem/csrc/dissem.c"

func main() {
	if os.Getenv(goChildEnv) != "" {
		if err := goBest(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "cbarrierbench:", err)
			os.Exit(1)
		}
		return
	}
	lab.Main("cbarrierbench", run)
}

// candidate is one barrier: a binary and the environment it runs with.
type candidate struct {
	name string
	bin  string
	env  []string // added to the environment
	c    bool     // the hand-written C program (its own argument form)
}

// build describes how to build one candidate.
type build struct {
	name, cc string
	flags    []string
}

func run() error {
	resultsFile := flag.String("results", "", "results file to export the header from (default: no table: the header's safe default)")
	header := flag.String("header", "", "a prebuilt barriertune.h to time instead of exporting one (excludes -results)")
	rounds := flag.Int("rounds", 7, "rounds; each runs every candidate once (3..101)")
	target := flag.Duration("run", 150*time.Millisecond, "wall time of one run of a candidate (10ms..5s)")
	only := flag.String("scenarios", "pinned,oversubscribed,competing,late,over2x,over4x,over8x", "scenarios to run, comma-separated")
	headerOnly := flag.Bool("header-only", false, "over2x, over4x, over8x: time only what the header is judged against (the C and C++ barrier, the yield central barrier, pthread_barrier_t); other scenarios unchanged")
	gateNS := flag.Float64("gate", 0, "over2x, over4x, over8x: start each only when the one-way ping-pong between the first two CPUs reads under this many ns (0: at once)")
	gateWait := flag.Duration("gate-wait", 2*time.Hour, "how long -gate waits for the host state at most")
	lockFile := flag.String("lock", "", "with -gate: a file held (flock) while reading the host state and timing; other work holding it keeps the figures off a busy machine")
	repeat := flag.Int("repeat", 1, "run the over scenarios this many times (1..100), each behind the gate")
	var variants []variant
	flag.Func("variant", "over2x, over4x, over8x: also time the C barrier compiled with extra flags, NAME=FLAGS (space-separated, e.g. 'spin0=-DBARRIERTUNE_SETTLED_SPIN_NS=0'); repeatable, at most 8", func(v string) error {
		x, err := parseVariant(v)
		if err != nil {
			return err
		}
		if len(variants) == 8 {
			return fmt.Errorf("more than 8 variants")
		}
		variants = append(variants, x)
		return nil
	})
	flag.Parse()
	if flag.NArg() > 0 {
		return lab.Usagef("unexpected argument %q (cbarrierbench takes flags only)", flag.Arg(0))
	}
	if *rounds < 3 || *rounds > 101 {
		return lab.Usagef("-rounds %d out of range (want 3 to 101)", *rounds)
	}
	if *repeat < 1 || *repeat > 100 {
		return lab.Usagef("-repeat %d out of range (want 1 to 100)", *repeat)
	}
	if *gateNS < 0 || *gateNS > 1e6 {
		return lab.Usagef("-gate %g out of range (want 0, off, or a bound up to 1000000 ns)", *gateNS)
	}
	if *lockFile != "" && *gateNS == 0 {
		return lab.Usagef("-lock %s without -gate (the lock is held around the gated scenarios)", *lockFile)
	}
	if *target < 10*time.Millisecond || *target > 5*time.Second {
		return lab.Usagef("-run %s out of range (want 10ms to 5s)", *target)
	}
	allowed, err := osal.Allowed()
	if err != nil {
		return fmt.Errorf("reading the allowed CPUs: %w", err)
	}
	cpus := allowed.Members()
	if len(cpus) < 2 {
		return fmt.Errorf("want 2 allowed CPUs or more (allowed: %s)", allowed)
	}
	pair := fmt.Sprintf("%d,%d", cpus[0], cpus[1])

	dir, err := os.MkdirTemp("", "cbarrierbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	var h []byte
	switch {
	case *header != "" && *resultsFile != "":
		return lab.Usagef("-header and -results both given (a prebuilt header, or one exported from a results file)")
	case *header != "":
		if h, err = readHeader(*header); err != nil {
			return err
		}
	default:
		f := &results.File{Schema: results.Schema}
		if *resultsFile != "" {
			if f, err = results.Read(*resultsFile); err != nil {
				return err
			}
		}
		var b strings.Builder
		if err := export.Write(&b, f, "c-barrier", export.Options{}); err != nil {
			return fmt.Errorf("exporting the header: %w", err)
		}
		h = []byte(b.String())
	}
	if err := os.WriteFile(filepath.Join(dir, "barriertune.h"), h, 0o644); err != nil {
		return err
	}

	cFlags := []string{"-O2", "-pthread", "-I" + dir, "-DBENCH_BT"}
	builds := []build{
		{"barriertune (C)", "gcc", cFlags},
		{"barriertune::barrier (C++)", "g++", []string{"-O2", "-pthread", "-I" + dir, "-x", "c++", "-std=c++20", "-DBENCH_BTCXX"}},
		{"pthread_barrier_t", "gcc", []string{"-O2", "-pthread", "-DBENCH_PTHREAD"}},
		{"libstdc++ std::barrier", "g++", []string{"-O2", "-pthread", "-x", "c++", "-std=c++20", "-DBENCH_STD"}},
		{"libc++ std::barrier", "clang++", []string{"-O2", "-pthread", "-x", "c++", "-std=c++20", "-stdlib=libc++", "-DBENCH_STD"}},
		{"libgomp", "gcc", []string{"-O2", "-fopenmp", "-DBENCH_OMP"}},
		{"libomp", "clang", []string{"-O2", "-fopenmp", "-DBENCH_OMP"}},
		{"yield central barrier", "gcc", []string{"-O2", "-pthread", "-DBENCH_YIELD"}},
	}
	if *headerOnly {
		builds = slices.DeleteFunc(builds, func(b build) bool { return !judged(b.name) })
	}
	for _, v := range variants {
		builds = append(builds, build{v.candidate(), "gcc", append(slices.Clone(cFlags), v.flags...)})
	}
	bins := map[string]string{}
	for i, b := range builds {
		bin, err := lab.CompileC(b.cc, dir, "bench"+strconv.Itoa(i), benchSource, b.flags...)
		if err != nil {
			fmt.Fprintf(os.Stderr, "cbarrierbench: %s skipped: %v\n", b.name, err)
			continue
		}
		bins[b.name] = bin
	}
	dissemSource, err := os.ReadFile(dissemPath)
	if err != nil {
		return fmt.Errorf("run cbarrierbench from the module root: %w", err)
	}
	dissem, err := lab.CompileC("gcc", dir, "dissem", dissemSource, "-O2", "-pthread")
	if err != nil {
		fmt.Fprintf(os.Stderr, "cbarrierbench: the hand-written C barrier skipped: %v\n", err)
	}
	// The same barrier with its PAUSE behind a call, as the header's
	// wait has it: the faster loop where the inline PAUSE costs.
	dissemCall, err := lab.CompileC("gcc", dir, "dissemcall", dissemSource, "-O2", "-pthread", "-DRELAX_CALL")
	if err != nil {
		fmt.Fprintf(os.Stderr, "cbarrierbench: the hand-written C barrier (PAUSE in a call) skipped: %v\n", err)
	}
	g := &gate{pair: pair, below: *gateNS, wait: *gateWait, lock: *lockFile}
	if *gateNS > 0 {
		if dissem == "" {
			return fmt.Errorf("-gate reads the host state with the hand-written C program, which did not build")
		}
		g.dissem = dissem
	}
	defer g.close()
	cand := func(name string, env ...string) *candidate {
		if bin, ok := bins[name]; ok {
			return &candidate{name: name, bin: bin, env: env}
		}
		return nil
	}
	active := []string{"OMP_WAIT_POLICY=active"}

	fmt.Printf("# cbarrierbench: %s, CPUs %s, load %s, %s\n\n", rawcpuid.Identify().Name, allowed, lab.Load(), time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	want := strings.Split(*only, ",")

	if slices.Contains(want, "pinned") {
		cs := []*candidate{cand("barriertune (C)"), cand("barriertune::barrier (C++)"), cand("pthread_barrier_t"),
			cand("libstdc++ std::barrier"), cand("libc++ std::barrier"), withName(cand("libgomp", active...), "libgomp active"),
			withName(cand("libomp", active...), "libomp active")}
		if dissem != "" {
			cs = append(cs, &candidate{name: "hand-written C dissemination", bin: dissem, c: true})
		}
		if dissemCall != "" {
			cs = append(cs, &candidate{name: "hand-written C dissemination, PAUSE in a call", bin: dissemCall, c: true})
		}
		med, _, err := scenario(cs, 2, pair, *rounds, *target, 0)
		if err != nil {
			return err
		}
		table("2 threads pinned on CPUs "+pair, med, "hand-written C dissemination", "ns/episode")
		verdicts(med, []verdict{
			{"barriertune (C)", "hand-written C dissemination", 1.05, true, "within 5% of the hand-written C dissemination barrier"},
			{"barriertune (C)", "hand-written C dissemination, PAUSE in a call", 1.05, true, "within 5% of the same barrier with its PAUSE in a call"},
			{"barriertune (C)", "libc++ std::barrier", 2, false, "at least 2x faster than libc++ std::barrier"},
			{"barriertune (C)", "libstdc++ std::barrier", 10, false, "at least 10x faster than libstdc++ std::barrier"},
			{"barriertune (C)", "libgomp active", 1, false, "faster than libgomp (active)"},
			{"barriertune (C)", "libomp active", 1, false, "faster than libomp (active)"},
		})
	}
	if slices.Contains(want, "oversubscribed") {
		cs := []*candidate{cand("barriertune (C)"), cand("barriertune::barrier (C++)"), cand("pthread_barrier_t"),
			cand("libstdc++ std::barrier"), cand("libc++ std::barrier"), cand("libgomp"), cand("libomp")}
		med, _, err := scenario(cs, 8, "-", *rounds, *target, 0)
		if err != nil {
			return err
		}
		table(fmt.Sprintf("8 threads on %d CPUs, unpinned, runtimes at their defaults", len(cpus)), med, "barriertune (C)", "ns/episode")
		verdicts(med, []verdict{
			{"barriertune (C)", "pthread_barrier_t", 2, false, "at least 2x faster than pthread_barrier_t"},
			{"barriertune (C)", "libstdc++ std::barrier", 1, false, "faster than libstdc++ std::barrier"},
			{"barriertune (C)", "libc++ std::barrier", 1, false, "faster than libc++ std::barrier"},
			{"barriertune (C)", "libgomp", 1, false, "faster than libgomp (default)"},
			{"barriertune (C)", "libomp", 1, false, "faster than libomp (default)"},
		})
	}
	for rep := range *repeat {
		for _, k := range []int{2, 4, 8} {
			if !slices.Contains(want, fmt.Sprintf("over%dx", k)) {
				continue
			}
			state, err := g.open()
			if err != nil {
				return err
			}
			if *repeat > 1 {
				fmt.Printf("<!-- repeat %d of %d -->\n", rep+1, *repeat)
			}
			threads := min(k*len(cpus), 256) // bench.c's MAXT
			self, err := os.Executable()
			if err != nil {
				return err
			}
			cs := []*candidate{cand("barriertune (C)"), cand("barriertune::barrier (C++)"), cand("yield central barrier"), cand("pthread_barrier_t"),
				cand("libstdc++ std::barrier"), cand("libc++ std::barrier"), cand("libgomp"), cand("libomp"),
				{name: "Go library's best (goroutines)", bin: self, env: []string{goChildEnv + "=1"}}}
			if *headerOnly {
				cs = slices.DeleteFunc(cs, func(c *candidate) bool { return c != nil && !judged(c.name) })
			}
			for _, v := range variants {
				cs = append(cs, cand(v.candidate()))
			}
			floorBefore := lab.HostFloor()
			med, _, err := scenario(cs, threads, "-", *rounds, *target, 0)
			if err != nil {
				return err
			}
			table(fmt.Sprintf("%d threads on %d CPUs (%dx), unpinned, runtimes at their defaults", threads, len(cpus), k), med, "yield central barrier", "ns/episode")
			fmt.Printf("Host state: the floor between CPUs %d and %d read %s before the rounds and %s after (the check's floor, a two-thread barrier episode: it moves with the host state).\n\n", cpus[0], cpus[1], floorWords(floorBefore), floorWords(lab.HostFloor()))
			if g.dissem != "" {
				after, err := g.pingpong()
				if err != nil {
					return fmt.Errorf("reading the host state: %w", err)
				}
				fmt.Printf("Gate: the one-way ping-pong read %.1f ns when the rounds began (bound %.0f) and %.1f ns after, %s UTC.\n\n", state, *gateNS, after, time.Now().UTC().Format("15:04:05"))
			}
			g.close()
			verdicts(med, []verdict{
				{"barriertune (C)", "yield central barrier", 1, true, "at most 1.0x the yield central barrier"},
				{"barriertune::barrier (C++)", "yield central barrier", 1, true, "C++: at most 1.0x the yield central barrier"},
				{"barriertune (C)", "pthread_barrier_t", 0.5, true, "at most 0.5x pthread_barrier_t"},
				{"barriertune (C)", "libomp", 0.5, true, "at most 0.5x libomp (default)"},
			})
		}
	}
	if slices.Contains(want, "competing") {
		procs, err := compete(2)
		if err != nil {
			return err
		}
		cs := []*candidate{cand("barriertune (C)"), cand("barriertune::barrier (C++)"), cand("pthread_barrier_t")}
		med, all, err := scenario(cs, 2, pair, 5, *target, 0)
		stop(procs)
		if err != nil {
			return err
		}
		table("2 threads pinned on CPUs "+pair+", two CPU-bound processes competing, 5 rounds", med, "pthread_barrier_t", "ns/episode")
		p := med["pthread_barrier_t"]
		for _, name := range []string{"barriertune (C)", "barriertune::barrier (C++)"} {
			if v := all[name]; len(v) > 0 && p > 0 {
				worst := slices.Max(v)
				fmt.Printf("- %s: worst round %s ns, %.2fx pthread_barrier_t's median round (target <= 3x): %s\n", name, ns(worst), worst/p, pass(worst <= 3*p))
			}
		}
		fmt.Println()
	}
	if slices.Contains(want, "late") {
		cs := []*candidate{cand("barriertune (C)"), cand("barriertune::barrier (C++)"), cand("pthread_barrier_t")}
		med, _, err := scenario(cs, 2, pair, *rounds, *target, 10*time.Millisecond)
		if err != nil {
			return err
		}
		table("2 threads pinned on CPUs "+pair+", the partner 10 ms late every episode", med, "", "% of a CPU the waiter burns")
		for _, name := range []string{"barriertune (C)", "barriertune::barrier (C++)"} {
			if v, ok := med[name]; ok {
				fmt.Printf("- %s: the waiter burns %.2f%% of a CPU (target <= 5%%): %s\n", name, v, pass(v <= 5))
			}
		}
		fmt.Println()
	}
	return nil
}

// variant is the C barrier compiled with extra flags (-variant): the
// header's macros (BARRIERTUNE_SETTLED_SPIN_NS, BARRIERTUNE_YIELDS, ...)
// tried side by side with the header as exported.
type variant struct {
	name  string
	flags []string
}

// parseVariant reads NAME=FLAGS: a name of letters, digits, '-' and '_',
// and at least one flag, each beginning with -D or -U (macros only: the
// variant is the same program).
func parseVariant(v string) (variant, error) {
	name, flags, ok := strings.Cut(v, "=")
	if !ok || name == "" || strings.TrimFunc(name, func(r rune) bool {
		return r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}) != "" {
		return variant{}, fmt.Errorf("%q: want NAME=FLAGS, a name of letters, digits, - and _", v)
	}
	x := variant{name: name, flags: strings.Fields(flags)}
	if len(x.flags) == 0 {
		return variant{}, fmt.Errorf("%q: no flags after the name", v)
	}
	for _, f := range x.flags {
		if !strings.HasPrefix(f, "-D") && !strings.HasPrefix(f, "-U") {
			return variant{}, fmt.Errorf("%q: flag %q is not a macro (-D or -U)", v, f)
		}
	}
	return x, nil
}

// candidate is the variant's name in the tables.
func (v variant) candidate() string { return "barriertune (C) [" + v.name + "]" }

// judged reports whether a candidate is one the header is judged by
// where threads outnumber the CPUs (-header-only): the header's two
// barriers and what they are held to.
func judged(name string) bool {
	switch name {
	case "barriertune (C)", "barriertune::barrier (C++)", "yield central barrier", "pthread_barrier_t":
		return true
	}
	return false
}

func withName(c *candidate, name string) *candidate {
	if c != nil {
		c.name = name
	}
	return c
}

// verdict is one target: ours within ratio of other (within), or other
// at least ratio times ours.
type verdict struct {
	ours, other string
	ratio       float64
	within      bool
	what        string
}

// verdicts prints each target's ratio of the medians and whether it holds.
func verdicts(med map[string]float64, vs []verdict) {
	for _, v := range vs {
		o, ok1 := med[v.ours]
		x, ok2 := med[v.other]
		switch {
		case !ok1 || !ok2 || o == 0 || x == 0:
			fmt.Printf("- %s: not measured\n", v.what)
		case v.within:
			fmt.Printf("- %s: %.3fx: %s\n", v.what, o/x, pass(o/x <= v.ratio))
		default:
			fmt.Printf("- %s: %.2fx: %s\n", v.what, x/o, pass(x/o >= v.ratio && x > o))
		}
	}
	fmt.Println()
}

func pass(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}

// scenario runs every candidate rounds times, interleaved in a shuffled
// order, and returns each one's median over the rounds and every round's
// value. late > 0 measures the waiter's CPU share instead of the time.
func scenario(cs []*candidate, threads int, cpus string, rounds int, target, late time.Duration) (map[string]float64, map[string][]float64, error) {
	var live []*candidate
	episodes := map[string]int{}
	for _, c := range cs {
		if c == nil {
			continue
		}
		n := 30 // late: 30 episodes of 10 ms
		if late == 0 {
			// A pilot run sizes the runs to about target.
			v, err := once(c, threads, cpus, 2000, 0)
			if err != nil {
				fmt.Fprintf(os.Stderr, "cbarrierbench: %s skipped: %v\n", c.name, err)
				continue
			}
			n = int(min(max(float64(target)/max(v, 1), 1000), 5e6))
		}
		episodes[c.name] = n
		live = append(live, c)
	}
	all := map[string][]float64{}
	for range rounds {
		rand.Shuffle(len(live), func(i, j int) { live[i], live[j] = live[j], live[i] })
		for _, c := range live {
			v, err := once(c, threads, cpus, episodes[c.name], late)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", c.name, err)
			}
			all[c.name] = append(all[c.name], v)
		}
	}
	med := map[string]float64{}
	for name, v := range all {
		med[name] = lab.Median(v)
	}
	return med, all, nil
}

// once runs one candidate once (three samples) and returns the samples'
// median: ns per episode, or the waiter's CPU percent when late.
func once(c *candidate, threads int, cpus string, episodes int, late time.Duration) (float64, error) {
	args := []string{strconv.Itoa(threads), cpus, strconv.Itoa(episodes), "3"}
	if c.c {
		args = []string{cpus, strconv.Itoa(episodes), "3"}
	}
	if late > 0 {
		args = append(args, strconv.FormatInt(int64(late), 10))
	}
	env := append(os.Environ(), c.env...)
	out, err := lab.Run(time.Minute, env, false, c.bin, args...)
	if err != nil {
		return 0, err
	}
	var v []float64
	for _, f := range strings.Fields(string(out)) {
		x, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return 0, fmt.Errorf("output %q: %w", f, err)
		}
		v = append(v, x)
	}
	if len(v) == 0 {
		return 0, fmt.Errorf("no samples")
	}
	return lab.Median(v), nil
}

// table prints the medians as Markdown, fastest first, with the ratio to
// base (when given).
func table(title string, med map[string]float64, base, unit string) {
	fmt.Printf("## %s\n\n", title)
	names := make([]string, 0, len(med))
	for n := range med {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		switch {
		case med[a] < med[b]:
			return -1
		case med[a] > med[b]:
			return 1
		}
		return strings.Compare(a, b)
	})
	if b, ok := med[base]; ok && b > 0 {
		fmt.Printf("| barrier | median (%s) | x %s |\n|---|---:|---:|\n", unit, base)
		for _, n := range names {
			fmt.Printf("| %s | %s | %.2f |\n", n, ns(med[n]), med[n]/b)
		}
	} else {
		fmt.Printf("| barrier | median (%s) |\n|---|---:|\n", unit)
		for _, n := range names {
			fmt.Printf("| %s | %s |\n", n, ns(med[n]))
		}
	}
	fmt.Println()
}

func ns(v float64) string {
	switch {
	case v >= 1000:
		s := strconv.FormatFloat(v, 'f', 0, 64)
		for i := len(s) - 3; i > 0; i -= 3 {
			s = s[:i] + "," + s[i:]
		}
		return s
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// compete starts k CPU-bound processes and returns them; stop kills them
// by their pid (also on SIGINT).
func compete(k int) ([]*os.Process, error) {
	var ps []*os.Process
	for range k {
		cmd := exec.Command("/bin/sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			stop(ps)
			return nil, fmt.Errorf("starting a competing process: %w", err)
		}
		ps = append(ps, cmd.Process)
		go cmd.Wait() //nolint:errcheck // reaps it once stop kills it
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	go func() {
		if _, ok := <-sig; ok {
			stop(ps)
			os.Exit(130)
		}
	}()
	time.Sleep(200 * time.Millisecond) // let them take their CPUs
	return ps, nil
}

// stop kills the competing processes by their pid.
func stop(ps []*os.Process) {
	for _, p := range ps {
		_ = p.Kill()
	}
}

// floorWords is a floor in words.
func floorWords(ns float64) string {
	if !(ns > 0) {
		return "nothing (not measured)"
	}
	return fmt.Sprintf("%.0f ns", ns)
}
