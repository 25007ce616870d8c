package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/barriertune/barriertune/results"
)

// planCmd is a check-like command carrying only the flags planning reads,
// so planOptions is tested whether or not check registers it yet.
func planCmd(args ...string) (string, error) {
	var src sourceFlags
	var o planOptions
	cmd := &cobra.Command{Use: "check", RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd, &src) }}
	src.register(cmd.Flags())
	o.register(cmd.Flags())
	cmd.Flags().Duration("budget", 0, "")
	cmd.Flags().Int("sets-limit", 8, "")
	cmd.Flags().Duration("sample-time", 0, "")
	cmd.Flags().Bool("json", false, "")
	cmd.Flags().StringP("output", "o", "", "")
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestCheckPlanJSON(t *testing.T) {
	out, err := planCmd("--plan", "--synthetic", "pack:2 l3:2 core:4 pu:2", "--json", "--budget", "3s")
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		PUs             int     `json:"pus"`
		EstimatedTotalS float64 `json:"estimated_total_s"`
		Plan            []struct {
			Threads    int      `json:"threads"`
			Placements []string `json:"placements"`
			Algorithms []string `json:"algorithms"`
			EstimatedS float64  `json:"estimated_s"`
			Source     string   `json:"source"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if p.PUs != 32 || len(p.Plan) != 31 || p.EstimatedTotalS <= 0 || p.EstimatedTotalS > 3 {
		t.Fatalf("pus %d, %d entries, %.1fs", p.PUs, len(p.Plan), p.EstimatedTotalS)
	}
	for i, e := range p.Plan {
		if e.Threads != i+2 || len(e.Placements) == 0 || (e.Source == "measured") != (len(e.Algorithms) > 0) {
			t.Fatalf("entry %d: %+v", i, e)
		}
	}
}

func TestCheckPlanText(t *testing.T) {
	out, err := planCmd("--plan", "--synthetic", "pack:2 core:2 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"8 PUs, pruned plan", "   2  ", "   8  ", "dissemination", "central", "planned in"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan text lacks %q:\n%s", want, out)
		}
	}
}

func TestCheckPlanErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--plan", "--synthetic", "pu:4", "--keep", "0"}, "--keep 0"},
		{[]string{"--plan", "--synthetic", "pu:4", "--model", "magic"}, `"magic"`},
		{[]string{"--plan", "--synthetic", "pu:4", "--budget", "-1s"}, "--budget"},
		{[]string{"--plan", "--synthetic", "pu:1"}, "1 PUs"},
	} {
		if _, err := planCmd(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to mention %s", c.args, err, c.want)
		}
	}
}

func TestCheckSimulate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.json")
	out, err := planCmd("--simulate", "--synthetic", "pack:2 l3:2 core:4 pu:2", "-o", path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "simulated 31 thread counts") {
		t.Fatalf("output:\n%s", out)
	}
	f, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Threads) != 31 || !strings.HasPrefix(f.Machine.CPU.Name, "simulated: synthetic") {
		t.Fatalf("%d entries, CPU %q", len(f.Threads), f.Machine.CPU.Name)
	}
	if _, err := planCmd("--simulate", "--synthetic", "pu:4"); err == nil || !strings.Contains(err.Error(), "-o FILE") {
		t.Fatalf("--simulate without -o: %v", err)
	}
	if _, err := planCmd("--simulate", "--plan", "--synthetic", "pu:4", "-o", path); err == nil || !strings.Contains(err.Error(), "together") {
		t.Fatalf("--simulate --plan: %v", err)
	}
}
