package export

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/results"
)

// TestFormatsAgreeOnCPUs: env, kv and c-header place every thread of every
// exported count on the same CPU, pinned or not (an unpinned row's CPUs
// were ” in env and kv while the header listed them), with the same
// algorithm, rule and pinning; the header's thread i runs on
// cpus[i % ncpus]. Over the 8-CPU fixture (16 threads unpinned) and a
// 2-CPU check with a count above its CPUs, every count and --threads 1-20.
func TestFormatsAgreeOnCPUs(t *testing.T) {
	for _, file := range []string{filepath.Join("testdata", "results.json"), filepath.Join("..", "..", "..", "results", "testdata", "check-2cpu.json")} {
		f, err := results.Read(file)
		if err != nil {
			t.Fatal(err)
		}
		unpinned := 0
		for _, threads := range []int{0, 1, 2, 3, 5, 6, 16, 20} {
			export := func(format string) string {
				var b bytes.Buffer
				if err := Write(&b, f, format, Options{Threads: threads}); err != nil {
					t.Fatalf("%s --threads %d: %v", format, threads, err)
				}
				return b.String()
			}
			rows := headerRows(t, export("c-header"))
			env := shellVars(export("env"))
			for _, line := range strings.Split(strings.TrimSpace(export("kv")), "\n") {
				kv := map[string]string{}
				for _, p := range strings.Fields(line) {
					k, v, _ := strings.Cut(p, "=")
					kv[k] = v
				}
				n, _ := strconv.Atoi(kv["threads"])
				suffix := "_" + kv["threads"]
				if threads > 0 {
					suffix = ""
				}
				if got := env["BARRIERTUNE_CPUS"+suffix]; got != kv["cpus"] {
					t.Errorf("%s, %d threads: env CPUs %q, kv %q", file, n, got, kv["cpus"])
				}
				if kv["pinned"] == "0" {
					unpinned++
				}
				var row *headerRow
				for i := range rows {
					if rows[i].lo <= n && n <= rows[i].hi {
						row = &rows[i]
					}
				}
				if row == nil {
					t.Fatalf("%s: no c-header row serves %d threads", file, n)
				}
				cpus := strings.Split(kv["cpus"], ",")
				if len(cpus) != n || row.algorithm != kv["algorithm"] || row.rule != kv["rule"] || row.pinned != kv["pinned"] {
					t.Errorf("%s, %d threads: kv %q, c-header row %+v", file, n, line, *row)
					continue
				}
				for i, c := range cpus {
					if want := row.cpus[i%len(row.cpus)]; c != want {
						t.Errorf("%s, %d threads: thread %d on CPU %s in kv and env, %s in the c-header (%v)", file, n, i, c, want, row.cpus)
					}
				}
			}
		}
		if unpinned == 0 {
			t.Errorf("%s: no unpinned count exported: the test proves nothing", file)
		}
	}
}

// headerRow is a row of the c-header export's table, with its CPUs.
type headerRow struct {
	lo, hi                  int
	rule, algorithm, pinned string
	cpus                    []string
}

// headerRows parses the c-header export's arrays and table.
func headerRows(t *testing.T, h string) []headerRow {
	t.Helper()
	arrays := map[string][]string{}
	for _, m := range regexp.MustCompile(`static const int (\w+)\[\d+\] = \{([^}]*)\};`).FindAllStringSubmatch(h, -1) {
		arrays[m[1]] = strings.Split(strings.ReplaceAll(m[2], " ", ""), ",")
	}
	var rows []headerRow
	for _, m := range regexp.MustCompile(`\t\{(\d+), (\d+|INT_MAX), \d+, "([^"]*)", "([^"]*)", \d+, "[^"]*", (\d), (\d+), (\w+), [^}]*\},`).FindAllStringSubmatch(h, -1) {
		lo, _ := strconv.Atoi(m[1])
		hi, err := strconv.Atoi(m[2])
		if err != nil {
			hi = 1 << 30
		}
		cpus, ok := arrays[m[7]]
		if n, _ := strconv.Atoi(m[6]); !ok || len(cpus) != n {
			t.Fatalf("c-header row %q: array %s of %d CPUs, ncpus %s", m[0], m[7], len(cpus), m[6])
		}
		rows = append(rows, headerRow{lo: lo, hi: hi, rule: m[3], algorithm: m[4], pinned: m[5], cpus: cpus})
	}
	if len(rows) == 0 {
		t.Fatalf("no rows in the c-header export:\n%s", h)
	}
	return rows
}

// shellVars are the NAME=VALUE lines of the env export, unquoted.
func shellVars(env string) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(env, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "#") {
			out[k] = strings.Trim(v, "'")
		}
	}
	return out
}
