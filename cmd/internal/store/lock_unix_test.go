//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package store

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestClaimOneCheckPerFile: a destination's check lock is had once: a
// second claim of the same file is refused naming the holder's pid and the
// lock, another file of the directory is not; released, the lock file is
// gone and the file can be claimed again. A directory of machines' files
// takes no check lock.
func TestClaimOneCheckPerFile(t *testing.T) {
	dir := t.TempDir()
	a := OutputDestination("-o", filepath.Join(dir, "same.json"))
	release, err := a.Claim()
	if err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, CheckLockName("same.json"))
	if data, err := os.ReadFile(lock); err != nil || strings.TrimSpace(string(data)) != itoa(os.Getpid()) {
		t.Errorf("lock %s holds %q (%v), want this pid", lock, data, err)
	}
	_, err = a.Claim()
	if err == nil || !strings.Contains(err.Error(), "pid "+itoa(os.Getpid())) || !strings.Contains(err.Error(), lock) {
		t.Errorf("second claim: %v; want the holder's pid and the lock named", err)
	}
	other, err := OutputDestination("-o", filepath.Join(dir, "other.json")).Claim()
	if err != nil {
		t.Errorf("another file: %v", err)
	} else {
		other()
	}
	release()
	if _, err := os.Stat(lock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("released, %s: %v; want it removed", lock, err)
	}
	again, err := a.Claim()
	if err != nil {
		t.Fatalf("claim after release: %v", err)
	}
	again()
	// --system's destination: the directory is made, the lock taken beside
	// results.json, and nothing left once released and saved.
	sys := SystemDestination(filepath.Join(dir, "etc", "barriertune", "results.json"))
	rel, err := sys.Claim()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "etc", "barriertune", CheckLockName("results.json"))); err != nil {
		t.Errorf("--system's lock: %v", err)
	}
	rel()
	shared, err := OutputDestination("-o", dir+"/").Claim()
	if err != nil {
		t.Errorf("a directory of machines' files: %v", err)
	}
	shared()
}

// TestLocksLeaveNothing: the lock of a directory of machines' files is
// removed when released, and a waiter that locked the removed file starts
// over on the new one, so that two never hold it at once.
func TestLocksLeaveNothing(t *testing.T) {
	dir := t.TempDir()
	unlock := lockDir(dir, time.Second)
	path := filepath.Join(dir, lockName)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("held, %s: %v", path, err)
	}
	got := make(chan func(), 1)
	go func() { // waits for the first holder
		r, _, err := lockFile(path, 5*time.Second)
		if err != nil {
			t.Error(err)
			r = func() {}
		}
		got <- r
	}()
	time.Sleep(50 * time.Millisecond)
	select {
	case <-got:
		t.Fatal("the lock was had twice")
	default:
	}
	unlock()
	second := <-got
	if _, _, err := lockFile(path, 0); !errors.Is(err, errHeld) {
		t.Errorf("the waiter that got the lock does not hold it: %v", err)
	}
	second()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("left in %s: %v", dir, entries)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
