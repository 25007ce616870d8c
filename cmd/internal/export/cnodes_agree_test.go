package export

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/results"
)

// TestCBarrierNodesAgreeWithGo: for recorded trees with a NUMANode level
// and without one (the nodes merged into the machine, a cache or the
// cores), and for every node layout of a fake sysfs (the same nodes, split,
// joined, a node per CPU, numbered apart, a node of memory alone, offline
// CPUs listed, overlapping, unreadable, no directory), the header's init
// recognises the machine exactly when the Go lookup's light fingerprint
// keeps the file (osal.NUMANodesAt, then Tree.NUMAMismatch).
func TestCBarrierNodesAgreeWithGo(t *testing.T) {
	gcc := cTool(t, "gcc")
	f := thisMachine(t)
	n := 0
	if _, err := fmt.Sscanf(f.Machine.AllowedCPUs, "0-%d", &n); err != nil || n < 1 {
		t.Fatalf("this machine's CPUs %q", f.Machine.AllowedCPUs)
	}
	all := f.Machine.AllowedCPUs
	half := (n + 1) / 2
	lo, hi := span(0, half-1), span(half, n)
	var cores []string
	for c := 0; c <= n; c++ {
		cores = append(cores, fmt.Sprint(c))
	}
	trees := map[string]*results.Tree{
		"two nodes":                {CPUs: all, Levels: []results.TreeLevel{{Type: "Package", Sets: []string{all}}, {Type: "NUMANode", Sets: []string{lo, hi}}, {Type: "Core", Sets: cores}}},
		"one node, merged":         {CPUs: all, Levels: []results.TreeLevel{{Type: "Package", Sets: []string{all}}}},
		"nodes merged into caches": {CPUs: all, Levels: []results.TreeLevel{{Type: "Package", Sets: []string{all}}, {Type: "L3Cache", Sets: []string{lo, hi}}, {Type: "Core", Sets: cores}}},
	}
	perCPU := map[string]string{}
	for i, c := range cores {
		perCPU[fmt.Sprintf("node%d", i)] = c
	}
	layouts := map[string]map[string]string{
		"one node":            {"node0": all},
		"two nodes":           {"node0": lo, "node1": hi},
		"a node per CPU":      perCPU,
		"numbered apart":      {"node0": lo, "node4": hi},
		"memory alone":        {"node0": all, "node1": ""},
		"offline CPUs listed": {"node0": lo, "node1": hi + ",900-903"},
		"overlapping":         {"node0": all, "node1": hi},
		"unreadable":          {"node0": lo, "node1": "garbage"},
		"a trailing comma":    {"node0": all + ","},
		"half a machine":      {"node0": lo},
		"no directory":        nil,
	}
	agreed := map[string]map[bool]int{}
	for tname, tree := range trees {
		f.Machine.Tree = tree
		dir := headerDir(t, f)
		root := filepath.Join(dir, "root")
		nodeDir := filepath.Join(root, sysNodeDir)
		online := filepath.Join(root, sysCPUOnline)
		compileIn(t, dir, gcc, "agree", "warn.c", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic", testRoot(root))
		for lname, nodes := range layouts {
			if err := os.RemoveAll(root); err != nil {
				t.Fatal(err)
			}
			mkdirs(t, online)
			if err := os.WriteFile(online, []byte(all+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			writeNodes(t, nodeDir, nodes)
			goKeeps := tree.NUMAMismatch(osal.NUMANodesAt(root)) == ""
			out, err := runLimited(time.Minute, dir, filepath.Join(dir, "agree"))
			if err != nil {
				t.Fatalf("%s, %s: %v\n%s", tname, lname, err, out)
			}
			cKeeps := strings.HasSuffix(out, " 1\n")
			if cKeeps != goKeeps {
				t.Errorf("tree %q, nodes %q: the C header recognises the machine: %v; the Go lookup keeps the file: %v", tname, lname, cKeeps, goKeeps)
			}
			if agreed[tname] == nil {
				agreed[tname] = map[bool]int{}
			}
			agreed[tname][goKeeps]++
		}
	}
	for _, tname := range []string{"two nodes", "one node, merged"} {
		if agreed[tname][true] == 0 || agreed[tname][false] == 0 {
			t.Errorf("tree %q: the cases kept %d and refused %d: both verdicts must be tried", tname, agreed[tname][true], agreed[tname][false])
		}
	}
}

// span is the CPU list a-b ("a" when they are one).
func span(a, b int) string {
	if a == b {
		return fmt.Sprint(a)
	}
	return fmt.Sprintf("%d-%d", a, b)
}

// writeNodes writes a fake sysfs node directory: each node's cpulist and
// the online list of their ids (nil: no directory).
func writeNodes(t *testing.T, dir string, nodes map[string]string) {
	t.Helper()
	if nodes == nil {
		return
	}
	var ids []string
	for name, list := range nodes {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "cpulist"), []byte(list+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, strings.TrimPrefix(name, "node"))
	}
	if err := os.WriteFile(filepath.Join(dir, "online"), []byte(strings.Join(ids, ",")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
