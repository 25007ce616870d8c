//go:build linux

package check

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/results"
)

// TestCheckNeverReadsAResultsFile: a live check builds every barrier it
// measures with an explicit wait policy (Measurer.Policy for the
// candidates, measure's control barrier, the floor's spin), so it never
// reads a results file while it is about to write one. barriers'
// AutoPolicy would: it bounds its spin by the block and wake-up cost of
// the file the lookup finds, through a process-wide cache.
// $BARRIERTUNE_RESULTS names a file watched with inotify: the check,
// whose counts include threads sharing a CPU, must not open it, and
// barriers.Tuned, which reads it, must (the watch works).
func TestCheckNeverReadsAResultsFile(t *testing.T) {
	topo := liveTopo(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "results.json")
	f := &results.File{Schema: results.Schema, Machine: CurrentMachine(topo), BlockWakeNs: 150_000}
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(results.ResultsEnv, path)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_CONFIG_DIRS", "")
	// Tuned caches a lookup per value of these variables: this path is new,
	// so what an earlier test cached is not this lookup.

	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Skip("no inotify:", err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, path, unix.IN_OPEN|unix.IN_ACCESS); err != nil {
		t.Skip("no inotify watch:", err)
	}
	opened := func() bool {
		var buf [4096]byte
		n, err := unix.Read(fd, buf[:])
		return err == nil && n > 0
	}

	npus := len(topo.PUs())
	cfg := Config{Topology: topo, Threads: []int{2, 2 * npus}, Algorithms: []string{"central", "dissemination"},
		Budget: 3 * time.Second, SampleTarget: 20 * time.Microsecond}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if opened() {
		t.Fatal("the check opened the results file $BARRIERTUNE_RESULTS names: a barrier it measured with reads one")
	}
	barriers.Tuned(2)
	if !opened() {
		t.Fatal("barriers.Tuned did not open the watched results file: the watch sees nothing, and the test proves nothing")
	}
}
