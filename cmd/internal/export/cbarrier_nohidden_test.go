package export

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Twenty waits whose partner is 3 ms late (so they sleep) make no malloc
// or fopen call and leave errno as it was: the program wraps
// malloc and fopen with the linker and counts calls inside the waits.
func TestCBarrierNothingHiddenInWait(t *testing.T) {
	path := cTool(t, "gcc")
	dir := headerDir(t, fixture(t))
	compileIn(t, dir, path, "nohidden", "nohidden.c", "-std=c11", "-O2", "-lm", "-Wl,--wrap=malloc,--wrap=fopen")
	out, err := runLimited(time.Minute, dir, filepath.Join(dir, "nohidden"))
	if err != nil || !strings.HasPrefix(out, "ok:") {
		t.Errorf("%v\n%s", err, out)
	}
}
