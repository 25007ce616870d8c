package results

import "github.com/barriertune/barriertune/cpuset"

// OnlineCPUs returns the online CPUs (on Linux,
// /sys/devices/system/cpu/online), or the empty set when they cannot be
// read or the system does not say.
func OnlineCPUs() cpuset.Set { return onlineCPUs() }
