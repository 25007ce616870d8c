package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/barriertune/barriertune/internal/rawcpuid"
	"github.com/barriertune/barriertune/internal/text"

	"github.com/spf13/cobra"

	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/hwtree"
)

// topoFormats are the output formats of `topo --of`, as lstopo names them.
var topoFormats = []string{"console", "json", "xml", "synthetic"}

// topoOnlyTypes are the type names `topo --only` completes to.
func topoOnlyTypes() []string {
	var out []string
	for t := hwtree.Machine; t <= hwtree.PU; t++ { // root to leaves
		out = append(out, t.String())
	}
	return out
}

// topoOptions are the options of `barriertune topo`.
type topoOptions struct {
	src      sourceFlags
	of       string
	asJSON   bool
	noCaches bool
	only     string
	cpusets  bool
	restrict string
}

func newTopoCmd() *cobra.Command {
	var opts topoOptions
	cmd := &cobra.Command{
		Use:   "topo",
		Short: "Show the CPU tree (Machine > Package > caches > Core > PU)",
		Long: `Show the CPU tree that the tuner works on, in the style of lstopo.

The tree is built from CPU masks as hwloc builds it: PUs are the online CPUs
this process may use, grouped into cores, caches, dies and packages by the
CPUs they share. The listing gives each object's logical index (L#), OS
index (P#) and attributes, NUMA nodes as lstopo shows them (listed first
below the object whose CPUs they serve, or as a Group0 holding them), then
the allowed CPUs, the CPU model, and the hwloc synthetic string when the
tree is symmetric.

--of chooses the output, as lstopo's --of does: console (the listing),
json (nested {"type", "os_index", "attrs", "children"} objects, which
--topology reads back, so trees can be written by hand; the root says
"hwloc_xml_version" when the tree came from hwloc XML), xml (hwloc v2 XML,
which lstopo --input FILE and --xml read back) or synthetic (an hwloc
synthetic string, which lstopo --input "STRING" and --synthetic read back;
only symmetric trees have one). --json is --of json.

--no-caches and --restrict change the tree before any output, as lstopo's
options of those names do; --only and --cpuset change the console listing.`,
		Example: `  barriertune topo
  barriertune topo --of json > here.json
  barriertune topo --of xml > here.xml && lstopo --input here.xml
  barriertune topo --of synthetic
  barriertune topo --synthetic "pack:2 l3:2 core:4 pu:2" --restrict 0-3 --no-caches
  barriertune topo --only core --cpuset
  barriertune topo --sysfs-root ./snapshot   # DIR with sys/ and proc/
  barriertune topo --xml machine.xml         # from lstopo machine.xml
  barriertune topo --topology here.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkSourceFlags(cmd); err != nil {
				return err
			}
			if opts.asJSON {
				if cmd.Flags().Changed("of") && opts.of != "json" {
					return usageErrorf("--json and --of %s given together; --json is --of json", opts.of)
				}
				opts.of = "json"
			}
			return runTopo(cmd.Context(), &opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	opts.src.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&opts.of, "of", "console", "output `FORMAT`: "+strings.Join(topoFormats, ", "))
	f.BoolVar(&opts.asJSON, "json", false, "print the tree as JSON (the same as --of json)")
	f.BoolVar(&opts.noCaches, "no-caches", false, "remove the cache objects, their children taking their places (lstopo --no-caches)")
	f.StringVar(&opts.only, "only", "", "list only the objects of `TYPE` (an hwloc type name or abbreviation, any case: core, l3, numa, pu, ...), as lstopo --only")
	f.BoolVar(&opts.cpusets, "cpuset", false, "show each object's cpuset in hwloc's form (lstopo --cpuset)")
	f.StringVar(&opts.restrict, "restrict", "", "keep only the PUs of `CPULIST` (e.g. 0-3,8) and the objects holding them (lstopo --restrict)")
	registerCompletions(cmd, map[string][]string{"of": topoFormats, "only": topoOnlyTypes()})
	return cmd
}

// runTopo validates opts, loads the topology and writes it.
func runTopo(_ context.Context, opts *topoOptions, w, _ io.Writer) error {
	known := false
	for _, f := range topoFormats {
		known = known || f == opts.of
	}
	if !known {
		return usageErrorf("--of %q: unknown output format (accepted: %s)", elided(opts.of), strings.Join(topoFormats, ", "))
	}
	var only []hwtree.Type
	if opts.only != "" {
		typ, err := hwtree.ParseType(opts.only)
		if err != nil {
			return usageErrorf("--only: %v", err)
		}
		only = []hwtree.Type{typ}
	}
	if opts.of != "console" && (opts.only != "" || opts.cpusets) {
		return usageErrorf("--only and --cpuset change the console listing; they cannot go with --of %s", opts.of)
	}
	var restrict cpuset.Set
	if opts.restrict != "" {
		set, err := cpuset.ParseList(opts.restrict)
		if err != nil {
			return usageErrorf("--restrict: %v", err)
		}
		if set.IsEmpty() {
			return usageErrorf("--restrict %q: the list holds no CPU (want CPU indexes and ranges such as 0-3,8)", elided(opts.restrict))
		}
		restrict = set
	}
	topo, err := opts.src.load()
	if err != nil {
		return err
	}
	if opts.restrict != "" {
		if err := topo.Restrict(restrict); err != nil {
			return usageErrorf("--restrict: %v", err)
		}
	}
	if opts.noCaches {
		topo.RemoveCaches()
	}
	switch opts.of {
	case "json":
		return writeJSON(w, topo)
	case "xml":
		return topo.WriteXML(w)
	case "synthetic":
		syn, err := topo.Synthetic()
		if err != nil {
			return fmt.Errorf("--of synthetic: %w", err)
		}
		_, err = fmt.Fprintln(w, syn)
		return err
	}
	if err := topo.WriteListing(w, opts.cpusets, only...); err != nil {
		return err
	}
	if len(only) > 0 {
		return nil
	}
	fmt.Fprintf(w, "\nAllowed CPUs: %s (%s)\n", topo.Allowed(), text.Plural(len(topo.PUs()), "PU"))
	if opts.src.live() {
		id := rawcpuid.Identify()
		fmt.Fprintf(w, "CPU model (cpuid): %s (vendor %s, family %d, model %d, stepping %d)\n", id.Name, id.Vendor, id.Family, id.Model, id.Stepping)
	} else if pk := topo.Objects(hwtree.Package); len(pk) > 0 && pk[0].Attrs.Model != "" {
		fmt.Fprintf(w, "CPU model: %s\n", pk[0].Attrs.Model)
	}
	if topo.FormatVersion != "" {
		fmt.Fprintf(w, "hwloc XML version: %s\n", topo.FormatVersion)
	}
	if syn, err := topo.Synthetic(); err == nil {
		fmt.Fprintf(w, "Synthetic: %s\n", syn)
	} else {
		fmt.Fprintf(w, "Synthetic: none (the tree is not symmetric)\n")
	}
	for _, n := range topo.Notes {
		fmt.Fprintf(w, "Note: %s\n", n)
	}
	return nil
}
