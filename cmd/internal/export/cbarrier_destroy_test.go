package export

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Destroy-and-free right after the serial return, while the others may
// still be leaving their waits (one partner is late, so they sleep), is
// AddressSanitizer-clean: destroy waits until every thread that entered a
// wait has left it. gcc always, clang in the full C matrix.
func TestCBarrierDestroyAfterSerial(t *testing.T) {
	iters := "100"
	if fullMatrix {
		iters = "400"
	}
	eachCC(t, func(t *testing.T, cc, path string) {
		dir := headerDir(t, fixture(t))
		compileIn(t, dir, path, "destroy", "destroy.c", "-std=c11", "-O1", "-g", "-fsanitize=address", "-fno-omit-frame-pointer", "-lm")
		for _, n := range []string{"2", "3", "5"} {
			out, err := runLimited(2*time.Minute, dir, filepath.Join(dir, "destroy"), iters, n)
			if err != nil || !strings.HasPrefix(out, "ok ") || strings.Contains(out, "AddressSanitizer") {
				t.Errorf("%s threads: %v\n%s", n, err, out)
			}
		}
	})
}
