/* habits.c: the training habits every PyG script has: early stopping on the valid metric,
 * learning-rate schedules (torch.optim.lr_scheduler's rules) and row-normalized features; the
 * state both the trainer and distributed training keep, and its checks. */
#define _GNU_SOURCE /* M_PI */
#include "driver.h"

#include <math.h>
#include <string.h>

static const char *const schedule_names[] = {"none", "step", "cosine", "plateau"};

int burrow_lr_schedule_parse(const char *name)
{
	for (int i = 0; name && i < 4; i++)
		if (!strcmp(name, schedule_names[i]))
			return i;
	return -1;
}

const char *burrow_lr_schedule_name(int schedule)
{
	return schedule >= 0 && schedule < 4 ? schedule_names[schedule] : "unknown";
}

int bw_habits_check(const burrow_train_opts *o)
{
	if (o->patience < 0 || o->lr_patience < 0)
		return bw_err(BURROW_E_INVAL, "train: patience and lr patience must be >= 0, got %d and %d", o->patience,
			      o->lr_patience);
	if (burrow_lr_schedule_parse(burrow_lr_schedule_name(o->lr_schedule)) < 0)
		return bw_err(BURROW_E_INVAL, "train: unknown lr schedule %d", o->lr_schedule);
	if (o->lr_schedule == BURROW_LR_STEP && o->lr_step < 1)
		return bw_err(BURROW_E_INVAL, "train: the step schedule needs lr_step >= 1 (epochs between reductions), got %d",
			      o->lr_step);
	if ((o->lr_schedule == BURROW_LR_STEP || o->lr_schedule == BURROW_LR_PLATEAU) &&
	    !(o->lr_gamma > 0 && o->lr_gamma < 1))
		return bw_err(BURROW_E_INVAL, "train: lr gamma must lie in (0, 1), got %g", o->lr_gamma);
	if (!(o->lr_min >= 0 && o->lr_min <= o->lr))
		return bw_err(BURROW_E_INVAL, "train: lr min must lie in [0, lr = %g], got %g", o->lr, o->lr_min);
	return 0;
}

void bw_habits_init(bw_habits *h, const burrow_train_opts *o)
{
	*h = (bw_habits){.base_lr = o->lr, .lr = o->lr};
}

double bw_habits_epoch_lr(bw_habits *h, const burrow_train_opts *o, int epoch)
{
	const double e = epoch;
	switch (o->lr_schedule) {
	case BURROW_LR_STEP: h->lr = h->base_lr * pow(o->lr_gamma, floor(e / o->lr_step)); break;
	case BURROW_LR_COSINE:
		h->lr = o->epochs > 0 ? o->lr_min + (h->base_lr - o->lr_min) * (1 + cos(M_PI * e / o->epochs)) / 2
				      : h->base_lr;
		break;
	case BURROW_LR_PLATEAU: break; /* h->lr: what the evaluations made it */
	default: h->lr = h->base_lr;
	}
	return h->lr;
}

void bw_habits_evaluated(bw_habits *h, const burrow_train_opts *o, double valid, bool improved)
{
	if (valid < 0) /* no valid split: nothing to wait for */
		return;
	if (improved) {
		h->stale = 0;
		h->plateau_bad = 0;
		return;
	}
	h->stale++;
	if (o->lr_schedule == BURROW_LR_PLATEAU && ++h->plateau_bad > o->lr_patience) {
		const double next = fmax(h->lr * o->lr_gamma, o->lr_min);
		if (h->lr - next > 1e-8) /* torch's eps: smaller changes are skipped */
			h->lr = next;
		h->plateau_bad = 0;
	}
}

bool bw_habits_stop(const bw_habits *h, const burrow_train_opts *o)
{
	return o->patience > 0 && h->stale >= o->patience;
}

void bw_normalize_rows(float *x, int64_t n, int64_t dim, int threads)
{
#pragma omp parallel for schedule(dynamic, bw_row_chunk(dim)) num_threads(bw_threads(threads)) if (n * dim > 65536)
	for (int64_t i = 0; i < n; i++) {
		float *r = x + i * dim;
		double s = 0;
		for (int64_t c = 0; c < dim; c++)
			s += r[c];
		if (s == 0)
			continue;
		for (int64_t c = 0; c < dim; c++)
			r[c] = (float)(r[c] / s);
	}
}
