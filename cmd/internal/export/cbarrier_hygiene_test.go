package export

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The header leaks no <cpuid.h> macro (a program's own bit_AVX compiles
// after it) and reads no wall clock: no CLOCK_REALTIME and no TIME_UTC,
// so a step of the clock never lengthens a spin.
func TestCBarrierHygiene(t *testing.T) {
	var b strings.Builder
	if err := Write(&b, fixture(t), "c-barrier", Options{}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<cpuid.h>", "CLOCK_REALTIME", "TIME_UTC", "__get_cpuid"} {
		if strings.Contains(b.String(), bad) {
			t.Errorf("the header names %s", bad)
		}
	}
	eachCC(t, func(t *testing.T, cc, path string) {
		dir := headerDir(t, fixture(t))
		compileIn(t, dir, path, "hygiene", "hygiene.c", "-std=c11", "-Wall", "-Wextra", "-Werror", "-O1")
		if out, err := runLimited(time.Minute, dir, filepath.Join(dir, "hygiene")); err != nil {
			t.Errorf("%v\n%s", err, out)
		}
	})
}
