package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/barriertune/barriertune/cmd/internal/cpumodel"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/capped"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/internal/text"
	"github.com/barriertune/barriertune/results"
)

// sourceFlags are the flags that choose where a topology comes from.
type sourceFlags struct {
	sysfsRoot, synthetic, xml, topology string
}

func (s *sourceFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&s.sysfsRoot, "sysfs-root", "", "read a captured snapshot: `DIR` holding sys/ and proc/ (its cgroup cpuset applies)")
	fs.StringVar(&s.synthetic, "synthetic", "", "build an hwloc synthetic topology, e.g. \"pack:2 l3:2 core:4 pu:2\"")
	fs.StringVar(&s.xml, "xml", "", "read hwloc XML `FILE` as written by `lstopo FILE.xml`")
	fs.StringVar(&s.topology, "topology", "", "read `FILE.json` as written by `barriertune topo --json`")
}

// live reports whether the topology is this machine's.
func (s *sourceFlags) live() bool {
	return s.sysfsRoot == "" && s.synthetic == "" && s.xml == "" && s.topology == ""
}

// load reads the topology from the one source given, or the live machine.
func (s *sourceFlags) load() (*hwtree.Topology, error) {
	var given []string
	for name, v := range map[string]string{"--sysfs-root": s.sysfsRoot, "--synthetic": s.synthetic, "--xml": s.xml, "--topology": s.topology} {
		if v != "" {
			given = append(given, name)
		}
	}
	if len(given) > 1 {
		sort.Strings(given)
		return nil, fmt.Errorf("%s given together; choose one topology source", strings.Join(given, " and "))
	}
	switch {
	case s.sysfsRoot != "":
		return withModels(hwtree.FromSysfs(s.sysfsRoot))
	case s.synthetic != "":
		t, err := hwtree.FromSynthetic(s.synthetic)
		return t, usageError(err) // the string is the flag's value
	case s.xml != "":
		return hwtree.FromXMLFile(s.xml)
	case s.topology != "":
		return hwtree.FromJSONFile(s.topology)
	}
	return withModels(hwtree.FromSysfs("/"))
}

// withModels adds the CPU model strings to a tree read from sysfs.
func withModels(t *hwtree.Topology, err error) (*hwtree.Topology, error) {
	if err == nil {
		cpumodel.Add(t)
	}
	return t, err
}

// resultsSource is a results file opened for show, export or plot (the
// file found or given, results.Found), with the CPU set its selections are
// made in.
type resultsSource struct {
	*results.Found
	sel *results.Selector
	// foreign says how the file differs from this machine ("" when it is
	// this machine's, measured).
	foreign string
	// allowed is the set selections are made in, and allowedWhy says why.
	allowed    cpuset.Set
	allowedWhy string
}

// warnNotices prints what the lookup did that a user would not expect
// (results.Found.Notices) on stderr, once, unless --quiet.
func warnNotices(stderr io.Writer, g *globalOptions, rs *resultsSource) {
	if g != nil && g.quiet {
		return
	}
	for _, n := range rs.Notices() {
		for _, l := range wrap(n) {
			fmt.Fprintln(stderr, l)
		}
	}
}

// openAndWarn is the opening every reading command shares: the results
// file (openResults), its notices on stderr, that it is another machine's
// when otherMachine (unless --quiet), and, with --verbose, which file it
// read, after the command's name (none where command is "": show's text
// names its file on its own "file:" line).
func openAndWarn(path, allowed string, g *globalOptions, stderr io.Writer, command string, otherMachine bool) (*resultsSource, error) {
	rs, err := openResults(g, path, allowed)
	if err != nil {
		return nil, err
	}
	warnNotices(stderr, g, rs)
	if otherMachine {
		warnOtherMachine(stderr, g, rs)
	}
	if command != "" {
		g.verbosef(stderr, "%s: %s", command, rs.Summary())
	}
	return rs, nil
}

// verboseName is command where the --verbose line names the file, and ""
// where the command's own output already does (show's text).
func verboseName(json bool, command string) string {
	if json {
		return command
	}
	return ""
}

// openResults opens the results file path, or, when path is "", this
// machine's file (g's lookup: the one barriers.Auto uses), and sets
// the allowed CPUs: allowedFlag when given (else a usage error naming it),
// this process's allowed CPUs when the file is this machine's, else the
// whole machine the file records. A path ending in a slash, a directory of
// machines' files, gives this machine's file there.
func openResults(g *globalOptions, path, allowedFlag string) (*resultsSource, error) {
	if allowedFlag != "" { // the list's syntax before any file is looked up
		if _, err := cpuset.ParseList(allowedFlag); err != nil {
			return nil, usageErrorf("--allowed: %v", err)
		}
	}
	fd, err := g.finder()
	if err != nil {
		return nil, err
	}
	rs := &resultsSource{}
	if path == "" || capped.IsDirPath(path) {
		if path != "" {
			fd = fd.Only(path)
		}
		if rs.Found, err = fd.Find(); err != nil {
			return nil, err
		}
	} else {
		f, err := results.Read(path)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("no results file at %s: run barriertune check (or give the file it wrote)", path)
			}
			return nil, err
		}
		allowed, _ := cpuset.ParseList(fd.Host.AllowedCPUs)
		rs.Found = &results.Found{Path: path, File: f, Why: "given", Allowed: allowed}
	}
	if rs.sel, err = rs.File.Selector(); err != nil {
		return nil, fmt.Errorf("results file %s: %w", rs.Path, err)
	}
	rs.foreign = rs.File.Machine.Mismatch(fd.Host)
	switch {
	case allowedFlag != "":
		set, err := cpuset.ParseList(allowedFlag)
		if err != nil {
			return nil, usageErrorf("--allowed: %v", err)
		}
		if set.IsEmpty() {
			return nil, usageErrorf("--allowed %q: no CPU given; want a CPU list of the machine such as %s", text.Elide(allowedFlag, text.MaxValue), rs.sel.CPUs())
		}
		if err := rs.sel.CheckAllowed(set); err != nil {
			return nil, usageErrorf("--allowed: %v", err)
		}
		rs.allowed, rs.allowedWhy = set, "--allowed"
	case rs.foreign == "" && rs.sel.CheckAllowed(rs.Allowed) == nil:
		rs.allowed, rs.allowedWhy = rs.Allowed, processAllowed
	default:
		rs.allowed, rs.allowedWhy = rs.sel.CPUs(), "the whole machine of the file"
	}
	return rs, nil
}

// processAllowed is allowedWhy for this process's allowed CPUs.
const processAllowed = "this process's allowed CPUs"

// autoSelect is the selection barriers.Auto makes here for n, and the
// source with the CPUs it was made in: inside what this process runs at
// once (osal.AtOnce: its cgroup's CPU quota and GOMAXPROCS) where the
// allowed CPUs are the process's own and the file can select inside that
// part (a file without its machine's tree cannot); else inside the
// allowed CPUs.
func (rs *resultsSource) autoSelect(n int) (results.Selection, *resultsSource, error) {
	if rs.allowedWhy == processAllowed {
		if at := osal.AtOnce(rs.allowed); !at.Equal(rs.allowed) {
			if sel, err := rs.sel.Select(n, at); err == nil {
				auto := *rs
				auto.allowed = at
				auto.allowedWhy = fmt.Sprintf("%s of this process's allowed CPUs %s at once, by its cgroup CPU quota or GOMAXPROCS", text.Plural(at.Len(), "CPU"), rs.allowed)
				return sel, &auto, nil
			}
		}
	}
	sel, err := rs.sel.Select(n, rs.allowed)
	return sel, rs, err
}
