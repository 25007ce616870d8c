package check

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cmd/internal/mpicheck"
)

// noMPI is the live measurer with implementations that are not
// installed.
type noMPI struct{ Hardware }

func (noMPI) MPIImplementations() []mpicheck.Implementation {
	return []mpicheck.Implementation{
		{Name: mpicheck.OpenMPI, Compiler: "barriertune-no-mpicc", Launcher: "barriertune-no-mpirun"},
		{Name: mpicheck.MPICH, Compiler: "barriertune-no-mpicc.mpich", Launcher: "barriertune-no-mpirun.mpich"},
	}
}

// TestMPIMissing: without an implementation, each is recorded as not
// installed, in one line each, and the step returns at once; told to
// measure no MPI (--runtimes openmp), it records nothing.
func TestMPIMissing(t *testing.T) {
	f := openMPFile()
	start := time.Now()
	measureMPI(context.Background(), f, Config{Budget: time.Minute, Algorithms: catalog.Names()}, noMPI{}, start.Add(20*time.Second))
	if f.MPI == nil || len(f.MPI.Implementations) != 2 {
		t.Fatalf("got %+v, want both implementations recorded", f.MPI)
	}
	for _, im := range f.MPI.Implementations {
		if !strings.Contains(im.NotMeasured, "not installed") || len(im.Counts) != 0 {
			t.Errorf("%s: %+v, want not measured: not installed", im.Name, im)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the step took %s without an implementation", d)
	}
	f = openMPFile()
	measureMPI(context.Background(), f, Config{Budget: time.Minute, Algorithms: catalog.Names(), Runtimes: []string{RuntimeOpenMP}}, noMPI{}, start.Add(20*time.Second))
	if f.MPI != nil {
		t.Errorf("--runtimes openmp recorded MPI: %+v", f.MPI)
	}
}

// TestParseRuntimes: the accepted lists, and refusals naming the value
// and what is accepted.
func TestParseRuntimes(t *testing.T) {
	for in, want := range map[string]string{"openmp,openmpi,mpich": "openmp openmpi mpich", "none": "", "mpich": "mpich"} {
		got, err := ParseRuntimes(in)
		if err != nil || strings.Join(got, " ") != want || got == nil {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{"intelmpi": `"intelmpi": unknown (accepted: openmp, openmpi, mpich, or none alone)`, "openmp,none": `"none"`, "mpich,mpich": "twice", "": `""`} {
		if _, err := ParseRuntimes(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error naming %s", in, err, want)
		}
	}
}
