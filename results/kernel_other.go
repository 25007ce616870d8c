//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package results

import "runtime"

// kernel is the operating system's name where uname is unavailable.
func kernel() string { return runtime.GOOS }
