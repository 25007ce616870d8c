package rawcpuid

import "testing"

// turin is the leaves of an AMD family 0x1a CPU under bhyve, captured with
// CPUID on the development VM; klauspost/cpuid, which fingerprinted results
// files before, decoded them as want says.
var turin = map[uint32][4]uint32{
	0x0:        {0xd, 0x68747541, 0x444d4163, 0x69746e65},
	0x1:        {0xb00f21, 0xdbfe0800, 0xfed83203, 0x178bfbff},
	0x80000000: {0x80000021, 0x68747541, 0x444d4163, 0x69746e65},
	0x80000002: {0x6469784f, 0x69562065, 0x61757472, 0x7554206c},
	0x80000003: {0x2d6e6972, 0x656b696c, 0x6f725020, 0x73736563},
	0x80000004: {0x2020726f, 0x20202020, 0x20202020, 0x202020},
	0x40000000: {0x40000000, 0x76796862, 0x68622065, 0x20657679},
}

func table(m map[uint32][4]uint32) func(uint32) [4]uint32 {
	return func(leaf uint32) [4]uint32 { return m[leaf] }
}

// TestIdentify decodes captured and constructed leaves: the extended
// family only for base family 0xf, the extended model for families 6 and
// 0xf, the brand string trimmed of spaces ("unknown" without the brand
// leaves), strings cut at the first zero byte.
func TestIdentify(t *testing.T) {
	want := ID{Vendor: "AuthenticAMD", Family: 26, Model: 2, Stepping: 1, Name: "Oxide Virtual Turin-like Processor", Hypervisor: "bhyve bhyve "}
	if got := identify(table(turin)); got != want {
		t.Errorf("Turin: %+v, want %+v", got, want)
	}
	// An Intel family 6 model 0x55 stepping 4 (Skylake-SP), no brand leaves,
	// no hypervisor.
	intel := map[uint32][4]uint32{
		0x0: {0x16, 0x756e6547, 0x6c65746e, 0x49656e69},
		0x1: {0x50654, 0, 0, 0},
	}
	want = ID{Vendor: "GenuineIntel", Family: 6, Model: 0x55, Stepping: 4, Name: "unknown"}
	if got := identify(table(intel)); got != want {
		t.Errorf("Skylake-SP: %+v, want %+v", got, want)
	}
	// Base family 5: neither extended field counts.
	intel[0x1] = [4]uint32{0xf50552, 0, 0, 0}
	if got := identify(table(intel)); got.Family != 5 || got.Model != 5 || got.Stepping != 2 {
		t.Errorf("family 5: %+v, want family 5 model 5 stepping 2", got)
	}
	// No leaf 1: no family.
	if got := identify(table(map[uint32][4]uint32{0x0: {0, 0x756e6547, 0x6c65746e, 0x49656e69}})); got.Family != 0 || got.Vendor != "GenuineIntel" {
		t.Errorf("leaf 0 only: %+v", got)
	}
}

// TestFromMIDR decodes arm64 main ID registers: a named implementer, and
// one without a name.
func TestFromMIDR(t *testing.T) {
	if got, want := fromMIDR(0x413fd0c1), (ID{Vendor: "Arm Limited", Family: 0x3f, Model: 0xd0c1}); got != want {
		t.Errorf("Neoverse N1: %+v, want %+v", got, want)
	}
	if got, want := fromMIDR(0x990f0001), (ID{Family: 15, Model: 1}); got != want {
		t.Errorf("unnamed implementer: %+v, want %+v", got, want)
	}
}

// TestIdentifyHere: this machine's identity has a vendor where CPUID runs.
func TestIdentifyHere(t *testing.T) {
	id := Identify()
	if Available && (len(id.Vendor) != 12 || id.Family == 0) {
		t.Errorf("Identify() = %+v, want a 12-byte vendor and a family", id)
	}
	t.Logf("%+v", id)
}
