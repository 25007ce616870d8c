package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/cpumodel"
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
	return withModels(hwtree.Live())
}

// withModels adds the CPU model strings to a tree read from sysfs.
func withModels(t *hwtree.Topology, err error) (*hwtree.Topology, error) {
	if err == nil {
		cpumodel.Add(t)
	}
	return t, err
}

// resultsSource is a results file opened for show, export or plot, with
// the CPU set its selections are made in.
type resultsSource struct {
	path string
	why  string // why this file: given, or its place in the lookup order
	// skipped are the files of the lookup order not used, with reasons.
	skipped []results.Skipped
	file    *results.File
	sel     *results.Selector
	// foreign says how the file differs from this machine ("" when it is
	// this machine's, measured).
	foreign string
	// allowed is the set selections are made in, and allowedWhy says why.
	allowed    cpuset.Set
	allowedWhy string
	// notices are what the lookup order did that a user would not expect
	// (lookupNotices), said once on stderr.
	notices []string
}

// lookupNotices says what the lookup order did that surprises: an
// explicitly set $BARRIERTUNE_RESULTS that was not used, and a per-user
// file used while a system-wide (or site) file exists behind it.
func lookupNotices(fd results.Finder, found *results.Found) []string {
	var out []string
	for _, k := range found.Skipped {
		if fd.Env != "" && k.Path == fd.Env {
			out = append(out, fmt.Sprintf("warning: $%s=%s is not used: %s; using %s (%s)", results.ResultsEnv, k.Path, k.Reason, found.Path, found.Why))
		}
	}
	if fd.User != "" && found.Path == fd.User {
		for _, p := range append(append([]string{}, fd.System...), fd.Site...) {
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && p != found.Path {
				out = append(out, fmt.Sprintf("note: the per-user file %s hides %s; remove it (or set $%s) to use that one", found.Path, p, results.ResultsEnv))
				break
			}
		}
	}
	return out
}

// warnNotices prints rs's notices on stderr, once, unless --quiet.
func warnNotices(stderr io.Writer, g *globalOptions, rs *resultsSource) {
	if g != nil && g.quiet {
		return
	}
	for _, n := range rs.notices {
		for _, l := range wrap(n) {
			fmt.Fprintln(stderr, l)
		}
	}
}

// openResults opens the results file path, or, when path is "", the first
// file of the lookup order that applies (results.Finder: the one barriers.Auto
// uses), and sets the allowed CPUs: allowedFlag when given (else a usage
// error naming it), this process's allowed CPUs when the file is this
// machine's, else the whole machine the file records.
func openResults(path, allowedFlag string) (*resultsSource, error) {
	if allowedFlag != "" { // the list's syntax before any file is looked up
		if _, err := cpuset.ParseList(allowedFlag); err != nil {
			return nil, usageErrorf("--allowed: %v", err)
		}
	}
	here, err := osal.Allowed()
	if err != nil {
		return nil, fmt.Errorf("cannot read this process's allowed CPUs: %w", err)
	}
	host := results.Host(here.String())
	rs := &resultsSource{path: path, why: "given"}
	if path == "" {
		fd := results.DefaultFinder(host)
		found, err := fd.Find()
		if err != nil {
			return nil, err
		}
		rs.path, rs.why, rs.skipped, rs.file = found.Path, found.Why, found.Skipped, found.File
		rs.notices = lookupNotices(fd, found)
	} else {
		if rs.file, err = results.Read(path); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("no results file at %s: run barriertune check (or give the file it wrote)", path)
			}
			return nil, err
		}
	}
	if rs.sel, err = rs.file.Selector(); err != nil {
		return nil, fmt.Errorf("results file %s: %w", rs.path, err)
	}
	rs.foreign = rs.file.Machine.Mismatch(host)
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
	case rs.foreign == "" && rs.sel.CheckAllowed(here) == nil:
		rs.allowed, rs.allowedWhy = here, "this process's allowed CPUs"
	default:
		rs.allowed, rs.allowedWhy = rs.sel.CPUs(), "the whole machine of the file"
	}
	return rs, nil
}

// summary names the file, why it was used and why the others were not.
func (rs *resultsSource) summary() string {
	s := rs.path + " (" + rs.why + ")"
	if rs.file.Simulated {
		s += ", SIMULATED: chosen by the model, not measured"
	}
	for _, k := range rs.skipped {
		s += "; skipped " + k.Path + ": " + k.Reason
	}
	return s
}
