package latency

import (
	"bufio"
	"bytes"
	"math"
	"testing"
)

// FuzzReadMatrix: whatever the bytes, the reader of latency files (CSV or
// latency --json, as ReadFile tells them apart) returns a matrix or an
// error, never panics, and a matrix it returns has one row and column per
// CPU, zero diagonals and symmetric positive latencies where known.
func FuzzReadMatrix(f *testing.F) {
	for _, seed := range []string{
		",,,\n20,,,\n100,100,,\n100,100,20,\n",
		`{"cpus":[0,1],"matrix":[[0,20],[20,0]]}`,
		`{"cpus":[0,1],"matrix":[[null,5],[]]}`,
		`{"cpus":[0,1,2],"matrix":[[0,1,null],[1,0,2],[null,2,0]]}`,
		"", "{", "\x00\x00", "1,2,3\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReader(bytes.NewReader(data))
		var m *Matrix
		var err error
		if isJSON(br) {
			m, err = ReadJSON(br)
		} else {
			m, err = ReadCSV(br)
		}
		if err != nil {
			return
		}
		n := len(m.CPUs)
		if len(m.NS) != n {
			t.Fatalf("%d rows for %d CPUs", len(m.NS), n)
		}
		for i := range n {
			if len(m.NS[i]) != n {
				t.Fatalf("row %d has %d values for %d CPUs", i, len(m.NS[i]), n)
			}
			for j := range n {
				a, b := m.NS[i][j], m.NS[j][i]
				if i == j && !(a == 0 || math.IsNaN(a)) {
					t.Fatalf("diagonal %d: %v", i, a)
				}
				if i != j && !math.IsNaN(a) && (a <= 0 || a != b) {
					t.Fatalf("pair %d,%d: %v against %v", i, j, a, b)
				}
			}
		}
	})
}
