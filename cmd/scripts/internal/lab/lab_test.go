package lab

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		v    []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		in := append([]float64(nil), c.v...)
		if got := Median(in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.v, got, c.want)
		}
		for i := range in {
			if in[i] != c.v[i] {
				t.Errorf("Median changed its input: %v", in)
			}
		}
	}
}

// A child that overruns its limit is killed and said so; one that
// finishes gives its output.
func TestRunKillsOverrun(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep")
	}
	_, err := Run(100*time.Millisecond, nil, false, "sleep", "10")
	if err == nil || !strings.Contains(err.Error(), "killed after") {
		t.Errorf("overrun: %v", err)
	}
	out, err := Run(10*time.Second, nil, true, "sh", "-c", "echo hi")
	if err != nil || strings.TrimSpace(string(out)) != "hi" {
		t.Errorf("echo: %q, %v", out, err)
	}
}

func TestCompileCRefusesMissingCompiler(t *testing.T) {
	if _, err := CompileC("no-such-cc-barriertune", t.TempDir(), "x", []byte("int main(void){return 0;}\n")); err == nil || !strings.Contains(err.Error(), "no no-such-cc-barriertune") {
		t.Errorf("missing compiler: %v", err)
	}
}

// TestCounts: a list reads sorted and without repeats; an entry that is
// not a count from 1 to the cap is refused, naming it.
func TestCounts(t *testing.T) {
	got, err := Counts("-threads", "8, 2,4,2", "thread", 16)
	if err != nil || !slices.Equal(got, []int{2, 4, 8}) {
		t.Errorf("Counts(8, 2,4,2) = %v, %v; want [2 4 8]", got, err)
	}
	for _, bad := range []string{"", "0", "17", "x", "2,,4", "-1", "99999999999999999999"} {
		if _, err := Counts("-threads", bad, "thread", 16); err == nil || !strings.Contains(err.Error(), "-threads") {
			t.Errorf("Counts(%q): %v, want an error naming -threads", bad, err)
		}
	}
}
