//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// -header takes an exported barriertune.h and refuses anything else by
// name, with the reason, before reading it whole.
func TestReadHeader(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "barriertune.h")
	if err := os.WriteFile(good, []byte("#ifndef BARRIERTUNE_H\nint barriertune_barrier_wait(void);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readHeader(good); err != nil {
		t.Errorf("an exported header: %v", err)
	}
	other := filepath.Join(dir, "other.h")
	if err := os.WriteFile(other, []byte("#include <stdio.h>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.h")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxHeader + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, c := range []struct{ path, want string }{
		{other, "is not a barriertune.h"},
		{dir, "is not a regular file"},
		{fifo, "is not a regular file"},
		{"/dev/zero", "is not a regular file"},
		{big, "are accepted"},
		{filepath.Join(dir, "missing.h"), "no such file"},
	} {
		_, err := readHeader(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "-header") {
			t.Errorf("%s: %v, want an error naming -header and %q", c.path, err, c.want)
		}
	}
}

// The Go candidate checks its arguments before it builds anything.
func TestGoBestArguments(t *testing.T) {
	for _, args := range [][]string{nil, {"8", "-", "100"}, {"0", "-", "100", "3"}, {"99999999", "-", "1", "1"}, {"8", "-", "x", "3"}, {"8", "-", "100", "0"}} {
		if err := goBest(args); err == nil {
			t.Errorf("goBest(%q): no error", args)
		}
	}
}
