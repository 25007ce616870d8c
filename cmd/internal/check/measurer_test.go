package check

import (
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

// TestSimulatedFileRecordsNothingOfTheHost: a simulated check's file holds
// the simulated machine and nothing measured on the host that ran it: no
// block and wake-up cost (which Auto would read as this host's), no host
// CPU identity, and the simulated tree's CPUs. The old check measured the
// host's block and wake-up cost into simulated files.
func TestSimulatedFileRecordsNothingOfTheHost(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:2 core:2 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	f := simulate(t, Config{Topology: topo, Threads: []int{2, 4}, Budget: 5 * time.Second})
	if !f.Simulated {
		t.Fatal("a simulated check wrote a file not marked simulated")
	}
	if f.BlockWakeNs != 0 {
		t.Errorf("simulated file records block_wake_ns %v, measured on this host", f.BlockWakeNs)
	}
	if !strings.HasPrefix(f.Machine.CPU.Name, "simulated: ") || f.Machine.CPU == hostCPU() {
		t.Errorf("simulated file's CPU identity %+v is not the simulated machine's", f.Machine.CPU)
	}
	if f.Machine.AllowedCPUs != topo.Allowed().String() || f.Machine.TopologyHash != topo.CanonicalHash() {
		t.Errorf("simulated file's machine %q (%s) is not the simulated tree's %q (%s)",
			f.Machine.AllowedCPUs, f.Machine.TopologyHash, topo.Allowed(), topo.CanonicalHash())
	}
}

// TestMeasurersDiffer: what the check asks a Measurer instead of asking
// which kind it is. A live measurer bounds the context by the deadline
// and never expires on its own; a simulated one keeps its own clock.
func TestMeasurersDiffer(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:1 core:2 pu:1")
	if err != nil {
		t.Fatal(err)
	}
	m := simulatedMeasurer(t, topo)
	past := m.Now().Add(-time.Second)
	if !m.Expired(past) || m.Expired(m.Now().Add(time.Hour)) {
		t.Error("a simulated measurer's Expired does not follow its clock")
	}
	if _, ok := m.BlockWake(); ok {
		t.Error("a simulated measurer gives a block and wake-up cost")
	}
	if (Hardware{}).Expired(past) {
		t.Error("a live measurer expires on its own (its context ends it)")
	}
	ctx, cancel := (Hardware{}).Bound(t.Context(), time.Now().Add(time.Hour))
	defer cancel()
	if _, ok := ctx.Deadline(); !ok {
		t.Error("a live measurer does not bound the check's context")
	}
	most, err := hwtree.FromSynthetic("pack:4 l3:8 core:128 pu:2") // 8192 PUs
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Accept(most, false); err != nil {
		t.Errorf("an 8192-PU tree is refused for simulating: %v", err)
	}
	if err := (Hardware{}).Accept(most, true); err != nil {
		t.Errorf("an 8192-PU tree is refused for planning: %v", err)
	}
	big, err := hwtree.FromSynthetic("core:8193 pu:1")
	if err != nil {
		t.Fatal(err)
	}
	const want = "the topology has 8193 PUs, more than the 8192 CPUs Linux on x86-64 boots with at most; planning and simulating accept 1..8192 PUs"
	for _, err := range []error{m.Accept(big, false), (Hardware{}).Accept(big, true)} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("an 8193-PU tree for simulating or planning: %v; want %q", err, want)
		}
	}
	if _, ok := m.Hosts(); ok {
		t.Error("a simulated machine limits the threads measured to what this process hosts")
	}
	if h, ok := (Hardware{}).Hosts(); !ok || h.Max < 1 {
		t.Errorf("the live machine hosts %+v, %v threads", h, ok)
	}
}

// Each measurer is each part of one: the clock, the machine, the
// instrument.
var (
	_ Measurer = Hardware{}
	_ Measurer = (*ModelMeasurer)(nil)
)

func simulatedMeasurer(t *testing.T, topo *hwtree.Topology) *ModelMeasurer {
	t.Helper()
	m, err := NewModelMeasurer(topo, nil, model.DefaultModel, model.DefaultParams(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// hostCPU is this machine's CPU identity as a results file records it.
func hostCPU() results.CPUIdentity {
	fd, _ := results.HereFinder()
	return fd.Host.CPU
}
