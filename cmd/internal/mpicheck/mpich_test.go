package mpicheck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/pairs"
)

// MPICH's candidates: every k value comes with the algorithm that reads
// it; only k values that make a structure of their own at n ranks are
// tried; every shared CVAR says what else it changes.
func TestMPICHCandidates(t *testing.T) {
	has := func(cs []string, s string) bool { return slices.Contains(cs, s) }
	c2 := Candidates(MPICH, 2)
	for _, want := range []string{
		"MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM=release_gather",
		"MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM=mpir,MPIR_CVAR_BARRIER_INTRA_ALGORITHM=dissemination",
		"MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM=mpir,MPIR_CVAR_BARRIER_INTRA_ALGORITHM=k_dissemination,MPIR_CVAR_BARRIER_DISSEM_KVAL=2",
		"MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM=mpir,MPIR_CVAR_BARRIER_INTRA_ALGORITHM=recexch,MPIR_CVAR_BARRIER_RECEXCH_KVAL=2",
	} {
		if !has(c2, want) {
			t.Errorf("2 ranks: %s missing from %q", want, c2)
		}
	}
	for _, c := range c2 {
		// At 2 ranks every k-ary tree is one edge; every k from 2 is one round.
		if strings.Contains(c, "INTRANODE_TREE_KVAL") || strings.Contains(c, "KVAL=3") || strings.Contains(c, "KVAL=8") {
			t.Errorf("2 ranks: %s makes the same barrier as another candidate", c)
		}
	}
	c8 := Candidates(MPICH, 8)
	for k, want := range map[int]bool{2: true, 3: true, 4: false, 8: true} {
		s := fmt.Sprintf("MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM=release_gather,MPIR_CVAR_REDUCE_INTRANODE_TREE_KVAL=%d", k)
		if has(c8, s) != want {
			t.Errorf("8 ranks, gather tree k=%d (default 4): tried %v, want %v", k, !want, want)
		}
	}
	// The release tree's default (64) is flat at 8 ranks, as k=8 is.
	if has(c8, "MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM=release_gather,MPIR_CVAR_BCAST_INTRANODE_TREE_KVAL=8") || !has(c8, "MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM=release_gather,MPIR_CVAR_BCAST_INTRANODE_TREE_KVAL=4") {
		t.Errorf("8 ranks, release tree: %q", c8)
	}
	for _, n := range []int{1, 2, 3, 4, 8, 64, 1024} {
		seen := map[string]bool{}
		for _, c := range Candidates(MPICH, n) {
			if seen[c] {
				t.Errorf("%d ranks: %s twice", n, c)
			}
			seen[c] = true
			env := SettingEnv(c)
			if len(env) > 4 {
				t.Errorf("%s: more than 4 assignments", c)
			}
			for i, kv := range env {
				name, value, ok := strings.Cut(kv, "=")
				if !ok || !strings.HasPrefix(name, "MPIR_CVAR_") || value == "" {
					t.Errorf("%s: %q is not a CVAR assignment", c, kv)
				}
				if strings.HasSuffix(name, "_KVAL") && i == 0 {
					t.Errorf("%s: a k value without its algorithm", c)
				}
				if strings.Contains(name, "INTRANODE_TREE_KVAL") && MPICHAlsoChanges(name) == "" {
					t.Errorf("%s is shared with other collectives, yet says nothing of them", name)
				}
			}
		}
	}
	if MPICHAlsoChanges("MPIR_CVAR_BARRIER_DISSEM_KVAL") != "" || MPICHAlsoChanges("MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM") != "" {
		t.Error("a barrier-only CVAR is called shared")
	}
	if SettingEnv("") != nil {
		t.Error("the defaults set something")
	}
}

// fakeMPICH is a launcher that refuses the algorithms MPICH 4.0 lacks as
// MPICH does (an abort in MPI_Init naming the CVAR) and times the
// release_gather barrier with a gather tree of k=2 at half the defaults'.
const fakeMPICH = `case "$MPIR_CVAR_BARRIER_INTRA_ALGORITHM" in k_dissemination|recexch)
  echo "Abort(68275727): Fatal error in internal_Init: Other MPI error, Invalid MPIR_CVAR_BARRIER_INTRA_ALGORITHM value ($MPIR_CVAR_BARRIER_INTRA_ALGORITHM)" >&2; exit 15;; esac
t=1000
if [ "$MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM" = release_gather ] && [ "$MPIR_CVAR_REDUCE_INTRANODE_TREE_KVAL" = 2 ]; then t=500; fi
for i in 0 1 2 3 4; do echo "chunk $i $t.0 10.0"; done
echo "ranks 4 barriers 100"; echo "library MPICH Version: fake"`

// Tune with MPICH's candidates: a k value reaches the launch with its
// algorithm (the pair is chosen where it is faster), and the settings
// MPICH refuses are reported as refused and never chosen.
func TestTuneMPICHKValues(t *testing.T) {
	p := fakeLauncher(t, MPICH, fakeMPICH)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	verdict := func(d, s []float64) pairs.Verdict {
		v := pairs.Verdict{MarginPct: 100 * (pairs.Median(d)/pairs.Median(s) - 1), Test: "test"}
		v.Faster = v.MarginPct > 3 && slices.Max(s) < slices.Min(d)
		return v
	}
	cs := Tune(ctx, Config{Programs: []*Program{p}, Ranks: []int{4}, CPUs: 4, Verdict: verdict})
	if len(cs) != 1 {
		t.Fatalf("%+v", cs)
	}
	c := cs[0]
	t.Log(c.Describe())
	if want := "MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM=release_gather,MPIR_CVAR_REDUCE_INTRANODE_TREE_KVAL=2"; c.Setting != want {
		t.Errorf("chose %q, want %q", c.Setting, want)
	}
	refused := 0
	for _, f := range c.Failed {
		if strings.Contains(f, "k_dissemination") || strings.Contains(f, "recexch") {
			if !strings.Contains(f, ErrRefused.Error()) || !strings.Contains(f, "Invalid MPIR_CVAR_BARRIER_INTRA_ALGORITHM") {
				t.Errorf("failure %q does not say MPICH refused it", f)
			}
			refused++
		}
	}
	if want := 6; refused != want { // k = 2, 3, 4 of each at 4 ranks
		t.Errorf("%d refusals reported (%q), want %d", refused, c.Failed, want)
	}
	if _, err := p.Run(context.Background(), Sample{Ranks: 4, Env: SettingEnv("MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM=mpir,MPIR_CVAR_BARRIER_INTRA_ALGORITHM=recexch,MPIR_CVAR_BARRIER_RECEXCH_KVAL=2")}); !errors.Is(err, ErrRefused) {
		t.Errorf("recexch on the fake 4.0: %v, want ErrRefused", err)
	}
}

// A CVAR name MPICH does not have is refused before the launch (MPICH
// would ignore it without a word): the loop's cvars mode is asked once,
// for every candidate's names; a launcher that does not answer lets the
// names through.
func TestMPICHUnknownCVAR(t *testing.T) {
	dir := t.TempDir()
	p := fakeLauncher(t, MPICH, `if [ "$4" = cvars ]; then echo probe >> `+dir+`/probes; shift 4; for n in "$@"; do
  case "$n" in MPIR_CVAR_BARRIER_DISSEM_KVAL) echo "cvar $n no";; *) echo "cvar $n yes";; esac; done; exit 0; fi
for i in 0 1 2; do echo "chunk $i 900.0 10.0"; done; echo "ranks 2 barriers 9"; echo "library fake MPICH"`)
	run := func(setting string) error {
		_, err := p.Run(context.Background(), Sample{Ranks: 2, Env: SettingEnv(setting)})
		return err
	}
	if err := run("MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM=mpir,MPIR_CVAR_BARRIER_INTRA_ALGORITHM=k_dissemination,MPIR_CVAR_BARRIER_DISSEM_KVAL=2"); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "MPIR_CVAR_BARRIER_DISSEM_KVAL") {
		t.Errorf("an unknown CVAR: %v, want ErrRefused naming it", err)
	}
	if err := run("MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM=release_gather,MPIR_CVAR_REDUCE_INTRANODE_TREE_KVAL=2"); err != nil {
		t.Errorf("known CVARs: %v", err)
	}
	if err := run(""); err != nil {
		t.Errorf("the defaults: %v", err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "probes"))
	if n := strings.Count(string(data), "probe"); n != 1 {
		t.Errorf("the cvars were asked %d times, want once", n)
	}
	// A launcher that does not answer the question: nothing refused.
	q := fakeLauncher(t, MPICH, `for i in 0 1 2; do echo "chunk $i 900.0 10.0"; done; echo "ranks 2 barriers 9"; echo "library fake MPICH"`)
	if _, err := q.Run(context.Background(), Sample{Ranks: 2, Env: []string{"MPIR_CVAR_BARRIER_DISSEM_KVAL=2"}}); err != nil {
		t.Errorf("no answer: %v, want the launch timed", err)
	}
}

// Above the CPUs MPICH's cost is timed first, each count in one bounded
// launch, and the search within the CPUs gets what they leave: with a
// budget the search alone could fill, every count above the CPUs still
// records its cost, and the count within them is still measured.
func TestTuneMPICHCostsFirst(t *testing.T) {
	p := fakeLauncher(t, MPICH, `n=$2
t=1000
sleep 0.05
if [ "$n" -gt 2 ]; then sleep 0.25; t=8000000; fi
for i in 0 1 2 3 4; do echo "chunk $i $t.0 10.0"; done
echo "ranks $n barriers 20"; echo "library MPICH Version: fake"`)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	verdict := func(d, s []float64) pairs.Verdict { return pairs.Verdict{Test: "test"} }
	cs := Tune(ctx, Config{Programs: []*Program{p}, Ranks: []int{2, 3, 4, 8}, CPUs: 2, Verdict: verdict})
	if len(cs) != 4 {
		t.Fatalf("%d choices, want 4: %+v", len(cs), cs)
	}
	for _, c := range cs {
		t.Log(c.Describe())
		switch {
		case c.Ranks > 2 && (!c.Measured || !strings.Contains(c.Why, "MPICH costs 8.0 ms a barrier")):
			t.Errorf("%d ranks: %q, want its cost recorded", c.Ranks, c.Describe())
		case c.Ranks == 2 && !c.Measured:
			t.Errorf("2 ranks not measured: %q", c.Why)
		}
	}
}
