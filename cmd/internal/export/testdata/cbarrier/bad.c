/* Bad input to barriertune.h, for the test in cbarrier_test.go: each case
 * prints its name and what it got; exit 0 when every call returned the
 * error code it should, at once. Built with and without
 * BARRIERTUNE_DEBUG. */
#define _POSIX_C_SOURCE 200809L
#include "barriertune.h"

#include <stdio.h>
#include <time.h>

static int bad;

static void expect(const char *what, int got, int want)
{
	printf("%s: %d (want %d)\n", what, got, want);
	if (got != want)
		bad = 1;
}

#if defined(BARRIERTUNE_DEBUG)
static struct barriertune_barrier two;
static int first;

static void *waiter(void *arg)
{
	(void)arg;
	first = barriertune_barrier_wait(&two, 0);
	return NULL;
}
#endif

int main(void)
{
	struct barriertune_barrier b;
	expect("init n=0", barriertune_barrier_init(&b, 0), EINVAL);
	expect("init n=-1", barriertune_barrier_init(&b, -1), EINVAL);
	expect("init n=cap+1", barriertune_barrier_init(&b, BARRIERTUNE_MAX_THREADS + 1), EINVAL);
	expect("init n=INT_MAX", barriertune_barrier_init(&b, INT_MAX), EINVAL);
	expect("init NULL", barriertune_barrier_init(NULL, 2), EINVAL);
	expect("init unknown algorithm", barriertune_barrier_init_algorithm(&b, 2, "goroutine", 0, -1), EINVAL);
	expect("init fan-in cap+1", barriertune_barrier_init_algorithm(&b, 2, "combining", BARRIERTUNE_MAX_FAN_IN + 1, -1), EINVAL);
	expect("init fan-in 65 (as wide as n)", barriertune_barrier_init_algorithm(&b, 2, "combining", 65, -1), 0);
	barriertune_barrier_destroy(&b);
	expect("init n=1", barriertune_barrier_init(&b, 1), 0);
	expect("wait id=-1", barriertune_barrier_wait(&b, -1), EINVAL);
	expect("wait id=n", barriertune_barrier_wait(&b, 1), EINVAL);
	expect("wait id=0 (alone: serial)", barriertune_barrier_wait(&b, 0), BARRIERTUNE_BARRIER_SERIAL_THREAD);
	expect("pin id=1", barriertune_barrier_pin(&b, 1), EINVAL);
	barriertune_barrier_destroy(&b);
	expect("init n=cap", barriertune_barrier_init_algorithm(&b, BARRIERTUNE_MAX_THREADS, "central", 0, -1), 0);
	barriertune_barrier_destroy(&b);
#if defined(BARRIERTUNE_DEBUG)
	{
		struct barriertune_barrier zero;
		pthread_t t;
		struct timespec ts = {0, 1000000};
		memset(&zero, 0, sizeof zero);
		expect("debug: wait on an uninitialised barrier", barriertune_barrier_wait(&zero, 0), EINVAL);
		expect("debug: init n=2", barriertune_barrier_init(&two, 2), 0);
		pthread_create(&t, NULL, waiter, NULL);
		while (!__atomic_load_n(&two.slots[0].busy, __ATOMIC_ACQUIRE))
			nanosleep(&ts, NULL); /* until thread 0 waits (its debug mark), however loaded the machine */
		expect("debug: wait id=0 while 0 waits", barriertune_barrier_wait(&two, 0), EBUSY);
		expect("debug: wait id=1 (releases 0)", barriertune_barrier_wait(&two, 1), 0);
		pthread_join(t, NULL);
		expect("debug: the waiter's return", first, BARRIERTUNE_BARRIER_SERIAL_THREAD);
		barriertune_barrier_destroy(&two);
		expect("debug: wait after destroy", barriertune_barrier_wait(&two, 0), EINVAL);
	}
#endif
	return bad;
}
