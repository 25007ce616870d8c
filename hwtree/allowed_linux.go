//go:build linux

package hwtree

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/barriertune/barriertune/hwtree/cpuset"
)

// liveAllowed returns the CPUs this process may run on (sched_getaffinity)
// and the memory nodes it may use (Mems_allowed_list), nil when unknown.
func liveAllowed() (cpuset.Set, *cpuset.Set, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return cpuset.Set{}, nil, err
	}
	var cpus []int
	for i := 0; i < len(set)*64; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return cpuset.Of(cpus...), nil, nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Mems_allowed_list:"); ok {
			if mems, err := cpuset.ParseList(v); err == nil && !mems.IsEmpty() {
				return cpuset.Of(cpus...), &mems, nil
			}
		}
	}
	return cpuset.Of(cpus...), nil, nil
}
