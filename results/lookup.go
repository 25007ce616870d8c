package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/capped"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/internal/text"
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
// and Tuned, `barriertune show`, `export`, `plot`, `model` and `check
// --resume` (FindHere is that lookup for this process):
//
//  1. $BARRIERTUNE_RESULTS (Env), when set: that file, or, when it ends
//     in a slash, the *.json files of that directory;
//  2. the per-user directory (User: $XDG_CONFIG_HOME/barriertune/,
//     results.json first);
//  3. the system-wide directory (System: /etc/barriertune/, results.json
//     first, which `check --system` writes on the node itself);
//  4. the site's directories (Site: barriertune/ in each absolute
//     directory of $XDG_CONFIG_DIRS, in its order, when it is set: an
//     installation shared by many nodes, e.g. on a network file system).
//
// User, System and Site name a file, results.json by convention; the other
// *.json files of its directory are tried right after it, by name, so one
// directory may hold several machines' files (`check -o DIR/` writes this
// machine's under its own name). Hidden files are not read, and of one
// directory at most 4,096 entries are listed, 256 *.json files tried and
// 64 MiB read.
//
// The first file that exists, reads, and applies to this machine is used;
// each one skipped is reported with its reason (Found.Skipped): a
// corrupted, hostile or unreadable file is skipped, never fatal. A file
// applies when its CPU identity and tree are this machine's and the
// allowed CPUs lie inside its tree (Machine.Mismatch), and it is not
// simulated; Force accepts the first readable file regardless.
type Finder struct {
	// Env is $BARRIERTUNE_RESULTS ("" when unset).
	Env string
	// User is the per-user file ("" when there is no per-user directory).
	User string
	// NoUser says why there is no per-user file when User is "" (a
	// relative $XDG_CONFIG_HOME, no $HOME): Find's error says it.
	NoUser string
	// System are the system-wide files, tried in order.
	System []string
	// Site are the files of $XDG_CONFIG_DIRS (sitePaths), tried after
	// System.
	Site []string
	// Host is this machine's fingerprint (host(allowed), or the full one
	// with the tree's hash).
	Host Machine
	// Online is the set of online CPUs, when known: a file whose tree has
	// other CPUs no longer applies (CPUs added or taken offline).
	Online cpuset.Set
	// Nodes are the CPUs of each NUMA node, when known (NUMANodes): a file
	// whose tree has other nodes no longer applies (Tree.NUMAMismatch).
	Nodes []cpuset.Set
	// Force is $BARRIERTUNE_FORCE=1.
	Force bool
}

// Caps on what one directory of the lookup costs: a site's directory on a
// shared file system may hold anything.
const (
	maxDirEntries = 4096        // names listed
	maxDirFiles   = 256         // *.json files tried
	maxDirBytes   = maxFileSize // bytes read from its files together
)

// HereFinder is the lookup order of this process, as Finder lists it: the
// environment's $BARRIERTUNE_RESULTS and $BARRIERTUNE_FORCE, the per-user
// file ($XDG_CONFIG_HOME/barriertune/results.json), SystemPath and the
// site's files of $XDG_CONFIG_DIRS, with the light fingerprint (Host) of
// this process's allowed CPUs (osal.Allowed: those it started with that
// its threads may still run on, never the calling thread's alone) and the online CPUs and NUMA nodes read from
// Linux sysfs (unknown elsewhere).
func HereFinder() (Finder, error) {
	allowed, err := osal.Allowed()
	if err != nil {
		return Finder{}, fmt.Errorf("cannot fingerprint this machine: %w", err)
	}
	return defaultFinder(host(allowed.String())), nil
}

// defaultFinder is HereFinder with host as this machine's fingerprint.
func defaultFinder(host Machine) Finder {
	fd := Finder{Env: os.Getenv(ResultsEnv), System: []string{SystemPath}, Site: sitePaths(os.Getenv("XDG_CONFIG_DIRS")),
		Host: host, Force: os.Getenv(ForceEnv) == "1"}
	if p, err := defaultPath(); err == nil {
		fd.User = p
	} else {
		fd.NoUser = err.Error()
	}
	fd.Online = osal.OnlineCPUs()
	fd.Nodes = osal.NUMANodes()
	return fd
}

// FindHere answers "this machine's results file, or why none applies" for
// this process: HereFinder's Find. It is the lookup of barriers.Auto and
// Tuned and of every barriertune command that reads this machine's file.
// Its error wraps ErrNoResults when no file applies, and names every file
// tried.
func FindHere() (*Found, error) {
	fd, err := HereFinder()
	if err != nil {
		return nil, err
	}
	return fd.Find()
}

// Only is fd trying path alone (a file, or a directory of machines' files
// when it ends in a slash), with fd's fingerprint and Force.
func (fd Finder) Only(path string) Finder {
	return Finder{Env: path, Host: fd.Host, Online: fd.Online, Nodes: fd.Nodes, Force: fd.Force}
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
	// Allowed is the allowed CPU set the lookup was made for (the
	// fingerprint's AllowedCPUs; empty when it names none).
	Allowed cpuset.Set

	finder Finder // for Notices
	place  string // the place of the lookup order it was found at
}

// Summary is one line naming the file used and why the others were not
// (two or more files of other machines in one directory counted, not
// listed).
func (f *Found) Summary() string {
	s := f.Path + " (" + f.Why + ")"
	if f.File != nil && f.File.Simulated {
		s += ", SIMULATED: chosen by the model, not measured"
	}
	for _, k := range listed(f.Skipped, len(f.Skipped)) {
		s += "; skipped " + k
	}
	return s
}

// listed says each skipped file with its reason, the first max of them
// and then a count. Two or more files of other machines in one directory
// are counted, not listed: a site's directory holds one file per kind of
// node.
func listed(skipped []Skipped, max int) []string {
	foreign := map[string]int{}
	for _, k := range skipped {
		if isForeign(k) {
			foreign[filepath.Dir(k.Path)]++
		}
	}
	var out []string
	for i, k := range skipped {
		if len(out) == max {
			return append(out, "and "+text.PluralOf(len(skipped)-i, "more file", "more files"))
		}
		dir := filepath.Dir(k.Path)
		switch n := foreign[dir]; {
		case !isForeign(k) || n == 1:
			out = append(out, k.Path+": "+brief(k.Reason))
		case n > 1:
			var names []string
			for _, o := range skipped {
				if isForeign(o) && filepath.Dir(o.Path) == dir {
					names = append(names, filepath.Base(o.Path))
				}
			}
			out = append(out, fmt.Sprintf("%d files of other machines in %s (%s)", n, dir, text.Elide(strings.Join(names, ", "), text.MaxValue)))
			foreign[dir] = 0 // said once
		}
	}
	return out
}

// brief is a skipped file's reason without the advice that the line
// listing it gives once.
func brief(reason string) string {
	for _, advice := range []string{forceAdvice, "; " + readHint, "; run `barriertune check` again"} {
		reason = strings.TrimSuffix(reason, advice)
	}
	return reason
}

// forceAdvice ends the reason of a file of another machine.
const forceAdvice = " (set " + ForceEnv + "=1 to use it anyway)"

// foreignReason starts the reason of a file skipped because another
// machine recorded it.
const foreignReason = "recorded on another machine: "

func isForeign(k Skipped) bool { return strings.HasPrefix(k.Reason, foreignReason) }

// Notices says what the lookup did that a user would not expect: an
// explicitly set $BARRIERTUNE_RESULTS that was not used, and a per-user
// file used while a system-wide or site file that applies lies behind it.
func (f *Found) Notices() []string {
	fd := f.finder
	var out []string
	for _, k := range f.Skipped {
		if fd.Env != "" && k.Path == fd.Env {
			out = append(out, fmt.Sprintf("warning: $%s=%s is not used: %s; using %s (%s)", ResultsEnv, k.Path, k.Reason, f.Path, f.Why))
		}
	}
	if capped.IsDirPath(fd.Env) && f.place != fd.Env {
		out = append(out, fmt.Sprintf("warning: $%s=%s is not used: no file there applies to this machine; using %s (%s)", ResultsEnv, fd.Env, f.Path, f.Why))
	}
	if fd.User != "" && f.place == fd.User && fd.role(fd.User, 0) == "the per-user file" {
		behind := Finder{System: fd.System, Site: fd.Site, Host: fd.Host, Online: fd.Online, Nodes: fd.Nodes, Force: fd.Force}
		if other, err := behind.Find(); err == nil {
			out = append(out, fmt.Sprintf("note: the per-user file %s hides %s; remove it (or set $%s) to use that one", f.Path, other.Path, ResultsEnv))
		}
	}
	return out
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

// maxListed caps the files Find's error lists with their reasons.
const maxListed = 12

// Find returns the first file of the lookup order that applies. Its error,
// when none does, wraps ErrNoResults and names every file tried: "no
// results file at X (nor Y, Z): run barriertune check" when none exists,
// else each file's reason (the first maxListed, then a count).
func (fd Finder) Find() (*Found, error) {
	var skipped []Skipped
	missing := 0
	tried := map[string]bool{}
	allowed, _ := cpuset.ParseList(fd.Host.AllowedCPUs)
	for i, place := range fd.Paths() {
		// The place first; its directory is listed only when the place
		// does not apply (a node's own results.json costs no listing).
		var files []string
		if !capped.IsDirPath(place) {
			files = []string{place}
		}
		listedDir := !capped.IsDirPath(place) && !fd.shared(place) // nothing to list
		placeMissing := false
		budget := int64(maxDirBytes)
		for j := 0; ; j++ {
			if j == len(files) && !listedDir {
				more, notes := fd.beside(place)
				skipped = append(skipped, notes...)
				files, listedDir = append(files, more...), true
			}
			if j == len(files) {
				break
			}
			p := files[j]
			if tried[p] {
				continue
			}
			tried[p] = true
			if p != place { // a file beside the place: the directory's budget
				if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
					if fi.Size() > budget {
						skipped = append(skipped, Skipped{p, fmt.Sprintf("not read: with the files of its directory read before it, over %d MiB", maxDirBytes>>20)})
						continue
					}
					budget -= fi.Size()
				}
			}
			f, err := Read(p)
			if err != nil {
				reason := err.Error()
				if errors.Is(err, os.ErrNotExist) {
					if p == place && fd.shared(place) {
						placeMissing = true // said below unless its directory holds others
						continue
					}
					reason, missing = "no such file", missing+1
				}
				skipped = append(skipped, Skipped{p, reason})
				continue
			}
			why := fd.mismatch(f)
			if why != "" && !fd.Force {
				skipped = append(skipped, Skipped{p, why + forceAdvice})
				continue
			}
			found := &Found{Path: p, File: f, Why: fd.role(place, i), Skipped: skipped, Allowed: allowed, finder: fd, place: place}
			if why != "" {
				found.Warning = "forced: " + why
			}
			return found, nil
		}
		if placeMissing && len(files) == 1 {
			skipped, missing = append(skipped, Skipped{place, "no such file"}), missing+1
		}
	}
	paths := fd.Paths()
	noUser := ""
	if fd.User == "" && fd.NoUser != "" {
		noUser = "; the per-user file was not looked for: " + fd.NoUser
	}
	if len(paths) == 0 {
		return nil, noResults{"no results file to try (no per-user directory and no system file configured); give a path" + noUser}
	}
	if missing == len(skipped) {
		nor := ""
		if len(paths) > 1 {
			nor = " (nor " + strings.Join(paths[1:], ", ") + ")"
		}
		return nil, noResults{fmt.Sprintf("no results file at %s%s: run barriertune check%s", paths[0], nor, noUser)}
	}
	here, force := "", ""
	if fd.Host.CPU.Name != "" {
		here = fmt.Sprintf(" (CPU %q)", fd.Host.CPU.Name)
	}
	if slices.ContainsFunc(skipped, isForeign) {
		force = ", or set " + ForceEnv + "=1 to use another machine's file anyway"
	}
	return nil, noResults{fmt.Sprintf("no results file applies: %s; run barriertune check on this machine%s%s%s", strings.Join(listed(skipped, maxListed), "; "), here, force, noUser)}
}

// beside lists the files Find tries after place: when place names a
// directory (capped.IsDirPath), its *.json files; for a place that may share its
// directory with other machines' files (User, System, Site), the other
// *.json files of its directory, by name. notes are directories cut short
// by the caps.
func (fd Finder) beside(place string) (files []string, notes []Skipped) {
	dir := place
	if !capped.IsDirPath(place) {
		dir = filepath.Dir(place)
	}
	names, note := jsonFiles(dir)
	if note != "" {
		notes = append(notes, Skipped{dir, note})
	}
	for _, n := range names {
		if p := filepath.Join(dir, n); p != place {
			files = append(files, p)
		}
	}
	return files, notes
}

// shared reports whether place is one whose directory may hold other
// machines' files: the per-user, system-wide and site places.
func (fd Finder) shared(place string) bool {
	return place == fd.User || containsString(fd.System, place) || containsString(fd.Site, place)
}

// jsonFiles lists the *.json names of dir, hidden ones aside, sorted, at
// most maxDirFiles of the first maxDirEntries entries; note says what the
// caps left out ("" when nothing). A directory that cannot be listed has
// none.
func jsonFiles(dir string) (names []string, note string) {
	entries, more, err := capped.ReadDir(dir, maxDirEntries)
	if err != nil {
		return nil, ""
	}
	if more {
		note = fmt.Sprintf("more than %d entries: only the first %d listed", maxDirEntries, maxDirEntries)
	}
	for _, e := range entries {
		if n := e.Name(); !strings.HasPrefix(n, ".") && strings.HasSuffix(n, ".json") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) > maxDirFiles {
		note = strings.TrimPrefix(note+fmt.Sprintf("; %d *.json files: only the first %d by name are tried", len(names), maxDirFiles), "; ")
		names = names[:maxDirFiles]
	}
	return names, note
}

// mismatch says why f does not apply here, or "".
func (fd Finder) mismatch(f *File) string {
	var why []string
	if w := f.Machine.Mismatch(fd.Host); w != "" {
		why = append(why, foreignReason+w)
	}
	if t := f.Machine.Tree; t != nil && !fd.Online.IsEmpty() {
		if all, err := cpuset.ParseList(t.CPUs); err == nil && !all.Equal(fd.Online) {
			why = append(why, fmt.Sprintf("online CPUs %s here, %s in the file's tree (CPUs added or taken offline: rerun the check)", fd.Online, all))
		}
	}
	if w := f.Machine.Tree.NUMAMismatch(fd.Nodes); w != "" {
		why = append(why, w)
	}
	if f.Simulated {
		why = append(why, "simulated (check --simulate), not measured")
	}
	return strings.Join(why, "; ")
}

// role says where place, the i-th, stands in the lookup order.
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
