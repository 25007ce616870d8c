package store

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/results"
)

func sample(t *testing.T) *results.File {
	t.Helper()
	m := hostMachine("0-7")
	m.Topology, m.TopologyHash = "pack:2 core:2 pu:2", "0123456789abcdef"
	return &results.File{
		Schema: results.Schema, Tool: results.Tool{Name: "barriertune", Version: "test"}, Time: time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC),
		Machine: m, Budget: "1m0s", Cuts: []string{},
		Floor: []results.Floor{{Level: "Core", CPUs: [2]int{0, 1}, MedianNs: 20}},
		Threads: []results.Threads{
			{Threads: 2, Source: results.Measured, Complete: true, Best: &results.Choice{CPUs: []int{0, 1}, MedianNs: 50, Spec: results.Spec{Algorithm: "dissemination", Policy: "spin"}}, Measurements: []results.Measurement{}},
			{Threads: 4, Source: results.Measured, Complete: true, Best: &results.Choice{CPUs: []int{0, 1, 2, 3}, MedianNs: 90, Spec: results.Spec{Algorithm: "mcs", Policy: "spin"}}, Measurements: []results.Measurement{}},
		},
	}
}

// TestSaveKeepsTheCompleteFile: a partial or less complete run never
// replaces a complete file; it goes beside it, to FILE.partial.
func TestSaveKeepsTheCompleteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	good := sample(t)
	if got, err := Save(path, good); err != nil || got != path {
		t.Fatalf("first save: %s, %v", got, err)
	}
	for name, f := range map[string]*results.File{
		"partial":  func() *results.File { f := sample(t); f.Partial = true; return f }(),
		"empty":    func() *results.File { f := sample(t); f.Threads = []results.Threads{}; return f }(),
		"narrower": func() *results.File { f := sample(t); f.Threads = f.Threads[:1]; return f }(),
	} {
		got, err := Save(path, f)
		if err != nil || got != path+partialSuffix {
			t.Errorf("%s run saved to %s (%v), want %s", name, got, err, path+partialSuffix)
		}
		back, err := results.Read(path)
		if err != nil || back.Partial || len(back.Threads) != 2 {
			t.Errorf("%s run: the complete file changed: %+v, %v", name, back, err)
		}
	}
	// A complete run as wide as the old one replaces it; a partial file is
	// replaced by anything.
	wider := sample(t)
	wider.Threads = append(wider.Threads, results.Threads{Threads: 8, Source: results.Measured, Complete: true,
		Best: &results.Choice{CPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}, Spec: results.Spec{Algorithm: "central"}}, Measurements: []results.Measurement{}})
	if got, err := Save(path, wider); err != nil || got != path {
		t.Errorf("wider run saved to %s (%v)", got, err)
	}
	part := sample(t)
	part.Partial = true
	p2 := filepath.Join(t.TempDir(), "r.json")
	if err := Write(p2, part); err != nil {
		t.Fatal(err)
	}
	if got, err := Save(p2, sample(t)); err != nil || got != p2 {
		t.Errorf("replacing a partial file: %s, %v", got, err)
	}
}

// TestSaveKeepsTheQuietFile: a run measured on a busy machine never
// replaces one that was not (quiet, or from before files recorded the
// load), however complete; it goes beside it, to FILE.busy, and the quiet
// file stays byte for byte. A busy file is replaced by a quiet run and,
// by the completeness rules, by a busy one.
func TestSaveKeepsTheQuietFile(t *testing.T) {
	busy := func() *results.File {
		f := sample(t)
		f.Load = &results.Load{Busy: true, Why: "2 runnable tasks of other processes", Readings: 9, Seconds: 1, OtherRunnable: 2, OtherRunnableMax: 3, RunDelayShare: 0.9}
		return f
	}
	for name, quiet := range map[string]*results.File{
		"quiet":    func() *results.File { f := sample(t); f.Load = &results.Load{Readings: 9, Seconds: 1}; return f }(),
		"unknown":  sample(t),
		"partial":  func() *results.File { f := sample(t); f.Partial = true; return f }(),
		"narrower": func() *results.File { f := sample(t); f.Threads = f.Threads[:1]; return f }(),
	} {
		path := filepath.Join(t.TempDir(), "results.json")
		if err := Write(path, quiet); err != nil {
			t.Fatal(err)
		}
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Save(path, busy())
		if err != nil || got != path+BusySuffix {
			t.Errorf("%s file: the busy run saved to %s (%v), want %s", name, got, err, path+BusySuffix)
		}
		after, err := os.ReadFile(path)
		if err != nil || string(after) != string(before) {
			t.Errorf("%s file changed under a busy run (%v)", name, err)
		}
		back, err := results.Read(got)
		if err != nil || !back.Busy() || back.Load.OtherRunnableMax != 3 {
			t.Errorf("%s file: the busy run read back as %+v, %v", name, back, err)
		}
	}
	path := filepath.Join(t.TempDir(), "results.json")
	if err := Write(path, busy()); err != nil {
		t.Fatal(err)
	}
	if got, err := Save(path, busy()); err != nil || got != path {
		t.Errorf("a busy run over a busy file saved to %s (%v), want %s", got, err, path)
	}
	if got, err := Save(path, sample(t)); err != nil || got != path {
		t.Errorf("a quiet run over a busy file saved to %s (%v), want %s", got, err, path)
	}
}

// TestSaveKeepsTheMeasuredFile: a simulated file never replaces a measured
// one (an error, the file unchanged); it replaces a simulated one.
func TestSaveKeepsTheMeasuredFile(t *testing.T) {
	simulated := func() *results.File { f := sample(t); f.Simulated = true; return f }
	path := filepath.Join(t.TempDir(), "results.json")
	if err := Write(path, sample(t)); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	if got, err := Save(path, simulated()); err == nil || !strings.Contains(err.Error(), path+" holds measured results") {
		t.Errorf("a simulated run over a measured file: saved to %s, %v; want an error", got, err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the measured file changed")
	}
	if err := RefusesSimulated(path); err == nil || !strings.Contains(err.Error(), path+" holds measured results") {
		t.Errorf("RefusesSimulated(measured): %v", err)
	}
	other := filepath.Join(t.TempDir(), "results.json")
	if err := Write(other, simulated()); err != nil {
		t.Fatal(err)
	}
	if err := RefusesSimulated(other); err != nil {
		t.Errorf("RefusesSimulated(simulated): %v", err)
	}
	if got, err := Save(other, simulated()); err != nil || got != other {
		t.Errorf("a simulated run over a simulated file: %s, %v", got, err)
	}
}

// TestWriteRefusesWhatIsNotAFile: Write never replaces a directory or a
// device (reached through a link here: were it replaced, the link would
// be).
func TestWriteRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "null.json")
	if err := os.Symlink(os.DevNull, link); err != nil {
		t.Skip("no symbolic links:", err)
	}
	for _, p := range []string{dir, link} {
		if err := Write(p, sample(t)); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("Write(%s): %v, want an error naming it", p, err)
		}
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "results.json")
	f := sample(t)
	if err := Write(path, f); err != nil {
		t.Fatal(err)
	}
	back, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, f) {
		t.Errorf("round trip differs:\n%+v\n%+v", back, f)
	}
	if f.Machine.GoVersion == "" || f.Machine.GOMAXPROCS < 1 || f.Machine.AllowedCPUs != "0-7" {
		t.Errorf("fingerprint %+v", f.Machine)
	}
	// Atomic: no temporary files are left beside it.
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only results.json", len(entries))
	}
	// Rewriting replaces it whole.
	f.Partial = true
	if err := Write(path, f); err != nil {
		t.Fatal(err)
	}
	if back, _ := results.Read(path); !back.Partial {
		t.Error("rewrite not seen")
	}
}

// hostMachine is this machine's light fingerprint (results.HereFinder's)
// for the allowed CPUs given.
func hostMachine(allowed string) results.Machine {
	fd, _ := results.HereFinder()
	m := fd.Host
	m.AllowedCPUs = allowed
	return m
}
