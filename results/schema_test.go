package results_test

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/results"
)

type schemaObject struct {
	Required   []string                   `json:"required"`
	Properties map[string]json.RawMessage `json:"properties"`
	Enum       []string                   `json:"enum"`
}

// jsonFields lists a struct type's JSON field names; required ones lack
// omitempty.
func jsonFields(t reflect.Type) (all, required []string) {
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.Anonymous && f.Tag.Get("json") == "" { // embedded: its fields are the object's
			a, r := jsonFields(f.Type)
			all, required = append(all, a...), append(required, r...)
			continue
		}
		tag := t.Field(i).Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || name == "" {
			continue
		}
		all = append(all, name)
		if !strings.Contains(opts, "omitempty") {
			required = append(required, name)
		}
	}
	sort.Strings(all)
	sort.Strings(required)
	return
}

// alwaysWritten are the fields (TYPE.json_name) written in every file of
// their minor version and later, without omitempty, that older files lack.
var alwaysWritten = map[string]bool{"File.rounds_done": true, "Choice.go_only": true}

// TestSchemaMatchesTypes keeps docs/results.schema.json true to the Go
// types: for every object, its properties are the struct's JSON fields and
// its required list the ones without omitempty.
func TestSchemaMatchesTypes(t *testing.T) {
	data, err := os.ReadFile("../docs/results.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var root struct {
		schemaObject
		Defs map[string]schemaObject `json:"$defs"`
	}
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	prop := func(o schemaObject, name string) schemaObject {
		var p schemaObject
		if err := json.Unmarshal(o.Properties[name], &p); err != nil {
			t.Fatalf("property %s: %v", name, err)
		}
		return p
	}
	var items struct {
		Items schemaObject `json:"items"`
	}
	_ = json.Unmarshal(root.Properties["threads"], &items)
	var floorItems struct {
		Items schemaObject `json:"items"`
	}
	_ = json.Unmarshal(root.Properties["floor"], &floorItems)
	var latencyItems struct {
		Items schemaObject `json:"items"`
	}
	_ = json.Unmarshal(root.Properties["latency"], &latencyItems)
	machine := prop(root.schemaObject, "machine")
	for _, c := range []struct {
		name string
		obj  schemaObject
		typ  reflect.Type
	}{
		{"File", root.schemaObject, reflect.TypeOf(results.File{})},
		{"Machine", machine, reflect.TypeOf(results.Machine{})},
		{"CPU", prop(machine, "cpu"), reflect.TypeOf(results.Machine{}.CPU)},
		{"Tool", prop(root.schemaObject, "tool"), reflect.TypeOf(results.Tool{})},
		{"Floor", floorItems.Items, reflect.TypeOf(results.Floor{})},
		{"LevelLatency", latencyItems.Items, reflect.TypeOf(results.LevelLatency{})},
		{"Threads", items.Items, reflect.TypeOf(results.Threads{})},
		{"Choice", root.Defs["choice"], reflect.TypeOf(results.Choice{})},
		{"Robust", root.Defs["robust"], reflect.TypeOf(results.Robust{})},
		{"Measurement", root.Defs["measurement"], reflect.TypeOf(results.Measurement{})},
		{"HostState", root.Defs["host_state"], reflect.TypeOf(results.HostState{})},
		{"Repeat", root.Defs["repeat"], reflect.TypeOf(results.Repeat{})},
		{"OpenMP", root.Defs["openmp"], reflect.TypeOf(results.OpenMP{})},
		{"OpenMPRuntime", root.Defs["openmp_runtime"], reflect.TypeOf(results.OpenMPRuntime{})},
		{"OpenMPCount", root.Defs["openmp_count"], reflect.TypeOf(results.OpenMPCount{})},
		{"MPI", root.Defs["mpi"], reflect.TypeOf(results.MPI{})},
		{"MPIImplementation", root.Defs["mpi_implementation"], reflect.TypeOf(results.MPIImplementation{})},
		{"MPICount", root.Defs["mpi_count"], reflect.TypeOf(results.MPICount{})},
	} {
		all, required := jsonFields(c.typ)
		// Fields always written from a minor version on, absent from the
		// files of older ones: optional in the schema, which says so.
		required = slices.DeleteFunc(required, func(f string) bool {
			if !alwaysWritten[c.name+"."+f] {
				return false
			}
			if !strings.Contains(string(c.obj.Properties[f]), "always written from v1.") {
				t.Errorf("%s.%s: the schema does not say from which version it is always written", c.name, f)
			}
			return true
		})
		var props []string
		for k := range c.obj.Properties {
			props = append(props, k)
		}
		sort.Strings(props)
		req := slices.Clone(c.obj.Required)
		sort.Strings(req)
		if !reflect.DeepEqual(props, all) || !reflect.DeepEqual(req, required) {
			t.Errorf("%s: schema properties %v required %v; Go fields %v required %v", c.name, props, req, all, required)
		}
	}
	enum := slices.Clone(root.Defs["algorithm"].Enum)
	var names []string
	for _, a := range barriers.Algorithms() {
		names = append(names, a.Name)
	}
	sort.Strings(enum)
	sort.Strings(names)
	if !reflect.DeepEqual(enum, names) {
		t.Errorf("schema algorithms %v, catalog %v", enum, names)
	}
}

// TestSchemaTimesPositive: the schema refuses what Parse refuses: every
// *_ns number at least 0, and a median above 0 (exclusiveMinimum).
func TestSchemaTimesPositive(t *testing.T) {
	data, err := os.ReadFile("../docs/results.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if p, ok := e.(map[string]any); ok && strings.HasSuffix(k, "_ns") && p["type"] == "number" {
					n++
					bound, want := "minimum", 0.0
					if k == "median_ns" || k == "worst_median_ns" {
						bound = "exclusiveMinimum"
					}
					if got, ok := p[bound].(float64); !ok || got != want {
						t.Errorf("schema property %s: %s is %v, want %v", k, bound, p[bound], want)
					}
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	if n < 20 {
		t.Errorf("only %d time properties found", n)
	}
}
