package latency

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"

	"github.com/barriertune/barriertune/cmd/internal/outfile"
	"github.com/barriertune/barriertune/hwtree"
)

// Report is a matrix with what it says about the machine: `barriertune
// latency --json`'s object, which ReadJSON reads back. Matrix holds null
// for pairs not measured. Disagreements compare the matrix with the tree
// of a measured machine (absent when there is none).
type Report struct {
	CPUs            []int          `json:"cpus"`
	Matrix          [][]*float64   `json:"matrix"`
	Levels          []Level        `json:"levels"`
	PairsMeasured   int            `json:"pairs_measured"`
	Disagreements   []Disagreement `json:"disagreements,omitempty"`
	ClusteredLevels []Level        `json:"clustered_levels"`
	Groups          int            `json:"clustered_groups"`
}

// NewReport reports on m, its levels by topo (nil: by the tree clustered
// from m, which it also returns).
func NewReport(m *Matrix, topo *hwtree.Topology) (Report, *hwtree.Topology, error) {
	clustered, err := Cluster(m)
	if err != nil {
		return Report{}, nil, err
	}
	r := Report{CPUs: m.CPUs, ClusteredLevels: Levels(m, clustered), Groups: len(clustered.Root.Children)}
	if topo != nil {
		r.Levels = Levels(m, topo)
		r.Disagreements = Disagreements(m, topo)
	} else {
		r.Levels = r.ClusteredLevels
	}
	for i, row := range m.NS {
		out := make([]*float64, len(row))
		for j, v := range row {
			if !math.IsNaN(v) {
				out[j] = &v
				if j < i {
					r.PairsMeasured++
				}
			}
		}
		r.Matrix = append(r.Matrix, out)
	}
	return r, clustered, nil
}

// WriteFile writes m to path: r as JSON for a .json path, else the CSV
// that ReadFile reads. The file is written whole or not at all (a
// temporary file beside it, renamed), mode 0644; a path that is not a
// regular file (a device, a FIFO, a directory) is refused, not replaced,
// and its directory must exist.
func WriteFile(path string, m *Matrix, r Report) error {
	var b bytes.Buffer
	if strings.EqualFold(filepath.Ext(path), ".json") {
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return err
		}
	} else if err := WriteCSV(&b, m); err != nil {
		return err
	}
	return outfile.Write("latency table", path, b.Bytes(), 0o644)
}
