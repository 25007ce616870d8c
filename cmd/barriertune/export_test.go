package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExportCommand(t *testing.T) {
	path := filepath.Join("..", "..", "export", "testdata", "results.json")
	out, err := run(t, "export", "--format", "kv", "--threads", "3", path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "threads=3 measured_threads=4 algorithm=static-tree fan_in=4 policy=spin pinned=1 cpus=0,2,4,6 median_ns=180.2\n"; out != want {
		t.Errorf("export --format kv --threads 3 = %q, want %q", out, want)
	}
	golden, err := os.ReadFile(filepath.Join("..", "..", "export", "testdata", "c-header.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "export", "--format", "c-header", path); err != nil || out != string(golden) {
		t.Errorf("export --format c-header differs from the package's golden file (err %v)", err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"export", path}, `required flag(s) "format" not set`},
		{[]string{"export", "--format", "xml", path}, `(accepted: omp-env, c-header, env, kv)`},
		{[]string{"export", "--format", "kv", filepath.Join(t.TempDir(), "none.json")}, "no such file"},
	} {
		if _, err := run(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want one line containing %q", tc.args, err, tc.want)
		}
	}
}
