//go:build !unix

package sysload

import (
	"errors"
	"time"
)

// ownCPU: no getrusage here.
func ownCPU() (time.Duration, error) {
	return 0, errors.New("sysload: no getrusage on this system")
}
