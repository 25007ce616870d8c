package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/mpicheck"
)

// TestExportOpenMPIFiles: export --format openmpi -o F writes F and the
// rules file it names (an absolute path that exists); show prints the MPI
// record; --verify is refused without -o.
func TestExportOpenMPIFiles(t *testing.T) {
	dir := t.TempDir()
	results := writeResultsWithMPI(t, filepath.Join(dir, "r.json"), map[string]any{"loop": "l", "seconds": 9, "share": "s", "implementations": []any{
		map[string]any{"name": "openmpi", "compiler": "mpicc.openmpi", "launcher": "mpirun.openmpi", "version": "Open MPI v4.1.4", "root": "as root: OMPI_ALLOW_RUN_AS_ROOT=1",
			"counts": []any{map[string]any{"ranks": 8, "default_ns": 29000, "default_spread_ns": 900, "best": "coll_tuned_barrier_algorithm=1", "best_ns": 17000, "spread_ns": 1200, "margin_pct": 70, "test": "p", "settings": 5, "runs": 40}}},
		map[string]any{"name": "mpich", "compiler": "mpicc.mpich", "launcher": "mpirun.mpich", "not_measured": "mpicc.mpich not found"},
	}})
	out := filepath.Join(dir, "barrier.conf")
	if _, err := run(t, "export", "--format", "openmpi", "-o", out, results); err != nil {
		t.Fatal(err)
	}
	conf, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rules string
	for _, l := range strings.Split(string(conf), "\n") {
		if v, ok := strings.CutPrefix(l, "coll_tuned_dynamic_rules_filename = "); ok {
			rules = v
		}
	}
	if !filepath.IsAbs(rules) {
		t.Fatalf("the parameter file names no absolute rules file:\n%s", conf)
	}
	if b, err := os.ReadFile(rules); err != nil || !strings.Contains(string(b), "0 1 0 0") {
		t.Errorf("rules file %s: %v\n%s", rules, err, b)
	}
	// --rules both: the classic file named, the JSON one beside it.
	both := filepath.Join(dir, "both.conf")
	if _, err := run(t, "export", "--format", "openmpi", "--rules", "both", "-o", both, results); err != nil {
		t.Fatal(err)
	}
	conf, err = os.ReadFile(both)
	if err != nil || !strings.Contains(string(conf), "coll_tuned_dynamic_rules_filename = "+both+".rules\n") {
		t.Errorf("--rules both: %v\n%s", err, conf)
	}
	if b, err := os.ReadFile(both + ".rules.json"); err != nil || !strings.Contains(string(b), `"rule_file_version": 3`) {
		t.Errorf("--rules both, the JSON file: %v\n%s", err, b)
	}
	if _, err := run(t, "export", "--format", "openmpi", "--rules", "json", "-o", both, results); err == nil || !strings.Contains(err.Error(), "classic") {
		t.Errorf("--rules json for Open MPI 4.1: %v, want a refusal", err)
	}
	if _, err := run(t, "export", "--format", "mpich", "--rules", "json", results); err == nil || !strings.Contains(err.Error(), "--rules") {
		t.Errorf("--rules with mpich: %v, want a usage error", err)
	}
	if _, err := run(t, "export", "--format", "openmpi", "--rules", "yaml", "-o", both, results); err == nil || !strings.Contains(err.Error(), "yaml") {
		t.Errorf("--rules yaml: %v", err)
	}
	if _, err := run(t, "export", "--format", "openmpi", results); err == nil || !strings.Contains(err.Error(), "-o FILE") {
		t.Errorf("openmpi to stdout with an algorithm to set: %v, want a refusal naming -o", err)
	}
	if _, err := run(t, "export", "--format", "kv", "--verify", "-o", out, results); err == nil || !strings.Contains(err.Error(), "--verify") {
		t.Errorf("--verify with kv: %v", err)
	}
	show, err := run(t, "show", results)
	if err != nil || !strings.Contains(show, "openmpi, 8 ranks: coll_tuned_barrier_algorithm=1") || !strings.Contains(show, "mpich not measured") {
		t.Errorf("show: %v\n%s", err, show)
	}
}

// mpichAssignments reads back what the mpich export writes: one
// assignment a line, or a case line with a k value and its algorithm;
// never the comments (which name settings too).
func TestMPICHAssignments(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "x.env")
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pair := "MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM=release_gather MPIR_CVAR_REDUCE_INTRANODE_TREE_KVAL=2"
	p := write("# 2 ranks: MPIR_CVAR_BARRIER_INTRA_ALGORITHM=smp: 700 ns\n# MPIR_CVAR_REDUCE_INTRANODE_TREE_KVAL is not MPI_Barrier's alone\ncase \"${BARRIERTUNE_MPI_RANKS:-}\" in\n2) export " + pair + " ;;\nesac\n")
	env, err := mpichAssignments(p, 0, []mpicheck.Check{{Ranks: 2}})
	if err != nil || strings.Join(env, " ") != pair {
		t.Errorf("case line: %q %v, want %q", env, err, pair)
	}
	p = write("# comment MPIR_CVAR_X=1\nMPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM=release_gather\nMPIR_CVAR_REDUCE_INTRANODE_TREE_KVAL=2\n")
	env, err = mpichAssignments(p, 2, nil)
	if err != nil || strings.Join(env, " ") != pair {
		t.Errorf("plain lines: %q %v, want %q", env, err, pair)
	}
}

// writeResultsWithMPI writes to path the export package's test results
// file with mpi as its mpi section, and returns path.
func writeResultsWithMPI(t *testing.T, path string, mpi map[string]any) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "internal", "export", "testdata", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	raw["mpi"] = mpi
	if data, err = json.Marshal(raw); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
