//go:build !linux

package osal

import (
	"fmt"
	"runtime"

	"github.com/barriertune/barriertune/hwtree/cpuset"
)

// Allowed returns every CPU: this system has no affinity interface here.
func Allowed() (cpuset.Set, error) { return cpuset.Range(0, runtime.NumCPU()-1), nil }

// Pin is unsupported outside Linux.
func Pin(cpu int) error { return fmt.Errorf("pin to CPU %d: thread pinning needs Linux", cpu) }

type savedAffinity struct{}

func threadAffinity() (savedAffinity, error) { return savedAffinity{}, nil }
func restoreAffinity(savedAffinity) error    { return nil }
