/* comm_mpi.c: the communication layer over MPI on host buffers, the one file of Burrow that
 * calls MPI; BW_MPI turns MPI's error code into BURROW_E_MPI with MPI's own text. */
#include "comm.h"

#include <mpi.h>

struct bw_comm {
	MPI_Comm comm;
	int rank, size;
	MPI_Datatype row; /* neighbor all-to-all: row_dim floats; rebuilt when the width changes */
	int64_t row_dim;
};

_Static_assert(sizeof(MPI_Request) <= sizeof(((bw_comm_req *)0)->impl), "bw_comm_req holds an MPI_Request");

#define BW_COMM_MAX_REQ 8

static MPI_Request *req_of(bw_comm_req *r) { return (MPI_Request *)(void *)r->impl; }

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

static int count_int(int64_t count, const char *what)
{
	if (count < 0 || count > INT32_MAX)
		return bw_err(BURROW_E_UNSUPPORTED, "%s: %lld elements in one message (at most 2^31 - 1)", what,
			      (long long)count);
	return 0;
}

bool bw_comm_initialized(void)
{
	int init = 0;
	MPI_Initialized(&init);
	return init != 0;
}

/* Wrap an MPI communicator this module created (taken: freed on failure). */
static int wrap(bw_comm **out, MPI_Comm mc)
{
	int st;
	bw_comm *c = bw_calloc(1, sizeof *c);
	if (!c) {
		MPI_Comm_free(&mc);
		return BURROW_E_NOMEM;
	}
	c->comm = mc;
	c->row = MPI_DATATYPE_NULL;
	MPI_Comm_set_errhandler(mc, MPI_ERRORS_RETURN);
	if ((st = BW_MPI(MPI_Comm_rank(mc, &c->rank), "comm: rank")) ||
	    (st = BW_MPI(MPI_Comm_size(mc, &c->size), "comm: size"))) {
		bw_comm_close(c);
		return st;
	}
	*out = c;
	return 0;
}

int bw_comm_world(bw_comm **out)
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

int bw_comm_dup(bw_comm **out, const bw_comm *c)
{
	int st;
	MPI_Comm mc = MPI_COMM_NULL;
	*out = NULL;
	if ((st = BW_MPI(MPI_Comm_dup(c->comm, &mc), "train: duplicating a communicator")))
		return st;
	return wrap(out, mc);
}

int bw_comm_node(bw_comm **out, const bw_comm *c)
{
	int st;
	MPI_Comm mc = MPI_COMM_NULL;
	*out = NULL;
	if ((st = BW_MPI(MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &mc),
			     "train: the ranks of this node")))
		return st;
	return wrap(out, mc);
}

int bw_comm_neighbors(bw_comm **out, const bw_comm *c, int n, const int *nbr)
{
	int st;
	MPI_Comm mc = MPI_COMM_NULL;
	*out = NULL;
	/* unit weights spelled out: gcc misreads MPI_UNWEIGHTED as a zero-length array */
	int *w = bw_malloc((size_t)(n ? n : 1) * sizeof *w);
	if (!w)
		return BURROW_E_NOMEM;
	for (int k = 0; k < n; k++)
		w[k] = 1;
	st = BW_MPI(MPI_Dist_graph_create_adjacent(c->comm, n, nbr, w, n, nbr, w, MPI_INFO_NULL, 0, &mc),
			"halo: the neighbor communicator");
	bw_free(w);
	if (st)
		return st;
	return wrap(out, mc);
}

void bw_comm_close(bw_comm *c)
{
	if (!c)
		return;
	if (c->row != MPI_DATATYPE_NULL)
		MPI_Type_free(&c->row);
	if (c->comm != MPI_COMM_NULL)
		MPI_Comm_free(&c->comm);
	bw_free(c);
}

int bw_comm_rank(const bw_comm *c) { return c->rank; }
int bw_comm_size(const bw_comm *c) { return c->size; }
double bw_comm_now(void) { return MPI_Wtime(); }

int bw_comm_allreduce(bw_comm *c, const void *send, void *recv, int64_t count, bw_comm_type t, bw_comm_op op,
		      const char *what)
{
	int st;
	if ((st = count_int(count, what)))
		return st;
	return BW_MPI(MPI_Allreduce(send ? send : MPI_IN_PLACE, recv, (int)count, mpi_type(t), mpi_op(op), c->comm),
			  what);
}

int bw_comm_iallreduce(bw_comm *c, void *buf, int64_t count, bw_comm_type t, bw_comm_op op, bw_comm_req *req,
		       const char *what)
{
	int st;
	if ((st = count_int(count, what)))
		return st;
	if ((st = BW_MPI(MPI_Iallreduce(MPI_IN_PLACE, buf, (int)count, mpi_type(t), mpi_op(op), c->comm, req_of(req)),
			 what)))
		return st;
	req->active = true;
	return 0;
}

int bw_comm_bcast(bw_comm *c, void *buf, int64_t count, bw_comm_type t, int root, const char *what)
{
	int st;
	if ((st = count_int(count, what)))
		return st;
	return BW_MPI(MPI_Bcast(buf, (int)count, mpi_type(t), root, c->comm), what);
}

int bw_comm_alltoall(bw_comm *c, const void *send, void *recv, int count, bw_comm_type t, const char *what)
{
	return BW_MPI(MPI_Alltoall(send, count, mpi_type(t), recv, count, mpi_type(t), c->comm), what);
}

int bw_comm_alltoallv(bw_comm *c, const void *send, const int *scnt, const int *sdsp, void *recv, const int *rcnt,
		      const int *rdsp, bw_comm_type t, const char *what)
{
	return BW_MPI(MPI_Alltoallv(send, scnt, sdsp, mpi_type(t), recv, rcnt, rdsp, mpi_type(t), c->comm), what);
}

int bw_comm_ialltoallv(bw_comm *c, const void *send, const int *scnt, const int *sdsp, void *recv, const int *rcnt,
		       const int *rdsp, bw_comm_type t, bw_comm_req *req, const char *what)
{
	int st;
	MPI_Request *r = req_of(req);
	if ((st = BW_MPI(MPI_Ialltoallv(send, scnt, sdsp, mpi_type(t), recv, rcnt, rdsp, mpi_type(t), c->comm, r),
			     what)))
		return st;
	req->active = true;
	return 0;
}

int bw_comm_ineighbor_alltoallv(bw_comm *c, const float *send, const int *scnt, const int *sdsp, float *recv,
				const int *rcnt, const int *rdsp, int64_t row_floats, bw_comm_req *req, const char *what)
{
	int st;
	if (row_floats <= 0 || row_floats > INT32_MAX)
		return bw_err(BURROW_E_INVAL, "%s: bad row width %lld", what, (long long)row_floats);
	if (c->row_dim != row_floats) {
		if (c->row != MPI_DATATYPE_NULL)
			MPI_Type_free(&c->row);
		c->row_dim = 0;
		if ((st = BW_MPI(MPI_Type_contiguous((int)row_floats, MPI_FLOAT, &c->row), what)))
			return st;
		if ((st = BW_MPI(MPI_Type_commit(&c->row), what)))
			return st;
		c->row_dim = row_floats;
	}
	MPI_Request *r = req_of(req);
	if ((st = BW_MPI(MPI_Ineighbor_alltoallv(send, scnt, sdsp, c->row, recv, rcnt, rdsp, c->row, c->comm, r),
			     what)))
		return st;
	req->active = true;
	return 0;
}

/* The n requests as MPI's array (inactive ones as MPI_REQUEST_NULL), and back. */
static int gather_reqs(bw_comm_req *req, int n, MPI_Request *r, const char *what)
{
	if (n < 0 || n > BW_COMM_MAX_REQ)
		return bw_err(BURROW_E_INVAL, "%s: %d requests at once (at most %d)", what, n, BW_COMM_MAX_REQ);
	for (int i = 0; i < n; i++)
		r[i] = req[i].active ? *req_of(&req[i]) : MPI_REQUEST_NULL;
	return 0;
}

static void scatter_reqs(bw_comm_req *req, int n, const MPI_Request *r)
{
	for (int i = 0; i < n; i++) {
		*req_of(&req[i]) = r[i];
		req[i].active = r[i] != MPI_REQUEST_NULL;
	}
}

int bw_comm_test(bw_comm_req *req, int n, int *done, const char *what)
{
	MPI_Request r[BW_COMM_MAX_REQ];
	int st, flag = 0;
	*done = 0;
	if ((st = gather_reqs(req, n, r, what)))
		return st;
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

int bw_comm_wait(bw_comm_req *req, int n, const char *what)
{
	MPI_Request r[BW_COMM_MAX_REQ];
	int st;
	if ((st = gather_reqs(req, n, r, what)))
		return st;
	if (n == 1)
		st = BW_MPI(MPI_Wait(r, MPI_STATUS_IGNORE), what);
	else
		st = BW_MPI(MPI_Waitall(n, r, MPI_STATUSES_IGNORE), what);
	for (int i = 0; i < n; i++)
		req[i].active = false;
	return st;
}
