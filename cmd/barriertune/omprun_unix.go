//go:build unix

package main

import (
	"syscall"
)

// execProgram replaces this process with prog.
func execProgram(prog string, argv, env []string) error {
	if err := syscall.Exec(prog, argv, env); err != nil {
		return programError(prog, err)
	}
	return nil
}
