package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/barriertune/barriertune/internal/capped"
	"github.com/barriertune/barriertune/internal/text"
	"github.com/barriertune/barriertune/results"
)

// FileName is the name of m's file in a directory shared by several
// machines (`check -o DIR/`): the CPU's name and a hash of what
// results.Machine.Mismatch compares (CPU identity and the whole machine's tree), e.g.
// "intel-r-xeon-r-processor-3f2a9c1b4e5d.json". Two nodes of one kind get
// one name, so they keep one file between them (Save keeps the more
// complete); nodes of two kinds get two.
func FileName(m results.Machine) string {
	slug := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '-'
	}, m.CPU.Name)
	for strings.Contains(slug, "--") {
		slug = strings.ReplaceAll(slug, "--", "-")
	}
	if slug = strings.Trim(slug, "-"); len(slug) > 40 {
		slug = strings.TrimRight(slug[:40], "-")
	}
	if slug == "" {
		slug = "machine"
	}
	tree := ""
	if m.Tree != nil {
		tree = m.Tree.CPUs
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d\x00%s\x00%s\x00%s", m.CPU.Vendor, m.CPU.Family, m.CPU.Model, m.CPU.Name, m.TopologyHash, tree))
	return slug + "-" + hex.EncodeToString(sum[:6]) + ".json"
}

// Destination is where a check writes its results file: File as given,
// or a file in Dir, a directory that may hold several machines' files.
type Destination struct {
	// File is written as given (-o FILE, --resume FILE,
	// $BARRIERTUNE_RESULTS); "" when the file goes in Dir.
	File string
	// Dir is a directory of machines' files, and Name the file wanted
	// there: Dir/Name, unless it holds another machine's results, else
	// Dir/FileName(machine). An empty Name is the machine's own name.
	Dir, Name string
	// Create makes Dir when it does not exist, with mode 0755 whatever the
	// umask (its files are 0644: every user reads a system-wide file);
	// otherwise a missing Dir is refused.
	Create bool
	// Flag is the flag that named the destination ("-o", "--system"), for
	// errors; "" for the default.
	Flag string
}

// SystemDestination is `check --system`'s: SystemPath, in its directory
// made when missing, beside another machine's file there (a /etc shared by
// the nodes of a cluster).
func SystemDestination(path string) Destination {
	return Destination{Dir: filepath.Dir(path), Name: filepath.Base(path), Create: true, Flag: "--system"}
}

// OutputDestination is the destination `-o PATH` names: the directory
// PATH when it ends in a slash (capped.IsDirPath), else the file PATH.
func OutputDestination(flag, path string) Destination {
	if capped.IsDirPath(path) {
		return Destination{Dir: filepath.Clean(path), Flag: flag}
	}
	return Destination{File: path, Flag: flag}
}

// DefaultDestination is where `barriertune check` writes without a flag:
// the first place of this process's lookup order (results.HereFinder).
func DefaultDestination() (Destination, error) {
	fd, err := results.HereFinder()
	if err != nil {
		return Destination{}, err
	}
	return finderDestination(fd)
}

// finderDestination is the first place of fd's lookup order that a check
// writes: Env when set, else the per-user file (in its directory, beside
// another machine's file there).
func finderDestination(fd results.Finder) (Destination, error) {
	switch {
	case fd.Env != "":
		return OutputDestination("", fd.Env), nil
	case fd.User != "":
		return Destination{Dir: filepath.Dir(fd.User), Name: filepath.Base(fd.User), Create: true}, nil
	case fd.NoUser != "":
		return Destination{}, errors.New(fd.NoUser)
	}
	return Destination{}, errors.New("no per-user results file to write (give a path)")
}

// String names the destination: the file, or the directory's file.
func (d Destination) String() string {
	switch {
	case d.File != "":
		return d.File
	case d.Name != "":
		return filepath.Join(d.Dir, d.Name)
	}
	return d.Dir + "/ (this machine's file)"
}

// given is how errors name the destination: with its flag when one gave
// it.
func (d Destination) given() string {
	if d.Flag == "" {
		return "results file " + d.String()
	}
	if d.File != "" {
		return d.Flag + " " + d.File
	}
	return d.Flag + " " + d.String()
}

// Check refuses, before anything is measured, a destination a check could
// not write, so that a long check is not lost at the end: a path that is
// not a regular file (the atomic rename would replace a device such as
// /dev/zero), a directory given by a flag that does not exist (a typo is
// refused, not created), or one that cannot take a new file.
func (d Destination) Check() error {
	if d.File != "" {
		if d.Flag != "" {
			if err := existingDir(d.given(), filepath.Dir(d.File)); err != nil {
				return err
			}
		}
		return writable(d.File)
	}
	if !d.Create {
		if err := existingDir(d.given(), d.Dir); err != nil {
			return err
		}
	}
	if d.Name != "" {
		return writable(filepath.Join(d.Dir, d.Name))
	}
	if err := probe(d.Dir); err != nil {
		return fmt.Errorf("%s: cannot write in %s: %w", d.given(), d.Dir, probeReason(err))
	}
	return nil
}

// probeReason says why an existing directory did not take the probe's new
// file, wrapping the system's error. Creating a file in a directory that
// exists but cannot hold files (a virtual file system such as /proc or
// /sys) fails with "no such file or directory", which would send its
// reader looking for a missing directory.
func probeReason(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return reasonError{"the directory exists but takes no new files (a virtual file system such as /proc or /sys); give a path on a disk, e.g. under $HOME", err}
	case errors.Is(err, syscall.EROFS):
		return reasonError{"the file system is read-only; give a path on a writable disk", err}
	case errors.Is(err, fs.ErrPermission):
		return reasonError{"permission denied; give a directory you may write, or run as its owner", err}
	}
	return err
}

// reasonError is a system error told in the tool's words.
type reasonError struct {
	msg string
	err error
}

func (e reasonError) Error() string { return e.msg }
func (e reasonError) Unwrap() error { return e.err }

// probe creates and removes a hidden file in dir.
func probe(dir string) error {
	f, err := os.CreateTemp(dir, ".barriertune-probe-*")
	if err != nil {
		return errors.Unwrap(err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// existingDir refuses a directory that does not exist or is not one.
func existingDir(what, dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err != nil && missing(err):
		return fmt.Errorf("%s: directory %s does not exist; create it first or give another path", what, dir)
	case err != nil:
		return fmt.Errorf("%s: %w", what, err)
	case !fi.IsDir():
		return fmt.Errorf("%s: %s is not a directory", what, dir)
	}
	return nil
}

// writable checks that path is a regular file or absent, and that the
// nearest existing directory of path takes a new file.
func writable(path string) error {
	if fi, err := os.Stat(path); err == nil {
		switch {
		case fi.IsDir():
			return fmt.Errorf("results file %s is not a regular file (it is a directory); want a path for the results JSON, or end it with / to write this machine's file in that directory", path)
		case !fi.Mode().IsRegular():
			return fmt.Errorf("results file %s is not a regular file (it is %s); want a path for the results JSON", path, text.FileKind(fi.Mode()))
		}
	} else if !missing(err) {
		return fmt.Errorf("results file: %w", err)
	}
	dir := filepath.Dir(path)
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("results file %s: %s is not a directory", path, dir)
			}
			break
		}
		if !missing(err) || filepath.Dir(dir) == dir {
			return fmt.Errorf("results file %s: %w", path, err)
		}
		dir = filepath.Dir(dir)
	}
	if err := probe(dir); err != nil {
		return fmt.Errorf("results file %s: %s: %w", path, missingDirNote(path, dir), probeReason(err))
	}
	return nil
}

// missingDirNote says why a results file cannot be created below dir, the
// nearest existing directory of path: the first directory of path that
// does not exist, when there is one, else dir itself.
func missingDirNote(path, dir string) string {
	first := filepath.Dir(path)
	for filepath.Dir(first) != dir && filepath.Dir(first) != first {
		first = filepath.Dir(first)
	}
	if first == dir || filepath.Dir(path) == dir {
		return "cannot write in " + dir
	}
	if _, err := os.Stat(first); errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("directory %s does not exist and cannot be created in %s", first, dir)
	}
	return "cannot write in " + dir
}

// missing reports whether err says a path does not exist, also when a
// file stands where a directory of the path should be.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// CheckLockName is the name of the lock file a check holds beside the
// results file name it writes (Destination.Claim).
func CheckLockName(name string) string { return "." + name + ".lock" }

// Claim takes the destination's check lock, held for the whole check, so
// that one check at a time writes a results file: the hidden file
// CheckLockName(NAME) beside the file NAME (the lookup reads no hidden
// file), holding the check's pid, removed by release. A second check of
// the same file gets an error naming the first one's pid and the lock.
// A directory of machines' files (-o DIR/) has no check lock: the nodes
// of one kind write there at once by design, and Save keeps the most
// complete file. A Create directory is made first; where no lock can be
// had (a file system without locks) the check goes on unlocked.
func (d Destination) Claim() (release func(), err error) {
	path := d.File
	if path == "" {
		if d.Name == "" {
			return func() {}, nil
		}
		if d.Create {
			if err := makeDir(d.Dir); err != nil {
				return nil, err
			}
		}
		path = filepath.Join(d.Dir, d.Name)
	}
	lock := filepath.Join(filepath.Dir(path), CheckLockName(filepath.Base(path)))
	release, holder, err := lockFile(lock, 0)
	switch {
	case errors.Is(err, errHeld):
		who := "another barriertune check"
		if holder > 0 {
			who += fmt.Sprintf(" (pid %d)", holder)
		}
		return nil, fmt.Errorf("%s is writing %s now: one check per results file at a time; wait for it to end, or stop it, or give another file with -o (its lock: %s)", who, path, lock)
	case err != nil:
		return func() {}, nil
	}
	return release, nil
}

// Save writes f to the destination, as the package's Save does (a less
// complete run goes beside a complete file, to FILE.partial, and a busy
// one beside a quiet one, to FILE.busy), and returns
// the file written and, when that is not the file asked for, why in one
// line. In a directory it holds a lock (a hidden file there) from reading
// the file it may replace until the rename, so that nodes of one kind
// writing at once into a shared directory keep the most complete file,
// and one kind never replaces another kind's file.
func (d Destination) Save(f *results.File) (written, note string, err error) {
	path := d.File
	if path == "" {
		if d.Create {
			if err := makeDir(d.Dir); err != nil {
				return "", "", err
			}
		}
		unlock := lockDir(d.Dir, 30*time.Second)
		defer unlock()
		path = filepath.Join(d.Dir, d.Name)
		if d.Name == "" {
			path = filepath.Join(d.Dir, FileName(f.Machine))
		} else if old, err := results.Read(path); err == nil {
			if why := old.Machine.Mismatch(f.Machine); why != "" {
				own := filepath.Join(d.Dir, FileName(f.Machine))
				note = fmt.Sprintf("%s holds another machine's results (%s); this machine's go to %s, which the lookup finds beside it", path, why, own)
				path = own
			}
		}
	}
	written, err = Save(path, f)
	if err == nil && written != path {
		kind := "less complete"
		if f.Partial {
			kind = "partial"
		}
		why := fmt.Sprintf("%s keeps its complete results; this %s run went beside it", path, kind)
		if written == path+BusySuffix {
			why = fmt.Sprintf("%s keeps its results, measured on a quiet machine; this run, measured on a busy one, went beside it to %s", path, written)
		}
		note = strings.TrimPrefix(note+"; ", "; ") + why
	}
	return written, note, err
}

// makeDir makes dir when it does not exist: its missing parents with mode
// 0755 less the umask, dir itself 0755 whatever the umask.
func makeDir(dir string) error {
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	return nil
}
