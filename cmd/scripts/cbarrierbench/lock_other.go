//go:build !unix

package main

import "fmt"

// tryLock: -lock needs flock(2), which this system does not have.
func (g *gate) tryLock() (bool, error) {
	if g.lock == "" {
		return true, nil
	}
	return false, fmt.Errorf("-lock %s: file locks (flock) are not available on this system", g.lock)
}
