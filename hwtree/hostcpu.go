package hwtree

import "github.com/klauspost/cpuid/v2"

// CPUIdentity is what the CPUID instruction says about this machine's CPU.
type CPUIdentity struct {
	Vendor   string `json:"vendor"`
	Family   int    `json:"family"`
	Model    int    `json:"model"`
	Stepping int    `json:"stepping"`
	Name     string `json:"name"`
	// Hypervisor names the hypervisor vendor when running in a VM.
	Hypervisor string `json:"hypervisor,omitempty"`
}

// HostCPU returns the identity of the CPU this program runs on (empty
// fields where CPUID is unavailable, as on non-x86 machines).
func HostCPU() CPUIdentity {
	c := cpuid.CPU
	return CPUIdentity{
		Vendor:     c.VendorString,
		Family:     c.Family,
		Model:      c.Model,
		Stepping:   c.Stepping,
		Name:       c.BrandName,
		Hypervisor: c.HypervisorVendorString,
	}
}
