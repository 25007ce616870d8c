package export

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/internal/osal"
)

// A main thread pinned to one CPU before init keeps a 2-thread barrier in
// its spinning mode, on the first init and after a re-init:
// the header reads the process's CPUs when the program is loaded, never
// the caller's affinity at init.
func TestCBarrierMainPinnedBeforeInit(t *testing.T) {
	if osal.Usable() < 2 {
		t.Skip("needs 2 allowed CPUs: with one, 2 threads do outnumber them")
	}
	path := cTool(t, "gcc")
	dir := headerDir(t, fixture(t))
	compileIn(t, dir, path, "pinmain", "pinmain.c", "-std=c11", "-O2", "-lm")
	out, err := runLimited(time.Minute, dir, filepath.Join(dir, "pinmain"))
	if err != nil || !strings.HasPrefix(out, "ok") {
		t.Errorf("%v\n%s", err, out)
	}
}
