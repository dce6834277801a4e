/* device.c: the device layer's calls (through each device's table), device names, growable
 * device arrays and host views of device memory. */
#include "device.h"

#include <stdlib.h>
#include <string.h>

int bw_device_alloc(const bw_device *d, size_t bytes, void **out)
{
	*out = NULL;
	return d->iface->alloc(d, bytes ? bytes : 1, out);
}

void bw_device_free(const bw_device *d, void *p)
{
	if (p)
		d->iface->free(d, p);
}

int bw_device_memset(const bw_device *d, void *p, int byte, size_t n)
{
	return n ? d->iface->memset(d, p, byte, n, NULL) : 0;
}

int bw_device_upload(const bw_device *d, void *dst, const void *src, size_t n)
{
	return n ? d->iface->upload(d, dst, src, n, NULL) : 0;
}

int bw_device_download(const bw_device *d, void *dst, const void *src, size_t n)
{
	return n ? d->iface->download(d, dst, src, n, NULL) : 0;
}

int bw_device_copy(const bw_device *d, void *dst, const void *src, size_t n)
{
	return n && dst != src ? d->iface->copy(d, dst, src, n, NULL) : 0;
}

int bw_device_memset_async(const bw_device *d, void *p, int byte, size_t n, bw_stream *s)
{
	return n ? d->iface->memset(d, p, byte, n, s) : 0;
}

int bw_device_upload_async(const bw_device *d, void *dst, const void *src, size_t n, bw_stream *s)
{
	return n ? d->iface->upload(d, dst, src, n, s) : 0;
}

int bw_device_download_async(const bw_device *d, void *dst, const void *src, size_t n, bw_stream *s)
{
	return n ? d->iface->download(d, dst, src, n, s) : 0;
}

int bw_device_copy_async(const bw_device *d, void *dst, const void *src, size_t n, bw_stream *s)
{
	return n && dst != src ? d->iface->copy(d, dst, src, n, s) : 0;
}

int bw_device_host_alloc(const bw_device *d, size_t bytes, void **out)
{
	*out = NULL;
	return d->iface->host_alloc(d, bytes ? bytes : 1, out);
}

void bw_device_host_free(const bw_device *d, void *p)
{
	if (p)
		d->iface->host_free(d, p);
}

int bw_stream_open(const bw_device *d, bw_stream **out)
{
	*out = NULL;
	return d->iface->stream_open(d, out);
}

void bw_stream_close(const bw_device *d, bw_stream *s)
{
	if (s)
		d->iface->stream_close(d, s);
}

int bw_stream_sync(const bw_device *d, bw_stream *s) { return d->iface->stream_sync(d, s); }

int bw_event_open(const bw_device *d, bw_event **out)
{
	*out = NULL;
	return d->iface->event_open(d, out);
}

void bw_event_close(const bw_device *d, bw_event *e)
{
	if (e)
		d->iface->event_close(d, e);
}

int bw_event_record(const bw_device *d, bw_event *e, bw_stream *s) { return d->iface->event_record(d, e, s); }
int bw_event_wait(const bw_device *d, bw_stream *s, bw_event *e) { return d->iface->event_wait(d, s, e); }
int bw_event_sync(const bw_device *d, bw_event *e) { return d->iface->event_sync(d, e); }

/* ------------------------------------------------------------ names */

int bw_device_parse(const char *name, int *kind, int *index)
{
	*kind = BW_DEVICE_CPU;
	*index = 0;
	if (!name || !*name || !strcmp(name, "cpu"))
		return 0;
	if (!strcmp(name, "cuda")) {
		*kind = BW_DEVICE_CUDA;
		return 0;
	}
	if (!strncmp(name, "cuda:", 5) && name[5] >= '0' && name[5] <= '9') {
		char *end;
		const long v = strtol(name + 5, &end, 10);
		if (!*end && v >= 0 && v < 1024) {
			*kind = BW_DEVICE_CUDA;
			*index = (int)v;
			return 0;
		}
	}
	return bw_err(BURROW_E_INVAL, "device '%s': expected cpu, cuda or cuda:N", name);
}

/* ------------------------------------------------------------ growable device arrays */

int bw_dbuf_reserve(bw_dbuf *b, const bw_device *d, size_t bytes)
{
	if (b->owned && b->dev == d && bytes <= b->cap)
		return 0;
	const size_t cap = b->owned && b->dev == d ? BW_MAX(bytes, b->cap + b->cap / 2) : bytes;
	void *p;
	int st = bw_device_alloc(d, cap, &p);
	if (st)
		return st;
	bw_dbuf_free(b);
	*b = (bw_dbuf){.dev = d, .ptr = p, .cap = cap, .owned = true};
	return 0;
}

int bw_dbuf_from_host(bw_dbuf *b, const bw_device *d, const void *src, size_t bytes)
{
	return bw_dbuf_from_host_async(b, d, src, bytes, NULL);
}

int bw_dbuf_from_host_async(bw_dbuf *b, const bw_device *d, const void *src, size_t bytes, bw_stream *s)
{
	if (d->host_memory) {
		if (b->owned)
			bw_dbuf_free(b);
		*b = (bw_dbuf){.dev = d, .ptr = (void *)src, .cap = bytes, .owned = false};
		return 0;
	}
	int st = bw_dbuf_reserve(b, d, bytes);
	return st ? st : s ? bw_device_upload_async(d, b->ptr, src, bytes, s) : bw_device_upload(d, b->ptr, src, bytes);
}

void bw_dbuf_free(bw_dbuf *b)
{
	if (b->owned)
		bw_device_free(b->dev, b->ptr);
	*b = (bw_dbuf){.dev = b->dev};
}

/* ------------------------------------------------------------ host views */

static int stage_grow(bw_stage *s, const bw_device *d, size_t n)
{
	if (s->buf && s->dev == d && n <= s->cap)
		return 0;
	bw_stage_free(s);
	int st = bw_device_host_alloc(d, n, &s->buf);
	if (st)
		return st;
	s->dev = d;
	s->cap = n;
	return 0;
}

int bw_stage_read(bw_stage *s, const bw_device *d, const void *p, size_t n, const void **host)
{
	*host = NULL;
	if (d->host_memory) {
		*host = p;
		return 0;
	}
	int st = stage_grow(s, d, n);
	if (!st && !(st = bw_device_download(d, s->buf, p, n)))
		*host = s->buf;
	return st;
}

int bw_stage_write(bw_stage *s, const bw_device *d, void *p, size_t n, void **host)
{
	*host = NULL;
	if (d->host_memory) {
		*host = p;
		return 0;
	}
	int st = stage_grow(s, d, n);
	if (!st)
		*host = s->buf;
	return st;
}

int bw_stage_write_commit(bw_stage *s, const bw_device *d, void *p, const void *host, size_t n)
{
	(void)s;
	return host == p ? 0 : bw_device_upload(d, p, host, n);
}

void bw_stage_free(bw_stage *s)
{
	if (s->buf)
		bw_device_host_free(s->dev, s->buf);
	s->buf = NULL;
	s->cap = 0;
}
