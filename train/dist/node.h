/* node.h: the ranks that share a node, and the compute threads each rank takes by default
 * so that the ranks of a node together use its cores once. */
#ifndef BURROW_DIST_NODE_H
#define BURROW_DIST_NODE_H

#include "comm.h"

typedef struct bw_node_share {
	int cores;   /* CPUs the node's ranks may run on (the union of their affinity masks) */
	int ranks;   /* ranks of comm on this node (shared memory) */
	int own;     /* CPUs this rank may run on (its affinity mask: narrower when mpirun binds) */
	int threads; /* max(1, min(cores / ranks, own)) */
	int local;   /* this rank's place among the node's ranks, 0 .. ranks-1 (picks its GPU) */
} bw_node_share;

/* Count the ranks of comm on this node and their CPUs, and derive the default compute
 * threads of this rank. Collective over comm. */
int bw_node_share_get(bw_comm *comm, bw_node_share *out); /* out */

#endif
