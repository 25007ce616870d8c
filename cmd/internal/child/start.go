package child

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"time"
)

// Proc is a child started by Start that the caller talks to: in a process
// group of its own where the system has them, its standard input a pipe,
// its standard output delivered line by line, its standard error capped.
type Proc struct {
	cmd    *exec.Cmd
	stderr capped
	// Stdin writes to the child's standard input.
	Stdin io.WriteCloser
	// Lines are the child's standard output, a line at a time, closed
	// when the child closes it.
	Lines <-chan string
}

// Start starts name (env: its environment; nil, this process's) with its
// standard input and output as pipes. The caller ends it with Kill (the
// whole group) or by closing Stdin, then calls Wait.
func Start(env []string, name string, args ...string) (*Proc, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	setGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	p := &Proc{cmd: cmd}
	cmd.Stderr = &p.stderr
	var err error
	if p.Stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("a pipe to %s: %w", name, err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("a pipe from %s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lines := make(chan string, 64)
	p.Lines = lines
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return p, nil
}

// Kill kills the child's process group (the child and everything it
// started), or the child alone where there are no groups.
func (p *Proc) Kill() { killGroup(p.cmd) }

// Wait drains the child's output and waits for it to end; Stderr is
// complete after it.
func (p *Proc) Wait() error {
	for range p.Lines {
	}
	return p.cmd.Wait()
}

// Stderr is what the child wrote on standard error (the first MaxOutput
// bytes); read it after Wait.
func (p *Proc) Stderr() []byte { return p.stderr.Bytes() }
