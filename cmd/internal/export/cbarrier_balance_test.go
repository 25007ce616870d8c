package export

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/internal/osal"
)

// An outnumbered central barrier spreads its participants over the CPUs:
// the first to arrive on a CPU that ran more than its share in the
// episode before moves to the CPU that ran the fewest, and its affinity
// ends as it began. The decision step by step on words set by hand (the
// move, the waits between moves across a wrap, no move that would not
// help, a pinned thread left alone), then participants that all start on
// one CPU: the barrier property holds and every thread's affinity is
// unchanged at the end. BARRIERTUNE_NO_BALANCE turns it off.
func TestCBarrierBalance(t *testing.T) {
	if osal.Usable() < 2 {
		t.Skip("needs two CPUs")
	}
	eachCC(t, func(t *testing.T, cc, path string) {
		dir := headerDir(t, fixture(t))
		compileIn(t, dir, path, "balance", "balance.c", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror")
		bin := filepath.Join(dir, "balance")
		compileIn(t, dir, path, "balance-off", "balance.c", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-DBARRIERTUNE_NO_BALANCE")
		for _, c := range []struct{ bin, want string }{{"balance", "share 8"}, {"balance-off", "share 0"}} {
			out, err := runLimited(time.Minute, dir, filepath.Join(dir, c.bin), "share")
			if strings.HasPrefix(out, "skip: ") {
				t.Skip(strings.TrimSpace(out))
			}
			if err != nil || strings.TrimSpace(out) != c.want {
				t.Errorf("%s share: %v %q, want %q", c.bin, err, out, c.want)
			}
		}
		if out, err := runLimited(time.Minute, dir, bin, "move"); err != nil || strings.TrimSpace(out) != "ok move" {
			t.Errorf("move: %v\n%s", err, out)
		}
		for _, n := range []string{"8", "16"} {
			out, err := runLimited(time.Minute, dir, bin, "spread", n, "2000")
			if err != nil || !strings.HasPrefix(out, "ok spread") {
				t.Errorf("spread %s: %v\n%s", n, err, out)
				continue
			}
			t.Log(strings.TrimSpace(out))
		}
	})
}
