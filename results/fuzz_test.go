package results

import (
	"github.com/barriertune/barriertune/cpuset"

	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzParse: the reader never panics, and whatever it accepts is valid
// and survives a write/read round trip. Seeds: real files in testdata.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.json")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"schema":"barriertune.results/v1.9","machine":{"topology_hash":"x","allowed_cpus":"0"},"threads":[{"threads":1,"x":1}]}`))
	f.Add([]byte(`{"schema":"barriertune.results/v1.2","machine":{"topology_hash":"x","allowed_cpus":"0-1","tree":{"cpus":"0-3","levels":[{"type":"Package","sets":["0-1","2-3"]}]}},` +
		`"threads":[{"threads":2,"best":{"algorithm":"mcs","cpus":[0,2]},"measurements":[{"algorithm":"central","cpus":[0,1],"median_ns":5}]},{"threads":3,"best":{"algorithm":"cond","cpus":[0,1,0]}}]}`))
	// Corrupt times: a negative median, a zero one, a number beyond float64.
	for _, ns := range []string{"-5", "0", "1e999", "-0.0"} {
		f.Add([]byte(`{"schema":"barriertune.results/v1.3","machine":{"topology_hash":"x","allowed_cpus":"0-1"},` +
			`"threads":[{"threads":2,"best":{"algorithm":"central","cpus":[0,1],"median_ns":` + ns + `},"measurements":[{"algorithm":"central","cpus":[0,1],"median_ns":` + ns + `,"min_ns":-1}]}]}`))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data, "fuzz")
		if err != nil {
			return
		}
		// Every accepted file selects inside any allowed set without panic,
		// and the CPUs chosen are allowed.
		if sel, err := r.Selector(); err == nil {
			all := sel.CPUs()
			for _, allowed := range []cpuset.Set{all, cpuset.Of(all.First())} {
				for n := 1; n <= min(2*all.Len()+1, 64); n++ {
					s, err := sel.Select(n, allowed)
					if err == nil && (len(s.CPUs) != n || !cpuset.Of(s.CPUs...).SubsetOf(allowed)) {
						t.Fatalf("%d threads in %s: CPUs %v", n, allowed, s.CPUs)
					}
				}
			}
		}
		if err := r.validate(); err != nil {
			t.Fatalf("accepted an invalid file: %v", err)
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("cannot encode an accepted file: %v", err)
		}
		r.Schema = Schema
		back, err := Parse(out, "round trip")
		if err != nil {
			t.Fatalf("round trip refused: %v\n%s", err, out)
		}
		back.Schema = Schema
		if !reflect.DeepEqual(jsonOf(t, back), jsonOf(t, r)) {
			t.Fatalf("round trip differs")
		}
	})
}

func jsonOf(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSeedsParse: the real files of testdata are read.
func TestSeedsParse(t *testing.T) {
	seeds, _ := filepath.Glob("testdata/*.json")
	if len(seeds) < 2 {
		t.Fatalf("want the seed files in testdata, found %v", seeds)
	}
	for _, s := range seeds {
		if _, err := Read(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}
