/* sleepcpu.c: a waiter whose partner is 30 ms late sleeps rather than
 * spins: over five such waits the waiting thread's CPU time stays under a
 * third of the wall time (on a 32-bit target with a 64-bit
 * time_t a futex timeout read wrong made sleepers spin in syscalls). Exit
 * 0 and "ok" with the times; 1 and the times otherwise. */
#define _GNU_SOURCE
#include "barriertune.h"

#include <stdio.h>
#include <time.h>

static struct barriertune_barrier bar;

static double seconds(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *late(void *arg)
{
	int i;
	(void)arg;
	for (i = 0; i < 5; i++) {
		struct timespec ts = {0, 30000000};
		nanosleep(&ts, NULL);
		barriertune_barrier_wait(&bar, 1);
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	double wall, cpu;
	int i;
	if (barriertune_barrier_init_algorithm(&bar, 2, "central", 0, 0) != 0)
		return 2;
	pthread_create(&t, NULL, late, NULL);
	wall = seconds(CLOCK_MONOTONIC);
	cpu = seconds(CLOCK_THREAD_CPUTIME_ID);
	for (i = 0; i < 5; i++)
		barriertune_barrier_wait(&bar, 0);
	cpu = seconds(CLOCK_THREAD_CPUTIME_ID) - cpu;
	wall = seconds(CLOCK_MONOTONIC) - wall;
	pthread_join(t, NULL);
	barriertune_barrier_destroy(&bar);
	printf("%s: the waiter used %.1f ms of CPU in %.1f ms\n", cpu < wall / 3 ? "ok" : "fail", cpu * 1e3, wall * 1e3);
	return cpu < wall / 3 ? 0 : 1;
}
