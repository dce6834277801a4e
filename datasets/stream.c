/* stream.c: byte streams for prep and import: a plain file or a zip member (also one
 * inside a stored .npz member), gunzipped when asked, read ahead by a helper thread into
 * a few blocks so that inflating overlaps with parsing. */
#define _GNU_SOURCE
#include "dsio.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>

#define NBLOCKS 3
#define BLOCK ((size_t)1 << 20)   /* first size of a block; grows for longer lines */
#define INBUF ((size_t)256 << 10) /* compressed input per read */

typedef struct block {
	char *buf;
	size_t len, cap;
} block;

struct bw_rd {
	char *name;               /* owned */
	bool gunzip, lines;
	/* the source, used by the helper thread only */
	int fd;                   /* plain file, -1 otherwise */
	zip_t *outer, *za;        /* archives: `outer` only when nested */
	zip_file_t *zf;
	z_stream z;
	bool z_live, z_end;       /* inflate initialized; the current gzip member ended */
	char *in;                 /* [INBUF] compressed bytes */
	size_t in_len;            /* bytes in `in` */
	bool src_eof;
	char *carry;              /* the unfinished last line of the previous block */
	size_t carry_len, carry_cap;
	uint64_t size;            /* the source's size in bytes (compressed in the zip) */
	uint64_t usize;           /* and uncompressed by the zip */
	_Atomic uint64_t consumed;
	/* the ring of blocks between the thread and the reader */
	block blk[NBLOCKS];
	int head, count;          /* next block to hand out; blocks filled and not handed out */
	int held;                 /* the block the reader holds, -1 when none */
	bool done, stop;          /* the thread finished (all blocks out or error); close asked it to stop */
	int status;               /* the thread's error, 0 when none */
	char msg[1024];           /* and its message */
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

/* ---------------------------------------------------------------- opening archives */

int bw_zip_open(zip_t **za, const char *path, int fd)
{
	int err = 0;
	*za = NULL;
	if (path) {
		int f, st = bw_open_input(path, 0, &f, NULL);
		if (st)
			return st;
		if (!(*za = zip_fdopen(f, ZIP_RDONLY, &err)))
			close(f);
	} else {
		int d = dup(fd);
		if (d < 0)
			return bw_err_errno(errno, "zip", "dup");
		*za = zip_fdopen(d, ZIP_RDONLY, &err);
		if (!*za)
			close(d);
	}
	if (*za)
		return 0;
	const char *p = path ? path : "(spilled archive)";
	switch (err) {
	case ZIP_ER_NOENT: return bw_err(BURROW_E_NOTFOUND, "%s: no such file", p);
	case ZIP_ER_NOZIP: return bw_err(BURROW_E_FORMAT, "%s: not a zip archive", p);
	case ZIP_ER_INCONS: return bw_err(BURROW_E_FORMAT, "%s: zip archive is inconsistent (truncated or damaged?)", p);
	case ZIP_ER_MEMORY: return bw_err(BURROW_E_NOMEM, "%s: out of memory opening the zip archive", p);
	case ZIP_ER_OPEN:
	case ZIP_ER_READ: return bw_err(BURROW_E_IO, "%s: cannot read the zip archive", p);
	default: {
		zip_error_t ze;
		zip_error_init_with_code(&ze, err);
		int st = bw_err(BURROW_E_FORMAT, "%s: zip: %s", p, zip_error_strerror(&ze));
		zip_error_fini(&ze);
		return st;
	}
	}
}

/* Open the source: plain file, zip member, or member of a stored zip member. */
static int open_source(bw_rd *r, const bw_src *src)
{
	int st;
	if (!src->member) {
		int64_t size;
		if ((st = bw_open_input(src->path, 0, &r->fd, &size)))
			return st;
		r->size = r->usize = (uint64_t)size;
		posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
		return 0;
	}
	zip_t *za;
	if ((st = bw_zip_open(&za, src->path, src->fd)))
		return st;
	if (src->nested) {
		r->outer = za;
		zip_stat_t zs;
		zip_int64_t i = zip_name_locate(za, src->nested, 0);
		if (i < 0 || zip_stat_index(za, (zip_uint64_t)i, 0, &zs) < 0)
			return bw_err(BURROW_E_NOTFOUND, "%s: archive has no member %s", src->name, src->nested);
		if (zs.comp_method != ZIP_CM_STORE)
			return bw_err(BURROW_E_UNSUPPORTED, "%s: member %s is compressed; it must be spilled first",
				      src->name, src->nested);
		zip_source_t *zsrc = zip_source_zip(za, za, (zip_uint64_t)i, 0, 0, 0);
		if (!zsrc)
			return bw_err(BURROW_E_FORMAT, "%s: %s", src->name, zip_strerror(za));
		zip_error_t ze;
		zip_error_init(&ze);
		za = zip_open_from_source(zsrc, ZIP_RDONLY, &ze);
		if (!za) {
			st = bw_err(BURROW_E_FORMAT, "%s: %s is not a zip (npz) archive: %s", src->name, src->nested,
				    zip_error_strerror(&ze));
			zip_error_fini(&ze);
			zip_source_free(zsrc);
			return st;
		}
		zip_error_fini(&ze);
	}
	r->za = za;
	zip_stat_t zs;
	zip_int64_t i = zip_name_locate(za, src->member, 0);
	if (i < 0 || zip_stat_index(za, (zip_uint64_t)i, 0, &zs) < 0)
		return bw_err(BURROW_E_NOTFOUND, "%s: no such member in the archive", src->name);
	r->size = (zs.valid & ZIP_STAT_COMP_SIZE) ? zs.comp_size : zs.size;
	r->usize = zs.size;
	r->zf = zip_fopen_index(za, (zip_uint64_t)i, 0);
	if (!r->zf)
		return bw_err(BURROW_E_FORMAT, "%s: cannot open the member: %s", src->name, zip_strerror(za));
	return 0;
}

static void close_source(bw_rd *r)
{
	if (r->zf)
		zip_fclose(r->zf);
	if (r->za)
		zip_discard(r->za);
	if (r->outer)
		zip_discard(r->outer);
	if (r->fd >= 0)
		close(r->fd);
	r->zf = NULL;
	r->za = r->outer = NULL;
	r->fd = -1;
}

/* ---------------------------------------------------------------- the helper thread */

/* Raw bytes of the source into buf; 0 at its end. */
static int read_raw(bw_rd *r, char *buf, size_t cap, size_t *got)
{
	*got = 0;
	if (r->zf) {
		zip_int64_t n = zip_fread(r->zf, buf, cap);
		if (n < 0)
			return bw_err(BURROW_E_FORMAT, "%s: %s", r->name, zip_file_strerror(r->zf));
		*got = (size_t)n;
	} else {
		ssize_t n;
		do
			n = read(r->fd, buf, cap);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return bw_err_errno(errno, r->name, "read");
		*got = (size_t)n;
	}
	r->consumed += *got;
	return 0;
}

/* Decompressed (or raw) bytes into buf; *got == 0 only at the end of the stream. */
static int produce(bw_rd *r, char *buf, size_t cap, size_t *got)
{
	int st;
	*got = 0;
	if (!r->gunzip)
		return read_raw(r, buf, cap, got);
	z_stream *z = &r->z;
	z->next_out = (Bytef *)buf;
	z->avail_out = (uInt)BW_MIN(cap, (size_t)UINT32_MAX);
	while (z->avail_out == (uInt)BW_MIN(cap, (size_t)UINT32_MAX)) {
		if (z->avail_in == 0 && !r->src_eof) {
			size_t n;
			if ((st = read_raw(r, r->in, INBUF, &n)))
				return st;
			r->src_eof = n == 0;
			z->next_in = (Bytef *)r->in;
			z->avail_in = (uInt)n;
		}
		if (r->z_end) {
			/* a gzip member ended: another may follow (concatenated gzip) */
			if (z->avail_in == 0 && r->src_eof)
				break;
			if (z->avail_in == 0)
				continue;
			inflateReset(z);
			r->z_end = false;
		}
		if (z->avail_in == 0 && r->src_eof)
			return bw_err(BURROW_E_FORMAT, "%s: truncated gzip data (the stream ends before its end marker)",
				      r->name);
		int zr = inflate(z, Z_NO_FLUSH);
		if (zr == Z_STREAM_END)
			r->z_end = true;
		else if (zr == Z_DATA_ERROR)
			return bw_err(BURROW_E_FORMAT, "%s: corrupt gzip data (%s)", r->name, z->msg ? z->msg : "zlib");
		else if (zr == Z_MEM_ERROR)
			return bw_err(BURROW_E_NOMEM, "%s: out of memory inflating", r->name);
		else if (zr != Z_OK && zr != Z_BUF_ERROR)
			return bw_err(BURROW_E_FORMAT, "%s: gzip error %d", r->name, zr);
	}
	*got = BW_MIN(cap, (size_t)UINT32_MAX) - z->avail_out;
	return 0;
}

/* Fill one block; in line mode it ends at a line end (the rest carries over). */
static int fill_block(bw_rd *r, block *b, bool *end)
{
	int st;
	b->len = 0;
	*end = false;
	if (r->carry_len) {
		if (b->cap < r->carry_len + BLOCK) {
			char *nb = bw_realloc(b->buf, r->carry_len + BLOCK);
			if (!nb)
				return BURROW_E_NOMEM;
			b->buf = nb;
			b->cap = r->carry_len + BLOCK;
		}
		memcpy(b->buf, r->carry, r->carry_len);
		b->len = r->carry_len;
		r->carry_len = 0;
	}
	for (;;) {
		size_t got = 0;
		while (b->len < b->cap) {
			if ((st = produce(r, b->buf + b->len, b->cap - b->len, &got)))
				return st;
			if (got == 0)
				break;
			b->len += got;
		}
		if (got == 0 && b->len < b->cap) { /* end of stream */
			*end = true;
			if (r->lines && b->len && b->buf[b->len - 1] != '\n') {
				if (b->len == b->cap) {
					char *nb = bw_realloc(b->buf, b->cap + 1);
					if (!nb)
						return BURROW_E_NOMEM;
					b->buf = nb;
					b->cap++;
				}
				b->buf[b->len++] = '\n';
			}
			return 0;
		}
		if (!r->lines)
			return 0;
		char *nl = memrchr(b->buf, '\n', b->len);
		if (nl) {
			size_t keep = (size_t)(nl - b->buf) + 1, rest = b->len - keep;
			if (rest > r->carry_cap) {
				char *nc = bw_realloc(r->carry, rest);
				if (!nc)
					return BURROW_E_NOMEM;
				r->carry = nc;
				r->carry_cap = rest;
			}
			memcpy(r->carry, nl + 1, rest);
			r->carry_len = rest;
			b->len = keep;
			return 0;
		}
		/* one line longer than the block: grow it */
		if (b->cap >= ((size_t)1 << 30))
			return bw_err(BURROW_E_FORMAT, "%s: a line longer than 1 GiB", r->name);
		char *nb = bw_realloc(b->buf, 2 * b->cap);
		if (!nb)
			return BURROW_E_NOMEM;
		b->buf = nb;
		b->cap *= 2;
	}
}

static void *reader_main(void *arg)
{
	bw_rd *r = arg;
	int st = 0;
	bool end = false;
	while (!end) {
		pthread_mutex_lock(&r->mu);
		/* a block is free when it is neither filled-and-waiting nor held by the reader */
		while (!r->stop && r->count + (r->held >= 0) >= NBLOCKS)
			pthread_cond_wait(&r->cv, &r->mu);
		int slot = (r->head + r->count) % NBLOCKS;
		bool stop = r->stop;
		pthread_mutex_unlock(&r->mu);
		if (stop)
			break;
		st = fill_block(r, &r->blk[slot], &end);
		pthread_mutex_lock(&r->mu);
		if (st) {
			r->status = st;
			snprintf(r->msg, sizeof r->msg, "%s", burrow_last_error());
		} else if (r->blk[slot].len > 0) {
			r->count++;
		}
		if (st || end)
			r->done = true;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
		if (st)
			break;
	}
	pthread_mutex_lock(&r->mu);
	r->done = true;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* ---------------------------------------------------------------- the reader side */

int bw_rd_open(bw_rd **out, const bw_src *src, bool gunzip, bool lines)
{
	int st;
	*out = NULL;
	bw_rd *r = bw_calloc(1, sizeof *r);
	if (!r)
		return BURROW_E_NOMEM;
	r->fd = -1;
	r->held = -1;
	r->gunzip = gunzip;
	r->lines = lines;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	r->name = bw_strdup(src->name ? src->name : src->path ? src->path : "(stream)");
	if (!r->name) {
		st = BURROW_E_NOMEM;
		goto fail;
	}
	for (int i = 0; i < NBLOCKS; i++) {
		if (!(r->blk[i].buf = bw_malloc(BLOCK))) {
			st = BURROW_E_NOMEM;
			goto fail;
		}
		r->blk[i].cap = BLOCK;
	}
	if ((st = open_source(r, src)))
		goto fail;
	if (gunzip) {
		if (!(r->in = bw_malloc(INBUF))) {
			st = BURROW_E_NOMEM;
			goto fail;
		}
		if (inflateInit2(&r->z, 16 + MAX_WBITS) != Z_OK) {
			st = bw_err(BURROW_E_NOMEM, "%s: cannot start inflating", r->name);
			goto fail;
		}
		r->z_live = true;
	}
	int rc = pthread_create(&r->thread, NULL, reader_main, r);
	if (rc != 0) {
		st = bw_err_thread(rc, r->name, "the reader thread");
		goto fail;
	}
	r->started = true;
	*out = r;
	return 0;
fail:
	bw_rd_close(r);
	return st;
}

int bw_rd_next(bw_rd *r, const char **data, size_t *n)
{
	int st = 0;
	*data = NULL;
	*n = 0;
	pthread_mutex_lock(&r->mu);
	if (r->held >= 0) { /* give the previous block back */
		r->held = -1;
		pthread_cond_broadcast(&r->cv);
	}
	while (r->count == 0 && !r->done)
		pthread_cond_wait(&r->cv, &r->mu);
	if (r->count > 0) {
		r->held = r->head;
		r->head = (r->head + 1) % NBLOCKS;
		r->count--;
		*data = r->blk[r->held].buf;
		*n = r->blk[r->held].len;
		pthread_cond_broadcast(&r->cv);
	} else if (r->status) {
		st = bw_err(r->status, "%s", r->msg);
	}
	pthread_mutex_unlock(&r->mu);
	return st;
}

uint64_t bw_rd_consumed(const bw_rd *r) { return r->consumed; }
uint64_t bw_rd_size(const bw_rd *r) { return r->size; }
uint64_t bw_rd_usize(const bw_rd *r) { return r->usize; }
const char *bw_rd_name(const bw_rd *r) { return r->name; }

void bw_rd_close(bw_rd *r)
{
	if (!r)
		return;
	if (r->started) {
		pthread_mutex_lock(&r->mu);
		r->stop = true;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
		pthread_join(r->thread, NULL);
	}
	close_source(r);
	if (r->z_live)
		inflateEnd(&r->z);
	for (int i = 0; i < NBLOCKS; i++)
		bw_free(r->blk[i].buf);
	bw_free(r->in);
	bw_free(r->carry);
	bw_free(r->name);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	bw_free(r);
}
