package check

import (
	"context"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

// TestCalibrationRecoversTheModel: a simulated check whose "machine" is
// the default model with known constants fits those constants back from
// its first round, records them, and a replay of the file with them (as
// check --simulate --from-results does) ranks the same.
func TestCalibrationRecoversTheModel(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:2 core:4 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	truth := model.DefaultParams()
	truth.SignalOverheadNs, truth.FlagRefetchFraction, truth.CounterTransferFraction = 20, 0.3, 0.6
	m, err := NewModelMeasurer(topo, nil, model.DefaultModel, truth, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Topology: topo, Threads: []int{8}, Algorithms: []string{"central", "combining", "dissemination", "static-tree", "mcs"}}
	cfg.Measurer = m
	f, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := f.Calibration
	if c == nil || c.Points == 0 {
		t.Fatalf("no calibration recorded: %+v", c)
	}
	got := ParamsFrom(c)
	for _, x := range []struct {
		name      string
		got, want float64
	}{{"signal overhead", got.SignalOverheadNs, 20}, {"flag refetch", got.FlagRefetchFraction, 0.3}, {"counter transfer", got.CounterTransferFraction, 0.6}} {
		if math.Abs(x.got-x.want) > 0.05*math.Abs(x.want)+0.02 {
			t.Errorf("%s fitted %.2f, want %.2f (%s)", x.name, x.got, x.want, c.FittedOn)
		}
	}
	// Replay: the file's latencies and calibration, the same ranking.
	r, err := NewModelMeasurer(topo, CostsFrom(topo, f), model.DefaultModel, got, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Measurer, cfg.Calibration = r, c
	g, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if g.Threads[0].Best.Describe() != f.Threads[0].Best.Describe() {
		t.Errorf("replay picked %s, the check %s", g.Threads[0].Best.Describe(), f.Threads[0].Best.Describe())
	}
}

// refit, a live check's last step, fits every measurement the file holds
// (here the development VM's 2-thread check, blocking baselines and the
// hybrid's flat degeneration included) and records the fit's residuals:
// one per measurement, none of the constants negative, every ratio within
// 1.5x. The check's old calibration fitted the same data with a per-signal
// overhead of -53.7 ns.
func TestRefitRecordsResiduals(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:1 l3:1 core:2 pu:1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../model/testdata/vm2-measured.csv")
	if err != nil {
		t.Fatal(err)
	}
	f := &results.File{}
	e := results.Threads{Threads: 2, Source: results.Measured}
	for _, l := range strings.Split(string(b), "\n") {
		r := strings.Split(l, ",")
		if len(r) != 8 || r[0] != "a" {
			continue
		}
		fan, _ := strconv.Atoi(r[3])
		ns, _ := strconv.ParseFloat(r[6], 64)
		fl, _ := strconv.ParseFloat(r[7], 64)
		f.Floor = []results.Floor{{Level: "L3Cache", CPUs: [2]int{0, 1}, MedianNs: fl}}
		e.Measurements = append(e.Measurements, results.Measurement{CPUs: []int{0, 1}, Summary: results.Summary{MedianNs: ns}, Spec: results.Spec{Algorithm: r[2], FanIn: fan, Composition: r[4], Policy: r[5]}})
	}
	f.Threads = []results.Threads{e}
	if len(e.Measurements) < 10 {
		t.Fatalf("%d measurements read", len(e.Measurements))
	}
	refit(topo, model.DefaultModel, f)
	c := f.Calibration
	if c == nil || len(c.Residuals) != len(e.Measurements) || c.Points != len(e.Measurements) || c.Loss == "" {
		t.Fatalf("calibration %+v: want %d residuals and the loss", c, len(e.Measurements))
	}
	for k, v := range c.Params {
		if v < 0 {
			t.Errorf("%s = %g: negative", k, v)
		}
	}
	for _, r := range c.Residuals {
		if r.Ratio > 1.5 || r.Ratio < 1/1.5 {
			t.Errorf("%s: predicted %.0f ns, measured %.0f", r.Algorithm, r.PredictedNs, r.MeasuredNs)
		}
	}
	if c.MinRatio > c.MaxRatio || c.RMSLogRatio <= 0 {
		t.Errorf("summary %g-%g rms %g", c.MinRatio, c.MaxRatio, c.RMSLogRatio)
	}
	// The replay's constants are the recorded ones.
	if got := ParamsFrom(c); got.CounterArrivalFraction != c.Params["counter_arrival_fraction"] || got.SignalOverheadNs != c.Params["signal_overhead_ns"] {
		t.Errorf("ParamsFrom %+v does not read %v", got, c.Params)
	}
}

// A file's constants are read inside the model's bounds: an older
// calibration's negative per-signal overhead (-53.7 ns was fitted here)
// replays as 0, a negative fraction as 0, one above 1 as 1, and the
// constants it does not name keep their defaults.
func TestParamsFromIsPhysical(t *testing.T) {
	got := ParamsFrom(&results.Calibration{Model: "default", Params: map[string]float64{
		"signal_overhead_ns": -53.7, "flag_refetch_fraction": -0.2, "counter_transfer_fraction": 3, "futex_wake_ns": -1}})
	def := model.DefaultParams()
	if got.SignalOverheadNs != 0 || got.FlagRefetchFraction != 0 || got.CounterTransferFraction != 1 || got.FutexWakeNs != 100 {
		t.Errorf("read %+v", got)
	}
	if got.CounterArrivalFraction != def.CounterArrivalFraction || got.GoroutineNs != def.GoroutineNs || got.ChannelWakeNs != def.ChannelWakeNs {
		t.Errorf("constants not named: %+v, want the defaults %+v", got, def)
	}
}
