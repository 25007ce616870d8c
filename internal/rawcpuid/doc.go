// Package rawcpuid is the one source of the CPU's identity (Identify:
// CPUID on x86, MIDR_EL1 on arm64), and runs the x86 CPUID instruction with any leaf and
// subleaf, for the readers that decode what the processor says about
// itself (hwtree's caches where sysfs has none). On other architectures
// Available is false and CPUID returns zeros.
package rawcpuid
