package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/barriertune/barriertune/hwtree"
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
		return hwtree.FromSysfs(s.sysfsRoot)
	case s.synthetic != "":
		return hwtree.FromSynthetic(s.synthetic)
	case s.xml != "":
		return hwtree.FromXMLFile(s.xml)
	case s.topology != "":
		return hwtree.FromJSONFile(s.topology)
	}
	return hwtree.Live()
}
