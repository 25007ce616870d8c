//go:build !unix

package ompcheck

import (
	"context"
	"os/exec"
	"sync/atomic"
	"time"
)

// runGroup runs name; when ctx ends first, the process is killed (no
// process groups here).
func runGroup(ctx context.Context, env []string, name string, args ...string) (output, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	var stdout, stderr capBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var killed atomic.Bool
	cmd.Cancel = func() error {
		killed.Store(true)
		return cmd.Process.Kill()
	}
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	return output{stdout: stdout.Bytes(), stderr: stderr.Bytes(), killed: killed.Load()}, err
}
