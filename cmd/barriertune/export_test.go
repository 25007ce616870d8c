package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExportCommand(t *testing.T) {
	path := filepath.Join("..", "internal", "export", "testdata", "results.json")
	out, err := run(t, "export", "--format", "kv", "--threads", "3", path)
	if err != nil {
		t.Fatal(err)
	}
	// 3 threads were not measured: the nearest count's best, packed on the
	// file's first CPUs (the file is another machine's: its whole set).
	if want := "threads=3 measured_threads=4 algorithm=static-tree fan_in=4 policy=spin pinned=1 cpus=0,1,2 rule=nearest\n"; out != want { // formerly no median_ns=0.0 claim
		t.Errorf("export --format kv --threads 3 = %q, want %q", out, want)
	}
	golden, err := os.ReadFile(filepath.Join("..", "internal", "export", "testdata", "c-header.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "export", "--format", "c-header", path); err != nil || out != "/* results file: "+path+" (given) */\n"+string(golden) {
		t.Errorf("export --format c-header differs from the package's golden file (err %v)", err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"export", path}, `--format is required: one of omp-env, c-header, c-barrier, env, kv, openmpi, mpich (usage: barriertune export --format`},
		{[]string{"export", "--format", "kv", "--allowed", "0-99", path}, `--allowed: allowed CPUs 0-99: 8-99 not in the machine`},
		{[]string{"export", "--format", "kv", "--allowed", ",", path}, `--allowed ",": no CPU given`},
		{[]string{"export", "--format", "kv", "--allowed", "x", path}, `--allowed: cpu list "x"`},
		{[]string{"export", "--format", "xml", path}, `(accepted: omp-env, c-header, c-barrier, env, kv, openmpi, mpich)`},
		{[]string{"export", "--format", "kv", filepath.Join(t.TempDir(), "none.json")}, "no results file at"},
	} {
		if _, err := run(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") ||
			strings.Contains(tc.want, "--") && exitCode(err) != exitUsage {
			t.Errorf("%v: error %v, want one line containing %q", tc.args, err, tc.want)
		}
	}
}
