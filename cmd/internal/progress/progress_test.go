package progress

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestFormatProgressFits: a line never passes the terminal's width and
// carries escape codes only with colour.
func TestFormatProgressFits(t *testing.T) {
	msg := strings.Repeat("placement 3/7 (a0, b1) ", 20)
	for _, width := range []int{1, 20, 39, 40, 80, 200} {
		for _, color := range []bool{false, true} {
			line := Format("check", msg, 0.5, width, color)
			visible := strings.NewReplacer("\033[32m", "", "\033[0m", "").Replace(line)
			if n := utf8.RuneCountInString(visible); n > max(width-1, 10) {
				t.Errorf("width %d: %d columns: %q", width, n, visible)
			}
			if !color && strings.Contains(line, "\033") {
				t.Errorf("escape codes without colour: %q", line)
			}
		}
	}
	if line := Format("check", "x", 0.5, 80, false); !strings.HasPrefix(line, "[##########----------] check: x") {
		t.Errorf("half-done bar: %q", line)
	}
	if line := Format("bench", "x", -1, 80, true); line != "bench: x" {
		t.Errorf("no bar without a fraction: %q", line)
	}
}

// TestProgressPlainAndQuiet: plain lines off a terminal, nothing quiet.
func TestProgressPlainAndQuiet(t *testing.T) {
	var buf bytes.Buffer
	p := NewLine(&buf, false, false, "check")
	p.Update("one", 0.1)
	p.Update("two", 0.2)
	p.Clear()
	if buf.String() != "check: one\ncheck: two\n" {
		t.Errorf("not a terminal: want plain lines, got %q", buf.String())
	}
	buf.Reset()
	q := NewLine(&buf, true, false, "check")
	q.Update("one", 0.1)
	a := Start(&buf, true, false, "bench", "x")
	a.Stop()
	if buf.Len() != 0 {
		t.Errorf("--quiet printed %q", buf.String())
	}
}
