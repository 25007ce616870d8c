//go:build !unix

package capped

// openNonblock is 0 where the system has no non-blocking open (nor
// FIFOs in the file system).
const openNonblock = 0
