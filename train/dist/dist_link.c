/* dist_link.c: link prediction under mpirun, mini-batch mode (docs/distributed.md, "Link
 * prediction"): each rank draws edge batches from the training positives its part owns (those
 * whose source it owns), with negatives corrupting their destinations, every rank the same
 * number of steps; a batch's endpoints are the seeds of the distributed sampler (any rank's
 * nodes), the scorer's binary cross-entropy weighted by the rank's share of the step's pairs,
 * the encoder's and the scorer's gradients all-reduced. Evaluation: the full-graph forward's
 * embeddings of the owned nodes, those of remote endpoints fetched from their owners, each
 * rank scoring its owned positives and their negatives, the metric over all ranks (lmetric.c). */
#include "dist_mb.h"
#include "lmetric.h"

#include "../../partition/book.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KEY_LINK_SHUFFLE (UINT64_MAX - 32)
#define KEY_LINK_NEG (UINT64_MAX - 33)
#define KEY_LINK_EVAL 0xE7A1

struct bw_dist_link {
	burrow_edge_split sp[3];   /* the part's edge splits (local ids) */
	int64_t *tr, ntr;          /* [ntr, 2] owned training positives, new global ids */
	bw_scorer *scorer;
	bw_backend cpu;            /* steps the scorer (host memory) */
	bool cpu_open;
	bw_optim so;
	float *sm, *sv;
	/* one epoch: the pairs of step k are pairs [poff[k], poff[k+1]) (positions in its seeds,
	 * label), its seeds seq[soff[k] .. soff[k+1]) */
	int64_t *perm, *seq, *soff, *poff;
	int32_t *psrc, *pdst;
	float *plab;
	size_t perm_cap, seq_cap, soff_cap, poff_cap, psrc_cap, pdst_cap, plab_cap;
	float *gh;
	size_t gh_cap;
	bw_stage hstage;
	bw_tensor glogits;
	double loss_sum;
	int64_t lossy;
};

void bw_dist_link_close(struct bw_dist_link *lk)
{
	if (!lk)
		return;
	bw_scorer_close(lk->scorer);
	if (lk->cpu_open)
		bw_backend_release(&lk->cpu);
	bw_free(lk->sm);
	bw_free(lk->sv);
	bw_free(lk->tr);
	bw_free(lk->perm);
	bw_free(lk->seq);
	bw_free(lk->soff);
	bw_free(lk->poff);
	bw_free(lk->psrc);
	bw_free(lk->pdst);
	bw_free(lk->plab);
	bw_free(lk->gh);
	bw_stage_free(&lk->hstage);
	bw_tensor_free(&lk->glogits);
	bw_free(lk);
}

/* New global id of the part's local id l. */
static int64_t l2g(const burrow_dist *d, int64_t l)
{
	return l < d->n_own ? d->pi->first_id + l : d->pi->halo_ids[l - d->n_own];
}

int bw_dist_link_open(burrow_dist *d)
{
	const burrow_train_opts *o = &d->o.train;
	const burrow_dataset *ds = burrow_part_dataset(d->part);
	struct bw_dist_link *lk = bw_calloc(1, sizeof *lk);
	if (!lk)
		return BURROW_E_NOMEM;
	d->lk = lk;
	int st = 0;
	for (int s = 0; !st && s < 3; s++)
		st = burrow_dataset_edge_split(ds, s, &lk->sp[s]);
	const bw_backend_cfg cfg = {.threads = d->threads};
	if (st || (st = bw_scorer_open(&lk->scorer, o->scorer, o->hidden, bw_key(o->seed, 0x5C0E), d->threads)) ||
	    (st = bw_backend_open(&lk->cpu, BW_BACKEND_CPU, &cfg)))
		return st;
	lk->cpu_open = true;
	const int64_t n = lk->scorer->num_params, np = lk->sp[BURROW_SPLIT_TRAIN].num_pos;
	lk->so = (bw_optim){.kind = o->optimizer, .dev = lk->cpu.dev, .lr = o->lr, .weight_decay = o->weight_decay,
			    .momentum = o->momentum, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .n = n};
	lk->sm = bw_calloc((size_t)n + 1, sizeof *lk->sm);
	lk->sv = bw_calloc((size_t)n + 1, sizeof *lk->sv);
	lk->tr = bw_malloc((size_t)(2 * np + 2) * sizeof *lk->tr);
	if (!lk->sm || !lk->sv || !lk->tr)
		return BURROW_E_NOMEM;
	lk->so.m = lk->sm;
	lk->so.v = lk->sv;
	for (int64_t q = 0; q < 2 * np; q++)
		lk->tr[q] = l2g(d, lk->sp[BURROW_SPLIT_TRAIN].pos[q]);
	lk->ntr = np;
	return 0;
}

/* ------------------------------------------------------------ training */

static int cmp_i64(const void *a, const void *b)
{
	const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Position of gid in the sorted seeds s[0, n). */
static int32_t seed_pos(const int64_t *s, int64_t n, int64_t gid)
{
	return (int32_t)bw_lower_bound_i64(s, n, gid);
}

/* Room for an epoch of steps batches of at most b positives with neg negatives each. */
static int epoch_room(struct bw_dist_link *lk, int64_t steps, int64_t pairs)
{
	int st;
	if ((st = bw_grow(&lk->perm, &lk->perm_cap, (size_t)lk->ntr + 1, sizeof *lk->perm, false)) ||
	    (st = bw_grow(&lk->seq, &lk->seq_cap, (size_t)(2 * pairs) + 1, sizeof *lk->seq, false)) ||
	    (st = bw_grow(&lk->soff, &lk->soff_cap, (size_t)steps + 2, sizeof *lk->soff, false)) ||
	    (st = bw_grow(&lk->poff, &lk->poff_cap, (size_t)steps + 2, sizeof *lk->poff, false)) ||
	    (st = bw_grow(&lk->psrc, &lk->psrc_cap, (size_t)pairs + 1, sizeof *lk->psrc, false)) ||
	    (st = bw_grow(&lk->pdst, &lk->pdst_cap, (size_t)pairs + 1, sizeof *lk->pdst, false)))
		return st;
	return bw_grow(&lk->plab, &lk->plab_cap, (size_t)pairs + 1, sizeof *lk->plab, false);
}

/* The epoch's batches: the owned positives shuffled (keyed by seed, epoch and rank), batch k
 * their slice k with neg destinations each drawn uniformly over all nodes (keyed by seed,
 * epoch, rank and k); its seeds the distinct endpoints, sorted. */
static int epoch_batches(burrow_dist *d, struct bw_dist_link *lk, int64_t steps)
{
	const int64_t B = d->o.train.batch_size, neg = d->o.train.neg;
	const int64_t N = burrow_parts_get_info(d->parts)->node_offsets[d->K];
	const int64_t per = 1 + neg, pairs = BW_MIN(lk->ntr, steps * B) * per;
	const uint64_t seed = d->o.train.seed, ep = (uint64_t)d->epoch, rk = (uint64_t)d->rank;
	int st = epoch_room(lk, steps, pairs);
	if (st)
		return st;
	for (int64_t i = 0; i < lk->ntr; i++)
		lk->perm[i] = i;
	bw_shuffle(lk->perm, lk->ntr, bw_key(bw_key(bw_key(seed, KEY_LINK_SHUFFLE), ep), rk));
	lk->soff[0] = lk->poff[0] = 0;
	for (int64_t k = 0; k < steps; k++) {
		const int64_t a = BW_MIN(k * B, lk->ntr), b = BW_MIN(a + B, lk->ntr), p0 = lk->poff[k], s0 = lk->soff[k];
		bw_rng r;
		bw_rng_seed(&r, bw_key(bw_key(bw_key(bw_key(seed, KEY_LINK_NEG), ep), rk), (uint64_t)k));
		int64_t *ends = lk->seq + s0, ne = 0;
		int64_t *dst = bw_malloc((size_t)((b - a) * per) * sizeof *dst + 1);
		if (!dst)
			return BURROW_E_NOMEM;
		for (int64_t i = a; i < b; i++) {
			const int64_t *e = lk->tr + 2 * lk->perm[i];
			ends[ne++] = e[0];
			ends[ne++] = e[1];
			dst[(i - a) * per] = e[1];
			for (int64_t j = 1; j < per; j++)
				ends[ne++] = dst[(i - a) * per + j] = (int64_t)bw_rng_below(&r, (uint64_t)N);
		}
		qsort(ends, (size_t)ne, sizeof *ends, cmp_i64);
		int64_t u = 0;
		for (int64_t i = 0; i < ne; i++)
			if (u == 0 || ends[i] != ends[u - 1])
				ends[u++] = ends[i];
		for (int64_t i = a; i < b; i++)
			for (int64_t j = 0; j < per; j++) {
				const int64_t q = p0 + (i - a) * per + j;
				lk->psrc[q] = seed_pos(ends, u, lk->tr[2 * lk->perm[i]]);
				lk->pdst[q] = seed_pos(ends, u, dst[(i - a) * per + j]);
				lk->plab[q] = j == 0 ? 1.0f : 0.0f;
			}
		bw_free(dst);
		lk->soff[k + 1] = s0 + u;
		lk->poff[k + 1] = p0 + (b - a) * per;
	}
	return 0;
}

/* This rank's share of step k: the scorer's loss over its pairs and dL/dembeddings, scaled by
 * its share (np / all) of the step's pairs; the model's backward; gradients all-reduced; both
 * optimizers. A rank without pairs joins with zero gradients. */
static int link_step(void *ctx, bw_loaded *lb, int64_t k)
{
	burrow_dist *d = ctx;
	struct bw_dist_link *lk = d->lk;
	const int64_t p0 = lk->poff[k], np = lk->poff[k + 1] - p0;
	double loc[2] = {0, (double)np}, all[2], loss = 0;
	const bw_tensor *z = NULL;
	const float *h;
	int st = 0;
	if (np > 0) {
		lb->b.epoch = (uint64_t)d->epoch;
		lb->b.index = (uint64_t)(k * d->K + d->rank); /* distinct dropout masks on every rank */
		if ((st = bw_model_forward(&d->be, d->model, &lb->b, true, d->o.train.seed, &z)))
			return st;
		const size_t bytes = (size_t)(z->rows * z->cols) * sizeof(float);
		if ((st = bw_grow(&lk->gh, &lk->gh_cap, (size_t)(z->rows * z->cols) + 1, sizeof(float), false)) ||
		    (st = bw_stage_read(&lk->hstage, d->be.dev, z->data, bytes, (const void **)&h)))
			return st;
		memset(lk->gh, 0, bytes);
		if ((st = bw_scorer_loss(lk->scorer, h, lk->psrc + p0, lk->pdst + p0, lk->plab + p0, np, &loss, lk->gh)))
			return st;
		loc[0] = loss * (double)np;
	}
	if ((st = bw_comm_allreduce(d->world, loc, all, 2, BW_COMM_F64, BW_COMM_SUM, "train: all-reduce (loss)")))
		return st;
	if (all[1] > 0 && !isfinite(all[0]))
		return bw_err(BURROW_E_RANGE, "train: loss is %s at epoch %d, step %lld; stopped before the update",
			      isnan(all[0]) ? "NaN" : "infinite", d->epoch + 1, (long long)k + 1);
	if (all[1] > 0) {
		lk->loss_sum += all[0] / all[1];
		lk->lossy++;
	}
	const float share = all[1] > 0 ? (float)((double)np / all[1]) : 0.0f;
	if (np > 0) {
		for (int64_t i = 0; i < z->rows * z->cols; i++)
			lk->gh[i] *= share;
		for (int64_t i = 0; i < lk->scorer->num_params; i++)
			lk->scorer->grads[i] *= share;
		const size_t bytes = (size_t)(z->rows * z->cols) * sizeof(float);
		if ((st = bw_tensor_reshape(&lk->glogits, d->be.dev, z->rows, z->cols)) ||
		    (st = bw_device_upload(d->be.dev, lk->glogits.data, lk->gh, bytes)) ||
		    (st = bw_model_backward(&d->be, d->model, &lb->b, &lk->glogits)))
			return st;
	} else {
		if ((st = bw_model_zero_grads(d->model)))
			return st;
		if (lk->scorer->num_params)
			memset(lk->scorer->grads, 0, (size_t)lk->scorer->num_params * sizeof(float));
	}
	if ((st = bw_dist_mb_reduce_grads(d)) ||
	    (lk->scorer->num_params &&
	     (st = bw_comm_allreduce(d->world, NULL, lk->scorer->grads, lk->scorer->num_params, BW_COMM_F32,
				     BW_COMM_SUM, "train: all-reduce (scorer gradients)"))) ||
	    (st = bw_optim_step(&d->be, d->optim, d->model->params, d->model->grads)))
		return st;
	return lk->scorer->num_params ? bw_optim_step(&lk->cpu, &lk->so, lk->scorer->params, lk->scorer->grads) : 0;
}

int bw_dist_link_epoch(burrow_dist *d, burrow_epoch_stats *es, burrow_comm_stats *cs)
{
	struct bw_dist_link *lk = d->lk;
	const double t0 = bw_comm_now();
	int64_t mine = (lk->ntr + d->o.train.batch_size - 1) / d->o.train.batch_size, steps;
	int st = bw_comm_allreduce(d->world, &mine, &steps, 1, BW_COMM_I64, BW_COMM_MAX, "train: all-reduce (steps)");
	if (st)
		return st;
	if (d->o.train.max_batches > 0 && d->o.train.max_batches < steps)
		steps = d->o.train.max_batches;
	lk->loss_sum = 0;
	lk->lossy = 0;
	if ((st = epoch_batches(d, lk, steps)) ||
	    (st = bw_dist_mb_run(d, lk->seq, lk->soff, steps, d->epoch, link_step, d)))
		return st;
	d->epoch++;
	if (es) {
		memset(es, 0, sizeof *es);
		es->epoch = d->epoch;
		es->batches = steps;
		es->loss = lk->lossy ? lk->loss_sum / (double)lk->lossy : 0;
		es->train_acc = -1;
		es->cache_hit_rate = -1;
		es->epoch_s = bw_comm_now() - t0;
	}
	if (cs)
		memset(cs, 0, sizeof *cs);
	return 0;
}

/* ------------------------------------------------------------ evaluation */

/* Rows of the embeddings E [n_own, dim] (host) for the sorted distinct new global ids u[0, n)
 * into out [n, dim]: owned ones copied, the others fetched from their owners (an all-to-all of
 * counts, of ids, of rows). Collective. */
static int fetch_rows(burrow_dist *d, const float *E, int64_t dim, const int64_t *u, int64_t n, float *out)
{
	const int K = d->K;
	const int64_t *book = burrow_parts_get_info(d->parts)->node_offsets;
	int *c = bw_calloc((size_t)8 * (size_t)K, sizeof *c), *sc = c, *sd = c + K, *rc = c + 2 * K, *rd = c + 3 * K;
	int *fsc = c + 4 * K, *fsd = c + 5 * K, *frc = c + 6 * K, *frd = c + 7 * K;
	int64_t *want = NULL, *asked = NULL, nr = 0, na = 0;
	float *rows = NULL, *got = NULL;
	int st = c ? 0 : BURROW_E_NOMEM;
	for (int64_t i = 0; !st && i < n; i++) /* u sorted: grouped by owner */
		if (u[i] < d->pi->first_id || u[i] >= d->pi->first_id + d->n_own) {
			sc[bw_book_owner(book, K, u[i])]++;
			nr++;
		} else
			memcpy(out + i * dim, E + (u[i] - d->pi->first_id) * dim, (size_t)dim * sizeof *out);
	if (!st && (!(want = bw_malloc((size_t)nr * sizeof *want + 8)) ||
		    !(got = bw_malloc((size_t)(nr * dim) * sizeof *got + 4))))
		st = BURROW_E_NOMEM;
	for (int64_t i = 0, q = 0; !st && i < n; i++)
		if (u[i] < d->pi->first_id || u[i] >= d->pi->first_id + d->n_own)
			want[q++] = u[i];
	for (int p = 1; !st && p < K; p++)
		sd[p] = sd[p - 1] + sc[p - 1];
	if (!st)
		st = bw_comm_alltoall(d->world, sc, rc, 1, BW_COMM_INT, "eval: all-to-all (row requests)");
	for (int p = 0; !st && p < K; p++) {
		rd[p] = (int)na;
		na += rc[p];
	}
	if (!st && (!(asked = bw_malloc((size_t)na * sizeof *asked + 8)) ||
		    !(rows = bw_malloc((size_t)(na * dim) * sizeof *rows + 4))))
		st = BURROW_E_NOMEM;
	if (!st && (nr * dim > INT_MAX || na * dim > INT_MAX))
		st = bw_err(BURROW_E_UNSUPPORTED, "eval: %lld embedding rows exceed one MPI message", (long long)BW_MAX(nr, na));
	if (!st)
		st = bw_comm_alltoallv(d->world, want, sc, sd, asked, rc, rd, BW_COMM_I64, "eval: all-to-all (row ids)");
	for (int64_t i = 0; !st && i < na; i++)
		memcpy(rows + i * dim, E + (asked[i] - d->pi->first_id) * dim, (size_t)dim * sizeof *rows);
	for (int p = 0; !st && p < K; p++) {
		fsc[p] = (int)(rc[p] * dim);
		fsd[p] = (int)(rd[p] * dim);
		frc[p] = (int)(sc[p] * dim);
		frd[p] = (int)(sd[p] * dim);
	}
	if (!st)
		st = bw_comm_alltoallv(d->world, rows, fsc, fsd, got, frc, frd, BW_COMM_F32, "eval: all-to-all (rows)");
	for (int64_t i = 0, q = 0; !st && i < n; i++)
		if (u[i] < d->pi->first_id || u[i] >= d->pi->first_id + d->n_own)
			memcpy(out + i * dim, got + (q++) * dim, (size_t)dim * sizeof *out);
	bw_free(c);
	bw_free(want);
	bw_free(asked);
	bw_free(rows);
	bw_free(got);
	return st;
}

/* A split's pairs in new global ids: np positives, then the negatives (pairs: nn of them;
 * per source: [np, k] row-major; none: one drawn per positive). */
typedef struct eval_pairs {
	int64_t np, nn, k;
	int64_t *src, *dst; /* [np + nn] */
} eval_pairs;

static int split_pairs(burrow_dist *d, int s, eval_pairs *e)
{
	const burrow_edge_split *sp = &d->lk->sp[s];
	const int64_t N = burrow_parts_get_info(d->parts)->node_offsets[d->K];
	e->np = sp->num_pos;
	e->k = sp->neg == BURROW_EDGE_NEG_PER_SOURCE ? sp->k : 0;
	e->nn = sp->neg == BURROW_EDGE_NEG_PAIRS ? sp->num_neg : sp->neg == BURROW_EDGE_NEG_PER_SOURCE ? e->np * e->k : e->np;
	e->src = bw_malloc((size_t)(e->np + e->nn) * sizeof *e->src + 8);
	e->dst = bw_malloc((size_t)(e->np + e->nn) * sizeof *e->dst + 8);
	if (!e->src || !e->dst)
		return BURROW_E_NOMEM;
	bw_rng r;
	bw_rng_seed(&r, bw_key(bw_key(bw_key(d->o.train.seed, KEY_LINK_EVAL), (uint64_t)s), (uint64_t)d->rank));
	for (int64_t i = 0; i < e->np; i++) {
		e->src[i] = l2g(d, sp->pos[2 * i]);
		e->dst[i] = l2g(d, sp->pos[2 * i + 1]);
	}
	for (int64_t i = 0; i < e->nn; i++) {
		int64_t *a = e->src + e->np + i, *b = e->dst + e->np + i;
		if (sp->neg == BURROW_EDGE_NEG_PAIRS) {
			*a = l2g(d, sp->neg_pairs[2 * i]);
			*b = l2g(d, sp->neg_pairs[2 * i + 1]);
		} else if (sp->neg == BURROW_EDGE_NEG_PER_SOURCE) {
			*a = e->src[i / e->k];
			*b = l2g(d, sp->neg_dst[i]);
		} else {
			*a = e->src[i];
			*b = (int64_t)bw_rng_below(&r, (uint64_t)N);
		}
	}
	return 0;
}

/* Split s's metric and ROC-AUC over all ranks, from the owned nodes' embeddings E. */
static int eval_split(burrow_dist *d, const float *E, int64_t dim, int s, double *metric, double *auc)
{
	struct bw_dist_link *lk = d->lk;
	eval_pairs e = {0};
	int64_t *u = NULL, nu = 0;
	float *h = NULL, *sc = NULL;
	int32_t *ps = NULL, *pd = NULL;
	int st = split_pairs(d, s, &e);
	const int64_t m = e.np + e.nn;
	if (!st && (!(u = bw_malloc((size_t)(2 * m) * sizeof *u + 8)) || !(sc = bw_malloc((size_t)m * sizeof *sc + 4)) ||
		    !(ps = bw_malloc((size_t)m * sizeof *ps + 4)) || !(pd = bw_malloc((size_t)m * sizeof *pd + 4))))
		st = BURROW_E_NOMEM;
	if (!st) {
		memcpy(u, e.src, (size_t)m * sizeof *u);
		memcpy(u + m, e.dst, (size_t)m * sizeof *u);
		qsort(u, (size_t)(2 * m), sizeof *u, cmp_i64);
		for (int64_t i = 0; i < 2 * m; i++)
			if (nu == 0 || u[i] != u[nu - 1])
				u[nu++] = u[i];
		if (!(h = bw_malloc((size_t)(nu * dim) * sizeof *h + 4)))
			st = BURROW_E_NOMEM;
	}
	if (!st)
		st = fetch_rows(d, E, dim, u, nu, h);
	for (int64_t i = 0; !st && i < m; i++) {
		ps[i] = seed_pos(u, nu, e.src[i]);
		pd[i] = seed_pos(u, nu, e.dst[i]);
	}
	if (!st && m > 0)
		st = bw_scorer_score(lk->scorer, h, ps, pd, m, sc);
	if (!st)
		st = bw_dist_link_metric(d->world, lk->sp[s].metric, lk->sp[s].metric_k, sc, e.np, sc + e.np, e.nn,
					 e.k ? e.k : 1, metric, auc);
	bw_free(e.src);
	bw_free(e.dst);
	bw_free(u);
	bw_free(h);
	bw_free(sc);
	bw_free(ps);
	bw_free(pd);
	return st;
}

int bw_dist_link_evaluate(burrow_dist *d, burrow_eval_stats *ev)
{
	struct bw_dist_link *lk = d->lk;
	const burrow_edge_split *sp = &lk->sp[BURROW_SPLIT_VALID];
	const bw_tensor *z;
	const float *E;
	int st = bw_dist_forward(d, &z);
	if (st)
		return st;
	const int64_t dim = z->cols;
	float *host = bw_malloc((size_t)(d->n_own * dim) * sizeof *host + 4);
	if (!host)
		return BURROW_E_NOMEM;
	if (!(st = bw_stage_read(&lk->hstage, d->be.dev, z->data, (size_t)(d->n_own * dim) * sizeof(float),
				 (const void **)&E)))
		memcpy(host, E, (size_t)(d->n_own * dim) * sizeof *host);
	ev->metric = sp->metric == BURROW_EDGE_METRIC_HITS ? BURROW_METRIC_HITS
		   : sp->metric == BURROW_EDGE_METRIC_MRR ? BURROW_METRIC_MRR
							   : BURROW_METRIC_AUC;
	ev->metric_k = sp->metric == BURROW_EDGE_METRIC_HITS ? sp->metric_k : 0;
	ev->train_acc = -1;
	if (!st)
		st = eval_split(d, host, dim, BURROW_SPLIT_VALID, &ev->valid_acc, &ev->valid_auc);
	if (!st)
		st = eval_split(d, host, dim, BURROW_SPLIT_TEST, &ev->test_acc, &ev->test_auc);
	bw_free(host);
	return st;
}
