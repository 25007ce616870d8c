//go:build !unix

package child

import "os/exec"

// setGroup: no process groups here.
func setGroup(*exec.Cmd) {}

// killGroup kills cmd alone (no process groups here).
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}
