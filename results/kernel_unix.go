//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package results

import "golang.org/x/sys/unix"

// kernel is the kernel's name and release, e.g. "Linux 6.8.0".
func kernel() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
}
