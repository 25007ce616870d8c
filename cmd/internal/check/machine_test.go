package check

import (
	"archive/tar"
	"compress/bzip2"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/store"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/osal"
)

// snapshot unpacks the shared hwloc sysfs snapshot name (sys/ and proc/
// only) and returns its root, or skips without ../shared.
func snapshot(t *testing.T, name string) string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "..", "shared", "hwloc-linux", name+".tar.bz2"))
	if err != nil {
		t.Skipf("shared snapshot %s: %v", name, err)
	}
	defer f.Close()
	dst := t.TempDir()
	tr := tar.NewReader(bzip2.NewReader(f))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rel := filepath.Clean(h.Name)
		if strings.HasPrefix(rel, "..") || filepath.IsAbs(rel) || !strings.Contains(rel, "sys/") && !strings.Contains(rel, "proc/") && !strings.Contains(rel, "dev/") {
			continue
		}
		p := filepath.Join(dst, rel)
		switch h.Typeflag {
		case tar.TypeDir:
			os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			os.MkdirAll(filepath.Dir(p), 0o755)
			out, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(out, io.LimitReader(tr, 1<<20))
			out.Close()
		case tar.TypeSymlink:
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.Symlink(h.Linkname, p)
		}
	}
	var root string
	filepath.WalkDir(dst, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "sys" && root == "" {
			root = filepath.Dir(path)
		}
		return nil
	})
	if root == "" {
		t.Fatalf("%s: no sys/ in the snapshot", name)
	}
	return root
}

// TestCgroupCheckRecordsWholeMachine: a check inside a cgroup (the
// snapshot 16amd64-8n2c-cpusets) records the whole machine's tree, its own
// allowed CPUs, and what it could not measure; the tree's hash is the
// whole machine's, the same as a check outside the cgroup records.
func TestCgroupCheckRecordsWholeMachine(t *testing.T) {
	root := snapshot(t, "16amd64-8n2c-cpusets")
	topo, err := hwtree.FromSysfs(root)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := topo.Whole()
	if err != nil {
		t.Fatal(err)
	}
	if topo.Allowed().Equal(whole.Allowed()) || !topo.Allowed().SubsetOf(whole.Allowed()) {
		t.Fatalf("snapshot cgroup allows %s of %s: want a strict subset", topo.Allowed(), whole.Allowed())
	}
	m := CurrentMachine(topo)
	if m.Tree == nil || m.Tree.CPUs != whole.Allowed().String() || m.AllowedCPUs != topo.Allowed().String() {
		t.Fatalf("recorded tree %+v, allowed %s; want the whole machine %s and the cgroup's %s", m.Tree, m.AllowedCPUs, whole.Allowed(), topo.Allowed())
	}
	if m.TopologyHash != whole.CanonicalHash() || m.TopologyHash == topo.CanonicalHash() {
		t.Errorf("hash %s: want the whole tree's %s", m.TopologyHash, whole.CanonicalHash())
	}
	if !strings.Contains(m.Unmeasured, "the check ran on CPUs "+topo.Allowed().String()) || !strings.Contains(m.Unmeasured, fmt.Sprintf("reached %d of %d PUs", topo.Allowed().Len(), whole.Allowed().Len())) {
		t.Errorf("unmeasured %q", m.Unmeasured)
	}
	// The light tree has one object per object of the whole tree.
	n := 0
	for _, l := range m.Tree.Levels {
		n += len(l.Sets)
	}
	objs := 0
	whole.Walk(func(o *hwtree.Object) bool {
		if o.Type != hwtree.Machine && o.Type != hwtree.PU {
			objs++
		}
		return true
	})
	if n != objs {
		t.Errorf("light tree has %d objects, the whole tree %d", n, objs)
	}
	t.Logf("cgroup %s of %s: %s", topo.Allowed(), whole.Allowed(), m.Unmeasured)
}

// TestLightTreeKeepsDisallowedCPUs: a tree restricted to part of a
// synthetic machine, fingerprinted inside the whole one, keeps the whole.
func TestLightTreeKeepsDisallowedCPUs(t *testing.T) {
	whole, _ := hwtree.FromSynthetic("pack:2 core:2 pu:2")
	part, _ := hwtree.FromSynthetic("pack:2 core:2 pu:2")
	if err := part.Restrict(cpuset.Of(1, 6)); err != nil {
		t.Fatal(err)
	}
	m := MachineOn(part, whole)
	if m.Tree.CPUs != "0-7" || len(m.Tree.Levels) != 2 || strings.Join(m.Tree.Levels[1].Sets, " ") != "0-1 2-3 4-5 6-7" || m.AllowedCPUs != "1,6" {
		t.Errorf("%+v", m)
	}
	if want := "reached 2 of 8 PUs, 2 of 2 Packages (2 only partly), 2 of 4 Cores (2 only partly)"; !strings.Contains(m.Unmeasured, want) {
		t.Errorf("unmeasured %q, want %q", m.Unmeasured, want)
	}
}

// TestRecordedTreeMatchesItsNodes: on every machine of the shared hwloc
// corpus, the tree a check records (the whole machine's, from sysfs) and
// the NUMA nodes the lookup's light fingerprint reads from the same sysfs
// agree (results.Tree.NUMAMismatch), so an unchanged machine never loses
// its file; and where the machine has several nodes with a level of their
// own, joining two of them is noticed.
func TestRecordedTreeMatchesItsNodes(t *testing.T) {
	names, _ := filepath.Glob(filepath.Join("..", "..", "..", "..", "shared", "hwloc-linux", "*.tar.bz2"))
	if len(names) == 0 {
		t.Skip("no shared hwloc corpus")
	}
	if testing.Short() {
		names = names[:min(len(names), 6)]
	}
	withNodes := 0
	for _, p := range names {
		name := strings.TrimSuffix(filepath.Base(p), ".tar.bz2")
		root := snapshot(t, name)
		nodes := osal.NUMANodesAt(root)
		if nodes == nil {
			continue // no node directory in this snapshot
		}
		topo, err := hwtree.FromSysfs(root)
		if err == nil {
			topo, err = topo.Whole()
		}
		if err != nil {
			continue // the corpus test covers what hwtree refuses
		}
		withNodes++
		tree := store.TreeOf(topo)
		if why := tree.NUMAMismatch(nodes); why != "" {
			t.Errorf("%s: the recorded tree against its own nodes: %s", name, why)
		}
		level := false
		for _, l := range tree.Levels {
			level = level || l.Type == "NUMANode"
		}
		if level && len(nodes) > 1 {
			joined := append([]cpuset.Set{nodes[0].Or(nodes[1])}, nodes[2:]...)
			if tree.NUMAMismatch(joined) == "" {
				t.Errorf("%s: nodes 0 and 1 joined still match the tree", name)
			}
		}
	}
	t.Logf("%d of %d snapshots have NUMA nodes", withNodes, len(names))
}
