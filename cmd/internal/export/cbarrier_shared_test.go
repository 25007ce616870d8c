package export

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The process's facts and its count of spinning threads are one object
// per program, shared by every translation unit that includes the header,
// and the count returns to 0 once every wait has returned, with two
// barriers' waiters spinning at once.
func TestCBarrierSharedAcrossUnits(t *testing.T) {
	eachCC(t, func(t *testing.T, cc, path string) {
		dir := headerDir(t, fixture(t))
		compileIn(t, dir, path, "shared", "shared_a.c", filepath.Join(dir, "shared_b.c"), "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror")
		out, err := runLimited(2*time.Minute, dir, filepath.Join(dir, "shared"))
		if err != nil || !strings.HasPrefix(out, "ok") {
			t.Errorf("%v\n%s", err, out)
		}
	})
}
