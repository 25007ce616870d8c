package latency

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/barriertune/barriertune/internal/capped"
)

// WriteCSV writes m in ReadCSV's format (docs/model.md, "Latency matrix
// files"): one row of N fields per CPU number from 0 to the largest of
// m.CPUs (N of them), row i holding the one-way ns to CPUs 0..i-1 in its
// first i fields, empty where the pair was not measured or a CPU is not in
// m, so that ReadCSV gives every measured
// pair back under the same CPU numbers.
func WriteCSV(w io.Writer, m *Matrix) error {
	top := -1
	for _, c := range m.CPUs {
		if c < 0 || c >= MaxCPUs {
			return fmt.Errorf("latency CSV: CPU %d outside 0..%d", c, MaxCPUs-1)
		}
		top = max(top, c)
	}
	if top < 1 {
		return fmt.Errorf("latency CSV: a matrix needs at least 2 CPUs")
	}
	bw := bufio.NewWriter(w)
	for i := 0; i <= top; i++ {
		// N fields a row, as in ../shared/latency: an all-empty row is
		// still a record (encoding/csv skips blank lines).
		for j := 0; j <= top; j++ {
			if j > 0 {
				bw.WriteByte(',')
			}
			if v := m.Latency(i, j); j < i && !math.IsNaN(v) {
				bw.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
			}
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// jsonMatrix is the part of `barriertune latency --json` a matrix is read
// from: the CPUs and the matrix, null where a pair was not measured.
type jsonMatrix struct {
	CPUs   []int        `json:"cpus"`
	Matrix [][]*float64 `json:"matrix"`
}

// ReadJSON reads the object `barriertune latency --json` prints: its cpus
// (each once, 0..MaxCPUs-1) and its matrix (N rows of N values, symmetric,
// positive, null where not measured and on the diagonal or 0 there).
func ReadJSON(r io.Reader) (*Matrix, error) {
	var in jsonMatrix
	dec := json.NewDecoder(r)
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("latency JSON: %w", err)
	}
	n := len(in.CPUs)
	if n < 2 || n > MaxCPUs {
		return nil, fmt.Errorf("latency JSON: %d CPUs; want 2 to %d", n, MaxCPUs)
	}
	seen := map[int]bool{}
	for _, c := range in.CPUs {
		if c < 0 || c >= MaxCPUs || seen[c] {
			return nil, fmt.Errorf("latency JSON: CPU %d is out of range 0..%d or given twice", c, MaxCPUs-1)
		}
		seen[c] = true
	}
	if len(in.Matrix) != n {
		return nil, fmt.Errorf("latency JSON: %d matrix rows for %d CPUs", len(in.Matrix), n)
	}
	for i, row := range in.Matrix { // every row's length before the symmetry test reads across rows
		if len(row) != n {
			return nil, fmt.Errorf("latency JSON: row %d has %d values for %d CPUs", i, len(row), n)
		}
	}
	m := newMatrix(in.CPUs)
	for i, row := range in.Matrix {
		for j, v := range row {
			switch {
			case v == nil: // not measured (a value the other way is caught there)
			case i == j:
				if *v != 0 {
					return nil, fmt.Errorf("latency JSON: CPU %d with itself is %v; want 0 or null", in.CPUs[i], *v)
				}
			case math.IsNaN(*v) || math.IsInf(*v, 0) || *v <= 0:
				return nil, fmt.Errorf("latency JSON: CPUs %d and %d: %v; want a positive number of nanoseconds", in.CPUs[i], in.CPUs[j], *v)
			case in.Matrix[j][i] == nil || *in.Matrix[j][i] != *v:
				return nil, fmt.Errorf("latency JSON: CPUs %d and %d: the matrix is not symmetric", in.CPUs[i], in.CPUs[j])
			default:
				m.NS[i][j] = *v
			}
		}
	}
	return m, nil
}

// ReadFile reads a matrix from a regular file of at most MaxFileSize
// bytes: `barriertune latency --json` output when its first non-blank byte
// is '{', else ReadCSV's format. Devices and FIFOs are refused before
// opening.
func ReadFile(path string) (*Matrix, error) {
	f, err := capped.File{What: "latency matrix", Hint: "give a CSV or latency --json file", Limit: MaxFileSize}.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var m *Matrix
	if isJSON(br) {
		m, err = ReadJSON(br)
	} else {
		m, err = ReadCSV(br)
	}
	if err != nil {
		return nil, &FormatError{Path: path, Err: err}
	}
	return m, nil
}

// isJSON peeks at the first non-blank byte.
func isJSON(br *bufio.Reader) bool {
	for n := 1; n <= 4096; n++ {
		b, err := br.Peek(n)
		if len(b) < n {
			return false
		}
		if c := b[n-1]; !bytes.ContainsRune([]byte(" \t\r\n"), rune(c)) {
			return c == '{'
		}
		if err != nil {
			return false
		}
	}
	return false
}
