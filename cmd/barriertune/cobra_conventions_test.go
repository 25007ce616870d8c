package main

import (
	"strings"
	"testing"
)

// TestStrayArgumentsAndSuggestions: an argument given to a command that
// takes none is a stray argument, named, with what the command accepts
// (cobra called it an unknown command); a misspelt command gets cobra's
// "did you mean" (it suggested nothing).
func TestStrayArgumentsAndSuggestions(t *testing.T) {
	out := t.TempDir() + "/x.json"
	for _, c := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"check", "-o", out, "extra"}, []string{`stray argument "extra"`, "takes flags only", "barriertune check --help"}, []string{"unknown command"}},
		{[]string{"sets", "a", "b"}, []string{`stray arguments "a" "b"`}, []string{"unknown command"}},
		{[]string{"chekc"}, []string{`unknown command "chekc"`, `did you mean "check"?`}, nil},
		{[]string{"shwo"}, []string{`did you mean "show"?`}, nil},
		// A mistyped command with a flag after it: the command is the error, not the flag.
		{[]string{"shwo", "--json"}, []string{`unknown command "shwo"`, `did you mean "show"?`}, []string{"unknown flag"}},
		{[]string{"-v", "chekc", "-o", out}, []string{`unknown command "chekc"`, `did you mean "check"?`}, []string{"unknown shorthand"}},
		{[]string{"--jsn"}, []string{"unknown flag: --jsn"}, []string{"unknown command"}},
		{[]string{"show", "--jsn"}, []string{"unknown flag: --jsn"}, []string{"unknown command"}},
		{[]string{"frobnicate"}, []string{`unknown command "frobnicate"`, "commands: bench, check"}, []string{"did you mean"}},
		{[]string{"help", "chekc"}, []string{`unknown help topic "chekc"; did you mean "check"?`}, nil},
	} {
		code, stdout, stderr := execLine(c.args...)
		if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and one line", c.args, code, stdout, stderr, exitUsage)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%q: %q lacks %q", c.args, stderr, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(stderr, n) {
				t.Errorf("%q: %q says %q", c.args, stderr, n)
			}
		}
	}
}

// TestShowVerboseSaysTheFileOnce: show -v names the file it read once
// (its "file:" line), not also on stderr; with --json, whose output has no
// such line, -v says it on stderr.
func TestShowVerboseSaysTheFileOnce(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"show", "-v", exportTestdata}, 1},
		{[]string{"show", "-v", "--threads", "2", exportTestdata}, 1},
		{[]string{"show", "-v", "--json", exportTestdata}, 1},
	} {
		code, stdout, stderr := execLine(c.args...)
		if n := strings.Count(stdout+stderr, exportTestdata+" (given)"); code != 0 || n != c.want {
			t.Errorf("%q: exit %d, the file named %d times, want %d:\n%s%s", c.args, code, n, c.want, stdout, stderr)
		}
	}
}
