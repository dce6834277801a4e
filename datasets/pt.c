/* pt.c: torch.save files (a zip of <prefix>/data.pkl and <prefix>/data/<key> storages, or
 * torch < 1.6's legacy stream of pickles followed by the storages) read by a small pickle interpreter that knows the opcodes torch.save emits and an allow-list of
 * globals (torch._utils._rebuild_tensor_v2, torch.<X>Storage, collections.OrderedDict, and
 * for numpy arrays and scalars numpy[._core|.core].multiarray._reconstruct and .scalar,
 * numpy.ndarray, numpy.dtype, _codecs.encode, __builtin__.bytes); every tensor's view is checked against its
 * storage's real size before anything is allocated. */
#define _GNU_SOURCE
#include "pt.h"
#include "../core/half.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#define PKL_MAX_BYTES ((uint64_t)64 << 20) /* data.pkl: OGB's are a few hundred bytes */
#define MAX_VALUES (1 << 20)
#define MAX_STACK (1 << 16)
#define MAX_MARKS 64
#define MAX_MEMO (1 << 20)
#define MAX_TENSORS 4096

/* The storages torch.save names, as torch.<Name>Storage. */
enum { ST_FLOAT, ST_DOUBLE, ST_HALF, ST_LONG, ST_INT, ST_SHORT, ST_CHAR, ST_BYTE, ST_BOOL, NSTYPES };
static const struct {
	const char *name;
	int size;
	bool is_float;
} STYPE[NSTYPES] = {
	[ST_FLOAT] = {"FloatStorage", 4, true}, [ST_DOUBLE] = {"DoubleStorage", 8, true},
	[ST_HALF] = {"HalfStorage", 2, true},   [ST_LONG] = {"LongStorage", 8, false},
	[ST_INT] = {"IntStorage", 4, false},    [ST_SHORT] = {"ShortStorage", 2, false},
	[ST_CHAR] = {"CharStorage", 1, false},  [ST_BYTE] = {"ByteStorage", 1, false},
	[ST_BOOL] = {"BoolStorage", 1, false},
};

enum { PK_NONE, PK_BOOL, PK_INT, PK_FLOAT, PK_STR, PK_TUPLE, PK_LIST, PK_DICT, PK_FN, PK_STYPE, PK_STORAGE, PK_TENSOR,
       PK_BYTES, PK_DTYPE, PK_NDARRAY };
enum { FN_REBUILD, FN_ODICT, FN_NP_RECONSTRUCT, FN_NP_NDARRAY, FN_NP_DTYPE, FN_NP_SCALAR, FN_ENCODE, FN_BYTES };

/* numpy dtypes (dtype('<code>') as numpy pickles them) and the storage type of their bytes. */
static const struct {
	const char *code;
	int stype;
} NPTYPE[] = {
	{"i8", ST_LONG}, {"i4", ST_INT}, {"i2", ST_SHORT}, {"i1", ST_CHAR}, {"u1", ST_BYTE},
	{"b1", ST_BOOL}, {"f2", ST_HALF}, {"f4", ST_FLOAT}, {"f8", ST_DOUBLE},
};

/* A pickled value: scalars in place, containers as a list of value ids (a dict's as key,
 * value pairs), a string as a span of data.pkl. */
typedef struct pk_val {
	uint8_t kind;
	int64_t i;          /* PK_INT, PK_BOOL; PK_FN / PK_STYPE: which; PK_STORAGE / PK_TENSOR: its index;
			       PK_BYTES: 0 in data.pkl, 1 in the arena; PK_DTYPE: its NPTYPE */
	double f;
	uint32_t off, len;  /* PK_STR, PK_BYTES; PK_DTYPE: len is its byte order ('<', '|'; 0 until BUILD) */
	int32_t *items;     /* containers, owned */
	size_t n, cap;
} pk_val;

typedef struct pt_storage {
	int stype;
	zip_int64_t entry;     /* <prefix>data/<key>; -1 in a legacy file */
	int64_t numel;
	uint32_t key_off, key_len; /* its key in data.pkl (legacy: to find its data) */
	uint64_t file_off;     /* legacy: where its data starts in the file; 0 until found */
	uint8_t mem;           /* a numpy array's bytes: 0 none (in the file), 1 in data.pkl, 2 in the arena */
	uint64_t mem_off;      /* mem: where they start there */
} pt_storage;

typedef struct pt_view {
	int storage;
	int64_t offset;
	int ndim;
	int64_t size[BW_PT_MAX_DIMS], stride[BW_PT_MAX_DIMS];
	int64_t numel, span;   /* elements; storage elements from offset to the last one read */
	bool contiguous;
} pt_view;

struct bw_pt {
	char *name;            /* owned */
	int fd;                /* owned */
	zip_t *za;
	char prefix[256];      /* "<top>/" */
	uint8_t *pkl;          /* owned */
	size_t pkl_n;
	pk_val *v;             /* values, owned */
	size_t nv, vcap;
	int32_t *stack;
	size_t sp, scap;
	size_t marks[MAX_MARKS];
	int nmarks;
	int32_t *memo;         /* value id + 1, 0 = empty */
	size_t mcap, memo_n;   /* memo_n: entries set (MEMOIZE's index) */
	uint8_t *arena;        /* bytes _codecs.encode made (numpy arrays of protocol 2), owned */
	size_t arena_n, arena_cap;
	pt_storage *storages;
	size_t nstor, stcap;
	pt_view *views;
	size_t nviews, vwcap;
	int32_t top;           /* the dict STOP returned */
	uint64_t legacy_off;   /* the file offset read_member reads a legacy storage at */
	bool legacy;           /* torch < 1.6: pickles and storages one after the other, no zip */
	uint64_t file_bytes;
};

static int perr(const bw_pt *pt, int st, const char *fmt, ...) BW_PRINTF(3, 4);
static int perr(const bw_pt *pt, int st, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return bw_err(st, "%s: %s", pt->name, msg);
}

/* ---------------------------------------------------------------- values and the stack */

static int new_val(bw_pt *pt, int kind, int32_t *id)
{
	*id = 0;
	if (pt->nv >= MAX_VALUES)
		return perr(pt, BURROW_E_FORMAT, "pickle: more than %d values", MAX_VALUES);
	int st = bw_grow(&pt->v, &pt->vcap, pt->nv + 1, sizeof *pt->v, true);
	if (st)
		return st;
	pt->v[pt->nv] = (pk_val){.kind = (uint8_t)kind};
	*id = (int32_t)pt->nv++;
	return 0;
}

static int push(bw_pt *pt, int32_t id)
{
	if (pt->sp >= MAX_STACK)
		return perr(pt, BURROW_E_FORMAT, "pickle: stack deeper than %d", MAX_STACK);
	int st = bw_grow(&pt->stack, &pt->scap, pt->sp + 1, sizeof *pt->stack, true);
	if (!st)
		pt->stack[pt->sp++] = id;
	return st;
}

static int push_new(bw_pt *pt, int kind, int32_t *id)
{
	int st = new_val(pt, kind, id);
	return st ? st : push(pt, *id);
}

/* The top value, which must lie above the innermost mark. */
static int pop(bw_pt *pt, int32_t *id)
{
	*id = 0;
	size_t floor = pt->nmarks ? pt->marks[pt->nmarks - 1] : 0;
	if (pt->sp <= floor)
		return perr(pt, BURROW_E_FORMAT, "pickle: stack underflow");
	*id = pt->stack[--pt->sp];
	return 0;
}

static int peek(bw_pt *pt, int32_t *id)
{
	int st = pop(pt, id);
	if (!st)
		pt->sp++;
	return st;
}

static int pop_mark(bw_pt *pt, size_t *base)
{
	if (!pt->nmarks)
		return perr(pt, BURROW_E_FORMAT, "pickle: no mark to pop to");
	*base = pt->marks[--pt->nmarks];
	return 0;
}

static int add_item(bw_pt *pt, int32_t c, int32_t item)
{
	pk_val *v = &pt->v[c];
	int st = bw_grow(&v->items, &v->cap, v->n + 1, sizeof *v->items, true);
	if (!st)
		v->items[v->n++] = item;
	return st;
}

/* A tuple of the n values on top of the stack (n <= what lies above the mark). */
static int make_tuple(bw_pt *pt, size_t base)
{
	int32_t t;
	int st = new_val(pt, PK_TUPLE, &t);
	for (size_t k = base; k < pt->sp && !st; k++)
		st = add_item(pt, t, pt->stack[k]);
	if (!st) {
		pt->sp = base;
		st = push(pt, t);
	}
	return st;
}

static int tuple_n(bw_pt *pt, size_t n)
{
	size_t floor = pt->nmarks ? pt->marks[pt->nmarks - 1] : 0;
	if (pt->sp < floor + n)
		return perr(pt, BURROW_E_FORMAT, "pickle: stack underflow");
	return make_tuple(pt, pt->sp - n);
}

/* ---------------------------------------------------------------- the byte stream */

typedef struct rd {
	const uint8_t *p, *end;
} rd;

static int take(bw_pt *pt, rd *r, size_t n, const uint8_t **out)
{
	*out = r->p;
	if ((size_t)(r->end - r->p) < n)
		return perr(pt, BURROW_E_FORMAT, "pickle: truncated (no STOP)");
	*out = r->p;
	r->p += n;
	return 0;
}

static uint64_t le(const uint8_t *b, int n)
{
	uint64_t x = 0;
	for (int k = n - 1; k >= 0; k--)
		x = x << 8 | b[k];
	return x;
}

static int entry_size(bw_pt *pt, zip_int64_t e, const char *what, uint64_t *size);

/* ---------------------------------------------------------------- globals, persistent ids, reduce */

/* The allowed globals that are functions (or numpy.ndarray, only an argument of _reconstruct). */
static const struct {
	const char *mod, *name;
	int fn;
} GLOBALS[] = {
	{"torch._utils", "_rebuild_tensor_v2", FN_REBUILD},
	{"collections", "OrderedDict", FN_ODICT},
	{"numpy.core.multiarray", "_reconstruct", FN_NP_RECONSTRUCT}, /* numpy < 2 */
	{"numpy._core.multiarray", "_reconstruct", FN_NP_RECONSTRUCT}, /* numpy >= 2 */
	{"numpy.core.multiarray", "scalar", FN_NP_SCALAR},
	{"numpy._core.multiarray", "scalar", FN_NP_SCALAR},
	{"numpy", "ndarray", FN_NP_NDARRAY},
	{"numpy", "dtype", FN_NP_DTYPE},
	{"_codecs", "encode", FN_ENCODE},
	{"__builtin__", "bytes", FN_BYTES}, /* bytes(): protocol 2's empty bytes (an empty array's) */
};

/* The global mod.name (GLOBAL, STACK_GLOBAL): only the allow-list. */
static int global_named(bw_pt *pt, const char *ms, size_t ml, const char *ns, size_t nl)
{
	char mod[128], name[128];
	if (ml >= sizeof mod || nl >= sizeof name)
		return perr(pt, BURROW_E_FORMAT, "pickle: GLOBAL name too long");
	snprintf(mod, sizeof mod, "%.*s", (int)ml, ms);
	snprintf(name, sizeof name, "%.*s", (int)nl, ns);
	int32_t id;
	int st;
	for (size_t k = 0; k < sizeof GLOBALS / sizeof *GLOBALS; k++)
		if (!strcmp(mod, GLOBALS[k].mod) && !strcmp(name, GLOBALS[k].name)) {
			if (!(st = push_new(pt, PK_FN, &id)))
				pt->v[id].i = GLOBALS[k].fn;
			return st;
		}
	for (int k = 0; k < NSTYPES && !strcmp(mod, "torch"); k++)
		if (!strcmp(name, STYPE[k].name)) {
			if (!(st = push_new(pt, PK_STYPE, &id)))
				pt->v[id].i = k;
			return st;
		}
	for (char *c = mod; *c; c++)
		if (*c < 32 || *c > 126)
			*c = '?';
	for (char *c = name; *c; c++)
		if (*c < 32 || *c > 126)
			*c = '?';
	return perr(pt, BURROW_E_UNSUPPORTED,
		    "pickle: global %s.%s is not allowed (only tensors, numpy arrays, lists, tuples, dicts)", mod, name);
}

/* GLOBAL "module\nname\n". */
static int op_global(bw_pt *pt, rd *r)
{
	const uint8_t *s = r->p, *nl1 = memchr(s, '\n', (size_t)(r->end - s));
	const uint8_t *nl2 = nl1 ? memchr(nl1 + 1, '\n', (size_t)(r->end - nl1 - 1)) : NULL;
	if (!nl2)
		return perr(pt, BURROW_E_FORMAT, "pickle: truncated GLOBAL");
	r->p = nl2 + 1;
	return global_named(pt, (const char *)s, (size_t)(nl1 - s), (const char *)nl1 + 1, (size_t)(nl2 - nl1 - 1));
}

/* STACK_GLOBAL (protocol 4): module and name are the two strings on top. */
static int op_stack_global(bw_pt *pt)
{
	int32_t m, n;
	int st;
	if ((st = pop(pt, &n)) || (st = pop(pt, &m)))
		return st;
	const pk_val *mv = &pt->v[m], *nv = &pt->v[n];
	if (mv->kind != PK_STR || nv->kind != PK_STR)
		return perr(pt, BURROW_E_FORMAT, "pickle: STACK_GLOBAL of values that are not strings");
	return global_named(pt, (const char *)pt->pkl + mv->off, mv->len, (const char *)pt->pkl + nv->off, nv->len);
}

static bool str_is(const bw_pt *pt, const pk_val *v, const char *s)
{
	return v->kind == PK_STR && v->len == strlen(s) && !memcmp(pt->pkl + v->off, s, v->len);
}

/* BINPERSID: ('storage', torch.<X>Storage, key, location, numel) -> a storage whose member
 * data/<key> exists and holds numel elements; a legacy file's id has a sixth field, None (a
 * storage view is refused), and its data is found after the pickles (legacy_storages). */
static int op_persid(bw_pt *pt)
{
	int32_t id;
	int st = pop(pt, &id);
	if (st)
		return st;
	const pk_val *t = &pt->v[id];
	const size_t n = pt->legacy ? 6 : 5;
	if (t->kind == PK_TUPLE && t->n == n && n == 6 && pt->v[t->items[5]].kind != PK_NONE)
		return perr(pt, BURROW_E_UNSUPPORTED, "pickle: a storage view (legacy view_metadata) is not supported");
	if (t->kind != PK_TUPLE || t->n != n || !str_is(pt, &pt->v[t->items[0]], "storage") ||
	    pt->v[t->items[1]].kind != PK_STYPE || pt->v[t->items[2]].kind != PK_STR || pt->v[t->items[4]].kind != PK_INT)
		return perr(pt, BURROW_E_FORMAT, "pickle: persistent id is not ('storage', type, key, location, size)");
	const pk_val *key = &pt->v[t->items[2]];
	const int stype = (int)pt->v[t->items[1]].i;
	const int64_t numel = pt->v[t->items[4]].i;
	char member[512];
	if (key->len > 64 || numel < 0)
		return perr(pt, BURROW_E_FORMAT, "pickle: storage key or size out of range");
	snprintf(member, sizeof member, "%sdata/%.*s", pt->prefix, (int)key->len, (const char *)pt->pkl + key->off);
	uint64_t bytes = UINT64_MAX;
	zip_int64_t e = pt->legacy ? -1 : zip_name_locate(pt->za, member, 0);
	if (pt->legacy)
		; /* checked against the file once the storages' places are known */
	else if (e < 0)
		return perr(pt, BURROW_E_FORMAT, "storage %s is missing", member);
	else if ((st = entry_size(pt, e, member, &bytes)))
		return st;
	if ((uint64_t)numel > bytes / (uint64_t)STYPE[stype].size)
		return perr(pt, BURROW_E_FORMAT, "storage %s: %lld elements of %d bytes claimed, the member has %llu bytes",
			    member, (long long)numel, STYPE[stype].size, (unsigned long long)bytes);
	if (pt->nstor >= MAX_TENSORS)
		return perr(pt, BURROW_E_FORMAT, "more than %d storages", MAX_TENSORS);
	const pt_storage stor = {.stype = stype, .entry = e, .numel = numel, .key_off = key->off, .key_len = key->len};
	/* key points into pt->v, which push_new may move */
	if ((st = bw_grow(&pt->storages, &pt->stcap, pt->nstor + 1, sizeof *pt->storages, true)) ||
	    (st = push_new(pt, PK_STORAGE, &id)))
		return st;
	pt->storages[pt->nstor] = stor;
	pt->v[id].i = (int64_t)pt->nstor++;
	return 0;
}

/* A tuple of non-negative ints into out[ndim]. */
static int int_tuple(bw_pt *pt, const pk_val *t, int64_t *out, int *ndim, const char *what)
{
	if (t->kind != PK_TUPLE)
		return perr(pt, BURROW_E_FORMAT, "tensor %s is not a tuple", what);
	if (t->n > BW_PT_MAX_DIMS)
		return perr(pt, BURROW_E_UNSUPPORTED, "tensor of %zu dimensions (at most %d)", t->n, BW_PT_MAX_DIMS);
	for (size_t k = 0; k < t->n; k++) {
		const pk_val *x = &pt->v[t->items[k]];
		if (x->kind != PK_INT)
			return perr(pt, BURROW_E_FORMAT, "tensor %s holds a non-integer", what);
		if (x->i < 0)
			return perr(pt, BURROW_E_FORMAT, "tensor %s %lld is negative", what, (long long)x->i);
		out[k] = x->i;
	}
	*ndim = (int)t->n;
	return 0;
}

/* The view's elements must lie in the storage, and no two may share a storage element
 * (dims sorted by stride, each stride passing the extent of the smaller ones). */
static int check_view(bw_pt *pt, pt_view *w)
{
	const pt_storage *s = &pt->storages[w->storage];
	int64_t numel = 1, last = 0;
	for (int d = 0; d < w->ndim; d++)
		if (__builtin_mul_overflow(numel, w->size[d], &numel) || numel > (INT64_MAX >> 4))
			return perr(pt, BURROW_E_FORMAT, "tensor shape too large");
	w->numel = numel;
	if (numel == 0)
		return 0;
	for (int d = 0; d < w->ndim; d++) {
		int64_t x;
		if (__builtin_mul_overflow(w->size[d] - 1, w->stride[d], &x) || __builtin_add_overflow(last, x, &last))
			return perr(pt, BURROW_E_FORMAT, "tensor view too large");
	}
	if (last > INT64_MAX - w->offset || w->offset + last >= s->numel)
		return perr(pt, BURROW_E_FORMAT,
			    "tensor view (offset %lld, last element %lld) lies outside its storage of %lld elements",
			    (long long)w->offset, (long long)(w->offset + last), (long long)s->numel);
	w->span = last + 1;
	int order[BW_PT_MAX_DIMS], n = 0;
	for (int d = 0; d < w->ndim; d++) {
		if (w->size[d] == 1)
			continue;
		int j = n++;
		for (; j > 0 && w->stride[order[j - 1]] > w->stride[d]; j--)
			order[j] = order[j - 1];
		order[j] = d;
	}
	int64_t extent = 1; /* the elements the smaller-stride dims cover: [0, extent) */
	for (int k = 0; k < n; k++) {
		const int d = order[k];
		if (w->stride[d] < extent)
			return perr(pt, BURROW_E_FORMAT, "tensor view overlaps itself (stride %lld of dimension %d)",
				    (long long)w->stride[d], d);
		extent += w->stride[d] * (w->size[d] - 1);
	}
	int64_t expect = 1;
	w->contiguous = true;
	for (int d = w->ndim - 1; d >= 0; d--)
		if (w->size[d] != 1) {
			w->contiguous &= w->stride[d] == expect;
			expect *= w->size[d];
		}
	return 0;
}

/* _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]). */
static int rebuild(bw_pt *pt, int32_t args, int32_t *out)
{
	const pk_val *a = &pt->v[args];
	if (a->kind != PK_TUPLE || a->n < 6 || a->n > 7 || pt->v[a->items[0]].kind != PK_STORAGE ||
	    pt->v[a->items[1]].kind != PK_INT)
		return perr(pt, BURROW_E_FORMAT, "pickle: _rebuild_tensor_v2 called with other arguments than a tensor's");
	pt_view w = {.storage = (int)pt->v[a->items[0]].i, .offset = pt->v[a->items[1]].i};
	int nstride = 0;
	int st;
	if (w.offset < 0)
		return perr(pt, BURROW_E_FORMAT, "tensor offset %lld is negative", (long long)w.offset);
	if ((st = int_tuple(pt, &pt->v[a->items[2]], w.size, &w.ndim, "size")) ||
	    (st = int_tuple(pt, &pt->v[a->items[3]], w.stride, &nstride, "stride")))
		return st;
	if (nstride != w.ndim)
		return perr(pt, BURROW_E_FORMAT, "tensor has %d sizes but %d strides", w.ndim, nstride);
	if ((st = check_view(pt, &w)))
		return st;
	if (pt->nviews >= MAX_TENSORS)
		return perr(pt, BURROW_E_FORMAT, "more than %d tensors", MAX_TENSORS);
	if ((st = bw_grow(&pt->views, &pt->vwcap, pt->nviews + 1, sizeof *pt->views, true)) ||
	    (st = new_val(pt, PK_TENSOR, out)))
		return st;
	pt->views[pt->nviews] = w;
	pt->v[*out].i = (int64_t)pt->nviews++;
	return 0;
}

/* ---------------------------------------------------------------- numpy arrays and scalars */

static void convert_one(int stype, const uint8_t *src, void *dst);

static const uint8_t *bytes_at(const bw_pt *pt, const pk_val *b) { return (b->i ? pt->arena : pt->pkl) + b->off; }

/* A pickled string for a message: at most 32 characters, the unprintable ones as '?'. */
static const char *shown(const bw_pt *pt, const pk_val *s, char out[36])
{
	size_t n = s->kind == PK_STR ? BW_MIN(s->len, 32u) : 0;
	for (size_t k = 0; k < n; k++) {
		const char c = (char)pt->pkl[s->off + k];
		out[k] = c < 32 || c > 126 ? '?' : c;
	}
	out[n] = 0;
	return out;
}

/* _codecs.encode(str, 'latin1'), how protocol 2 holds bytes: the string's UTF-8 (code points
 * below 256 only) back into bytes, kept in the arena. */
static int encode_latin1(bw_pt *pt, int32_t args, int32_t *out)
{
	const pk_val *a = &pt->v[args];
	if (a->kind != PK_TUPLE || a->n != 2 || pt->v[a->items[0]].kind != PK_STR ||
	    !str_is(pt, &pt->v[a->items[1]], "latin1"))
		return perr(pt, BURROW_E_UNSUPPORTED, "pickle: _codecs.encode called with other arguments than (str, 'latin1')");
	const pk_val s = pt->v[a->items[0]];
	if (s.len > PKL_MAX_BYTES - pt->arena_n)
		return perr(pt, BURROW_E_FORMAT, "pickle: _codecs.encode of more than %llu bytes in all",
			    (unsigned long long)PKL_MAX_BYTES);
	int st = bw_grow(&pt->arena, &pt->arena_cap, pt->arena_n + s.len + 1, 1, true);
	if (st)
		return st;
	const uint8_t *p = pt->pkl + s.off, *end = p + s.len;
	uint8_t *o = pt->arena + pt->arena_n;
	size_t n = 0;
	while (p < end)
		if (*p < 0x80) {
			o[n++] = *p++;
		} else if ((*p == 0xc2 || *p == 0xc3) && end - p >= 2 && (p[1] & 0xc0) == 0x80) {
			o[n++] = (uint8_t)((p[0] & 3) << 6 | (p[1] & 0x3f));
			p += 2;
		} else {
			return perr(pt, BURROW_E_FORMAT, "pickle: _codecs.encode of a string that is not latin-1 (byte %zu)",
				    (size_t)(p - pt->pkl));
		}
	if ((st = new_val(pt, PK_BYTES, out)))
		return st;
	pt->v[*out] = (pk_val){.kind = PK_BYTES, .i = 1, .off = (uint32_t)pt->arena_n, .len = (uint32_t)n};
	pt->arena_n += n;
	return 0;
}

/* numpy.dtype(code, align, copy): one of NPTYPE; BUILD then sets its byte order. */
static int np_dtype(bw_pt *pt, int32_t args, int32_t *out)
{
	const pk_val *a = &pt->v[args];
	char buf[36];
	if (a->kind != PK_TUPLE || a->n != 3 || pt->v[a->items[0]].kind != PK_STR)
		return perr(pt, BURROW_E_FORMAT, "pickle: numpy.dtype called with other arguments than (code, align, copy)");
	for (int k = 0; k < (int)(sizeof NPTYPE / sizeof *NPTYPE); k++)
		if (str_is(pt, &pt->v[a->items[0]], NPTYPE[k].code)) {
			int st = new_val(pt, PK_DTYPE, out);
			if (!st)
				pt->v[*out].i = k;
			return st;
		}
	return perr(pt, BURROW_E_UNSUPPORTED,
		    "pickle: numpy dtype '%s' is not supported (only i8, i4, i2, i1, u1, b1, f2, f4, f8)",
		    shown(pt, &pt->v[a->items[0]], buf));
}

/* BUILD of a dtype: (3, order, None, None, None, elsize, alignment, flags[, metadata] with 4). */
static int np_build_dtype(bw_pt *pt, int32_t dt, int32_t state)
{
	const pk_val *s = &pt->v[state];
	char buf[36];
	if (s->kind != PK_TUPLE || s->n < 8 || s->n > 9 || pt->v[s->items[0]].kind != PK_INT ||
	    pt->v[s->items[0]].i != (int64_t)s->n - 5 || pt->v[s->items[1]].kind != PK_STR)
		return perr(pt, BURROW_E_FORMAT, "pickle: numpy dtype state is not (3, order, ...)");
	for (size_t k = 2; k < 8; k++)
		if (pt->v[s->items[k]].kind != (k < 5 ? PK_NONE : PK_INT))
			return perr(pt, BURROW_E_UNSUPPORTED, "pickle: a numpy dtype with fields or a subarray is not supported");
	const pk_val *o = &pt->v[s->items[1]];
	const bool one = STYPE[NPTYPE[pt->v[dt].i].stype].size == 1;
	if (!str_is(pt, o, "<") && !(one && str_is(pt, o, "|")))
		return perr(pt, BURROW_E_UNSUPPORTED, "pickle: numpy dtype %s of byte order '%s' (only little-endian is read)",
			    NPTYPE[pt->v[dt].i].code, shown(pt, o, buf));
	pt->v[dt].len = pt->pkl[o->off];
	return 0;
}

/* _reconstruct(numpy.ndarray, (0,), b'b'): an array its BUILD fills. */
static int np_reconstruct(bw_pt *pt, int32_t args, int32_t *out)
{
	const pk_val *a = &pt->v[args];
	if (a->kind != PK_TUPLE || a->n != 3 || pt->v[a->items[0]].kind != PK_FN || pt->v[a->items[0]].i != FN_NP_NDARRAY ||
	    pt->v[a->items[1]].kind != PK_TUPLE || pt->v[a->items[2]].kind != PK_BYTES)
		return perr(pt, BURROW_E_UNSUPPORTED, "pickle: _reconstruct called with other arguments than (ndarray, shape, "
			    "bytes)");
	return new_val(pt, PK_NDARRAY, out);
}

/* BUILD of an array: (1, shape, dtype, is_fortran, bytes), the bytes exactly the shape's;
 * the array becomes a tensor over a storage of those bytes. */
static int np_build_array(bw_pt *pt, int32_t arr, int32_t state)
{
	const pk_val *s = &pt->v[state];
	if (s->kind != PK_TUPLE || s->n != 5 || pt->v[s->items[0]].kind != PK_INT || pt->v[s->items[0]].i != 1 ||
	    pt->v[s->items[2]].kind != PK_DTYPE || pt->v[s->items[3]].kind != PK_BOOL || pt->v[s->items[4]].kind != PK_BYTES)
		return perr(pt, BURROW_E_FORMAT, "pickle: numpy array state is not (1, shape, dtype, is_fortran, bytes)");
	const pk_val *dt = &pt->v[s->items[2]], *data = &pt->v[s->items[4]];
	if (!dt->len)
		return perr(pt, BURROW_E_FORMAT, "pickle: numpy array of a dtype without its state");
	const int stype = NPTYPE[dt->i].stype, es = STYPE[stype].size;
	const bool fortran = pt->v[s->items[3]].i;
	pt_view w = {.storage = (int)pt->nstor};
	int st = int_tuple(pt, &pt->v[s->items[1]], w.size, &w.ndim, "shape");
	int64_t numel = 1;
	for (int d = 0; d < w.ndim && !st; d++)
		if (__builtin_mul_overflow(numel, w.size[d], &numel) || numel > (INT64_MAX >> 4))
			st = perr(pt, BURROW_E_FORMAT, "numpy array shape too large");
	if (!st && (uint64_t)numel * (uint64_t)es != data->len)
		st = perr(pt, BURROW_E_FORMAT, "numpy array of %lld elements of %d bytes holds %u bytes", (long long)numel, es,
			  data->len);
	if (!st && pt->nstor >= MAX_TENSORS)
		st = perr(pt, BURROW_E_FORMAT, "more than %d storages", MAX_TENSORS);
	if (st)
		return st;
	int64_t acc = 1; /* <= numel; strides do not matter when numel is 0 */
	for (int k = 0; k < w.ndim && numel; k++) { /* row-major, or column-major when is_fortran */
		const int d = fortran ? k : w.ndim - 1 - k;
		w.stride[d] = acc;
		acc *= w.size[d];
	}
	const pt_storage stor = {
		.stype = stype, .entry = -1, .numel = numel, .mem = data->i ? 2 : 1, .mem_off = data->off};
	if ((st = bw_grow(&pt->storages, &pt->stcap, pt->nstor + 1, sizeof *pt->storages, true)))
		return st;
	pt->storages[pt->nstor++] = stor;
	if ((st = check_view(pt, &w)))
		return st;
	if (pt->nviews >= MAX_TENSORS)
		return perr(pt, BURROW_E_FORMAT, "more than %d tensors", MAX_TENSORS);
	if ((st = bw_grow(&pt->views, &pt->vwcap, pt->nviews + 1, sizeof *pt->views, true)))
		return st;
	pt->views[pt->nviews] = w;
	pt->v[arr].kind = PK_TENSOR;
	pt->v[arr].i = (int64_t)pt->nviews++;
	return 0;
}

/* numpy.core.multiarray.scalar(dtype, bytes): an int, bool or float. */
static int np_scalar(bw_pt *pt, int32_t args, int32_t *out)
{
	const pk_val *a = &pt->v[args];
	if (a->kind != PK_TUPLE || a->n != 2 || pt->v[a->items[0]].kind != PK_DTYPE || !pt->v[a->items[0]].len ||
	    pt->v[a->items[1]].kind != PK_BYTES)
		return perr(pt, BURROW_E_FORMAT, "pickle: numpy scalar called with other arguments than (dtype, bytes)");
	const int stype = NPTYPE[pt->v[a->items[0]].i].stype;
	const pk_val b = pt->v[a->items[1]];
	if (b.len != (uint32_t)STYPE[stype].size)
		return perr(pt, BURROW_E_FORMAT, "pickle: numpy scalar of %d bytes holds %u", STYPE[stype].size, b.len);
	const uint8_t *src = bytes_at(pt, &b);
	pk_val x = {.kind = stype == ST_BOOL ? PK_BOOL : STYPE[stype].is_float ? PK_FLOAT : PK_INT};
	if (stype == ST_DOUBLE) {
		memcpy(&x.f, src, 8);
	} else if (x.kind == PK_FLOAT) {
		float f;
		convert_one(stype, src, &f);
		x.f = f;
	} else {
		convert_one(stype, src, &x.i);
	}
	int st = new_val(pt, x.kind, out);
	if (!st)
		pt->v[*out] = x;
	return st;
}

/* BUILD: the state on top into the object below it (a numpy dtype or array; nothing else). */
static int op_build(bw_pt *pt)
{
	int32_t state, obj;
	int st;
	if ((st = pop(pt, &state)) || (st = peek(pt, &obj)))
		return st;
	if (pt->v[obj].kind == PK_DTYPE)
		return np_build_dtype(pt, obj, state);
	if (pt->v[obj].kind == PK_NDARRAY)
		return np_build_array(pt, obj, state);
	return perr(pt, BURROW_E_UNSUPPORTED, "pickle: BUILD of something that is not a numpy array or dtype");
}

static int op_reduce(bw_pt *pt)
{
	int32_t args, fn, res;
	int st;
	if ((st = pop(pt, &args)) || (st = pop(pt, &fn)))
		return st;
	if (pt->v[fn].kind != PK_FN || pt->v[fn].i == FN_NP_NDARRAY)
		return perr(pt, BURROW_E_UNSUPPORTED, "pickle: REDUCE of something that is not an allowed function");
	switch (pt->v[fn].i) {
	case FN_ODICT:
		if (pt->v[args].kind != PK_TUPLE || pt->v[args].n)
			return perr(pt, BURROW_E_FORMAT, "pickle: OrderedDict called with arguments");
		return push_new(pt, PK_DICT, &res);
	case FN_NP_RECONSTRUCT: st = np_reconstruct(pt, args, &res); break;
	case FN_NP_DTYPE: st = np_dtype(pt, args, &res); break;
	case FN_NP_SCALAR: st = np_scalar(pt, args, &res); break;
	case FN_ENCODE: st = encode_latin1(pt, args, &res); break;
	case FN_BYTES:
		if (pt->v[args].kind != PK_TUPLE || pt->v[args].n)
			return perr(pt, BURROW_E_UNSUPPORTED, "pickle: bytes called with arguments");
		return push_new(pt, PK_BYTES, &res); /* 0 bytes of data.pkl */
	default: st = rebuild(pt, args, &res); break;
	}
	return st ? st : push(pt, res);
}

/* ---------------------------------------------------------------- the interpreter */

static int op_memo(bw_pt *pt, uint64_t k, bool put)
{
	if (k >= MAX_MEMO)
		return perr(pt, BURROW_E_FORMAT, "pickle: memo index %llu out of range", (unsigned long long)k);
	if (put) {
		int32_t id;
		const size_t had = pt->mcap;
		int st = peek(pt, &id);
		if (!st && k >= pt->mcap && !(st = bw_grow(&pt->memo, &pt->mcap, (size_t)k + 1, sizeof *pt->memo, true)))
			memset(pt->memo + had, 0, (pt->mcap - had) * sizeof *pt->memo); /* 0: never set */
		if (!st) {
			pt->memo_n += !pt->memo[k];
			pt->memo[k] = id + 1;
		}
		return st;
	}
	if (k >= pt->mcap || !pt->memo[k])
		return perr(pt, BURROW_E_FORMAT, "pickle: memo index %llu was never set", (unsigned long long)k);
	return push(pt, pt->memo[k] - 1);
}

/* SETITEM(S) and APPEND(S): into the container below `base`. */
static int fill(bw_pt *pt, size_t base, bool dict)
{
	if (base <= (pt->nmarks ? pt->marks[pt->nmarks - 1] : 0))
		return perr(pt, BURROW_E_FORMAT, "pickle: no container to add to");
	const int32_t c = pt->stack[base - 1];
	if (pt->v[c].kind != (dict ? PK_DICT : PK_LIST))
		return perr(pt, BURROW_E_FORMAT, "pickle: %s into a value that is not a %s", dict ? "SETITEM" : "APPEND",
			    dict ? "dict" : "list");
	if (dict && (pt->sp - base) % 2)
		return perr(pt, BURROW_E_FORMAT, "pickle: SETITEMS with an odd number of values");
	int st = 0;
	for (size_t k = base; k < pt->sp && !st; k++)
		st = add_item(pt, c, pt->stack[k]);
	pt->sp = base;
	return st;
}

static int op_fill(bw_pt *pt, bool dict, bool many)
{
	size_t base = pt->sp;
	int st = many ? pop_mark(pt, &base) : 0;
	if (!many) {
		size_t floor = pt->nmarks ? pt->marks[pt->nmarks - 1] : 0;
		if (pt->sp < floor + (dict ? 2 : 1))
			return perr(pt, BURROW_E_FORMAT, "pickle: stack underflow");
		base = pt->sp - (dict ? 2 : 1);
	}
	return st ? st : fill(pt, base, dict);
}

/* A string (PK_STR) or bytes (PK_BYTES) of a lenbytes-byte length, a span of data.pkl. */
static int op_str(bw_pt *pt, rd *r, int lenbytes, int kind)
{
	const uint8_t *b, *s;
	int32_t id;
	int st = take(pt, r, (size_t)lenbytes, &b);
	uint64_t n = st ? 0 : le(b, lenbytes);
	if (st || (st = take(pt, r, (size_t)n, &s)) || (st = push_new(pt, kind, &id)))
		return st;
	pt->v[id].off = (uint32_t)(s - pt->pkl);
	pt->v[id].len = (uint32_t)n;
	return 0;
}

static int op_int(bw_pt *pt, rd *r, int nbytes, bool is_signed)
{
	const uint8_t *b;
	int32_t id;
	int st = take(pt, r, (size_t)nbytes, &b);
	if (!st && nbytes == 1 && is_signed) { /* LONG1: a length, then that many bytes */
		const int n = b[0];
		if (n > 8)
			return perr(pt, BURROW_E_FORMAT, "pickle: integer of %d bytes", n);
		if ((st = take(pt, r, (size_t)n, &b)))
			return st;
		nbytes = n;
	}
	if (st || (st = push_new(pt, PK_INT, &id)))
		return st;
	uint64_t x = le(b, nbytes);
	if (is_signed && nbytes > 0 && nbytes < 8 && (x >> (8 * nbytes - 1)) & 1)
		x |= ~(uint64_t)0 << (8 * nbytes);
	pt->v[id].i = (int64_t)x;
	return 0;
}

static int op_float(bw_pt *pt, rd *r)
{
	const uint8_t *b;
	int32_t id;
	int st = take(pt, r, 8, &b);
	if (st || (st = push_new(pt, PK_FLOAT, &id)))
		return st;
	uint64_t x = 0;
	for (int k = 0; k < 8; k++)
		x = x << 8 | b[k]; /* big-endian */
	memcpy(&pt->v[id].f, &x, sizeof x);
	return 0;
}

static int op_mark(bw_pt *pt)
{
	if (pt->nmarks >= MAX_MARKS)
		return perr(pt, BURROW_E_FORMAT, "pickle: marks nested deeper than %d", MAX_MARKS);
	pt->marks[pt->nmarks++] = pt->sp;
	return 0;
}

/* One opcode; *stop at STOP. */
static int step(bw_pt *pt, rd *r, bool *stop)
{
	const uint8_t *b = NULL;
	int32_t id;
	size_t base = 0;
	int st = take(pt, r, 1, &b);
	if (st)
		return st;
	const uint8_t op = b[0];
	switch (op) {
	case 0x80: /* PROTO */
		if ((st = take(pt, r, 1, &b)))
			return st;
		return b[0] >= 2 && b[0] <= 4 ? 0 : perr(pt, BURROW_E_UNSUPPORTED, "pickle: protocol %d", b[0]);
	case 0x95: return take(pt, r, 8, &b); /* FRAME: the length is a hint */
	case '}': return push_new(pt, PK_DICT, &id);
	case ']': return push_new(pt, PK_LIST, &id);
	case ')': return push_new(pt, PK_TUPLE, &id);
	case '(': return op_mark(pt);
	case 0x85: return tuple_n(pt, 1);
	case 0x86: return tuple_n(pt, 2);
	case 0x87: return tuple_n(pt, 3);
	case 't': return (st = pop_mark(pt, &base)) ? st : make_tuple(pt, base);
	case 's': return op_fill(pt, true, false);
	case 'u': return op_fill(pt, true, true);
	case 'a': return op_fill(pt, false, false);
	case 'e': return op_fill(pt, false, true);
	case 'J': return op_int(pt, r, 4, true);
	case 'K': return op_int(pt, r, 1, false);
	case 'M': return op_int(pt, r, 2, false);
	case 0x8a: return op_int(pt, r, 1, true); /* LONG1 */
	case 'G': return op_float(pt, r);
	case 'N': return push_new(pt, PK_NONE, &id);
	case 0x88:
	case 0x89:
		if (!(st = push_new(pt, PK_BOOL, &id)))
			pt->v[id].i = op == 0x88;
		return st;
	case 0x8c: return op_str(pt, r, 1, PK_STR);
	case 'X': return op_str(pt, r, 4, PK_STR);
	case 0x8d: return op_str(pt, r, 8, PK_STR);   /* BINUNICODE8 */
	case 'C': return op_str(pt, r, 1, PK_BYTES); /* SHORT_BINBYTES */
	case 'B': return op_str(pt, r, 4, PK_BYTES); /* BINBYTES */
	case 0x8e: return op_str(pt, r, 8, PK_BYTES); /* BINBYTES8 */
	case 0x94: return op_memo(pt, pt->memo_n, true); /* MEMOIZE */
	case 'q': return (st = take(pt, r, 1, &b)) ? st : op_memo(pt, b[0], true);
	case 'r': return (st = take(pt, r, 4, &b)) ? st : op_memo(pt, le(b, 4), true);
	case 'h': return (st = take(pt, r, 1, &b)) ? st : op_memo(pt, b[0], false);
	case 'j': return (st = take(pt, r, 4, &b)) ? st : op_memo(pt, le(b, 4), false);
	case 'c': return op_global(pt, r);
	case 0x93: return op_stack_global(pt);
	case 'b': return op_build(pt);
	case 'R': return op_reduce(pt);
	case 'Q': return op_persid(pt);
	case '.':
		*stop = true;
		return 0;
	default: return perr(pt, BURROW_E_UNSUPPORTED, "pickle: opcode 0x%02x at byte %zu is not supported", op,
			     (size_t)(r->p - 1 - pt->pkl));
	}
}

/* One pickle from data.pkl's byte *pos on (left after its STOP), with a fresh stack and
 * memo; *top is what it returns. */
static int run_pickle(bw_pt *pt, size_t *pos, int32_t *top)
{
	rd r = {.p = pt->pkl + *pos, .end = pt->pkl + pt->pkl_n};
	bool stop = false;
	int st = 0;
	pt->sp = 0;
	pt->nmarks = 0;
	if (pt->memo)
		memset(pt->memo, 0, pt->mcap * sizeof *pt->memo);
	pt->memo_n = 0;
	while (!stop && !st)
		st = step(pt, &r, &stop);
	if (st)
		return st;
	if (pt->sp != 1 || pt->nmarks)
		return perr(pt, BURROW_E_FORMAT, "pickle: STOP with %zu values on the stack", pt->sp);
	*top = pt->stack[0];
	*pos = (size_t)(r.p - pt->pkl);
	return 0;
}

static int interpret(bw_pt *pt, size_t *pos)
{
	int st = run_pickle(pt, pos, &pt->top);
	if (st)
		return st;
	if (pt->v[pt->top].kind != PK_DICT)
		return perr(pt, BURROW_E_FORMAT, "the file holds no dict at its top (torch.save of a dict of tensors)");
	return 0;
}

/* ---------------------------------------------------------------- the zip container */

/* A member's stated size, bounded by what the file can hold: stored members by the file's
 * size, deflated ones by deflate's largest ratio (about 1032:1) to their compressed size. */
static int entry_size(bw_pt *pt, zip_int64_t e, const char *what, uint64_t *size)
{
	zip_stat_t zs;
	if (zip_stat_index(pt->za, (zip_uint64_t)e, 0, &zs) < 0 || !(zs.valid & ZIP_STAT_SIZE) ||
	    !(zs.valid & ZIP_STAT_COMP_SIZE))
		return perr(pt, BURROW_E_FORMAT, "zip: cannot stat %s", what);
	if (zs.comp_size > pt->file_bytes || zs.size / 1032 > zs.comp_size ||
	    (zs.comp_method == ZIP_CM_STORE && zs.size != zs.comp_size))
		return perr(pt, BURROW_E_FORMAT, "zip: member %s claims %llu bytes from %llu stored (truncated or damaged?)",
			    what, (unsigned long long)zs.size, (unsigned long long)zs.comp_size);
	*size = zs.size;
	return 0;
}

/* Read n bytes of member e, after skipping `skip`, into dst (e < 0: from the legacy file at
 * file_off + skip). */
static int read_member(bw_pt *pt, zip_int64_t e, uint64_t skip, void *dst, size_t n, const char *what)
{
	if (e < 0)
		return bw_pread_all(pt->fd, dst, n, (int64_t)(pt->legacy_off + skip), pt->name);
	zip_file_t *f = zip_fopen_index(pt->za, (zip_uint64_t)e, 0);
	if (!f)
		return perr(pt, BURROW_E_FORMAT, "zip: cannot open %s: %s", what, zip_strerror(pt->za));
	int st = 0;
	char scratch[1 << 14];
	while (skip && !st) {
		zip_int64_t got = zip_fread(f, scratch, skip < sizeof scratch ? skip : sizeof scratch);
		if (got <= 0)
			st = perr(pt, BURROW_E_FORMAT, "zip: %s is shorter than it claims (truncated?)", what);
		else
			skip -= (uint64_t)got;
	}
	for (size_t done = 0; done < n && !st;) {
		zip_int64_t got = zip_fread(f, (char *)dst + done, n - done);
		if (got <= 0)
			st = perr(pt, BURROW_E_FORMAT, "zip: %s is shorter than it claims (truncated or damaged?)", what);
		else
			done += (size_t)got;
	}
	zip_fclose(f);
	return st;
}

/* The one <top>/data.pkl of the archive, its byteorder, and the pickle read whole. */
static int read_pickle(bw_pt *pt)
{
	zip_int64_t n = zip_get_num_entries(pt->za, 0), pkl = -1;
	for (zip_int64_t i = 0; i < n; i++) {
		const char *e = zip_get_name(pt->za, (zip_uint64_t)i, 0);
		const char *s = e ? strchr(e, '/') : NULL;
		if (!s || strcmp(s, "/data.pkl"))
			continue;
		if (pkl >= 0)
			return perr(pt, BURROW_E_FORMAT, "zip: more than one data.pkl");
		if ((size_t)(s - e) + 2 > sizeof pt->prefix)
			return perr(pt, BURROW_E_FORMAT, "zip: top folder name too long");
		snprintf(pt->prefix, sizeof pt->prefix, "%.*s/", (int)(s - e), e);
		pkl = i;
	}
	if (pkl < 0)
		return perr(pt, BURROW_E_FORMAT, "zip: no <name>/data.pkl: not a torch.save file");
	char what[300], order[16] = "";
	uint64_t size;
	int st;
	snprintf(what, sizeof what, "%sbyteorder", pt->prefix);
	zip_int64_t bo = zip_name_locate(pt->za, what, 0);
	if (bo >= 0) {
		if ((st = entry_size(pt, bo, what, &size)))
			return st;
		if (size >= sizeof order || (st = read_member(pt, bo, 0, order, (size_t)size, what)))
			return st ? st : perr(pt, BURROW_E_FORMAT, "%s: not 'little' or 'big'", what);
		if (strcmp(order, "little"))
			return perr(pt, BURROW_E_UNSUPPORTED, "byte order '%s': only little-endian files are read", order);
	}
	snprintf(what, sizeof what, "%sdata.pkl", pt->prefix);
	if ((st = entry_size(pt, pkl, what, &size)))
		return st;
	if (size > PKL_MAX_BYTES || size == 0)
		return perr(pt, BURROW_E_FORMAT, "%s: %llu bytes (expected 1 to %llu)", what, (unsigned long long)size,
			    (unsigned long long)PKL_MAX_BYTES);
	if (!(pt->pkl = bw_malloc((size_t)size)))
		return BURROW_E_NOMEM;
	pt->pkl_n = (size_t)size;
	return read_member(pt, pkl, 0, pt->pkl, pt->pkl_n, what);
}

/* The file: a zip (torch >= 1.6), or the legacy stream of pickles, which is refused. */
static int open_file(bw_pt *pt, const char *path, int fd)
{
	struct stat sb;
	int st;
	if (path) {
		if ((st = bw_open_input(path, 0, &pt->fd, NULL)))
			return st;
	} else if ((pt->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
		return bw_err_errno(errno, pt->name, "dup");
	}
	if (fstat(pt->fd, &sb) < 0)
		return bw_err_errno(errno, pt->name, "stat");
	pt->file_bytes = (uint64_t)sb.st_size;
	uint8_t head[4] = {0};
	if (sb.st_size >= 4 && (st = bw_pread_all(pt->fd, head, 4, 0, pt->name)))
		return st;
	if (head[0] == 0x80 && head[1] == 0x02) {
		pt->legacy = true;
		return 0;
	}
	if (memcmp(head, "PK\3\4", 4))
		return perr(pt, BURROW_E_FORMAT, "not a torch.save file (no zip signature)");
	int d = fcntl(pt->fd, F_DUPFD_CLOEXEC, 0), err = 0;
	if (d < 0)
		return bw_err_errno(errno, pt->name, "dup");
	if (!(pt->za = zip_fdopen(d, ZIP_RDONLY, &err))) {
		close(d);
		zip_error_t ze;
		zip_error_init_with_code(&ze, err);
		st = perr(pt, err == ZIP_ER_MEMORY ? BURROW_E_NOMEM : BURROW_E_FORMAT, "zip: %s (truncated or damaged?)",
			  zip_error_strerror(&ze));
		zip_error_fini(&ze);
		return st;
	}
	return 0;
}

/* ---------------------------------------------------------------- legacy files (torch < 1.6) */

static int32_t lookup_in(const bw_pt *pt, int32_t dict, const char *key);

/* Each storage key of the list, in order: an int64 element count, then the data. Every
 * storage the pickle named gets its place, its count checked against the claimed one. */
static int legacy_storages(bw_pt *pt, int32_t keys, uint64_t off)
{
	const pk_val *l = &pt->v[keys];
	if (l->kind != PK_LIST)
		return perr(pt, BURROW_E_FORMAT, "legacy: no list of storage keys after the object");
	for (size_t k = 0; k < l->n; k++) {
		const pk_val *key = &pt->v[l->items[k]];
		int es = 0;
		for (size_t i = 0; i < pt->nstor && key->kind == PK_STR; i++)
			if (!pt->storages[i].mem && pt->storages[i].key_len == key->len &&
			    !memcmp(pt->pkl + pt->storages[i].key_off, pt->pkl + key->off, key->len))
				es = STYPE[pt->storages[i].stype].size;
		if (!es)
			return perr(pt, BURROW_E_FORMAT, "legacy: storage key %zu names no storage of the object", k);
		uint8_t b[8];
		int64_t numel;
		if (off > pt->file_bytes || pt->file_bytes - off < 8)
			return perr(pt, BURROW_E_FORMAT, "legacy: truncated before storage %zu", k);
		int st = bw_pread_all(pt->fd, b, 8, (int64_t)off, pt->name);
		if (st)
			return st;
		memcpy(&numel, b, 8);
		if (numel < 0 || (uint64_t)numel > (pt->file_bytes - off - 8) / (uint64_t)es)
			return perr(pt, BURROW_E_FORMAT, "legacy: storage %zu claims %lld elements, past the file's end", k,
				    (long long)numel);
		for (size_t i = 0; i < pt->nstor; i++) {
			pt_storage *s = &pt->storages[i];
			if (s->mem || s->key_len != key->len || memcmp(pt->pkl + s->key_off, pt->pkl + key->off, key->len))
				continue;
			if (s->numel > numel)
				return perr(pt, BURROW_E_FORMAT, "legacy: storage %zu: %lld elements claimed, %lld stored", k,
					    (long long)s->numel, (long long)numel);
			s->file_off = off + 8;
		}
		off += 8 + (uint64_t)numel * (uint64_t)es;
	}
	for (size_t i = 0; i < pt->nstor; i++)
		if (!pt->storages[i].file_off && !pt->storages[i].mem)
			return perr(pt, BURROW_E_FORMAT, "legacy: storage %zu has no data", i);
	return 0;
}

/* The legacy stream: magic number, protocol 1001, sys_info (little-endian), the object, the
 * storage keys, then the storages. The pickles are read from the file's first bytes. */
static int legacy_open(bw_pt *pt)
{
	static const uint8_t MAGIC[15] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46,
					  0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, 0x2e};
	pt->pkl_n = (size_t)(pt->file_bytes < PKL_MAX_BYTES ? pt->file_bytes : PKL_MAX_BYTES);
	if (!(pt->pkl = bw_malloc(pt->pkl_n)))
		return BURROW_E_NOMEM;
	int st = bw_pread_all(pt->fd, pt->pkl, pt->pkl_n, 0, pt->name);
	if (st)
		return st;
	if (pt->pkl_n < sizeof MAGIC || memcmp(pt->pkl, MAGIC, sizeof MAGIC))
		return perr(pt, BURROW_E_FORMAT, "not a torch.save file (neither zip nor the legacy magic number)");
	size_t pos = sizeof MAGIC;
	int32_t v, keys;
	if ((st = run_pickle(pt, &pos, &v)))
		return st;
	if (pt->v[v].kind != PK_INT || pt->v[v].i != 1001)
		return perr(pt, BURROW_E_UNSUPPORTED, "legacy: protocol version is not 1001");
	if ((st = run_pickle(pt, &pos, &v)))
		return st;
	int32_t le = pt->v[v].kind == PK_DICT ? lookup_in(pt, v, "little_endian") : -1;
	if (le < 0 || pt->v[le].kind != PK_BOOL || !pt->v[le].i)
		return perr(pt, BURROW_E_UNSUPPORTED, "legacy: not written little-endian");
	if ((st = interpret(pt, &pos)) || (st = run_pickle(pt, &pos, &keys)))
		return st;
	return legacy_storages(pt, keys, pos);
}

int bw_pt_open(bw_pt **out, const char *name, const char *path, int fd)
{
	*out = NULL;
	bw_pt *pt = bw_calloc(1, sizeof *pt);
	if (!pt)
		return BURROW_E_NOMEM;
	pt->fd = -1;
	int st = (pt->name = bw_strdup(name ? name : path ? path : "(.pt)")) ? 0 : BURROW_E_NOMEM;
	size_t pos = 0;
	if (st || (st = open_file(pt, path, fd)) ||
	    (st = pt->legacy ? legacy_open(pt) : read_pickle(pt)) || (!pt->legacy && (st = interpret(pt, &pos)))) {
		bw_pt_close(pt);
		return st;
	}
	*out = pt;
	return 0;
}

void bw_pt_close(bw_pt *pt)
{
	if (!pt)
		return;
	if (pt->za)
		zip_discard(pt->za);
	if (pt->fd >= 0)
		close(pt->fd);
	for (size_t k = 0; k < pt->nv; k++)
		bw_free(pt->v[k].items);
	bw_free(pt->v);
	bw_free(pt->stack);
	bw_free(pt->memo);
	bw_free(pt->arena);
	bw_free(pt->storages);
	bw_free(pt->views);
	bw_free(pt->pkl);
	bw_free(pt->name);
	bw_free(pt);
}

/* ---------------------------------------------------------------- tensors out */

static int32_t lookup_in(const bw_pt *pt, int32_t dict, const char *key)
{
	const pk_val *d = &pt->v[dict];
	for (size_t k = 0; k + 1 < d->n; k += 2)
		if (str_is(pt, &pt->v[d->items[k]], key))
			return d->items[k + 1];
	return -1;
}

static int32_t lookup(const bw_pt *pt, const char *key) { return lookup_in(pt, pt->top, key); }

bool bw_pt_has(const bw_pt *pt, const char *key) { return lookup(pt, key) >= 0; }

int bw_pt_get_int(const bw_pt *pt, const char *key, int64_t *v)
{
	int32_t id = lookup(pt, key);
	if (id < 0)
		return perr(pt, BURROW_E_NOTFOUND, "no key '%s' in the dict", key);
	if (pt->v[id].kind != PK_INT)
		return perr(pt, BURROW_E_FORMAT, "'%s' is not an integer", key);
	*v = pt->v[id].i;
	return 0;
}

/* Element i of a storage of type stype as int64 or float32. */
static void convert_one(int stype, const uint8_t *src, void *dst)
{
	int64_t i = 0;
	float f = 0;
	switch (stype) {
	case ST_FLOAT: memcpy(&f, src, 4); break;
	case ST_DOUBLE: {
		double x;
		memcpy(&x, src, 8);
		f = (float)x;
		break;
	}
	case ST_HALF: {
		uint16_t h;
		memcpy(&h, src, 2);
		f = bw_f16_to_f32(h);
		break;
	}
	case ST_LONG: memcpy(&i, src, 8); break;
	case ST_INT: {
		int32_t x;
		memcpy(&x, src, 4);
		i = x;
		break;
	}
	case ST_SHORT: {
		int16_t x;
		memcpy(&x, src, 2);
		i = x;
		break;
	}
	case ST_CHAR: i = (int8_t)src[0]; break;
	case ST_BYTE: i = src[0]; break;
	default: i = src[0] != 0; break; /* bool */
	}
	if (STYPE[stype].is_float)
		memcpy(dst, &f, 4);
	else
		memcpy(dst, &i, 8);
}

/* The view's elements in row-major order out of span (its storage from the offset on). */
static void gather(const pt_view *w, int stype, const uint8_t *span, uint8_t *out)
{
	const int es = STYPE[stype].size, os = STYPE[stype].is_float ? 4 : 8;
	int64_t idx[BW_PT_MAX_DIMS] = {0}, off = 0;
	for (int64_t k = 0; k < w->numel; k++) {
		convert_one(stype, span + off * es, out + k * os);
		for (int d = w->ndim - 1; d >= 0; d--) {
			off += w->stride[d];
			if (++idx[d] < w->size[d])
				break;
			off -= w->stride[d] * w->size[d];
			idx[d] = 0;
		}
	}
}

int bw_pt_get(bw_pt *pt, const char *key, bw_pt_tensor *t)
{
	memset(t, 0, sizeof *t);
	int32_t id = lookup(pt, key);
	if (id < 0)
		return perr(pt, BURROW_E_NOTFOUND, "no key '%s' in the dict", key);
	if (pt->v[id].kind != PK_TENSOR)
		return perr(pt, BURROW_E_FORMAT, "'%s' is not a tensor", key);
	const pt_view *w = &pt->views[pt->v[id].i];
	const pt_storage *s = &pt->storages[w->storage];
	const int es = STYPE[s->stype].size, os = STYPE[s->stype].is_float ? 4 : 8;
	t->dtype = STYPE[s->stype].is_float ? BURROW_DTYPE_F32 : BURROW_DTYPE_I64;
	t->ndim = w->ndim;
	memcpy(t->shape, w->size, sizeof t->shape);
	t->numel = w->numel;
	if (!w->numel)
		return 0;
	char what[300];
	snprintf(what, sizeof what, "storage of '%s'", key);
	/* sizes were checked against the member's at open: span <= numel of the storage */
	const bool direct = w->contiguous && es == os && (s->stype == ST_LONG || s->stype == ST_FLOAT);
	uint8_t *out = bw_malloc((size_t)w->numel * (size_t)os);
	uint8_t *span = direct ? out : bw_malloc((size_t)w->span * (size_t)es);
	int st = out && span ? 0 : BURROW_E_NOMEM;
	pt->legacy_off = s->file_off;
	if (!st && s->mem) /* a numpy array: its bytes are in data.pkl or the arena, sizes checked at BUILD */
		memcpy(span, (s->mem == 2 ? pt->arena : pt->pkl) + s->mem_off + (uint64_t)w->offset * (uint64_t)es,
		       (size_t)w->span * (size_t)es);
	else if (!st)
		st = read_member(pt, s->entry, (uint64_t)w->offset * (uint64_t)es, span, (size_t)w->span * (size_t)es, what);
	if (!st && !direct)
		gather(w, s->stype, span, out);
	if (!direct)
		bw_free(span);
	if (st) {
		bw_free(out);
		return st;
	}
	t->data = out;
	return 0;
}
