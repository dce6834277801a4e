/* node.c: the ranks that share a node (MPI_COMM_TYPE_SHARED) and the compute threads each
 * takes by default: the node's CPUs divided by its ranks, so that K ranks on one machine do
 * not each start a thread per core (oversubscribed OpenMP and OpenBLAS threads spin
 * against each other: 4 ranks on 2 cores ran 6x slower than with one thread each). */
#define _GNU_SOURCE
#include "node.h"

#include <sched.h>
#include <string.h>
#include <unistd.h>

/* This process's CPUs; every online CPU when the affinity mask cannot be read. */
static void own_cpus(cpu_set_t *set)
{
	CPU_ZERO(set);
	if (sched_getaffinity(0, sizeof *set, set) == 0 && CPU_COUNT(set) > 0)
		return;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	CPU_ZERO(set);
	for (long c = 0; c < (n > 0 ? n : 1) && c < CPU_SETSIZE; c++)
		CPU_SET((int)c, set);
}

int bw_node_share_get(MPI_Comm comm, bw_node_share *out)
{
	MPI_Comm node = MPI_COMM_NULL;
	cpu_set_t own, all;
	int rank = 0, st;
	memset(out, 0, sizeof *out);
	own_cpus(&own);
	if ((st = BW_MPI(MPI_Comm_rank(comm, &rank), "train: MPI_Comm_rank")) ||
	    (st = BW_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node),
			 "train: MPI_Comm_split_type (the ranks of this node)")))
		return st;
	/* the node's CPUs: the union of its ranks' masks (a container's cpuset, or a binding of
	 * each rank to its own cores, still adds up to what the node gives the job) */
	if ((st = BW_MPI(MPI_Comm_size(node, &out->ranks), "train: MPI_Comm_size (node)")) ||
	    (st = BW_MPI(MPI_Allreduce(&own, &all, (int)sizeof own, MPI_BYTE, MPI_BOR, node),
			 "train: MPI_Allreduce (the node's CPUs)")))
		goto out_free_node;
	out->cores = CPU_COUNT(&all);
	out->own = CPU_COUNT(&own);
	out->threads = BW_MAX(1, BW_MIN(out->cores / BW_MAX(out->ranks, 1), out->own));
out_free_node:
	MPI_Comm_free(&node);
	return st;
}
