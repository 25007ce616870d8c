// Package workload is what the barriers' tests and the lab programs run
// around a barrier the way programs do: a one-dimensional stencil whose
// participants each own a block of cells, and the textbook sync.Cond
// barrier a new Go user writes, the baseline Auto is held to.
package workload

import "sync"

// Stencil is the grid: two buffers of n·cells cells plus a fixed boundary
// cell at each end (1 on the left, -1 on the right). Participant p owns
// cells 1+p·cells to (p+1)·cells; step t reads buffer t%2 and writes
// buffer (t+1)%2, so a barrier between steps is all it needs.
type Stencil struct {
	buf   [2][]float64
	cells int
}

// NewStencil returns the grid of n participants' blocks of cells cells.
func NewStencil(n, cells int) *Stencil {
	s := &Stencil{cells: cells}
	for i := range s.buf {
		s.buf[i] = make([]float64, n*cells+2)
		s.buf[i][0], s.buf[i][n*cells+1] = 1, -1
	}
	return s
}

// Step computes participant p's cells of step t: each the mean of itself
// and its two neighbours in buffer t%2, written to buffer (t+1)%2.
func (s *Stencil) Step(p, t int) {
	src, dst := s.buf[t&1], s.buf[(t+1)&1]
	for i := 1 + p*s.cells; i <= (p+1)*s.cells; i++ {
		dst[i] = (src[i-1] + src[i] + src[i+1]) * (1.0 / 3)
	}
}

// After returns the grid after steps steps (the buffer step steps wrote),
// for comparing runs.
func (s *Stencil) After(steps int) []float64 { return s.buf[steps&1] }

// CondBarrier is the sync.Mutex and sync.Cond generation barrier: the
// textbook barrier a Go programmer writes.
type CondBarrier struct {
	mu    sync.Mutex
	cond  *sync.Cond
	n, in int
	gen   uint64
}

// NewCondBarrier returns the barrier of n participants.
func NewCondBarrier(n int) *CondBarrier {
	b := &CondBarrier{n: n}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// Wait blocks until all n participants have called it in this episode;
// the id is ignored (the barriers' Wait signature).
func (b *CondBarrier) Wait(int) {
	b.mu.Lock()
	g := b.gen
	if b.in++; b.in == b.n {
		b.in = 0
		b.gen++
		b.cond.Broadcast()
	} else {
		for g == b.gen {
			b.cond.Wait()
		}
	}
	b.mu.Unlock()
}
