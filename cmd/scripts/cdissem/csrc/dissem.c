// A hand-written C dissemination barrier on pinned threads, the reference
// cmd/scripts/cdissem measures Go's barriers against: episode-numbered flags,
// one per thread and round on a 128-byte line of its own, release stores,
// acquire loads and PAUSE while waiting (inline, or with -DRELAX_CALL
// behind a call).
//
//   dissem CPU0,CPU1[,...] EPISODES SAMPLES
//
// prints one line per sample: ns per episode.
//
//   dissem pingpong CPU0,CPU1 ROUNDTRIPS
//
// prints the one-way latency of a flag ping-pong between the two CPUs, in
// ns: the host state the samples beside it ran in (a VM's vCPUs on one
// core's siblings or on separate cores).
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#if defined(RELAX_CALL)
// Built with -DRELAX_CALL, the PAUSE sits behind a call, the shape Go's
// loop has (Go cannot inline assembly): on the AMD EPYC guest that loop ran
// 0.52-0.82x the inline one (docs/algorithms.md, "The loop's shape").
__attribute__((noinline)) static void relax(void) { _mm_pause(); }
#else
#define relax() _mm_pause()
#endif
#elif defined(__aarch64__)
#define relax() __asm__ __volatile__("isb" ::: "memory")
#else
#define relax() ((void)0)
#endif

#define MAXT 64
#define MAXR 6

typedef struct {
	_Alignas(128) unsigned long v;
} flag_t;

static flag_t flags[MAXT][MAXR];
static int n, cpus[MAXT];
static long episodes;
static unsigned long base; // episodes done before this sample
static double elapsed;     // thread 0's time for the sample's episodes, ns

static void barrier(int id, unsigned long e) {
	for (int r = 0, d = 1; d < n; r++, d <<= 1) {
		__atomic_store_n(&flags[(id + d) % n][r].v, e, __ATOMIC_RELEASE);
		while (__atomic_load_n(&flags[id][r].v, __ATOMIC_ACQUIRE) < e)
			relax();
	}
}

// pin binds the calling thread to cpus[id], or ends the program.
static void pin(int id) {
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpus[id], &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
		fprintf(stderr, "dissem: cannot pin thread %d to CPU %d\n", id, cpus[id]);
		exit(1);
	}
}

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

// run is one thread's sample. Thread 0 times the EPISODES episodes after
// the first, which every thread enters once started and pinned: starting
// threads costs 0.5-3 ms on a VM (its vCPUs wake from idle), as much as
// 100,000 fast episodes, and is not the barrier's.
static void *run(void *arg) {
	int id = (int)(long)arg;
	pin(id);
	barrier(id, base + 1); // start together
	double t0 = now();
	for (long i = 2; i <= episodes + 1; i++)
		barrier(id, base + (unsigned long)i);
	if (id == 0)
		elapsed = now() - t0;
	return NULL;
}

static volatile unsigned long ping __attribute__((aligned(128)));
static volatile unsigned long pong __attribute__((aligned(128)));

// exchange is round trip i of the ping-pong, for thread id.
static void exchange(int id, unsigned long i) {
	if (id == 0) {
		__atomic_store_n(&ping, i, __ATOMIC_RELEASE);
		while (__atomic_load_n(&pong, __ATOMIC_ACQUIRE) < i)
			relax();
	} else {
		while (__atomic_load_n(&ping, __ATOMIC_ACQUIRE) < i)
			relax();
		__atomic_store_n(&pong, i, __ATOMIC_RELEASE);
	}
}

// pingpong is one thread's ping-pong; thread 0 times the round trips
// after the first (as run times the episodes).
static void *pingpong(void *arg) {
	int id = (int)(long)arg;
	pin(id);
	exchange(id, 1); // start together
	double t0 = now();
	for (unsigned long i = 2; i <= (unsigned long)episodes + 1; i++)
		exchange(id, i);
	if (id == 0)
		elapsed = now() - t0;
	return NULL;
}

int main(int argc, char **argv) {
	if (argc == 4 && strcmp(argv[1], "pingpong") == 0) {
		for (char *s = strtok(argv[2], ","); s && n < 2; s = strtok(NULL, ","))
			cpus[n++] = atoi(s);
		episodes = atol(argv[3]);
		if (n < 2 || episodes < 1) {
			fprintf(stderr, "dissem: pingpong wants two CPUs and ROUNDTRIPS >= 1\n");
			return 2;
		}
		pthread_t t;
		pthread_create(&t, NULL, pingpong, (void *)1L);
		pingpong((void *)0L);
		pthread_join(t, NULL);
		printf("%.2f\n", elapsed / (double)episodes / 2);
		return 0;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: dissem CPU0,CPU1[,...] EPISODES SAMPLES\n");
		return 2;
	}
	for (char *s = strtok(argv[1], ","); s && n < MAXT; s = strtok(NULL, ","))
		cpus[n++] = atoi(s);
	episodes = atol(argv[2]);
	int samples = atoi(argv[3]);
	if (n < 2 || n > (1 << MAXR) || episodes < 1 || samples < 1) {
		fprintf(stderr, "dissem: want 2..%d CPUs, EPISODES >= 1, SAMPLES >= 1\n", 1 << MAXR);
		return 2;
	}
	pthread_t t[MAXT];
	for (int s = 0; s < samples; s++) {
		for (int i = 1; i < n; i++)
			pthread_create(&t[i], NULL, run, (void *)(long)i);
		run(0);
		for (int i = 1; i < n; i++)
			pthread_join(t[i], NULL);
		printf("%.2f\n", elapsed / (double)episodes);
		base += (unsigned long)episodes + 1;
	}
	return 0;
}
