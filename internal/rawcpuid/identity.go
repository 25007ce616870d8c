package rawcpuid

import (
	"runtime"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/internal/capped"
)

// ID is a CPU's identity as a results file records it: on x86 from CPUID
// (the vendor string of leaf 0, the family, model and stepping of leaf 1,
// the brand string of leaves 0x80000002-4, the hypervisor's vendor string
// of leaf 0x40000000); on arm64 Linux from the main ID register,
// MIDR_EL1, as sysfs gives it (the implementer's name, (variant,
// architecture) as the family, (part number, revision) as the model, no
// brand). It is decoded the way the results files' fingerprints have
// always been, so files recorded before keep matching; the exported C
// header decodes it the same way.
type ID struct {
	Vendor                  string
	Family, Model, Stepping int
	Name                    string
	Hypervisor              string
}

// Identify returns the identity of the CPU the calling thread runs on
// (on x86; arm64 reads CPU 0's register): zero fields where the system
// says nothing.
func Identify() ID {
	if Available {
		return identify(func(leaf uint32) [4]uint32 {
			a, b, c, d := CPUID(leaf, 0)
			return [4]uint32{a, b, c, d}
		})
	}
	if runtime.GOARCH == "arm64" && runtime.GOOS == "linux" {
		b, err := capped.File{Limit: 64}.ReadFile("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1")
		if err == nil {
			if midr, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(string(b)), "0x"), 16, 64); err == nil {
				return fromMIDR(midr)
			}
		}
	}
	return ID{}
}

// identify decodes the x86 leaves q answers (EAX, EBX, ECX, EDX of a leaf,
// subleaf 0).
func identify(q func(leaf uint32) [4]uint32) ID {
	var id ID
	l0 := q(0)
	id.Vendor = text(l0[1], l0[3], l0[2])
	if l0[0] >= 1 {
		eax := q(1)[0]
		id.Family = int((eax >> 8) & 0xf)
		ext := id.Family == 0x6
		if id.Family == 0xf {
			id.Family += int((eax >> 20) & 0xff)
			ext = true
		}
		id.Model = int((eax >> 4) & 0xf)
		if ext {
			id.Model += int((eax >> 12) & 0xf0)
		}
		id.Stepping = int(eax & 0xf)
	}
	id.Name = "unknown"
	if q(0x80000000)[0] >= 0x80000004 {
		var v []uint32
		for i := uint32(0); i < 3; i++ {
			r := q(0x80000002 + i)
			v = append(v, r[:]...)
		}
		id.Name = strings.Trim(text(v...), " ")
	}
	h := q(0x40000000)
	id.Hypervisor = text(h[1], h[2], h[3])
	return id
}

// text is the registers' bytes, little-endian, up to the first zero byte.
func text(regs ...uint32) string {
	var b []byte
	for _, r := range regs {
		for i := 0; i < 4; i++ {
			c := byte(r >> (8 * i))
			if c == 0 {
				return string(b)
			}
			b = append(b, c)
		}
	}
	return string(b)
}

// implementers are the MIDR_EL1 implementer codes (bits 31-24) that have
// a name in the fingerprint; another implementer's vendor is "".
var implementers = map[uint64]string{
	0xC0: "Ampere Computing", 0x41: "Arm Limited", 0x42: "Broadcom Corporation", 0x43: "Cavium Inc",
	0x44: "Digital Equipment Corporation", 0x46: "Fujitsu Ltd", 0x49: "Infineon Technologies AG",
	0x4D: "Motorola or Freescale Semiconductor Inc", 0x4E: "NVIDIA Corporation",
	0x50: "Applied Micro Circuits Corporation", 0x51: "Qualcomm Inc", 0x56: "Marvell International Ltd",
	0x69: "Intel Corporation",
}

// fromMIDR decodes an arm64 main ID register.
func fromMIDR(midr uint64) ID {
	return ID{Vendor: implementers[(midr>>24)&0xff], Family: int(midr>>16) & 0xff, Model: int(midr) & 0xffff}
}
