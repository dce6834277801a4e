/* check.h: what the programs tests/test_mpi.c runs under mpirun share: a failure that ends
 * every rank with its message, and the dataset they check against: rank 0 generates a CSBM
 * graph in SCRATCH/csbm and partitions it into as many parts as there are ranks, in
 * SCRATCH/parts. Include it once, in the program's one file. */
#ifndef BURROW_MPI_CHECK_H
#define BURROW_MPI_CHECK_H

#include <burrow.h>
#include <mpi.h>
#include <stdio.h>

static int rank, K;
static const char *check_name; /* "dist-check", ... : the prefix of every line */

static void die(const char *what, const char *why)
{
	fprintf(stderr, "%s: rank %d: %s: %s\n", check_name, rank, what, why);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

/* MPI up, rank and K set, g generated into data and partitioned into parts (both
 * PATH_MAX-sized buffers), every rank past the setup. */
static void check_setup(int *argc, char ***argv, const char *name, burrow_gen_opts *g, char *data, char *parts)
{
	int provided;
	check_name = name;
	MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &K);
	if (*argc != 2)
		die("usage", "expected one argument, a scratch directory");
	snprintf(data, 4096, "%s/csbm", (*argv)[1]);
	snprintf(parts, 4096, "%s/parts", (*argv)[1]);
	if (rank == 0) {
		g->threads = 1;
		burrow_partition_opts p;
		burrow_partition_defaults(&p);
		p.num_parts = K;
		p.out_dir = parts;
		p.threads = 1;
		if (burrow_gen(g, data) || burrow_partition(data, &p, NULL))
			die("setup", burrow_last_error());
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

/* One training epoch of d that must succeed with sane communication times. */
static void train_epoch_checked(burrow_dist *d, burrow_epoch_stats *es)
{
	burrow_comm_stats cs = {.size = sizeof cs};
	if (burrow_dist_train_epoch(d, es, &cs))
		die("train", burrow_last_error());
	if (cs.exposed_comm_s > cs.comm_s + 1e-9 || cs.comm_s < 0)
		die("train", "exposed communication exceeds communication");
}

/* The replicas agree: every rank's weights have rank 0's checksum. */
static void check_replicas_equal(const burrow_dist *d, const char *when)
{
	uint64_t sum = burrow_dist_weights_checksum(d), s0 = sum;
	MPI_Bcast(&s0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	if (sum != s0)
		die("replicas", when);
}

#endif
