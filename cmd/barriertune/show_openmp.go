package main

import (
	"fmt"
	"strings"

	"github.com/barriertune/barriertune/results"
)

// hostMovedFactor is how far apart the floors before and after the
// OpenMP step are when the host moved during it (results.OpenMP.HostMoved:
// 1.5 times or more).
const hostMovedFactor = 1.5

// hostStateLine says which host state the OpenMP times belong to: the
// file's own words where it says the host moved; else, from the two
// floors, one state, or two (floors 1.5 times apart or more, which a
// file edited by hand may not say), or the one floor read; "" when
// neither was measured.
func hostStateLine(o *results.OpenMP) string {
	before, after := o.HostFloorBeforeNs, o.HostFloorAfterNs
	switch {
	case o.HostMoved != "":
		return "Host state: " + o.HostMoved
	case before > 0 && after > 0 && max(before, after) >= hostMovedFactor*min(before, after):
		return fmt.Sprintf("Host state: the floor read %.0f ns before the step and %.0f ns after it, %.1f times apart: the host moved between states during the step, and the times below mix the two (check again for times to compare)", before, after, max(before, after)/min(before, after))
	case before > 0 && after > 0:
		return fmt.Sprintf("Host state: the floor read %.0f ns before the step and %.0f ns after it; the times below belong to that state (a VM's host can move its vCPUs between states several times apart: compare them with runs that read the same floor, barriertune latency)", before, after)
	case before > 0 || after > 0:
		when, ns := "before", before
		if after > 0 {
			when, ns = "after", after
		}
		return fmt.Sprintf("Host state: the floor read %.0f ns %s the step (the other reading is missing: whether the host moved during it is not known)", ns, when)
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
