package barriers

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/barriertune/barriertune/internal/osal"
)

var stressCounts = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 17, 31, 32, 33, 64}

func episodes(t *testing.T, n int) int {
	e := 300
	if testing.Short() {
		e = 40
	}
	if n > 16 {
		e /= 2
	}
	return e
}

// checkBarrier runs n goroutines through eps episodes of b with random
// delays and checks, after every Wait of episode e:
//   - every participant has entered episode e (nobody leaves early);
//   - every participant has completed episode e-1 and none has completed
//     episode e+1 (nobody is two episodes ahead);
//   - every participant's payload written before its Wait is visible
//     (plain memory, so the race detector checks the happens-before edge).
func checkBarrier(t *testing.T, b Barrier, n, eps int, seed int64) {
	t.Helper()
	entered := make([]atomic.Int32, eps)
	done := make([]atomic.Int64, n) // episodes completed per participant
	var payload [2][]int64
	payload[0], payload[1] = make([]int64, n), make([]int64, n)
	var failures atomic.Int32
	var first sync.Once
	var firstMsg string
	fail := func(format string, args ...any) {
		failures.Add(1)
		first.Do(func() { firstMsg = fmt.Sprintf(format, args...) })
	}
	var wg sync.WaitGroup
	for id := 0; id < n; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed + int64(id)))
			for e := 0; e < eps; e++ {
				switch rng.Intn(8) {
				case 0:
					runtime.Gosched()
				case 1:
					for i := rng.Intn(2000); i > 0; i-- {
						osal.Relax()
					}
				}
				payload[e%2][id] = int64(e*n + id)
				entered[e].Add(1)
				b.Wait(id)
				if got := entered[e].Load(); got != int32(n) {
					fail("participant %d left episode %d when only %d of %d had entered", id, e, got, n)
				}
				for j := 0; j < n; j++ {
					if d := done[j].Load(); d < int64(e) || d > int64(e)+1 {
						fail("after episode %d, participant %d has completed %d episodes", e, j, d)
					}
					if got := payload[e%2][j]; got != int64(e*n+j) {
						fail("episode %d: participant %d sees payload %d of participant %d, want %d", e, id, got, j, e*n+j)
					}
				}
				done[id].Add(1)
			}
		}()
	}
	wg.Wait()
	if failures.Load() > 0 {
		t.Fatalf("%d violations; first: %s", failures.Load(), firstMsg)
	}
}

func TestStressAllAlgorithms(t *testing.T) {
	for _, a := range Algorithms() {
		for _, n := range stressCounts {
			t.Run(fmt.Sprintf("%s/n=%d", a.Name, n), func(t *testing.T) {
				b, err := a.New(n)
				if err != nil {
					t.Fatal(err)
				}
				if b.N() != n {
					t.Fatalf("N() = %d, want %d", b.N(), n)
				}
				checkBarrier(t, b, n, episodes(t, n), int64(n))
			})
		}
	}
}

// TestPolicies runs every spinning algorithm under each explicit policy.
// Pure spin runs only where the participants fit GOMAXPROCS: beyond that it
// still progresses (Go preempts spinners) but at milliseconds per episode.
func TestPolicies(t *testing.T) {
	for _, a := range Algorithms() {
		if !a.Spins {
			continue
		}
		for _, p := range []Policy{Spin, Yield, Park} {
			for _, n := range []int{2, 3, 5, 8, 17} {
				if p == Spin && osal.Oversubscribed(n) {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/n=%d", a.Name, p, n), func(t *testing.T) {
					b, err := a.New(n, WithPolicy(p), WithSpinBudget(8))
					if err != nil {
						t.Fatal(err)
					}
					checkBarrier(t, b, n, episodes(t, n), 99)
				})
			}
		}
	}
}

// TestFanIn exercises the tree algorithms with other fan-ins.
func TestFanIn(t *testing.T) {
	for _, name := range []string{"combining", "static-tree", "all-static-tree"} {
		for _, k := range []int{2, 3, 8} {
			for _, n := range []int{5, 17, 33} {
				t.Run(fmt.Sprintf("%s/k=%d/n=%d", name, k, n), func(t *testing.T) {
					b, err := New(name, n, WithFanIn(k))
					if err != nil {
						t.Fatal(err)
					}
					checkBarrier(t, b, n, episodes(t, n), int64(k))
				})
			}
		}
	}
}

// TestPinnedOversubscribed runs locked, pinned OS threads, more of them than
// CPUs, with the default policy: every algorithm must complete.
func TestPinnedOversubscribed(t *testing.T) {
	allowed, err := osal.Allowed()
	if err != nil {
		t.Skip(err)
	}
	n := 4 * allowed.Len()
	team, err := osal.NewTeam(osal.RoundRobin(n, allowed))
	if err != nil {
		t.Skip(err)
	}
	eps := 50
	if testing.Short() {
		eps = 10
	}
	for _, a := range Algorithms() {
		t.Run(a.Name, func(t *testing.T) {
			b, err := a.New(n)
			if err != nil {
				t.Fatal(err)
			}
			var count atomic.Int64
			err = team.Run(func(rank int) {
				for e := 0; e < eps; e++ {
					b.Wait(rank)
					count.Add(1)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if count.Load() != int64(n*eps) {
				t.Fatalf("%d waits completed, want %d", count.Load(), n*eps)
			}
		})
	}
}

func TestConstructorErrors(t *testing.T) {
	for _, a := range Algorithms() {
		for _, n := range []int{0, -3} {
			if _, err := a.New(n); err == nil || !strings.Contains(err.Error(), "at least 1 participant") {
				t.Errorf("%s.New(%d) error = %v", a.Name, n, err)
			}
		}
		if _, err := a.New(4, WithFanIn(1)); err == nil {
			t.Errorf("%s: fan-in 1 accepted", a.Name)
		}
		if _, err := a.New(4, WithPolicy(Policy(9))); err == nil {
			t.Errorf("%s: policy 9 accepted", a.Name)
		}
	}
	if _, err := New("fastest", 2); err == nil || !strings.Contains(err.Error(), `"fastest"`) || !strings.Contains(err.Error(), "dissemination") {
		t.Errorf("New(fastest) error = %v, want the name and the accepted list", err)
	}
	if _, err := ParsePolicy("busy"); err == nil || !strings.Contains(err.Error(), "spin") {
		t.Errorf("ParsePolicy(busy) = %v", err)
	}
}

func TestBadIDPanics(t *testing.T) {
	for _, a := range Algorithms() {
		b, _ := a.New(3)
		for _, id := range []int{-1, 3} {
			func() {
				defer func() {
					r := recover()
					if r == nil || !strings.Contains(fmt.Sprint(r), fmt.Sprintf("Wait(%d)", id)) {
						t.Errorf("%s.Wait(%d) recovered %v, want a panic naming the id", a.Name, id, r)
					}
				}()
				b.Wait(id)
			}()
		}
	}
}

func TestPolicyNames(t *testing.T) {
	for _, p := range []Policy{AutoPolicy, Spin, Yield, Park} {
		back, err := ParsePolicy(p.String())
		if err != nil || back != p {
			t.Errorf("ParsePolicy(%q) = %v, %v", p, back, err)
		}
	}
}

// self gives the tests the base of any algorithm that embeds it.
func (b *base) self() *base { return b }

// TestHotWordsAligned checks that every flag, shared counter and spin bound
// of every flag algorithm, whatever n and policy, lives outside the
// algorithm's struct and starts its cache line: at its start, or 8 bytes
// in, after the header Go's allocator puts before an object of more than
// 512 bytes that holds pointers (a slice of five or more flags). A hot word
// that shares its line with read-mostly fields makes the participants miss
// on them after every write (newFlags says what that cost).
func TestHotWordsAligned(t *testing.T) {
	type build struct {
		name string
		opts []Option
	}
	var builds []build
	for _, a := range Algorithms() {
		if a.Spins { // the blocking baselines have no flags
			builds = append(builds, build{name: a.Name})
		}
	}
	// A hybrid of two levels: its own release flags and its sub-barriers'.
	specs, err := ParseHierarchy("core:static-tree, package:central")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []Policy{Spin, AutoPolicy, Park} {
		for n := 1; n <= 40; n++ {
			keys := [][]int{make([]int, n), make([]int, n)}
			for i := range n {
				keys[0][i], keys[1][i] = i/2, i/8
			}
			levels, err := Hierarchy(specs).Grouped(keys)
			if err != nil {
				t.Fatal(err)
			}
			for _, bd := range append(builds, build{"hybrid", []Option{WithHierarchy(levels)}}) {
				b, err := New(bd.name, n, append(bd.opts, WithPolicy(p))...)
				if err != nil {
					t.Fatalf("%s(%d): %v", bd.name, n, err)
				}
				checkHotWords(t, fmt.Sprintf("%s(%d, %v)", bd.name, n, p), b, n)
			}
		}
	}
}

// checkHotWords checks b's hot words (see TestHotWordsAligned), and those
// of its sub-barriers when it is a hybrid.
func checkHotWords(t *testing.T, what string, b Barrier, n int) {
	t.Helper()
	const line, header = 64, 8
	h, ok := b.(interface{ self() *base })
	if !ok {
		return // goroutine: its hot words are padded fields of its own
	}
	bs := h.self()
	var words []uintptr
	for _, fs := range bs.flagSets {
		for i := range fs {
			words = append(words, uintptr(unsafe.Pointer(&fs[i])))
		}
	}
	for _, c := range bs.counters {
		words = append(words, uintptr(unsafe.Pointer(c)))
	}
	if bs.w.adapt != nil {
		words = append(words, uintptr(unsafe.Pointer(bs.w.adapt)))
	}
	subs := 0
	if hy, ok := b.(*hybrid); ok {
		for _, sub := range hy.subs {
			checkHotWords(t, what+" sub-barrier", sub, sub.N())
			subs++
		}
	}
	if len(words) == 0 && subs == 0 && n > 1 {
		t.Errorf("%s registers no flag or counter", what)
	}
	start := reflect.ValueOf(b).Pointer()
	end := start + reflect.TypeOf(b).Elem().Size()
	for _, w := range words {
		if w >= start && w < end {
			t.Fatalf("%s: a hot word is embedded in the struct (offset %d)", what, w-start)
		}
		if w%line > header {
			t.Fatalf("%s: a hot word at %#x is %d bytes into its cache line (want 0 or %d)", what, w, w%line, header)
		}
	}
}

// TestFlagLayout guards what flag.word relies on, and the padding.
func TestFlagLayout(t *testing.T) {
	var f flag
	if unsafe.Offsetof(f.v) != 0 {
		t.Fatalf("flag.v at offset %d, want 0", unsafe.Offsetof(f.v))
	}
	if unsafe.Sizeof(f)%osal.CacheLinePad != 0 || unsafe.Sizeof(slot{}) != osal.CacheLinePad {
		t.Fatalf("flag is %d bytes and slot %d: want multiples of %d", unsafe.Sizeof(f), unsafe.Sizeof(slot{}), osal.CacheLinePad)
	}
	// The setter's load of parked must not wait for the value's line, and
	// values sit 256 bytes apart (see flag).
	if unsafe.Offsetof(f.parked) < osal.CacheLinePad/2 || unsafe.Sizeof(f) != 2*osal.CacheLinePad {
		t.Fatalf("flag.parked at offset %d of %d: want it past the value's 64-byte line, in a 256-byte flag", unsafe.Offsetof(f.parked), unsafe.Sizeof(f))
	}
	f.set(7, &waiter{policy: Spin})
	if f.v.Load() != 7 || *f.word() != 7 {
		t.Fatal("set does not store into v")
	}
}

// TestNewRefusesTooManyParticipants: New names the cap and allocates
// nothing for a count beyond it (a huge count would otherwise allocate
// its slots first).
func TestNewRefusesTooManyParticipants(t *testing.T) {
	for _, a := range Algorithms() {
		for _, n := range []int{MaxParticipants + 1, math.MaxInt} {
			if _, err := a.New(n); err == nil || !strings.Contains(err.Error(), "65536") {
				t.Errorf("%s: New(%d) = %v, want an error naming the cap", a.Name, n, err)
			}
		}
	}
}
