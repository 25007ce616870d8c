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
	// Launch (v1.7) are the launch-level settings timed (Open MPI's
	// binding, mapping and coll/sm: MCA parameters read when a job
	// starts, name=value joined by commas), one row per setting and rank
	// count: Setting names it, Baseline what it was paired with (the
	// count's export without it), DefaultNs the baseline's median,
	// BestNs the setting's, Ratio the median of their paired ratios,
	// Best the setting where it was faster (confirmed), Slower where the
	// baseline was faster by the margin and test (or it was more than
	// 1.3x in screening).
	Launch []MPICount `json:"launch,omitempty"`
	// LaunchChosen (v1.7) is the launch-level setting the export writes,
	// absent when none: a launch-level setting applies to every launch,
	// whatever its rank count, so it is chosen only when it was faster
	// at some count and measured, and not slower, at every count the
	// check measured.
	LaunchChosen string `json:"launch_chosen,omitempty"`
	// LaunchWhy (v1.7) says, per launch-level setting, what else it
	// changes and why it was or was not chosen, and which were not
	// offered (a component the installation lacks).
	LaunchWhy []string `json:"launch_why,omitempty"`
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
	// Setting, Baseline, Ratio and Slower (v1.7) are a launch-level row's
	// (MPIImplementation.Launch): the setting, what its baseline ran, the
	// median of the paired ratios (setting over baseline), and whether
	// it was slower.
	Setting  string  `json:"setting,omitempty"`
	Baseline string  `json:"baseline,omitempty"`
	Ratio    float64 `json:"ratio,omitempty"`
	Slower   bool    `json:"slower,omitempty"`
	// Verify (v1.7) is what the check found when it ran the loop through
	// the exported file at this count: "reproduced" (within the margin of
	// the time it chose), "faster" (faster than the defaults, not as
	// fast as chosen), "not_reproduced" or "not_verified"; absent where
	// the file sets nothing. VerifyRatio is the file's median time over
	// the defaults', VerifyWhy the finding in words.
	Verify      string  `json:"verify,omitempty"`
	VerifyRatio float64 `json:"verify_ratio,omitempty"`
	VerifyWhy   string  `json:"verify_why,omitempty"`
}

// maxMPIRanks caps a rank count read from a file.
const maxMPIRanks = 1 << 20

// validate refuses what an export could not write safely: an unknown
// implementation, a rank count out of range or repeated, a time below 0
// or not a number, or a setting that is not NAME=VALUE (or up to 4 joined
// by commas: a k value with its algorithm) with a name of the
// implementation's (Open MPI: lower case, digits and underscores; MPICH:
// MPIR_CVAR_ and capitals, digits, underscores) and a value of letters,
// digits, underscores, dots or minus signs; in the launch-level rows
// (v1.7) a setting that is not such pairs joined by commas (values may
// hold a colon: core:overload-allowed), and a chosen launch-level setting
// that was not measured faster at some count, or was slower, failed or
// not measured at any.
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
			if err := c.validate(fmt.Sprintf("mpi %s, %d ranks", im.Name, c.Ranks)); err != nil {
				return err
			}
			if c.Best == "" {
				continue
			}
			if err := mpiSetting(im.Name, c.Best); err != nil {
				return fmt.Errorf("mpi %s, %d ranks: %w", im.Name, c.Ranks, err)
			}
		}
		if err := im.validateLaunch(); err != nil {
			return err
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
		if len(parts) > 4 || !ok || !mpiName(impl, name) || !mpiValue(value, false) {
			return fmt.Errorf("setting %q is not NAME=VALUE[,NAME=VALUE...] (at most 4) with names of %s's and plain values (letters, digits, _ . -)", setting, impl)
		}
	}
	return nil
}

// maxLaunchRows caps an implementation's launch-level rows.
const maxLaunchRows = 4096

// validate checks c's times and verification (v1.7); where names the
// row in a refusal.
func (c MPICount) validate(where string) error {
	for _, x := range []float64{c.DefaultNs, c.DefaultSpreadNs, c.BestNs, c.SpreadNs} {
		if !(x >= 0) || x > 1e15 {
			return fmt.Errorf("%s: a time of %g ns (want 0 to 1e15)", where, x)
		}
	}
	for _, x := range []float64{c.Ratio, c.VerifyRatio} {
		if !(x >= 0) || x > 1e6 {
			return fmt.Errorf("%s: ratio or verify_ratio %g (want 0 to 1e6)", where, x)
		}
	}
	switch c.Verify {
	case "", "reproduced", "faster", "not_reproduced", "not_verified":
	default:
		return fmt.Errorf("%s: verify %q (want reproduced, faster, not_reproduced or not_verified)", where, c.Verify)
	}
	return nil
}

// validateLaunch checks im's launch-level rows and chosen setting.
func (im MPIImplementation) validateLaunch() error {
	if len(im.Launch) == 0 && im.LaunchChosen == "" {
		return nil
	}
	if im.Name != "openmpi" {
		return fmt.Errorf("mpi %s: launch-level settings are Open MPI's only", im.Name)
	}
	if len(im.Launch) > maxLaunchRows || len(im.LaunchWhy) > maxLaunchRows {
		return fmt.Errorf("mpi %s: %d launch rows, %d launch_why lines (at most %d)", im.Name, len(im.Launch), len(im.LaunchWhy), maxLaunchRows)
	}
	seen := map[string]bool{}
	for i, c := range im.Launch {
		where := fmt.Sprintf("mpi %s, launch[%d]", im.Name, i)
		if !launchSetting(c.Setting) {
			return fmt.Errorf("%s: setting %q is not name=value pairs joined by commas (MCA names: lower case, digits, _; values: letters, digits, _ . - :)", where, c.Setting)
		}
		if c.Ranks < 1 || c.Ranks > maxMPIRanks {
			return fmt.Errorf("%s: rank count %d is out of range (1 to %d)", where, c.Ranks, maxMPIRanks)
		}
		key := fmt.Sprintf("%s@%d", c.Setting, c.Ranks)
		if seen[key] {
			return fmt.Errorf("%s: setting %q at %d ranks is repeated", where, c.Setting, c.Ranks)
		}
		seen[key] = true
		if c.Best != "" && c.Best != c.Setting {
			return fmt.Errorf("%s: best %q is not the row's setting %q", where, c.Best, c.Setting)
		}
		if c.Best != "" && c.Slower {
			return fmt.Errorf("%s: %q is both faster (best) and slower at %d ranks", where, c.Setting, c.Ranks)
		}
		if err := c.validate(where); err != nil {
			return err
		}
	}
	if im.LaunchChosen == "" {
		return nil
	}
	faster := 0
	rows := 0
	for _, c := range im.Launch {
		if c.Setting != im.LaunchChosen {
			continue
		}
		rows++
		switch {
		case c.Slower:
			return fmt.Errorf("mpi %s: launch_chosen %q was slower at %d ranks: a launch-level setting applies to every count", im.Name, im.LaunchChosen, c.Ranks)
		case len(c.Failed) > 0:
			return fmt.Errorf("mpi %s: launch_chosen %q failed at %d ranks", im.Name, im.LaunchChosen, c.Ranks)
		case c.NotMeasured != "":
			return fmt.Errorf("mpi %s: launch_chosen %q was not measured at %d ranks: a launch-level setting applies to every count", im.Name, im.LaunchChosen, c.Ranks)
		case c.Best != "":
			faster++
		}
	}
	if faster == 0 {
		return fmt.Errorf("mpi %s: launch_chosen %q was not measured faster at any count (%d rows of it in launch)", im.Name, im.LaunchChosen, rows)
	}
	return nil
}

// launchSetting reports whether s is a launch-level setting a results
// file may hold: Open MPI MCA name=value pairs joined by commas (at most
// 8), names of lower case letters, digits and underscores, values of
// letters, digits, _ . - and colons.
func launchSetting(s string) bool {
	parts := strings.Split(s, ",")
	if s == "" || len(parts) > 8 {
		return false
	}
	for _, p := range parts {
		name, value, ok := strings.Cut(p, "=")
		if !ok || !mpiName("openmpi", name) || !mpiValue(value, true) {
			return false
		}
	}
	return true
}

// mpiValue reports whether v is a plain value: 1 to 64 letters, digits,
// _ . - (and colons where colon).
func mpiValue(v string, colon bool) bool {
	allowed := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"
	if colon {
		allowed += ":"
	}
	return v != "" && len(v) <= 64 && strings.Trim(v, allowed) == ""
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
