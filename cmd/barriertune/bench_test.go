package main

import (
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/internal/osal"
)

// TestPingPongDefaultCPUs: bench --pingpong without --cpus measures
// between the first two allowed CPUs (it was a usage error).
func TestPingPongDefaultCPUs(t *testing.T) {
	allowed, err := osal.Allowed()
	if err != nil || allowed.Len() < 2 || runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two allowed CPUs and GOMAXPROCS >= 2 to ping-pong")
	}
	m := allowed.Members()
	code, out, errOut := execLine("bench", "--pingpong", "--samples", "2", "--sample-time", "20us", "-q")
	want := "CPU " + strconv.Itoa(m[0]) + " <-> CPU " + strconv.Itoa(m[1])
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("bench --pingpong: exit %d, want %q in:\n%s%s", code, want, out, errOut)
	}
}
