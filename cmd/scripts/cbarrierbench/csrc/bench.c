/* One barrier loop for cmd/scripts/cbarrierbench, built once per barrier:
 *
 *   -DBENCH_BT      barriertune.h's C barrier (the machine's choice)
 *   -DBENCH_PTHREAD pthread_barrier_t
 *   -DBENCH_OMP     #pragma omp barrier (gcc: libgomp, clang: libomp)
 *   -DBENCH_STD     std::barrier (built as C++20: libstdc++ or libc++)
 *   -DBENCH_BTCXX   barriertune::barrier (built as C++20)
 *   -DBENCH_YIELD   a central counter whose waiters spin with sched_yield
 *                   (the twenty-line barrier oversubscribed runs compare
 *                   against)
 *
 *   bench THREADS CPULIST|- EPISODES SAMPLES [LATE_NS]
 *
 * runs THREADS threads (pinned one per CPU of CPULIST, or unpinned with
 * -) through SAMPLES samples of EPISODES barrier episodes and prints one
 * line per sample: ns per episode. With LATE_NS, thread 1 sleeps LATE_NS
 * before every arrival and each line is instead the CPU time thread 0
 * burnt waiting, in percent of the sample's wall time. */
#ifndef __cplusplus
#define _GNU_SOURCE
#endif
#if defined(BENCH_BT) || defined(BENCH_BTCXX)
#include "barriertune.h"
#endif
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(BENCH_OMP)
#include <omp.h>
#endif
#if defined(BENCH_STD)
#include <barrier>
#endif

#define MAXT 256

static int n, ncpus, cpus[MAXT];
static long episodes, late_ns;
static int samples;

static double now(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void pin(int id)
{
	if (ncpus == 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpus[id % ncpus], &set);
	if (sched_setaffinity(0, sizeof set, &set) != 0) {
		fprintf(stderr, "bench: cannot pin thread %d to CPU %d\n", id, cpus[id % ncpus]);
		exit(1);
	}
}

#if defined(BENCH_BT)
static struct barriertune_barrier bar;
#define BARRIER(id) barriertune_barrier_wait(&bar, id)
#elif defined(BENCH_PTHREAD)
static pthread_barrier_t bar;
#define BARRIER(id) pthread_barrier_wait(&bar)
#elif defined(BENCH_STD)
static std::barrier<> *bar;
#define BARRIER(id) bar->arrive_and_wait()
#elif defined(BENCH_BTCXX)
static barriertune::barrier<> *bar;
#define BARRIER(id) bar->arrive_and_wait()
#elif defined(BENCH_OMP)
#define BARRIER(id) _Pragma("omp barrier")
#elif defined(BENCH_YIELD)
/* The arrival counter and the generation, each on a line of its own; the
 * last to arrive resets the counter and bumps the generation, the others
 * yield until it moves. */
static struct {
	_Alignas(128) unsigned count;
	_Alignas(128) unsigned gen;
} ybar;
static void ywait(void)
{
	unsigned g = __atomic_load_n(&ybar.gen, __ATOMIC_ACQUIRE);
	if (__atomic_add_fetch(&ybar.count, 1, __ATOMIC_ACQ_REL) == (unsigned)n) {
		__atomic_store_n(&ybar.count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&ybar.gen, g + 1, __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(&ybar.gen, __ATOMIC_ACQUIRE) == g)
		sched_yield();
}
#define BARRIER(id) ywait()
#else
#error "define one of BENCH_BT, BENCH_PTHREAD, BENCH_OMP, BENCH_STD, BENCH_BTCXX, BENCH_YIELD"
#endif

static double t0, cpu0;

/* body is one thread's run: SAMPLES samples, thread 0 times them. */
static void body(int id)
{
	pin(id);
	for (int s = 0; s < samples; s++) {
		BARRIER(id);
		if (id == 0) {
			t0 = now(CLOCK_MONOTONIC);
			cpu0 = now(CLOCK_THREAD_CPUTIME_ID);
		}
		for (long i = 0; i < episodes; i++) {
			if (late_ns > 0 && id == 1) {
				struct timespec ts = {late_ns / 1000000000, late_ns % 1000000000};
				nanosleep(&ts, NULL);
			}
			BARRIER(id);
		}
		if (id == 0) {
			double wall = now(CLOCK_MONOTONIC) - t0;
			if (late_ns > 0)
				printf("%.3f\n", 100 * (now(CLOCK_THREAD_CPUTIME_ID) - cpu0) / wall);
			else
				printf("%.2f\n", wall / (double)episodes);
			fflush(stdout);
		}
	}
}

#if !defined(BENCH_OMP)
static void *run(void *arg)
{
	body((int)(long)arg);
	return NULL;
}
#endif

int main(int argc, char **argv)
{
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: bench THREADS CPULIST|- EPISODES SAMPLES [LATE_NS]\n");
		return 2;
	}
	n = atoi(argv[1]);
	if (strcmp(argv[2], "-") != 0) {
		for (char *s = strtok(argv[2], ","); s && ncpus < MAXT; s = strtok(NULL, ","))
			cpus[ncpus++] = atoi(s);
	}
	episodes = atol(argv[3]);
	samples = atoi(argv[4]);
	late_ns = argc == 6 ? atol(argv[5]) : 0;
	if (n < 1 || n > MAXT || episodes < 1 || samples < 1 || late_ns < 0 || (late_ns > 0 && n < 2)) {
		fprintf(stderr, "bench: want 1..%d threads (2 or more with LATE_NS), EPISODES >= 1, SAMPLES >= 1\n", MAXT);
		return 2;
	}
#if defined(BENCH_BT)
	int err = barriertune_barrier_init(&bar, n);
	if (err != 0) {
		fprintf(stderr, "bench: barriertune_barrier_init: %s\n", strerror(err));
		return 1;
	}
	fprintf(stderr, "bench: barriertune chose %s\n", barriertune_barrier_algorithm(&bar));
#elif defined(BENCH_PTHREAD)
	pthread_barrier_init(&bar, NULL, (unsigned)n);
#elif defined(BENCH_STD)
	bar = new std::barrier<>(n);
#elif defined(BENCH_BTCXX)
	bar = new barriertune::barrier<>(n);
#endif
#if defined(BENCH_OMP)
	omp_set_dynamic(0);
#pragma omp parallel num_threads(n)
	body(omp_get_thread_num());
#else
	pthread_t t[MAXT];
	for (int i = 1; i < n; i++)
		pthread_create(&t[i], NULL, run, (void *)(long)i);
	body(0);
	for (int i = 1; i < n; i++)
		pthread_join(t[i], NULL);
#endif
	return 0;
}
