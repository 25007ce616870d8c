//go:build unix

package hwtree

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestFileReadersRefuseNonRegular: topology files that are devices or
// FIFOs get an error naming the path, never a hang or an unbounded read.
func TestFileReadersRefuseNonRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	paths := []string{fifo}
	if _, err := os.Stat("/dev/zero"); err == nil {
		paths = append(paths, "/dev/zero")
	}
	readers := map[string]func(string) (*Topology, error){"xml": FromXMLFile, "json": FromJSONFile}
	for _, p := range paths {
		for name, read := range readers {
			done := make(chan error, 1)
			go func() { _, err := read(p); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "not a regular file") {
					t.Errorf("%s reader on %s: error %v, want one naming the path and 'not a regular file'", name, p, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s reader on %s still reading after 5s", name, p)
			}
		}
	}
}

// TestLive: on Linux, Live reads this machine; elsewhere it reports
// errors.ErrUnsupported.
func TestLive(t *testing.T) {
	topo, err := FromSysfs("/")
	if runtime.GOOS != "linux" {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Fatalf("Live on %s: %v, want ErrUnsupported", runtime.GOOS, err)
		}
		return
	}
	if err != nil {
		t.Skip("no readable sysfs here:", err)
	}
	if len(topo.PUs()) == 0 {
		t.Fatal("Live found no PUs")
	}
}

// TestSysfsSnapshotWithAFIFO: a snapshot in which any one file or
// directory is a FIFO (a hostile or half-copied capture) is read without
// waiting for a writer: FromSysfs returns, an error or a tree, for every
// path of the test snapshots.
func TestSysfsSnapshotWithAFIFO(t *testing.T) {
	for _, snap := range []string{"cgroup-2pkg", "offline-nonuma"} {
		root := filepath.Join(t.TempDir(), snap)
		if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", "sysfs", snap))); err != nil {
			t.Fatal(err)
		}
		var paths []string
		if err := filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
			if p != root {
				paths = append(paths, p)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			aside := p + ".aside"
			if err := os.Rename(p, aside); err != nil {
				continue // under a directory that is aside now: covered by it
			}
			if err := unix.Mkfifo(p, 0o600); err != nil {
				t.Skip("mkfifo:", err)
			}
			done := make(chan error, 1)
			go func() { _, err := FromSysfs(root); done <- err }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: FromSysfs still reading after 10s with %s a FIFO", snap, strings.TrimPrefix(p, root))
			}
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(aside, p); err != nil {
				t.Fatal(err)
			}
		}
		if len(paths) < 20 {
			t.Fatalf("%s: only %d paths tried", snap, len(paths))
		}
	}
}
