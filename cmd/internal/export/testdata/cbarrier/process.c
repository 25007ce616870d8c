/* The process's facts as the header reads them when the program is
 * loaded: the CPUs it may use (affinity within the cgroup's CPU quota),
 * the wait policy of $BARRIERTUNE_WAIT_POLICY and of
 * barriertune_barrier_init_policy, and where barriertune_barrier_pin
 * puts a participant. Prints one "key value" line per fact. */
#define _GNU_SOURCE
#include "barriertune.h"
#include <sched.h>
#include <stdio.h>

static int pinned_cpu(void)
{
	cpu_set_t s;
	int i, cpu = -1;
	if (sched_getaffinity(0, sizeof s, &s) != 0 || CPU_COUNT(&s) != 1)
		return -1;
	for (i = 0; i < CPU_SETSIZE; i++) {
		if (CPU_ISSET(i, &s))
			cpu = i;
	}
	return cpu;
}

int main(void)
{
	struct barriertune_barrier b;
	static const int cpus[2] = {0, 1};
	struct barriertune_choice c;
	int id, err;
	printf("allowed %d\n", barriertune_allowed_cpus_());
	if (barriertune_barrier_init(&b, 2) != 0)
		return 1;
	printf("policy %s\n", barriertune_barrier_policy(&b));
	printf("block %d\n", b.w.block);
	barriertune_barrier_destroy(&b);
	/* A central barrier of one thread more than the allowed CPUs: its
	 * per-CPU arrival words (0: none). */
	if (barriertune_barrier_init_algorithm(&b, barriertune_allowed_cpus_() + 1, "central", 0, -1) != 0)
		return 1;
	printf("cpuwords %d\n", b.ncpuw);
	barriertune_barrier_destroy(&b);
	printf("init_policy(3) %d\n", barriertune_barrier_init_policy(&b, 2, 3));
	printf("init_policy(-2) %d\n", barriertune_barrier_init_policy(&b, 2, -2));
	if (barriertune_barrier_init_policy(&b, 2, BARRIERTUNE_WAIT_ACTIVE) != 0)
		return 1;
	printf("explicit %s\n", barriertune_barrier_policy(&b));
	barriertune_barrier_destroy(&b);
	if (barriertune_barrier_init_policy(&b, 2, BARRIERTUNE_WAIT_FROM_ENV) != 0)
		return 1;
	printf("from_env %s\n", barriertune_barrier_policy(&b));
	/* A choice that pins participant i on CPU i of the table's machine. */
	memset(&c, 0, sizeof c);
	c.lo = c.hi = 2;
	c.pinned = 1;
	c.ncpus = 2;
	c.cpus = cpus;
	b.choice = &c;
	for (id = 0; id < 2; id++) {
		err = barriertune_barrier_pin(&b, id);
		printf("pin%d %d %d\n", id, err, err == 0 ? pinned_cpu() : -1);
	}
	b.choice = NULL;
	barriertune_barrier_destroy(&b);
	return 0;
}
