//go:build sharing

package barriers

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/barriertune/barriertune/results"
)

// hogLimit bounds a competing process's life, in case the test that
// started it dies before killing it.
const hogLimit = 20 * time.Second

// TestCompetingWorkChild is the competing CPU-bound work of
// TestUnpinnedWithCompetingWork: it spins until killed (or hogLimit).
func TestCompetingWorkChild(t *testing.T) {
	if os.Getenv("BARRIERTUNE_TEST_HOG") != "1" {
		t.Skip("the competing work of TestUnpinnedWithCompetingWork")
	}
	x := 0
	for start := time.Now(); time.Since(start) < hogLimit; {
		for i := 0; i < 1_000_000; i++ {
			x += i
		}
	}
	_ = x
}

// TestUnpinnedWithCompetingWork reproduces the shape that cost issue 47's
// 16-CPU guest 4-16x a sync.Cond barrier: one unpinned goroutine per P
// (GOMAXPROCS of them) calling Auto(n).Wait, with a results file that
// says dissemination measured with spin on pinned threads, while as many
// CPU-bound processes as CPUs compete. Auto's episodes, timed in rounds
// interleaved with the cond baseline's, must stay within twice cond's in
// the median round and four times in the worst. Behind the sharing build
// tag (go test -tags sharing -run TestUnpinnedWithCompetingWork
// ./barriers/): on this 2-CPU guest, loaded by other builds, the median
// ratio ranged 1.0-3.3x over a dozen invocations and one read 10.8x, so it
// is not yet robust enough to gate CI.
func TestUnpinnedWithCompetingWork(t *testing.T) {
	if testing.Short() {
		t.Skip("about 2 s of timed rounds")
	}
	n := runtime.GOMAXPROCS(0)
	if n < 2 || runtime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs and GOMAXPROCS >= 2: one goroutine per P, at least two")
	}
	path := writeResults(t, func(f *results.File) {
		c := f.Threads[0].Best
		c.Spec = results.Spec{Algorithm: "dissemination", Policy: "spin"}
		f.Threads[0].Threads = min(n, len(c.CPUs))
	})
	t.Setenv(results.ResultsEnv, path)
	n = min(n, Tuned(n).Threads)
	if tu := Tuned(n); tu.Algorithm != "dissemination" || tu.Source != path {
		t.Skipf("the results file does not apply here: Tuned(%d) = %s from %q", n, tu.Algorithm, tu.Source)
	}
	for range runtime.NumCPU() {
		hog := exec.Command(os.Args[0], "-test.run=^TestCompetingWorkChild$")
		hog.Env = append(os.Environ(), "BARRIERTUNE_TEST_HOG=1")
		if err := hog.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { hog.Process.Kill(); hog.Wait() })
	}
	time.Sleep(50 * time.Millisecond) // the competing work is running
	const rounds, eps = 5, 4000
	var auto, cond []float64
	for range rounds {
		a, err := Auto(n)
		if err != nil {
			t.Fatal(err)
		}
		c, err := New("cond", n)
		if err != nil {
			t.Fatal(err)
		}
		auto = append(auto, perEpisode(a, n, eps))
		cond = append(cond, perEpisode(c, n, eps))
	}
	slices.Sort(auto)
	slices.Sort(cond)
	med, worst := auto[rounds/2]/cond[rounds/2], auto[rounds-1]/cond[rounds-1]
	t.Logf("%d goroutines, %d competing processes: Auto %v ns, cond %v ns per episode; median ratio %.2f, worst %.2f",
		n, runtime.NumCPU(), auto, cond, med, worst)
	if med > 2 || worst > 4 {
		t.Errorf("Auto(%d) on unpinned goroutines with competing work: %.2fx cond in the median round, %.2fx in the worst (want at most 2x and 4x)", n, med, worst)
	}
}

// perEpisode runs n goroutines through eps episodes of b and returns the
// ns per episode.
func perEpisode(b Barrier, n, eps int) float64 {
	var wg sync.WaitGroup
	start := time.Now()
	for id := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range eps {
				b.Wait(id)
			}
		}()
	}
	wg.Wait()
	return float64(time.Since(start).Nanoseconds()) / float64(eps)
}
