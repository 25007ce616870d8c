package main

import (
	"strings"
	"testing"

	"github.com/barriertune/barriertune/results"
)

// show prints each count's verification and each launch-level setting:
// chosen or not, why, and its ratio at each count; a file before v1.7
// prints neither.
func TestShowMPILaunchAndVerify(t *testing.T) {
	f := &results.File{MPI: &results.MPI{Implementations: []results.MPIImplementation{{
		Name: "openmpi", Launcher: "mpirun.openmpi", Version: "Open MPI v4.1.4",
		Counts: []results.MPICount{
			{Ranks: 2, DefaultNs: 500, Why: "no setting was faster"},
			{Ranks: 8, DefaultNs: 29000, Best: "coll_tuned_barrier_algorithm=1", BestNs: 17000, MarginPct: 70, Test: "p", Verify: "not_reproduced", VerifyRatio: 1.01, VerifyWhy: "8 ranks: NOT reproduced: the file runs at 1.01x the defaults"},
		},
		Launch: []results.MPICount{
			{Ranks: 2, Setting: "coll_sm_priority=100", NotMeasured: "not timed: slower at 8 ranks (5.00x)"},
			{Ranks: 8, Setting: "coll_sm_priority=100", Ratio: 5, Slower: true},
		},
		LaunchWhy: []string{"coll_sm_priority=100: slower at 8 ranks (5.00x the baseline): not chosen; what it does: coll/sm", "coll/sm's tree degree: not offered: no such parameter"},
	}}}}
	out := strings.Join(mpiLines(f), "\n")
	for _, want := range []string{
		"openmpi, 8 ranks, the exported file run as a user would (not reproduced): 8 ranks: NOT reproduced",
		"openmpi launch-level, not chosen: coll_sm_priority=100: slower at 8 ranks (5.00x the baseline): not chosen [ranks 2: not timed; 8: 5.00x, slower]",
		"openmpi: coll/sm's tree degree: not offered",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "what it does") {
		t.Errorf("show repeats what the setting does on its line:\n%s", out)
	}
	f.MPI.Implementations[0].Launch, f.MPI.Implementations[0].LaunchWhy = nil, nil
	f.MPI.Implementations[0].Counts[1].Verify = ""
	if out := strings.Join(mpiLines(f), "\n"); strings.Contains(out, "launch-level") || strings.Contains(out, "run as a user would") {
		t.Errorf("a v1.6 record prints v1.7 lines:\n%s", out)
	}
}
