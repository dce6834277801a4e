/* ltrain.c: the trainer's link-prediction side (task LINK): edge mini-batch epochs on the
 * batch loader (the edge sampler's batches, the features through the trainer's store), the
 * encoder (the trainer's model, hidden wide) and a scorer with binary cross-entropy, and
 * evaluation as OGB's Evaluator: layer-wise full-neighbor embeddings of every node (infer.c),
 * then each split's positives and negatives scored in chunks, Hits@K or MRR, and ROC-AUC. */
#include "driver.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

/* Pairs scored at a time in evaluation. */
#define SCORE_CHUNK 8192

struct bw_ltrain {
	burrow_edge_split sp[3];      /* the dataset's edge splits */
	bw_scorer *scorer;
	bw_backend cpu;               /* steps the scorer's weights (host memory) */
	bool cpu_open;
	bw_optim so;                  /* the scorer's optimizer: the model's settings, its state in sm, sv */
	float *sm, *sv;               /* [scorer params] host memory (owned), NULL when unused */
	burrow_edge_sampler *sampler; /* opened at the first epoch, for the seed then in force */
	uint64_t sampler_seed;
	float *best;                  /* [scorer params] the best epoch's scorer weights (owned), or NULL */
	float *gh;                    /* [seeds, hidden] dL/dembeddings of a batch (host) */
	size_t gh_cap;
	bw_stage hstage;              /* host view of a batch's embeddings */
};

void bw_ltrain_set_lr(bw_ltrain *lt, double lr) { lt->so.lr = lr; }

void bw_ltrain_close(bw_ltrain *lt)
{
	if (!lt)
		return;
	burrow_edge_sampler_close(lt->sampler);
	bw_scorer_close(lt->scorer);
	if (lt->cpu_open)
		bw_backend_release(&lt->cpu);
	bw_free(lt->sm);
	bw_free(lt->sv);
	bw_free(lt->gh);
	bw_free(lt->best);
	bw_stage_free(&lt->hstage);
	bw_free(lt);
}

/* The scorer and its optimizer: the model's kind and settings, state in host arrays. */
static int scorer_open(burrow_trainer *t, bw_ltrain *lt)
{
	const burrow_train_opts *o = &t->o;
	const bw_backend_cfg cfg = {.threads = o->threads};
	int st;
	if ((st = bw_scorer_open(&lt->scorer, o->scorer, o->hidden, bw_key(o->seed, 0x5C0E), o->threads)) ||
	    (st = bw_backend_open(&lt->cpu, BW_BACKEND_CPU, &cfg)))
		return st;
	lt->cpu_open = true;
	const int64_t n = lt->scorer->num_params;
	lt->so = (bw_optim){.kind = o->optimizer, .dev = lt->cpu.dev, .lr = o->lr, .weight_decay = o->weight_decay,
			    .momentum = o->momentum, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .n = n};
	lt->sm = bw_calloc((size_t)n + 1, sizeof *lt->sm);
	lt->sv = bw_calloc((size_t)n + 1, sizeof *lt->sv);
	if (!lt->sm || !lt->sv)
		return BURROW_E_NOMEM;
	lt->so.m = lt->sm;
	lt->so.v = lt->sv;
	return 0;
}

int bw_ltrain_open(burrow_trainer *t)
{
	const burrow_train_opts *o = &t->o;
	const char *dir = bw_dataset_dir(t->ds);
	if (o->full_graph || o->eval_fanout[0])
		return bw_err(BURROW_E_UNSUPPORTED, "%s: link prediction trains in mini-batches and evaluates layer-wise "
						    "(no --full-graph, no --eval-fanout) in this version",
			      dir);
	if (o->neg < 0 || o->neg > 1024 || burrow_scorer_parse(burrow_scorer_name(o->scorer)) < 0 ||
	    (o->neg_mode != BURROW_NEG_DST && o->neg_mode != BURROW_NEG_BOTH))
		return bw_err(BURROW_E_INVAL, "train: --neg %d, scorer %d, negative mode %d: want 0 .. 1024 negatives, "
					      "dot or mlp, dst or both", o->neg, o->scorer, o->neg_mode);
	bw_ltrain *lt = bw_calloc(1, sizeof *lt);
	if (!lt)
		return BURROW_E_NOMEM;
	t->link = lt;
	int st = 0;
	for (int i = 0; !st && i < 3; i++)
		st = burrow_dataset_edge_split(t->ds, i, &lt->sp[i]);
	if (!st && lt->sp[BURROW_SPLIT_TRAIN].num_pos == 0)
		st = bw_err(BURROW_E_INVAL, "%s: the edge split has no training edges", dir);
	return st ? st : scorer_open(t, lt);
}

/* ------------------------------------------------------------ training */

/* The edge sampler for the seed in force, and the loader (no labels: the pairs are the
 * batch's targets). */
static int epoch_open(burrow_trainer *t, bw_ltrain *lt)
{
	int st;
	if (!t->loader) {
		const bw_loader_cfg lc = {
			.dev = t->be.dev,
			.compute = t->be.stream,
			.depth = t->o.prefetch,
			.thread = true,
			.num_layers = t->o.layers,
			.dim = bw_trainer_in_dim(t),
			.norm = t->gcn_norm,
			.blocks = t->o.model != BURROW_MODEL_MLP,
			.transpose = true,
			.gcn = t->o.model == BURROW_MODEL_GCN,
			.rows_unread = bw_trainer_rows_unread(t),
		};
		if ((st = bw_loader_open(&t->loader, &lc)))
			return st;
	}
	if (lt->sampler && lt->sampler_seed == t->o.seed)
		return 0;
	burrow_edge_sampler_close(lt->sampler);
	lt->sampler = NULL;
	burrow_edge_sampler_opts so;
	burrow_edge_sampler_defaults(&so);
	so.num_layers = t->o.layers;
	for (int l = 0; l < t->o.layers; l++)
		so.fanouts[l] = burrow_train_fanout(&t->o, l);
	so.batch_size = t->o.batch_size;
	so.neg = t->o.neg;
	so.neg_mode = t->o.neg_mode;
	so.seed = t->o.seed;
	so.exclude_reverse = t->info->symmetric || !lt->sp[0].directed;
	const burrow_edge_split *tr = &lt->sp[BURROW_SPLIT_TRAIN];
	if ((st = burrow_edge_sampler_open(&lt->sampler, t->graph, tr->pos, tr->num_pos, &so)))
		return st;
	lt->sampler_seed = t->o.seed;
	return 0;
}

/* One step: the encoder's embeddings of the batch's seeds, the scorer's loss over its pairs
 * (on the host), the gradients back through the encoder, both optimizers. */
static int link_step(burrow_trainer *t, bw_ltrain *lt, const bw_loaded *lb, double *loss)
{
	const burrow_edge_batch *eb = bw_edge_batch_of(lb->sb);
	const bw_device *dev = t->be.dev;
	const bw_tensor *z;
	const float *h;
	int st = bw_model_forward_keyed(&t->be, t->model, &lb->b, true, t->o.seed, 0, &z);
	if (st)
		return st;
	const int64_t rows = z->rows, d = z->cols;
	const size_t bytes = (size_t)(rows * d) * sizeof(float);
	if ((st = bw_grow(&lt->gh, &lt->gh_cap, (size_t)(rows * d) + 1, sizeof(float), false)) ||
	    (st = bw_stage_read(&lt->hstage, dev, z->data, bytes, (const void **)&h)))
		return st;
	memset(lt->gh, 0, bytes);
	if ((st = bw_scorer_loss(lt->scorer, h, eb->src, eb->dst, eb->label, eb->num_pairs, loss, lt->gh)))
		return st;
	if (!isfinite(*loss))
		return bw_err(BURROW_E_RANGE, "training loss is %s at epoch %llu, batch %llu; stopped before the update "
					      "(try a lower --lr, or check the features for NaN or Inf)",
			      isnan(*loss) ? "NaN" : "infinite", (unsigned long long)lb->b.epoch + 1,
			      (unsigned long long)lb->b.index + 1);
	if ((st = bw_tensor_reshape(&t->glogits, dev, rows, d)) ||
	    (st = bw_device_upload(dev, t->glogits.data, lt->gh, bytes)) ||
	    (st = bw_model_backward_input(&t->be, t->model, &lb->b, &t->glogits, t->emb ? bw_emb_grad(t->emb) : NULL)))
		return st;
	t->wversion++;
	if ((st = bw_optim_step(&t->be, t->optim, t->model->params, t->model->grads)))
		return st;
	if (t->emb)
		bw_emb_step(t->emb, lb->sb, t->optim->lr, t->optim->step);
	return lt->scorer->num_params ? bw_optim_step(&lt->cpu, &lt->so, lt->scorer->params, lt->scorer->grads) : 0;
}

static int epoch_steps(burrow_trainer *t, bw_ltrain *lt, int64_t num, burrow_epoch_stats *es, double *loss_sum)
{
	for (int64_t k = 0; k < num; k++) {
		bw_loaded lb;
		int st = bw_loader_next(t->loader, &lb);
		es->sample_s += lb.load_s;
		es->io_wait_s += lb.io_wait_s;
		if (st)
			return st;
		lb.b.epoch = (uint64_t)t->epoch;
		lb.b.index = (uint64_t)k;
		const double a = bw_now_s();
		double loss;
		st = bw_trainer_batch_input(t, &lb);
		if (!st)
			st = link_step(t, lt, &lb, &loss);
		if (!st)
			st = bw_loader_done(t->loader);
		es->compute_s += bw_now_s() - a;
		if (st)
			return st;
		*loss_sum += loss;
		if (t->o.progress)
			t->o.progress(t->o.progress_user, "train", (uint64_t)(k + 1), (uint64_t)num);
	}
	return 0;
}

int bw_ltrain_epoch(burrow_trainer *t, burrow_epoch_stats *es)
{
	bw_ltrain *lt = t->link;
	const double t0 = bw_now_s();
	int st;
	if ((st = epoch_open(t, lt)))
		return st;
	int64_t num = burrow_edge_sampler_num_batches(lt->sampler);
	if (t->o.max_batches > 0 && t->o.max_batches < num)
		num = t->o.max_batches;
	burrow_store_stats s0 = {.size = sizeof s0}, s1 = {.size = sizeof s1};
	if (t->store)
		burrow_store_get_stats(t->store, &s0);
	bw_producer p;
	bw_edge_epoch ee;
	bw_producer_edge_epoch(&p, &ee, lt->sampler, t->epoch);
	double loss_sum = 0;
	bw_rows none;
	if (t->emb)
		bw_emb_train_rows(t->emb, &none);
	if (!(st = bw_loader_start(t->loader, &p, t->emb ? &none : &t->feat_rows, num)))
		st = epoch_steps(t, lt, num, es, &loss_sum);
	bw_loader_stop(t->loader);
	if (st)
		return st;
	if (t->store)
		burrow_store_get_stats(t->store, &s1);
	es->batches = num;
	es->loss = num ? loss_sum / (double)num : 0.0;
	es->train_acc = -1.0;
	bw_trainer_epoch_io(es, &s0, &s1);
	es->epoch_s = bw_now_s() - t0;
	return 0;
}

/* ------------------------------------------------------------ evaluation */

/* Every node's embedding: in memory while [N, hidden] fits half of opts.mem_bytes (0: no
 * limit), else spilled to a scratch npy; read back by id through a source of rows. */
typedef struct emb_out {
	burrow_trainer *t;
	float *mem;                   /* owned */
	char *path;                   /* the spill, owned */
	int reg;
	bw_npy_writer w;
	bool writing;
	bw_rows rows;                 /* over mem or path, once complete */
	bool rows_open;
} emb_out;

static int emb_sink(void *ctx, int64_t r0, const bw_tensor *z)
{
	emb_out *e = ctx;
	const bw_device *dev = e->t->be.dev;
	const size_t bytes = (size_t)(z->rows * z->cols) * sizeof(float);
	if (e->mem)
		return bw_device_download(dev, e->mem + r0 * z->cols, z->data, bytes);
	const void *host;
	int st = bw_stage_read(&e->t->stage, dev, z->data, bytes, &host);
	return st ? st : bw_npy_writer_append(&e->w, host, bytes);
}

static void emb_free(emb_out *e)
{
	if (e->rows_open)
		bw_rows_close(&e->rows);
	if (e->writing)
		bw_npy_writer_abort(&e->w);
	if (e->path) {
		unlink(e->path);
		bw_tmp_drop(e->reg);
	}
	bw_free(e->path);
	bw_aligned_free(e->mem);
}

static int embeddings(burrow_trainer *t, emb_out *e, int64_t *spilled)
{
	const int64_t n = t->info->num_nodes, d = t->o.hidden;
	const double bytes = (double)n * (double)d * sizeof(float);
	int st;
	*e = (emb_out){.t = t, .reg = -1};
	if (t->o.mem_bytes == 0 || bytes <= (double)t->o.mem_bytes / 2) {
		if (!(e->mem = bw_aligned_alloc(64, (size_t)bytes + 1)))
			return BURROW_E_NOMEM;
	} else {
		char name[64];
		snprintf(name, sizeof name, "burrow-link-emb-%ld-%llu.npy", (long)getpid(),
			 (unsigned long long)t->spill_seq++);
		const char *root = bw_scratch_dir(t->scratch_dir);
		const int64_t shape[2] = {n, d};
		if (!(e->path = bw_path_join(root, name)))
			return BURROW_E_NOMEM;
		e->reg = bw_tmp_add(e->path);
		if ((st = bw_npy_writer_open(&e->w, e->path, BURROW_DTYPE_F32, 2, shape, BW_NPY_ALIGN)))
			return st;
		e->writing = true;
	}
	if ((st = bw_trainer_infer(t, emb_sink, e, spilled)))
		return st;
	if (e->mem) {
		bw_rows_from_memory(&e->rows, e->mem, n, d, t->be.threads);
	} else {
		e->writing = false;
		if ((st = bw_npy_writer_commit(&e->w)) || (st = bw_rows_open_npy(&e->rows, e->path)))
			return st;
		*spilled += (int64_t)bytes;
	}
	e->rows_open = true;
	return 0;
}

/* Scores of n pairs (src[i * stride], dst[i * stride]) with global ids, in chunks: their
 * endpoints' embeddings gathered, then scored. */
typedef struct score_buf {
	int64_t ids[2 * SCORE_CHUNK];
	int32_t src[SCORE_CHUNK], dst[SCORE_CHUNK];
	float *h;                     /* [2 SCORE_CHUNK, hidden] */
} score_buf;

static int score_pairs(bw_ltrain *lt, emb_out *e, score_buf *sb, const int64_t *src, int64_t sstride,
		       const int64_t *dst, int64_t dstride, int64_t n, float *out)
{
	int st = 0;
	for (int64_t c0 = 0; !st && c0 < n; c0 += SCORE_CHUNK) {
		const int64_t c = BW_MIN(SCORE_CHUNK, n - c0);
		for (int64_t i = 0; i < c; i++) {
			sb->ids[i] = src[(c0 + i) * sstride];
			sb->ids[c + i] = dst[(c0 + i) * dstride];
			sb->src[i] = (int32_t)i;
			sb->dst[i] = (int32_t)(c + i);
		}
		if (!(st = e->rows.gather(&e->rows, sb->ids, 2 * c, sb->h)))
			st = bw_scorer_score(lt->scorer, sb->h, sb->src, sb->dst, c, out + c0);
	}
	return st;
}

/* Split s's metric and ROC-AUC. Pairs negatives: Hits@K of the positives against all of
 * them; per source: MRR of each positive against its K; none: negatives drawn uniformly for
 * each positive's source (one each, keyed by the seed and the split). */
static int eval_split(burrow_trainer *t, bw_ltrain *lt, emb_out *e, score_buf *sb, int s, double *metric, double *auc)
{
	const burrow_edge_split *sp = &lt->sp[s];
	const int64_t np = sp->num_pos, k = sp->neg == BURROW_EDGE_NEG_PER_SOURCE ? sp->k : 1;
	const int64_t nn = sp->neg == BURROW_EDGE_NEG_PAIRS ? sp->num_neg : np * k;
	float *pos = bw_malloc((size_t)np * sizeof *pos + 1), *neg = bw_malloc((size_t)nn * sizeof *neg + 1);
	int64_t *drawn = NULL;
	int st = pos && neg ? 0 : BURROW_E_NOMEM;
	*metric = *auc = -1;
	if (!st && (np == 0 || nn == 0)) /* nothing to rank */
		goto out;
	if (!st)
		st = score_pairs(lt, e, sb, sp->pos, 2, sp->pos + 1, 2, np, pos);
	if (!st && sp->neg == BURROW_EDGE_NEG_PAIRS) {
		st = score_pairs(lt, e, sb, sp->neg_pairs, 2, sp->neg_pairs + 1, 2, nn, neg);
	} else if (!st && sp->neg == BURROW_EDGE_NEG_PER_SOURCE) {
		for (int64_t j = 0; !st && j < k; j++) /* column j: each positive's source against its j-th */
			st = score_pairs(lt, e, sb, sp->pos, 2, sp->neg_dst + j, k, np, neg + j * np);
		float *row = bw_malloc((size_t)nn * sizeof *row + 1); /* [np, k] row-major for MRR */
		for (int64_t i = 0; row && i < np; i++)
			for (int64_t j = 0; j < k; j++)
				row[i * k + j] = neg[j * np + i];
		st = st ? st : row ? 0 : BURROW_E_NOMEM;
		if (!st)
			memcpy(neg, row, (size_t)nn * sizeof *neg);
		bw_free(row);
	} else if (!st) {
		if (!(drawn = bw_malloc((size_t)np * sizeof *drawn + 1))) {
			st = BURROW_E_NOMEM;
			goto out;
		}
		bw_rng r;
		bw_rng_seed(&r, bw_key(bw_key(t->o.seed, 0xE7A1), (uint64_t)s));
		for (int64_t i = 0; i < np; i++)
			drawn[i] = (int64_t)bw_rng_below(&r, (uint64_t)t->info->num_nodes);
		st = score_pairs(lt, e, sb, sp->pos, 2, drawn, 1, np, neg);
	}
	if (!st)
		st = burrow_metric_auc(pos, np, neg, nn, auc);
	if (!st && sp->metric == BURROW_EDGE_METRIC_MRR)
		st = burrow_metric_mrr(pos, neg, np, k, metric);
	else if (!st && sp->metric == BURROW_EDGE_METRIC_HITS)
		st = burrow_metric_hits(pos, np, neg, nn, sp->metric_k, metric);
	else if (!st)
		*metric = *auc;
out:
	bw_free(pos);
	bw_free(neg);
	bw_free(drawn);
	return st;
}

int bw_ltrain_evaluate(burrow_trainer *t, burrow_eval_stats *ev)
{
	bw_ltrain *lt = t->link;
	const burrow_edge_split *sp = &lt->sp[BURROW_SPLIT_VALID];
	emb_out e = {.reg = -1};
	score_buf *sb = bw_malloc(sizeof *sb);
	int st = sb ? 0 : BURROW_E_NOMEM;
	if (!st && !(sb->h = bw_malloc((size_t)(2 * SCORE_CHUNK * t->o.hidden) * sizeof(float))))
		st = BURROW_E_NOMEM;
	if (!st)
		st = embeddings(t, &e, &ev->spilled_bytes);
	ev->metric = sp->metric == BURROW_EDGE_METRIC_HITS ? BURROW_METRIC_HITS
		   : sp->metric == BURROW_EDGE_METRIC_MRR ? BURROW_METRIC_MRR
							   : BURROW_METRIC_AUC;
	ev->metric_k = sp->metric == BURROW_EDGE_METRIC_HITS ? sp->metric_k : 0;
	ev->train_acc = -1;
	if (!st)
		st = eval_split(t, lt, &e, sb, BURROW_SPLIT_VALID, &ev->valid_acc, &ev->valid_auc);
	if (!st)
		st = eval_split(t, lt, &e, sb, BURROW_SPLIT_TEST, &ev->test_acc, &ev->test_auc);
	emb_free(&e);
	if (sb)
		bw_free(sb->h);
	bw_free(sb);
	return st;
}

/* ------------------------------------------------------------ checkpoints */

int bw_ltrain_ck_arrays(burrow_trainer *t, bw_ck_array *a)
{
	bw_ltrain *lt = t->link;
	const int64_t n = lt->scorer->num_params;
	if (!n)
		return 0;
	a[0] = (bw_ck_array){.data = &lt->scorer->params, .n = n};
	a[1] = (bw_ck_array){.data = &lt->sm, .n = n};
	a[2] = (bw_ck_array){.data = &lt->sv, .n = n};
	return 3;
}

void bw_ltrain_loaded(burrow_trainer *t)
{
	bw_ltrain *lt = t->link;
	lt->so.m = lt->sm; /* the load replaced the arrays */
	lt->so.v = lt->sv;
	lt->so.step = t->optim->step;
}

int bw_ltrain_keep_best(burrow_trainer *t, bool use)
{
	bw_ltrain *lt = t->link;
	const size_t bytes = (size_t)lt->scorer->num_params * sizeof(float);
	if (!bytes)
		return 0;
	if (use) {
		if (lt->best)
			memcpy(lt->scorer->params, lt->best, bytes);
		return 0;
	}
	if (!lt->best && !(lt->best = bw_malloc(bytes)))
		return BURROW_E_NOMEM;
	memcpy(lt->best, lt->scorer->params, bytes);
	return 0;
}
