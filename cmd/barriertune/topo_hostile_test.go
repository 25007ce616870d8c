//go:build unix

package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestTopoHostileFlags runs `topo` with careless or hostile values of its
// output, filter and topology flags: each fails with exit code 2 and one line naming
// the value, in bounded time and memory (runCLI's limits).
func TestTopoHostileFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the CLI as a subprocess; skipped with -short")
	}
	long := strings.Repeat("x", 1<<16)
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"restrict huge range", []string{"--restrict", "0-1000000000"}, 2, "1000000000"},
		{"restrict garbage", []string{"--restrict", "0-3;rm"}, 2, `--restrict`},
		{"restrict negative", []string{"--restrict", "-1"}, 2, `"-1"`},
		{"restrict outside the tree", []string{"--restrict", "60000"}, 2, "none is in this topology"},
		{"of unknown", []string{"--of", "../../etc/passwd"}, 2, `--of "../../etc/passwd"`},
		{"only unknown", []string{"--only", "cpu"}, 2, `"cpu"`},
		{"only huge", []string{"--only", long}, 2, "unknown object type"},
		{"only with xml", []string{"--only", "core", "--of", "xml"}, 2, "--of xml"},
		{"json and of", []string{"--json", "--of", "synthetic"}, 2, "--of synthetic"},
		{"memory child not NUMA", []string{"--synthetic", "pack:2 [core] pu:1"}, 2, `"[core]"`},
		{"memory child unclosed", []string{"--synthetic", "pack:2 [numa pu:1"}, 2, "closing"},
		{"memory children too many", []string{"--synthetic", "core:65536 [numa] [numa] pu:1"}, 2, "NUMA nodes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"topo"}, c.args...)
			if !strings.HasPrefix(c.args[0], "--synthetic") {
				args = append(args, "--synthetic", "pack:2 core:2 pu:1")
			}
			r := runCLI(t, nil, args...)
			var problems []string
			if r.timedOut {
				problems = append(problems, "hang")
			} else if r.code != c.code {
				problems = append(problems, fmt.Sprintf("exit code %d, want %d", r.code, c.code))
			}
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "barriertune: ") || !strings.Contains(lines[0], c.want) {
				problems = append(problems, "stderr is not one line \"barriertune: ...\" naming "+c.want)
			}
			if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic") {
				problems = append(problems, "panic")
			}
			if r.maxRSS > 256<<20 {
				problems = append(problems, fmt.Sprintf("peak memory %d MiB", r.maxRSS>>20))
			}
			if len(problems) > 0 {
				t.Errorf("%s\nstderr: %s", strings.Join(problems, "; "), truncate(r.stderr, 300))
			}
		})
	}
}
