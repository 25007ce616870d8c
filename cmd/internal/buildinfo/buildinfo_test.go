package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionFromBuildInfo: the version, revision, time and dirty flag
// are read from the build info, and the one-line form says them.
func TestVersionFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/barriertune/barriertune", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "8959cec4b20a28b253d649ef0cf9438807677803"},
			{Key: "vcs.time", Value: "2026-11-22T06:46:11Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	v := From(bi)
	if v.Version != "v1.2.3" || v.Revision != "8959cec4b20a28b253d649ef0cf9438807677803" || !v.Modified || v.Time != "2026-11-22T06:46:11Z" {
		t.Errorf("From = %+v", v)
	}
	want := "barriertune v1.2.3 (8959cec4b20a-dirty) " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	if got := v.Line("barriertune"); got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
	bi.Main.Version = "(devel)"
	if v := From(bi); v.Version != "devel" {
		t.Errorf("a development build reads %q", v.Version)
	}
	if v := From(nil); v.Version != "devel" || v.Revision != "" {
		t.Errorf("no build info: %+v", v)
	}
	// A development build without VCS stamping says so.
	bi.Settings = nil
	if got := From(bi).Line("barriertune"); !strings.Contains(got, "devel (no VCS revision: built without VCS stamping") {
		t.Errorf("no stamping: %q", got)
	}
	bi.Main.Version = "v1.2.3" // a module version identifies the build
	if got := From(bi).Line("barriertune"); strings.Contains(got, "no VCS revision") {
		t.Errorf("a tagged build: %q", got)
	}
}
