package hwtree

import (
	"fmt"
	"io"
	"os"
)

// MaxFileSize bounds the topology files (hwloc XML, JSON) the readers
// accept: 64 MiB, far above the largest real hwloc export (a few MiB for
// thousands of PUs), so that a wrong or hostile file cannot exhaust memory.
const MaxFileSize = 64 << 20

// maxOSIndex bounds the OS index of objects other than PUs in topology
// files (PUs are bounded by cpuset.MaxCPU). Such indexes are labels, never
// allocated by: ia64 package ids such as 196611 are real.
const maxOSIndex = 1<<31 - 1

// readCapped reads a whole regular file of at most MaxFileSize bytes.
// Devices (/dev/zero) and FIFOs are refused before opening: opening a FIFO
// blocks until a writer comes, and a device may never end.
func readCapped(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s); give a topology file", path, fi.Mode().Type())
	}
	if fi.Size() > MaxFileSize {
		return nil, fmt.Errorf("%s: %d bytes, larger than %d bytes (%d MiB), the most a topology file may have", path, fi.Size(), MaxFileSize, MaxFileSize>>20)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%s: larger than %d bytes (%d MiB), the most a topology file may have", path, MaxFileSize, MaxFileSize>>20)
	}
	return data, nil
}
