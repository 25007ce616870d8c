package export

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/results"
)

// hybridFile is a results file of 8 CPUs (pairs of cores, fours under an
// L3) whose best for 7 threads (on CPUs 0-6) is the hybrid of three levels
// with uneven groups, and whose best for 4 threads is a hybrid with a
// level that only Go runs.
func hybridFile() *results.File {
	return &results.File{
		Schema:  results.Schema,
		Machine: results.Machine{CPU: results.CPUIdentity{Vendor: "AuthenticAMD", Name: "Example EPYC"}, AllowedCPUs: "0-7"},
		Threads: []results.Threads{
			{Threads: 4, Complete: true, Best: &results.Choice{Spec: results.Spec{Algorithm: "hybrid", Policy: "auto",
				Composition: "core:goroutine,package:dissemination", LevelKeys: [][]int{{0, 0, 1, 1}, {0, 0, 0, 0}}},
				CPUs: []int{0, 1, 2, 3}, Pinned: true, MedianNs: 90}},
			{Threads: 7, Complete: true, Best: &results.Choice{Spec: results.Spec{Algorithm: "hybrid", Policy: "auto",
				Composition: "core:central,l3:binomial,package:dissemination",
				LevelKeys:   [][]int{{0, 0, 1, 1, 2, 2, 3}, {0, 0, 0, 0, 1, 1, 1}, {0, 0, 0, 0, 0, 0, 0}}},
				CPUs: []int{0, 1, 2, 3, 4, 5, 6}, Pinned: true, MedianNs: 120}},
		},
	}
}

// The c-barrier export of a file whose choice is a hybrid names the
// hybrid, its levels' algorithms and keys; a hybrid with a level only Go
// runs is substituted and says why; the c-header substitutes both (it
// carries no groups).
func TestCBarrierExportsHybrid(t *testing.T) {
	var b, h bytes.Buffer
	if err := Write(&b, hybridFile(), "c-barrier", Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"/* the hybrid for 7 threads: core:central,l3:binomial,package:dissemination */",
		"static const int barriertune_levels_7[6] = {BARRIERTUNE_ALG_CENTRAL, 0, BARRIERTUNE_ALG_BINOMIAL, 0, BARRIERTUNE_ALG_DISSEMINATION, 0};",
		"static const int barriertune_level_keys_7[21] = {0, 0, 1, 1, 2, 2, 3, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0};",
		"\t{7, 7, BARRIERTUNE_ALG_HYBRID, 0, 1, 7, barriertune_cpus_7, 120.0, \"measured: ",
		", 3, barriertune_levels_7, barriertune_level_keys_7},",
		"\t{4, 4, BARRIERTUNE_ALG_" + cIdent(algname.Fallback) + ", ",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("c-barrier lacks %s:\n%s", want, b.String())
		}
	}
	row := cBarrierRow4.FindString(b.String())
	if !strings.Contains(row, `"substituted: `) || !strings.Contains(row, "goroutine, which only Go runs") || !strings.Contains(row, "0, NULL, NULL},") {
		t.Errorf("the 4-thread row is not the stand-in that says why: %q", row)
	}
	if err := Write(&h, hybridFile(), "c-header", Options{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range cHeaderRow.FindAllStringSubmatch(h.String(), -1) {
		if r[4] == "hybrid" {
			t.Errorf("c-header names the hybrid for %s-%s threads:\n%s", r[1], r[2], h.String())
		}
	}
	// One count exported alone keeps the hybrid too.
	b.Reset()
	if err := Write(&b, hybridFile(), "c-barrier", Options{Threads: 7}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), ", 3, barriertune_levels_7, barriertune_level_keys_7},") {
		t.Errorf("c-barrier --threads 7 lacks the hybrid:\n%s", b.String())
	}
}

var cBarrierRow4 = regexp.MustCompile(`(?m)^\t\{4, 4, .*$`)

// The barrier property of the C hybrid: compositions of two and three
// levels, contiguous groups with a short last one and interleaved groups
// that do not nest, levels of every kind of algorithm, 2 to 33 threads,
// both waits, exactly one serial return per episode; gcc and clang.
func TestCBarrierHybridProperty(t *testing.T) {
	comps := []string{
		"dissemination/2,central/4",
		"mcs/3,tournament/7,combining/16",
		"central%3,binomial/5",
		"pairwise/4,butterfly%2,static-tree/9",
		"all-static-tree/5,dissemination%3,central/1000",
	}
	counts := []int{2, 3, 5, 7, 9, 16, 17, 33}
	episodes := "200"
	if testing.Short() || !fullMatrix {
		counts = []int{2, 5, 17}
		episodes = "100"
	}
	eachCC(t, func(t *testing.T, cc, path string) {
		dir := headerDir(t, fixture(t))
		compileIn(t, dir, path, "prop", "prop.c", "-std=c11", "-O2")
		for i, comp := range comps {
			for _, n := range counts {
				if cc == "clang" && (n+i)%3 != 0 {
					continue // the same code: a few counts suffice
				}
				blocks := []string{"1"}
				if n <= 5 {
					blocks = append(blocks, "0")
				}
				for _, block := range blocks {
					out, err := runLimited(time.Minute, dir, filepath.Join(dir, "prop"), "hybrid:"+comp, strconv.Itoa(n), episodes, block, strconv.Itoa(n+i))
					if err != nil || !strings.HasPrefix(out, "ok hybrid "+strconv.Itoa(n)+"\n") {
						t.Errorf("hybrid %s, %d threads, block %s: %v\n%s", comp, n, block, err, out)
					}
				}
			}
		}
		// Bad levels: an unknown algorithm, the hybrid as a level.
		for _, comp := range []string{"nosuch/2", "hybrid/2"} {
			out, err := runLimited(time.Minute, dir, filepath.Join(dir, "prop"), "hybrid:"+comp, "4", "10", "0", "1")
			if err == nil || !strings.Contains(out, "Invalid argument") {
				t.Errorf("hybrid %s: %v, want EINVAL\n%s", comp, err, out)
			}
		}
	})
}
