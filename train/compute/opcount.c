/* opcount.c: adding an op's time and FLOPs to the backend's counter (opcount.h). */
#include "opcount.h"

_Static_assert(BURROW_OP_PRODUCT == 0 && BURROW_OP_OPTIMIZER + 1 == BURROW_OP_CLASSES, "op classes");

int bw_op_record(const bw_backend *be, bw_op_class c, double flops, double t0, int st)
{
	if (st)
		return st;
	if (be->stream && (st = bw_stream_sync(be->dev, be->stream)))
		return st;
	bw_op_count *n = be->count;
	const double dt = bw_now_s() - t0;
	n->calls[c]++;
	n->seconds[c] += dt;
	n->flops[c] += flops;
	if (c == BURROW_OP_PRODUCT && n->layer >= 0 && n->layer < BURROW_MAX_LAYERS) {
		n->layer_calls[n->layer]++;
		n->layer_seconds[n->layer] += dt;
		n->layer_flops[n->layer] += flops;
	}
	return 0;
}
