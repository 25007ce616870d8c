package hwtree

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fuzz targets check that no input makes a reader panic, hang or
// allocate without bound, and that what a reader accepts is a
// valid tree. CI runs each briefly: go test ./hwtree -run '^$' -fuzz '^FuzzX$' -fuzztime 10s.

var syntheticSeeds = []string{
	"pack:2 l3:2 core:4 pu:2", "pack:2 l3:1(size=33554432) core:2 pu:2",
	"numa:2 pack:1 core:2 pu:2", "group:2 group:2 core:2", "[x]", "core:4611686018427387904",
	"l3:1(size=99999999999999999999G) core:2", "pack:2 [NUMANode(memory=1)] core:2 pu:1",
}

func FuzzSynthetic(f *testing.F) {
	for _, s := range syntheticSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		topo, err := FromSynthetic(s)
		if err != nil {
			return
		}
		if n := len(topo.Objects(PU)); n < 1 || n > maxSyntheticPUs {
			t.Fatalf("FromSynthetic(%q) has %d PUs", s, n)
		}
	})
}

// addFileSeeds adds the project's XML test files and, when ../shared is
// present, a few corpus machines' files ending in ext.
func addFileSeeds(f *testing.F, ext string) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*"+ext))
	corpus, _ := filepath.Glob(filepath.Join("..", "..", "shared", "hwloc-linux", "*"+ext))
	if len(corpus) > 8 {
		corpus = corpus[:8]
	}
	for _, p := range append(paths, corpus...) {
		if data, err := os.ReadFile(p); err == nil && len(data) < 1<<20 {
			f.Add(data)
		}
	}
}

func FuzzXML(f *testing.F) {
	addFileSeeds(f, ".xml")
	f.Add([]byte(`<topology><object type="Machine"><object type="PU" os_index="1000000000000"/></object></topology>`))
	f.Add([]byte(`<topology><object type="Machine"><object type="Frob"><object type="PU" os_index="0"/></object></object></topology>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		topo, err := fromXML(data, "fuzz.xml")
		if err != nil {
			if strings.Contains(err.Error(), "panic") {
				t.Fatal(err)
			}
			return
		}
		if len(topo.Objects(PU)) == 0 {
			t.Fatal("accepted a tree without PUs")
		}
	})
}

func FuzzJSON(f *testing.F) {
	for _, s := range syntheticSeeds[:4] {
		if topo, err := FromSynthetic(s); err == nil {
			if data, err := json.Marshal(topo); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte(`{"type":"Machine","children":[{"type":"PU","os_index":1000000000000}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		topo, err := FromJSON(data, "fuzz.json")
		if err != nil {
			return
		}
		back, err := json.Marshal(topo)
		if err != nil {
			t.Fatalf("accepted tree does not marshal: %v", err)
		}
		again, err := FromJSON(back, "again.json")
		if err != nil || again.Root.Canonical() != topo.Root.Canonical() {
			t.Fatalf("JSON round trip changed the tree: %v", err)
		}
	})
}
