//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package store

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// lockName is the hidden file in a directory of machines' files that
// writers lock (flock; on NFS the kernel maps it to a POSIX lock) while
// they replace a file there. Like every lock file here, it is removed when
// released.
const lockName = ".barriertune.lock"

// lockDir takes dir's write lock, waiting at most wait, and returns its
// release. Without a lock (it cannot be created, the file system has no
// locks, or another writer holds it past wait) it goes on unlocked: the
// write itself stays atomic.
func lockDir(dir string, wait time.Duration) (unlock func()) {
	release, _, err := lockFile(filepath.Join(dir, lockName), wait)
	if err != nil {
		return func() {}
	}
	return release
}

// errHeld is lockFile's error when another process holds the lock past
// the wait.
var errHeld = errors.New("held by another process")

// lockFile takes the exclusive lock of the file path, creating it,
// waiting at most wait, and writes this process's pid in it. release
// removes the file and unlocks it. When another process holds it past
// wait, err is errHeld and holder its pid as it wrote it (0 when
// unknown); other errors say that no lock could be had (the file cannot
// be created, the file system has no locks).
//
// The file is removed while still locked, so a waiter that locks the
// removed file checks that the path is still the file it locked, and
// starts over when it is not: two processes never both hold path.
func lockFile(path string, wait time.Duration) (release func(), holder int, err error) {
	deadline := time.Now().Add(wait)
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, 0, err
		}
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == unix.EWOULDBLOCK || err == unix.EINTR {
			if time.Now().After(deadline) {
				holder = readPid(f)
				f.Close()
				return nil, holder, errHeld
			}
			f.Close()
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if err != nil {
			f.Close()
			return nil, 0, err
		}
		locked, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 != nil || err2 != nil || !os.SameFile(locked, now) {
			f.Close() // removed by the holder before it unlocked: start over
			continue
		}
		if err := f.Truncate(0); err == nil {
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		return func() {
			os.Remove(path)
			_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
			f.Close()
		}, 0, nil
	}
}

// readPid is the pid a lock file holds, 0 when it holds none.
func readPid(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
