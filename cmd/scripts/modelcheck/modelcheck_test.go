package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/latency"
	"github.com/barriertune/barriertune/cmd/internal/model"
)

// The report on the 16-vCPU measurements (cmd/internal/model/testdata): one
// row per measurement with its fitted and leave-one-out ratios, and per
// thread count the model's pick against the measured fastest.
func TestReport16vCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("eleven fits of 30 measurements: seconds, longer under -race")
	}
	dir := filepath.Join("..", "..", "internal", "model", "testdata")
	obs, err := readMeasured(filepath.Join(dir, "vcpu16-measured.csv"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := latency.ReadCSVFile(filepath.Join(dir, "vcpu16-matrix.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 30 {
		t.Fatalf("%d measurements read, want 30", len(obs))
	}
	out := Report(obs, m)
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 7 && (f[0] == "4" || f[0] == "8" || f[0] == "16") {
			rows++
			if f[6] == "-" {
				t.Errorf("no leave-one-out ratio: %q", l)
			}
		}
	}
	if rows != 30 {
		t.Errorf("%d measurement rows, want 30:\n%s", rows, out)
	}
	for _, want := range []string{"fit: predicted/measured", "leave-one-out: worst ratio", "4 threads: model's fastest", "16 threads: model's fastest", "constants fitted: "} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// Picks: per thread count, the measured fastest and the measurement the
// model predicts fastest (the first on a tie), brute force.
func TestPicks(t *testing.T) {
	rs := []model.Residual{
		{Threads: 2, Algorithm: "central", MeasuredNs: 170, PredictedNs: 180},
		{Threads: 2, Algorithm: "dissemination", MeasuredNs: 180, PredictedNs: 180},
		{Threads: 2, Algorithm: "combining", MeasuredNs: 165, PredictedNs: 190},
		{Threads: 4, Algorithm: "goroutine", MeasuredNs: 400, PredictedNs: 430},
		{Threads: 4, Algorithm: "central", MeasuredNs: 650, PredictedNs: 1000},
	}
	got := Picks(rs)
	want := []Pick{{2, "combining", 165, "central", 170, []string{"dissemination (measured 180.0)"}}, {4, "goroutine", 400, "goroutine", 400, nil}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("got %+v, want %+v", got[i], want[i])
		}
	}
}

// A measured CSV is validated before use: a bad row is named.
func TestReadMeasuredRefuses(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.csv")
	for _, body := range []string{"threads,algorithm,measured_ns\n4,central,abc\n", "threads,algorithm,measured_ns\n0,central,10\n", "threads,algorithm,measured_ns\n4,central\n"} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readMeasured(p); err == nil || !strings.Contains(err.Error(), "row 2") {
			t.Errorf("%q: error %v, want one naming row 2", body, err)
		}
	}
}
