package hwtree

import (
	"fmt"
	"strings"

	"github.com/jaypipes/ghw"
)

// addModels sets each Package's CPU model string. This is what ghw does
// well: it reads /proc/cpuinfo (under the snapshot's root) and keys model
// strings by physical package id. ghw never decides the tree's shape, and
// any failure or panic inside it only leaves the model unknown.
func (r *sysfsReader) addModels(t *Topology) {
	models, err := ghwModels(r.root)
	if err != nil {
		t.Notes = append(t.Notes, "CPU model strings unknown: "+err.Error())
		return
	}
	for _, p := range t.Objects(Package) {
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
