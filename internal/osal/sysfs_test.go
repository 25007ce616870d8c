package osal

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/barriertune/barriertune/cpuset"
)

// fakeNodes writes a sysfs node directory under a new root: node name ->
// cpulist content ("" for a node of memory alone).
func fakeNodes(t *testing.T, nodes map[string]string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "sys", "devices", "system", "node")
	for name, list := range nodes {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "cpulist"), []byte(list+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// What else the directory holds on Linux.
	for _, f := range []string{"online", "possible", "has_cpu"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("0-1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "power"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestNUMANodesAt(t *testing.T) {
	root := fakeNodes(t, map[string]string{"node0": "0-3", "node1": "4-7", "node2": "", "node10": "8,9"})
	if got, want := lists(NUMANodesAt(root)), []string{"0-3", "4-7", "8-9"}; !slices.Equal(got, want) {
		t.Errorf("nodes %v, want %v (node order by number, memory-only nodes left out)", got, want)
	}
	if got := NUMANodesAt(t.TempDir()); got != nil {
		t.Errorf("no node directory: %v, want nil (unknown)", got)
	}
	overlap := fakeNodes(t, map[string]string{"node0": "0-3", "node1": "3-7"})
	if got := NUMANodesAt(overlap); got != nil {
		t.Errorf("overlapping nodes: %v, want nil (the tree places none either)", got)
	}
	bad := fakeNodes(t, map[string]string{"node0": "0-3", "node1": "four"})
	if got := NUMANodesAt(bad); got != nil {
		t.Errorf("an unreadable node list: %v, want nil (the partition is unknown)", got)
	}
}

func lists(sets []cpuset.Set) []string {
	out := []string{}
	for _, s := range sets {
		out = append(out, s.String())
	}
	return out
}

// TestNodesAtReadsMasks: a node's cpumap (what snapshots hold) is read
// before its cpulist; a directory with more entries than the cap is
// refused with ErrNodeDirFull's error, and a missing one is no error
// hwtree notes.
func TestNodesAtReadsMasks(t *testing.T) {
	root := fakeNodes(t, map[string]string{"node0": "0-3", "node1": "4-7"})
	dir := filepath.Join(root, "sys", "devices", "system", "node")
	if err := os.WriteFile(filepath.Join(dir, "node1", "cpumap"), []byte("00000f00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nodes, err := NodesAt(root)
	if err != nil || len(nodes) != 2 || nodes[0].CPUs.String() != "0-3" || nodes[1].CPUs.String() != "8-11" || !nodes[1].Read {
		t.Errorf("NodesAt = %+v, %v; want node1 from its cpumap (8-11)", nodes, err)
	}
	if _, err := NodesAt(t.TempDir()); err == nil || errors.Is(err, ErrNodeDirFull) {
		t.Errorf("no node directory: %v, want an error that is not ErrNodeDirFull", err)
	}
}

// TestOnlineAt: the list when the tree has one, else (OnlineAmong) the
// CPUs given whose own online file does not say 0, else unknown.
func TestOnlineAt(t *testing.T) {
	root := t.TempDir()
	cpu := filepath.Join(root, "sys", "devices", "system", "cpu")
	for _, c := range []string{"cpu0", "cpu1", "cpu2"} {
		if err := os.MkdirAll(filepath.Join(cpu, c), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(cpu, "cpu1", "online"), []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := OnlineAmong(root, []int{0, 1, 2}).String(); got != "0,2" {
		t.Errorf("without a list: %q, want 0,2 (cpu1 says 0)", got)
	}
	if got, ok := OnlineAt(root); ok || !got.IsEmpty() {
		t.Errorf("without a list: %v, %v, want unknown (empty, false)", got, ok)
	}
	if err := os.WriteFile(filepath.Join(cpu, "online"), []byte("0-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := OnlineAt(root); !ok || got.String() != "0-1" {
		t.Errorf("OnlineAt with a list: %q, %v, want the list's 0-1", got, ok)
	}
	if got := OnlineAmong(root, []int{0, 1, 2}).String(); got != "0-1" {
		t.Errorf("with a list: %q, want the list's 0-1", got)
	}
}
