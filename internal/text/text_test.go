package text

import (
	"math/big"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 placements"}, {1, "1 placement"}, {2, "2 placements"}} {
		if got := Plural(c.n, "placement"); got != c.want {
			t.Errorf("Plural(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if got := PluralOf(1, "entry", "entries"); got != "1 entry" {
		t.Errorf("PluralOf(1) = %q", got)
	}
	if got := PluralOf(3, "entry", "entries"); got != "3 entries" {
		t.Errorf("PluralOf(3) = %q", got)
	}
}

func TestElide(t *testing.T) {
	if got := Elide("short", 100); got != "short" {
		t.Errorf("Elide kept %q", got)
	}
	for _, in := range []string{strings.Repeat("(", 600000), strings.Repeat("é", 100000) + "END"} {
		got := Elide(in, MaxValue)
		if len(got) > MaxValue+8 || !utf8.ValidString(got) {
			t.Errorf("Elide of %d bytes gave %d bytes (valid UTF-8 %v)", len(in), len(got), utf8.ValidString(got))
		}
		if !strings.HasPrefix(got, in[:10]) || !strings.HasSuffix(in, got[len(got)-3:]) {
			t.Errorf("Elide lost the ends: %q", got)
		}
		if !strings.Contains(got, "bytes") {
			t.Errorf("Elide does not say how long the value was: %q", got)
		}
	}
}

func TestAbbreviate(t *testing.T) {
	long1, long2 := "hybrid(core:dissemination,top:dissemination)", "hybrid(l3:central,top:mcs(4))"
	shown, legend := Abbreviate([]string{"central", long1, long2, long1, "all-static-tree(4)"}, 24)
	want := []string{"central", "hybrid#1", "hybrid#2", "hybrid#1", "all-static-tree(4)"}
	if strings.Join(shown, " ") != strings.Join(want, " ") {
		t.Errorf("shown %q, want %q", shown, want)
	}
	if strings.Join(legend, "|") != "hybrid#1 = "+long1+"|hybrid#2 = "+long2 {
		t.Errorf("legend %q", legend)
	}
	if s, l := Abbreviate([]string{"a", "b"}, 24); len(l) != 0 || s[1] != "b" {
		t.Errorf("short names: %q %q", s, l)
	}
}

// TestWrapClipBig: prose breaks at spaces under the width with the
// indent, a long list keeps its head and tail cut at separators, and a
// huge number goes scientific.
func TestWrapClipBig(t *testing.T) {
	if got := Wrap("aa bb cc dd", 7, "  ", 0); !slices.Equal(got, []string{"aa bb", "  cc dd"}) {
		t.Errorf("Wrap = %q", got)
	}
	if got, cut := Clip("0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15", 20); !cut || got != "0,1,2 … 14,15" {
		t.Errorf("Clip = %q, %v", got, cut)
	}
	if got, cut := Clip("0-3", 20); cut || got != "0-3" {
		t.Errorf("Clip of a short list = %q, %v", got, cut)
	}
	huge := new(big.Int).Lsh(big.NewInt(1), 100)
	if got := Big(huge); got != "1.267e30" {
		t.Errorf("Big(2^100) = %q", got)
	}
	if got := Big(big.NewInt(12345)); got != "12345" {
		t.Errorf("Big(12345) = %q", got)
	}
}
