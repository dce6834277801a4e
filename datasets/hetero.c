/* hetero.c: typed graphs from files (burrow prep ogbn-mag, typed burrow import): node types,
 * relations streamed into the writer (with their reverses under --add-reverse), each type's
 * features, and --fill mean for the types that have none. */
#define _GNU_SOURCE
#include "../core/half.h"
#include "dsio.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#define EDGE_CHUNK ((size_t)1 << 16)
#define FEAT_CHUNK_BYTES ((size_t)4 << 20)

int bw_member_file(bw_member *m, const char *path)
{
	memset(m, 0, sizeof *m);
	if (strlen(path) >= sizeof m->path)
		return bw_err(BURROW_E_INVAL, "%.200s...: path too long", path);
	memcpy(m->path, path, strlen(path) + 1);
	memcpy(m->name, path, strlen(path) + 1);
	m->src = (bw_src){.name = m->name, .path = m->path, .fd = -1};
	return 0;
}

static void report(const bw_hplan *p, const char *phase, uint64_t done, uint64_t total)
{
	if (p->progress)
		p->progress(p->progress_user, phase, done, total);
}

static bool valid_name(const char *s)
{
	size_t n = strlen(s);
	bool ok = n >= 1 && n < BURROW_MAX_NAME;
	for (const char *c = s; ok && *c; c++)
		ok = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_' ||
		     *c == '-';
	return ok;
}

/* Is (src, name, dst) one of p's relations, or the reverse add_reverse gives one? */
static bool relation_taken(const bw_hplan *p, int src, const char *name, int dst, int upto)
{
	for (int i = 0; i < upto; i++) {
		const bw_hrel *r = &p->rel[i];
		if (r->src == src && r->dst == dst && !strcmp(r->name, name))
			return true;
		if (p->add_reverse && r->src != r->dst && r->dst == src && r->src == dst && !strncmp(name, "rev_", 4) &&
		    !strcmp(r->name, name + 4))
			return true;
	}
	return false;
}

static int check_relations(const bw_hplan *p)
{
	int total = p->num_relations;
	for (int i = 0; i < p->num_relations; i++) {
		const bw_hrel *r = &p->rel[i];
		if (r->src < 0 || r->src >= p->num_types || r->dst < 0 || r->dst >= p->num_types)
			return bw_err(BURROW_E_INVAL, "%s: relation '%s' names a node type that is not declared", r->edges.name,
				      r->name);
		if (!valid_name(r->name))
			return bw_err(BURROW_E_INVAL, "%s: relation name '%s' is not 1 to %d of A-Z a-z 0-9 _ -", r->edges.name,
				      r->name, BURROW_MAX_NAME - 1);
		if (relation_taken(p, r->src, r->name, r->dst, i))
			return bw_err(BURROW_E_INVAL, "%s: relation (%s, %s, %s) is given twice", r->edges.name,
				      p->type[r->src].name, r->name, p->type[r->dst].name);
		if (p->add_reverse && r->src != r->dst) {
			char rev[BURROW_MAX_NAME + 8];
			snprintf(rev, sizeof rev, "rev_%s", r->name);
			if (strlen(rev) >= BURROW_MAX_NAME)
				return bw_err(BURROW_E_INVAL, "%s: relation name '%s' too long for its reverse '%s'",
					      r->edges.name, r->name, rev);
			bool given = false; /* the reverse must not be one of the relations given */
			for (int j = 0; j < p->num_relations; j++)
				given |= p->rel[j].src == r->dst && p->rel[j].dst == r->src && !strcmp(p->rel[j].name, rev);
			if (given)
				return bw_err(BURROW_E_INVAL, "%s: the reverse (%s, %s, %s) of relation '%s' is given too",
					      r->edges.name, p->type[r->dst].name, rev, p->type[r->src].name, r->name);
			total++;
		}
	}
	if (total > BURROW_MAX_RELATIONS)
		return bw_err(BURROW_E_INVAL, "typed graph: %d relations%s, at most %d", total,
			      p->add_reverse ? " with their reverses" : "", BURROW_MAX_RELATIONS);
	return 0;
}

int bw_hplan_check(const bw_hplan *p)
{
	if (p->num_types < 1 || p->num_types > BURROW_MAX_TYPES)
		return bw_err(BURROW_E_INVAL, "typed graph: %d node types, want 1 to %d", p->num_types, BURROW_MAX_TYPES);
	if (p->num_relations < 1 || p->num_relations > BURROW_MAX_RELATIONS)
		return bw_err(BURROW_E_INVAL, "typed graph: %d relations, want 1 to %d", p->num_relations,
			      BURROW_MAX_RELATIONS);
	for (int t = 0; t < p->num_types; t++) {
		const bw_htype *y = &p->type[t];
		if (!valid_name(y->name))
			return bw_err(BURROW_E_INVAL, "node type name '%s' is not 1 to %d of A-Z a-z 0-9 _ -", y->name,
				      BURROW_MAX_NAME - 1);
		if (y->n < 0)
			return bw_err(BURROW_E_INVAL, "node type '%s': negative count %lld", y->name, (long long)y->n);
		for (int u = 0; u < t; u++)
			if (!strcmp(p->type[u].name, y->name))
				return bw_err(BURROW_E_INVAL, "node type '%s' is declared twice", y->name);
	}
	if (p->target < -1 || p->target >= p->num_types)
		return bw_err(BURROW_E_INVAL, "typed graph: target type %d out of range", p->target);
	if (p->fill != BURROW_FEAT_FILL_NONE && p->fill != BURROW_FEAT_FILL_MEAN)
		return bw_err(BURROW_E_INVAL, "typed graph: unknown fill %d", p->fill);
	return check_relations(p);
}

/* ---------------------------------------------------------------- edges */

/* Text edges "src dst" a line into sink, each id checked against its type's count. */
static int text_edges(const bw_hplan *p, const bw_hrel *r, bw_edge_sink sink, void *ctx, int64_t *count)
{
	const int64_t ns = p->type[r->src].n, nd = p->type[r->dst].n;
	int64_t *s = NULL, *d = NULL, v[2], e = 0;
	size_t k = 0;
	bool gz = true, more, header;
	bw_csv c;
	int st = 0;
	if (r->kind == BW_IN_TEXT && !r->edges.src.member && (st = bw_is_gzip(r->edges.src.path, &gz)))
		return st;
	if ((st = bw_csv_open(&c, &r->edges.src, gz, r->kind == BW_IN_CSV ? ',' : 0, r->kind == BW_IN_TEXT)))
		return st;
	if (r->kind == BW_IN_TEXT && (st = bw_csv_header(&c, false, &header)))
		goto out;
	s = bw_malloc(EDGE_CHUNK * sizeof *s);
	d = bw_malloc(EDGE_CHUNK * sizeof *d);
	if (!s || !d) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	while (!(st = bw_csv_next_line(&c, &more)) && more) {
		if ((st = bw_csv_ints(&c, v, 2)))
			goto out;
		if (v[0] < 0 || v[0] >= ns || v[1] < 0 || v[1] >= nd) {
			const int at = v[0] < 0 || v[0] >= ns ? 0 : 1;
			st = bw_csv_err(&c, BURROW_E_RANGE, "%s id %lld out of range [0, %lld) of type '%s'",
					at ? "destination" : "source", (long long)v[at], (long long)(at ? nd : ns),
					p->type[at ? r->dst : r->src].name);
			goto out;
		}
		s[k] = v[0];
		d[k] = v[1];
		e++;
		if (++k == EDGE_CHUNK) {
			if ((st = sink(ctx, s, d, k)))
				goto out;
			k = 0;
			report(p, "edges", bw_rd_consumed(c.rd), bw_rd_size(c.rd));
		}
	}
	if (!st && k)
		st = sink(ctx, s, d, k);
	*count = e;
out:
	bw_free(s);
	bw_free(d);
	bw_csv_close(&c);
	return st;
}

/* One pass over relation r's edges into sink. */
static int rel_edges(const bw_hplan *p, const bw_hrel *r, bw_edge_sink sink, void *ctx, int64_t *count)
{
	if (r->kind == BW_IN_NPY)
		return bw_edges_npy_to(&r->edges.src, p->type[r->src].n, p->type[r->dst].n, sink, ctx, count, p->progress,
				       p->progress_user, NULL);
	return text_edges(p, r, sink, ctx, count);
}

static void csr_opts(const bw_hplan *p, burrow_csr_opts *co)
{
	burrow_csr_defaults(co);
	co->mem_bytes = p->mem;
	co->spill_dir = p->spill;
	co->progress = p->progress;
	co->progress_user = p->progress_user;
}

/* Edges into the writer's open relation: swapped for a reverse; both ways for a relation
 * from a type to itself under add_reverse. */
typedef struct rel_sink {
	burrow_writer *w;
	bool swap, both;
} rel_sink;

static int to_relation(void *ctx, const int64_t *s, const int64_t *d, size_t n)
{
	const rel_sink *x = ctx;
	int st = burrow_writer_relation_add(x->w, x->swap ? d : s, x->swap ? s : d, n);
	if (!st && x->both)
		st = burrow_writer_relation_add(x->w, d, s, n);
	return st;
}

/* Relation i (or its reverse "rev_<name>", dst -> src) into w. */
static int put_relation(burrow_writer *w, bw_hplan *p, int i, bool reverse)
{
	bw_hrel *r = &p->rel[i];
	char name[BURROW_MAX_NAME + 8];
	snprintf(name, sizeof name, "%s%s", reverse ? "rev_" : "", r->name);
	rel_sink x = {.w = w, .swap = reverse, .both = p->add_reverse && r->src == r->dst};
	burrow_csr_opts co;
	csr_opts(p, &co);
	int64_t count = 0;
	int st = burrow_writer_relation_begin(w, reverse ? r->dst : r->src, name, reverse ? r->src : r->dst, &co);
	if (!st)
		st = rel_edges(p, r, to_relation, &x, &count);
	if (!st && r->listed >= 0 && r->listed != count)
		st = bw_err(BURROW_E_FORMAT, "%s: %lld edges, but num-edge-list.csv.gz says %lld", r->edges.name,
			    (long long)count, (long long)r->listed);
	if (!st)
		st = burrow_writer_relation_end(w);
	if (!st)
		r->read = count;
	return st;
}

/* ---------------------------------------------------------------- feature rows */

/* Rows of a type's features in order, as float32: OGB's csv.gz, an .npy (f16, f32, f64), or a
 * scratch file of float32 rows (a type filled in an earlier round). */
typedef struct rows_rd {
	int kind;            /* BW_IN_CSV, BW_IN_NPY, or BW_IN_NONE for a scratch file */
	const char *name;    /* the file, for messages */
	const char *type;    /* the type's name */
	int64_t n, dim, at;  /* rows, row width, rows read */
	burrow_dtype t;      /* the .npy's dtype */
	bw_csv c;
	bool more;           /* csv: a line is waiting */
	bw_npys a;
	int fd;              /* scratch: float32 rows, read with pread */
	void *raw;           /* npy: one chunk as stored */
	size_t rawcap;
} rows_rd;

static int rows_open_npy(rows_rd *r, const bw_htype *y)
{
	int st = bw_npys_open(&r->a, &y->feat.src);
	if (st)
		return st;
	r->kind = BW_IN_NPY;
	const bw_npy *h = &r->a.h;
	r->t = h->dtype;
	if (h->ndim != 2 || h->shape[0] != y->n || h->shape[1] < 1 ||
	    (r->t != BURROW_DTYPE_F32 && r->t != BURROW_DTYPE_F16 && r->t != BURROW_DTYPE_F64))
		return bw_err(BURROW_E_FORMAT,
			      "%s: expected a float array of shape (%lld, D) for the %lld nodes of type '%s', found %s with %d "
			      "dimensions, %lld rows",
			      r->name, (long long)y->n, (long long)y->n, y->name, burrow_dtype_name(r->t), h->ndim,
			      (long long)(h->ndim ? h->shape[0] : 0));
	r->dim = h->shape[1];
	return 0;
}

/* Open type y's feature rows: from its file, or from the scratch fd (>= 0) of width dim. */
static int rows_open(rows_rd *r, const bw_htype *y, int fd, int64_t dim)
{
	memset(r, 0, sizeof *r);
	r->fd = -1;
	r->n = y->n;
	r->type = y->name;
	r->name = y->feat.src.name;
	if (fd >= 0) {
		r->kind = BW_IN_NONE;
		r->fd = fd;
		r->dim = dim;
		r->name = "the filled features' scratch file";
		return 0;
	}
	if (y->feat_kind == BW_IN_NPY)
		return rows_open_npy(r, y);
	r->kind = BW_IN_CSV;
	int st = bw_csv_open(&r->c, &y->feat.src, true, ',', false);
	if (!st)
		st = bw_csv_next_line(&r->c, &r->more);
	if (!st && !r->more)
		st = bw_err(BURROW_E_FORMAT, "%s: empty, expected %lld rows of features", r->name, (long long)r->n);
	if (!st)
		r->dim = bw_csv_count_fields(&r->c);
	return st;
}

static int rows_csv(rows_rd *r, float *buf, int64_t k)
{
	int st = 0;
	for (int64_t i = 0; i < k && !st; i++, r->at++) {
		if (!r->more)
			return bw_err(BURROW_E_FORMAT, "%s: %lld rows, but type '%s' has %lld nodes", r->name, (long long)r->at,
				      r->type, (long long)r->n);
		if (!(st = bw_csv_floats(&r->c, buf + i * r->dim, r->dim)))
			st = bw_csv_next_line(&r->c, &r->more);
	}
	return st;
}

static int rows_npy(rows_rd *r, float *buf, int64_t k)
{
	const size_t cnt = (size_t)(k * r->dim), tsz = burrow_dtype_size(r->t);
	if (cnt * tsz > r->rawcap) {
		bw_free(r->raw);
		r->rawcap = 0;
		if (!(r->raw = bw_malloc(cnt * tsz)))
			return BURROW_E_NOMEM;
		r->rawcap = cnt * tsz;
	}
	int st = bw_npys_read(&r->a, r->raw, cnt * tsz);
	if (st)
		return st;
	for (size_t j = 0; j < cnt; j++)
		buf[j] = r->t == BURROW_DTYPE_F32   ? ((const float *)r->raw)[j]
			 : r->t == BURROW_DTYPE_F64 ? (float)((const double *)r->raw)[j]
						    : bw_f16_to_f32(((const uint16_t *)r->raw)[j]);
	r->at += k;
	return 0;
}

/* The next k rows into buf ([k, dim] float32). */
static int rows_read(rows_rd *r, float *buf, int64_t k)
{
	if (r->kind == BW_IN_CSV)
		return rows_csv(r, buf, k);
	if (r->kind == BW_IN_NPY)
		return rows_npy(r, buf, k);
	const size_t row = (size_t)r->dim * sizeof *buf;
	int st = bw_pread_all(r->fd, buf, (size_t)k * row, r->at * (int64_t)row, r->name);
	r->at += k;
	return st;
}

/* After the last row: a csv must have no more. */
static int rows_end(rows_rd *r)
{
	if (r->kind == BW_IN_CSV && r->more)
		return bw_csv_err(&r->c, BURROW_E_FORMAT, "more rows than the %lld nodes of type '%s'", (long long)r->n,
				  r->type);
	return 0;
}

static void rows_close(rows_rd *r)
{
	if (r->kind == BW_IN_CSV)
		bw_csv_close(&r->c);
	else if (r->kind == BW_IN_NPY)
		bw_npys_close(&r->a);
	bw_free(r->raw);
	r->raw = NULL;
}

static int64_t rows_per_chunk(int64_t dim) { return BW_MAX(1, (int64_t)(FEAT_CHUNK_BYTES / ((size_t)dim * sizeof(float)))); }

static burrow_dtype out_dtype(const bw_hplan *p, burrow_dtype in)
{
	return p->feat_dtype != BURROW_DTYPE_INVALID ? p->feat_dtype
	       : in == BURROW_DTYPE_F16	     ? BURROW_DTYPE_F16
					     : BURROW_DTYPE_F32;
}

/* Type t's own features into w, streamed. */
static int put_features(burrow_writer *w, const bw_hplan *p, int t)
{
	rows_rd r;
	float *buf = NULL;
	int st = rows_open(&r, &p->type[t], -1, 0);
	if (st)
		goto out;
	const burrow_dtype od = out_dtype(p, r.kind == BW_IN_NPY ? r.t : BURROW_DTYPE_F32);
	const int64_t per = rows_per_chunk(r.dim), n = p->type[t].n;
	if (!(buf = bw_malloc((size_t)(per * r.dim) * sizeof *buf))) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	if ((st = burrow_writer_type_features_begin(w, t, r.dim, od)))
		goto out;
	for (int64_t i = 0, k; i < n && !st; i += k) {
		k = BW_MIN(per, n - i);
		if (!(st = rows_read(&r, buf, k)))
			st = bw_put_rows(w, buf, k, r.dim, od);
		report(p, "features", (uint64_t)(i + k), (uint64_t)n);
	}
	if (!st && !(st = rows_end(&r)))
		st = burrow_writer_features_end(w);
out:
	bw_free(buf);
	rows_close(&r);
	return st;
}

/* The width of type t's own features (opens and closes its file). */
static int feature_dim(const bw_hplan *p, int t, int64_t *dim)
{
	rows_rd r;
	int st = rows_open(&r, &p->type[t], -1, 0);
	*dim = r.dim;
	rows_close(&r);
	return st;
}

/* ---------------------------------------------------------------- --fill mean */

/* One relation's edges keyed by the featured end: row f, id t (distinct pairs). */
typedef struct keyed {
	burrow_csr_builder *b;
	bool f_is_src;
} keyed;

static int to_keyed(void *ctx, const int64_t *s, const int64_t *d, size_t n)
{
	const keyed *x = ctx;
	return x->f_is_src ? burrow_csr_builder_add(x->b, s, d, n) : burrow_csr_builder_add(x->b, d, s, n);
}

/* The fill's state: per type its width, whether it has features, its scratch file. */
typedef struct fill_state {
	int64_t dim[BURROW_MAX_TYPES];
	bool have[BURROW_MAX_TYPES];
	int fd[BURROW_MAX_TYPES];   /* filled types' float32 rows, -1 for the rest */
} fill_state;

/* Add relation r's contribution from type f to the sums of type t: for each distinct edge
 * (f node u, t node v), sum[v] += x_u and cnt[v] += 1; f's rows are streamed in order. */
static int fill_from(const bw_hplan *p, const fill_state *fs, int r, int t, int f, double *sum, int64_t *cnt)
{
	const bw_hrel *h = &p->rel[r];
	const int64_t dim = fs->dim[f], nf = p->type[f].n;
	burrow_csr_builder *b = NULL;
	burrow_csr g;
	rows_rd rr;
	float *buf = NULL;
	int64_t count;
	burrow_csr_opts co;
	csr_opts(p, &co);
	co.drop_self_loops = false; /* (u, u) joins two types' nodes: not a loop */
	keyed x = {.f_is_src = h->src == f};
	int st = rows_open(&rr, &p->type[f], fs->fd[f], dim);
	if (st || (st = burrow_csr_builder_open(&b, BW_MAX(nf, p->type[t].n), &co)))
		goto out;
	x.b = b;
	if ((st = rel_edges(p, h, to_keyed, &x, &count)) || (st = burrow_csr_builder_finish(b, &g)))
		goto out;
	const int64_t per = rows_per_chunk(dim);
	if (!(buf = bw_malloc((size_t)(per * dim) * sizeof *buf))) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	for (int64_t u0 = 0, k; u0 < nf; u0 += k) {
		k = BW_MIN(per, nf - u0);
		if ((st = rows_read(&rr, buf, k)))
			goto out;
		for (int64_t u = u0; u < u0 + k; u++)
			for (int64_t j = g.indptr[u]; j < g.indptr[u + 1]; j++) {
				const int64_t v = burrow_csr_index(&g, j);
				const float *xu = buf + (u - u0) * dim;
				double *sv = sum + v * dim;
				for (int64_t c = 0; c < dim; c++)
					sv[c] += xu[c];
				cnt[v]++;
			}
	}
	st = rows_end(&rr);
out:
	bw_free(buf);
	rows_close(&rr);
	burrow_csr_builder_close(b);
	return st;
}

/* Type t's filled rows, sum / cnt (zeros where cnt is 0), into w and a scratch file. */
static int put_filled(burrow_writer *w, const bw_hplan *p, fill_state *fs, int t, const double *sum,
		      const int64_t *cnt)
{
	const int64_t n = p->type[t].n, dim = fs->dim[t], per = rows_per_chunk(dim);
	const burrow_dtype od = out_dtype(p, BURROW_DTYPE_F32);
	float *buf = bw_malloc((size_t)(per * dim) * sizeof *buf);
	int st = buf ? bw_scratch_fd(bw_scratch_dir(p->spill), "burrow-fill-", &fs->fd[t]) : BURROW_E_NOMEM;
	if (!st)
		st = burrow_writer_type_features_begin(w, t, dim, od);
	for (int64_t v0 = 0, k; v0 < n && !st; v0 += k) {
		k = BW_MIN(per, n - v0);
		for (int64_t v = v0; v < v0 + k; v++)
			for (int64_t c = 0; c < dim; c++)
				buf[(v - v0) * dim + c] = cnt[v] ? (float)(sum[v * dim + c] / (double)cnt[v]) : 0.0f;
		if (!(st = bw_write_all(fs->fd[t], buf, (size_t)(k * dim) * sizeof *buf, "the filled features' scratch file")))
			st = bw_put_rows(w, buf, k, dim, od);
	}
	if (!st)
		st = burrow_writer_features_end(w);
	bw_free(buf);
	return st;
}

/* The relations that connect t to a type with features at this round's start (now[]):
 * their indices into rels, the featured type of each into from; returns how many. A
 * relation's width must agree with the others'. */
static int fill_sources(const bw_hplan *p, const fill_state *fs, const bool *now, int t, int *rels, int *from,
			int *k)
{
	*k = 0;
	for (int r = 0; r < p->num_relations; r++) {
		const bw_hrel *h = &p->rel[r];
		const int f = h->src == t ? h->dst : h->dst == t ? h->src : -1;
		if (f < 0 || f == t || !now[f])
			continue;
		if (*k && fs->dim[f] != fs->dim[from[0]])
			return bw_err(BURROW_E_FORMAT,
				      "fill mean: type '%s' neighbors types with features of different widths ('%s' %lld, "
				      "'%s' %lld)",
				      p->type[t].name, p->type[from[0]].name, (long long)fs->dim[from[0]], p->type[f].name,
				      (long long)fs->dim[f]);
		rels[*k] = r;
		from[(*k)++] = f;
	}
	return 0;
}

/* Fill type t from the types that have features now; *done tells whether it had any. */
static int fill_type(burrow_writer *w, const bw_hplan *p, fill_state *fs, const bool *now, int t, bool *done)
{
	int rels[BURROW_MAX_RELATIONS], from[BURROW_MAX_RELATIONS], k;
	*done = false;
	int st = fill_sources(p, fs, now, t, rels, from, &k);
	if (st || k == 0)
		return st;
	const int64_t n = p->type[t].n, dim = fs->dim[from[0]];
	double *sum = bw_calloc((size_t)BW_MAX(n * dim, 1), sizeof *sum);
	int64_t *cnt = bw_calloc((size_t)BW_MAX(n, 1), sizeof *cnt);
	if (!sum || !cnt)
		st = BURROW_E_NOMEM;
	for (int i = 0; i < k && !st; i++)
		st = fill_from(p, fs, rels[i], t, from[i], sum, cnt);
	fs->dim[t] = dim;
	if (!st && !(st = put_filled(w, p, fs, t, sum, cnt)))
		*done = true;
	report(p, "fill", 1, 1);
	bw_free(sum);
	bw_free(cnt);
	return st;
}

/* --fill mean: rounds; in each, every type without features that a relation joins to a type
 * with features (at the round's start) gets the mean of those neighbors' rows. */
static int fill_types(burrow_writer *w, const bw_hplan *p)
{
	fill_state fs = {0};
	int st = 0;
	for (int t = 0; t < p->num_types; t++) {
		fs.fd[t] = -1;
		fs.have[t] = p->type[t].feat_kind != BW_IN_NONE;
		if (fs.have[t] && !st)
			st = feature_dim(p, t, &fs.dim[t]);
	}
	for (bool grew = true; grew && !st;) {
		bool now[BURROW_MAX_TYPES];
		memcpy(now, fs.have, sizeof now);
		grew = false;
		for (int t = 0; t < p->num_types && !st; t++) {
			bool done = false;
			if (!now[t] && !(st = fill_type(w, p, &fs, now, t, &done)) && done)
				fs.have[t] = grew = true;
		}
	}
	for (int t = 0; t < p->num_types; t++) {
		if (!st && !fs.have[t])
			bw_log(BURROW_LOG_WARN, "fill mean: no relation joins type '%s' to a type with features; it stays "
			       "without", p->type[t].name);
		if (fs.fd[t] >= 0)
			close(fs.fd[t]);
	}
	return st;
}

/* ---------------------------------------------------------------- the whole */

int bw_hetero_put(burrow_writer *w, bw_hplan *p)
{
	int st = bw_hplan_check(p), idx;
	for (int t = 0; t < p->num_types && !st; t++)
		if (!(st = burrow_writer_add_type(w, p->type[t].name, p->type[t].n, &idx)) && idx != t)
			st = bw_err(BURROW_E_INVAL, "writer numbered type '%s' %d, not %d", p->type[t].name, idx, t);
	for (int t = 0; t < p->num_types && !st; t++) { /* a wrong shape is refused before any edge is read */
		int64_t dim;
		if (p->type[t].feat_kind == BW_IN_NPY)
			st = feature_dim(p, t, &dim);
	}
	if (!st && p->target >= 0)
		st = burrow_writer_set_target(w, p->target);
	for (int r = 0; r < p->num_relations && !st; r++)
		st = put_relation(w, p, r, false);
	for (int r = 0; r < p->num_relations && !st && p->add_reverse; r++)
		if (p->rel[r].src != p->rel[r].dst)
			st = put_relation(w, p, r, true);
	for (int t = 0; t < p->num_types && !st; t++)
		if (p->type[t].feat_kind != BW_IN_NONE)
			st = put_features(w, p, t);
	if (!st && p->fill == BURROW_FEAT_FILL_MEAN)
		st = fill_types(w, p);
	return st;
}

void bw_hplan_json(const bw_hplan *p, cJSON *j)
{
	cJSON_AddBoolToObject(j, "add_reverse", p->add_reverse);
	cJSON_AddStringToObject(j, "fill", p->fill == BURROW_FEAT_FILL_MEAN ? "mean" : "none");
	cJSON *a = cJSON_AddArrayToObject(j, "relation_files");
	for (int r = 0; a && r < p->num_relations; r++) {
		const bw_hrel *h = &p->rel[r];
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(a, o)) {
			cJSON_Delete(o);
			break;
		}
		const char *base = strrchr(h->edges.name, '/');
		cJSON_AddStringToObject(o, "src", p->type[h->src].name);
		cJSON_AddStringToObject(o, "name", h->name);
		cJSON_AddStringToObject(o, "dst", p->type[h->dst].name);
		cJSON_AddStringToObject(o, "file", base ? base + 1 : h->edges.name);
		cJSON_AddNumberToObject(o, "edges_read", (double)h->read);
	}
}
