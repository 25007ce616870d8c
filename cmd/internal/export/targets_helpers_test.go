//go:build cmatrix

package export

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Helpers of the sanitizer, -m32, cross-target and C++ conformance builds
// (targets_test.go, conform_test.go), which run only in the full C matrix
// (-tags cmatrix, run by .ci/run).

// lookTool is cTool without the Linux check: the path of name, or a skip
// with the reason and what installs it.
func lookTool(t *testing.T, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed (.ci/run installs %s)", name, install)
	}
	return p
}

// target is how a test program is built and run for one build of the
// matrix: the compiler, its flags (after the source), and the command
// that runs a binary (nil: the binary itself; else an emulator and its
// flags before it).
type target struct {
	cc    string
	flags []string
	env   []string
	run   []string
}

// build compiles src in dir into bin for tg (-pthread and the flags
// only: no other library). A build that fails for want of a toolchain
// part (a sanitizer's runtime, the 32-bit libc) skips with the reason;
// any other failure fails the test with the compiler's message.
func (tg target) build(t *testing.T, dir, bin, src string) {
	t.Helper()
	args := append([]string{"-pthread", "-I", dir, "-o", filepath.Join(dir, bin), filepath.Join(dir, src)}, tg.flags...)
	out, err := runLimited(2*time.Minute, dir, tg.cc, args...)
	if err == nil {
		return
	}
	if slices.Contains(tg.flags, "-m32") {
		skipMissing32(t, filepath.Base(tg.cc), out)
	}
	if strings.Contains(out, "cannot find -l") || strings.Contains(out, "'barrier' file not found") {
		t.Skipf("%s %s: the toolchain lacks a library: %s", filepath.Base(tg.cc), strings.Join(tg.flags, " "), firstLine(out))
	}
	t.Fatalf("%v\n%s", err, out)
}

// exec runs bin (built by build) with args under limit.
func (tg target) exec(limit time.Duration, dir, bin string, args ...string) (string, error) {
	path := filepath.Join(dir, bin)
	if len(tg.run) == 0 {
		return runEnv(limit, dir, tg.env, path, args...)
	}
	all := append(append(append([]string{}, tg.run[1:]...), path), args...)
	return runEnv(limit, dir, tg.env, tg.run[0], all...)
}

// runner describes how tg runs binaries, for the log.
func (tg target) runner() string {
	if len(tg.run) == 0 {
		return "natively"
	}
	return "under " + strings.Join(tg.run, " ")
}

// m32Shim returns the -isystem flags a -m32 build needs on Debian
// without the gcc-multilib package: that package only adds the
// /usr/include/asm link to the native asm headers (which serve i386
// too), and it conflicts with the aarch64 and riscv64 cross compilers,
// so .ci/run installs gcc-12-multilib instead; the test links a directory
// of its own to them.
func m32Shim(t *testing.T) []string {
	t.Helper()
	if _, err := os.Stat("/usr/include/asm/errno.h"); err == nil {
		return nil
	}
	native, err := filepath.Glob("/usr/include/*-linux-gnu/asm/errno.h")
	if err != nil || len(native) == 0 {
		return nil // the build says what is missing
	}
	dir := t.TempDir()
	if err := os.Symlink(filepath.Dir(native[0]), filepath.Join(dir, "asm")); err != nil {
		t.Fatal(err)
	}
	return []string{"-isystem", dir}
}

// skipMissing32 skips when a -m32 build fails for want of the 32-bit
// libc or compiler runtime (libc6-dev-i386, gcc-12-multilib) rather
// than for the header.
func skipMissing32(t *testing.T, cc, out string) {
	t.Helper()
	for _, s := range []string{"gnu/stubs-32.h", "skipping incompatible", "cannot find crt1.o", "cannot find -lgcc", "cannot find Scrt1.o", "crtbegin"} {
		if strings.Contains(out, s) {
			t.Skipf("%s -m32: no 32-bit libc or runtime (.ci/run installs libc6-dev-i386 gcc-12-multilib): %s", cc, firstLine(out))
		}
	}
}
