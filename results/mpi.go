package results

import (
	"fmt"
	"strings"
)

// MPI (v1.6) is the check's measurement of the MPI implementations on
// this machine: per implementation, MPI_Barrier among the ranks of this
// node under the implementation's defaults against settings of its own
// knobs, per rank count (cmd/internal/mpicheck). `export --format
// openmpi` and `export --format mpich` set only what this measured to
// help.
type MPI struct {
	// Loop describes the loop timed and one run's length; Seconds is the
	// wall time the step took, Share the most of the budget it could take.
	Loop    string  `json:"loop"`
	Seconds float64 `json:"seconds"`
	Share   string  `json:"share"`
	// Implementations are the implementations looked for, measured or
	// not.
	Implementations []MPIImplementation `json:"implementations"`
}

// MPIImplementation is one implementation: what built and launched the
// loop, and its rank counts.
type MPIImplementation struct {
	// Name is openmpi or mpich; Compiler its compiler wrapper, Launcher
	// its launcher (paths).
	Name     string `json:"name"`
	Compiler string `json:"compiler"`
	Launcher string `json:"launcher"`
	// Version is the implementation's own report (the first line of
	// MPI_Get_library_version); Library the shared library the wrapper
	// links; absent when not measured.
	Version string `json:"version,omitempty"`
	Library string `json:"library,omitempty"`
	// Root says how the launches ran as root (Open MPI refuses root
	// unless told); absent when not root.
	Root string `json:"root,omitempty"`
	// NotMeasured says why the implementation was not measured.
	NotMeasured string `json:"not_measured,omitempty"`
	// Counts are the rank counts measured.
	Counts []MPICount `json:"counts,omitempty"`
}

// MPICount is one implementation at one rank count. Settings are
// NAME=VALUE: an Open MPI MCA parameter (coll_tuned_barrier_algorithm=1,
// forced with coll_tuned_use_dynamic_rules=1) or an MPICH CVAR
// (MPIR_CVAR_...), or up to 4 of them joined by commas (MPICH: a k value
// with the algorithm that reads it).
type MPICount struct {
	Ranks int `json:"ranks"`
	// DefaultNs is the median ns per barrier (the slowest rank's) under
	// the defaults, DefaultSpreadNs how far apart the ranks left a
	// barrier under them (the latest minus the earliest, median); 0 with
	// NotMeasured.
	DefaultNs       float64 `json:"default_ns,omitempty"`
	DefaultSpreadNs float64 `json:"default_spread_ns,omitempty"`
	// Best is the setting chosen, faster than the defaults by the
	// check's margin and test and confirmed in fresh pairs; absent when
	// the defaults stay (Why says why). BestNs is its median, SpreadNs
	// its leaving spread, MarginPct how much slower the defaults' median
	// is, in percent, and Test the test that separated them.
	Best      string  `json:"best,omitempty"`
	BestNs    float64 `json:"best_ns,omitempty"`
	SpreadNs  float64 `json:"spread_ns,omitempty"`
	MarginPct float64 `json:"margin_pct,omitempty"`
	Test      string  `json:"test,omitempty"`
	// Why says why the defaults stay (or what the count costs where
	// nothing was tried: MPICH above the CPUs).
	Why string `json:"why,omitempty"`
	// NotMeasured says why this count was not measured.
	NotMeasured string `json:"not_measured,omitempty"`
	// Failed are the settings that crashed, hung (killed with their
	// launch's process group) or were refused; never chosen.
	Failed []string `json:"failed,omitempty"`
	// Settings is how many settings were timed, Runs how many runs.
	Settings int `json:"settings"`
	Runs     int `json:"runs"`
}

// maxMPIRanks caps a rank count read from a file.
const maxMPIRanks = 1 << 20

// validate refuses what an export could not write safely: an unknown
// implementation, a rank count out of range or repeated, a time below 0
// or not a number, or a setting that is not NAME=VALUE (or up to 4 joined
// by commas: a k value with its algorithm) with a name of the
// implementation's (Open MPI: lower case, digits and underscores; MPICH:
// MPIR_CVAR_ and capitals, digits, underscores) and a value of letters,
// digits, underscores, dots or minus signs.
func (m *MPI) validate() error {
	if m == nil {
		return nil
	}
	for _, im := range m.Implementations {
		if im.Name != "openmpi" && im.Name != "mpich" {
			return fmt.Errorf("mpi: implementation %q is not openmpi or mpich", im.Name)
		}
		seen := map[int]bool{}
		for _, c := range im.Counts {
			if c.Ranks < 1 || c.Ranks > maxMPIRanks || seen[c.Ranks] {
				return fmt.Errorf("mpi %s: rank count %d is out of range (1 to %d) or repeated", im.Name, c.Ranks, maxMPIRanks)
			}
			seen[c.Ranks] = true
			for _, x := range []float64{c.DefaultNs, c.DefaultSpreadNs, c.BestNs, c.SpreadNs} {
				if !(x >= 0) || x > 1e15 {
					return fmt.Errorf("mpi %s, %d ranks: a time of %g ns (want 0 to 1e15)", im.Name, c.Ranks, x)
				}
			}
			if c.Best == "" {
				continue
			}
			if err := mpiSetting(im.Name, c.Best); err != nil {
				return fmt.Errorf("mpi %s, %d ranks: %w", im.Name, c.Ranks, err)
			}
		}
	}
	return nil
}

// mpiSetting refuses a setting that is not NAME=VALUE[,NAME=VALUE...]
// (at most 4 assignments, each with a name of impl's and a plain value).
func mpiSetting(impl, setting string) error {
	parts := strings.Split(setting, ",")
	for _, kv := range parts {
		name, value, ok := strings.Cut(kv, "=")
		if len(parts) > 4 || !ok || !mpiName(impl, name) || value == "" || len(value) > 64 || strings.Trim(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != "" {
			return fmt.Errorf("setting %q is not NAME=VALUE[,NAME=VALUE...] (at most 4) with names of %s's and plain values (letters, digits, _ . -)", setting, impl)
		}
	}
	return nil
}

// mpiName reports whether name is one of impl's parameter names: Open
// MPI's MCA names (lower case letters, digits, underscores), MPICH's
// MPIR_CVAR_ names.
func mpiName(impl, name string) bool {
	if len(name) == 0 || len(name) > 128 {
		return false
	}
	if impl == "openmpi" {
		return strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == "" && name[0] >= 'a' && name[0] <= 'z'
	}
	rest, ok := strings.CutPrefix(name, "MPIR_CVAR_")
	return ok && rest != "" && strings.Trim(rest, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == ""
}
