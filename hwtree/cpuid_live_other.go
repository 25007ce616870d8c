//go:build !linux || !(amd64 || 386)

package hwtree

import "github.com/barriertune/barriertune/cpuset"

// liveX86Procs returns nothing: CPUID needs an x86 processor, and asking a
// given CPU needs Linux's thread affinity.
func liveX86Procs(cpuset.Set) map[int]x86Proc { return nil }
