package check

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/results"
)

// TestBestSaysGoOnly: a winner that exists only in Go (the goroutine
// barrier above the CPUs) is marked go_only in the file, so that a C, C++
// or OpenMP reader knows to take os_threads; a winner C can run is marked
// false, and the field is written either way.
func TestBestSaysGoOnly(t *testing.T) {
	rr := []int{0, 1, 0, 1}
	for _, c := range []struct {
		ms   []results.Measurement
		want bool
	}{
		{[]results.Measurement{m("goroutine", rr, 900), m("central", rr, 5000)}, true},
		{[]results.Measurement{m("cond", rr, 900), m("central", rr, 5000)}, true},
		{[]results.Measurement{m("goroutine", rr, 5000), m("central", rr, 900)}, false},
	} {
		b := best(c.ms, nil)
		if b == nil || b.GoOnly != c.want {
			t.Errorf("best of %s and %s: %+v, want go_only %v", c.ms[0].Algorithm, c.ms[1].Algorithm, b, c.want)
			continue
		}
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		if want := `"go_only":` + map[bool]string{true: "true", false: "false"}[c.want]; !strings.Contains(string(data), want) {
			t.Errorf("%s: JSON %s lacks %s", b.Algorithm, data, want)
		}
	}
}
