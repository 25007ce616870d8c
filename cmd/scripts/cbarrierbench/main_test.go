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

// The gate opens on a reading under its bound with the lock held, stays
// shut above it, and keeps off the host while another process holds the
// lock (it does not read the state then).
func TestGate(t *testing.T) {
	dir := t.TempDir()
	fake := func(name, out string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho "+out+"\necho read >> "+filepath.Join(dir, name+".calls")+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lock := filepath.Join(dir, "lock")
	fast := &gate{dissem: fake("fast", "31.5"), pair: "0,1", below: 100, lock: lock}
	v, err := fast.open()
	if err != nil || v != 31.5 {
		t.Fatalf("fast state: %v, %v; want 31.5", v, err)
	}
	if fast.held == nil {
		t.Fatal("the gate opened without holding its lock")
	}
	// Held by the open gate: another gate neither reads nor opens.
	other := &gate{dissem: fake("other", "20"), pair: "0,1", below: 100, lock: lock}
	if _, err := other.open(); err == nil || !strings.Contains(err.Error(), "within") {
		t.Errorf("lock held elsewhere: %v, want a timeout", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "other.calls")); err == nil {
		t.Error("the gate read the host state while another process held the lock")
	}
	fast.close()
	if v, err := other.open(); err != nil || v != 20 {
		t.Errorf("after the lock's release: %v, %v; want 20", v, err)
	}
	other.close()
	slow := &gate{dissem: fake("slow", "350"), pair: "0,1", below: 100}
	if _, err := slow.open(); err == nil || !strings.Contains(err.Error(), "under 100 ns") {
		t.Errorf("slow state: %v, want an error naming the bound", err)
	}
	bad := &gate{dissem: fake("bad", "oops"), pair: "0,1", below: 100}
	if _, err := bad.open(); err == nil || !strings.Contains(err.Error(), "oops") {
		t.Errorf("unreadable output: %v, want it named", err)
	}
	if v, err := (&gate{}).open(); err != nil || v != 0 {
		t.Errorf("no gate: %v, %v", v, err)
	}
}

// -variant takes a name and macros only, and names what it refuses.
func TestParseVariant(t *testing.T) {
	v, err := parseVariant("spin0=-DBARRIERTUNE_SETTLED_SPIN_NS=0 -UFOO")
	if err != nil || v.name != "spin0" || len(v.flags) != 2 || v.flags[0] != "-DBARRIERTUNE_SETTLED_SPIN_NS=0" {
		t.Fatalf("%+v, %v", v, err)
	}
	if v.candidate() != "barriertune (C) [spin0]" {
		t.Errorf("candidate name %q", v.candidate())
	}
	for _, bad := range []string{"", "spin0", "=-DX", "a b=-DX", "x=", "x=  ", "x=-O0", "x=-DX -o/tmp/evil", "x;y=-DX"} {
		if _, err := parseVariant(bad); err == nil {
			t.Errorf("%q accepted", bad)
		} else if !strings.Contains(err.Error(), "want") && !strings.Contains(err.Error(), "flag") && !strings.Contains(err.Error(), "no flags") {
			t.Errorf("%q: %v does not say what is wanted", bad, err)
		}
	}
}
