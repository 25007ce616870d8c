/*
 * omploop: the OpenMP loops barriertune's check times under each
 * runtime's defaults and under candidate settings of its knobs.
 *
 * One parallel region runs two loop shapes, one after the other, each
 * step ending in "#pragma omp barrier" (the runtime's plain barrier):
 *
 *   barrier  every thread does WORK multiply-adds of private work, then
 *            the barrier: a plain barrier loop;
 *   stencil  a 1-D three-point stencil over 256 points per thread,
 *            double-buffered, one barrier per step: work between
 *            barriers, with neighbours' data crossing threads.
 *
 * Before the timed loops, an untimed warm-up runs both shapes for WARMUP
 * seconds, then the barrier loop in 5 ms spans until the threads are on
 * as many distinct CPUs as they can be (sched_getcpu; at most 0.3 s): the
 * runtime's threads have started, waited and been placed by the kernel's
 * balancer before anything is timed. Each shape then runs
 * for SECONDS of wall time, split in CHUNKS equal spans; the program
 * prints each span's time per barrier, so that the caller can reject a
 * run still in transition (early spans far slower than later ones) and
 * take the median of the others (which a time slice lost to another
 * process moves little). It prints three lines:
 *
 *   threads N library PATH
 *   barrier CHUNK_NS CHUNK_NS ...
 *   stencil CHUNK_NS CHUNK_NS ...
 *
 * (PATH: the shared object that holds omp_get_num_threads, the runtime the
 * program loaded; "unknown" when the dynamic linker cannot say.)
 *
 * Usage: omploop [SECONDS [WARMUP [WORK [SHAPES]]]]
 * (defaults 0.05 s a shape, 0.02 s of warm-up, 64 multiply-adds a step,
 * SHAPES "both"; "barrier" or "stencil" runs one). Each span stops after
 * MAXSTEPS steps too, so a run is bounded even when the runtime waits
 * badly.
 *
 * Stopping: thread 0 decides after each step whether the span is over
 * and writes the decision to stop[i & 1] before the barrier of step i;
 * every thread reads stop[i & 1] after that barrier. The slot is written
 * again only in step i + 2, after the barrier of step i + 1, which no
 * thread passes before it has read it: no race, and all threads leave
 * together.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNKS 10
#define POINTS 256 /* stencil points per thread */
#define MAXSTEPS 100000000L
#define MAXTHREADS 4096
#define SETTLE_CAP 0.3 /* the most the warm-up waits for the threads to spread */

static int cpu_of[MAXTHREADS];

static unsigned long sink;

/*
 * span runs shape (0: barrier, 1: stencil) for seconds of wall time, in
 * the parallel region; thread 0 returns the time per barrier (ns). buf0
 * and buf1 are the stencil's buffers (n points each).
 */
static double span(int shape, double seconds, long work, double *buf0, double *buf1, long n, volatile int *stop)
{
	static double t0, ns;
	int me = omp_get_thread_num(), nt = omp_get_num_threads();
	long lo = (long)me * n / nt, hi = (long)(me + 1) * n / nt, i, k, j;
	unsigned long x = (unsigned long)me + 1;
	double *cur = buf0, *nxt = buf1, *tmp;

	#pragma omp barrier
	#pragma omp master
	t0 = omp_get_wtime();
	for (i = 0; ; i++) {
		if (shape == 0) {
			for (k = 0; k < work; k++)
				x = x * 6364136223846793005UL + 1442695040888963407UL;
		} else {
			for (j = lo; j < hi; j++) {
				double l = cur[j > 0 ? j - 1 : n - 1], r = cur[j + 1 < n ? j + 1 : 0];
				nxt[j] = (l + cur[j] + r) * (1.0 / 3.0);
			}
			tmp = cur;
			cur = nxt;
			nxt = tmp;
		}
		#pragma omp master
		{
			double now = omp_get_wtime();
			stop[i & 1] = i + 1 >= MAXSTEPS || now - t0 >= seconds;
			if (stop[i & 1])
				ns = (now - t0) * 1e9 / (double)(i + 1);
		}
		#pragma omp barrier
		if (stop[i & 1])
			break;
	}
	#pragma omp atomic
	sink += x + (unsigned long)cur[lo];
	#pragma omp barrier
	return ns;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.05;
	double warmup = argc > 2 ? atof(argv[2]) : 0.02;
	long work = argc > 3 ? atol(argv[3]) : 64;
	const char *shapes = argc > 4 ? argv[4] : "both";
	int first = 0, last = 1, s, c, ncpus;
	volatile int stop[2] = {0, 0};
	int nthreads = 0;
	double chunk[2][CHUNKS];
	double *buf0 = NULL, *buf1 = NULL;
	long n = 0;
	Dl_info info;
	const char *lib = "unknown";

	if (!(seconds > 0 && seconds <= 60) || !(warmup >= 0 && warmup <= 60) || work < 0 || work > 1000000) {
		fprintf(stderr, "omploop: SECONDS in (0, 60], WARMUP in [0, 60], WORK in [0, 1000000]\n");
		return 2;
	}
	{
		cpu_set_t set;
		ncpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
	}
	if (strcmp(shapes, "barrier") == 0)
		last = 0;
	else if (strcmp(shapes, "stencil") == 0)
		first = 1;
	else if (strcmp(shapes, "both") != 0) {
		fprintf(stderr, "omploop: SHAPES is both, barrier or stencil, not %s\n", shapes);
		return 2;
	}
	#pragma omp parallel
	{
		#pragma omp master
		{
			nthreads = omp_get_num_threads();
			if (nthreads <= MAXTHREADS) {
				n = (long)nthreads * POINTS;
				buf0 = calloc((size_t)n, sizeof *buf0);
				buf1 = calloc((size_t)n, sizeof *buf1);
			}
		}
		#pragma omp barrier
		if (buf0 != NULL && buf1 != NULL) {
			long j;
			int me = omp_get_thread_num(), sh, c;
			/* Each thread touches its own part first. */
			for (j = (long)me * POINTS; j < (long)(me + 1) * POINTS; j++)
				buf0[j] = buf1[j] = (double)(j % 7);
			/* The warm-up: untimed, both shapes. */
			if (warmup > 0)
				for (sh = first; sh <= last; sh++)
					span(sh, warmup / (last - first + 1), work, buf0, buf1, n, stop);
			/*
			 * Then until the threads are on as many CPUs as they can
			 * be (the kernel starts a runtime's threads beside the
			 * first and spreads them later: two threads sharing one
			 * CPU read 100 times slower for hundreds of ms), at most
			 * SETTLE_CAP seconds.
			 */
			if (warmup > 0)
				for (;;) {
					static int settled;
					static double s0;
					#pragma omp master
					if (s0 == 0)
						s0 = omp_get_wtime();
					span(first, 0.005, work, buf0, buf1, n, stop);
					cpu_of[me] = sched_getcpu();
					#pragma omp barrier
					#pragma omp master
					{
						int i, j, distinct = 0, nt = omp_get_num_threads();
						for (i = 0; i < nt; i++) {
							for (j = 0; j < i && cpu_of[j] != cpu_of[i]; j++)
								;
							distinct += j == i;
						}
						settled = distinct >= (nt < ncpus ? nt : ncpus) || omp_get_wtime() - s0 >= SETTLE_CAP;
					}
					#pragma omp barrier
					if (settled)
						break;
					#pragma omp barrier
				}
			for (sh = first; sh <= last; sh++)
				for (c = 0; c < CHUNKS; c++) {
					double ns = span(sh, seconds / CHUNKS, work, buf0, buf1, n, stop);
					#pragma omp master
					chunk[sh][c] = ns;
				}
		}
	}
	if (buf0 == NULL || buf1 == NULL) {
		fprintf(stderr, "omploop: no memory for %d threads' stencil (at most %d threads)\n", nthreads, MAXTHREADS);
		return 1;
	}
	if (dladdr((void *)omp_get_num_threads, &info) && info.dli_fname != NULL)
		lib = info.dli_fname;
	printf("threads %d library %s\n", nthreads, lib);
	for (s = first; s <= last; s++) {
		printf("%s", s == 0 ? "barrier" : "stencil");
		for (c = 0; c < CHUNKS; c++)
			printf(" %.1f", chunk[s][c]);
		printf("\n");
	}
	free(buf0);
	free(buf1);
	return 0;
}
