// Command modelcheck fits the default cost model to measured episode
// times and says how well it reproduces them: for every measurement, the
// fitted model's prediction over the measured time, and the same
// prediction from a fit that left the measurement's algorithm out
// (leave-one-out: how well the model speaks for an algorithm it was not
// fitted to); per thread count, the model's fastest and what it measured
// against the measured fastest. The fit is model.Fit (bounded constants,
// squared log-ratio loss), the one `barriertune check` records.
//
//	go run ./scripts/modelcheck -results results.json
//	go run ./scripts/modelcheck -measured internal/model/testdata/vcpu16-measured.csv \
//	    -matrix internal/model/testdata/vcpu16-matrix.csv
//
// A results file's tree is its machine's synthetic string unless
// -synthetic gives it; its latencies are its floors and per-level
// latencies (check.CostsFrom). A measured CSV (threads,algorithm,
// measured_ns,...) is read on the compact placement 0..N-1 of -matrix.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/check"
	"github.com/barriertune/barriertune/internal/latency"
	"github.com/barriertune/barriertune/internal/model"
	"github.com/barriertune/barriertune/results"
)

func main() {
	file := flag.String("results", "", "results FILE written by `barriertune check`")
	synthetic := flag.String("synthetic", "", "with -results: the machine's tree as an hwloc synthetic string (default: the file's)")
	measured := flag.String("measured", "", "CSV of measured episode times: threads,algorithm,measured_ns[,...] (compact placement 0..N-1)")
	matrix := flag.String("matrix", "", "with -measured: the one-way latency matrix (../shared/latency CSV format)")
	flag.Parse()
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
