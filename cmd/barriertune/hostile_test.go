//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/barriertune/barriertune/internal/cpuhog"
)

// childEnv makes the test binary run barriertune's main instead of the
// tests, so that the CLI can be run as a subprocess without a go build.
const childEnv = "BARRIERTUNE_TEST_RUN_MAIN"

// childMemLimit is the address-space limit of the subprocess (RLIMIT_AS):
// an input that tries to allocate what it names dies instead of paging.
const childMemLimit = 2 << 30

func TestMain(m *testing.M) {
	cpuhog.Main()
	if os.Getenv(childEnv) == "1" {
		if !raceEnabled { // the race detector reserves terabytes of address space
			lim := &syscall.Rlimit{Cur: childMemLimit, Max: childMemLimit}
			if err := syscall.Setrlimit(syscall.RLIMIT_AS, lim); err != nil {
				os.Stderr.WriteString("cannot limit memory: " + err.Error() + "\n")
				os.Exit(99)
			}
		}
		os.Exit(execute(context.Background(), testSystemFile(), os.Args[1:], os.Stdout, os.Stderr))
	}
	cleanup, err := isolate()
	if err != nil {
		os.Stderr.WriteString("cannot isolate the tests from this machine's results files: " + err.Error() + "\n")
		os.Exit(99)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// cliResult is what one subprocess run of the CLI left.
type cliResult struct {
	code           int
	stdout, stderr string
	maxRSS         int64 // bytes
	elapsed        time.Duration
	timedOut       bool // killed after cliTimeout: a hang
}

// cliTimeout bounds one run of the CLI on bad input.
const cliTimeout = 5 * time.Second

// runCLI runs barriertune as a subprocess with extra environment, under
// the memory limit and a timeout.
func runCLI(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(append(os.Environ(), childEnv+"=1", "XDG_CONFIG_HOME="+t.TempDir()), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err = cmd.Run()
	res := cliResult{stdout: out.String(), stderr: errOut.String(), elapsed: time.Since(start)}
	if ctx.Err() != nil {
		res.timedOut = true
		return res
	}
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("%v: %v", args, err)
	}
	res.code = cmd.ProcessState.ExitCode()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.maxRSS = int64(ru.Maxrss) // an int32 on 386 and arm
		if runtime.GOOS != "darwin" { // kilobytes elsewhere, bytes on darwin
			res.maxRSS *= 1024
		}
	}
	return res
}

// TestHostileInputs runs the CLI on inputs a careless or hostile user
// gives: each must fail with the expected exit code and exactly one line
// on stderr that names the value, with no panic trace, in bounded memory
// and time.
func TestHostileInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the CLI as a subprocess 30 times; skipped with -short")
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	truncJSON := write("trunc.json", `{"type":"Machine","children":[{"type":"Pack`)
	truncXML := write("trunc.xml", `<?xml version="1.0"?><topology><object type="Machine" os_index="0"><object type="Pa`)
	truncResults := write("trunc-results.json", `{"schema": "barriertune.results/v1", "tool": {"name": "barr`)
	words := strings.TrimSuffix(strings.Repeat("0x00000001,", 300_000), ",")
	hugeMask := write("huge-mask.xml", `<topology><object type="Machine" complete_cpuset="`+words+`"><object type="PU" os_index="0"/></object></topology>`)
	var manyPUs strings.Builder
	manyPUs.WriteString("<topology>\n<object type=\"Machine\">\n")
	for i := range 80_000 {
		fmt.Fprintf(&manyPUs, "<object type=\"PU\" os_index=\"%d\"/>\n", i)
	}
	manyPUs.WriteString("</object>\n</topology>\n")
	manyXML := write("many-pus.xml", manyPUs.String())
	// Outputs that are not regular files. The device is reached through a
	// link in dir: were it replaced, the link would be, not /dev/null.
	devLink := filepath.Join(dir, "null.csv")
	if err := os.Symlink(os.DevNull, devLink); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink(filepath.Join(dir, "nowhere", "x"), dangling); err != nil {
		t.Fatal(err)
	}
	fifoSVG := filepath.Join(dir, "fifo.svg")
	if err := syscall.Mkfifo(fifoSVG, 0o600); err != nil {
		t.Fatal(err)
	}
	measured, err := os.ReadFile(filepath.Join("..", "..", "results", "testdata", "check-2cpu.json"))
	if err != nil {
		t.Fatal(err)
	}
	measuredPath := write("measured.json", string(measured))
	matrix := filepath.Join("..", "internal", "model", "testdata", "vcpu16-matrix.csv")
	results2 := filepath.Join("..", "..", "results", "testdata", "check-2cpu.json")
	t.Cleanup(func() { // after every case, the parallel ones too
		if fi, err := os.Lstat(devLink); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the link to %s was replaced", os.DevNull)
		}
		for _, p := range []string{fifo, fifoSVG} {
			if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("the FIFO %s was replaced", p)
			}
		}
		if got, err := os.ReadFile(measuredPath); err != nil || !bytes.Equal(got, measured) {
			t.Errorf("the measured results file changed (%v)", err)
		}
	})
	simulate := func(out string) []string {
		return []string{"check", "--simulate", "--synthetic", "pack:1 core:2 pu:1", "--budget", "2s", "--threads", "2", "-o", out}
	}

	for _, c := range []struct {
		name  string
		env   []string
		args  []string
		code  int    // expected exit code
		want  string // the stderr line names this
		owner string // helper whose branch fixes it; the case skips until merged
	}{
		{name: "synthetic garbage", args: []string{"topo", "--synthetic", "[x]"}, code: 2, want: `"[x]"`},
		{name: "synthetic huge count", args: []string{"topo", "--synthetic", "core:4611686018427387904"}, code: 2, want: "4611686018427387904"},
		{name: "synthetic of 100 KB", args: []string{"topo", "--synthetic", strings.Repeat("core:2x", 15_000)}, code: 2, want: "bytes) … "},
		{name: "synthetic 60,000 parentheses", args: []string{"topo", "--synthetic", "core:2" + strings.Repeat("(", 60_000)}, code: 2, want: "unbalanced '('"},
		{name: "xml cpuset of 300,000 words", args: []string{"topo", "--xml", hugeMask}, code: 1, want: "300000 words"},
		{name: "xml of 80,000 PUs", args: []string{"topo", "--xml", manyXML}, code: 1, want: "more than 65536 PU objects (line 65539)"},
		{name: "bench cpus of 100 KB", args: []string{"bench", "--cpus", strings.Repeat("0,", 50_000) + "x"}, code: 2, want: "--cpus"},
		{name: "synthetic of 65,536 PUs", args: []string{"topo", "--synthetic", "pack:256 core:256"}, code: 2, want: "65536 PUs in 131329 objects would take about 2056 MiB"},
		{name: "synthetic zero count", args: []string{"topo", "--synthetic", "core:0 pu:2"}, code: 2, want: "core:0"},
		{name: "xml /dev/zero", args: []string{"topo", "--xml", "/dev/zero"}, code: 1, want: "/dev/zero"},
		{name: "topology /dev/zero", args: []string{"topo", "--topology", "/dev/zero"}, code: 1, want: "/dev/zero"},
		{name: "xml fifo", args: []string{"topo", "--xml", fifo}, code: 1, want: "fifo"},
		{name: "topology fifo", args: []string{"topo", "--topology", fifo}, code: 1, want: "fifo"},
		{name: "topology truncated", args: []string{"topo", "--topology", truncJSON}, code: 1, want: "trunc.json"},
		{name: "xml truncated", args: []string{"topo", "--xml", truncXML}, code: 1, want: "trunc.xml"},
		{name: "sets bad limit", args: []string{"sets", "--limit", "0"}, code: 2, want: "--limit 0"},
		{name: "sets negative threads", args: []string{"sets", "--synthetic", "pu:2", "--threads", "-1"}, code: 2, want: "--threads -1"},
		{name: "sets limit not a number", args: []string{"sets", "--limit", "x"}, code: 2, want: `--limit "x": not a whole number`},
		{name: "check budget without unit", args: []string{"check", "--budget", "5"}, code: 2, want: `--budget "5": not a duration`},
		{name: "bench cpus huge range", args: []string{"bench", "--cpus", "0-1000000000"}, code: 2, want: "1000000000"},
		{name: "bench threads huge", args: []string{"bench", "--threads", "1000000000"}, code: 2, want: "--threads 1000000000"},
		{name: "bench threads zero", args: []string{"bench", "--threads", "0"}, code: 2, want: "--threads 0"},
		{name: "bench cpus twice", args: []string{"bench", "--cpus", "0,0"}, code: 2, want: "CPU 0 is listed twice"},
		{name: "bench samples zero", args: []string{"bench", "--samples", "0"}, code: 2, want: "--samples 0"},
		{name: "bench instances zero", args: []string{"bench", "--instances", "0"}, code: 2, want: "--instances 0"},
		{name: "bench instances too many", args: []string{"bench", "--instances", "17"}, code: 2, want: "--instances 17: want 1..16"},
		{name: "bench sample-time negative", args: []string{"bench", "--sample-time", "-1s"}, code: 2, want: "--sample-time -1s"},
		{name: "bench algorithm twice", args: []string{"bench", "--algorithm", "central,central"}, code: 2, want: `"central" is given twice`},
		{name: "bench unknown policy", args: []string{"bench", "--policy", "busy"}, code: 2, want: `"busy"`},
		{name: "check threads huge range", args: []string{"check", "--threads", "2-1000000000"}, code: 2, want: "1000000000"},
		{name: "check threads too many in all", args: []string{"check", "--plan", "--threads", "2-65536", "--synthetic", "pack:2 core:2"}, code: 2, want: "2147516415 threads in all; a check plans at most 131072"},
		{name: "check plan of 8193 PUs", args: []string{"check", "--plan", "--synthetic", "core:8193 pu:1"}, code: 1, want: "the topology has 8193 PUs, more than the 8192 CPUs"},
		{name: "check simulate of 8193 PUs", args: []string{"check", "--simulate", "-o", filepath.Join(dir, "sim.json"), "--synthetic", "core:8193 pu:1"}, code: 1, want: "planning and simulating accept 1..8192 PUs"},
		{name: "sets count of a tree too wide to count", args: []string{"sets", "--count", "--synthetic", "pack:2 core:2048"}, code: 1, want: "configuration sets of 4096 PUs would take about"},
		{name: "latency cpus with from", args: []string{"latency", "--from", matrix, "--cpus", "5,6"}, code: 2, want: `--cpus "5,6" with --from: the matrix read names its own CPUs`},
		{name: "latency cpus twice", args: []string{"latency", "--cpus", "0,0"}, code: 2, want: "CPU 0 is listed twice, which oversubscribes it (give each CPU once)"},
		{name: "bench --plot fifo", args: []string{"bench", "--samples", "3", "--plot", fifoSVG}, code: 1, want: "--plot " + fifoSVG + " is not a regular file"},
		{name: "check threads twice", args: []string{"check", "--threads", "2,2"}, code: 2, want: "thread count 2 is given twice"},
		{name: "check budget zero", args: []string{"check", "--budget", "0"}, code: 2, want: "--budget 0s"},
		{name: "check budget negative", args: []string{"check", "--budget", "-1s"}, code: 2, want: "--budget -1s"},
		{name: "check sets-limit zero", args: []string{"check", "--sets-limit", "0"}, code: 2, want: "--sets-limit 0"},
		{name: "check algorithms twice", args: []string{"check", "--algorithms", "central,mcs,central"}, code: 2, want: `"central" is given twice`},
		{name: "check resume truncated", args: []string{"check", "--threads", "2", "--resume", truncResults}, code: 1, want: "trunc-results.json"},
		{name: "check -o /dev/zero", args: []string{"check", "--threads", "2", "-o", "/dev/zero"}, code: 1, want: "/dev/zero is not a regular file"},
		{name: "check -o in a missing file's dir", args: []string{"check", "--threads", "2", "-o", truncXML + "/r.json"}, code: 1, want: "is not a directory"},
		{name: "check results via env /dev/zero", env: []string{"BARRIERTUNE_RESULTS=/dev/zero"}, args: []string{"check", "--threads", "2"}, code: 1, want: "/dev/zero is not a regular file"},
		{name: "show /dev/zero via env", env: []string{"BARRIERTUNE_RESULTS=/dev/zero"}, args: []string{"show"}, code: 1, want: "/dev/zero"},
		{name: "check resume fifo", args: []string{"check", "--threads", "2", "--resume", fifo}, code: 1, want: "fifo is not a regular file"},
		{name: "check resume fifo to -o", args: []string{"check", "--threads", "2", "--resume", fifo, "-o", filepath.Join(dir, "out.json")}, code: 1, want: "fifo"},
		{name: "show fifo", args: []string{"show", fifo}, code: 1, want: "fifo"},
		{name: "show truncated", args: []string{"show", truncResults}, code: 1, want: "trunc-results.json"},
		{name: "latency from /dev/zero", args: []string{"latency", "--from", "/dev/zero"}, code: 1, want: "/dev/zero is not a regular file"},
		{name: "latency from fifo", args: []string{"latency", "--from", fifo}, code: 1, want: "fifo is not a regular file"},
		{name: "latency from truncated", args: []string{"latency", "--from", truncXML}, code: 1, want: "trunc"},
		{name: "latency samples zero", args: []string{"latency", "--samples", "0"}, code: 2, want: "--samples 0"},
		{name: "latency cpus huge", args: []string{"latency", "--cpus", "0-1000000000"}, code: 2, want: "--cpus"},
		{name: "model latency fifo", args: []string{"model", "--latency", fifo}, code: 1, want: "fifo is not a regular file"},
		{name: "model threads huge", args: []string{"model", "--latency", truncXML, "--threads", "1000000000"}, code: 2, want: "--threads 1000000000"},
		{name: "model threads zero", args: []string{"model", "--measured", "--threads", "0"}, code: 2, want: "--threads 0"},
		{name: "model fan-in one", args: []string{"model", "--measured", "--fan-in", "1"}, code: 2, want: "--fan-in 1"},
		{name: "model both sources", args: []string{"model", "--measured", "--latency", truncXML}, code: 2, want: "exactly one"},
		{name: "latency -o a device", args: []string{"latency", "--from", matrix, "-o", devLink}, code: 1, want: "null.csv is not a regular file (it is a character device)"},
		{name: "latency -o fifo", args: []string{"latency", "--from", matrix, "-o", fifo}, code: 1, want: "fifo is not a regular file"},
		{name: "latency -o a directory", args: []string{"latency", "--from", matrix, "-o", dir}, code: 1, want: "is a directory"},
		{name: "latency -o a dangling link", args: []string{"latency", "--from", matrix, "-o", dangling}, code: 1, want: "dangling.json is a symbolic link to nothing"},
		{name: "latency -o in a missing dir", args: []string{"latency", "--from", matrix, "-o", filepath.Join(dir, "none", "m.csv")}, code: 1, want: "does not exist"},
		{name: "plot -o fifo", args: []string{"plot", "-o", fifoSVG, results2}, code: 1, want: "fifo.svg is not a regular file"},
		{name: "check --simulate -o a device", args: simulate(devLink), code: 1, want: "null.csv is not a regular file"},
		{name: "check --simulate -o fifo", args: simulate(fifo), code: 1, want: "fifo is not a regular file"},
		{name: "check --simulate -o in a missing dir", args: simulate(filepath.Join(dir, "none", "r.json")), code: 1, want: "does not exist"},
		{name: "check --simulate -o measured results", args: simulate(measuredPath), code: 1, want: "measured.json holds measured results"},
		{name: "unknown command", args: []string{"frobnicate"}, code: 2, want: `"frobnicate"`},
		{name: "unknown flag", args: []string{"topo", "--frobnicate"}, code: 2, want: "--frobnicate"},
		{name: "two sources", args: []string{"topo", "--synthetic", "pu:2", "--xml", truncXML}, code: 2, want: "choose one topology source"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if slices.Contains(c.args, fifo) || slices.Contains(c.args, fifoSVG) {
				t.Parallel() // a hang waits out the timeout; FIFO cases use no memory
			}
			r := runCLI(t, c.env, c.args...)
			var problems []string
			if r.timedOut {
				problems = append(problems, fmt.Sprintf("still running after %s (hang)", cliTimeout))
			} else if r.code != c.code {
				problems = append(problems, fmt.Sprintf("exit code %d, want %d", r.code, c.code))
			}
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "barriertune: ") || !strings.Contains(lines[0], c.want) {
				problems = append(problems, "stderr is not one line \"barriertune: ...\" naming "+c.want)
			}
			if len(lines[0]) > maxErrorLine {
				problems = append(problems, fmt.Sprintf("an error line of %d bytes (at most %d)", len(lines[0]), maxErrorLine))
			}
			if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "fatal error") {
				problems = append(problems, "panic or runtime failure")
			}
			if r.maxRSS > 256<<20 {
				problems = append(problems, fmt.Sprintf("peak memory %d MiB", r.maxRSS>>20))
			}
			if len(problems) == 0 {
				return
			}
			msg := strings.Join(problems, "; ") + "\nargs: " + strings.Join(c.args, " ") + "\nstderr: " + truncate(r.stderr, 400)
			if c.owner != "" {
				t.Skipf("pending the fix on %s's branch: %s", c.owner, msg)
			}
			t.Error(msg)
		})
	}
}

// truncate cuts s to at most n bytes for a message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
