//go:build unix

package store_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/store"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/results"
)

// twoMachines returns the synthetic machine's file (an Intel Xeon, CPUs
// 0-31) and another kind of node's (another CPU, CPUs 0-15).
func twoMachines(t *testing.T) (xeon, epyc *results.File) {
	t.Helper()
	f, err := results.Read(filepath.Join("..", "..", "..", "results", "testdata", "lookup-synth.json"))
	if err != nil {
		t.Fatal(err)
	}
	g, _ := results.Read(filepath.Join("..", "..", "..", "results", "testdata", "lookup-synth.json"))
	g.Machine.CPU = results.CPUIdentity{Vendor: "AuthenticAMD", Family: 25, Model: 1, Name: "AMD EPYC 7B13 64-Core Processor"}
	g.Threads[0].Best.Algorithm = "central"
	return f, g
}

// finderFor is the lookup order of a node of m's kind with only site
// directories, allowed every CPU of m's tree.
func finderFor(m results.Machine, site ...string) results.Finder {
	host := m
	host.TopologyHash, host.Topology = "", "" // the light fingerprint
	online, _ := cpuset.ParseList(m.Tree.CPUs)
	return results.Finder{Site: site, Host: host, Online: online}
}

// TestSiteDirectoryServesEachMachine: one site directory holding two kinds
// of node's files under any *.json names serves each node its own;
// hostile entries in it (a FIFO, /dev/zero, garbage, a directory, a file
// over the directory's byte budget) are skipped with their reasons, never
// fatal and never a hang, and hidden files are not read.
func TestSiteDirectoryServesEachMachine(t *testing.T) {
	xeon, epyc := twoMachines(t)
	dir := filepath.Join(t.TempDir(), "site", "barriertune")
	for name, f := range map[string]*results.File{"a-epyc.json": epyc, "b-xeon.json": xeon} {
		if err := store.Write(filepath.Join(dir, name), f); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "0-fifo.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"1-garbage.json": "{\"schema\": ", ".hidden.json": "garbage", "notes.txt": "garbage"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "2-zero.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "3-dir.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Two sparse 40 MiB files: the first is read (and is no JSON), the
	// second would pass the directory's 64 MiB.
	for _, name := range []string{"4-big.json", "5-big.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(filepath.Join(dir, name), 40<<20); err != nil {
			t.Fatal(err)
		}
	}
	site := filepath.Join(dir, "results.json") // as sitePaths names it: absent here
	for _, c := range []struct {
		f    *results.File
		want string
	}{{xeon, "b-xeon.json"}, {epyc, "a-epyc.json"}} {
		found, err := finderFor(c.f.Machine, site).Find()
		if err != nil {
			t.Fatalf("%s: %v", c.f.Machine.CPU.Name, err)
		}
		if filepath.Base(found.Path) != c.want || found.File.Machine.CPU.Name != c.f.Machine.CPU.Name || !strings.Contains(found.Why, "XDG_CONFIG_DIRS") {
			t.Errorf("%s: found %s (%s), want %s", c.f.Machine.CPU.Name, found.Path, found.Why, c.want)
		}
		reasons := map[string]string{}
		for _, k := range found.Skipped {
			reasons[filepath.Base(k.Path)] = k.Reason
		}
		for name, want := range map[string]string{"0-fifo.json": "not a regular file", "1-garbage.json": "not valid JSON", "2-zero.json": "not a regular file",
			"3-dir.json": "not a regular file", "4-big.json": "not a barriertune results file", "5-big.json": "over 64 MiB"} {
			if !strings.Contains(reasons[name], want) {
				t.Errorf("%s: %s skipped for %q, want %q", c.f.Machine.CPU.Name, name, reasons[name], want)
			}
		}
		for _, name := range []string{".hidden.json", "notes.txt", "results.json"} {
			if _, ok := reasons[name]; ok {
				t.Errorf("%s: %s tried (%s)", c.f.Machine.CPU.Name, name, reasons[name])
			}
		}
		if c.f == epyc && len(found.Skipped) != 6 || c.f == xeon && len(found.Skipped) != 7 {
			t.Errorf("%s: skipped %+v", c.f.Machine.CPU.Name, found.Skipped)
		}
	}
}

// TestSiteDirectoryMatchesNone: a node of a third kind gets no file, and the
// error names each one with its reason; the summary of a node that finds
// its file counts the other machines' files of its directory.
func TestSiteDirectoryMatchesNone(t *testing.T) {
	xeon, epyc := twoMachines(t)
	dir := filepath.Join(t.TempDir(), "barriertune")
	for i, name := range []string{"ARM Neoverse-V2", "Intel Xeon Max 9480", "AMD EPYC 9654"} {
		f, _ := results.Read(filepath.Join("..", "..", "..", "results", "testdata", "lookup-synth.json"))
		f.Machine.CPU.Name = name
		if err := store.Write(filepath.Join(dir, fmt.Sprintf("%d.json", i)), f); err != nil {
			t.Fatal(err)
		}
	}
	_, err := finderFor(epyc.Machine, filepath.Join(dir, "results.json")).Find()
	if !errors.Is(err, results.ErrNoResults) || !strings.Contains(err.Error(), "3 files of other machines in "+dir+" (0.json, 1.json, 2.json)") ||
		!strings.Contains(err.Error(), `run barriertune check on this machine (CPU "AMD EPYC 7B13 64-Core Processor")`) {
		t.Errorf("a node of another kind: %v", err)
	}
	if err := store.Write(filepath.Join(dir, "9.json"), xeon); err != nil {
		t.Fatal(err)
	}
	found, err := finderFor(xeon.Machine, filepath.Join(dir, "results.json")).Find()
	if err != nil || filepath.Base(found.Path) != "9.json" || len(found.Skipped) != 3 {
		t.Fatalf("the fourth file's node: %+v, %v", found, err)
	}
	if s := found.Summary(); !strings.Contains(s, "skipped 3 files of other machines in "+dir+" (0.json, 1.json, 2.json)") || strings.Contains(s, "Neoverse") {
		t.Errorf("summary %q", s)
	}
	// The same directory as $BARRIERTUNE_RESULTS=DIR/: found there, no
	// notice; for a node with no file there, a notice names it.
	fd := finderFor(xeon.Machine, filepath.Join(dir, "results.json"))
	fd.Env = dir + "/"
	if found, err := fd.Find(); err != nil || filepath.Base(found.Path) != "9.json" || !strings.Contains(found.Why, "$BARRIERTUNE_RESULTS") || len(found.Notices()) != 0 {
		t.Errorf("$BARRIERTUNE_RESULTS=%s/: %+v, %v", dir, found, err)
	}
	if err := os.Rename(filepath.Join(dir, "9.json"), filepath.Join(dir, "results.json")); err != nil {
		t.Fatal(err)
	}
	fd.Env = filepath.Join(t.TempDir(), "other") + "/"
	found, err = fd.Find()
	if err != nil || len(found.Notices()) != 1 || !strings.Contains(found.Notices()[0], "$BARRIERTUNE_RESULTS="+fd.Env+" is not used") {
		t.Errorf("an empty $BARRIERTUNE_RESULTS directory: %+v, %v", found, err)
	}
}

// TestSiteDirectoryCaps: of a directory of many *.json files only the
// first 256 by name are tried, and the lookup says so.
func TestSiteDirectoryCaps(t *testing.T) {
	xeon, _ := twoMachines(t)
	dir := t.TempDir()
	for i := range 300 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("junk-%03d.json", i)), []byte("[]"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Write(filepath.Join(dir, "zz.json"), xeon); err != nil {
		t.Fatal(err)
	}
	_, err := finderFor(xeon.Machine, filepath.Join(dir, "results.json")).Find()
	if !errors.Is(err, results.ErrNoResults) || !strings.Contains(err.Error(), "301 *.json files: only the first 256 by name are tried") ||
		!strings.Contains(err.Error(), "more files") {
		t.Errorf("301 files: %.400v", err)
	}
}

// TestFileName: nodes of one kind share a file name, other kinds (CPU or
// tree) get another; the name is plain.
func TestFileName(t *testing.T) {
	xeon, epyc := twoMachines(t)
	a, b := xeon.Machine, xeon.Machine
	b.AllowedCPUs, b.Kernel, b.GOMAXPROCS = "3", "Linux 7", 1
	if store.FileName(a) != store.FileName(b) {
		t.Errorf("one kind, two names: %s, %s", store.FileName(a), store.FileName(b))
	}
	c := a
	c.TopologyHash = "0123456789abcdef"
	names := map[string]bool{store.FileName(a): true, store.FileName(epyc.Machine): true, store.FileName(c): true}
	if len(names) != 3 {
		t.Errorf("three kinds, names %v", names)
	}
	re := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*-[0-9a-f]{12}\.json$`)
	d := a
	d.CPU.Name = "  ~~Ünïcode/../CPU  "
	for _, m := range []results.Machine{a, epyc.Machine, d, {}} {
		if n := store.FileName(m); !re.MatchString(n) {
			t.Errorf("%q: name %q", m.CPU.Name, n)
		}
	}
	if n := store.FileName(epyc.Machine); !strings.HasPrefix(n, "amd-epyc-7b13-64-core-processor-") {
		t.Errorf("name %q", n)
	}
}

// TestSaveSharedDirectory: `check -o DIR/` writes the machine's own name;
// a system-style destination (results.json) keeps another machine's file
// there and writes beside it; nodes of one kind saving at once end with a
// complete file, never a partial one over it.
func TestSaveSharedDirectory(t *testing.T) {
	xeon, epyc := twoMachines(t)
	dir := filepath.Join(t.TempDir(), "etc", "barriertune")
	shared := store.OutputDestination("-o", dir+"/")
	if err := shared.Check(); err == nil || !strings.Contains(err.Error(), "-o "+dir) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("-o of a missing directory: %v", err)
	}
	sys := store.SystemDestination(filepath.Join(dir, "results.json"))
	if err := sys.Check(); err != nil {
		t.Fatalf("--system on a root without the directory: %v", err)
	}
	if p, note, err := sys.Save(xeon); err != nil || p != filepath.Join(dir, "results.json") || note != "" {
		t.Fatalf("first node: %s, %q, %v", p, note, err)
	}
	p, note, err := sys.Save(epyc)
	if want := filepath.Join(dir, store.FileName(epyc.Machine)); err != nil || p != want || !strings.Contains(note, "holds another machine's results") {
		t.Fatalf("second kind: %s, %q, %v; want %s", p, note, err, want)
	}
	if f, err := results.Read(filepath.Join(dir, "results.json")); err != nil || f.Machine.CPU.Name != xeon.Machine.CPU.Name {
		t.Errorf("results.json now %v, %v", f, err)
	}
	// The two found by the lookup, each on its node.
	for _, f := range []*results.File{xeon, epyc} {
		if found, err := finderFor(f.Machine, filepath.Join(dir, "results.json")).Find(); err != nil || found.File.Machine.CPU.Name != f.Machine.CPU.Name {
			t.Errorf("%s: %+v, %v", f.Machine.CPU.Name, found, err)
		}
	}
	// -o DIR/: eight nodes of one kind at once, two of them partial.
	if err := store.OutputDestination("-o", dir).Check(); err == nil || !strings.Contains(err.Error(), "end it with /") {
		t.Errorf("-o of a directory without its slash: %v", err)
	}
	shared = store.OutputDestination("-o", dir+"/")
	if err := shared.Check(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			f := *epyc
			f.Partial = i%4 == 1
			f.Tool.Version = fmt.Sprint(i)
			if _, _, err := shared.Save(&f); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if f, err := results.Read(filepath.Join(dir, store.FileName(epyc.Machine))); err != nil || f.Partial {
		t.Errorf("after eight nodes: partial %v, %v", f != nil && f.Partial, err)
	}
	f := *epyc
	f.Partial = true
	p, note, err = shared.Save(&f)
	if err != nil || p != filepath.Join(dir, store.FileName(epyc.Machine))+".partial" || !strings.Contains(note, "keeps its complete results; this partial run went beside it") {
		t.Errorf("a partial run: %s, %q, %v", p, note, err)
	}
	// A complete run confined to part of the node (a batch step given a
	// few CPUs) does not replace the whole node's file.
	f.Partial, f.Machine.Unmeasured = false, "Package (2 threads)"
	p, note, err = shared.Save(&f)
	if err != nil || p != filepath.Join(dir, store.FileName(epyc.Machine))+".partial" || !strings.Contains(note, "this less complete run went beside it") {
		t.Errorf("a confined run: %s, %q, %v", p, note, err)
	}
}

// TestSystemDirectoryMode: the directory --system makes is 0755 whatever
// the umask, so every user reads the file in it.
func TestSystemDirectoryMode(t *testing.T) {
	xeon, _ := twoMachines(t)
	dir := filepath.Join(t.TempDir(), "etc", "barriertune")
	old := syscall.Umask(0o077)
	_, _, err := store.SystemDestination(filepath.Join(dir, "results.json")).Save(xeon)
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{dir: os.ModeDir | 0o755, filepath.Join(dir, "results.json"): 0o644} {
		if fi, err := os.Stat(p); err != nil || fi.Mode() != want {
			t.Errorf("%s: %v, %v; want %v", p, fi.Mode(), err, want)
		}
	}
}

// TestSaveRacingNodes: two nodes of one kind finishing at once into an
// empty shared directory, one complete and one interrupted, end with the
// complete file, whichever writes first (the directory's lock holds each
// from reading the old file to the rename).
func TestSaveRacingNodes(t *testing.T) {
	_, epyc := twoMachines(t)
	partial := *epyc
	partial.Partial = true
	for round := range 30 {
		dir := filepath.Join(t.TempDir(), fmt.Sprint(round))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		shared := store.OutputDestination("-o", dir+"/")
		var wg sync.WaitGroup
		for _, f := range []*results.File{epyc, &partial} {
			wg.Go(func() {
				if _, _, err := shared.Save(f); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if f, err := results.Read(filepath.Join(dir, store.FileName(epyc.Machine))); err != nil || f.Partial {
			t.Fatalf("round %d: the partial run replaced the complete one (%v)", round, err)
		}
	}
}

// TestSiteDirectoryThatIsAFIFO: a site directory (or the node directory
// the light fingerprint lists) that is a FIFO is not listed and not waited
// on: the lookup goes on without it.
func TestSiteDirectoryThatIsAFIFO(t *testing.T) {
	xeon, _ := twoMachines(t)
	base := t.TempDir()
	dir := filepath.Join(base, "site", "barriertune")
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(dir, 0o644); err != nil {
		t.Fatal(err)
	}
	nodeDir := filepath.Join(base, "sys", "devices", "system", "node")
	if err := os.MkdirAll(filepath.Dir(nodeDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(nodeDir, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var nodes []cpuset.Set
	go func() {
		nodes = osal.NUMANodesAt(base)
		_, err := finderFor(xeon.Machine, filepath.Join(dir, "results.json")).Find()
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, results.ErrNoResults) {
			t.Errorf("a FIFO for the site directory: %v, want ErrNotFound", err)
		}
		if nodes != nil {
			t.Errorf("a FIFO for the node directory: %v, want nil (unknown)", nodes)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the lookup waited on a FIFO")
	}
}
