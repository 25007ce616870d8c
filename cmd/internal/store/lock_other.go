//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package store

import "time"

// lockDir has no lock to take here: the write itself stays atomic.
func lockDir(string, time.Duration) (unlock func()) { return func() {} }
