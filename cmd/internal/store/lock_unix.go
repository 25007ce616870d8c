//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package store

import (
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// lockName is the hidden file in a directory of machines' files that
// writers lock (flock; on NFS the kernel maps it to a POSIX lock).
const lockName = ".barriertune.lock"

// lockDir takes dir's write lock, waiting at most wait, and returns its
// release. Without a lock (it cannot be created, the file system has no
// locks, or another writer holds it past wait) it goes on unlocked: the
// write itself stays atomic.
func lockDir(dir string, wait time.Duration) (unlock func()) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		if f, err = os.Open(path); err != nil {
			return func() {}
		}
	}
	deadline := time.Now().Add(wait)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() {
				_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
				f.Close()
			}
		}
		if err != unix.EWOULDBLOCK && err != unix.EINTR || time.Now().After(deadline) {
			f.Close()
			return func() {}
		}
		time.Sleep(20 * time.Millisecond)
	}
}
