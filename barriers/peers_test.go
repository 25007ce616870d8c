package barriers

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/marusama/cyclicbarrier"

	"github.com/barriertune/barriertune/internal/workload"
)

// This file times this package's barriers against what Go programmers use
// today, in one harness: the textbook barriers below (written the way the
// Go literature and answers write them) and github.com/marusama/cyclicbarrier.
// Run, benchstat-ready:
//
//	go test -run '^$' -bench Peers -count 10 ./barriers | benchstat -col /impl -
//
// (docs/algorithms.md, "Measured: BenchmarkPeers", has the interleaved
// runs at GOMAXPROCS 2 and 1 and the factors over the best textbook
// barrier.)
//
// Every implementation is reached through the same interface call, by n
// plain (unpinned) goroutines each looping Wait; ns/op is ns per episode.

// peerBarrier is what the harness calls.
type peerBarrier interface{ Wait(id int) }

// textbookChan is the mutex + close(chan) barrier: a fresh channel per
// episode, closed by the last arrival.
type textbookChan struct {
	mu    sync.Mutex
	n     int
	count int
	ch    chan struct{}
}

func newTextbookChan(n int) *textbookChan { return &textbookChan{n: n, ch: make(chan struct{})} }

func (b *textbookChan) Wait(int) {
	b.mu.Lock()
	ch := b.ch
	b.count++
	if b.count == b.n {
		b.count = 0
		b.ch = make(chan struct{})
		b.mu.Unlock()
		close(ch)
		return
	}
	b.mu.Unlock()
	<-ch
}

// textbookWaitGroup is the sync.WaitGroup barrier: every episode has a
// WaitGroup of n; each participant calls Done and Wait on it.
type textbookWaitGroup struct {
	mu    sync.Mutex
	n     int
	count int
	wg    *sync.WaitGroup
}

func newTextbookWaitGroup(n int) *textbookWaitGroup {
	b := &textbookWaitGroup{n: n, wg: new(sync.WaitGroup)}
	b.wg.Add(n)
	return b
}

func (b *textbookWaitGroup) Wait(int) {
	b.mu.Lock()
	wg := b.wg
	b.count++
	if b.count == b.n {
		b.count = 0
		b.wg = new(sync.WaitGroup)
		b.wg.Add(b.n)
	}
	b.mu.Unlock()
	wg.Done()
	wg.Wait()
}

// cyclic adapts marusama/cyclicbarrier.
type cyclic struct{ b cyclicbarrier.CyclicBarrier }

func (c cyclic) Wait(int) {
	if err := c.b.Await(context.Background()); err != nil {
		panic(err)
	}
}

// peer is one implementation the harness times.
type peer struct {
	name string
	make func(n int) (peerBarrier, error)
}

func catalogPeer(name string, opts ...Option) peer {
	return peer{name, func(n int) (peerBarrier, error) { return New(name, n, opts...) }}
}

func peers() []peer {
	return []peer{
		{"cond", func(n int) (peerBarrier, error) { return workload.NewCondBarrier(n), nil }},
		{"chan", func(n int) (peerBarrier, error) { return newTextbookChan(n), nil }},
		{"waitgroup", func(n int) (peerBarrier, error) { return newTextbookWaitGroup(n), nil }},
		{"cyclicbarrier", func(n int) (peerBarrier, error) { return cyclic{cyclicbarrier.New(n)}, nil }},
		// What Auto(n) gives plain goroutines when no results file
		// applies (always, for n > GOMAXPROCS, unless the check measured
		// exactly n): goroutine when oversubscribed, else dissemination,
		// both with AutoPolicy.
		{"auto", func(n int) (peerBarrier, error) { return fallback(n, "benchmark").New() }},
		catalogPeer("goroutine"),
		catalogPeer("central"),
		catalogPeer("dissemination"),
	}
}

// runPeers has n goroutines pass episodes episodes of b.
func runPeers(b peerBarrier, n, episodes int) {
	var wg sync.WaitGroup
	wg.Add(n)
	for id := 0; id < n; id++ {
		go func() {
			defer wg.Done()
			for i := 0; i < episodes; i++ {
				b.Wait(id)
			}
		}()
	}
	wg.Wait()
}

// BenchmarkPeers reports ns per episode for each implementation at n = 2
// (fits two Ps), 3, 4, 8, 16 and 64 plain goroutines.
func BenchmarkPeers(b *testing.B) {
	for _, p := range peers() {
		for _, n := range []int{2, 3, 4, 8, 16, 64} {
			b.Run(fmt.Sprintf("impl=%s/n=%d", p.name, n), func(b *testing.B) {
				bar, err := p.make(n)
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				runPeers(bar, n, b.N)
			})
		}
	}
}

// TestPeersAgree runs every implementation of the harness through the
// same stress check as the catalog, so the textbook barriers that the
// benchmark compares against are correct barriers.
func TestPeersAgree(t *testing.T) {
	for _, p := range peers() {
		for _, n := range []int{1, 2, 3, 8} {
			t.Run(fmt.Sprintf("%s/n=%d", p.name, n), func(t *testing.T) {
				bar, err := p.make(n)
				if err != nil {
					t.Fatal(err)
				}
				checkBarrier(t, peerAsBarrier{bar, n}, n, episodes(t, n), 7)
			})
		}
	}
}

type peerAsBarrier struct {
	peerBarrier
	n int
}

func (p peerAsBarrier) N() int { return p.n }

// The stress check calls only Wait and N; the rest of the interface is
// here so that peers pass for a Barrier.
func (p peerAsBarrier) WaitContext(context.Context, int) error { panic("not a catalog barrier") }
func (p peerAsBarrier) Break()                                 { panic("not a catalog barrier") }
func (p peerAsBarrier) Reset()                                 { panic("not a catalog barrier") }
