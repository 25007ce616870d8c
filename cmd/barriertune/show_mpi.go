package main

import (
	"fmt"
	"slices"
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
			if c.Verify != "" {
				lines = append(lines, fmt.Sprintf("%s, %d ranks, the exported file run as a user would (%s): %s", im.Name, c.Ranks, strings.ReplaceAll(c.Verify, "_", " "), c.VerifyWhy))
			}
		}
		lines = append(lines, launchLines(im)...)
	}
	return lines
}

// launchLines are show's lines on an implementation's launch-level
// settings (v1.7): per setting, what it does, whether it was chosen and
// why, and its ratio to the baseline at each count.
func launchLines(im results.MPIImplementation) []string {
	if len(im.Launch) == 0 && len(im.LaunchWhy) == 0 {
		return nil
	}
	lines := []string{fmt.Sprintf("%s launch-level settings (read when a job starts: one applies to every rank count, so it is chosen only when faster at some count and measured, and not slower, at every count):", im.Name)}
	var order []string
	for _, c := range im.Launch {
		if !slices.Contains(order, c.Setting) {
			order = append(order, c.Setting)
		}
	}
	for _, w := range im.LaunchWhy {
		name, _, _ := strings.Cut(w, ": ")
		if !slices.Contains(order, name) {
			lines = append(lines, fmt.Sprintf("%s: %s", im.Name, w))
		}
	}
	for _, s := range order {
		var at []string
		for _, c := range im.Launch {
			if c.Setting != s {
				continue
			}
			switch {
			case len(c.Failed) > 0:
				at = append(at, fmt.Sprintf("%d: failed", c.Ranks))
			case strings.HasPrefix(c.NotMeasured, "not timed"):
				at = append(at, fmt.Sprintf("%d: not timed", c.Ranks))
			case c.NotMeasured != "":
				at = append(at, fmt.Sprintf("%d: not measured", c.Ranks))
			case c.DefaultNs == 0 && strings.HasPrefix(c.Why, "not timed"):
				at = append(at, fmt.Sprintf("%d: Open MPI's own, not timed", c.Ranks))
			case c.Best != "":
				at = append(at, fmt.Sprintf("%d: %.2fx, faster", c.Ranks, c.Ratio))
			case c.Slower:
				at = append(at, fmt.Sprintf("%d: %.2fx, slower", c.Ranks, c.Ratio))
			default:
				at = append(at, fmt.Sprintf("%d: %.2fx", c.Ranks, c.Ratio))
			}
		}
		mark := "not chosen"
		if s == im.LaunchChosen {
			mark = "CHOSEN"
		}
		why := s
		for _, w := range im.LaunchWhy {
			if strings.HasPrefix(w, s+": ") {
				why, _, _ = strings.Cut(w, "; what it does: ")
			}
		}
		lines = append(lines, fmt.Sprintf("%s launch-level, %s: %s [ranks %s]", im.Name, mark, why, strings.Join(at, "; ")))
	}
	return lines
}
