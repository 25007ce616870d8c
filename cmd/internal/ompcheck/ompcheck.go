// Package ompcheck measures the OpenMP runtimes on this machine: it finds
// a C compiler that builds with -fopenmp against a runtime (gcc: GNU
// libgomp; clang: LLVM libomp), builds small OpenMP loops (csrc/omploop.c:
// an untimed warm-up, then a plain barrier loop and a stencil, each timed
// in chunks) with it, and times them under the runtime's defaults and
// under candidate settings of the runtime's own variables through
// cmd/internal/pairs: every run checked for steady state, every
// candidate's run paired with a run of the defaults in the same round,
// nothing decided on too few pairs (Tune).
//
// Every run of the loop is a child process in a process group of its own,
// under a time limit: a setting that hangs the runtime is killed by its
// process group's id and reported, as is one that crashes it or that the
// runtime refuses (a warning on stderr); such a setting is never chosen.
//
// The package knows which variables each runtime reads (Reads) and the
// values each accepts (Candidates holds only values checked against the
// runtimes' own parsers: libgomp's env.c, libomp's kmp_settings.cpp). How
// a setting is judged faster than the defaults is the caller's (the
// check's tie margin and significance test, Config.Verdict).
package ompcheck

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/child"
)

//go:embed csrc/omploop.c
var loopSource []byte

// The runtimes' names, as the results file records them.
const (
	// LibGOMP is GNU libgomp, what gcc -fopenmp links.
	LibGOMP = "libgomp"
	// LibOMP is LLVM libomp, what clang -fopenmp links.
	LibOMP = "libomp"
)

// Toolchain is a compiler and the OpenMP runtime its -fopenmp links.
type Toolchain struct {
	// Runtime is LibGOMP or LibOMP.
	Runtime string
	// Compiler is the compiler's command (a name on $PATH or a path).
	Compiler string
}

// Toolchains are the compilers the check tries, one per runtime: gcc for
// libgomp, clang for libomp (Debian's clang finds libomp in its own
// library directory, /usr/lib/llvm-N/lib).
func Toolchains() []Toolchain {
	return []Toolchain{{Runtime: LibGOMP, Compiler: "gcc"}, {Runtime: LibOMP, Compiler: "clang"}}
}

// ErrNoCompiler says that a toolchain's compiler is not installed.
var ErrNoCompiler = errors.New("compiler not found")

// Program is the barrier loop built for one runtime.
type Program struct {
	// Runtime is LibGOMP or LibOMP.
	Runtime string
	// Compiler is the compiler's path and CompilerVersion its version
	// (-dumpversion).
	Compiler, CompilerVersion string
	// Path is the built program.
	Path string
	// Library is the runtime's shared object the program loaded, with
	// symbolic links resolved (the path carries the soname's version).
	Library string
	// Version names the runtime's version: libomp's own report
	// (KMP_VERSION=1) when it gives one, else the compiler's version.
	Version string
}

// probeTimeout bounds a run that asks the runtime (or the compiler) for
// its library and version.
const probeTimeout = 10 * time.Second

// Build compiles the barrier loop with tc's compiler and -fopenmp into
// dir, then runs it once on one thread to learn which runtime library it
// loads and that runtime's version. It fails, saying why, when the
// compiler is missing (wrapping ErrNoCompiler), when the compilation fails
// (an OpenMP runtime or header missing, say) or when the built program
// does not run.
func Build(ctx context.Context, tc Toolchain, dir string) (*Program, error) {
	cc, err := exec.LookPath(tc.Compiler)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (%s needs %s -fopenmp)", tc.Compiler, ErrNoCompiler, tc.Runtime, tc.Compiler)
	}
	bin, out, err := child.Compile(ctx, cc, loopSource, dir, "omploop-"+tc.Runtime, "-O2", "-fopenmp")
	if err != nil {
		return nil, fmt.Errorf("%s -fopenmp failed (is %s's OpenMP runtime %s installed?): %v: %s", tc.Compiler, tc.Compiler, tc.Runtime, err, child.FirstLines(out.Combined(), 3))
	}
	p := &Program{Runtime: tc.Runtime, Compiler: cc, Path: bin}
	vctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if v, err := child.Run(vctx, nil, cc, "-dumpversion"); err == nil {
		p.CompilerVersion = strings.TrimSpace(string(v.Stdout))
	}
	s, err := p.Run(ctx, Sample{Threads: 1, Seconds: 0.001, Shapes: "barrier", Env: []string{"KMP_VERSION=1"}, Limit: probeTimeout, Tolerant: true})
	if err != nil {
		return nil, fmt.Errorf("the program %s -fopenmp built does not run: %w", tc.Compiler, err)
	}
	p.Library = s.Library
	if r, err := filepath.EvalSymlinks(s.Library); err == nil {
		p.Library = r
	}
	p.Version = versionOf(tc, p.CompilerVersion, s.Stderr)
	return p, nil
}

// versionOf names the runtime's version: libomp's KMP_VERSION report
// ("LLVM OMP version: ..." and "build compiler: ..."), else the compiler's
// (libgomp ships with gcc, and its version is gcc's).
func versionOf(tc Toolchain, ccVersion, stderr string) string {
	var parts []string
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		for _, key := range []string{"LLVM OMP version:", "LLVM OMP build compiler:"} {
			if v, ok := strings.CutPrefix(l, key); ok {
				parts = append(parts, strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(key, "LLVM OMP ")), ":")+" "+strings.TrimSpace(v))
			}
		}
	}
	if len(parts) > 0 {
		return "LLVM OMP " + strings.Join(parts, ", ")
	}
	if ccVersion != "" {
		return tc.Compiler + " " + ccVersion
	}
	return "unknown"
}
