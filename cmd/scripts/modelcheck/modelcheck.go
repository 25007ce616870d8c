package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/model"
)

// maxRows caps a measured CSV (hostile input: validate before allocating).
const maxRows = 100000

// readMeasured reads threads,algorithm,measured_ns[,...] rows ('#'
// comments, a header row) as observations on CPUs 0..threads-1.
func readMeasured(path string) ([]model.Observation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rows []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			rows = append(rows, l)
		}
	}
	if len(rows) > maxRows {
		return nil, fmt.Errorf("%s: %d rows; accepted at most %d", path, len(rows), maxRows)
	}
	r := csv.NewReader(strings.NewReader(strings.Join(rows, "\n")))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []model.Observation
	for i, rec := range recs {
		if len(rec) < 3 {
			return nil, fmt.Errorf("%s row %d: %d fields; want threads,algorithm,measured_ns", path, i+1, len(rec))
		}
		n, err1 := strconv.Atoi(rec[0])
		ns, err2 := strconv.ParseFloat(rec[2], 64)
		if err1 != nil || err2 != nil {
			if i == 0 {
				continue // the header
			}
			return nil, fmt.Errorf("%s row %d: %q: want an integer thread count and a time in ns", path, i+1, strings.Join(rec, ","))
		}
		if n < 1 || n > barriers.MaxParticipants || !(ns > 0) {
			return nil, fmt.Errorf("%s row %d: %d threads, %g ns: want 1..%d threads and a positive time", path, i+1, n, ns, barriers.MaxParticipants)
		}
		cpus := make([]int, n)
		for j := range cpus {
			cpus[j] = j
		}
		out = append(out, model.Observation{Algorithm: rec[1], CPUs: cpus, MeasuredNs: ns})
	}
	return out, nil
}

// Report fits the model to obs on costs and writes, for every
// measurement, the fitted prediction over the measured time and the
// leave-one-out ratio (the model fitted without that algorithm), then per
// thread count the model's fastest against the measured fastest, and the
// fitted constants.
func Report(obs []model.Observation, costs model.Costs) string {
	var b strings.Builder
	fit := model.Fit(obs, costs, model.DefaultParams())
	loo := map[string][]model.Residual{}
	var algs []string
	for _, o := range obs {
		if !slices.Contains(algs, o.Algorithm) {
			algs = append(algs, o.Algorithm)
		}
	}
	for _, a := range algs {
		loo[a] = model.LeaveOneOut(obs, costs, model.DefaultParams(), a)
	}
	fmt.Fprintf(&b, "fit: %s; loss: %s\n", fit.Summary(), model.FitLoss)
	fmt.Fprintf(&b, "%7s  %-18s %-6s %12s %12s %7s %12s %7s\n", "threads", "algorithm", "policy", "measured_ns", "predicted_ns", "ratio", "loo_pred_ns", "loo")
	used := map[string]int{}
	worstLOO := 0.0
	for _, r := range fit.Residuals {
		lr := "-"
		lp := "-"
		if l := loo[r.Algorithm]; used[r.Algorithm] < len(l) {
			x := l[used[r.Algorithm]]
			used[r.Algorithm]++
			lr, lp = fmt.Sprintf("%.2f", x.Ratio), fmt.Sprintf("%.1f", x.PredictedNs)
			worstLOO = max(worstLOO, math.Abs(math.Log(x.Ratio)))
		}
		name := r.Algorithm
		if r.FanIn > 0 {
			name += fmt.Sprintf("(%d)", r.FanIn)
		}
		fmt.Fprintf(&b, "%7d  %-18s %-6s %12.1f %12.1f %7.2f %12s %7s\n", r.Threads, name, r.Policy, r.MeasuredNs, r.PredictedNs, r.Ratio, lp, lr)
	}
	if worstLOO > 0 {
		fmt.Fprintf(&b, "leave-one-out: worst ratio %.2fx off\n", math.Exp(worstLOO))
	}
	for _, p := range Picks(fit.Residuals) {
		fmt.Fprintf(&b, "%d threads: model's fastest %s measured %.1f ns, %.3fx the measured fastest (%s, %.1f ns)",
			p.Threads, p.Predicted, p.PredictedMeasuredNs, p.PredictedMeasuredNs/p.FastestNs, p.Fastest, p.FastestNs)
		if len(p.Tied) > 0 {
			fmt.Fprintf(&b, "; predicted within 0.5%% of it: %s", strings.Join(p.Tied, ", "))
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "constants fitted: %s\n", strings.Join(fit.Constants, ", "))
	fmt.Fprintf(&b, "constants: %+v\n", fit.Params)
	return b.String()
}

// Pick is one thread count's measured fastest and the model's (the
// first measurement predicted fastest, the check's catalog order on a
// tie); Tied names the others predicted within 0.5% of it, which the
// model cannot tell from it.
type Pick struct {
	Threads             int
	Fastest             string
	FastestNs           float64
	Predicted           string
	PredictedMeasuredNs float64
	Tied                []string
}

// Picks compares, per thread count, the measurement the model predicts
// fastest (the first on a tie, the check's catalog order) with the
// measured fastest.
func Picks(rs []model.Residual) []Pick {
	var out []Pick
	for _, r := range rs {
		i := slices.IndexFunc(out, func(p Pick) bool { return p.Threads == r.Threads })
		if i < 0 {
			out = append(out, Pick{Threads: r.Threads, FastestNs: math.Inf(1)})
			i = len(out) - 1
		}
		p := &out[i]
		if r.MeasuredNs < p.FastestNs {
			p.Fastest, p.FastestNs = r.Algorithm, r.MeasuredNs
		}
	}
	for i := range out {
		best := math.Inf(1)
		for _, r := range rs {
			if r.Threads == out[i].Threads && r.PredictedNs < best {
				best = r.PredictedNs
				out[i].Predicted, out[i].PredictedMeasuredNs = r.Algorithm, r.MeasuredNs
			}
		}
		first := true
		for _, r := range rs {
			if r.Threads != out[i].Threads || r.PredictedNs > best*1.005 {
				continue
			}
			if first && r.Algorithm == out[i].Predicted && r.MeasuredNs == out[i].PredictedMeasuredNs {
				first = false
				continue
			}
			out[i].Tied = append(out[i].Tied, fmt.Sprintf("%s (measured %.1f)", r.Algorithm, r.MeasuredNs))
		}
	}
	slices.SortFunc(out, func(a, b Pick) int { return a.Threads - b.Threads })
	return out
}
