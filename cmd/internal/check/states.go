package check

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/results"
)

// Host states. On a VM the host may move the vCPUs under a check (between
// SMT siblings of one core and separate cores: a 2-thread barrier then
// takes 30-50 ns or 150-450 ns) within seconds. The floor measured in
// every round beside the candidates shows it: its samples fall into
// clusters a large factor apart. The check ranks every candidate by its
// samples paired with the floor sample of the same round, in the rounds
// whose floor saw the state most rounds saw, so that no candidate wins
// because it happened to be sampled in the faster state.
const (
	// stateFactor: two clusters of floor samples are two host states when
	// their medians are at least this factor apart...
	stateFactor = 1.5
	// stateGap: ...and the upper cluster's first quartile is at least this
	// factor above the lower cluster's third quartile (a clean gap, not
	// the two halves of one wide spread).
	stateGap = 1.25
	// minStateRounds: a cluster of fewer rounds (or of under 5% of them)
	// is noise, not a state.
	minStateRounds = 3
	// maxStates: the most states one floor pair is split into.
	maxStates = 4
)

// stateCuts returns the thresholds between the host states a floor pair's
// samples (one per round) fall into, ascending; none when the samples show
// one state. A sample x is in state i when i cuts are below x.
func stateCuts(fs []float64) []float64 {
	v := make([]float64, 0, len(fs))
	for _, x := range fs {
		if x > 0 && !math.IsInf(x, 0) {
			v = append(v, x)
		}
	}
	slices.Sort(v)
	minSide := max(minStateRounds, len(v)/20)
	groups := [][]float64{v}
	var cuts []float64
	for changed := true; changed && len(groups) < maxStates; {
		changed = false
		for gi, g := range groups {
			i, ok := splitStates(g, minSide)
			if !ok {
				continue
			}
			cuts = append(cuts, math.Sqrt(g[i-1]*g[i]))
			groups = slices.Replace(groups, gi, gi+1, g[:i], g[i:])
			changed = true
			break
		}
	}
	slices.Sort(cuts)
	return cuts
}

// splitStates finds where the sorted samples v split into two states: the
// split that maximises the between-class variance of their logarithms
// (Otsu's threshold), accepted when both sides hold at least minSide
// samples and the two sides are stateFactor apart with a clean gap. It
// returns the index of the first sample of the upper state.
func splitStates(v []float64, minSide int) (int, bool) {
	n := len(v)
	if n < 2*minSide {
		return 0, false
	}
	logs := make([]float64, n)
	total := 0.0
	for i, x := range v {
		logs[i] = math.Log(x)
		total += logs[i]
	}
	best, bestScore, sum := -1, 0.0, 0.0
	for i := 1; i < n; i++ {
		sum += logs[i-1]
		if i < minSide || n-i < minSide || v[i] == v[i-1] {
			continue
		}
		m0, m1 := sum/float64(i), (total-sum)/float64(n-i)
		score := float64(i) * float64(n-i) * (m1 - m0) * (m1 - m0)
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return 0, false
	}
	lo, hi := v[:best], v[best:]
	if measure.Median(hi) < stateFactor*measure.Median(lo) || quartile(hi, 1) < stateGap*quartile(lo, 3) {
		return 0, false
	}
	return best, true
}

// quartile is the q-th quartile (1 or 3) of the sorted v, by the nearest
// rank.
func quartile(v []float64, q int) float64 {
	return v[min(len(v)-1, (len(v)-1)*q/4)]
}

// stateOf is the state a floor sample x is in, given the cuts.
func stateOf(x float64, cuts []float64) int {
	return sort.SearchFloat64s(cuts, x)
}

// pairStates is what one floor pair saw: the states, the rounds in each,
// and the state the candidates beside it are ranked in.
type pairStates struct {
	cuts    []float64
	rounds  []int
	stats   []measure.Stats
	ranked  int     // the state most rounds saw (the faster on a tie)
	floorNs float64 // the ranked state's floor median
}

// newPairStates splits the floor samples of one pair (every round of every
// placement that measured it) into host states.
func newPairStates(fs []float64) *pairStates {
	ps := &pairStates{cuts: stateCuts(fs)}
	n := len(ps.cuts) + 1
	by := make([][]float64, n)
	for _, x := range fs {
		if x > 0 && !math.IsInf(x, 0) {
			st := stateOf(x, ps.cuts)
			by[st] = append(by[st], x)
		}
	}
	ps.rounds = make([]int, n)
	ps.stats = make([]measure.Stats, n)
	for i, b := range by {
		ps.rounds[i] = len(b)
		ps.stats[i] = measure.Summarize(b)
		if len(b) > ps.rounds[ps.ranked] {
			ps.ranked = i
		}
	}
	ps.floorNs = ps.stats[ps.ranked].MedianNs
	return ps
}

// changed reports whether the pair saw the host in more than one state.
func (ps *pairStates) changed() bool { return ps != nil && len(ps.cuts) > 0 }

// record returns the states as the file records them.
func (ps *pairStates) record() []results.HostState {
	out := make([]results.HostState, len(ps.stats))
	for i, st := range ps.stats {
		out[i] = results.HostState{MedianNs: st.MedianNs, MinNs: st.MinNs, MaxNs: st.MaxNs, Rounds: ps.rounds[i]}
	}
	return out
}

// describe says what the pair saw, for the file's host_change.
func (ps *pairStates) describe(pair [2]int) string {
	var parts []string
	for i, st := range ps.stats {
		parts = append(parts, fmt.Sprintf("%.1f ns in %d rounds", st.MedianNs, ps.rounds[i]))
	}
	return fmt.Sprintf("the floor between CPUs %d and %d moved between %d states during the check (%s): the host moved the CPUs; every candidate beside it was ranked on the rounds at %.1f ns, the state most rounds saw, by its samples over the same rounds' floor",
		pair[0], pair[1], len(ps.stats), strings.Join(parts, ", "), ps.floorNs)
}

// pairOf is the floor pair of a placement: its first two CPUs, ordered.
func pairOf(cpus cpuset.Placement) [2]int {
	return [2]int{min(cpus[0], cpus[1]), max(cpus[0], cpus[1])}
}

// pairSample is one round of one candidate: its sample and the same
// round's floor sample.
type pairSample struct{ ns, floor float64 }

// analyse splits every floor pair's samples, all placements that measured
// it pooled (in placement order), into host states (s.states).
func (s *samples) analyse() {
	keys := make([]key, 0, len(s.floorSamples))
	for k := range s.floorSamples {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.unit != b.unit {
			return a.unit - b.unit
		}
		return a.set - b.set
	})
	pooled := map[[2]int][]float64{}
	for _, k := range keys {
		pair, ok := s.pairOf[k]
		if !ok {
			continue
		}
		pooled[pair] = append(pooled[pair], s.floorSamples[k]...)
	}
	s.states = map[[2]int]*pairStates{}
	for pair, fs := range pooled {
		s.states[pair] = newPairStates(fs)
	}
}

// ranked is the statistic candidate i of placement k is ranked by: its
// ratios to the same rounds' floor samples in the rounds whose floor saw
// the ranked state of its pair, with that state's floor median (the
// episode shown is the median ratio times it). ok is false when the
// candidate has no such rounds (no floor ran beside it: it is ranked by
// its raw samples); all says the ratios of every state were taken because
// none of its rounds saw the ranked state.
func (s *samples) ranked(k key, i int) (ratios []float64, floorNs float64, all, ok bool) {
	ps := s.states[s.pairOf[k]]
	pk := s.pairs[k]
	if ps == nil || i >= len(pk) || len(pk[i]) == 0 {
		return nil, 0, false, false
	}
	for _, p := range pk[i] {
		if stateOf(p.floor, ps.cuts) == ps.ranked {
			ratios = append(ratios, p.ns/p.floor)
		}
	}
	if len(ratios) == 0 {
		for _, p := range pk[i] {
			ratios = append(ratios, p.ns/p.floor)
		}
		all = true
	}
	return ratios, ps.floorNs, all, true
}

// rankNs is the episode time candidate i of placement k is ranked by
// (ranked's median ratio times the state's floor, else its raw median).
func (s *samples) rankNs(k key, i int, r measure.Result) float64 {
	if ratios, f, _, ok := s.ranked(k, i); ok {
		return measure.Median(ratios) * f
	}
	return measure.Median(r.Samples)
}

// scaled is v times f, a new slice.
func scaled(v []float64, f float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * f
	}
	return out
}

// hostChange is the file's host_change: what every floor pair that saw
// the host move saw, or "".
func (s *samples) hostChange() string {
	var pairs [][2]int
	for pair, ps := range s.states {
		if ps.changed() {
			pairs = append(pairs, pair)
		}
	}
	slices.SortFunc(pairs, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	var out []string
	for _, pair := range pairs {
		out = append(out, s.states[pair].describe(pair))
	}
	return strings.Join(out, "; ")
}
