package export

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// With spin bound 0 every wait that finds its flag unset sleeps, with no
// timed backstop: a lost wake-up between a setter's release store and a
// sleeper's announcement hangs, and the program's alarm fails it. gcc always, clang in the full C matrix.
func TestCBarrierSleepStress(t *testing.T) {
	episodes := "3000"
	if fullMatrix {
		episodes = "20000"
	}
	eachCC(t, func(t *testing.T, cc, path string) {
		dir := headerDir(t, fixture(t))
		compileIn(t, dir, path, "sleepstress", "sleepstress.c", "-std=c11", "-O2", "-lm")
		for _, a := range []string{"central", "dissemination", "mcs", "combining"} {
			for _, n := range []string{"2", "3"} {
				out, err := runLimited(90*time.Second, dir, filepath.Join(dir, "sleepstress"), a, n, episodes)
				if err != nil || !strings.HasPrefix(out, "ok ") {
					t.Errorf("%s, %s threads: %v\n%s", a, n, err, out)
				}
			}
		}
	})
}
