package barriers

import (
	"reflect"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/barriertune/barriertune/internal/osal"
)

// TestAloneSharesNoLine: every algorithm's struct shares no cache line
// with the objects the allocator packs beside it. Objects of the struct's
// own size and of the padded allocation's size (with a pointer, as the
// structs have, so they come from the same spans) are allocated between
// barriers; none of them may share a line with a barrier's struct. An
// algorithm made with & instead of alone fails it. What the padding is
// for: see the benchmark of neighbours' writes below.
func TestAloneSharesNoLine(t *testing.T) {
	line := func(p uintptr) uintptr { return p &^ (osal.CacheLinePad - 1) }
	ptr := reflect.TypeFor[*int]()
	neighbourOf := func(size uintptr) reflect.Type {
		return reflect.StructOf([]reflect.StructField{
			{Name: "P", Type: ptr},
			{Name: "B", Type: reflect.ArrayOf(int(size)-8, reflect.TypeFor[byte]())},
		})
	}
	for _, a := range Algorithms() {
		t.Run(a.Name, func(t *testing.T) {
			type span struct{ lo, hi uintptr }
			var keep []any
			var bars, others []span
			for range 32 {
				b, err := New(a.Name, 4)
				if err != nil {
					t.Fatal(err)
				}
				v := reflect.ValueOf(b)
				if v.Kind() != reflect.Pointer {
					t.Fatalf("%s is a %s, not a pointer to its struct", a.Name, v.Kind())
				}
				size := v.Type().Elem().Size()
				p := v.Pointer()
				bars = append(bars, span{p, p + size})
				for _, s := range []uintptr{size, size + 2*osal.CacheLinePad} {
					n := reflect.New(neighbourOf(max(s, 16)))
					q := n.Pointer()
					others = append(others, span{q, q + n.Type().Elem().Size()})
					keep = append(keep, n.Interface())
				}
				keep = append(keep, b)
			}
			for _, b := range bars {
				for _, o := range others {
					if line(b.lo) <= line(o.hi-1) && line(o.lo) <= line(b.hi-1) {
						t.Fatalf("%s's struct at %#x-%#x shares a cache line with an object at %#x-%#x", a.Name, b.lo, b.hi, o.lo, o.hi)
					}
				}
			}
			runtime.KeepAlive(keep)
		})
	}
}

// TestAloneSlice: aloneSlice's elements share no cache line with slices
// of the same element type allocated around them (the same spans), of the
// slice's length and of its backing array's, for element sizes below, at
// and above a line, pointers or not, and n from 1 up; the slice is n zero
// elements with no room to append in place.
func TestAloneSlice(t *testing.T) {
	for _, n := range []int{1, 2, 3, 17, 100} {
		aloneSliceCheck[uint64](t, n)
		aloneSliceCheck[[3]int64](t, n)
		aloneSliceCheck[*int](t, n)
		aloneSliceCheck[hybridStep](t, n)
		aloneSliceCheck[[200]byte](t, n)
	}
	if s := aloneSlice[int](0); len(s) != 0 || cap(s) != 0 {
		t.Fatalf("aloneSlice[int](0): len %d cap %d", len(s), cap(s))
	}
}

func aloneSliceCheck[T comparable](t *testing.T, n int) {
	t.Helper()
	line := func(p uintptr) uintptr { return p &^ (osal.CacheLinePad - 1) }
	size := unsafe.Sizeof(*new(T))
	var zero T
	var keep [][]T
	for range 16 {
		s := aloneSlice[T](n)
		if len(s) != n || cap(s) != n || slices.ContainsFunc(s, func(v T) bool { return v != zero }) {
			t.Fatalf("aloneSlice[%T](%d): len %d cap %d, not all zero", zero, n, len(s), cap(s))
		}
		lo := uintptr(unsafe.Pointer(&s[0]))
		hi := lo + uintptr(n)*size
		keep = append(keep, s)
		for _, m := range []int{n, n + 2*int((osal.CacheLinePad+size-1)/size)} {
			o := make([]T, m)
			keep = append(keep, o)
			q := uintptr(unsafe.Pointer(&o[0]))
			if qh := q + uintptr(m)*size; line(lo) <= line(qh-1) && line(q) <= line(hi-1) {
				t.Fatalf("aloneSlice[%T](%d) at %#x-%#x shares a line with a slice at %#x-%#x", zero, n, lo, hi, q, qh)
			}
		}
	}
	runtime.KeepAlive(keep)
}

// neighbour is an object the size of a dissemination barrier's struct,
// with a pointer, so the allocator puts it in the spans an unpadded
// barrier would be in.
type neighbour struct {
	p *int
	b [unsafe.Sizeof(dissemination{}) - 8]byte
}

// besideNeighbour makes dissemination barriers for two participants,
// each followed by a neighbour, until a neighbour shares a cache line with
// its barrier's struct (at most 256 tries: where the struct is alone none
// does), and returns the last pair.
func besideNeighbour(pol Policy) (Barrier, *neighbour, error) {
	var keep []any // the pairs tried stay allocated while the search runs
	defer func() { runtime.KeepAlive(keep) }()
	line := func(p uintptr) uintptr { return p &^ (osal.CacheLinePad - 1) }
	for range 256 {
		bar, err := New("dissemination", 2, WithPolicy(pol))
		if err != nil {
			return nil, nil, err
		}
		nb := new(neighbour)
		lo := reflect.ValueOf(bar).Pointer()
		hi := lo + reflect.TypeOf(bar).Elem().Size()
		q := uintptr(unsafe.Pointer(nb))
		if line(lo) <= line(q+unsafe.Sizeof(*nb)-1) && line(q) <= line(hi-1) {
			return bar, nb, nil
		}
		keep = append(keep, bar, nb)
	}
	bar, err := New("dissemination", 2, WithPolicy(pol))
	return bar, new(neighbour), err
}

// BenchmarkNeighbour times two pinned threads on a dissemination barrier
// while participant 0 writes, between its waits, an object allocated
// beside the barrier (neighbour=write; besideNeighbour), and while nobody
// does (neighbour=none). With the barrier's struct alone on its lines the two
// read the same; with an object packed beside it the writes made every
// episode 2.3-2.6x slower on the EPYC guest.
func BenchmarkNeighbour(b *testing.B) {
	allowed, err := osal.Allowed()
	if err != nil || allowed.Len() < 2 {
		b.Skip("needs 2 allowed CPUs")
	}
	for _, write := range []bool{false, true} {
		name := "neighbour=none"
		if write {
			name = "neighbour=write"
		}
		b.Run(name, func(b *testing.B) {
			bar, nb, err := besideNeighbour(Spin)
			if err != nil {
				b.Fatal(err)
			}
			team, err := osal.NewTeam(allowed.Members()[:2])
			if err != nil {
				b.Fatal(err)
			}
			n := b.N
			b.ResetTimer()
			if err := team.Run(func(p int) {
				for e := 0; e < n; e++ {
					if write && p == 0 { // its first and last bytes: either may be beside the barrier
						nb.b[e&7]++
						nb.b[len(nb.b)-1-e&7]++
					}
					bar.Wait(p)
				}
			}); err != nil {
				b.Fatal(err)
			}
		})
	}
}
