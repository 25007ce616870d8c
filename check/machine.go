package check

import (
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

// CurrentMachine returns the full fingerprint of this machine with
// topology topo: the light fingerprint (results.Host) plus the tree's
// synthetic string and canonical hash, which the check records and the
// library then trusts.
func CurrentMachine(topo *hwtree.Topology) results.Machine {
	m := results.Host(topo.Allowed().String())
	m.TopologyHash = topo.CanonicalHash()
	if s, err := topo.Synthetic(); err == nil {
		m.Topology = s
	} else {
		m.Topology = "canonical:" + m.TopologyHash
	}
	return m
}
