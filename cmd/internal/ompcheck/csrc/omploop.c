/*
 * omploop: the OpenMP barrier loop barriertune's check times under each
 * runtime's defaults and under candidate settings of its knobs.
 *
 * One parallel region; every thread does a little private work, then
 * "#pragma omp barrier" (the runtime's plain barrier), over and over. The
 * loop stops after SECONDS of wall time or MAXITER barriers, whichever
 * comes first, so a run is bounded even when the runtime waits badly. It
 * prints two lines:
 *
 *   threads N barriers B ns_per_barrier X chunk_median_ns Y
 *   library PATH
 *
 * (X: the whole loop's time over its barriers; Y: the median over the
 * loop's CHUNKS equal spans of time of each span's time per barrier, which
 * a time slice lost to another process moves less.)
 * (PATH: the shared object that holds omp_get_num_threads, the runtime the
 * program loaded; "unknown" when the dynamic linker cannot say.)
 *
 * Usage: omploop [SECONDS [MAXITER [WORK]]]
 * (defaults 0.02 s, 100000000 barriers, 64 units of work per step).
 *
 * Stopping: thread 0 decides after each step whether the time is up and
 * writes the decision to stop[i & 1] before the barrier of step i; every
 * thread reads stop[i & 1] after that barrier. The slot is written again
 * only in step i + 2, after the barrier of step i + 1, which no thread
 * passes before it has read it: no race, and all threads leave together.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define CHUNKS 5

static volatile unsigned long sink;

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.02;
	long maxiter = argc > 2 ? atol(argv[2]) : 100000000L;
	long work = argc > 3 ? atol(argv[3]) : 64;
	volatile int stop[2] = {0, 0};
	long done = 0;
	int nthreads = 0;
	double t0 = 0, t1 = 0, c0 = 0, chunk[CHUNKS], med;
	long i0 = 0;
	int nchunks = 0;
	Dl_info info;
	const char *lib = "unknown";

	if (!(seconds > 0 && seconds <= 60) || maxiter < 1 || work < 0 || work > 1000000) {
		fprintf(stderr, "omploop: SECONDS in (0, 60], MAXITER >= 1, WORK in [0, 1000000]\n");
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
			t0 = c0 = omp_get_wtime();
		}
		for (i = 0; ; i++) {
			for (k = 0; k < work; k++)
				x = x * 6364136223846793005UL + 1442695040888963407UL;
			#pragma omp master
			{
				double now = omp_get_wtime();
				if (nchunks < CHUNKS && now - c0 >= seconds / CHUNKS) {
					chunk[nchunks++] = (now - c0) * 1e9 / (double)(i + 1 - i0);
					c0 = now;
					i0 = i + 1;
				}
				stop[i & 1] = i + 1 >= maxiter || now - t0 >= seconds;
			}
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
	if (dladdr((void *)omp_get_num_threads, &info) && info.dli_fname != NULL)
		lib = info.dli_fname;
	med = (t1 - t0) * 1e9 / (double)done;
	if (nchunks > 0) {
		qsort(chunk, (size_t)nchunks, sizeof chunk[0], cmp);
		med = nchunks % 2 ? chunk[nchunks / 2] : (chunk[nchunks / 2 - 1] + chunk[nchunks / 2]) / 2;
	}
	printf("threads %d barriers %ld ns_per_barrier %.1f chunk_median_ns %.1f\n", nthreads, done, (t1 - t0) * 1e9 / (double)done, med);
	printf("library %s\n", lib);
	return 0;
}
