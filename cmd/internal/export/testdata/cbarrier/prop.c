/* The barrier property of barriertune.h, for the test in cbarrier_test.go:
 *
 *   prop ALGORITHM|auto|hybrid:LEVELS N EPISODES BLOCK SEED
 *
 * runs N threads through EPISODES episodes of the barrier (the named
 * algorithm, the machine's choice for "auto", or a hybrid whose LEVELS,
 * lowest first, are ALGORITHM/K (participant i's group at the level is
 * i / K: contiguous groups, the last one short) or ALGORITHM%K (i % K:
 * interleaved groups), comma-separated; BLOCK: -1 from the
 * allowed CPUs, 0 spin first, 1 sleep quickly), each thread waiting a
 * random time before it arrives (now and then long enough for the others
 * to sleep). It checks that no thread leaves an episode before every
 * thread has arrived in it, that exactly one thread per episode gets
 * 1 from barriertune_barrier_wait, and that the barrier orders memory as
 * pthread_barrier_wait does: every thread reads, with plain loads, the
 * plain stores every other thread made before its arrival (a barrier
 * that lacks the ordering is a data race ThreadSanitizer reports). Exit 0 and "ok ALGORITHM N" when both
 * hold; 1 and the first violation otherwise. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* PROP_CPU_HINT: the CPU the barrier believes a thread runs on is a lie,
 * to show that the hint decides only how long a waiter spins:
 * $PROP_CPU_HINT "random" (a new CPU, 0-999, at every look) or "own"
 * (participant i is always on CPU i, so every waiter of an outnumbered
 * central barrier finds its CPU settled and spins). */
#if defined(PROP_CPU_HINT)
static _Thread_local int prop_id;
static _Thread_local unsigned long prop_rand;
static int prop_cpu(void)
{
	const char *m = getenv("PROP_CPU_HINT");
	if (m != NULL && strcmp(m, "own") == 0)
		return prop_id;
	prop_rand = prop_rand * 6364136223846793005UL + 1442695040888963407UL + (unsigned long)prop_id;
	return (int)(prop_rand >> 33) % 1000;
}
#define BARRIERTUNE_CPU_NOW prop_cpu
#endif

#include "barriertune.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static struct barriertune_barrier bar;
static int n, episodes;
static unsigned long seed;
static uint64_t arrived;   /* atomic: arrivals so far, all episodes */
static int *serial;        /* per episode: threads that got 1 (atomic) */
static int failed;         /* atomic */
static int *marks[2];      /* plain: marks[e & 1][id] = e + 1 before episode e's arrival */

/* init_hybrid parses LEVELS (see above) into the hybrid's levels and
 * keys and initialises bar with them; EINVAL for a malformed LEVELS. */
static int init_hybrid(const char *spec, int block)
{
	int levels[2 * BARRIERTUNE_MAX_LEVELS], *keys, nl = 0, i, err;
	char buf[512], *tok, *save = NULL;
	if (strlen(spec) >= sizeof buf)
		return EINVAL;
	strcpy(buf, spec);
	keys = calloc((size_t)n * BARRIERTUNE_MAX_LEVELS, sizeof *keys);
	if (keys == NULL)
		return ENOMEM;
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		char *sep = strpbrk(tok, "/%");
		int k, mod;
		if (sep == NULL || nl == BARRIERTUNE_MAX_LEVELS || (k = atoi(sep + 1)) < 1) {
			free(keys);
			return EINVAL;
		}
		mod = *sep == '%';
		*sep = 0;
		levels[2 * nl] = barriertune_algorithm_of(tok);
		levels[2 * nl + 1] = 0;
		for (i = 0; i < n; i++)
			keys[nl * n + i] = mod ? i % k : i / k;
		nl++;
	}
	err = barriertune_barrier_init_hybrid(&bar, n, nl, levels, keys, block);
	free(keys);
	return err;
}

static unsigned long next(unsigned long *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *run(void *arg)
{
	int id = (int)(intptr_t)arg, e, j;
	unsigned long s = seed * 2654435761UL + (unsigned long)id + 1;
#if defined(PROP_CPU_HINT)
	prop_id = id;
#endif
	for (e = 0; e < episodes; e++) {
		unsigned long r = next(&s) % 1000;
		if (r < 5) {
			struct timespec ts = {0, (long)(next(&s) % 2000000)}; /* up to 2 ms: the others sleep */
			nanosleep(&ts, NULL);
		} else if (r < 300) {
			volatile unsigned long k = next(&s) % 5000, i;
			for (i = 0; i < k; i++) {
			}
		}
		__atomic_add_fetch(&arrived, 1, __ATOMIC_SEQ_CST);
		/* Plain, after the test's own atomics: only the barrier orders it. */
		marks[e & 1][id] = e + 1;
		int ret = barriertune_barrier_wait(&bar, id);
		if (ret != 0 && ret != BARRIERTUNE_BARRIER_SERIAL_THREAD) {
			fprintf(stderr, "episode %d: thread %d: wait returned %d\n", e, id, ret);
			__atomic_store_n(&failed, 1, __ATOMIC_SEQ_CST);
			return NULL;
		}
		uint64_t a = __atomic_load_n(&arrived, __ATOMIC_SEQ_CST);
		if (a < (uint64_t)n * (uint64_t)(e + 1)) {
			fprintf(stderr, "episode %d: thread %d left after %llu arrivals, before all %d arrived\n", e, id,
				(unsigned long long)a, n * (e + 1));
			__atomic_store_n(&failed, 1, __ATOMIC_SEQ_CST);
		}
		for (j = 0; j < n; j++) {
			if (marks[e & 1][j] != e + 1) {
				fprintf(stderr, "episode %d: thread %d read thread %d's mark %d, want %d\n", e, id, j, marks[e & 1][j], e + 1);
				__atomic_store_n(&failed, 1, __ATOMIC_SEQ_CST);
				break;
			}
		}
		if (ret == BARRIERTUNE_BARRIER_SERIAL_THREAD)
			__atomic_add_fetch(&serial[e], 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int block, err, i;
	pthread_t *t;
	if (argc != 6) {
		fprintf(stderr, "usage: prop ALGORITHM|auto|hybrid:LEVELS N EPISODES BLOCK SEED\n");
		return 2;
	}
	n = atoi(argv[2]);
	episodes = atoi(argv[3]);
	block = atoi(argv[4]);
	seed = strtoul(argv[5], NULL, 10);
	if (strcmp(argv[1], "auto") == 0)
		err = barriertune_barrier_init(&bar, n);
	else if (strncmp(argv[1], "hybrid:", 7) == 0)
		err = init_hybrid(argv[1] + 7, block);
	else
		err = barriertune_barrier_init_algorithm(&bar, n, argv[1], 0, block);
	if (err != 0) {
		fprintf(stderr, "init %s %d: %s\n", argv[1], n, strerror(err));
		return 1;
	}
	serial = calloc((size_t)episodes, sizeof *serial);
	marks[0] = calloc((size_t)n, sizeof *marks[0]);
	marks[1] = calloc((size_t)n, sizeof *marks[1]);
	if (marks[0] == NULL || marks[1] == NULL)
		return 1;
	t = calloc((size_t)n, sizeof *t);
	if (serial == NULL || t == NULL)
		return 1;
	for (i = 0; i < n; i++) {
		if (pthread_create(&t[i], NULL, run, (void *)(intptr_t)i) != 0) {
			fprintf(stderr, "pthread_create %d failed\n", i);
			return 1;
		}
	}
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < episodes; i++) {
		if (serial[i] != 1) {
			fprintf(stderr, "episode %d: %d threads got 1 from wait, want exactly 1\n", i, serial[i]);
			failed = 1;
			break;
		}
	}
	if (failed)
		return 1;
	printf("ok %s %d\n", barriertune_barrier_algorithm(&bar), n);
	barriertune_barrier_destroy(&bar);
	free(serial);
	free(marks[0]);
	free(marks[1]);
	free(t);
	return 0;
}
