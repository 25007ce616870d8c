//go:build unix

package child

import (
	"context"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"
)

// Run runs name (env: its environment; nil, this process's) in a process group of its own; when ctx ends first,
// the whole group (the program and any thread or child it made) is killed
// by the group's id, and the run waits for it.
func Run(ctx context.Context, env []string, name string, args ...string) (Output, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var killed atomic.Bool
	cmd.Cancel = func() error {
		killed.Store(true)
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	return Output{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Killed: killed.Load()}, err
}
