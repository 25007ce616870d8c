/* destroywait.c: barriertune_barrier_destroy beside participants whose
 * partner never comes (participant 0 never waits) waits without burning a
 * CPU. Two barriers of three participants, a dissemination barrier that
 * spins first and a central barrier whose threads outnumber the CPUs (its
 * per-CPU words), each with participants 1 and 2 waiting and a thread in
 * destroy; after 0.3 s for them to settle, the process's CPU time over
 * the next second is measured. Prints "cpu PERCENT" (of one CPU, over the
 * wall time) and exits 0; the program ends with the waits and destroys
 * still blocked (exit ends them). Built with BARRIERTUNE_DEBUG: each
 * destroy starts once both waiters are inside (their busy marks), and
 * reports itself on standard error after a second.
 * Usage: destroywait */
#define _GNU_SOURCE
#include "barriertune.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static struct barriertune_barrier bars[2];

struct arg {
	struct barriertune_barrier *b;
	int id; /* -1: destroy */
};

static double seconds(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *run(void *p)
{
	struct arg *a = (struct arg *)p;
	if (a->id < 0) {
		/* Once both waiters are inside (a debug build's busy marks),
		 * and 2 ms more, for them to count their arrival (a wait is
		 * inside once it has): soon enough that an arrival still
		 * deposited on its CPU's word, not yet in the counter, is
		 * there to be seen. */
		struct timespec ts = {0, 1000000}, settle = {0, 2000000};
		while (!__atomic_load_n(&a->b->slots[1].busy, __ATOMIC_ACQUIRE) || !__atomic_load_n(&a->b->slots[2].busy, __ATOMIC_ACQUIRE))
			nanosleep(&ts, NULL);
		nanosleep(&settle, NULL);
		barriertune_barrier_destroy(a->b);
		fprintf(stderr, "destroy of the %s barrier returned while a participant was inside\n", a->b == &bars[0] ? "dissemination" : "central");
		exit(1);
	}
	barriertune_barrier_wait(a->b, a->id);
	fprintf(stderr, "wait %d returned without participant 0\n", a->id);
	exit(1);
	return NULL;
}

int main(void)
{
	static struct arg args[6];
	pthread_t t;
	double wall, cpu;
	int k, i;
	alarm(30);
	if (barriertune_barrier_init_algorithm(&bars[0], 3, "dissemination", 0, 0) != 0 ||
	    barriertune_barrier_init_algorithm(&bars[1], 3, "central", 0, 1) != 0)
		return fprintf(stderr, "init failed\n"), 2;
	for (k = 0; k < 2; k++) {
		for (i = 0; i < 3; i++) {
			struct arg *a = &args[3 * k + i];
			a->b = &bars[k];
			a->id = i == 2 ? -1 : i + 1;
			if (pthread_create(&t, NULL, run, a) != 0)
				return fprintf(stderr, "pthread_create failed\n"), 2;
			pthread_detach(t);
		}
	}
	{
		struct timespec ts = {0, 300000000};
		nanosleep(&ts, NULL);
	}
	wall = seconds(CLOCK_MONOTONIC);
	cpu = seconds(CLOCK_PROCESS_CPUTIME_ID);
	{
		struct timespec ts = {1, 0};
		nanosleep(&ts, NULL);
	}
	cpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu;
	wall = seconds(CLOCK_MONOTONIC) - wall;
	printf("cpu %.2f\n", 100 * cpu / wall);
	fflush(stdout);
	_exit(0);
}
