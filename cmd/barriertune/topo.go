package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/barriertune/barriertune/hwtree"
)

func newTopoCmd() *cobra.Command {
	var src sourceFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "topo",
		Short: "Show the CPU tree (Machine > Package > caches > Core > PU)",
		Long: `Show the CPU tree that the tuner works on, in the style of lstopo.

The tree is built from CPU masks as hwloc builds it: PUs are the online CPUs
this process may use, grouped into cores, caches, dies and packages by the
CPUs they share. The listing gives each object's logical index (L#), OS
index (P#) and attributes, then the allowed CPUs, the CPU model, and the
hwloc synthetic string when the tree is symmetric.

--json prints the tree as nested {"type", "os_index", "attrs", "children"}
objects, which --topology reads back (so trees can be written by hand).`,
		Example: `  barriertune topo
  barriertune topo --json > here.json
  barriertune topo --synthetic "pack:2 l3:2 core:4 pu:2"
  barriertune topo --sysfs-root ./snapshot   # DIR with sys/ and proc/
  barriertune topo --xml machine.xml         # from lstopo machine.xml
  barriertune topo --topology here.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			topo, err := src.load()
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(w, topo)
			}
			if err := topo.WriteListing(w); err != nil {
				return err
			}
			fmt.Fprintf(w, "\nAllowed CPUs: %s (%d PUs)\n", topo.Allowed(), len(topo.PUs()))
			if src.live() {
				id := hwtree.HostCPU()
				fmt.Fprintf(w, "CPU model (cpuid): %s (vendor %s, family %d, model %d, stepping %d)\n", id.Name, id.Vendor, id.Family, id.Model, id.Stepping)
			} else if pk := topo.Objects(hwtree.Package); len(pk) > 0 && pk[0].Attrs.Model != "" {
				fmt.Fprintf(w, "CPU model: %s\n", pk[0].Attrs.Model)
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
		},
	}
	src.register(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tree as JSON")
	return cmd
}
