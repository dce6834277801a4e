/* multilabel.c: the multi-label task: the binary cross-entropy step's loss over the
 * known labels, and evaluation by OGB's ROC-AUC averaged over the tasks. */
#include "driver.h"

#include <string.h>

/* The labels of a batch's output rows: its seeds' rows of the dataset's [N, T]. */
static int batch_labels(burrow_trainer *t, const int64_t *seeds, int64_t n)
{
	const int64_t T = t->tasks;
	int st = bw_grow(&t->ml_batch, &t->ml_batch_cap, (size_t)(n * T), 1, false);
	for (int64_t i = 0; !st && i < n; i++)
		memcpy(t->ml_batch + i * T, t->mlabels + seeds[i] * T, (size_t)T);
	return st;
}

int bw_trainer_ml_loss(burrow_trainer *t, const bw_tensor *logits, const int64_t *seeds, bw_loss *ls)
{
	const bw_device *dev = t->be.dev;
	const int64_t rows = logits->rows, T = logits->cols;
	const size_t bytes = (size_t)(rows * T) * sizeof(float);
	const int8_t *y = t->mlabels;
	const int64_t *sel = NULL;
	int64_t nsel = 0;
	const float *x;
	float *g = t->glogits.data;
	int st;
	if (T != t->tasks)
		return bw_err(BURROW_E_INVAL, "loss: logits of %lld columns for %lld tasks", (long long)T, (long long)t->tasks);
	if (seeds)
		st = batch_labels(t, seeds, rows);
	else
		st = (sel = bw_trainer_split(t, BURROW_SPLIT_TRAIN, &nsel)) ? 0 : bw_err(BURROW_E_INVAL, "train: no training nodes");
	if (!st && !dev->host_memory)
		st = bw_grow(&t->ml_grad, &t->ml_grad_cap, (size_t)(rows * T), sizeof *t->ml_grad, false);
	if (st || (st = bw_stage_read(&t->stage, dev, logits->data, bytes, (const void **)&x)))
		return st;
	if (!dev->host_memory)
		g = t->ml_grad;
	if ((st = bw_bce_loss_host(x, rows, T, seeds ? t->ml_batch : y, sel, nsel, g, ls, t->be.threads)))
		return st;
	if (ls->bad) /* the dataset's labels are checked at open: a bug if reached */
		return bw_err(BURROW_E_RANGE, "loss: row %lld %s %lld", (long long)ls->bad_row,
			      ls->bad_is_row ? "selects row" : "has multi-label label", (long long)ls->bad_value);
	return dev->host_memory ? 0 : bw_device_upload(dev, t->glogits.data, g, bytes);
}

/* Layer-wise inference's sink: each chunk's logits into the scores. */
typedef struct score_ctx {
	burrow_trainer *t;
	float *scores; /* [N, T] */
} score_ctx;

static int score_sink(void *ctx, int64_t r0, const bw_tensor *z)
{
	score_ctx *c = ctx;
	const size_t bytes = (size_t)(z->rows * z->cols) * sizeof(float);
	const void *host;
	int st = bw_stage_read(&c->t->stage, c->t->be.dev, z->data, bytes, &host);
	if (!st)
		memcpy(c->scores + r0 * z->cols, host, bytes);
	return st;
}

int bw_trainer_ml_evaluate(burrow_trainer *t, unsigned want, double auc[3], int64_t *spilled_bytes)
{
	const int64_t N = t->info->num_nodes, T = t->tasks;
	float *scores = bw_malloc((size_t)(N * T) * sizeof *scores + 1);
	score_ctx c = {.t = t, .scores = scores};
	int st = scores ? 0 : BURROW_E_NOMEM;
	*spilled_bytes = 0;
	if (!st)
		st = t->o.eval_fanout[0] ? bw_trainer_eval_sampled_scores(t, want, scores)
					 : bw_trainer_infer(t, score_sink, &c, spilled_bytes);
	for (int s = 0; s < 3; s++) {
		int64_t n;
		const int64_t *ids = bw_trainer_split(t, s, &n);
		auc[s] = -1.0;
		if (st || !(want >> s & 1) || !ids)
			continue;
		st = burrow_metric_rocauc_tasks(scores, t->mlabels, N, T, ids, n, &auc[s], NULL);
		if (st == BURROW_E_INVAL) /* no task has both classes in this split: nothing to score */
			st = 0;
	}
	bw_free(scores);
	return st;
}
