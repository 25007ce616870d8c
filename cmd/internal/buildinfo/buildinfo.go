// Package buildinfo reads the tuner's version from its build info: the
// module version, the VCS revision, the Go version and the platform.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is the module version and VCS revision from the build info,
// with the Go version and platform.
type Version struct {
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	// NoRevision says why a development build has no revision.
	NoRevision string `json:"no_revision,omitempty"`
	Go         string `json:"go"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
}

// Read is the running program's Version.
func Read() Version {
	bi, _ := debug.ReadBuildInfo()
	return From(bi)
}

// noRevision says why a development build has no VCS revision.
const noRevision = "no VCS revision: built without VCS stamping, as go run, -buildvcs=false and builds outside a git checkout are"

// From reads the version from build info (nil: none).
func From(bi *debug.BuildInfo) Version {
	v := Version{Version: "devel", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi == nil {
		return v
	}
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	if v.Revision == "" && v.Version == "devel" {
		v.NoRevision = noRevision
	}
	return v
}

// Line is the one-line version of program: module version, revision
// (12 digits, -dirty when modified), Go version, platform.
func (v Version) Line(program string) string {
	s := program + " " + v.Version
	if v.Revision != "" {
		rev := v.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if v.Modified {
			rev += "-dirty"
		}
		s += " (" + rev + ")"
	}
	if v.NoRevision != "" {
		s += " (" + v.NoRevision + ")"
	}
	return fmt.Sprintf("%s %s %s/%s", s, v.Go, v.OS, v.Arch)
}
