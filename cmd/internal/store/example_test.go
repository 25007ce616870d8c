package store_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/barriertune/barriertune/cmd/internal/store"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/results"
)

// One site directory holds the files of two kinds of node, each written by
// `check -o DIR/` under its machine's name (FileName); each node's lookup
// (results.Finder) finds its own. A program calls results.FindHere, the same lookup for this process.
func ExampleDestination_Save() {
	site, _ := os.MkdirTemp("", "site")
	defer os.RemoveAll(site)
	dir := filepath.Join(site, "barriertune")
	xeon, _ := results.Read(filepath.Join("..", "..", "..", "results", "testdata", "lookup-synth.json"))
	epyc := *xeon
	epyc.Machine.CPU = results.CPUIdentity{Vendor: "AuthenticAMD", Family: 25, Model: 1, Name: "AMD EPYC 7B13 64-Core Processor"}
	for _, f := range []*results.File{xeon, &epyc} {
		if _, _, err := store.OutputDestination("-o", dir+"/").Save(f); err != nil {
			fmt.Println(err)
		}
	}
	for _, m := range []results.Machine{xeon.Machine, epyc.Machine} {
		host := m
		host.TopologyHash = "" // the light fingerprint a program takes
		online, _ := cpuset.ParseList(m.Tree.CPUs)
		fd := results.Finder{Site: []string{filepath.Join(dir, "results.json")}, Host: host, Online: online}
		found, err := fd.Find()
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s uses %s (files skipped: %d)\n", m.CPU.Name, filepath.Base(found.Path), len(found.Skipped))
	}
	// Output:
	// Intel(R) Xeon(R) Processor uses intel-r-xeon-r-processor-954e5f8a4d85.json (files skipped: 1)
	// AMD EPYC 7B13 64-Core Processor uses amd-epyc-7b13-64-core-processor-b1a96e90569e.json (files skipped: 0)
}
