package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/barriertune/barriertune/measure"
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
			return nil, fmt.Errorf("--skew %q: %q is not a delay from 0 to %v (want ns such as 500, or a duration such as 2us)", s, part, measure.MaxSkew)
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
		runs[i] = skewRun{Algorithm: c.Algorithm, Policy: c.Policy.String()}
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

// runSkew is bench --skew: it measures and prints the table (or JSON).
func runSkew(w io.Writer, cpus []int, cands []measure.Candidate, skew string, opts measure.Options, asJSON bool) error {
	skews, err := parseSkews(skew)
	if err != nil {
		return err
	}
	runs, err := measureSkews(cpus, cands, skews, opts)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(w, map[string]any{"skew": runs})
	}
	return printSkew(w, cpus, skews, runs)
}

// printSkew writes one row per algorithm: the median synchronisation time
// (episode time minus the skew) at each skew.
func printSkew(w io.Writer, cpus []int, skews []time.Duration, runs []skewRun) error {
	fmt.Fprintf(w, "%d threads on CPUs %s; the last rank arrives late by the skew.\n", len(cpus), joinInts(cpus))
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
