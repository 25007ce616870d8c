//go:build !unix

package mpicheck

import "os/exec"

// setGroup: no process groups here.
func setGroup(*exec.Cmd) {}

// killGroup kills the launcher (no process groups here).
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}
