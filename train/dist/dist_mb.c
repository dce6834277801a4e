/* dist_mb.c: partition-parallel mini-batch training over bw_comm (docs/distributed.md,
 * "Mini-batch mode"). Each rank samples batches from its own training nodes, multi-hop over
 * the whole graph: per hop, frontier nodes this rank owns are expanded from its local CSR,
 * the others are sent to their owners (partition book), which draw their neighbors and send
 * them back as new global ids (an all-to-all of counts, an all-to-all-v of ids). Draws are keyed
 * by (seed, epoch, step, layer, node), and only a node's owner ever expands it, so a batch does
 * not depend on timing. Input rows of owned and halo nodes come from the rank's feature store;
 * the others are fetched from their owners with a non-blocking all-to-all-v while the store
 * reads and, one batch ahead, while the previous batch computes. The batches go through the
 * batch loader (train/driver/loader.h) in line: the sampler is its producer, the fetch its
 * source of rows (bw_rows). Gradients are all-reduced every step, each
 * rank's mean loss weighted by its share of the step's seeds, and every rank takes the same
 * number of steps (ranks out of batches take empty steps that join every collective). */
#include "dist_mb.h"

#include "../../graph/store_sizing.h"
#include "../../partition/book.h"
#include "../../sampler/draw.h"
#include "../../sampler/sampler_internal.h"
#include "../driver/loader.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Key coordinates that no epoch takes: the neighbor draws and the epoch's shuffle. */
#define KEY_DRAW (UINT64_MAX - 16)
#define KEY_SHUFFLE (UINT64_MAX - 17)

/* Batches in flight at most: the one computing and the one loaded ahead (loader depth 1). */
#define MB_INFLIGHT 2

/* One fetch of a batch's input rows (a ticket of the source of rows): rows this rank holds
 * come from its store into dst.x; the others arrive from their owners into rrows (on_dev:
 * into xs_dev, after this rank's own), grouped by owner, for positions fetch_pos. */
typedef struct mb_fetch {
	bool busy;                           /* submitted and not yet waited for */
	bw_rows_dst dst;                     /* where the rows go: the loader's slot (borrowed) */
	int64_t n;                           /* input rows */
	int64_t *lids;                       /* [n] store row of each input (0 for a remote one) */
	int64_t *fetch_pos;                  /* [n_fetch] positions of the rows that arrive */
	int64_t n_fetch;
	float *rrows, *rnorm;                /* [n_fetch, D], [n_fetch] received */
	int64_t *sids;                       /* [n_serve] local ids of the rows this rank sends */
	int64_t n_serve;
	float *srows, *snorm;                /* [n_serve, D], [n_serve] sent */
	size_t lids_cap, fetch_cap, rrows_cap, rnorm_cap, sids_cap, srows_cap, snorm_cap;
	int *cnt;                            /* [4K]: send counts, send displs, recv counts, recv displs (rows) */
	int *cnt_f;                          /* [4K]: the same in floats (times D) */
	/* where the communicator moves buffers of a device (on_dev): the rows arrive in xs_dev
	 * after this rank's own rows, and one sum over a block of one edge per row (scat: row
	 * i's source is i, or n + k for the k-th fetched row) puts every input row in its place,
	 * dst.dev_x, on the model's device */
	bw_dbuf xs_dev;                      /* [n + n_fetch, D] own rows, then the fetched ones */
	bw_dbuf srows_dev;                   /* [n_serve, D] srows on the device */
	bw_block scat;
	int64_t *scat_ip;                    /* [n + 1] */
	int32_t *scat_ind;                   /* [n] */
	size_t scat_ip_cap, scat_ind_cap;
	bw_comm_req req[2];                  /* rows (on the communicator), norms (on its host side) */
	int nreq;
	burrow_store_ticket *ticket;
	double post_t, done_t;               /* when the rows were posted, and seen complete (0: not yet) */
} mb_fetch;

struct bw_dist_mb {
	bw_comm *comm;                 /* a duplicate of the dist's communicator */
	bw_comm *hc;                   /* its host side (comm->host, borrowed): ids, counts, the loss */
	bool on_dev;                   /* comm moves buffers of the model's device (staged, NCCL): the
					  fetched rows and the gradients travel there, not through host
					  copies (with the CPU device the same code runs on host memory) */
	int K, rank;
	burrow_store *store;           /* the part's features.npy: owned rows, then halo rows */
	bool sparse;                   /* layer 0 multiplies each batch's rows sparse (x_sp), as x0 (dist.c) */
	bw_sparse x_sp;                /* the sparse copy of the batch computing, arrays reused */
	int64_t D;
	int L;
	int fanout[BURROW_MAX_LAYERS];     /* block l's fanout, input layer first; -1 = all */
	int64_t batch;
	bool overlap;                  /* sample and post batch k+1 before batch k computes */
	const int64_t *offsets;        /* [K+1] the partition book (borrowed from the parts) */
	int64_t first, n_own, n_halo;
	const int64_t *halo_ids;       /* [n_halo] ascending (borrowed) */
	/* the sources' side of the CSR (l2g): the same as above, but a typed relation's src type's */
	int64_t sfirst, sn_own;
	const int64_t *shalo;          /* (borrowed) */
	bool side;                     /* a typed side (bw_mb_side_open): comm and store are borrowed */
	const int64_t *ip;             /* the part's CSR over local ids (borrowed) */
	const int32_t *ind;
	const float *gnorm;            /* [n_own + n_halo] GCN norms (the dist's), NULL for other models */
	int64_t *train, ntrain;        /* owned training nodes, new global ids */
	int64_t *perm;                 /* [ntrain] this epoch's order */

	bw_sample_ctx sctx;            /* the sampler's numbering scratch (its layer step calls expand) */
	/* --sampler-device cuda: the part's CSR on that GPU, whose draws of the rows this rank
	 * expands are the CPU's (bw_cuda_draw_rows); NULL: drawn here by sample_row */
	bw_cuda_csr *gcsr;
	bw_cuda_sample_ctx *gctx;
	int64_t *glid, *gkey, *gip, *gout; /* one GPU draw's rows, keys, offsets and picks */
	size_t glid_cap, gkey_cap, gip_cap, gout_cap;
	char sampler_dev[24];          /* where the draws are: "cpu" or "cuda:N" */

	/* one hop's scratch: the expansion (eip, egid) handed to the sampler */
	int64_t *lbuf, *rcnt, *roff, *sreq, *spos, *rreq, *rep, *get, *egid, *eip, *ptab, *cur;
	uint8_t *rfrom;
	size_t lbuf_cap, rcnt_cap, roff_cap, sreq_cap, spos_cap, rreq_cap, rep_cap, get_cap, egid_cap, eip_cap,
		ptab_cap, rfrom_cap;
	int *cnt, *cnt2;               /* [4K] each: counts and displacements of a hop's exchanges */

	/* the batches go through the batch loader (in line: the sampler and the fetch are
	 * collective), which holds them in its slots; this rank's sampler is its producer and
	 * the fetch its source of rows */
	bw_loader *ld;
	bw_producer prod;
	bw_rows rows;                  /* the fetch, or under normalize_features the fetch's rows normalized */
	bw_rows fetch_rows;            /* normalize_features: the fetch */
	bw_sampled smp[MB_INFLIGHT];   /* the producer's batches (held: handed to the loader) */
	bool smp_held[MB_INFLIGHT];
	mb_fetch fetch[MB_INFLIGHT];   /* the source's reads (busy: submitted, not waited for) */
	/* the sequence the loader runs: batch k's seeds are seq[k * seq_batch ..], at most
	 * seq_batch of them and none past seq_n, drawn with the key of (seq_epoch, seq_step0 + k) */
	const int64_t *seq;
	int64_t seq_n, seq_batch, seq_epoch, seq_step0;
	const int64_t *seq_off;        /* link training (bw_dist_mb_run): batch k's seeds are seq[seq_off[k] ..
					  seq_off[k+1]), any nodes; NULL: the batches above, owned seeds */
	uint64_t seed;                 /* the training seed (the draws' keys) */
	const bw_backend *be;          /* the model's backend (borrowed): on_dev puts rows in place with it */
	float *xhost;                  /* bw_dist_mb_load's rows on the host */
	size_t xhost_cap;
	int64_t last_fetched;          /* rows that arrived from other ranks for the last batch submitted */
	bw_tensor glogits;
	bw_dbuf loss;                  /* one bw_loss on the device */
	bw_stage stage;                /* host view of the gradients for the all-reduce */

	/* this epoch's accounting (seconds) */
	double sample_s, mpi_s, fetch_comm_s, fetch_wait_s, io_wait_s, reduce_s, compute_s;
};

/* Tell every rank how many items this rank sends it (sc[p]), learn how many each sends
 * here (rc[p]), and lay those out one after another (rd[p], *total). */
static int exchange_counts(struct bw_dist_mb *m, const int *sc, int *rc, int *rd, int64_t *total, const char *what)
{
	int st = bw_comm_alltoall(m->hc, sc, rc, 1, BW_COMM_INT, what);
	if (st)
		return st;
	int64_t n = 0;
	for (int p = 0; p < m->K; p++) {
		rd[p] = (int)n;
		n += rc[p];
	}
	*total = n;
	return 0;
}

static int fits_int(int64_t n, const char *what)
{
	if (n > INT_MAX)
		return bw_err(BURROW_E_UNSUPPORTED, "train: %s: %lld elements exceed one MPI message (int counts)", what,
			      (long long)n);
	return 0;
}

/* ------------------------------------------------------------ ids */

/* New global id of local id lid. */
static inline int64_t l2g(const struct bw_dist_mb *m, int64_t lid)
{
	return lid < m->sn_own ? m->sfirst + lid : m->shalo[lid - m->sn_own];
}

/* The part that owns gid (the partition book: the last p with offsets[p] <= gid). */
static int owner_of(const struct bw_dist_mb *m, int64_t gid)
{
	if (gid >= m->first && gid < m->first + m->n_own)
		return m->rank;
	return bw_book_owner(m->offsets, m->K, gid);
}

/* Index of gid in the halo, or -1. */
static int64_t halo_index(const struct bw_dist_mb *m, int64_t gid)
{
	int64_t lo = 0, hi = m->n_halo;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (m->halo_ids[mid] < gid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->n_halo && m->halo_ids[lo] == gid ? lo : -1;
}

/* ------------------------------------------------------------ sampling */

static void sort_ids(int64_t *a, int64_t n)
{
	if (n > 24) {
		qsort(a, (size_t)n, sizeof *a, bw_cmp_i64);
		return;
	}
	for (int64_t i = 1; i < n; i++) {
		int64_t x = a[i], j = i;
		for (; j > 0 && a[j - 1] > x; j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

/* Room for the draw's membership table of k picks (k > BW_SMALL_FANOUT). */
static int pick_room(struct bw_dist_mb *m, int64_t k)
{
	return bw_grow(&m->ptab, &m->ptab_cap, bw_draw_table_cap(k), sizeof *m->ptab, true);
}

/* Owned node lid's neighbors for a block with fanout fan, as new global ids into out (room
 * for min(fan, deg), or deg when fan < 0): all of them when fan < 0 or deg <= fan, else a
 * uniform fan-subset without replacement (Floyd's algorithm) drawn from the stream
 * bw_key(lkey, gid). Returns how many. */
static int64_t sample_row(struct bw_dist_mb *m, int64_t lid, int fan, uint64_t lkey, int64_t *out)
{
	const int64_t s = m->ip[lid], deg = m->ip[lid + 1] - s;
	if (fan < 0 || deg <= fan) {
		for (int64_t j = 0; j < deg; j++)
			out[j] = l2g(m, m->ind[s + j]);
		return deg;
	}
	bw_rng r;
	bw_rng_seed(&r, bw_key(lkey, (uint64_t)(m->first + lid)));
	const int64_t k = fan;
	bw_draw(&r, deg, k, out, m->ptab); /* the sampler's draw: positions in the row */
	for (int64_t q = 0; q < k; q++)
		out[q] = l2g(m, m->ind[s + out[q]]);
	return k;
}

/* Picks a row of this degree yields under fan. */
static inline int64_t picks(int64_t deg, int fan) { return fan < 0 || deg <= fan ? deg : fan; }

/* sample_row for the n owned rows lids[0, n) at once on the GPU: row i's picks, as new
 * global ids, into m->gout[m->gip[i] .. m->gip[i+1]), the very ids sample_row draws (the
 * same draw.h, keyed by the node's global id). */
static int draw_rows_gpu(struct bw_dist_mb *m, const int64_t *lids, int64_t n, int fan, uint64_t lkey)
{
	int st;
	if ((st = bw_grow(&m->gip, &m->gip_cap, (size_t)n + 1, sizeof *m->gip, true)) ||
	    (st = bw_grow(&m->gkey, &m->gkey_cap, (size_t)n + 1, sizeof *m->gkey, true)))
		return st;
	m->gip[0] = 0;
	for (int64_t i = 0; i < n; i++) {
		m->gip[i + 1] = m->gip[i] + picks(m->ip[lids[i] + 1] - m->ip[lids[i]], fan);
		m->gkey[i] = m->first + lids[i];
	}
	const int64_t E = m->gip[n];
	if ((st = bw_grow(&m->gout, &m->gout_cap, (size_t)E + 1, sizeof *m->gout, true)) ||
	    (st = bw_cuda_draw_rows(m->gctx, lids, m->gkey, n, m->gip, lkey, m->gout)))
		return st;
	for (int64_t q = 0; q < E; q++)
		m->gout[q] = l2g(m, m->gout[q]);
	return 0;
}

/* Room for one hop over nd frontier nodes under fanout fan. */
static int hop_room(struct bw_dist_mb *m, int64_t nd, int fan)
{
	int st;
	if ((st = bw_grow(&m->rcnt, &m->rcnt_cap, (size_t)nd + 1, sizeof *m->rcnt, true)) ||
	    (st = bw_grow(&m->roff, &m->roff_cap, (size_t)nd + 1, sizeof *m->roff, true)) ||
	    (st = bw_grow(&m->rfrom, &m->rfrom_cap, (size_t)nd + 1, sizeof *m->rfrom, true)) ||
	    (st = bw_grow(&m->eip, &m->eip_cap, (size_t)nd + 1, sizeof *m->eip, true)))
		return st;
	return fan > BW_SMALL_FANOUT ? pick_room(m, fan) : 0;
}

/* The frontier nodes owned elsewhere, routed to their owners in frontier order: sreq
 * grouped by owner (counts sc, displacements sd in m->cnt), spos their places in the
 * frontier; *nreq how many. */
static int route(struct bw_dist_mb *m, const int64_t *nodes, int64_t nd, int64_t *nreq)
{
	const int K = m->K;
	int *sc = m->cnt, *sd = sc + K;
	int st;
	memset(sc, 0, (size_t)K * sizeof *sc);
	int64_t nr = 0;
	for (int64_t i = 0; i < nd; i++) {
		int o = owner_of(m, nodes[i]);
		if (o != m->rank) {
			sc[o]++;
			nr++;
		}
	}
	if ((st = fits_int(nr, "sampling requests")) ||
	    (st = bw_grow(&m->sreq, &m->sreq_cap, (size_t)nr + 1, sizeof *m->sreq, true)) ||
	    (st = bw_grow(&m->spos, &m->spos_cap, (size_t)nr + 1, sizeof *m->spos, true)))
		return st;
	sd[0] = 0;
	for (int p = 1; p < K; p++)
		sd[p] = sd[p - 1] + sc[p - 1];
	for (int p = 0; p < K; p++)
		m->cur[p] = sd[p];
	for (int64_t i = 0; i < nd; i++) {
		int o = owner_of(m, nodes[i]);
		if (o != m->rank) {
			int64_t q = m->cur[o]++;
			m->sreq[q] = nodes[i];
			m->spos[q] = i;
		}
	}
	*nreq = nr;
	return 0;
}

/* The owned frontier nodes expanded here (on the GPU: all at once): row i's rcnt[i] picks
 * at lbuf + roff[i]. */
static int draw_owned(struct bw_dist_mb *m, const int64_t *nodes, int64_t nd, int fan, uint64_t lkey)
{
	int st;
	if (m->gctx) {
		int64_t no = 0;
		if ((st = bw_grow(&m->glid, &m->glid_cap, (size_t)nd + 1, sizeof *m->glid, true)))
			return st;
		for (int64_t i = 0; i < nd; i++)
			if (owner_of(m, nodes[i]) == m->rank)
				m->glid[no++] = nodes[i] - m->first;
		if ((st = draw_rows_gpu(m, m->glid, no, fan, lkey)) ||
		    (st = bw_grow(&m->lbuf, &m->lbuf_cap, (size_t)m->gip[no] + 1, sizeof *m->lbuf, true)))
			return st;
		memcpy(m->lbuf, m->gout, (size_t)m->gip[no] * sizeof *m->lbuf);
		for (int64_t i = 0, j = 0; i < nd; i++)
			if (owner_of(m, nodes[i]) == m->rank) {
				m->rcnt[i] = m->gip[j + 1] - m->gip[j];
				m->roff[i] = m->gip[j++];
				m->rfrom[i] = 0;
			}
		return 0;
	}
	int64_t lu = 0;
	for (int64_t i = 0; i < nd; i++) {
		if (owner_of(m, nodes[i]) != m->rank)
			continue;
		const int64_t lid = nodes[i] - m->first;
		if ((st = bw_grow(&m->lbuf, &m->lbuf_cap, (size_t)(lu + picks(m->ip[lid + 1] - m->ip[lid], fan)) + 1,
				  sizeof *m->lbuf, true)))
			return st;
		m->rcnt[i] = sample_row(m, lid, fan, lkey, m->lbuf + lu);
		m->roff[i] = lu;
		m->rfrom[i] = 0;
		lu += m->rcnt[i];
	}
	return 0;
}

/* The requests of the other ranks: the ids routed to this rank arrive (rreq, counts rc and
 * displacements rd in m->cnt), and each one's row is drawn into rep as [k, k neighbor ids],
 * grouped by the asking rank (counts qs, displacements qd in m->cnt2). */
static int serve(struct bw_dist_mb *m, int fan, uint64_t lkey)
{
	const int K = m->K;
	int *sc = m->cnt, *sd = sc + K, *rc = sd + K, *rd = rc + K;
	int *qs = m->cnt2, *qd = qs + K;
	int st;
	double t0 = bw_comm_now();
	int64_t nrecv;
	if ((st = exchange_counts(m, sc, rc, rd, &nrecv, "train: sampling: counts")))
		return st;
	if ((st = fits_int(nrecv, "sampling requests")) ||
	    (st = bw_grow(&m->rreq, &m->rreq_cap, (size_t)nrecv + 1, sizeof *m->rreq, true)))
		return st;
	if ((st = bw_comm_alltoallv(m->hc, m->sreq, sc, sd, m->rreq, rc, rd, BW_COMM_I64, "train: sampling: ids")))
		return st;
	m->mpi_s += bw_comm_now() - t0;
	for (int p = 0; p < K; p++)
		for (int64_t j = rd[p]; j < rd[p] + rc[p]; j++) {
			const int64_t lid = m->rreq[j] - m->first;
			if (lid < 0 || lid >= m->n_own)
				return bw_err(BURROW_E_RANGE, "train: rank %d asked rank %d to expand node %lld, which it "
							      "does not own",
					      p, m->rank, (long long)m->rreq[j]);
		}
	if (m->gctx) { /* the GPU draws every asked row at once */
		if ((st = bw_grow(&m->glid, &m->glid_cap, (size_t)nrecv + 1, sizeof *m->glid, true)))
			return st;
		for (int64_t j = 0; j < nrecv; j++)
			m->glid[j] = m->rreq[j] - m->first;
		if ((st = draw_rows_gpu(m, m->glid, nrecv, fan, lkey)))
			return st;
	}
	int64_t ru = 0;
	for (int p = 0; p < K; p++) {
		const int64_t r0 = ru;
		for (int64_t j = rd[p]; j < rd[p] + rc[p]; j++) {
			const int64_t lid = m->rreq[j] - m->first;
			const int64_t k = picks(m->ip[lid + 1] - m->ip[lid], fan);
			if ((st = bw_grow(&m->rep, &m->rep_cap, (size_t)(ru + 1 + k), sizeof *m->rep, true)))
				return st;
			if (m->gctx) {
				m->rep[ru] = k;
				memcpy(m->rep + ru + 1, m->gout + m->gip[j], (size_t)k * sizeof *m->rep);
			} else {
				m->rep[ru] = sample_row(m, lid, fan, lkey, m->rep + ru + 1);
			}
			ru += 1 + k;
		}
		if ((st = fits_int(ru, "sampled neighbors")))
			return st;
		qs[p] = (int)(ru - r0);
		qd[p] = (int)r0;
	}
	return 0;
}

/* The replies to this rank's nreq requests (served by serve on their owners) into get: row
 * spos[q]'s picks, rcnt of them at get + roff. Replies come from each owner in the order of
 * the requests sent to it. */
static int collect(struct bw_dist_mb *m, int64_t nreq)
{
	const int K = m->K;
	int *qs = m->cnt2, *qd = qs + K, *gs = qd + K, *gd = gs + K;
	int st;
	double t0 = bw_comm_now();
	int64_t ng;
	if ((st = exchange_counts(m, qs, gs, gd, &ng, "train: sampling: counts")) ||
	    (st = fits_int(ng, "sampled neighbors")) || (st = bw_grow(&m->get, &m->get_cap, (size_t)ng + 1, sizeof *m->get, true)))
		return st;
	if ((st = bw_comm_alltoallv(m->hc, m->rep, qs, qd, m->get, gs, gd, BW_COMM_I64, "train: sampling: neighbors")))
		return st;
	m->mpi_s += bw_comm_now() - t0;
	int64_t g = 0;
	for (int64_t q = 0; q < nreq; q++) {
		const int64_t i = m->spos[q], k = m->get[g];
		if (k < 0 || g + 1 + k > ng)
			return bw_err(BURROW_E_FORMAT, "train: a sampling reply does not match its requests");
		m->rcnt[i] = k;
		m->roff[i] = g + 1;
		m->rfrom[i] = 1;
		g += 1 + k;
	}
	return 0;
}

/* The hop's rows for the sampler: row i's picks (drawn here or received), each row in
 * increasing global id, as a CSR (eip, egid). */
static int lay_out(struct bw_dist_mb *m, int64_t nd, const int64_t **eip, const int64_t **eids)
{
	int64_t *ip = m->eip;
	ip[0] = 0;
	for (int64_t i = 0; i < nd; i++)
		ip[i + 1] = ip[i] + m->rcnt[i];
	const int64_t E = ip[nd];
	int st = bw_grow(&m->egid, &m->egid_cap, (size_t)E + 1, sizeof *m->egid, true);
	if (st)
		return st;
	for (int64_t i = 0; i < nd; i++) {
		const int64_t *src = (m->rfrom[i] ? m->get : m->lbuf) + m->roff[i];
		memcpy(m->egid + ip[i], src, (size_t)m->rcnt[i] * sizeof *src);
		sort_ids(m->egid + ip[i], m->rcnt[i]);
	}
	*eip = ip;
	*eids = m->egid;
	return 0;
}

/* The sampler's expander (sampler_internal.h): block l's rows for the destinations
 * nodes[0, nd), each row's neighbors in increasing global id. Frontier nodes this rank owns
 * are drawn here; the others are sent to their owners, which draw them and send them back.
 * The sampler numbers the sources. Collective: every rank runs every hop. */
static int expand(void *ctx, int l, int fan, uint64_t lkey, const int64_t *nodes, int64_t nd, const int64_t **eip,
		  const int64_t **eids)
{
	struct bw_dist_mb *m = ctx;
	int64_t nreq;
	int st;
	(void)l;
	if ((st = hop_room(m, nd, fan)) || (st = route(m, nodes, nd, &nreq)) ||
	    (st = draw_owned(m, nodes, nd, fan, lkey)) || (st = serve(m, fan, lkey)) || (st = collect(m, nreq)))
		return st;
	return lay_out(m, nd, eip, eids);
}

/* The key of a batch's draws (the sampler keys layer l with bw_key(key, l)). */
static uint64_t batch_key(uint64_t seed, int64_t epoch, int64_t step)
{
	return bw_key(bw_key(bw_key(seed, KEY_DRAW), (uint64_t)epoch), (uint64_t)step);
}

uint64_t bw_dist_mb_draw_key(uint64_t seed, int64_t epoch, int64_t step, int l)
{
	return bw_key(batch_key(seed, epoch, step), (uint64_t)l);
}

/* Sample s's blocks for these seeds (owned, new global ids) with the key of (epoch, step).
 * Collective. */
static int sample(struct bw_dist_mb *m, bw_sampled *s, const int64_t *seeds, int64_t n, int64_t epoch, int64_t step)
{
	for (int64_t i = 0; !m->seq_off && i < n; i++) {
		const int64_t lid = seeds[i] - m->first;
		if (lid < 0 || lid >= m->n_own)
			return bw_err(BURROW_E_RANGE, "train: seed %lld is not owned by rank %d", (long long)seeds[i], m->rank);
	}
	/* the sampler's layer steps with this rank's expander: the numbering is the sampler's */
	const bw_expander ex = {.expand = expand, .ctx = m, .num_nodes = m->offsets[m->K]};
	return bw_sample_batch_ex(&m->sctx, &ex, seeds, n, m->L, m->fanout, batch_key(m->seed, epoch, step), s);
}

/* The producer (sampler/producer.h): batch k of the sequence (m->seq), sampled in the
 * caller's thread. Collective. */
static int mb_next(void *ctx, int64_t k, burrow_batch **out)
{
	struct bw_dist_mb *m = ctx;
	int i = 0;
	while (i < MB_INFLIGHT && m->smp_held[i])
		i++;
	if (i == MB_INFLIGHT)
		return bw_err(BURROW_E_INVAL, "train: more than %d sampled batches held", MB_INFLIGHT);
	int64_t s0 = BW_MIN(k * m->seq_batch, m->seq_n), n = BW_MIN(m->seq_batch, m->seq_n - s0);
	if (m->seq_off) {
		s0 = m->seq_off[k];
		n = m->seq_off[k + 1] - s0;
	}
	const double a = bw_comm_now();
	int st = sample(m, &m->smp[i], m->seq + s0, n, m->seq_epoch, m->seq_step0 + k);
	m->sample_s += bw_comm_now() - a;
	if (st)
		return st;
	m->smp_held[i] = true;
	*out = &m->smp[i].pub;
	return 0;
}

static void mb_release(void *ctx, burrow_batch *b)
{
	struct bw_dist_mb *m = ctx;
	for (int i = 0; i < MB_INFLIGHT; i++)
		if (b == &m->smp[i].pub)
			m->smp_held[i] = false;
}

/* The sequence the loader runs next: batches of `batch` seeds of seq[0, n) in order, batch
 * k drawn with the key of (epoch, step0 + k). */
static void seq_set(struct bw_dist_mb *m, const int64_t *seq, int64_t n, int64_t batch, int64_t epoch, int64_t step0)
{
	m->seq = seq;
	m->seq_n = n;
	m->seq_batch = batch;
	m->seq_epoch = epoch;
	m->seq_step0 = step0;
	m->seq_off = NULL;
}

/* ------------------------------------------------------------ fetching input rows */

static int fetch_poll(mb_fetch *f);

/* Sort b's n input rows: those this rank holds (owned and halo nodes) are read by the
 * store at their store rows f->lids, with their GCN norms set here; the others are routed
 * to their owners (m->sreq grouped by owner, counts and displacements in m->cnt), to land
 * at f->fetch_pos. */
static int fetch_route(struct bw_dist_mb *m, mb_fetch *f, const int64_t *gid, int64_t n)
{
	const int K = m->K;
	int *sc = m->cnt, *sd = sc + K;
	int st;
	if ((st = bw_grow(&f->lids, &f->lids_cap, (size_t)n + 1, sizeof *f->lids, true)) ||
	    (st = bw_grow(&f->fetch_pos, &f->fetch_cap, (size_t)n + 1, sizeof *f->fetch_pos, true)) ||
	    (st = bw_grow(&m->sreq, &m->sreq_cap, (size_t)n + 1, sizeof *m->sreq, true)))
		return st;
	memset(sc, 0, (size_t)K * sizeof *sc);
	int64_t nf = 0;
	for (int64_t i = 0; i < n; i++) {
		const int64_t g = gid[i];
		int64_t lid = g - m->first, h;
		if (lid < 0 || lid >= m->n_own)
			lid = (h = halo_index(m, g)) >= 0 ? m->n_own + h : -1;
		if (lid < 0) {
			sc[owner_of(m, g)]++;
			nf++;
		} else if (m->gnorm) {
			f->dst.norm[i] = m->gnorm[lid];
		}
		f->lids[i] = lid;
	}
	if (n > 0 && m->n_own + m->n_halo == 0)
		return bw_err(BURROW_E_INVAL, "train: rank %d holds no rows but samples a batch", m->rank);
	sd[0] = 0;
	for (int p = 1; p < K; p++)
		sd[p] = sd[p - 1] + sc[p - 1];
	for (int p = 0; p < K; p++)
		m->cur[p] = sd[p];
	for (int64_t i = 0; i < n; i++)
		if (f->lids[i] < 0) {
			int64_t q = m->cur[owner_of(m, gid[i])]++;
			m->sreq[q] = gid[i];
			f->fetch_pos[q] = i;
			f->lids[i] = 0; /* a row to read in its place: the fetched one overwrites it */
		}
	f->n_fetch = nf;
	return 0;
}

/* The ids go out to their owners; the rows (and GCN norms) other ranks ask of this rank
 * are read into f->srows (f->snorm). Collective. */
static int fetch_serve(struct bw_dist_mb *m, mb_fetch *f)
{
	const int K = m->K;
	const int64_t D = m->D, nf = f->n_fetch;
	int *sc = m->cnt, *sd = sc + K, *rc = sd + K, *rd = rc + K;
	int st;
	double t0 = bw_comm_now();
	int64_t ns;
	if ((st = exchange_counts(m, sc, rc, rd, &ns, "train: fetch: counts")))
		return st;
	if ((st = fits_int(ns * D, "feature rows")) || (st = fits_int(nf * D, "feature rows")) ||
	    (st = bw_grow(&f->sids, &f->sids_cap, (size_t)ns + 1, sizeof *f->sids, true)))
		return st;
	if ((st = bw_comm_alltoallv(m->hc, m->sreq, sc, sd, f->sids, rc, rd, BW_COMM_I64, "train: fetch: ids")))
		return st;
	m->mpi_s += bw_comm_now() - t0;
	f->n_serve = ns;
	for (int64_t j = 0; j < ns; j++) {
		const int64_t lid = f->sids[j] - m->first;
		if (lid < 0 || lid >= m->n_own)
			return bw_err(BURROW_E_RANGE, "train: rank %d was asked for the row of node %lld, which it does not own",
				      m->rank, (long long)f->sids[j]);
		f->sids[j] = lid;
	}
	if ((st = bw_grow(&f->srows, &f->srows_cap, (size_t)(ns * D) + 1, sizeof *f->srows, true)) ||
	    (st = bw_grow(&f->rrows, &f->rrows_cap, (size_t)(nf * D) + 1, sizeof *f->rrows, true)) ||
	    (st = bw_grow(&f->snorm, &f->snorm_cap, (size_t)ns + 1, sizeof *f->snorm, true)) ||
	    (st = bw_grow(&f->rnorm, &f->rnorm_cap, (size_t)nf + 1, sizeof *f->rnorm, true)))
		return st;
	if (ns > 0 && (st = burrow_store_gather(m->store, f->sids, (size_t)ns, f->srows)))
		return st;
	for (int64_t j = 0; m->gnorm && j < ns; j++)
		f->snorm[j] = m->gnorm[f->sids[j]];
	return 0;
}

/* The rows go back: this rank sends rc[p] rows to p and receives sc[p] from it, and the
 * GCN norms with them; non-blocking. Collective. */
static int fetch_exchange(struct bw_dist_mb *m, mb_fetch *f)
{
	const int K = m->K;
	const int64_t n = f->n, nf = f->n_fetch, ns = f->n_serve, D = m->D;
	const int *sc = m->cnt, *sd = sc + K, *rc = sd + K, *rd = rc + K;
	int *c = f->cnt, *fl = f->cnt_f;
	int st;
	for (int p = 0; p < K; p++) {
		c[p] = rc[p];
		c[K + p] = rd[p];
		c[2 * K + p] = sc[p];
		c[3 * K + p] = sd[p];
		for (int q = 0; q < 4; q++)
			fl[q * K + p] = (int)((int64_t)c[q * K + p] * D);
	}
	f->nreq = 0;
	const float *send = f->srows;
	float *recv = f->rrows;
	if (m->on_dev) { /* the served rows go up; the fetched ones land after this rank's own */
		const bw_device *dev = m->comm->dev;
		const size_t row = (size_t)D * sizeof(float);
		if ((st = bw_dbuf_reserve(&f->xs_dev, dev, (size_t)(n + nf) * row + 1)) ||
		    (st = bw_dbuf_reserve(&f->srows_dev, dev, (size_t)ns * row + 1)) ||
		    (ns > 0 && (st = bw_device_upload(dev, f->srows_dev.ptr, f->srows, (size_t)ns * row))))
			return st;
		send = f->srows_dev.ptr;
		recv = (float *)f->xs_dev.ptr + n * D;
	}
	f->post_t = bw_comm_now();
	f->done_t = 0;
	if ((st = bw_comm_ialltoallv(m->comm, send, fl, fl + K, recv, fl + 2 * K, fl + 3 * K, BW_COMM_F32,
				     &f->req[f->nreq++], "train: fetch: rows")))
		return st;
	if (m->gnorm)
		if ((st = bw_comm_ialltoallv(m->hc, f->snorm, c, c + K, f->rnorm, c + 2 * K, c + 3 * K, BW_COMM_F32,
					     &f->req[f->nreq++], "train: fetch: norms")))
			return st;
	return fetch_poll(f);
}

/* The source's submit (bw_rows): start the fetch of the n input rows gid into dst: submit
 * the store's read of the rows this rank holds into dst->x, send the ids of the others to
 * their owners, read the rows they ask of this rank and post the exchange of rows (and GCN
 * norms). Collective. */
static int fetch_submit(bw_rows *r, const int64_t *gid, int64_t n, const bw_rows_dst *dst, void **ticket)
{
	struct bw_dist_mb *m = r->ctx;
	mb_fetch *f = NULL;
	for (int i = 0; i < MB_INFLIGHT && !f; i++)
		if (!m->fetch[i].busy)
			f = &m->fetch[i];
	if (!f)
		return bw_err(BURROW_E_INVAL, "train: fetch: more than %d in flight", MB_INFLIGHT);
	if ((m->gnorm && !dst->norm) || (m->on_dev && !dst->dev_x))
		return bw_err(BURROW_E_INVAL, "train: fetch: no room for the norms or the device rows");
	const double a = bw_comm_now();
	f->dst = *dst;
	f->n = n;
	f->ticket = NULL;
	f->nreq = 0;
	int st = fetch_route(m, f, gid, n);
	if (!st && n > 0)
		st = burrow_store_submit(m->store, f->lids, (size_t)n, dst->x, &f->ticket);
	if (!st)
		st = fetch_serve(m, f);
	if (!st)
		st = fetch_exchange(m, f);
	m->sample_s += bw_comm_now() - a;
	m->last_fetched = f->n_fetch;
	f->busy = st == 0 || f->ticket || f->nreq > 0; /* what was started completes at close */
	if (!st)
		*ticket = f;
	return st;
}

/* Test, or wait for, each of f's requests on its own (the rows and the norms may travel on
 * two communicators: the device's and its host side). */
static int reqs_test(mb_fetch *f, int *done)
{
	*done = 1;
	for (int i = 0; i < f->nreq; i++) {
		int fl = 1, st = bw_comm_test(&f->req[i], 1, &fl, "train: fetch: testing");
		if (st)
			return st;
		*done &= fl;
	}
	return 0;
}

static int reqs_wait(mb_fetch *f, const char *what)
{
	int st = 0;
	for (int i = 0; i < f->nreq; i++) {
		int rc = bw_comm_wait(&f->req[i], 1, what);
		st = st ? st : rc;
	}
	return st;
}

/* Drive f's exchange without blocking; note when it completed. */
static int fetch_poll(mb_fetch *f)
{
	if (f->nreq == 0 || f->done_t > 0)
		return 0;
	int flag = 0;
	int st = reqs_test(f, &flag);
	if (st)
		return st;
	if (flag) {
		f->done_t = bw_comm_now();
		f->nreq = 0;
	}
	return 0;
}

/* Complete f's fetch: the store's reads, then the rows from the owners over them (on_dev,
 * assemble puts them in place) and their GCN norms. */
static int fetch_finish(struct bw_dist_mb *m, mb_fetch *f)
{
	double t0 = bw_comm_now();
	int st = 0;
	if (f->ticket) {
		st = burrow_store_wait(m->store, f->ticket);
		f->ticket = NULL;
	}
	double t1 = bw_comm_now();
	m->io_wait_s += t1 - t0;
	if (f->nreq > 0) { /* not seen complete yet: the wait is exposed */
		int rc = reqs_wait(f, "train: fetch: waiting");
		f->nreq = 0;
		if (rc && !st)
			st = rc;
		f->done_t = bw_comm_now();
		m->fetch_wait_s += f->done_t - t1;
	}
	m->fetch_comm_s += f->done_t - f->post_t;
	if (st)
		return st;
	for (int64_t k = 0; k < f->n_fetch; k++) {
		const int64_t i = f->fetch_pos[k];
		if (!m->on_dev) /* on a device the rows are put in place by assemble() */
			memcpy(f->dst.x + i * m->D, f->rrows + k * m->D, (size_t)m->D * sizeof *f->dst.x);
		if (m->gnorm)
			f->dst.norm[i] = f->rnorm[k];
	}
	return 0;
}

/* On a device (on_dev): f's input rows into dst.dev_x there: this rank's own rows (read by
 * the store into dst.x, their fetched places holding stand-ins) go up in front of the
 * fetched rows in xs_dev, and a sum over one edge per row, i <- i or i <- n + k for the k-th
 * fetched row, gathers them in batch order on the compute stream (a copy: one term per row). */
static int assemble(struct bw_dist_mb *m, mb_fetch *f)
{
	const bw_device *dev = m->be->dev;
	const int64_t n = f->n, nf = f->n_fetch, D = m->D;
	int st;
	if ((st = bw_grow(&f->scat_ip, &f->scat_ip_cap, (size_t)n + 1, sizeof *f->scat_ip, true)) ||
	    (st = bw_grow(&f->scat_ind, &f->scat_ind_cap, (size_t)n + 1, sizeof *f->scat_ind, true)) ||
	    (st = fits_int(n + nf, "input rows")))
		return st;
	for (int64_t i = 0; i <= n; i++)
		f->scat_ip[i] = i;
	for (int64_t i = 0; i < n; i++)
		f->scat_ind[i] = (int32_t)i;
	for (int64_t k = 0; k < nf; k++)
		f->scat_ind[f->fetch_pos[k]] = (int32_t)(n + k);
	bw_block_reuse(&f->scat, n, n + nf, f->scat_ip, f->scat_ind);
	const bw_tensor src = bw_tensor_view(dev, f->xs_dev.ptr, n + nf, D);
	bw_tensor x = bw_tensor_view(dev, f->dst.dev_x, n, D);
	if ((n > 0 && (st = bw_device_upload(dev, f->xs_dev.ptr, f->dst.x, (size_t)(n * D) * sizeof(float)))) ||
	    (st = bw_block_prepare(&f->scat, false, false)) || (st = bw_block_upload(&f->scat, dev)))
		return st;
	return bw_aggregate(m->be, &f->scat, BW_AGG_SUM, &src, 0, -1, &x);
}

/* The source's wait (bw_rows): the fetch complete, its rows and norms in place. */
static int fetch_wait(bw_rows *r, void *ticket)
{
	struct bw_dist_mb *m = r->ctx;
	mb_fetch *f = ticket;
	int st = fetch_finish(m, f);
	if (!st && m->on_dev && f->n > 0)
		st = assemble(m, f);
	f->busy = false;
	return st;
}

/* The source's poll (bw_rows): drive the exchange of a fetch loaded ahead. */
static int fetch_drive(bw_rows *r, void *ticket)
{
	(void)r;
	return fetch_poll(ticket);
}

/* The source's gather: the fetch is collective and runs through the loader only. */
static int fetch_gather(bw_rows *r, const int64_t *ids, int64_t n, float *out)
{
	(void)r, (void)ids, (void)n, (void)out;
	return bw_err(BURROW_E_UNSUPPORTED, "train: the remote fetch is submitted by the loader (collective)");
}

/* Every fetch not waited for completes (what every rank posted), and its arrays go. */
static void fetch_free(struct bw_dist_mb *m, mb_fetch *f)
{
	if (f->ticket)
		burrow_store_wait(m->store, f->ticket);
	if (f->nreq > 0) /* a fetch every rank posted: it completes */
		reqs_wait(f, "train: fetch: closing");
	bw_block_release(&f->scat);
	bw_dbuf_free(&f->xs_dev);
	bw_dbuf_free(&f->srows_dev);
	void *bufs[] = {f->scat_ip, f->scat_ind, f->lids, f->fetch_pos, f->rrows, f->rnorm,
			f->sids,    f->srows,    f->snorm, f->cnt,   f->cnt_f};
	for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
		bw_free(bufs[i]);
}

bool bw_dist_mb_on_device(const burrow_dist *d) { return d->mb && d->mb->on_dev; }

/* Batch lb's sparse copy of its input rows, when layer 0 multiplies them sparse: built from
 * its dense rows (fetched and assembled by now) into m->x_sp, which x then carries (node
 * training's steps and link training's, bw_dist_mb_run). */
static int sparse_x(burrow_dist *d, struct bw_dist_mb *m, bw_loaded *lb)
{
	if (!m->sparse || lb->b.x.rows == 0)
		return 0;
	bw_tensor *x = &lb->b.x;
	const int st = bw_sparse_update(&m->x_sp, x->data, x->rows, x->cols, d->threads);
	x->sp = st ? NULL : &m->x_sp;
	return st;
}

/* The compute stream's work is done (the communicator's own stream reads what it wrote). */
static int compute_done(burrow_dist *d)
{
	return d->mb->on_dev ? bw_stream_sync(d->be.dev, d->be.stream) : 0;
}

/* ------------------------------------------------------------ steps */

/* bw_model_backward's loop with each layer's gradients all-reduced (posted into gb) as soon as
 * its backward is done, travelling while the layers below run backward. */
static int backward_bucketed(burrow_dist *d, const bw_batch *bb, bw_tensor *glogits, bw_grad_buckets *gb)
{
	bw_model *md = d->model;
	bw_tensor *gh = glogits;
	for (int l = md->cfg.layers - 1; l >= 0; l--) {
		bw_tensor *gx = l > 0 ? &md->g[l % 2] : NULL;
		int st = bw_model_layer_backward(&d->be, md, l, bb->blocks[l], l == 0 ? &bb->x : bw_model_output(md, l - 1),
						 gh, gx);
		if (!st)
			st = compute_done(d);
		if (!st)
			st = bw_grad_buckets_post(gb, md, l, d->mb->comm);
		if (st)
			return st;
		gh = gx;
	}
	return 0;
}

/* A rank without work posts zero gradients in the same buckets, in the same order. */
static int zero_bucketed(burrow_dist *d, bw_grad_buckets *gb)
{
	int st = bw_model_zero_grads(d->model);
	if (!st)
		st = compute_done(d);
	for (int l = d->model->cfg.layers - 1; !st && l >= 0; l--)
		st = bw_grad_buckets_post(gb, d->model, l, d->mb->comm);
	return st;
}

/* Forward and loss of bb (step k): this rank's summed loss, counted and correct seeds in loc. */
static int forward_loss(burrow_dist *d, bw_batch *bb, int64_t k, double loc[3])
{
	struct bw_dist_mb *m = d->mb;
	const bw_tensor *logits = NULL;
	bw_loss ls;
	int st;
	bb->epoch = (uint64_t)d->epoch;
	bb->index = (uint64_t)(k * m->K + m->rank); /* distinct dropout masks on every rank */
	if ((st = bw_model_forward(&d->be, d->model, bb, true, d->o.train.seed, &logits)) ||
	    (st = bw_tensor_reshape(&m->glogits, d->be.dev, logits->rows, logits->cols)) ||
	    (st = bw_nll_loss(&d->be, logits, bb->labels, NULL, 0, &m->glogits, m->loss.ptr)) ||
	    (st = bw_loss_read(&d->be, m->loss.ptr, &ls)))
		return st;
	loc[0] = ls.loss * (double)ls.counted;
	loc[1] = (double)ls.counted;
	loc[2] = (double)ls.correct;
	return 0;
}

/* One optimizer step on the loaded batch lb (step k), joined by every rank; a rank without
 * seeds joins the all-reduces with zero gradients. The exchange of the batch loaded ahead
 * (whose fetch is in flight) is driven between the phases. */
static int step(burrow_dist *d, bw_loaded *lb, int64_t k, double *loss, double *counted, double *correct)
{
	struct bw_dist_mb *m = d->mb;
	double loc[3] = {0, 0, 0}, all[3];
	const bool work = lb->sb->num_seeds > 0;
	/* --grad-overlap: a non-blocking all-reduce per layer, in place (host-memory gradients,
	 * or a communicator on the model's device) */
	const bool bucketed = d->o.grad_overlap && (d->be.dev->host_memory || m->on_dev);
	bw_grad_buckets gb;
	int st = 0;
	double a = bw_comm_now();
	bw_grad_buckets_init(&gb);
	if ((work && ((st = sparse_x(d, m, lb)) || (st = forward_loss(d, &lb->b, k, loc)))) ||
	    (st = bw_loader_poll(m->ld)))
		goto out;
	m->compute_s += bw_comm_now() - a;
	/* the step's loss is the mean over every rank's seeds: weigh this rank's mean */
	a = bw_comm_now();
	st = bw_comm_allreduce(m->hc, loc, all, 3, BW_COMM_F64, BW_COMM_SUM, "train: all-reduce (loss)");
	m->reduce_s += bw_comm_now() - a;
	if (st)
		goto out;
	*loss = all[1] > 0 ? all[0] / all[1] : 0;
	*counted = all[1];
	*correct = all[2];
	if (!isfinite(*loss)) {
		st = bw_err(BURROW_E_RANGE, "train: loss is %s at epoch %d, step %lld; stopped before the update",
			    isnan(*loss) ? "NaN" : "infinite", d->epoch + 1, (long long)k + 1);
		goto out;
	}
	a = bw_comm_now();
	if (work && loc[1] > 0) {
		if ((st = bw_scale(&d->be, (float)(loc[1] / all[1]), &m->glogits)) ||
		    (st = bucketed ? backward_bucketed(d, &lb->b, &m->glogits, &gb)
				   : bw_model_backward(&d->be, d->model, &lb->b, &m->glogits)))
			goto out;
	} else if ((st = bucketed ? zero_bucketed(d, &gb) : bw_model_zero_grads(d->model))) {
		goto out;
	}
	if ((st = bw_loader_poll(m->ld)))
		goto out;
	m->compute_s += bw_comm_now() - a;
	a = bw_comm_now();
	if (bucketed)
		st = bw_grad_buckets_wait(&gb);
	else if (m->on_dev && !(st = compute_done(d))) /* in place on the device */
		st = bw_comm_allreduce(m->comm, NULL, d->model->grads, d->model->num_params, BW_COMM_F32, BW_COMM_SUM,
				       "train: all-reduce (gradients)");
	else if (!m->on_dev)
		st = bw_dist_allreduce_grads(d->model, m->comm, &m->stage);
	m->reduce_s += bw_comm_now() - a;
	if (st)
		goto out;
	a = bw_comm_now();
	st = bw_optim_step(&d->be, d->optim, d->model->params, d->model->grads);
	m->compute_s += bw_comm_now() - a;
out:
	bw_grad_buckets_wait(&gb); /* what was posted completes on every rank (none left on success) */
	return st;
}

int bw_dist_mb_load(burrow_dist *d, const int64_t *seeds, int64_t n, int64_t epoch, int64_t step_index,
		    bw_mb_view *out)
{
	struct bw_dist_mb *m = d->mb;
	memset(out, 0, sizeof *out);
	if (!m)
		return bw_err(BURROW_E_INVAL, "train: not in mini-batch mode");
	bw_loader_stop(m->ld); /* the last call's batch goes back */
	seq_set(m, seeds, n, BW_MAX(n, 1), epoch, step_index);
	bw_loaded lb;
	int st = bw_loader_start(m->ld, &m->prod, &m->rows, 1);
	if (!st)
		st = bw_loader_next(m->ld, &lb);
	if (st)
		return st;
	/* what the model reads, for the caller, once the compute stream put it there */
	const int64_t nx = lb.sb->num_input * m->D;
	if ((st = bw_grow(&m->xhost, &m->xhost_cap, (size_t)nx + 1, sizeof *m->xhost, false)) ||
	    (st = bw_stream_sync(d->be.dev, d->be.stream)) ||
	    (nx > 0 && (st = bw_device_download(d->be.dev, m->xhost, lb.b.x.data, (size_t)nx * sizeof(float)))))
		return st;
	out->sb = lb.sb;
	out->x = m->xhost;
	out->norm = m->gnorm ? lb.b.blocks[0]->src_norm : NULL;
	out->n_fetch = m->last_fetched;
	return 0;
}

/* The epoch's steps, one per batch the loader hands out (batch k+1 sampled and its rows in
 * flight while k computes, with overlap). */
static int epoch_steps(burrow_dist *d, int64_t steps, double *loss_sum, int64_t *lossy, double *counted,
		       double *correct)
{
	struct bw_dist_mb *m = d->mb;
	for (int64_t k = 0; k < steps; k++) {
		bw_loaded lb;
		double lo, c, r2;
		int st;
		if ((st = bw_loader_next(m->ld, &lb)) || (st = step(d, &lb, k, &lo, &c, &r2)) ||
		    (st = bw_loader_done(m->ld)))
			return st;
		if (c > 0) {
			*loss_sum += lo;
			(*lossy)++;
		}
		*counted += c;
		*correct += r2;
	}
	return 0;
}

int bw_dist_mb_epoch(burrow_dist *d, burrow_epoch_stats *es, burrow_comm_stats *cs)
{
	struct bw_dist_mb *m = d->mb;
	const double t0 = bw_comm_now();
	const int64_t epoch = d->epoch;
	m->sample_s = m->mpi_s = m->fetch_comm_s = m->fetch_wait_s = m->io_wait_s = m->reduce_s = m->compute_s = 0;
	/* this epoch's order of the rank's training nodes */
	memcpy(m->perm, m->train, (size_t)m->ntrain * sizeof *m->perm);
	bw_shuffle(m->perm, m->ntrain, bw_key(bw_key(bw_key(d->o.train.seed, KEY_SHUFFLE), (uint64_t)epoch), (uint64_t)m->rank));
	/* every rank takes as many steps as the rank with the most batches */
	int64_t mine = (m->ntrain + m->batch - 1) / m->batch, steps;
	int st;
	if ((st = bw_comm_allreduce(m->hc, &mine, &steps, 1, BW_COMM_I64, BW_COMM_MAX,
				      "train: all-reduce (steps)")))
		return st;
	if (d->o.train.max_batches > 0 && d->o.train.max_batches < steps)
		steps = d->o.train.max_batches;
	double loss_sum = 0, counted = 0, correct = 0;
	int64_t lossy = 0;
	bw_loader_stop(m->ld); /* a batch bw_dist_mb_load left */
	seq_set(m, m->perm, m->ntrain, m->batch, epoch, 0);
	if (!(st = bw_loader_start(m->ld, &m->prod, &m->rows, steps)))
		st = epoch_steps(d, steps, &loss_sum, &lossy, &counted, &correct);
	bw_loader_stop(m->ld);
	if (st)
		return st;
	d->epoch++;
	if (es) {
		memset(es, 0, sizeof *es);
		es->epoch = d->epoch;
		es->batches = steps;
		es->loss = lossy ? loss_sum / (double)lossy : 0;
		es->train_acc = counted > 0 ? correct / counted : -1;
		es->cache_hit_rate = -1; /* not counted across ranks */
		es->epoch_s = bw_comm_now() - t0;
		es->sample_s = m->sample_s;
		es->io_wait_s = m->io_wait_s;
		es->compute_s = m->compute_s;
	}
	if (cs) {
		cs->comm_s = m->mpi_s + m->fetch_comm_s + m->reduce_s;
		cs->exposed_comm_s = m->mpi_s + m->fetch_wait_s + m->reduce_s;
		cs->progress_s = 0;
	}
	return 0;
}

/* ------------------------------------------------------------ link training's use */

int bw_dist_mb_run(burrow_dist *d, const int64_t *seq, const int64_t *off, int64_t steps, int64_t epoch,
		   bw_mb_step_fn fn, void *ctx)
{
	struct bw_dist_mb *m = d->mb;
	int st;
	m->sample_s = m->mpi_s = m->fetch_comm_s = m->fetch_wait_s = m->io_wait_s = m->reduce_s = m->compute_s = 0;
	bw_loader_stop(m->ld); /* a batch bw_dist_mb_load left */
	seq_set(m, seq, off[steps], 1, epoch, 0);
	m->seq_off = off;
	if (!(st = bw_loader_start(m->ld, &m->prod, &m->rows, steps)))
		for (int64_t k = 0; !st && k < steps; k++) {
			bw_loaded lb;
			if (!(st = bw_loader_next(m->ld, &lb)) && !(st = sparse_x(d, m, &lb)) && !(st = fn(ctx, &lb, k)))
				st = bw_loader_done(m->ld);
		}
	bw_loader_stop(m->ld);
	m->seq_off = NULL;
	return st;
}

int bw_dist_mb_reduce_grads(burrow_dist *d)
{
	struct bw_dist_mb *m = d->mb;
	int st = bw_loader_poll(m->ld);
	if (st)
		return st;
	if (m->on_dev && !(st = compute_done(d))) /* in place on the device */
		return bw_comm_allreduce(m->comm, NULL, d->model->grads, d->model->num_params, BW_COMM_F32, BW_COMM_SUM,
					 "train: all-reduce (gradients)");
	return st ? st : bw_dist_allreduce_grads(d->model, m->comm, &m->stage);
}

/* ------------------------------------------------------------ open and close */

/* The store's cache budget: cache_fraction or cache_bytes of the train options; the auto
 * budget holds every row when that takes at most a quarter of physical memory. */
static size_t cache_budget(const burrow_train_opts *o, size_t full)
{
	if (o->cache_policy == BURROW_CACHE_NONE)
		return 0;
	if (o->cache_fraction >= 0)
		return (size_t)((double)full * BW_MIN(o->cache_fraction, 1.0));
	if (o->cache_bytes >= 0)
		return BW_MIN((size_t)o->cache_bytes, full);
	const size_t mem = bw_mem_total(); /* the machine's, or the cgroup's when smaller */
	const double cap = mem != SIZE_MAX ? (double)mem / 4 : (double)full;
	return (double)full <= cap ? full : (size_t)cap;
}

static int open_store(burrow_dist *d, struct bw_dist_mb *m)
{
	const burrow_dataset *ds = burrow_part_dataset(d->part);
	const char *path = burrow_dataset_features_path(ds);
	burrow_store_opts so;
	burrow_store_defaults(&so);
	so.engine = d->o.train.store_engine;
	so.out_dtype = BURROW_DTYPE_F32;
	int st = burrow_store_open(&m->store, path, &so);
	if (st)
		return st;
	const burrow_store_info *in = burrow_store_get_info(m->store);
	if (in->num_rows != d->n_loc || in->dim != m->D)
		return bw_err(BURROW_E_FORMAT, "%s: shape [%lld, %lld], expected [%lld, %lld] (owned + halo rows)", path,
			      (long long)in->num_rows, (long long)in->dim, (long long)d->n_loc, (long long)m->D);
	const size_t budget = cache_budget(&d->o.train, bw_cache_bytes_for((size_t)d->n_loc, in->cache_row_bytes));
	return budget > 0 ? burrow_store_cache_clock(m->store, budget) : 0;
}

/* --sampler-device: the draws on a GPU (cuda, cuda:N; auto: the model's device when it is
 * one) with the part's CSR there, else here. Collective only in that every rank resolves
 * the same option (a rank whose GPU cannot take it fails its open). */
static int open_gpu_draws(burrow_dist *d, struct bw_dist_mb *m, const burrow_csr *g)
{
	const char *asked = d->o.train.sampler_device;
	int kind = BW_BACKEND_CPU, index = 0, st;
	if (asked && strcmp(asked, "auto")) {
		if ((st = bw_device_parse(asked, &kind, &index)))
			return st;
		if (kind != BW_BACKEND_CPU && (st = burrow_device_check(asked)) < 0) {
			char why[256];
			snprintf(why, sizeof why, "%s", burrow_last_error());
			return bw_err(st, "train: sampler device: %s", why);
		}
	} else if (d->be.kind != BW_BACKEND_CPU) {
		kind = d->be.kind;
		index = d->be.dev->index;
	}
	if (kind == BW_BACKEND_CPU) {
		snprintf(m->sampler_dev, sizeof m->sampler_dev, "cpu");
		return 0;
	}
	snprintf(m->sampler_dev, sizeof m->sampler_dev, "cuda:%d", index);
	if ((st = bw_cuda_csr_open(&m->gcsr, g, index, 0)) || (st = bw_cuda_sample_ctx_open(&m->gctx, m->gcsr)))
		return st;
	return 0;
}

const char *burrow_dist_sampler_device(const burrow_dist *d) { return d->mb ? d->mb->sampler_dev : "cpu"; }

/* The batch loader of the steps, in line (the sampler and the fetch are collective: they run
 * on the caller's thread, in the same order on every rank), one batch ahead with overlap;
 * its producer is this rank's sampler and its source of rows the fetch. */
static int open_loader(burrow_dist *d, struct bw_dist_mb *m)
{
	const int model = d->o.train.model;
	const bw_loader_cfg lc = {
		.dev = d->be.dev,
		.compute = d->be.stream,
		.depth = m->overlap ? 1 : 0,
		.thread = false,
		.num_layers = m->L,
		.dim = m->D,
		.labels = d->labels,
		.label_base = m->first, /* the rank's labels are by local id */
		.blocks = model != BURROW_MODEL_MLP,
		.transpose = true,
		.gcn = model == BURROW_MODEL_GCN,
	};
	m->seed = d->o.train.seed;
	m->be = &d->be;
	m->prod = (bw_producer){.next = mb_next, .release = mb_release, .ctx = m};
	m->rows = (bw_rows){
		.num_rows = m->offsets[m->K],
		.dim = m->D,
		.gather = fetch_gather,
		.submit = fetch_submit,
		.wait = fetch_wait,
		.poll = fetch_drive,
		.norms = m->gnorm != NULL, /* other ranks' nodes' norms come with their rows */
		.on_device = m->on_dev,
		.ctx = m,
		.threads = 1,
	};
	if (d->o.train.normalize_features) { /* each fetched row divided by its sum */
		m->fetch_rows = m->rows;
		int st = bw_rows_normalized(&m->rows, &m->fetch_rows);
		if (st)
			return st;
	}
	return bw_loader_open(&m->ld, &lc);
}

int bw_dist_mb_open(burrow_dist *d)
{
	const burrow_train_opts *o = &d->o.train;
	if (o->batch_size < 1 || o->max_batches < 0 || o->prefetch < 0)
		return bw_err(BURROW_E_INVAL, "train: batch size must be positive, max batches and prefetch >= 0");
	for (int l = 0; l < o->layers; l++)
		if (o->fanout[l] < -1)
			return bw_err(BURROW_E_INVAL, "train: fanout %d of layer %d: want -1 (all), 0 (default) or > 0",
				      o->fanout[l], l);
	struct bw_dist_mb *m = bw_calloc(1, sizeof *m);
	if (!m)
		return BURROW_E_NOMEM;
	d->mb = m; /* from here burrow_dist_close frees it */
	int st = bw_comm_dup(&m->comm, d->comm);
	if (st)
		return st;
	m->hc = m->comm->host;
	/* an MPI communicator moves host buffers: the rows go up with the batch (on a GPU, from
	 * host memory); staged and NCCL move buffers of their device, which must be the model's */
	m->on_dev = bw_comm_kind(m->comm) != BURROW_COMM_MPI;
	if (m->on_dev && m->comm->dev != d->be.dev)
		return bw_err(BURROW_E_UNSUPPORTED, "train: mini-batch: the communicator moves buffers of %s, but the "
						    "model computes on %s",
			      m->comm->dev->name, d->be.dev->name);
	m->K = d->K;
	m->rank = d->rank;
	m->D = d->model->cfg.in_dim;
	m->L = o->layers;
	m->batch = o->batch_size;
	m->overlap = o->prefetch > 0;
	for (int l = 0; l < m->L; l++)
		m->fanout[l] = burrow_train_fanout(o, l);
	m->offsets = burrow_parts_get_info(d->parts)->node_offsets;
	m->first = d->pi->first_id;
	m->n_own = d->n_own;
	m->n_halo = d->n_halo;
	m->halo_ids = d->pi->halo_ids;
	m->sfirst = m->first;
	m->sn_own = m->n_own;
	m->shalo = m->halo_ids;
	const burrow_csr *g = burrow_dataset_graph(burrow_part_dataset(d->part));
	m->ip = g->indptr;
	m->ind = g->indices;
	m->gnorm = o->model == BURROW_MODEL_GCN ? d->norm : NULL;
	if (o->model == BURROW_MODEL_GCN && !d->norm)
		return bw_err(BURROW_E_INVAL, "train: GCN norms missing");
	m->glogits = bw_tensor_empty(d->be.dev);
	if ((st = open_store(d, m)) || (st = bw_dbuf_reserve(&m->loss, d->be.dev, sizeof(bw_loss))))
		return st;
	m->ntrain = d->split_n[BURROW_SPLIT_TRAIN];
	m->train = bw_malloc((size_t)(m->ntrain + 1) * sizeof *m->train);
	m->perm = bw_malloc((size_t)(m->ntrain + 1) * sizeof *m->perm);
	m->cnt = bw_calloc(4 * (size_t)m->K, sizeof *m->cnt);
	m->cnt2 = bw_calloc(4 * (size_t)m->K, sizeof *m->cnt2);
	m->cur = bw_calloc((size_t)m->K, sizeof *m->cur);
	if (!m->train || !m->perm || !m->cnt || !m->cnt2 || !m->cur)
		return BURROW_E_NOMEM;
	if ((st = bw_sample_ctx_init(&m->sctx, d->threads, 0)) || /* it numbers; the expander draws */
	    (st = open_gpu_draws(d, m, g)))
		return st;
	for (int64_t i = 0; i < m->ntrain; i++)
		m->train[i] = m->first + d->split[BURROW_SPLIT_TRAIN][i];
	for (int i = 0; i < MB_INFLIGHT; i++) {
		m->fetch[i].cnt = bw_calloc(4 * (size_t)m->K, sizeof *m->fetch[i].cnt);
		m->fetch[i].cnt_f = bw_calloc(4 * (size_t)m->K, sizeof *m->fetch[i].cnt_f);
		if (!m->fetch[i].cnt || !m->fetch[i].cnt_f)
			return BURROW_E_NOMEM;
	}
	m->sparse = d->x0.sp != NULL; /* dist.c's sparse_x0 decided, alike on every rank */
	return open_loader(d, m);
}

void bw_dist_mb_close(struct bw_dist_mb *m)
{
	if (!m)
		return;
	bw_loader_close(m->ld); /* first: it hands its batches back and waits for their fetches */
	for (int i = 0; i < MB_INFLIGHT; i++) {
		fetch_free(m, &m->fetch[i]);
		bw_sampled_free_arrays(&m->smp[i]);
	}
	bw_free(m->xhost);
	bw_sparse_free(&m->x_sp);
	if (!m->side)
		burrow_store_close(m->store);
	bw_free(m->train);
	bw_free(m->perm);
	bw_sample_ctx_free(&m->sctx);
	bw_cuda_sample_ctx_close(m->gctx);
	bw_cuda_csr_close(m->gcsr);
	int64_t *bufs[] = {m->lbuf, m->rcnt, m->roff, m->sreq, m->spos, m->rreq, m->rep,  m->get,  m->egid,
			   m->eip,  m->ptab, m->cur,  m->glid, m->gkey, m->gip,  m->gout};
	for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
		bw_free(bufs[i]);
	bw_free(m->rfrom);
	bw_free(m->cnt);
	bw_free(m->cnt2);
	bw_tensor_free(&m->glogits);
	bw_dbuf_free(&m->loss);
	bw_stage_free(&m->stage);
	if (!m->side)
		bw_comm_close(m->comm);
	bw_free(m);
}

/* ------------------------------------------------------------ typed sides (dist_hmb.c) */

int bw_mb_side_open(struct bw_dist_mb **out, const bw_mb_side_cfg *c)
{
	*out = NULL;
	struct bw_dist_mb *m = bw_calloc(1, sizeof *m);
	if (!m)
		return BURROW_E_NOMEM;
	m->side = true;
	m->comm = m->hc = c->comm;
	m->K = c->K;
	m->rank = c->rank;
	m->offsets = c->offsets;
	m->first = c->first;
	m->n_own = c->n_own;
	m->n_halo = c->n_halo;
	m->halo_ids = c->halo_ids;
	m->sfirst = c->sfirst;
	m->sn_own = c->sn_own;
	m->shalo = c->shalo;
	m->ip = c->ip;
	m->ind = c->ind;
	m->store = c->store;
	m->D = c->dim;
	m->glogits = bw_tensor_empty(NULL);
	snprintf(m->sampler_dev, sizeof m->sampler_dev, "cpu");
	m->cnt = bw_calloc(4 * (size_t)m->K, sizeof *m->cnt);
	m->cnt2 = bw_calloc(4 * (size_t)m->K, sizeof *m->cnt2);
	m->cur = bw_calloc((size_t)m->K, sizeof *m->cur);
	int st = m->cnt && m->cnt2 && m->cur ? 0 : BURROW_E_NOMEM;
	for (int i = 0; !st && i < MB_INFLIGHT; i++) {
		m->fetch[i].cnt = bw_calloc(4 * (size_t)m->K, sizeof *m->fetch[i].cnt);
		m->fetch[i].cnt_f = bw_calloc(4 * (size_t)m->K, sizeof *m->fetch[i].cnt_f);
		if (!m->fetch[i].cnt || !m->fetch[i].cnt_f)
			st = BURROW_E_NOMEM;
	}
	if (st) {
		bw_dist_mb_close(m);
		return st;
	}
	*out = m;
	return 0;
}

int bw_mb_side_expand(struct bw_dist_mb *m, int fan, uint64_t lkey, const int64_t *nodes, int64_t nd,
		      const int64_t **eip, const int64_t **eids)
{
	return expand(m, 0, fan, lkey, nodes, nd, eip, eids);
}

int64_t bw_mb_side_draw(struct bw_dist_mb *m, int64_t gid, int fan, uint64_t lkey, int64_t *out)
{
	const int64_t lid = gid - m->first;
	if (lid < 0 || lid >= m->n_own)
		return bw_err(BURROW_E_RANGE, "train: node %lld is not owned by rank %d", (long long)gid, m->rank);
	const int64_t k = picks(m->ip[lid + 1] - m->ip[lid], fan);
	if (fan > BW_SMALL_FANOUT && pick_room(m, fan))
		return BURROW_E_NOMEM;
	if (!out)
		return k;
	return sample_row(m, lid, fan, lkey, out);
}

void bw_mb_side_rows(struct bw_dist_mb *m, bw_rows *out)
{
	*out = (bw_rows){
		.num_rows = m->offsets[m->K],
		.dim = m->D,
		.gather = fetch_gather,
		.submit = fetch_submit,
		.wait = fetch_wait,
		.poll = fetch_drive,
		.collective = true,
		.ctx = m,
		.threads = 1,
	};
}

void bw_mb_side_times(struct bw_dist_mb *m, double t[5], bool reset)
{
	t[0] += m->sample_s;
	t[1] += m->mpi_s;
	t[2] += m->fetch_comm_s;
	t[3] += m->fetch_wait_s;
	t[4] += m->io_wait_s;
	if (reset)
		m->sample_s = m->mpi_s = m->fetch_comm_s = m->fetch_wait_s = m->io_wait_s = 0;
}

int64_t bw_mb_side_fetched(const struct bw_dist_mb *m) { return m->last_fetched; }
