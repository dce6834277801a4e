/* device_cpu.c: the CPU device: host memory, copies are memmove, streams and events
 * complete at once (the CPU runs everything in call order). */
#include "device.h"

#include <string.h>

#define CPU_ALIGN 64

static int cpu_alloc(const bw_device *d, size_t bytes, void **out)
{
	(void)d;
	if (!(*out = bw_aligned_alloc(CPU_ALIGN, bytes)))
		return bw_err(BURROW_E_NOMEM, "cpu: out of memory for %zu bytes", bytes);
	return 0;
}

static void cpu_free(const bw_device *d, void *p)
{
	(void)d;
	bw_aligned_free(p);
}

static int cpu_memset(const bw_device *d, void *p, int byte, size_t n, bw_stream *s)
{
	(void)d, (void)s;
	memset(p, byte, n);
	return 0;
}

/* upload, download and device-to-device copies are all host copies */
static int cpu_copy(const bw_device *d, void *dst, const void *src, size_t n, bw_stream *s)
{
	(void)d, (void)s;
	if (dst != src)
		memmove(dst, src, n);
	return 0;
}

/* The CPU runs everything in call order: a stream is a token, an event is complete when
 * recorded. Both are real allocations so that open / close pair up as on a GPU. */
struct bw_stream { int unused; };
struct bw_event { int unused; };

static int cpu_stream_open(const bw_device *d, bw_stream **out)
{
	(void)d;
	return (*out = bw_calloc(1, sizeof **out)) ? 0 : BURROW_E_NOMEM;
}

static void cpu_stream_close(const bw_device *d, bw_stream *s)
{
	(void)d;
	bw_free(s);
}

static int cpu_stream_sync(const bw_device *d, bw_stream *s)
{
	(void)d, (void)s;
	return 0;
}

static int cpu_event_open(const bw_device *d, bw_event **out)
{
	(void)d;
	return (*out = bw_calloc(1, sizeof **out)) ? 0 : BURROW_E_NOMEM;
}

static void cpu_event_close(const bw_device *d, bw_event *e)
{
	(void)d;
	bw_free(e);
}

static int cpu_event_record(const bw_device *d, bw_event *e, bw_stream *s)
{
	(void)d, (void)e, (void)s;
	return 0;
}

static int cpu_event_wait(const bw_device *d, bw_stream *s, bw_event *e)
{
	(void)d, (void)e, (void)s;
	return 0;
}

static int cpu_event_sync(const bw_device *d, bw_event *e)
{
	(void)d, (void)e;
	return 0;
}

static const bw_device_i cpu_device_i = {
	.alloc = cpu_alloc,
	.free = cpu_free,
	.memset = cpu_memset,
	.upload = cpu_copy,
	.download = cpu_copy,
	.copy = cpu_copy,
	.host_alloc = cpu_alloc,
	.host_free = cpu_free,
	.stream_open = cpu_stream_open,
	.stream_close = cpu_stream_close,
	.stream_sync = cpu_stream_sync,
	.event_open = cpu_event_open,
	.event_close = cpu_event_close,
	.event_record = cpu_event_record,
	.event_wait = cpu_event_wait,
	.event_sync = cpu_event_sync,
};

static const bw_device cpu_device = {
	.iface = &cpu_device_i,
	.kind = BW_DEVICE_CPU,
	.index = 0,
	.host_memory = true,
	.name = "cpu",
};

const bw_device *bw_device_cpu(void) { return &cpu_device; }
