package check

import (
	"context"
	"math"
	"testing"

	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/model"
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
