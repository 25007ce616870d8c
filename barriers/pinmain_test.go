package barriers

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"

	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/results"
)

// pinMainEnv makes this test binary (in TestMain, on the main goroutine,
// so on the process's main thread) pin its main thread to the CPU it
// holds ("" or "-" pins nothing), then print what Tuned(2), Auto(2) and
// the tuning's Team chose, as JSON, and exit.
const pinMainEnv = "BARRIERTUNE_TEST_PINMAIN"

// mainChoice is what tunedOnMainThread prints.
type mainChoice struct {
	Algorithm, Rule, Fallback, Auto string
	CPUs                            []int
	TeamPinned                      bool
	Allowed                         string
}

// tunedOnMainThread is the program the pinned-main-thread test runs: as
// a user's program would, it locks the main goroutine to the main thread
// and pins that thread to one CPU before asking for a barrier.
func tunedOnMainThread(v string) int {
	runtime.LockOSThread()
	if v != "-" {
		cpu, err := strconv.Atoi(v)
		if err == nil {
			err = osal.Pin(cpu)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "pinning the main thread:", err)
			return 2
		}
		if !osal.ThreadPinned() {
			fmt.Fprintln(os.Stderr, "the main thread is not pinned")
			return 2
		}
	}
	tu := Tuned(2)
	c := mainChoice{Algorithm: tu.Algorithm, Rule: tu.Rule, Fallback: tu.Fallback, CPUs: tu.CPUs}
	if b, err := Auto(2); err == nil {
		c.Auto = fmt.Sprintf("%T", b)
	} else {
		c.Auto = err.Error()
	}
	if team, err := tu.Team(); err == nil {
		c.TeamPinned = team.Pinned()
	}
	if a, err := osal.Allowed(); err == nil {
		c.Allowed = a.String()
	}
	if err := json.NewEncoder(os.Stdout).Encode(c); err != nil {
		return 2
	}
	return 0
}

// TestPinnedMainThreadChoosesAsUnpinned: a program that pins its main
// thread to one CPU before barriers.Tuned(2) gets the choice an unpinned
// one gets (the process's CPUs, not the calling thread's affinity): the
// recorded winner on two CPUs, not the oversubscribed goroutine barrier
// on one. Each runs as this test binary re-executed, with GOMAXPROCS=2
// and a results file for this machine.
func TestPinnedMainThreadChoosesAsUnpinned(t *testing.T) {
	path := writeResults(t, nil)
	cpu := allowedCPUs(t)[0]
	run := func(pin string) mainChoice {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), pinMainEnv+"="+pin, results.ResultsEnv+"="+path, "GOMAXPROCS=2")
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("pin %s: %v: %s", pin, err, stderr)
		}
		var c mainChoice
		if err := json.Unmarshal(out, &c); err != nil {
			t.Fatalf("pin %s: %v in %q", pin, err, out)
		}
		return c
	}
	free, pinned := run("-"), run(strconv.Itoa(cpu))
	t.Logf("unpinned: %+v; main thread on CPU %d: %+v", free, cpu, pinned)
	if free.Algorithm != "mcs" || free.Rule != results.Measured || len(free.CPUs) != 2 || !free.TeamPinned {
		t.Fatalf("unpinned: %+v, want the recorded mcs on two pinned CPUs", free)
	}
	if fmt.Sprint(pinned) != fmt.Sprint(free) {
		t.Errorf("with the main thread pinned to CPU %d: %+v; unpinned: %+v", cpu, pinned, free)
	}
}
