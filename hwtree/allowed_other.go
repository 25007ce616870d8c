//go:build !linux

package hwtree

import "github.com/barriertune/barriertune/cpuset"

// liveAllowed has no affinity to read outside Linux: every CPU is allowed.
func liveAllowed() (cpuset.Set, *cpuset.Set, error) { return cpuset.Set{}, nil, nil }
