//go:build unix

package cpumodel

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/barriertune/barriertune/hwtree"
)

func mkfifo(p string) error { return syscall.Mkfifo(p, 0o600) }

// TestAddRefusesHostileSnapshots: a snapshot in which a file ghw reads is
// a FIFO or a link to an endless device leaves the model unknown with a
// note naming the file, at once: no wait for a writer, no endless read.
func TestAddRefusesHostileSnapshots(t *testing.T) {
	for _, c := range []struct {
		name, rel string
		make      func(p string) error
	}{
		{"cpuinfo a FIFO", "proc/cpuinfo", func(p string) error { return mkfifo(p) }},
		{"core_id a FIFO", "sys/devices/system/cpu/cpu1/topology/core_id", func(p string) error { return mkfifo(p) }},
		{"core_id a link to /dev/zero", "sys/devices/system/cpu/cpu0/topology/core_id", func(p string) error { return os.Symlink("/dev/zero", p) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := os.Stat("/dev/zero"); err != nil {
				t.Skip("no /dev/zero here")
			}
			root := filepath.Join(t.TempDir(), "snap")
			if err := os.CopyFS(root, os.DirFS("../../../hwtree/testdata/sysfs/offline-nonuma")); err != nil {
				t.Fatal(err)
			}
			topo, err := hwtree.FromSysfs(root)
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(root, filepath.FromSlash(c.rel))
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := c.make(p); err != nil {
				t.Skip(err)
			}
			done := make(chan struct{})
			go func() { Add(topo); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Add still reading after 10s")
			}
			if m := topo.Objects(hwtree.Package)[0].Attrs.Model; m != "" {
				t.Errorf("model %q from a hostile snapshot", m)
			}
			if !slices.ContainsFunc(topo.Notes, func(n string) bool { return strings.Contains(n, "CPU model strings unknown: "+p) }) {
				t.Errorf("notes %q name no %s", topo.Notes, p)
			}
		})
	}
}
