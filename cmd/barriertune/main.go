// Command barriertune finds the fastest thread barrier for this machine:
// it discovers the CPU tree, enumerates thread placements, measures every
// barrier algorithm and writes the winners for compilers, runtimes and Go
// programs. Run `barriertune --help` for the commands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/barriertune/barriertune/internal/text"
	"github.com/barriertune/barriertune/results"
)

// maxErrorLine caps the one error line a failing command prints, in
// bytes with the "barriertune: " prefix.
const maxErrorLine = 480

func main() {
	os.Exit(execute(context.Background(), results.SystemPath, os.Args[1:], os.Stdout, os.Stderr))
}

// execute runs the command line args, with systemFile as the system-wide
// results file (results.SystemPath for the binary), and returns the exit
// code; a failing command prints exactly one line, "barriertune: ERROR",
// on stderr.
func execute(ctx context.Context, systemFile string, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(systemFile)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err != nil {
		msg := strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")
		// The errors elide long values themselves; this is the last
		// resort, so that no input is ever echoed whole.
		fmt.Fprintln(stderr, "barriertune:", text.Elide(msg, maxErrorLine-len("barriertune: ")))
	}
	return exitCode(err)
}
