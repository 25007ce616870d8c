package capped

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadFileSpecial: a FIFO is refused without hanging, and /proc files
// (regular, size 0) are capped while reading.
func TestReadFileSpecial(t *testing.T) {
	dir := t.TempDir()
	k := File{What: "test file", Hint: "give a small one", Limit: 4}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := k.ReadFile(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("FIFO: %v (and it must not hang)", err)
	}
	// /proc files are regular and report size 0: the cap holds while reading.
	_, err := File{Limit: 16}.ReadFile("/proc/self/maps")
	if err == nil || !strings.Contains(err.Error(), "/proc/self/maps is over 16 bytes") {
		t.Errorf("/proc/self/maps with a 16-byte cap: %v", err)
	}
	if b, err := (File{Limit: 1 << 20}).ReadFile("/proc/self/maps"); err != nil || len(b) == 0 {
		t.Errorf("/proc/self/maps with a 1 MiB cap: %d bytes, %v", len(b), err)
	}
}
