package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/barriertune/barriertune/results"
)

// systemFlag is `check --system`: write the system-wide results file that
// every user's programs read last in the lookup order (results.Finder).
type systemFlag struct {
	on bool
	// path is the system-wide file; results.SystemPath unless a test
	// points it elsewhere.
	path string
	// euid returns the effective user id (os.Geteuid unless a test
	// replaces it).
	euid func() int
}

func (s *systemFlag) register(fs *pflag.FlagSet) {
	fs.BoolVar(&s.on, "system", false, "write the system-wide results file "+results.SystemPath+" that every user's programs read (needs root)")
}

// apply checks --system before anything is measured and points the check
// at the system file: it refuses -o (one file at a time) and a non-root
// user, in one line.
func (s *systemFlag) apply(o *checkOptions) error {
	if !s.on {
		return nil
	}
	path, euid := s.path, s.euid
	if path == "" {
		path = results.SystemPath
	}
	if euid == nil {
		euid = os.Geteuid
	}
	if o.plan.active() {
		return usageErrorf("--system writes this machine's measured results for every user; --plan measures nothing and --simulate's file is never used by programs: drop --system, or use -o FILE with --simulate")
	}
	if o.output != "" {
		return usageErrorf("--system and -o %s given together: --system writes %s; choose one", o.output, path)
	}
	if euid() != 0 {
		return fmt.Errorf("check --system writes %s for every user of this node and needs root: run `sudo barriertune check --system` (or -o FILE for a file of your own)", path)
	}
	o.output = path
	return nil
}

// missingDirNote says why a results file cannot be created below dir, the
// nearest existing directory of path: the first directory of path that
// does not exist, when there is one, else dir itself.
func missingDirNote(path, dir string) string {
	missing := filepath.Dir(path)
	for filepath.Dir(missing) != dir && filepath.Dir(missing) != missing {
		missing = filepath.Dir(missing)
	}
	if missing == dir || filepath.Dir(path) == dir {
		return "cannot write in " + dir
	}
	if _, err := os.Stat(missing); errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("directory %s does not exist and cannot be created in %s", missing, dir)
	}
	return "cannot write in " + dir
}
