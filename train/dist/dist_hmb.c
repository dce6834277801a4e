/* dist_hmb.c: partition-parallel mini-batch training over typed parts (docs/distributed.md, "Typed graphs"). */
#include "dist_hmb.h"

#include "../../sampler/sampler_internal.h"
#include "../compute/hmodel.h"
#include "dist_mb.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* dist_mb.c's design with a node as (type, id). Each rank samples batches from its own
 * target-type training nodes with the typed sampler (sampler/typed.c), whose rows come from
 * an expander here: per layer and relation, the frontier nodes of the relation's dst type are
 * expanded by their owners (that type's book; a side of dist_mb.c per relation), which draw
 * from the stream bw_key(rkey, node) as the typed sampler draws its own rows, so a batch does
 * not depend on which rank asked or when. Each type's input rows come from the rank's store of
 * that type (owned and halo rows), the others fetched from their owners (a side per type, the
 * loader's source of rows for that type). Gradients are all-reduced every step, each rank's
 * mean loss weighted by its share of the step's seeds; every rank takes the same number of
 * steps (empty ones join every collective). */

/* Key coordinates no epoch takes: the typed draws, evaluation's draws, the epoch's shuffle. */
#define KEY_HDRAW (UINT64_MAX - 18)
#define KEY_HEVAL (UINT64_MAX - 19)
#define KEY_HSHUFFLE (UINT64_MAX - 20)

struct bw_dist_hmb {
	bw_comm *comm;                        /* a duplicate of the dist's communicator */
	bw_comm *hc;                          /* its host side (borrowed): every exchange here */
	int K, rank, T, R, L, target;
	burrow_dataset *ds;                   /* this rank's part (a typed dataset) */
	const burrow_hetero *ph;              /* its typed graph over local ids */
	burrow_hetero gh;                     /* the whole graph's types as the sampler sees them */
	burrow_type_info ti[BURROW_MAX_TYPES];
	const int64_t *book[BURROW_MAX_TYPES];/* [K+1] type t's book (borrowed from the parts) */
	int64_t first[BURROW_MAX_TYPES], n_own[BURROW_MAX_TYPES], n_halo[BURROW_MAX_TYPES];
	int64_t *halo[BURROW_MAX_TYPES];      /* [n_halo[t]] new ids, ascending */
	burrow_store *store[BURROW_MAX_TYPES];/* a type the model reads: owned rows, then halo rows */
	struct bw_dist_mb *tside[BURROW_MAX_TYPES]; /* its rows: the store's, or fetched */
	bw_rows rows[BURROW_MAX_TYPES];
	bw_rows *rows_of[BURROW_MAX_TYPES];
	struct bw_dist_mb *rside[BURROW_MAX_RELATIONS]; /* relation r's expansion */
	bw_typed_expander ex;
	burrow_typed_sampler_opts so;
	burrow_typed_sampler *train_s, *eval_s; /* the sampler of training, of evaluation */
	burrow_typed_sampler *cur_s;          /* the one the producer samples with */
	bw_hmodel_cfg cfg;
	bw_hmodel *model;
	bw_loader *ld;
	bw_producer prod;
	uint64_t seed;
	/* the sequence the loader runs: batch k's seeds are seq[off[k] .. off[k+1]), k < nb (the
	 * later ones empty), drawn with the key bw_key(keybase, step0 + k) */
	const int64_t *seq, *off;
	int64_t nb, step0, seq_epoch;
	uint64_t keybase;
	int64_t *train, ntrain, *perm, *boff; /* owned training nodes (new ids), the epoch's order, batch offsets */
	size_t boff_cap;
	int64_t *split[3], split_n[3];        /* owned split members, new ids */
	int64_t *eseq;                        /* evaluation: the splits' members one after another */
	int *esp;                             /* [batches] the split of each evaluation batch */
	size_t esp_cap;
	bw_tensor glogits;
	bw_dbuf loss;
	double sample_s, reduce_s, compute_s, io_wait_s;
	uint64_t seen[3];                     /* training seeds stepped on: count, sum, sum of squares */
};

/* ------------------------------------------------------------ the sampler's rows */

/* The typed sampler's expander: relation r's rows, drawn by their owners. Collective. */
static int expand(void *ctx, int l, int r, int fan, uint64_t rkey, const int64_t *nodes, int64_t nd,
		  const int64_t **ip, const int64_t **ids)
{
	struct bw_dist_hmb *m = ctx;
	(void)l;
	return bw_mb_side_expand(m->rside[r], fan, rkey, nodes, nd, ip, ids);
}

/* The key of batch k of the sequence. */
static uint64_t seq_key(const struct bw_dist_hmb *m, int64_t k) { return bw_key(m->keybase, (uint64_t)(m->step0 + k)); }

/* The producer: batch k of the sequence, sampled in the caller's thread. Collective. */
static int hmb_next(void *ctx, int64_t k, burrow_typed_batch **out)
{
	struct bw_dist_hmb *m = ctx;
	const int64_t s0 = k < m->nb ? m->off[k] : 0, n = k < m->nb ? m->off[k + 1] - s0 : 0;
	const double a = bw_comm_now();
	int st = bw_typed_sampler_sample_key(m->cur_s, m->seq + s0, n, seq_key(m, k), m->seq_epoch, m->step0 + k, out);
	m->sample_s += bw_comm_now() - a;
	return st;
}

static void hmb_release(void *ctx, burrow_typed_batch *b)
{
	struct bw_dist_hmb *m = ctx;
	burrow_typed_sampler_release(m->cur_s, b);
}

/* Start the loader on nb batches of seq (off [nb + 1]) among `steps`, keyed by base. */
static int seq_start(struct bw_dist_hmb *m, burrow_typed_sampler *s, const int64_t *seq, const int64_t *off, int64_t nb,
		     int64_t steps, uint64_t base, int64_t epoch, int64_t step0)
{
	bw_loader_stop(m->ld);
	m->cur_s = s;
	m->seq = seq;
	m->off = off;
	m->nb = nb;
	m->keybase = base;
	m->seq_epoch = epoch;
	m->step0 = step0;
	return bw_loader_start_typed(m->ld, &m->prod, m->rows_of, m->T, steps);
}

/* Batch offsets of n seeds in batches of b into m->boff: how many batches. */
static int64_t batch_offsets(struct bw_dist_hmb *m, int64_t n, int64_t b, int64_t at, int64_t k0)
{
	const int64_t nb = (n + b - 1) / b;
	for (int64_t k = 0; k < nb; k++)
		m->boff[k0 + k + 1] = at + BW_MIN((k + 1) * b, n);
	return nb;
}

/* ------------------------------------------------------------ steps */

/* All-reduce the model's gradients (host memory) over the ranks. */
static int reduce_grads(struct bw_dist_hmb *m)
{
	return bw_comm_allreduce(m->hc, NULL, bw_hmodel_grads(m->model), bw_hmodel_num_params(m->model), BW_COMM_F32,
				 BW_COMM_SUM, "train: all-reduce (gradients)");
}

/* Forward (and the loss) of a loaded batch: this rank's summed loss, counted and correct seeds. */
static int forward_loss(burrow_dist *d, bw_loaded *lb, bool training, double loc[3])
{
	struct bw_dist_hmb *m = d->hmb;
	const bw_tensor *logits;
	bw_loss ls;
	int st;
	if ((st = bw_hmodel_forward(&d->be, m->model, &lb->hb, training, m->seed, &logits)) ||
	    (st = bw_tensor_reshape(&m->glogits, d->be.dev, logits->rows, logits->cols)) ||
	    (st = bw_nll_loss(&d->be, logits, lb->hb.labels, NULL, 0, &m->glogits, m->loss.ptr)) ||
	    (st = bw_loss_read(&d->be, m->loss.ptr, &ls)))
		return st;
	loc[0] = ls.loss * (double)ls.counted;
	loc[1] = (double)ls.counted;
	loc[2] = (double)ls.correct;
	return 0;
}

/* One optimizer step on lb (step k), joined by every rank; a rank without seeds joins the
 * all-reduces with zero gradients. */
static int step(burrow_dist *d, bw_loaded *lb, int64_t k, double all[3])
{
	struct bw_dist_hmb *m = d->hmb;
	double loc[3] = {0, 0, 0};
	const bool work = lb->tb->num_seeds > 0;
	for (int64_t i = 0; i < lb->tb->num_seeds; i++) {
		const uint64_t v = (uint64_t)lb->tb->seeds[i];
		m->seen[0]++;
		m->seen[1] += v;
		m->seen[2] += v * v;
	}
	double a = bw_comm_now();
	lb->hb.epoch = (uint64_t)d->epoch;
	lb->hb.index = (uint64_t)(k * m->K + m->rank); /* distinct dropout masks on every rank */
	int st = work ? forward_loss(d, lb, true, loc) : 0;
	if (!st)
		st = bw_loader_poll(m->ld);
	m->compute_s += bw_comm_now() - a;
	a = bw_comm_now();
	if (!st)
		st = bw_comm_allreduce(m->hc, loc, all, 3, BW_COMM_F64, BW_COMM_SUM, "train: all-reduce (loss)");
	m->reduce_s += bw_comm_now() - a;
	if (st)
		return st;
	const double loss = all[1] > 0 ? all[0] / all[1] : 0;
	if (!isfinite(loss))
		return bw_err(BURROW_E_RANGE, "train: loss is %s at epoch %d, step %lld; stopped before the update",
			      isnan(loss) ? "NaN" : "infinite", d->epoch + 1, (long long)k + 1);
	a = bw_comm_now();
	if (work && loc[1] > 0) {
		if ((st = bw_scale(&d->be, (float)(loc[1] / all[1]), &m->glogits)) ||
		    (st = bw_hmodel_backward(&d->be, m->model, &lb->hb, &m->glogits, NULL)))
			return st;
	} else {
		memset(bw_hmodel_grads(m->model), 0, (size_t)bw_hmodel_num_params(m->model) * sizeof(float));
	}
	m->compute_s += bw_comm_now() - a;
	a = bw_comm_now();
	st = reduce_grads(m);
	m->reduce_s += bw_comm_now() - a;
	if (st)
		return st;
	a = bw_comm_now();
	st = bw_optim_step(&d->be, d->optim, bw_hmodel_params(m->model), bw_hmodel_grads(m->model));
	m->compute_s += bw_comm_now() - a;
	return st;
}

/* The sides' seconds since the last call: t[5] as bw_mb_side_times. */
static void side_times(struct bw_dist_hmb *m, double t[5])
{
	memset(t, 0, 5 * sizeof *t);
	for (int r = 0; r < m->R; r++)
		bw_mb_side_times(m->rside[r], t, true);
	for (int i = 0; i < m->T; i++)
		if (m->tside[i])
			bw_mb_side_times(m->tside[i], t, true);
}

static int epoch_steps(burrow_dist *d, int64_t steps, double *loss_sum, int64_t *lossy, double *counted,
		       double *correct)
{
	struct bw_dist_hmb *m = d->hmb;
	for (int64_t k = 0; k < steps; k++) {
		bw_loaded lb;
		double all[3];
		int st;
		if ((st = bw_loader_next(m->ld, &lb)))
			return st;
		m->io_wait_s += lb.io_wait_s;
		if ((st = step(d, &lb, k, all)) || (st = bw_loader_done(m->ld)))
			return st;
		if (all[1] > 0) {
			*loss_sum += all[0] / all[1];
			(*lossy)++;
		}
		*counted += all[1];
		*correct += all[2];
	}
	return 0;
}

int bw_dist_hmb_epoch(burrow_dist *d, burrow_epoch_stats *es, burrow_comm_stats *cs)
{
	struct bw_dist_hmb *m = d->hmb;
	const double t0 = bw_comm_now();
	const int64_t epoch = d->epoch, b = d->o.train.batch_size;
	double t[5];
	side_times(m, t);
	m->sample_s = m->reduce_s = m->compute_s = m->io_wait_s = 0;
	memcpy(m->perm, m->train, (size_t)m->ntrain * sizeof *m->perm);
	bw_shuffle(m->perm, m->ntrain, bw_key(bw_key(bw_key(m->seed, KEY_HSHUFFLE), (uint64_t)epoch), (uint64_t)m->rank));
	int64_t mine = (m->ntrain + b - 1) / b, steps;
	int st = bw_comm_allreduce(m->hc, &mine, &steps, 1, BW_COMM_I64, BW_COMM_MAX, "train: all-reduce (steps)");
	if (st || (st = bw_grow(&m->boff, &m->boff_cap, (size_t)mine + 2, sizeof *m->boff, false)))
		return st;
	if (d->o.train.max_batches > 0 && d->o.train.max_batches < steps)
		steps = d->o.train.max_batches;
	m->boff[0] = 0;
	batch_offsets(m, m->ntrain, b, 0, 0);
	double loss_sum = 0, counted = 0, correct = 0;
	int64_t lossy = 0;
	const uint64_t base = bw_key(bw_key(m->seed, KEY_HDRAW), (uint64_t)epoch);
	if (!(st = seq_start(m, m->train_s, m->perm, m->boff, mine, steps, base, epoch, 0)))
		st = epoch_steps(d, steps, &loss_sum, &lossy, &counted, &correct);
	bw_loader_stop(m->ld);
	if (st)
		return st;
	d->epoch++;
	side_times(m, t);
	if (es) {
		memset(es, 0, sizeof *es);
		es->epoch = d->epoch;
		es->batches = steps;
		es->loss = lossy ? loss_sum / (double)lossy : 0;
		es->train_acc = counted > 0 ? correct / counted : -1;
		es->cache_hit_rate = -1; /* not counted across ranks */
		es->epoch_s = bw_comm_now() - t0;
		es->sample_s = m->sample_s;
		es->io_wait_s = m->io_wait_s + t[4];
		es->compute_s = m->compute_s;
	}
	if (cs) {
		cs->comm_s = t[1] + t[2] + m->reduce_s;
		cs->exposed_comm_s = t[1] + t[3] + m->reduce_s;
		cs->progress_s = 0;
	}
	return 0;
}

/* ------------------------------------------------------------ evaluation */

/* The evaluation batches: each asked split's owned members in batches, one split after
 * another, into eseq, boff and esp; how many. */
static int eval_batches(struct bw_dist_hmb *m, unsigned splits, int64_t b, int64_t *nb)
{
	int64_t n = 0, k = 0, most = 0;
	for (int s = 0; s < 3; s++)
		if (splits >> s & 1) {
			n += m->split_n[s];
			most += (m->split_n[s] + b - 1) / b;
		}
	int st;
	bw_free(m->eseq);
	if (!(m->eseq = bw_malloc((size_t)(n + 1) * sizeof *m->eseq)))
		return BURROW_E_NOMEM;
	if ((st = bw_grow(&m->boff, &m->boff_cap, (size_t)most + 2, sizeof *m->boff, false)) ||
	    (st = bw_grow(&m->esp, &m->esp_cap, (size_t)most + 1, sizeof *m->esp, false)))
		return st;
	m->boff[0] = 0;
	int64_t at = 0;
	for (int s = 0; s < 3; s++) {
		if (!(splits >> s & 1))
			continue;
		memcpy(m->eseq + at, m->split[s], (size_t)m->split_n[s] * sizeof *m->eseq);
		const int64_t c = batch_offsets(m, m->split_n[s], b, at, k);
		for (int64_t j = 0; j < c; j++)
			m->esp[k + j] = s;
		k += c;
		at += m->split_n[s];
	}
	*nb = k;
	return 0;
}

int bw_dist_hmb_evaluate(burrow_dist *d, unsigned splits, int64_t correct[3], int64_t total[3])
{
	struct bw_dist_hmb *m = d->hmb;
	int64_t nb, steps, cnt[6] = {0};
	int st = eval_batches(m, splits, d->o.train.batch_size, &nb);
	if (st || (st = bw_comm_allreduce(m->hc, &nb, &steps, 1, BW_COMM_I64, BW_COMM_MAX, "eval: all-reduce (steps)")))
		return st;
	const uint64_t base = bw_key(bw_key(m->seed, KEY_HEVAL), (uint64_t)d->epoch);
	if (!(st = seq_start(m, m->eval_s, m->eseq, m->boff, nb, steps, base, d->epoch, 0)))
		for (int64_t k = 0; !st && k < steps; k++) {
			bw_loaded lb;
			double loc[3] = {0, 0, 0};
			if ((st = bw_loader_next(m->ld, &lb)))
				break;
			if (lb.tb->num_seeds > 0 && (st = forward_loss(d, &lb, false, loc)))
				break;
			if (k < nb) {
				cnt[2 * m->esp[k]] += (int64_t)loc[1];
				cnt[2 * m->esp[k] + 1] += (int64_t)loc[2];
			}
			st = bw_loader_done(m->ld);
		}
	bw_loader_stop(m->ld);
	int64_t all[6];
	if (st || (st = bw_comm_allreduce(m->hc, cnt, all, 6, BW_COMM_I64, BW_COMM_SUM, "eval: all-reduce (counts)")))
		return st;
	for (int s = 0; s < 3; s++) {
		total[s] = all[2 * s];
		correct[s] = all[2 * s + 1];
	}
	return 0;
}

uint64_t bw_dist_hmb_checksum(const burrow_dist *d)
{
	const struct bw_dist_hmb *m = d->hmb;
	const unsigned char *p = (const unsigned char *)bw_hmodel_params(m->model);
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < (size_t)bw_hmodel_num_params(m->model) * sizeof(float); i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

/* ------------------------------------------------------------ for tests */

int bw_dist_hmb_load(burrow_dist *d, const int64_t *seeds, int64_t n, int64_t epoch, int64_t step_index, bw_loaded *out)
{
	struct bw_dist_hmb *m = d->hmb;
	int64_t off[2] = {0, n};
	for (int64_t i = 0; i < n; i++)
		if (seeds[i] < m->first[m->target] || seeds[i] >= m->first[m->target] + m->n_own[m->target])
			return bw_err(BURROW_E_RANGE, "train: seed %lld is not owned by rank %d", (long long)seeds[i], m->rank);
	const uint64_t base = bw_key(bw_key(m->seed, KEY_HDRAW), (uint64_t)epoch);
	int st = seq_start(m, m->train_s, seeds, off, 1, 1, base, epoch, step_index);
	return st ? st : bw_loader_next(m->ld, out);
}

int64_t bw_dist_hmb_draw(burrow_dist *d, int64_t epoch, int64_t step_index, int l, int r, int fan, int64_t gid,
			 int64_t *out)
{
	struct bw_dist_hmb *m = d->hmb;
	if (r < 0 || r >= m->R)
		return bw_err(BURROW_E_RANGE, "train: no relation %d", r);
	const uint64_t key = bw_key(bw_key(bw_key(bw_key(m->seed, KEY_HDRAW), (uint64_t)epoch), (uint64_t)step_index),
				    (uint64_t)l);
	return bw_mb_side_draw(m->rside[r], gid, fan, bw_key(key, (uint64_t)r), out);
}

void bw_dist_hmb_owned(const burrow_dist *d, int t, int64_t *first, int64_t *n)
{
	*first = d->hmb->first[t];
	*n = d->hmb->n_own[t];
}

const int64_t *bw_dist_hmb_train(const burrow_dist *d, int64_t *n)
{
	*n = d->hmb->ntrain;
	return d->hmb->train;
}

const burrow_hetero *bw_dist_hmb_hetero(const burrow_dist *d) { return &d->hmb->gh; }

int bw_dist_hmb_fanout(const burrow_dist *d, int l, int r)
{
	const burrow_typed_sampler_opts *so = &d->hmb->so;
	return so->rel_fanouts[l][r] > -2 ? so->rel_fanouts[l][r] : so->fanouts[l];
}

void bw_dist_hmb_seen(const burrow_dist *d, uint64_t seen[3]) { memcpy(seen, d->hmb->seen, sizeof d->hmb->seen); }

/* ------------------------------------------------------------ open and close */

/* Type t's halo ids of this rank's part (halo_ids/<type>.npy), checked against the book. */
static int load_halo(struct bw_dist_hmb *m, const char *pdir, int t)
{
	char path[4400];
	snprintf(path, sizeof path, "%s/halo_ids/%s.npy", pdir, m->ti[t].name);
	bw_npy h;
	void *raw = NULL;
	int st = bw_npy_load(path, &h, &raw);
	if (st)
		return st;
	m->halo[t] = raw;
	const int64_t n = h.ndim == 1 ? h.shape[0] : -1, N = m->book[t][m->K];
	if (h.dtype != BURROW_DTYPE_I64 || n != m->n_halo[t])
		return bw_err(BURROW_E_FORMAT, "%s: want int64 [%lld] (the type's halo)", path, (long long)m->n_halo[t]);
	for (int64_t i = 0; i < n; i++)
		if (m->halo[t][i] < 0 || m->halo[t][i] >= N || (i && m->halo[t][i] <= m->halo[t][i - 1]) ||
		    (m->halo[t][i] >= m->first[t] && m->halo[t][i] < m->first[t] + m->n_own[t]))
			return bw_err(BURROW_E_FORMAT, "%s: entry %lld (%lld) is not an ascending new id of another part", path,
				      (long long)i, (long long)m->halo[t][i]);
	return 0;
}

/* This rank's part: the typed dataset, each type's book, owned range and halo, the whole
 * graph's view for the sampler. */
static int open_types(burrow_dist *d, struct bw_dist_hmb *m, const char *parts_dir)
{
	const burrow_parts_info *pi = burrow_parts_get_info(d->parts);
	char pdir[4200];
	snprintf(pdir, sizeof pdir, "%s/part-%d", parts_dir, m->rank);
	int st = burrow_dataset_open(&m->ds, pdir);
	if (st)
		return st;
	m->ph = burrow_dataset_hetero(m->ds);
	if (!m->ph || m->ph->num_types != pi->num_types || m->ph->target_type != pi->target_type || pi->target_type < 0)
		return bw_err(BURROW_E_FORMAT, "%s: not a typed part of %d types with the target type of the parts", pdir,
			      pi->num_types);
	m->T = m->ph->num_types;
	m->R = m->ph->num_relations;
	m->target = m->ph->target_type;
	m->gh = (burrow_hetero){.num_types = m->T, .num_relations = m->R, .target_type = m->target};
	for (int t = 0; t < m->T; t++) {
		if ((st = burrow_dataset_type_info(m->ds, t, &m->ti[t])))
			return st;
		m->book[t] = pi->type_offsets + (size_t)t * (size_t)(m->K + 1);
		m->first[t] = m->book[t][m->rank];
		m->n_own[t] = m->book[t][m->rank + 1] - m->first[t];
		m->n_halo[t] = m->ti[t].num_nodes - m->n_own[t];
		m->gh.type_names[t] = m->ti[t].name;
		m->gh.type_nodes[t] = pi->type_nodes[t];
		if (m->n_halo[t] < 0 || m->book[t][m->K] != pi->type_nodes[t])
			return bw_err(BURROW_E_FORMAT, "%s: type %s holds %lld nodes, fewer than the %lld its book gives it", pdir,
				      m->ti[t].name, (long long)m->ti[t].num_nodes, (long long)m->n_own[t]);
		if ((st = load_halo(m, pdir, t)))
			return st;
	}
	for (int r = 0; r < m->R; r++) {
		const burrow_relation *x = &m->ph->rel[r];
		m->gh.rel[r] = (burrow_relation){.name = x->name, .src_type = x->src_type, .dst_type = x->dst_type};
		if (x->graph.index_width != 4 || x->graph.num_nodes != m->ti[x->dst_type].num_nodes)
			return bw_err(BURROW_E_UNSUPPORTED, "%s: relation %s: rows of 64-bit ids, or not one row per local "
							    "node of type %s",
				      pdir, x->name, m->ti[x->dst_type].name);
	}
	return 0;
}

/* The relational model, as the single-process trainer's (htrain.c); every type it reads at
 * its input must have features. */
static int open_model(burrow_dist *d, struct bw_dist_hmb *m)
{
	const burrow_train_opts *o = &d->o.train;
	m->cfg = (bw_hmodel_cfg){
		.kind = o->model,
		.layers = o->layers,
		.num_types = m->T,
		.num_rels = m->R,
		.target = m->target,
		.hidden = o->hidden,
		.classes = d->classes,
		.dropout = (float)o->dropout,
		.heads = o->heads,
		.attn_dropout = (float)o->attn_dropout,
	};
	for (int r = 0; r < m->R; r++) {
		m->cfg.rel_src[r] = m->ph->rel[r].src_type;
		m->cfg.rel_dst[r] = m->ph->rel[r].dst_type;
	}
	for (int t = 0; t < m->T; t++)
		m->cfg.in_dim[t] = m->ti[t].feat_dim > 0 ? m->ti[t].feat_dim : 1;
	int st;
	if ((st = bw_hmodel_supported(&d->be, &m->cfg)) || (st = bw_hmodel_open(&m->model, d->be.dev, &m->cfg, o->seed)))
		return st;
	for (int t = 0; t < m->T; t++)
		if (bw_hmodel_uses(m->model, 0, t) && m->ti[t].feat_dim < 1)
			return bw_err(BURROW_E_UNSUPPORTED, "%s: node type '%s' has no features: typed training under mpirun "
							    "reads features of every type the model reads (prep with --fill "
							    "mean; learned embeddings train in one process)",
				      bw_dataset_dir(m->ds), m->ti[t].name);
	return bw_optim_open(&d->optim, d->be.dev, o->optimizer, bw_hmodel_num_params(m->model), o->lr, o->weight_decay,
			     o->momentum);
}

/* A side per relation (its expansion) and per type the model reads (its rows: a store of
 * the part's features, a CLOCK cache with its share of the budget). */
static int open_sides(burrow_dist *d, struct bw_dist_hmb *m)
{
	const burrow_train_opts *o = &d->o.train;
	int st;
	for (int r = 0; r < m->R; r++) {
		const burrow_relation *x = &m->ph->rel[r];
		const int dt = x->dst_type, s = x->src_type;
		const bw_mb_side_cfg c = {.comm = m->hc, .K = m->K, .rank = m->rank, .offsets = m->book[dt],
					  .first = m->first[dt], .n_own = m->n_own[dt], .n_halo = m->n_halo[dt],
					  .halo_ids = m->halo[dt], .sfirst = m->first[s], .sn_own = m->n_own[s],
					  .shalo = m->halo[s], .ip = x->graph.indptr, .ind = x->graph.indices};
		if ((st = bw_mb_side_open(&m->rside[r], &c)))
			return st;
	}
	size_t all = 0;
	for (int t = 0; t < m->T; t++)
		if (bw_hmodel_uses(m->model, 0, t))
			all += (size_t)m->ti[t].num_nodes * (size_t)m->ti[t].feat_dim * sizeof(float);
	const size_t budget = bw_trainer_cache_budget(o, d->threads, all);
	for (int t = 0; t < m->T; t++) {
		if (!bw_hmodel_uses(m->model, 0, t))
			continue;
		burrow_store_opts so;
		burrow_store_defaults(&so);
		so.engine = o->store_engine;
		so.out_dtype = BURROW_DTYPE_F32;
		if ((st = burrow_store_open(&m->store[t], m->ti[t].features_path, &so)))
			return st;
		const size_t bytes = (size_t)m->ti[t].num_nodes * (size_t)m->ti[t].feat_dim * sizeof(float);
		const size_t share = all ? (size_t)((double)budget * (double)bytes / (double)all) : 0;
		if (share > 0 && (st = burrow_store_cache_clock(m->store[t], share)))
			return st;
		const bw_mb_side_cfg c = {.comm = m->hc, .K = m->K, .rank = m->rank, .offsets = m->book[t],
					  .first = m->first[t], .n_own = m->n_own[t], .n_halo = m->n_halo[t],
					  .halo_ids = m->halo[t], .store = m->store[t], .dim = m->ti[t].feat_dim};
		if ((st = bw_mb_side_open(&m->tside[t], &c)))
			return st;
		bw_mb_side_rows(m->tside[t], &m->rows[t]);
		m->rows_of[t] = &m->rows[t];
	}
	return 0;
}

/* The samplers (training fanouts; evaluation's), over the expander. */
static int open_samplers(burrow_dist *d, struct bw_dist_hmb *m)
{
	const burrow_train_opts *o = &d->o.train;
	burrow_typed_sampler_opts *so = &m->so;
	burrow_typed_sampler_defaults(so);
	so->num_layers = o->layers;
	so->batch_size = o->batch_size;
	so->threads = 1;
	so->seed = o->seed;
	for (int l = 0; l < o->layers; l++)
		so->fanouts[l] = o->fanout[l] != 0 ? o->fanout[l] : 5 * (o->layers - l);
	int st = bw_htrain_rel_fanout(&m->gh, o->rel_fanout, o->layers, so);
	for (int l = 0; !st && l < o->layers; l++)
		for (int r = 0; r < m->R; r++)
			if (!bw_hmodel_runs(m->model, l, r))
				so->rel_fanouts[l][r] = 0;
	m->ex = (bw_typed_expander){.expand = expand, .ctx = m};
	if (st || (st = bw_typed_sampler_open_ex(&m->train_s, &m->gh, &m->ex, so)))
		return st;
	burrow_typed_sampler_opts eo = *so;
	for (int l = 0; o->eval_fanout[0] && l < o->layers; l++)
		eo.fanouts[l] = o->eval_fanout[l];
	return bw_typed_sampler_open_ex(&m->eval_s, &m->gh, &m->ex, &eo);
}

/* The splits as new ids, the loader (in line: sampling and fetching are collective). */
static int open_loader(burrow_dist *d, struct bw_dist_hmb *m)
{
	const int64_t base = m->first[m->target];
	for (int s = 0; s < 3; s++) {
		const int64_t *ids = burrow_dataset_split(m->ds, s, &m->split_n[s]);
		if (!ids)
			m->split_n[s] = 0;
		if (!(m->split[s] = bw_malloc((size_t)(m->split_n[s] + 1) * sizeof *m->split[s])))
			return BURROW_E_NOMEM;
		for (int64_t i = 0; i < m->split_n[s]; i++) {
			if (ids[i] < 0 || ids[i] >= m->n_own[m->target])
				return bw_err(BURROW_E_FORMAT, "%s: split %d holds %lld, not an owned node", bw_dataset_dir(m->ds), s,
					      (long long)ids[i]);
			m->split[s][i] = base + ids[i];
		}
	}
	m->train = m->split[BURROW_SPLIT_TRAIN];
	m->ntrain = m->split_n[BURROW_SPLIT_TRAIN];
	if (!(m->perm = bw_malloc((size_t)(m->ntrain + 1) * sizeof *m->perm)))
		return BURROW_E_NOMEM;
	bw_loader_cfg lc = {
		.dev = d->be.dev,
		.compute = d->be.stream,
		.depth = d->o.train.prefetch > 0 ? 1 : 0,
		.thread = false,
		.num_layers = m->L,
		.dim = 1,
		.labels = burrow_dataset_labels(m->ds),
		.label_base = base, /* the part's labels are by local id */
		.blocks = true,
		.transpose = true,
	};
	for (int t = 0; t < m->T; t++)
		lc.type_dim[t] = m->rows_of[t] ? m->ti[t].feat_dim : 0;
	m->prod = (bw_producer){.next_typed = hmb_next, .release_typed = hmb_release, .ctx = m};
	return bw_loader_open(&m->ld, &lc);
}

int bw_dist_hmb_open(burrow_dist *d, const char *parts_dir)
{
	const burrow_train_opts *o = &d->o.train;
	if (o->model != BURROW_MODEL_RGCN && o->model != BURROW_MODEL_RSAGE && o->model != BURROW_MODEL_RGAT)
		return bw_err(BURROW_E_INVAL, "%s: typed parts train with --model rgcn, rsage or rgat under mpirun, not %s",
			      parts_dir, burrow_model_name(o->model));
	if (o->full_graph || o->norm || o->residual || o->sampler != BURROW_SAMPLER_NEIGHBOR || o->embed_types ||
	    o->normalize_features || o->task == BURROW_TASK_LINK || o->typed_fanout == BURROW_TYPED_FANOUT_NODE)
		return bw_err(BURROW_E_UNSUPPORTED, "%s: typed parts train under mpirun in mini-batches of neighbor samples, "
						    "without --full-graph, --norm, --residual, --sampler labor|labor-star, "
						    "--embed-types, --normalize-features, --task link or --typed-fanout node, in this "
						    "version",
			      parts_dir);
	if (o->batch_size < 1 || o->layers < 1 || o->layers > BURROW_MAX_LAYERS)
		return bw_err(BURROW_E_INVAL, "train: batch size must be positive and layers in [1, %d]", BURROW_MAX_LAYERS);
	if (d->be.kind != BW_BACKEND_CPU)
		return bw_err(BURROW_E_UNSUPPORTED, "%s: typed parts train under mpirun on the CPU in this version (--device "
						    "cpu)",
			      parts_dir);
	struct bw_dist_hmb *m = bw_calloc(1, sizeof *m);
	if (!m)
		return BURROW_E_NOMEM;
	d->hmb = m; /* from here burrow_dist_close frees it */
	int st = bw_comm_dup(&m->comm, d->comm);
	if (st)
		return st;
	m->hc = m->comm->host;
	m->K = d->K;
	m->rank = d->rank;
	m->L = o->layers;
	m->seed = o->seed;
	m->glogits = bw_tensor_empty(d->be.dev);
	if ((st = open_types(d, m, parts_dir)))
		return st;
	d->classes = burrow_dataset_get_info(m->ds)->num_classes;
	if (d->classes < 1 || !burrow_dataset_labels(m->ds))
		return bw_err(BURROW_E_INVAL, "train: part %d has no labels", d->rank);
	if ((st = open_model(d, m)) || (st = open_sides(d, m)) || (st = open_samplers(d, m)) ||
	    (st = bw_dbuf_reserve(&m->loss, d->be.dev, sizeof(bw_loss))) || (st = open_loader(d, m)))
		return st;
	int64_t ntr = m->ntrain;
	return bw_comm_allreduce(m->hc, &ntr, &d->global_train, 1, BW_COMM_I64, BW_COMM_SUM,
				 "train: all-reduce (training nodes)");
}

void bw_dist_hmb_close(struct bw_dist_hmb *m)
{
	if (!m)
		return;
	bw_loader_close(m->ld); /* first: it hands its batches back and waits for their fetches */
	burrow_typed_sampler_close(m->train_s);
	burrow_typed_sampler_close(m->eval_s);
	for (int r = 0; r < BURROW_MAX_RELATIONS; r++)
		bw_dist_mb_close(m->rside[r]);
	for (int t = 0; t < BURROW_MAX_TYPES; t++) {
		bw_dist_mb_close(m->tside[t]);
		burrow_store_close(m->store[t]);
		bw_free(m->halo[t]);
	}
	for (int s = 0; s < 3; s++)
		bw_free(m->split[s]);
	bw_free(m->perm);
	bw_free(m->boff);
	bw_free(m->eseq);
	bw_free(m->esp);
	bw_hmodel_close(m->model);
	bw_tensor_free(&m->glogits);
	bw_dbuf_free(&m->loss);
	burrow_dataset_close(m->ds);
	bw_comm_close(m->comm);
	bw_free(m);
}
