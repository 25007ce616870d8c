package configsets

import (
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/hwtree"
)

// The paper's tables, transcribed from sharma-sussman-configuration-sets.txt:
// configuration set -> thread count.
var (
	table2 = map[string]int{"(a0, b0)": 0, "(a1, b1)": 2, "(a0, b1)": 1, "(a1, b2)": 3, "(a0, b2)": 2, "(a2, b2)": 4}
	table3 = map[string]int{"(a0, b0, c0)": 0, "(a1, b0, c0)": 1, "(a2, b0, c0)": 2, "(a0, b0, c1)": 1, "(a1, b0, c1)": 2, "(a2, b0, c1)": 3, "(a0, b1, c0)": 1, "(a1, b1, c0)": 2, "(a2, b1, c0)": 3, "(a0, b1, c1)": 2, "(a1, b1, c1)": 3, "(a2, b1, c1)": 4, "(a0, b2, c0)": 2, "(a1, b2, c0)": 3, "(a2, b2, c0)": 4, "(a0, b2, c1)": 3, "(a1, b2, c1)": 4, "(a2, b2, c1)": 5, "(a0, b3, c0)": 3, "(a1, b3, c0)": 4, "(a2, b3, c0)": 5, "(a0, b3, c1)": 4, "(a1, b3, c1)": 5, "(a2, b3, c1)": 6}
	table5 = map[string]int{"(a0, b0, c0, d0)": 0, "(a0, b0, c0, d1)": 1, "(a0, b0, c1, d0)": 1, "(a0, b1, c0, d0)": 1, "(a0, b0, c1, d1)": 2, "(a0, b0, c2, d0)": 2, "(a0, b1, c0, d1)": 2, "(a0, b1, c1, d0)": 2, "(a0, b2, c0, d0)": 2, "(a1, b1, c0, d0)": 2, "(a0, b0, c2, d1)": 3, "(a0, b0, c3, d0)": 3, "(a0, b1, c1, d1)": 3, "(a0, b1, c2, d0)": 3, "(a0, b2, c0, d1)": 3, "(a0, b2, c1, d0)": 3, "(a1, b1, c0, d1)": 3, "(a1, b1, c1, d0)": 3, "(a1, b2, c0, d0)": 3, "(a0, b0, c3, d1)": 4, "(a0, b1, c2, d1)": 4, "(a0, b1, c3, d0)": 4, "(a0, b2, c1, d1)": 4, "(a0, b2, c2, d0)": 4, "(a1, b1, c1, d1)": 4, "(a1, b1, c2, d0)": 4, "(a1, b2, c0, d1)": 4, "(a1, b2, c1, d0)": 4, "(a2, b2, c0, d0)": 4, "(a0, b1, c3, d1)": 5, "(a0, b2, c2, d1)": 5, "(a0, b2, c3, d0)": 5, "(a1, b1, c2, d1)": 5, "(a1, b1, c3, d0)": 5, "(a1, b2, c1, d1)": 5, "(a1, b2, c2, d0)": 5, "(a2, b2, c0, d1)": 5, "(a2, b2, c1, d0)": 5, "(a0, b2, c3, d1)": 6, "(a1, b1, c3, d1)": 6, "(a1, b2, c2, d1)": 6, "(a1, b2, c3, d0)": 6, "(a2, b2, c1, d1)": 6, "(a2, b2, c2, d0)": 6, "(a1, b2, c3, d1)": 7, "(a2, b2, c2, d1)": 7, "(a2, b2, c3, d0)": 7, "(a2, b2, c3, d1)": 8}
)

func load(t testing.TB, file string) *hwtree.Topology {
	t.Helper()
	topo, err := hwtree.FromJSONFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func synthetic(t testing.TB, s string) *hwtree.Topology {
	t.Helper()
	topo, err := hwtree.FromSynthetic(s)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// allSets enumerates every thread count.
func allSets(t *testing.T, topo *hwtree.Topology, m Method) []Set {
	t.Helper()
	var out []Set
	for n := 0; n <= len(topo.PUs()); n++ {
		seq, err := Enumerate(topo, n, m)
		if err != nil {
			t.Fatal(err)
		}
		for s := range seq {
			out = append(out, s)
		}
	}
	return out
}

// normalise sorts the thread counts within each class of same paper
// configurations, so equivalent descriptions compare equal.
func normalise(topo *hwtree.Topology, config string) string {
	pc := paperConfigurations(topo)
	parts := strings.Split(strings.Trim(config, "()"), ", ")
	counts := make([]int, len(parts))
	for i, p := range parts {
		counts[i], _ = strconv.Atoi(p[len(pc.configs[i].label):])
	}
	for _, cl := range pc.classes() {
		var v []int
		for _, m := range cl.members {
			v = append(v, counts[m])
		}
		sort.Ints(v)
		for i, m := range cl.members {
			counts[m] = v[i]
		}
	}
	for i := range parts {
		parts[i] = pc.configs[i].label + strconv.Itoa(counts[i])
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func TestPaperGoldenTables(t *testing.T) {
	for _, c := range []struct {
		file     string
		table    map[string]int
		products int
	}{
		{"paper-example1.json", table2, 9},  // Table 1 has 9 products
		{"paper-example2.json", table3, 24}, // Table 3: no duplicates
		{"paper-example3.json", table5, 72}, // Table 4 has 72 products
	} {
		topo := load(t, c.file)
		products := 1
		for _, cfg := range paperConfigurations(topo).configs {
			products *= cfg.capacity + 1
		}
		if products != c.products {
			t.Errorf("%s: cartesian product has %d sets, the paper %d", c.file, products, c.products)
		}
		for _, m := range []Method{Paper, Exact} {
			got := map[string]int{}
			for _, s := range allSets(t, topo, m) {
				key := s.Config
				if m == Exact {
					key = normalise(topo, s.Config)
				}
				if _, dup := got[key]; dup {
					t.Errorf("%s %s: %s listed twice", c.file, m, key)
				}
				got[key] = s.Threads
				if len(s.CPUs) != s.Threads {
					t.Errorf("%s %s: %s has %d CPUs for %d threads", c.file, m, key, len(s.CPUs), s.Threads)
				}
			}
			if !reflect.DeepEqual(got, c.table) {
				t.Errorf("%s %s method:\n got %v\nwant %v", c.file, m, got, c.table)
			}
			counts := PaperCounts(topo)
			if m == Exact {
				counts = Counts(topo)
			}
			if Total(counts).Int64() != int64(len(c.table)) {
				t.Errorf("%s %s: counted %s, the table has %d", c.file, m, Total(counts), len(c.table))
			}
		}
	}
}

func TestKeys(t *testing.T) {
	topo := load(t, "paper-example3.json")
	pc := paperConfigurations(topo)
	var keys []string
	for _, c := range pc.configs {
		keys = append(keys, c.label+strings.Fields(c.key)[0])
	}
	want := []string{"a{2,3,2}", "b{2,3,2}", "c{3,3,2}", "d{1,2}"}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("keys %v, want %v (the paper's Example 3)", keys, want)
	}
}

// TestPaperFlaw is the counterexample: on two packages the paper's key
// merges "both threads in one package" with "one in each", which a barrier
// feels at once. Over all thread counts the paper finds 45 sets, the exact
// method 120.
func TestPaperFlaw(t *testing.T) {
	topo := synthetic(t, "pack:2 core:4 pu:2")
	if got := Total(PaperCounts(topo)); got.Int64() != 45 {
		t.Errorf("paper total %s, want 45", got)
	}
	if got := Total(Counts(topo)); got.Int64() != 120 {
		t.Errorf("exact total %s, want 120", got)
	}
	if got := Total(bruteForce(topo)); got.Int64() != 120 {
		t.Errorf("brute force total %s, want 120", got)
	}
	// At 2 threads the paper has (a1, b1), (a0, b2) — and (a0, b2) cannot
	// tell two threads on one core from two cores of one package.
	seq, _ := Enumerate(topo, 2, Paper)
	var paper []string
	for s := range seq {
		paper = append(paper, s.Config)
	}
	seq, _ = Enumerate(topo, 2, Exact)
	var exact [][]int
	for s := range seq {
		exact = append(exact, s.CPUs)
	}
	if len(paper) != 2 || len(exact) != 3 {
		t.Errorf("2 threads: paper %v, exact %v; want 2 and 3 sets", paper, exact)
	}
}

// bruteForce counts orbits by canonicalising every subset of PUs.
func bruteForce(topo *hwtree.Topology) []*big.Int {
	pus := topo.PUs()
	forms := topo.CanonicalForms()
	seen := make([]map[string]bool, len(pus)+1)
	for i := range seen {
		seen[i] = map[string]bool{}
	}
	for mask := 0; mask < 1<<len(pus); mask++ {
		sel := map[*hwtree.Object]bool{}
		n := 0
		for i, p := range pus {
			if mask&(1<<i) != 0 {
				sel[p] = true
				n++
			}
		}
		seen[n][subsetForm(topo.Root, sel, forms)] = true
	}
	out := make([]*big.Int, len(pus)+1)
	for i := range out {
		out[i] = big.NewInt(int64(len(seen[i])))
	}
	return out
}

// randomTree builds a random tree of at most maxPUs PUs, asymmetric ones
// included, with cache sizes that sometimes differ.
func randomTree(rng *rand.Rand, maxPUs int) *hwtree.Topology {
	types := []string{"Package", "L3Cache", "L2Cache", "Core"}
	budget := maxPUs
	var gen func(level int) map[string]any
	gen = func(level int) map[string]any {
		if level == len(types) || budget <= 1 || rng.Intn(5) == 0 {
			budget--
			return map[string]any{"type": "PU"}
		}
		o := map[string]any{"type": types[level]}
		if strings.HasSuffix(types[level], "Cache") && rng.Intn(4) == 0 {
			o["attrs"] = map[string]any{"cache_size": 1024 * (1 + rng.Intn(2))}
		}
		var kids []any
		for i := 0; i < 1+rng.Intn(3) && budget > 0; i++ {
			if rng.Intn(3) == 0 && len(kids) > 0 {
				b, _ := json.Marshal(kids[0]) // a copy: symmetry is common
				var c map[string]any
				_ = json.Unmarshal(b, &c)
				n := strings.Count(string(b), `"PU"`)
				if n <= budget {
					budget -= n
					kids = append(kids, c)
					continue
				}
			}
			kids = append(kids, gen(level+1))
		}
		o["children"] = kids
		return o
	}
	root := map[string]any{"type": "Machine", "children": []any{gen(0), gen(0)}}
	b, _ := json.Marshal(root)
	topo, err := hwtree.FromJSON(b, "random")
	if err != nil {
		panic(fmt.Sprintf("%v: %s", err, b))
	}
	return topo
}

// TestCountsAgainstBruteForce is the property test: generating-function
// counts equal brute-force orbit counts, and Enumerate lists exactly that
// many pairwise inequivalent sets, on many trees up to 16 PUs.
func TestCountsAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(42))
	trees := 120
	if testing.Short() || !fullTests {
		trees = 40 // 120 under -tags fulltests (.ci/run)
	}
	var topos []*hwtree.Topology
	for _, s := range []string{"pack:2 core:4 pu:2", "pack:2 l3:2 core:2 pu:2", "pu:16", "core:4 pu:4", "pack:3 core:5 pu:1"} {
		topos = append(topos, synthetic(t, s))
	}
	for _, f := range []string{"paper-example1.json", "paper-example2.json", "paper-example3.json"} {
		topos = append(topos, load(t, f))
	}
	for i := 0; i < trees; i++ {
		topos = append(topos, randomTree(rng, 16))
	}
	asym := 0
	for _, topo := range topos {
		if !topo.Symmetric() {
			asym++
		}
		want := bruteForce(topo)
		got := Counts(topo)
		for n := range want {
			if got[n].Cmp(want[n]) != 0 {
				t.Fatalf("%s: t=%d counted %s, brute force %s", topo.Root.Canonical(), n, got[n], want[n])
			}
		}
		forms := topo.CanonicalForms()
		pus := map[int]*hwtree.Object{}
		for _, p := range topo.PUs() {
			pus[p.OSIndex] = p
		}
		for n := range want {
			seq, err := Enumerate(topo, n, Exact)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for s := range seq {
				sel := map[*hwtree.Object]bool{}
				for _, c := range s.CPUs {
					sel[pus[c]] = true
				}
				if len(sel) != n {
					t.Fatalf("%s: a set for %d threads has CPUs %v", topo.Root.Canonical(), n, s.CPUs)
				}
				f := subsetForm(topo.Root, sel, forms)
				if seen[f] {
					t.Fatalf("%s: two enumerated sets for %d threads are equivalent", topo.Root.Canonical(), n)
				}
				seen[f] = true
			}
			if int64(len(seen)) != want[n].Int64() {
				t.Fatalf("%s: enumerated %d sets for %d threads, brute force %s", topo.Root.Canonical(), len(seen), n, want[n])
			}
		}
	}
	if asym < 10 {
		t.Errorf("only %d asymmetric trees tested", asym)
	}
	t.Logf("%d trees (%d asymmetric) agree with brute force", len(topos), asym)
}

func TestRepresentatives(t *testing.T) {
	topo := synthetic(t, "pack:2 l3:2 core:4 pu:2") // 32 PUs
	for _, n := range []int{1, 2, 3, 5, 8, 12, 16, 31, 32} {
		reps, err := Representatives(topo, n, DefaultLimit)
		if err != nil {
			t.Fatal(err)
		}
		count := Counts(topo)[n].Int64()
		if int64(len(reps)) > min(count, DefaultLimit) || len(reps) == 0 {
			t.Errorf("t=%d: %d representatives of %d sets, limit %d", n, len(reps), count, DefaultLimit)
		}
		forms := topo.CanonicalForms()
		seen := map[string]bool{}
		for _, r := range reps {
			if len(r.CPUs) != n || !slices.IsSorted(positions(topo, r.CPUs)) {
				t.Errorf("t=%d %s: CPUs %v", n, r.Label, r.CPUs)
			}
			f := subsetForm(topo.Root, selection(topo, r.CPUs), forms)
			if seen[f] {
				t.Errorf("t=%d: %s duplicates an earlier representative", n, r.Label)
			}
			seen[f] = true
		}
		if count > DefaultLimit && (reps[0].Label != "compact" || !slices.Equal(reps[0].CPUs, topo.CPUs()[:n])) {
			t.Errorf("t=%d: the first representative must be compact: %+v", n, reps[0])
		}
	}
	// 8 threads on pack:2 l3:2 core:4 pu:2: the level-uniform factorings
	// of 8 over arities 2,2,4,2 are 1x1x4x2 (which is compact), 2x2x2x1
	// (which is scatter) and five more; equivalent placements appear once.
	reps, _ := Representatives(topo, 8, 16)
	var labels []string
	for _, r := range reps {
		labels = append(labels, r.Label)
	}
	want := []string{"compact", "scatter", "balanced 2x1x2x2", "balanced 1x2x2x2", "balanced 2x1x4x1", "balanced 1x2x4x1", "balanced 2x2x1x2"}
	if !reflect.DeepEqual(labels, want) {
		t.Errorf("8 threads: %v, want %v", labels, want)
	}
	if !slices.Equal(reps[1].CPUs, []int{0, 2, 8, 10, 16, 18, 24, 26}) {
		t.Errorf("scatter of 8 = %v: want one PU on each of two cores per L3", reps[1].CPUs)
	}
	// 7 threads do not factor over the arities 2,2,4,2: near-balanced
	// fills of 8 appear.
	reps, _ = Representatives(topo, 7, 16)
	near := false
	for _, r := range reps {
		near = near || strings.HasPrefix(r.Label, "near-balanced")
	}
	if !near {
		t.Errorf("7 threads: no near-balanced representative")
	}
	// With a limit at least the count, every set comes back.
	small := synthetic(t, "pack:2 core:2 pu:2")
	for n := 0; n <= 8; n++ {
		reps, _ := Representatives(small, n, 1000)
		if int64(len(reps)) != Counts(small)[n].Int64() {
			t.Errorf("limit above count, t=%d: %d sets, want %s", n, len(reps), Counts(small)[n])
		}
	}
	// Deterministic.
	a, _ := Representatives(topo, 12, DefaultLimit)
	b, _ := Representatives(topo, 12, DefaultLimit)
	if !reflect.DeepEqual(a, b) {
		t.Error("representatives differ between two calls")
	}
}

func positions(topo *hwtree.Topology, cpus []int) []int {
	rank := map[int]int{}
	for i, c := range topo.CPUs() {
		rank[c] = i
	}
	out := make([]int, len(cpus))
	for i, c := range cpus {
		out[i] = rank[c]
	}
	return out
}

func selection(topo *hwtree.Topology, cpus []int) map[*hwtree.Object]bool {
	sel := map[*hwtree.Object]bool{}
	for _, p := range topo.PUs() {
		if slices.Contains(cpus, p.OSIndex) {
			sel[p] = true
		}
	}
	return sel
}

func TestErrors(t *testing.T) {
	topo := synthetic(t, "core:2 pu:2")
	for _, n := range []int{-1, 5} {
		if _, err := Enumerate(topo, n, Exact); err == nil || !strings.Contains(err.Error(), strconv.Itoa(n)) {
			t.Errorf("Enumerate(%d) = %v", n, err)
		}
		if _, err := Representatives(topo, n, 4); err == nil {
			t.Errorf("Representatives(%d) accepted", n)
		}
	}
	big := synthetic(t, "pack:2 l3:12 core:8 pu:2")
	if _, err := Enumerate(big, 100, Exact); err == nil || !strings.Contains(err.Error(), "representatives") {
		t.Errorf("Enumerate of astronomically many sets: %v", err)
	}
	if _, err := ParseMethod("smart"); err == nil {
		t.Error("unknown method accepted")
	}
}

func TestCountsAtScale(t *testing.T) {
	topo := synthetic(t, "pack:2 l3:12 core:8 pu:2")
	counts := Counts(topo)
	if len(counts) != 385 || counts[0].Int64() != 1 || counts[1].Int64() != 1 || counts[384].Int64() != 1 {
		t.Fatalf("counts: len %d, c0 %s, c1 %s, c384 %s", len(counts), counts[0], counts[1], counts[384])
	}
	// 2 threads: same core, same L3, same package, two packages.
	if counts[2].Int64() != 4 {
		t.Errorf("2 threads: %s sets, want 4", counts[2])
	}
	if Total(counts).Cmp(new(big.Int).Lsh(big.NewInt(1), 384)) >= 0 {
		t.Error("orbits cannot outnumber subsets")
	}
}

// BenchmarkCounts counts every thread count on 384 PUs.
func BenchmarkCounts(b *testing.B) {
	topo, err := hwtree.FromSynthetic("pack:2 l3:12 core:8 pu:2")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		Counts(topo)
	}
}

// TestCountable: a tree whose exact or paper count would take too long is
// refused before any polynomial is built, and the space still answers
// what does not need the counts; one within the cap is counted.
func TestCountable(t *testing.T) {
	big, err := hwtree.FromSynthetic("pack:2 core:2048")
	if err != nil {
		t.Fatal(err)
	}
	if err := Countable(big, Exact); err == nil || !strings.Contains(err.Error(), "4096 PUs would take about") {
		t.Errorf("exact count of 2 x 2048 cores: %v, want it refused", err)
	}
	// The paper's configurations are the two packages: cheap.
	if err := Countable(big, Paper); err != nil {
		t.Errorf("paper count of 2 x 2048 cores: %v", err)
	}
	sp := NewSpace(big)
	if c, err := sp.Counts(); c != nil || err == nil {
		t.Errorf("Counts of a refused tree: %d counts, %v", len(c), err)
	}
	if _, err := sp.Enumerate(3, Exact); err == nil || !strings.Contains(err.Error(), "not listed") {
		t.Errorf("Enumerate without counts: %v", err)
	}
	// 3 threads on two packages of 2048 cores: all in one package, or 2+1.
	reps, err := sp.Representatives(3, 8)
	if err != nil || len(reps) != 2 {
		t.Errorf("Representatives(3) without counts: %d sets, %v; want the 2 there are", len(reps), err)
	}
	small, err := hwtree.FromSynthetic("pack:4 core:8 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	if err := Countable(small, Exact); err != nil {
		t.Errorf("a 64-PU tree refused: %v", err)
	}
	if c, err := NewSpace(small).Counts(); err != nil || len(c) != 65 {
		t.Errorf("Counts of 64 PUs: %d counts, %v", len(c), err)
	}
}
