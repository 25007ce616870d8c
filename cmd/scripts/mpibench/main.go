// Command mpibench measures what barriertune's openmpi export does to the
// real Open MPI: a plain MPI_Barrier loop (the check's loop in its run
// mode, cmd/internal/mpicheck/csrc/mpiloop.c: MPI_Barrier on
// MPI_COMM_WORLD, the slowest rank's time a barrier) runs under mpirun
// with Open MPI's defaults and with every line of the export passed as
// `--mca name value` (the rules file's two lines and a chosen launch-level
// line, binding, mapping or coll/sm, alike), for each rank count, in
// interleaved rounds: every
// round runs both, in a random order, so load that comes and goes hits
// both alike. It prints, per count, the median of the rounds' ratios
// (export over default), the medians, and the load average.
//
// Run it from the module root (as root, Open MPI's launches carry its
// OMPI_ALLOW_RUN_AS_ROOT permission):
//
//	go run ./cmd/scripts/mpibench
//
// Without -results it first runs `barriertune check --threads 2,3,4,8`
// with the default budget (the check measures MPI in what the algorithms
// and OpenMP leave), then `barriertune export --format openmpi -o F`.
// With -format mpich it passes the export's assignments (for each count,
// export --threads N) in the environment of MPICH's launches instead.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/mpicheck"
	"github.com/barriertune/barriertune/cmd/scripts/internal/lab"
)

func main() { lab.Main("mpibench", run) }

func run() error {
	resultsFile := flag.String("results", "", "results file to export from (default: run the check first)")
	ranksFlag := flag.String("ranks", "2,3,4,8", "rank counts, comma-separated")
	rounds := flag.Int("rounds", 15, "interleaved rounds (3..1000)")
	seconds := flag.Float64("seconds", 0.05, "timed chunks of one run, in seconds (0.01..10)")
	budget := flag.Duration("budget", 60*time.Second, "the check's --budget when no -results is given")
	format := flag.String("format", "openmpi", "openmpi or mpich")
	flag.Parse()
	switch {
	case flag.NArg() > 0:
		return lab.Usagef("unexpected argument %q (mpibench takes flags only)", flag.Arg(0))
	case *rounds < 3 || *rounds > 1000:
		return lab.Usagef("-rounds %d out of range (want 3 to 1000)", *rounds)
	case !(*seconds >= 0.01 && *seconds <= 10):
		return lab.Usagef("-seconds %g out of range (want 0.01 to 10)", *seconds)
	case *format != "openmpi" && *format != "mpich":
		return lab.Usagef("-format %q: want openmpi or mpich", *format)
	}
	counts, err := lab.Counts("-ranks", *ranksFlag, "rank", 256)
	if err != nil {
		return err
	}
	var im mpicheck.Implementation
	for _, x := range mpicheck.Implementations() {
		if x.Name == *format {
			im = x
		}
	}
	if !im.Found() {
		return fmt.Errorf("%s not installed (%s, %s): apt-get install openmpi-bin libopenmpi-dev (or mpich libmpich-dev)", im.Name, im.Compiler, im.Launcher)
	}
	tool, dir, err := lab.BuildTool("mpibench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	list := make([]string, len(counts))
	for i, n := range counts {
		list[i] = strconv.Itoa(n)
	}
	if *resultsFile == "" {
		*resultsFile = filepath.Join(dir, "results.json")
		fmt.Fprintf(os.Stderr, "mpibench: no -results: running barriertune check --threads %s --budget %s (load %s)\n", strings.Join(list, ","), *budget, lab.Load())
		if out, err := lab.Run(*budget+3*time.Minute, nil, true, tool, "check", "-q", "--threads", strings.Join(list, ","), "--budget", budget.String(), "-o", *resultsFile); err != nil {
			return fmt.Errorf("barriertune check: %v\n%s", err, out)
		}
	}
	if out, err := lab.Run(time.Minute, nil, true, tool, "show", *resultsFile); err == nil {
		if i := strings.Index(string(out), "MPI implementations"); i >= 0 {
			fmt.Printf("The check's MPI record:\n\n```\n%s```\n\n", out[i:])
		}
	}
	p, err := mpicheck.Build(context.Background(), im, dir)
	if err != nil {
		return err
	}
	// The export's settings per count: Open MPI's as --mca arguments,
	// MPICH's as environment variables.
	args := map[int][]string{}
	env := map[int][]string{}
	for _, n := range counts {
		file := filepath.Join(dir, fmt.Sprintf("export-%d.conf", n))
		xargs := []string{"export", "--format", *format, "-o", file, *resultsFile}
		if *format == "mpich" {
			xargs = []string{"export", "--format", *format, "--threads", strconv.Itoa(n), "-o", file, *resultsFile}
		}
		if out, err := lab.Run(time.Minute, nil, true, tool, xargs...); err != nil {
			return fmt.Errorf("barriertune export: %v\n%s", err, out)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(string(data), "\n") {
			l = strings.TrimSpace(l)
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			if *format == "openmpi" {
				name, value, ok := strings.Cut(l, "=")
				if !ok {
					return fmt.Errorf("export line %q is not name = value", l)
				}
				args[n] = append(args[n], "--mca", strings.TrimSpace(name), strings.TrimSpace(value))
			} else {
				env[n] = append(env[n], strings.Trim(l, "'"))
			}
		}
		if n == counts[0] || *format == "mpich" {
			fmt.Printf("Export (%d ranks): `%s`\n\n", n, strings.Join(append(args[n], env[n]...), " "))
		}
	}
	type cell struct{ def, exp, ratio []float64 }
	cells := map[int]*cell{}
	loadStart := lab.Load()
	for r := 0; r < *rounds; r++ {
		for _, n := range counts {
			c := cells[n]
			if c == nil {
				c = &cell{}
				cells[n] = c
			}
			var d, x float64
			first := rand.IntN(2) == 0
			for k := 0; k < 2; k++ {
				withExport := (k == 0) == first
				s := mpicheck.Sample{Ranks: n, Seconds: *seconds, Chunk: *seconds / 10, MaxBarriers: 500000, Limit: time.Minute}
				if withExport {
					s.Args, s.Env = args[n], env[n]
				}
				t, err := p.Run(context.Background(), s)
				if err != nil {
					return fmt.Errorf("round %d, %d ranks (export %v): %w", r+1, n, withExport, err)
				}
				if withExport {
					x = t.NsPerBarrier
				} else {
					d = t.NsPerBarrier
				}
			}
			c.def, c.exp, c.ratio = append(c.def, d), append(c.exp, x), append(c.ratio, x/d)
			fmt.Fprintf(os.Stderr, "\rmpibench: round %d/%d, %d ranks", r+1, *rounds, n)
		}
	}
	fmt.Fprintln(os.Stderr)
	fmt.Printf("%s, %d interleaved rounds of %g s, load average %s at the start, %s at the end\n\n", p.Version, *rounds, *seconds, loadStart, lab.Load())
	fmt.Printf("| ranks | default median | export median | median of export/default |\n|---|---|---|---|\n")
	for _, n := range counts {
		c := cells[n]
		fmt.Printf("| %d | %s | %s | %.2f |\n", n, ns(lab.Median(c.def)), ns(lab.Median(c.exp)), lab.Median(c.ratio))
	}
	return nil
}

func ns(x float64) string {
	if x >= 10000 {
		return fmt.Sprintf("%.1f µs", x/1000)
	}
	return fmt.Sprintf("%.0f ns", x)
}
