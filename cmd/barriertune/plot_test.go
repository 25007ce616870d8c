package main

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/figure"
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cmd/internal/store"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/results"
)

// plotFixture is a results file with three algorithms over four counts,
// written to a temporary file.
func plotFixture(t *testing.T) (*results.File, string) {
	t.Helper()
	f := &results.File{Schema: results.Schema,
		Machine: results.Machine{TopologyHash: "x", AllowedCPUs: "0-7", Topology: "pack:1 core:8 pu:1"},
		Floor:   []results.Floor{{Level: "L3Cache", CPUs: [2]int{0, 1}, MedianNs: 40}},
	}
	f.Machine.CPU.Name = "Test CPU"
	for _, n := range []int{1, 2, 4, 8} {
		th := results.Threads{Threads: n, Complete: true}
		cpus := make([]int, n)
		for i := range cpus {
			cpus[i] = i
		}
		for i, alg := range []string{"central", "dissemination", "mcs"} {
			// central grows linearly, the others logarithmically.
			ns := 50 * float64(n) * (1 + 0.1*float64(i))
			if alg != "central" {
				ns = 60*math.Log2(float64(2*n)) + 10*float64(i)
			}
			th.Measurements = append(th.Measurements,
				results.Measurement{CPUs: cpus, Pinned: true, Reps: 21, Summary: results.Summary{MedianNs: ns}, Spec: results.Spec{Algorithm: alg, Policy: "spin"}},
				results.Measurement{CPUs: cpus, Pinned: true, Reps: 21, Summary: results.Summary{MedianNs: 3 * ns}, Spec: results.Spec{Algorithm: alg, Policy: "spin"}}) // a worse placement
		}
		best := th.Measurements[2]
		if n < 2 {
			best = th.Measurements[0]
		}
		th.Best = &results.Choice{CPUs: cpus, Pinned: true, MedianNs: best.MedianNs, Spec: results.Spec{Algorithm: best.Algorithm, Policy: "spin"}}
		f.Threads = append(f.Threads, th)
	}
	path := filepath.Join(t.TempDir(), "results.json")
	if err := store.Write(path, f); err != nil {
		t.Fatal(err)
	}
	return f, path
}

func TestCurvesTakeTheBestPlacement(t *testing.T) {
	f, _ := plotFixture(t)
	algs, pts := figure.Curves(f)
	if strings.Join(algs, ",") != "central,dissemination,mcs" {
		t.Fatalf("algorithms %v", algs)
	}
	for _, a := range algs {
		if len(pts[a]) != 4 {
			t.Fatalf("%s: %d points, want 4", a, len(pts[a]))
		}
		for i, p := range pts[a] {
			th := f.Lookup(int(p.X))
			lo := math.Inf(1)
			for _, m := range th.Measurements {
				if m.Algorithm == a {
					lo = min(lo, m.MedianNs)
				}
			}
			if p.Y != lo || (i > 0 && p.X <= pts[a][i-1].X) {
				t.Errorf("%s point %d = %v, want the least median %v in increasing thread order", a, i, p, lo)
			}
		}
	}
}

// TestPlotWritesSVGAndPNG runs the command and checks the files show the
// curves: the SVG names every algorithm, the winner and the floor; the
// PNG has pixels in each curve's colour.
func TestPlotWritesSVGAndPNG(t *testing.T) {
	_, path := plotFixture(t)
	dir := t.TempDir()
	svg, pngPath := filepath.Join(dir, "p.svg"), filepath.Join(dir, "p.png")
	for _, out := range []string{svg, pngPath} {
		if _, err := run(t, "plot", "-o", out, path); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "central", "dissemination", "mcs", "winner", "floor L3Cache"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	fh, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	img, err := png.Decode(fh)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		c, _, _ := figure.Style(i)
		if n := countColour(img, c); n < 50 {
			t.Errorf("curve %d: only %d pixels of its colour in the PNG", i, n)
		}
	}
	if _, err := run(t, "plot", "-o", filepath.Join(dir, "p.pdf"), path); err == nil || !strings.Contains(err.Error(), ".svg, .png") {
		t.Errorf("-o p.pdf: %v, want an error naming the accepted formats", err)
	}
}

func countColour(img image.Image, c color.Color) int {
	r0, g0, b0, _ := c.RGBA()
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bb, _ := img.At(x, y).RGBA()
			if near16(r, r0) && near16(g, g0) && near16(bb, b0) {
				n++
			}
		}
	}
	return n
}

func near16(a, b uint32) bool { return a+0x800 >= b && b+0x800 >= a }

func TestPlotEmptyAndBench(t *testing.T) {
	if _, err := resultsPlot(&results.File{}, nil); err == nil {
		t.Error("an empty results file plotted")
	}
	rs := []measure.Result{
		{Algorithm: "mcs", Threads: 2, CPUs: []int{0, 1}, Summary: results.Summary{MedianNs: 80, CILowNs: 75, CIHighNs: 90}},
		{Algorithm: "central", Threads: 2, CPUs: []int{0, 1}, Summary: results.Summary{MedianNs: 60, CILowNs: 0, CIHighNs: 70}},
		{Algorithm: "cond", Threads: 2, CPUs: []int{0, 1}, Summary: results.Summary{MedianNs: 9000, CILowNs: 8000, CIHighNs: 9500}},
	}
	p, err := benchPlot(rs, &measure.PingPong{CPUs: [2]int{0, 1}, MedianNs: 30})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "bench.png")
	if err := figure.Save(p, out); err != nil { // a zero CI bound must not break the scale
		t.Fatal(err)
	}
	if _, err := benchPlot(nil, nil); err == nil {
		t.Error("an empty bench run plotted")
	}
}

// TestPlotAllowed: plot rings each count's winner inside --allowed, as
// show chooses it; a count with more threads than allowed CPUs has no
// measured time there and is not ringed, and the file's own winners are
// ringed without --allowed.
func TestPlotAllowed(t *testing.T) {
	f, _ := plotFixture(t)
	// The whole machine's tree (results v1.2): one package of 8 cores.
	cores := []string{"0", "1", "2", "3", "4", "5", "6", "7"}
	f.Machine.Tree = &results.Tree{CPUs: "0-7", Levels: []results.TreeLevel{{Type: "Package", Sets: []string{"0-7"}}, {Type: "Core", Sets: cores}}}
	path := filepath.Join(t.TempDir(), "tree.json")
	if err := store.Write(path, f); err != nil {
		t.Fatal(err)
	}
	xs := func(allowed string) []float64 {
		t.Helper()
		rs, err := openResults(&globalOptions{systemFile: testSystemFile()}, path, allowed)
		if err != nil {
			t.Fatal(err)
		}
		pts, err := ringed(f, rs)
		if err != nil {
			t.Fatal(err)
		}
		var out []float64
		for _, p := range pts {
			out = append(out, p.X)
		}
		return out
	}
	if got := xs("0-7"); !slices.Equal(got, []float64{1, 2, 4, 8}) {
		t.Errorf("--allowed 0-7 rings counts %v, want 1 2 4 8", got)
	}
	if got := xs("4-7"); !slices.Equal(got, []float64{1, 2, 4}) {
		t.Errorf("--allowed 4-7 rings counts %v, want 1 2 4", got)
	}
	out := filepath.Join(t.TempDir(), "job.svg")
	if _, err := run(t, "plot", "--allowed", "4-7", "-o", out, path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("plot --allowed wrote no file: %v", err)
	}
}

// TestPlotLayout: the legend has a column of its own beside the data (it
// was drawn over the data), and bench --plot says where it wrote.
func TestPlotLayout(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	svg := filepath.Join(dir, "p.svg")
	if code, _, errOut := execLine("plot", "-o", svg, exportTestdata); code != 0 {
		t.Fatalf("plot: exit %d: %s", code, errOut)
	}
	data, _ := os.ReadFile(svg)
	// 20 cm of plot (566.93 pt), then the legend's column.
	var w float64
	var err error
	if i := bytes.Index(data, []byte(`width="`)); i < 0 {
		t.Fatalf("no width in:\n%.300s", data)
	} else if w, err = strconv.ParseFloat(strings.SplitN(string(data[i+len(`width="`):]), "pt", 2)[0], 64); err != nil || w < 600 {
		t.Errorf("plot width %.1f pt (%v): no column for the legend", w, err)
	}
	allowed, err := osal.Allowed()
	if err != nil || allowed.Len() < 2 {
		return
	}
	png := filepath.Join(dir, "b.png")
	code, _, errOut := execLine("bench", "--threads", "2", "--algorithm", "central", "--samples", "2", "--sample-time", "20us", "--plot", png)
	if code != 0 || !strings.Contains(errOut, "plot written to "+png) {
		t.Errorf("bench --plot: exit %d, stderr %s", code, errOut)
	}
}
