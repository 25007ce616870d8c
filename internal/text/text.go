// Package text holds the small formatting rules every command's output
// follows: counts with the right plural, and values too long for one line
// elided in the middle.
package text

import (
	"fmt"
	"io/fs"
	"math/big"
	"strings"
	"unicode/utf8"
)

// Plural returns "1 placement", "2 placements": n and word, with an "s"
// unless n is 1. Words whose plural is not word+"s" use PluralOf.
func Plural(n int, word string) string { return PluralOf(n, word, word+"s") }

// PluralOf returns n and one or many, whichever fits n ("1 PU", "4 PUs";
// "1 entry", "2 entries").
func PluralOf(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// MaxValue is how much of an offending value an error line quotes.
const MaxValue = 200

// Elide returns s when it is at most max bytes long, else its first and
// last parts around " … (N bytes) … ", at most about max bytes in all and
// cut on rune boundaries, so an error line never echoes a huge input.
func Elide(s string, max int) string {
	if max < 40 {
		max = 40
	}
	if len(s) <= max {
		return s
	}
	mid := fmt.Sprintf(" … (%d bytes) … ", len(s))
	keep := (max - len(mid)) / 2
	head, tail := s[:keep], s[len(s)-keep:]
	for len(head) > 0 && !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	for len(tail) > 0 && !utf8.ValidString(tail) {
		tail = tail[1:]
	}
	return head + mid + tail
}

// FileKind names the kind of file a mode is, for messages: "a directory",
// "a named pipe (FIFO)", "a device", ... ("a regular file" for none of
// them). fs.FileMode's own String prints "d---------" for a directory.
func FileKind(m fs.FileMode) string {
	if m.IsDir() {
		return "a directory"
	}
	for _, k := range [...]struct {
		bit  fs.FileMode
		name string
	}{
		{fs.ModeSymlink, "a symbolic link"},
		{fs.ModeNamedPipe, "a named pipe (FIFO)"},
		{fs.ModeSocket, "a socket"},
		{fs.ModeCharDevice, "a character device"},
		{fs.ModeDevice, "a device"},
		{fs.ModeIrregular, "an irregular file"},
	} {
		if m&k.bit != 0 {
			return k.name
		}
	}
	return "a regular file"
}

// Abbreviate keeps the names of a column short: each name longer than max
// characters becomes a key, its part before the first "(" and "#1", "#2",
// ... in order of first appearance (the same name, the same key), and
// legend holds one "KEY = NAME" line per key, in that order. Nothing is
// cut: the legend spells out what the column abbreviates.
func Abbreviate(names []string, max int) (shown, legend []string) {
	keys := map[string]string{}
	for _, n := range names {
		if len(n) <= max {
			shown = append(shown, n)
			continue
		}
		k, ok := keys[n]
		if !ok {
			stem, _, _ := strings.Cut(n, "(")
			k = fmt.Sprintf("%s#%d", Elide(stem, max/2), len(keys)+1)
			keys[n] = k
			legend = append(legend, k+" = "+n)
		}
		shown = append(shown, k)
	}
	return shown, legend
}

// Wrap breaks prose into lines of at most width bytes at spaces, every
// line after the first indented by indent; a word longer than maxWord
// (0: no limit) is elided in the middle (Elide).
func Wrap(s string, width int, indent string, maxWord int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if maxWord > 0 {
			word = Elide(word, maxWord)
		}
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) > width:
			lines = append(lines, line)
			line = indent + word
		default:
			line += " " + word
		}
	}
	return append(lines, line)
}

// Clip shortens a comma- or space-separated list longer than n bytes to
// its head and tail around " … ", cut at separators; it reports whether it
// cut.
func Clip(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	keep := (n - len(" … ")) / 2
	head, tail := s[:keep], s[len(s)-keep:]
	if i := strings.LastIndexAny(head, ", "); i > 0 {
		head = strings.TrimRight(head[:i], ", ")
	}
	if i := strings.IndexAny(tail, ", "); i >= 0 && i < len(tail)-1 {
		tail = strings.TrimLeft(tail[i:], ", ")
	}
	return head + " … " + tail, true
}

// Big writes a number of more than 24 digits in scientific form
// (1.23e45), a shorter one whole.
func Big(v *big.Int) string {
	s := v.String()
	if len(s) <= 24 {
		return s
	}
	return fmt.Sprintf("%s.%se%d", s[:1], strings.TrimRight(s[1:4], "0"), len(s)-1)
}
