/* destroy.c: the serial participant destroys and frees the barrier as soon
 * as its wait returns, while the others may still be leaving theirs (woken
 * from a sleep); built with -fsanitize=address it must stay clean.
 * Usage: destroy iterations threads */
#define _GNU_SOURCE
#include "barriertune.h"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static struct barriertune_barrier *volatile cur;
static pthread_barrier_t start;
static int n;

static void *run(void *arg)
{
	int id = (int)(intptr_t)arg;
	struct barriertune_barrier *b;
	int ret;
	pthread_barrier_wait(&start); /* cur is set */
	b = cur;
	if (id == n - 1) {
		struct timespec ts = {0, 200000}; /* late: the others may sleep */
		nanosleep(&ts, NULL);
	}
	ret = barriertune_barrier_wait(b, id);
	if (ret == BARRIERTUNE_BARRIER_SERIAL_THREAD) {
		barriertune_barrier_destroy(b);
		free(b);
	} else if (ret != 0) {
		fprintf(stderr, "wait returned %d\n", ret);
		exit(1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 200, i, k;
	n = argc > 2 ? atoi(argv[2]) : 3;
	pthread_t t[64];
	if (n < 2 || n > 64)
		return fprintf(stderr, "threads: %d, want 2..64\n", n), 2;
	alarm(120);
	for (i = 0; i < iters; i++) {
		struct barriertune_barrier *b = malloc(sizeof *b);
		int err;
		if (b == NULL)
			return 1;
		err = barriertune_barrier_init(b, n);
		if (err != 0)
			return fprintf(stderr, "init: %d\n", err), 1;
		cur = b;
		pthread_barrier_init(&start, NULL, (unsigned)n);
		for (k = 0; k < n; k++)
			pthread_create(&t[k], NULL, run, (void *)(intptr_t)k);
		for (k = 0; k < n; k++)
			pthread_join(t[k], NULL);
		pthread_barrier_destroy(&start);
	}
	printf("ok %d iterations, %d threads\n", iters, n);
	return 0;
}
