package export

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func fixture(t *testing.T) *results.File {
	t.Helper()
	f, err := results.Read(filepath.Join("testdata", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestGolden compares every export of the fixed results file with the
// golden files in testdata (go test -update rewrites them).
func TestGolden(t *testing.T) {
	f := fixture(t)
	for _, format := range Formats() {
		for _, threads := range []int{0, 6} {
			name := format
			if threads > 0 {
				name += "-threads" + strconv.Itoa(threads)
			}
			t.Run(name, func(t *testing.T) {
				var b bytes.Buffer
				if err := Write(&b, f, format, Options{Threads: threads}); err != nil {
					t.Fatal(err)
				}
				if format == "c-barrier" {
					// The header's template is the same for every file:
					// the golden holds what the export writes into it.
					parts, err := cBarrierParts(b.String())
					if err != nil {
						t.Fatal(err)
					}
					b.Reset()
					b.WriteString(parts)
				}
				golden := filepath.Join("testdata", name+".golden")
				if *update {
					if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if b.String() != string(want) {
					t.Errorf("%s differs from %s:\n%s", name, golden, b.String())
				}
			})
		}
	}
}

// cBarrierParts returns the parts of a c-barrier export that the export
// writes (the catalog and the machine's table), each under a heading, or
// an error when the rest is not the template's text, unchanged.
func cBarrierParts(out string) (string, error) {
	head, rest, ok := strings.Cut(cBarrierTemplate, catalogMarker+"\n")
	if !ok {
		return "", fmt.Errorf("the template lost its catalog marker")
	}
	mid, tail, ok := strings.Cut(rest, tableMarker)
	if !ok {
		return "", fmt.Errorf("the template lost its table marker")
	}
	if !strings.HasPrefix(out, head) || !strings.HasSuffix(out, tail) || len(out) < len(head)+len(tail) {
		return "", fmt.Errorf("the c-barrier export does not begin and end as its template does")
	}
	catalog, table, ok := strings.Cut(out[len(head):len(out)-len(tail)], mid)
	if !ok {
		return "", fmt.Errorf("the c-barrier export lost the template's text between the catalog and the table")
	}
	return "/* ---- the catalog ---- */\n" + catalog + "/* ---- the machine's table ---- */\n" + table + "\n", nil
}

func TestWriteErrors(t *testing.T) {
	f := fixture(t)
	for _, tc := range []struct {
		format string
		opts   Options
		want   string
	}{
		{"yaml", Options{}, `unknown export format "yaml" (accepted: omp-env, c-header, c-barrier, env, kv, openmpi, mpich)`},
		{"kv", Options{Threads: -1}, "--threads -1 out of range"},
		{"kv", Options{Threads: barriers.MaxParticipants + 1}, "out of range"},
	} {
		err := Write(&bytes.Buffer{}, f, tc.format, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Write(%q, %+v) = %v, want an error containing %q", tc.format, tc.opts, err, tc.want)
		}
	}
	empty := &results.File{}
	if err := Write(&bytes.Buffer{}, empty, "env", Options{Threads: 4}); err == nil {
		t.Error("--threads on a file without winners: no error")
	}
	var b bytes.Buffer
	if err := Write(&b, empty, "kv", Options{}); err != nil || b.Len() != 0 {
		t.Errorf("kv of an empty file = %q, %v; want nothing", b.String(), err)
	}
}

// TestNearestRule checks the exported rule for counts not measured
// against a brute-force nearest search: counts that fit the file's 8 CPUs
// take the nearest count measured on CPUs of their own, more threads the
// count measured oversubscribed (16), round-robin.
func TestNearestRule(t *testing.T) {
	f := fixture(t)
	for n := 1; n <= 40; n++ {
		measured := []int{1, 2, 4, 8}
		if n > 8 {
			measured = []int{16}
		}
		want := measured[0]
		for _, m := range measured {
			if d, bd := abs(m-n), abs(want-n); d < bd || d == bd && m > want {
				want = m
			}
		}
		var b bytes.Buffer
		if err := Write(&b, f, "kv", Options{Threads: n}); err != nil {
			t.Fatal(err)
		}
		if got := kvField(b.String(), "measured_threads"); got != strconv.Itoa(want) {
			t.Errorf("%d threads: measured_threads=%s, want %d", n, got, want)
		}
		// Counts not measured are packed on the first CPUs; more threads
		// than CPUs are not pinned, and run round-robin over them.
		wantCPUs := ""
		if n > 8 {
			for i := 0; i < n; i++ {
				wantCPUs += "," + strconv.Itoa(i%8)
			}
			wantCPUs = wantCPUs[1:]
		} else if n != want {
			for i := 0; i < n; i++ {
				wantCPUs += "," + strconv.Itoa(i)
			}
			wantCPUs = wantCPUs[1:]
		} else {
			wantCPUs = strings.Trim(strings.Join(strings.Fields(fmt.Sprint(f.Lookup(n).Best.CPUs)), ","), "[]")
		}
		if cpus := kvField(b.String(), "cpus"); cpus != wantCPUs {
			t.Errorf("%d threads: cpus %q, want %q", n, cpus, wantCPUs)
		}
	}
}

func kvField(line, key string) string {
	for _, f := range strings.Fields(line) {
		if k, v, ok := strings.Cut(f, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// TestFanInAndTie uses the results field Choice.FanIn: kv and env give
// the fan-in the winner was built with.
func TestFanInAndTie(t *testing.T) {
	f := &results.File{Threads: []results.Threads{{Threads: 8, Best: &results.Choice{
		CPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}, Pinned: true, MedianNs: 300,
		RunnerUp: "mcs", Tie: true, TieRule: "simplest",
		Spec: results.Spec{Algorithm: "all-static-tree", Policy: "spin", FanIn: 8},
	}}}}
	for _, fanIn := range []int{8, 3} {
		f.Threads[0].Best.FanIn = fanIn
		for format, want := range map[string]string{"kv": "fan_in=" + strconv.Itoa(fanIn) + " ", "env": "BARRIERTUNE_FAN_IN=" + strconv.Itoa(fanIn) + "\n"} {
			var b bytes.Buffer
			if err := Write(&b, f, format, Options{Threads: 8}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), want) {
				t.Errorf("fan-in %d: %s lacks %q:\n%s", fanIn, format, want, b.String())
			}
		}
	}
}
