package main

import (
	"fmt"
	"os"

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
	fs.BoolVar(&s.on, "system", false, "write the system-wide results file "+results.SystemPath+" that every user's programs read, making its directory (0755) when missing (needs root)")
}

// file is the system-wide file --system writes.
func (s *systemFlag) file() string {
	if s.path == "" {
		return results.SystemPath
	}
	return s.path
}

// apply checks --system before anything is measured: it refuses -o (one
// file at a time), --plan and --simulate, and a non-root user, in one line.
// The check then writes the system file (checkOptions.destination), making
// its directory when missing.
func (s *systemFlag) apply(o *checkOptions) error {
	if !s.on {
		return nil
	}
	euid := s.euid
	if euid == nil {
		euid = os.Geteuid
	}
	if o.plan.active() {
		return usageErrorf("--system writes this machine's measured results for every user; --plan measures nothing and --simulate's file is never used by programs: drop --system, or use -o FILE with --simulate")
	}
	if o.output != "" {
		return usageErrorf("--system and -o %s given together: --system writes %s; choose one", o.output, s.file())
	}
	if euid() != 0 {
		return fmt.Errorf("check --system writes %s for every user of this node and needs root: run `sudo barriertune check --system` (or -o FILE for a file of your own)", s.file())
	}
	return nil
}
