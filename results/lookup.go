package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/barriertune/barriertune/cpuset"
)

// Environment variables every reader honours.
const (
	// ResultsEnv names a results file to try first.
	ResultsEnv = "BARRIERTUNE_RESULTS"
	// ForceEnv, set to 1, makes readers use a file recorded on another
	// machine, or a simulated one (Found.Warning says how it differs).
	ForceEnv = "BARRIERTUNE_FORCE"
)

// SystemPath is the system-wide results file: `sudo barriertune check
// --system` writes it and every user's programs read it last.
const SystemPath = "/etc/barriertune/results.json"

// Finder is the one lookup order for results files, used by barriers.Auto
// and Tuned, `barriertune show`, `export`, `plot` and `check --resume`:
//
//  1. $BARRIERTUNE_RESULTS (Env), when set;
//  2. the per-user file (User: $XDG_CONFIG_HOME/barriertune/results.json);
//  3. the system-wide files (System: /etc/barriertune/results.json, which
//     `check --system` writes on the node itself);
//  4. the site's files (Site: barriertune/results.json in each directory
//     of $XDG_CONFIG_DIRS, in its order, when it is set: an installation
//     shared by many nodes, e.g. on a network file system).
//
// The first file that exists, reads, and applies to this machine is used;
// each one skipped is reported with its reason (Found.Skipped). A file
// applies when its CPU identity and tree are this machine's and the
// allowed CPUs lie inside its tree (Machine.Mismatch), and it is not
// simulated; Force accepts the first readable file regardless.
type Finder struct {
	// Env is $BARRIERTUNE_RESULTS ("" when unset).
	Env string
	// User is the per-user file ("" when there is no per-user directory).
	User string
	// System are the system-wide files, tried in order.
	System []string
	// Site are the files of $XDG_CONFIG_DIRS (sitePaths), tried after
	// System.
	Site []string
	// Host is this machine's fingerprint (Host(allowed), or the full one
	// with the tree's hash).
	Host Machine
	// Online is the set of online CPUs, when known: a file whose tree has
	// other CPUs no longer applies (CPUs added or taken offline).
	Online cpuset.Set
	// Force is $BARRIERTUNE_FORCE=1.
	Force bool
}

// DefaultFinder is the lookup order of this process: the environment's
// $BARRIERTUNE_RESULTS and $BARRIERTUNE_FORCE, the per-user file and
// SystemPath, with host as this machine's fingerprint and the online CPUs
// read from Linux sysfs (unknown elsewhere).
func DefaultFinder(host Machine) Finder {
	fd := Finder{Env: os.Getenv(ResultsEnv), System: []string{SystemPath}, Site: sitePaths(os.Getenv("XDG_CONFIG_DIRS")),
		Host: host, Force: os.Getenv(ForceEnv) == "1"}
	if p, err := DefaultPath(); err == nil {
		fd.User = p
	}
	fd.Online = OnlineCPUs()
	return fd
}

// sitePaths are the site's results files named by dirs, a value of
// $XDG_CONFIG_DIRS: barriertune/results.json in each directory, in order.
// As the XDG Base Directory specification says, relative directories are
// ignored; its default (/etc/xdg when the variable is unset or empty) is
// not searched: a site names its directories.
func sitePaths(dirs string) []string {
	var out []string
	for _, d := range strings.Split(dirs, ":") {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		if p := filepath.Join(d, "barriertune", "results.json"); !containsString(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Paths are the files the finder tries, in order, without duplicates.
func (fd Finder) Paths() []string {
	var out []string
	for _, p := range append(append([]string{fd.Env, fd.User}, fd.System...), fd.Site...) {
		if p != "" && !containsString(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func containsString(v []string, s string) bool {
	for _, x := range v {
		if x == s {
			return true
		}
	}
	return false
}

// Skipped is a file the finder did not use, and why.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Found is the file a Finder chose.
type Found struct {
	Path string
	File *File
	// Why says why this file (its place in the lookup order).
	Why string
	// Skipped lists the files tried before it, with their reasons.
	Skipped []Skipped
	// Warning says how a forced file differs from this machine.
	Warning string
}

// Summary is one line naming the file used and why the others were not.
func (f *Found) Summary() string {
	s := f.Path + " (" + f.Why + ")"
	for _, k := range f.Skipped {
		s += "; skipped " + k.Path + ": " + k.Reason
	}
	return s
}

// ErrNoResults is what Find's error matches (errors.Is) when no file
// applies.
var ErrNoResults = errors.New("no results file applies")

// noResults is Find's error: its own message, matching ErrNoResults.
type noResults struct{ msg string }

// Error says why no file applies.
func (e noResults) Error() string { return e.msg }

// Is makes errors.Is(err, ErrNoResults) true.
func (e noResults) Is(target error) bool { return target == ErrNoResults }

// Find returns the first file of the lookup order that applies. Its error,
// when none does, wraps ErrNoResults and names every file tried: "no
// results file at X (nor Y, Z): run barriertune check" when none exists,
// else each file's reason.
func (fd Finder) Find() (*Found, error) {
	var skipped []Skipped
	missing := 0
	for i, p := range fd.Paths() {
		f, err := Read(p)
		if err != nil {
			reason := err.Error()
			if errors.Is(err, os.ErrNotExist) {
				reason, missing = "no such file", missing+1
			}
			skipped = append(skipped, Skipped{p, reason})
			continue
		}
		why := fd.mismatch(f)
		if why != "" && !fd.Force {
			skipped = append(skipped, Skipped{p, why + " (set " + ForceEnv + "=1 to use it anyway)"})
			continue
		}
		found := &Found{Path: p, File: f, Why: fd.role(p, i), Skipped: skipped}
		if why != "" {
			found.Warning = "forced: " + why
		}
		return found, nil
	}
	paths := fd.Paths()
	if len(paths) == 0 {
		return nil, noResults{"no results file to try (no per-user directory and no system file configured); give a path"}
	}
	if missing == len(skipped) {
		nor := ""
		if len(paths) > 1 {
			nor = " (nor " + strings.Join(paths[1:], ", ") + ")"
		}
		return nil, noResults{fmt.Sprintf("no results file at %s%s: run barriertune check", paths[0], nor)}
	}
	var parts []string
	for _, k := range skipped {
		parts = append(parts, k.Path+": "+k.Reason)
	}
	return nil, noResults{fmt.Sprintf("no results file applies: %s; run barriertune check", strings.Join(parts, "; "))}
}

// mismatch says why f does not apply here, or "".
func (fd Finder) mismatch(f *File) string {
	var why []string
	if w := f.Machine.Mismatch(fd.Host); w != "" {
		why = append(why, "recorded on another machine: "+w)
	}
	if t := f.Machine.Tree; t != nil && !fd.Online.IsEmpty() {
		if all, err := cpuset.ParseList(t.CPUs); err == nil && !all.Equal(fd.Online) {
			why = append(why, fmt.Sprintf("online CPUs %s here, %s in the file's tree (CPUs added or taken offline: rerun the check)", fd.Online, all))
		}
	}
	if f.Simulated {
		why = append(why, "simulated (check --simulate), not measured")
	}
	return strings.Join(why, "; ")
}

// role says where path stands in the lookup order.
func (fd Finder) role(path string, i int) string {
	switch {
	case path == fd.Env:
		return "$" + ResultsEnv
	case path == fd.User:
		return "the per-user file"
	case containsString(fd.System, path):
		return "the system-wide file"
	case containsString(fd.Site, path):
		return "the site's file, from $XDG_CONFIG_DIRS"
	}
	return fmt.Sprintf("lookup %d", i+1)
}
