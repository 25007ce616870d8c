//go:build unix

package capped

import "syscall"

// openNonblock makes an open return at once where it would wait (a FIFO
// with no writer); reads of a regular file are unaffected.
const openNonblock = syscall.O_NONBLOCK
