// Package rawcpuid runs the x86 CPUID instruction with any leaf and
// subleaf, for the readers that decode what the processor says about
// itself (hwtree's caches where sysfs has none). On other architectures
// Available is false and CPUID returns zeros.
package rawcpuid
