/* comm.h: the communication layer of distributed training (bw_comm): the collectives,
 * all-to-alls and the halo's neighbor all-to-all that dist.c, dist_mb.c, halo.c and node.c
 * use, on host buffers. The implementation is MPI (comm_mpi.c), the only file that calls MPI;
 * every failure is one status, BURROW_E_MPI, with the caller's `what`, the MPI call and MPI's
 * own text (BW_MPI in comm_mpi.c, the one error macro). */
#ifndef BURROW_COMM_H
#define BURROW_COMM_H

#include "../../core/internal.h"

#include <string.h>

typedef struct bw_comm bw_comm;

/* Element types of the buffers. */
typedef enum bw_comm_type {
	BW_COMM_INT,  /* int */
	BW_COMM_I64,  /* int64_t */
	BW_COMM_U64,  /* uint64_t */
	BW_COMM_F32,  /* float */
	BW_COMM_F64,  /* double */
	BW_COMM_BYTE, /* unsigned char */
} bw_comm_type;

/* Reductions. */
typedef enum bw_comm_op { BW_COMM_SUM, BW_COMM_MAX, BW_COMM_MIN, BW_COMM_BOR } bw_comm_op;

/* One non-blocking operation in flight: storage for the implementation's request handle.
 * Zeroed (bw_comm_req_null) means "none"; a completed request is none again. */
typedef struct bw_comm_req {
	uint64_t impl[2];
	bool active;
} bw_comm_req;

static inline void bw_comm_req_null(bw_comm_req *r) { memset(r, 0, sizeof *r); }

/* Whether the MPI library is initialized (burrow_dist_open needs mpirun and an initialized MPI). */
bool bw_comm_initialized(void);
/* A duplicate of the job's world communicator (its own message space), errors returned.
 * Needs an initialized MPI; out is NULL on failure. */
int bw_comm_world(bw_comm **out);
/* A duplicate of c (so that two modules' messages never match each other's). */
int bw_comm_dup(bw_comm **out, const bw_comm *c);
/* The ranks of c on this node (shared memory). Collective over c. */
int bw_comm_node(bw_comm **out, const bw_comm *c);
/* A neighbor communicator over c: this rank exchanges with the n ranks nbr[0 .. n) (of c),
 * in that order, both ways (bw_comm_ineighbor_alltoallv). Collective over c; nbr borrowed. */
int bw_comm_neighbors(bw_comm **out, const bw_comm *c, int n, const int *nbr);
void bw_comm_close(bw_comm *c); /* NULL is fine */

int bw_comm_rank(const bw_comm *c);
int bw_comm_size(const bw_comm *c);
/* Seconds on the communication library's wall clock. */
double bw_comm_now(void);

/* Reduce count elements over every rank, result on every rank; send NULL: in place in recv. */
int bw_comm_allreduce(bw_comm *c, const void *send, void *recv, int64_t count, bw_comm_type t, bw_comm_op op,
		      const char *what);
/* The same, non-blocking and in place in buf: complete it with bw_comm_test / bw_comm_wait;
 * buf must stay untouched until then. */
int bw_comm_iallreduce(bw_comm *c, void *buf, int64_t count, bw_comm_type t, bw_comm_op op, bw_comm_req *req,
		       const char *what);
/* Root's count elements of buf to every rank. */
int bw_comm_bcast(bw_comm *c, void *buf, int64_t count, bw_comm_type t, int root, const char *what);
/* count elements to each rank and from each rank (send and recv: [size * count]). */
int bw_comm_alltoall(bw_comm *c, const void *send, void *recv, int count, bw_comm_type t, const char *what);
/* Variable all-to-all: scnt[j] elements from send + sdsp[j] to rank j, rcnt[j] from rank j
 * into recv + rdsp[j] (counts and displacements in elements, [size] each). Blocking. */
int bw_comm_alltoallv(bw_comm *c, const void *send, const int *scnt, const int *sdsp, void *recv, const int *rcnt,
		      const int *rdsp, bw_comm_type t, const char *what);
/* The same, non-blocking: complete it with bw_comm_test / bw_comm_wait; every buffer and
 * count array must stay valid until then. */
int bw_comm_ialltoallv(bw_comm *c, const void *send, const int *scnt, const int *sdsp, void *recv, const int *rcnt,
		       const int *rdsp, bw_comm_type t, bw_comm_req *req, const char *what);
/* The neighbor all-to-all of the halo exchange on a bw_comm_neighbors communicator, in rows
 * of row_floats floats: scnt[k] rows from send + sdsp[k] rows to neighbor k, rcnt[k] rows
 * from neighbor k into recv + rdsp[k] rows ([n] each). Non-blocking, as bw_comm_ialltoallv. */
int bw_comm_ineighbor_alltoallv(bw_comm *c, const float *send, const int *scnt, const int *sdsp, float *recv,
				const int *rcnt, const int *rdsp, int64_t row_floats, bw_comm_req *req, const char *what);

/* Drive progress: *done = 1 when every one of the n requests has completed (they are none
 * then), 0 if not yet (n at most 8). */
int bw_comm_test(bw_comm_req *req, int n, int *done, const char *what);
/* Block until every one of the n requests completes (n at most 8). */
int bw_comm_wait(bw_comm_req *req, int n, const char *what);

#endif
