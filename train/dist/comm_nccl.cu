/* comm_nccl.cu: the communication layer's NCCL implementation on device buffers (CUDA builds):
 * one GPU per rank, rank 0's ncclUniqueId shared through the MPI communicator c->host,
 * collectives and grouped ncclSend / ncclRecv on a communication stream of the device layer;
 * BW_NCCL turns an ncclResult_t into BURROW_E_CUDA with ncclGetErrorString's text. NCCL is
 * opened (dlopen) by the first NCCL communicator, not linked, as cuBLAS and cuSPARSE are. */
#include <nccl.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

extern "C" {
#include "comm.h"
}

/* ------------------------------------------------------------ the library */

/* libnccl is a load-time dependency of nothing: a binary starts on a machine whose toolkit
 * keeps NCCL elsewhere or not at all (the CUDA 13 wheels put it in nvidia/nccl/lib), and
 * --comm nccl says in one line that it is missing. The entry points used, each typed as
 * nccl.h declares it, called as nccl.Name (BW_NCCL's message names them ncclName). */
#define NCCL_STR2(x) #x
#define NCCL_STR(x) NCCL_STR2(x)
#define NCCL_SONAME "libnccl.so." NCCL_STR(NCCL_MAJOR)
#define NCCL_ENTRY(name) decltype(&nccl##name) name;
#define NCCL_ENTRIES(X)                                                                                    \
	X(GetErrorString) X(GetUniqueId) X(CommInitRank) X(CommSplit) X(CommDestroy) X(AllReduce) X(Broadcast) \
	X(GroupStart) X(GroupEnd) X(Send) X(Recv)
static struct {
	NCCL_ENTRIES(NCCL_ENTRY)
} nccl;
static char nccl_why[384]; /* the default library's failure; empty when loaded */
static pthread_once_t nccl_once = PTHREAD_ONCE_INIT;

/* Open soname and fill `nccl` from it: 0, or BURROW_E_UNSUPPORTED in one line naming the
 * library, the loader's reason and what to do. A failed load leaves `nccl` as it was. */
static int nccl_load(const char *soname)
{
	static const char *const name[] = {
#define NCCL_NAME(n) "nccl" #n,
		NCCL_ENTRIES(NCCL_NAME)
#undef NCCL_NAME
	};
	void *sym[sizeof name / sizeof *name];
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return bw_err(BURROW_E_UNSUPPORTED,
			      "comm: nccl: cannot load %s (%s): install NCCL or put its folder on LD_LIBRARY_PATH, "
			      "or use --comm staged",
			      soname, dlerror());
	for (size_t i = 0; i < sizeof name / sizeof *name; i++)
		if (!(sym[i] = dlsym(h, name[i]))) {
			dlclose(h);
			return bw_err(BURROW_E_UNSUPPORTED, "comm: nccl: %s lacks %s (NCCL %d.%d or later wanted)", soname,
				      name[i], NCCL_MAJOR, NCCL_MINOR);
		}
	static_assert(sizeof nccl == sizeof sym, "one symbol a slot");
	memcpy(&nccl, sym, sizeof nccl);
	return 0;
}

static void nccl_load_default(void)
{
	if (nccl_load(NCCL_SONAME))
		snprintf(nccl_why, sizeof nccl_why, "%s", burrow_last_error());
}

int bw_comm_nccl_load(const char *soname)
{
	if (soname)
		return nccl_load(soname);
	pthread_once(&nccl_once, nccl_load_default);
	return nccl_why[0] ? bw_err(BURROW_E_UNSUPPORTED, "%s", nccl_why) : 0;
}

/* ------------------------------------------------------------ errors */

/* call is the expression, "nccl.Name(...)": named as NCCL names it, ncclName. */
static int err_nccl(ncclResult_t r, const char *what, const char *call)
{
	if (!strncmp(call, "nccl.", 5))
		call += 5;
	return bw_err(BURROW_E_CUDA, "%s: nccl%.*s: NCCL: %s", what, (int)strcspn(call, "("), call,
		      nccl.GetErrorString(r));
}

/* The status of an NCCL call: 0, or BURROW_E_CUDA recorded with NCCL's message. */
#define BW_NCCL(call, what) nccl_status((call), (what), #call)

static inline int nccl_status(ncclResult_t r, const char *what, const char *call)
{
	return r == ncclSuccess ? 0 : err_nccl(r, what, call);
}

/* ------------------------------------------------------------ the communicator */

#define NCCL_EVENTS BW_COMM_MAX_REQ

typedef struct nccl_ctx {
	ncclComm_t comm;
	bw_stream *stream;              /* the communication stream (device layer) */
	bw_event *ev[NCCL_EVENTS];      /* one per request in flight */
	bool ev_busy[NCCL_EVENTS];
} nccl_ctx;

static nccl_ctx *ctx_of(const bw_comm *c) { return (nccl_ctx *)c->ctx; }
/* A CUDA device's bw_stream is its cudaStream_t (backend_cuda.cu). */
static cudaStream_t stream_of(const bw_comm *c) { return (cudaStream_t)ctx_of(c)->stream; }

static ncclDataType_t nccl_type(bw_comm_type t)
{
	switch (t) {
	case BW_COMM_INT: return ncclInt32;
	case BW_COMM_I64: return ncclInt64;
	case BW_COMM_U64: return ncclUint64;
	case BW_COMM_F32: return ncclFloat32;
	case BW_COMM_F64: return ncclFloat64;
	case BW_COMM_BYTE: return ncclUint8;
	}
	return ncclUint8;
}

static int nccl_op(bw_comm_op op, ncclRedOp_t *out, const char *what)
{
	switch (op) {
	case BW_COMM_SUM: *out = ncclSum; return 0;
	case BW_COMM_MAX: *out = ncclMax; return 0;
	case BW_COMM_MIN: *out = ncclMin; return 0;
	case BW_COMM_BOR: break;
	}
	return bw_err(BURROW_E_UNSUPPORTED, "%s: NCCL has no bitwise-or reduction", what);
}

static const bw_comm_i *nccl_iface(void);

/* The NCCL state of c over dev around an initialized ncclComm (taken). */
static int nccl_wrap(bw_comm *c, ncclComm_t nc)
{
	int st;
	nccl_ctx *x = (nccl_ctx *)bw_calloc(1, sizeof *x);
	if (!x) {
		if (nc)
			nccl.CommDestroy(nc);
		return BURROW_E_NOMEM;
	}
	x->comm = nc;
	c->ctx = x;
	if ((st = bw_stream_open(c->dev, &x->stream)))
		return st;
	for (int i = 0; i < NCCL_EVENTS; i++)
		if ((st = bw_event_open(c->dev, &x->ev[i])))
			return st;
	return 0;
}

/* Every rank's status made the worst one, so that all ranks agree on the outcome. */
static int agree(bw_comm *host, int st)
{
	int all = st;
	int rc = bw_comm_allreduce(host, NULL, &all, 1, BW_COMM_INT, BW_COMM_MIN, "comm: nccl: agreeing on the start");
	if (rc)
		return rc;
	if (all && !st)
		return bw_err(BURROW_E_CUDA, "comm: nccl: another rank could not start NCCL");
	return st;
}

/* The ranks of this node hold distinct GPUs (NCCL's requirement): collective over the node,
 * every rank of it takes part whatever its own outcome. */
static int distinct_gpus(bw_comm *host, const bw_device *dev)
{
	enum { MAXDEV = 64 };
	int used[MAXDEV] = {0}, st;
	const bool known = dev->index >= 0 && dev->index < MAXDEV;
	bw_comm *node = NULL;
	if (known)
		used[dev->index] = 1;
	if ((st = bw_comm_node(&node, host)))
		return st;
	st = bw_comm_allreduce(node, NULL, used, MAXDEV, BW_COMM_INT, BW_COMM_SUM, "comm: nccl: GPUs of this node");
	bw_comm_close(node);
	if (!st && !known)
		st = bw_err(BURROW_E_UNSUPPORTED, "comm: nccl: device %s beyond cuda:%d", dev->name, MAXDEV - 1);
	if (!st && used[dev->index] > 1)
		st = bw_err(BURROW_E_UNSUPPORTED, "comm: nccl: %d ranks of this node share %s (use --comm staged)",
			    used[dev->index], dev->name);
	return st;
}

/* Collective over host (taken): every step that can fail on one rank is followed by an
 * agreement on the worst status before the next collective step, so that a rank that fails
 * (no libnccl, no stream, its own GPU's error) makes every rank fail with it instead of
 * leaving the others waiting in ncclCommInitRank. */
int bw_comm_nccl_open(bw_comm **out, bw_comm *host, const bw_device *dev)
{
	int st;
	bw_comm *c = NULL;
	ncclUniqueId id;
	ncclComm_t nc = NULL;
	*out = NULL;
	if ((st = agree(host, bw_comm_alloc(&c, nccl_iface(), BURROW_COMM_NCCL, dev)))) {
		bw_comm_close(c);
		bw_comm_close(host);
		return st;
	}
	c->host = host; /* c's from here: closing c closes it */
	c->rank = host->rank;
	c->size = host->size;
	if (c->dev->host_memory)
		st = bw_err(BURROW_E_UNSUPPORTED, "comm: nccl moves GPU buffers, not %s's", c->dev->name);
	/* the library on every rank, then whether any node has ranks sharing a GPU (each node
	   checks its own) */
	if ((st = agree(host, st ? st : bw_comm_nccl_load(NULL))) || (st = agree(host, distinct_gpus(host, c->dev))))
		goto out_close;
	memset(&id, 0, sizeof id);
	st = c->rank == 0 ? BW_NCCL(nccl.GetUniqueId(&id), "comm: nccl: the unique id") : 0;
	if ((st = agree(host, st)) ||
	    (st = bw_comm_bcast(host, &id, (int64_t)sizeof id, BW_COMM_BYTE, 0, "comm: nccl: sharing the unique id")))
		goto out_close;
	/* the stream first: the device layer makes c->dev current on this thread, where NCCL binds;
	   a rank without it must not leave the others in ncclCommInitRank */
	if ((st = agree(host, nccl_wrap(c, NULL))))
		goto out_close;
	st = BW_NCCL(nccl.CommInitRank(&nc, c->size, id, c->rank), "comm: nccl: starting");
	if (!st)
		ctx_of(c)->comm = nc;
	if ((st = agree(host, st)))
		goto out_close;
	*out = c;
	return 0;
out_close:
	bw_comm_close(c);
	return st;
}

/* Collective over c, agreeing as bw_comm_nccl_open does around ncclCommSplit. */
static int nccl_derive(bw_comm *c, bool neighbors, int n, const int *nbr, bw_comm **out)
{
	int st;
	bw_comm *h = NULL, *d = NULL;
	ncclComm_t nc = NULL;
	/* the MPI side first; NCCL's neighbor exchange is grouped sends and receives to the
	   neighbors the dispatcher records, on a split of c's NCCL communicator */
	if ((st = neighbors ? bw_comm_neighbors(&h, c->host, n, nbr) : bw_comm_dup(&h, c->host)))
		return st;
	if (!(st = bw_comm_alloc(&d, nccl_iface(), BURROW_COMM_NCCL, c->dev))) {
		d->host = h; /* d's from here */
		d->rank = c->rank;
		d->size = c->size;
		st = nccl_wrap(d, NULL);
	} else {
		bw_comm_close(h);
	}
	if (!(st = agree(c->host, st))) {
		st = BW_NCCL(nccl.CommSplit(ctx_of(c)->comm, 0, c->rank, &nc, NULL), "comm: nccl: splitting");
		if (!st)
			ctx_of(d)->comm = nc;
		st = agree(c->host, st);
	}
	if (st) {
		bw_comm_close(d);
		return st;
	}
	*out = d;
	return 0;
}

static int nccl_close(bw_comm *c)
{
	nccl_ctx *x = ctx_of(c);
	if (!x)
		return 0;
	if (x->stream)
		(void)bw_stream_sync(c->dev, x->stream);
	if (x->comm)
		nccl.CommDestroy(x->comm);
	for (int i = 0; i < NCCL_EVENTS; i++)
		if (x->ev[i])
			bw_event_close(c->dev, x->ev[i]);
	if (x->stream)
		bw_stream_close(c->dev, x->stream);
	bw_free(x);
	c->ctx = NULL;
	return 0;
}

/* Blocking: the host waits for the communication stream. */
static int sync_stream(bw_comm *c, int st) { return st ? st : bw_stream_sync(c->dev, ctx_of(c)->stream); }

/* Non-blocking: an event after the posted work, held by req. */
static int post_event(bw_comm *c, bw_comm_req *req, int st, const char *what)
{
	nccl_ctx *x = ctx_of(c);
	if (st)
		return st;
	for (int i = 0; i < NCCL_EVENTS; i++) {
		if (x->ev_busy[i])
			continue;
		if ((st = bw_event_record(c->dev, x->ev[i], x->stream)))
			return st;
		x->ev_busy[i] = true;
		req->impl[0] = (uint64_t)i;
		return 0;
	}
	(void)bw_stream_sync(c->dev, x->stream);
	return bw_err(BURROW_E_UNSUPPORTED, "%s: more than %d NCCL operations in flight", what, NCCL_EVENTS);
}

static int nccl_allreduce(bw_comm *c, const void *send, void *recv, int64_t count, bw_comm_type t, bw_comm_op op,
			  const char *what)
{
	ncclRedOp_t r = ncclSum;
	int st = nccl_op(op, &r, what);
	if (st)
		return st;
	return sync_stream(c, BW_NCCL(nccl.AllReduce(send ? send : recv, recv, (size_t)count, nccl_type(t), r,
						    ctx_of(c)->comm, stream_of(c)),
				      what));
}

static int nccl_iallreduce(bw_comm *c, void *buf, int64_t count, bw_comm_type t, bw_comm_op op, bw_comm_req *req,
			   const char *what)
{
	ncclRedOp_t r = ncclSum;
	int st = nccl_op(op, &r, what);
	if (st)
		return st;
	return post_event(c, req,
			  BW_NCCL(nccl.AllReduce(buf, buf, (size_t)count, nccl_type(t), r, ctx_of(c)->comm, stream_of(c)),
				  what),
			  what);
}

static int nccl_bcast(bw_comm *c, void *buf, int64_t count, bw_comm_type t, int root, const char *what)
{
	return sync_stream(
		c, BW_NCCL(nccl.Broadcast(buf, buf, (size_t)count, nccl_type(t), root, ctx_of(c)->comm, stream_of(c)), what));
}

/* Grouped sends and receives: to peer[j] cnt_s[j] units at send + dsp_s[j], from it
 * cnt_r[j] units into recv + dsp_r[j] (n peers; peer NULL: every rank, j itself). */
static int exchange(bw_comm *c, int n, const int *peer, const void *send, const int *scnt, const int *sdsp,
		    void *recv, const int *rcnt, const int *rdsp, size_t unit, const char *what)
{
	nccl_ctx *x = ctx_of(c);
	int st = BW_NCCL(nccl.GroupStart(), what);
	for (int j = 0; j < n && !st; j++) {
		const int p = peer ? peer[j] : j;
		if (scnt[j])
			st = BW_NCCL(nccl.Send((const char *)send + (size_t)sdsp[j] * unit, (size_t)scnt[j] * unit, ncclUint8,
					      p, x->comm, stream_of(c)),
				     what);
		if (!st && rcnt[j])
			st = BW_NCCL(nccl.Recv((char *)recv + (size_t)rdsp[j] * unit, (size_t)rcnt[j] * unit, ncclUint8, p,
					      x->comm, stream_of(c)),
				     what);
	}
	int end = BW_NCCL(nccl.GroupEnd(), what);
	return st ? st : end;
}

static int nccl_alltoall(bw_comm *c, const void *send, void *recv, int count, bw_comm_type t, const char *what)
{
	int *cd = (int *)bw_malloc(2 * (size_t)c->size * sizeof *cd);
	if (!cd)
		return BURROW_E_NOMEM;
	for (int j = 0; j < c->size; j++) {
		cd[j] = count;
		cd[c->size + j] = j * count;
	}
	int st = exchange(c, c->size, NULL, send, cd, cd + c->size, recv, cd, cd + c->size, bw_comm_type_size(t), what);
	bw_free(cd);
	return sync_stream(c, st);
}

static int nccl_alltoallv(bw_comm *c, const void *send, const int *scnt, const int *sdsp, void *recv,
			  const int *rcnt, const int *rdsp, bw_comm_type t, const char *what)
{
	return sync_stream(c, exchange(c, c->size, NULL, send, scnt, sdsp, recv, rcnt, rdsp, bw_comm_type_size(t), what));
}

static int nccl_ialltoallv(bw_comm *c, const void *send, const int *scnt, const int *sdsp, void *recv,
			   const int *rcnt, const int *rdsp, bw_comm_type t, bw_comm_req *req, const char *what)
{
	return post_event(c, req,
			  exchange(c, c->size, NULL, send, scnt, sdsp, recv, rcnt, rdsp, bw_comm_type_size(t), what), what);
}

static int nccl_ineighbor_alltoallv(bw_comm *c, const float *send, const int *scnt, const int *sdsp, float *recv,
				    const int *rcnt, const int *rdsp, int64_t row_floats, bw_comm_req *req,
				    const char *what)
{
	return post_event(c, req,
			  exchange(c, c->nnbr, c->nbr, send, scnt, sdsp, recv, rcnt, rdsp,
				   (size_t)row_floats * sizeof(float), what),
			  what);
}

/* The device layer has no event query, so a test waits for the events: *done is always 1
 * after it (the exchange still overlaps the compute queued before the test). */
static int nccl_wait(bw_comm *c, bw_comm_req *req, int n, const char *what)
{
	(void)what;
	nccl_ctx *x = ctx_of(c);
	int st = 0;
	for (int i = 0; i < n; i++) {
		if (!req[i].active)
			continue;
		const int e = (int)req[i].impl[0];
		int s = bw_event_sync(c->dev, x->ev[e]);
		x->ev_busy[e] = false;
		if (!st)
			st = s;
		bw_comm_req_null(&req[i]);
	}
	return st;
}

static int nccl_test(bw_comm *c, bw_comm_req *req, int n, int *done, const char *what)
{
	int st = nccl_wait(c, req, n, what);
	*done = !st;
	return st;
}

static const bw_comm_i nccl_table = {
	.name = "nccl",
	.derive = nccl_derive,
	.close = nccl_close,
	.allreduce = nccl_allreduce,
	.iallreduce = nccl_iallreduce,
	.bcast = nccl_bcast,
	.alltoall = nccl_alltoall,
	.alltoallv = nccl_alltoallv,
	.ialltoallv = nccl_ialltoallv,
	.ineighbor_alltoallv = nccl_ineighbor_alltoallv,
	.test = nccl_test,
	.wait = nccl_wait,
};

static const bw_comm_i *nccl_iface(void) { return &nccl_table; }
