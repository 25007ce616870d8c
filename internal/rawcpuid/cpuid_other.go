//go:build !amd64 && !386

package rawcpuid

// Available says whether this architecture has the CPUID instruction.
const Available = false

// CPUID returns zeros: this architecture has no CPUID instruction.
func CPUID(leaf, sub uint32) (eax, ebx, ecx, edx uint32) {
	return 0, 0, 0, 0
}
