package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/barriertune/barriertune/internal/figure"
	"github.com/barriertune/barriertune/internal/measure"
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
		if !containsDuration(out, d) {
			out = append(out, d)
		}
	}
	for i := 1; i < len(out); i++ { // insertion sort: a handful of values
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

func containsDuration(v []time.Duration, d time.Duration) bool {
	for _, x := range v {
		if x == d {
			return true
		}
	}
	return false
}

// skewRun is one algorithm's synchronisation time at each skew.
type skewRun struct {
	Algorithm string           `json:"algorithm"`
	Policy    string           `json:"policy"`
	Results   []measure.Result `json:"results"` // one per skew, in order
}

// measureSkews times every candidate with the last rank late by each skew.
func measureSkews(cpus []int, cands []measure.Candidate, skews []time.Duration, opts measure.Options) ([]skewRun, error) {
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
func benchSkews(w io.Writer, cpus []int, cands []measure.Candidate, skew string, opts measure.Options, asJSON bool, plotPath string) error {
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
func printSkew(w io.Writer, cpus []int, skews []time.Duration, runs []skewRun) error {
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
func skewPlot(cpus []int, skews []time.Duration, runs []skewRun) (*plot.Plot, error) {
	if len(runs) == 0 || len(skews) == 0 {
		return nil, fmt.Errorf("nothing to plot")
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s on %s, the last arriving late", text.Plural(len(cpus), "thread"), onCPUs(cpus))
	p.X.Label.Text = "skew: the last thread's delay (ns)"
	p.Y.Label.Text = "synchronisation time (median ns per episode minus the skew)"
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, r := range runs {
		pts := make(plotter.XYs, 0, len(r.Results))
		for k, res := range r.Results {
			pts = append(pts, plotter.XY{X: float64(skews[k].Nanoseconds()), Y: res.MedianNs})
			lo, hi = min(lo, res.MedianNs), max(hi, res.MedianNs)
		}
		line, dots, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Algorithm, err)
		}
		line.Color, dots.Shape, line.Dashes = figure.Style(i)
		dots.Color = line.Color
		p.Add(line, dots)
		p.Legend.Add(r.Algorithm+" ("+r.Policy+")", line, dots)
	}
	p.Add(plotter.NewGrid())
	figure.LogAxis(p, lo, hi)
	p.Legend.Top = true
	p.X.Padding, p.Y.Padding = vg.Points(8), vg.Points(8)
	return p, nil
}
