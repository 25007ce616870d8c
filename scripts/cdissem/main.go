// Command cdissem measures the best 2-thread barrier against a
// hand-written C dissemination barrier (csrc/dissem.c, built here with the
// system's cc -O2), interleaved: every round runs one sample of each, in
// turn, on the same pinned CPUs, so load that comes and goes hits all of
// them alike (within 5% on a quiet machine). The Go candidates
// are the tuned choice for the thread count (barriers.Tuned) with Spin and
// with AutoPolicy, and dissemination with Spin, in an order shuffled
// afresh every round; each sample runs
// -episodes episodes on a pinned team started for it, as the C program
// starts its threads per sample.
//
//	go run ./scripts/cdissem -cpus 0,1 -rounds 15
package main

import (
	"bytes"
	"cmp"
	_ "embed"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/scripts/internal/lab"
)

//go:embed csrc/dissem.c
var dissemC []byte

func main() {
	cpuList := flag.String("cpus", "0,1", "CPU of each pinned thread, in rank order")
	rounds := flag.Int("rounds", 15, "rounds (each runs one sample of every candidate)")
	episodes := flag.Int("episodes", 200000, "episodes per sample")
	flag.Parse()
	set, err := cpuset.ParseList(*cpuList)
	if err != nil || set.Len() < 2 || set.Len() > 64 || *rounds < 1 || *rounds > 1000 || *episodes < 1000 || *episodes > 1e8 {
		fmt.Fprintf(os.Stderr, "cdissem: want -cpus of 2..64 CPUs (got %q), -rounds 1..1000, -episodes 1000..1e8\n", *cpuList)
		os.Exit(2)
	}
	if err := run(set.Members(), *rounds, *episodes); err != nil {
		fmt.Fprintln(os.Stderr, "cdissem:", err)
		os.Exit(1)
	}
}

type candidate struct {
	name string
	make func() (barriers.Barrier, error) // nil: the C program
}

func run(cpus []int, rounds, episodes int) error {
	dir, err := os.MkdirTemp("", "cdissem")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := lab.CompileC("cc", dir, "dissem", dissemC, "-O2", "-pthread")
	if err != nil {
		return err
	}
	n := len(cpus)
	t := barriers.Tuned(n)
	tuned := t.Algorithm
	cands := []candidate{
		{"C dissemination", nil},
		{tuned + " spin (tuned)", func() (barriers.Barrier, error) { return t.New(barriers.WithPolicy(barriers.Spin)) }},
		{tuned + " auto (tuned)", func() (barriers.Barrier, error) { return t.New() }},
		{"dissemination spin", func() (barriers.Barrier, error) {
			return barriers.New("dissemination", n, barriers.WithPolicy(barriers.Spin))
		}},
	}
	list := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(cpus)), ","), "[]")
	ns := make([][]float64, len(cands))
	rng := rand.New(rand.NewPCG(uint64(rounds), 0x64697373)) // the same orders every run
	for r := 0; r < rounds; r++ {
		// The order is shuffled afresh every round: the candidate that ran
		// right after the C program (whose process the Go threads sat idle
		// through) read 5-10% slower than the same barrier elsewhere in
		// the round, every round, in a fixed or rotating order.
		for _, i := range rng.Perm(len(cands)) {
			c := cands[i]
			var v float64
			if c.make == nil {
				out, err := lab.Run(time.Minute, nil, false, bin, list, strconv.Itoa(episodes), "1")
				if err != nil {
					return fmt.Errorf("C dissemination: %v", err)
				}
				if v, err = strconv.ParseFloat(string(bytes.TrimSpace(out)), 64); err != nil {
					return fmt.Errorf("C dissemination printed %q", out)
				}
			} else {
				b, err := c.make()
				if err != nil {
					return err
				}
				if v, err = sample(b, cpus, episodes); err != nil {
					return err
				}
			}
			ns[i] = append(ns[i], v)
		}
	}
	fmt.Printf("%d threads pinned on CPUs %s, %d interleaved rounds of %d episodes; tuned choice %s (%s)\n", n, list, rounds, episodes, tuned, orFallback(t))
	fmt.Printf("%-28s %10s %10s %12s %14s\n", "barrier", "median ns", "min ns", "x C median", "paired x C")
	c := lab.Median(ns[0])
	paired := make([]float64, len(cands))
	for i, cd := range cands {
		paired[i] = pairedRatio(ns[i], ns[0])
		fmt.Printf("%-28s %10.1f %10.1f %11.3fx %13.3fx\n", cd.name, lab.Median(ns[i]), slices.Min(ns[i]), lab.Median(ns[i])/c, paired[i])
	}
	best := slices.MinFunc([]int{1, 2, 3}, func(a, b int) int { return cmp.Compare(paired[a], paired[b]) })
	r := paired[best]
	verdict := "holds"
	if r > 1.05 {
		verdict = "FAILS"
	}
	fmt.Printf("verdict: the best Go barrier (%s) is %.3fx the C dissemination barrier, the median of the rounds' ratios (target <= 1.05x): %s\n", cands[best].name, r, verdict)
	return nil
}

// pairedRatio is the median over rounds of a[r]/b[r]: each round's
// samples ran back to back, so a host that moves between rounds (the
// a VM's floor moves by 10-20% within minutes) cancels out.
func pairedRatio(a, b []float64) float64 {
	r := make([]float64, min(len(a), len(b)))
	for i := range r {
		r[i] = a[i] / b[i]
	}
	return lab.Median(r)
}

func orFallback(t barriers.Tuning) string {
	if t.Fallback != "" {
		return "fallback: " + t.Fallback
	}
	return "from " + t.Source
}

// sample runs episodes episodes of b on a team pinned on cpus, started
// for the sample, and returns ns per episode.
func sample(b barriers.Barrier, cpus []int, episodes int) (float64, error) {
	team, err := osal.NewTeam(cpus)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	err = team.Run(func(id int) {
		for range episodes + 1 {
			b.Wait(id)
		}
	})
	return float64(time.Since(start).Nanoseconds()) / float64(episodes), err
}
