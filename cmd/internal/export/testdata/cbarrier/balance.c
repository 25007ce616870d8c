/* How an outnumbered central barrier spreads its participants over the
 * CPUs (barriertune_cpu_balance_), for cbarrier_balance_test.go. Needs a
 * process that may use two CPUs or more.
 *
 *   balance move          the decision, step by step, on words set by
 *                         hand: the caller moves to the CPU that had the
 *                         fewest, its affinity ends as it began, one move
 *                         per two episodes and each wait twice the last,
 *                         no move that would not help nor to the CPU that
 *                         released the episode before, none for a thread
 *                         the program pinned (the try is spent)
 *   balance share         the share of 8 participants a CPU
 *                         (barriertune_cpu_share_): 8, or 0 where the
 *                         program defines BARRIERTUNE_NO_BALANCE
 *   balance spread N E    N participants that all start on one CPU, E
 *                         episodes: the barrier property, every thread's
 *                         affinity the same at the end as at its start,
 *                         and how many ended on the busiest CPU
 *
 * Exit 0 and a line beginning "ok" when every step holds; 1 and the
 * first wrong step otherwise. */
#define _GNU_SOURCE
#include "barriertune.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed;

static void expect(int line, const char *what, long got, long want)
{
	if (got != want) {
		fprintf(stderr, "line %d: %s: %ld, want %ld\n", line, what, got, want);
		failed = 1;
	}
}

#define EXPECT(what, got, want) expect(__LINE__, what, (long)(got), (long)(want))

static cpu_set_t start; /* the process's CPUs */
static int first, second; /* the lowest two of them */

/* pin_to moves the caller onto cpu and leaves its affinity as it was. */
static void pin_to(int cpu)
{
	cpu_set_t one, mine;
	if (sched_getaffinity(0, sizeof mine, &mine) != 0)
		exit(1);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof one, &one) != 0 || sched_setaffinity(0, sizeof mine, &mine) != 0) {
		fprintf(stderr, "cannot move to CPU %d\n", cpu);
		exit(1);
	}
}

static int same_affinity(const cpu_set_t *want)
{
	cpu_set_t now;
	return sched_getaffinity(0, sizeof now, &now) == 0 && CPU_EQUAL(&now, want);
}

/* word sets w as after count arrivals on its CPU in episode e, with prev
 * in the episode before. */
static void word(struct barriertune_slot_ *w, uint32_t e, uint32_t count, uint32_t prev)
{
	__atomic_store_n(&w->e, (uint64_t)e << 32 | count << 16 | prev, __ATOMIC_RELAXED);
}

/* counts sets every word as after episode e-1 with 5 participants on
 * its CPU, but fewest on CPU to, and the caller's CPU (first) as after
 * its arrival in e, the first there. */
static void counts(struct barriertune_slot_ *words, int nwords, uint32_t e, int to, uint32_t fewest)
{
	int d;
	for (d = 0; d < nwords; d++)
		word(&words[d], e - 1, d == to ? fewest : 5, 0);
	word(&words[first], e, 1, 5);
}

static int move(void)
{
	enum { E = 100 };
	int nwords = barriertune_cpu_words_(64, 1), mask = nwords - 1, share;
	struct barriertune_slot_ *words = calloc((size_t)nwords, sizeof *words);
	struct barriertune_wait_ w;
	cpu_set_t pinned;
	if (words == NULL)
		return 1;
	memset(&w, 0, sizeof w);
	share = barriertune_cpu_share_(2 * CPU_COUNT(&start), nwords);
	EXPECT("the share of twice the CPUs' threads", share, 2);
	EXPECT("the share of one word", barriertune_cpu_share_(8, 0), 0);
	EXPECT("the share of INT_MAX threads", barriertune_cpu_share_(INT_MAX, nwords),
	       INT_MAX / CPU_COUNT(&start) + (INT_MAX % CPU_COUNT(&start) != 0));
	w.share = share;

	/* Every CPU but second had 5 participants in episode E-1, second 3:
	 * the first to arrive on first in E moves to second. */
	pin_to(first);
	counts(words, nwords, E, second, 3);
	barriertune_cpu_balance_(&w, words, mask, first, words[first].e, E, 0);
	EXPECT("the CPU after the move", sched_getcpu(), second);
	EXPECT("the affinity after the move is the one before", same_affinity(&start), 1);
	EXPECT("the episode of the move", (long)(w.moved >> 32), E);
	EXPECT("the wait before the next", (long)(uint32_t)w.moved, 2);

	/* Within two episodes of it, no move; two after, one, and the wait
	 * doubles. */
	pin_to(first);
	counts(words, nwords, E + 1, second, 3);
	barriertune_cpu_balance_(&w, words, mask, first, words[first].e, E + 1, 0);
	EXPECT("the CPU one episode after a move", sched_getcpu(), first);
	counts(words, nwords, E + 2, second, 3);
	barriertune_cpu_balance_(&w, words, mask, first, words[first].e, E + 2, 0);
	EXPECT("the CPU two episodes after a move", sched_getcpu(), second);
	EXPECT("the wait doubled", (long)(uint32_t)w.moved, 4);

	/* A move that would not help (5 against 4): none, no try spent. */
	pin_to(first);
	counts(words, nwords, E + 6, second, 4);
	barriertune_cpu_balance_(&w, words, mask, first, words[first].e, E + 6, 0);
	EXPECT("the CPU where the fewest had one fewer", sched_getcpu(), first);
	EXPECT("no try spent", (long)(w.moved >> 32), E + 2);

	/* Nor to the CPU that released the episode before (its participants
	 * finished last): no try spent. */
	counts(words, nwords, E + 6, second, 3);
	barriertune_cpu_balance_(&w, words, mask, first, words[first].e, E + 6, (uint32_t)second + 1);
	EXPECT("the CPU where the fewest released the episode before", sched_getcpu(), first);
	EXPECT("no try spent on it", (long)(w.moved >> 32), E + 2);

	/* A thread the program pinned stays pinned: the try is spent. */
	counts(words, nwords, E + 6, second, 3);
	CPU_ZERO(&pinned);
	CPU_SET(first, &pinned);
	if (sched_setaffinity(0, sizeof pinned, &pinned) != 0)
		return 1;
	barriertune_cpu_balance_(&w, words, mask, first, words[first].e, E + 6, 0);
	EXPECT("a pinned thread's CPU", sched_getcpu(), first);
	EXPECT("a pinned thread's affinity", same_affinity(&pinned), 1);
	EXPECT("the try spent on it", (long)(w.moved >> 32), E + 6);
	EXPECT("the wait after it", (long)(uint32_t)w.moved, 8);
	if (sched_setaffinity(0, sizeof start, &start) != 0)
		return 1;

	/* Wrapping episode numbers: the wait counts modulo 2^32. */
	w.moved = (uint64_t)0xfffffffeu << 32 | 8;
	pin_to(first);
	counts(words, nwords, 4, second, 3);
	barriertune_cpu_balance_(&w, words, mask, first, words[first].e, 4, 0);
	EXPECT("six episodes after, across the wrap, within the wait", sched_getcpu(), first);
	counts(words, nwords, 6, second, 3);
	barriertune_cpu_balance_(&w, words, mask, first, words[first].e, 6, 0);
	EXPECT("eight episodes after, across the wrap", sched_getcpu(), second);
	free(words);
	if (failed)
		return 1;
	printf("ok move\n");
	return 0;
}

static struct barriertune_barrier bar;
static int nthreads;
static long episodes;
static int *arrived;   /* per participant: the episodes it has begun */
static int *ended;     /* per participant: the CPU it ended on */

static void *participant(void *arg)
{
	int id = (int)(long)arg, k;
	long e;
	cpu_set_t mine;
	if (sched_getaffinity(0, sizeof mine, &mine) != 0)
		exit(1);
	pin_to(first);
	barriertune_barrier_wait(&bar, id);
	for (e = 1; e <= episodes; e++) {
		__atomic_store_n(&arrived[id], (int)e, __ATOMIC_RELAXED);
		barriertune_barrier_wait(&bar, id);
		for (k = 0; k < nthreads; k++) {
			if (__atomic_load_n(&arrived[k], __ATOMIC_RELAXED) < e) {
				fprintf(stderr, "participant %d left episode %ld before %d arrived\n", id, e, k);
				exit(1);
			}
		}
		barriertune_barrier_wait(&bar, id);
	}
	if (!same_affinity(&mine)) {
		fprintf(stderr, "participant %d: its affinity changed\n", id);
		exit(1);
	}
	ended[id] = sched_getcpu();
	return NULL;
}

static int spread(int n, long e)
{
	pthread_t t[256];
	int i, err, most = 0, c;
	if (n < 2 || n > 256 || e < 1)
		return 2;
	nthreads = n, episodes = e;
	arrived = calloc((size_t)n, sizeof *arrived);
	ended = calloc((size_t)n, sizeof *ended);
	if (arrived == NULL || ended == NULL)
		return 1;
	if ((err = barriertune_barrier_init_algorithm(&bar, n, "central", 0, 1)) != 0) {
		fprintf(stderr, "init: %s\n", strerror(err));
		return 1;
	}
	for (i = 0; i < n; i++) {
		if (pthread_create(&t[i], NULL, participant, (void *)(long)i) != 0)
			return 1;
	}
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	for (c = 0; c < CPU_SETSIZE; c++) {
		int k = 0;
		for (i = 0; i < n; i++)
			k += ended[i] == c;
		if (k > most)
			most = k;
	}
	barriertune_barrier_destroy(&bar);
	printf("ok spread: %d of %d participants on the busiest CPU at the end (share %d)\n", most, n, (n + CPU_COUNT(&start) - 1) / CPU_COUNT(&start));
	return 0;
}

int main(int argc, char **argv)
{
	int c;
	if (sched_getaffinity(0, sizeof start, &start) != 0 || CPU_COUNT(&start) < 2) {
		fprintf(stderr, "balance: needs two CPUs or more\n");
		return 2;
	}
	for (first = -1, second = -1, c = 0; c < CPU_SETSIZE; c++) {
		if (CPU_ISSET(c, &start)) {
			if (first < 0)
				first = c;
			else if (second < 0)
				second = c;
		}
	}
	for (c = CPU_SETSIZE - 1; c >= 0 && !CPU_ISSET(c, &start); c--)
		;
	if (c >= 256) {
		printf("skip: CPU %d: CPUs numbered 256 and above share arrival words, and nobody moves\n", c);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "share") == 0) {
		printf("share %d\n", barriertune_cpu_share_(8 * CPU_COUNT(&start), barriertune_cpu_words_(64, 1)));
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "move") == 0)
		return move();
	if (argc == 4 && strcmp(argv[1], "spread") == 0)
		return spread(atoi(argv[2]), atol(argv[3]));
	fprintf(stderr, "usage: balance move | balance share | balance spread N EPISODES\n");
	return 2;
}
