/* comm.h: the communication layer of distributed training (bw_comm): the collectives,
 * all-to-alls and the halo's neighbor all-to-all that dist.c, dist_mb.c, halo.c and node.c
 * use. A communicator is a table of functions (bw_comm_i, ggml-backend style) with three
 * implementations: MPI on host buffers (comm_mpi.c, the one file that calls MPI), NCCL on
 * device buffers (comm_nccl.cu, CUDA builds), and the host-staged path (comm_staged.c:
 * device -> pinned -> MPI -> pinned -> device on a copy stream, through the device layer).
 * The dispatchers below check their arguments and call through the table (comm.c, also the
 * registry that picks an implementation for --comm). Every failure is one status with the
 * caller's `what`: BURROW_E_MPI (BW_MPI in comm_mpi.c), BURROW_E_CUDA for NCCL (BW_NCCL in
 * comm_nccl.cu), or the device layer's own. */
#ifndef BURROW_COMM_H
#define BURROW_COMM_H

#include "../../core/internal.h"
#include "../../device/device.h"

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

/* Reductions (NCCL has no BOR: its table refuses it with BURROW_E_UNSUPPORTED). */
typedef enum bw_comm_op { BW_COMM_SUM, BW_COMM_MAX, BW_COMM_MIN, BW_COMM_BOR } bw_comm_op;

/* Bytes of one element of t. */
size_t bw_comm_type_size(bw_comm_type t);

/* One non-blocking operation in flight: the communicator that posted it and storage for the
 * implementation's handle. Zeroed (bw_comm_req_null) means "none"; a completed request is
 * none again. */
typedef struct bw_comm_req {
	uint64_t impl[2];
	bw_comm *comm;
	bool active;
} bw_comm_req;

static inline void bw_comm_req_null(bw_comm_req *r) { memset(r, 0, sizeof *r); }

/* Requests one bw_comm_test / bw_comm_wait takes at most. */
#define BW_COMM_MAX_REQ 8

/* What an implementation fills. Every slot receives the communicator and returns a status;
 * every slot is required. Buffers are memory of c->dev (host memory for MPI). The
 * dispatchers have checked counts, types and requests before a slot runs. */
typedef struct bw_comm_i {
	const char *name; /* "mpi", "nccl", "staged" (burrow_comm_name of its kind) */
	/* a communicator of the same implementation over c's ranks: a duplicate (its own message
	   space), or with `neighbors` the neighbor communicator of bw_comm_neighbors over nbr[0 .. n)
	   (the dispatcher records n and nbr in it) */
	int (*derive)(bw_comm *c, bool neighbors, int n, const int *nbr, bw_comm **out);
	int (*close)(bw_comm *c); /* frees c->ctx, not c */
	int (*allreduce)(bw_comm *c, const void *send, void *recv, int64_t count, bw_comm_type t, bw_comm_op op,
			 const char *what);
	int (*iallreduce)(bw_comm *c, void *buf, int64_t count, bw_comm_type t, bw_comm_op op, bw_comm_req *req,
			  const char *what);
	int (*bcast)(bw_comm *c, void *buf, int64_t count, bw_comm_type t, int root, const char *what);
	int (*alltoall)(bw_comm *c, const void *send, void *recv, int count, bw_comm_type t, const char *what);
	int (*alltoallv)(bw_comm *c, const void *send, const int *scnt, const int *sdsp, void *recv, const int *rcnt,
			 const int *rdsp, bw_comm_type t, const char *what);
	int (*ialltoallv)(bw_comm *c, const void *send, const int *scnt, const int *sdsp, void *recv, const int *rcnt,
			  const int *rdsp, bw_comm_type t, bw_comm_req *req, const char *what);
	int (*ineighbor_alltoallv)(bw_comm *c, const float *send, const int *scnt, const int *sdsp, float *recv,
				   const int *rcnt, const int *rdsp, int64_t row_floats, bw_comm_req *req,
				   const char *what);
	/* n requests, all posted on c (1 <= n <= BW_COMM_MAX_REQ; inactive ones are skipped) */
	int (*test)(bw_comm *c, bw_comm_req *req, int n, int *done, const char *what);
	int (*wait)(bw_comm *c, bw_comm_req *req, int n, const char *what);
} bw_comm_i;

struct bw_comm {
	const bw_comm_i *iface;
	int kind;             /* enum burrow_comm_kind: MPI, NCCL or STAGED (never AUTO) */
	int rank, size;
	const bw_device *dev; /* where the buffers are (borrowed; the CPU for MPI) */
	bw_comm *host;        /* an MPI communicator over the same ranks for host-side work
				 (this one for MPI; owned by NCCL's and the staged one) */
	int nnbr;             /* a neighbor communicator's neighbors (ranks of the parent) */
	int *nbr;             /* [nnbr], owned; NULL on others */
	void *ctx;            /* the implementation's own (owned by it) */
};

/* ------------------------------------------------------------ opening */

/* Whether the MPI library is initialized (burrow_dist_open needs mpirun and an initialized MPI). */
bool bw_comm_initialized(void);
/* The world communicator of implementation `kind` (enum burrow_comm_kind) over buffers of
 * dev (NULL: the CPU). AUTO picks MPI for host-memory devices; for a GPU, NCCL where the
 * build has it, every rank of a node has its own GPU and NCCL starts on every rank, else the
 * staged path. MPI refuses a GPU device, NCCL a host-memory one (BURROW_E_UNSUPPORTED);
 * NCCL asked explicitly fails where it cannot start. Collective over the MPI world. */
int bw_comm_open(bw_comm **out, int kind, const bw_device *dev);
/* bw_comm_open(out, BURROW_COMM_MPI, NULL). */
int bw_comm_world(bw_comm **out);
/* A duplicate of c (so that two modules' messages never match each other's). */
int bw_comm_dup(bw_comm **out, bw_comm *c);
/* The ranks of c on this node (shared memory), as an MPI communicator on host buffers
 * whatever c's implementation. Collective over c. */
int bw_comm_node(bw_comm **out, bw_comm *c);
/* A neighbor communicator over c: this rank exchanges with the n ranks nbr[0 .. n) (of c),
 * in that order, both ways (bw_comm_ineighbor_alltoallv). Collective over c; nbr borrowed. */
int bw_comm_neighbors(bw_comm **out, bw_comm *c, int n, const int *nbr);
void bw_comm_close(bw_comm *c); /* NULL is fine */

int bw_comm_rank(const bw_comm *c);
int bw_comm_size(const bw_comm *c);
int bw_comm_kind(const bw_comm *c); /* enum burrow_comm_kind */
/* Seconds on the communication library's wall clock. */
double bw_comm_now(void);

/* ------------------------------------------------------------ operations (dispatchers) */

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
 * then), 0 if not yet (n at most BW_COMM_MAX_REQ; the active ones posted on one communicator). */
int bw_comm_test(bw_comm_req *req, int n, int *done, const char *what);
/* Block until every one of the n requests completes (the same rules). */
int bw_comm_wait(bw_comm_req *req, int n, const char *what);

/* ------------------------------------------------------------ implementations */

/* A zeroed communicator of an implementation (comm.c): iface, kind, dev set, host = itself;
 * the implementation fills rank, size, ctx (and host). bw_comm_close frees it. */
int bw_comm_alloc(bw_comm **out, const bw_comm_i *iface, int kind, const bw_device *dev);
/* The MPI world communicator on host buffers (comm_mpi.c). */
int bw_comm_mpi_world(bw_comm **out);
/* The node split of an MPI communicator (comm_mpi.c). */
int bw_comm_mpi_node(bw_comm **out, bw_comm *mpi);
/* The staged communicator over dev's buffers, taking `host` (an MPI communicator; closed on
 * failure too) (comm_staged.c). */
int bw_comm_staged_open(bw_comm **out, bw_comm *host, const bw_device *dev);
/* NCCL over dev (a GPU) with `host` (an MPI communicator, taken as above) to share rank 0's
 * ncclUniqueId (comm_nccl.cu; CUDA builds only, called from comm.c's registry). Collective:
 * every rank returns the same status. */
int bw_comm_nccl_open(bw_comm **out, bw_comm *host, const bw_device *dev);
/* Open NCCL (dlopen; comm_nccl.cu, CUDA builds only): soname NULL, the toolkit's
 * libnccl.so.<major> once per process (the first NCCL communicator does), else that library
 * (tests). 0, or BURROW_E_UNSUPPORTED in one line naming what is missing. */
int bw_comm_nccl_load(const char *soname);
/* Whether this build has NCCL (the registry's answer). */
bool bw_comm_has_nccl(void);

/* Process-level MPI for the burrow command's launcher (comm_mpi.c): start MPI (funneled
 * threads) unless it is started, and this process's rank and the job's size; stop it; end
 * the whole job with code (never returns). */
int bw_comm_mpi_start(int *rank, int *size);
int bw_comm_mpi_stop(void);
void bw_comm_mpi_abort(int code);

#endif
