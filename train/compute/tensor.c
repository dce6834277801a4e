/* tensor.c: dense float32 tensors, owned (growing on demand) or borrowed. */
#include "train.h"

#include <string.h>

#define TENSOR_ALIGN 64

static int grow(bw_tensor *t, int64_t need)
{
	if (need <= t->cap)
		return 0;
	float *p = bw_aligned_alloc(TENSOR_ALIGN, (size_t)need * sizeof *p);
	if (!p)
		return bw_err(BURROW_E_NOMEM, "tensor: out of memory for %lld floats", (long long)need);
	bw_aligned_free(t->data);
	t->data = p;
	t->cap = need;
	return 0;
}

int bw_tensor_alloc(bw_tensor *t, int64_t rows, int64_t cols)
{
	memset(t, 0, sizeof *t);
	t->owned = true;
	int st = bw_tensor_reshape(t, rows, cols);
	if (!st && t->data)
		memset(t->data, 0, (size_t)(rows * cols) * sizeof(float));
	return st;
}

int bw_tensor_reshape(bw_tensor *t, int64_t rows, int64_t cols)
{
	if (rows < 0 || cols < 0)
		return bw_err(BURROW_E_INVAL, "tensor: negative shape [%lld, %lld]", (long long)rows, (long long)cols);
	if (!t->data && !t->cap)
		t->owned = true;
	const int64_t need = rows * cols;
	if (t->owned) {
		int st = grow(t, need ? need : 1);
		if (st)
			return st;
	} else if (need > t->rows * t->cols) {
		return bw_err(BURROW_E_INVAL, "tensor: a borrowed [%lld, %lld] tensor cannot grow to [%lld, %lld]",
			      (long long)t->rows, (long long)t->cols, (long long)rows, (long long)cols);
	}
	t->rows = rows;
	t->cols = cols;
	return 0;
}

bw_tensor bw_tensor_view(float *data, int64_t rows, int64_t cols)
{
	return (bw_tensor){.data = data, .rows = rows, .cols = cols, .cap = 0, .owned = false};
}

bw_tensor bw_tensor_rows(const bw_tensor *t, int64_t r0, int64_t n)
{
	BW_ASSERT(r0 >= 0 && n >= 0 && r0 + n <= t->rows);
	return bw_tensor_view(t->data + r0 * t->cols, n, t->cols);
}

void bw_tensor_free(bw_tensor *t)
{
	if (t->owned)
		bw_aligned_free(t->data);
	memset(t, 0, sizeof *t);
}
