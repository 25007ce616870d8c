/* Every call of barriertune.h's C interface, for the warnings test in
 * cbarrier_test.go (-Wall -Wextra -Werror -pedantic, C11 and C17, built
 * as C++20 too). Runs a two-thread barrier for a few episodes. */
#include "barriertune.h"

#include <stdio.h>

static struct barriertune_barrier bar;

static void *run(void *arg)
{
	int id = (int)(intptr_t)arg, i, serial = 0;
	(void)barriertune_barrier_pin(&bar, id);
	for (i = 0; i < 1000; i++)
		serial += barriertune_barrier_wait(&bar, id) == BARRIERTUNE_BARRIER_SERIAL_THREAD;
	return (void *)(intptr_t)serial;
}

int main(void)
{
	pthread_t t;
	void *r;
	int serial;
	if (barriertune_barrier_init(&bar, 2) != 0)
		return 1;
	pthread_create(&t, NULL, run, (void *)(intptr_t)1);
	serial = (int)(intptr_t)run((void *)(intptr_t)0);
	pthread_join(t, &r);
	serial += (int)(intptr_t)r;
	printf("%s %d %d\n", barriertune_barrier_algorithm(&bar), serial, barriertune_machine_recognised());
	barriertune_barrier_destroy(&bar);
	return serial == 1000 ? 0 : 1;
}
