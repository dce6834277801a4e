/* embed.c: learned input embeddings of a homogeneous dataset without features (ogbl-ddi): a
 * table [N, D] in host memory as the first layer's input, Glorot-uniform from the seed (as
 * OGB's ogbl-ddi examples initialize torch.nn.Embedding), put into each batch at its step
 * (never ahead, so prefetching reads no stale rows), updated with Adam on the rows the batch
 * touched, read by layer-wise inference and embed as the features are, and checkpointed with
 * its moments. */
#include "driver.h"

#include <math.h>
#include <string.h>

struct bw_emb {
	int64_t n, d;
	float *w, *m, *v;     /* [n, d] the table and its Adam moments (owned) */
	float *best;          /* [n, d] the best epoch's table (owned), or NULL */
	bw_tensor x, gx;      /* a batch's rows and their gradient (CPU) */
};

/* The loader's source while embeddings train: the rows are put in at the step. */
static int no_gather(bw_rows *r, const int64_t *ids, int64_t n, float *out)
{
	(void)r;
	(void)ids;
	(void)n;
	(void)out;
	return 0;
}

int bw_emb_open(burrow_trainer *t)
{
	const burrow_train_opts *o = &t->o;
	const char *dir = bw_dataset_dir(t->ds);
	const int64_t n = t->info->num_nodes, d = o->embed_dim > 0 ? o->embed_dim : o->hidden;
	const double bytes = 3.0 * (double)n * (double)d * sizeof(float);
	if (o->full_graph)
		return bw_err(BURROW_E_UNSUPPORTED, "%s: the dataset has no features; its learned embeddings train in "
						    "mini-batches only (no --full-graph) in this version", dir);
	if (t->be.dev->kind != BW_DEVICE_CPU)
		return bw_err(BURROW_E_UNSUPPORTED, "%s: the dataset has no features; learned embeddings train on the CPU "
						    "only in this version", dir);
	if (o->mem_bytes > 0 && bytes > (double)o->mem_bytes)
		return bw_err(BURROW_E_NOMEM, "%s: learned embeddings [%lld, %lld] with their Adam moments take %.0f MiB, "
					      "more than --mem %.0f MiB (a smaller --embed-dim, or more --mem)",
			      dir, (long long)n, (long long)d, bytes / 1048576.0, (double)o->mem_bytes / 1048576.0);
	bw_emb *e = bw_calloc(1, sizeof *e);
	if (!e)
		return BURROW_E_NOMEM;
	t->emb = e;
	e->n = n;
	e->d = d;
	e->x = bw_tensor_empty(t->be.dev);
	e->gx = bw_tensor_empty(t->be.dev);
	const size_t k = (size_t)n * (size_t)d;
	if (!(e->w = bw_malloc(k * sizeof(float) + 1)) || !(e->m = bw_calloc(k + 1, sizeof(float))) ||
	    !(e->v = bw_calloc(k + 1, sizeof(float))))
		return BURROW_E_NOMEM;
	bw_rng r; /* Glorot-uniform over [N, D], as OGB's ogbl-ddi examples initialize theirs */
	bw_rng_seed(&r, bw_key(o->seed ^ 0x656d626564ULL, 0x686f6d6fULL));
	const double a = sqrt(6.0 / (double)(n + d));
	for (size_t i = 0; i < k; i++)
		e->w[i] = (float)((2.0 * bw_rng_uniform(&r) - 1.0) * a);
	bw_rows_from_memory(&t->feat_rows, e->w, n, d, t->be.threads);
	return 0;
}

void bw_emb_close(bw_emb *e)
{
	if (!e)
		return;
	bw_free(e->w);
	bw_free(e->m);
	bw_free(e->v);
	bw_free(e->best);
	bw_tensor_free(&e->x);
	bw_tensor_free(&e->gx);
	bw_free(e);
}

int64_t bw_emb_dim(const bw_emb *e) { return e ? e->d : 0; }

void bw_emb_train_rows(const bw_emb *e, bw_rows *r)
{
	*r = (bw_rows){.num_rows = e->n, .dim = e->d, .gather = no_gather};
}

void bw_emb_eval_rows(burrow_trainer *t)
{
	bw_rows_from_memory(&t->feat_rows, t->emb->w, t->emb->n, t->emb->d, t->be.threads);
}

int bw_emb_put(bw_emb *e, const burrow_batch *sb, bw_batch *b)
{
	const int64_t n = sb->num_input, d = e->d;
	int st = bw_tensor_reshape(&e->x, bw_device_cpu(), n, d);
	if (st)
		return st;
	for (int64_t i = 0; i < n; i++)
		memcpy(e->x.data + i * d, e->w + sb->input_ids[i] * d, (size_t)d * sizeof(float));
	b->x = bw_tensor_view(bw_device_cpu(), e->x.data, n, d);
	return 0;
}

bw_tensor *bw_emb_grad(bw_emb *e) { return &e->gx; }

void bw_emb_adam_rows(float *table, float *m, float *v, int64_t d, const int64_t *ids, int64_t n, const float *g,
		      double lr, int64_t step)
{
	const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
	const double c1 = 1 - pow(b1, (double)step), c2 = 1 - pow(b2, (double)step);
	const double a = lr * sqrt(c2) / c1;
	for (int64_t i = 0; i < n; i++) {
		const int64_t row = ids[i] * d;
		const float *gi = g + i * d;
		float *w = table + row, *mi = m + row, *vi = v + row;
		for (int64_t j = 0; j < d; j++) {
			mi[j] = (float)(b1 * mi[j] + (1 - b1) * gi[j]);
			vi[j] = (float)(b2 * vi[j] + (1 - b2) * (double)gi[j] * gi[j]);
			w[j] -= (float)(a * mi[j] / (sqrt(vi[j]) + eps));
		}
	}
}

void bw_emb_step(bw_emb *e, const burrow_batch *sb, double lr, int64_t step)
{
	bw_emb_adam_rows(e->w, e->m, e->v, e->d, sb->input_ids, sb->num_input, e->gx.data, lr, step);
}

int bw_emb_ck_arrays(bw_emb *e, bw_ck_array *a)
{
	const int64_t k = e->n * e->d;
	a[0] = (bw_ck_array){.data = &e->w, .n = k};
	a[1] = (bw_ck_array){.data = &e->m, .n = k};
	a[2] = (bw_ck_array){.data = &e->v, .n = k};
	return 3;
}

int bw_emb_keep_best(bw_emb *e, bool use)
{
	const size_t bytes = (size_t)(e->n * e->d) * sizeof(float);
	if (use) {
		if (e->best)
			memcpy(e->w, e->best, bytes);
		return 0;
	}
	if (!e->best && !(e->best = bw_malloc(bytes + 1)))
		return BURROW_E_NOMEM;
	memcpy(e->best, e->w, bytes);
	return 0;
}
