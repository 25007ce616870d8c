package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if err := runLatency(context.Background(), &out, latencyOptions{from: writeCSV(t), asJSON: true}); err != nil {
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
	o := modelOptions{latencyFile: writeCSV(t), threads: 4, kind: "critical-path", algorithm: "all", asJSON: true}
	if err := runModel(context.Background(), &out, o); err != nil {
		t.Fatal(err)
	}
	var got modelJSON
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	// Compact order from the clustering: 0,1 then 2,3. Dissemination:
	// stage 0 i→i+1 gives finishes [51 10 52 11]; stage 1 i→i+2: rank 0
	// hears from 2 at 52 + 50 = 102, the latest.
	if got.Threads != 4 || len(got.Predictions) != 12 {
		t.Fatalf("got %s", out.String())
	}
	for _, p := range got.Predictions {
		if p.Algorithm == "dissemination" && p.PredictedNs != 102 {
			t.Errorf("dissemination %v, want 102 (52 + 50)", p.PredictedNs)
		}
	}
	for _, bad := range []modelOptions{
		{threads: 4, kind: "default", algorithm: "all"},
		{latencyFile: o.latencyFile, kind: "nope", algorithm: "all"},
		{latencyFile: o.latencyFile, kind: "default", algorithm: "nope", threads: 2},
	} {
		if err := runModel(context.Background(), &out, bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	out.Reset()
	if err := runModel(context.Background(), &out, modelOptions{latencyFile: o.latencyFile, kind: "default", algorithm: "all"}); err != nil || strings.Count(out.String(), "threads") != 3 {
		t.Errorf("table: %v\n%s", err, out.String())
	}
}
