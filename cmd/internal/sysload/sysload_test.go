package sysload

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/internal/cpuhog"
)

func TestMain(m *testing.M) {
	cpuhog.Main()
	os.Exit(m.Run())
}

// writeProc builds a fake proc tree: the process's tasks (tid, state,
// run delay) and the machine's procs_running and load average.
func writeProc(t *testing.T, root string, tasks map[int]struct {
	state string
	delay int64
}, running int, load string) {
	t.Helper()
	for tid, task := range tasks {
		dir := filepath.Join(root, "self", "task", strconv.Itoa(tid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		// A command name with a space and a parenthesis: the state is the
		// field after the last ')'.
		stat := strconv.Itoa(tid) + " (go (worker) x) " + task.state + " 1 1 1 0 -1\n"
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
		sched := "123456 " + strconv.FormatInt(task.delay, 10) + " 7\n"
		if err := os.WriteFile(filepath.Join(dir, "schedstat"), []byte(sched), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stat := "cpu  1 2 3 4\nctxt 99\nprocs_running " + strconv.Itoa(running) + "\nprocs_blocked 0\n"
	if err := os.WriteFile(filepath.Join(root, "stat"), []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "loadavg"), []byte(load+" 0.50 0.25 3/91 1234\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

type task = struct {
	state string
	delay int64
}

// TestReadRace: a task of the process or of a child that starts or
// stops running while Read counts the process's own is not another
// process's; one that runs throughout is. The machine's count changes
// between the read before the own count and the read after it.
func TestReadRace(t *testing.T) {
	root := t.TempDir()
	writeProc(t, root, map[int]task{10: {"R", 0}, 11: {"R", 0}, 12: {"S", 0}}, 0, "0.50")
	for _, c := range []struct {
		name          string
		before, after int
		want          int
	}{
		{"a thread of ours woke after the count", 2, 3, 0},
		{"a thread of ours stopped after the first read", 3, 2, 0},
		{"another process's task ran throughout", 3, 3, 1},
		{"two others, one woke after the count", 4, 5, 2},
	} {
		reads := []int{c.before, c.after}
		p := Proc{Root: root, readStat: func() ([]byte, error) {
			n := reads[0]
			reads = reads[1:]
			return []byte("cpu  1 2 3 4\nprocs_running " + strconv.Itoa(n) + "\nprocs_blocked 0\n"), nil
		}}
		r, err := p.Read()
		if err != nil {
			t.Fatal(err)
		}
		if len(reads) != 0 {
			t.Fatalf("%s: %d reads of the machine's count left, want both taken", c.name, len(reads))
		}
		if r.Own != 2 || r.Others() != c.want {
			t.Errorf("%s: own %d, others %d, want 2 and %d", c.name, r.Own, r.Others(), c.want)
		}
	}
}

// TestReadFake reads a fake proc tree: own runnable threads, their run
// delays, the machine's runnable count and the others'.
func TestReadFake(t *testing.T) {
	root := t.TempDir()
	writeProc(t, root, map[int]task{10: {"R", 5000}, 11: {"S", 7000}, 12: {"R", 0}}, 5, "2.25")
	r, err := Proc{Root: root}.Read()
	if err != nil {
		t.Fatal(err)
	}
	if r.Own != 2 || r.Running != 5 || r.Others() != 3 || r.Load1 != 2.25 {
		t.Fatalf("own %d running %d others %d load %v, want 2, 5, 3, 2.25", r.Own, r.Running, r.Others(), r.Load1)
	}
	if len(r.Delay) != 3 || r.Delay[10] != 5000 || r.Delay[11] != 7000 || r.Delay[12] != 0 {
		t.Fatalf("delays %v", r.Delay)
	}
	// More own runnable threads than the machine counted (a race between
	// the reads): no negative others.
	writeProc(t, root, map[int]task{10: {"R", 5000}, 11: {"R", 7000}, 12: {"R", 0}}, 1, "0.10")
	if r, err = (Proc{Root: root}).Read(); err != nil || r.Others() != 0 {
		t.Fatalf("others %d (%v), want 0", r.Others(), err)
	}
}

// TestReadMissing: a system without the files gets an error naming what
// is missing, and a Watch over it reports that error.
func TestReadMissing(t *testing.T) {
	root := t.TempDir()
	if _, err := (Proc{Root: root}).Read(); err == nil {
		t.Fatal("a proc tree without tasks read")
	}
	writeProc(t, root, map[int]task{1: {"S", 0}}, 1, "0")
	if err := os.WriteFile(filepath.Join(root, "stat"), []byte("cpu 1 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Proc{Root: root}.Read()
	if err == nil || !strings.Contains(err.Error(), "procs_running") {
		t.Fatalf("error %v, want one naming procs_running", err)
	}
	w := Start(Proc{Root: root}, time.Millisecond)
	if _, err := w.Stop(); err == nil {
		t.Fatal("a watch that could read nothing summed up")
	}
}

// TestSummarise: the median of the others, the most, and the run delay
// each thread gained between consecutive readings over the wall time
// (a thread seen once adds nothing; one whose count went back adds
// nothing).
func TestSummarise(t *testing.T) {
	t0 := time.Unix(1000, 0)
	rs := []Reading{
		{When: t0, Delay: map[int]int64{1: 0, 2: 100}, Own: 2, Running: 2, Load1: 0.5},
		{When: t0.Add(100 * time.Millisecond), Delay: map[int]int64{1: 20e6, 2: 100, 3: 5e6}, Own: 1, Running: 3},
		{When: t0.Add(200 * time.Millisecond), Delay: map[int]int64{1: 40e6, 2: 50, 3: 25e6}, Own: 2, Running: 4},
		{When: t0.Add(400 * time.Millisecond), Delay: map[int]int64{1: 40e6, 4: 1e9}, Own: 1, Running: 1, Load1: 2},
	}
	s := Summarise(rs, 2)
	// Others: 0, 2, 2, 0: median 1, max 2. Delay: 20ms + 20ms (thread 1),
	// 20ms (thread 3) over 400ms.
	if s.Readings != 4 || s.Duration != 400*time.Millisecond || s.OthersMedian != 1 || s.OthersMax != 2 {
		t.Fatalf("summary %+v", s)
	}
	if d := s.DelayShare; d < 0.1499 || d > 0.1501 {
		t.Fatalf("delay share %v, want 0.15", d)
	}
	if s.Load1Start != 0.5 || s.Load1End != 2 {
		t.Fatalf("load %v..%v", s.Load1Start, s.Load1End)
	}
	if busy, why := s.Busy(); !busy || !strings.Contains(why, "1 runnable tasks of other processes") || !strings.Contains(why, "waited for a CPU 15% of the time") {
		t.Fatalf("busy %v (%s), want busy by the others, the delay said", busy, why)
	}
	// Run delay alone decides nothing: a process that keeps every CPU
	// busy itself makes its threads wait for one another.
	quiet := Summary{Readings: 10, OthersMedian: 0.5, OthersMax: 3, DelayShare: 0.9}
	if busy, why := quiet.Busy(); busy {
		t.Fatalf("quiet summary busy: %s", why)
	}
	if busy, _ := (Summary{Readings: 1, OthersMedian: 9}).Busy(); busy {
		t.Fatal("one reading said busy")
	}
}

// TestWatchBusy: a watch beside as many CPU-bound processes as this
// process may use CPUs, started, bounded and killed here, says busy.
func TestWatchBusy(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	if _, err := (Proc{}).Read(); err != nil {
		t.Skip(err)
	}
	kill := cpuhog.Start(t, runtime.NumCPU(), 10*time.Second)
	time.Sleep(50 * time.Millisecond) // let them start spinning
	w := Start(Proc{}, 10*time.Millisecond)
	// Two threads of this process spin too, wanting CPUs the
	// competitors hold.
	stop := make(chan struct{})
	for range 2 {
		go func() {
			for x := 0; ; x++ {
				select {
				case <-stop:
					return
				default:
				}
				for i := 0; i < 1e5; i++ {
					x ^= i
				}
			}
		}()
	}
	time.Sleep(400 * time.Millisecond)
	close(stop)
	s, err := w.Stop()
	kill()
	if err != nil {
		t.Fatal(err)
	}
	busy, why := s.Busy()
	t.Logf("beside %d competitors: %+v: %s", runtime.NumCPU(), s, why)
	if !busy {
		t.Fatalf("a watch beside %d CPU-bound processes said quiet: %+v", runtime.NumCPU(), s)
	}
	if s.OthersMax < 1 {
		t.Fatalf("no reading saw another runnable task: %+v", s)
	}
}

// TestReadChildren: with Children, the runnable threads of the process's
// child processes (their stat's parent is the process) count as its own,
// and another process's never do; without it, a child is another process.
func TestReadChildren(t *testing.T) {
	root := t.TempDir()
	writeProc(t, root, nil, 5, "1.00")
	proc := func(pid, ppid string, states ...string) {
		stat := pid + " (cc (x)) S " + ppid + " 1 1 0 -1\n"
		if err := os.MkdirAll(filepath.Join(root, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, pid, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
		for i, st := range states {
			dir := filepath.Join(root, pid, "task", strconv.Itoa(i+1))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(pid+" (t) "+st+" "+ppid+" 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	proc("100", "1", "R")             // the process: one runnable thread
	proc("200", "100", "R", "R", "S") // its child: two runnable
	proc("300", "1", "R")             // another process
	proc("400", "200", "R")           // a grandchild: not a child
	r, err := Proc{Root: root, Self: "100", Children: true}.Read()
	if err != nil {
		t.Fatal(err)
	}
	if r.Own != 3 || r.Others() != 2 {
		t.Fatalf("with children: own %d others %d, want 3 and 2", r.Own, r.Others())
	}
	if r, err = (Proc{Root: root, Self: "100"}).Read(); err != nil || r.Own != 1 || r.Others() != 4 {
		t.Fatalf("without children: own %d others %d (%v), want 1 and 4", r.Own, r.Others(), err)
	}
}
