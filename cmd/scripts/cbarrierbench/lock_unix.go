//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// tryLock takes the gate's lock without waiting: false while another
// process holds it.
func (g *gate) tryLock() (bool, error) {
	if g.lock == "" {
		return true, nil
	}
	f, err := os.OpenFile(g.lock, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return false, fmt.Errorf("opening the lock %s: %w", g.lock, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return false, nil
		}
		return false, fmt.Errorf("locking %s: %w", g.lock, err)
	}
	g.held = f
	return true, nil
}
