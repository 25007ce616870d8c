// Command modelcheck fits the default cost model to measured episode
// times and says how well it reproduces them: for every measurement, the
// fitted model's prediction over the measured time, and the same
// prediction from a fit that left the measurement's algorithm out
// (leave-one-out: how well the model speaks for an algorithm it was not
// fitted to); per thread count, the model's fastest and what it measured
// against the measured fastest. The fit is model.Fit (bounded constants,
// squared log-ratio loss), the one `barriertune check` records.
//
//	go run ./cmd/scripts/modelcheck -results results.json
//	go run ./cmd/scripts/modelcheck -measured cmd/internal/model/testdata/vcpu16-measured.csv \
//	    -matrix cmd/internal/model/testdata/vcpu16-matrix.csv
//	go run ./cmd/scripts/modelcheck -validation ../shared/validation
//
// -validation simulates a check of central at 4, 8, 16 and 32 threads on
// the synthetic machine matching the published dual-socket Haswell
// ("pack:2 core:10 pu:2", the tree's typical latencies, the default
// constants) and compares it with the published times: absolute, and the
// growth from 4 threads the README asks for.
//
// A results file's tree is its machine's synthetic string unless
// -synthetic gives it; its latencies are its floors and per-level
// latencies (check.CostsFrom). A measured CSV (threads,algorithm,
// measured_ns,...) is read on the compact placement 0..N-1 of -matrix.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/cmd/internal/check"
	"github.com/barriertune/barriertune/cmd/internal/latency"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/results"
)

func main() {
	file := flag.String("results", "", "results FILE written by `barriertune check`")
	synthetic := flag.String("synthetic", "", "with -results: the machine's tree as an hwloc synthetic string (default: the file's)")
	measured := flag.String("measured", "", "CSV of measured episode times: threads,algorithm,measured_ns[,...] (compact placement 0..N-1)")
	matrix := flag.String("matrix", "", "with -measured: the one-way latency matrix (../shared/latency CSV format)")
	validation := flag.String("validation", "", "the ../shared/validation directory: compare the simulated central barrier with its published times")
	flag.Parse()
	if *validation != "" {
		if err := validate(*validation); err != nil {
			fmt.Fprintln(os.Stderr, "modelcheck:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*file, *synthetic, *measured, *matrix); err != nil {
		fmt.Fprintln(os.Stderr, "modelcheck:", err)
		os.Exit(2)
	}
}

func run(file, synthetic, measured, matrix string) error {
	var obs []model.Observation
	var costs model.Costs
	var what string
	switch {
	case file != "" && measured == "":
		f, err := results.Read(file)
		if err != nil {
			return err
		}
		tree := f.Machine.Topology
		if synthetic != "" {
			tree = synthetic
		}
		topo, err := hwtree.FromSynthetic(tree)
		if err != nil {
			return fmt.Errorf("%s: its tree %q is not a synthetic string; give -synthetic: %w", file, tree, err)
		}
		obs, costs = check.Observations(f), check.CostsFrom(topo, f)
		what = fmt.Sprintf("%s (%s, %s)", file, f.Machine.CPU.Name, tree)
		if f.Calibration != nil {
			what += "; the file's calibration: " + f.Calibration.FittedOn
		}
	case measured != "" && matrix != "" && file == "":
		m, err := latency.ReadCSVFile(matrix)
		if err != nil {
			return err
		}
		if obs, err = readMeasured(measured); err != nil {
			return err
		}
		costs, what = m, measured+" on "+matrix
	default:
		return fmt.Errorf("give -results FILE, or -measured CSV with -matrix CSV")
	}
	if len(obs) == 0 {
		return fmt.Errorf("%s: no measurement the model can predict", what)
	}
	fmt.Printf("model check of %s\n", what)
	fmt.Print(Report(obs, costs))
	return nil
}

// validate compares the simulated central barrier on "pack:2 core:10
// pu:2" with the published dual-socket Haswell times in dir's README.
func validate(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		return err
	}
	row := regexp.MustCompile(`^\| (\d+) \| ([\d,]+) \(\+/- [\d,]+\) \|`)
	pub := map[int]float64{}
	for _, l := range strings.Split(string(b), "\n") {
		if m := row.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			v, _ := strconv.ParseFloat(strings.ReplaceAll(m[2], ",", ""), 64)
			pub[n] = v
		}
	}
	counts := []int{4, 8, 16, 32}
	for _, n := range counts {
		if pub[n] <= 0 {
			return fmt.Errorf("%s/README.md: no central time at %d threads", dir, n)
		}
	}
	topo, err := hwtree.FromSynthetic("pack:2 core:10 pu:2")
	if err != nil {
		return err
	}
	m, err := check.NewModelMeasurer(topo, nil, model.DefaultModel, model.DefaultParams(), 0, 1)
	if err != nil {
		return err
	}
	f, err := check.Run(context.Background(), check.Config{Topology: topo, Threads: counts, Algorithms: []string{algname.Central}, Measurer: m, Exhaustive: true})
	if err != nil {
		return err
	}
	sim := map[int]float64{}
	for _, e := range f.Threads {
		if e.Best != nil {
			sim[e.Threads] = e.Best.MedianNs
		}
	}
	fmt.Println("central barrier, published (2x Xeon E5-2660 v3, unpinned) against simulated (pack:2 core:10 pu:2, typical latencies, default constants, best placement)")
	fmt.Printf("%7s %12s %12s %8s %10s %10s %8s\n", "threads", "published_ns", "simulated_ns", "ratio", "growth_pub", "growth_sim", "ratio")
	worst := 1.0
	for _, n := range counts {
		gp, gs := pub[n]/pub[4], sim[n]/sim[4]
		worst = max(worst, gs/gp, gp/gs)
		fmt.Printf("%7d %12.0f %12.0f %8.2f %10.2f %10.2f %8.2f\n", n, pub[n], sim[n], sim[n]/pub[n], gp, gs, gs/gp)
	}
	fmt.Printf("growth from 4 threads: worst %.2fx off (target: within 2x)\n", worst)
	return nil
}
