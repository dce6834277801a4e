/* env.c: the environment OpenMP and OpenBLAS read when they load, set before anything runs
 * (one exec of the command itself, at most). */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* libgomp and OpenBLAS read their environment once, when they load, before main (and libc's
 * start-up resets the environment a preinit function could change), so the command sets
 * what it needs and executes itself again, once, when the user set none of it:
 * - OMP_WAIT_POLICY=passive (unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set): by default a
 *   thread that finishes its share spins some 300,000 rounds before sleeping, and on a
 *   machine whose cores are all taken (the pipeline's sampler and reads, another process)
 *   that spinning takes the core from the very thread it waits for: two threads ran 1.5-3x
 *   slower than one. Passive waits measured best under load (bench sample at 2 threads,
 *   load 25 on 2 cores: 1.00x one thread passive, 0.64-0.83x with a 10,000-round spin,
 *   0.41-0.44x with the default spin; docs/train.md).
 *   Except `burrow train --full-graph` in one process (not under a launcher) on a machine
 *   where no other task is running at start (cpus_taken): GOMP_SPINCOUNT=20000, a bounded
 *   spin. No pipeline threads share its cores, and its epoch is many short parallel regions
 *   whose passive wake-ups do not halve: Cora gcn, 200 epochs, 2 threads against 1, quiet:
 *   1.53x passive, 1.80x with the spin; beside a CPU-bound process pinned to one of the two
 *   cores (another session), 0.99x passive, 0.52x with the spin (docs/train.md). A snapshot
 *   at start; what follows the load during the run is in the library: the kernels' work goes
 *   in chunks the threads take dynamically (a thread on a shared core takes fewer), and at
 *   the default thread count full-graph epochs run at every core or one, whichever measured
 *   faster lately (train/driver/autothreads.c; the bits do not depend on the count).
 * - OPENBLAS_NUM_THREADS=1 (unless it or GOTO_NUM_THREADS is set): the CPU backend runs
 *   OpenBLAS at one thread and splits GEMMs over its own OpenMP threads (one pool), so the
 *   threads OpenBLAS starts from its constructor would only idle; and under RLIMIT_AS each
 *   of them maps a 128 MiB buffer, retrying forever when the mapping fails (a hang at 100%
 *   CPU, not an error: train/compute/backend_cpu.c, blas_fit).
 * If the exec fails, the command carries on as it is. */
/* `burrow train ... --full-graph` outside a launcher's ranks. */
static bool full_graph_alone(char **argv)
{
	int rank;
	if (!argv[0] || !argv[1] || strcmp(argv[1], "train") != 0 || cli_launcher_size(&rank) != 1)
		return false;
	for (int i = 2; argv[i]; i++)
		if (strcmp(argv[i], "--full-graph") == 0)
			return true;
	return false;
}

/* This process's runnable threads (OpenBLAS's constructor has started its own by now). */
static long own_running(void)
{
	long n = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char path[64], buf[256];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%.20s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		const char *rp = f && fgets(buf, sizeof buf, f) ? strrchr(buf, ')') : NULL;
		n += rp && rp[1] == ' ' && rp[2] == 'R';
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

/* Whether another process's task holds a CPU now: the runnable tasks /proc/loadavg shows (its
 * fourth field, "running/total") less this process's own, the fewest of five looks 10 ms
 * apart (a busy process is in every look, a brief one in few). A snapshot at start: a job
 * started beside the run later is not seen. */
static bool cpus_taken(void)
{
	long fewest = -1;
	for (int k = 0; k < 5; k++) {
		long running = -1;
		FILE *f = fopen("/proc/loadavg", "r");
		if (!f || fscanf(f, "%*f %*f %*f %ld/", &running) != 1)
			running = -1;
		if (f)
			fclose(f);
		if (running < 0)
			return false;
		running -= own_running();
		fewest = fewest < 0 || running < fewest ? running : fewest;
		if (k < 4)
			nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
	}
	return fewest > 0;
}

void cli_env(char **argv)
{
	bool changed = false;
	if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT"))
		changed |= (full_graph_alone(argv) && !cpus_taken() ? setenv("GOMP_SPINCOUNT", "20000", 0)
								    : setenv("OMP_WAIT_POLICY", "passive", 0)) == 0;
	if (!getenv("OPENBLAS_NUM_THREADS") && !getenv("GOTO_NUM_THREADS"))
		changed |= setenv("OPENBLAS_NUM_THREADS", "1", 0) == 0;
	if (changed)
		execv("/proc/self/exe", argv);
}
