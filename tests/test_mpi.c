/* test_mpi.c: MPI programs run under mpirun with several ranks (the programs in tests/mpi/). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(mpi, .timeout = 120);

/* mpirun as a user would, allowing root (CI runs as root) and more ranks than cores. Under
 * AddressSanitizer, leak detection is off for the ranks: Open MPI's plugins leak at exit
 * from modules already unloaded, which no suppression can name; memory errors still abort. */
#define MPIRUN                                                                                       \
	"ASAN_OPTIONS=\"${ASAN_OPTIONS}:detect_leaks=0\" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " \
	"OMPI_MCA_rmaps_base_oversubscribe=1 mpirun"

static const char *prog(const char *name)
{
	static char path[4096];
	const char *b = getenv("BURROW_BUILD");
	snprintf(path, sizeof path, "%s/tests/%s", b && *b ? b : "build", name);
	return path;
}

Test(mpi, halo_exchange_forward_and_backward)
{
	const int ranks[] = {2, 4};
	for (int i = 0; i < 2; i++) {
		char *out, *err;
		int rc = tu_sh(&out, &err, MPIRUN " -np %d %s", ranks[i], prog("halo_check"));
		cr_assert_eq(rc, 0, "-np %d exited %d:\n%s\n%s", ranks[i], rc, out, err);
		int ok = 0;
		for (char *p = out; (p = strstr(p, " ok (")); p++)
			ok++;
		cr_assert_eq(ok, ranks[i], "-np %d: %d ranks reported ok:\n%s", ranks[i], ok, out);
		free(out);
		free(err);
	}
}
