package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/results"
)

// checkTunedSchema checks doc (decoded with UseNumber) against the
// constraints of Open MPI's published schema for its JSON rules files,
// docs/tuning-apps/tuned_dynamic_file_schema.json in open-mpi/ompi
// (commit e973840e2baddec29c200cf1850ace675eee5332, unchanged on v6.0.x
// at bb1c85d203cdb7162f0cd92f71f7298048cd9581), written out here as
// checks (the schema file itself is not copied):
//   - top level: an object; required rule_file_version (a number), module
//     (a string), collectives (an object); also allowed: $schema (a
//     string); nothing else.
//   - collectives: property names matching the schema's patterns (the
//     collective names, lower case); each an array of communicator rules.
//   - communicator rule: an object; required rules; allowed
//     comm_size_min and comm_size_max (an integer or "inf", "INF",
//     "Inf"), comm_rank_distribution (one of "any", "one-per-node",
//     "single-node"), rules (an array of message-size rules).
//   - message-size rule: an object; required alg (a string or an
//     integer); allowed msg_size_min and msg_size_max (an integer or
//     inf), reqs and faninout (integers).
func checkTunedSchema(doc any) []string {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	isInt := func(v any) bool {
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := strconv.ParseInt(string(n), 10, 64)
		return err == nil
	}
	intOrInf := func(v any) bool {
		s, ok := v.(string)
		return isInt(v) || ok && (s == "inf" || s == "INF" || s == "Inf")
	}
	object := func(where string, v any, required []string, allowed map[string]func(any) bool) map[string]any {
		m, ok := v.(map[string]any)
		if !ok {
			bad("%s: not an object", where)
			return nil
		}
		for _, r := range required {
			if _, ok := m[r]; !ok {
				bad("%s: required %q missing", where, r)
			}
		}
		for k, x := range m {
			check, ok := allowed[k]
			if !ok {
				bad("%s: %q is not allowed (additionalProperties false)", where, k)
			} else if check != nil && !check(x) {
				bad("%s: %q has the wrong type: %v", where, k, x)
			}
		}
		return m
	}
	isString := func(v any) bool { _, ok := v.(string); return ok }
	isArray := func(v any) bool { _, ok := v.([]any); return ok }
	isObject := func(v any) bool { _, ok := v.(map[string]any); return ok }
	top := object("top level", doc, []string{"rule_file_version", "module", "collectives"}, map[string]func(any) bool{
		"rule_file_version": func(v any) bool { _, ok := v.(json.Number); return ok },
		"module":            isString,
		"$schema":           isString,
		"collectives":       isObject,
	})
	colls, _ := top["collectives"].(map[string]any)
	names := regexp.MustCompile(`^(allgather|allreduce|alltoall|alltoallv|alltoallw|barrier|bcast|exscan|gather|gatherv|reduce|reducescatter|reducescatterblock|scan|scatter|scatterv|neighbor_allgather|neighbor_allgatherv|neighbor_alltoall|neighbor_alltoallv|neighbor_alltoallw)$`)
	for name, rules := range colls {
		if !names.MatchString(name) {
			bad("collectives: %q matches no collective pattern", name)
		}
		crs, ok := rules.([]any)
		if !ok {
			bad("collectives.%s: not an array", name)
			continue
		}
		for i, cr := range crs {
			where := fmt.Sprintf("collectives.%s[%d]", name, i)
			m := object(where, cr, []string{"rules"}, map[string]func(any) bool{
				"comm_size_min": intOrInf, "comm_size_max": intOrInf, "rules": isArray,
				"comm_rank_distribution": func(v any) bool { return slices.Contains([]any{"any", "one-per-node", "single-node"}, v) },
			})
			msgs, _ := m["rules"].([]any)
			for j, mr := range msgs {
				object(fmt.Sprintf("%s.rules[%d]", where, j), mr, []string{"alg"}, map[string]func(any) bool{
					"msg_size_min": intOrInf, "msg_size_max": intOrInf, "reqs": isInt, "faninout": isInt,
					"alg": func(v any) bool { return isString(v) || isInt(v) },
				})
			}
		}
	}
	return errs
}

// jsonAlgorithm is the barrier algorithm Open MPI 6's reader takes for a
// single-node communicator of n ranks from a JSON rules file (the first
// matching communicator rule, its first message-size rule; 0 when none
// matches: the fixed decision).
func jsonAlgorithm(t *testing.T, doc map[string]any, n int) int {
	t.Helper()
	colls := doc["collectives"].(map[string]any)
	crs, _ := colls["barrier"].([]any)
	bound := func(v any, inf int) int {
		if s, ok := v.(string); ok && strings.EqualFold(s, "inf") {
			return inf
		}
		x, err := strconv.Atoi(string(v.(json.Number)))
		if err != nil {
			t.Fatalf("bound %v", v)
		}
		return x
	}
	for _, cr := range crs {
		m := cr.(map[string]any)
		if d, ok := m["comm_rank_distribution"]; ok && d != "single-node" && d != "any" {
			continue
		}
		lo, hi := 0, math.MaxInt32
		if v, ok := m["comm_size_min"]; ok {
			lo = bound(v, math.MaxInt32)
		}
		if v, ok := m["comm_size_max"]; ok {
			hi = bound(v, math.MaxInt32)
		}
		if lo <= n && n <= hi {
			rules := m["rules"].([]any)
			a, err := strconv.Atoi(string(rules[0].(map[string]any)["alg"].(json.Number)))
			if err != nil {
				t.Fatalf("alg %v", rules[0])
			}
			return a
		}
	}
	return 0
}

// classicAlgorithm is the barrier algorithm Open MPI 4.1 and 5.0 take for
// n ranks from a classic rules file: the last entry whose size is at most
// n (0 when none is).
func classicAlgorithm(t *testing.T, classic string, n int) int {
	t.Helper()
	var nums []int
	for _, l := range strings.Split(classic, "\n") {
		l, _, _ = strings.Cut(l, "#")
		for _, f := range strings.Fields(l) {
			x, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("classic rules: %q", f)
			}
			nums = append(nums, x)
		}
	}
	if len(nums) < 3 || nums[0] != 1 || nums[1] != 6 || len(nums) != 3+6*nums[2] {
		t.Fatalf("classic rules layout: %v", nums)
	}
	alg := 0
	for i := 0; i < nums[2]; i++ {
		e := nums[3+6*i:]
		if e[0] <= n {
			alg = e[3]
		}
	}
	return alg
}

// openMPIWith is the fixture with Open MPI's counts set to counts (rank
// count: algorithm, 0 for the defaults kept) measured with version.
func openMPIWith(t *testing.T, version string, counts map[int]int) *results.File {
	f := mpiFixture(t)
	im := &f.MPI.Implementations[0]
	im.Version, im.Counts = version, nil
	var ns []int
	for n := range counts {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	for _, n := range ns {
		c := results.MPICount{Ranks: n, DefaultNs: 1000, Why: "no setting was faster"}
		if a := counts[n]; a > 0 {
			c = results.MPICount{Ranks: n, DefaultNs: 1000, Best: fmt.Sprintf("coll_tuned_barrier_algorithm=%d", a), BestNs: 800, MarginPct: 25, Test: "p"}
		}
		im.Counts = append(im.Counts, c)
	}
	return f
}

// exportOpenMPI writes the openmpi export of f with rules format
// format and returns the parameter file, the classic and the JSON rules.
func exportOpenMPI(t *testing.T, f *results.File, format string) (param, classic, jsonRules string, err error) {
	t.Helper()
	dir := t.TempDir()
	var b, c, j bytes.Buffer
	err = Write(&b, f, "openmpi", Options{RulesFormat: format,
		RulesPath: filepath.Join(dir, "b.conf") + MPIRulesSuffix, Rules: &c,
		JSONRulesPath: filepath.Join(dir, "b.conf") + MPIJSONRulesSuffix, JSONRules: &j})
	return b.String(), c.String(), j.String(), err
}

// named is the rules file the parameter file names.
func named(param string) string {
	for _, l := range strings.Split(param, "\n") {
		if v, ok := strings.CutPrefix(l, "coll_tuned_dynamic_rules_filename = "); ok {
			return v
		}
	}
	return ""
}

// decode parses a JSON rules file with numbers kept as written.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var doc map[string]any
	if err := d.Decode(&doc); err != nil {
		t.Fatalf("the JSON rules do not parse: %v\n%s", err, s)
	}
	return doc
}

// The JSON rules: valid by the published schema, rule_file_version 3,
// single-node rules, and the same algorithm for every communicator size
// as the classic file gives Open MPI 4.1 and 5.0: the measured counts'
// algorithms, Open MPI's own decision (0) everywhere else. Edge cases:
// one count, counts side by side, the largest count a file may hold, a
// count of 1.
func TestOpenMPIJSONRules(t *testing.T) {
	cases := []map[int]int{
		{2: 5, 4: 0, 8: 1},
		{8: 1},
		{2: 5, 3: 4, 4: 6},
		{1: 1, 1 << 20: 3},
		{2: 0, 1<<20 - 1: 6},
	}
	for _, counts := range cases {
		_, classic, _, err := exportOpenMPI(t, openMPIWith(t, "Open MPI v5.0.3", counts), "classic")
		if err != nil {
			t.Fatalf("%v classic: %v", counts, err)
		}
		param, c6, j, err := exportOpenMPI(t, openMPIWith(t, "Open MPI v6.0.0, package: Open MPI", counts), "auto")
		if err != nil {
			t.Fatalf("%v json: %v", counts, err)
		}
		if c6 != "" || !strings.HasSuffix(named(param), MPIJSONRulesSuffix) {
			t.Errorf("%v on Open MPI 6: the parameter file names %q, classic written: %v", counts, named(param), c6 != "")
		}
		doc := decode(t, j)
		if errs := checkTunedSchema(doc); len(errs) > 0 {
			t.Errorf("%v: the JSON rules break the schema: %s\n%s", counts, strings.Join(errs, "; "), j)
		}
		if doc["rule_file_version"] != json.Number("3") || doc["module"] != "tuned" {
			t.Errorf("%v: version %v module %v", counts, doc["rule_file_version"], doc["module"])
		}
		if !strings.Contains(j, `"comm_rank_distribution": "single-node"`) || strings.Contains(j, `"any"`) {
			t.Errorf("%v: rules not for single-node communicators:\n%s", counts, j)
		}
		probe := []int{1, 2, 3, 4, 5, 7, 8, 9, 10, 64, 1<<20 - 2, 1<<20 - 1, 1 << 20, 1<<20 + 1, math.MaxInt32}
		for n := range counts {
			probe = append(probe, n-1, n, n+1)
		}
		for _, n := range probe {
			if n < 1 {
				continue
			}
			want := classicAlgorithm(t, classic, n)
			if got := jsonAlgorithm(t, doc, n); got != want {
				t.Errorf("%v at %d ranks: JSON algorithm %d, classic %d", counts, n, got, want)
			}
			if a, ok := counts[n]; ok && want != a {
				t.Errorf("%v at %d ranks: algorithm %d, measured %d", counts, n, want, a)
			}
		}
	}
}

// The checker refuses what the schema refuses (so a pass means something).
func TestTunedSchemaChecker(t *testing.T) {
	for _, bad := range []string{
		`{"module": "tuned", "collectives": {}}`,
		`{"rule_file_version": 3, "module": "tuned", "collectives": {}, "comment": "x"}`,
		`{"rule_file_version": 3, "module": "tuned", "collectives": {"Barrier": []}}`,
		`{"rule_file_version": 3, "module": "tuned", "collectives": {"barrier": [{"comm_size_min": 2}]}}`,
		`{"rule_file_version": 3, "module": "tuned", "collectives": {"barrier": [{"comm_size_max": "infinity", "rules": []}]}}`,
		`{"rule_file_version": 3, "module": "tuned", "collectives": {"barrier": [{"comm_rank_distribution": "node", "rules": []}]}}`,
		`{"rule_file_version": 3, "module": "tuned", "collectives": {"barrier": [{"rules": [{"msg_size_min": 0}]}]}}`,
		`{"rule_file_version": 3, "module": "tuned", "collectives": {"barrier": [{"rules": [{"alg": 1.5}]}]}}`,
		`{"rule_file_version": "3", "module": "tuned", "collectives": {}}`,
	} {
		if errs := checkTunedSchema(decode(t, bad)); len(errs) == 0 {
			t.Errorf("the checker passed %s", bad)
		}
	}
	good := `{"$schema": "s.json", "rule_file_version": 3, "module": "tuned", "collectives": {"allreduce": [{"comm_size_min": 64, "comm_size_max": 128, "rules": [{"msg_size_min": 512, "msg_size_max": "inf", "alg": "recursive_doubling", "reqs": 8}]}]}}`
	if errs := checkTunedSchema(decode(t, good)); len(errs) > 0 {
		t.Errorf("the checker refused the documentation's example: %v", errs)
	}
}

// --rules: which files each format writes for each version, and what it
// refuses; nothing is written where no count chose an algorithm.
func TestOpenMPIRulesFormats(t *testing.T) {
	v4, v6 := "Open MPI v4.1.4, package: Debian", "Open MPI v6.0.0, package: Open MPI"
	counts := map[int]int{2: 5, 8: 1}
	for _, c := range []struct {
		version, format string
		classic, json   bool
		names           string // suffix of the file named, "" for an error
	}{
		{v4, "auto", true, false, MPIRulesSuffix},
		{v4, "", true, false, MPIRulesSuffix},
		{v4, "classic", true, false, MPIRulesSuffix},
		{v4, "both", true, true, MPIRulesSuffix},
		{v4, "json", false, false, ""},
		{v6, "auto", false, true, MPIJSONRulesSuffix},
		{v6, "json", false, true, MPIJSONRulesSuffix},
		{v6, "classic", false, false, ""},
		{v6, "both", false, false, ""},
		{"", "json", false, true, MPIJSONRulesSuffix},
		{v4, "xml", false, false, ""},
	} {
		param, classic, j, err := exportOpenMPI(t, openMPIWith(t, c.version, counts), c.format)
		if c.names == "" {
			if err == nil {
				t.Errorf("%s --rules %s: no error", c.version, c.format)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s --rules %s: %v", c.version, c.format, err)
			continue
		}
		if (classic != "") != c.classic || (j != "") != c.json || !strings.HasSuffix(named(param), c.names) {
			t.Errorf("%s --rules %s: classic %v, json %v, names %q", c.version, c.format, classic != "", j != "", named(param))
		}
		if c.classic && c.json && !strings.Contains(param, MPIJSONRulesSuffix) {
			t.Errorf("both: the parameter file does not say where the JSON file is:\n%s", param)
		}
	}
	// No choice at all, or every count kept its defaults: nothing set,
	// no rules file, whatever the format.
	for _, f := range []*results.File{openMPIWith(t, v6, map[int]int{2: 0, 4: 0}), openMPIWith(t, v6, nil)} {
		for _, format := range []string{"auto", "json", "both"} {
			param, classic, j, err := exportOpenMPI(t, f, format)
			if err != nil || classic != "" || j != "" || named(param) != "" || !strings.Contains(param, "nothing is set") {
				t.Errorf("no choice, --rules %s: %v, classic %q, json %q\n%s", format, err, classic, j, param)
			}
		}
	}
	if _, _, _, err := exportOpenMPI(t, openMPIWith(t, v6, nil), "xml"); err == nil {
		t.Error("--rules xml with nothing to write: no error")
	}
}
