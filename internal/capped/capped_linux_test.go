package capped

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

// TestSwappedForFIFO: a path that was a regular file when checked and is
// a FIFO when opened (swapped in between) is refused at once, without
// waiting for a writer.
func TestSwappedForFIFO(t *testing.T) {
	dir := t.TempDir()
	k := File{What: "test file", Limit: 1 << 10}
	path := filepath.Join(dir, "results.json")
	if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		r, err := k.openChecked(path, fi)
		if err == nil {
			r.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "changed while it was opened (it is now a named pipe (FIFO)") {
			t.Errorf("a regular file swapped for a FIFO: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("opening a file swapped for a FIFO waited for a writer")
	}
}

// TestReadDirFIFO: listing a FIFO, or a directory swapped for one after
// the check, is refused without waiting for a writer.
func TestReadDirFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "node")
	if err := os.Mkdir(fifo, 0o700); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(fifo)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan [2]error, 1)
	go func() {
		_, _, plain := ReadDir(fifo, 8)
		_, _, swapped := readDirChecked(fifo, fi, 8)
		done <- [2]error{plain, swapped}
	}()
	select {
	case errs := <-done:
		if errs[0] == nil || !strings.Contains(errs[0].Error(), "is not a directory (it is a named pipe (FIFO))") {
			t.Errorf("listing a FIFO: %v", errs[0])
		}
		if errs[1] == nil || !strings.Contains(errs[1].Error(), "changed while it was opened (it is now a named pipe (FIFO))") {
			t.Errorf("a directory swapped for a FIFO: %v", errs[1])
		}
	case <-time.After(10 * time.Second):
		t.Fatal("listing a FIFO waited for a writer")
	}
}
