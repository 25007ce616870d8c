package export

import (
	"fmt"
	"strconv"
	"strings"
)

// shellEnv writes KEY=VALUE lines a POSIX shell can source, after the
// header comment: unsuffixed names for one entry (--threads), else names
// suffixed _N per measured count and BARRIERTUNE_THREAD_COUNTS listing the
// counts.
func shellEnv(b *strings.Builder, es []entry, single bool) {
	if !single {
		counts := make([]string, len(es))
		for i, e := range es {
			counts[i] = strconv.Itoa(e.threads)
		}
		fmt.Fprintf(b, "BARRIERTUNE_THREAD_COUNTS=%s\n", shellQuote(strings.Join(counts, " ")))
	}
	for _, e := range es {
		suffix := ""
		if !single {
			suffix = "_" + strconv.Itoa(e.threads)
		}
		for _, kv := range fields(e) {
			fmt.Fprintf(b, "BARRIERTUNE_%s%s=%s\n", strings.ToUpper(kv[0]), suffix, shellQuote(kv[1]))
		}
	}
}

// keyValues writes one line per entry: space-separated key=value pairs
// (values never contain spaces).
func keyValues(b *strings.Builder, es []entry) {
	for _, e := range es {
		fs := fields(e)
		parts := make([]string, len(fs))
		for i, kv := range fs {
			parts[i] = kv[0] + "=" + kv[1]
		}
		fmt.Fprintln(b, strings.Join(parts, " "))
	}
}

// fields are an entry's keys and values, in order; cpus lists the CPU of
// each thread, pinned or not (pinned says whether to bind them). What was not measured
// is absent: measured_threads when the choice comes from no measured count
// (a fallback), median_ns when this placement class was not measured for
// this count; rule says how the choice was made (measured, nearest or
// oversubscribed: docs/results.md).
func fields(e entry) [][2]string {
	c := e.best()
	// The CPU of each thread, pinned or not: unpinned, the round-robin
	// placement the C header's row gives its threads too (thread i on
	// cpus[i]), which a runtime may use as a hint.
	pinned, cpus := "0", joinInts(c.CPUs)
	if c.Pinned {
		pinned = "1"
	}
	noSpace := func(s string) string { return strings.Join(strings.Fields(oneLine(s)), "_") }
	out := [][2]string{{"threads", strconv.Itoa(e.threads)}}
	if e.sel.From > 0 {
		out = append(out, [2]string{"measured_threads", strconv.Itoa(e.sel.From)})
	}
	out = append(out,
		[2]string{"algorithm", noSpace(c.Algorithm)},
		[2]string{"fan_in", strconv.Itoa(fanIn(c))},
		[2]string{"policy", noSpace(c.Policy)},
		[2]string{"pinned", pinned},
		[2]string{"cpus", cpus},
	)
	if c.MedianNs > 0 {
		out = append(out, [2]string{"median_ns", formatNs(c.MedianNs)})
	}
	return append(out, [2]string{"rule", noSpace(e.sel.Rule)})
}
