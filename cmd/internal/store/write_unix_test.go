//go:build linux || darwin || freebsd

package store

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteMode: results files are 0644 less the umask, not 0600.
func TestWriteMode(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "results.json")
	if err := Write(path, sample(t)); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
}
