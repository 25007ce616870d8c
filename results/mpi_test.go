package results_test

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/results"
)

// v15 is a file written before v1.6 (check-2cpu.json relabelled v1.5,
// with an OpenMP record): it reads, with no MPI record.
func v15(t *testing.T) *results.File {
	t.Helper()
	data, err := os.ReadFile("testdata/check-2cpu.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	raw["schema"] = "barriertune.results/v1.5"
	raw["openmp"] = map[string]any{"loop": "l", "seconds": 1, "share": "1/3", "runtimes": []any{map[string]any{"name": "libgomp", "compiler": "gcc", "not_measured": "x"}}}
	data, _ = json.Marshal(raw)
	f, err := results.Parse(data, "v1.5.json")
	if err != nil {
		t.Fatalf("a v1.5 file does not read: %v", err)
	}
	if f.MPI != nil || f.OpenMP == nil {
		t.Fatalf("a v1.5 file: MPI %+v, OpenMP %+v", f.MPI, f.OpenMP)
	}
	return f
}

// TestMPIBeforeSchema: a v1.5 file reads without an MPI record; one
// written now keeps it through a round trip.
func TestMPIBeforeSchema(t *testing.T) {
	f := v15(t)
	f.Schema = results.Schema
	f.MPI = &results.MPI{Loop: "loop", Share: "half", Implementations: []results.MPIImplementation{
		{Name: "openmpi", Compiler: "/usr/bin/mpicc.openmpi", Launcher: "/usr/bin/mpirun.openmpi", Version: "Open MPI v4.1.4", Root: "as root",
			Counts: []results.MPICount{{Ranks: 8, DefaultNs: 29000, DefaultSpreadNs: 900, Best: "coll_tuned_barrier_algorithm=1", BestNs: 17000, SpreadNs: 1500, MarginPct: 70, Test: "p", Settings: 6, Runs: 60}}},
		{Name: "mpich", Compiler: "mpicc.mpich", Launcher: "mpirun.mpich", NotMeasured: "not installed"},
	}}
	out, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := results.Parse(out, "new.json")
	if err != nil {
		t.Fatalf("the file with an MPI record does not read back: %v", err)
	}
	if m := g.MPI; m == nil || len(m.Implementations) != 2 || m.Implementations[0].Counts[0].Best != "coll_tuned_barrier_algorithm=1" || m.Implementations[0].Counts[0].SpreadNs != 1500 || m.Implementations[1].NotMeasured == "" {
		t.Fatalf("the MPI record did not survive: %+v", g.MPI)
	}
}

// wantMPIRefused fails t unless f with im as its one MPI implementation
// is refused by Parse with an error naming want.
func wantMPIRefused(t *testing.T, f *results.File, name string, im results.MPIImplementation, want string) {
	t.Helper()
	f.MPI = &results.MPI{Implementations: []results.MPIImplementation{im}}
	out, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := results.Parse(out, "x"); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: got %v, want a refusal naming %q", name, err, want)
	}
}

// TestMPIRefusesHostileValues: settings that could break out of an MCA
// parameter file or a shell file, rank counts out of range or repeated,
// times that are not numbers, and unknown implementations are refused,
// each naming what was wrong.
func TestMPIRefusesHostileValues(t *testing.T) {
	f := v15(t)
	f.Schema = results.Schema
	good := results.MPICount{Ranks: 2, DefaultNs: 500, Best: "coll_tuned_barrier_algorithm=3", BestNs: 400}
	cases := []struct {
		name string
		im   results.MPIImplementation
		want string
	}{
		{"newline in a value", results.MPIImplementation{Name: "openmpi", Counts: []results.MPICount{{Ranks: 2, Best: "coll_tuned_barrier_algorithm=1\nmca_param_files=/tmp/x"}}}, "NAME=VALUE"},
		{"shell in a value", results.MPIImplementation{Name: "mpich", Counts: []results.MPICount{{Ranks: 2, Best: "MPIR_CVAR_BARRIER_INTRA_ALGORITHM=$(id)"}}}, "NAME=VALUE"},
		{"not a CVAR", results.MPIImplementation{Name: "mpich", Counts: []results.MPICount{{Ranks: 2, Best: "LD_PRELOAD=x.so"}}}, "NAME=VALUE"},
		{"capitals in an MCA name", results.MPIImplementation{Name: "openmpi", Counts: []results.MPICount{{Ranks: 2, Best: "PATH=x"}}}, "NAME=VALUE"},
		{"no value", results.MPIImplementation{Name: "openmpi", Counts: []results.MPICount{{Ranks: 2, Best: "coll_tuned_barrier_algorithm="}}}, "NAME=VALUE"},
		{"a non-CVAR after a comma", results.MPIImplementation{Name: "mpich", Counts: []results.MPICount{{Ranks: 2, Best: "MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM=mpir,LD_PRELOAD=x.so"}}}, "NAME=VALUE"},
		{"an empty assignment", results.MPIImplementation{Name: "mpich", Counts: []results.MPICount{{Ranks: 2, Best: "MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM=mpir,"}}}, "NAME=VALUE"},
		{"five assignments", results.MPIImplementation{Name: "mpich", Counts: []results.MPICount{{Ranks: 2, Best: strings.Repeat("MPIR_CVAR_A=1,", 4) + "MPIR_CVAR_A=1"}}}, "at most 4"},
		{"rank 0", results.MPIImplementation{Name: "openmpi", Counts: []results.MPICount{{Ranks: 0}}}, "rank count 0"},
		{"huge rank", results.MPIImplementation{Name: "openmpi", Counts: []results.MPICount{{Ranks: math.MaxInt32}}}, "out of range"},
		{"repeated rank", results.MPIImplementation{Name: "openmpi", Counts: []results.MPICount{good, good}}, "repeated"},
		{"negative time", results.MPIImplementation{Name: "openmpi", Counts: []results.MPICount{{Ranks: 2, DefaultNs: -1}}}, "a time of -1"},
		{"unknown implementation", results.MPIImplementation{Name: "intelmpi"}, "intelmpi"},
	}
	for _, c := range cases {
		wantMPIRefused(t, f, c.name, c.im, c.want)
	}
	// A k value with its algorithm (MPICH) is a good setting.
	pair := results.MPICount{Ranks: 4, DefaultNs: 900, Best: "MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM=release_gather,MPIR_CVAR_REDUCE_INTRANODE_TREE_KVAL=2", BestNs: 700}
	f.MPI = &results.MPI{Implementations: []results.MPIImplementation{{Name: "mpich", Counts: []results.MPICount{pair}}}}
	out, _ := json.Marshal(f)
	if _, err := results.Parse(out, "x"); err != nil {
		t.Errorf("a k value with its algorithm is refused: %v", err)
	}
	f.MPI = &results.MPI{Implementations: []results.MPIImplementation{{Name: "openmpi", Counts: []results.MPICount{good}}}}
	out, _ = json.Marshal(f)
	if _, err := results.Parse(out, "x"); err != nil {
		t.Errorf("a good record is refused: %v", err)
	}
	// A NaN cannot be written as JSON; a huge number is refused.
	raw := strings.Replace(string(out), `"default_ns":500`, `"default_ns":1e300`, 1)
	if _, err := results.Parse([]byte(raw), "x"); err == nil || !strings.Contains(err.Error(), "a time of") {
		t.Errorf("a time of 1e300: %v", err)
	}
}

// TestMPILaunchBeforeSchema: a v1.6 file with an MPI record (no launch
// rows, no verification) reads; one written now keeps the v1.7 fields.
func TestMPILaunchBeforeSchema(t *testing.T) {
	f := v15(t)
	f.Schema = "barriertune.results/v1.6"
	f.MPI = &results.MPI{Loop: "l", Implementations: []results.MPIImplementation{{Name: "openmpi", Compiler: "c", Launcher: "l", Counts: []results.MPICount{{Ranks: 8, DefaultNs: 29000, Best: "coll_tuned_barrier_algorithm=1", BestNs: 17000}}}}}
	data, _ := json.Marshal(f)
	g, err := results.Parse(data, "v1.6.json")
	if err != nil || g.MPI == nil || g.MPI.Implementations[0].Counts[0].Best == "" || g.MPI.Implementations[0].Launch != nil {
		t.Fatalf("a v1.6 file: %v %+v", err, g)
	}
	f.Schema = results.Schema
	f.MPI.Implementations[0].Launch = []results.MPICount{{Ranks: 2, Setting: "hwloc_base_binding_policy=core:overload-allowed", Baseline: "the defaults", DefaultNs: 500, BestNs: 400, Ratio: 0.8, Best: "hwloc_base_binding_policy=core:overload-allowed"}}
	f.MPI.Implementations[0].LaunchChosen = "hwloc_base_binding_policy=core:overload-allowed"
	f.MPI.Implementations[0].LaunchWhy = []string{"x: y"}
	f.MPI.Implementations[0].Counts[0].Verify, f.MPI.Implementations[0].Counts[0].VerifyRatio = "reproduced", 0.6
	data, _ = json.Marshal(f)
	g, err = results.Parse(data, "v1.7.json")
	if err != nil || g.MPI.Implementations[0].LaunchChosen == "" || g.MPI.Implementations[0].Counts[0].Verify != "reproduced" {
		t.Fatalf("a v1.7 record: %v %+v", err, g.MPI)
	}
}

// TestMPILaunchRefusesHostileValues: launch-level settings that could
// break out of the parameter file, a chosen setting that was slower,
// failed or not measured somewhere, or faster nowhere, a verification
// outside its values, and launch rows on MPICH are refused, naming the
// field.
func TestMPILaunchRefusesHostileValues(t *testing.T) {
	f := v15(t)
	f.Schema = results.Schema
	row := func(ranks int, best string) results.MPICount {
		return results.MPICount{Ranks: ranks, Setting: "coll_sm_priority=100", DefaultNs: 500, BestNs: 400, Ratio: 0.8, Best: best}
	}
	good := results.MPIImplementation{Name: "openmpi", Launch: []results.MPICount{row(2, "coll_sm_priority=100"), row(4, "")}, LaunchChosen: "coll_sm_priority=100"}
	mod := func(fn func(im *results.MPIImplementation)) results.MPIImplementation {
		im := good
		im.Launch = append([]results.MPICount(nil), good.Launch...)
		fn(&im)
		return im
	}
	cases := []struct {
		name string
		im   results.MPIImplementation
		want string
	}{
		{"newline in a setting", mod(func(im *results.MPIImplementation) {
			im.Launch[0].Setting = "coll_sm_priority=100\nmca_param_files=/tmp/x"
		}), "launch[0]: setting"},
		{"space in a setting", mod(func(im *results.MPIImplementation) { im.Launch[1].Setting = "coll_sm_priority = 100" }), "launch[1]: setting"},
		{"empty pair", mod(func(im *results.MPIImplementation) { im.Launch[1].Setting = "coll_sm_priority=100," }), "launch[1]: setting"},
		{"best not the row's", mod(func(im *results.MPIImplementation) { im.Launch[1].Best = "coll_sm_priority=1" }), "launch[1]: best"},
		{"faster and slower", mod(func(im *results.MPIImplementation) { im.Launch[0].Slower = true }), "both faster"},
		{"chosen slower", mod(func(im *results.MPIImplementation) { im.Launch[1].Slower = true }), "launch_chosen"},
		{"chosen failed", mod(func(im *results.MPIImplementation) { im.Launch[1].Failed = []string{"crashed"} }), "launch_chosen"},
		{"chosen unmeasured", mod(func(im *results.MPIImplementation) { im.Launch[1].NotMeasured = "budget" }), "launch_chosen"},
		{"chosen faster nowhere", mod(func(im *results.MPIImplementation) { im.Launch[0].Best = "" }), "launch_chosen"},
		{"chosen not a row", mod(func(im *results.MPIImplementation) { im.LaunchChosen = "hwloc_base_binding_policy=none" }), "launch_chosen"},
		{"repeated row", mod(func(im *results.MPIImplementation) { im.Launch[1].Ranks = 2 }), "repeated"},
		{"rank 0", mod(func(im *results.MPIImplementation) { im.Launch[1].Ranks = 0 }), "launch[1]: rank count 0"},
		{"negative ratio", mod(func(im *results.MPIImplementation) { im.Launch[1].Ratio = -1 }), "ratio"},
		{"bad verify", mod(func(im *results.MPIImplementation) { im.Counts = []results.MPICount{{Ranks: 2, Verify: "yes"}} }), `verify "yes"`},
		{"huge verify ratio", mod(func(im *results.MPIImplementation) {
			im.Counts = []results.MPICount{{Ranks: 2, Verify: "faster", VerifyRatio: 1e300}}
		}), "verify_ratio"},
		{"launch rows on MPICH", mod(func(im *results.MPIImplementation) { im.Name = "mpich" }), "Open MPI's only"},
	}
	for _, c := range cases {
		wantMPIRefused(t, f, c.name, c.im, c.want)
	}
	f.MPI = &results.MPI{Implementations: []results.MPIImplementation{good}}
	out, _ := json.Marshal(f)
	if _, err := results.Parse(out, "x"); err != nil {
		t.Errorf("a good launch record is refused: %v", err)
	}
}
