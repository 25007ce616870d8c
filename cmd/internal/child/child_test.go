package child

import (
	"bytes"
	"context"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A child that outlives the context is killed with what it started (its
// process group), promptly, and says so; its output is capped.
func TestRunKillsTheGroup(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil || runtime.GOOS == "windows" {
		t.Skip("no sh")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	// The grandchild holds the output pipe open: only a group kill ends
	// the run before WaitDelay.
	out, err := Run(ctx, nil, "sh", "-c", "echo started; sleep 30 & sleep 30")
	if err == nil || !out.Killed {
		t.Errorf("err %v, killed %v: want a killed run", err, out.Killed)
	}
	if el := time.Since(start); el > 1500*time.Millisecond {
		t.Errorf("returned after %v: the group was not killed", el)
	}
	if string(out.Stdout) != "started\n" {
		t.Errorf("stdout %q", out.Stdout)
	}
	out, err = Run(context.Background(), nil, "sh", "-c", "head -c 200000 /dev/zero; echo oops >&2; exit 3")
	if err == nil || out.Killed || len(out.Stdout) != MaxOutput || !bytes.Equal(out.Stderr, []byte("oops\n")) {
		t.Errorf("err %v, killed %v, %d bytes of stdout (want %d), stderr %q", err, out.Killed, len(out.Stdout), MaxOutput, out.Stderr)
	}
	if got := out.Combined(); len(got) != MaxOutput+5 || !strings.HasSuffix(string(got), "oops\n") {
		t.Errorf("combined: %d bytes", len(got))
	}
}

func TestFirstLines(t *testing.T) {
	if got := FirstLines([]byte("\n a\nb\nc\n"), 2); got != "a | b" {
		t.Errorf("%q", got)
	}
	if got := FirstLines(nil, 1); got != "" {
		t.Errorf("%q", got)
	}
}

// A started child answers on its lines; Kill ends it with what it
// started (a grandchild holding the output), promptly.
func TestStartTalksAndKills(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil || runtime.GOOS == "windows" {
		t.Skip("no sh")
	}
	p, err := Start(nil, "sh", "-c", `read x; echo oops >&2; echo "got $x"; sleep 30 & sleep 30`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stdin.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-p.Lines:
		if l != "got ping" {
			t.Errorf("line %q", l)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no answer")
	}
	start := time.Now()
	p.Kill()
	p.Wait()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Kill and Wait took %s", d)
	}
	if string(p.Stderr()) != "oops\n" {
		t.Errorf("stderr %q", p.Stderr())
	}
}

// TestCompile: the source is written and compiled into dir (the flags
// before -o); a compiler that fails returns its output for the message.
func TestCompile(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no cc")
	}
	dir := t.TempDir()
	bin, _, err := Compile(context.Background(), cc, []byte("int main(void) { return 3; }\n"), dir, "prog", "-O2")
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Command(bin).Run(); err == nil || err.(*exec.ExitError).ExitCode() != 3 {
		t.Errorf("the built program: %v, want exit 3", err)
	}
	_, out, err := Compile(context.Background(), cc, []byte("int main(void) { return }\n"), dir, "bad")
	if err == nil || !strings.Contains(string(out.Combined()), "bad.c") {
		t.Errorf("a broken source: %v, output %q; want the compiler's error naming bad.c", err, out.Combined())
	}
}
