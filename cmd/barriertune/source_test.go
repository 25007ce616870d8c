package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLookupNotices: an explicitly set $BARRIERTUNE_RESULTS that cannot be
// used, and a per-user file that hides a site's file, are said once on
// stderr (they were only a "skipped" clause, or nothing).
func TestLookupNotices(t *testing.T) {
	cfg, site := t.TempDir(), t.TempDir()
	// The fixture is another machine's: forced, it is used.
	t.Setenv("BARRIERTUNE_FORCE", "1")
	for _, d := range []string{filepath.Join(cfg, "barriertune"), filepath.Join(site, "barriertune")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(exportTestdata)
		if err := os.WriteFile(filepath.Join(d, "results.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("XDG_CONFIG_DIRS", site)
	t.Setenv("BARRIERTUNE_RESULTS", filepath.Join(cfg, "typo.json"))
	for _, args := range [][]string{{"show"}, {"export", "--format", "kv"}} {
		code, _, errOut := execLine(args...)
		if code != 0 || strings.Count(errOut, "$BARRIERTUNE_RESULTS="+filepath.Join(cfg, "typo.json")+" is not used") != 1 ||
			strings.Count(errOut, "hides "+filepath.Join(site, "barriertune", "results.json")) != 1 {
			t.Errorf("%q: exit %d, stderr:\n%s", args, code, errOut)
		}
		code, _, errOut = execLine(append(args, "-q")...)
		if code != 0 || errOut != "" {
			t.Errorf("%q -q: exit %d, stderr:\n%s", args, code, errOut)
		}
	}
}
