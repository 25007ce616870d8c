/* sleepstress.c: spin bound 0, so every wait that does not find its flag
 * set sleeps at once; many episodes with the plain release store of the
 * setter (block 0). A lost wake-up hangs with no timed backstop, and the
 * alarm fails the program. Usage: sleepstress algorithm threads episodes */
#define _GNU_SOURCE
#include "barriertune.h"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static struct barriertune_barrier bar;
static int episodes;

static void *run(void *arg)
{
	int id = (int)(intptr_t)arg, e, serial = 0;
	for (e = 0; e < episodes; e++) {
		int r = barriertune_barrier_wait(&bar, id);
		if (r != 0 && r != BARRIERTUNE_BARRIER_SERIAL_THREAD) {
			fprintf(stderr, "wait returned %d\n", r);
			exit(1);
		}
		serial += r == BARRIERTUNE_BARRIER_SERIAL_THREAD;
	}
	return (void *)(intptr_t)serial;
}

int main(int argc, char **argv)
{
	pthread_t t[64];
	int n, k, err, serial = 0;
	if (argc != 4)
		return fprintf(stderr, "usage: sleepstress algorithm threads episodes\n"), 2;
	n = atoi(argv[2]);
	episodes = atoi(argv[3]);
	if (n < 1 || n > 64)
		return fprintf(stderr, "threads: %d, want 1..64\n", n), 2;
	err = barriertune_barrier_init_algorithm(&bar, n, argv[1], 0, 0);
	if (err != 0)
		return fprintf(stderr, "init %s: %d\n", argv[1], err), 2;
	bar.w.spin_ns = 0; /* everyone sleeps */
	alarm(60);         /* a lost wake-up hangs: fail */
	for (k = 0; k < n; k++)
		pthread_create(&t[k], NULL, run, (void *)(intptr_t)k);
	for (k = 0; k < n; k++) {
		void *r;
		pthread_join(t[k], &r);
		serial += (int)(intptr_t)r;
	}
	if (serial != episodes)
		return fprintf(stderr, "%d serial returns over %d episodes\n", serial, episodes), 1;
	barriertune_barrier_destroy(&bar);
	printf("ok %s %d threads %d episodes\n", argv[1], n, episodes);
	return 0;
}
