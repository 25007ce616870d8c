package latency

import (
	"fmt"
	"path/filepath"

	"github.com/barriertune/barriertune/hwtree"
)

// LoadFile reads a matrix (ReadFile: the CSV format, or `barriertune
// latency --json` output; a regular file, size capped) for prediction,
// planning and simulation and the tree clustered from it (Cluster), its Source
// "latency:<file name>". Predicting needs every pair, so a matrix with
// holes is refused (Complete).
func LoadFile(path string) (*Matrix, *hwtree.Topology, error) {
	m, err := ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	if err := m.Complete(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	topo, err := Cluster(m)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	topo.Source = "latency:" + filepath.Base(path)
	return m, topo, nil
}
