package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/check"
	"github.com/barriertune/barriertune/results"
)

func TestCheckPlanJSON(t *testing.T) {
	out, err := run(t, "check", "--plan", "--synthetic", "pack:2 l3:2 core:4 pu:2", "--json", "--budget", "3s")
	if err != nil {
		t.Fatal(err)
	}
	var p check.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if p.PUs != 32 || len(p.Threads) != len(check.WithOversubscribedCounts(check.DefaultThreadCounts(32), 32)) || p.EstimatedS <= 0 || p.EstimatedS > 3 || p.Inference != check.InferenceRule {
		t.Fatalf("pus %d, %d entries, %.1fs, inference %q", p.PUs, len(p.Threads), p.EstimatedS, p.Inference)
	}
	for i, e := range p.Threads {
		if e.Threads != check.WithOversubscribedCounts(check.DefaultThreadCounts(32), 32)[i] || len(e.Placements) == 0 || len(e.Candidates) == 0 {
			t.Fatalf("entry %d: %+v", i, e)
		}
	}
}

func TestCheckPlanText(t *testing.T) {
	out, err := run(t, "check", "--plan", "--synthetic", "pack:2 core:2 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"check of 8 PUs", "    2 threads", "    8 threads", "dissemination", "central", "planned in", "nearest measured count"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "1 placements") {
		t.Errorf("plural wrong:\n%s", out)
	}
}

// TestCheckFlagRefusals: every check flag is honoured in every mode or
// refused as a usage error (exit 2) where it means nothing.
func TestCheckFlagRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--keep", "7"}, "--keep"},
		{[]string{"check", "--model", "bogus"}, "--model"},
		{[]string{"check", "--exhaustive"}, "--exhaustive"},
		{[]string{"check", "--latency", "x.csv"}, "--latency"},
		{[]string{"check", "--noise", "0.1"}, "--noise"},
		{[]string{"check", "--from-results", "r.json"}, "--from-results"},
		{[]string{"check", "--simulate", "--synthetic", "pu:4", "-o", "x.json", "--resume", "r.json"}, "--resume"},
		{[]string{"check", "--plan", "--latency", "a.csv", "--from-results", "r.json"}, "together"},
		{[]string{"check", "--plan", "--synthetic", "pu:4", "--keep", "0"}, "--keep 0"},
		{[]string{"check", "--plan", "--synthetic", "pu:4", "--model", "magic"}, `"magic"`},
		{[]string{"check", "--plan", "--synthetic", "pu:4", "--budget", "-1s"}, "--budget"},
		{[]string{"check", "--plan", "--synthetic", "pu:4", "--noise", "0.1"}, "--noise"},
		{[]string{"check", "--plan", "--synthetic", "pu:4", "-o", "x.json"}, "-o"},
		{[]string{"check", "--plan", "--simulate", "--synthetic", "pu:4"}, "together"},
		{[]string{"check", "--simulate", "--synthetic", "pu:4"}, "-o FILE"},
		{[]string{"check", "--simulate", "--synthetic", "pu:4", "-o", "x.json", "--noise", "2"}, "--noise"},
		{[]string{"check", "--threads", "70000"}, "--threads"},
	} {
		_, err := run(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || exitCode(err) != 2 {
			t.Errorf("%v: error %v (exit %d), want exit 2 mentioning %s", c.args, err, exitCode(err), c.want)
		}
	}
}

// simTriples lists a results file's (threads, CPUs, candidate) as
// check.Plan.Triples does.
func simTriples(t *testing.T, path string) []string {
	f, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range f.Threads {
		for _, m := range e.Measurements {
			name := m.Algorithm
			if m.FanIn > 0 {
				name = fmt.Sprintf("%s(%d)", m.Algorithm, m.FanIn)
			}
			var parts []string
			for i := 0; i < len(m.CPUs); {
				j := i
				for j+1 < len(m.CPUs) && m.CPUs[j+1] == m.CPUs[j]+1 {
					j++
				}
				if j > i {
					parts = append(parts, fmt.Sprintf("%d-%d", m.CPUs[i], m.CPUs[j]))
				} else {
					parts = append(parts, fmt.Sprint(m.CPUs[i]))
				}
				i = j + 1
			}
			out = append(out, fmt.Sprintf("%d %s %s", e.Threads, strings.Join(parts, ","), name))
		}
	}
	return out
}

// TestCheckPlanMatchesSimulate: with the same flags, --plan --json lists
// the triples --simulate measures, honouring --threads, --sets-limit and
// --algorithms.
func TestCheckPlanMatchesSimulate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.json")
	flags := []string{"--synthetic", "pack:2 l3:2 core:4 pu:2", "--threads", "3,8,32", "--sets-limit", "2", "--algorithms", "central,mcs,static-tree,hybrid,dissemination"}
	out, err := run(t, append([]string{"check", "--plan", "--json"}, flags...)...)
	if err != nil {
		t.Fatal(err)
	}
	var p check.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, append([]string{"check", "--simulate", "-o", path}, flags...)...); err != nil {
		t.Fatal(err)
	}
	want, got := p.Triples(), simTriples(t, path)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) || len(want) == 0 {
		t.Errorf("plan %v\nsimulate %v", want, got)
	}
}

// TestCheckPlanMatchesLive: on this machine a live check and --plan with
// the same flags list the same triples.
func TestCheckPlanMatchesLive(t *testing.T) {
	if testing.Short() {
		t.Skip("measures for about a second; skipped with -short")
	}
	path := filepath.Join(t.TempDir(), "live.json")
	flags := []string{"--threads", "2", "--algorithms", "central,dissemination,mcs", "--budget", "2s", "--sample-time", "20us"}
	out, err := run(t, append([]string{"check", "--plan", "--json"}, flags...)...)
	if err != nil {
		t.Fatal(err)
	}
	var p check.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, append([]string{"check", "-o", path}, flags...)...); err != nil {
		t.Fatal(err)
	}
	want, got := p.Triples(), simTriples(t, path)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Errorf("plan %v\nlive %v", want, got)
	}
}

func TestCheckSimulate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.json")
	out, err := run(t, "check", "--simulate", "--synthetic", "pack:2 l3:2 core:4 pu:2", "-o", path, "--threads", "4")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "simulated 1 thread count ") {
		t.Fatalf("output:\n%s", out)
	}
	f, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Threads) != 1 || !f.Simulated || !strings.HasPrefix(f.Machine.CPU.Name, "simulated: synthetic") || f.Threads[0].Best.Policy != "spin" {
		t.Fatalf("%d entries, simulated %v, CPU %q", len(f.Threads), f.Simulated, f.Machine.CPU.Name)
	}
	// Replaying the file's latencies and calibration ranks as it did.
	again := filepath.Join(t.TempDir(), "again.json")
	if _, err := run(t, "check", "--simulate", "--from-results", path, "-o", again, "--threads", "4"); err != nil {
		t.Fatal(err)
	}
	g, err := results.Read(again)
	if err != nil {
		t.Fatal(err)
	}
	if g.Threads[0].Best.Describe() != f.Threads[0].Best.Describe() {
		t.Errorf("replay picked %s, the simulation %s", g.Threads[0].Best.Describe(), f.Threads[0].Best.Describe())
	}
}

// TestPlanNamesWhatTheRunAdds: --plan's estimate said 1.8 s for a run of
// 5-7 s; it now bounds what follows the rounds (extras_s) and says that a
// live run's first round sets the pace.
func TestPlanNamesWhatTheRunAdds(t *testing.T) {
	code, out, errOut := execLine("check", "--plan", "--budget", "10s", "--synthetic", "pack:1 core:2 pu:2")
	if code != 0 || !strings.Contains(out, "then at most ") || !strings.Contains(out, "its first round sets the pace") {
		t.Errorf("check --plan: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = execLine("check", "--plan", "--json", "--budget", "10s", "--synthetic", "pack:1 core:2 pu:2")
	if code != 0 || !strings.Contains(out, `"extras_s": `) || strings.Contains(out, `"extras_s": 0,`) {
		t.Errorf("check --plan --json: exit %d, no extras_s:\n%.600s", code, out)
	}
}
