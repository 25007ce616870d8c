package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestHelpTextRuns: every path an example names (an input, not an output)
// exists from the repository root, where the README's commands run, and
// sets' example runs there (formerly it named testdata/paper-example3.json,
// which exists only in cmd/internal/configsets); no help names ../shared, a
// path beside the repository, for a format docs/ describes; the help says
// each default once.
func TestHelpTextRuns(t *testing.T) {
	root := filepath.Join("..", "..")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		help := c.Long + c.Example + c.LocalFlags().FlagUsages()
		if strings.Contains(help, "../shared") {
			t.Errorf("%s: the help names ../shared", c.CommandPath())
		}
		for _, line := range strings.Split(c.Example, "\n") {
			fields := strings.Fields(line)
			for i, f := range fields {
				if i > 0 && (fields[i-1] == "-o" || fields[i-1] == "--output" || fields[i-1] == "--plot" || fields[i-1] == ">") {
					continue
				}
				ext := filepath.Ext(f)
				if !strings.Contains(f, "/") || filepath.IsAbs(f) || strings.HasPrefix(f, "~") || (ext != ".json" && ext != ".xml" && ext != ".csv") {
					continue
				}
				if _, err := os.Stat(filepath.Join(root, f)); err != nil {
					t.Errorf("%s: example %q names %s, which is not in the repository", c.CommandPath(), strings.TrimSpace(line), f)
				}
			}
		}
	}
	walk(testRootCmd())
	t.Chdir(root)
	if code, out, errOut := execLine("sets", "--topology", "cmd/internal/configsets/testdata/paper-example3.json", "--method", "paper"); code != 0 || out == "" {
		t.Errorf("sets' example from the repository root: exit %d: %s", code, errOut)
	}
	// bench --policy's default was said twice ("(default: ...)" and cobra's
	// `(default "auto")`).
	var b bytes.Buffer
	cmd := testRootCmd()
	cmd.SetOut(&b)
	cmd.SetArgs([]string{"bench", "--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `(default "auto")`) || strings.Contains(b.String(), "park at once") {
		t.Errorf("bench --help says the policy default twice, or calls auto 'park at once':\n%s", b.String())
	}
}
