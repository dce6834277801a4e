/* comm_mpi.c: the communication layer's MPI implementation on host buffers, and the one file
 * of Burrow that calls MPI (the staged and NCCL implementations reach MPI through it); BW_MPI
 * turns MPI's error code into BURROW_E_MPI with MPI's own text. */
#include "comm.h"

#include <mpi.h>

typedef struct mpi_ctx {
	MPI_Comm comm;
	MPI_Datatype row; /* neighbor all-to-all: row_dim floats; rebuilt when the width changes */
	int64_t row_dim;
} mpi_ctx;

_Static_assert(sizeof(MPI_Request) <= sizeof(((bw_comm_req *)0)->impl), "bw_comm_req holds an MPI_Request");

static MPI_Request *req_of(bw_comm_req *r) { return (MPI_Request *)(void *)r->impl; }
static mpi_ctx *ctx_of(const bw_comm *c) { return (mpi_ctx *)c->ctx; }
static MPI_Comm comm_of(const bw_comm *c) { return ctx_of(c)->comm; }

/* MPI's error code as BURROW_E_MPI, naming what the caller did, the MPI call (its name:
 * the expression up to its parenthesis) and MPI's own text. */
static int err_mpi(int code, const char *what, const char *call)
{
	char text[MPI_MAX_ERROR_STRING];
	int len = 0;
	if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
		snprintf(text, sizeof text, "MPI error %d", code);
	return bw_err(BURROW_E_MPI, "%s: %.*s: %s", what, (int)strcspn(call, "("), call, text);
}

static inline int mpi_status(int code, const char *what, const char *call)
{
	return code == MPI_SUCCESS ? 0 : err_mpi(code, what, call);
}

/* The status of an MPI call: 0, or BURROW_E_MPI recorded with MPI's message. */
#define BW_MPI(call, what) mpi_status((call), (what), #call)

static MPI_Datatype mpi_type(bw_comm_type t)
{
	switch (t) {
	case BW_COMM_INT: return MPI_INT;
	case BW_COMM_I64: return MPI_INT64_T;
	case BW_COMM_U64: return MPI_UINT64_T;
	case BW_COMM_F32: return MPI_FLOAT;
	case BW_COMM_F64: return MPI_DOUBLE;
	case BW_COMM_BYTE: return MPI_BYTE;
	}
	return MPI_DATATYPE_NULL;
}

static MPI_Op mpi_op(bw_comm_op op)
{
	switch (op) {
	case BW_COMM_SUM: return MPI_SUM;
	case BW_COMM_MAX: return MPI_MAX;
	case BW_COMM_MIN: return MPI_MIN;
	case BW_COMM_BOR: return MPI_BOR;
	}
	return MPI_OP_NULL;
}

bool bw_comm_initialized(void)
{
	int init = 0, fin = 0;
	MPI_Initialized(&init);
	MPI_Finalized(&fin);
	return init != 0 && fin == 0;
}

double bw_comm_now(void) { return MPI_Wtime(); }

static const bw_comm_i mpi_iface;

/* Wrap an MPI communicator this module created (taken: freed on failure). */
static int wrap(bw_comm **out, MPI_Comm mc)
{
	int st;
	bw_comm *c = NULL;
	mpi_ctx *x = bw_calloc(1, sizeof *x);
	if (!x || (st = bw_comm_alloc(&c, &mpi_iface, BURROW_COMM_MPI, NULL))) {
		bw_free(x);
		MPI_Comm_free(&mc);
		return BURROW_E_NOMEM;
	}
	x->comm = mc;
	x->row = MPI_DATATYPE_NULL;
	c->ctx = x;
	MPI_Comm_set_errhandler(mc, MPI_ERRORS_RETURN);
	if ((st = BW_MPI(MPI_Comm_rank(mc, &c->rank), "comm: rank")) ||
	    (st = BW_MPI(MPI_Comm_size(mc, &c->size), "comm: size"))) {
		bw_comm_close(c);
		return st;
	}
	*out = c;
	return 0;
}

int bw_comm_mpi_world(bw_comm **out)
{
	int st;
	MPI_Comm mc = MPI_COMM_NULL;
	*out = NULL;
	if (!bw_comm_initialized())
		return bw_err(BURROW_E_INVAL, "train: MPI is not initialized (run under mpirun)");
	if ((st = BW_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &mc), "train: duplicating the world communicator")))
		return st;
	return wrap(out, mc);
}

int bw_comm_mpi_node(bw_comm **out, bw_comm *c)
{
	int st;
	MPI_Comm mc = MPI_COMM_NULL;
	*out = NULL;
	if (c->iface != &mpi_iface)
		return bw_err(BURROW_E_INVAL, "comm: the node split needs an MPI communicator (got %s)", c->iface->name);
	if ((st = BW_MPI(MPI_Comm_split_type(comm_of(c), MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &mc),
			     "train: the ranks of this node")))
		return st;
	return wrap(out, mc);
}

/* A duplicate or the neighbor communicator over nbr[0 .. n). */
static int mpi_derive(bw_comm *c, bool neighbors, int n, const int *nbr, bw_comm **out)
{
	int st;
	MPI_Comm mc = MPI_COMM_NULL;
	if (!neighbors) {
		if ((st = BW_MPI(MPI_Comm_dup(comm_of(c), &mc), "train: duplicating a communicator")))
			return st;
		return wrap(out, mc);
	}
	/* unit weights spelled out: gcc misreads MPI_UNWEIGHTED as a zero-length array */
	int *w = bw_malloc((size_t)(n ? n : 1) * sizeof *w);
	if (!w)
		return BURROW_E_NOMEM;
	for (int k = 0; k < n; k++)
		w[k] = 1;
	st = BW_MPI(MPI_Dist_graph_create_adjacent(comm_of(c), n, nbr, w, n, nbr, w, MPI_INFO_NULL, 0, &mc),
		    "halo: the neighbor communicator");
	bw_free(w);
	if (st)
		return st;
	return wrap(out, mc);
}

static int mpi_close(bw_comm *c)
{
	mpi_ctx *x = ctx_of(c);
	if (!x)
		return 0;
	if (x->row != MPI_DATATYPE_NULL)
		MPI_Type_free(&x->row);
	if (x->comm != MPI_COMM_NULL && bw_comm_initialized())
		MPI_Comm_free(&x->comm);
	bw_free(x);
	c->ctx = NULL;
	return 0;
}

static int mpi_allreduce(bw_comm *c, const void *send, void *recv, int64_t count, bw_comm_type t, bw_comm_op op,
			 const char *what)
{
	return BW_MPI(MPI_Allreduce(send ? send : MPI_IN_PLACE, recv, (int)count, mpi_type(t), mpi_op(op), comm_of(c)),
		      what);
}

static int mpi_iallreduce(bw_comm *c, void *buf, int64_t count, bw_comm_type t, bw_comm_op op, bw_comm_req *req,
			  const char *what)
{
	return BW_MPI(MPI_Iallreduce(MPI_IN_PLACE, buf, (int)count, mpi_type(t), mpi_op(op), comm_of(c), req_of(req)),
		      what);
}

static int mpi_bcast(bw_comm *c, void *buf, int64_t count, bw_comm_type t, int root, const char *what)
{
	return BW_MPI(MPI_Bcast(buf, (int)count, mpi_type(t), root, comm_of(c)), what);
}

static int mpi_alltoall(bw_comm *c, const void *send, void *recv, int count, bw_comm_type t, const char *what)
{
	return BW_MPI(MPI_Alltoall(send, count, mpi_type(t), recv, count, mpi_type(t), comm_of(c)), what);
}

static int mpi_alltoallv(bw_comm *c, const void *send, const int *scnt, const int *sdsp, void *recv, const int *rcnt,
			 const int *rdsp, bw_comm_type t, const char *what)
{
	return BW_MPI(MPI_Alltoallv(send, scnt, sdsp, mpi_type(t), recv, rcnt, rdsp, mpi_type(t), comm_of(c)), what);
}

static int mpi_ialltoallv(bw_comm *c, const void *send, const int *scnt, const int *sdsp, void *recv, const int *rcnt,
			  const int *rdsp, bw_comm_type t, bw_comm_req *req, const char *what)
{
	return BW_MPI(MPI_Ialltoallv(send, scnt, sdsp, mpi_type(t), recv, rcnt, rdsp, mpi_type(t), comm_of(c),
				     req_of(req)),
		      what);
}

static int mpi_ineighbor_alltoallv(bw_comm *c, const float *send, const int *scnt, const int *sdsp, float *recv,
				   const int *rcnt, const int *rdsp, int64_t row_floats, bw_comm_req *req,
				   const char *what)
{
	int st;
	mpi_ctx *x = ctx_of(c);
	if (x->row_dim != row_floats) {
		if (x->row != MPI_DATATYPE_NULL)
			MPI_Type_free(&x->row);
		x->row_dim = 0;
		if ((st = BW_MPI(MPI_Type_contiguous((int)row_floats, MPI_FLOAT, &x->row), what)))
			return st;
		if ((st = BW_MPI(MPI_Type_commit(&x->row), what)))
			return st;
		x->row_dim = row_floats;
	}
	return BW_MPI(MPI_Ineighbor_alltoallv(send, scnt, sdsp, x->row, recv, rcnt, rdsp, x->row, comm_of(c),
					      req_of(req)),
		      what);
}

/* The n requests as MPI's array (inactive ones as MPI_REQUEST_NULL), and back. */
static void gather_reqs(bw_comm_req *req, int n, MPI_Request *r)
{
	for (int i = 0; i < n; i++)
		r[i] = req[i].active ? *req_of(&req[i]) : MPI_REQUEST_NULL;
}

static void scatter_reqs(bw_comm_req *req, int n, const MPI_Request *r)
{
	for (int i = 0; i < n; i++) {
		*req_of(&req[i]) = r[i];
		req[i].active = r[i] != MPI_REQUEST_NULL;
	}
}

static int mpi_test(bw_comm *c, bw_comm_req *req, int n, int *done, const char *what)
{
	MPI_Request r[BW_COMM_MAX_REQ];
	int st, flag = 0;
	(void)c;
	gather_reqs(req, n, r);
	if (n == 1)
		st = BW_MPI(MPI_Test(r, &flag, MPI_STATUS_IGNORE), what);
	else
		st = BW_MPI(MPI_Testall(n, r, &flag, MPI_STATUSES_IGNORE), what);
	if (st) { /* the requests are in MPI's error state: none of them can be waited for */
		for (int i = 0; i < n; i++)
			req[i].active = false;
		return st;
	}
	scatter_reqs(req, n, r);
	*done = flag != 0;
	return 0;
}

static int mpi_wait(bw_comm *c, bw_comm_req *req, int n, const char *what)
{
	MPI_Request r[BW_COMM_MAX_REQ];
	int st;
	(void)c;
	gather_reqs(req, n, r);
	if (n == 1)
		st = BW_MPI(MPI_Wait(r, MPI_STATUS_IGNORE), what);
	else
		st = BW_MPI(MPI_Waitall(n, r, MPI_STATUSES_IGNORE), what);
	for (int i = 0; i < n; i++)
		req[i].active = false;
	return st;
}

static const bw_comm_i mpi_iface = {
	.name = "mpi",
	.derive = mpi_derive,
	.close = mpi_close,
	.allreduce = mpi_allreduce,
	.iallreduce = mpi_iallreduce,
	.bcast = mpi_bcast,
	.alltoall = mpi_alltoall,
	.alltoallv = mpi_alltoallv,
	.ialltoallv = mpi_ialltoallv,
	.ineighbor_alltoallv = mpi_ineighbor_alltoallv,
	.test = mpi_test,
	.wait = mpi_wait,
};

/* ------------------------------------------------------------ the process's MPI (the launcher's) */

int bw_comm_mpi_start(int *rank, int *size)
{
	int st, init = 0, provided = 0;
	MPI_Initialized(&init);
	if (!init && (st = BW_MPI(MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided), "mpi: starting")))
		return st;
	if ((st = BW_MPI(MPI_Comm_rank(MPI_COMM_WORLD, rank), "mpi: rank")))
		return st;
	return BW_MPI(MPI_Comm_size(MPI_COMM_WORLD, size), "mpi: size");
}

int bw_comm_mpi_stop(void)
{
	if (!bw_comm_initialized())
		return 0;
	return BW_MPI(MPI_Finalize(), "mpi: finalizing");
}

void bw_comm_mpi_abort(int code)
{
	MPI_Abort(MPI_COMM_WORLD, code);
}
