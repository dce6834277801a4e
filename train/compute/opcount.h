/* opcount.h: counting the compute ops as the dispatchers (ops.c) run them: each op class's
 * calls, seconds and FLOPs, and each model layer's products (burrow_op_stats). Off
 * (be->count NULL) it costs one pointer test per op; nothing it does touches the data. */
#ifndef BURROW_OPCOUNT_H
#define BURROW_OPCOUNT_H

#include "backend.h"

/* The classes are the public enum burrow_op_class's. */
typedef int bw_op_class;

/* What a backend with counting on adds to (be->count, borrowed; the trainer owns it). */
typedef struct bw_op_count {
	int layer;                          /* the model layer running now, -1 none (the model's loops set it) */
	int64_t calls[BURROW_OP_CLASSES];
	double seconds[BURROW_OP_CLASSES], flops[BURROW_OP_CLASSES];
	int64_t layer_calls[BURROW_MAX_LAYERS]; /* products only */
	double layer_seconds[BURROW_MAX_LAYERS], layer_flops[BURROW_MAX_LAYERS];
} bw_op_count;

/* Add one op that started at t0 (bw_op_start) and ended now: on a backend with a stream,
 * after waiting for it. Returns st. */
int bw_op_record(const bw_backend *be, bw_op_class c, double flops, double t0, int st);

static inline double bw_op_start(const bw_backend *be) { return be->count ? bw_now_s() : 0.0; }

/* The layer whose products follow (-1: none): the model's forward and backward loops. */
static inline void bw_op_layer(const bw_backend *be, int layer)
{
	if (be->count)
		be->count->layer = layer;
}

/* In a dispatcher: run `call` (a kernel's status), count it in class c with `flops` (an
 * expression evaluated only when counting), and return its status. A new op adds exactly
 * this line where it calls through the table:
 *     BW_OP_RETURN(BURROW_OP_PRODUCT, 2.0 * m * n * k, be->ops->gemm(be, ...)); */
#define BW_OP_RETURN(c, flops, call)                                                                         \
	do {                                                                                                 \
		const double t0_ = bw_op_start(be);                                                          \
		const int st_ = (call);                                                                      \
		return be->count ? bw_op_record(be, (c), (double)(flops), t0_, st_) : st_;                   \
	} while (0)

#endif /* BURROW_OPCOUNT_H */
