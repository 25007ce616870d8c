// Package cpuset is a small immutable set of CPU (PU) operating-system
// indexes, with the two textual forms Linux uses: the list form "0-3,8,10-11"
// (files ending in _list, cgroup cpus) and the hexadecimal mask form
// "00000000,00001c07" (cpumap, shared_cpu_map, core_cpus).
package cpuset

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Set is an immutable set of non-negative CPU indexes. The zero value is the
// empty set. Operations return new sets and never modify their operands.
type Set struct {
	words []uint64 // no trailing zero words
}

// Of returns the set of the given CPU indexes. It panics on a negative index,
// which is a programmer error.
func Of(cpus ...int) Set {
	top := -1
	for _, c := range cpus {
		if c < 0 {
			panic(fmt.Sprintf("cpuset.Of: negative CPU index %d", c))
		}
		top = max(top, c)
	}
	if top < 0 {
		return Set{}
	}
	w := make([]uint64, top/64+1) // once: growing word by word cost a 65,536-PU topology a second
	for _, c := range cpus {
		w[c/64] |= 1 << uint(c%64)
	}
	return Set{w}
}

// Range returns the set {lo, ..., hi}; it is empty when hi < lo. It panics
// on a negative lo, which is a programmer error.
func Range(lo, hi int) Set {
	if hi < lo {
		return Set{}
	}
	if lo < 0 {
		panic(fmt.Sprintf("cpuset.Range: negative CPU index %d", lo))
	}
	w := make([]uint64, hi/64+1)
	setRange(w, lo, hi)
	return Set{trim(w)}
}

// setRange sets bits lo..hi of w, which is long enough, a word at a time.
func setRange(w []uint64, lo, hi int) {
	for c := lo; c <= hi; {
		if c%64 == 0 && c+63 <= hi {
			w[c/64] = ^uint64(0)
			c += 64
			continue
		}
		w[c/64] |= 1 << uint(c%64)
		c++
	}
}

func trim(w []uint64) []uint64 {
	for len(w) > 0 && w[len(w)-1] == 0 {
		w = w[:len(w)-1]
	}
	if len(w) == 0 {
		return nil
	}
	return w
}

// Has reports whether cpu is in the set.
func (s Set) Has(cpu int) bool {
	if cpu < 0 || cpu/64 >= len(s.words) {
		return false
	}
	return s.words[cpu/64]&(1<<uint(cpu%64)) != 0
}

// Len returns the number of CPUs in the set.
func (s Set) Len() int {
	n := 0
	for _, w := range s.words {
		n += bits.OnesCount64(w)
	}
	return n
}

// IsEmpty reports whether the set has no CPU.
func (s Set) IsEmpty() bool { return len(s.words) == 0 }

// First returns the smallest CPU in the set, or -1 when it is empty.
func (s Set) First() int {
	for i, w := range s.words {
		if w != 0 {
			return i*64 + bits.TrailingZeros64(w)
		}
	}
	return -1
}

// Members returns the CPUs in increasing order.
func (s Set) Members() []int {
	out := make([]int, 0, s.Len())
	for i, w := range s.words {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			out = append(out, i*64+b)
			w &^= 1 << uint(b)
		}
	}
	return out
}

// Equal reports whether s and o hold the same CPUs.
func (s Set) Equal(o Set) bool {
	if len(s.words) != len(o.words) {
		return false
	}
	for i := range s.words {
		if s.words[i] != o.words[i] {
			return false
		}
	}
	return true
}

// SubsetOf reports whether every CPU of s is in o.
func (s Set) SubsetOf(o Set) bool {
	for i, w := range s.words {
		var ow uint64
		if i < len(o.words) {
			ow = o.words[i]
		}
		if w&^ow != 0 {
			return false
		}
	}
	return true
}

// Intersects reports whether s and o share a CPU.
func (s Set) Intersects(o Set) bool {
	n := min(len(s.words), len(o.words))
	for i := 0; i < n; i++ {
		if s.words[i]&o.words[i] != 0 {
			return true
		}
	}
	return false
}

// And returns the intersection of s and o.
func (s Set) And(o Set) Set {
	n := min(len(s.words), len(o.words))
	w := make([]uint64, n)
	for i := 0; i < n; i++ {
		w[i] = s.words[i] & o.words[i]
	}
	return Set{trim(w)}
}

// Or returns the union of s and o.
func (s Set) Or(o Set) Set {
	n := max(len(s.words), len(o.words))
	w := make([]uint64, n)
	for i := range w {
		if i < len(s.words) {
			w[i] |= s.words[i]
		}
		if i < len(o.words) {
			w[i] |= o.words[i]
		}
	}
	return Set{trim(w)}
}

// AndNot returns the CPUs of s that are not in o.
func (s Set) AndNot(o Set) Set {
	w := make([]uint64, len(s.words))
	for i := range w {
		w[i] = s.words[i]
		if i < len(o.words) {
			w[i] &^= o.words[i]
		}
	}
	return Set{trim(w)}
}

// Compare orders sets by their smallest CPU, then by the next, and so on; a
// set that is a prefix of another sorts first. It returns -1, 0 or +1.
func (s Set) Compare(o Set) int {
	// The member lists agree below d, the smallest CPU in one set only.
	// The list holding d is smaller unless the other has nothing after d
	// (then the other is a prefix of it, and shorter).
	n := max(len(s.words), len(o.words))
	for i := 0; i < n; i++ {
		a, b := word(s.words, i), word(o.words, i)
		if a == b {
			continue
		}
		d := bits.TrailingZeros64(a ^ b)
		above := ^uint64(0) << uint(d) << 1 // the bits after d in word i
		if a&(1<<uint(d)) != 0 {
			if b&above != 0 || len(o.words) > i+1 {
				return -1
			}
			return 1
		}
		if a&above != 0 || len(s.words) > i+1 {
			return 1
		}
		return -1
	}
	return 0
}

// word returns w[i], 0 beyond its end.
func word(w []uint64, i int) uint64 {
	if i < len(w) {
		return w[i]
	}
	return 0
}

// Builder accumulates a set in place: Add and Or grow one slice of words,
// where building a large set with Set.Or copied it once per CPU added (a
// 65,536-PU topology took seconds). The zero value is an empty builder.
type Builder struct {
	words []uint64
}

// Add puts cpu in the set. It panics on a negative index, which is a
// programmer error.
func (b *Builder) Add(cpu int) {
	if cpu < 0 {
		panic(fmt.Sprintf("cpuset.Builder.Add: negative CPU index %d", cpu))
	}
	b.grow(cpu/64 + 1)
	b.words[cpu/64] |= 1 << uint(cpu%64)
}

// Or adds the CPUs of s.
func (b *Builder) Or(s Set) {
	b.grow(len(s.words))
	for i, w := range s.words {
		b.words[i] |= w
	}
}

// Has reports whether cpu is in the set built so far.
func (b *Builder) Has(cpu int) bool { return Set{b.words}.Has(cpu) }

// Set returns the set built so far; the builder may go on.
func (b *Builder) Set() Set {
	w := trim(b.words)
	if w == nil {
		return Set{}
	}
	return Set{append([]uint64(nil), w...)}
}

func (b *Builder) grow(n int) {
	if n <= len(b.words) {
		return
	}
	if n <= cap(b.words) {
		b.words = b.words[:n]
		return
	}
	w := make([]uint64, n, max(n, 2*cap(b.words)))
	copy(w, b.words)
	b.words = w
}

// String returns the list form, e.g. "0-3,8,10-11"; the empty set is "".
func (s Set) String() string { return FormatList(s.Members()) }

// FormatList writes CPUs in the order given with each run of consecutive
// indexes as a range: "0-3,8,6-7". A sorted list comes out in the list
// form String writes; a CPU listed again (a rank order that repeats CPUs)
// stays where it is: "0-1,0-1".
func FormatList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// MaxCPU is the largest CPU index the parsers accept (65,535, i.e. at most
// 65,536 PUs: far above the largest machine Linux (NR_CPUS 8192) or hwloc
// describes), so that hostile input cannot make them allocate without bound.
const MaxCPU = 1<<16 - 1

// listAccepted says what the list form accepts, for error messages.
const listAccepted = "comma-separated CPU indexes and ranges such as \"0-3,8,10-11\", each index in 0..65535"

// ParseList parses the list form ("0-3,8,10-11", spaces, trailing newlines
// and NUL bytes allowed), as a person or a file gives it (--cpus,
// --restrict, sysfs _list files). It is the project's one CPU-list
// parser; its errors are one line naming the value, the reason and what
// is accepted. The empty string is the empty set. Ranges are set a word at
// a time, so even "0-65535" repeated costs little.
func ParseList(text string) (Set, error) {
	text = trimJunk(text)
	if text == "" {
		return Set{}, nil
	}
	var w []uint64
	for _, part := range strings.Split(text, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := parseIndex(lo)
		if err != nil {
			return Set{}, fmt.Errorf("cpu list %q: %w; accepted: %s", elide(text), err, listAccepted)
		}
		b := a
		if isRange {
			if b, err = parseIndex(hi); err != nil {
				return Set{}, fmt.Errorf("cpu list %q: %w; accepted: %s", elide(text), err, listAccepted)
			}
			if b < a {
				return Set{}, fmt.Errorf("cpu list %q: range %q ends before it starts; accepted: %s", elide(text), elide(part), listAccepted)
			}
		}
		for len(w) <= b/64 {
			w = append(w, 0)
		}
		setRange(w, a, b)
	}
	return Set{trim(w)}, nil
}

// trimJunk drops the spaces, newlines and NUL bytes that sysfs files and
// hand-written input carry around the value.
func trimJunk(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r == 0 || unicode.IsSpace(r) })
}

func parseIndex(s string) (int, error) {
	s = strings.TrimSpace(s)
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 || v > MaxCPU {
		return 0, fmt.Errorf("%q is not a CPU index in 0..%d", elide(s), MaxCPU)
	}
	return v, nil
}

// ParseMask parses the Linux hexadecimal mask form: comma-separated 32-bit
// words, most significant first ("00000000,00001c07"; "0x" prefix allowed).
// The empty string is the empty set.
func ParseMask(text string) (Set, error) {
	text = trimJunk(text)
	text = strings.TrimPrefix(strings.TrimPrefix(text, "0x"), "0X")
	if text == "" {
		return Set{}, nil
	}
	groups := strings.Split(text, ",")
	var cpus []int
	bit := 0
	for i := len(groups) - 1; i >= 0; i-- {
		g := strings.TrimSpace(groups[i])
		if g == "" {
			g = "0"
		}
		// Each group is 32 bits, except a lone group which may be longer.
		width := 32
		if len(groups) == 1 {
			width = 4 * len(g)
		}
		for j := len(g) - 1; j >= 0; j-- {
			d, err := strconv.ParseUint(g[j:j+1], 16, 8)
			if err != nil {
				return Set{}, fmt.Errorf("cpu mask %q: %q is not a hexadecimal digit", elide(text), g[j:j+1])
			}
			pos := bit + 4*(len(g)-1-j)
			for k := 0; k < 4; k++ {
				if d&(1<<uint(k)) != 0 {
					if pos+k > MaxCPU {
						return Set{}, fmt.Errorf("cpu mask %q: bit %d is beyond %d", elide(text), pos+k, MaxCPU)
					}
					cpus = append(cpus, pos+k)
				}
			}
		}
		if len(groups) > 1 && len(g) > 8 {
			return Set{}, fmt.Errorf("cpu mask %q: group %q has more than 8 hexadecimal digits", elide(text), elide(g))
		}
		bit += width
	}
	return Of(cpus...), nil
}

// maxQuoted is how much of an offending value an error quotes.
const maxQuoted = 200

// elide shortens a value an error quotes, so that a huge input is never
// echoed whole: its first maxQuoted bytes (cut on a rune boundary) and its
// length. cpuset imports nothing of this module, so that it stays the
// ground every other package stands on.
func elide(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	head := s[:maxQuoted]
	for len(head) > 0 && !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	return fmt.Sprintf("%s… (%d bytes)", head, len(s))
}

// MarshalText implements encoding.TextMarshaler with the list form.
func (s Set) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with the list form.
func (s *Set) UnmarshalText(b []byte) error {
	v, err := ParseList(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
