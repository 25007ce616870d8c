package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newRootCmd() *cobra.Command {
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
--topology FILE.json.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newVersionCmd(), newTopoCmd(), newSetsCmd(), newBenchCmd(), newCheckCmd(), newShowCmd(), newExportCmd(), newPlotCmd())
	return root
}

// version is the module version when built from a tagged module, else devel.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print barriertune's version, Go version and platform",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := map[string]string{"version": version(), "go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), v)
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "barriertune %s (%s %s/%s)\n", v["version"], v["go"], v["os"], v["arch"])
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
