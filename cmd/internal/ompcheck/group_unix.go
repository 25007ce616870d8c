//go:build unix

package ompcheck

import (
	"context"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"
)

// runGroup runs name in a process group of its own; when ctx ends first,
// the whole group (the program and any thread or child it made) is killed
// by the group's id, and the run waits for it.
func runGroup(ctx context.Context, env []string, name string, args ...string) (output, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr capBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var killed atomic.Bool
	cmd.Cancel = func() error {
		killed.Store(true)
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	return output{stdout: stdout.Bytes(), stderr: stderr.Bytes(), killed: killed.Load()}, err
}
