/* comm.c: the communication layer's dispatchers (check the arguments, call through the
 * communicator's table) and its registry: which implementation serves --comm on which
 * device. The only file of train/dist that asks whether the build has CUDA (NCCL). */
#include "comm.h"

size_t bw_comm_type_size(bw_comm_type t)
{
	switch (t) {
	case BW_COMM_INT: return sizeof(int);
	case BW_COMM_I64: return sizeof(int64_t);
	case BW_COMM_U64: return sizeof(uint64_t);
	case BW_COMM_F32: return sizeof(float);
	case BW_COMM_F64: return sizeof(double);
	case BW_COMM_BYTE: return 1;
	}
	return 0;
}

/* ------------------------------------------------------------ the registry */

#ifdef BURROW_CUDA
static int (*const nccl_open)(bw_comm **, bw_comm *, const bw_device *) = bw_comm_nccl_open;
#else
static int (*const nccl_open)(bw_comm **, bw_comm *, const bw_device *) = NULL;
#endif

bool bw_comm_has_nccl(void) { return nccl_open != NULL; }

int bw_comm_alloc(bw_comm **out, const bw_comm_i *iface, int kind, const bw_device *dev)
{
	bw_comm *c = bw_calloc(1, sizeof *c);
	*out = NULL;
	if (!c)
		return BURROW_E_NOMEM;
	c->iface = iface;
	c->kind = kind;
	c->dev = bw_device_or_cpu(dev);
	c->host = c;
	*out = c;
	return 0;
}

/* AUTO on a GPU: NCCL when this build has it and it starts on every rank (its open is
 * collective and agrees on the outcome), else the staged path over a fresh MPI world. */
static int open_gpu_auto(bw_comm **out, const bw_device *dev)
{
	bw_comm *host = NULL;
	int st;
	if (bw_comm_has_nccl()) {
		if ((st = bw_comm_mpi_world(&host)))
			return st;
		if (!nccl_open(out, host, dev))
			return 0; /* else NCCL could not start (ranks sharing a GPU, no driver): staged */
	}
	if ((st = bw_comm_mpi_world(&host)))
		return st;
	return bw_comm_staged_open(out, host, dev);
}

int bw_comm_open(bw_comm **out, int kind, const bw_device *dev)
{
	int st;
	bw_comm *host = NULL;
	dev = bw_device_or_cpu(dev);
	*out = NULL;
	switch (kind) {
	case BURROW_COMM_AUTO:
		return dev->host_memory ? bw_comm_mpi_world(out) : open_gpu_auto(out, dev);
	case BURROW_COMM_MPI:
		if (!dev->host_memory)
			return bw_err(BURROW_E_UNSUPPORTED,
				      "comm: mpi moves host buffers, not %s's (use --comm staged, nccl or auto)", dev->name);
		return bw_comm_mpi_world(out);
	case BURROW_COMM_STAGED:
		if ((st = bw_comm_mpi_world(&host)))
			return st;
		return bw_comm_staged_open(out, host, dev);
	case BURROW_COMM_NCCL:
		if (dev->host_memory)
			return bw_err(BURROW_E_UNSUPPORTED, "comm: nccl moves GPU buffers, but this run's are host memory (%s)",
				      dev->name);
		if (!bw_comm_has_nccl())
			return bw_err(BURROW_E_UNSUPPORTED, "comm: this libburrow was built without CUDA, so without NCCL");
		if ((st = bw_comm_mpi_world(&host)))
			return st;
		return nccl_open(out, host, dev);
	default: return bw_err(BURROW_E_INVAL, "comm: unknown communication kind %d", kind);
	}
}

int bw_comm_world(bw_comm **out) { return bw_comm_open(out, BURROW_COMM_MPI, NULL); }

int bw_comm_dup(bw_comm **out, bw_comm *c)
{
	*out = NULL;
	return c->iface->derive(c, false, 0, NULL, out);
}

int bw_comm_node(bw_comm **out, bw_comm *c) { return bw_comm_mpi_node(out, c->host); }

int bw_comm_neighbors(bw_comm **out, bw_comm *c, int n, const int *nbr)
{
	*out = NULL;
	if (n < 0 || n > c->size || (n && !nbr))
		return bw_err(BURROW_E_INVAL, "halo: %d neighbors of %d ranks", n, c->size);
	for (int k = 0; k < n; k++)
		if (nbr[k] < 0 || nbr[k] >= c->size || nbr[k] == c->rank)
			return bw_err(BURROW_E_RANGE, "halo: neighbor %d is rank %d (this is %d of %d)", k, nbr[k], c->rank,
				      c->size);
	int st = c->iface->derive(c, true, n, nbr, out);
	if (st)
		return st;
	(*out)->nnbr = n;
	if (!((*out)->nbr = bw_malloc((size_t)(n ? n : 1) * sizeof *nbr))) {
		bw_comm_close(*out);
		*out = NULL;
		return BURROW_E_NOMEM;
	}
	if (n)
		memcpy((*out)->nbr, nbr, (size_t)n * sizeof *nbr);
	return 0;
}

void bw_comm_close(bw_comm *c)
{
	if (!c)
		return;
	c->iface->close(c);
	if (c->host && c->host != c)
		bw_comm_close(c->host);
	bw_free(c->nbr);
	bw_free(c);
}

int bw_comm_rank(const bw_comm *c) { return c->rank; }
int bw_comm_size(const bw_comm *c) { return c->size; }
int bw_comm_kind(const bw_comm *c) { return c->kind; }

/* ------------------------------------------------------------ dispatchers */

static int check_count(int64_t count, bw_comm_type t, const char *what)
{
	if (!bw_comm_type_size(t))
		return bw_err(BURROW_E_INVAL, "%s: unknown element type %d", what, (int)t);
	if (count < 0 || count > INT32_MAX)
		return bw_err(BURROW_E_UNSUPPORTED, "%s: %lld elements in one message (at most 2^31 - 1)", what,
			      (long long)count);
	return 0;
}

static int check_op(bw_comm_op op, const char *what)
{
	if (op < BW_COMM_SUM || op > BW_COMM_BOR)
		return bw_err(BURROW_E_INVAL, "%s: unknown reduction %d", what, (int)op);
	return 0;
}

/* counts [n] non-negative, displacements [n] non-negative */
static int check_counts(const int *cnt, const int *dsp, int n, const char *what)
{
	if (n && (!cnt || !dsp))
		return bw_err(BURROW_E_INVAL, "%s: no counts or displacements", what);
	for (int j = 0; j < n; j++)
		if (cnt[j] < 0 || dsp[j] < 0)
			return bw_err(BURROW_E_INVAL, "%s: count %d or displacement %d of peer %d is negative", what,
				      cnt[j], dsp[j], j);
	return 0;
}

static int check_req(bw_comm *c, bw_comm_req *req, const char *what)
{
	if (!req)
		return bw_err(BURROW_E_INVAL, "%s: no request", what);
	if (req->active)
		return bw_err(BURROW_E_INVAL, "%s: the request is still in flight", what);
	bw_comm_req_null(req);
	req->comm = c;
	return 0;
}

/* After a non-blocking post: active on success, none on failure. */
static int posted(bw_comm_req *req, int st)
{
	if (st)
		bw_comm_req_null(req);
	else
		req->active = true;
	return st;
}

int bw_comm_allreduce(bw_comm *c, const void *send, void *recv, int64_t count, bw_comm_type t, bw_comm_op op,
		      const char *what)
{
	int st;
	if ((st = check_count(count, t, what)) || (st = check_op(op, what)))
		return st;
	if (count && !recv)
		return bw_err(BURROW_E_INVAL, "%s: no receive buffer", what);
	return c->iface->allreduce(c, send, recv, count, t, op, what);
}

int bw_comm_iallreduce(bw_comm *c, void *buf, int64_t count, bw_comm_type t, bw_comm_op op, bw_comm_req *req,
		       const char *what)
{
	int st;
	if ((st = check_count(count, t, what)) || (st = check_op(op, what)) || (st = check_req(c, req, what)))
		return st;
	return posted(req, c->iface->iallreduce(c, buf, count, t, op, req, what));
}

int bw_comm_bcast(bw_comm *c, void *buf, int64_t count, bw_comm_type t, int root, const char *what)
{
	int st;
	if ((st = check_count(count, t, what)))
		return st;
	if (root < 0 || root >= c->size)
		return bw_err(BURROW_E_RANGE, "%s: root %d of %d ranks", what, root, c->size);
	return c->iface->bcast(c, buf, count, t, root, what);
}

int bw_comm_alltoall(bw_comm *c, const void *send, void *recv, int count, bw_comm_type t, const char *what)
{
	int st;
	if ((st = check_count((int64_t)count * c->size, t, what)))
		return st;
	return c->iface->alltoall(c, send, recv, count, t, what);
}

int bw_comm_alltoallv(bw_comm *c, const void *send, const int *scnt, const int *sdsp, void *recv, const int *rcnt,
		      const int *rdsp, bw_comm_type t, const char *what)
{
	int st;
	if ((st = check_count(0, t, what)) || (st = check_counts(scnt, sdsp, c->size, what)) ||
	    (st = check_counts(rcnt, rdsp, c->size, what)))
		return st;
	return c->iface->alltoallv(c, send, scnt, sdsp, recv, rcnt, rdsp, t, what);
}

int bw_comm_ialltoallv(bw_comm *c, const void *send, const int *scnt, const int *sdsp, void *recv, const int *rcnt,
		       const int *rdsp, bw_comm_type t, bw_comm_req *req, const char *what)
{
	int st;
	if ((st = check_count(0, t, what)) || (st = check_counts(scnt, sdsp, c->size, what)) ||
	    (st = check_counts(rcnt, rdsp, c->size, what)) || (st = check_req(c, req, what)))
		return st;
	return posted(req, c->iface->ialltoallv(c, send, scnt, sdsp, recv, rcnt, rdsp, t, req, what));
}

int bw_comm_ineighbor_alltoallv(bw_comm *c, const float *send, const int *scnt, const int *sdsp, float *recv,
				const int *rcnt, const int *rdsp, int64_t row_floats, bw_comm_req *req, const char *what)
{
	int st;
	if (!c->nbr)
		return bw_err(BURROW_E_INVAL, "%s: not a neighbor communicator", what);
	if (row_floats <= 0 || row_floats > INT32_MAX)
		return bw_err(BURROW_E_INVAL, "%s: bad row width %lld", what, (long long)row_floats);
	if ((st = check_counts(scnt, sdsp, c->nnbr, what)) || (st = check_counts(rcnt, rdsp, c->nnbr, what)) ||
	    (st = check_req(c, req, what)))
		return st;
	return posted(req, c->iface->ineighbor_alltoallv(c, send, scnt, sdsp, recv, rcnt, rdsp, row_floats, req, what));
}

/* The communicator of the n requests' active ones (NULL when none is active): one. */
static int req_comm(bw_comm_req *req, int n, bw_comm **c, const char *what)
{
	*c = NULL;
	if (n < 0 || n > BW_COMM_MAX_REQ || (n && !req))
		return bw_err(BURROW_E_INVAL, "%s: %d requests at once (at most %d)", what, n, BW_COMM_MAX_REQ);
	for (int i = 0; i < n; i++) {
		if (!req[i].active)
			continue;
		if (!req[i].comm)
			return bw_err(BURROW_E_INVAL, "%s: request %d has no communicator", what, i);
		if (*c && req[i].comm != *c)
			return bw_err(BURROW_E_INVAL, "%s: requests of two communicators in one call", what);
		*c = req[i].comm;
	}
	return 0;
}

int bw_comm_test(bw_comm_req *req, int n, int *done, const char *what)
{
	bw_comm *c;
	int st;
	*done = 0;
	if ((st = req_comm(req, n, &c, what)))
		return st;
	if (!c) {
		*done = 1;
		return 0;
	}
	return c->iface->test(c, req, n, done, what);
}

int bw_comm_wait(bw_comm_req *req, int n, const char *what)
{
	bw_comm *c;
	int st;
	if ((st = req_comm(req, n, &c, what)))
		return st;
	return c ? c->iface->wait(c, req, n, what) : 0;
}
