//go:build linux

package results

import (
	"os"

	"github.com/barriertune/barriertune/cpuset"
)

// OnlineCPUs returns the online CPUs (/sys/devices/system/cpu/online), or
// the empty set when they cannot be read.
func OnlineCPUs() cpuset.Set {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil || len(b) > 1<<16 {
		return cpuset.Set{}
	}
	s, err := cpuset.ParseList(string(b))
	if err != nil {
		return cpuset.Set{}
	}
	return s
}
