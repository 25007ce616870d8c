package osal

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/capped"
)

// This file is the one reader of two facts Linux sysfs lists about the
// machine's CPUs: which are online and which belong to each NUMA node.
// hwtree builds its tree from them (the live machine's or a snapshot's,
// under a root), the results lookup fingerprints the machine with them,
// and Crowded counts the online CPUs. hwtree reads everything else about
// the tree (cores, caches, packages); these two live here, below hwtree,
// because Crowded needs the first and hwtree imports osal.

// Caps on what the reader takes from a sysfs tree, which may be a hostile
// snapshot: one CPU list or mask file (a 65,536-CPU mask is 18 KiB, a list
// of every other CPU of 65,536 about 190 KiB), and the entries of the node
// directory (a nodeN per node, at most one per CPU, and a few more).
const (
	MaxSysfsValue     = 1 << 20
	MaxNodeDirEntries = cpuset.MaxCPU + 1 + 1024
)

// ReadSysfsValue returns a sysfs file's trimmed content, or "" when it is
// missing, empty or unreadable: snapshots are often incomplete, and
// unknown is not fatal. Trailing NUL bytes (some ARM kernels pad values
// with them), spaces and newlines are dropped. What is not a regular file
// (a FIFO in a snapshot, a device) or holds more than MaxSysfsValue counts
// as unreadable, and the open never waits.
func ReadSysfsValue(path string) string {
	s, _ := readValue(path)
	return s
}

// readValue is ReadSysfsValue with the reason a file was unreadable.
func readValue(path string) (string, error) {
	b, err := capped.File{Limit: MaxSysfsValue}.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimFunc(string(b), func(r rune) bool { return r == 0 || unicode.IsSpace(r) }), nil
}

// readCPUs reads a CPU mask or list file; ok is false when it is
// unreadable or not one (an empty file is the empty set).
func readCPUs(path string, parse func(string) (cpuset.Set, error)) (cpuset.Set, bool) {
	s, err := readValue(path)
	if err != nil {
		return cpuset.Set{}, false
	}
	if s == "" {
		return cpuset.Set{}, true
	}
	v, err := parse(s)
	if err != nil {
		return cpuset.Set{}, false
	}
	return v, true
}

// cpuDir is the CPU directory of the sysfs tree under root.
func cpuDir(root string) string { return filepath.Join(root, "sys", "devices", "system", "cpu") }

// OnlineAt returns the online CPUs that the sysfs tree under root ("/"
// for this machine) lists (cpu/online), and false when it lists none that
// can be read.
func OnlineAt(root string) (cpuset.Set, bool) {
	if s := ReadSysfsValue(filepath.Join(cpuDir(root), "online")); s != "" {
		if v, err := cpuset.ParseList(s); err == nil {
			return v, true
		}
	}
	return cpuset.Set{}, false
}

// OnlineAmong is OnlineAt for a tree that may not list them (an old
// snapshot): the list when there is one, else those of present (the CPUs
// with a cpuN directory, as the caller listed them) whose cpuN/online
// does not say 0 (cpu0 often has no such file: it cannot go offline).
func OnlineAmong(root string, present []int) cpuset.Set {
	if s, ok := OnlineAt(root); ok {
		return s
	}
	var b cpuset.Builder
	for _, c := range present {
		if ReadSysfsValue(filepath.Join(cpuDir(root), "cpu"+strconv.Itoa(c), "online")) != "0" {
			b.Add(c)
		}
	}
	return b.Set()
}

// OnlineCPUs returns this machine's online CPUs, or the empty set when
// the system does not say (outside Linux, no sysfs).
func OnlineCPUs() cpuset.Set {
	s, _ := OnlineAt("/")
	return s
}

// Node is one NUMA node a sysfs tree lists: its number and its CPUs
// (empty for a node of memory alone, a GPU's or a CXL tier's). Read is
// false when its CPU file could not be read or parsed (then CPUs is
// empty too).
type Node struct {
	ID   int
	CPUs cpuset.Set
	Read bool
}

// ErrNodeDirFull is NodesAt's error for a node directory with more than
// MaxNodeDirEntries entries (errors.Is).
var ErrNodeDirFull = errors.New("the node directory has too many entries")

// dirFull says which directory is full, and is ErrNodeDirFull.
type dirFull string

func (e dirFull) Error() string        { return string(e) }
func (e dirFull) Is(target error) bool { return target == ErrNodeDirFull }

// NodesAt lists the NUMA nodes of the sysfs tree under root, in node
// order, with their CPUs (node/nodeN/cpumap, which snapshots hold, else
// cpulist): the one reader of the node directory, for hwtree's tree and
// the results lookup's fingerprint (NUMANodesAt) alike. The error says why
// there are none to list: the node directory is missing or is not one (no
// NUMA information), or it holds more than MaxNodeDirEntries entries
// (ErrNodeDirFull).
func NodesAt(root string) ([]Node, error) {
	dir := filepath.Join(root, "sys", "devices", "system", "node")
	entries, more, err := capped.ReadDir(dir, MaxNodeDirEntries)
	if err != nil {
		return nil, err
	}
	if more {
		return nil, dirFull(fmt.Sprintf("%s has more than %d entries", dir, MaxNodeDirEntries))
	}
	names := map[int]string{}
	var ids []int
	for _, e := range entries {
		num, ok := strings.CutPrefix(e.Name(), "node")
		id, err := strconv.Atoi(num)
		if !ok || err != nil || strings.Trim(num, "0123456789") != "" {
			continue
		}
		if _, dup := names[id]; !dup { // "node01" and "node1": one node
			ids = append(ids, id)
		}
		names[id] = e.Name()
	}
	slices.Sort(ids)
	nodes := make([]Node, 0, len(ids))
	for _, id := range ids {
		n := Node{ID: id}
		nd := filepath.Join(dir, names[id])
		if n.CPUs, n.Read = readCPUs(filepath.Join(nd, "cpumap"), cpuset.ParseMask); !n.Read {
			n.CPUs, n.Read = readCPUs(filepath.Join(nd, "cpulist"), cpuset.ParseList)
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// NUMANodesAt returns the CPUs of each NUMA node of the sysfs tree under
// root that has CPUs, in node order, or nil when they are unknown: no node
// directory, one node's CPUs unreadable, or two nodes overlapping (the
// kernel's NUMA information is then wrong: hwtree, as hwloc, places no
// node). It reads the nodes as NodesAt does (one small file per node),
// not the CPU tree: the results lookup's light fingerprint compares it
// with a file's recorded tree.
func NUMANodesAt(root string) []cpuset.Set {
	nodes, err := NodesAt(root)
	if err != nil {
		return nil
	}
	var sets []cpuset.Set
	for _, n := range nodes {
		if !n.Read {
			return nil // one node unknown: the partition is unknown
		}
		if !n.CPUs.IsEmpty() {
			sets = append(sets, n.CPUs)
		}
	}
	for i := range sets {
		for j := i + 1; j < len(sets); j++ {
			if sets[i].Intersects(sets[j]) {
				return nil
			}
		}
	}
	return sets
}

// NUMANodes is NUMANodesAt for this machine ("/").
func NUMANodes() []cpuset.Set { return NUMANodesAt("/") }
