package check

import (
	"strings"
	"testing"

	"github.com/barriertune/barriertune/results"
)

// TestBlockingNote: the note names the counts whose row names cond or
// channel, pinned apart from goroutines, and is empty without them.
func TestBlockingNote(t *testing.T) {
	row := func(n int, best, runner string, cpus []int, pinned bool) results.Threads {
		return results.Threads{Threads: n, Best: &results.Choice{Spec: results.Spec{Algorithm: best}, RunnerUp: runner, CPUs: cpus, Pinned: pinned}}
	}
	f := &results.File{Threads: []results.Threads{
		row(2, "dissemination", "cond", []int{0, 1}, true),
		row(3, "central", "mcs", []int{0, 1, 2}, true),
		row(4, "goroutine", "channel", []int{0, 1, 0, 1}, false),
		row(8, "cond", "goroutine", []int{0, 1, 0, 1, 0, 1, 0, 1}, false),
	}}
	got := BlockingNote(f)
	for _, want := range []string{"on pinned, locked OS threads at 2 threads", "as goroutines at 4, 8 threads", "sync.Cond"} {
		if !strings.Contains(got, want) {
			t.Errorf("note %q lacks %q", got, want)
		}
	}
	f.Threads = f.Threads[1:2]
	if got := BlockingNote(f); got != "" {
		t.Errorf("a note for a table without cond or channel: %q", got)
	}
}
