package results

import (
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// timeFields visits every number under a key ending in "_ns" in the
// decoded JSON v, with a function that replaces it.
func timeFields(v any, visit func(key string, set func(any))) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) { // one order every time
			e := x[k]
			if _, ok := e.(float64); ok && strings.HasSuffix(k, "_ns") {
				visit(k, func(n any) { x[k] = n })
				continue
			}
			timeFields(e, visit)
		}
	case []any:
		for _, e := range x {
			timeFields(e, visit)
		}
	}
}

// TestCorruptTimesRefused: every time in a results file (every field
// named *_ns, at every depth) set to a negative value makes the file
// corrupt, and a median set to 0 too; the error names the field. Each
// testdata file is tried with each of its time fields in turn.
func TestCorruptTimesRefused(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json")
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	tried := map[string]bool{}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(data, path); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var probe any
		if err := json.Unmarshal(data, &probe); err != nil {
			t.Fatal(err)
		}
		n := 0
		timeFields(probe, func(string, func(any)) { n++ })
		for i := 0; i < n; i++ {
			for _, bad := range []float64{-5, 0} {
				var doc any
				_ = json.Unmarshal(data, &doc)
				j, key := 0, ""
				timeFields(doc, func(k string, set func(any)) {
					if j == i {
						key = k
						if bad == 0 && k != "median_ns" && k != "worst_median_ns" {
							key = "" // zero is a legal min, interval or optional time
						} else {
							set(bad)
						}
					}
					j++
				})
				if key == "" {
					continue
				}
				tried[key] = true
				out, _ := json.Marshal(doc)
				_, err := Parse(out, "corrupt.json")
				if err == nil || !strings.Contains(err.Error(), key) {
					t.Errorf("%s: %s set to %g: error %v, want a refusal naming %s", path, key, bad, err, key)
				}
			}
		}
	}
	for _, k := range []string{"median_ns", "min_ns", "max_ns", "ci_low_ns", "ci_high_ns", "worst_median_ns"} {
		if !tried[k] {
			t.Errorf("no testdata file has a %s to corrupt", k)
		}
	}
}

// TestNonFiniteTimesRefused: JSON cannot spell NaN, but a number too large
// for a float64 and a value set in memory can be non-finite; neither
// passes.
func TestNonFiniteTimesRefused(t *testing.T) {
	data, err := os.ReadFile("testdata/check-2cpu.json")
	if err != nil {
		t.Fatal(err)
	}
	huge := regexp.MustCompile(`"median_ns": [0-9.]+`).ReplaceAllString(string(data), `"median_ns": 1e999`)
	if huge == string(data) {
		t.Fatal("testdata changed: no median_ns")
	}
	if _, err := Parse([]byte(huge), "huge.json"); err == nil || !strings.Contains(err.Error(), "median_ns") {
		t.Errorf("median_ns 1e999: %v", err)
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		f, err := Parse(data, "ok.json")
		if err != nil {
			t.Fatal(err)
		}
		f.Threads[0].Measurements[0].CIHighNs = v
		if err := f.validate(); err == nil || !strings.Contains(err.Error(), "ci_high_ns") {
			t.Errorf("ci_high_ns %g: %v", v, err)
		}
	}
}

// TestLongStringsRefused: a string longer than maxString anywhere in a
// file (a runtime's version, a count's reason, a failure) refuses the
// file, naming the field; one of maxString bytes reads.
func TestLongStringsRefused(t *testing.T) {
	long := strings.Repeat("x", maxString+1)
	for _, set := range []struct {
		field string
		set   func(f *File)
	}{
		{"tool.version", func(f *File) { f.Tool.Version = long }},
		{"openmp.runtimes[0].version", func(f *File) {
			f.OpenMP = &OpenMP{Runtimes: []OpenMPRuntime{{Name: "libomp", Compiler: "clang", Version: long}}}
		}},
		{"mpi.implementations[0].counts[0].failed[0]", func(f *File) {
			f.MPI = &MPI{Implementations: []MPIImplementation{{Name: "mpich", Counts: []MPICount{{Ranks: 2, Failed: []string{long}}}}}}
		}},
	} {
		f := sample(t)
		set.set(f)
		err := checkTimes(f)
		if err == nil || !strings.Contains(err.Error(), set.field) || !strings.Contains(err.Error(), "bytes long") {
			t.Errorf("%s of %d bytes: %v", set.field, len(long), err)
		}
	}
	f := sample(t)
	f.Tool.Version = long[:maxString]
	if err := checkTimes(f); err != nil {
		t.Errorf("a version of %d bytes: %v", maxString, err)
	}
}
