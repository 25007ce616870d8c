//go:build amd64 || 386

package rawcpuid

// Available says whether this architecture has the CPUID instruction.
const Available = true

// CPUID runs the CPUID instruction with EAX=leaf and ECX=sub on the CPU the
// calling thread runs on (lock and pin the thread to ask a given CPU).
func CPUID(leaf, sub uint32) (eax, ebx, ecx, edx uint32) {
	return cpuid(leaf, sub)
}

//go:noescape
func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
