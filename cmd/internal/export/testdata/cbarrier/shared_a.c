/* Two translation units that include the header share the process's
 * facts and its count of spinning threads (one object each per program:
 * a weak symbol in C); the count is back to 0 once every wait returned.
 * shared_a.c runs two barriers of 2 threads at once (4 waiters on a
 * machine of 2 CPUs spin past the CPUs), shared_b.c reports its unit's
 * addresses. Prints "ok" or what went wrong. */
#include "barriertune.h"
#include <pthread.h>
#include <stdio.h>

const void *unit_b_spinning(void);
const void *unit_b_process(void);

static struct barriertune_barrier bars[2];

static void *run(void *arg)
{
	int k = (int)(long)arg, i;
	for (i = 0; i < 20000; i++)
		(void)barriertune_barrier_wait(&bars[k / 2], k % 2);
	return NULL;
}

int main(void)
{
	pthread_t t[4];
	int k;
	if ((const void *)&barriertune_spinning_ != unit_b_spinning() || (const void *)&barriertune_proc_ != unit_b_process()) {
		printf("each unit has its own process facts or spinning count\n");
		return 1;
	}
	for (k = 0; k < 2; k++) {
		if (barriertune_barrier_init_algorithm(&bars[k], 2, "dissemination", 0, 0) != 0)
			return 1;
	}
	for (k = 0; k < 4; k++)
		pthread_create(&t[k], NULL, run, (void *)(long)k);
	for (k = 0; k < 4; k++)
		pthread_join(t[k], NULL);
	if (__atomic_load_n(&barriertune_spinning_, __ATOMIC_SEQ_CST) != 0) {
		printf("%d threads still counted as spinning after every wait returned\n", barriertune_spinning_);
		return 1;
	}
	for (k = 0; k < 2; k++)
		barriertune_barrier_destroy(&bars[k]);
	printf("ok\n");
	return 0;
}
