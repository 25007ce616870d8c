package export

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/results"
)

// shellEnv writes KEY=VALUE lines a POSIX shell can source: unsuffixed
// names for one entry (--threads), else names suffixed _N per measured
// count and BARRIERTUNE_THREAD_COUNTS listing the counts.
func shellEnv(b *strings.Builder, f *results.File, es []entry, single bool) {
	fmt.Fprintf(b, "# barriertune choices %s\n", source(f))
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

// fields are an entry's keys and values, in order.
func fields(e entry) [][2]string {
	c := e.best()
	pinned, cpus := "0", ""
	if c.Pinned {
		pinned, cpus = "1", joinInts(c.CPUs)
	}
	noSpace := func(s string) string { return strings.Join(strings.Fields(oneLine(s)), "_") }
	return [][2]string{
		{"threads", strconv.Itoa(e.threads)},
		{"measured_threads", strconv.Itoa(e.t.Threads)},
		{"algorithm", noSpace(c.Algorithm)},
		{"fan_in", strconv.Itoa(fanIn(c))},
		{"policy", noSpace(c.Policy)},
		{"pinned", pinned},
		{"cpus", cpus},
		{"median_ns", formatNs(c.MedianNs)},
	}
}
