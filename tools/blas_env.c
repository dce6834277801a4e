/* blas_env.c: under RLIMIT_AS, restart once with OpenBLAS at one thread, before anything runs. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

/* OpenBLAS starts its threads from its own constructor, before main, and each maps a
 * 128 MiB work buffer, retrying forever when the mapping fails: under a small RLIMIT_AS
 * the command would spin at 100% CPU and hang at exit. Its thread count can only be
 * chosen before it loads (OPENBLAS_NUM_THREADS; the environment cannot be changed in
 * time from inside the process), so with a limit and no count set by the user, burrow
 * execs itself once with OPENBLAS_NUM_THREADS=1, and the CPU backend then adds the
 * threads that fit in what is left (train/compute/backend_cpu.c, blas_fit). A count the
 * user set is kept as it is. If the exec fails, the command carries on as it is. */
void cli_blas_env(char **argv)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return;
	if (getenv("OPENBLAS_NUM_THREADS") || getenv("GOTO_NUM_THREADS"))
		return;
	if (setenv("OPENBLAS_NUM_THREADS", "1", 1) != 0)
		return;
	execv("/proc/self/exe", argv);
	unsetenv("OPENBLAS_NUM_THREADS");
}
