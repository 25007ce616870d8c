package hwtree

import (
	"github.com/barriertune/barriertune/internal/capped"
)

// maxFileSize bounds the topology files (hwloc XML, JSON) the readers
// accept: 64 MiB, far above the largest real hwloc export (a few MiB for
// thousands of PUs), so that a wrong or hostile file cannot exhaust memory.
const maxFileSize = 64 << 20

// maxOSIndex bounds the OS index of objects other than PUs in topology
// files (PUs are bounded by cpuset.MaxCPU). Such indexes are labels, never
// allocated by: ia64 package ids such as 196611 are real.
const maxOSIndex = 1<<31 - 1

// readCapped reads a whole regular file of at most maxFileSize bytes.
// Devices (/dev/zero) and FIFOs are refused before opening: opening a FIFO
// blocks until a writer comes, and a device may never end.
func readCapped(path string) ([]byte, error) {
	return capped.File{Hint: "give a topology file", Limit: maxFileSize}.ReadFile(path)
}
