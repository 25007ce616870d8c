/* A main thread pinned to one CPU before init (as MPI launchers and
 * OMP_PROC_BIND leave it), then a barrier for 2 threads: the barrier must
 * not take the blocking mode of threads outnumbering the CPUs, since the
 * process may use every CPU it had when it was loaded; nor after a
 * destroy and a second init. Prints "ok" or what went wrong. */
#define _GNU_SOURCE
#include "barriertune.h"
#include <sched.h>
#include <stdio.h>

int main(void)
{
	struct barriertune_barrier b;
	cpu_set_t one;
	int round;
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_setaffinity(0, sizeof one, &one) != 0) {
		printf("cannot pin the main thread\n");
		return 1;
	}
	for (round = 0; round < 2; round++) {
		if (barriertune_barrier_init(&b, 2) != 0) {
			printf("init failed\n");
			return 1;
		}
		if (b.w.block) {
			printf("round %d: 2 threads block after the main thread was pinned (the caller's affinity was read)\n", round);
			return 1;
		}
		barriertune_barrier_destroy(&b);
	}
	printf("ok\n");
	return 0;
}
