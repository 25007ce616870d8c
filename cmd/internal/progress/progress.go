// Package progress shows the progress of long work on stderr: one redrawn
// line that fits the terminal on a terminal, plain lines when stderr is not
// a terminal, TERM=dumb or verbose, nothing when quiet. Colour is used only
// on a terminal and never when NO_COLOR is set (https://no-color.org).
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"
)

// Line is one progress display on w, each update under a prefix.
type Line struct {
	w      io.Writer
	prefix string
	quiet  bool
	tty    bool
	color  bool
	fd     int

	mu    sync.Mutex
	drawn bool
}

// NewLine returns the display of progress on w under prefix: nothing when
// quiet, plain lines when verbose or w is no terminal.
func NewLine(w io.Writer, quiet, verbose bool, prefix string) *Line {
	p := &Line{w: w, prefix: prefix, quiet: quiet, fd: -1}
	if f, ok := w.(*os.File); ok && !verbose && term.IsTerminal(int(f.Fd())) && os.Getenv("TERM") != "dumb" {
		p.tty = true
		p.fd = int(f.Fd())
		_, noColor := os.LookupEnv("NO_COLOR")
		p.color = !noColor
	}
	return p
}

// Redrawn reports whether updates redraw one line (a terminal) rather than
// print a line each.
func (p *Line) Redrawn() bool { return p.tty }

// width is the terminal's width in columns (80 when unknown).
func (p *Line) width() int {
	if p.fd >= 0 {
		if w, _, err := term.GetSize(p.fd); err == nil && w > 0 {
			return w
		}
	}
	return 80
}

// Update shows msg; frac in [0,1] draws a bar on a terminal, frac < 0 none.
func (p *Line) Update(msg string, frac float64) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty {
		fmt.Fprintf(p.w, "%s: %s\n", p.prefix, msg)
		return
	}
	fmt.Fprint(p.w, "\r\033[K"+Format(p.prefix, msg, frac, p.width(), p.color))
	p.drawn = true
}

// Clear removes the redrawn line so that what follows starts clean.
func (p *Line) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// Format is one progress line of at most width-1 visible columns:
// "[####----] prefix: msg", the bar only when frac >= 0 and the terminal
// is wide enough, its filled part coloured when color is set. The text is
// cut with "…" to fit.
func Format(prefix, msg string, frac float64, width int, color bool) string {
	width = max(width-1, 10) // leave the last column free: no wrap
	bar := ""
	if frac >= 0 && width >= 40 {
		const barWidth = 20
		filled := int(min(max(frac, 0), 1) * barWidth)
		fill, rest := strings.Repeat("#", filled), strings.Repeat("-", barWidth-filled)
		if color && filled > 0 {
			fill = "\033[32m" + fill + "\033[0m"
		}
		bar = "[" + fill + rest + "] "
		width -= barWidth + 3
	}
	text := prefix + ": " + msg
	if utf8.RuneCountInString(text) > width {
		r := []rune(text)
		text = string(r[:width-1]) + "…"
	}
	return bar + text
}

// Activity is a progress line for work that reports no steps: it names
// the work once and, on a terminal, redraws the elapsed time until Stop.
type Activity struct {
	line *Line
	done chan struct{}
	wg   sync.WaitGroup
}

// Start shows msg on w under prefix until the returned Activity stops
// (quiet and verbose as NewLine's).
func Start(w io.Writer, quiet, verbose bool, prefix, msg string) *Activity {
	a := &Activity{line: NewLine(w, quiet, verbose, prefix), done: make(chan struct{})}
	a.line.Update(msg, -1)
	if a.line.tty && !a.line.quiet {
		start := time.Now()
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			tick := time.NewTicker(250 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-a.done:
					return
				case <-tick.C:
					a.line.Update(fmt.Sprintf("%s; elapsed %s", msg, time.Since(start).Round(time.Second)), -1)
				}
			}
		}()
	}
	return a
}

// Stop ends the display and clears its line.
func (a *Activity) Stop() {
	close(a.done)
	a.wg.Wait()
	a.line.Clear()
}
