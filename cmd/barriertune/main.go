// Command barriertune finds the fastest thread barrier for this machine:
// it discovers the CPU tree, enumerates thread placements, measures every
// barrier algorithm and writes the winners for compilers, runtimes and Go
// programs. Run `barriertune --help` for the commands.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "barriertune:", err)
		os.Exit(1)
	}
}
