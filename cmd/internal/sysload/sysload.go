// Package sysload tells how busy the machine is while something runs: the
// time this process's threads spent runnable but waiting for a CPU (their
// run delay, /proc/self/task/*/schedstat), how many runnable tasks on the
// machine are not this process's (/proc/stat's procs_running less this
// process's threads in state R) and the load average (/proc/loadavg).
//
// A Watch reads them every so often while a measurement runs and sums
// them up; Summary.Busy says whether the machine was busy. Timings taken
// on a busy machine measure the competition as much as the code: a
// barrier whose participant waits for a CPU costs a time slice.
package sysload
