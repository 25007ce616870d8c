//go:build !unix

package main

import (
	"errors"
	"os"
	"os/exec"
)

// execProgram runs prog to its end and exits with its status (no exec
// here).
func execProgram(prog string, argv, env []string) error {
	c := exec.Command(prog, argv[1:]...)
	c.Env, c.Stdin, c.Stdout, c.Stderr = env, os.Stdin, os.Stdout, os.Stderr
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		os.Exit(ee.ExitCode())
	}
	if err != nil {
		return programError(prog, err)
	}
	os.Exit(0)
	return nil
}
