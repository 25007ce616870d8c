package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/barriertune/barriertune/export"
	"github.com/barriertune/barriertune/results"
)

// exportOptions are the export command's flags and argument.
type exportOptions struct {
	global  *globalOptions
	format  string
	threads int
	path    string // results file; "" is the per-user default
}

func newExportCmd(g *globalOptions) *cobra.Command {
	o := &exportOptions{global: g}
	cmd := &cobra.Command{
		Use:   "export --format omp-env|c-header|env|kv [--threads N] [FILE]",
		Short: "Export the winners for OpenMP runtimes, C programs or scripts",
		Long: `Export the winners of a results file (default: the per-user file that
` + "`barriertune check`" + ` writes) in a form other programs read directly:

  omp-env   POSIX shell exports for OpenMP runtimes: OMP_PLACES and
            OMP_PROC_BIND for the placement, OMP_WAIT_POLICY, KMP_BLOCKTIME and
            GOMP_SPINCOUNT for the policy, LLVM libomp's
            KMP_PLAIN/FORKJOIN_BARRIER_PATTERN and branch bits for the
            algorithm; a comment says where no exact equivalent exists.
            Without --threads, an if-chain picks the block for
            $OMP_NUM_THREADS.
  c-header  a self-contained C99 header: a table by thread count (algorithm,
            fan-in, policy, CPUs, median ns) and barriertune_lookup(n).
  env       KEY=VALUE shell variables (BARRIERTUNE_ALGORITHM_8=..., or
            unsuffixed with --threads).
  kv        one line per thread count of key=value pairs.

A thread count that was not measured takes the nearest measured count's
choice (ties go to the larger count), as barriers.Auto does; docs/results.md
maps the algorithm names to libomp, libgomp and the X-Ray OSAL.`,
		Example: `  barriertune export --format omp-env > barriertune-omp.env && . ./barriertune-omp.env
  barriertune export --format c-header > barriertune.h
  barriertune export --format kv --threads 8 results.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.path = args[0]
			}
			return runExport(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "", "output format: "+strings.Join(export.Formats(), ", ")+" (required)")
	f.IntVarP(&o.threads, "threads", "t", 0, "export only the choice for this many threads (default: every measured count)")
	_ = cmd.MarkFlagRequired("format")
	registerCompletions(cmd, map[string][]string{"format": export.Formats()})
	return cmd
}

// validate checks the flag values before the file is read.
func (o *exportOptions) validate() error {
	if !slices.Contains(export.Formats(), o.format) {
		return usageErrorf("--format %q: unknown format (accepted: %s)", o.format, strings.Join(export.Formats(), ", "))
	}
	if o.threads < 0 || o.threads > export.MaxThreads {
		return usageErrorf("--threads %d: want 1..%d threads, or 0 for every measured count", o.threads, export.MaxThreads)
	}
	return nil
}

// runExport reads the results file and writes the export to w.
func runExport(_ context.Context, o *exportOptions, w io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	f, err := readResults(o.path)
	if err != nil {
		return err
	}
	if err := export.Write(w, f, o.format, export.Options{Threads: o.threads}); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// readResults reads path, or the per-user default file when path is "".
func readResults(path string) (*results.File, error) {
	if path == "" {
		var err error
		if path, err = results.DefaultPath(); err != nil {
			return nil, err
		}
	}
	return results.Read(path)
}
