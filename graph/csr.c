/* csr.c: CSR construction from an edge list (symmetrize, drop self-loops and duplicates,
 * sorted rows) and the structural check.
 *
 * Two builds sit behind the same calls. With no memory budget (opts.mem_bytes == 0) the
 * edges are kept as two arrays and scattered into rows. With a budget, each edge becomes
 * a sortable key (src << 32 | dst, or two words past 2^32 nodes) in a buffer sized by the
 * budget; a full buffer is sorted, de-duplicated and appended to an unlinked spill file
 * as one run, and finishing merges the runs (k-way, in several passes when there are more
 * runs than buffers fit the budget). Both give the same bytes: a CSR with sorted rows is
 * canonical.
 *
 * With opts.edge_ids each edge also carries its input position (its id): the in-memory
 * build scatters the ids beside the neighbors and sorts each row by (neighbor, id); the
 * keyed build appends the id to the key as one more word and sorts by the whole key. Either
 * way the repeats of an edge lie in input order, so de-duplication keeps the first added,
 * and a symmetrized edge gives both its entries its id. */
#define _GNU_SOURCE
#include "csr_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A sorted run in the spill file: keys [off, off + n). */
typedef struct bw_run {
	int64_t off, n;
} bw_run;

struct burrow_csr_builder {
	int64_t n;
	burrow_csr_opts o;
	int64_t *src, *dst;     /* edges added so far (in-memory build), owned */
	size_t count, cap;      /* count: edges added, either build */
	bool finished;
	int64_t *indptr;        /* result, owned */
	void *indices;          /* result, owned */
	int64_t *edge_ids;      /* result with o.edge_ids: [num_edges], owned */
	/* sort-based build (o.mem_bytes > 0) */
	bool keyed;
	int kw;                 /* 64-bit words per edge in a key: 1 or 2 */
	int kwt;                /* words per key: kw, plus one (the edge id) with o.edge_ids */
	uint64_t *keys;         /* [kcap * kwt], owned */
	uint64_t *scratch;      /* radix sort buffer, same size, owned */
	size_t nkeys, kcap, kmax; /* keys held, allocated, allowed by the budget */
	int fd;                 /* spill file (already unlinked), -1 when none */
	char *spill_dir;        /* where spill files go; owned */
	char *spill_name;       /* the current file's name, for messages; owned */
	bw_run *runs;           /* owned */
	size_t nruns, runs_cap;
	int64_t spill_keys;     /* keys in the spill file */
};

void burrow_csr_defaults(burrow_csr_opts *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
	o->drop_self_loops = true;
	o->drop_duplicates = true;
}

/* Keys per run allowed by the budget: the key buffer and the radix sort's second buffer. */
static size_t key_budget(size_t mem_bytes, int kw)
{
	size_t k = mem_bytes / (2 * sizeof(uint64_t) * (size_t)kw);
	return k < 64 ? 64 : k;
}

int burrow_csr_builder_open(burrow_csr_builder **out, int64_t num_nodes, const burrow_csr_opts *opts)
{
	*out = NULL;
	if (num_nodes < 0)
		return bw_err(BURROW_E_INVAL, "csr: negative node count %lld", (long long)num_nodes);
	burrow_csr_builder *b = bw_calloc(1, sizeof *b);
	if (!b)
		return BURROW_E_NOMEM;
	b->n = num_nodes;
	b->fd = -1;
	burrow_csr_defaults(&b->o);
	int st = opts ? bw_opts_in(&b->o, sizeof b->o, opts, "burrow_csr_opts") : 0;
	if (st) {
		bw_free(b);
		return st;
	}
	const char *spill_dir = b->o.spill_dir;
	b->o.spill_dir = NULL; /* borrowed by the caller: copied below */
	if (b->o.mem_bytes > 0) {
		b->keyed = true;
		b->kw = num_nodes > ((int64_t)1 << 32) ? 2 : 1;
		b->kwt = b->kw + (b->o.edge_ids ? 1 : 0);
		b->kmax = key_budget(b->o.mem_bytes, b->kwt);
		b->spill_dir = bw_strdup(bw_scratch_dir(spill_dir));
		if (!b->spill_dir) {
			bw_free(b);
			return BURROW_E_NOMEM;
		}
	}
	*out = b;
	return 0;
}

void bw_csr_builder_force_wide_keys(burrow_csr_builder *b)
{
	if (b->keyed && !b->keys) {
		b->kw = 2;
		b->kwt = 2 + (b->o.edge_ids ? 1 : 0);
		b->kmax = key_budget(b->o.mem_bytes, b->kwt);
	}
}

/* Free what the keyed build holds besides the runs' file. */
static void free_keys(burrow_csr_builder *b)
{
	bw_free(b->keys);
	bw_free(b->scratch);
	b->keys = b->scratch = NULL;
	b->nkeys = b->kcap = 0;
}

void burrow_csr_builder_close(burrow_csr_builder *b)
{
	if (!b)
		return;
	bw_free(b->src);
	bw_free(b->dst);
	bw_free(b->indptr);
	bw_free(b->indices);
	bw_free(b->edge_ids);
	free_keys(b);
	if (b->fd >= 0)
		close(b->fd);
	bw_free(b->spill_dir);
	bw_free(b->spill_name);
	bw_free(b->runs);
	bw_free(b);
}

int64_t burrow_csr_builder_count(const burrow_csr_builder *b) { return (int64_t)b->count; }

int64_t bw_csr_builder_max_entries(const burrow_csr_builder *b)
{
	return (int64_t)b->count * (b->o.symmetrize ? 2 : 1);
}

int bw_csr_builder_runs(const burrow_csr_builder *b) { return (int)b->nruns; }

bool bw_csr_builder_has_edge_ids(const burrow_csr_builder *b) { return b->o.edge_ids; }

const int64_t *burrow_csr_builder_edge_ids(const burrow_csr_builder *b) { return b->edge_ids; }

int64_t bw_csr_builder_nodes(const burrow_csr_builder *b) { return b->n; }

/* Grow the edge arrays to hold `need` edges: exactly, or with room to spare. */
static int grow(burrow_csr_builder *b, size_t need, bool exact)
{
	size_t cap = b->cap ? b->cap : 1024;
	while (cap < need)
		cap += cap / 2;
	if (exact)
		cap = need;
	int64_t *s = bw_realloc(b->src, cap * sizeof *s);
	if (!s)
		return BURROW_E_NOMEM;
	b->src = s;
	int64_t *d = bw_realloc(b->dst, cap * sizeof *d);
	if (!d)
		return BURROW_E_NOMEM;
	b->dst = d;
	b->cap = cap;
	return 0;
}

/* Grow the key buffer towards `need` keys, never past the budget's kmax. */
static int grow_keys(burrow_csr_builder *b, size_t need)
{
	size_t cap = b->kcap ? b->kcap : 4096;
	while (cap < need)
		cap *= 2;
	if (cap > b->kmax)
		cap = b->kmax;
	if (cap <= b->kcap)
		return 0;
	uint64_t *k = bw_realloc(b->keys, cap * (size_t)b->kwt * sizeof *k);
	if (!k)
		return bw_err(BURROW_E_NOMEM, "csr: out of memory for %zu edge keys", cap);
	b->keys = k;
	b->kcap = cap;
	return 0;
}

int burrow_csr_builder_reserve(burrow_csr_builder *b, size_t n)
{
	if (b->finished)
		return bw_err(BURROW_E_INVAL, "csr: reserve after finish");
	if (b->keyed)
		return grow_keys(b, b->nkeys + n * (b->o.symmetrize ? 2 : 1));
	if (b->count + n <= b->cap)
		return 0;
	return grow(b, b->count + n, true);
}

static int spill_run(burrow_csr_builder *b);
static int finish_in_memory(burrow_csr_builder *b, burrow_csr *out);
static int finish_in_memory_ids(burrow_csr_builder *b, burrow_csr *out);
static void progress(const burrow_csr_builder *b, const char *phase, uint64_t done, uint64_t total);

/* Append the key of (s, d), input edge eid, spilling a run when the buffer is at the budget. */
static inline int put_key(burrow_csr_builder *b, uint64_t s, uint64_t d, uint64_t eid)
{
	if (b->nkeys == b->kcap) {
		int st = b->kcap < b->kmax ? grow_keys(b, b->kcap + 1) : spill_run(b);
		if (st)
			return st;
	}
	uint64_t *k = b->keys + b->nkeys * (size_t)b->kwt;
	if (b->kw == 1) {
		k[0] = s << 32 | d;
	} else {
		k[0] = s;
		k[1] = d;
	}
	if (b->kwt > b->kw)
		k[b->kw] = eid;
	b->nkeys++;
	return 0;
}

int burrow_csr_builder_add(burrow_csr_builder *b, const int64_t *src, const int64_t *dst, size_t n)
{
	if (b->finished)
		return bw_err(BURROW_E_INVAL, "csr: edges added after finish");
	for (size_t i = 0; i < n; i++) {
		if (src[i] < 0 || src[i] >= b->n)
			return bw_err(BURROW_E_RANGE, "csr: edge %zu: source id %lld out of range [0, %lld)",
				      b->count + i, (long long)src[i], (long long)b->n);
		if (dst[i] < 0 || dst[i] >= b->n)
			return bw_err(BURROW_E_RANGE, "csr: edge %zu: destination id %lld out of range [0, %lld)",
				      b->count + i, (long long)dst[i], (long long)b->n);
	}
	if (b->keyed) {
		const bool sym = b->o.symmetrize, noloop = b->o.drop_self_loops;
		for (size_t i = 0; i < n; i++) {
			uint64_t s = (uint64_t)src[i], d = (uint64_t)dst[i], eid = (uint64_t)(b->count + i);
			int st;
			if (noloop && s == d)
				continue;
			if ((st = put_key(b, s, d, eid)) || (sym && (st = put_key(b, d, s, eid))))
				return st;
		}
		b->count += n;
		return 0;
	}
	if (b->count + n > b->cap) {
		int st = grow(b, b->count + n, false);
		if (st)
			return st;
	}
	memcpy(b->src + b->count, src, n * sizeof *src);
	memcpy(b->dst + b->count, dst, n * sizeof *dst);
	b->count += n;
	return 0;
}

/* Sort one row in place and, when asked, drop repeats; returns the new length. */
static int64_t sort_row_i32(int32_t *a, int64_t n, bool unique)
{
	bw_sort_i32(a, n);
	return unique ? bw_unique_i32(a, n) : n;
}

static int64_t sort_row_i64(int64_t *a, int64_t n, bool unique)
{
	bw_sort_i64(a, n);
	return unique ? bw_unique_i64(a, n) : n;
}

static void progress(const burrow_csr_builder *b, const char *phase, uint64_t done, uint64_t total)
{
	if (b->o.progress)
		b->o.progress(b->o.progress_user, phase, done, total);
}

/* ---------------------------------------------------------------- keyed build: runs */

/* Keys compare by all their `words` (the edge, then its id); repeats are equal edges. */
static inline bool key_lt(const uint64_t *a, const uint64_t *c, int words)
{
	if (words == 1)
		return a[0] < c[0];
	for (int i = 0; i < words; i++)
		if (a[i] != c[i])
			return a[i] < c[i];
	return false;
}

static inline bool key_eq(const uint64_t *a, const uint64_t *c, int kw)
{
	return a[0] == c[0] && (kw == 1 || a[1] == c[1]);
}

static int cmp_key2(const void *x, const void *y)
{
	const uint64_t *a = x, *c = y;
	return a[0] != c[0] ? (a[0] > c[0]) - (a[0] < c[0]) : (a[1] > c[1]) - (a[1] < c[1]);
}

static int cmp_key3(const void *x, const void *y)
{
	const uint64_t *a = x, *c = y;
	int r = cmp_key2(x, y);
	return r ? r : (a[2] > c[2]) - (a[2] < c[2]);
}

/* LSD radix sort of packed keys (src << 32 | dst) whose ids have `bits` significant
 * bits: digits of at most 12 bits over each half, skipping digits that are constant.
 * Returns whichever of a, tmp holds the result. */
static uint64_t *radix_sort(uint64_t *a, uint64_t *tmp, size_t n, int bits, int *st)
{
	enum { MAXD = 8 };
	int shift[MAXD], width[MAXD], nd = 0;
	const int per = (bits + 11) / 12, w = (bits + per - 1) / per;
	for (int half = 0; half < 2; half++)
		for (int lo = 0; lo < bits; lo += w) {
			shift[nd] = 32 * half + lo;
			width[nd] = BW_MIN(w, bits - lo);
			nd++;
		}
	size_t *hist = bw_calloc((size_t)nd << 12, sizeof *hist);
	if (!hist) {
		*st = BURROW_E_NOMEM;
		return a;
	}
	for (size_t i = 0; i < n; i++)
		for (int d = 0; d < nd; d++)
			hist[((size_t)d << 12) + ((a[i] >> shift[d]) & ((1u << width[d]) - 1))]++;
	for (int d = 0; d < nd; d++) {
		size_t *h = hist + ((size_t)d << 12), sum = 0;
		const uint64_t mask = (1u << width[d]) - 1;
		const int sh = shift[d];
		if (h[a[0] >> sh & mask] == n)
			continue; /* every key has the same digit */
		for (size_t k = 0; k <= mask; k++) {
			size_t c = h[k];
			h[k] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[h[a[i] >> sh & mask]++] = a[i];
		uint64_t *t = a;
		a = tmp;
		tmp = t;
	}
	bw_free(hist);
	return a;
}

/* Sort b's buffered keys (and drop repeats when asked, the first of each kept); returns how
 * many remain. */
static int sort_keys(burrow_csr_builder *b, size_t *kept)
{
	const int kw = b->kw, kwt = b->kwt;
	const size_t n = b->nkeys;
	int st = 0;
	*kept = n;
	if (n < 2)
		return 0;
	if (kwt == 1) {
		int bits = 1;
		while (bits < 32 && ((uint64_t)1 << bits) < (uint64_t)b->n)
			bits++;
		if (!b->scratch && !(b->scratch = bw_malloc(b->kcap * sizeof *b->scratch)))
			return bw_err(BURROW_E_NOMEM, "csr: out of memory for the sort buffer (%zu keys)", b->kcap);
		uint64_t *r = radix_sort(b->keys, b->scratch, n, bits, &st);
		if (st)
			return st;
		if (r != b->keys) { /* the sorted keys are in the other buffer: swap roles */
			b->scratch = b->keys;
			b->keys = r;
		}
	} else {
		qsort(b->keys, n, (size_t)kwt * sizeof(uint64_t), kwt == 2 ? cmp_key2 : cmp_key3);
	}
	if (b->o.drop_duplicates) {
		size_t k = 1;
		for (size_t i = 1; i < n; i++)
			if (!key_eq(b->keys + i * kwt, b->keys + (k - 1) * kwt, kw)) {
				if (k != i)
					memcpy(b->keys + k * kwt, b->keys + i * kwt, (size_t)kwt * sizeof(uint64_t));
				k++;
			}
		*kept = k;
	}
	return 0;
}

/* A new spill file in the spill folder, unlinked at once so nothing outlives the build. */
static int open_spill(burrow_csr_builder *b, int *fd)
{
	const char *dir = b->spill_dir;
	char *path = bw_path_join(dir, "burrow-spill-XXXXXX");
	if (!path)
		return BURROW_E_NOMEM;
	int f = mkostemp(path, O_CLOEXEC);
	if (f < 0) {
		int st = bw_err_errno(errno, dir, "create spill file");
		bw_free(path);
		return st;
	}
	unlink(path);
	bw_free(b->spill_name);
	b->spill_name = path; /* names the file in messages from now on */
	*fd = f;
	return 0;
}

static int add_run(bw_run **runs, size_t *nruns, size_t *cap, int64_t off, int64_t n)
{
	if (*nruns == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		bw_run *r = bw_realloc(*runs, c * sizeof *r);
		if (!r)
			return BURROW_E_NOMEM;
		*runs = r;
		*cap = c;
	}
	(*runs)[(*nruns)++] = (bw_run){off, n};
	return 0;
}

/* Sort the buffer and append it to the spill file as one run. */
static int spill_run(burrow_csr_builder *b)
{
	size_t kept;
	int st = sort_keys(b, &kept);
	if (!st && b->fd < 0)
		st = open_spill(b, &b->fd);
	if (!st)
		st = bw_write_all(b->fd, b->keys, kept * (size_t)b->kwt * sizeof(uint64_t), b->spill_name);
	if (!st)
		st = add_run(&b->runs, &b->nruns, &b->runs_cap, b->spill_keys, (int64_t)kept);
	if (st)
		return st;
	b->spill_keys += (int64_t)kept;
	b->nkeys = 0;
	return 0;
}

/* ---------------------------------------------------------------- keyed build: merge */

/* Sorted keys go to one of these, in batches. */
typedef struct key_out {
	int (*put)(void *ctx, const uint64_t *keys, size_t n);
	void *ctx;
} key_out;

typedef struct run_rd {
	int64_t next, end;      /* keys of the run still in the file: [next, end) */
	uint64_t *buf;          /* [cap * kwt] */
	size_t pos, fill, cap;  /* in keys */
} run_rd;

static int rd_fill(const burrow_csr_builder *b, int fd, run_rd *r)
{
	const size_t kb = (size_t)b->kwt * sizeof(uint64_t);
	size_t m = (size_t)BW_MIN((int64_t)r->cap, r->end - r->next);
	int st = bw_pread_all(fd, r->buf, m * kb, r->next * (int64_t)kb, b->spill_name);
	r->next += (int64_t)m;
	r->pos = 0;
	r->fill = m;
	return st;
}

/* Merge k runs of file fd into out, dropping repeats across runs when asked; each run
 * reads through a buffer of buf_keys keys. A binary heap orders the runs' heads. */
static int merge_runs(burrow_csr_builder *b, int fd, const bw_run *runs, size_t k, size_t buf_keys,
		      const key_out *out, uint64_t *merged, uint64_t total)
{
	const int kw = b->kw, kwt = b->kwt;
	const bool uniq = b->o.drop_duplicates;
	const size_t OUTN = 1 << 16;
	run_rd *rd = bw_calloc(k, sizeof *rd);
	size_t *heap = bw_malloc(k * sizeof *heap);
	uint64_t *obuf = bw_malloc(OUTN * (size_t)kwt * sizeof *obuf);
	uint64_t last[3] = {0, 0, 0};
	bool have_last = false;
	size_t nh = 0, no = 0;
	int st = 0;

	if (!rd || !heap || !obuf) {
		st = BURROW_E_NOMEM;
		goto out_free;
	}
	for (size_t i = 0; i < k; i++) {
		rd[i] = (run_rd){.next = runs[i].off, .end = runs[i].off + runs[i].n, .cap = buf_keys};
		if (!(rd[i].buf = bw_malloc(buf_keys * (size_t)kwt * sizeof(uint64_t)))) {
			st = BURROW_E_NOMEM;
			goto out_free;
		}
		if ((st = rd_fill(b, fd, &rd[i])))
			goto out_free;
		if (rd[i].fill == 0)
			continue;
		/* sift up */
		size_t j = nh++;
		heap[j] = i;
		while (j > 0) {
			size_t p = (j - 1) / 2;
			if (!key_lt(rd[heap[j]].buf, rd[heap[p]].buf, kwt))
				break;
			size_t t = heap[p];
			heap[p] = heap[j];
			heap[j] = t;
			j = p;
		}
	}
	while (nh > 0) {
		run_rd *r = &rd[heap[0]];
		const uint64_t *key = r->buf + r->pos * kwt;
		if (!uniq || !have_last || !key_eq(key, last, kw)) {
			memcpy(obuf + no * kwt, key, (size_t)kwt * sizeof *key);
			memcpy(last, key, (size_t)kwt * sizeof *key);
			have_last = true;
			if (++no == OUTN) {
				if ((st = out->put(out->ctx, obuf, no)))
					goto out_free;
				*merged += no;
				progress(b, "merge", *merged, total);
				no = 0;
			}
		}
		if (++r->pos == r->fill) {
			if ((st = rd_fill(b, fd, r)))
				goto out_free;
			if (r->fill == 0)
				heap[0] = heap[--nh];
		}
		/* sift down */
		size_t j = 0;
		for (;;) {
			size_t l = 2 * j + 1, m = j;
			if (l < nh && key_lt(rd[heap[l]].buf + rd[heap[l]].pos * kwt, rd[heap[m]].buf + rd[heap[m]].pos * kwt, kwt))
				m = l;
			if (l + 1 < nh &&
			    key_lt(rd[heap[l + 1]].buf + rd[heap[l + 1]].pos * kwt, rd[heap[m]].buf + rd[heap[m]].pos * kwt, kwt))
				m = l + 1;
			if (m == j)
				break;
			size_t t = heap[m];
			heap[m] = heap[j];
			heap[j] = t;
			j = m;
		}
	}
	if (no && !(st = out->put(out->ctx, obuf, no)))
		*merged += no;
out_free:
	for (size_t i = 0; rd && i < k; i++)
		bw_free(rd[i].buf);
	bw_free(rd);
	bw_free(heap);
	bw_free(obuf);
	return st;
}

/* Appends merged keys to a new spill file (an intermediate merge pass). */
typedef struct file_out {
	burrow_csr_builder *b;
	int fd;
	int64_t keys;
} file_out;

static int file_put(void *ctx, const uint64_t *keys, size_t n)
{
	file_out *f = ctx;
	f->keys += (int64_t)n;
	return bw_write_all(f->fd, keys, n * (size_t)f->b->kwt * sizeof *keys, f->b->spill_name);
}

#define RUN_BUF_MIN ((size_t)4 << 10)  /* bytes of read buffer per run, at least */
#define RUN_BUF_MAX ((size_t)1 << 20)  /* and at most */
#define MAX_FANIN 4096

/* Merge all runs into out: first in passes of at most `fanin` runs while there are
 * more runs than the budget gives read buffers for, then all at once. */
static int merge_all(burrow_csr_builder *b, const key_out *out)
{
	const size_t kb = (size_t)b->kwt * sizeof(uint64_t);
	size_t fanin = b->o.mem_bytes / RUN_BUF_MIN;
	fanin = fanin < 2 ? 2 : fanin > MAX_FANIN ? MAX_FANIN : fanin;
	int st = 0;

	while (b->nruns > fanin) {
		file_out f = {.b = b, .fd = -1};
		bw_run *next = NULL;
		size_t nnext = 0, cap = 0;
		uint64_t merged = 0;
		size_t per = BW_MAX(RUN_BUF_MIN, BW_MIN(RUN_BUF_MAX, b->o.mem_bytes / fanin));
		if ((st = open_spill(b, &f.fd)))
			return st;
		for (size_t i = 0; i < b->nruns && !st; i += fanin) {
			size_t k = BW_MIN(fanin, b->nruns - i);
			int64_t off = f.keys;
			key_out fo = {file_put, &f};
			st = merge_runs(b, b->fd, b->runs + i, k, per / kb, &fo, &merged, (uint64_t)b->spill_keys);
			if (!st)
				st = add_run(&next, &nnext, &cap, off, f.keys - off);
		}
		if (st) {
			close(f.fd);
			bw_free(next);
			return st;
		}
		close(b->fd); /* the old pass's file goes away with its last descriptor */
		b->fd = f.fd;
		bw_free(b->runs);
		b->runs = next;
		b->nruns = nnext;
		b->runs_cap = cap;
		b->spill_keys = f.keys;
	}
	size_t per = BW_MAX(RUN_BUF_MIN, BW_MIN(RUN_BUF_MAX, b->o.mem_bytes / BW_MAX(b->nruns, 1)));
	uint64_t merged = 0;
	return merge_runs(b, b->fd, b->runs, b->nruns, per / kb, out, &merged, (uint64_t)b->spill_keys);
}

/* ---------------------------------------------------------------- keyed build: output */

/* Turns sorted keys into indptr and indices slices for a sink. */
typedef struct emitter {
	const bw_csr_sink *sink;
	int64_t n, row, count;  /* rows whose offset is out: [0, row); entries so far */
	int width, kw, kwt;
	int64_t *ip;            /* [EMIT_N] */
	void *ix;               /* [EMIT_N] of width */
	int64_t *ex;            /* [EMIT_N] the entries' edge ids, beside ix; NULL when not wanted */
	size_t nip, nix;
} emitter;

#define EMIT_N ((size_t)1 << 16)

/* The buffered indices (and their edge ids) to the sink. */
static int emit_ids(emitter *e)
{
	int st = e->sink->indices(e->sink->user, e->ix, e->nix);
	if (!st && e->ex)
		st = e->sink->edge_ids(e->sink->user, e->ex, e->nix);
	if (!st)
		e->nix = 0;
	return st;
}

static int emit_flush(emitter *e)
{
	int st = 0;
	if (e->nip && !(st = e->sink->indptr(e->sink->user, e->ip, e->nip)))
		e->nip = 0;
	if (!st && e->nix)
		st = emit_ids(e);
	return st;
}

/* Offsets of rows [row, upto): all equal to the entries so far. */
static int emit_rows(emitter *e, int64_t upto)
{
	while (e->row < upto) {
		if (e->nip == EMIT_N) {
			int st = e->sink->indptr(e->sink->user, e->ip, e->nip);
			if (st)
				return st;
			e->nip = 0;
		}
		e->ip[e->nip++] = e->count;
		e->row++;
	}
	return 0;
}

static int emit_put(void *ctx, const uint64_t *keys, size_t n)
{
	emitter *e = ctx;
	int st;
	for (size_t i = 0; i < n; i++) {
		const uint64_t *k = keys + i * (size_t)e->kwt;
		int64_t s = e->kw == 1 ? (int64_t)(k[0] >> 32) : (int64_t)k[0];
		int64_t d = e->kw == 1 ? (int64_t)(k[0] & 0xffffffffu) : (int64_t)k[1];
		if (s >= e->row && (st = emit_rows(e, s + 1)))
			return st;
		if (e->nix == EMIT_N && (st = emit_ids(e)))
			return st;
		if (e->ex)
			e->ex[e->nix] = (int64_t)k[e->kw];
		if (e->width == 4)
			((int32_t *)e->ix)[e->nix++] = (int32_t)d;
		else
			((int64_t *)e->ix)[e->nix++] = d;
		e->count++;
	}
	return 0;
}

/* The keyed build's finish: sort what is buffered, then emit it directly when nothing
 * spilled, else spill it as the last run and merge all runs. */
static int keyed_stream(burrow_csr_builder *b, const bw_csr_sink *sink, int64_t *num_edges)
{
	emitter e = {.sink = sink, .n = b->n, .width = b->n < ((int64_t)1 << 31) ? 4 : 8, .kw = b->kw, .kwt = b->kwt};
	key_out out = {emit_put, &e};
	const bool want_ids = b->kwt > b->kw && sink->edge_ids;
	int st = 0;

	e.ip = bw_malloc(EMIT_N * sizeof *e.ip);
	e.ix = bw_malloc(EMIT_N * (size_t)e.width);
	e.ex = want_ids ? bw_malloc(EMIT_N * sizeof *e.ex) : NULL;
	if (!e.ip || !e.ix || (want_ids && !e.ex)) {
		st = BURROW_E_NOMEM;
		goto out_free;
	}
	if (b->nruns == 0) {
		size_t kept;
		progress(b, "sort", 0, b->nkeys);
		if ((st = sort_keys(b, &kept)))
			goto out_free;
		progress(b, "sort", b->nkeys, b->nkeys);
		bw_free(b->scratch);
		b->scratch = NULL;
		for (size_t i = 0; i < kept && !st; i += EMIT_N)
			st = emit_put(&e, b->keys + i * (size_t)b->kwt, BW_MIN(EMIT_N, kept - i));
	} else {
		if (b->nkeys && (st = spill_run(b)))
			goto out_free;
		free_keys(b);
		st = merge_all(b, &out);
	}
	if (!st)
		st = emit_rows(&e, b->n + 1);
	if (!st)
		st = emit_flush(&e);
	*num_edges = e.count;
out_free:
	free_keys(b);
	if (b->fd >= 0) {
		close(b->fd);
		b->fd = -1;
	}
	bw_free(e.ip);
	bw_free(e.ix);
	bw_free(e.ex);
	return st;
}

/* A sink into arrays (the keyed build's burrow_csr_builder_finish). */
typedef struct mem_sink {
	int64_t *indptr;
	char *indices;
	int64_t *eids;          /* [cap] with edge ids, else NULL */
	size_t nip, nix, nex, cap; /* cap: entries the indices array holds */
	int width;
} mem_sink;

static int mem_indptr(void *user, const int64_t *offs, size_t n)
{
	mem_sink *m = user;
	memcpy(m->indptr + m->nip, offs, n * sizeof *offs);
	m->nip += n;
	return 0;
}

static int mem_indices(void *user, const void *ids, size_t n)
{
	mem_sink *m = user;
	BW_ASSERT(m->nix + n <= m->cap);
	memcpy(m->indices + m->nix * (size_t)m->width, ids, n * (size_t)m->width);
	m->nix += n;
	return 0;
}

static int mem_edge_ids(void *user, const int64_t *eids, size_t n)
{
	mem_sink *m = user;
	BW_ASSERT(m->nex + n <= m->cap);
	memcpy(m->eids + m->nex, eids, n * sizeof *eids);
	m->nex += n;
	return 0;
}

static int keyed_finish(burrow_csr_builder *b, burrow_csr *out)
{
	const int width = b->n < ((int64_t)1 << 31) ? 4 : 8;
	const bool ids = b->o.edge_ids;
	mem_sink m = {.width = width, .cap = (size_t)b->spill_keys + b->nkeys};
	bw_csr_sink sink = {.indptr = mem_indptr, .indices = mem_indices, .user = &m,
			    .edge_ids = ids ? mem_edge_ids : NULL};
	int64_t ne = 0;
	int st;

	m.indptr = bw_malloc(((size_t)b->n + 1) * sizeof *m.indptr);
	m.indices = bw_malloc((m.cap ? m.cap : 1) * (size_t)width);
	m.eids = ids ? bw_malloc((m.cap ? m.cap : 1) * sizeof *m.eids) : NULL;
	if (!m.indptr || !m.indices || (ids && !m.eids)) {
		st = BURROW_E_NOMEM;
		goto fail;
	}
	if ((st = keyed_stream(b, &sink, &ne)))
		goto fail;
	if ((size_t)ne < m.cap) {
		void *shrunk = bw_realloc(m.indices, (size_t)(ne ? ne : 1) * (size_t)width);
		if (shrunk)
			m.indices = shrunk;
		int64_t *e2 = ids ? bw_realloc(m.eids, (size_t)(ne ? ne : 1) * sizeof *e2) : NULL;
		if (e2)
			m.eids = e2;
	}
	b->indptr = m.indptr;
	b->indices = m.indices;
	b->edge_ids = m.eids;
	out->num_nodes = b->n;
	out->num_edges = ne;
	out->indptr = b->indptr;
	out->indices = b->indices;
	out->index_width = width;
	return 0;
fail:
	bw_free(m.indptr);
	bw_free(m.indices);
	bw_free(m.eids);
	return st;
}

/* ---------------------------------------------------------------- finishing */

int bw_csr_builder_stream(burrow_csr_builder *b, const bw_csr_sink *sink, int64_t *num_edges, int *width)
{
	*num_edges = 0;
	*width = b->n < ((int64_t)1 << 31) ? 4 : 8;
	if (b->finished)
		return bw_err(BURROW_E_INVAL, "csr: finish called twice");
	if (b->keyed) {
		b->finished = true;
		return keyed_stream(b, sink, num_edges);
	}
	burrow_csr g;
	int st = burrow_csr_builder_finish(b, &g);
	const size_t chunk = (size_t)1 << 20;
	for (int64_t i = 0; !st && i <= g.num_nodes; i += (int64_t)chunk)
		st = sink->indptr(sink->user, g.indptr + i, (size_t)BW_MIN((int64_t)chunk, g.num_nodes + 1 - i));
	for (int64_t i = 0; !st && i < g.num_edges; i += (int64_t)chunk) {
		const size_t m = (size_t)BW_MIN((int64_t)chunk, g.num_edges - i);
		st = sink->indices(sink->user, (const char *)g.indices + i * g.index_width, m);
		if (!st && b->edge_ids && sink->edge_ids)
			st = sink->edge_ids(sink->user, b->edge_ids + i, m);
	}
	if (!st)
		*num_edges = g.num_edges;
	bw_free(b->indptr);
	bw_free(b->indices);
	bw_free(b->edge_ids);
	b->indptr = NULL;
	b->indices = NULL;
	b->edge_ids = NULL;
	return st;
}

int burrow_csr_builder_finish(burrow_csr_builder *b, burrow_csr *out)
{
	memset(out, 0, sizeof *out);
	if (b->finished)
		return bw_err(BURROW_E_INVAL, "csr: finish called twice");
	if (b->keyed) {
		b->finished = true;
		return keyed_finish(b, out);
	}
	return b->o.edge_ids ? finish_in_memory_ids(b, out) : finish_in_memory(b, out);
}

/* ---------------------------------------------------------------- in memory, with edge ids */

/* A CSR entry and the input edge it came from. */
typedef struct id_pair {
	int64_t v, eid;
} id_pair;

static int cmp_pair(const void *x, const void *y)
{
	const id_pair *a = x, *c = y;
	return a->v != c->v ? (a->v > c->v) - (a->v < c->v) : (a->eid > c->eid) - (a->eid < c->eid);
}

/* Row offsets of b's edges (loops dropped when asked, both directions when symmetrizing)
 * into indptr[N + 1], and the entries as (neighbor, edge id) pairs scattered into rows. */
static int scatter_pairs(burrow_csr_builder *b, int64_t *indptr, id_pair **out)
{
	const int64_t n = b->n;
	const bool sym = b->o.symmetrize, noloop = b->o.drop_self_loops;
	for (size_t i = 0; i < b->count; i++) {
		if (noloop && b->src[i] == b->dst[i])
			continue;
		indptr[b->src[i] + 1]++;
		if (sym)
			indptr[b->dst[i] + 1]++;
	}
	for (int64_t v = 0; v < n; v++)
		indptr[v + 1] += indptr[v];
	id_pair *pairs = bw_malloc((size_t)(indptr[n] ? indptr[n] : 1) * sizeof *pairs);
	int64_t *cursor = bw_malloc((size_t)(n ? n : 1) * sizeof *cursor);
	if (!pairs || !cursor) {
		bw_free(pairs);
		bw_free(cursor);
		return bw_err(BURROW_E_NOMEM, "csr: out of memory for %lld entries with their edge ids",
			      (long long)indptr[n]);
	}
	memcpy(cursor, indptr, (size_t)n * sizeof *cursor);
	for (size_t i = 0; i < b->count; i++) {
		const int64_t s = b->src[i], d = b->dst[i];
		if (noloop && s == d)
			continue;
		pairs[cursor[s]++] = (id_pair){d, (int64_t)i};
		if (sym)
			pairs[cursor[d]++] = (id_pair){s, (int64_t)i};
	}
	bw_free(cursor);
	*out = pairs;
	return 0;
}

/* The in-memory build with edge ids: rows sorted by (neighbor, edge id), so that of
 * repeated entries the first added is kept; then split into indices and edge ids. */
static int finish_in_memory_ids(burrow_csr_builder *b, burrow_csr *out)
{
	const int64_t n = b->n;
	const int width = n < ((int64_t)1 << 31) ? 4 : 8;
	const bool uniq = b->o.drop_duplicates;
	id_pair *pairs = NULL;
	int st;

	b->finished = true;
	int64_t *indptr = bw_calloc((size_t)n + 1, sizeof *indptr);
	if (!indptr)
		return BURROW_E_NOMEM;
	if ((st = scatter_pairs(b, indptr, &pairs)))
		goto out_free;
	bw_free(b->src);
	bw_free(b->dst);
	b->src = b->dst = NULL;
	b->cap = 0;
	int64_t k = 0;
	for (int64_t v = 0; v < n; v++) { /* sort, de-duplicate and compact each row */
		const int64_t lo = indptr[v], len = indptr[v + 1] - lo;
		qsort(pairs + lo, (size_t)len, sizeof *pairs, cmp_pair);
		indptr[v] = k;
		for (int64_t j = lo; j < lo + len; j++)
			if (!uniq || j == lo || pairs[j].v != pairs[j - 1].v)
				pairs[k++] = pairs[j];
	}
	indptr[n] = k;
	b->indices = bw_malloc((size_t)(k ? k : 1) * (size_t)width);
	b->edge_ids = bw_malloc((size_t)(k ? k : 1) * sizeof *b->edge_ids);
	if (!b->indices || !b->edge_ids) {
		st = BURROW_E_NOMEM;
		goto out_free;
	}
	for (int64_t j = 0; j < k; j++) {
		if (width == 4)
			((int32_t *)b->indices)[j] = (int32_t)pairs[j].v;
		else
			((int64_t *)b->indices)[j] = pairs[j].v;
		b->edge_ids[j] = pairs[j].eid;
	}
	b->indptr = indptr;
	indptr = NULL;
	*out = (burrow_csr){.num_nodes = n, .num_edges = k, .indptr = b->indptr, .indices = b->indices,
			    .index_width = width};
out_free:
	bw_free(pairs);
	bw_free(indptr);
	return st;
}

/* The in-memory build: count degrees, scatter into rows, sort each row. */
static int finish_in_memory(burrow_csr_builder *b, burrow_csr *out)
{
	const int64_t n = b->n;
	const bool sym = b->o.symmetrize, noloop = b->o.drop_self_loops;
	const int width = n < ((int64_t)1 << 31) ? 4 : 8;
	int64_t *cursor = NULL;
	int st = 0;

	b->finished = true;

	int64_t *indptr = bw_calloc((size_t)n + 1, sizeof *indptr);
	if (!indptr)
		return BURROW_E_NOMEM;
	/* degrees, then offsets */
	for (size_t i = 0; i < b->count; i++) {
		if (noloop && b->src[i] == b->dst[i])
			continue;
		indptr[b->src[i] + 1]++;
		if (sym)
			indptr[b->dst[i] + 1]++;
	}
	for (int64_t v = 0; v < n; v++)
		indptr[v + 1] += indptr[v];
	const int64_t total = indptr[n];

	void *idx = bw_malloc((size_t)(total ? total : 1) * (size_t)width);
	cursor = bw_malloc((size_t)(n ? n : 1) * sizeof *cursor);
	if (!idx || !cursor) {
		st = BURROW_E_NOMEM;
		bw_free(idx);
		goto out_free;
	}
	memcpy(cursor, indptr, (size_t)n * sizeof *cursor);
	progress(b, "scatter", 0, b->count);
	for (size_t i = 0; i < b->count; i++) {
		int64_t s = b->src[i], d = b->dst[i];
		if (noloop && s == d)
			continue;
		if (width == 4) {
			((int32_t *)idx)[cursor[s]++] = (int32_t)d;
			if (sym)
				((int32_t *)idx)[cursor[d]++] = (int32_t)s;
		} else {
			((int64_t *)idx)[cursor[s]++] = d;
			if (sym)
				((int64_t *)idx)[cursor[d]++] = s;
		}
	}
	progress(b, "scatter", b->count, b->count);
	/* the edge list is no longer needed */
	bw_free(b->src);
	bw_free(b->dst);
	b->src = b->dst = NULL;
	b->cap = 0;

	/* sort each row; cursor[v] becomes the row's length after de-duplication */
	const bool uniq = b->o.drop_duplicates;
	progress(b, "sort", 0, (uint64_t)n);
#pragma omp parallel for schedule(dynamic, 4096) num_threads(bw_threads(b->o.threads))
	for (int64_t v = 0; v < n; v++) {
		int64_t lo = indptr[v], len = indptr[v + 1] - lo;
		cursor[v] = width == 4 ? sort_row_i32((int32_t *)idx + lo, len, uniq)
				       : sort_row_i64((int64_t *)idx + lo, len, uniq);
	}
	progress(b, "sort", (uint64_t)n, (uint64_t)n);
	/* compact the rows left over the removed duplicates */
	int64_t k = 0;
	for (int64_t v = 0; v < n; v++) {
		int64_t lo = indptr[v];
		if (k != lo)
			memmove((char *)idx + k * width, (char *)idx + lo * width, (size_t)(cursor[v] * width));
		indptr[v] = k;
		k += cursor[v];
	}
	indptr[n] = k;
	if (k < total) {
		void *shrunk = bw_realloc(idx, (size_t)(k ? k : 1) * (size_t)width);
		if (shrunk)
			idx = shrunk;
	}
	b->indptr = indptr;
	b->indices = idx;
	indptr = NULL;
	out->num_nodes = n;
	out->num_edges = k;
	out->indptr = b->indptr;
	out->indices = b->indices;
	out->index_width = width;
out_free:
	bw_free(cursor);
	bw_free(indptr);
	return st;
}

/* A mix of a node id (a multiply and a shift: one per entry, the scan's inner loop). The
 * symmetry test sums a(u) * a(v)^2 over every entry (u, v) and compares it with the sum of
 * a(u)^2 * a(v); a symmetric multiset of entries gives equal sums, any other gives equal
 * sums only by a coincidence of 64-bit products (a test for corruption, not against an
 * adversary; burrow_dataset_verify's exact search names the edge). a(x) is odd, so one
 * entry without its reverse always shows: a(u) a(v) (a(v) - a(u)) is not 0 mod 2^64 unless
 * a(u) = a(v). Graphs with 32-bit ids use a 32-bit a (the sums stay 64-bit), which the
 * compiler vectorizes; a graph uses one a for both ends of every entry. */
static inline uint64_t sym_a(uint64_t x)
{
	x = (x + 1) * 0x9e3779b97f4a7c15ull;
	return (x ^ (x >> 29)) | 1;
}

static inline uint32_t sym_a32(uint32_t x)
{
	x = (x + 1u) * 0x9e3779b1u;
	return (x ^ (x >> 15)) | 1u;
}

/* Row [lo, hi) of 32-bit ids: nonzero when an id is outside [0, n) or the row is not
 * sorted (strictly when unique); its symmetry sums into *sa, *sb. One pass, vectorized. */
static inline unsigned row32(const int32_t *ix, int64_t lo, int64_t hi, uint32_t n, uint32_t d, bool sym,
			     uint64_t *sa, uint64_t *sb)
{
	unsigned bad = lo < hi && (uint32_t)ix[lo] >= n;
	uint64_t a = 0, b = 0;
	/* unsigned: a negative id is >= n, and ix[j - 1] + d wraps only where ix[j - 1] is bad */
#pragma omp simd reduction(| : bad)
	for (int64_t j = lo + 1; j < hi; j++)
		bad |= ((uint32_t)ix[j] >= n) | ((uint32_t)ix[j] < (uint32_t)ix[j - 1] + d);
	if (sym) {
#pragma omp simd reduction(+ : a, b)
		for (int64_t j = lo; j < hi; j++) {
			const uint64_t h = sym_a32((uint32_t)ix[j]);
			a += h;
			b += h * h;
		}
	}
	*sa = a;
	*sb = b;
	return bad;
}

/* Rows [r0, r1) of a CSR whose offsets are known monotone: the first bad row (or r1) and
 * the row's two symmetry sums added to *fwd / *rev. Ids must lie in [0, n). */
static int64_t scan_rows(const burrow_csr *g, int64_t n, int64_t r0, int64_t r1, bool unique, bool sym,
			 uint64_t *fwd, uint64_t *rev)
{
	uint64_t f = 0, r = 0;
	if (g->index_width == 4) {
		const int32_t *ix = (const int32_t *)g->indices;
		for (int64_t v = r0; v < r1; v++) {
			uint64_t sa, sb;
			if (row32(ix, g->indptr[v], g->indptr[v + 1], (uint32_t)n, unique, sym, &sa, &sb))
				return v;
			const uint64_t h = sym_a32((uint32_t)v);
			f += h * sb;
			r += h * h * sa;
		}
		*fwd += f;
		*rev += r;
		return r1;
	}
	const int64_t *ix = (const int64_t *)g->indices;
	for (int64_t v = r0; v < r1; v++) {
		const int64_t lo = g->indptr[v], hi = g->indptr[v + 1];
		int64_t prev = -1;
		uint64_t sa = 0, sb = 0;
		bool bad = lo < hi && ix[lo] < 0;
		for (int64_t j = lo; j < hi; j++) {
			int64_t u = ix[j];
			bad |= u < prev || (unique && u == prev) || u >= n;
			prev = u;
			if (sym) {
				const uint64_t h = sym_a((uint64_t)u);
				sa += h;
				sb += h * h;
			}
		}
		if (bad)
			return v;
		const uint64_t h = sym_a((uint64_t)v);
		f += h * sb;
		r += h * h * sa;
	}
	*fwd += f;
	*rev += r;
	return r1;
}

/* The message for bad row v (found by scan_rows). */
static int row_error(const burrow_csr *g, int64_t n, int64_t v, bool unique, const char *ids)
{
	int64_t prev = -1;
	for (int64_t j = g->indptr[v]; j < g->indptr[v + 1]; j++) {
		int64_t u = burrow_csr_index(g, j);
		if (u < 0 || u >= n)
			return bw_err(BURROW_E_FORMAT, "%s: row %lld: neighbor %lld (entry %lld) out of range [0, %lld)",
				      ids, (long long)v, (long long)u, (long long)j, (long long)n);
		if (u < prev || (unique && u == prev))
			return bw_err(BURROW_E_FORMAT, "%s: row %lld: neighbors not %s at entry %lld", ids, (long long)v,
				      unique ? "strictly increasing" : "sorted", (long long)j);
		prev = u;
	}
	return bw_err(BURROW_E_FORMAT, "%s: row %lld is malformed", ids, (long long)v);
}

/* Unmap the whole pages inside ids [j0, j1) of a read-only file mapping: they stay in the
 * page cache, out of the process's RSS. */
static void drop_entries(const burrow_csr *g, int64_t j0, int64_t j1)
{
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	const uintptr_t a = (uintptr_t)g->indices + (uintptr_t)j0 * (uintptr_t)g->index_width;
	const uintptr_t b = (uintptr_t)g->indices + (uintptr_t)j1 * (uintptr_t)g->index_width;
	const uintptr_t lo = (a + page - 1) & ~(page - 1), hi = b & ~(page - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* bw_csr_scan with ids bounded by num_ids (g->num_nodes for a square CSR). */
static int csr_scan(const burrow_csr *g, int64_t num_ids, bool unique, bool *symmetric, const char *offs,
		    const char *ids, bool drop_pages)
{
	const int64_t n = g->num_nodes, e = g->num_edges;
	if (n < 0 || e < 0 || num_ids < 0 || (g->index_width != 4 && g->index_width != 8) || !g->indptr ||
	    (e && !g->indices))
		return bw_err(BURROW_E_FORMAT, "csr: bad node count, edge count or index width");
	if (g->index_width == 4 && num_ids > INT32_MAX)
		return bw_err(BURROW_E_FORMAT, "csr: %lld nodes need 64-bit ids", (long long)num_ids);
	if (g->indptr[0] != 0)
		return bw_err(BURROW_E_FORMAT, "%s: indptr[0] is %lld, expected 0", offs, (long long)g->indptr[0]);
	if (g->indptr[n] != e)
		return bw_err(BURROW_E_FORMAT, "%s: indptr[%lld] is %lld, expected the edge count %lld", offs,
			      (long long)n, (long long)g->indptr[n], (long long)e);
	/* offsets first (N reads), so that rows can be cut into pieces of equal entries */
	int64_t bad = n;
#pragma omp parallel for schedule(static) reduction(min : bad)
	for (int64_t v = 0; v < n; v++)
		if (g->indptr[v + 1] < g->indptr[v] && v < bad)
			bad = v;
	if (bad < n)
		return bw_err(BURROW_E_FORMAT, "%s: row %lld: indptr decreases (%lld > %lld)", offs, (long long)bad,
			      (long long)g->indptr[bad], (long long)g->indptr[bad + 1]);
	const bool sym = symmetric != NULL;
	const int64_t pieces = 64;
	uint64_t fwd = 0, rev = 0;
	bad = n;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : fwd, rev) reduction(min : bad)
	for (int64_t p = 0; p < pieces; p++) {
		/* rows whose first entry lies in [e * p / pieces, e * (p + 1) / pieces) */
		int64_t r[2];
		for (int k = 0; k < 2; k++) {
			int64_t target = (int64_t)((__int128)e * (p + k) / pieces), lo = 0, hi = n;
			while (lo < hi) { /* the first row starting at or after target */
				int64_t mid = lo + (hi - lo) / 2;
				if (g->indptr[mid] < target)
					lo = mid + 1;
				else
					hi = mid;
			}
			r[k] = p + k == pieces ? n : lo;
		}
		if (p == 0)
			r[0] = 0;
		int64_t b = scan_rows(g, num_ids, r[0], r[1], unique, sym, &fwd, &rev);
		if (drop_pages)
			drop_entries(g, g->indptr[r[0]], g->indptr[r[1]]);
		if (b < r[1] && b < bad)
			bad = b;
	}
	if (bad < n)
		return row_error(g, num_ids, bad, unique, ids);
	if (sym)
		*symmetric = fwd == rev;
	return 0;
}

int bw_csr_scan(const burrow_csr *g, bool unique, bool *symmetric, const char *offs, const char *ids,
		bool drop_pages)
{
	return csr_scan(g, g->num_nodes, unique, symmetric, offs, ids, drop_pages);
}

int bw_csr_scan_rect(const burrow_csr *g, int64_t num_ids, bool unique, const char *offs, const char *ids,
		     bool drop_pages)
{
	return csr_scan(g, num_ids, unique, NULL, offs, ids, drop_pages);
}

int burrow_csr_check(const burrow_csr *g, bool unique) { return bw_csr_scan(g, unique, NULL, "csr", "csr", false); }
