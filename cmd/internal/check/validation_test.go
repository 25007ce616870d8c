package check

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/hwtree"
)

// publishedCentral reads the central sense-reversing barrier's episode
// times per thread count from ../shared/validation/README.md (the
// dual-socket Haswell table), or skips without it.
func publishedCentral(t *testing.T) map[int]float64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "shared", "validation", "README.md"))
	if err != nil {
		t.Skip("no ../shared/validation")
	}
	row := regexp.MustCompile(`^\| (\d+) \| ([\d,]+) \(\+/- [\d,]+\) \|`)
	out := map[int]float64{}
	for _, l := range strings.Split(string(b), "\n") {
		if m := row.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			v, _ := strconv.ParseFloat(strings.ReplaceAll(m[2], ",", ""), 64)
			out[n] = v
		}
	}
	for _, n := range []int{4, 8, 16, 32} {
		if out[n] <= 0 {
			t.Fatalf("../shared/validation/README.md: no central time at %d threads (read %v)", n, out)
		}
	}
	return out
}

// The published central barrier on a dual-socket Haswell (2 x 10 cores x
// 2 PUs, ../shared/validation) against a simulated check of the matching
// synthetic machine, the tree's typical latencies and the default
// constants: its growth from 4 threads to 8, 16 and 32 stays within 2x of
// the published growth (the README asks for the shape: placement and CPU
// generation differ, and the benchmark's threads were not pinned). The
// absolute ratios are logged: the model is below the published times.
func TestValidationCentralShape(t *testing.T) {
	pub := publishedCentral(t)
	topo, err := hwtree.FromSynthetic("pack:2 core:10 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewModelMeasurer(topo, nil, model.DefaultModel, model.DefaultParams(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Run(context.Background(), Config{Topology: topo, Threads: []int{4, 8, 16, 32}, Algorithms: []string{"central"}, Measurer: m, Exhaustive: true})
	if err != nil {
		t.Fatal(err)
	}
	sim := map[int]float64{}
	for _, e := range f.Threads {
		if e.Best != nil {
			sim[e.Threads] = e.Best.MedianNs
		}
	}
	if sim[4] <= 0 {
		t.Fatalf("no simulated central at 4 threads: %v", sim)
	}
	for _, n := range []int{4, 8, 16, 32} {
		growth, want := sim[n]/sim[4], pub[n]/pub[4]
		t.Logf("%2d threads: simulated %6.0f ns (%.2fx the published %5.0f ns); growth from 4: %.2f, published %.2f (%.2fx)",
			n, sim[n], sim[n]/pub[n], pub[n], growth, want, growth/want)
		if growth > 2*want || growth < want/2 {
			t.Errorf("%d threads: simulated growth from 4 threads %.2f, published %.2f: not within 2x", n, growth, want)
		}
	}
}
