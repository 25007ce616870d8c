package mpicheck

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/pairs"
)

// built builds the loop with im, skipping the test when im is not
// installed (or with -short: a launch takes a second or more).
func built(t *testing.T, im Implementation) *Program {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: launches MPI")
	}
	if !im.Found() {
		t.Skipf("%s not installed (%s, %s): install openmpi-bin libopenmpi-dev / mpich libmpich-dev", im.Name, im.Compiler, im.Launcher)
	}
	p, err := Build(context.Background(), im, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func openMPI(t *testing.T) *Program { return built(t, Implementations()[0]) }

// A session times each algorithm's communicator and refuses what the
// implementation does not have.
func TestOpenMPISession(t *testing.T) {
	p := openMPI(t)
	if (os.Geteuid() == 0) != (p.Root != "") {
		t.Errorf("root %d, Root %q", os.Geteuid(), p.Root)
	}
	s, err := p.StartSession(context.Background(), SessionConfig{Ranks: 2, Settings: []string{ForcedAlgorithm + "=1", "no_such_variable=3"}, Env: []string{"OMPI_MCA_coll_tuned_use_dynamic_rules=1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.Contains(p.Version, "Open MPI") {
		t.Errorf("version %q, want the session's report", p.Version)
	}
	if _, ok := s.Dropped[2]; !ok || len(s.Dropped) != 1 {
		t.Errorf("dropped %v, want setting 2 only", s.Dropped)
	}
	for _, i := range []int{0, 1} {
		ns, sp, err := s.Run(context.Background(), i, 4, 10*time.Second)
		if err != nil || len(ns) != 4 || len(sp) != 4 {
			t.Errorf("run %d: %v %v %v", i, ns, sp, err)
		}
	}
	if _, _, err := s.Run(context.Background(), 2, 1, 10*time.Second); err == nil {
		t.Error("a dropped setting ran")
	}
}

// Tune at 2 ranks in 8 s: a choice among the candidates, the defaults
// with their time, or (on a loaded machine) a reason.
func TestTuneOpenMPI(t *testing.T) {
	p := openMPI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	verdict := func(d, s []float64) pairs.Verdict {
		v := pairs.Verdict{MarginPct: 100 * (pairs.Median(d)/pairs.Median(s) - 1), Test: "test"}
		v.Faster = v.MarginPct > 3 && slices.Max(s) < slices.Min(d)
		return v
	}
	cs := Tune(ctx, Config{Programs: []*Program{p}, Ranks: []int{2}, CPUs: 2, Verdict: verdict})
	if len(cs) != 1 || cs[0].Impl != OpenMPI || cs[0].Ranks != 2 {
		t.Fatalf("%+v", cs)
	}
	c := cs[0]
	t.Log(c.Describe())
	switch {
	case !c.Measured:
		// A loaded machine may not give 4 pairs in 8 s: it must say so.
		if !strings.Contains(c.Why, "pairs") && !strings.Contains(c.Why, "budget") {
			t.Errorf("not measured without saying why in pairs or budget: %q", c.Why)
		}
	case !(c.DefaultNs > 0) || c.Runs < 2:
		t.Errorf("measured, yet defaults %g ns in %d runs", c.DefaultNs, c.Runs)
	case c.Setting != "" && (!slices.Contains(Candidates(OpenMPI, 2), c.Setting) || !(c.Ns > 0)):
		t.Errorf("chose %q at %g ns", c.Setting, c.Ns)
	}
}

// The real Open MPI: ompi_info lists coll/sm with its tree degree where
// the installation has it, and the launch-level settings are timed at 2
// ranks in 10 s: each measured or saying why, none chosen that was slower
// or failed.
func TestOpenMPILaunchLevel(t *testing.T) {
	p := openMPI(t)
	t.Logf("coll/sm %v, tree degree default %d, no binding policy set %v", p.CollSM, p.CollSMDegree, p.DefaultBinding)
	if p.CollSM && (p.CollSMDegree < 1 || p.CollSMDegree > 255) {
		t.Errorf("coll/sm's tree degree %d", p.CollSMDegree)
	}
	cands, notes := LaunchCandidates(p, []int{2}, 2, 1, 1)
	if len(cands) == 0 || len(cands) > maxLaunchCandidates {
		t.Fatalf("candidates %v (notes %v)", cands, notes)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	verdict := func(d, s []float64) pairs.Verdict {
		v := pairs.Verdict{MarginPct: 100 * (pairs.Median(d)/pairs.Median(s) - 1), Test: "test"}
		v.Faster = v.MarginPct > 3 && slices.Max(s) < slices.Min(d)
		return v
	}
	rs := TuneLaunch(ctx, Config{Verdict: verdict}, LaunchConfig{Program: p, Candidates: cands, Ranks: []int{2}})
	for _, r := range rs {
		c := r.Counts[0]
		t.Logf("%s: %s [%s]", r.Setting, r.Why, c.Why)
		switch {
		case c.Why == "":
			t.Errorf("%s: no word on 2 ranks", r.Setting)
		case r.Chosen && (c.Slower || c.Failed != "" || !c.Faster):
			t.Errorf("%s chosen: %+v", r.Setting, c)
		case c.Measured && !(c.BaseNs > 0 && c.Ns > 0):
			t.Errorf("%s measured without times: %+v", r.Setting, c)
		}
	}
}
