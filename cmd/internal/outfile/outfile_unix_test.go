//go:build unix

package outfile

import (
	"errors"
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

// TestCreateErrorNamesTheDirectory: a directory the user cannot write is
// named, with what to do, and the error is still a permission error;
// other errors pass as they are. (Root writes any directory, so the
// error is made here rather than met.)
func TestCreateErrorNamesTheDirectory(t *testing.T) {
	perm := &os.PathError{Op: "open", Path: "/ro/.barriertune-1-2.tmp", Err: syscall.EACCES}
	err := createError("export file", "/ro/x.conf", "/ro", perm)
	if !errors.Is(err, os.ErrPermission) || !strings.Contains(err.Error(), "directory /ro is not writable") || strings.Contains(err.Error(), ".barriertune-") {
		t.Errorf("permission: %v", err)
	}
	other := &os.PathError{Op: "open", Path: "/full/.barriertune-1-2.tmp", Err: syscall.ENOSPC}
	if err := createError("export file", "/full/x", "/full", other); !errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), "not writable") {
		t.Errorf("no space: %v", err)
	}
}
