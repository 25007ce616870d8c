//go:build amd64 || arm64

package osal

// Relax tells the CPU that the caller is in a spin-wait loop (PAUSE on
// amd64, ISB on arm64): it saves power, yields pipeline resources to the
// sibling hyperthread and avoids the memory-order flush on loop exit.
//
//go:noescape
func Relax()
