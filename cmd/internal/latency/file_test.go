package latency

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteCSVRoundTrip: a matrix written with WriteCSV reads back with
// ReadCSV and ReadFile under the same CPU numbers, the same values, and
// the same unmeasured pairs (a subset of CPUs, one pair missing).
func TestWriteCSVRoundTrip(t *testing.T) {
	m := newMatrix([]int{0, 2, 3})
	set := func(a, b int, v float64) { m.NS[m.index(a)][m.index(b)], m.NS[m.index(b)][m.index(a)] = v, v }
	set(0, 2, 41.5)
	set(2, 3, 27)
	var b bytes.Buffer
	if err := WriteCSV(&b, m); err != nil {
		t.Fatal(err)
	}
	back, err := ReadCSV(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	for _, a := range []int{0, 1, 2, 3} {
		for _, c := range []int{0, 1, 2, 3} {
			got, want := back.Latency(a, c), m.Latency(a, c)
			if !(got == want || math.IsNaN(got) && math.IsNaN(want)) {
				t.Errorf("CPUs %d,%d: read back %v, wrote %v\n%s", a, c, got, want, b.String())
			}
		}
	}
	path := filepath.Join(t.TempDir(), "m.csv")
	os.WriteFile(path, b.Bytes(), 0o644)
	if f, err := ReadFile(path); err != nil || f.Latency(2, 3) != 27 {
		t.Errorf("ReadFile(csv): %v", err)
	}
}

// TestReadJSON: the object `latency --json` prints reads back; a broken
// one is refused with the reason.
func TestReadJSON(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	good := jsonMatrix{CPUs: []int{0, 4}, Matrix: [][]*float64{{nil, v(50)}, {v(50), nil}}}
	data, _ := json.Marshal(map[string]any{"cpus": good.CPUs, "matrix": good.Matrix, "levels": []any{}})
	path := filepath.Join(t.TempDir(), "m.json")
	os.WriteFile(path, append([]byte("\n  "), data...), 0o644)
	m, err := ReadFile(path)
	if err != nil || m.Latency(0, 4) != 50 || m.Latency(4, 0) != 50 || !math.IsNaN(m.Latency(0, 1)) {
		t.Fatalf("ReadFile(json) = %+v, %v", m, err)
	}
	for _, c := range []struct{ in, want string }{
		{`{"cpus":[0],"matrix":[[null]]}`, "1 CPUs"},
		{`{"cpus":[0,0],"matrix":[[null,1],[1,null]]}`, "given twice"},
		{`{"cpus":[0,1],"matrix":[[null,1]]}`, "1 matrix rows"},
		{`{"cpus":[0,1],"matrix":[[null,1],[2,null]]}`, "not symmetric"},
		{`{"cpus":[0,1],"matrix":[[null,-1],[-1,null]]}`, "positive"},
		{`{"cpus":[0,1],"matrix":[[null,1],[null,null]]}`, "not symmetric"},
		{`{"cpus":[0,1],"matrix":[[null,1],[1]]}`, "row 1 has 1 values"},
	} {
		if _, err := ReadJSON(strings.NewReader(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
}
