package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/barriertune/barriertune/cmd/internal/figure"
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/text"
)

// parseSkews reads bench --skew: a comma-separated list of delays, in
// nanoseconds or as Go durations (500, 2us, 1ms). 0 is always measured
// too, as the baseline; the list comes back sorted without repeats.
func parseSkews(s string) ([]time.Duration, error) {
	out := []time.Duration{0}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		d, err := time.ParseDuration(part)
		if n, nerr := strconv.ParseInt(part, 10, 64); nerr == nil {
			d, err = time.Duration(n), nil
		}
		if err != nil || d < 0 || d > measure.MaxSkew {
			return nil, fmt.Errorf("--skew %q: %q is not a delay from 0 to %v (want ns such as 500, or a duration such as 2us)", elided(s), elided(part), measure.MaxSkew)
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out, nil
}

// skewRun is one algorithm's synchronisation time at each skew.
type skewRun struct {
	Algorithm string           `json:"algorithm"`
	Policy    string           `json:"policy"`
	Results   []measure.Result `json:"results"` // one per skew, in order
}

// measureSkews times every candidate with the last rank late by each skew.
func measureSkews(cpus cpuset.Placement, cands []measure.Candidate, skews []time.Duration, opts measure.Options) ([]skewRun, error) {
	runs := make([]skewRun, len(cands))
	for i, c := range cands {
		runs[i] = skewRun{Algorithm: c.Algorithm, Policy: policyLabel(measure.Result{Algorithm: c.Algorithm, Policy: c.Policy.String()})}
	}
	for _, d := range skews {
		o := opts
		o.Skew, o.Floor = d, false
		run, err := measure.Barriers(cpus, cands, o)
		if err != nil {
			return nil, fmt.Errorf("skew %v: %w", d, err)
		}
		for i, r := range run.Results {
			runs[i].Results = append(runs[i].Results, r)
		}
	}
	return runs, nil
}

// benchSkews is bench --skew: it measures and prints the table (or JSON),
// and with plotPath draws synchronisation time against skew there.
func benchSkews(w io.Writer, cpus cpuset.Placement, cands []measure.Candidate, skew string, opts measure.Options, asJSON bool, plotPath string) error {
	skews, err := parseSkews(skew)
	if err != nil {
		return err
	}
	runs, err := measureSkews(cpus, cands, skews, opts)
	if err != nil {
		return err
	}
	if plotPath != "" {
		p, err := skewPlot(cpus, skews, runs)
		if err != nil {
			return err
		}
		if err := figure.Save(p, plotPath); err != nil {
			return err
		}
	}
	if asJSON {
		type skewJSON struct {
			Algorithm string        `json:"algorithm"`
			Policy    string        `json:"policy"`
			Results   []benchResult `json:"results"` // one per skew, in order
		}
		out := make([]skewJSON, len(runs))
		for i, r := range runs {
			out[i] = skewJSON{r.Algorithm, r.Policy, benchJSONResults(r.Results)}
		}
		return writeJSON(w, map[string]any{"skew": out})
	}
	return printSkew(w, cpus, skews, runs)
}

// printSkew writes one row per algorithm: the median synchronisation time
// (episode time minus the skew) at each skew.
func printSkew(w io.Writer, cpus cpuset.Placement, skews []time.Duration, runs []skewRun) error {
	fmt.Fprintf(w, "%s on %s; the last rank arrives late by the skew.\n", text.Plural(len(cpus), "thread"), onCPUs(cpus))
	fmt.Fprintf(w, "Synchronisation time: median ns per episode minus the skew (what the barrier adds after the late arrival).\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "algorithm\tpolicy\t"
	for _, d := range skews {
		header += fmt.Sprintf("skew %v\t", d)
	}
	fmt.Fprintln(tw, header)
	for _, r := range runs {
		line := r.Algorithm + "\t" + r.Policy + "\t"
		for _, res := range r.Results {
			line += fmt.Sprintf("%.1f\t", res.MedianNs)
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// skewPlot draws each algorithm's synchronisation time (median ns per
// episode minus the skew) against the skew: a line per algorithm.
func skewPlot(cpus cpuset.Placement, skews []time.Duration, runs []skewRun) (*plot.Plot, error) {
	series := make([]figure.Series, len(runs))
	for i, r := range runs {
		series[i].Name = r.Algorithm + " (" + r.Policy + ")"
		for k, res := range r.Results {
			series[i].Points = append(series[i].Points, plotter.XY{X: float64(skews[k].Nanoseconds()), Y: res.MedianNs})
		}
	}
	return figure.Skew(fmt.Sprintf("%s on %s, the last arriving late", text.Plural(len(cpus), "thread"), onCPUs(cpus)), series)
}
