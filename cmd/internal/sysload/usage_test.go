package sysload

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMachineBusy: the busy fields of /proc/stat's cpu line (user, nice,
// system, irq, softirq) in USER_HZ ticks; idle, iowait and steal left
// out; a malformed line refused.
func TestMachineBusy(t *testing.T) {
	stat := "cpu  100 20 30 4000 500 6 7 800 0 0\ncpu0 10 2 3 4 5 6 7 8 0 0\ncpu1 100 20 30 4000 500 60 70 800 0 0\nintr 5\ncpufreq 1\n"
	d, n, err := machineBusy(stat, nil)
	if err != nil || d != (28+280)*10*time.Millisecond || n != 2 {
		t.Errorf("machineBusy = %s, %d CPUs, %v; want 3.08s (28+280 ticks), 2 CPUs", d, n, err)
	}
	// Only the CPUs the process may use: load on the others does not
	// slow it.
	d, n, err = machineBusy(stat, []int{0})
	if err != nil || d != 28*10*time.Millisecond || n != 1 {
		t.Errorf("machineBusy(CPU 0) = %s, %d CPUs, %v; want 0.28s, 1 CPU", d, n, err)
	}
	if _, _, err := machineBusy(stat, []int{5}); err == nil || !strings.Contains(err.Error(), "[5]") {
		t.Errorf("machineBusy(CPU 5) of a 2-CPU file: %v, want an error naming CPU 5", err)
	}
	for _, bad := range []string{"", "intr 1 2 3", "cpu 1 2 3 4 5 6 7", "cpu0 1 2 3", "cpu0 1 2 x 4 5 6 7", "cpu0 -1 2 3 4 5 6 7", strings.Repeat("cpu0 ", 3), "cpu0 99999999999999999 1 1 1 1 1 1",
		"cpu0 9999999999999 1 1 1 1 1 1\ncpu1 9999999999999 1 1 1 1 1 1\ncpu2 9999999999999 1 1 1 1 1 1\ncpu3 9999999999999 1 1 1 1 1 1\ncpu4 9999999999999 1 1 1 1 1 1"} {
		if _, _, err := machineBusy(bad, nil); err == nil {
			t.Errorf("machineBusy(%q): no error", bad)
		}
	}
}

// TestOthersShare: what the machine used less what the process and its
// waited-for children used, over the wall time, as a share of one CPU;
// never negative, 0 for no time.
func TestOthersShare(t *testing.T) {
	t0 := time.Unix(0, 0)
	a := Usage{When: t0, Machine: 10 * time.Second, Own: 5 * time.Second, CPUs: 2}
	b := Usage{When: t0.Add(2 * time.Second), Machine: 13 * time.Second, Own: 7 * time.Second, CPUs: 2}
	if s := OthersShare(a, b); s < 0.499 || s > 0.501 {
		t.Errorf("OthersShare = %g, want 0.5 (1 s of others over 2 s)", s)
	}
	if busy, why := BusyBetween(a, b); !busy || !strings.Contains(why, "50% of a CPU") {
		t.Errorf("BusyBetween: %v %q, want busy at 50%%", busy, why)
	}
	c := Usage{When: t0.Add(2 * time.Second), Machine: 11 * time.Second, Own: 7 * time.Second} // own ahead of the machine's tick count
	if s := OthersShare(a, c); s != 0 {
		t.Errorf("OthersShare = %g, want 0 (never negative)", s)
	}
	if busy, _ := BusyBetween(a, c); busy {
		t.Error("quiet read busy")
	}
	if s := OthersShare(b, a); s != 0 {
		t.Errorf("OthersShare backwards = %g, want 0", s)
	}
	// The ticks' rounding: two ticks a CPU over the span are not load.
	if bnd := BusyBound(a, b); bnd < 0.269 || bnd > 0.271 {
		t.Errorf("BusyBound over 2 s on 2 CPUs = %g, want 0.27", bnd)
	}
	short := Usage{When: t0.Add(200 * time.Millisecond), Machine: 10*time.Second + 80*time.Millisecond, Own: 5 * time.Second, CPUs: 2}
	if busy, why := BusyBetween(a, short); busy {
		t.Errorf("8 ticks of others over 0.2 s on 2 CPUs read busy (%s); the rounding allows 4 and the bound is 45%%", why)
	}
	big := Usage{When: t0.Add(8 * time.Second), Machine: 10*time.Second + 2*time.Second, Own: 5 * time.Second, CPUs: 128}
	if busy, _ := BusyBetween(Usage{When: t0, Machine: 10 * time.Second, Own: 5 * time.Second, CPUs: 128}, big); busy {
		t.Error("2 s of others over 8 s on 128 CPUs (the ticks' rounding can give 2.56 s) read busy")
	}
}

// TestReadUsageCountsWaitedChildren: a child's CPU time is the process's
// own once it has been waited for (so a step's runs are not load), and
// before that it is another's.
func TestReadUsageCountsWaitedChildren(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/stat")
	}
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	a, err := Proc{}.ReadUsage()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	b, err := Proc{}.ReadUsage()
	if err != nil {
		t.Fatal(err)
	}
	child := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if child < 20*time.Millisecond {
		t.Skipf("the child used only %s of CPU", child)
	}
	if got := b.Own - a.Own; got < child {
		t.Errorf("own CPU grew by %s, less than the waited-for child's %s", got, child)
	}
	if b.Machine <= a.Machine {
		t.Errorf("the machine's busy time did not grow (%s to %s) while a child spun for %s", a.Machine, b.Machine, child)
	}
}

// TestReadUsageOnlyTheseCPUs: ReadUsage sums the CPUs it is given (a
// check's allowed CPUs), and refuses a list the stat file does not have.
func TestReadUsageOnlyTheseCPUs(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "freebsd" && runtime.GOOS != "darwin" {
		t.Skip("getrusage")
	}
	dir := t.TempDir()
	stat := "cpu  2000 0 0 0 0 0 0 0 0 0\ncpu0 1000 0 0 0 0 0 0 0 0 0\ncpu1 1000 0 0 0 0 0 0 0 0 0\ncpu7 5 0 0 0 0 0 0 0 0 0\n"
	if err := os.WriteFile(dir+"/stat", []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
	p := Proc{Root: dir}
	all, err := p.ReadUsage()
	if err != nil || all.Machine != 20050*time.Millisecond || all.CPUs != 3 {
		t.Errorf("every CPU: %s on %d CPUs (%v), want 20.05s on 3", all.Machine, all.CPUs, err)
	}
	some, err := p.ReadUsage(1, 7)
	if err != nil || some.Machine != 10050*time.Millisecond || some.CPUs != 2 {
		t.Errorf("CPUs 1 and 7: %s on %d CPUs (%v), want 10.05s on 2", some.Machine, some.CPUs, err)
	}
	if _, err := p.ReadUsage(3); err == nil {
		t.Error("CPU 3, absent from the file: no error")
	}
}

// TestBusyByCPUTime: where the readings carry CPU times, busy is other
// processes' CPU time on the CPUs read, whatever the runnable counts say
// (a task of another process runnable in the median reading that used no
// CPU is not load; a process that took half a CPU is); without them, the
// runnable count decides as before.
func TestBusyByCPUTime(t *testing.T) {
	t0 := time.Unix(100, 0)
	reading := func(at time.Duration, others int, machine, own time.Duration, usage bool) Reading {
		r := Reading{When: t0.Add(at), Running: 2 + others, Own: 2}
		if usage {
			r.Usage, r.HasUsage = Usage{When: t0.Add(at), Machine: machine, Own: own, CPUs: 2}, true
		}
		return r
	}
	quietButRunnable := Summarise([]Reading{
		reading(0, 1, 0, 0, true), reading(500*time.Millisecond, 1, time.Second, 980*time.Millisecond, true), reading(time.Second, 1, 2*time.Second, 1950*time.Millisecond, true),
	}, 2)
	if busy, why := quietButRunnable.Busy(); busy || !quietButRunnable.CPUKnown {
		t.Errorf("others used 5%% of a CPU with a task runnable in every reading: busy %v (%s), CPU known %v; want quiet", busy, why, quietButRunnable.CPUKnown)
	}
	took := Summarise([]Reading{reading(0, 0, 0, 0, true), reading(time.Second, 0, 2*time.Second, 1500*time.Millisecond, true)}, 2)
	if busy, why := took.Busy(); !busy || !strings.Contains(why, "50% of a CPU of the CPUs it may use") {
		t.Errorf("others used half a CPU: busy %v (%q); want busy, saying so", busy, why)
	}
	old := Summarise([]Reading{reading(0, 1, 0, 0, false), reading(time.Second, 1, 0, 0, false)}, 2)
	if busy, why := old.Busy(); !busy || old.CPUKnown || !strings.Contains(why, "runnable tasks of other processes") {
		t.Errorf("no CPU times, a task runnable in every reading: busy %v (%q); want busy by the runnable count", busy, why)
	}
}
