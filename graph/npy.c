/* npy.c: NumPy .npy reader and writer (little-endian, C order; header versions 1.0 and 2.0). */
#define _GNU_SOURCE
#include "npy.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char MAGIC[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

static const struct dtype_desc {
	burrow_dtype t;
	const char *descr; /* numpy descr on a little-endian machine */
	const char *name;
	const char *alias;
	size_t size;
} DTYPES[] = {
	{BURROW_DTYPE_F16, "<f2", "float16", "f16", 2}, {BURROW_DTYPE_F32, "<f4", "float32", "f32", 4},
	{BURROW_DTYPE_F64, "<f8", "float64", "f64", 8}, {BURROW_DTYPE_I8, "|i1", "int8", "i8", 1},
	{BURROW_DTYPE_U8, "|u1", "uint8", "u8", 1},     {BURROW_DTYPE_I32, "<i4", "int32", "i32", 4},
	{BURROW_DTYPE_I64, "<i8", "int64", "i64", 8},   {BURROW_DTYPE_BOOL, "|b1", "bool", "b1", 1},
	{BURROW_DTYPE_I16, "<i2", "int16", "i16", 2},
};
#define NDTYPES (sizeof DTYPES / sizeof DTYPES[0])

static const struct dtype_desc *desc_of(burrow_dtype t)
{
	for (size_t i = 0; i < NDTYPES; i++)
		if (DTYPES[i].t == t)
			return &DTYPES[i];
	return NULL;
}

size_t burrow_dtype_size(burrow_dtype t)
{
	const struct dtype_desc *d = desc_of(t);
	return d ? d->size : 0;
}

const char *burrow_dtype_name(burrow_dtype t)
{
	const struct dtype_desc *d = desc_of(t);
	return d ? d->name : "invalid";
}

burrow_dtype burrow_dtype_parse(const char *name)
{
	for (size_t i = 0; name && i < NDTYPES; i++)
		if (!strcmp(name, DTYPES[i].name) || !strcmp(name, DTYPES[i].alias))
			return DTYPES[i].t;
	return BURROW_DTYPE_INVALID;
}

int64_t bw_npy_count(const bw_npy *h)
{
	int64_t n = 1;
	for (int i = 0; i < h->ndim; i++)
		n *= h->shape[i];
	return n;
}

int64_t bw_npy_data_bytes(const bw_npy *h) { return bw_npy_count(h) * (int64_t)burrow_dtype_size(h->dtype); }

/* ---------------------------------------------------------------- parsing */

/* A tiny scanner over the header's Python dict literal. */
typedef struct scan {
	const char *p, *end;
} scan;

static void skip_ws(scan *s)
{
	while (s->p < s->end && isspace((unsigned char)*s->p))
		s->p++;
}

static bool eat(scan *s, char c)
{
	skip_ws(s);
	if (s->p < s->end && *s->p == c) {
		s->p++;
		return true;
	}
	return false;
}

/* A quoted string ('...' or "...") into out[cap]. */
static bool read_str(scan *s, char *out, size_t cap)
{
	skip_ws(s);
	if (s->p >= s->end || (*s->p != '\'' && *s->p != '"'))
		return false;
	char q = *s->p++;
	size_t k = 0;
	while (s->p < s->end && *s->p != q) {
		if (k + 1 >= cap)
			return false;
		out[k++] = *s->p++;
	}
	if (s->p >= s->end)
		return false;
	s->p++;
	out[k] = '\0';
	return true;
}

static bool read_word(scan *s, const char *w)
{
	skip_ws(s);
	size_t n = strlen(w);
	if ((size_t)(s->end - s->p) >= n && !memcmp(s->p, w, n)) {
		s->p += n;
		return true;
	}
	return false;
}

static bool read_int(scan *s, int64_t *v)
{
	skip_ws(s);
	if (s->p >= s->end || !isdigit((unsigned char)*s->p))
		return false;
	int64_t x = 0;
	while (s->p < s->end && isdigit((unsigned char)*s->p)) {
		if (x > (INT64_MAX - 9) / 10)
			return false;
		x = x * 10 + (*s->p++ - '0');
	}
	if (s->p < s->end && *s->p == 'L') /* Python 2 longs */
		s->p++;
	*v = x;
	return true;
}

int bw_npy_parse(const void *buf, size_t len, bw_npy *h, const char *path)
{
	const unsigned char *b = buf;
	size_t hlen, pre;

	memset(h, 0, sizeof *h);
	if (len < 10 || memcmp(b, MAGIC, 6) != 0)
		return bw_err(BURROW_E_FORMAT, "%s: not a .npy file (bad magic)", path);
	h->version = b[6];
	if (h->version == 1) {
		hlen = (size_t)b[8] | (size_t)b[9] << 8;
		pre = 10;
	} else if (h->version == 2 || h->version == 3) {
		if (len < 12)
			return bw_err(BURROW_E_FORMAT, "%s: truncated .npy header", path);
		hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
		pre = 12;
	} else {
		return bw_err(BURROW_E_FORMAT, "%s: unsupported .npy version %d.%d", path, b[6], b[7]);
	}
	if (hlen > len - pre)
		return bw_err(BURROW_E_FORMAT, "%s: truncated .npy header (%zu bytes declared, %zu present)", path,
			      hlen, len - pre);
	h->data_offset = (int64_t)(pre + hlen);

	scan s = {(const char *)b + pre, (const char *)b + pre + hlen};
	char key[32], descr[16] = "";
	bool fortran = false, have_descr = false, have_shape = false, have_order = false;
	if (!eat(&s, '{'))
		goto bad;
	while (!eat(&s, '}')) {
		if (!read_str(&s, key, sizeof key) || !eat(&s, ':'))
			goto bad;
		if (!strcmp(key, "descr")) {
			if (!read_str(&s, descr, sizeof descr))
				goto bad;
			have_descr = true;
		} else if (!strcmp(key, "fortran_order")) {
			if (read_word(&s, "True"))
				fortran = true;
			else if (!read_word(&s, "False"))
				goto bad;
			have_order = true;
		} else if (!strcmp(key, "shape")) {
			if (!eat(&s, '('))
				goto bad;
			while (!eat(&s, ')')) {
				int64_t d;
				if (h->ndim == BW_NPY_MAX_DIMS)
					return bw_err(BURROW_E_FORMAT, "%s: more than %d dimensions", path,
						      BW_NPY_MAX_DIMS);
				if (!read_int(&s, &d))
					goto bad;
				h->shape[h->ndim++] = d;
				if (!eat(&s, ',')) {
					if (!eat(&s, ')'))
						goto bad;
					break;
				}
			}
			have_shape = true;
		} else {
			goto bad;
		}
		if (!eat(&s, ',')) {
			if (!eat(&s, '}'))
				goto bad;
			break;
		}
	}
	if (!have_descr || !have_shape || !have_order)
		goto bad;
	if (descr[0] == '>' && strcmp(descr + 1, "i1") && strcmp(descr + 1, "u1") && strcmp(descr + 1, "b1"))
		return bw_err(BURROW_E_FORMAT, "%s: big-endian dtype '%s' is not supported", path, descr);
	for (size_t i = 0; i < NDTYPES; i++) {
		/* single-byte types may be written with any byte-order mark */
		if (!strcmp(descr, DTYPES[i].descr) ||
		    (DTYPES[i].size == 1 && strchr("<>=|", descr[0]) && !strcmp(descr + 1, DTYPES[i].descr + 1)))
			h->dtype = DTYPES[i].t;
	}
	if (h->dtype == BURROW_DTYPE_INVALID)
		return bw_err(BURROW_E_FORMAT, "%s: unsupported dtype '%s'", path, descr);
	/* one rule for every reader: elements lie at their own alignment in the file (numpy pads
	 * the header to 64 bytes), so a mapped array is read without misaligned loads */
	const size_t esize = burrow_dtype_size(h->dtype);
	if (h->data_offset % (int64_t)esize)
		return bw_err(BURROW_E_FORMAT, "%s: data offset %lld is not a multiple of the element size (%zu bytes, %s)",
			      path, (long long)h->data_offset, esize, burrow_dtype_name(h->dtype));
	if (fortran && h->ndim > 1) {
		int nontrivial = 0;
		for (int i = 0; i < h->ndim; i++)
			nontrivial += h->shape[i] > 1;
		if (nontrivial > 1)
			return bw_err(BURROW_E_FORMAT, "%s: Fortran-ordered arrays are not supported", path);
	}
	int64_t n = 1;
	for (int i = 0; i < h->ndim; i++) {
		if (h->shape[i] && n > INT64_MAX / 8 / h->shape[i])
			return bw_err(BURROW_E_FORMAT, "%s: shape too large", path);
		n *= h->shape[i];
	}
	return 0;
bad:
	return bw_err(BURROW_E_FORMAT, "%s: malformed .npy header", path);
}

int bw_npy_open(const char *path, bw_npy *h, int *fdp)
{
	unsigned char pre[12];
	char *buf = NULL;
	int64_t size;
	int fd, st;

	if (fdp)
		*fdp = -1;
	if ((st = bw_open_input(path, 0, &fd, &size)))
		return st;
	if (size < 10) {
		st = bw_err(BURROW_E_FORMAT, "%s: file is %lld bytes, too short for a .npy header", path,
			    (long long)size);
		goto out_close;
	}
	st = bw_pread_all(fd, pre, size >= 12 ? 12 : 10, 0, path);
	if (st)
		goto out_close;
	if (memcmp(pre, MAGIC, 6)) {
		st = bw_err(BURROW_E_FORMAT, "%s: not a .npy file (bad magic)", path);
		goto out_close;
	}
	if (pre[6] < 1 || pre[6] > 3) {
		st = bw_err(BURROW_E_FORMAT, "%s: unsupported .npy version %d.%d", path, pre[6], pre[7]);
		goto out_close;
	}
	size_t hlen = pre[6] == 1 ? (size_t)pre[8] | (size_t)pre[9] << 8
				  : (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
	size_t total = (pre[6] == 1 ? 10 : 12) + hlen;
	if ((int64_t)total > size) {
		st = bw_err(BURROW_E_FORMAT, "%s: truncated .npy header (%zu bytes declared, file is %lld)", path,
			    total, (long long)size);
		goto out_close;
	}
	if (hlen > (1u << 24)) {
		st = bw_err(BURROW_E_FORMAT, "%s: .npy header of %zu bytes is implausible", path, hlen);
		goto out_close;
	}
	buf = bw_malloc(total);
	if (!buf) {
		st = BURROW_E_NOMEM;
		goto out_close;
	}
	st = bw_pread_all(fd, buf, total, 0, path);
	if (!st)
		st = bw_npy_parse(buf, total, h, path);
	if (!st) {
		int64_t want = h->data_offset + bw_npy_data_bytes(h);
		if (size != want) {
			char shape[96] = "";
			size_t k = 0;
			for (int i = 0; i < h->ndim && k < sizeof shape - 24; i++)
				k += (size_t)snprintf(shape + k, sizeof shape - k, "%s%lld", i ? " x " : "",
						      (long long)h->shape[i]);
			st = bw_err(BURROW_E_FORMAT,
				    "%s: size is %lld bytes, expected %lld (%lld-byte header + [%s] %s)", path,
				    (long long)size, (long long)want, (long long)h->data_offset,
				    h->ndim ? shape : "scalar", burrow_dtype_name(h->dtype));
		}
	}
	bw_free(buf);
out_close:
	if (st == 0 && fdp)
		*fdp = fd;
	else
		close(fd);
	return st;
}

/* ---------------------------------------------------------------- formatting */

int bw_npy_format(const bw_npy *h, size_t align, char *buf, size_t cap, size_t *len)
{
	const struct dtype_desc *d = desc_of(h->dtype);
	char dict[512];
	int k;

	if (!d || h->ndim < 0 || h->ndim > BW_NPY_MAX_DIMS || align < 16 || (align & (align - 1)))
		return bw_err(BURROW_E_INVAL, "npy: bad header request");
	k = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", d->descr);
	for (int i = 0; i < h->ndim; i++)
		k += snprintf(dict + k, sizeof dict - (size_t)k, "%lld,%s", (long long)h->shape[i],
			      i + 1 < h->ndim ? " " : "");
	if (h->ndim > 1)
		k--; /* (3, 4) not (3, 4,) */
	k += snprintf(dict + k, sizeof dict - (size_t)k, "), }");
	size_t dl = (size_t)k;
	/* version 1.0 has a 2-byte length; 2.0 a 4-byte one */
	size_t pre = 10;
	size_t total = (pre + dl + 1 + align - 1) / align * align;
	if (total - pre > 65535) {
		pre = 12;
		total = (pre + dl + 1 + align - 1) / align * align;
	}
	if (total > cap)
		return bw_err(BURROW_E_INVAL, "npy: header of %zu bytes exceeds buffer", total);
	size_t hlen = total - pre;
	memcpy(buf, MAGIC, 6);
	buf[6] = pre == 10 ? 1 : 2;
	buf[7] = 0;
	if (pre == 10) {
		buf[8] = (char)(hlen & 0xff);
		buf[9] = (char)(hlen >> 8);
	} else {
		for (int i = 0; i < 4; i++)
			buf[8 + i] = (char)((hlen >> (8 * i)) & 0xff);
	}
	memcpy(buf + pre, dict, dl);
	memset(buf + pre + dl, ' ', total - pre - dl - 1);
	buf[total - 1] = '\n';
	*len = total;
	return 0;
}

/* ---------------------------------------------------------------- loading */

int bw_npy_load(const char *path, bw_npy *h, void **data)
{
	int fd, st;
	*data = NULL;
	st = bw_npy_open(path, h, &fd);
	if (st)
		return st;
	size_t n = (size_t)bw_npy_data_bytes(h);
	void *p = bw_malloc(n ? n : 1);
	if (!p) {
		st = BURROW_E_NOMEM;
		goto out_close;
	}
	st = bw_pread_all(fd, p, n, h->data_offset, path);
	if (st)
		bw_free(p);
	else
		*data = p;
out_close:
	close(fd);
	return st;
}

int bw_npy_mmap(const char *path, bw_npy *h, bw_npy_map *m)
{
	int fd, st;
	memset(m, 0, sizeof *m);
	st = bw_npy_open(path, h, &fd);
	if (st)
		return st;
	size_t len = (size_t)(h->data_offset + bw_npy_data_bytes(h));
	if (bw_npy_data_bytes(h) > 0) {
		void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) {
			st = bw_err_errno(errno, path, "mmap");
		} else {
			m->base = p;
			m->len = len;
			m->data = (const char *)p + h->data_offset;
			bw_map_register(p, len, path);
		}
	}
	close(fd);
	return st;
}

void bw_npy_unmap(bw_npy_map *m)
{
	if (m->base) {
		bw_map_unregister(m->base);
		munmap(m->base, m->len);
	}
	memset(m, 0, sizeof *m);
}

void bw_drop_mapped(const void *p, size_t len)
{
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	const uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + len) & ~(page - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void bw_npy_map_drop(const bw_npy_map *m)
{
	if (m->base && m->len)
		(void)madvise(m->base, m->len, MADV_DONTNEED);
}

/* ---------------------------------------------------------------- writing */

#define WBUF (4u << 20)

int bw_npy_writer_open(bw_npy_writer *w, const char *path, burrow_dtype t, int ndim, const int64_t *shape,
		       size_t align)
{
	bw_npy h = {.dtype = t, .ndim = ndim};
	char hdr[BW_NPY_FEATURE_ALIGN];
	size_t hl;
	int st;

	memset(w, 0, sizeof *w);
	w->f.fd = -1;
	if (ndim < 0 || ndim > BW_NPY_MAX_DIMS || align > sizeof hdr)
		return bw_err(BURROW_E_INVAL, "%s: bad array shape", path);
	for (int i = 0; i < ndim; i++) {
		if (shape[i] < 0)
			return bw_err(BURROW_E_INVAL, "%s: negative dimension %lld", path, (long long)shape[i]);
		h.shape[i] = shape[i];
	}
	st = bw_npy_format(&h, align, hdr, sizeof hdr, &hl);
	if (st)
		return bw_err_prefix(st, path);
	w->buf = bw_malloc(WBUF);
	if (!w->buf)
		return BURROW_E_NOMEM;
	w->cap = WBUF;
	st = bw_atomic_open(&w->f, path);
	if (st)
		goto out_free;
	st = bw_write_all(w->f.fd, hdr, hl, w->f.path);
	if (st)
		goto out_abort;
	w->expected = bw_npy_data_bytes(&h);
	return 0;
out_abort:
	bw_atomic_abort(&w->f);
out_free:
	bw_free(w->buf);
	w->buf = NULL;
	return st;
}

static int flush(bw_npy_writer *w)
{
	int st = bw_write_all(w->f.fd, w->buf, w->fill, w->f.path);
	w->fill = 0;
	return st;
}

int bw_npy_writer_append(bw_npy_writer *w, const void *data, size_t bytes)
{
	if (w->written + (int64_t)bytes > w->expected)
		return bw_err(BURROW_E_INVAL, "%s: more data than the shape holds (%lld > %lld bytes)", w->f.path,
			      (long long)(w->written + (int64_t)bytes), (long long)w->expected);
	w->written += (int64_t)bytes;
	if (w->fill + bytes <= w->cap) {
		memcpy(w->buf + w->fill, data, bytes);
		w->fill += bytes;
		return 0;
	}
	int st = flush(w);
	if (st)
		return st;
	if (bytes >= w->cap)
		return bw_write_all(w->f.fd, data, bytes, w->f.path);
	memcpy(w->buf, data, bytes);
	w->fill = bytes;
	return 0;
}

int bw_npy_writer_commit(bw_npy_writer *w)
{
	int st = 0;
	if (w->written != w->expected)
		st = bw_err(BURROW_E_INVAL, "%s: %lld bytes written, the shape needs %lld", w->f.path,
			    (long long)w->written, (long long)w->expected);
	if (!st)
		st = flush(w);
	if (!st)
		st = bw_atomic_commit(&w->f);
	if (st)
		bw_atomic_abort(&w->f);
	bw_free(w->buf);
	w->buf = NULL;
	return st;
}

void bw_npy_writer_abort(bw_npy_writer *w)
{
	bw_atomic_abort(&w->f);
	bw_free(w->buf);
	w->buf = NULL;
}

int bw_npy_save(const char *path, burrow_dtype t, int ndim, const int64_t *shape, const void *data, size_t align)
{
	bw_npy_writer w;
	int st = bw_npy_writer_open(&w, path, t, ndim, shape, align);
	if (st)
		return st;
	st = bw_npy_writer_append(&w, data, (size_t)w.expected);
	if (st) {
		bw_npy_writer_abort(&w);
		return st;
	}
	return bw_npy_writer_commit(&w);
}

/* ---------------------------------------------------------------- the public reader */

_Static_assert(BW_NPY_MAX_DIMS == BURROW_NPY_MAX_DIMS, "the public reader holds every shape the parser reads");

int burrow_npy_read(const char *path, burrow_npy_array *a)
{
	memset(a, 0, sizeof *a);
	bw_npy h;
	void *data;
	int st = bw_npy_load(path, &h, &data);
	if (st)
		return st;
	a->dtype = h.dtype;
	a->ndim = h.ndim;
	for (int i = 0; i < h.ndim; i++)
		a->shape[i] = h.shape[i];
	a->count = bw_npy_count(&h);
	a->data = data;
	return 0;
}

void burrow_npy_free(burrow_npy_array *a)
{
	if (!a)
		return;
	bw_free(a->data);
	memset(a, 0, sizeof *a);
}
