package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// testSystemEnv names, for this package's tests and the CLI they run as a
// subprocess (childEnv), the system-wide results file the lookup reads
// instead of results.SystemPath: a test never reads the machine's real
// file, which `sudo barriertune check --system` may have written.
const testSystemEnv = "BARRIERTUNE_TEST_SYSTEM_FILE"

// isolate gives the tests a home, config directory and system-wide
// results file of their own, under a temporary directory: $HOME and
// $XDG_CONFIG_HOME point there, $BARRIERTUNE_RESULTS, $BARRIERTUNE_FORCE
// and $XDG_CONFIG_DIRS are unset, and testSystemEnv names a system file in
// a directory that does not exist yet. A test that needs one of them sets
// it itself (t.Setenv). cleanup removes the directory.
func isolate() (cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "barriertune-test-")
	if err != nil {
		return nil, err
	}
	for _, d := range []string{"home", "config"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	for k, v := range map[string]string{
		"HOME":            filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME": filepath.Join(dir, "config"),
		testSystemEnv:     filepath.Join(dir, "etc", "barriertune", "results.json"),
	} {
		os.Setenv(k, v)
	}
	for _, k := range []string{"BARRIERTUNE_RESULTS", "BARRIERTUNE_FORCE", "XDG_CONFIG_DIRS"} {
		os.Unsetenv(k)
	}
	return func() { os.RemoveAll(dir) }, nil
}

// testSystemFile is the system-wide results file of the tests (isolate):
// never results.SystemPath. Without testSystemEnv (a test binary run
// without TestMain) it is a file in a directory that does not exist.
func testSystemFile() string {
	if p := os.Getenv(testSystemEnv); p != "" {
		return p
	}
	return filepath.Join(os.TempDir(), "barriertune-test-no-system-dir", "results.json")
}

// testRootCmd is the command tree the tests run: its lookup reads
// testSystemFile, not the machine's system-wide file.
func testRootCmd() *cobra.Command { return newRootCmd(testSystemFile()) }

// execLine runs the CLI as main does, with the tests' system-wide file,
// and returns the exit code, stdout and stderr.
func execLine(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := execute(context.Background(), testSystemFile(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}
