package main

import (
	"fmt"
	"strings"

	"github.com/barriertune/barriertune/cmd/internal/export"
	"github.com/barriertune/barriertune/results"
)

// hostStateLine is show's line on the host state the OpenMP times belong
// to (export.OpenMPHostState); "" when no floor was read.
func hostStateLine(o *results.OpenMP) string {
	if words := export.OpenMPHostState(o, "the step"); words != "" {
		return "Host state: " + words
	}
	return ""
}

// openMPLines are show's and check's lines on the OpenMP runtimes the
// check measured (results.File.OpenMP): per runtime its version, or why
// it was not measured, and per count the defaults' time and the setting
// measured faster, or that the defaults stay. None for a file without the
// measurement (before v1.5, or simulated).
func openMPLines(f *results.File) []string {
	o := f.OpenMP
	if o == nil {
		return nil
	}
	lines := []string{"", "OpenMP runtimes: each runtime's defaults against settings of its own knobs, on a plain barrier loop and a stencil (barriertune omp-run -- ./prog applies what was measured faster):"}
	if l := hostStateLine(o); l != "" {
		lines = append(lines, l)
	}
	for _, r := range o.Runtimes {
		if r.NotMeasured != "" {
			lines = append(lines, fmt.Sprintf("%s not measured: %s", r.Name, r.NotMeasured))
			continue
		}
		lines = append(lines, fmt.Sprintf("%s: %s, %s", r.Name, r.Version, r.Library))
		for _, c := range r.Counts {
			switch {
			case c.NotMeasured != "":
				lines = append(lines, fmt.Sprintf("%s, %d threads: not measured: %s", r.Name, c.Threads, c.NotMeasured))
			case c.NotDecided != "":
				lines = append(lines, fmt.Sprintf("%s, %d threads: the defaults stay (%s a barrier), %s", r.Name, c.Threads, usOrNsShort(c.DefaultNs), c.NotDecided))
			case len(c.Best) == 0:
				lines = append(lines, fmt.Sprintf("%s, %d threads: the defaults stay (%s a barrier): %s", r.Name, c.Threads, usOrNsShort(c.DefaultNs), c.Why))
			default:
				stencil := ""
				if c.DefaultStencilNs > 0 {
					stencil = fmt.Sprintf("; stencil %s against %s", usOrNsShort(c.BestStencilNs), usOrNsShort(c.DefaultStencilNs))
				}
				lines = append(lines, fmt.Sprintf("%s, %d threads: %s, %s a barrier against the defaults' %s (defaults %+.1f%% slower; %s%s)", r.Name, c.Threads, strings.Join(c.Best, " "), usOrNsShort(c.BestNs), usOrNsShort(c.DefaultNs), c.MarginPct, c.Test, stencil))
			}
			if len(c.Failed) > 0 {
				lines = append(lines, fmt.Sprintf("%s, %d threads, never chosen (crashed, hung or refused): %s", r.Name, c.Threads, strings.Join(c.Failed, "; ")))
			}
		}
	}
	return lines
}

// usOrNsShort formats a time in ns as ns below 10 µs and as µs above.
func usOrNsShort(ns float64) string {
	if ns < 10_000 {
		return fmt.Sprintf("%.0f ns", ns)
	}
	return fmt.Sprintf("%.1f µs", ns/1000)
}
