package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/results"
)

// TestShowPrintsNoControlCharacters: a results file whose every free-text
// string (at any depth: the machine, cuts, the OpenMP and MPI records'
// versions, reasons and failures) carries an escape sequence, a carriage
// return, a bell and a backspace is shown, as a table and for one count,
// with none of them reaching the terminal: only newlines separate lines.
// --json keeps the strings as they are (JSON escapes them).
func TestShowPrintsNoControlCharacters(t *testing.T) {
	f := withRuntimes(t)
	f.Cuts = []string{"cut"}
	f.OpenMP.HostMoved = "moved"
	f.MPI.Implementations[0].Counts[0].Failed = []string{"coll_tuned_barrier_algorithm=2: crashed"}
	const hostile = "\x1b[2J\x1b]0;title\x07\r\b"
	var taint func(v reflect.Value, name string)
	taint = func(v reflect.Value, name string) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				taint(v.Elem(), name)
			}
		case reflect.Slice:
			for i := range v.Len() {
				taint(v.Index(i), name)
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					taint(v.Field(i), v.Type().Field(i).Name)
				}
			}
		case reflect.String:
			// Free text only: names, settings and CPU lists are
			// validated when the file is read.
			switch name {
			case "Why", "Version", "NotMeasured", "NotDecided", "Root", "HostMoved", "Loop", "Share", "Test", "CPUModel", "Model":
				if v.String() != "" && v.CanSet() {
					v.SetString(v.String() + hostile)
				}
			}
			if v.CanSet() && (strings.HasPrefix(v.String(), "cut") || strings.Contains(v.String(), ": crashed")) {
				v.SetString(v.String() + hostile)
			}
		}
	}
	taint(reflect.ValueOf(f), "")
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := results.Parse(data, path); err != nil {
		t.Fatalf("the tainted file does not read: %v", err)
	}
	for _, args := range [][]string{{"show", path}, {"show", "--threads", "2", path}} {
		out, err := run(t, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if args[1] != "--threads" && !strings.Contains(out, "?[2J") {
			t.Errorf("%v: no tainted string was shown: the test shows nothing", args)
		}
		for _, c := range out {
			if (c < ' ' && c != '\n' && c != '\t') || c == 0x7f {
				t.Fatalf("%v: control character %q reaches the terminal:\n%s", args, c, out)
			}
		}
	}
	out, err := run(t, "show", "--json", path)
	if err != nil || !strings.Contains(out, `\u001b[2J`) {
		t.Errorf("show --json: %v; want the strings kept, escaped by JSON", err)
	}
}
