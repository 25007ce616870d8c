/*
 * ompbarrier: an OpenMP barrier loop for scripts/ompbench.
 *
 * One parallel region; every thread does a little private work, then
 * "#pragma omp barrier", over and over. The loop stops after SECONDS of
 * wall time or MAXITER barriers, whichever comes first, so a run is bounded
 * even when the runtime waits badly. It prints one line:
 *
 *   threads N barriers B ns_per_barrier X
 *
 * Usage: ompbarrier [SECONDS [MAXITER [WORK]]]
 * (defaults 0.2 s, 10000000 barriers, 64 units of work per step).
 *
 * Stopping: thread 0 decides after each step whether the time is up and
 * writes the decision to stop[i & 1] before the barrier of step i; every
 * thread reads stop[i & 1] after that barrier. The slot is written again
 * only in step i + 2, after the barrier of step i + 1, which no thread
 * passes before it has read it: no race, and all threads leave together.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.2;
	long maxiter = argc > 2 ? atol(argv[2]) : 10000000L;
	long work = argc > 3 ? atol(argv[3]) : 64;
	volatile int stop[2] = {0, 0};
	long done = 0;
	int nthreads = 0;
	double t0 = 0, t1 = 0;

	if (!(seconds > 0 && seconds <= 60) || maxiter < 1 || work < 0 || work > 1000000) {
		fprintf(stderr, "ompbarrier: SECONDS in (0, 60], MAXITER >= 1, WORK in [0, 1000000]\n");
		return 2;
	}
	#pragma omp parallel
	{
		unsigned long x = (unsigned long)omp_get_thread_num() + 1;
		long i, k;
		/* Warm-up: every thread has started and waited once. */
		#pragma omp barrier
		#pragma omp master
		{
			nthreads = omp_get_num_threads();
			t0 = omp_get_wtime();
		}
		for (i = 0; ; i++) {
			for (k = 0; k < work; k++)
				x = x * 6364136223846793005UL + 1442695040888963407UL;
			#pragma omp master
			stop[i & 1] = i + 1 >= maxiter || omp_get_wtime() - t0 >= seconds;
			#pragma omp barrier
			if (stop[i & 1])
				break;
		}
		#pragma omp master
		{
			t1 = omp_get_wtime();
			done = i + 1;
		}
		sink += x;
	}
	printf("threads %d barriers %ld ns_per_barrier %.1f\n", nthreads, done, (t1 - t0) * 1e9 / (double)done);
	return 0;
}
