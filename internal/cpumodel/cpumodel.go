// Package cpumodel adds the CPU model strings to a tree discovered from
// sysfs. It is what github.com/jaypipes/ghw does well: ghw reads
// /proc/cpuinfo (under the snapshot's root) and keys model strings by
// physical package id. ghw never decides the tree's shape, and any
// failure or panic inside it only leaves the model unknown. The tuner
// pays for ghw's dependencies here; hwtree, which the barriers library
// links through results, does not.
package cpumodel

import (
	"fmt"
	"strings"

	"github.com/jaypipes/ghw"

	"github.com/barriertune/barriertune/hwtree"
)

// Add sets each Package's CPU model string of a tree read from a sysfs
// (its Source "sysfs:ROOT" or "sysfs-whole:ROOT"), reading ROOT's
// /proc/cpuinfo; a failure is one of t's Notes. Trees from other sources
// are left as they are (an hwloc XML file carries its own models).
func Add(t *hwtree.Topology) {
	root, ok := strings.CutPrefix(t.Source, "sysfs:")
	if !ok {
		if root, ok = strings.CutPrefix(t.Source, "sysfs-whole:"); !ok {
			return
		}
	}
	models, err := ghwModels(root)
	if err != nil {
		t.Notes = append(t.Notes, "CPU model strings unknown: "+err.Error())
		return
	}
	for _, p := range t.Objects(hwtree.Package) {
		m, ok := models[p.OSIndex]
		if !ok && len(models) == 1 {
			for _, v := range models {
				m = v
			}
		}
		p.Attrs.Model = strings.TrimSpace(m)
	}
}

// ghwModels returns model strings by physical package id, recovering from
// any panic inside ghw.
func ghwModels(root string) (models map[int]string, err error) {
	defer func() {
		if p := recover(); p != nil {
			models, err = nil, fmt.Errorf("ghw panicked: %v", p)
		}
	}()
	info, err := ghw.CPU(ghw.WithChroot(root), ghw.WithDisableWarnings(), ghw.WithDisableTools())
	if err != nil {
		return nil, fmt.Errorf("ghw: %w", err)
	}
	models = map[int]string{}
	for _, p := range info.Processors {
		if p != nil && p.Model != "" {
			models[p.ID] = p.Model
		}
	}
	return models, nil
}
