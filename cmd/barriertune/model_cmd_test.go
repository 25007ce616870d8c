package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/latency"
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/cmd/internal/store"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

const fourCSV = ",,,\n10,,,\n50,52,,\n51,49,11,\n"

func writeCSV(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "m.csv")
	if err := os.WriteFile(p, []byte(fourCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLatencyFromJSON(t *testing.T) {
	var out bytes.Buffer
	if err := runLatency(context.Background(), &latencyOptions{from: writeCSV(t), measuring: measuring{samples: 21, perLevel: 6, maxPairs: 256}, asJSON: true}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var got struct {
		CPUs   []int        `json:"cpus"`
		Matrix [][]*float64 `json:"matrix"`
		Levels []struct {
			Level    string  `json:"level"`
			Pairs    int     `json:"pairs"`
			MedianNs float64 `json:"median_ns"`
		} `json:"levels"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.CPUs) != 4 || *got.Matrix[3][2] != 11 || len(got.Levels) != 2 || got.Levels[0].MedianNs != 10.5 {
		t.Fatalf("got %s", out.String())
	}
}

func TestModelFromJSON(t *testing.T) {
	var out bytes.Buffer
	o := modelOptions{latencyFile: writeCSV(t), threads: 4, kind: "critical-path", algorithm: "all", fanIn: 4, measuring: measuring{samples: 21, perLevel: 6, maxPairs: 256}, asJSON: true}
	if err := runModel(context.Background(), &o, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var got model.Row
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	// Compact order from the clustering: 0,1 then 2,3. Dissemination:
	// stage 0 i→i+1 gives finishes [51 10 52 11]; stage 1 i→i+2: rank 0
	// hears from 2 at 52 + 50 = 102, the latest.
	if got.Threads != 4 || len(got.Predictions) != 14 {
		t.Fatalf("got %s", out.String())
	}
	flat, hybrid := math.Inf(1), model.Prediction{}
	for i, p := range got.Predictions {
		if p.Algorithm == "dissemination" && p.PredictedNs != 102 {
			t.Errorf("dissemination %v, want 102 (52 + 50)", p.PredictedNs)
		}
		if i > 0 && p.PredictedNs < got.Predictions[i-1].PredictedNs {
			t.Errorf("predictions not fastest first: %s", out.String())
		}
		if p.Algorithm == "hybrid" {
			hybrid = p
		} else {
			flat = math.Min(flat, p.PredictedNs)
			if p.Composition != "" {
				t.Errorf("%s has a composition", p.Algorithm)
			}
		}
	}
	// The hybrid is composed over the clustered cores {0,1}, {2,3} or
	// degenerates to the best flat algorithm (butterfly: 11 + 50), never
	// predicted slower than it.
	if hybrid.Composition != "flat:"+got.Predictions[0].Algorithm && !strings.HasPrefix(hybrid.Composition, "core:") || !(hybrid.PredictedNs <= flat) {
		t.Errorf("hybrid %+v against flat %v", hybrid, flat)
	}
	for _, bad := range []modelOptions{
		{threads: 4, kind: "default", algorithm: "all", fanIn: 4, measuring: measuring{samples: 21, perLevel: 6, maxPairs: 256}},
		{latencyFile: o.latencyFile, kind: "nope", algorithm: "all", fanIn: 4, measuring: measuring{samples: 21, perLevel: 6, maxPairs: 256}},
		{latencyFile: o.latencyFile, kind: "default", algorithm: "nope", threads: 2, fanIn: 4, measuring: measuring{samples: 21, perLevel: 6, maxPairs: 256}},
		{latencyFile: o.latencyFile, kind: "default", algorithm: "all", threads: 2, fanIn: 0, measuring: measuring{samples: 21, perLevel: 6, maxPairs: 256}},
		{latencyFile: o.latencyFile, kind: "default", algorithm: "all", threads: 2, fanIn: 4, measuring: measuring{samples: -1, perLevel: 6, maxPairs: 256}},
	} {
		if err := runModel(context.Background(), &bad, &out, io.Discard); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	out.Reset()
	if err := runModel(context.Background(), &modelOptions{latencyFile: o.latencyFile, kind: "default", algorithm: "all", fanIn: 4, measuring: measuring{samples: 21, perLevel: 6, maxPairs: 256}}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	// The table: a header naming every algorithm and the hybrid, then one
	// row per thread count 2..4 with exactly its fastest marked, then
	// which constants predicted (the defaults: how far they are from the
	// measurements kept), in lines under 160 characters.
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 6 || !strings.Contains(lines[1], "dissemination") || !strings.Contains(lines[1], "hybrid composition") ||
		!strings.HasPrefix(lines[5], "constants: defaults, not fitted to this machine") {
		t.Fatalf("table:\n%s", out.String())
	}
	for _, l := range lines[5:] {
		if len(l) >= 160 {
			t.Errorf("line of %d characters: %q", len(l), l)
		}
	}
	for i, l := range lines[2:5] {
		f := strings.Fields(l)
		if f[0] != strconv.Itoa(i+2) || strings.Count(l, "*") < 1 {
			t.Errorf("row %q: want thread count %d and its fastest marked", l, i+2)
		}
	}
	// --algorithm hybrid alone, as JSON with its composition.
	out.Reset()
	o.algorithm = "hybrid"
	if err := runModel(context.Background(), &o, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	got = model.Row{}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got.Predictions) != 1 || got.Predictions[0].Composition == "" {
		t.Fatalf("hybrid alone: %v %s", err, out.String())
	}
}

// fakeTreeLatency is a ping-pong by tree level: the latency of the pair's
// lowest common object's type in topo.
func fakeTreeLatency(t *testing.T, topo *hwtree.Topology, ns map[hwtree.Type]float64, calls *int) latency.PingPongFunc {
	pu := map[int]*hwtree.Object{}
	for _, o := range topo.PUs() {
		pu[o.OSIndex] = o
	}
	return func(a, b int, _ measure.Options) (float64, error) {
		*calls++
		return ns[topo.Covering(pu[a].CPUSet.Or(pu[b].CPUSet)).Type], nil
	}
}

// TestLatencyMeasuredBig measures a synthetic 128-CPU machine through a
// fake ping-pong whose packages behave like one L3: representative pairs
// per level (within --max-pairs), null for the others, and the
// disagreement reported in text and JSON.
func TestLatencyMeasuredBig(t *testing.T) {
	const syn = "pack:4 l3:4 core:4 pu:2"
	topo, err := hwtree.FromSynthetic(syn)
	if err != nil {
		t.Fatal(err)
	}
	ns := map[hwtree.Type]float64{hwtree.Core: 8, hwtree.L3Cache: 30, hwtree.Package: 33, hwtree.Machine: 150}
	calls := 0
	o := latencyOptions{measuring: measuring{samples: 3, perLevel: 4, maxPairs: 12, src: sourceFlags{synthetic: syn}, pingPong: fakeTreeLatency(t, topo, ns, &calls)}, asJSON: true}
	var out bytes.Buffer
	if err := runLatency(context.Background(), &o, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var got latency.Report
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	nulls := 0
	for _, row := range got.Matrix {
		for _, v := range row {
			if v == nil {
				nulls++
			}
		}
	}
	if len(got.CPUs) != 128 || calls > 12 || got.PairsMeasured != calls || nulls != 128*127-2*calls || len(got.Levels) != 4 {
		t.Fatalf("%d CPUs, %d pairs measured (%d calls, cap 12), %d nulls, levels %+v", len(got.CPUs), got.PairsMeasured, calls, nulls, got.Levels)
	}
	if len(got.Disagreements) != 1 || got.Disagreements[0].Level != "Package" || got.Disagreements[0].Kind != "merged" {
		t.Fatalf("disagreements %+v", got.Disagreements)
	}
	out.Reset()
	o.asJSON = false
	if err := runLatency(context.Background(), &o, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{fmt.Sprintf("128 CPUs, %d of 8128 pairs measured", calls/2), "Package (merged)", "L3Cache groups under one Package behave as one", "spread"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// model --measured predicts on the same machine: unmeasured pairs take
	// their level's median, so every count gets a prediction.
	out.Reset()
	calls = 0
	mo := modelOptions{measured: true, threads: 64, kind: "critical-path", algorithm: "all", fanIn: 4, asJSON: true,
		measuring: measuring{samples: 3, perLevel: 4, maxPairs: 12, src: sourceFlags{synthetic: syn}, pingPong: fakeTreeLatency(t, topo, ns, &calls)}}
	if err := runModel(context.Background(), &mo, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var mj model.Row
	if err := json.Unmarshal(out.Bytes(), &mj); err != nil || mj.Threads != 64 || len(mj.Predictions) != 14 {
		t.Fatalf("model --measured: %v %s", err, out.String())
	}
}

// TestLatencyPairFlags: --per-level and --max-pairs outside 1..100000 are
// usage errors naming the flag.
func TestLatencyPairFlags(t *testing.T) {
	for _, o := range []latencyOptions{
		{measuring: measuring{samples: 21, perLevel: 0, maxPairs: 256}},
		{measuring: measuring{samples: 21, perLevel: 6, maxPairs: 0}},
		{measuring: measuring{samples: 21, perLevel: 6, maxPairs: maxLatencyPairs + 1}},
	} {
		err := runLatency(context.Background(), &o, &bytes.Buffer{}, io.Discard)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), "pairs") {
			t.Errorf("%+v: %v, want a usage error", o, err)
		}
	}
}

// sharedTreeJSON writes a tree Machine > Package > L3Caches > Cores > PUs
// in hwtree's JSON form: each L3 a list of cores, each core its PUs.
func sharedTreeJSON(t *testing.T, l3s [][][]int) string {
	type obj struct {
		Type     string         `json:"type"`
		OSIndex  *int           `json:"os_index"`
		Attrs    map[string]any `json:"attrs"`
		Children []obj          `json:"children"`
	}
	mk := func(typ string, idx *int, ch []obj) obj {
		if ch == nil {
			ch = []obj{}
		}
		return obj{typ, idx, map[string]any{}, ch}
	}
	var l3objs []obj
	for _, l3 := range l3s {
		var cores []obj
		for _, core := range l3 {
			var pus []obj
			for _, p := range core {
				pus = append(pus, mk("PU", &p, nil))
			}
			cores = append(cores, mk("Core", nil, pus))
		}
		l3objs = append(l3objs, mk("L3Cache", nil, cores))
	}
	data, err := json.Marshal(mk("Machine", nil, []obj{mk("Package", nil, l3objs)}))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tree.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLatencyFromAgainstTree compares real matrices with wrong trees (SMT
// siblings c and c+16 on both machines): a Xeon Gold 6242 (one L3) given
// two L3s shows them "merged"; a Ryzen 9 5950X (two CCDs) given one L3
// shows the L3 level "bimodal".
func TestLatencyFromAgainstTree(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "latency")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("no ../shared/latency")
	}
	cores := make([][]int, 16)
	for c := range cores {
		cores[c] = []int{c, c + 16}
	}
	for _, tc := range []struct {
		file        string
		l3s         [][][]int
		level, kind string
	}{
		{"intel-xeon-gold-6242.csv", [][][]int{cores[:8], cores[8:]}, "Package", "merged"},
		{"amd-ryzen-9-5950x.csv", [][][]int{cores}, "L3Cache", "bimodal"},
	} {
		o := latencyOptions{from: filepath.Join(dir, tc.file), asJSON: true,
			measuring: measuring{samples: 21, perLevel: 6, maxPairs: 256, src: sourceFlags{topology: sharedTreeJSON(t, tc.l3s)}}}
		var out bytes.Buffer
		if err := runLatency(context.Background(), &o, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		var got latency.Report
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, d := range got.Disagreements {
			found = found || d.Level == tc.level && d.Kind == tc.kind
		}
		if !found {
			t.Errorf("%s: disagreements %+v, want %s %s", tc.file, got.Disagreements, tc.level, tc.kind)
		}
	}
	// A tree with CPUs the matrix lacks is refused.
	o := latencyOptions{from: writeCSV(t), measuring: measuring{samples: 21, perLevel: 6, maxPairs: 256, src: sourceFlags{synthetic: "pack:2 core:4"}}}
	if err := runLatency(context.Background(), &o, &bytes.Buffer{}, io.Discard); err == nil || !strings.Contains(err.Error(), "covers CPUs 0..3") {
		t.Errorf("tree larger than the matrix: %v", err)
	}
}

func TestCPUList(t *testing.T) {
	seq := func(lo, hi int) []int {
		var s []int
		for i := lo; i <= hi; i++ {
			s = append(s, i)
		}
		return s
	}
	wrap := func(block []int, times int) []int {
		var s []int
		for range times {
			s = append(s, block...)
		}
		return s
	}
	for _, c := range []struct {
		cpus []int
		want string
	}{
		{[]int{0}, "0"},
		{[]int{0, 1, 2, 3, 8}, "0-3,8"},
		{[]int{3, 2, 1}, "3,2,1"},
		{[]int{0, 1, 0}, "0-1,0"},
		{wrap(seq(0, 7), 125), "0-7 (×125)"},
		{wrap([]int{0, 2}, 3), "0,2 (×3)"},
		{append(wrap(seq(0, 7), 2), 0), "0-7,0-7,0"},
	} {
		if got := cpuList(c.cpus); got != c.want {
			t.Errorf("cpuList(%v) = %q, want %q", c.cpus, got, c.want)
		}
	}
	var odd []int // no runs, no repeats: capped
	for i := 0; i < 4096; i += 2 {
		odd = append(odd, i)
	}
	if got := cpuList(odd); len(got) > maxCPUListLen+20 || !strings.HasPrefix(got, "0,2,4") || !strings.HasSuffix(got, "4092,4094") {
		t.Errorf("cpuList of 2048 even CPUs: %d bytes %q, want at most about %d", len(got), got, maxCPUListLen)
	}
}

// 1000 threads on a 4-CPU matrix print one short line per
// prediction, the placement as its block and count.
func TestModelManyThreadsShortLines(t *testing.T) {
	var out bytes.Buffer
	o := modelOptions{latencyFile: writeCSV(t), threads: 1000, kind: "default", algorithm: "all", fanIn: 4, measuring: measuring{samples: 21, perLevel: 6, maxPairs: 256}}
	if err := runModel(context.Background(), &o, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if !strings.HasPrefix(lines[0], "1000 threads on CPUs ") || !strings.Contains(lines[0], "(×250)") {
		t.Errorf("first line %q: want the placement as a block and its count", lines[0])
	}
	for _, l := range lines {
		if len(l) >= 160 {
			t.Errorf("line of %d characters: %.80q...", len(l), l)
		}
	}
}

// model --from-results FILE predicts with the constants the file's check
// fitted and says so, with how far they were from its measurements;
// check --simulate --from-results says the same. A simulated file's
// calibration is given a large per-signal overhead and residuals here, so
// the predictions must move with it.
func TestModelFromResultsConstants(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim.json")
	if _, err := run(t, "check", "--simulate", "--synthetic", "pack:1 core:4 pu:1", "--threads", "2,4", "--budget", "2s", "-o", sim); err != nil {
		t.Fatal(err)
	}
	f, err := results.Read(sim)
	if err != nil {
		t.Fatal(err)
	}
	prm := model.DefaultParams()
	prm.SignalOverheadNs = 500
	b, _ := json.Marshal(prm)
	var params map[string]float64
	_ = json.Unmarshal(b, &params)
	f.Calibration = &results.Calibration{Model: "default", Params: params, FittedOn: "signal_overhead_ns fitted to 2 measurements of a test", Points: 2,
		Loss: model.FitLoss, MinRatio: 0.9, MaxRatio: 1.2, RMSLogRatio: 0.1,
		Residuals: []results.CalibrationResidual{{Threads: 2, Algorithm: "central", MeasuredNs: 100, PredictedNs: 90, Ratio: 0.9}, {Threads: 2, Algorithm: "mcs", MeasuredNs: 100, PredictedNs: 120, Ratio: 1.2}}}
	file := filepath.Join(dir, "fitted.json")
	if err := store.Write(file, f); err != nil {
		t.Fatal(err)
	}
	csv := writeCSV(t)
	var def, fitted bytes.Buffer
	base := modelOptions{latencyFile: csv, kind: "default", algorithm: "dissemination", threads: 2, fanIn: 4, measuring: measuring{samples: 21, perLevel: 6, maxPairs: 256}}
	if err := runModel(context.Background(), &base, &def, io.Discard); err != nil {
		t.Fatal(err)
	}
	base.fromResults = file
	if err := runModel(context.Background(), &base, &fitted, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(strings.Fields(fitted.String()), " "), "fitted.json's calibration, signal_overhead_ns fitted to 2 measurements of a test: predicted/measured 0.90-1.20 (rms log ratio 0.100)") {
		t.Errorf("output lacks the calibration's summary:\n%s", fitted.String())
	}
	if !strings.Contains(def.String(), "constants: defaults, not fitted to this machine") {
		t.Errorf("output lacks the defaults' provenance:\n%s", def.String())
	}
	ns := func(s string) float64 {
		for _, l := range strings.Split(s, "\n") {
			if f := strings.Fields(l); len(f) == 3 && f[0] == "dissemination" {
				v, _ := strconv.ParseFloat(f[1], 64)
				return v
			}
		}
		t.Fatalf("no dissemination line in\n%s", s)
		return 0
	}
	if d, g := ns(def.String()), ns(fitted.String()); g < d+400 {
		t.Errorf("dissemination predicted %.1f ns with the file's constants, %.1f with the defaults: the 500 ns overhead did not apply", g, d)
	}
	base.fromResults = filepath.Join(dir, "missing.json")
	if err := runModel(context.Background(), &base, &fitted, io.Discard); err == nil || !strings.Contains(err.Error(), "--from-results") {
		t.Errorf("missing file: %v", err)
	}
	out, err := run(t, "check", "--simulate", "--from-results", file, "--threads", "2", "-o", filepath.Join(dir, "replay.json"))
	if err != nil {
		t.Fatal(err)
	}
	if flat := strings.Join(strings.Fields(out), " "); !strings.Contains(flat, "constants: ") || !strings.Contains(flat, "predicted/measured 0.90-1.20") {
		t.Errorf("simulate --from-results does not say how far its constants were from the data:\n%s", out)
	}
}

// model --measured predicts with this machine's results file's fit when
// the lookup finds one ($BARRIERTUNE_RESULTS here: a short live check),
// and says so; --from-results none keeps the defaults.
func TestModelMeasuredUsesThisMachinesFit(t *testing.T) {
	if testing.Short() || runtime.GOMAXPROCS(0) < 2 {
		t.Skip("a live check on two CPUs")
	}
	file := filepath.Join(t.TempDir(), "results.json")
	if _, err := run(t, "check", "--budget", "3s", "--threads", "2", "--algorithms", "central,dissemination,cond", "-o", file); err != nil {
		t.Fatal(err)
	}
	f, err := results.Read(file)
	if err != nil {
		t.Fatal(err)
	}
	if f.Calibration == nil || len(f.Calibration.Residuals) == 0 {
		t.Fatalf("the check recorded no fit: %+v", f.Calibration)
	}
	t.Setenv(results.ResultsEnv, file)
	fake := func(a, b int, _ measure.Options) (float64, error) { return 180, nil }
	for _, c := range []struct{ from, want string }{
		{"", "constants: this machine's results file: " + file + "'s calibration"},
		{"none", "constants: defaults, not fitted to this machine"},
	} {
		var out bytes.Buffer
		o := modelOptions{measured: true, threads: 2, kind: "default", algorithm: "all", fanIn: 4, measuring: measuring{samples: 3, perLevel: 4, maxPairs: 12, pingPong: fake}, fromResults: c.from}
		if err := runModel(context.Background(), &o, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(strings.Fields(out.String()), " "); !strings.Contains(got, c.want) {
			t.Errorf("--from-results %q: output lacks %q:\n%s", c.from, c.want, out.String())
		}
	}
}
