// Package cpumodel adds the CPU model strings to a tree discovered from
// sysfs. It is what github.com/jaypipes/ghw does well: ghw reads
// /proc/cpuinfo (under the snapshot's root) and keys model strings by
// physical package id. ghw never decides the tree's shape, and any
// failure or panic inside it only leaves the model unknown. The tuner
// pays for ghw's dependencies here; hwtree, which the barriers library
// links through results, does not.
package cpumodel

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/jaypipes/ghw"

	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/text"
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
	if err := safeSnapshot(root); err != nil {
		t.Notes = append(t.Notes, "CPU model strings unknown: "+err.Error())
		return
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

// The parts of a snapshot ghw reads (v0.26: /proc/cpuinfo, the CPU and
// node directories with their online, topology and cpu entries, the device
// tree), and the caps safeSnapshot holds them to.
var ghwReads = []string{"proc/cpuinfo", "sys/devices/system/cpu", "sys/devices/system/node", "sys/firmware/devicetree"}

const (
	maxSnapshotEntries = 1 << 18
	maxSnapshotFile    = 64 << 20
)

// safeSnapshot refuses a captured snapshot (any root but "/") that ghw
// could not read safely: ghw opens files without checking what they are,
// so a FIFO would block it for ever and a link to /dev/zero would be read
// until memory runs out. Every entry under the parts ghw reads, links
// followed one step (a link's target is checked, not descended into), must
// be a directory or a regular file of at most maxSnapshotFile bytes, and
// there may be at most maxSnapshotEntries of them. The live machine's own
// sysfs is trusted.
func safeSnapshot(root string) error {
	if filepath.Clean(root) == "/" || root == "" {
		return nil
	}
	n := 0
	for _, part := range ghwReads {
		top := filepath.Join(root, filepath.FromSlash(part))
		if _, err := os.Lstat(top); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrPermission) {
					return nil // ghw cannot read it either
				}
				return err
			}
			if n++; n > maxSnapshotEntries {
				return fmt.Errorf("more than %d entries under %s: not read", maxSnapshotEntries, filepath.Join(root, "sys"))
			}
			fi, err := os.Stat(p) // a link's target
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && d.Type()&fs.ModeSymlink != 0 {
					return nil // a dangling link: ghw's open fails at once
				}
				return err
			}
			switch {
			case fi.IsDir():
			case !fi.Mode().IsRegular():
				return fmt.Errorf("%s is %s, not a file", p, text.FileKind(fi.Mode()))
			case fi.Size() > maxSnapshotFile:
				return fmt.Errorf("%s is %d bytes (at most %d)", p, fi.Size(), maxSnapshotFile)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
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
