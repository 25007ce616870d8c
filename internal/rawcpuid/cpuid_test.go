package rawcpuid

import "testing"

// TestVendor checks the stub against the one fact every x86 CPU reports the
// same way: leaf 0's vendor string is 12 printable ASCII bytes, and the
// highest leaf is at least 1.
func TestVendor(t *testing.T) {
	if !Available {
		a, b, c, d := CPUID(0, 0)
		if a|b|c|d != 0 {
			t.Fatalf("CPUID without the instruction = %#x %#x %#x %#x, want zeros", a, b, c, d)
		}
		t.Skip("no CPUID on this architecture")
	}
	max, b, c, d := CPUID(0, 0)
	if max < 1 {
		t.Fatalf("highest standard leaf %d, want at least 1", max)
	}
	var v []byte
	for _, r := range []uint32{b, d, c} {
		v = append(v, byte(r), byte(r>>8), byte(r>>16), byte(r>>24))
	}
	for _, ch := range v {
		if ch < 0x20 || ch > 0x7e {
			t.Fatalf("vendor %q has a non-printable byte", v)
		}
	}
	t.Logf("vendor %s, highest leaf %#x", v, max)
}
