package export

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// On arm64 the header recognises the machine by its MIDR_EL1 (sysfs'
// midr_el1), read as Go's klauspost/cpuid reads it for the results file:
// the implementer's name, (variant, architecture) as the family, (part
// number, revision) as the model, no brand. Built with the
// aarch64 cross compiler and run under qemu-user, in the full C matrix.
func TestCBarrierMIDR(t *testing.T) {
	if !fullMatrix {
		t.Skip("the aarch64 build runs in the full C matrix (-tags cmatrix, run by .ci/run)")
	}
	cc, err := exec.LookPath("aarch64-linux-gnu-gcc")
	if err != nil {
		t.Skip("aarch64-linux-gnu-gcc not installed (.ci/run installs gcc-aarch64-linux-gnu)")
	}
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		t.Skip("qemu-aarch64 not installed (.ci/run installs qemu-user)")
	}
	dir := headerDir(t, fixture(t))
	// One build reads every case's MIDR_EL1, rewritten between the runs.
	root := filepath.Join(dir, "root")
	midr := filepath.Join(root, "sys/devices/system/cpu/cpu0/regs/identification/midr_el1")
	mkdirs(t, midr)
	compileIn(t, dir, cc, "midr", "midr.c", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", testRoot(root))
	for _, c := range []struct{ midr, want string }{
		{"0x00000000413fd0c1\n", "Arm Limited|63|53441|"},      // Neoverse N1 r3p1
		{"0x00000000410fd4f0\n", "Arm Limited|15|54512|"},      // Neoverse V2 (Grace)
		{"0x00000000c00fac30\n", "Ampere Computing|15|44080|"}, // AmpereOne
		{"0x00000000461f0010\n", "Fujitsu Ltd|31|16|"},         // A64FX
		{"0x000000004e0f0040\n", "NVIDIA Corporation|15|64|"},
		{"0x00000000990f0001\n", "|15|1|"}, // an implementer Go's cpuid does not name
		{"zz\n", "none"},
		{"", "none"},
		{"0x1234567890abcdef12\n", "none"}, // more than 64 bits
	} {
		if err := os.WriteFile(midr, []byte(c.midr), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := runLimited(time.Minute, dir, qemu, "-L", "/usr/aarch64-linux-gnu", filepath.Join(dir, "midr"))
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if got := strings.TrimSpace(out); got != c.want {
			t.Errorf("MIDR %q: %q, want %q", c.midr, got, c.want)
		}
	}
}
