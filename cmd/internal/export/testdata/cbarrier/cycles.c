/* cycles.c: init/destroy cycles for LeakSanitizer: every algorithm the
 * header carries by name, the machine's choice (init), hybrids of two and
 * three levels, re-init after destroy, a few episodes between init and
 * destroy, and inits that fail (EINVAL): nothing that init allocates may
 * outlive destroy. "cycles leak" leaks on purpose, so that the test knows
 * LeakSanitizer would see a leak. Exit 0 and "ok N cycles" when every
 * call returned what it should; LeakSanitizer fails the exit at the end. */
#include "barriertune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_(id, name) name,
static const char *const names[] = {BARRIERTUNE_ALGORITHMS(NAME_)};
#define NNAMES ((int)(sizeof names / sizeof names[0]))

static struct barriertune_barrier bar;
static int nthreads;
static void *volatile leaked;

static void *episodes(void *arg)
{
	int id = (int)(intptr_t)arg, e;
	for (e = 0; e < 20; e++) {
		int r = barriertune_barrier_wait(&bar, id);
		if (r != 0 && r != BARRIERTUNE_BARRIER_SERIAL_THREAD) {
			fprintf(stderr, "wait returned %d\n", r);
			exit(1);
		}
	}
	return NULL;
}

/* run runs n threads through 20 episodes of bar. */
static void run(int n)
{
	pthread_t t[8];
	int k;
	nthreads = n;
	for (k = 1; k < n; k++)
		pthread_create(&t[k], NULL, episodes, (void *)(intptr_t)k);
	episodes((void *)(intptr_t)0);
	for (k = 1; k < n; k++)
		pthread_join(t[k], NULL);
}

static int check(int got, int want, const char *what, int n)
{
	if (got != want) {
		fprintf(stderr, "%s, n=%d: %d, want %d\n", what, n, got, want);
		exit(1);
	}
	return got;
}

int main(int argc, char **argv)
{
	static const int counts[] = {1, 2, 3, 5, 9, 64};
	int round, i, c, l;
	if (argc > 1 && strcmp(argv[1], "leak") == 0) {
		leaked = malloc(100);
		leaked = NULL;
	}
	for (round = 0; round < 3; round++) {
		for (i = 0; i < NNAMES; i++) {
			for (c = 0; c < (int)(sizeof counts / sizeof counts[0]); c++) {
				int n = counts[c];
				check(barriertune_barrier_init_algorithm(&bar, n, names[i], 0, round % 2), 0, names[i], n);
				if (n == 3)
					run(n);
				barriertune_barrier_destroy(&bar);
			}
			check(barriertune_barrier_init_algorithm(&bar, 0, names[i], 0, 0), EINVAL, names[i], 0);
			check(barriertune_barrier_init_algorithm(&bar, BARRIERTUNE_MAX_THREADS + 1, names[i], 0, 0), EINVAL, names[i],
			      BARRIERTUNE_MAX_THREADS + 1);
		}
		for (c = 1; c <= 9; c++) {
			check(barriertune_barrier_init(&bar, c), 0, "init", c);
			if (c == 2 || c == 5)
				run(c);
			barriertune_barrier_destroy(&bar);
		}
		check(barriertune_barrier_init_algorithm(&bar, 3, "no-such-algorithm", 0, 0), EINVAL, "an unknown name", 3);
		for (l = 2; l <= 3; l++) {
			/* Levels mcs, dissemination[, tournament] over 6 threads:
			 * pairs, then halves, then all. */
			int levels[6] = {BARRIERTUNE_ALG_MCS, 0, BARRIERTUNE_ALG_DISSEMINATION, 0, BARRIERTUNE_ALG_TOURNAMENT, 0};
			int keys[3 * 6], k, bad[2] = {BARRIERTUNE_ALG_HYBRID, 0};
			for (k = 0; k < 6; k++) {
				keys[k] = k / 2;
				keys[6 + k] = k / 3;
				keys[12 + k] = 0;
			}
			check(barriertune_barrier_init_hybrid(&bar, 6, l, levels, keys, round % 2), 0, "hybrid", 6);
			run(6);
			barriertune_barrier_destroy(&bar);
			check(barriertune_barrier_init_hybrid(&bar, 6, l, levels, NULL, 0), 0, "hybrid without keys", 6);
			barriertune_barrier_destroy(&bar);
			check(barriertune_barrier_init_hybrid(&bar, 6, 1, bad, NULL, 0), EINVAL, "a hybrid of a hybrid", 6);
		}
	}
	printf("ok %d cycles\n", round);
	return 0;
}
