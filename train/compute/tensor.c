/* tensor.c: dense float32 tensors on a device, owned (growing on demand) or borrowed. */
#include "tensor.h"

#include <string.h>

static int grow(bw_tensor *t, int64_t need)
{
	if (need <= t->cap)
		return 0;
	const bw_device *d = bw_device_or_cpu(t->dev);
	void *p;
	int st = bw_device_alloc(d, (size_t)need * sizeof(float), &p);
	if (st)
		return st;
	bw_device_free(d, t->data);
	t->data = p;
	t->cap = need;
	return 0;
}

bw_tensor bw_tensor_empty(const bw_device *dev) { return (bw_tensor){.owned = true, .dev = dev}; }

int bw_tensor_alloc(bw_tensor *t, const bw_device *dev, int64_t rows, int64_t cols)
{
	*t = bw_tensor_empty(dev);
	int st = bw_tensor_reshape(t, NULL, rows, cols);
	if (!st && t->data)
		st = bw_device_memset(bw_device_or_cpu(dev), t->data, 0, (size_t)(rows * cols) * sizeof(float));
	return st;
}

int bw_tensor_reshape(bw_tensor *t, const bw_device *dev, int64_t rows, int64_t cols)
{
	if (rows < 0 || cols < 0)
		return bw_err(BURROW_E_INVAL, "tensor: negative shape [%lld, %lld]", (long long)rows, (long long)cols);
	if (!t->data && !t->cap) {
		t->owned = true;
		if (dev)
			t->dev = dev;
	} else if (dev && bw_device_or_cpu(dev) != bw_device_or_cpu(t->dev)) {
		return bw_err(BURROW_E_INVAL, "tensor: a tensor on %s used on %s", bw_device_or_cpu(t->dev)->name,
			      dev->name);
	}
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

bw_tensor bw_tensor_view(const bw_device *dev, float *data, int64_t rows, int64_t cols)
{
	return (bw_tensor){.data = data, .rows = rows, .cols = cols, .cap = 0, .owned = false, .dev = dev};
}

bw_tensor bw_tensor_rows(const bw_tensor *t, int64_t r0, int64_t n)
{
	BW_ASSERT(r0 >= 0 && n >= 0 && r0 + n <= t->rows);
	bw_tensor v = bw_tensor_view(t->dev, t->data + r0 * t->cols, n, t->cols);
	if (r0 == 0) /* its first rows: its sparse copy serves them too (bw_matmul) */
		v.sp = t->sp;
	if (r0 == 0 && n == t->rows) /* all of it: its transposed copy too */
		v.tr = t->tr;
	return v;
}

int bw_tensor_zero_rows(bw_tensor *t, int64_t r0, int64_t n)
{
	BW_ASSERT(r0 >= 0 && n >= 0 && r0 + n <= t->rows);
	return bw_device_memset(bw_device_or_cpu(t->dev), t->data + r0 * t->cols, 0,
				(size_t)(n * t->cols) * sizeof(float));
}

int bw_tensor_from_host(bw_tensor *t, const bw_device *dev, const float *src, int64_t rows, int64_t cols)
{
	dev = bw_device_or_cpu(dev);
	if (dev->host_memory) {
		bw_tensor_free(t);
		*t = bw_tensor_view(dev, (float *)src, rows, cols);
		return 0;
	}
	if (!t->owned)
		*t = bw_tensor_empty(dev);
	int st = bw_tensor_reshape(t, dev, rows, cols);
	return st ? st : bw_device_upload(dev, t->data, src, (size_t)(rows * cols) * sizeof(float));
}

void bw_tensor_free(bw_tensor *t)
{
	const bw_device *d = t->dev;
	if (t->owned && t->data)
		bw_device_free(bw_device_or_cpu(d), t->data);
	*t = bw_tensor_empty(d);
}
