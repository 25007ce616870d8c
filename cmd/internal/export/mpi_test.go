package export

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/mpicheck"
	"github.com/barriertune/barriertune/results"
)

// mpiFixture is the fixture with an MPI record: Open MPI chose two-proc
// at 2 ranks and linear at 8, kept its defaults at 4; MPICH chose smp at
// 2 ranks and only costed 4.
func mpiFixture(t *testing.T) *results.File {
	f := fixture(t)
	f.MPI = &results.MPI{Implementations: []results.MPIImplementation{
		{Name: "openmpi", Compiler: "mpicc.openmpi", Launcher: "/usr/bin/mpirun.openmpi", Version: "Open MPI v4.1.4", Counts: []results.MPICount{
			{Ranks: 2, DefaultNs: 500, Best: "coll_tuned_barrier_algorithm=5", BestNs: 400, MarginPct: 25, Test: "p=0.01"},
			{Ranks: 4, DefaultNs: 7000, Why: "no setting was faster"},
			{Ranks: 8, DefaultNs: 29000, Best: "coll_tuned_barrier_algorithm=1", BestNs: 17000, MarginPct: 70, Test: "p=0.001"},
		}},
		{Name: "mpich", Compiler: "mpicc.mpich", Launcher: "/usr/bin/mpirun.mpich", Version: "MPICH Version: 4.0.2", Counts: []results.MPICount{
			{Ranks: 2, DefaultNs: 900, Best: "MPIR_CVAR_BARRIER_INTRA_ALGORITHM=smp", BestNs: 700, MarginPct: 28, Test: "p=0.01"},
			{Ranks: 4, DefaultNs: 8.2e6, Why: "MPICH costs 8.2 ms a barrier at 4 ranks on 2 CPUs"},
		}},
	}}
	return f
}

// The openmpi export: name = value lines naming a rules file that exists,
// in the classic layout, with only the measured counts set.
func TestOpenMPIExport(t *testing.T) {
	f := mpiFixture(t)
	var b, rules bytes.Buffer
	if err := Write(&b, f, "openmpi", Options{}); !errors.Is(err, ErrRulesPath) {
		t.Fatalf("no rules path: %v, want ErrRulesPath", err)
	}
	path := filepath.Join(t.TempDir(), "tuned.conf")
	if err := Write(&b, f, "openmpi", Options{RulesPath: path + MPIRulesSuffix, Rules: &rules}); err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`^[a-z_]+ = \S+$`)
	var set []string
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		if !param.MatchString(l) {
			t.Errorf("line %q is neither a comment nor name = value", l)
		}
		set = append(set, l)
	}
	want := []string{"coll_tuned_use_dynamic_rules = 1", "coll_tuned_dynamic_rules_filename = " + path + MPIRulesSuffix}
	if strings.Join(set, "\n") != strings.Join(want, "\n") {
		t.Errorf("set %q, want %q", set, want)
	}
	if !strings.Contains(b.String(), "Open MPI v4.1.4") || !strings.Contains(b.String(), "4 ranks: the defaults stay") {
		t.Errorf("the export does not name the version or the defaults kept:\n%s", b.String())
	}
	// The numbers Open MPI reads, comments dropped: 1 collective, id 6, 5
	// entries (1: own, 2: two-proc, 3: own, 8: linear, 9: own).
	var nums []string
	for _, l := range strings.Split(rules.String(), "\n") {
		l, _, _ = strings.Cut(l, "#")
		nums = append(nums, strings.Fields(l)...)
	}
	if got, want := strings.Join(nums, " "), "1 6 5 1 1 0 0 0 0 2 1 0 5 0 0 3 1 0 0 0 0 8 1 0 1 0 0 9 1 0 0 0 0"; got != want {
		t.Errorf("rules %q, want %q", got, want)
	}
	// Open MPI 6 reads the classic sizes otherwise: a classic file is
	// refused, and the default writes the JSON file (which needs a path).
	f.MPI.Implementations[0].Version = "Open MPI v6.0.0, package: Open MPI"
	if err := Write(&b, f, "openmpi", Options{RulesPath: path, Rules: &rules, RulesFormat: "classic"}); err == nil || !strings.Contains(err.Error(), "Open MPI 6") {
		t.Errorf("Open MPI 6, classic: %v", err)
	}
	if err := Write(&b, f, "openmpi", Options{RulesPath: path, Rules: &rules}); !errors.Is(err, ErrRulesPath) {
		t.Errorf("Open MPI 6 without a JSON rules path: %v, want ErrRulesPath", err)
	}
	f.MPI.Implementations[0].Version = "Open MPI v5.0.3"
	// Two-proc anywhere but 2 ranks is refused.
	f.MPI.Implementations[0].Counts[2].Best = "coll_tuned_barrier_algorithm=5"
	if err := Write(&b, f, "openmpi", Options{RulesPath: path, Rules: &rules}); err == nil || !strings.Contains(err.Error(), "two-proc") {
		t.Errorf("two-proc at 8 ranks: %v", err)
	}
}

// The mpich export: a case on the rank count, or plain lines for one.
func TestMPICHExport(t *testing.T) {
	f := mpiFixture(t)
	var b bytes.Buffer
	if err := Write(&b, f, "mpich", Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "2) export MPIR_CVAR_BARRIER_INTRA_ALGORITHM=smp ;;") || !strings.Contains(b.String(), "MPICH costs 8.2 ms") || strings.Contains(b.String(), "4) export") {
		t.Errorf("mpich export:\n%s", b.String())
	}
	b.Reset()
	if err := Write(&b, f, "mpich", Options{Threads: 2}); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^MPIR_CVAR_BARRIER_INTRA_ALGORITHM=smp$`).MatchString(b.String()) {
		t.Errorf("mpich --threads 2:\n%s", b.String())
	}
	if strings.Contains(b.String(), "not MPI_Barrier's alone") {
		t.Errorf("a barrier-only CVAR is called shared:\n%s", b.String())
	}
	// A k value with its algorithm: both assignments, and a shared CVAR
	// only with a line saying what else it changes.
	f.MPI.Implementations[1].Counts[0].Best = "MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM=release_gather,MPIR_CVAR_REDUCE_INTRANODE_TREE_KVAL=2"
	b.Reset()
	if err := Write(&b, f, "mpich", Options{Threads: 2}); err != nil {
		t.Fatal(err)
	}
	var set []string
	for _, l := range strings.Split(b.String(), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			set = append(set, l)
		}
	}
	if want := "MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM=release_gather MPIR_CVAR_REDUCE_INTRANODE_TREE_KVAL=2"; strings.Join(set, " ") != want {
		t.Errorf("set %q, want %q", set, want)
	}
	if !regexp.MustCompile(`(?m)^# MPIR_CVAR_REDUCE_INTRANODE_TREE_KVAL is not MPI_Barrier's alone: .*MPI_Reduce and MPI_Allreduce`).MatchString(b.String()) {
		t.Errorf("the shared CVAR is set without saying what else it changes:\n%s", b.String())
	}
	b.Reset()
	if err := Write(&b, f, "mpich", Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "2) export MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM=release_gather MPIR_CVAR_REDUCE_INTRANODE_TREE_KVAL=2 ;;") || !strings.Contains(b.String(), "is not MPI_Barrier's alone") {
		t.Errorf("mpich case with a pair:\n%s", b.String())
	}
}

// openMPILoop builds the MPI barrier loop with the real Open MPI into a
// directory of the test's, skipping the test with -short or without Open
// MPI.
func openMPILoop(t *testing.T) (*mpicheck.Program, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: launches Open MPI")
	}
	im := mpicheck.Implementations()[0]
	if !im.Found() {
		t.Skipf("Open MPI not installed (%s, %s)", im.Compiler, im.Launcher)
	}
	dir := t.TempDir()
	p, err := mpicheck.Build(context.Background(), im, dir)
	if err != nil {
		t.Fatal(err)
	}
	return p, dir
}

// TestOpenMPIReadsTheRules: the real Open MPI reads the export through
// mpirun --tune: the file runs at 2 ranks (two-proc), and the same file
// with its 2-rank entry moved to 3 ranks makes a 3-rank launch fail
// (two-proc cannot run on 3): Open MPI parsed the layout as written, not
// ignored it (which it does in silence with a file it cannot read).
func TestOpenMPIReadsTheRules(t *testing.T) {
	p, dir := openMPILoop(t)
	f := mpiFixture(t)
	path := filepath.Join(dir, "tuned.conf")
	var b, rules bytes.Buffer
	if err := Write(&b, f, "openmpi", Options{RulesPath: path + MPIRulesSuffix, Rules: &rules}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+MPIRulesSuffix, rules.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(n int) error {
		_, err := p.Run(context.Background(), mpicheck.Sample{Ranks: n, Seconds: 0.01, Args: []string{"--tune", path}, Limit: 60 * time.Second})
		return err
	}
	if err := run(2); err != nil {
		t.Fatalf("the export at 2 ranks: %v", err)
	}
	moved := regexp.MustCompile(`(?m)^2 # from 2 ranks`).ReplaceAllString(rules.String(), "3 # from 3 ranks")
	moved = regexp.MustCompile(`(?m)^3 # from 3 ranks: Open MPI's own`).ReplaceAllString(moved, "4 # from 4 ranks: Open MPI's own")
	if moved == rules.String() {
		t.Fatal("the 2-rank entry was not found to move")
	}
	if err := os.WriteFile(path+MPIRulesSuffix, []byte(moved), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(3); !errors.Is(err, mpicheck.ErrCrashed) {
		t.Errorf("two-proc moved to 3 ranks: %v, want a failed launch (Open MPI did not read the file?)", err)
	}
}

// withLaunch adds launch-level rows to the fixture's Open MPI record:
// binding none faster at 2 ranks and even at 4 and 8; coll/sm faster at 2
// ranks and slower at 8.
func withLaunch(f *results.File, chosen string) {
	im := &f.MPI.Implementations[0]
	im.Launch = []results.MPICount{
		{Ranks: 2, Setting: "hwloc_base_binding_policy=none", Baseline: "the defaults", DefaultNs: 500, BestNs: 450, Ratio: 0.9, Best: "hwloc_base_binding_policy=none"},
		{Ranks: 4, Setting: "hwloc_base_binding_policy=none", Baseline: "the defaults", DefaultNs: 7000, BestNs: 7000, Ratio: 1.0},
		{Ranks: 8, Setting: "hwloc_base_binding_policy=none", Baseline: "coll_tuned_barrier_algorithm=1", DefaultNs: 17000, BestNs: 16900, Ratio: 0.99},
		{Ranks: 2, Setting: "coll_sm_priority=100", Baseline: "the defaults", DefaultNs: 500, BestNs: 400, Ratio: 0.8, Best: "coll_sm_priority=100"},
		{Ranks: 4, Setting: "coll_sm_priority=100", Baseline: "the defaults", DefaultNs: 7000, BestNs: 7000, Ratio: 1.0},
		{Ranks: 8, Setting: "coll_sm_priority=100", Baseline: "coll_tuned_barrier_algorithm=1", DefaultNs: 17000, BestNs: 85000, Ratio: 5, Slower: true},
	}
	im.LaunchChosen = chosen
	im.LaunchWhy = []string{"hwloc_base_binding_policy=none: chosen: faster at 2 ranks; what it does: binding", "coll_sm_priority=100: slower at 8 ranks (5.00x the baseline); what it does: coll/sm"}
}

// The openmpi export writes the chosen launch-level setting's lines with
// the counts it was measured at, and a comment for the one faster at 2
// ranks but slower at 8 (never set: the file applies to every count);
// export --verify's counts are every count the launch line changes.
func TestOpenMPILaunchExport(t *testing.T) {
	f := mpiFixture(t)
	withLaunch(f, "hwloc_base_binding_policy=none")
	var b, rules bytes.Buffer
	path := filepath.Join(t.TempDir(), "tuned.conf")
	if err := Write(&b, f, "openmpi", Options{RulesPath: path + MPIRulesSuffix, Rules: &rules}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !regexp.MustCompile(`(?m)^hwloc_base_binding_policy = none$`).MatchString(out) || strings.Contains(out, "\ncoll_sm_priority") {
		t.Errorf("launch lines:\n%s", out)
	}
	if !strings.Contains(out, "2 ranks 0.90x (faster), 4 ranks 1.00x (not slower), 8 ranks 0.99x (not slower)") || !strings.Contains(out, "EVERY job") || !regexp.MustCompile(`(?m)^# launch-level coll_sm_priority=100: not set: slower at 8 ranks`).MatchString(out) {
		t.Errorf("the export does not say where the launch line was measured, or why coll/sm is not set:\n%s", out)
	}
	checks := MPIChecks(f, "openmpi", 0)
	if len(checks) != 3 || checks[0].Ranks != 2 || !checks[0].Faster || math.Abs(checks[0].Want-0.72) > 1e-9 || checks[1].Faster || math.Abs(checks[2].Want-17000.0/29000*0.99) > 1e-9 {
		t.Errorf("MPIChecks: %+v", checks)
	}
	// Only a launch-level setting: no rules file, the lines alone.
	for i := range f.MPI.Implementations[0].Counts {
		f.MPI.Implementations[0].Counts[i].Best = ""
	}
	b.Reset()
	if err := Write(&b, f, "openmpi", Options{}); err != nil || !strings.Contains(b.String(), "\nhwloc_base_binding_policy = none\n") || strings.Contains(b.String(), "dynamic_rules") {
		t.Errorf("launch line alone: %v\n%s", err, b.String())
	}
	// A file that names the one slower at 8 ranks as chosen (edited by
	// hand) is refused, and so is one faster nowhere.
	withLaunch(f, "coll_sm_priority=100")
	if err := Write(&b, f, "openmpi", Options{RulesPath: path, Rules: &rules}); err == nil || !strings.Contains(err.Error(), "slower") {
		t.Errorf("a chosen setting slower at 8 ranks: %v", err)
	}
	withLaunch(f, "")
	f.MPI.Implementations[0].Launch[0].Best = ""
	f.MPI.Implementations[0].LaunchChosen = "hwloc_base_binding_policy=none"
	if err := Write(&b, f, "openmpi", Options{}); err == nil || !strings.Contains(err.Error(), "not measured faster") {
		t.Errorf("a chosen setting faster nowhere: %v", err)
	}
	// None chosen: nothing set, each says why.
	withLaunch(f, "")
	b.Reset()
	if err := Write(&b, f, "openmpi", Options{}); err != nil || !strings.Contains(b.String(), "nothing is set") {
		t.Errorf("none chosen: %v\n%s", err, b.String())
	}
}

// TestOpenMPIReadsTheLaunchLines: the real Open MPI reads the export's
// launch-level line through mpirun --tune: the file with binding none runs
// at 2 ranks, and the same file with a value Open MPI does not know makes
// the launch fail (mpirun read the line, as a user's job would).
func TestOpenMPIReadsTheLaunchLines(t *testing.T) {
	p, dir := openMPILoop(t)
	f := mpiFixture(t)
	for i := range f.MPI.Implementations[0].Counts {
		f.MPI.Implementations[0].Counts[i].Best = ""
	}
	withLaunch(f, "hwloc_base_binding_policy=none")
	path := filepath.Join(dir, "tuned.conf")
	var b bytes.Buffer
	if err := Write(&b, f, "openmpi", Options{}); err != nil {
		t.Fatal(err)
	}
	run := func(data string) error {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := p.Run(context.Background(), mpicheck.Sample{Ranks: 2, Seconds: 0.01, Args: []string{"--tune", path}, Limit: 60 * time.Second})
		return err
	}
	if err := run(b.String()); err != nil {
		t.Fatalf("the export with its launch line at 2 ranks: %v", err)
	}
	bad := strings.Replace(b.String(), "hwloc_base_binding_policy = none", "hwloc_base_binding_policy = barriertune-bogus", 1)
	if bad == b.String() {
		t.Fatal("no launch line to spoil")
	}
	if err := run(bad); err == nil {
		t.Error("a binding policy Open MPI does not know ran: mpirun did not read the launch line")
	}
}

// TestMPIExportThreadsNotMeasured: both MPI exports, asked for a rank
// count the check did not measure, say that count was not measured and
// which were, set nothing, and never claim that no count chose a setting
// when one did; a measured count that kept its defaults says so.
func TestMPIExportThreadsNotMeasured(t *testing.T) {
	f := mpiFixture(t)
	for _, format := range []string{"openmpi", "mpich"} {
		for threads, want := range map[int]string{
			3: "# 3 ranks: not measured (measured: 2,4",
			4: "# 4 ranks: no setting chosen: nothing is set",
		} {
			var b bytes.Buffer
			if err := Write(&b, f, format, Options{Threads: threads}); err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(b.String(), "\n") {
				if l != "" && !strings.HasPrefix(l, "#") {
					t.Errorf("%s --threads %d sets %q", format, threads, l)
				}
			}
			if !strings.Contains(b.String(), want) || strings.Contains(b.String(), "no count chose a setting") {
				t.Errorf("%s --threads %d: want %q, and no claim that no count chose:\n%s", format, threads, want, b.String())
			}
		}
	}
}
