/* The check's measurement on OS threads in C: the exported header's own
 * barrier (barriertune.h, the safe default: no table), as a C or C++
 * program's threads run it.
 *
 *   osthreads N SAMPLES TARGET_NS ALGORITHM...
 *
 * N unpinned threads (created once) run each ALGORITHM through
 * barriertune_barrier_init_algorithm(..., block -1): init decides from the
 * CPUs the process may use, as a program's own init does. Each algorithm
 * is first calibrated: the episodes of a run double until a run takes
 * TARGET_NS twice in a row. Then SAMPLES rounds run every algorithm once,
 * in a rotated order, each run after an untimed burst of an eighth of its
 * episodes, and print one line per run as it ends:
 *
 *   sample ALGORITHM NS_PER_EPISODE
 *
 * (thread 0's time from a common start to the end of its episodes). Exit
 * 0 after the last; 2 on a usage error; 1 when a barrier cannot be made,
 * with one line on standard error saying why. */
#define _POSIX_C_SOURCE 200809L
#include "barriertune.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 4096
#define MAX_EPISODES (1L << 22)

static pthread_barrier_t ctl;
static struct barriertune_barrier bar;
static long episodes; /* of the run in progress; 0: stop */
static int n;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* run_episodes: one participant's part of a run (the burst, then the
 * timed episodes), between the control barrier's waits. */
static void run_episodes(int id, double *el)
{
	long k = episodes, i, burst = k / 8;
	double t0;
	for (i = 0; i < burst; i++)
		(void)barriertune_barrier_wait(&bar, id);
	pthread_barrier_wait(&ctl);
	t0 = now_ns();
	for (i = 0; i < k; i++)
		(void)barriertune_barrier_wait(&bar, id);
	if (el != NULL)
		*el = now_ns() - t0;
}

static void *participant(void *arg)
{
	int id = (int)(long)arg;
	for (;;) {
		pthread_barrier_wait(&ctl); /* start: episodes and bar are set */
		if (episodes == 0)
			return NULL;
		run_episodes(id, NULL);
		pthread_barrier_wait(&ctl); /* end */
	}
}

/* timed: one run of k episodes of algorithm alg; ns per episode, or -1
 * when the barrier cannot be made. */
static double timed(const char *alg, long k)
{
	double el = 0;
	int err = barriertune_barrier_init_algorithm(&bar, n, alg, 0, -1);
	if (err != 0) {
		fprintf(stderr, "osthreads: %s with %d threads: %s\n", alg, n, strerror(err));
		return -1;
	}
	episodes = k;
	pthread_barrier_wait(&ctl);
	run_episodes(0, &el);
	pthread_barrier_wait(&ctl);
	barriertune_barrier_destroy(&bar);
	return el / (double)k;
}

int main(int argc, char **argv)
{
	int samples, nalg, i, s, r;
	double target;
	long *k;
	pthread_t *t;
	if (argc < 5 || (n = atoi(argv[1])) < 2 || n > MAX_THREADS || (samples = atoi(argv[2])) < 1 || samples > 1000 ||
	    (target = atof(argv[3])) < 1000 || target > 1e9) {
		fprintf(stderr, "usage: osthreads N(2-%d) SAMPLES(1-1000) TARGET_NS(1000-1e9) ALGORITHM...\n", MAX_THREADS);
		return 2;
	}
	nalg = argc - 4;
	k = calloc((size_t)nalg, sizeof *k);
	t = calloc((size_t)n, sizeof *t);
	if (k == NULL || t == NULL || pthread_barrier_init(&ctl, NULL, (unsigned)n) != 0) {
		fprintf(stderr, "osthreads: out of memory\n");
		return 1;
	}
	for (i = 1; i < n; i++) {
		if (pthread_create(&t[i], NULL, participant, (void *)(long)i) != 0) {
			fprintf(stderr, "osthreads: cannot create thread %d of %d\n", i, n);
			return 1;
		}
	}
	for (i = 0; i < nalg; i++) { /* calibrate */
		int reached = 0;
		for (k[i] = 1;;) {
			double ns = timed(argv[4 + i], k[i]);
			if (ns < 0)
				return 1;
			if (ns * (double)k[i] >= target) {
				if (reached || k[i] >= MAX_EPISODES)
					break;
				reached = 1;
			} else if (k[i] < MAX_EPISODES) {
				k[i] *= 2;
				reached = 0;
			} else {
				break;
			}
		}
	}
	for (s = 0; s < samples; s++) {
		for (r = 0; r < nalg; r++) {
			i = (r + s) % nalg;
			double ns = timed(argv[4 + i], k[i]);
			if (ns < 0)
				return 1;
			printf("sample %s %.1f\n", argv[4 + i], ns);
			fflush(stdout);
		}
	}
	episodes = 0;
	pthread_barrier_wait(&ctl);
	for (i = 1; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
