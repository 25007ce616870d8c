package results_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/results"
)

// lookupFiles writes, on the synthetic machine, a system file whose best
// for 2 threads is system, and returns a finder with a temp system path.
// The file is testdata/lookup-synth.json, recorded by cmd/internal/libtest's
// synthFile on "pack:2 l3:2 core:4 pu:2" (2 threads; central, mcs; seed
// 9): results' own tests import no tuner package (see cmd/internal/libtest).
func lookupFiles(t *testing.T) (results.Finder, *results.File, string) {
	t.Helper()
	f, err := results.Read(filepath.Join("testdata", "lookup-synth.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sys := filepath.Join(dir, "etc", "results.json")
	if err := results.WriteForTest(sys, f); err != nil {
		t.Fatal(err)
	}
	host := f.Machine
	host.AllowedCPUs = "4-7"
	return results.Finder{System: []string{sys}, Host: host, Online: cpuset.Range(0, 31)}, f, dir
}

// TestFindSystemFileForEveryUser: with no environment and no per-user file
// (another uid, env -i), the system file is used; a per-user file of
// another machine, a simulated one, an unreadable one and a missing
// $BARRIERTUNE_RESULTS are skipped with their reasons.
func TestFindSystemFileForEveryUser(t *testing.T) {
	fd, sysFile, dir := lookupFiles(t)
	found, err := fd.Find()
	if err != nil || found.Path != fd.System[0] || found.Why != "the system-wide file" || len(found.Skipped) != 0 {
		t.Fatalf("empty environment: %+v, %v", found, err)
	}
	foreign := *sysFile
	foreign.Machine.CPU.Name = "Imaginary CPU 9000"
	fd.User = filepath.Join(dir, "user.json")
	if err := results.WriteForTest(fd.User, &foreign); err != nil {
		t.Fatal(err)
	}
	sim := *sysFile
	sim.Simulated = true
	fd.Env = filepath.Join(dir, "sim.json")
	if err := results.WriteForTest(fd.Env, &sim); err != nil {
		t.Fatal(err)
	}
	found, err = fd.Find()
	if err != nil || found.Path != fd.System[0] || len(found.Skipped) != 2 {
		t.Fatalf("foreign per-user and simulated env files: %+v, %v", found, err)
	}
	if !strings.Contains(found.Skipped[0].Reason, "simulated") || !strings.Contains(found.Skipped[1].Reason, "Imaginary") {
		t.Errorf("skipped %+v", found.Skipped)
	}
	if s := found.Summary(); !strings.Contains(s, "skipped "+fd.User) || !strings.Contains(s, "system-wide") {
		t.Errorf("summary %q", s)
	}
	// Forced: the first readable file, with a warning.
	fd.Force = true
	if found, err := fd.Find(); err != nil || found.Path != fd.Env || !strings.Contains(found.Warning, "simulated") {
		t.Errorf("forced: %+v, %v", found, err)
	}
	fd.Force = false
	// Another allowed set inside the machine applies; CPUs outside do not.
	fd.Host.AllowedCPUs = "31"
	if found, err := fd.Find(); err != nil || found.Path != fd.System[0] {
		t.Errorf("allowed CPU 31: %+v, %v", found, err)
	}
	fd.Host.AllowedCPUs = "0-40"
	if _, err := fd.Find(); err == nil || !strings.Contains(err.Error(), "0-40") {
		t.Errorf("allowed CPUs outside the machine: %v", err)
	}
	fd.Host.AllowedCPUs = "0-3"
	// CPUs taken offline: the tree no longer applies.
	fd.Online = cpuset.Range(0, 15)
	if _, err := fd.Find(); err == nil || !strings.Contains(err.Error(), "online CPUs 0-15") || !errors.Is(err, results.ErrNoResults) {
		t.Errorf("CPUs offline: %v", err)
	}
	fd.Online = cpuset.Set{}
	// An unreadable system file is skipped with its reason, never a crash.
	if err := os.WriteFile(fd.System[0], []byte("# not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	fd.Env, fd.User = "", ""
	if _, err := fd.Find(); err == nil || !strings.Contains(err.Error(), fd.System[0]+": results file") {
		t.Errorf("corrupted system file: %v", err)
	}
}

// TestFindNamesEveryFileTried: when no file exists the error names them
// all and says how to make one.
func TestFindNamesEveryFileTried(t *testing.T) {
	dir := t.TempDir()
	fd := results.Finder{Env: filepath.Join(dir, "a.json"), User: filepath.Join(dir, "b.json"), System: []string{filepath.Join(dir, "c.json")}}
	_, err := fd.Find()
	want := "no results file at " + fd.Env + " (nor " + fd.User + ", " + fd.System[0] + "): run barriertune check"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
	fd.Env = fd.User // duplicates are tried once
	if p := fd.Paths(); len(p) != 2 {
		t.Errorf("paths %v", p)
	}
}

// TestSitePaths: $XDG_CONFIG_DIRS gives one file per absolute directory, in
// order and once; relative and empty entries are ignored, and an unset
// variable gives none (its /etc/xdg default is not searched).
func TestSitePaths(t *testing.T) {
	for in, want := range map[string][]string{
		"":                         nil,
		"/opt/site/etc":            {"/opt/site/etc/barriertune/results.json"},
		"/a:/b/:/a":                {"/a/barriertune/results.json", "/b/barriertune/results.json"},
		"relative:/etc/xdg::./x:/": {"/etc/xdg/barriertune/results.json", "/barriertune/results.json"},
	} {
		if got := results.SitePathsForTest(in); !slices.Equal(got, want) {
			t.Errorf("sitePaths(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFindSiteFileAfterSystem: a site's file ($XDG_CONFIG_DIRS) is used
// when the node has no system file of its own, and the node's own file
// comes first when it has one.
func TestFindSiteFileAfterSystem(t *testing.T) {
	fd, f, dir := lookupFiles(t)
	site := filepath.Join(dir, "site", "barriertune", "results.json")
	if err := results.WriteForTest(site, f); err != nil {
		t.Fatal(err)
	}
	fd.Site = results.SitePathsForTest(filepath.Join(dir, "site"))
	if len(fd.Site) != 1 || fd.Site[0] != site {
		t.Fatalf("site paths %q, want %q", fd.Site, site)
	}
	if found, err := fd.Find(); err != nil || found.Path != fd.System[0] {
		t.Fatalf("with a system file: %+v, %v; want the system file first", found, err)
	}
	if err := os.Remove(fd.System[0]); err != nil {
		t.Fatal(err)
	}
	found, err := fd.Find()
	if err != nil || found.Path != site || !strings.Contains(found.Why, "XDG_CONFIG_DIRS") {
		t.Fatalf("without a system file: %+v, %v; want the site's", found, err)
	}
	if len(found.Skipped) != 1 || found.Skipped[0].Path != fd.System[0] || found.Skipped[0].Reason != "no such file" {
		t.Errorf("skipped %+v, want the missing system file", found.Skipped)
	}
}

// TestFindSaysWhyNoPerUserFile: with $XDG_CONFIG_HOME relative (which XDG
// says to ignore) the per-user file is not looked for, and the error says
// so instead of naming only the system file.
func TestFindSaysWhyNoPerUserFile(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "relative/dir")
	t.Setenv(results.ResultsEnv, "")
	t.Setenv("XDG_CONFIG_DIRS", "")
	fd, err := results.HereFinder()
	if err != nil {
		t.Fatal(err)
	}
	if fd.User != "" || !strings.Contains(fd.NoUser, "relative") {
		t.Fatalf("User %q, NoUser %q: want no per-user file and the reason", fd.User, fd.NoUser)
	}
	fd.System = []string{filepath.Join(t.TempDir(), "results.json")}
	_, err = fd.Find()
	if !errors.Is(err, results.ErrNoResults) || !strings.Contains(err.Error(), "the per-user file was not looked for: ") || !strings.Contains(err.Error(), "relative") {
		t.Errorf("Find: %v", err)
	}
}
