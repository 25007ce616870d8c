package cpumodel

import (
	"testing"

	"github.com/barriertune/barriertune/hwtree"
)

// TestAddFromFixture: a sysfs snapshot's package gets the model name of
// its /proc/cpuinfo; a synthetic tree is left as it is.
func TestAddFromFixture(t *testing.T) {
	topo, err := hwtree.FromSysfs("../../../hwtree/testdata/sysfs/offline-nonuma")
	if err != nil {
		t.Fatal(err)
	}
	if m := topo.Objects(hwtree.Package)[0].Attrs.Model; m != "" {
		t.Errorf("hwtree read the model %q itself", m)
	}
	Add(topo)
	if m := topo.Objects(hwtree.Package)[0].Attrs.Model; m != "Fixture CPU 4000" {
		t.Errorf("package model = %q, want the fixture's cpuinfo model name; notes %q", m, topo.Notes)
	}
	syn, err := hwtree.FromSynthetic("pack:1 core:2 pu:1")
	if err != nil {
		t.Fatal(err)
	}
	Add(syn)
	if m := syn.Objects(hwtree.Package)[0].Attrs.Model; m != "" || len(syn.Notes) != 0 {
		t.Errorf("a synthetic tree got model %q, notes %q", m, syn.Notes)
	}
}
