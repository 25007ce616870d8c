//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExportVerifyInterrupted: Ctrl-C during `export --verify` stops the
// launch it is waiting on (an MPI launcher left behind would hold its
// ranks), removes its build directory, and exits 130 saying the file is
// written and its verification did not finish. Before, the signal's
// default action killed barriertune alone, leaving the launcher and the
// build directory. The MPI wrappers here are stand-ins on $PATH: a
// compiler that writes a script, a launcher that never finishes.
func TestExportVerifyInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the CLI as a subprocess; skipped with -short")
	}
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, tmp := t.TempDir(), t.TempDir()
	pidFile := filepath.Join(tmp, "launcher.pid")
	scripts := map[string]string{
		// mpicc.mpich ... -o OUT SRC: OUT is a script.
		"mpicc.mpich":  `while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done; printf '#!/bin/sh\nexit 0\n' > "$out"; chmod +x "$out"`,
		"mpirun.mpich": `echo $$ > ` + pidFile + `; exec sleep 60`,
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	results := writeResultsWithMPI(t, filepath.Join(tmp, "r.json"), map[string]any{"loop": "l", "seconds": 9, "share": "s", "implementations": []any{
		map[string]any{"name": "mpich", "compiler": "mpicc.mpich", "launcher": "mpirun.mpich", "version": "MPICH 4.0.2",
			"counts": []any{map[string]any{"ranks": 2, "default_ns": 1400, "best": "MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM=mpir", "best_ns": 900, "margin_pct": 55, "test": "p", "settings": 3, "runs": 30}}},
	}})
	out := filepath.Join(tmp, "barrier.env")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "export", "--format", "mpich", "-o", out, "--verify", results)
	cmd.Env = append(os.Environ(), childEnv+"=1", "XDG_CONFIG_HOME="+t.TempDir(), "TMPDIR="+tmp, "PATH="+bin+":"+os.Getenv("PATH"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(30 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the stand-in launcher never started: %s", stderr.String())
		}
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("still running after SIGINT: %s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(stderr.String(), "during --verify") {
		t.Errorf("exit %d, stderr %q; want 130 saying the verification did not finish", code, stderr.String())
	}
	// The launcher is gone (a zombie reaped by init at most).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			break
		}
		if syscall.Kill(pid, 0) != nil {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the launcher (pid %d) outlived barriertune", pid)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "barriertune-verify-*")); len(left) > 0 {
		t.Errorf("build directories left behind: %v", left)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("the export file: %v", err)
	}
}
