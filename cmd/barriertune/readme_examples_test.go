package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cpuset"
)

// TestReadmeAllowedExamplesSayTheirMachine: a README command whose
// --allowed list names a CPU a 2-CPU machine lacks says, in its comment,
// the machine it needs ("on a machine with N CPUs or more", N above its
// largest CPU); the others run on any machine with 2 CPUs (formerly show
// --allowed 0-3,64-67 failed everywhere else).
func TestReadmeAllowedExamplesSayTheirMachine(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Skip("no README beside the package")
	}
	allowed := regexp.MustCompile(`barriertune .*--allowed ([0-9][0-9,-]*)`)
	needs := regexp.MustCompile(`on a machine with ([0-9]+) CPUs or more`)
	seen := 0
	for _, line := range strings.Split(string(data), "\n") {
		m := allowed.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		seen++
		set, err := cpuset.ParseList(m[1])
		if err != nil {
			t.Errorf("README %q: --allowed %s is not a CPU list: %v", line, m[1], err)
			continue
		}
		last := set.Members()[set.Len()-1]
		if last < 2 {
			continue
		}
		n := needs.FindStringSubmatch(line)
		if n == nil {
			t.Errorf("README %q: CPU %d is not on a 2-CPU machine, and the line does not say which machine it needs", strings.TrimSpace(line), last)
			continue
		}
		if want, _ := strconv.Atoi(n[1]); want <= last {
			t.Errorf("README %q: says %d CPUs, but names CPU %d", strings.TrimSpace(line), want, last)
		}
	}
	if seen == 0 {
		t.Error("the README has no --allowed example; this test checks nothing")
	}
}
