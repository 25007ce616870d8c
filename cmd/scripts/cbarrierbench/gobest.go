package main

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/internal/capped"
)

// goChildEnv, set in a child's environment, makes cbarrierbench the Go
// candidate instead: THREADS - EPISODES SAMPLES, as bench.c takes them.
const goChildEnv = "CBARRIERBENCH_GO_CHILD"

// goBest is the Go library's candidate: THREADS unpinned goroutines, as Go
// programs run them, through every barrier of the catalog that builds for
// THREADS (and barriers.Auto's choice); a pilot of 200 episodes drops those
// more than 2x slower than the fastest, and each sample is the fastest
// remaining one's ns per episode. The best algorithm is named on stderr.
func goBest(args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("go child: want THREADS - EPISODES SAMPLES, got %q", args)
	}
	n, err1 := strconv.Atoi(args[0])
	episodes, err2 := strconv.Atoi(args[2])
	samples, err3 := strconv.Atoi(args[3])
	if err1 != nil || err2 != nil || err3 != nil || n < 1 || n > 4096 || episodes < 1 || samples < 1 {
		return fmt.Errorf("go child: bad arguments %q", args)
	}
	type cand struct {
		name string
		b    barriers.Barrier
	}
	var cs []cand
	if b, err := barriers.Auto(n); err == nil {
		cs = append(cs, cand{"Auto", b})
	}
	for _, a := range barriers.Algorithms() {
		if b, err := a.New(n); err == nil {
			cs = append(cs, cand{a.Name, b})
		}
	}
	pilot := make([]float64, len(cs))
	for i, c := range cs {
		pilot[i] = timeGo(c.b, n, 200)
	}
	best := slices.Min(pilot)
	var keep []cand
	for i, c := range cs {
		if pilot[i] <= 2*best {
			keep = append(keep, c)
		}
	}
	for range samples {
		v, who := 0.0, ""
		for _, c := range keep {
			if t := timeGo(c.b, n, episodes); who == "" || t < v {
				v, who = t, c.name
			}
		}
		fmt.Printf("%.2f\n", v)
		fmt.Fprintf(os.Stderr, "go: best %s\n", who)
	}
	return nil
}

// timeGo runs episodes episodes of b with n goroutines and returns ns
// per episode.
func timeGo(b barriers.Barrier, n, episodes int) float64 {
	var wg sync.WaitGroup
	start := make(chan struct{})
	var t0 time.Time
	for id := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range episodes {
				b.Wait(id)
			}
		}()
	}
	t0 = time.Now()
	close(start)
	wg.Wait()
	return float64(time.Since(t0).Nanoseconds()) / float64(episodes)
}

// maxHeader caps a prebuilt header's size (an exported one is about 100
// KiB; a machine's table of hybrids adds a few hundred more).
const maxHeader = 16 << 20

// readHeader reads a prebuilt header given by -header: a regular file of
// at most maxHeader bytes (capped's checks) that is barriertune's.
func readHeader(path string) ([]byte, error) {
	const hint = "want the barriertune.h that `barriertune export --format c-barrier` writes"
	b, err := capped.File{What: "-header", Hint: hint, Limit: maxHeader}.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(b, []byte("#ifndef BARRIERTUNE_H")) || !bytes.Contains(b, []byte("barriertune_barrier_wait")) {
		return nil, fmt.Errorf("-header %s is not a barriertune.h (%s)", path, hint)
	}
	return b, nil
}
