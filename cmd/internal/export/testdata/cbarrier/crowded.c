/* The one-reading evidence of barriertune.h, for the test in
 * cbarrier_test.go: built with BARRIERTUNE_TEST_ROOT pointing at a tree
 * whose load average and CPUs online the test writes. Two threads spinning (block 0):
 * thread 1 arrives 20 ms late, once, so thread 0 spins out its bound
 * exactly once; its run delay is then only a first reading (a baseline),
 * so the wait is held busy if and only if the machine read as crowded.
 * Prints "busy" or "quiet". */
#define _POSIX_C_SOURCE 200809L
#include "barriertune.h"

#include <stdio.h>
#include <time.h>

static struct barriertune_barrier b;

static void *late(void *arg)
{
	struct timespec ts = {0, 20000000};
	(void)arg;
	nanosleep(&ts, NULL);
	barriertune_barrier_wait(&b, 1);
	return NULL;
}

int main(void)
{
	pthread_t t;
	if (barriertune_barrier_init_algorithm(&b, 2, "dissemination", 0, 0) != 0) {
		fprintf(stderr, "init failed\n");
		return 1;
	}
	pthread_create(&t, NULL, late, NULL);
	barriertune_barrier_wait(&b, 0);
	pthread_join(t, NULL);
	printf("%s\n", __atomic_load_n(&b.w.busy_until, __ATOMIC_RELAXED) != 0 ? "busy" : "quiet");
	barriertune_barrier_destroy(&b);
	return 0;
}
