/* node.c: the ranks that share a node (bw_comm_node) and the compute threads each
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

int bw_node_share_get(bw_comm *comm, bw_node_share *out)
{
	bw_comm *node = NULL;
	cpu_set_t own, all;
	int st;
	memset(out, 0, sizeof *out);
	own_cpus(&own);
	if ((st = bw_comm_node(&node, comm)))
		return st;
	/* the node's CPUs: the union of its ranks' masks (a container's cpuset, or a binding of
	 * each rank to its own cores, still adds up to what the node gives the job) */
	out->ranks = bw_comm_size(node);
	out->local = bw_comm_rank(node);
	if ((st = bw_comm_allreduce(node, &own, &all, (int64_t)sizeof own, BW_COMM_BYTE, BW_COMM_BOR,
				    "train: the node's CPUs")))
		goto out_free_node;
	out->cores = CPU_COUNT(&all);
	out->own = CPU_COUNT(&own);
	out->threads = BW_MAX(1, BW_MIN(out->cores / BW_MAX(out->ranks, 1), out->own));
out_free_node:
	bw_comm_close(node);
	return st;
}
