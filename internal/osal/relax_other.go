//go:build !amd64 && !arm64

package osal

// Relax is a spin-wait hint; on this architecture there is no instruction
// for it and it does nothing.
func Relax() {}
