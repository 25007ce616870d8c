//go:build unix

package main

import (
	"fmt"
	"syscall"
)

// execProgram replaces this process with prog.
func execProgram(prog string, argv, env []string) error {
	if err := syscall.Exec(prog, argv, env); err != nil {
		return fmt.Errorf("omp-run: exec %s: %w", prog, err)
	}
	return nil
}
