//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	resultspkg "github.com/barriertune/barriertune/results"
)

// TestSignalExitCodes interrupts long bench and check runs as the user
// would: SIGINT must give exit code 130 and SIGTERM 143, after printing or
// writing what was measured, with one line on stderr saying so.
func TestSignalExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the CLI as a subprocess for seconds; skipped with -short")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	results := t.TempDir() + "/r.json"
	for _, c := range []struct {
		name    string
		sig     syscall.Signal
		code    int
		args    []string
		started string // a stderr line starting with this shows the handler is installed
		stdout  string // what was measured is printed
		last    string // the last stderr line contains this
	}{
		{"bench SIGINT", syscall.SIGINT, 130, []string{"bench", "--algorithm", "central", "--threads", "2", "--samples", "100000", "--sample-time", "1ms"}, "bench: ", "central", "interrupted by SIGINT"},
		{"bench SIGTERM", syscall.SIGTERM, 143, []string{"bench", "--algorithm", "central", "--threads", "2", "--samples", "100000", "--sample-time", "1ms"}, "bench: ", "central", "interrupted by SIGTERM"},
		{"check SIGINT", syscall.SIGINT, 130, []string{"check", "-o", results, "--threads", "2", "--sample-time", "20ms", "--budget", "10m"}, "check: ", "results written to " + results, "continue with --resume"},
		// Later rounds: the first pass is quick, the signal comes during
		// the rounds after it; the file must say it is partial.
		{"check SIGTERM later rounds", syscall.SIGTERM, 143, []string{"check", "-o", results, "--threads", "2", "--algorithms", "central", "--sample-time", "1ms", "--budget", "10m"}, "check: ", "results written to " + results, "continue with --resume"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, exe, c.args...)
			cmd.Env = append(os.Environ(), childEnv+"=1", "XDG_CONFIG_HOME="+t.TempDir())
			var out bytes.Buffer
			cmd.Stdout = &out
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(stderr)
			var lines []string
			for sc.Scan() {
				lines = append(lines, sc.Text())
				if strings.HasPrefix(sc.Text(), c.started) {
					break
				}
			}
			time.Sleep(300 * time.Millisecond) // let it measure something
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			for sc.Scan() {
				lines = append(lines, sc.Text())
			}
			cmd.Wait()
			if ctx.Err() != nil {
				t.Fatalf("still running 60s after %v", c.sig)
			}
			if got := cmd.ProcessState.ExitCode(); got != c.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", got, c.code, strings.Join(lines, "\n"))
			}
			if len(lines) == 0 || !strings.Contains(lines[len(lines)-1], c.last) || !strings.HasPrefix(lines[len(lines)-1], "barriertune: ") {
				t.Errorf("last stderr line should say %q:\n%s", c.last, strings.Join(lines, "\n"))
			}
			if !strings.Contains(out.String(), c.stdout) {
				t.Errorf("stdout lacks %q:\n%s", c.stdout, out.String())
			}
			if c.args[0] == "check" {
				f, err := resultspkg.Read(results + ".partial")
				if err != nil {
					f, err = resultspkg.Read(results)
				}
				if err != nil {
					t.Fatal(err)
				}
				if !f.Partial || f.RoundsDone >= f.RoundsPlanned {
					t.Errorf("interrupted check wrote partial %v, rounds %d of %d", f.Partial, f.RoundsDone, f.RoundsPlanned)
				}
			}
		})
	}
}
