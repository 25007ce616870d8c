package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/results"
)

// BlockingNote says, when the table of f names cond or channel, how the
// check ran them at each count: on pinned, locked OS threads where every thread
// had a CPU (a wake-up through the kernel, microseconds), else as
// goroutines, as a Go program meets sync.Cond (hundreds of ns); "" when
// the table names neither.
func BlockingNote(f *results.File) string {
	var pinned, goroutines []string
	for _, t := range f.Threads {
		b := t.Best
		if b == nil {
			continue
		}
		names := []string{b.Algorithm, b.RunnerUp}
		if t.Robust != nil {
			names = append(names, t.Robust.Algorithm)
		}
		if !slices.ContainsFunc(names, func(n string) bool { return catalog.Blocks(n) }) {
			continue
		}
		if !b.Pinned || cpuset.Placement(b.CPUs).Oversubscribed() {
			goroutines = append(goroutines, fmt.Sprint(t.Threads))
		} else {
			pinned = append(pinned, fmt.Sprint(t.Threads))
		}
	}
	var ran []string
	if len(pinned) > 0 {
		ran = append(ran, "on pinned, locked OS threads at "+strings.Join(pinned, ", ")+" threads, where each wake-up goes through the kernel (microseconds)")
	}
	if len(goroutines) > 0 {
		ran = append(ran, "as goroutines at "+strings.Join(goroutines, ", ")+" threads, as a Go program's goroutines meet sync.Cond (hundreds of ns)")
	}
	if len(ran) == 0 {
		return ""
	}
	return "cond and channel ran " + strings.Join(ran, "; ") + ": compare a Go program's Cond with the goroutine rows"
}
