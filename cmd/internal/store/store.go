// Package store writes the results file for the check and the CLI:
// where it goes (Destination: -o FILE, -o DIR/, --system, the lookup
// order's first place), the atomic write, the rules that keep a complete,
// quiet or measured file from being replaced by a worse one (Save), the
// lock of a directory shared by several machines, and the tree a check
// records (TreeOf).
//
// The format and the reading side stay in package results, which every
// program that imports barriers links; a program that only reads results
// files links none of this.
package store

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/barriertune/barriertune/cmd/internal/outfile"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

// partialSuffix names the file beside a complete results file where Save
// puts a less complete run.
const partialSuffix = ".partial"

// BusySuffix names the file beside a file not measured busy where Save
// puts a run measured on a busy machine (results.File.Busy).
const BusySuffix = ".busy"

// Write stores f at path atomically: a temporary file in the same
// directory, fsync, rename over path, fsync of the directory. Readers see
// the old file or the new one, never a torn one. The file's mode is 0644
// whatever the umask, so a system-wide results file is readable by its
// users. A path that is not a regular file (a device, a FIFO, a directory,
// a symbolic link to nothing) is refused, not replaced; missing
// directories are created.
func Write(path string, f *results.File) error {
	if f.Schema == "" {
		f.Schema = results.Schema
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding results: %w", err)
	}
	data = append(data, '\n')
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	return outfile.Write("results file", path, data, 0o644)
}

// Save writes f to path unless that would replace a complete file with a
// less complete one (see supersedes): then f goes to path+partialSuffix,
// which `check --resume` accepts, and path keeps the complete run. A run
// measured on a busy machine (results.File.Busy) never replaces a file that was
// not: it goes to path+BusySuffix, and path keeps the quiet run byte for
// byte. A simulated file (results.File.Simulated) never replaces a measured one:
// that is an error. It returns the path written.
func Save(path string, f *results.File) (string, error) {
	if old, err := results.Read(path); err == nil {
		switch {
		case f.Simulated && !old.Simulated:
			return "", measuredKept(path)
		case f.Busy() && !old.Busy():
			path += BusySuffix
		case !supersedes(f, old):
			path += partialSuffix
		}
	}
	return path, Write(path, f)
}

// RefusesSimulated returns Save's error for a simulated file at path when
// path holds measured results, else nil: a simulated check asks before it
// runs.
func RefusesSimulated(path string) error {
	if old, err := results.Read(path); err == nil && !old.Simulated {
		return measuredKept(path)
	}
	return nil
}

func measuredKept(path string) error {
	return fmt.Errorf("results file %s holds measured results; a simulated results file never replaces them: give another path", path)
}

// supersedes reports whether results f may replace old: old is partial,
// or f is complete, reached every placement class old reached (a check
// confined to part of the machine, by a batch system's step or taskset,
// lists what it could not reach in Machine.Unmeasured) and has a winner
// for every thread count old has one for.
func supersedes(f, old *results.File) bool {
	if old.Partial || !hasWinner(old) {
		return true
	}
	if f.Partial || f.Machine.Unmeasured != "" && old.Machine.Unmeasured == "" {
		return false
	}
	for _, t := range old.Threads {
		if t.Best == nil {
			continue
		}
		if n := f.Lookup(t.Threads); n == nil || n.Best == nil {
			return false
		}
	}
	return true
}

// hasWinner reports whether any thread count has a best choice.
func hasWinner(f *results.File) bool {
	return slices.ContainsFunc(f.Threads, func(t results.Threads) bool { return t.Best != nil })
}

// TreeOf is topo in the results file's self-contained form: its CPUs and,
// for each object type between the Machine and the PUs (root first), the
// CPUs of each object.
func TreeOf(topo *hwtree.Topology) *results.Tree {
	t := &results.Tree{CPUs: topo.Allowed().String(), Levels: []results.TreeLevel{}}
	index := map[string]int{}
	// Breadth first, so that levels come root first.
	queue := []*hwtree.Object{topo.Root}
	for len(queue) > 0 {
		o := queue[0]
		queue = queue[1:]
		queue = append(queue, o.Children...)
		if o.Type == hwtree.Machine || o.Type == hwtree.PU {
			continue
		}
		name := o.Type.String()
		i, ok := index[name]
		if !ok {
			i = len(t.Levels)
			index[name] = i
			t.Levels = append(t.Levels, results.TreeLevel{Type: name})
		}
		t.Levels[i].Sets = append(t.Levels[i].Sets, o.CPUSet.String())
	}
	return t
}
