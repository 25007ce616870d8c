/* The per-CPU arrival words of an outnumbered central barrier
 * (barriertune_cpu_arrive_ and barriertune_cpu_arrived_, and the deposits
 * barriertune_cpu_flush_ adds to the counter), for the test in
 * cbarrier_cpuwords_test.go: the protocol's table, step by step, then a
 * word under concurrent arrivals, and deposits and flushes that race. Exit 0 and "ok" when every step holds;
 * 1 and the first wrong step otherwise. "cpuwords size" prints how many
 * words a central barrier of one thread more than the allowed CPUs
 * keeps. */
#define _POSIX_C_SOURCE 200809L
#include "barriertune.h"

#include <stdio.h>

static int failed;

static void expect(int line, const char *what, int got, int want)
{
	if (got != want) {
		fprintf(stderr, "line %d: %s: %d, want %d\n", line, what, got, want);
		failed = 1;
	}
}

#define EXPECT(what, got, want) expect(__LINE__, what, got, want)

static struct barriertune_slot_ word; /* the word the threads share */
static int arrivals = 1000;

static void *arrive(void *arg)
{
	int i;
	(void)arg;
	for (i = 0; i < arrivals; i++)
		barriertune_cpu_arrive_(&word, 7);
	return NULL;
}

/* Deposits that race with flushes: two words, a counter of so many
 * threads that no add completes an episode. */
static struct barriertune_slot_ deps[2], counter;
static struct barriertune_flag_ never;
static struct barriertune_wait_ nowait;

static void *deposit(void *arg)
{
	int i, k = (int)(long)arg;
	for (i = 0; i < arrivals; i++) {
		struct barriertune_slot_ *d = &deps[(i + k) & 1];
		(void)__atomic_add_fetch(&d->dep, 1, __ATOMIC_ACQ_REL);
		if ((i + k) % 3 == 0)
			(void)barriertune_cpu_flush_(&deps[(i + k + 1) & 1], &counter, (uint64_t)1 << 40, &never, &nowait);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct barriertune_slot_ w;
	uint32_t e;
	int i;
	pthread_t t[4];

	memset(&w, 0, sizeof w);
	if (argc == 2 && strcmp(argv[1], "size") == 0) {
		struct barriertune_barrier b;
		if (barriertune_barrier_init_algorithm(&b, barriertune_allowed_cpus_() + 1, "central", 0, -1) != 0)
			return 1;
		printf("cpuwords %d\n", b.ncpuw);
		barriertune_barrier_destroy(&b);
		return 0;
	}

	/* The first episode a word sees has no episode before it: never
	 * arrived, however many arrive. */
	for (i = 0; i < 3; i++) {
		barriertune_cpu_arrive_(&w, 1);
		EXPECT("episode 1: arrived", barriertune_cpu_arrived_(&w, 1), 0);
	}
	/* Episode 2 expects the 3 of episode 1: arrived at the third. */
	barriertune_cpu_arrive_(&w, 2);
	EXPECT("episode 2, 1 of 3", barriertune_cpu_arrived_(&w, 2), 0);
	barriertune_cpu_arrive_(&w, 2);
	EXPECT("episode 2, 2 of 3", barriertune_cpu_arrived_(&w, 2), 0);
	barriertune_cpu_arrive_(&w, 2);
	EXPECT("episode 2, 3 of 3", barriertune_cpu_arrived_(&w, 2), 1);
	/* One that moved here from another CPU: still arrived. */
	barriertune_cpu_arrive_(&w, 2);
	EXPECT("episode 2, 4 of 3", barriertune_cpu_arrived_(&w, 2), 1);
	/* Asked about another episode than the word's: not arrived. */
	EXPECT("episode 3 asked of episode 2's word", barriertune_cpu_arrived_(&w, 3), 0);
	EXPECT("episode 1 asked of episode 2's word", barriertune_cpu_arrived_(&w, 1), 0);
	/* Episode 3 expects episode 2's 4; a thread moved away: 3 never
	 * say arrived (the waiter yields, as without the word). */
	for (i = 0; i < 3; i++)
		barriertune_cpu_arrive_(&w, 3);
	EXPECT("episode 3, 3 of 4", barriertune_cpu_arrived_(&w, 3), 0);
	/* An episode with no arrival on the CPU between: nothing expected,
	 * so not arrived. */
	barriertune_cpu_arrive_(&w, 5);
	EXPECT("episode 5 after episode 3", barriertune_cpu_arrived_(&w, 5), 0);
	barriertune_cpu_arrive_(&w, 6);
	EXPECT("episode 6, 1 of 1", barriertune_cpu_arrived_(&w, 6), 1);
	/* The episode number wraps at 2^32. */
	w.e = 0;
	e = 0xffffffffu;
	barriertune_cpu_arrive_(&w, e - 1);
	barriertune_cpu_arrive_(&w, e - 1);
	barriertune_cpu_arrive_(&w, e);
	barriertune_cpu_arrive_(&w, e);
	EXPECT("episode 2^32-1, 2 of 2", barriertune_cpu_arrived_(&w, e), 1);
	barriertune_cpu_arrive_(&w, 0);
	EXPECT("episode 0 after 2^32-1, 1 of 2", barriertune_cpu_arrived_(&w, 0), 0);
	barriertune_cpu_arrive_(&w, 0);
	EXPECT("episode 0 after 2^32-1, 2 of 2", barriertune_cpu_arrived_(&w, 0), 1);
	/* The count saturates at 65535 instead of wrapping into the episode. */
	w.e = 0;
	for (i = 0; i < 70000; i++)
		barriertune_cpu_arrive_(&w, 9);
	EXPECT("saturated count", (int)(w.e >> 16 & 0xffff), 0xffff);
	EXPECT("saturated episode", (int)(w.e >> 32), 9);
	barriertune_cpu_arrive_(&w, 10);
	EXPECT("after saturation, expected", (int)(w.e & 0xffff), 0xffff);
	/* Concurrent arrivals are all counted (a compare-and-swap loop). */
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, arrive, NULL);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	EXPECT("concurrent arrivals", (int)(word.e >> 16 & 0xffff), 4 * arrivals);

	/* Deposits: a flush adds what is deposited and releases the episode
	 * whose last arrival it adds (episode 1 of 3 threads, then 2). */
	{
		struct barriertune_slot_ d, c;
		struct barriertune_flag_ f;
		struct barriertune_wait_ wt;
		memset(&d, 0, sizeof d);
		memset(&c, 0, sizeof c);
		memset(&f, 0, sizeof f);
		memset(&wt, 0, sizeof wt);
		EXPECT("flush of nothing", barriertune_cpu_flush_(&d, &c, 3, &f, &wt), 0);
		d.dep = 2;
		EXPECT("flush of 2 of 3", barriertune_cpu_flush_(&d, &c, 3, &f, &wt), 0);
		EXPECT("counter after 2 of 3", (int)c.e, 2);
		EXPECT("deposit after its flush", (int)d.dep, 0);
		EXPECT("flag after 2 of 3", (int)f.v, 0);
		EXPECT("second flush of nothing", barriertune_cpu_flush_(&d, &c, 3, &f, &wt), 0);
		EXPECT("counter unchanged", (int)c.e, 2);
		d.dep = 1;
		EXPECT("flush of 3 of 3", barriertune_cpu_flush_(&d, &c, 3, &f, &wt), 1);
		EXPECT("flag after 3 of 3", (int)f.v, 1);
		d.dep = 3;
		EXPECT("flush of episode 2 at once", barriertune_cpu_flush_(&d, &c, 3, &f, &wt), 1);
		EXPECT("flag after episode 2", (int)f.v, 2);
		EXPECT("counter after episode 2", (int)c.e, 6);
		/* The episode wraps at 2^32 with the flag. */
		c.e = ((uint64_t)1 << 32) * 3 - 3;
		d.dep = 3;
		EXPECT("flush completing episode 2^32", barriertune_cpu_flush_(&d, &c, 3, &f, &wt), 1);
		EXPECT("flag after episode 2^32", (int)f.v, 0);
	}
	/* Every deposit is added once, however deposits and flushes race. */
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, deposit, (void *)(long)i);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	(void)barriertune_cpu_flush_(&deps[0], &counter, (uint64_t)1 << 40, &never, &nowait);
	(void)barriertune_cpu_flush_(&deps[1], &counter, (uint64_t)1 << 40, &never, &nowait);
	EXPECT("deposits added", (int)counter.e, 4 * arrivals);
	EXPECT("flag never released", (int)never.v, 0);
	if (failed)
		return 1;
	printf("ok\n");
	return 0;
}
