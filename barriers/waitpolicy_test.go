package barriers

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestWaitPolicyEnvChild is the child process of TestWaitPolicyEnv: it
// prints what a barrier built with and without WithPolicy resolved to
// (one participant: never oversubscribed, so AutoPolicy stays bounded).
func TestWaitPolicyEnvChild(t *testing.T) {
	if os.Getenv("BARRIERTUNE_TEST_WAIT_CHILD") != "1" {
		t.Skip("the child of TestWaitPolicyEnv")
	}
	p, set, err := WaitPolicyFromEnv()
	b, err2 := New("dissemination", 1)
	if err2 != nil {
		t.Fatal(err2)
	}
	w := b.(*dissemination).w
	o, _ := New("dissemination", 1, WithPolicy(Spin))
	g, _ := New("goroutine", 1)
	fmt.Printf("RESULT env=%v set=%v err=%v built=%v budget=%d explicit=%v goroutine-yields=%d\n",
		p, set, err != nil, w.policy, w.budget, o.(*dissemination).w.policy, g.(*goroutineBarrier).yields)
}

// TestWaitPolicyEnv: BARRIERTUNE_WAIT_POLICY sets the policy of barriers
// built without WithPolicy (active: Yield; passive: Park with no spin
// budget; auto: AutoPolicy), WithPolicy overrides it, and an invalid value
// warns once on standard error, naming the value and the accepted ones,
// and leaves AutoPolicy. Each case runs in a child process: the variable
// is read once per process.
func TestWaitPolicyEnv(t *testing.T) {
	if os.Getenv("BARRIERTUNE_TEST_WAIT_CHILD") == "1" {
		t.Skip("in the child")
	}
	for _, c := range []struct{ value, want, stderr string }{
		{"", "env=auto set=false err=false built=auto", ""},
		{"active", "env=yield set=true err=false built=yield budget=64 explicit=spin", ""},
		{"PASSIVE", "env=park set=true err=false built=park budget=0 explicit=spin goroutine-yields=0", ""},
		{"auto", "env=auto set=true err=false built=auto", ""},
		{"busy", "env=auto set=false err=true built=auto", `BARRIERTUNE_WAIT_POLICY="busy" is not a wait policy (accepted: active, passive, auto)`},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWaitPolicyEnvChild$", "-test.v")
		cmd.Env = append(os.Environ(), "BARRIERTUNE_TEST_WAIT_CHILD=1", WaitPolicyEnv+"="+c.value)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s=%q: child failed: %v\n%s%s", WaitPolicyEnv, c.value, err, out, stderr.String())
		}
		line := ""
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "RESULT ") {
				line = l
			}
		}
		if !strings.Contains(line, c.want) {
			t.Errorf("%s=%q: child printed %q, want it to contain %q", WaitPolicyEnv, c.value, line, c.want)
		}
		if c.stderr != "" && strings.Count(stderr.String(), c.stderr) != 1 {
			t.Errorf("%s=%q: standard error %q, want the warning %q once", WaitPolicyEnv, c.value, stderr.String(), c.stderr)
		}
		if c.stderr == "" && strings.Contains(stderr.String(), WaitPolicyEnv) {
			t.Errorf("%s=%q: unexpected warning %q", WaitPolicyEnv, c.value, stderr.String())
		}
	}
}
