/* outputs.c: what a trained model gives back: any layer's embeddings for every node,
 * predictions (a class, or softmax probabilities, per node), and the best epoch's weights
 * kept in memory so that those outputs can come from the best model rather than the last. */
#include "driver.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------ the best epoch's weights */

int bw_trainer_keep_best(burrow_trainer *t)
{
	const size_t bytes = (size_t)t->model->num_params * sizeof(float);
	if (!t->best_params && !(t->best_params = bw_malloc(bytes + 1)))
		return BURROW_E_NOMEM;
	int st = bw_device_download(t->be.dev, t->best_params, t->model->params, bytes);
	if (!st && t->link)
		st = bw_ltrain_keep_best(t, false);
	if (!st && t->emb)
		st = bw_emb_keep_best(t->emb, false);
	t->best_params_epoch = st ? -1 : t->epoch;
	return st;
}

int burrow_trainer_use_best(burrow_trainer *t)
{
	int st = bw_trainer_not_typed(t, "the best epoch's weights");
	if (st)
		return st;
	if (t->best.epoch < 0)
		return bw_err(BURROW_E_NOTFOUND, "trainer: nothing was evaluated yet: no best epoch");
	if (!t->best_params || t->best_params_epoch != t->best.epoch)
		return bw_err(BURROW_E_NOTFOUND,
			      "trainer: the best epoch's (%d) weights are not in memory (they were evaluated before "
			      "the checkpoint this trainer loaded; its best.ckpt holds them)",
			      t->best.epoch);
	bw_model_memo_drop(t->model);
	if (t->link)
		(void)bw_ltrain_keep_best(t, true);
	if (t->emb)
		(void)bw_emb_keep_best(t->emb, true);
	return bw_device_upload(t->be.dev, t->model->params, t->best_params,
				(size_t)t->model->num_params * sizeof(float));
}

/* ------------------------------------------------------------ embeddings */

typedef struct npy_ctx {
	burrow_trainer *t;
	bw_npy_writer w;
} npy_ctx;

static int npy_sink(void *ctx, int64_t r0, const bw_tensor *z)
{
	(void)r0;
	npy_ctx *c = ctx;
	const size_t bytes = (size_t)(z->rows * z->cols) * sizeof(float);
	const void *host;
	int st = bw_stage_read(&c->t->stage, c->t->be.dev, z->data, bytes, &host);
	return st ? st : bw_npy_writer_append(&c->w, host, bytes);
}

/* A typed trainer's outputs are its relational model's logits on the target type, from
 * layer-wise typed inference (hinfer.c); BURROW_E_UNSUPPORTED for what it lacks. */
static int typed_outputs(const burrow_trainer *t, const char *what, int layer)
{
	if (!t->typed)
		return 0;
	if (!t->typed->model)
		return bw_err(BURROW_E_UNSUPPORTED, "%s: %s: the MLP of a typed dataset has no layer-wise outputs in "
						    "this version (evaluate it with burrow eval)", what, bw_dataset_dir(t->ds));
	if (layer != t->o.layers)
		return bw_err(BURROW_E_UNSUPPORTED, "%s: %s: a typed model gives its last layer's output (the target "
						    "type's logits) in this version, not layer %d's", what,
			      bw_dataset_dir(t->ds), layer);
	return 0;
}

/* Layer-wise inference through the last layer: the logits of every node (of the target type). */
static int infer_logits(burrow_trainer *t, bw_infer_sink sink, void *ctx, int64_t *spilled)
{
	return t->typed ? bw_trainer_hinfer(t, sink, ctx, spilled) : bw_trainer_infer(t, sink, ctx, spilled);
}

int burrow_trainer_embed_layer(burrow_trainer *t, int layer, const char *out_npy)
{
	const int L = t->o.layers;
	if (layer == 0)
		layer = L;
	if (layer < 1 || layer > L)
		return bw_err(BURROW_E_INVAL, "embed: layer %d is not in [1, %d] (the model has %d layers)", layer, L, L);
	int st = typed_outputs(t, "embed", layer);
	if (st)
		return st;
	int64_t din, dout = t->info->num_classes;
	if (!t->typed)
		bw_model_layer_dims(&t->model->cfg, layer - 1, &din, &dout);
	npy_ctx c = {.t = t};
	const int64_t shape[2] = {t->info->num_nodes, dout};
	if ((st = bw_npy_writer_open(&c.w, out_npy, BURROW_DTYPE_F32, 2, shape, BW_NPY_ALIGN)))
		return st;
	int64_t spilled;
	if ((st = t->typed ? infer_logits(t, npy_sink, &c, &spilled)
			   : bw_trainer_infer_upto(t, layer, npy_sink, &c, &spilled))) {
		bw_npy_writer_abort(&c.w);
		return st;
	}
	return bw_npy_writer_commit(&c.w);
}

/* ------------------------------------------------------------ predictions */

/* predict's sink. Every node: rows go straight to the writer in order. A list of nodes:
 * order[] holds the list's positions sorted by node id, and each chunk fills the positions
 * whose node it covers into out ([n, width], held in memory). */
typedef struct pred_ctx {
	burrow_trainer *t;
	bool proba;
	bool multi;             /* multi-label: sigmoid per task, or int8 p > 0.5 per task */
	int64_t classes;
	bw_dbuf pred;           /* [chunk rows] argmax on the device */
	float *prob;            /* [chunk rows, classes] host softmax */
	int64_t prob_cap;
	const int64_t *nodes;   /* [n] or NULL: every node */
	const int64_t *order;   /* [n] positions of nodes, by node id */
	int64_t n, next;        /* next: the first entry of order not yet filled */
	void *out;              /* [n, width] with a list of nodes */
	bw_npy_writer w;        /* every node */
} pred_ctx;

/* softmax of each logits row in double, rounded to float32: rows sum to 1 within float32 rounding */
static void softmax_rows(const float *z, int64_t rows, int64_t c, float *p)
{
	for (int64_t i = 0; i < rows; i++) {
		const float *zi = z + i * c;
		float *pi = p + i * c;
		double m = zi[0], s = 0;
		for (int64_t k = 1; k < c; k++)
			m = zi[k] > m ? zi[k] : m;
		for (int64_t k = 0; k < c; k++)
			s += exp((double)zi[k] - m);
		for (int64_t k = 0; k < c; k++)
			pi[k] = (float)(exp((double)zi[k] - m) / s);
	}
}

/* Multi-label: each logit's sigmoid (proba) into p, or its label (p > 0.5, the logit > 0) as int8. */
static void multi_rows(const float *z, int64_t n, bool proba, void *out)
{
	for (int64_t i = 0; i < n; i++)
		if (proba)
			((float *)out)[i] = (float)(1 / (1 + exp(-(double)z[i])));
		else
			((int8_t *)out)[i] = (int8_t)(z[i] > 0);
}

static int pred_sink(void *ctx, int64_t r0, const bw_tensor *z)
{
	pred_ctx *a = ctx;
	burrow_trainer *t = a->t;
	const bw_device *dev = t->be.dev;
	const int64_t rows = z->rows, c = a->classes;
	const void *host;
	int st;
	size_t row_bytes;
	if (a->proba || a->multi) {
		const float *zh;
		if ((st = bw_stage_read(&t->stage, dev, z->data, (size_t)(rows * c) * sizeof(float), (const void **)&zh)))
			return st;
		if (rows * c > a->prob_cap) {
			float *q = bw_realloc(a->prob, (size_t)(rows * c) * sizeof *q);
			if (!q)
				return BURROW_E_NOMEM;
			a->prob = q;
			a->prob_cap = rows * c;
		}
		if (a->multi)
			multi_rows(zh, rows * c, a->proba, a->prob);
		else
			softmax_rows(zh, rows, c, a->prob);
		host = a->prob;
		row_bytes = (size_t)c * (a->proba ? sizeof(float) : 1);
	} else { /* the same argmax evaluation takes, so predictions and eval's accuracy agree */
		const size_t bytes = (size_t)rows * sizeof(int32_t);
		if ((st = bw_dbuf_reserve(&a->pred, dev, bytes)) || (st = bw_argmax(&t->be, z, a->pred.ptr)) ||
		    (st = bw_stage_read(&t->stage, dev, a->pred.ptr, bytes, &host)))
			return st;
		row_bytes = sizeof(int32_t);
	}
	if (!a->nodes)
		return bw_npy_writer_append(&a->w, host, (size_t)rows * row_bytes);
	while (a->next < a->n && a->nodes[a->order[a->next]] < r0 + rows) {
		const int64_t pos = a->order[a->next++];
		memcpy((char *)a->out + (size_t)pos * row_bytes, (const char *)host + (size_t)(a->nodes[pos] - r0) * row_bytes,
		       row_bytes);
	}
	return 0;
}

/* order[0 .. n) = 0 .. n-1 sorted by nodes[] (a stable merge sort, O(n log n)) */
static int sort_positions(const int64_t *nodes, int64_t n, int64_t **out)
{
	int64_t *a = bw_malloc((size_t)(n ? n : 1) * sizeof *a), *b = bw_malloc((size_t)(n ? n : 1) * sizeof *b);
	if (!a || !b) {
		bw_free(a);
		bw_free(b);
		return BURROW_E_NOMEM;
	}
	for (int64_t i = 0; i < n; i++)
		a[i] = i;
	for (int64_t w = 1; w < n; w *= 2) {
		for (int64_t lo = 0; lo < n; lo += 2 * w) {
			const int64_t mid = BW_MIN(lo + w, n), hi = BW_MIN(lo + 2 * w, n);
			int64_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				b[k++] = nodes[a[j]] < nodes[a[i]] ? a[j++] : a[i++];
			while (i < mid)
				b[k++] = a[i++];
			while (j < hi)
				b[k++] = a[j++];
		}
		int64_t *s = a;
		a = b;
		b = s;
	}
	bw_free(b);
	*out = a;
	return 0;
}

int burrow_trainer_predict(burrow_trainer *t, const int64_t *nodes, int64_t n, bool proba, const char *out_npy)
{
	int st = typed_outputs(t, "predict", t->o.layers);
	if (st)
		return st;
	if (t->link)
		return bw_err(BURROW_E_UNSUPPORTED, "%s: predict serves node classifiers; a link-prediction model gives its "
						    "node embeddings (burrow embed)", bw_dataset_dir(t->ds));
	const bool multi = t->task == BURROW_TASK_MULTILABEL;
	const int64_t N = t->info->num_nodes, c = multi ? t->tasks : t->info->num_classes;
	pred_ctx a = {.t = t, .proba = proba, .multi = multi, .classes = c, .nodes = nodes, .n = nodes ? n : N};
	const burrow_dtype dt = proba ? BURROW_DTYPE_F32 : multi ? BURROW_DTYPE_I8 : BURROW_DTYPE_I32;
	const int64_t shape[2] = {a.n, c};
	const int ndim = proba || multi ? 2 : 1;
	const size_t row_bytes = proba ? (size_t)c * sizeof(float) : multi ? (size_t)c : sizeof(int32_t);
	int64_t *order = NULL, spilled;
	if (nodes) {
		if (n < 0)
			return bw_err(BURROW_E_INVAL, "predict: %lld nodes", (long long)n);
		for (int64_t i = 0; i < n; i++)
			if (nodes[i] < 0 || nodes[i] >= N)
				return bw_err(BURROW_E_RANGE, "predict: node id %lld (entry %lld) is not in [0, %lld)",
					      (long long)nodes[i], (long long)i, (long long)N);
		if ((st = sort_positions(nodes, n, &order)))
			return st;
		a.order = order;
		if (!(a.out = bw_malloc((size_t)n * row_bytes + 1))) {
			st = BURROW_E_NOMEM;
			goto out;
		}
		st = infer_logits(t, pred_sink, &a, &spilled);
		if (!st)
			st = bw_npy_save(out_npy, dt, ndim, shape, a.out, BW_NPY_ALIGN);
	} else {
		if ((st = bw_npy_writer_open(&a.w, out_npy, dt, ndim, shape, BW_NPY_ALIGN)))
			goto out;
		if ((st = infer_logits(t, pred_sink, &a, &spilled)))
			bw_npy_writer_abort(&a.w);
		else
			st = bw_npy_writer_commit(&a.w);
	}
out:
	bw_free(order);
	bw_free(a.out);
	bw_free(a.prob);
	bw_dbuf_free(&a.pred);
	return st;
}
