package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cmd/internal/check"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/internal/text"
	"github.com/barriertune/barriertune/results"
)

// showOptions are the flags and argument of `barriertune show`.
type showOptions struct {
	global  *globalOptions
	path    string // the results file; empty: the lookup order
	json    bool
	threads int
	// threadsSet: --threads was given (0 or less is then a usage error,
	// never "the whole table").
	threadsSet bool
	allowed    string
}

// maxShowLine caps show's lines; longer values are elided in the middle.
const maxShowLine = 159

func newShowCmd(g *globalOptions) *cobra.Command {
	opts := &showOptions{global: g}
	cmd := &cobra.Command{
		Use:   "show [FILE] [--threads N [--allowed CPULIST]] [--json]",
		Short: "Show the winners of a results file, or the one choice for N threads",
		Long: `Show the table of winners of a results file: for each thread count the best
algorithm, its placement, nanoseconds per episode, the ratio to the
core-to-core floor, the runner-up and its margin, and the robust choice for
callers that cannot pin. --json prints the validated file. The table
shows a control character in the file's strings (an escape sequence,
a carriage return) as ?; --json keeps it, escaped.

Without FILE, the first file of the lookup order that applies to this
machine is shown: $BARRIERTUNE_RESULTS, the per-user file
($XDG_CONFIG_HOME/barriertune/results.json), the system-wide
/etc/barriertune/results.json, then the site's barriertune/results.json in
each directory of $XDG_CONFIG_DIRS, each followed by the other *.json
files of its directory (several machines' files: the one that matches this
machine is used); the output says which file was used and why the others
were not, and stderr says once when $BARRIERTUNE_RESULTS is set but cannot
be used, or when a per-user file hides the system-wide one. FILE ending in
a slash is such a directory: this machine's file in it is shown.

--threads N prints the one choice barriers.Auto and export make for N
threads inside the allowed CPUs (--allowed CPULIST; default: this process's
allowed CPUs when the file is this machine's, else the whole machine; of
this process's own, barriers.Auto selects inside as many as its cgroup's
CPU quota and GOMAXPROCS let it run at once, and so does --threads, saying
so; export does not, since C and OpenMP programs are not bound by
GOMAXPROCS and the C header reads the quota itself): the
algorithm barriers.Auto builds and its policy (auto, unless the program
or BARRIERTUNE_WAIT_POLICY asks for another), the CPU of each rank, then, apart, what was measured:
the policy the check measured with and the ns per episode, or that this
count was not measured on this placement class, and the rule that chose
it. With --json it is one JSON object: median_ns is null and measured
false when nothing was measured; policy is the measured policy,
auto_policy the one barriers.Auto uses and wait_policy_from where that
comes from (default, or BARRIERTUNE_WAIT_POLICY=active|passive|auto).

In the table, policy is the policy the check measured with (spin when
every thread had a CPU of its own); barriers.Auto uses the auto policy,
which spins as fast while every participant has a CPU. A name longer than
32 characters (a hybrid's composition) is a key such as hybrid#1, spelled
out under the table; where the table names cond or channel, a line says
whether they ran on pinned, locked OS threads or as goroutines.`,
		Example: `  barriertune show
  barriertune show --threads 8 --allowed 0-3,8-11
  barriertune show /etc/barriertune/results.json --threads 4 --json`,
		Args: oneResultsFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.path = args[0]
			}
			opts.threadsSet = cmd.Flags().Changed("threads")
			return runShow(cmd.Context(), opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the results file (with --threads: the choice) as JSON")
	f.IntVarP(&opts.threads, "threads", "t", 0, "print the one choice for this many threads (1.."+fmt.Sprint(barriers.MaxParticipants)+")")
	f.StringVar(&opts.allowed, "allowed", "", "choose inside these CPUs (`CPULIST`, e.g. 0-3,8; default: this process's allowed CPUs)")
	return cmd
}

// runShow prints the winners of a results file, or one choice.
func runShow(_ context.Context, opts *showOptions, w, stderr io.Writer) error {
	if (opts.threadsSet || opts.threads != 0) && (opts.threads < 1 || opts.threads > barriers.MaxParticipants) {
		return usageErrorf("--threads %d: want 1..%d threads (leave it out for the table of every measured count)", opts.threads, barriers.MaxParticipants)
	}
	if opts.threads == 0 && opts.allowed != "" && opts.json {
		return usageErrorf("--allowed with --json needs --threads N: --json without --threads prints the whole file, which --allowed does not change")
	}
	rs, err := openAndWarn(opts.path, opts.allowed, opts.global, stderr, verboseName(opts.json, "show"), opts.threads == 0)
	if err != nil {
		return err
	}
	if !opts.json {
		// The file's strings reach a terminal: none may move its cursor,
		// clear it or retitle it.
		w = plainText{w}
	}
	if opts.threads > 0 {
		// Where barriers.Auto would select: within what the process
		// runs at once.
		sel, auto, err := rs.autoSelect(opts.threads)
		if err != nil {
			return err
		}
		rs = auto
		if opts.json {
			return writeJSON(w, choiceJSON(rs, sel))
		}
		return printChoice(w, rs, sel)
	}
	if opts.json {
		return writeJSON(w, rs.File)
	}
	for _, l := range wrap("file: " + rs.Summary()) {
		fmt.Fprintln(w, l)
	}
	return printTable(w, rs.File, rs)
}

// plainText writes text with every control character but newline and
// tab replaced by '?': a results file's strings (a why, a version, a cut)
// printed by show carry no escape sequence, carriage return or bell to
// the terminal. The bytes of UTF-8 text above ASCII pass as they are.
type plainText struct{ w io.Writer }

func (p plainText) Write(b []byte) (int, error) {
	clean, copied := b, false
	for i, c := range b {
		if (c < ' ' && c != '\n' && c != '\t') || c == 0x7f {
			if !copied {
				clean, copied = append([]byte(nil), b...), true
			}
			clean[i] = '?'
		}
	}
	if _, err := p.w.Write(clean); err != nil {
		return 0, err
	}
	return len(b), nil
}

// shownChoice is show --threads --json: the selection with where it came
// from.
type shownChoice struct {
	results.Selection
	// MedianNs is null when this placement class was not measured for
	// this count (it shadows the selection's 0).
	MedianNs *float64 `json:"median_ns"`
	// Measured says whether the choice is a measurement of this count on
	// this placement class (rule measured, or one measured round-robin).
	Measured bool `json:"measured"`
	// AutoPolicy is the waiting policy barriers.Auto builds the barrier
	// with (Policy is the one the check measured with), and
	// WaitPolicyFrom where it comes from (waitPolicy).
	AutoPolicy     string            `json:"auto_policy"`
	WaitPolicyFrom string            `json:"wait_policy_from"`
	Source         string            `json:"source"`
	SourceWhy      string            `json:"source_why"`
	Skipped        []results.Skipped `json:"skipped"`
	AllowedWhy     string            `json:"allowed_why"`
	Simulated      bool              `json:"simulated"`
	Foreign        string            `json:"foreign,omitempty"`
	// GoOnly says that the algorithm exists only in Go (goroutine, cond,
	// channel): a C, C++ or OpenMP program takes export's choice instead.
	GoOnly bool `json:"go_only"`
}

func choiceJSON(rs *resultsSource, sel results.Selection) shownChoice {
	sk := rs.Skipped
	if sk == nil {
		sk = []results.Skipped{}
	}
	var ns *float64
	if sel.MedianNs > 0 {
		ns = &sel.MedianNs
	}
	autoPolicy, from := waitPolicy()
	return shownChoice{Selection: sel, MedianNs: ns, Measured: ns != nil, AutoPolicy: autoPolicy.String(), WaitPolicyFrom: from, Source: rs.Path, SourceWhy: rs.Why, Skipped: sk, AllowedWhy: rs.allowedWhy, Simulated: rs.File.Simulated, Foreign: rs.foreign, GoOnly: algname.GoOnly(sel.Algorithm)}
}

// waitPolicy returns the policy barriers.Auto builds with in this process
// and where it comes from: "default", $BARRIERTUNE_WAIT_POLICY's setting,
// or "default" and why an invalid setting was ignored.
func waitPolicy() (barriers.Policy, string) {
	p, set, err := barriers.WaitPolicyFromEnv()
	switch {
	case err != nil:
		return p, "default (" + err.Error() + ")"
	case set:
		return p, barriers.WaitPolicyEnv + "=" + strings.ToLower(strings.TrimSpace(os.Getenv(barriers.WaitPolicyEnv)))
	}
	return p, "default"
}

// printChoice prints one selection for people.
func printChoice(w io.Writer, rs *resultsSource, sel results.Selection) error {
	alg := sel.Algorithm
	if sel.FanIn > 0 {
		alg += fmt.Sprintf("(%d)", sel.FanIn)
	}
	if sel.Composition != "" {
		alg += "(" + sel.Composition + ")"
	}
	measured := fmt.Sprintf("measured: %s with policy %s, %.1f ns/episode", alg, sel.Policy, sel.MedianNs)
	if !(sel.MedianNs > 0) {
		measured = fmt.Sprintf("measured: nothing for %s on this placement class", text.Plural(sel.Threads, "thread"))
		if sel.From > 0 {
			measured += fmt.Sprintf(" (policy %s is what %s was measured with)", sel.Policy, text.Plural(sel.From, "thread"))
		}
	}
	autoPolicy, from := waitPolicy()
	lines := []string{
		fmt.Sprintf("%s inside CPUs %s (%s): barriers.Auto builds %s, policy %s (%s)",
			text.Plural(sel.Threads, "thread"), sel.Allowed, rs.allowedWhy, alg, autoPolicy, from),
		"CPUs by rank: " + rankList(sel.CPUs),
		measured,
		fmt.Sprintf("rule %s: %s", sel.Rule, sel.Why),
		"file: " + rs.Summary(),
	}
	if rs.foreign != "" {
		lines = append(lines, "warning: the file is another machine's: "+rs.foreign)
	}
	for _, l := range lines {
		for _, part := range wrap(l) {
			if _, err := fmt.Fprintln(w, part); err != nil {
				return err
			}
		}
	}
	return nil
}

// wrap breaks prose into lines of at most maxShowLine characters at
// spaces, continuation lines indented; a word longer than a line (a path)
// is elided.
func wrap(s string) []string { return text.Wrap(s, maxShowLine, "    ", maxShowLine-4) }

// validOr returns cpus when every index fits a cpuset, else nil.
func validOr(cpus cpuset.Placement) cpuset.Placement {
	for _, c := range cpus {
		if c < 0 || c > cpuset.MaxCPU {
			return nil
		}
	}
	return cpus
}

// rankList shows a rank-ordered CPU list: ranges where ranks run over
// consecutive CPUs ("0-3,8", model.go's cpuList), "round-robin over S"
// when CPUs repeat.
func rankList(cpus cpuset.Placement) string {
	for _, c := range cpus {
		if c < 0 || c > cpuset.MaxCPU {
			return joinInts(cpus)
		}
	}
	if set := cpuset.Of(cpus...); set.Len() < len(cpus) {
		return fmt.Sprintf("round-robin over %s (%s)", set, text.Plural(len(cpus), "thread"))
	}
	return cpuList(cpus)
}

// printWinners writes the table of the check's winners (the whole set it
// ran on), as `check` prints it.
func printWinners(w io.Writer, f *results.File) error { return printTable(w, f, nil) }

// printTable writes the table of winners: the check's best for each
// measured count, or, with rs, the choice inside rs's allowed CPUs.
func printTable(w io.Writer, f *results.File, rs *resultsSource) error {
	out := func(format string, args ...any) {
		for _, l := range wrap(fmt.Sprintf(format, args...)) {
			fmt.Fprintln(w, l)
		}
	}
	out("%s %s on %s, %s", f.Tool.Name, f.Tool.Version, f.Machine.CPU.Name, f.Time.Format("2006-01-02 15:04 MST"))
	fmt.Fprintln(w, text.Elide("topology: "+f.Machine.Topology, maxShowLine))
	cpus := "check ran on CPUs " + f.Machine.AllowedCPUs
	if f.Machine.Tree != nil {
		cpus = "machine CPUs " + f.Machine.Tree.CPUs + ", " + cpus
	}
	if rs != nil && !rs.allowed.Equal(rs.sel.CPUs()) {
		cpus += fmt.Sprintf("; choices inside CPUs %s (%s)", rs.allowed, rs.allowedWhy)
	}
	out("%s", cpus)
	if f.Simulated {
		out("SIMULATED: winners chosen by the latency model, not measured")
	}
	for _, fl := range f.Floor {
		out("floor %-9s CPUs %d,%d: %.1f ns one-way%s", fl.Level, fl.CPUs[0], fl.CPUs[1], fl.MedianNs, floorStates(fl))
	}
	if f.HostChange != "" {
		out("HOST CHANGED during the check: %s", f.HostChange)
	}
	if l := f.Load; l != nil && l.Busy {
		out("BUSY: the machine was busy while the check measured (%s; load average %.2f to %.2f): its timings include the competition; run the check again on a quiet machine", l.Why, l.LoadAvgStart, l.LoadAvgEnd)
	}
	if f.Partial {
		out("PARTIAL: the check stopped early; `barriertune check --resume FILE` continues it")
	}
	for _, c := range f.Cuts {
		out("cut: %s", c)
	}
	if f.Machine.Unmeasured != "" {
		out("not measured: %s", f.Machine.Unmeasured)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var tieRules []string // each kind of tie in the table, once
	fmt.Fprintln(tw, "threads\tbest\tpolicy\tplacement\tns/episode\tx floor\trunner-up\tmargin\trobust")
	var rows [][]string // the best column's long names (a hybrid's composition) abbreviated below
	for _, t := range f.Threads {
		if t.Best == nil {
			rows = append(rows, []string{fmt.Sprint(t.Threads), "(none)", "", "", "", "", "", "", ""})
			continue
		}
		b := t.Best
		alg, policy, label, placed, median := b.Describe(), b.Policy, b.Label, b.CPUs, b.MedianNs
		isBest, shrunk := true, false // shrunk: more threads than the allowed CPUs, a placement the file's robust choice was not measured on
		if rs != nil {
			sel, err := rs.sel.Select(t.Threads, rs.allowed)
			if err != nil {
				return err
			}
			isBest = sel.Best
			if !isBest || !slices.Equal(sel.CPUs, b.CPUs) {
				c := results.Choice{Spec: results.Spec{Algorithm: sel.Algorithm, FanIn: sel.FanIn, Composition: sel.Composition}}
				alg, policy, label, placed, median = c.Describe(), sel.Policy, sel.Label, sel.CPUs, sel.MedianNs
				if label == "" {
					label = sel.Rule
				}
				shrunk = cpuset.Placement(sel.CPUs).Oversubscribed()
			}
		}
		ratio := "-"
		if fl := f.FloorFor(placed); fl > 0 && median > 0 {
			ratio = fmt.Sprintf("%.2f", median/fl)
		}
		runner, margin := "-", "-"
		if b.RunnerUp != "" && isBest {
			runner, margin = b.RunnerUp, fmt.Sprintf("%+.1f%%", b.MarginPct)
			if b.Tie {
				margin += " tie"
			}
		}
		rob := "-"
		switch {
		case shrunk:
			rob = alg + " (more threads than CPUs)"
		case t.Robust != nil:
			rob = fmt.Sprintf("%s (worst %.0f ns)", t.Robust.Algorithm, t.Robust.WorstMedianNs)
		}
		place := text.Elide(rankList(placed), 32)
		if label != "" && len(validOr(placed)) == len(placed) && !cpuset.Placement(placed).Oversubscribed() { // round-robin says itself
			place = text.Elide(label, 24) + " " + place
		}
		incomplete := ""
		if !t.Complete {
			incomplete = " (incomplete)"
		}
		ns := "-"
		if median > 0 {
			ns = fmt.Sprintf("%.1f", median)
		}
		rows = append(rows, []string{fmt.Sprint(t.Threads) + incomplete, alg, policy, place, ns, ratio, runner, margin, rob})
		if b.Tie && margin != "-" && !slices.Contains(tieRules, b.TieRule) { // a footnote to a margin shown
			tieRules = append(tieRules, b.TieRule)
		}
	}
	algs := make([]string, len(rows))
	for i, r := range rows {
		algs[i] = r[1]
	}
	shown, legend := text.Abbreviate(algs, 32)
	for i, r := range rows {
		r[1] = shown[i]
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range legend {
		out("%s", l)
	}
	if repeats := repeatLines(f); len(repeats) > 0 {
		fmt.Fprintln(w)
		for _, l := range repeats {
			out("%s", l)
		}
	}
	if len(tieRules) > 0 {
		fmt.Fprintln(w)
	}
	for _, r := range tieRules {
		if _, err := fmt.Fprintf(w, "tie %s\n", r); err != nil {
			return err
		}
	}
	named := slices.ContainsFunc(rows, func(r []string) bool { // in the columns as printed (--allowed replaces some)
		return slices.ContainsFunc([]string{r[1], r[6], strings.Fields(r[8] + " -")[0]}, catalog.Blocks)
	})
	if note := check.BlockingNote(f); note != "" && named {
		if len(tieRules) == 0 {
			fmt.Fprintln(w)
		}
		out("%s", note)
	}
	if note := check.OSThreadsNote(f); note != "" {
		out("%s", note)
	}
	for _, l := range openMPLines(f) {
		out("%s", l)
	}
	for _, l := range mpiLines(f) {
		out("%s", l)
	}
	return nil
}

// floorStates says, after a floor, the host states its samples fell into
// when there were several ("" otherwise).
func floorStates(fl results.Floor) string {
	if len(fl.States) < 2 {
		return ""
	}
	var parts []string
	for i, st := range fl.States {
		mark := ""
		if i == fl.RankedState {
			mark = ", ranked"
		}
		parts = append(parts, fmt.Sprintf("%.1f ns x%d rounds%s", st.MedianNs, st.Rounds, mark))
	}
	return " (the host moved: " + strings.Join(parts, "; ") + ")"
}

// repeatLines are the candidates each thread count measured again before
// they could win, and the outcome.
func repeatLines(f *results.File) []string {
	var out []string
	for _, t := range f.Threads {
		for _, r := range t.Repeated {
			outcome := fmt.Sprintf("not confirmed (%.2f x floor in %d repeated rounds): rejected, the next candidate won", r.FloorRatioAfter, r.Rounds)
			switch {
			case r.Confirmed:
				outcome = fmt.Sprintf("confirmed at %.2f x floor in %d repeated rounds", r.FloorRatioAfter, r.Rounds)
			case r.Rounds == 0:
				outcome = "not measured again (the check stopped): rejected, the next candidate won"
			}
			out = append(out, fmt.Sprintf("repeated: %d threads, %s on %s at %.2f x floor: %s", t.Threads, r.Algorithm, cpuList(r.CPUs), r.FloorRatioBefore, outcome))
		}
	}
	return out
}
