/* comm_staged.c: the communication layer's host-staged implementation, for device buffers
 * that MPI cannot read (ranks sharing a GPU, or no NCCL): every operation copies its device
 * bytes into pinned host memory on a copy stream, runs the MPI operation there (through the
 * MPI communicator c->host), and copies the result back to the device; a non-blocking one
 * copies back when bw_comm_test / bw_comm_wait sees it complete. All copies go through the
 * device layer, so with the CPU device (host memory) the path runs, and is tested, here. */
#include "comm.h"

/* One operation's pinned buffers and what to copy back when it completes. */
typedef struct staged_op {
	bool busy;
	bw_comm_req inner;     /* the MPI operation on the pinned buffers */
	void *pin_s, *pin_r;   /* pinned: send side, receive side (owned, grown on demand) */
	size_t cap_s, cap_r;
	char *dst;             /* device memory the result goes to */
	size_t unit;           /* bytes per counted element */
	int n;                 /* regions: cnt[j] units at dsp[j] (borrowed from the caller) */
	const int *cnt, *dsp;
	int one_cnt, one_dsp;  /* the region of a single-buffer operation */
} staged_op;

#define STAGED_OPS 16

typedef struct staged_ctx {
	bw_stream *copy;       /* the copy stream on c->dev */
	staged_op op[STAGED_OPS];
} staged_ctx;

static staged_ctx *ctx_of(const bw_comm *c) { return (staged_ctx *)c->ctx; }

static const bw_comm_i staged_iface;

int bw_comm_staged_open(bw_comm **out, bw_comm *host, const bw_device *dev)
{
	int st;
	bw_comm *c = NULL;
	staged_ctx *x;
	*out = NULL;
	if ((st = bw_comm_alloc(&c, &staged_iface, BURROW_COMM_STAGED, dev))) {
		bw_comm_close(host);
		return st;
	}
	c->host = host; /* c's from here: closing c closes it */
	c->rank = host->rank;
	c->size = host->size;
	if (!(x = bw_calloc(1, sizeof *x))) {
		st = BURROW_E_NOMEM;
		goto out_close;
	}
	c->ctx = x;
	if ((st = bw_stream_open(c->dev, &x->copy)))
		goto out_close;
	*out = c;
	return 0;
out_close:
	bw_comm_close(c);
	return st;
}

static int staged_derive(bw_comm *c, bool neighbors, int n, const int *nbr, bw_comm **out)
{
	bw_comm *h = NULL;
	int st = neighbors ? bw_comm_neighbors(&h, c->host, n, nbr) : bw_comm_dup(&h, c->host);
	if (st)
		return st;
	return bw_comm_staged_open(out, h, c->dev);
}

static int staged_close(bw_comm *c)
{
	staged_ctx *x = ctx_of(c);
	if (!x)
		return 0;
	for (int i = 0; i < STAGED_OPS; i++) {
		bw_device_host_free(c->dev, x->op[i].pin_s);
		bw_device_host_free(c->dev, x->op[i].pin_r);
	}
	if (x->copy)
		bw_stream_close(c->dev, x->copy);
	bw_free(x);
	c->ctx = NULL;
	return 0;
}

/* A free operation slot, its buffers grown to send_bytes and recv_bytes. */
/* Grow the pinned buffer *pin (capacity *cap bytes) to at least bytes; on failure it is
 * empty (NULL, 0), never half-sized. */
static int pinned_reserve(bw_comm *c, void **pin, size_t *cap, size_t bytes)
{
	if (bytes <= *cap)
		return 0;
	bw_device_host_free(c->dev, *pin);
	*pin = NULL;
	*cap = 0;
	int st = bw_device_host_alloc(c->dev, bytes, pin);
	if (!st)
		*cap = bytes;
	return st;
}

static int op_take(bw_comm *c, size_t send_bytes, size_t recv_bytes, staged_op **out, const char *what)
{
	staged_ctx *x = ctx_of(c);
	staged_op *o = NULL;
	int st;
	for (int i = 0; i < STAGED_OPS && !o; i++)
		if (!x->op[i].busy)
			o = &x->op[i];
	if (!o)
		return bw_err(BURROW_E_UNSUPPORTED, "%s: more than %d staged operations in flight", what, STAGED_OPS);
	if ((st = pinned_reserve(c, &o->pin_s, &o->cap_s, send_bytes)) ||
	    (st = pinned_reserve(c, &o->pin_r, &o->cap_r, recv_bytes)))
		return st;
	bw_comm_req_null(&o->inner);
	o->busy = true;
	o->n = 0;
	o->dst = NULL;
	*out = o;
	return 0;
}

/* Bytes spanned by n regions (cnt[j] units at dsp[j]). */
static size_t extent(int n, const int *cnt, const int *dsp, size_t unit)
{
	size_t e = 0;
	for (int j = 0; j < n; j++)
		if (cnt[j] && (size_t)(dsp[j] + (int64_t)cnt[j]) * unit > e)
			e = (size_t)(dsp[j] + (int64_t)cnt[j]) * unit;
	return e;
}

/* The n regions of device memory src into the same places of pinned pin, on the copy stream. */
static int download(bw_comm *c, void *pin, const void *src, size_t unit, int n, const int *cnt, const int *dsp)
{
	int st;
	for (int j = 0; j < n; j++) {
		if (!cnt[j])
			continue;
		const size_t at = (size_t)dsp[j] * unit;
		if ((st = bw_device_download_async(c->dev, (char *)pin + at, (const char *)src + at, (size_t)cnt[j] * unit,
						   ctx_of(c)->copy)))
			return st;
	}
	return bw_stream_sync(c->dev, ctx_of(c)->copy);
}

/* o's received regions from its pinned buffer to the device, on the copy stream; frees o. */
static int op_finish(bw_comm *c, staged_op *o)
{
	int st = 0;
	for (int j = 0; j < o->n && !st; j++) {
		if (!o->cnt[j])
			continue;
		const size_t at = (size_t)o->dsp[j] * o->unit;
		st = bw_device_upload_async(c->dev, o->dst + at, (char *)o->pin_r + at, (size_t)o->cnt[j] * o->unit,
					    ctx_of(c)->copy);
	}
	if (!st)
		st = bw_stream_sync(c->dev, ctx_of(c)->copy);
	o->busy = false;
	return st;
}

/* An op whose copy-back plan is one region, count units at 0, into dst: its receive
 * buffer holds those units, its send buffer send_bytes. */
static int op_take_one(bw_comm *c, size_t send_bytes, void *dst, int64_t count, size_t unit, staged_op **out,
		       const char *what)
{
	int st = op_take(c, send_bytes, (size_t)count * unit, out, what);
	if (st)
		return st;
	staged_op *o = *out;
	o->one_cnt = (int)count;
	o->one_dsp = 0;
	o->n = 1;
	o->cnt = &o->one_cnt;
	o->dsp = &o->one_dsp;
	o->dst = dst;
	o->unit = unit;
	return 0;
}

static int staged_allreduce(bw_comm *c, const void *send, void *recv, int64_t count, bw_comm_type t, bw_comm_op op,
			    const char *what)
{
	const size_t unit = bw_comm_type_size(t), bytes = (size_t)count * unit;
	staged_op *o;
	int st;
	if ((st = op_take_one(c, send ? bytes : 0, recv, count, unit, &o, what)))
		return st;
	/* the same MPI call as the MPI implementation (in place or not), so the sums agree bit for bit */
	if (!(st = download(c, send ? o->pin_s : o->pin_r, send ? send : recv, unit, 1, o->cnt, o->dsp)) &&
	    !(st = bw_comm_allreduce(c->host, send ? o->pin_s : NULL, o->pin_r, count, t, op, what)))
		return op_finish(c, o);
	o->busy = false;
	return st;
}

static int staged_iallreduce(bw_comm *c, void *buf, int64_t count, bw_comm_type t, bw_comm_op op, bw_comm_req *req,
			     const char *what)
{
	const size_t unit = bw_comm_type_size(t);
	staged_op *o;
	int st;
	if ((st = op_take_one(c, 0, buf, count, unit, &o, what)))
		return st;
	if ((st = download(c, o->pin_r, buf, unit, 1, o->cnt, o->dsp)) ||
	    (st = bw_comm_iallreduce(c->host, o->pin_r, count, t, op, &o->inner, what))) {
		o->busy = false;
		return st;
	}
	req->impl[0] = (uint64_t)(o - ctx_of(c)->op);
	return 0;
}

static int staged_bcast(bw_comm *c, void *buf, int64_t count, bw_comm_type t, int root, const char *what)
{
	const size_t unit = bw_comm_type_size(t);
	staged_op *o;
	int st;
	if ((st = op_take_one(c, 0, buf, count, unit, &o, what)))
		return st;
	if ((c->rank != root || !(st = download(c, o->pin_r, buf, unit, 1, o->cnt, o->dsp))) &&
	    !(st = bw_comm_bcast(c->host, o->pin_r, count, t, root, what))) {
		if (c->rank != root)
			return op_finish(c, o);
		o->busy = false;
		return 0;
	}
	o->busy = false;
	return st;
}

static int staged_alltoall(bw_comm *c, const void *send, void *recv, int count, bw_comm_type t, const char *what)
{
	const size_t unit = bw_comm_type_size(t);
	const int64_t all = (int64_t)count * c->size;
	staged_op *o;
	int st;
	if ((st = op_take_one(c, (size_t)all * unit, recv, all, unit, &o, what)))
		return st;
	if (!(st = download(c, o->pin_s, send, unit, 1, o->cnt, o->dsp)) &&
	    !(st = bw_comm_alltoall(c->host, o->pin_s, o->pin_r, count, t, what)))
		return op_finish(c, o);
	o->busy = false;
	return st;
}

/* The pinned buffers and the send side of a variable all-to-all over n peers. */
static int stage_v(bw_comm *c, int n, const void *send, const int *scnt, const int *sdsp, void *recv,
		   const int *rcnt, const int *rdsp, size_t unit, staged_op **out, const char *what)
{
	staged_op *o;
	int st;
	if ((st = op_take(c, extent(n, scnt, sdsp, unit), extent(n, rcnt, rdsp, unit), &o, what)))
		return st;
	o->n = n;
	o->cnt = rcnt;
	o->dsp = rdsp;
	o->dst = recv;
	o->unit = unit;
	if ((st = download(c, o->pin_s, send, unit, n, scnt, sdsp))) {
		o->busy = false;
		return st;
	}
	*out = o;
	return 0;
}

static int staged_alltoallv(bw_comm *c, const void *send, const int *scnt, const int *sdsp, void *recv,
			    const int *rcnt, const int *rdsp, bw_comm_type t, const char *what)
{
	staged_op *o;
	int st;
	if ((st = stage_v(c, c->size, send, scnt, sdsp, recv, rcnt, rdsp, bw_comm_type_size(t), &o, what)))
		return st;
	if ((st = bw_comm_alltoallv(c->host, o->pin_s, scnt, sdsp, o->pin_r, rcnt, rdsp, t, what))) {
		o->busy = false;
		return st;
	}
	return op_finish(c, o);
}

static int staged_ialltoallv(bw_comm *c, const void *send, const int *scnt, const int *sdsp, void *recv,
			     const int *rcnt, const int *rdsp, bw_comm_type t, bw_comm_req *req, const char *what)
{
	staged_op *o;
	int st;
	if ((st = stage_v(c, c->size, send, scnt, sdsp, recv, rcnt, rdsp, bw_comm_type_size(t), &o, what)))
		return st;
	if ((st = bw_comm_ialltoallv(c->host, o->pin_s, scnt, sdsp, o->pin_r, rcnt, rdsp, t, &o->inner, what))) {
		o->busy = false;
		return st;
	}
	req->impl[0] = (uint64_t)(o - ctx_of(c)->op);
	return 0;
}

static int staged_ineighbor_alltoallv(bw_comm *c, const float *send, const int *scnt, const int *sdsp, float *recv,
				      const int *rcnt, const int *rdsp, int64_t row_floats, bw_comm_req *req,
				      const char *what)
{
	staged_op *o;
	int st;
	if ((st = stage_v(c, c->nnbr, send, scnt, sdsp, recv, rcnt, rdsp, (size_t)row_floats * sizeof(float), &o,
			  what)))
		return st;
	if ((st = bw_comm_ineighbor_alltoallv(c->host, o->pin_s, scnt, sdsp, o->pin_r, rcnt, rdsp, row_floats,
					      &o->inner, what))) {
		o->busy = false;
		return st;
	}
	req->impl[0] = (uint64_t)(o - ctx_of(c)->op);
	return 0;
}

/* The MPI requests of the n staged ones (inactive where the staged one is). */
static void inner_reqs(bw_comm *c, bw_comm_req *req, int n, bw_comm_req *in)
{
	for (int i = 0; i < n; i++) {
		if (req[i].active)
			in[i] = ctx_of(c)->op[req[i].impl[0]].inner;
		else
			bw_comm_req_null(&in[i]);
	}
}

/* Every active one of the n requests completed (ok) or failed: copy back (when ok), free. */
static int finish_all(bw_comm *c, bw_comm_req *req, int n, bool ok)
{
	int st = 0;
	for (int i = 0; i < n; i++) {
		if (!req[i].active)
			continue;
		staged_op *o = &ctx_of(c)->op[req[i].impl[0]];
		int s = ok ? op_finish(c, o) : 0;
		o->busy = false;
		if (!st)
			st = s;
		bw_comm_req_null(&req[i]);
	}
	return st;
}

static int staged_test(bw_comm *c, bw_comm_req *req, int n, int *done, const char *what)
{
	bw_comm_req in[BW_COMM_MAX_REQ];
	inner_reqs(c, req, n, in);
	int st = bw_comm_test(in, n, done, what);
	if (st || *done) {
		int fin = finish_all(c, req, n, !st);
		return st ? st : fin;
	}
	for (int i = 0; i < n; i++)
		if (req[i].active)
			ctx_of(c)->op[req[i].impl[0]].inner = in[i];
	return 0;
}

static int staged_wait(bw_comm *c, bw_comm_req *req, int n, const char *what)
{
	bw_comm_req in[BW_COMM_MAX_REQ];
	inner_reqs(c, req, n, in);
	int st = bw_comm_wait(in, n, what);
	int fin = finish_all(c, req, n, !st);
	return st ? st : fin;
}

static const bw_comm_i staged_iface = {
	.name = "staged",
	.derive = staged_derive,
	.close = staged_close,
	.allreduce = staged_allreduce,
	.iallreduce = staged_iallreduce,
	.bcast = staged_bcast,
	.alltoall = staged_alltoall,
	.alltoallv = staged_alltoallv,
	.ialltoallv = staged_ialltoallv,
	.ineighbor_alltoallv = staged_ineighbor_alltoallv,
	.test = staged_test,
	.wait = staged_wait,
};
