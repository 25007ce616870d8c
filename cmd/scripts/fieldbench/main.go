// Command fieldbench runs barriers.Auto the way a new user's program runs
// it, against the textbook sync.Cond barrier such a user writes,
// and prints the median and the worst round of each, with the
// verdicts of its targets:
//
//   - tight: n goroutines doing nothing but meeting at one barrier, built
//     once per process and reused across rounds; the goroutines are
//     started afresh every round of -episodes episodes;
//   - stencil: a 1D Jacobi stencil, 256 cells per participant, one barrier
//     per step, -steps steps per round.
//
// Each program is a separate process (this binary re-executed) running
// -rounds rounds; -procs processes of each implementation run interleaved
// (auto, cond, cond, auto, ...). The regimes:
//
//   - quiet: nothing started beside it (other work on the machine is
//     whatever `uptime` shows: it is printed with every regime);
//   - loaded: -hogs CPU-bound processes started by this command, killed by
//     pid at the end of the regime (each also exits on its own after -life);
//   - quota: every program inside a CPU quota of -quota CPUs (a cgroup v2
//     cpu.max, or v1 cpu.cfs_quota_us, created and removed by this command;
//     skipped with a message unless it runs as root with a writable cgroup
//     file system);
//   - pair: two programs of the same implementation at once.
//
// Every regime runs twice: with the results file a `barriertune check`
// wrote ($BARRIERTUNE_RESULTS pointing at -results, by default the
// per-user file) and with none ($BARRIERTUNE_RESULTS unset, $HOME and
// $XDG_CONFIG_HOME an empty directory, $XDG_CONFIG_DIRS unset, so Auto
// estimates the block and wake-up cost itself).
//
//	go run ./cmd/scripts/fieldbench                 # everything, ~10 min quiet
//	go run ./cmd/scripts/fieldbench -regimes loaded -workloads tight
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/scripts/internal/lab"
	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/internal/cpuhog"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/internal/workload"
	"github.com/barriertune/barriertune/results"
)

// Child mode: this binary re-executed ("workload impl rounds size n"); a
// hog is this binary re-executed too (internal/cpuhog).
const childEnv = "FIELDBENCH_CHILD"

func main() {
	cpuhog.Main()
	if v := os.Getenv(childEnv); v != "" {
		if err := child(v); err != nil {
			fmt.Fprintln(os.Stderr, "fieldbench child:", err)
			os.Exit(1)
		}
		return
	}
	o := options{}
	flag.IntVar(&o.n, "n", 2, "participants (goroutines)")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds per process")
	flag.IntVar(&o.procs, "procs", 5, "processes per implementation and regime")
	flag.IntVar(&o.episodes, "episodes", 100000, "episodes per tight-loop round")
	flag.IntVar(&o.steps, "steps", 100000, "steps per stencil round")
	flag.IntVar(&o.hogs, "hogs", 2, "CPU-bound competitors in the loaded regime")
	flag.DurationVar(&o.life, "life", 10*time.Minute, "a hog exits on its own after this")
	flag.DurationVar(&o.timeout, "timeout", 3*time.Minute, "a program still running after this is killed (its rounds count as failed)")
	flag.Float64Var(&o.quota, "quota", 0.5, "CPUs of the quota regime's cgroup")
	flag.StringVar(&o.results, "results", "", "results file of the with-file runs (default: the per-user file)")
	regimes := flag.String("regimes", "quiet,loaded,quota,pair", "regimes, comma-separated")
	workloads := flag.String("workloads", "tight,stencil", "workloads, comma-separated")
	files := flag.String("files", "with,without", "results-file modes, comma-separated")
	extra := flag.String("extra", "", "more implementations beside auto and cond, for comparison: spin, park (the tuned algorithm with that policy), goroutine")
	flag.Parse()
	if o.n < 2 || o.n > 256 || o.rounds < 1 || o.procs < 1 || o.episodes < 1 || o.steps < 1 || o.hogs < 0 || o.hogs > 64 || o.quota <= 0 {
		fmt.Fprintln(os.Stderr, "fieldbench: want -n 2..256, -rounds, -procs, -episodes, -steps >= 1, -hogs 0..64, -quota > 0")
		os.Exit(2)
	}
	if o.results == "" {
		dir, err := os.UserConfigDir()
		if err == nil {
			o.results = filepath.Join(dir, "barriertune", "results.json")
		}
	}
	o.extra = split(*extra)
	if err := run(o, split(*regimes), split(*workloads), split(*files)); err != nil {
		fmt.Fprintln(os.Stderr, "fieldbench:", err)
		os.Exit(1)
	}
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

type options struct {
	n, rounds, procs, episodes, steps, hogs int
	life, timeout                           time.Duration
	quota                                   float64
	results                                 string
	extra                                   []string
}

// cell is one workload, implementation, regime and file mode: the ns per
// episode of every round.
type cell struct {
	rounds []float64
	failed int
	tuning string
}

func (c *cell) median() float64 { return quantile(c.rounds, 0.5) }
func (c *cell) worst() float64 {
	if len(c.rounds) == 0 {
		return 0
	}
	return slices.Max(c.rounds)
}

func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1)+0.5)]
}

func run(o options, regimes, workloads, files []string) error {
	for _, r := range regimes {
		if !slices.Contains([]string{"quiet", "loaded", "quota", "pair"}, r) {
			return fmt.Errorf("unknown regime %q (accepted: quiet, loaded, quota, pair)", r)
		}
	}
	for _, w := range workloads {
		if w != "tight" && w != "stencil" {
			return fmt.Errorf("unknown workload %q (accepted: tight, stencil)", w)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	empty, err := os.MkdirTemp("", "fieldbench-home")
	if err != nil {
		return err
	}
	defer os.RemoveAll(empty)
	fmt.Printf("fieldbench: %d goroutines, %d processes x %d rounds per cell (tight: %d episodes, stencil: %d steps per round), GOMAXPROCS %d, NumCPU %d, %s\n",
		o.n, o.procs, o.rounds, o.episodes, o.steps, runtime.GOMAXPROCS(0), runtime.NumCPU(), cpuModel())
	fmt.Printf("one-way cache-line transfer between the first two allowed CPUs (pinned ping-pong, the floor of a spinning episode): %s\n", floor())
	for _, fm := range files {
		var env []string
		switch fm {
		case "with":
			if _, err := os.Stat(o.results); err != nil {
				fmt.Printf("\n== with a results file: skipped: %v (run `go run ./cmd/barriertune check` first, or pass -results)\n", err)
				continue
			}
			env = cleanEnv(map[string]string{results.ResultsEnv: o.results})
		case "without":
			env = cleanEnv(map[string]string{"HOME": empty, "XDG_CONFIG_HOME": empty})
		default:
			return fmt.Errorf("unknown file mode %q (accepted: with, without)", fm)
		}
		for _, rg := range regimes {
			if err := regime(o, self, fm, rg, env, workloads); err != nil {
				return err
			}
		}
	}
	return nil
}

// cleanEnv is this process's environment without the lookup's variables,
// plus set.
func cleanEnv(set map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case results.ResultsEnv, results.ForceEnv, "XDG_CONFIG_DIRS", "XDG_CONFIG_HOME", childEnv:
			continue
		}
		if _, ok := set[k]; ok {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	return env
}

func regime(o options, self, fm, rg string, env, workloads []string) error {
	var wrap []string // command prefix putting a program in the quota's cgroup
	switch rg {
	case "loaded":
		hogs, err := cpuhog.Spawn(o.hogs, o.life, cleanEnv(nil))
		if err != nil {
			return err
		}
		defer hogs.Stop()
	case "quota":
		dir, cleanup, err := makeQuota(o.quota)
		if err != nil {
			fmt.Printf("\n== %s results file, quota: skipped: %v\n", fm, err)
			return nil
		}
		defer cleanup()
		wrap = []string{"/bin/sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, dir}
	}
	desc := map[string]string{"quiet": "quiet", "loaded": fmt.Sprintf("%d CPU-bound competitors", o.hogs),
		"quota": fmt.Sprintf("inside a %.2g-CPU quota", o.quota), "pair": "two programs at once"}[rg]
	fmt.Printf("\n== %s results file, %s; uptime: %s\n", fm, desc, "load average "+lab.Load())
	for _, w := range workloads {
		size := o.episodes
		if w == "stencil" {
			size = o.steps
		}
		cells := map[string]*cell{"auto": {}, algname.Cond: {}}
		for _, im := range o.extra {
			cells[im] = &cell{}
		}
		for p := 0; p < o.procs; p++ {
			order := append([]string{"auto", algname.Cond}, o.extra...)
			if p%2 == 1 {
				slices.Reverse(order)
			}
			for _, im := range order {
				copies := 1
				if rg == "pair" {
					copies = 2
				}
				var wg sync.WaitGroup
				var mu sync.Mutex
				for k := 0; k < copies; k++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						rounds, tuning, err := runChild(o, self, wrap, env, w, im, size)
						mu.Lock()
						defer mu.Unlock()
						c := cells[im]
						c.rounds = append(c.rounds, rounds...)
						if err != nil {
							c.failed += o.rounds - len(rounds)
							fmt.Printf("   %s %s: %v\n", w, im, err)
						}
						if c.tuning == "" {
							c.tuning = tuning
						}
					}()
				}
				wg.Wait()
			}
		}
		report(w, rg, cells, o.extra)
	}
	return nil
}

// report prints the median and worst round of each implementation and
// the targets' verdicts for the regime.
func report(w, rg string, cells map[string]*cell, extra []string) {
	a, c := cells["auto"], cells[algname.Cond]
	unit := "ns/episode"
	if w == "stencil" {
		unit = "ns/step"
	}
	fmt.Printf("%-8s %-5s %6s %10s %10s %10s  %s\n", w, "impl", "rounds", "median", "worst", "worst/cond", unit)
	for _, im := range append([]string{"auto", algname.Cond}, extra...) {
		x := cells[im]
		ratio := 0.0
		if m := c.median(); m > 0 {
			ratio = x.worst() / m
		}
		fmt.Printf("%-8s %-5s %6d %10.0f %10.0f %9.2fx", w, im, len(x.rounds), x.median(), x.worst(), ratio)
		if x.failed > 0 {
			fmt.Printf("  (%d rounds failed)", x.failed)
		}
		if x.tuning != "" {
			fmt.Printf("  %s", x.tuning)
		}
		fmt.Println()
	}
	if len(a.rounds) == 0 || len(c.rounds) == 0 {
		return
	}
	med := a.median() / c.median()
	worst := a.worst() / c.median()
	if a.failed > 0 {
		worst = 1e9
	}
	verdict := func(ok bool) string {
		if ok {
			return "holds"
		}
		return "FAILS"
	}
	switch {
	case w == "tight" && rg == "quiet":
		fmt.Printf("   verdict: quiet, auto median %.2fx cond's (target <= 0.80x): %s\n", med, verdict(med <= 0.8))
	case w == "stencil" && rg == "quiet":
		fmt.Printf("   verdict: quiet, auto median %.2fx cond's (target: lead kept, < 1x): %s\n", med, verdict(med < 1))
	case rg != "loaded":
		// The targets are for the quiet and loaded regimes; here
		// the ratios are figures, and cond's own worst says how bad the
		// regime is.
		fmt.Printf("   %s (no target): auto median %.2fx cond's, auto worst %.2fx cond's median, cond's worst %.2fx its median\n",
			rg, med, worst, c.worst()/c.median())
	case w == "tight":
		fmt.Printf("   verdict: %s, auto worst round %.2fx cond's median (target <= 3x): %s (cond's own worst: %.2fx its median)\n",
			rg, worst, verdict(worst <= 3), c.worst()/c.median())
	default:
		fmt.Printf("   verdict: %s, auto worst run %.2fx cond's median (target <= 2x): %s (cond's own worst: %.2fx its median)\n",
			rg, worst, verdict(worst <= 2), c.worst()/c.median())
	}
}

// runChild runs one program and returns the ns per episode of its rounds.
func runChild(o options, self string, wrap, env []string, w, im string, size int) ([]float64, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	args := append(append([]string{}, wrap...), self)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(env, fmt.Sprintf("%s=%s %s %d %d %d", childEnv, w, im, o.rounds, size, o.n))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	var rounds []float64
	tuning := ""
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if t, ok := strings.CutPrefix(line, "tuning "); ok {
			tuning = t
			continue
		}
		if v, err := strconv.ParseFloat(line, 64); err == nil {
			rounds = append(rounds, v)
		}
	}
	err = cmd.Wait()
	if ctx.Err() != nil {
		err = fmt.Errorf("killed after %v", o.timeout)
	}
	if err == nil && len(rounds) != o.rounds {
		err = fmt.Errorf("%d rounds reported, want %d", len(rounds), o.rounds)
	}
	return rounds, tuning, err
}

// child runs one program: spec is "workload impl rounds size n".
func child(spec string) error {
	f := strings.Fields(spec)
	if len(f) != 5 {
		return fmt.Errorf("bad %s %q", childEnv, spec)
	}
	rounds, err1 := strconv.Atoi(f[2])
	size, err2 := strconv.Atoi(f[3])
	n, err3 := strconv.Atoi(f[4])
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	var b interface{ Wait(int) }
	switch f[1] {
	case "auto":
		t := barriers.Tuned(n)
		ab, err := t.New()
		if err != nil {
			return err
		}
		b = ab
		src := "no file"
		if t.Source != "" {
			src = "file"
		}
		bw := "estimated in-process"
		if t.BlockWake > 0 {
			bw = t.BlockWake.Round(time.Microsecond).String()
		}
		fmt.Printf("tuning %s %s, block-wake %s (%s)\n", t.Algorithm, t.Rule, bw, src)
	case algname.Cond:
		b = workload.NewCondBarrier(n)
	case "spin", "park":
		pol, _ := barriers.ParsePolicy(f[1])
		t := barriers.Tuned(n)
		sb, err := t.New(barriers.WithPolicy(pol))
		if err != nil {
			return err
		}
		b = sb
	case algname.Goroutine:
		gb, err := barriers.New(algname.Goroutine, n)
		if err != nil {
			return err
		}
		b = gb
	default:
		return fmt.Errorf("unknown implementation %q", f[1])
	}
	var st *workload.Stencil
	if f[0] == "stencil" {
		st = workload.NewStencil(n, 256)
	}
	for r := 0; r < rounds; r++ {
		var wg sync.WaitGroup
		start := time.Now()
		for p := 0; p < n; p++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if st == nil {
					for e := 0; e < size; e++ {
						b.Wait(p)
					}
					return
				}
				for t := 0; t < size; t++ {
					st.Step(p, t)
					b.Wait(p)
				}
			}()
		}
		wg.Wait()
		fmt.Println(float64(time.Since(start).Nanoseconds()) / float64(size))
	}
	return nil
}

// makeQuota creates a cgroup limited to cpus CPUs and returns its
// directory and its removal.
func makeQuota(cpus float64) (string, func(), error) {
	if os.Geteuid() != 0 {
		return "", nil, errors.New("not root: a CPU quota's cgroup cannot be created")
	}
	const period = 100000
	quota := int(cpus * period)
	name := fmt.Sprintf("fieldbench-%d", os.Getpid())
	type kind struct{ root, file, value string }
	kinds := []kind{
		{"/sys/fs/cgroup", "cpu.max", fmt.Sprintf("%d %d", quota, period)},         // v2
		{"/sys/fs/cgroup/cpu", "cpu.cfs_quota_us", strconv.Itoa(quota)},            // v1
		{"/sys/fs/cgroup/cpu,cpuacct", "cpu.cfs_quota_us", strconv.Itoa(quota)},    // v1, joined
		{"/sys/fs/cgroup/unified", "cpu.max", fmt.Sprintf("%d %d", quota, period)}, // hybrid
	}
	var errs []error
	for _, k := range kinds {
		if _, err := os.Stat(filepath.Join(k.root, k.file)); err != nil && !isV2Root(k) {
			continue
		}
		dir := filepath.Join(k.root, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, k.file), []byte(k.value), 0o644); err != nil {
			os.Remove(dir)
			errs = append(errs, err)
			continue
		}
		return dir, func() {
			// Every program in it has exited; a cgroup without tasks is
			// removed with rmdir. Retry briefly while the kernel lets go.
			for i := 0; i < 50 && os.Remove(dir) != nil; i++ {
				time.Sleep(20 * time.Millisecond)
			}
		}, nil
	}
	if len(errs) == 0 {
		errs = append(errs, errors.New("no cgroup CPU controller found under /sys/fs/cgroup"))
	}
	return "", nil, errors.Join(errs...)
}

// isV2Root reports whether k is a cgroup v2 hierarchy whose root has no
// cpu.max of its own (the root never has one) but delegates cpu.
func isV2Root(k struct{ root, file, value string }) bool {
	if k.file != "cpu.max" {
		return false
	}
	b, err := os.ReadFile(filepath.Join(k.root, "cgroup.subtree_control"))
	return err == nil && slices.Contains(strings.Fields(string(b)), "cpu")
}

// floor measures the one-way latency of a cache-line transfer between
// the first two allowed CPUs: hosts move a virtual machine's CPUs between
// SMT siblings and distant cores within minutes, and a spinning barrier's
// episode costs at least this while a sync.Cond barrier's, whose
// goroutines take turns on one thread, does not.
func floor() string {
	allowed, err := osal.Allowed()
	if err != nil || allowed.Len() < 2 {
		return "not measured (fewer than 2 allowed CPUs)"
	}
	team, err := osal.NewTeam(allowed.Members()[:2])
	if err != nil {
		return "not measured: " + err.Error()
	}
	var ball atomic.Int64
	const trips = 20000
	var ns []float64
	for range 5 {
		var start time.Time
		err = team.Run(func(r int) {
			if r == 0 {
				start = time.Now()
			}
			for i := int64(0); i < trips; i++ {
				for ball.Load() != 2*i+int64(r) {
				}
				ball.Add(1)
			}
		})
		if err != nil {
			return "not measured: " + err.Error()
		}
		ns = append(ns, float64(time.Since(start).Nanoseconds())/(2*trips))
		ball.Store(0)
	}
	return fmt.Sprintf("%.0f ns (median of 5)", quantile(ns, 0.5))
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}
