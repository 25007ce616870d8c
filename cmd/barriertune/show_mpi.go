package main

import (
	"fmt"
	"strings"

	"github.com/barriertune/barriertune/results"
)

// mpiLines are show's and check's lines on the MPI implementations the
// check measured (results.File.MPI): per implementation its version, or
// why it was not measured, and per rank count the defaults' time and
// leaving spread and the setting measured faster, or that the defaults
// stay (with what MPICH costs above the CPUs). None for a file without
// the measurement (before v1.6, or simulated).
func mpiLines(f *results.File) []string {
	m := f.MPI
	if m == nil {
		return nil
	}
	lines := []string{"", "MPI implementations: MPI_Barrier among the ranks of this node, each implementation's defaults against settings of its own knobs (export --format openmpi or mpich sets only what was measured faster):"}
	for _, im := range m.Implementations {
		if im.NotMeasured != "" {
			lines = append(lines, fmt.Sprintf("%s not measured: %s", im.Name, im.NotMeasured))
			continue
		}
		version := im.Version
		if version == "" {
			version = "version not known (no launch finished)"
		}
		lines = append(lines, fmt.Sprintf("%s: %s (%s)", im.Name, version, im.Launcher))
		if im.Root != "" {
			lines = append(lines, fmt.Sprintf("%s: %s", im.Name, im.Root))
		}
		for _, c := range im.Counts {
			switch {
			case c.NotMeasured != "":
				lines = append(lines, fmt.Sprintf("%s, %d ranks: not measured: %s", im.Name, c.Ranks, c.NotMeasured))
			case c.Best == "":
				lines = append(lines, fmt.Sprintf("%s, %d ranks: the defaults stay (%s a barrier, ranks leave %s apart): %s", im.Name, c.Ranks, usOrNsShort(c.DefaultNs), usOrNsShort(c.DefaultSpreadNs), c.Why))
			default:
				lines = append(lines, fmt.Sprintf("%s, %d ranks: %s, %s a barrier against the defaults' %s (defaults %+.1f%% slower; %s); ranks leave %s apart (defaults %s)", im.Name, c.Ranks, c.Best, usOrNsShort(c.BestNs), usOrNsShort(c.DefaultNs), c.MarginPct, c.Test, usOrNsShort(c.SpreadNs), usOrNsShort(c.DefaultSpreadNs)))
			}
			if len(c.Failed) > 0 {
				lines = append(lines, fmt.Sprintf("%s, %d ranks, never chosen (crashed, hung or refused): %s", im.Name, c.Ranks, strings.Join(c.Failed, "; ")))
			}
		}
	}
	return lines
}
