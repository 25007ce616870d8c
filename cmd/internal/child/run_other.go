//go:build !unix

package child

import (
	"context"
	"os/exec"
	"sync/atomic"
	"time"
)

// Run runs name (env: its environment; nil, this process's); when ctx ends first, the process is killed (no
// process groups here).
func Run(ctx context.Context, env []string, name string, args ...string) (Output, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var killed atomic.Bool
	cmd.Cancel = func() error {
		killed.Store(true)
		return cmd.Process.Kill()
	}
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	return Output{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Killed: killed.Load()}, err
}
