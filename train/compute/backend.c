/* backend.c: the registry of compute backends: the only C file that asks whether the
 * build has CUDA. The CPU registers always; CUDA registers in CUDA builds (its table and
 * device are in backend_cuda.cu), where it reports the devices the runtime sees. */
#include "backend_impl.h"

#include <stdlib.h>
#include <string.h>

#ifdef BURROW_CUDA
#include "../../device/cuda_gateway.h"

int burrow_cuda_device_count(void) { return bw_cuda_device_count(); }

int burrow_cuda_device_describe(int index, char *buf, size_t cap)
{
	const int n = bw_cuda_device_count();
	if (index < 0 || index >= n)
		return bw_err(BURROW_E_UNSUPPORTED, "device cuda:%d: not present (%d CUDA devices)", index, n < 0 ? 0 : n);
	return bw_cuda_device_describe(index, buf, cap);
}
#define CUDA_REG bw_cuda_backend()
#else
int burrow_cuda_device_count(void)
{
	return bw_err(BURROW_E_UNSUPPORTED, "this libburrow was built without CUDA");
}

int burrow_cuda_device_describe(int index, char *buf, size_t cap)
{
	(void)index;
	if (cap)
		*buf = 0;
	return bw_err(BURROW_E_UNSUPPORTED, "this libburrow was built without CUDA");
}
#define CUDA_REG NULL
#endif

static const bw_backend_reg *registry(int i)
{
	const bw_backend_reg *all[] = {bw_cpu_backend(), CUDA_REG};
	int n = 0;
	for (int k = 0; k < (int)(sizeof all / sizeof *all); k++)
		if (all[k] && n++ == i)
			return all[k];
	return NULL;
}

int bw_backend_count(void)
{
	int n = 0;
	while (registry(n))
		n++;
	return n;
}

const bw_backend_reg *bw_backend_at(int i) { return i >= 0 ? registry(i) : NULL; }

const bw_backend_reg *bw_backend_find(int kind)
{
	for (int i = 0; registry(i); i++)
		if (registry(i)->kind == kind)
			return registry(i);
	return NULL;
}

const bw_ops *bw_backend_ops_hook;

int bw_backend_open(bw_backend *be, int kind, const bw_backend_cfg *cfg)
{
	memset(be, 0, sizeof *be);
	const bw_backend_reg *r = bw_backend_find(kind);
	if (!r)
		return kind == BW_BACKEND_CUDA
			       ? bw_err(BURROW_E_UNSUPPORTED, "device cuda: this burrow was built without CUDA "
							      "(rebuild with nvcc on PATH, or CUDA=1)")
			       : bw_err(BURROW_E_INVAL, "backend: unknown kind %d", kind);
	const int st = r->init(be, cfg);
	if (!st && bw_backend_ops_hook)
		be->ops = bw_backend_ops_hook;
	return st;
}

int bw_backend_init(bw_backend *be, int kind, int threads)
{
	const bw_backend_cfg cfg = {.index = 0, .threads = threads};
	return bw_backend_open(be, kind, &cfg);
}

void bw_backend_release(bw_backend *be)
{
	const bw_backend_reg *r = be->ops ? bw_backend_find(be->kind) : NULL;
	if (r)
		r->release(be);
}

const char *bw_backend_name(const bw_backend *be) { return be->ops->name; }

bool bw_ops_supports(const bw_ops *o, bw_op op)
{
	switch (op) {
	case BW_OP_SPMM:
		return o->spmm != NULL;
	case BW_OP_MAX_AGG:
		return o->seg_max_fwd && o->seg_max_bwd;
	case BW_OP_ATTENTION:
		return o->head_dot && o->head_dot_bwd && o->edge_softmax_fwd && o->edge_softmax_bwd && o->att_agg_fwd &&
		       o->att_agg_bwd;
	case BW_OP_LAYER_NORM:
		return o->row_norm_fwd && o->row_norm_bwd && o->col_scale && o->col_dot;
	case BW_OP_BATCH_NORM:
		return o->col_norm_fwd && o->col_norm_bwd && o->col_norm_apply && o->col_scale && o->col_dot;
	case BW_OP_EDGE_WEIGHT:
		return o->agg_w_fwd && o->agg_w_bwd;
	case BW_OP_COUNT:
		break;
	}
	return false;
}

bool bw_backend_supports(const bw_backend *be, bw_op op) { return bw_ops_supports(be->ops, op); }

const char *bw_op_name(bw_op op)
{
	static const char *const names[BW_OP_COUNT] = {
		[BW_OP_SPMM] = "sparse product (spmm)",
		[BW_OP_MAX_AGG] = "max aggregation (seg_max)",
		[BW_OP_ATTENTION] = "attention (head_dot, edge_softmax, att_agg)",
		[BW_OP_LAYER_NORM] = "layer normalization (row_norm, col_scale, col_dot)",
		[BW_OP_BATCH_NORM] = "batch normalization (col_norm, col_scale, col_dot)",
		[BW_OP_EDGE_WEIGHT] = "weighted aggregation (agg_w)",
	};
	return op >= 0 && op < BW_OP_COUNT ? names[op] : NULL;
}

/* bw_device_parse (device/) answers with a device kind: each backend has its kind's number. */
_Static_assert((int)BW_BACKEND_CPU == (int)BW_DEVICE_CPU && (int)BW_BACKEND_CUDA == (int)BW_DEVICE_CUDA,
	       "backend and device kinds differ");

int burrow_device_check(const char *device)
{
	int kind, index;
	int st = bw_device_parse(device, &kind, &index);
	if (st || kind == BW_BACKEND_CPU)
		return st;
	const bw_backend_reg *r = bw_backend_find(kind);
	if (!r)
		return bw_err(BURROW_E_UNSUPPORTED, "device %s: this burrow was built without CUDA "
						    "(rebuild with nvcc on PATH, or CUDA=1)", device);
	const int n = r->devices();
	if (n <= 0)
		return bw_err(BURROW_E_UNSUPPORTED, "device %s: no CUDA GPU on this machine (the CUDA runtime sees none)",
			      device);
	if (index >= n)
		return bw_err(BURROW_E_UNSUPPORTED, "device %s: this machine has %d CUDA device%s (cuda:0 .. cuda:%d)",
			      device, n, n == 1 ? "" : "s", n - 1);
	return 0;
}
