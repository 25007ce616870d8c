//go:build linux || darwin || freebsd

package results

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadFIFO: a FIFO is refused at once, not read until a writer comes.
func TestReadFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := Read(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Read(fifo) = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read(fifo) hangs")
	}
}
