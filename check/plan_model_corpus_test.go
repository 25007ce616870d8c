package check

import (
	"archive/tar"
	"compress/bzip2"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/hwtree"
)

// TestPlanScaleCorpus plans every hwloc snapshot of ../shared/hwloc-linux
// and checks that every thread count is covered. Planning time is logged,
// not asserted (BenchmarkPlanScale256 shows it).
func TestPlanScaleCorpus(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "hwloc-linux")
	archives, _ := filepath.Glob(filepath.Join(dir, "*.tar.bz2"))
	if len(archives) == 0 {
		t.Skip("no hwloc corpus at ../shared/hwloc-linux")
	}
	for _, a := range archives {
		name := strings.TrimSuffix(filepath.Base(a), ".tar.bz2")
		t.Run(name, func(t *testing.T) {
			root := unpackSnapshot(t, a)
			topo, err := hwtree.FromSysfs(root)
			if err != nil {
				t.Skipf("not readable by hwtree: %v", err)
			}
			if len(topo.PUs()) < 2 {
				t.Skipf("%d PU: nothing to plan", len(topo.PUs()))
			}
			start := time.Now()
			p, err := PlanScale(ScaleConfig{Topology: topo})
			if err != nil {
				t.Fatal(err)
			}
			el := time.Since(start)
			checkCoverage(t, p, len(topo.PUs()))
			t.Logf("%d PUs: planned in %s; %d counts measured, %d inferred, %d measurements, %.0fs", p.PUs, el.Round(time.Millisecond), p.Measured, p.Inferred, p.Measurements, p.EstimatedTotalS)
		})
	}
}

// unpackSnapshot unpacks the CPU parts of a sysfs snapshot (proc, and
// sys/devices/system/{cpu,node}, sys/fs/cgroup) on tmpfs when there is one,
// and returns the directory holding sys/.
func unpackSnapshot(t *testing.T, archive string) string {
	t.Helper()
	dst := t.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "barriertune-plan-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			dst = d
		}
	}
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(bzip2.NewReader(f))
	root := ""
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		name := filepath.Clean(h.Name)
		if strings.HasPrefix(name, "..") || filepath.IsAbs(name) || !cpuPart(name) {
			continue
		}
		p := filepath.Join(dst, name)
		if i := strings.Index(filepath.ToSlash(name), "sys/"); i >= 0 && root == "" && (i == 0 || name[i-1] == '/') {
			root = filepath.Join(dst, name[:i])
		}
		switch h.Typeflag {
		case tar.TypeDir:
			os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			os.MkdirAll(filepath.Dir(p), 0o755)
			out, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.Copy(out, tr)
			out.Close()
			if err != nil {
				t.Fatal(err)
			}
		case tar.TypeSymlink:
			os.MkdirAll(filepath.Dir(p), 0o755)
			_ = os.Symlink(h.Linkname, p)
		}
	}
	if root == "" {
		t.Skipf("%s holds no sys/ directory", archive)
	}
	return root
}

func cpuPart(name string) bool {
	parts := strings.Split(filepath.ToSlash(name), "/")
	for i, p := range parts {
		switch p {
		case "proc", "dev":
			return true
		case "sys":
			rest := strings.Join(parts[i+1:], "/")
			if rest == "" || rest == "devices" || rest == "devices/system" || rest == "fs" {
				return true
			}
			for _, keep := range []string{"devices/system/cpu", "devices/system/node", "devices/cpu_core", "devices/cpu_atom", "fs/cgroup"} {
				if rest == keep || strings.HasPrefix(rest, keep+"/") {
					return !strings.Contains(rest, "/cpuidle") && !strings.Contains(rest, "/cpufreq")
				}
			}
			return false
		}
	}
	return true
}
