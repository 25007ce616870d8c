/* nohidden.c: 20 waits that sleep (the partner is 3 ms late) call neither
 * malloc nor fopen, and leave errno as it was. Built with
 * -Wl,--wrap=malloc,--wrap=fopen: the wrappers count calls made while the
 * waiting thread is inside its wait. */
#define _GNU_SOURCE
#include "barriertune.h"
#include <stdio.h>
#include <stdlib.h>

static _Thread_local int in_wait;
static int calls;

void *__real_malloc(size_t);
void *__wrap_malloc(size_t size)
{
	if (in_wait)
		__atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST);
	return __real_malloc(size);
}

FILE *__real_fopen(const char *, const char *);
FILE *__wrap_fopen(const char *path, const char *mode)
{
	if (in_wait)
		__atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST);
	return __real_fopen(path, mode);
}

static struct barriertune_barrier bar;

static void *late(void *arg)
{
	int i;
	(void)arg;
	for (i = 0; i < 20; i++) {
		struct timespec ts = {0, 3000000};
		nanosleep(&ts, NULL);
		barriertune_barrier_wait(&bar, 1);
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	int i, kept = 0;
	if (barriertune_barrier_init(&bar, 2) != 0)
		return 2;
	pthread_create(&t, NULL, late, NULL);
	for (i = 0; i < 20; i++) {
		errno = 12345;
		in_wait = 1;
		barriertune_barrier_wait(&bar, 0);
		in_wait = 0;
		kept += errno == 12345;
	}
	pthread_join(t, NULL);
	barriertune_barrier_destroy(&bar);
	if (calls != 0 || kept != 20) {
		printf("fail: %d malloc/fopen calls inside 20 waits, errno kept in %d of 20\n", calls, kept);
		return 1;
	}
	printf("ok: no malloc/fopen calls inside 20 sleeping waits, errno kept in 20 of 20\n");
	return 0;
}
