package main

import (
	"bytes"
	"errors"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/scripts/internal/lab"
	"github.com/barriertune/barriertune/internal/osal"
)

// TestHostStates splits rounds by their ping-pong as cdissem's verdict
// does: two clusters far enough apart and large enough are two states,
// anything else is one; rounds that changed state are in none.
func TestHostStates(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pp    []float64
		mixed []int // rounds that changed state
		want  [][]int
	}{
		{"one state", []float64{400, 380, 420, 395, 410}, nil, [][]int{{1, 3, 0, 4, 2}}},
		{"fast and slow", []float64{32, 400, 30, 390, 35, 410}, nil, [][]int{{2, 0, 4}, {3, 1, 5}}},
		{"two slow outliers are no state", []float64{32, 30, 35, 31, 400, 410}, nil, [][]int{{1, 3, 0, 2, 4, 5}}},
		{"close clusters are one state", []float64{90, 92, 95, 120, 125, 130}, nil, [][]int{{0, 1, 2, 3, 4, 5}}},
		{"mixed rounds count in none", []float64{32, 400, 30, 390, 35, 410, 33, 36}, []int{1, 3}, [][]int{{2, 0, 6, 4, 7, 5}}},
		{"nothing left", []float64{50, 60}, []int{0, 1}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mixed := make([]bool, len(tc.pp))
			for _, i := range tc.mixed {
				mixed[i] = true
			}
			got := hostStates(tc.pp, mixed)
			if !slices.EqualFunc(got, tc.want, slices.Equal[[]int]) {
				t.Fatalf("hostStates(%v, mixed %v) = %v, want %v", tc.pp, tc.mixed, got, tc.want)
			}
		})
	}
}

// TestCProgramBothShapes builds the reference C barrier as cdissem does,
// PAUSE inline and behind a call, with every C compiler here, and runs a
// short sample and a ping-pong of each on two allowed CPUs: both shapes
// must build warning-free and print one positive figure.
func TestCProgramBothShapes(t *testing.T) {
	allowed, err := osal.Allowed()
	if err != nil || allowed.Len() < 2 {
		t.Skipf("needs two allowed CPUs (%v, %v)", allowed, err)
	}
	cpus := allowed.Members()[:2]
	pair := strconv.Itoa(cpus[0]) + "," + strconv.Itoa(cpus[1])
	ran := 0
	for _, cc := range []string{"gcc", "clang"} {
		if _, err := exec.LookPath(cc); err != nil {
			continue
		}
		for _, shape := range [][]string{nil, {"-DRELAX_CALL"}} {
			flags := append([]string{"-O2", "-pthread", "-Wall", "-Werror"}, shape...)
			bin, err := lab.CompileC(cc, t.TempDir(), "dissem", dissemC, flags...)
			if err != nil {
				t.Fatalf("%s %v: %v", cc, shape, err)
			}
			for _, run := range []struct {
				args  []string
				lines int
			}{{[]string{pair, "200", "2"}, 2}, {[]string{"pingpong", pair, "200"}, 1}} {
				out, err := lab.Run(time.Minute, nil, false, bin, run.args...)
				if err != nil {
					t.Fatalf("%s %v: dissem %v: %v", cc, shape, run.args, err)
				}
				lines := bytes.Fields(out)
				if len(lines) != run.lines {
					t.Fatalf("%s %v: dissem %v printed %q, want %d lines", cc, shape, run.args, out, run.lines)
				}
				for _, l := range lines {
					if v, err := strconv.ParseFloat(string(l), 64); err != nil || v <= 0 {
						t.Fatalf("%s %v: dissem %v printed %q, want positive ns", cc, shape, run.args, out)
					}
				}
			}
			ran++
		}
	}
	if ran == 0 {
		t.Skip("no C compiler (gcc, clang) on PATH")
	}
}

// TestWaitForState: -wait-below returns at once when the ping-pong is
// below it, and with errNoState after -wait-max when it never is (one
// reading: the deadline comes before the next poll).
func TestWaitForState(t *testing.T) {
	allowed, err := osal.Allowed()
	if err != nil || allowed.Len() < 2 {
		t.Skipf("needs two allowed CPUs (%v, %v)", allowed, err)
	}
	bin, err := lab.CompileC("cc", t.TempDir(), "dissem", dissemC, "-O2", "-pthread")
	if err != nil {
		t.Skipf("no C compiler: %v", err)
	}
	cpus := allowed.Members()[:2]
	if err := (wait{below: 1e6, max: time.Minute, cpus: cpus}).until(bin); err != nil {
		t.Errorf("a state every ping-pong is in: %v", err)
	}
	err = (wait{below: 1e-3, max: time.Millisecond, cpus: cpus}).until(bin)
	if !errors.Is(err, errNoState) {
		t.Errorf("a state no ping-pong is in: %v, want errNoState", err)
	}
	if err := (wait{}).until(bin); err != nil {
		t.Errorf("no state to wait for: %v", err)
	}
}
