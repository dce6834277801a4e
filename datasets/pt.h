/* pt.h: a reader of PyTorch's torch.save files (the zip container of torch >= 1.6, and the
 * legacy stream of earlier versions; pickle protocols 2 to 4) that accepts only what OGB's
 * split/<kind>/{train,valid,test}.pt and OGB-LSC's split_dict.pt and meta.pt hold: a dict of
 * tensors or numpy arrays, with lists, tuples, numbers (numpy scalars too) and strings beside
 * them; any other global is refused. */
#ifndef BURROW_PT_H
#define BURROW_PT_H

#include "../core/internal.h"

#define BW_PT_MAX_DIMS 8

typedef struct bw_pt bw_pt;

/* One tensor (or numpy array) of the file, converted: integer and bool storages become int64,
 * float ones (half, float, double) float32, in row-major order whatever the strides (or
 * numpy's Fortran order) were. */
typedef struct bw_pt_tensor {
	burrow_dtype dtype;              /* BURROW_DTYPE_I64 or BURROW_DTYPE_F32 */
	int ndim;                        /* 0 .. BW_PT_MAX_DIMS */
	int64_t shape[BW_PT_MAX_DIMS];
	int64_t numel;
	void *data;                      /* [numel] of dtype; caller frees (bw_free); NULL when numel is 0 */
} bw_pt_tensor;

/* Open a .pt file: the plain file `path`, or (path NULL) the open file fd (dup'ed; the
 * caller keeps its own). name is shown in messages (borrowed). The pickle is read and
 * every tensor checked against its storage here; any refusal is one line naming name. */
int bw_pt_open(bw_pt **out, const char *name, const char *path, int fd);
/* Does the top-level dict hold key? */
bool bw_pt_has(const bw_pt *pt, const char *key);
/* The tensor stored under key in the top-level dict into *t (t->data is the caller's):
 * BURROW_E_NOTFOUND when the key is absent, BURROW_E_FORMAT when its value is not a tensor. */
int bw_pt_get(bw_pt *pt, const char *key, bw_pt_tensor *t);
/* The integer (or numpy integer scalar) under key in the top-level dict (OGB-LSC's meta.pt):
 * BURROW_E_NOTFOUND when absent, BURROW_E_FORMAT when not an integer. */
int bw_pt_get_int(const bw_pt *pt, const char *key, int64_t *v);
void bw_pt_close(bw_pt *pt);

#endif /* BURROW_PT_H */
