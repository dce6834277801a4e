/* store.c: the feature store: open, plan (sort, de-duplicate, merge rows into block reads),
 * tickets, copy-out into caller memory, stats. The engines are store_uring.c, store_pread.c
 * and store_mmap.c; the cache is store_cache.c. */
#define _GNU_SOURCE
#include "store_internal.h"

#include "../core/half.h"
#include "dataset_internal.h"
#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

bw_store_fault_fn bw_store_fault_hook;
bool bw_store_uring_refuse;

#define DEFAULT_QD 128
#define DEFAULT_MAX_READ ((size_t)64 << 10)
#define MAX_READ_LIMIT ((size_t)1 << 30)

static const char *const ENGINE_NAMES[] = {"uring", "pread", "mmap"};

void burrow_store_defaults(burrow_store_opts *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
	o->engine = BURROW_STORE_URING;
	o->queue_depth = DEFAULT_QD;
	o->threads = 0;
	o->max_read_bytes = DEFAULT_MAX_READ;
	o->out_dtype = BURROW_DTYPE_INVALID;
	o->direct = true;
}

const char *burrow_store_engine_name(int engine)
{
	return engine >= 0 && engine < 3 ? ENGINE_NAMES[engine] : NULL;
}

int burrow_store_engine_parse(const char *name)
{
	for (int i = 0; name && i < 3; i++)
		if (!strcmp(name, ENGINE_NAMES[i]))
			return i;
	return -1;
}

/* ------------------------------------------------------------ latency histogram */

/* Log-linear buckets: exact below 16 ns, then 8 per power of two (12% wide). */
static int lat_bucket(uint64_t ns)
{
	if (ns < 16)
		return (int)ns;
	int e = 63 - __builtin_clzll(ns);
	int b = 16 + (e - 4) * 8 + (int)((ns >> (e - 3)) & 7);
	return b < BW_LAT_BUCKETS ? b : BW_LAT_BUCKETS - 1;
}

static double lat_value(int b)
{
	if (b < 16)
		return b;
	int e = (b - 16) / 8 + 4, sub = (b - 16) % 8;
	double width = (double)((uint64_t)1 << (e - 3));
	return (8 + sub) * width + width / 2;
}

void bw_lat_add(bw_lat *h, uint64_t ns) { atomic_fetch_add_explicit(&h->n[lat_bucket(ns)], 1, memory_order_relaxed); }

/* ------------------------------------------------------------ sorting */

void bw_pairs_sort(bw_pair *p, bw_pair *tmp, size_t n, int bits)
{
	if (n < 64) { /* insertion sort, stable */
		for (size_t i = 1; i < n; i++) {
			bw_pair x = p[i];
			size_t j = i;
			for (; j > 0 && p[j - 1].id > x.id; j--)
				p[j] = p[j - 1];
			p[j] = x;
		}
		return;
	}
	enum { D = 11, R = 1 << D };
	size_t cnt[R];
	bw_pair *src = p, *dst = tmp;
	for (int shift = 0; shift < bits; shift += D) {
		memset(cnt, 0, sizeof cnt);
		for (size_t i = 0; i < n; i++)
			cnt[(src[i].id >> shift) & (R - 1)]++;
		if (cnt[(src[0].id >> shift) & (R - 1)] == n)
			continue; /* one digit value: the pass would not move anything */
		bw_exclusive_scan(cnt, R);
		for (size_t i = 0; i < n; i++)
			dst[cnt[(src[i].id >> shift) & (R - 1)]++] = src[i];
		BW_SWAP(src, dst);
	}
	if (src != p)
		memcpy(p, src, n * sizeof *p);
}

/* ------------------------------------------------------------ open */

static bool is_pow2(size_t x) { return x && !(x & (x - 1)); }

/* The device's logical block size for a file on it, from sysfs (the partition's parent for a
 * partition); 0 when unknown. */
static size_t sysfs_block_size(dev_t dev)
{
	static const char *const fmt[] = {"/sys/dev/block/%u:%u/queue/logical_block_size",
					  "/sys/dev/block/%u:%u/../queue/logical_block_size"};
	for (int i = 0; i < 2; i++) {
		char p[128];
		snprintf(p, sizeof p, fmt[i], major(dev), minor(dev));
		FILE *f = fopen(p, "r");
		if (!f)
			continue;
		unsigned long v = 0;
		int ok = fscanf(f, "%lu", &v) == 1;
		fclose(f);
		if (ok && v)
			return v;
	}
	return 0;
}

/* O_DIRECT alignment of fd: statx(STATX_DIOALIGN) where the kernel reports it, else the
 * device's logical block size (BLKSSZGET for a block device, sysfs for a file), else
 * st_blksize. *dio_ok is false when statx says the file cannot do direct I/O. */
static void dio_align(int fd, size_t *off_align, size_t *mem_align, bool *dio_ok)
{
	*off_align = 0;
	*mem_align = 0;
	*dio_ok = true;
#ifdef STATX_DIOALIGN
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN)) {
		if (!sx.stx_dio_offset_align) {
			*dio_ok = false;
		} else {
			*off_align = sx.stx_dio_offset_align;
			*mem_align = sx.stx_dio_mem_align;
		}
	}
#endif
	struct stat st;
	if (!*off_align && fstat(fd, &st) == 0) {
		int bs = 0;
		if (S_ISBLK(st.st_mode) && ioctl(fd, BLKSSZGET, &bs) == 0 && bs > 0)
			*off_align = (size_t)bs;
		else
			*off_align = sysfs_block_size(st.st_dev);
		if (!*off_align)
			*off_align = (size_t)st.st_blksize;
	}
	/* reads are widened to whole blocks and elements must not straddle one: keep it a power
	 * of two of at least 512 bytes */
	if (!is_pow2(*off_align) || *off_align < 512 || *off_align > ((size_t)1 << 20))
		*off_align = 4096;
	if (!is_pow2(*mem_align) || *mem_align < 4096)
		*mem_align = 4096;
}

static int open_file(burrow_store *s, bool direct)
{
	int st = bw_open_input(s->path, direct ? O_DIRECT : 0, &s->fd, NULL);
	if (st == BURROW_E_INVAL && direct && (st = bw_open_input(s->path, 0, &s->fd, NULL)) == 0) {
		bw_log(BURROW_LOG_WARN, "%s: the file system refuses O_DIRECT; reading through the page cache", s->path);
		direct = false;
	}
	if (st)
		return st;
	size_t oa, ma;
	bool dio_ok;
	dio_align(s->fd, &oa, &ma, &dio_ok);
	if (direct && !dio_ok) {
		bw_log(BURROW_LOG_WARN, "%s: the file system cannot do direct I/O on it; reading through the page cache",
		       s->path);
		close(s->fd);
		direct = false;
		if ((st = bw_open_input(s->path, 0, &s->fd, NULL)))
			return st;
	}
	s->info.direct = direct;
	s->info.block_bytes = oa;
	s->mem_align = ma > oa ? ma : oa;
	return 0;
}

static void stop_workers(burrow_store *s)
{
	pthread_mutex_lock(&s->qlock);
	s->stop = true;
	pthread_cond_broadcast(&s->work_cv);
	pthread_mutex_unlock(&s->qlock);
	for (int i = 0; i < s->nworkers; i++) {
		bw_worker *w = &s->workers[i];
		if (w->running)
			pthread_join(w->thread, NULL);
		w->running = false;
	}
	for (int i = 0; i < s->nworkers; i++) {
		bw_worker *w = &s->workers[i];
		if (w->engine && s->engine->fini)
			s->engine->fini(w);
		w->engine = NULL;
		bw_aligned_free(w->stage);
	}
	bw_free(s->workers);
	s->workers = NULL;
	s->nworkers = 0;
	s->stop = false;
}

/* Set up `threads` workers of engine e (each with its staging) and start their threads. */
static int start_engine(burrow_store *s, const bw_engine *e, int threads, int qd)
{
	s->engine = e;
	s->workers = bw_calloc((size_t)threads, sizeof *s->workers);
	if (!s->workers)
		return BURROW_E_NOMEM;
	s->nworkers = threads;
	size_t staging = 0;
	int st = 0;
	for (int i = 0; i < threads; i++) {
		bw_worker *w = &s->workers[i];
		w->s = s;
		w->index = i;
		w->slots = e == &bw_engine_uring ? qd / threads + (i < qd % threads) : 1;
		if (e != &bw_engine_mmap) {
			w->stage = bw_aligned_alloc(s->mem_align, (size_t)w->slots * s->slot_bytes);
			if (!w->stage) {
				st = BURROW_E_NOMEM;
				break;
			}
			staging += (size_t)w->slots * s->slot_bytes;
		}
		if (e->init && (st = e->init(w)) < 0)
			break;
	}
	for (int i = 0; !st && i < threads; i++) {
		int rc = pthread_create(&s->workers[i].thread, NULL, e->run, &s->workers[i]);
		if (rc) {
			st = bw_err_thread(rc, s->path, "a store thread");
			break;
		}
		s->workers[i].running = true;
	}
	if (st < 0) {
		stop_workers(s);
		return st;
	}
	s->info.engine = e == &bw_engine_uring ? BURROW_STORE_URING : e == &bw_engine_pread ? BURROW_STORE_PREAD
											     : BURROW_STORE_MMAP;
	s->info.threads = threads;
	s->info.queue_depth = e == &bw_engine_uring ? qd : threads;
	s->info.staging_bytes = staging;
	return 0;
}

static int default_threads(int engine, int threads, int qd)
{
	if (threads > 0)
		return engine == BURROW_STORE_URING ? BW_MIN(threads, qd) : threads;
	return engine == BURROW_STORE_PREAD ? BW_MIN(qd, 32) : 2;
}

/* burrow_store_open over rows that h describes (NULL: the .npy header of path, parsed here; else a
 * raw file's [rows, dim] of dtype from h->data_offset, burrow_store_open_type). */
static int store_open(burrow_store **out, const char *path, const burrow_store_opts *opts, const bw_npy *raw)
{
	*out = NULL;
	burrow_store_opts o;
	burrow_store_defaults(&o);
	int st0 = opts ? bw_opts_in(&o, sizeof o, opts, "burrow_store_opts") : 0;
	if (st0)
		return st0;
	if (!path)
		return bw_err(BURROW_E_INVAL, "store: no path");
	if (o.engine < 0 || o.engine > 2)
		return bw_err(BURROW_E_INVAL, "%s: unknown store engine %d", path, o.engine);
	if (o.queue_depth < 1 || o.queue_depth > 65536)
		return bw_err(BURROW_E_INVAL, "%s: queue depth %d outside [1, 65536]", path, o.queue_depth);
	if (o.threads < 0 || o.threads > 1024)
		return bw_err(BURROW_E_INVAL, "%s: %d threads outside [0, 1024]", path, o.threads);
	if (o.max_read_bytes > MAX_READ_LIMIT)
		return bw_err(BURROW_E_INVAL, "%s: max read size %zu above 1 GiB", path, o.max_read_bytes);

	bw_npy h;
	int st = raw ? 0 : bw_npy_open(path, &h, NULL);
	if (st < 0)
		return st;
	if (raw)
		h = *raw;
	if (h.ndim != 2)
		return bw_err(BURROW_E_FORMAT, "%s: a feature store needs a 2-D array, the file has %d dimensions", path,
			      h.ndim);
	size_t esize = burrow_dtype_size(h.dtype);
	if (h.shape[1] < 1)
		return bw_err(BURROW_E_FORMAT, "%s: rows have no elements (shape [%lld, 0])", path,
			      (long long)h.shape[0]);
	burrow_dtype od = o.out_dtype == BURROW_DTYPE_INVALID ? h.dtype : o.out_dtype;
	int conv = BW_CONV_NONE;
	if (od != h.dtype) {
		if (h.dtype == BURROW_DTYPE_F16 && od == BURROW_DTYPE_F32)
			conv = BW_CONV_F16_F32;
		else if (h.dtype == BURROW_DTYPE_F32 && od == BURROW_DTYPE_F16)
			conv = BW_CONV_F32_F16;
		else
			return bw_err(BURROW_E_UNSUPPORTED, "%s: cannot gather %s rows as %s (only float16 <-> float32)",
				      path, burrow_dtype_name(h.dtype), burrow_dtype_name(od));
	}

	burrow_store *s = bw_calloc(1, sizeof *s);
	if (!s)
		return BURROW_E_NOMEM;
	s->fd = -1;
	s->conv = conv;
	pthread_mutex_init(&s->qlock, NULL);
	pthread_mutex_init(&s->clock, NULL);
	pthread_cond_init(&s->work_cv, NULL);
	pthread_cond_init(&s->done_cv, NULL);
	if (!(s->path = bw_strdup(path))) {
		st = BURROW_E_NOMEM;
		goto out_free;
	}
	burrow_store_info *in = &s->info;
	in->path = s->path;
	in->num_rows = h.shape[0];
	in->dim = h.shape[1];
	in->file_dtype = h.dtype;
	in->out_dtype = od;
	in->row_bytes = (size_t)h.shape[1] * esize;
	in->out_row_bytes = (size_t)h.shape[1] * burrow_dtype_size(od);
	in->data_offset = h.data_offset;
	/* a float16 file gathered as float32 is cached as stored (twice the rows; widening is exact) */
	s->cache_conv = conv == BW_CONV_F16_F32 ? BW_CONV_F16_F32 : BW_CONV_NONE;
	in->cache_row_bytes = s->cache_conv ? in->row_bytes : in->out_row_bytes;
	s->file_size = h.data_offset + h.shape[0] * (int64_t)in->row_bytes;

	if ((st = open_file(s, o.direct && o.engine != BURROW_STORE_MMAP)) < 0)
		goto out_free;
	size_t a = in->block_bytes, mr = o.max_read_bytes ? o.max_read_bytes : DEFAULT_MAX_READ;
	s->slot_bytes = (mr + a - 1) / a * a;
	in->max_read_bytes = s->slot_bytes;

	if (o.engine == BURROW_STORE_MMAP) {
		s->map_len = (size_t)s->file_size;
		void *m = mmap(NULL, s->map_len, PROT_READ, MAP_SHARED, s->fd, 0);
		if (m == MAP_FAILED) {
			st = bw_err_errno(errno, path, "mmap");
			goto out_free;
		}
		s->map = m;
		bw_map_register(m, s->map_len, path);
		if (o.mmap_random && madvise(m, s->map_len, MADV_RANDOM) < 0)
			bw_log(BURROW_LOG_DEBUG, "%s: madvise(MADV_RANDOM): %s", path, strerror(errno));
		st = start_engine(s, &bw_engine_mmap, default_threads(o.engine, o.threads, o.queue_depth), o.queue_depth);
	} else if (o.engine == BURROW_STORE_URING) {
		st = start_engine(s, &bw_engine_uring, default_threads(o.engine, o.threads, o.queue_depth),
				  o.queue_depth);
		if (st == BURROW_E_UNSUPPORTED) {
			bw_log(BURROW_LOG_WARN, "%s: io_uring setup failed (%s); using the pread engine", path,
			       burrow_last_error());
			st = start_engine(s, &bw_engine_pread, default_threads(BURROW_STORE_PREAD, 0, o.queue_depth),
					  o.queue_depth);
		}
	} else {
		st = start_engine(s, &bw_engine_pread, default_threads(o.engine, o.threads, o.queue_depth),
				  o.queue_depth);
	}
	if (st < 0)
		goto out_free;
	*out = s;
	return 0;

out_free:
	burrow_store_close(s);
	return st;
}

int burrow_store_open(burrow_store **out, const char *path, const burrow_store_opts *opts)
{
	return store_open(out, path, opts, NULL);
}

int burrow_store_open_type(burrow_store **out, const burrow_dataset *ds, int type, const burrow_store_opts *opts)
{
	burrow_type_info ti;
	*out = NULL;
	int st = burrow_dataset_type_info(ds, type, &ti);
	if (st)
		return st;
	if (!ti.feat_dim || !ti.features_path)
		return bw_err(BURROW_E_INVAL, "%s: node type %s has no features to store", bw_dataset_dir(ds), ti.name);
	if (!bw_dataset_type_raw(ds, type))
		return store_open(out, ti.features_path, opts, NULL);
	const bw_npy h = {.dtype = ti.feat_dtype, .ndim = 2, .shape = {ti.num_nodes, ti.feat_dim},
			  .data_offset = ti.features_offset};
	return store_open(out, ti.features_path, opts, &h);
}

const burrow_store_info *burrow_store_get_info(const burrow_store *s) { return &s->info; }

/* ------------------------------------------------------------ tickets */

static void ticket_free(bw_ticket *t)
{
	if (!t)
		return;
	bw_free(t->pairs);
	bw_free(t->ustart);
	bw_free(t->reads);
	bw_free(t);
}

void burrow_store_close(burrow_store *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->qlock);
	for (;;) {
		bool busy = false;
		for (bw_ticket *t = s->live; t; t = t->lnext)
			busy |= !t->done;
		if (!busy)
			break;
		pthread_cond_wait(&s->done_cv, &s->qlock);
	}
	pthread_mutex_unlock(&s->qlock);
	if (s->workers)
		stop_workers(s);
	while (s->live) {
		bw_ticket *t = s->live;
		s->live = t->lnext;
		ticket_free(t);
	}
	bw_cache_free(s->cache);
	if (s->map) {
		bw_map_unregister(s->map);
		munmap((void *)s->map, s->map_len);
	}
	if (s->fd >= 0)
		close(s->fd);
	pthread_mutex_destroy(&s->qlock);
	pthread_mutex_destroy(&s->clock);
	pthread_cond_destroy(&s->work_cv);
	pthread_cond_destroy(&s->done_cv);
	bw_free(s->path);
	bw_free(s);
}

/* Reads for the distinct rows of t, in id order: each row widened to whole blocks; a row that
 * touches (or shares a block with) the current read joins it while the read stays within
 * max_read; a row longer than that is read in max_read pieces. Fills r when not NULL; returns
 * the number of reads. */
static size_t plan(const burrow_store *s, const bw_ticket *t, bw_read *r)
{
	const int64_t A = (int64_t)s->info.block_bytes, M = (int64_t)s->slot_bytes, rb = (int64_t)s->info.row_bytes;
	const int64_t base = s->info.data_offset;
	size_t nr = 0;
	bool open = false;
	bw_read cur = {0};
	for (size_t j = 0; j < t->nuniq; j++) {
		int64_t ro = base + t->pairs[t->ustart[j]].id * rb, re = ro + rb;
		int64_t lo = ro / A * A, hi = (re + A - 1) / A * A;
		int64_t end = cur.off + cur.len;
		if (open && lo <= end && BW_MAX(hi, end) - cur.off <= M) {
			cur.len = (uint32_t)(BW_MAX(hi, end) - cur.off);
			cur.need = (uint32_t)(re - cur.off);
			cur.nrows++;
			continue;
		}
		if (open) {
			if (r)
				r[nr] = cur;
			nr++;
			open = false;
		}
		if (hi - lo <= M) {
			cur = (bw_read){.off = lo, .len = (uint32_t)(hi - lo), .need = (uint32_t)(re - lo),
					.first = (uint32_t)j, .nrows = 1};
			open = true;
			continue;
		}
		for (int64_t p = lo; p < hi; p += M) {
			int64_t len = BW_MIN(M, hi - p);
			if (r)
				r[nr] = (bw_read){.off = p, .len = (uint32_t)len, .need = (uint32_t)(BW_MIN(re, p + len) - p),
						  .first = (uint32_t)j, .nrows = 1};
			nr++;
		}
	}
	if (open) {
		if (r)
			r[nr] = cur;
		nr++;
	}
	return nr;
}

static void put_row_bytes(int conv, char *dst, size_t in_off, const char *src, size_t nbytes);

/* The pages of each read, less the first page of a read that begins in the page the one
 * before it ended in (possible when blocks are smaller than pages). */
uint64_t bw_reads_pages(const bw_read *r, size_t n)
{
	const int64_t P = BW_PAGE_BYTES;
	uint64_t pages = 0;
	int64_t last = -1; /* the last page counted */
	for (size_t i = 0; i < n; i++) {
		if (r[i].len == 0)
			continue;
		int64_t lo = r[i].off / P, hi = (r[i].off + r[i].len - 1) / P;
		if (lo <= last)
			lo = last + 1;
		if (hi >= lo)
			pages += (uint64_t)(hi - lo + 1);
		last = BW_MAX(last, hi);
	}
	return pages;
}

static int id_bits(int64_t n)
{
	int b = 1;
	while (b < 63 && ((int64_t)1 << b) < n)
		b++;
	return b;
}

int bw_store_submit(burrow_store *s, const int64_t *ids, size_t n, void *out, bool internal, bw_ticket **ticket)
{
	if (ticket)
		*ticket = NULL;
	if (!s || !ticket || (n && (!ids || !out)))
		return bw_err(BURROW_E_INVAL, "store: gather needs a store, ids, an output buffer and a ticket");
	if (n > UINT32_MAX)
		return bw_err(BURROW_E_INVAL, "%s: %zu ids in one gather (at most 2^32 - 1)", s->path, n);
	const int64_t N = s->info.num_rows;
	for (size_t i = 0; i < n; i++)
		if (ids[i] < 0 || ids[i] >= N)
			return bw_err(BURROW_E_RANGE, "%s: row id %lld (at position %zu) is outside [0, %lld)", s->path,
				      (long long)ids[i], i, (long long)N);

	int st = BURROW_E_NOMEM;
	bw_ticket *t = bw_calloc(1, sizeof *t);
	if (!t)
		return st;
	t->s = s;
	t->out = out;
	t->n = n;
	t->internal = internal;
	/* a fill writes cache rows; a gather, gathered rows */
	t->conv = internal && s->cache_conv ? BW_CONV_NONE : s->conv;
	t->orb = internal ? s->info.cache_row_bytes : s->info.out_row_bytes;
	if (n && !(t->pairs = bw_malloc(n * sizeof *t->pairs)))
		goto out_free;

	/* cache hits go straight to out; the rest become (id, position) pairs */
	const size_t orb = s->info.out_row_bytes;
	uint64_t hits = 0;
	if (!internal && s->cache) {
		pthread_mutex_lock(&s->clock);
		for (size_t i = 0; i < n; i++) {
			const char *row = s->cache ? bw_cache_get(s->cache, ids[i]) : NULL;
			if (row) {
				put_row_bytes(s->cache_conv, t->out + i * orb, 0, row, s->info.cache_row_bytes);
				hits++;
			} else {
				t->pairs[t->npairs++] = (bw_pair){.id = ids[i], .pos = (uint32_t)i};
			}
		}
		pthread_mutex_unlock(&s->clock);
	} else {
		for (size_t i = 0; i < n; i++)
			t->pairs[i] = (bw_pair){.id = ids[i], .pos = (uint32_t)i};
		t->npairs = n;
	}

	bool sorted = true;
	for (size_t i = 1; i < t->npairs && sorted; i++)
		sorted = t->pairs[i - 1].id <= t->pairs[i].id;
	if (!sorted) {
		bw_pair *tmp = bw_malloc(t->npairs * sizeof *tmp);
		if (!tmp)
			goto out_free;
		bw_pairs_sort(t->pairs, tmp, t->npairs, id_bits(N));
		bw_free(tmp);
	}
	for (size_t i = 0; i < t->npairs; i++)
		t->nuniq += i == 0 || t->pairs[i].id != t->pairs[i - 1].id;
	if (!(t->ustart = bw_malloc((t->nuniq + 1) * sizeof *t->ustart)))
		goto out_free;
	for (size_t i = 0, j = 0; i < t->npairs; i++)
		if (i == 0 || t->pairs[i].id != t->pairs[i - 1].id)
			t->ustart[j++] = (uint32_t)i;
	t->ustart[t->nuniq] = (uint32_t)t->npairs;
	t->nreads = plan(s, t, NULL);
	if (t->nreads && !(t->reads = bw_malloc(t->nreads * sizeof *t->reads)))
		goto out_free;
	plan(s, t, t->reads);
	atomic_store(&t->remaining, t->nreads);
	atomic_fetch_add(&s->pages_read, bw_reads_pages(t->reads, t->nreads));

	if (!internal) {
		atomic_fetch_add(&s->gathers, 1);
		atomic_fetch_add(&s->rows, n);
		atomic_fetch_add(&s->hits, hits);
		atomic_fetch_add(&s->misses, t->npairs);
	}
	atomic_fetch_add(&s->rows_read, t->nuniq);

	pthread_mutex_lock(&s->qlock);
	t->lnext = s->live;
	if (s->live)
		s->live->lprev = t;
	s->live = t;
	if (t->nreads) {
		if (s->qtail)
			s->qtail->qnext = t;
		else
			s->qhead = t;
		s->qtail = t;
		pthread_cond_broadcast(&s->work_cv);
	} else {
		t->done = true;
	}
	pthread_mutex_unlock(&s->qlock);
	*ticket = t;
	return 0;

out_free:
	ticket_free(t);
	return st;
}

int burrow_store_submit(burrow_store *s, const int64_t *ids, size_t n, void *out, burrow_store_ticket **ticket)
{
	return bw_store_submit(s, ids, n, out, false, ticket);
}

size_t bw_store_pop(burrow_store *s, bw_ref *out, size_t max, bool block)
{
	size_t n = 0;
	pthread_mutex_lock(&s->qlock);
	while (block && !s->qhead && !s->stop)
		pthread_cond_wait(&s->work_cv, &s->qlock);
	while (n < max && s->qhead) {
		bw_ticket *t = s->qhead;
		while (n < max && t->next < t->nreads)
			out[n++] = (bw_ref){.t = t, .ri = (uint32_t)t->next++};
		if (t->next == t->nreads) {
			s->qhead = t->qnext;
			t->qnext = NULL;
			if (!s->qhead)
				s->qtail = NULL;
		}
	}
	pthread_mutex_unlock(&s->qlock);
	return n;
}

/* Put nbytes of file row bytes (starting at byte in_off of the row) into the gathered row at
 * dst, converting the element type when asked. */
static void put_row_bytes(int conv, char *dst, size_t in_off, const char *src, size_t nbytes)
{
	switch (conv) {
	case BW_CONV_NONE:
		memcpy(dst + in_off, src, nbytes);
		break;
	case BW_CONV_F16_F32:
		bw_f16_to_f32_n(dst + in_off * 2, src, nbytes / 2);
		break;
	case BW_CONV_F32_F16:
		bw_f32_to_f16_n(dst + in_off / 2, src, nbytes / 4);
		break;
	}
}

/* Copy the parts of read r's rows that lie in buf (file bytes [r->off, r->off + r->need)) to
 * every position each row was asked for. */
static void copy_rows(const burrow_store *s, const bw_ticket *t, const bw_read *r, const char *buf)
{
	const int64_t rb = (int64_t)s->info.row_bytes, base = s->info.data_offset, lim = r->off + r->need;
	const size_t orb = t->orb;
	for (uint32_t j = r->first; j < r->first + r->nrows; j++) {
		int64_t ro = base + t->pairs[t->ustart[j]].id * rb;
		int64_t a = BW_MAX(ro, r->off), b = BW_MIN(ro + rb, lim);
		if (a >= b)
			continue;
		for (uint32_t k = t->ustart[j]; k < t->ustart[j + 1]; k++)
			put_row_bytes(t->conv, t->out + (size_t)t->pairs[k].pos * orb, (size_t)(a - ro), buf + (a - r->off),
				      (size_t)(b - a));
	}
}

/* Read [off, off + len) of the file into buf, retrying short reads until the end of the
 * file; the bytes read, or -errno. */
static int64_t pread_full(int fd, char *buf, size_t len, int64_t off)
{
	size_t got = 0;
	while (got < len) {
		ssize_t rc = pread(fd, buf + got, len - got, off + (int64_t)got);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return got ? (int64_t)got : -(int64_t)errno;
		if (rc == 0)
			break;
		got += (size_t)rc;
	}
	return (int64_t)got;
}

/* The sequential pass: the span from the first row's offset is cut into chunks of
 * BW_SEQ_CHUNK bytes; a row belongs to the chunk its first byte lies in, and a chunk's read
 * runs from the block holding its first row to the block ending its last, so every row is
 * read whole by exactly one read. BW_SEQ_THREADS threads take chunks in order from a counter
 * (a disk streams faster with a few large reads in flight than with one). */
typedef struct seq_pass {
	burrow_store *s;
	const int64_t *ids;
	size_t m;
	char *out;
	int conv;               /* BW_CONV_* into out */
	size_t orb;             /* bytes of one row of out */
	int64_t start;          /* file offset of the first row */
	int64_t nchunks;
	atomic_llong next;      /* next chunk to take */
	atomic_int status;      /* 0, or the first error */
	char msg[512];          /* its message (written by whoever set status) */
} seq_pass;

/* The first j in [lo, m) whose row starts at or after file offset off. */
static size_t first_row_at(const seq_pass *p, size_t lo, int64_t off)
{
	const int64_t rb = (int64_t)p->s->info.row_bytes, base = p->s->info.data_offset;
	size_t hi = p->m;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (base + p->ids[mid] * rb < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void seq_fail(seq_pass *p, int st, const char *fmt, ...) BW_PRINTF(3, 4);
static void seq_fail(seq_pass *p, int st, const char *fmt, ...)
{
	int expected = 0;
	atomic_fetch_add_explicit(&p->s->read_errors, 1, memory_order_relaxed);
	if (!atomic_compare_exchange_strong(&p->status, &expected, st))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->msg, sizeof p->msg, fmt, ap);
	va_end(ap);
}

static void *seq_worker(void *arg)
{
	seq_pass *p = arg;
	burrow_store *s = p->s;
	const int64_t A = (int64_t)s->info.block_bytes, rb = (int64_t)s->info.row_bytes, base = s->info.data_offset;
	const int64_t C = (int64_t)BW_SEQ_CHUNK;
	const size_t orb = p->orb, cap = (size_t)((C + rb + 2 * A + A - 1) / A * A);
	char eb[128];
	char *buf = bw_aligned_alloc(s->mem_align, cap);
	if (!buf) {
		int expected = 0;
		if (atomic_compare_exchange_strong(&p->status, &expected, BURROW_E_NOMEM))
			snprintf(p->msg, sizeof p->msg, "%s: out of memory for a %zu-byte read buffer", s->path, cap);
		return NULL;
	}
	for (;;) {
		const int64_t c = atomic_fetch_add(&p->next, 1);
		if (c >= p->nchunks || atomic_load_explicit(&p->status, memory_order_relaxed) < 0)
			break;
		const size_t j0 = first_row_at(p, 0, p->start + c * C), j1 = first_row_at(p, j0, p->start + (c + 1) * C);
		if (j0 == j1)
			continue; /* a gap of rows the cache does not hold */
		const int64_t off = (base + p->ids[j0] * rb) / A * A;
		const int64_t len = (base + (p->ids[j1 - 1] + 1) * rb - off + A - 1) / A * A;
		const int64_t need = BW_MIN(len, s->file_size - off);
		int64_t res = pread_full(s->fd, buf, (size_t)len, off);
		if (bw_store_fault_hook)
			res = bw_store_fault_hook(off, (size_t)len, (size_t)need, res);
		atomic_fetch_add_explicit(&s->reads, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->bytes_read, (uint64_t)len, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->pages_read, bw_reads_pages(&(bw_read){.off = off, .len = (uint32_t)len}, 1),
					  memory_order_relaxed);
		if (res < 0) {
			seq_fail(p, BURROW_E_IO, "%s: read of %lld bytes at offset %lld failed: %s", s->path, (long long)len,
				 (long long)off, strerror_r((int)-res, eb, sizeof eb));
			break;
		}
		if (res < need) {
			seq_fail(p, BURROW_E_IO, "%s: short read at offset %lld: %lld of the %lld bytes needed (file truncated?)",
				 s->path, (long long)off, (long long)res, (long long)need);
			break;
		}
		for (size_t j = j0; j < j1; j++)
			put_row_bytes(p->conv, p->out + j * orb, 0, buf + (base + p->ids[j] * rb - off), (size_t)rb);
		atomic_fetch_add_explicit(&s->rows_read, j1 - j0, memory_order_relaxed);
	}
	bw_aligned_free(buf);
	return NULL;
}

int bw_store_read_seq(burrow_store *s, const int64_t *ids, size_t m, char *out, int conv, size_t orb)
{
	if (m == 0)
		return 0;
	const int64_t rb = (int64_t)s->info.row_bytes, base = s->info.data_offset;
	seq_pass p = {.s = s, .ids = ids, .m = m, .out = out, .conv = conv, .orb = orb, .start = base + ids[0] * rb};
	const int64_t span = base + ids[m - 1] * rb + 1 - p.start;
	p.nchunks = (span + (int64_t)BW_SEQ_CHUNK - 1) / (int64_t)BW_SEQ_CHUNK;
	atomic_init(&p.next, 0);
	atomic_init(&p.status, 0);
	pthread_t th[BW_SEQ_THREADS];
	int started = 0;
	for (int i = 0; i < BW_SEQ_THREADS && i < p.nchunks; i++, started++)
		if (pthread_create(&th[i], NULL, seq_worker, &p) != 0)
			break;
	if (started == 0) /* no thread to be had: read on this one */
		seq_worker(&p);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	const int st = atomic_load(&p.status);
	return st < 0 ? bw_err(st, "%s", p.msg) : 0;
}

static void ticket_fail(bw_ticket *t, const char *fmt, ...) BW_PRINTF(2, 3);
static void ticket_fail(bw_ticket *t, const char *fmt, ...)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&t->status, &expected, BURROW_E_IO))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof t->msg, fmt, ap);
	va_end(ap);
}

void bw_store_complete(bw_worker *w, bw_ref ref, const char *buf, int64_t res, uint64_t t0)
{
	bw_ticket *t = ref.t;
	burrow_store *s = t->s;
	const bw_read *r = &t->reads[ref.ri];
	if (buf) {
		if (bw_store_fault_hook)
			res = bw_store_fault_hook(r->off, r->len, r->need, res);
		atomic_fetch_add_explicit(&s->reads, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->bytes_read, r->len, memory_order_relaxed);
		if (res < 0) {
			char eb[128];
			atomic_fetch_add_explicit(&s->read_errors, 1, memory_order_relaxed);
			ticket_fail(t, "%s: read of %u bytes at offset %lld failed: %s", s->path, r->len, (long long)r->off,
				    strerror_r((int)-res, eb, sizeof eb));
		} else if ((uint64_t)res < r->need) {
			atomic_fetch_add_explicit(&s->read_errors, 1, memory_order_relaxed);
			ticket_fail(t, "%s: short read at offset %lld: %lld of the %u bytes needed (file truncated?)",
				    s->path, (long long)r->off, (long long)res, r->need);
		} else if (!bw_store_failed(ref)) {
			copy_rows(s, t, r, buf);
		}
		bw_lat_add(&w->lat, bw_now_ns() - t0);
	}
	if (atomic_fetch_sub(&t->remaining, 1) == 1) {
		pthread_mutex_lock(&s->qlock);
		t->done = true;
		pthread_cond_broadcast(&s->done_cv);
		pthread_mutex_unlock(&s->qlock);
	}
}

/* A gathered row back to the cache's form: the float16 bits it was widened from, exactly
 * (bw_f32_to_f16 is exact on widened values but quiets a signalling NaN; the payload is kept
 * here, so a hit serves the bits a miss did). */
static void cache_row_from(const burrow_store *s, char *slot, const char *row)
{
	if (!s->cache_conv) {
		memcpy(slot, row, s->info.out_row_bytes);
		return;
	}
	for (int64_t e = 0; e < s->info.dim; e++) {
		uint32_t x;
		memcpy(&x, row + 4 * e, 4);
		float f;
		memcpy(&f, &x, 4);
		const uint16_t h = ((x >> 23) & 0xff) == 0xff ? (uint16_t)(((x >> 16) & 0x8000u) | 0x7c00u | ((x & 0x7fffffu) >> 13))
							     : bw_f32_to_f16(f);
		memcpy(slot + 2 * e, &h, 2);
	}
}

/* A completed ticket: feed a CLOCK cache, unlink, free, and return its status. */
static int ticket_finish(burrow_store *s, bw_ticket *t)
{
	int st = atomic_load(&t->status);
	if (st == 0 && !t->internal && t->nuniq) {
		pthread_mutex_lock(&s->clock);
		if (s->cache && s->cache->policy == BURROW_CACHE_CLOCK) {
			const size_t orb = s->info.out_row_bytes;
			for (size_t j = 0; j < t->nuniq; j++) {
				const bw_pair *p = &t->pairs[t->ustart[j]];
				char *slot = bw_cache_put(s->cache, p->id);
				if (slot)
					cache_row_from(s, slot, t->out + (size_t)p->pos * orb);
			}
		}
		pthread_mutex_unlock(&s->clock);
	}
	pthread_mutex_lock(&s->qlock);
	if (t->lprev)
		t->lprev->lnext = t->lnext;
	else
		s->live = t->lnext;
	if (t->lnext)
		t->lnext->lprev = t->lprev;
	pthread_mutex_unlock(&s->qlock);
	if (st < 0)
		bw_err(st, "%s", t->msg);
	ticket_free(t);
	return st;
}

int burrow_store_wait(burrow_store *s, burrow_store_ticket *t)
{
	if (!s || !t)
		return bw_err(BURROW_E_INVAL, "store: wait needs a store and a ticket");
	pthread_mutex_lock(&s->qlock);
	while (!t->done)
		pthread_cond_wait(&s->done_cv, &s->qlock);
	pthread_mutex_unlock(&s->qlock);
	return ticket_finish(s, t);
}

int burrow_store_poll(burrow_store *s, burrow_store_ticket *t)
{
	if (!s || !t)
		return bw_err(BURROW_E_INVAL, "store: poll needs a store and a ticket");
	pthread_mutex_lock(&s->qlock);
	bool done = t->done;
	pthread_mutex_unlock(&s->qlock);
	if (!done)
		return 0;
	int st = ticket_finish(s, t);
	return st < 0 ? st : BURROW_DONE;
}

int burrow_store_gather(burrow_store *s, const int64_t *ids, size_t n, void *out)
{
	bw_ticket *t;
	int st = bw_store_submit(s, ids, n, out, false, &t);
	return st < 0 ? st : burrow_store_wait(s, t);
}

/* ------------------------------------------------------------ stats */

static void get_stats(const burrow_store *cs, burrow_store_stats *st)
{
	burrow_store *s = (burrow_store *)cs; /* locks and relaxed loads only */
	memset(st, 0, sizeof *st);
	st->gathers = atomic_load(&s->gathers);
	st->rows = atomic_load(&s->rows);
	st->cache_hits = atomic_load(&s->hits);
	st->cache_misses = atomic_load(&s->misses);
	st->rows_read = atomic_load(&s->rows_read);
	st->reads = atomic_load(&s->reads);
	st->bytes_read = atomic_load(&s->bytes_read);
	st->read_errors = atomic_load(&s->read_errors);
	st->pages_read = atomic_load(&s->pages_read);

	uint64_t n[BW_LAT_BUCKETS] = {0}, total = 0;
	for (int i = 0; i < s->nworkers; i++)
		for (int b = 0; b < BW_LAT_BUCKETS; b++)
			n[b] += atomic_load_explicit(&s->workers[i].lat.n[b], memory_order_relaxed);
	for (int b = 0; b < BW_LAT_BUCKETS; b++)
		total += n[b];
	const double q[2] = {0.5, 0.99};
	double *dst[2] = {&st->read_p50_us, &st->read_p99_us};
	for (int k = 0; k < 2 && total; k++) {
		uint64_t want = (uint64_t)(q[k] * (double)total + 0.999999), cum = 0;
		for (int b = 0; b < BW_LAT_BUCKETS; b++) {
			cum += n[b];
			if (cum >= want) {
				*dst[k] = lat_value(b) / 1000.0;
				break;
			}
		}
	}
	pthread_mutex_lock(&s->clock);
	if (s->cache) {
		st->cache_rows = s->cache->count;
		st->cache_capacity = s->cache->cap;
		st->cache_bytes = s->cache->bytes;
	}
	pthread_mutex_unlock(&s->clock);
}

void burrow_store_get_stats(const burrow_store *s, burrow_store_stats *out)
{
	burrow_store_stats st = {.size = sizeof st};
	if (bw_stats_check(out, "burrow_store_stats"))
		return;
	get_stats(s, &st);
	bw_stats_out(out, &st, sizeof st);
}

void burrow_store_reset_stats(burrow_store *s)
{
	atomic_store(&s->gathers, 0);
	atomic_store(&s->rows, 0);
	atomic_store(&s->hits, 0);
	atomic_store(&s->misses, 0);
	atomic_store(&s->rows_read, 0);
	atomic_store(&s->reads, 0);
	atomic_store(&s->bytes_read, 0);
	atomic_store(&s->read_errors, 0);
	atomic_store(&s->pages_read, 0);
	for (int i = 0; i < s->nworkers; i++)
		for (int b = 0; b < BW_LAT_BUCKETS; b++)
			atomic_store_explicit(&s->workers[i].lat.n[b], 0, memory_order_relaxed);
}
