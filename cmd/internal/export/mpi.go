package export

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/cmd/internal/mpicheck"
	"github.com/barriertune/barriertune/results"
)

// The openmpi and mpich exports set only what the check measured to help
// (results.File.MPI): per rank count, the setting of the implementation's
// own knobs found faster than its defaults by the check's margin and test
// and confirmed in fresh pairs, and nothing where the defaults stayed or
// the count was not measured. Each names the implementation and version
// it was measured with.
//
// openmpi writes an MCA parameter file (name = value lines, the format
// of mca-params.conf and of mpirun --tune). Open MPI's barrier algorithm
// is chosen per communicator size only through a dynamic rules file:
// where a count chose one, the parameter file sets
// coll_tuned_use_dynamic_rules = 1 and names the rules file
// (coll_tuned_dynamic_rules_filename, an absolute path), which the export
// writes beside it, in the classic format Open MPI 4.1 and 5.0 read
// (barrier is collective 6, one entry per rank count from which it
// applies, up to the next entry, one message-size rule each, from 0
// bytes) or in the JSON format of Open MPI 6.0 and later (mpijson.go;
// Options.RulesFormat chooses). Only the measured counts are set: every other count's entry is
// algorithm 0, which hands it back to Open MPI's own fixed decision (not
// the algorithm its table lists: that is not the same). Two-proc is only
// ever set for exactly 2 ranks.
//
// mpich writes shell lines: with --threads N (the rank count) plain
// NAME=VALUE assignments, to source (with export) or to pass through
// the launcher's environment options; without it, a case on
// $BARRIERTUNE_MPI_RANKS that sets each count's. A setting may be several
// assignments (a k value with its algorithm); a CVAR that other
// collectives read too (mpicheck.MPICHAlsoChanges) is written only with a
// comment saying what else it changes.

// ErrRulesPath says an openmpi export needs a rules file and was given no
// path for it (export -o FILE names it FILE.rules, or FILE.rules.json in
// the JSON format).
var ErrRulesPath = errors.New("the openmpi export needs a dynamic rules file beside the parameter file: write it with -o FILE (the rules go to FILE.rules, or FILE.rules.json in Open MPI 6's JSON format)")

// MPIRulesSuffix is appended to the openmpi export's path for its rules
// file.
const MPIRulesSuffix = ".rules"

// mpiImpl is the record of implementation name, or nil.
func mpiImpl(f *results.File, name string) *results.MPIImplementation {
	if f.MPI == nil {
		return nil
	}
	for i := range f.MPI.Implementations {
		if f.MPI.Implementations[i].Name == name {
			return &f.MPI.Implementations[i]
		}
	}
	return nil
}

// mpiHeader writes the comment lines every MPI export starts with: where
// the values come from, the implementation measured, and each count's
// outcome.
func mpiHeader(b *strings.Builder, f *results.File, im *results.MPIImplementation, name, what string, threads int) {
	fmt.Fprintf(b, "# %s %s %s\n", name, what, source(f))
	if im == nil {
		fmt.Fprintf(b, "# %s was not measured by this check (no MPI record, or before results v1.6): nothing is set\n", name)
		return
	}
	if im.NotMeasured != "" {
		fmt.Fprintf(b, "# %s was not measured: %s; nothing is set\n", name, oneLine(im.NotMeasured))
		return
	}
	fmt.Fprintf(b, "# measured with %s (%s)\n", oneLine(im.Version), oneLine(im.Launcher))
	var measured []int
	for _, c := range im.Counts {
		measured = append(measured, c.Ranks)
	}
	if threads > 0 && !slices.Contains(measured, threads) {
		// A setting holds at the rank count it was measured at only.
		fmt.Fprintf(b, "# %d ranks: not measured (measured: %s ranks); a setting is set only at the count it was measured at\n", threads, joinInts(measured))
	}
	for _, c := range im.Counts {
		if threads > 0 && c.Ranks != threads {
			continue
		}
		switch {
		case c.NotMeasured != "":
			fmt.Fprintf(b, "# %d ranks: not measured: %s\n", c.Ranks, oneLine(c.NotMeasured))
		case c.Best == "":
			fmt.Fprintf(b, "# %d ranks: the defaults stay (%s ns a barrier): %s\n", c.Ranks, formatNs(c.DefaultNs), oneLine(c.Why))
		default:
			fmt.Fprintf(b, "# %d ranks: %s%s: %s ns a barrier against the defaults' %s ns (defaults %+.1f%% slower; %s)\n", c.Ranks, c.Best, algName(c.Best), formatNs(c.BestNs), formatNs(c.DefaultNs), c.MarginPct, oneLine(c.Test))
		}
	}
}

// algName is " (linear)" for Open MPI's forced algorithm 1, else "".
func algName(setting string) string {
	v, ok := strings.CutPrefix(setting, mpicheck.ForcedAlgorithm+"=")
	if !ok {
		return ""
	}
	a, _ := strconv.Atoi(v)
	if n := mpicheck.OpenMPIAlgorithm(a); n != "" {
		return " (" + n + ")"
	}
	return ""
}

// openMPIAlgorithms are the chosen algorithms by rank count (threads > 0:
// that count only).
func openMPIAlgorithms(im *results.MPIImplementation, threads int) (map[int]int, error) {
	out := map[int]int{}
	if im == nil || im.NotMeasured != "" {
		return out, nil
	}
	for _, c := range im.Counts {
		if c.Best == "" || (threads > 0 && c.Ranks != threads) {
			continue
		}
		v, ok := strings.CutPrefix(c.Best, mpicheck.ForcedAlgorithm+"=")
		a, err := strconv.Atoi(v)
		if !ok || err != nil || mpicheck.OpenMPIAlgorithm(a) == "" {
			return nil, fmt.Errorf("openmpi, %d ranks: setting %q is not one of %s=1..6, the only settings this export writes", c.Ranks, c.Best, mpicheck.ForcedAlgorithm)
		}
		if a == 5 && c.Ranks != 2 {
			return nil, fmt.Errorf("openmpi, %d ranks: two-proc (algorithm 5) runs only on 2 ranks", c.Ranks)
		}
		out[c.Ranks] = a
	}
	return out, nil
}

// openMPIExport writes the parameter file to b and, where a count chose
// an algorithm, the rules file to rules (named rulesPath in b).
func openMPIExport(b *strings.Builder, f *results.File, opts Options) error {
	im := mpiImpl(f, mpicheck.OpenMPI)
	if err := checkRulesFormat(opts.RulesFormat); err != nil {
		return err
	}
	mpiHeader(b, f, im, "Open MPI", "MCA parameters", opts.Threads)
	algs, err := openMPIAlgorithms(im, opts.Threads)
	if err != nil {
		return err
	}
	launch, err := openMPILaunch(im)
	if err != nil {
		return err
	}
	b.WriteString("# install: ~/.openmpi/mca-params.conf (one user), mpirun --tune FILE (one job), or the installation's etc/openmpi-mca-params.conf (the whole node); undo: remove these lines\n")
	if len(algs) == 0 {
		if launch == "" {
			n := opts.Threads
			if im == nil || im.NotMeasured != "" {
				n = 0 // the header said it was not measured
			}
			noneChosen(b, n, "Open MPI")
			return nil
		}
		writeLaunch(b, im, launch)
		return nil
	}
	formats, named, err := rulesFormats(opts.RulesFormat, openMPIMajor(im.Version), im.Version)
	if err != nil {
		return err
	}
	if (formats.classic && (opts.RulesPath == "" || opts.Rules == nil)) || (formats.json && (opts.JSONRulesPath == "" || opts.JSONRules == nil)) {
		return ErrRulesPath
	}
	for _, p := range []string{opts.RulesPath, opts.JSONRulesPath} {
		if p != "" && (strings.ContainsAny(p, "\n\r#") || !strings.HasPrefix(p, "/")) {
			return fmt.Errorf("rules file path %q: want an absolute path without a newline or '#'", p)
		}
	}
	es := openMPIRanges(algs)
	path := opts.RulesPath
	if named == "json" {
		path = opts.JSONRulesPath
	}
	b.WriteString("# the barrier algorithm per communicator size, from the rules file (Open MPI's own fixed decision for every other size)\n")
	if named == "json" {
		b.WriteString("# the rules file is in the JSON format (rule_file_version 3) that Open MPI 6.0 and later read; its rules hold for single-node communicators only\n")
	} else {
		b.WriteString("# the rules file is in the classic format that Open MPI 4.1 and 5.0 read\n")
	}
	if formats.classic && formats.json {
		fmt.Fprintf(b, "# also written: %s, the same rules in the JSON format of Open MPI 6.0 and later: name it here after moving to 6.0\n", opts.JSONRulesPath)
	}
	b.WriteString("coll_tuned_use_dynamic_rules = 1\n")
	fmt.Fprintf(b, "coll_tuned_dynamic_rules_filename = %s\n", path)
	if formats.json {
		data, err := openMPIJSONRules(es)
		if err != nil {
			return err
		}
		if _, err := opts.JSONRules.Write(data); err != nil {
			return err
		}
	}
	if !formats.classic {
		return nil
	}
	var r strings.Builder
	fmt.Fprintf(&r, "# Open MPI coll/tuned dynamic rules (classic format, read by Open MPI 4.1 and 5.0), written by barriertune\n# %s\n# measured with %s\n", source(f), oneLine(im.Version))
	r.WriteString("# each communicator-size entry applies from its size up to the next entry's; algorithm 0: Open MPI's own fixed decision\n")
	r.WriteString("1 # collectives with rules\n6 # barrier\n")
	fmt.Fprintf(&r, "%d # communicator-size entries\n", len(es))
	for _, e := range es {
		what := "Open MPI's own decision"
		if e.alg > 0 {
			what = mpicheck.OpenMPIAlgorithm(e.alg) + ", measured faster at exactly this many ranks"
		}
		fmt.Fprintf(&r, "%d # from %d ranks: %s\n1 # message-size rules\n0 %d 0 0 # from 0 bytes: algorithm %d, fan-in/out 0, segment size 0\n", e.from, e.from, what, e.alg, e.alg)
	}
	writeLaunch(b, im, launch)
	_, err = io.WriteString(opts.Rules, r.String())
	return err
}

// openMPILaunch is the launch-level setting chosen ("" when none), once
// checked: a launch-level setting applies to every launch, whatever its
// rank count, so it is written only when the file records it faster at
// some count and measured, and not slower, at every count it was timed
// at.
func openMPILaunch(im *results.MPIImplementation) (string, error) {
	if im == nil || im.NotMeasured != "" || im.LaunchChosen == "" {
		return "", nil
	}
	faster := false
	for _, c := range im.Launch {
		if c.Setting != im.LaunchChosen {
			continue
		}
		if c.Slower || len(c.Failed) > 0 || c.NotMeasured != "" {
			return "", fmt.Errorf("openmpi: the launch-level setting %q was slower, failed or not measured at %d ranks: it applies to every count, so it is not written", im.LaunchChosen, c.Ranks)
		}
		faster = faster || c.Best == c.Setting
	}
	if !faster {
		return "", fmt.Errorf("openmpi: the launch-level setting %q was not measured faster at any count", im.LaunchChosen)
	}
	for _, kv := range strings.Split(im.LaunchChosen, ",") {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || value == "" || strings.ContainsAny(kv, " \t\r\n#") {
			return "", fmt.Errorf("openmpi: launch-level setting %q is not name=value pairs joined by commas", im.LaunchChosen)
		}
	}
	return im.LaunchChosen, nil
}

// writeLaunch writes the launch-level lines of setting (none when ""),
// with the counts it was measured at, and a comment for each launch-level
// setting not written.
func writeLaunch(b *strings.Builder, im *results.MPIImplementation, setting string) {
	if im == nil || len(im.Launch) == 0 {
		return
	}
	var order []string
	for _, c := range im.Launch {
		if !slices.Contains(order, c.Setting) {
			order = append(order, c.Setting)
		}
	}
	for _, s := range order {
		if s == setting {
			continue
		}
		fmt.Fprintf(b, "# launch-level %s: not set: %s\n", s, oneLine(launchWhy(im, s)))
	}
	if setting == "" {
		return
	}
	var at []string
	for _, c := range im.Launch {
		if c.Setting != setting {
			continue
		}
		what := "not slower"
		switch {
		case c.Best != "":
			what = "faster"
		case c.DefaultNs == 0:
			at = append(at, fmt.Sprintf("%d ranks (Open MPI's own setting there, not timed)", c.Ranks))
			continue
		}
		at = append(at, fmt.Sprintf("%d ranks %.2fx (%s)", c.Ranks, c.Ratio, what))
	}
	fmt.Fprintf(b, "# launch-level setting: Open MPI reads it when a job starts, so it applies to EVERY job, whatever its rank count; measured against each count's export without it at %s\n", strings.Join(at, ", "))
	if w := launchWhy(im, setting); w != "" {
		fmt.Fprintf(b, "# %s\n", oneLine(w))
	}
	for _, kv := range strings.Split(setting, ",") {
		name, value, _ := strings.Cut(kv, "=")
		fmt.Fprintf(b, "%s = %s\n", name, value)
	}
}

// launchWhy is the launch_why line of setting, without its name.
func launchWhy(im *results.MPIImplementation, setting string) string {
	for _, w := range im.LaunchWhy {
		if rest, ok := strings.CutPrefix(w, setting+": "); ok {
			return rest
		}
	}
	return ""
}

// MPIChecks are the counts an exported file of impl (openmpi or mpich)
// changes (threads > 0: that count only), as mpicheck.Verify times them:
// each count that chose a setting, with the chosen time over the
// defaults'; and, where Open MPI chose a launch-level setting, every count
// it was measured at (it applies to all), the ratio times its own there.
// Faster marks the counts where something was chosen as faster.
func MPIChecks(f *results.File, impl string, threads int) []mpicheck.Check {
	im := mpiImpl(f, impl)
	if im == nil || im.NotMeasured != "" {
		return nil
	}
	byRanks := map[int]*mpicheck.Check{}
	var order []int
	add := func(n int) *mpicheck.Check {
		if byRanks[n] == nil {
			byRanks[n] = &mpicheck.Check{Ranks: n, Want: 1}
			order = append(order, n)
		}
		return byRanks[n]
	}
	for _, c := range im.Counts {
		if c.Best != "" && c.DefaultNs > 0 && c.BestNs > 0 && (threads == 0 || c.Ranks == threads) {
			k := add(c.Ranks)
			k.Want, k.Faster = c.BestNs/c.DefaultNs, true
		}
	}
	if impl == mpicheck.OpenMPI {
		if launch, err := openMPILaunch(im); err == nil && launch != "" {
			for _, c := range im.Launch {
				if c.Setting == launch && c.Ratio > 0 && (threads == 0 || c.Ranks == threads) {
					k := add(c.Ranks)
					k.Want *= c.Ratio
					k.Faster = k.Faster || c.Best != ""
				}
			}
		}
	}
	slices.Sort(order)
	out := make([]mpicheck.Check, 0, len(order))
	for _, n := range order {
		out = append(out, *byRanks[n])
	}
	return out
}

// mpichExport writes the CVAR assignments to b.
func mpichExport(b *strings.Builder, f *results.File, threads int) {
	im := mpiImpl(f, mpicheck.MPICH)
	mpiHeader(b, f, im, "MPICH", "CVARs", threads)
	if im == nil || im.NotMeasured != "" {
		return
	}
	var chosen []results.MPICount
	for _, c := range im.Counts {
		if c.Best != "" && (threads == 0 || c.Ranks == threads) {
			chosen = append(chosen, c)
		}
	}
	if len(chosen) == 0 {
		noneChosen(b, threads, "MPICH")
		return
	}
	for _, line := range mpichShared(chosen) {
		b.WriteString(line)
	}
	if threads > 0 {
		b.WriteString("# source with `set -a; . FILE; set +a`, or pass to the launcher (mpirun.mpich -envlist NAME or -genv NAME VALUE); undo: unset the names\n")
		for _, c := range chosen {
			for _, kv := range mpicheck.SettingEnv(c.Best) {
				name, value, _ := strings.Cut(kv, "=")
				fmt.Fprintf(b, "%s=%s\n", name, shellQuote(value))
			}
		}
		return
	}
	b.WriteString("# source after setting BARRIERTUNE_MPI_RANKS to the job's rank count (or export with --threads N for plain NAME=VALUE lines); undo: unset the names\n")
	b.WriteString("case \"${BARRIERTUNE_MPI_RANKS:-}\" in\n")
	for _, c := range chosen {
		var kvs []string
		for _, kv := range mpicheck.SettingEnv(c.Best) {
			name, value, _ := strings.Cut(kv, "=")
			kvs = append(kvs, name+"="+shellQuote(value))
		}
		fmt.Fprintf(b, "%d) export %s ;;\n", c.Ranks, strings.Join(kvs, " "))
	}
	b.WriteString("esac\n")
}

// noneChosen writes the line saying that nothing is set: no count chose
// a setting, or (threads > 0) that count chose none or was not measured.
func noneChosen(b *strings.Builder, threads int, impl string) {
	if threads > 0 {
		fmt.Fprintf(b, "# %d ranks: no setting chosen: nothing is set, %s's defaults stay\n", threads, impl)
		return
	}
	fmt.Fprintf(b, "# no count chose a setting: nothing is set, %s's defaults stay\n", impl)
}

// mpichShared are comment lines saying what else each shared CVAR the
// chosen settings write changes besides MPI_Barrier (a CVAR shared with
// other collectives is set only with that said).
func mpichShared(chosen []results.MPICount) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range chosen {
		for _, kv := range mpicheck.SettingEnv(c.Best) {
			name, _, _ := strings.Cut(kv, "=")
			if also := mpicheck.MPICHAlsoChanges(name); also != "" && !seen[name] {
				seen[name] = true
				out = append(out, fmt.Sprintf("# %s is not MPI_Barrier's alone: it sets %s\n", name, also))
			}
		}
	}
	return out
}

// openMPIMajor is the major version in Open MPI's report ("Open MPI
// v4.1.4, ..."), 0 when it does not say.
func openMPIMajor(version string) int {
	_, rest, ok := strings.Cut(version, "Open MPI v")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(strings.SplitN(rest, ".", 2)[0])
	return n
}
