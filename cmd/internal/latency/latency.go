// Package latency holds one-way core-to-core latency matrices: read from
// the CSV format of docs/model.md (that of ../shared/latency) or `barriertune
// latency --json` output (ReadFile), written as CSV (WriteCSV), or measured
// here by ping-pong, summarised
// per topology level, and clustered into a tree for machines known only by
// their matrix.
package latency

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/capped"
	"github.com/barriertune/barriertune/internal/text"

	"github.com/barriertune/barriertune/cmd/internal/measure"
)

// MaxCPUs caps the size of a matrix read or measured.
const MaxCPUs = 4096

// Matrix is a one-way latency matrix: NS[i][j] is the latency in
// nanoseconds between OS CPUs CPUs[i] and CPUs[j]; NaN where not measured.
type Matrix struct {
	CPUs []int
	NS   [][]float64
}

// ReadCSV reads a matrix in the CSV format of docs/model.md (that of
// ../shared/latency): N rows, row i
// holding the lower triangle (fields j < i), the rest empty. CPUs are
// numbered 0..N-1.
//
// Memory: the values are parsed row by row as they are read (the lower
// triangle, half a matrix), then the matrix itself is allocated once.
func ReadCSV(r io.Reader) (*Matrix, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	var rows [][]float64 // row i: fields 0..i-1 (NaN where empty)
	var fields []int     // row i's number of fields
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("latency CSV: %w", err)
		}
		i := len(rows)
		if i >= MaxCPUs {
			return nil, fmt.Errorf("latency CSV: more than %d rows; at most %d CPUs are accepted", MaxCPUs, MaxCPUs)
		}
		if len(rec) > MaxCPUs {
			return nil, fmt.Errorf("latency CSV: row %d has %d fields; at most %d CPUs are accepted", i, len(rec), MaxCPUs)
		}
		row := make([]float64, i)
		for j := range row {
			row[j] = math.NaN()
		}
		for j, f := range rec {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			if j >= i {
				return nil, fmt.Errorf("latency CSV: row %d field %d is %q; only the lower triangle (field < row) may hold values", i, j, f)
			}
			v, err := strconv.ParseFloat(f, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
				return nil, fmt.Errorf("latency CSV: row %d field %d is %q; want a positive number of nanoseconds", i, j, f)
			}
			row[j] = v
		}
		rows = append(rows, row)
		fields = append(fields, len(rec))
	}
	n := len(rows)
	if n < 2 {
		return nil, fmt.Errorf("latency CSV: %d rows; a matrix needs at least 2 CPUs", n)
	}
	for i, f := range fields {
		if f > n {
			return nil, fmt.Errorf("latency CSV: row %d has %d fields; an N-CPU matrix has at most N=%d", i, f, n)
		}
	}
	m := newMatrix(seq(n))
	for i, row := range rows {
		for j, v := range row {
			m.NS[i][j], m.NS[j][i] = v, v
		}
		rows[i] = nil
	}
	return m, nil
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func newMatrix(cpus []int) *Matrix {
	m := &Matrix{CPUs: append([]int(nil), cpus...), NS: make([][]float64, len(cpus))}
	for i := range m.NS {
		m.NS[i] = make([]float64, len(cpus))
		for j := range m.NS[i] {
			if i != j {
				m.NS[i][j] = math.NaN()
			}
		}
	}
	return m
}

func (m *Matrix) index(cpu int) int {
	if cpu >= 0 && cpu < len(m.CPUs) && m.CPUs[cpu] == cpu {
		return cpu
	}
	for i, c := range m.CPUs {
		if c == cpu {
			return i
		}
	}
	return -1
}

// Latency returns the one-way latency between OS CPUs a and b: 0 for a == b,
// NaN when the pair was not measured or a CPU is not in the matrix.
func (m *Matrix) Latency(a, b int) float64 {
	if a == b {
		return 0
	}
	i, j := m.index(a), m.index(b)
	if i < 0 || j < 0 {
		return math.NaN()
	}
	return m.NS[i][j]
}

// PingPongFunc measures the one-way latency in ns between OS CPUs a and
// b. Tests inject a fake one; the default is measure.PingPongLatency's
// median.
type PingPongFunc func(a, b int, opts measure.Options) (float64, error)

func pingPong(a, b int, opts measure.Options) (float64, error) {
	pp, err := measure.PingPongLatency(a, b, opts)
	return pp.MedianNs, err
}

// AllPairsUpTo is the most CPUs whose every pair is measured; beyond it
// MeasureTree measures representative pairs per tree level.
const AllPairsUpTo = 64

// Defaults of Options.PerLevel and Options.MaxPairs.
const (
	DefaultPerLevel = 6
	DefaultMaxPairs = 256
)

// Options configure Measure and MeasureTree.
type Options struct {
	// Measure is passed to each ping-pong (repetitions, durations).
	Measure measure.Options
	// Progress, when set, is called after each pair.
	Progress func(done, total int)
	// PingPong measures one pair; nil means measure.PingPongLatency.
	PingPong PingPongFunc
	// PerLevel is how many representative pairs MeasureTree measures per
	// tree level beyond AllPairsUpTo CPUs (0: DefaultPerLevel); MaxPairs
	// caps their total (0: DefaultMaxPairs).
	PerLevel, MaxPairs int
}

// Measure measures the one-way latency (half a round trip of one cache
// line, measure.PingPongLatency: the same definition as the floor) for
// every pair of cpus. At most AllPairsUpTo CPUs are measured exhaustively;
// larger sets are refused (MeasureTree measures representative pairs).
func Measure(ctx context.Context, cpus []int, opts Options) (*Matrix, error) {
	if len(cpus) > AllPairsUpTo {
		return nil, fmt.Errorf("latency: %d CPUs given; all pairs are measured for at most %d", len(cpus), AllPairsUpTo)
	}
	if err := checkCPUs(cpus); err != nil {
		return nil, err
	}
	var pairs []Pair
	for i := range cpus {
		for j := 0; j < i; j++ {
			pairs = append(pairs, Pair{A: cpus[i], B: cpus[j]})
		}
	}
	return MeasurePairs(ctx, cpus, pairs, opts)
}

func checkCPUs(cpus []int) error {
	if len(cpus) < 2 {
		return fmt.Errorf("latency: %s given; measuring needs at least 2 (a pair)", text.Plural(len(cpus), "CPU"))
	}
	if len(cpus) > MaxCPUs {
		return fmt.Errorf("latency: %d CPUs given; at most %d are accepted", len(cpus), MaxCPUs)
	}
	seen := map[int]bool{}
	for _, c := range cpus {
		if c < 0 || seen[c] {
			return fmt.Errorf("latency: CPU %d is negative or repeated; want distinct OS CPU numbers", c)
		}
		seen[c] = true
	}
	return nil
}

// MeasurePairs measures pairs (two distinct CPUs of cpus each) into a
// matrix over cpus, NaN for the pairs not measured. When ctx ends or a
// measurement fails it returns the pairs measured so far with the error.
func MeasurePairs(ctx context.Context, cpus []int, pairs []Pair, opts Options) (*Matrix, error) {
	m := newMatrix(cpus)
	mo := opts.Measure
	mo.Context = ctx
	pp := opts.PingPong
	if pp == nil {
		pp = pingPong
	}
	for done, p := range pairs {
		if err := ctx.Err(); err != nil {
			return m, fmt.Errorf("latency: stopped after %d of %d pairs: %w", done, len(pairs), err)
		}
		i, j := m.index(p.A), m.index(p.B)
		if i < 0 || j < 0 || i == j {
			return m, fmt.Errorf("latency: pair %d-%d is not two of the CPUs measured", p.A, p.B)
		}
		v, err := pp(p.A, p.B, mo)
		if err != nil {
			return m, fmt.Errorf("latency: CPUs %d and %d: %w", p.A, p.B, err)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return m, fmt.Errorf("latency: CPUs %d and %d measured %v ns; want a finite non-negative time", p.A, p.B, v)
		}
		m.NS[i][j], m.NS[j][i] = v, v
		if opts.Progress != nil {
			opts.Progress(done+1, len(pairs))
		}
	}
	return m, nil
}

// MaxFileSize bounds the CSV files ReadCSVFile accepts: 64 MiB, far above
// a MaxCPUs matrix written with a few digits per value.
const MaxFileSize = 64 << 20

// ReadCSVFile reads a matrix in ReadCSV's format from a regular file of at
// most MaxFileSize bytes. Devices (/dev/zero) and FIFOs are refused before
// opening, so a wrong path gets an error, not a hang or an unbounded read.
func ReadCSVFile(path string) (*Matrix, error) {
	f, err := capped.File{What: "latency matrix", Hint: "give a CSV file", Limit: MaxFileSize}.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := ReadCSV(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// MinNs returns the smallest measured latency of m (NaN when none is).
func (m *Matrix) MinNs() float64 {
	low := math.NaN()
	for i := range m.NS {
		for j := 0; j < i; j++ {
			if v := m.NS[i][j]; !math.IsNaN(v) && !(v >= low) {
				low = v
			}
		}
	}
	return low
}

// Complete returns nil when every pair of m holds a latency, else an error
// naming the first pair without one.
func (m *Matrix) Complete() error {
	for i := range m.NS {
		for j := 0; j < i; j++ {
			if math.IsNaN(m.NS[i][j]) {
				return fmt.Errorf("latency matrix: CPUs %d and %d have no latency; predicting needs every pair of the %d CPUs", m.CPUs[j], m.CPUs[i], len(m.CPUs))
			}
		}
	}
	return nil
}

// Covers returns an error naming the first CPU of topo the matrix has no
// latency for (it holds CPUs 0..N-1), or nil when it covers them all.
func (m *Matrix) Covers(topo *hwtree.Topology) error {
	costs := m.Costs()
	for _, cpu := range topo.CPUs() {
		if math.IsNaN(costs.Latency(cpu, cpu)) {
			return fmt.Errorf("covers CPUs 0..%d, but the topology has CPU %d", len(m.CPUs)-1, cpu)
		}
	}
	return nil
}

// Costs is a matrix as a cost table for the model (model.Costs) in which a
// CPU with itself - two participants sharing one CPU, oversubscribed -
// costs the matrix's smallest latency instead of nothing: the two still
// hand a cache line over, through the core's own cache.
type Costs struct {
	m    *Matrix
	self float64
}

// Costs returns m as a Costs.
func (m *Matrix) Costs() Costs { return Costs{m: m, self: m.MinNs()} }

// Latency returns the one-way latency between OS CPUs a and b (the
// smallest latency for a == b; NaN for a CPU not in the matrix).
func (c Costs) Latency(a, b int) float64 {
	if a == b {
		if c.m.index(a) < 0 {
			return math.NaN()
		}
		return c.self
	}
	return c.m.Latency(a, b)
}
