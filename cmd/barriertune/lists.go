package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/internal/text"
)

// parseCounts reads a thread-count list such as "2,4,8" or "2-8" for the
// flag named flag: counts 1..barriers.MaxParticipants, each at most once, in the order
// given.
func parseCounts(flag, s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, usageErrorf("%s %q: empty list (want thread counts such as 2,4,8 or 2-8)", flag, elided(s))
	}
	var out []int
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		switch {
		case err != nil || a < 1 || b < a:
			return nil, usageErrorf("%s %q: %q is not a thread count or range (want e.g. 2,4,8 or 2-8, counts 1..%d)", flag, elided(s), elided(part), barriers.MaxParticipants)
		case b > barriers.MaxParticipants:
			return nil, usageErrorf("%s %q: %d threads is more than the limit %d (want counts 1..%d)", flag, elided(s), b, barriers.MaxParticipants, barriers.MaxParticipants)
		}
		if len(out)+b-a+1 > barriers.MaxParticipants {
			return nil, usageErrorf("%s %q: more than %d thread counts", flag, elided(s), barriers.MaxParticipants)
		}
		for t := a; t <= b; t++ {
			if seen[t] {
				return nil, usageErrorf("%s %q: thread count %d is given twice (want each count once)", flag, elided(s), t)
			}
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

// parseCPUs reads a placement such as "0,1" or "0-3,8": the CPU of each
// thread in rank order. Each comma-separated part is a CPU list parsed by
// cpuset.ParseList (the project's one CPU-list parser), so indexes are
// capped at cpuset.MaxCPU before anything is allocated. A CPU listed twice
// oversubscribes it and is refused unless oversubscribe is set; overFlag
// names the flag that would allow it ("" where none does).
func parseCPUs(flag, s string, oversubscribe bool, overFlag string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		set, err := cpuset.ParseList(part)
		if err != nil {
			return nil, usageErrorf("%s %q: %v (want CPUs such as 0,1 or 0-3)", flag, elided(s), unquoteList(err, part))
		}
		if set.IsEmpty() {
			return nil, usageErrorf("%s %q: empty entry (want CPUs such as 0,1 or 0-3)", flag, elided(s))
		}
		if len(out)+set.Len() > barriers.MaxParticipants {
			return nil, usageErrorf("%s %q: more than %d CPUs (one per thread, at most %d threads)", flag, elided(s), barriers.MaxParticipants, barriers.MaxParticipants)
		}
		out = append(out, set.Members()...)
	}
	if !oversubscribe {
		sorted := slices.Sorted(slices.Values(out))
		for i := 1; i < len(sorted); i++ {
			if sorted[i] == sorted[i-1] {
				hint := "give each CPU once"
				if overFlag != "" {
					hint += ", or add " + overFlag
				}
				return nil, usageErrorf("%s %q: CPU %d is listed twice, which oversubscribes it (%s)", flag, elided(s), sorted[i], hint)
			}
		}
	}
	return out, nil
}

// unquoteList drops cpuset's `cpu list "PART": ` prefix, which repeats
// what the caller's message already names.
func unquoteList(err error, part string) string {
	msg := err.Error()
	return strings.TrimPrefix(msg, fmt.Sprintf("cpu list %q: ", elided(strings.TrimSpace(part))))
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// onCPUs is "CPU 3" or "CPUs 0-3": formatCPUs with the right noun.
func onCPUs(cpus []int) string {
	if len(cpus) == 1 {
		return "CPU " + cpuset.FormatList(cpus)
	}
	return "CPUs " + cpuset.FormatList(cpus)
}

// elided shortens a value an error quotes to text.MaxValue bytes, so that
// an error line never echoes a huge argument whole.
func elided(s string) string { return text.Elide(s, text.MaxValue) }

// algorithmNames resolves an --algorithm(s) list: every name known, none
// twice, or all.
func algorithmNames(flag string, given []string) ([]string, error) {
	if len(given) == 1 && strings.TrimSpace(given[0]) == "all" {
		return algname.All(), nil
	}
	var names []string
	for _, a := range given {
		a = strings.TrimSpace(a)
		if _, err := barriers.Lookup(a); err != nil {
			return nil, usageErrorf("%s: %v (or all)", flag, err)
		}
		if slices.Contains(names, a) {
			return nil, usageErrorf("%s %q: algorithm %q is given twice (want each once)", flag, elided(strings.Join(given, ",")), elided(a))
		}
		names = append(names, a)
	}
	if len(names) == 0 {
		return nil, usageErrorf("%s: empty list (want algorithms such as %s, or all)", flag, strings.Join(algname.All(), ","))
	}
	return names, nil
}
