//go:build unix

package osal

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestNUMANodesAtFIFO: a node's cpulist that is a FIFO is refused, never
// waited on, and the partition is unknown.
func TestNUMANodesAtFIFO(t *testing.T) {
	root := fakeNodes(t, map[string]string{"node0": "0-3"})
	p := filepath.Join(root, "sys", "devices", "system", "node", "node1")
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(p, "cpulist"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if got := NUMANodesAt(root); got != nil {
		t.Errorf("a FIFO for a node list: %v, want nil", got)
	}
}
