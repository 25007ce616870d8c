package check

import (
	"fmt"
	"strings"

	"github.com/barriertune/barriertune/cmd/internal/store"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/text"
	"github.com/barriertune/barriertune/results"
)

// CurrentMachine returns the full fingerprint of this machine with
// topology topo (the CPUs the check may use): the light fingerprint
// (results.HereFinder's Host) with topo's allowed CPUs, plus the whole machine's tree
// (WholeTopology: CPUs a cgroup or affinity leaves out included), its
// synthetic string and canonical hash, which the check records and the
// library then trusts, and what the allowed CPUs could not measure.
func CurrentMachine(topo *hwtree.Topology) results.Machine {
	return MachineOn(topo, WholeTopology(topo))
}

// WholeTopology returns the whole machine topo belongs to: for a tree
// discovered from sysfs (live or a snapshot), the same sysfs read without
// the allowed-set restriction; other sources (synthetic, XML, JSON) are
// whole as given. When the whole tree cannot be read, topo is returned.
func WholeTopology(topo *hwtree.Topology) *hwtree.Topology {
	whole, err := topo.Whole()
	if err != nil || !topo.Allowed().SubsetOf(whole.Allowed()) {
		return topo
	}
	return whole
}

// MachineOn is the fingerprint of a check run on topo, part of the machine
// whole (CurrentMachine finds whole itself).
func MachineOn(topo, whole *hwtree.Topology) results.Machine {
	var m results.Machine // this machine's light fingerprint, for topo's CPUs
	if fd, err := results.HereFinder(); err == nil {
		m = fd.Host
	}
	m.AllowedCPUs = topo.Allowed().String()
	m.TopologyHash = whole.CanonicalHash()
	if s, err := whole.Synthetic(); err == nil {
		m.Topology = s
	} else {
		m.Topology = "canonical:" + m.TopologyHash
	}
	m.Tree = store.TreeOf(whole)
	m.Unmeasured = unmeasured(whole, topo.Allowed())
	return m
}

// unmeasured says which placement classes a check allowed only the CPUs
// allowed could not measure on whole: for each level of the tree, how many
// of its objects the allowed CPUs reach, and how many only in part.
func unmeasured(whole *hwtree.Topology, allowed cpuset.Set) string {
	all := whole.Allowed()
	if allowed.Equal(all) {
		return ""
	}
	parts := []string{fmt.Sprintf("%d of %s", allowed.And(all).Len(), text.Plural(all.Len(), "PU"))}
	seen := map[hwtree.Type]bool{}
	whole.Walk(func(o *hwtree.Object) bool {
		if o.Type == hwtree.Machine || o.Type == hwtree.PU || seen[o.Type] || o.Type.IsCache() && o.Type.CacheLevel() < 3 {
			return true
		}
		seen[o.Type] = true
		objs := whole.Objects(o.Type)
		reached, partly := 0, 0
		for _, x := range objs {
			if x.CPUSet.Intersects(allowed) {
				reached++
				if !x.CPUSet.SubsetOf(allowed) {
					partly++
				}
			}
		}
		if reached < len(objs) || partly > 0 {
			p := fmt.Sprintf("%d of %s", reached, text.Plural(len(objs), o.Type.String()))
			if partly > 0 {
				p += fmt.Sprintf(" (%d only partly)", partly)
			}
			parts = append(parts, p)
		}
		return true
	})
	return fmt.Sprintf("the check ran on CPUs %s of %s and reached %s: placements using more of these, or all of one reached partly, were not measured (jobs allowed them get the nearest rule)",
		allowed, all, strings.Join(parts, ", "))
}
