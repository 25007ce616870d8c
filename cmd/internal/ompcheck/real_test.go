package ompcheck

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/internal/osal"
)

// TestRealRuntimes builds the loop with each toolchain installed here and
// runs every candidate once, with a CPU per thread and above the CPUs:
// the runtime accepts each (no warning), runs the threads asked for, and
// reports its library and version. A toolchain not installed is skipped.
func TestRealRuntimes(t *testing.T) {
	allowed, err := osal.Allowed()
	if err != nil || allowed.IsEmpty() {
		t.Skipf("no allowed CPUs: %v", err)
	}
	cpus, list := allowed.Len(), allowed.String()
	for _, tc := range Toolchains() {
		t.Run(tc.Runtime, func(t *testing.T) {
			if _, err := exec.LookPath(tc.Compiler); err != nil {
				t.Skipf("%s not installed", tc.Compiler)
			}
			ctx := context.Background()
			p, err := Build(ctx, tc, t.TempDir())
			if err != nil {
				if errors.Is(err, ErrNoCompiler) || strings.Contains(err.Error(), "-fopenmp failed") {
					t.Skipf("%s: %v", tc.Runtime, err)
				}
				t.Fatal(err)
			}
			if p.Library == "" || p.Library == "unknown" || !strings.Contains(p.Library, tc.Runtime) || p.Version == "" {
				t.Errorf("library %q, version %q: want the %s library and a version", p.Library, p.Version, tc.Runtime)
			}
			for _, n := range []int{2, 2 * cpus} {
				for _, c := range append([]Setting{nil}, Candidates(tc.Runtime, n, list, cpus)...) {
					tm, err := p.Run(ctx, Sample{Threads: n, Seconds: 0.002, Warmup: 0.001, Env: c, Limit: 20 * time.Second})
					if err != nil {
						t.Errorf("%s at %d threads: %v", c, n, err)
						continue
					}
					if len(tm.Barrier) != 10 || len(tm.Stencil) != 10 || !(tm.NsPerBarrier() > 0) || !(tm.StencilNs() > 0) {
						t.Errorf("%s at %d threads: chunks %v and %v", c, n, tm.Barrier, tm.Stencil)
					}
				}
			}
		})
	}
}
