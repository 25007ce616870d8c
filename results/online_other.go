//go:build !linux

package results

import "github.com/barriertune/barriertune/cpuset"

// OnlineCPUs returns the empty set (unknown) outside Linux.
func OnlineCPUs() cpuset.Set { return cpuset.Set{} }
