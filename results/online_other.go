//go:build !linux

package results

import "github.com/barriertune/barriertune/cpuset"

// onlineCPUs is the empty set (unknown) outside Linux (see OnlineCPUs).
func onlineCPUs() cpuset.Set { return cpuset.Set{} }
