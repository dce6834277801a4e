/* halo.c: halo exchange over the communication layer's neighbor communicator and its
 * non-blocking neighbor all-to-all, so that aggregation over inner edges overlaps the transfer.
 * Rows are packed and unpacked by the compute backend (bw_gather_rows, bw_scatter_add_rows)
 * in the memory of its device, the buffers the communicator moves. */
#include "halo.h"

#include "../../core/rng.h"

#include <string.h>

struct bw_halo {
	bw_comm *comm;        /* neighbor communicator over the neighbor parts */
	int nnbr;             /* neighbor parts */
	int *nbr;             /* [nnbr] their ranks */
	int64_t n_owned, n_send, n_halo;
	int64_t *send_local;  /* [n_send], owned */
	const bw_backend *be; /* packs and unpacks rows on its device (borrowed) */
	bw_dbuf idx;          /* send_local on be->dev */
	bw_dbuf dbuf;         /* the packed rows in be->dev's memory ([n_send, dim]) */
	int *send_cnt, *send_dsp, *recv_cnt, *recv_dsp; /* [nnbr], in rows */
	float *buf;           /* dbuf.ptr: packed rows out (forward) or gradients in (backward) */
	bw_comm_req req;
	bool active, backward;
	double t_post;
	int64_t dim;
	float *emb;           /* forward: where the halo rows land */
	bw_halo_stats st;
	/* boundary sampling (bw_halo_sample): the kept send entries and halo rows, in order */
	bool sampled;
	float inv_p;
	int64_t *sel_send, *sel_recv, n_sel_send, n_sel_recv;
	int *s_cnt, *s_dsp, *r_cnt, *r_dsp; /* [nnbr] each, in rows, over the kept ones */
	float *rbuf;          /* [n_sel_recv, dim]: kept halo rows in (forward) or their gradients out */
	size_t rbuf_cap;
};

int bw_halo_open(bw_halo **out, bw_comm *comm, const bw_backend *be, int64_t n_owned, const int64_t *send_local,
		 const int64_t *send_offsets, const int64_t *halo_offsets)
{
	int K, rank, st = 0;
	*out = NULL;
	bw_halo *h = bw_calloc(1, sizeof *h);
	if (!h)
		return BURROW_E_NOMEM;
	K = bw_comm_size(comm);
	rank = bw_comm_rank(comm);
	h->n_owned = n_owned;
	h->be = be;
	if (comm->dev != be->dev) {
		st = bw_err(BURROW_E_INVAL, "halo: the communicator moves %s buffers, the rows are on %s", comm->dev->name,
			    be->dev->name);
		goto fail;
	}
	h->n_send = send_offsets[K];
	h->n_halo = halo_offsets[K];
	if (send_offsets[rank + 1] != send_offsets[rank] || halo_offsets[rank + 1] != halo_offsets[rank]) {
		st = bw_err(BURROW_E_FORMAT, "halo: rank %d lists itself as a neighbor", rank);
		goto fail;
	}
	h->send_local = bw_malloc((size_t)(h->n_send ? h->n_send : 1) * sizeof *h->send_local);
	h->nbr = bw_malloc((size_t)K * sizeof *h->nbr);
	h->send_cnt = bw_malloc(4 * (size_t)K * sizeof(int));
	if (!h->send_local || !h->nbr || !h->send_cnt) {
		st = BURROW_E_NOMEM;
		goto fail;
	}
	h->send_dsp = h->send_cnt + K;
	h->recv_cnt = h->send_cnt + 2 * K;
	h->recv_dsp = h->send_cnt + 3 * K;
	for (int64_t k = 0; k < h->n_send; k++) {
		if (send_local[k] < 0 || send_local[k] >= n_owned) {
			st = bw_err(BURROW_E_RANGE, "halo: send entry %lld is local row %lld, not an owned row [0, %lld)",
				    (long long)k, (long long)send_local[k], (long long)n_owned);
			goto fail;
		}
		h->send_local[k] = send_local[k];
	}
	/* neighbors: parts we send to or receive from (the same set on a symmetric graph,
	 * but the union keeps a one-sided list correct) */
	for (int j = 0; j < K; j++) {
		int64_t ns = send_offsets[j + 1] - send_offsets[j], nr = halo_offsets[j + 1] - halo_offsets[j];
		if (ns > INT32_MAX || nr > INT32_MAX) {
			st = bw_err(BURROW_E_UNSUPPORTED, "halo: more than 2^31 rows to exchange with part %d", j);
			goto fail;
		}
		if (!ns && !nr)
			continue;
		h->nbr[h->nnbr] = j;
		h->send_cnt[h->nnbr] = (int)ns;
		h->send_dsp[h->nnbr] = (int)send_offsets[j];
		h->recv_cnt[h->nnbr] = (int)nr;
		h->recv_dsp[h->nnbr] = (int)halo_offsets[j];
		h->nnbr++;
	}
	if ((st = bw_dbuf_from_host(&h->idx, be->dev, h->send_local, (size_t)(h->n_send ? h->n_send : 1) * sizeof(int64_t))) ||
	    (st = bw_comm_neighbors(&h->comm, comm, h->nnbr, h->nbr)))
		goto fail;
	*out = h;
	return 0;
fail:
	bw_halo_close(h);
	return st;
}

void bw_halo_close(bw_halo *h)
{
	if (!h)
		return;
	if (h->active)
		bw_comm_wait(&h->req, 1, "halo: closing");
	bw_comm_close(h->comm);
	bw_free(h->send_local);
	bw_free(h->nbr);
	bw_free(h->send_cnt);
	bw_dbuf_free(&h->dbuf);
	bw_dbuf_free(&h->idx);
	bw_free(h->sel_send);
	bw_free(h->sel_recv);
	bw_free(h->s_cnt);
	bw_free(h->rbuf);
	bw_free(h);
}

int64_t bw_halo_rows(const bw_halo *h) { return h->n_halo; }

/* Staging buffers for rows of `dim` floats. */
static int prepare(bw_halo *h, int64_t dim)
{
	if (h->active)
		return bw_err(BURROW_E_INVAL, "halo: an exchange is already in flight");
	if (dim <= 0 || dim > INT32_MAX)
		return bw_err(BURROW_E_INVAL, "halo: bad row width %lld", (long long)dim);
	size_t need = (size_t)(h->n_send ? h->n_send : 1) * (size_t)dim * sizeof(float);
	int st = bw_dbuf_reserve(&h->dbuf, h->be->dev, need);
	if (st)
		return st;
	h->buf = h->dbuf.ptr;
	need = (size_t)(h->n_sel_recv ? h->n_sel_recv : 1) * (size_t)dim * sizeof(float);
	if (h->sampled && need > h->rbuf_cap) {
		float *b = bw_realloc(h->rbuf, need);
		if (!b)
			return BURROW_E_NOMEM;
		h->rbuf = b;
		h->rbuf_cap = need;
	}
	h->dim = dim;
	return 0;
}

bool bw_halo_keep(uint64_t key, int64_t gid, double p)
{
	if (p >= 1.0)
		return true;
	bw_rng r;
	bw_rng_seed(&r, bw_key(key, (uint64_t)gid));
	return bw_rng_uniform(&r) < p;
}

int64_t bw_halo_kept(const bw_halo *h) { return h->sampled ? h->n_sel_recv : h->n_halo; }

/* Kept entries of list [0, n) grouped by the segments cnt/dsp: their indices into sel and
 * the per-segment counts and offsets of the kept ones. */
static int64_t select_kept(const bw_halo *h, const int *cnt, const int *dsp, const int64_t *gid, uint64_t key,
			   double p, int64_t *sel, int *kcnt, int *kdsp)
{
	int64_t n = 0;
	for (int k = 0; k < h->nnbr; k++) {
		kdsp[k] = (int)n;
		for (int64_t e = dsp[k]; e < (int64_t)dsp[k] + cnt[k]; e++)
			if (bw_halo_keep(key, gid[e], p))
				sel[n++] = e;
		kcnt[k] = (int)(n - kdsp[k]);
	}
	return n;
}

int bw_halo_sample(bw_halo *h, double p, uint64_t key, const int64_t *send_gid, const int64_t *halo_gid)
{
	if (h->active)
		return bw_err(BURROW_E_INVAL, "halo: cannot change the sample with an exchange in flight");
	if (!(p > 0.0 && p <= 1.0))
		return bw_err(BURROW_E_INVAL, "halo: boundary sample fraction %g outside (0, 1]", p);
	if (p < 1.0 && !h->be->dev->host_memory)
		return bw_err(BURROW_E_UNSUPPORTED, "halo: boundary sampling runs on host memory, not %s's",
			      h->be->dev->name);
	h->sampled = p < 1.0;
	if (!h->sampled)
		return 0;
	if (!h->sel_send) {
		h->sel_send = bw_malloc((size_t)(h->n_send ? h->n_send : 1) * sizeof *h->sel_send);
		h->sel_recv = bw_malloc((size_t)(h->n_halo ? h->n_halo : 1) * sizeof *h->sel_recv);
		h->s_cnt = bw_malloc(4 * (size_t)(h->nnbr ? h->nnbr : 1) * sizeof *h->s_cnt);
		if (!h->sel_send || !h->sel_recv || !h->s_cnt) {
			h->sampled = false;
			return BURROW_E_NOMEM;
		}
		h->s_dsp = h->s_cnt + h->nnbr;
		h->r_cnt = h->s_cnt + 2 * h->nnbr;
		h->r_dsp = h->s_cnt + 3 * h->nnbr;
	}
	h->inv_p = (float)(1.0 / p);
	h->n_sel_send = select_kept(h, h->send_cnt, h->send_dsp, send_gid, key, p, h->sel_send, h->s_cnt, h->s_dsp);
	h->n_sel_recv = select_kept(h, h->recv_cnt, h->recv_dsp, halo_gid, key, p, h->sel_recv, h->r_cnt, h->r_dsp);
	return 0;
}

/* The compute stream's work so far (rows packed or gradients written there) is done before
 * the communicator, on its own stream or on the host, reads it. */
static int fence(const bw_halo *h) { return bw_stream_sync(h->be->dev, h->be->stream); }

int bw_halo_forward_start(bw_halo *h, float *emb, int64_t dim)
{
	int st = prepare(h, dim);
	if (st)
		return st;
	h->emb = emb;
	h->t_post = bw_comm_now();
	if (h->sampled) {
		/* the kept rows only; they land in rbuf and are scattered when complete */
#pragma omp parallel for schedule(dynamic, bw_row_chunk(dim)) num_threads(h->be->threads)
		for (int64_t k = 0; k < h->n_sel_send; k++)
			memcpy(h->buf + k * dim, emb + h->send_local[h->sel_send[k]] * dim, (size_t)dim * sizeof(float));
		if ((st = bw_comm_ineighbor_alltoallv(h->comm, h->buf, h->s_cnt, h->s_dsp, h->rbuf, h->r_cnt, h->r_dsp, dim, &h->req,
						   "halo: posting the exchange")))
			goto fail;
		h->st.bytes_out += h->n_sel_send * dim * (int64_t)sizeof(float);
	} else {
		if ((st = bw_gather_rows(h->be, emb, dim, h->idx.ptr, h->n_send, h->buf)) || (st = fence(h)))
			goto fail;
		if ((st = bw_comm_ineighbor_alltoallv(h->comm, h->buf, h->send_cnt, h->send_dsp, emb + h->n_owned * dim,
						   h->recv_cnt, h->recv_dsp, dim, &h->req, "halo: posting the exchange")))
			goto fail;
		h->st.bytes_out += h->n_send * dim * (int64_t)sizeof(float);
	}
	h->active = true;
	h->backward = false;
	h->st.exchanges++;
	return 0;
fail:
	return st;
}

static void completed(bw_halo *h)
{
	h->active = false;
	h->st.comm_s += bw_comm_now() - h->t_post;
	if (h->sampled && !h->backward) {
		/* dropped halo rows read as zeros, kept ones scaled by 1/p */
		const int64_t dim = h->dim;
		float *halo = h->emb + h->n_owned * dim;
		memset(halo, 0, (size_t)(h->n_halo * dim) * sizeof(float));
		for (int64_t k = 0; k < h->n_sel_recv; k++) {
			float *dst = halo + h->sel_recv[k] * dim;
			const float *src = h->rbuf + k * dim;
			for (int64_t c = 0; c < dim; c++)
				dst[c] = h->inv_p * src[c];
		}
	}
}

int bw_halo_test(bw_halo *h)
{
	int done = 0, st = 0;
	if (!h->active)
		return 1;
	double t = bw_comm_now();
	if ((st = bw_comm_test(&h->req, 1, &done, "halo: testing the exchange")))
		goto fail;
	h->st.test_s += bw_comm_now() - t;
	if (done)
		completed(h);
	return done;
fail:
	h->active = false;
	return st;
}

int bw_halo_wait(bw_halo *h)
{
	int st = 0;
	if (!h->active)
		return 0;
	double t = bw_comm_now();
	if ((st = bw_comm_wait(&h->req, 1, "halo: waiting for the exchange")))
		goto fail;
	h->st.wait_s += bw_comm_now() - t;
	completed(h);
	return 0;
fail:
	h->active = false;
	return st;
}

int bw_halo_backward_start(bw_halo *h, const float *grad, int64_t dim)
{
	int st = prepare(h, dim);
	if (st)
		return st;
	/* the reverse of forward: halo rows go back to their owners, who receive them in
	 * their send order */
	h->t_post = bw_comm_now();
	if (h->sampled) {
		/* the kept rows' gradients, scaled as their forward values were */
		for (int64_t k = 0; k < h->n_sel_recv; k++) {
			const float *src = grad + (h->n_owned + h->sel_recv[k]) * dim;
			float *dst = h->rbuf + k * dim;
			for (int64_t c = 0; c < dim; c++)
				dst[c] = h->inv_p * src[c];
		}
		if ((st = bw_comm_ineighbor_alltoallv(h->comm, h->rbuf, h->r_cnt, h->r_dsp, h->buf, h->s_cnt, h->s_dsp, dim, &h->req,
						   "halo: posting the exchange (backward)")))
			goto fail;
		h->st.bytes_out += h->n_sel_recv * dim * (int64_t)sizeof(float);
	} else {
		if ((st = fence(h)))
			goto fail;
		if ((st = bw_comm_ineighbor_alltoallv(h->comm, grad + h->n_owned * dim, h->recv_cnt, h->recv_dsp, h->buf,
						   h->send_cnt, h->send_dsp, dim, &h->req, "halo: posting the exchange (backward)")))
			goto fail;
		h->st.bytes_out += h->n_halo * dim * (int64_t)sizeof(float);
	}
	h->active = true;
	h->backward = true;
	h->st.exchanges++;
	return 0;
fail:
	return st;
}

int bw_halo_backward_finish(bw_halo *h, float *grad)
{
	if (!h->backward)
		return bw_err(BURROW_E_INVAL, "halo: no backward exchange was started");
	int st = bw_halo_wait(h);
	if (st)
		return st;
	h->backward = false;
	const int64_t dim = h->dim;
	if (!h->sampled) {
		/* one owned row may be sent to several parts, but only once to each: a neighbor's
		 * segment at a time adds into distinct rows, in the neighbors' order on every
		 * device (the serial loop's sums) */
		for (int k = 0; k < h->nnbr; k++)
			if ((st = bw_scatter_add_rows(h->be, h->buf + (int64_t)h->send_dsp[k] * dim, dim,
						      (const int64_t *)h->idx.ptr + h->send_dsp[k], h->send_cnt[k], grad)))
				return st;
		return 0;
	}
	/* sampled (host memory): accumulate serially in row order to keep the sum deterministic */
	const int64_t n = h->n_sel_send;
	for (int64_t k = 0; k < n; k++) {
		float *dst = grad + h->send_local[h->sel_send[k]] * dim;
		const float *src = h->buf + k * dim;
		for (int64_t c = 0; c < dim; c++)
			dst[c] += src[c];
	}
	return 0;
}

void bw_halo_get_stats(const bw_halo *h, bw_halo_stats *s) { *s = h->st; }
