/* device_cpu.c: the CPU device: host memory, copies are memmove, streams and events
 * complete at once (the CPU runs everything in call order). */
#include "device.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CPU_ALIGN 64

/* Allocations at least this large are checked against the memory, and counted while live. */
#define CPU_CHECK_BYTES ((size_t)256 << 20)
#define CPU_LARGE_MAX 256

/* The large buffers live now (pointer, bytes): the kernel overcommits, so buffers granted
 * together and written later (a loader's slots, a typed batch's per-relation tensors) pass a
 * look at MemAvailable one by one and then get the process killed when they are written. */
static struct {
	pthread_mutex_t mu;
	void *p[CPU_LARGE_MAX];
	size_t n[CPU_LARGE_MAX];
	size_t live;
} large = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* This process's resident anonymous memory (resident less file-backed shared pages), from
 * /proc/self/statm; 0 when it cannot tell. */
static size_t anon_resident(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long long size, res, shared;
	size_t got = 0;
	if (f && fscanf(f, "%llu %llu %llu", &size, &res, &shared) == 3 && res > shared)
		got = (size_t)(res - shared) * (size_t)sysconf(_SC_PAGESIZE);
	if (f)
		fclose(f);
	return got;
}

/* Refuse a large buffer that would not fit, in one line: with 256 MiB to spare, it and the
 * part of the live large buffers not yet written (their bytes beyond this process's resident
 * anonymous memory: granted, not yet counted by the kernel) must fit the memory available now,
 * and it with all live large buffers the machine's (or cgroup's) memory. A typed batch of 3
 * layers at fanouts 15,10,5 on gen mag 1/64 asks for tens of GB. */
static int cpu_fits(size_t bytes, size_t live)
{
	const size_t avail = bw_mem_available_at(NULL), total = bw_mem_total(), anon = anon_resident();
	const size_t unwritten = live > anon ? live - anon : 0;
	const size_t room = total != SIZE_MAX && total > live + CPU_CHECK_BYTES ? total - live - CPU_CHECK_BYTES : 0;
	if ((avail == SIZE_MAX || bytes + unwritten + CPU_CHECK_BYTES <= avail) && (total == SIZE_MAX || bytes <= room))
		return 0;
	return bw_err(BURROW_E_NOMEM,
		      "cpu: a buffer of %.2f GiB does not fit: %.2f GiB of memory available, %.2f GiB in buffers of "
		      "256 MiB or more already (%.2f GiB of them not yet written), %.2f GiB in all: lower the batch, "
		      "fanouts, layers or --prefetch",
		      (double)bytes / (1u << 30), avail == SIZE_MAX ? -1.0 : (double)avail / (1u << 30),
		      (double)live / (1u << 30), (double)unwritten / (1u << 30),
		      total == SIZE_MAX ? -1.0 : (double)total / (1u << 30));
}

static int cpu_alloc(const bw_device *d, size_t bytes, void **out)
{
	(void)d;
	*out = NULL;
	if (bytes < CPU_CHECK_BYTES) {
		if (!(*out = bw_aligned_alloc(CPU_ALIGN, bytes)))
			return bw_err(BURROW_E_NOMEM, "cpu: out of memory for %zu bytes", bytes);
		return 0;
	}
	pthread_mutex_lock(&large.mu);
	int st = cpu_fits(bytes, large.live), slot = -1;
	for (int i = 0; !st && i < CPU_LARGE_MAX && slot < 0; i++)
		if (!large.p[i])
			slot = i;
	if (!st && (slot < 0 || !(*out = bw_aligned_alloc(CPU_ALIGN, bytes))))
		st = bw_err(BURROW_E_NOMEM, "cpu: out of memory for %zu bytes", bytes);
	if (!st) {
		large.p[slot] = *out;
		large.n[slot] = bytes;
		large.live += bytes;
	}
	pthread_mutex_unlock(&large.mu);
	return st;
}

static void cpu_free(const bw_device *d, void *p)
{
	(void)d;
	if (!p)
		return;
	pthread_mutex_lock(&large.mu);
	for (int i = 0; i < CPU_LARGE_MAX; i++)
		if (large.p[i] == p) {
			large.live -= large.n[i];
			large.p[i] = NULL;
			break;
		}
	pthread_mutex_unlock(&large.mu);
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
