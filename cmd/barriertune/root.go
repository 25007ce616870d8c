package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/barriertune/barriertune/cmd/internal/buildinfo"
	"github.com/barriertune/barriertune/cmd/internal/progress"
	"github.com/barriertune/barriertune/results"
)

// globalOptions are the persistent flags every command shares.
type globalOptions struct {
	quiet   bool // no progress, no warnings: only results and errors
	verbose bool // more detail on stderr; progress as lines, never redrawn
	// systemFile is the system-wide results file of the lookup and of
	// check --system: results.SystemPath for the binary; the tests give
	// one of their own, so that they never read the machine's real file.
	systemFile string
}

// finder is this process's lookup order (results.HereFinder) with the
// system-wide file g.systemFile.
func (g *globalOptions) finder() (results.Finder, error) {
	fd, err := results.HereFinder()
	if err != nil {
		return fd, err
	}
	if g != nil && g.systemFile != "" {
		fd.System = []string{g.systemFile}
	}
	return fd, nil
}

// verbosef prints one line of detail on w when --verbose is given.
func (g *globalOptions) verbosef(w io.Writer, format string, args ...any) {
	if g != nil && g.verbose {
		fmt.Fprintf(w, format+"\n", args...)
	}
}

// newRootCmd is the command tree whose lookup reads the system-wide
// results file systemFile (results.SystemPath for the binary).
func newRootCmd(systemFile string) *cobra.Command {
	g := &globalOptions{systemFile: systemFile}
	root := &cobra.Command{
		Use:   "barriertune",
		Short: "Find the fastest thread barrier and placement for this machine",
		Long: `barriertune is a thread-barrier autotuner for one multicore node.

It discovers the machine's CPU tree (hwloc-equivalent), enumerates where t
threads can be placed, times every barrier algorithm on the chosen
placements, and writes the winners as JSON for compilers, runtimes and the
Go barriers library.

Every command that reads a topology takes one source flag: the live machine
by default, or --sysfs-root DIR, --synthetic STRING, --xml FILE, or
--topology FILE.json.

` + exitCodesHelp,
		Version:       versionLine(),
		Args:          usageArgs(cobra.NoArgs),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if g.quiet && g.verbose {
				return usageErrorf("--quiet and --verbose given together; choose one")
			}
			if err := checkEmptyValues(cmd); err != nil {
				return err
			}
			return checkSourceFlags(cmd)
		},
	}
	root.SuggestionsMinimumDistance = 2 // "chekc": did you mean "check"?
	root.SetVersionTemplate("{{.Version}}\n")
	root.Flags().Bool("version", false, "print the module version, VCS revision, Go version and platform")
	pf := root.PersistentFlags()
	pf.BoolVarP(&g.quiet, "quiet", "q", false, "print only results and errors: no progress, no warnings")
	pf.BoolVarP(&g.verbose, "verbose", "v", false, "print more detail on stderr; progress as lines, never redrawn")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// "barriertune shwo --json": the root met the flag before it knew
		// that "shwo" names no command; the unknown command is the error.
		if c == c.Root() && c.Flags().NArg() > 0 && strings.HasPrefix(err.Error(), "unknown ") {
			return usageError(unexpectedArgs(c, c.Flags().Args()))
		}
		return usageError(flagValueError(err))
	})

	// One line per command; helpers add theirs here.
	root.AddCommand(newVersionCmd())
	root.AddCommand(newTopoCmd())
	root.AddCommand(newSetsCmd(g))
	root.AddCommand(newBenchCmd(g))
	root.AddCommand(newCheckCmd(g))
	root.AddCommand(newShowCmd(g))
	root.AddCommand(newLatencyCmd(g))
	root.AddCommand(newModelCmd(g))
	root.AddCommand(newExportCmd(g))
	root.AddCommand(newOMPRunCmd(g))
	root.AddCommand(newPlotCmd(g))
	root.AddCommand(newDocsCmd())

	// cobra adds help and completion when it runs; add them now, so that
	// finishCommands gives them the same conventions (an unknown shell or
	// help topic is a usage error, not help printed with exit code 0).
	root.InitDefaultHelpCmd()
	root.SetOut(lateOut{root}) // the completion scripts keep the writer they are made with
	root.InitDefaultCompletionCmd()
	root.SetOut(nil)
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			c.Args = helpTopicArgs
		}
	}
	finishCommands(root)
	return root
}

// lateOut writes to c's output as set when it writes, not when made.
type lateOut struct{ c *cobra.Command }

func (w lateOut) Write(p []byte) (int, error) { return w.c.OutOrStdout().Write(p) }

// helpTopicArgs accepts `help [command path]` only for a command that
// exists.
func helpTopicArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	root := cmd.Root()
	found, rest, err := root.Find(args)
	if err != nil || found == root || len(rest) > 0 {
		near := ""
		if s := root.SuggestionsFor(args[0]); len(s) > 0 && len(args) == 1 {
			near = fmt.Sprintf("; did you mean %s?", strings.Join(quoteAll(s), " or "))
		}
		return fmt.Errorf("unknown help topic %q%s (accepted: a command such as %s)", elided(strings.Join(args, " ")), near, strings.Join(commandNames(root), ", "))
	}
	return nil
}

// commandNames are c's available subcommands' names.
func commandNames(c *cobra.Command) []string {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return names
}

// subcommandArgs is the argument rule of a command that only groups
// subcommands (completion): an argument that names none of them is a
// usage error that lists them.
func subcommandArgs(cmd *cobra.Command, args []string) error {
	what := "subcommand"
	if cmd.Name() == "completion" {
		what = "shell"
	}
	if len(args) == 0 {
		// Nothing to do without one: a usage error, as an unknown one is.
		// The error is printed after "barriertune: ": the path without it.
		return fmt.Errorf("%s needs a %s: one of %s (e.g. %s %s)", strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" "), what, strings.Join(commandNames(cmd), ", "), cmd.CommandPath(), commandNames(cmd)[0])
	}
	return fmt.Errorf("unknown %s %q for %q (accepted: %s)", what, elided(args[0]), cmd.CommandPath(), strings.Join(commandNames(cmd), ", "))
}

// finishCommands gives every command the shared conventions: argument
// errors are usage errors (exit code 2) and the help ends with the exit
// codes.
func finishCommands(c *cobra.Command) {
	if c.HasParent() && c.HasSubCommands() && !c.Runnable() {
		// Without a Run, cobra prints the help and exits 0 for any
		// argument or none; name the subcommands instead (exit code 2).
		c.Args = subcommandArgs
		c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	}
	if c.Args != nil {
		c.Args = usageArgs(c.Args)
	}
	if c.HasParent() && c.Long != "" {
		c.Long += "\n\n" + exitCodesHelp
	}
	for _, sub := range c.Commands() {
		finishCommands(sub)
	}
}

// oneResultsFile is the argument rule of show, export and plot: at most
// one results FILE (cobra's own message, "accepts at most 1 arg(s),
// received 2", names neither the argument nor what it is).
func oneResultsFile(cmd *cobra.Command, args []string) error {
	if len(args) > 1 {
		return fmt.Errorf("%s takes at most one results FILE, got %d arguments: %s", cmd.CommandPath(), len(args), elided(strings.Join(args, " ")))
	}
	return nil
}

// usageArgs makes the errors of an argument validator usage errors.
func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		err := v(cmd, args)
		if err != nil && strings.HasPrefix(err.Error(), "unknown command ") {
			// cobra.NoArgs calls every argument a command.
			err = unexpectedArgs(cmd, args)
		}
		var own *exitError
		if err != nil && len(args) > 0 && !strings.Contains(err.Error(), args[0]) && !errors.As(err, &own) {
			// cobra's "accepts at most 1 arg(s), received 4" names no
			// argument; a validator's own usage error (a flag's value
			// checked with the arguments) says what it means already.
			err = fmt.Errorf("%s: %v: %s", cmd.CommandPath(), err, elided(strings.Join(args, " ")))
		}
		return usageError(err)
	}
}

// unexpectedArgs is the error of arguments given to cmd, which takes
// none: for a command with subcommands (the root), an unknown command with
// the names near it ("did you mean"); for the others, stray arguments,
// named, with what the command accepts instead.
func unexpectedArgs(cmd *cobra.Command, args []string) error {
	if cmd.HasAvailableSubCommands() {
		msg := fmt.Sprintf("unknown command %q for %q", elided(args[0]), cmd.CommandPath())
		if near := cmd.SuggestionsFor(args[0]); len(near) > 0 {
			msg += fmt.Sprintf("; did you mean %s?", strings.Join(quoteAll(near), " or "))
		}
		return fmt.Errorf("%s (commands: %s)", msg, strings.Join(commandNames(cmd), ", "))
	}
	what := "stray argument"
	if len(args) > 1 {
		what = "stray arguments"
	}
	return fmt.Errorf("%s: %s %s: %s takes flags only, no arguments (a flag's value follows it: --name VALUE or --name=VALUE; see %s --help)",
		cmd.CommandPath(), what, elided(strings.Join(quoteAll(args), " ")), cmd.Name(), cmd.CommandPath())
}

// quoteAll is each of v quoted (%q).
func quoteAll(v []string) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// version is the module version when built from a tagged module, else devel.
func version() string { return buildinfo.Read().Version }

// versionLine is the one-line version: module version, revision, Go, platform.
func versionLine() string { return buildinfo.Read().Line("barriertune") }

type versionOptions struct {
	json bool
}

func newVersionCmd() *cobra.Command {
	opts := &versionOptions{}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print barriertune's version, VCS revision, Go version and platform",
		Long:  "Print barriertune's module version, the VCS revision it was built from, the Go version and the platform (the same as barriertune --version).",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runVersion(cmd.Context(), opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print as JSON")
	return cmd
}

func runVersion(_ context.Context, opts *versionOptions, out, _ io.Writer) error {
	if opts.json {
		return writeJSON(out, buildinfo.Read())
	}
	_, err := fmt.Fprintln(out, versionLine())
	return err
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// sourceFlagNames are the flags that choose where a topology comes from.
func sourceFlagNames() []string { return []string{"sysfs-root", "synthetic", "xml", "topology"} }

// checkSourceFlags refuses two topology sources at once as a usage error.
func checkSourceFlags(cmd *cobra.Command) error {
	var given []string
	for _, name := range sourceFlagNames() {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			given = append(given, "--"+name)
		}
	}
	if len(given) > 1 {
		return usageErrorf("%s given together; choose one topology source", strings.Join(given, " and "))
	}
	return nil
}

// checkEmptyValues refuses a string flag given an empty value (a CPU
// list, a topology, a file, a format): no flag of barriertune takes "" to
// mean something, so an empty --allowed is a malformed value, never the flag
// left out (usage error, exit 2).
func checkEmptyValues(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err == nil && f.Value.Type() == "string" && strings.TrimSpace(f.Value.String()) == "" {
			err = usageErrorf("--%s %q: an empty value; give one, or leave --%s out", f.Name, f.Value.String(), f.Name)
		}
	})
	return err
}

// flagValueError rewrites pflag's message for a malformed flag value
// ("invalid argument ... strconv.ParseInt: ...") as one line naming the
// flag, the value and what is accepted.
func flagValueError(err error) error {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) {
		return err
	}
	want := map[string]string{
		"int":      "a whole number",
		"duration": "a duration such as 200us, 30s or 5m",
		"bool":     "true or false",
		"string":   "a string",
	}[ive.GetFlag().Value.Type()]
	if want == "" {
		want = "a value of type " + ive.GetFlag().Value.Type()
	}
	return fmt.Errorf("--%s %q: not %s", ive.GetFlag().Name, elided(ive.GetValue()), want)
}

// newProgressLine is the progress display of a command on w, as the global
// --quiet and --verbose ask.
func newProgressLine(w io.Writer, g *globalOptions, prefix string) *progress.Line {
	return progress.NewLine(w, g != nil && g.quiet, g != nil && g.verbose, prefix)
}

// startProgress shows msg on w under prefix until the returned activity
// stops, as the global --quiet and --verbose ask.
func startProgress(w io.Writer, g *globalOptions, prefix, msg string) *progress.Activity {
	return progress.Start(w, g != nil && g.quiet, g != nil && g.verbose, prefix, msg)
}
