//go:build unix

package outfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFIFORefused: a FIFO is refused before anything is opened (no wait
// for a reader) and stays a FIFO.
func TestFIFORefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.svg")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	err := Write("plot", fifo, []byte("<svg/>"), 0o644)
	if err == nil || !strings.Contains(err.Error(), "plot "+fifo+" is not a regular file (it is a named pipe (FIFO))") {
		t.Errorf("Write to a FIFO: %v", err)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Error("the FIFO was replaced")
	}
}
