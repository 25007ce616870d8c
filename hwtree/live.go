package hwtree

import (
	"errors"
	"fmt"
	"runtime"
)

// Live discovers this machine's CPU tree from /sys and /proc. Outside
// Linux there is no sysfs to read: the error wraps errors.ErrUnsupported,
// and a tree can still be read from hwloc XML, a synthetic string or JSON.
func Live() (*Topology, error) {
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("discovering this machine's CPU tree needs Linux sysfs (this is %s): %w; give a topology source (--synthetic, --xml, --topology)", runtime.GOOS, errors.ErrUnsupported)
	}
	return FromSysfs("/")
}
