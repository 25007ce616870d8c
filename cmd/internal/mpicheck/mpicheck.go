// Package mpicheck measures the MPI implementations on this machine: it
// finds Open MPI and MPICH by their compiler wrappers and launchers
// (Debian installs them side by side: mpicc.openmpi and mpirun.openmpi,
// mpicc.mpich and mpirun.mpich), builds a small MPI barrier loop
// (csrc/mpiloop.c) with each, and times MPI_Barrier among the ranks of this
// node under the implementation's defaults and under candidate settings
// of its own knobs (Tune).
//
// Every launch is a child process in a process group of its own, under a
// time limit (cmd/internal/child, or Session's own group kill): a setting
// that hangs the implementation is killed with the whole launch and
// reported, as is one that crashes it or that it refuses; such a setting
// is never chosen. Open MPI refuses to run as root unless told: as root
// the launches set OMPI_ALLOW_RUN_AS_ROOT=1 and
// OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1, and Program.Root says so.
//
// Open MPI's settings are timed inside one launch per rank count
// (Session): its coll/tuned component reads the forced barrier algorithm
// when a communicator is made, so the loop makes one communicator per
// setting through the MPI tool interface and times them in pairs with the
// defaults' communicator, as the caller asks. Its launch-level settings
// (binding, mapping, coll/sm: read when a job starts) are timed in
// launches of their own (TuneLaunch). MPICH's settings are environment
// variables, one launch each (Program.Run).
package mpicheck

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/child"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/osal"
)

//go:embed csrc/mpiloop.c
var loopSource []byte

// The implementations' names, as the results file records them.
const (
	// OpenMPI is Open MPI.
	OpenMPI = "openmpi"
	// MPICH is MPICH.
	MPICH = "mpich"
)

// Implementation is an MPI implementation's compiler wrapper and
// launcher.
type Implementation struct {
	// Name is OpenMPI or MPICH.
	Name string
	// Compiler and Launcher are commands (names on $PATH or paths).
	Compiler, Launcher string
}

// Implementations are the implementations the check looks for, by the
// names Debian and Ubuntu install side by side.
func Implementations() []Implementation {
	return []Implementation{
		{Name: OpenMPI, Compiler: "mpicc.openmpi", Launcher: "mpirun.openmpi"},
		{Name: MPICH, Compiler: "mpicc.mpich", Launcher: "mpirun.mpich"},
	}
}

// Found reports whether im's compiler wrapper and launcher are on $PATH:
// a cheap look, before anything is built.
func (im Implementation) Found() bool {
	_, e1 := exec.LookPath(im.Compiler)
	_, e2 := exec.LookPath(im.Launcher)
	return e1 == nil && e2 == nil
}

// ErrNotInstalled says that an implementation's compiler wrapper or
// launcher is not installed.
var ErrNotInstalled = errors.New("not installed")

// Program is the barrier loop built with one implementation.
type Program struct {
	Implementation
	// Path is the built program; Compiler and Launcher are resolved paths.
	Path string
	// Version is the implementation's own report (MPI_Get_library_version's
	// first line), from the first launch; "" before.
	Version string
	// Root says how the launches run as root ("" when not root).
	Root string
	// CPUSet (Open MPI) is the CPUs the launches may use, as a CPU list,
	// where the process may use fewer than the machine's online CPUs (a
	// batch job's or container's subset, taskset): Open MPI's launcher
	// places and binds its ranks by the machine's tree, not by the
	// affinity it inherits, so its launches pass --cpu-set with it; ""
	// where every online CPU is allowed (the option then changes Open
	// MPI's own binding).
	CPUSet string
	// ParamFiles is what Open MPI's launches read MCA parameters from
	// (the installation's etc/openmpi-mca-params.conf, never a user's
	// ~/.openmpi/mca-params.conf): the defaults are the installation's.
	ParamFiles string
	// cvars are the CVAR names MPICH was asked about (true: it has
	// them; mpich.go).
	cvars map[string]bool
	// CollSM says that ompi_info lists Open MPI's coll sm component,
	// CollSMDegree its coll_sm_tree_degree's default (0: no such
	// parameter): the launch-level candidates offer coll/sm only then.
	CollSM       bool
	CollSMDegree int
	// DefaultBinding says that ompi_info, read with the launches'
	// environment, reports no hwloc_base_binding_policy: Open MPI binds
	// as its own default says (a core at 2 ranks or fewer, nothing when
	// oversubscribed), so a launch-level binding that is that default at
	// a count is not timed there.
	DefaultBinding bool
}

// probeTimeout bounds a probe (ompi_info).
const probeTimeout = 20 * time.Second

// Build compiles the loop with im's compiler wrapper into dir (the
// first launch, a Run or a Session, fills in Version). It fails, saying
// why, when the wrapper or launcher is missing (wrapping ErrNotInstalled)
// or when the compilation fails.
func Build(ctx context.Context, im Implementation, dir string) (*Program, error) {
	cc, err := exec.LookPath(im.Compiler)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (%s's compiler wrapper)", im.Compiler, ErrNotInstalled, im.Name)
	}
	run, err := exec.LookPath(im.Launcher)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (%s's launcher)", im.Launcher, ErrNotInstalled, im.Name)
	}
	bin, out, err := child.Compile(ctx, cc, loopSource, dir, "mpiloop-"+im.Name, "-O2")
	if err != nil && ctx.Err() != nil {
		// Stopped (a signal, the step's share of the budget), not a
		// compiler that failed: say which.
		return nil, fmt.Errorf("building the loop with %s was stopped: %w", im.Compiler, context.Cause(ctx))
	}
	if err != nil {
		return nil, fmt.Errorf("%s failed (is %s's development package installed?): %v: %s", im.Compiler, im.Name, err, child.FirstLines(out.Combined(), 3))
	}
	p := &Program{Implementation: Implementation{Name: im.Name, Compiler: cc, Launcher: run}, Path: bin}
	if os.Geteuid() == 0 && im.Name == OpenMPI {
		p.Root = "running as root: Open MPI refuses root unless told, so every launch sets OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
	}
	if im.Name == OpenMPI {
		p.ParamFiles = openMPISystemParams(ctx)
		if allowed, err := osal.Allowed(); err == nil {
			p.CPUSet = restricted(allowed, osal.OnlineCPUs())
		}
		p.probeOpenMPI(ctx)
		if p.CPUSet != "" {
			// Under --cpu-set Open MPI binds otherwise than its
			// default says: time every binding.
			p.DefaultBinding = false
		}
	}
	return p, nil
}

// openMPISystemParams is the installation's MCA parameter file
// (SYSCONFDIR/openmpi-mca-params.conf, from ompi_info), or "" when
// ompi_info does not say or the file is missing.
func openMPISystemParams(ctx context.Context) string {
	info, err := exec.LookPath("ompi_info")
	if err != nil {
		return ""
	}
	c, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	out, err := child.Run(c, nil, info, "--path", "sysconfdir", "--parsable")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(out.Stdout), "\n") {
		// path:sysconfdir:/etc/openmpi
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "path:sysconfdir:"); ok {
			f := filepath.Join(v, "openmpi-mca-params.conf")
			if _, err := os.Stat(f); err == nil {
				return f
			}
		}
	}
	return ""
}

// restricted is allowed as a CPU list where it is a strict subset of the
// online CPUs, else "" (also when either is unknown).
func restricted(allowed, online cpuset.Set) string {
	if allowed.IsEmpty() || online.IsEmpty() || !allowed.SubsetOf(online) || allowed.Equal(online) {
		return ""
	}
	return allowed.String()
}
