//go:build linux

package hwtree

import (
	"os"
	"strings"

	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/osal"
)

// liveAllowed returns the CPUs this process may run on (osal.Allowed: the
// process's, never the calling thread's affinity)
// and the memory nodes it may use (Mems_allowed_list), nil when unknown.
func liveAllowed() (cpuset.Set, *cpuset.Set, error) {
	cpus, err := osal.Allowed()
	if err != nil {
		return cpuset.Set{}, nil, err
	}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return cpus, nil, nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Mems_allowed_list:"); ok {
			if mems, err := cpuset.ParseList(v); err == nil && !mems.IsEmpty() {
				return cpus, &mems, nil
			}
		}
	}
	return cpus, nil, nil
}
