/*
 * mpiloop: the MPI barrier loop barriertune's check times under an MPI
 * implementation's defaults and under candidate settings of its knobs.
 *
 * Every rank calls MPI_Barrier over and over. First a warm-up: barriers in
 * steps of 10, untimed, until 200 are done or CHUNK seconds a communicator
 * have passed (rank 0 decides; MPI_Bcast tells the others between steps);
 * its last step gives K, the barriers of one chunk of about CHUNK seconds.
 *
 * A chunk is K barriers on one communicator (its K): every rank times it and
 * reads CLOCK_MONOTONIC the moment the chunk's last barrier returns (the
 * ranks share one node, so their clocks agree); rank 0 records the slowest
 * rank's time over K and the spread, the latest rank's leaving time minus
 * the earliest's.
 *
 *   mpiloop run SECONDS CHUNK MAXBARRIERS
 *
 * times chunks on MPI_COMM_WORLD (the implementation as launched) until
 * SECONDS of timed chunks, 64 chunks or MAXBARRIERS barriers, and prints
 * "chunk I NS SPREAD" per chunk (ns), then the trailer.
 *
 *   mpiloop serve CHUNK MAXBARRIERS [SETTING...]
 *
 * makes a communicator per SETTING (NAME=VALUE[,NAME=VALUE...]: integer
 * control variables written through the MPI tool interface,
 * MPI_T_cvar_write, before MPI_Comm_dup makes it, and again before each of
 * its chunks; their values at start are written back for the others; Open
 * MPI's coll/tuned reads its forced algorithm when a communicator is
 * made, so each communicator keeps its setting) and one for the defaults,
 * warms them up, prints "ready K TEXT" (TEXT as in the trailer) and serves commands read by rank 0 on
 * its standard input (what the launcher forwards), one a line:
 * "run I N" times N chunks on setting I's communicator (0: the defaults;
 * SETTINGs count from 1) and prints "result I NS... spread SPREAD..." (N
 * of each); "quit" ends. A setting whose variables the implementation
 * does not have, or does not let the program write, is dropped with
 * "dropped I REASON" (a run of it then answers "refused I").
 *
 *   mpiloop cvars NAME...
 *
 * prints "cvar NAME yes" or "cvar NAME no" (rank 0) for each control
 * variable NAME, whether the implementation has it (MPI_T_cvar_get_index):
 * MPICH ignores an environment variable of a CVAR it does not have without
 * a word.
 *
 * Trailer: "ranks N barriers B" and "library TEXT" (the first line of
 * MPI_Get_library_version).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WARMUP 200
#define STEP 10
#define MAXCHUNKS 64
#define MAXSETTINGS 16
#define MAXVARS 4

struct var {
	int index, value, start;
};

struct setting {
	struct var v[MAXVARS];
	int n, ok;
	long k;
	MPI_Comm comm;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int rwvar(int index, int *value, int write)
{
	MPI_T_cvar_handle h;
	int count, rc;
	if (MPI_T_cvar_handle_alloc(index, NULL, &h, &count) != MPI_SUCCESS)
		return -1;
	rc = count != 1 ? -1 : write ? MPI_T_cvar_write(h, value) : MPI_T_cvar_read(h, value);
	MPI_T_cvar_handle_free(&h);
	return rc == MPI_SUCCESS ? 0 : -1;
}

/* parse reads "NAME=INT[,NAME=INT]" into s; it returns a reason or NULL. */
static const char *parse(char *text, struct setting *s)
{
	char *save = NULL, *kv;
	for (kv = strtok_r(text, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '='), *end, name[256], desc[8];
		int index, nl = sizeof name, dl = sizeof desc, verb, bind, scope;
		long v;
		MPI_Datatype dt;
		MPI_T_enum en;
		if (!eq || s->n == MAXVARS)
			return "not NAME=INTEGER[,NAME=INTEGER], at most 4";
		*eq = 0;
		v = strtol(eq + 1, &end, 10);
		if (*end || end == eq + 1 || v < -1000000 || v > 1000000)
			return "the value is not an integer";
		if (MPI_T_cvar_get_index(kv, &index) != MPI_SUCCESS)
			return "no such control variable in this implementation";
		if (MPI_T_cvar_get_info(index, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope) != MPI_SUCCESS || dt != MPI_INT)
			return "not an integer control variable";
		s->v[s->n].index = index;
		s->v[s->n].value = (int)v;
		if (rwvar(index, &s->v[s->n].start, 0) != 0)
			return "the variable cannot be read";
		s->n++;
	}
	return s->n ? NULL : "empty";
}

/* apply writes s's variables (on = 1) or their values at start (on = 0). */
static int apply(struct setting *s, int on)
{
	int i, bad = 0;
	for (i = 0; i < s->n; i++)
		bad |= rwvar(s->v[i].index, on ? &s->v[i].value : &s->v[i].start, 1);
	return bad;
}

static struct setting set[MAXSETTINGS + 1];
static int nset = 1, rank, size;
static long done;

/* chunk times K barriers on setting idx; rank 0 gets the slowest rank's
 * time a barrier and the leaving spread, in ns. */
static void chunk(int idx, double *ns, double *spread)
{
	double s, e, took, slow = 0, late = 0, early = 0;
	long i;
	int j;
	for (j = 1; j < nset; j++)
		apply(&set[j], 0);
	apply(&set[idx], 1);
	MPI_Barrier(set[idx].comm);
	s = now();
	for (i = 0; i < set[idx].k; i++)
		MPI_Barrier(set[idx].comm);
	e = now();
	took = e - s;
	MPI_Reduce(&took, &slow, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&e, &late, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&e, &early, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
	*ns = 1e9 * slow / (double)set[idx].k;
	*spread = 1e9 * (late - early);
	done += set[idx].k + 1;
}

/* library: the first line of the implementation's version string. */
static void library(char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1])
{
	int len = 0;
	MPI_Get_library_version(lib, &len);
	lib[len < 0 ? 0 : len] = 0;
	lib[strcspn(lib, "\r\n")] = 0;
}

static void trailer(void)
{
	if (rank == 0) {
		char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1];
		library(lib);
		printf("ranks %d barriers %ld\nlibrary %s\n", size, done, lib);
		fflush(stdout);
	}
}

static int usage(const char *why)
{
	if (rank == 0)
		fprintf(stderr, "mpiloop: %s (usage: mpiloop run SECONDS CHUNK MAXBARRIERS | mpiloop serve CHUNK MAXBARRIERS [NAME=INT[,NAME=INT]...] | mpiloop cvars NAME...)\n", why);
	MPI_Finalize();
	return 2;
}

int main(int argc, char **argv)
{
	double chunkSeconds, seconds = 0, t0, ns[MAXCHUNKS], sp[MAXCHUNKS];
	long maxb, warm = 0;
	int serve, go = 1, i, j, prov;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc >= 2 && !strcmp(argv[1], "cvars")) {
		if (MPI_T_init_thread(MPI_THREAD_SINGLE, &prov) != MPI_SUCCESS)
			return usage("the MPI tool interface did not start");
		for (i = 2; rank == 0 && i < argc; i++) {
			int index;
			printf("cvar %s %s\n", argv[i], MPI_T_cvar_get_index(argv[i], &index) == MPI_SUCCESS ? "yes" : "no");
		}
		fflush(stdout);
		MPI_T_finalize();
		MPI_Finalize();
		return 0;
	}
	if (argc < 4)
		return usage("too few arguments");
	serve = !strcmp(argv[1], "serve");
	if (!serve && strcmp(argv[1], "run"))
		return usage("the mode is run or serve");
	if (!serve) {
		if (argc != 5)
			return usage("run takes 3 arguments");
		seconds = atof(argv[2]);
		argv++;
		argc--;
	}
	chunkSeconds = atof(argv[2]);
	maxb = atol(argv[3]);
	if ((!serve && !(seconds > 0 && seconds <= 60)) || !(chunkSeconds > 0 && chunkSeconds <= 10) || maxb < 1)
		return usage("SECONDS in (0, 60], CHUNK in (0, 10], MAXBARRIERS >= 1");
	if (argc - 4 > MAXSETTINGS)
		return usage("too many settings");
	set[0].comm = MPI_COMM_WORLD;
	set[0].ok = 1;
	if (serve) {
		if (argc > 4 && MPI_T_init_thread(MPI_THREAD_SINGLE, &prov) != MPI_SUCCESS)
			return usage("the MPI tool interface did not start");
		for (i = 4; i < argc; i++, nset++) {
			struct setting *s = &set[nset];
			const char *why;
			char *text = strdup(argv[i]);
			why = text ? parse(text, s) : "out of memory";
			free(text);
			if (!why && apply(s, 1) != 0)
				why = "the implementation did not let the program write it";
			if (why) {
				apply(s, 0);
				s->n = 0;
				s->comm = MPI_COMM_WORLD;
				if (rank == 0)
					printf("dropped %d %s\n", nset, why);
				continue;
			}
			MPI_Comm_dup(MPI_COMM_WORLD, &s->comm);
			apply(s, 0);
			s->ok = 1;
		}
		if (argc > 4)
			MPI_Comm_dup(MPI_COMM_WORLD, &set[0].comm);
	}

	/* warm-up on every communicator; each one's K from its last step */
	t0 = now();
	while (go) {
		for (j = 0; j < nset; j++) {
			double s = now(), each;
			if (!set[j].ok)
				continue;
			apply(&set[j], 1);
			for (i = 0; i < STEP; i++)
				MPI_Barrier(set[j].comm);
			apply(&set[j], 0);
			each = (now() - s) / STEP;
			set[j].k = (long)(chunkSeconds / (each > 1e-9 ? each : 1e-9));
			set[j].k = set[j].k < 1 ? 1 : set[j].k > maxb / 8 + 1 ? maxb / 8 + 1 : set[j].k;
		}
		warm += STEP;
		if (rank == 0)
			go = warm < WARMUP && warm * nset < maxb / 4 && now() - t0 < chunkSeconds * nset;
		MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
	}
	for (j = 0; j < nset; j++)
		MPI_Bcast(&set[j].k, 1, MPI_LONG, 0, MPI_COMM_WORLD);

	if (!serve) {
		double timed = 0;
		go = 1;
		for (i = 0; go; i++) {
			double s = now();
			chunk(0, &ns[i], &sp[i]);
			timed += now() - s;
			if (rank == 0)
				go = i + 1 < MAXCHUNKS && timed < seconds && done + set[0].k <= maxb;
			MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
		}
		if (rank == 0)
			for (j = 0; j < i; j++)
				printf("chunk %d %.1f %.1f\n", j, ns[j], sp[j]);
		trailer();
		MPI_Finalize();
		return 0;
	}

	if (rank == 0) {
		char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1];
		library(lib);
		printf("ready %ld %s\n", set[0].k, lib);
		fflush(stdout);
	}
	for (;;) {
		int cmd[2] = {-1, 0};
		if (rank == 0) {
			char line[128];
			if (fgets(line, sizeof line, stdin) && sscanf(line, "run %d %d", &cmd[0], &cmd[1]) == 2) {
				if (cmd[0] < 0 || cmd[0] >= nset || cmd[1] < 1 || cmd[1] > MAXCHUNKS) {
					printf("refused %d\n", cmd[0]);
					fflush(stdout);
					cmd[0] = -2;
				} else if (!set[cmd[0]].ok) {
					printf("refused %d\n", cmd[0]);
					fflush(stdout);
					cmd[0] = -2;
				}
			}
		}
		MPI_Bcast(cmd, 2, MPI_INT, 0, MPI_COMM_WORLD);
		if (cmd[0] == -1)
			break;
		if (cmd[0] == -2)
			continue;
		for (i = 0; i < cmd[1]; i++)
			chunk(cmd[0], &ns[i], &sp[i]);
		if (rank == 0) {
			printf("result %d", cmd[0]);
			for (i = 0; i < cmd[1]; i++)
				printf(" %.1f", ns[i]);
			printf(" spread");
			for (i = 0; i < cmd[1]; i++)
				printf(" %.1f", sp[i]);
			printf("\n");
			fflush(stdout);
		}
	}
	trailer();
	MPI_Finalize();
	return 0;
}
