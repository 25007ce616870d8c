// Package model predicts a barrier episode's time from its signal pattern
// and a latency matrix (Meyer & Elster: a barrier is a sequence of boolean
// signal matrices over a point-to-point cost matrix).
package model

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/algname"
)

// CriticalPath is the configuration-sets paper's critical-path model: f_p(−1) = 0; in stage s
// p sends at f_p(s−1) and its signal reaches q at f_p(s−1) + L(cpu p, cpu q);
// f_q(s) is the max of f_q(s−1) and q's arrivals in stage s; the episode is
// the latest finish. cpus[r] is rank r's CPU (len(cpus) ranks).
func CriticalPath(p Pattern, cpus cpuset.Placement, c Costs) float64 {
	end := 0.0
	for _, v := range Finishes(p, cpus, c) {
		if v > end || math.IsNaN(v) {
			end = v
		}
	}
	return end
}

// Finishes returns every rank's finish f_r(last stage) under the
// critical-path model (CriticalPath is their maximum): when rank r has
// received, directly or through others, every signal it depends on.
func Finishes(p Pattern, cpus cpuset.Placement, c Costs) []float64 {
	f := make([]float64, len(cpus))
	g := make([]float64, len(cpus))
	for _, st := range p {
		copy(g, f)
		for _, s := range st {
			if t := f[s.From] + c.Latency(cpus[s.From], cpus[s.To]); t > g[s.To] || math.IsNaN(t) {
				g[s.To] = t
			}
		}
		f, g = g, f
	}
	return f
}

// Kind names a cost model.
type Kind string

// The models.
const (
	// CriticalPathModel is CriticalPath and nothing else.
	CriticalPathModel Kind = "critical-path"
	// DefaultModel adds per-signal overhead, line contention and wake-ups.
	DefaultModel Kind = "default"
)

// Check returns nil for a model this package has, else an error naming k
// and the models accepted.
func (k Kind) Check() error {
	if k != CriticalPathModel && k != DefaultModel {
		return fmt.Errorf("unknown cost model %q (accepted: %s, %s)", string(k), DefaultModel, CriticalPathModel)
	}
	return nil
}

// Params are the default model's constants: the per-signal overhead, the
// price of many writers on one line, and the costs of wake-ups. The check
// calibrates them on the machine it runs on (fitted to its first round of
// measurements) and records them in the results file, so that a simulated
// check on a copy of the file predicts with the same numbers.
type Params struct {
	// SignalOverheadNs is added to every signal's latency. Fitted at 2
	// threads on this project's 2-CPU development machine it came out
	// between −50 and +3 ns per stage: the floor already holds the cost of
	// the store and the load, so its default is 0.
	SignalOverheadNs float64 `json:"signal_overhead_ns"`
	// ContentionNs and ContentionGrowthNs add a fitted price for the extra
	// writers on one counter line in a stage: k extra writers cost
	// k·(ContentionNs + ContentionGrowthNs·k) on top of the line transfers
	// (CounterTransferFraction). Both 0 by default: they were 68.5 and 5.5,
	// fitted to central at 4, 8 and 16 threads on a 16-vCPU KVM guest, and
	// extrapolated quadratically to hundreds of writers; the line
	// transfers replace them (docs/model.md). Kept for calibrations that
	// fit them.
	ContentionNs       float64 `json:"contention_ns"`
	ContentionGrowthNs float64 `json:"contention_growth_ns"`
	// FutexWakeNs is the cond baseline's wake-up of a sleeping OS thread
	// when the threads fit the CPUs (cond and channel at 2 pinned threads:
	// medians 40 and 68 µs on the shared development VM).
	FutexWakeNs float64 `json:"futex_wake_ns"`
	// ChannelWakeNs is the channel baseline's wake-up (a closed channel
	// per episode, the runtime's own wake path): 0.4-1.9x cond's in checks
	// on the development VM, the two varying apart, so it has its own
	// constant; a file written before it existed reads the default, and 0
	// prices channel as cond.
	ChannelWakeNs float64 `json:"channel_wake_ns,omitempty"`
	// OversubscribedStageNs is the cost per stage when threads outnumber
	// CPUs (parked goroutines woken by the Go scheduler), and
	// OversubscribedSignalNs the cost per signal, shared by the CPUs;
	// least-squares fit of central and static-tree at 8 threads on 2 CPUs.
	OversubscribedStageNs  float64 `json:"oversubscribed_stage_ns"`
	OversubscribedSignalNs float64 `json:"oversubscribed_signal_ns"`
	// FlagRefetchFraction prices a flag that several waiters spin on (a
	// release flag): the write invalidates every waiter's copy, each
	// waiter refetches the line and the owner serves the refetches one
	// after another, each occupying the line for this fraction of the
	// link's latency; the k-th waiter served sees k−1 transfers before its
	// own.
	FlagRefetchFraction float64 `json:"flag_refetch_fraction"`
	// CounterTransferFraction prices a counter several participants
	// increment in one stage: each increment takes the line exclusively,
	// one after another, each occupying it for this fraction of the
	// writer's link latency.
	CounterTransferFraction float64 `json:"counter_transfer_fraction"`
	// CounterArrivalFraction is the share of a link's latency that an
	// arrival on a counter line (central's, combining's increments) adds
	// to the critical path. Back to back, the increments of the earlier
	// arrivals overlap the previous release, and the releaser's own
	// increment hits a line it holds: at 2 threads on this project's
	// development VM, central and combining measured 0.93-0.96 of the floor
	// against 2.0-2.15 for the trees of the same two stages, a fitted
	// fraction of 0. Default 1 (each increment a full transfer), which a
	// file written before it existed reads.
	CounterArrivalFraction float64 `json:"counter_arrival_fraction"`
	// GoroutineNs is what the goroutine barrier adds to central's pattern
	// when its goroutines fit the CPUs (its spin, yield and episode-word
	// bookkeeping): 58-105 ns fitted at 2 threads on the development VM. It does
	// not block there, so no wake-up is priced; with more goroutines than
	// CPUs the oversubscribed terms price the Go scheduler instead.
	GoroutineNs float64 `json:"goroutine_ns"`
	// OversubscribedGoroutineNs and OversubscribedParkNs price the Go
	// scheduler when goroutines outnumber the CPUs, per goroutine and
	// episode, shared by the CPUs (n goroutines on P CPUs: n/P of them):
	// the goroutine barrier's waiters yield their P (one switch each), the
	// cond and channel baselines' park and are readied. Measured here
	// (2 CPUs, 4 and 8 goroutines): 200-231 ns and 283-337 ns; the
	// signal pattern does not matter there, so the oversubscribed stage
	// and signal terms do not apply to them.
	OversubscribedGoroutineNs float64 `json:"oversubscribed_goroutine_ns"`
	OversubscribedParkNs      float64 `json:"oversubscribed_park_ns"`
}

// Bounds are the physical ranges Fit keeps each constant in: no cost is
// negative, and a fraction of a link's latency is at most the whole
// link. maxLatency is the largest latency the fitted measurements cross.
func Bounds(maxLatency float64) (lo, hi Params) {
	lo = Params{FutexWakeNs: 100, ChannelWakeNs: 100}
	hi = Params{
		SignalOverheadNs:        max(maxLatency, 1),
		FutexWakeNs:             10e6,
		ChannelWakeNs:           10e6,
		OversubscribedStageNs:   1e6,
		OversubscribedSignalNs:  1e5,
		FlagRefetchFraction:     1,
		CounterTransferFraction: 1,
		CounterArrivalFraction:  1,
		GoroutineNs:             1e5,
		// Per goroutine switch or park: up to 100 µs.
		OversubscribedGoroutineNs: 1e5,
		OversubscribedParkNs:      1e5,
	}
	return lo, hi
}

// DefaultParams returns the default model's constants as calibrated on
// this project's machines (see Params and docs/model.md).
func DefaultParams() Params {
	return Params{
		SignalOverheadNs:        0,
		ContentionNs:            0,
		ContentionGrowthNs:      0,
		FutexWakeNs:             40000,
		ChannelWakeNs:           68000,
		OversubscribedStageNs:   525,
		OversubscribedSignalNs:  60,
		FlagRefetchFraction:     0.1,
		CounterTransferFraction: 0.4,
		CounterArrivalFraction:  1,
		GoroutineNs:             100,
		// Measured on the 2-vCPU development VM, 4 and 8 goroutines.
		OversubscribedGoroutineNs: 215,
		OversubscribedParkNs:      310,
	}
}

type plus struct {
	c Costs
	o float64
}

func (p plus) Latency(a, b int) float64 {
	if a == b {
		return 0
	}
	return p.c.Latency(a, b) + p.o
}

// Predict predicts one episode of alg on cpus (rank r on cpus[r]) with model k
// and DefaultParams.
func Predict(k Kind, alg string, cpus cpuset.Placement, c Costs, fanIn int) (float64, error) {
	return PredictWith(k, alg, cpus, c, fanIn, DefaultParams())
}

// PredictWith is Predict with the default model's constants given
// (calibrated ones, say); the critical-path model ignores them.
func PredictWith(k Kind, alg string, cpus cpuset.Placement, c Costs, fanIn int, prm Params) (float64, error) {
	p, err := PatternOf(alg, len(cpus), fanIn)
	if err != nil {
		return 0, err
	}
	return predictPattern(k, alg, p, cpus, c, prm)
}

// predictPattern is PredictWith on alg's pattern p for len(cpus)
// participants (PatternOf), which it only reads: a caller predicting many
// groups of one size makes it once.
func predictPattern(k Kind, alg string, p Pattern, cpus cpuset.Placement, c Costs, prm Params) (float64, error) {
	if err := k.Check(); err != nil {
		return 0, fmt.Errorf("model: %w", err)
	}
	if k == CriticalPathModel {
		return CriticalPath(p, cpus, c), nil
	}
	return defaultModel(alg, p, cpus, c, prm), nil
}

// Prediction is one algorithm's predicted episode. Composition is the
// hybrid's (its levels, or "flat:ALG" where no level pays and it
// degenerates to the best flat algorithm); empty for the others.
type Prediction struct {
	Algorithm   string  `json:"algorithm"`
	PredictedNs float64 `json:"predicted_ns"`
	Composition string  `json:"composition,omitempty"`
}

// PredictAllWith predicts every algorithm with the model's constants
// given, fastest first.
func PredictAllWith(k Kind, cpus cpuset.Placement, c Costs, fanIn int, prm Params) ([]Prediction, error) {
	var out []Prediction
	for _, a := range Algorithms() {
		v, err := PredictWith(k, a, cpus, c, fanIn, prm)
		if err != nil {
			return nil, err
		}
		out = append(out, Prediction{Algorithm: a, PredictedNs: v})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].PredictedNs < out[j].PredictedNs })
	return out, nil
}

// distinctCPUs is the number of distinct CPUs of a placement.
func distinctCPUs(cpus cpuset.Placement) int {
	if len(cpus) <= 32 { // a level's group: no table of every CPU
		n := 0
		for i, c := range cpus {
			if !slices.Contains(cpus[:i], c) {
				n++
			}
		}
		return n
	}
	hi := -1
	for _, c := range cpus {
		if c < 0 || c > 1<<20 { // not a CPU index: the slow way
			m := map[int]bool{}
			for _, c := range cpus {
				m[c] = true
			}
			return len(m)
		}
		hi = max(hi, c)
	}
	seen := make([]bool, hi+1)
	n := 0
	for _, c := range cpus {
		if !seen[c] {
			seen[c], n = true, n+1
		}
	}
	return n
}

func defaultModel(alg string, p Pattern, cpus cpuset.Placement, c Costs, prm Params) float64 {
	distinct := distinctCPUs(cpus)
	oc := plus{c, prm.SignalOverheadNs}
	if distinct < len(cpus) { // oversubscribed: wake-ups dominate
		share := float64(len(cpus)) / float64(distinct)
		switch alg { // the Go scheduler's: every goroutine runs once per episode
		case algname.Goroutine:
			return max(prm.OversubscribedGoroutineNs*share, Floor(p, cpus, c))
		case algname.Cond, algname.Channel:
			return max(prm.OversubscribedParkNs*share, Floor(p, cpus, c))
		}
		t := CriticalPath(p, cpus, oc)
		signals := 0
		for _, st := range p {
			signals += len(st)
		}
		t += prm.OversubscribedStageNs*float64(len(p)) + prm.OversubscribedSignalNs*float64(signals)/float64(distinct)
		return max(t, Floor(p, cpus, c))
	}
	kinds := lineKinds(alg, p)
	t := 0.0
	for _, v := range queuedFinishes(p, kinds, cpus, oc, prm) {
		if v > t || math.IsNaN(v) {
			t = v
		}
	}
	// The fitted extra per writer on a counter's line (0 by default: the
	// line transfers above price it), kept for calibrations that fit it.
	for s, st := range p {
		if kinds[s] != counterLine {
			continue
		}
		in := map[int]int{}
		most := 0
		for _, sg := range st {
			in[sg.To]++
			most = max(most, in[sg.To])
		}
		k := float64(most - 1)
		t += k * (prm.ContentionNs + prm.ContentionGrowthNs*k)
	}
	t = max(t, Floor(p, cpus, c))
	if len(cpus) > 1 {
		switch alg {
		case algname.Cond:
			t += prm.FutexWakeNs
		case algname.Channel:
			if prm.ChannelWakeNs > 0 {
				t += prm.ChannelWakeNs
			} else {
				t += prm.FutexWakeNs
			}
		case algname.Goroutine:
			t += prm.GoroutineNs
		}
	}
	return t
}

// Floor is the least an episode of p on cpus can take: the latency of the
// widest level its signals cross (a signal between two CPUs cannot arrive
// sooner than the floor between them). No prediction of the default model
// is below it, whatever the fitted constants.
func Floor(p Pattern, cpus cpuset.Placement, c Costs) float64 {
	f := 0.0
	for _, st := range p {
		for _, s := range st {
			if a, b := cpus[s.From], cpus[s.To]; a != b {
				if l := c.Latency(a, b); l > f {
					f = l
				}
			}
		}
	}
	return f
}

// lineKind says which signals of a stage share one cache line in the
// implementation: each its own flag, the receiver's counter (every member
// of a group increments it), or the sender's flag that all the stage's
// receivers spin on (a release flag).
type lineKind int

const (
	ownLines    lineKind = iota // one flag per signal
	counterLine                 // signals into one receiver share its counter
	flagLine                    // signals from one sender share its flag
)

// lineKinds gives each stage of alg's pattern its lineKind, as package
// barriers lays its episode out: central and the blocking baselines
// increment one counter and release through one flag; combining's groups
// increment their node's counter, and one flag releases everybody;
// static-tree's arrival flags are per participant, its release one flag.
func lineKinds(alg string, p Pattern) []lineKind {
	k := make([]lineKind, len(p))
	switch alg {
	case algname.Central, algname.Goroutine, algname.Cond, algname.Channel, algname.Combining:
		for s := range k {
			k[s] = counterLine
		}
		if len(k) > 0 {
			k[len(k)-1] = flagLine
		}
	case algname.StaticTree:
		if len(k) > 0 {
			k[len(k)-1] = flagLine
		}
	}
	return k
}

// queuedFinishes is Finishes with the line transfers a shared line costs:
// the signals that share a line (lineKinds) are served one after another,
// in the order they reach it, each occupying the line for a fraction of
// its link's latency (Params.FlagRefetchFraction for the waiters of one
// flag, each refetching the line from its owner after the write;
// Params.CounterTransferFraction for the writers of one counter, each
// taking the line exclusively). A signal is done at the later of its
// arrival and the previous one's done plus its own transfer, so a flag
// that k waiters spin on reaches the last of them about k transfers
// after it is set, and signals that reach a line at different times do
// not wait for each other.
func queuedFinishes(p Pattern, kinds []lineKind, cpus cpuset.Placement, c Costs, prm Params) []float64 {
	n := len(cpus)
	f := make([]float64, n)
	g := make([]float64, n)
	start := make([]int, n+1) // per line (a rank), where its arrivals begin in buf
	fill := make([]int, n)
	type arrival struct {
		to      int
		at, lat float64
	}
	var buf []arrival
	for s, st := range p {
		copy(g, f)
		frac, byFrom := prm.CounterTransferFraction, false
		switch kinds[s] {
		case ownLines:
			frac = prm.FlagRefetchFraction
		case flagLine:
			frac, byFrom = prm.FlagRefetchFraction, true
		}
		key := func(sg Signal) int {
			if byFrom {
				return sg.From
			}
			return sg.To
		}
		// Bucket the stage's signals by line (a counting sort by rank).
		clear(start)
		for _, sg := range st {
			start[key(sg)+1]++
		}
		for i := 1; i <= n; i++ {
			start[i] += start[i-1]
		}
		copy(fill, start[:n])
		buf = slices.Grow(buf[:0], len(st))[:len(st)]
		// An arrival on a counter adds only CounterArrivalFraction of its
		// link to the path; its transfer behind the others on the line
		// (frac) is priced in full.
		reach := 1.0
		if kinds[s] == counterLine {
			reach = prm.CounterArrivalFraction
		}
		for _, sg := range st {
			l := c.Latency(cpus[sg.From], cpus[sg.To])
			k := key(sg)
			buf[fill[k]] = arrival{sg.To, f[sg.From] + reach*l, l}
			fill[k]++
		}
		for k := 0; k < n; k++ {
			q := buf[start[k]:start[k+1]]
			if len(q) > 1 {
				slices.SortStableFunc(q, func(a, b arrival) int { return cmp.Compare(a.at, b.at) })
			}
			done := 0.0
			for i, a := range q {
				d := a.at
				if i > 0 && !math.IsNaN(d) {
					d = max(d, done+frac*a.lat)
				}
				done = d
				if d > g[a.to] || math.IsNaN(d) {
					g[a.to] = d
				}
			}
		}
		f, g = g, f
	}
	return f
}
