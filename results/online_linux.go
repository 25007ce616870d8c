//go:build linux

package results

import (
	"os"

	"github.com/barriertune/barriertune/cpuset"
)

// onlineCPUs reads /sys/devices/system/cpu/online (see OnlineCPUs).
func onlineCPUs() cpuset.Set {
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
