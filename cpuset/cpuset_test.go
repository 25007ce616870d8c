package cpuset

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

func TestParseListAndString(t *testing.T) {
	for in, want := range map[string]string{
		"":              "",
		"0":             "0",
		"0-3,8,10-11\n": "0-3,8,10-11",
		"5,1,2,3":       "1-3,5",
		" 0 - 1 , 64 ":  "0-1,64",
	} {
		s, err := ParseList(in)
		if err != nil {
			t.Fatalf("ParseList(%q): %v", in, err)
		}
		if s.String() != want {
			t.Errorf("ParseList(%q) = %q, want %q", in, s, want)
		}
	}
	for _, bad := range []string{"a", "3-1", "-1", "1-", "99999999"} {
		if _, err := ParseList(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseList(%q) error = %v, want one quoting the input", bad, err)
		}
	}
}

func TestParseMask(t *testing.T) {
	for in, want := range map[string]string{
		"00000000,00001c07":          "0-2,10-12",
		"ff":                         "0-7",
		"0x000000ff":                 "0-7",
		"0000,00000088,88888888":     "3,7,11,15,19,23,27,31,35,39",
		"00000001,00000000,00000000": "64",
		"":                           "",
		"0":                          "",
	} {
		s, err := ParseMask(in)
		if err != nil {
			t.Fatalf("ParseMask(%q): %v", in, err)
		}
		if s.String() != want {
			t.Errorf("ParseMask(%q) = %q, want %q", in, s, want)
		}
	}
	if _, err := ParseMask("xyz"); err == nil {
		t.Error("ParseMask(xyz) must fail")
	}
}

// TestOperationsAgainstMaps checks the set algebra against map-based sets.
func TestOperationsAgainstMaps(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	gen := func() (Set, map[int]bool) {
		m := map[int]bool{}
		var v []int
		for i := 0; i < rng.Intn(20); i++ {
			c := rng.Intn(200)
			m[c] = true
			v = append(v, c)
		}
		return Of(v...), m
	}
	members := func(m map[int]bool) []int {
		out := []int{}
		for c := 0; c < 200; c++ {
			if m[c] {
				out = append(out, c)
			}
		}
		return out
	}
	for i := 0; i < 500; i++ {
		a, am := gen()
		b, bm := gen()
		and, or, andNot := map[int]bool{}, map[int]bool{}, map[int]bool{}
		subset := true
		for c := range am {
			or[c] = true
			if bm[c] {
				and[c] = true
			} else {
				andNot[c] = true
				subset = false
			}
		}
		for c := range bm {
			or[c] = true
		}
		check := func(name string, got Set, want map[int]bool) {
			if g := got.Members(); !reflect.DeepEqual(g, members(want)) {
				t.Fatalf("%s = %v, want %v", name, g, members(want))
			}
		}
		check("And", a.And(b), and)
		check("Or", a.Or(b), or)
		check("AndNot", a.AndNot(b), andNot)
		if a.SubsetOf(b) != subset || a.Intersects(b) != (len(and) > 0) {
			t.Fatalf("SubsetOf/Intersects wrong for %s, %s", a, b)
		}
		if a.Len() != len(am) || a.Equal(b) != reflect.DeepEqual(members(am), members(bm)) {
			t.Fatalf("Len/Equal wrong for %s, %s", a, b)
		}
		back, err := ParseList(a.String())
		if err != nil || !back.Equal(a) {
			t.Fatalf("String/ParseList round trip of %s: %v", a, err)
		}
	}
}

func TestParseHostile(t *testing.T) {
	// "--cpus 0-1000000000" tried to allocate it all; a long
	// repeated range must cost words, not ints.
	for _, bad := range []string{"0-1000000000", "1000000000", "0-65536", "4611686018427387904", "0-99999999999999999999999", "1-2-3", "x-3"} {
		_, err := ParseList(bad)
		if err == nil {
			t.Errorf("ParseList(%q) accepted", bad)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.Contains(msg, "accepted") || !strings.Contains(msg, bad) {
			t.Errorf("ParseList(%q) error %q: want one line quoting the value and saying what is accepted", bad, msg)
		}
	}
	s, err := ParseList(strings.Repeat("0-65535,", 10000))
	if err != nil || s.Len() != 65536 {
		t.Fatalf("Parse of a repeated full range = %d CPUs, %v; want 65536", s.Len(), err)
	}
	if !s.Equal(Range(0, MaxCPU)) {
		t.Errorf("Parse full range differs from Range(0, MaxCPU)")
	}
}

func TestParseTolerant(t *testing.T) {
	// sysfs files may end with newlines, spaces or NUL bytes.
	for _, in := range []string{"0-3,8\n", "0-3,8\x00", "0-3,8 \n\x00\x00", "\t0-3,8"} {
		s, err := ParseList(in)
		if err != nil || s.String() != "0-3,8" {
			t.Errorf("ParseList(%q) = %q, %v; want 0-3,8", in, s, err)
		}
	}
	m, err := ParseMask("0000010f\n\x00")
	if err != nil || m.String() != "0-3,8" {
		t.Errorf("ParseMask with a trailing NUL = %q, %v; want 0-3,8", m, err)
	}
}

func TestRangeMatchesOf(t *testing.T) {
	for lo := 0; lo < 140; lo += 7 {
		for hi := lo - 1; hi < 200; hi += 5 {
			var cpus []int
			for c := lo; c <= hi; c++ {
				cpus = append(cpus, c)
			}
			if got, want := Range(lo, hi), Of(cpus...); !got.Equal(want) {
				t.Fatalf("Range(%d, %d) = %s, want %s", lo, hi, got, want)
			}
		}
	}
}

func FuzzParseList(f *testing.F) {
	for _, seed := range []string{"0-3,8,10-11", "0\n", "0-1,64", "", "0-65535", "3-1", "0-3\x00"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseList(in)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		back, err := ParseList(s.String())
		if err != nil || !back.Equal(s) {
			t.Fatalf("round trip of %q: %s -> %s, %v", in, s, back, err)
		}
	})
}

func FuzzParseMask(f *testing.F) {
	for _, seed := range []string{"00000000,00001c07", "f", "0x3", "ffffffff,ffffffff,ffffffff", "1\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if s, err := ParseMask(in); err == nil && s.First() > MaxCPU {
			t.Fatalf("ParseMask(%q) has CPU %d beyond %d", in, s.First(), MaxCPU)
		}
	})
}

// compareByMembers is Compare's definition: the member lists compared
// lexicographically, a proper prefix first.
func compareByMembers(s, o Set) int {
	a, b := s.Members(), o.Members()
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

// randomSet draws up to k CPUs below limit.
func randomSet(r *rand.Rand, k, limit int) []int {
	var cpus []int
	for range r.Intn(k + 1) {
		cpus = append(cpus, r.Intn(limit))
	}
	return cpus
}

// TestCompareBruteForce checks the word-wise Compare against the member
// lists on random pairs, many of them sharing a prefix, across word
// boundaries (limits 8, 130 and 70,000).
func TestCompareBruteForce(t *testing.T) {
	r := rand.New(rand.NewSource(12))
	for i := 0; i < 20000; i++ {
		limit := []int{8, 130, 70000}[i%3]
		a := randomSet(r, 6, limit)
		b := randomSet(r, 6, limit)
		if i%4 == 0 { // a shared prefix: b extends a
			b = append(append([]int(nil), a...), b...)
		}
		s, o := Of(a...), Of(b...)
		if got, want := s.Compare(o), compareByMembers(s, o); got != want {
			t.Fatalf("Compare(%v, %v) = %d, want %d", s, o, got, want)
		}
		if got := o.Compare(s); got != -compareByMembers(s, o) {
			t.Fatalf("Compare(%v, %v) = %d, not antisymmetric", o, s, got)
		}
	}
}

// TestBuilderMatchesOr checks that a Builder fed CPUs and sets in any
// order gives what Of and Or give, and that a set it returned does not
// change when it goes on.
func TestBuilderMatchesOr(t *testing.T) {
	r := rand.New(rand.NewSource(34))
	for i := 0; i < 2000; i++ {
		var b Builder
		var want Set
		for range r.Intn(10) {
			if r.Intn(2) == 0 {
				c := r.Intn([]int{8, 130, 70000}[i%3])
				b.Add(c)
				want = want.Or(Of(c))
			} else {
				s := Of(randomSet(r, 5, 300)...)
				b.Or(s)
				want = want.Or(s)
			}
		}
		got := b.Set()
		if !got.Equal(want) {
			t.Fatalf("builder %v, Or %v", got, want)
		}
		for _, c := range want.Members() {
			if !b.Has(c) {
				t.Fatalf("builder lacks %d of %v", c, want)
			}
		}
		b.Add(5000)
		if !got.Equal(want) {
			t.Fatalf("a set the builder returned changed when it went on: %v", got)
		}
	}
	var empty Builder
	if s := empty.Set(); !s.IsEmpty() || s.Compare(Set{}) != 0 {
		t.Errorf("empty builder gives %v", s)
	}
}
