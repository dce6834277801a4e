/* device.h: compute devices: where buffers live, how bytes cross between host and device
 * (synchronously, or asynchronously on a stream), and events that order streams. The
 * shape of ggml-backend's device -> buffer -> tensor in C: every tensor and every array a
 * kernel reads names the device that holds it, and data reaches a device only through
 * these calls. The CPU device's memory is host memory: its copies are memcpy, its streams
 * and events are already complete, and a host view of its memory is the memory itself. */
#ifndef BURROW_DEVICE_H
#define BURROW_DEVICE_H

#include "../core/internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum bw_device_kind { BW_DEVICE_CPU = 0, BW_DEVICE_CUDA = 1 };

/* A device name as the CLI takes it, "cpu", "cuda" (= cuda:0) or "cuda:N" (NULL or "":
 * the CPU), into a kind (enum bw_device_kind) and an index; BURROW_E_INVAL naming it when
 * it is neither. Whether the device is there: burrow_device_check. */
int bw_device_parse(const char *name, int *kind, int *index);

typedef struct bw_device bw_device;
typedef struct bw_stream bw_stream; /* a device's queue of work, opaque (NULL: the device's default order) */
typedef struct bw_event bw_event;   /* a point in a stream's work, opaque */

/* What a device implements. Every slot returns a status and receives the device. A NULL
 * stream means "synchronous": the call returns when the bytes are in place. The CPU fills
 * every slot; a GPU device fills them with its runtime (cudaMemcpyAsync, events). */
typedef struct bw_device_i {
	int (*alloc)(const bw_device *d, size_t bytes, void **out);          /* device memory, 64-byte aligned */
	void (*free)(const bw_device *d, void *p);                           /* NULL is a no-op */
	int (*memset)(const bw_device *d, void *p, int byte, size_t n, bw_stream *s);
	int (*upload)(const bw_device *d, void *dst, const void *host_src, size_t n, bw_stream *s);
	int (*download)(const bw_device *d, void *host_dst, const void *src, size_t n, bw_stream *s);
	int (*copy)(const bw_device *d, void *dst, const void *src, size_t n, bw_stream *s); /* device to device */
	int (*host_alloc)(const bw_device *d, size_t bytes, void **out);     /* pinned host memory */
	void (*host_free)(const bw_device *d, void *p);
	int (*stream_open)(const bw_device *d, bw_stream **out);
	void (*stream_close)(const bw_device *d, bw_stream *s);
	int (*stream_sync)(const bw_device *d, bw_stream *s);                 /* wait for s's work */
	int (*event_open)(const bw_device *d, bw_event **out);
	void (*event_close)(const bw_device *d, bw_event *e);
	int (*event_record)(const bw_device *d, bw_event *e, bw_stream *s);  /* e completes with s's work so far */
	int (*event_wait)(const bw_device *d, bw_stream *s, bw_event *e);    /* s's later work waits for e */
	int (*event_sync)(const bw_device *d, bw_event *e);                  /* the host waits for e */
} bw_device_i;

struct bw_device {
	const bw_device_i *iface;
	int kind;          /* enum bw_device_kind */
	int index;         /* CUDA:N; 0 for the CPU */
	bool host_memory;  /* its buffers are host memory (host views are free) */
	char name[16];     /* "cpu", "cuda:0" */
	void *ctx;         /* the implementation's own (borrowed by the device) */
};

/* The CPU device (static: never freed). */
const bw_device *bw_device_cpu(void);
/* d, or the CPU device when d is NULL (a zeroed tensor lives on the CPU). */
static inline const bw_device *bw_device_or_cpu(const bw_device *d) { return d ? d : bw_device_cpu(); }

/* ------------------------------------------------------------ buffers and copies */
/* Each translates the device's own error into a Burrow status naming the call. */
int bw_device_alloc(const bw_device *d, size_t bytes, void **out);
void bw_device_free(const bw_device *d, void *p);
int bw_device_memset(const bw_device *d, void *p, int byte, size_t n);
int bw_device_upload(const bw_device *d, void *dst, const void *host_src, size_t n);
int bw_device_download(const bw_device *d, void *host_dst, const void *src, size_t n);
int bw_device_copy(const bw_device *d, void *dst, const void *src, size_t n);
/* The same, queued on stream s; the host memory must stay valid until s is synchronized
 * (pinned memory from bw_device_host_alloc makes the copy truly asynchronous). */
int bw_device_memset_async(const bw_device *d, void *p, int byte, size_t n, bw_stream *s);
int bw_device_upload_async(const bw_device *d, void *dst, const void *host_src, size_t n, bw_stream *s);
int bw_device_download_async(const bw_device *d, void *host_dst, const void *src, size_t n, bw_stream *s);
int bw_device_copy_async(const bw_device *d, void *dst, const void *src, size_t n, bw_stream *s);
/* Pinned host memory for transfers to and from d (the CPU: aligned host memory). */
int bw_device_host_alloc(const bw_device *d, size_t bytes, void **out);
void bw_device_host_free(const bw_device *d, void *p);

/* ------------------------------------------------------------ streams and events */
int bw_stream_open(const bw_device *d, bw_stream **out);
void bw_stream_close(const bw_device *d, bw_stream *s);
int bw_stream_sync(const bw_device *d, bw_stream *s);
int bw_event_open(const bw_device *d, bw_event **out);
void bw_event_close(const bw_device *d, bw_event *e);
int bw_event_record(const bw_device *d, bw_event *e, bw_stream *s);
int bw_event_wait(const bw_device *d, bw_stream *s, bw_event *e);
int bw_event_sync(const bw_device *d, bw_event *e);

/* ------------------------------------------------------------ growable device arrays */

/* An array in device memory that grows on demand. On a host-memory device it may instead
 * borrow host memory (bw_dbuf_from_host), which is how data "moves" to the CPU for free.
 * A zeroed struct is empty, on the CPU. */
typedef struct bw_dbuf {
	const bw_device *dev;
	void *ptr;         /* device memory; owned when `owned`, else borrowed host memory */
	size_t cap;        /* bytes allocated (owned) */
	bool owned;
} bw_dbuf;

/* At least `bytes` of owned device memory on d (contents undefined after growth). */
int bw_dbuf_reserve(bw_dbuf *b, const bw_device *d, size_t bytes);
/* The bytes of host src on d: borrowed where d's memory is host memory, else uploaded into
 * owned memory (synchronously). src must outlive a borrowing b. */
int bw_dbuf_from_host(bw_dbuf *b, const bw_device *d, const void *src, size_t bytes);
/* The same with the upload queued on stream s (src must stay valid until s has done it). */
int bw_dbuf_from_host_async(bw_dbuf *b, const bw_device *d, const void *src, size_t bytes, bw_stream *s);
void bw_dbuf_free(bw_dbuf *b);

/* ------------------------------------------------------------ host views */

/* Host staging for views of device memory; grows, reused across calls. */
typedef struct bw_stage {
	const bw_device *dev;
	void *buf;         /* pinned host memory of `dev` (owned) */
	size_t cap;
} bw_stage;

/* A host pointer to read n bytes of d's memory at p: p itself on a host-memory device,
 * else a synchronous download into s. Valid until the next call on s. */
int bw_stage_read(bw_stage *s, const bw_device *d, const void *p, size_t n, const void **host);
/* A host pointer to write n bytes bound for d's memory at p: p itself on a host-memory
 * device, else s's buffer; bw_stage_write_commit then uploads it (a no-op for p itself). */
int bw_stage_write(bw_stage *s, const bw_device *d, void *p, size_t n, void **host);
int bw_stage_write_commit(bw_stage *s, const bw_device *d, void *p, const void *host, size_t n);
void bw_stage_free(bw_stage *s);

#endif /* BURROW_DEVICE_H */
