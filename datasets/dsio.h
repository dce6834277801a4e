/* dsio.h: what prep and import share: byte streams out of files and zip members (gunzipped
 * on a helper thread), a line-oriented CSV reader with fast number parsers, streamed .npy
 * members of .npz archives. */
#ifndef BURROW_DSIO_H
#define BURROW_DSIO_H

#include "../core/internal.h"
#include "../graph/npy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Half the physical memory: the default memory budget of prep and import. */
size_t bw_half_memory(void);

/* --order at gen, prep and import (datasets/reorder.c): write(ctx, dir) writes the dataset as
 * usual into a scratch folder beside out, which burrow_reorder then streams into out; the
 * scratch is removed whatever happens, and out is written atomically or not at all. */
typedef struct bw_order_job {
	int order;                 /* enum burrow_order, not NONE */
	uint64_t seed;             /* RANDOM's draw */
	size_t mem_bytes;          /* the reorder's budget (0: half of the machine's) */
	bool overwrite;            /* replace out if it holds a dataset */
	burrow_progress_fn progress;
	void *progress_user;
	int (*write)(void *ctx, const char *dir);
	void *ctx;
} bw_order_job;
int bw_write_ordered(const char *out, const bw_order_job *j);

/* ---------------------------------------------------------------- sources */

/* Where bytes come from: a plain file, a member of a zip archive, or a member of a zip
 * archive that is itself a stored member of another zip (an .npz inside an OGB zip). */
typedef struct bw_src {
	const char *name;    /* shown in messages: "data/x.zip:arxiv/raw/edge.csv.gz"; borrowed */
	const char *path;    /* the file or archive; NULL when fd is given */
	int fd;              /* an open archive (dup'ed by each reader), when path is NULL */
	const char *nested;  /* NULL, or the member of the archive that holds `member` */
	const char *member;  /* NULL for a plain file */
} bw_src;

/* A reader: a helper thread reads (and inflates) the source into blocks. In line mode
 * each block ends at a line end, and the stream's last line gets a '\n' if it lacks one. */
typedef struct bw_rd bw_rd;

int bw_rd_open(bw_rd **out, const bw_src *src, bool gunzip, bool lines);
/* The next block: *n == 0 at the end. The block stays valid until the next call. */
int bw_rd_next(bw_rd *r, const char **data, size_t *n);
/* Bytes of the source consumed so far, and its size (compressed, for progress). */
uint64_t bw_rd_consumed(const bw_rd *r);
uint64_t bw_rd_size(const bw_rd *r);
/* The source's size uncompressed by the zip (before any gunzip): the file's or member's. */
uint64_t bw_rd_usize(const bw_rd *r);
const char *bw_rd_name(const bw_rd *r);
void bw_rd_close(bw_rd *r);

/* Open a zip archive read-only; the message names the path ("not a zip archive", ...). */
struct zip;
int bw_zip_open(struct zip **za, const char *path, int fd);

/* A file to read and the strings its source points at (so it must not be copied once set). */
typedef struct bw_member {
	char name[1280];
	char path[1024];
	char nested[512];
	char member[512];
	bw_src src;
} bw_member;

/* m reads the plain file path (BURROW_E_INVAL when the path is too long). */
int bw_member_file(bw_member *m, const char *path);
/* Does the file start with gzip's magic bytes? */
int bw_is_gzip(const char *path, bool *gz);

/* ---------------------------------------------------------------- numbers */

/* Parse a decimal integer at [p, end): *next is set after it; returns 0, 1 when there
 * is no integer at p, 2 when it overflows int64. */
static inline int bw_parse_i64(const char *p, const char *end, int64_t *v, const char **next)
{
	bool neg = false;
	if (p < end && (*p == '-' || *p == '+'))
		neg = *p++ == '-';
	const char *s = p;
	uint64_t x = 0;
	while (p < end && (unsigned)(*p - '0') < 10) {
		unsigned d = (unsigned)(*p - '0');
		if (x > (UINT64_C(9223372036854775808) - d) / 10)
			return 2;
		x = x * 10 + d;
		p++;
	}
	if (p == s)
		return 1;
	if (!neg && x > (uint64_t)INT64_MAX)
		return 2;
	*v = neg ? (int64_t)(0 - x) : (int64_t)x;
	*next = p;
	return 0;
}

/* The slow exact path for bw_parse_f32: strtof on a copy of the token. */
int bw_parse_f32_slow(const char *s, const char *end, float *v, const char **next);

/* Parse a decimal floating-point number at [p, end), correctly rounded to float32 (the
 * same value strtof gives): short decimals take exact float or double arithmetic (one
 * rounding of exact operands), everything else goes to strtof. Returns 0, or 1 when
 * there is no number at p; *next is set after it. */
static inline int bw_parse_f32(const char *p, const char *end, float *v, const char **next)
{
	static const float P10F[11] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f, 1e6f, 1e7f, 1e8f, 1e9f, 1e10f};
	static const double P10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
				       1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
	const char *s = p;
	bool neg = false, any = false, lost = false;
	uint64_t m = 0;
	int e10 = 0;
	if (p < end && (*p == '-' || *p == '+'))
		neg = *p++ == '-';
	for (; p < end && (unsigned)(*p - '0') < 10; p++, any = true) {
		if (m < UINT64_C(100000000000000000))
			m = m * 10 + (unsigned)(*p - '0');
		else {
			e10++;
			lost |= *p != '0';
		}
	}
	if (p < end && *p == '.')
		for (p++; p < end && (unsigned)(*p - '0') < 10; p++, any = true) {
			if (m < UINT64_C(100000000000000000)) {
				m = m * 10 + (unsigned)(*p - '0');
				e10--;
			} else {
				lost |= *p != '0';
			}
		}
	if (!any)
		return bw_parse_f32_slow(s, end, v, next); /* nan, inf, or not a number */
	if (p < end && (*p == 'e' || *p == 'E')) {
		const char *q = p + 1;
		bool eneg = false;
		int x = 0;
		if (q < end && (*q == '-' || *q == '+'))
			eneg = *q++ == '-';
		if (q == end || (unsigned)(*q - '0') >= 10)
			return bw_parse_f32_slow(s, end, v, next);
		for (; q < end && (unsigned)(*q - '0') < 10; q++)
			if (x < 100000)
				x = x * 10 + (*q - '0');
		e10 += eneg ? -x : x;
		p = q;
	}
	if (lost)
		return bw_parse_f32_slow(s, end, v, next);
	if (m <= (1u << 24) && e10 >= -10 && e10 <= 10) {
		float f = (float)m;
		f = e10 < 0 ? f / P10F[-e10] : f * P10F[e10];
		*v = neg ? -f : f;
		*next = p;
		return 0;
	}
	if (m <= (UINT64_C(1) << 53) && e10 >= -22 && e10 <= 22) {
		double d = (double)m;
		d = e10 < 0 ? d / P10[-e10] : d * P10[e10];
		/* d is m * 10^e10 correctly rounded; rounding it again to float is exact unless d
		 * lies on a midpoint between two floats, or outside the normal float range */
		uint64_t bits;
		memcpy(&bits, &d, sizeof bits);
		if ((d == 0 || (d >= 0x1p-126 && d <= 0x1.fffffep127)) && (bits & 0x1fffffffu) != 0x10000000u) {
			*v = neg ? -(float)d : (float)d;
			*next = p;
			return 0;
		}
	}
	return bw_parse_f32_slow(s, end, v, next);
}

/* ---------------------------------------------------------------- CSV */

/* Lines of numbers separated by sep (',' or '\t'), or by any run of blanks, tabs and
 * commas when sep is 0. Blank lines are skipped, and lines starting with '#' too when
 * `comments`. Messages name the source and the line. */
typedef struct bw_csv {
	bw_rd *rd;
	const char *p, *end;   /* the rest of the current block */
	const char *line;      /* start of the current line */
	int64_t lineno;        /* 1-based number of the current line */
	char sep;
	bool comments;
} bw_csv;

int bw_csv_open(bw_csv *c, const bw_src *src, bool gunzip, char sep, bool comments);
void bw_csv_close(bw_csv *c);
/* Move to the next line with content; *more = false at the end of the stream. */
int bw_csv_next_line(bw_csv *c, bool *more);
/* The number of fields on the current line (does not consume it). */
int64_t bw_csv_count_fields(const bw_csv *c);
/* Read exactly k integers / floats from the current line and consume it; a different
 * number of columns or a token that is not a number is BURROW_E_FORMAT naming the line. */
int bw_csv_ints(bw_csv *c, int64_t *v, int64_t k);
int bw_csv_floats(bw_csv *c, float *v, int64_t k);
/* The rest of the current line as a label: an integer, or "nan"/"NaN"/"" (= -1). */
int bw_csv_label(bw_csv *c, int64_t *v);
/* Read exactly k text fields of the current line into words (each shorter than cap, of
 * [A-Za-z0-9_-], 1 .. cap - 1 of them) and consume the line; BURROW_E_FORMAT names the line. */
int bw_csv_words(bw_csv *c, char *words, size_t cap, int64_t k);
/* The k fields of the current line (start[i], len[i]: runs of anything but the separators; in
 * c's buffer, valid until the next line), the line consumed; another count is BURROW_E_FORMAT
 * naming the line. k <= 0: any count >= 1, *found gets it (at most cap are returned). */
int bw_csv_tokens(bw_csv *c, const char **start, size_t *len, int64_t k, int64_t cap, int64_t *found);
/* A message about the current line: "NAME:LINE: <what>"; returns status. */
int bw_csv_err(const bw_csv *c, int status, const char *fmt, ...) BW_PRINTF(3, 4);
/* What a pass over an edge list saw: the largest id and the self-loops (u, u). */
typedef struct bw_edge_tally {
	int64_t max_id;        /* -1 when there is no edge */
	int64_t self_loops;
	uint64_t *seen;        /* NULL, or a bitmap of the ids [0, N) (N bits): each id of an edge is set */
} bw_edge_tally;

/* A header line: with `force` the first line with content is skipped, else it is when it
 * holds a letter (ids never do: "src,dst", "from to"). *skipped tells. */
int bw_csv_header(bw_csv *c, bool force, bool *skipped);
/* Every remaining line of c as an edge "src dst" with ids in [0, num_nodes), added to b in
 * chunks; progress (may be NULL) gets phase "edges" in bytes of the source. *count: edges.
 * b NULL: only read and tally them (ids >= 0, num_nodes ignored). tally may be NULL. */
int bw_csv_edges(bw_csv *c, int64_t num_nodes, burrow_csr_builder *b, burrow_progress_fn progress, void *user,
		 int64_t *count, bw_edge_tally *tally);

/* ---------------------------------------------------------------- npy members */

/* An .npy array streamed from its start: the header is parsed on open. */
typedef struct bw_npys {
	bw_rd *rd;
	bw_npy h;
	const char *p, *end;   /* unread bytes of the current block */
	uint64_t left;         /* data bytes not yet read */
	char name[512];
} bw_npys;

int bw_npys_open(bw_npys *s, const bw_src *src);
/* Exactly n bytes of data into dst (NULL: skip them). */
int bw_npys_read(bw_npys *s, void *dst, size_t n);
void bw_npys_close(bw_npys *s);

/* ---------------------------------------------------------------- arrays (arrays.c) */

/* Where edges go: n of them, src[i] -> dst[i] (borrowed). */
typedef int (*bw_edge_sink)(void *ctx, const int64_t *src, const int64_t *dst, size_t n);
/* Edges from an integer .npy (2, E) or (E, 2) to sink (NULL: only read and tally them, ids
 * then need only be >= 0), sources in [0, n_src) and destinations in [0, n_dst), else
 * BURROW_E_RANGE naming the file and the edge. *count gets E. Progress: phase "edges". */
int bw_edges_npy_to(const bw_src *src, int64_t n_src, int64_t n_dst, bw_edge_sink sink, void *ctx, int64_t *count,
		    burrow_progress_fn fn, void *user, bw_edge_tally *tally);
/* Edges from an integer .npy (2, E) or (E, 2) into b; ids outside [0, n) are
 * BURROW_E_RANGE naming the edge. *count gets E. Progress: phase "edges". b NULL: only
 * read and tally them (as bw_csv_edges). */
int bw_edges_npy(burrow_csr_builder *b, const bw_src *src, int64_t n, int64_t *count, burrow_progress_fn fn,
		 void *user, bw_edge_tally *tally);
/* Features from a .npy [n, D] of floats (f16, f32, f64) or integers (i8, u8, i16, i32, i64, bool)
 * into w's features.npy of type out (INVALID: f16 stays f16, the rest becomes f32); a conversion
 * is said in one line (bw_log INFO). Progress: phase "features". */
int bw_features_npy(burrow_writer *w, const bw_src *src, int64_t n, burrow_dtype out, burrow_progress_fn fn,
		    void *user);
/* Features [n, D] gathered from the .npy at path (mmap'ed): node i gets row row[i] (zeros for -1);
 * a row past the file's is BURROW_E_RANGE naming the file, node and `why` ("id 1103985"). */
int bw_features_npy_keyed(burrow_writer *w, const char *path, int64_t n, const int64_t *row, const char *why,
			  burrow_dtype out, burrow_progress_fn fn, void *user);
/* Labels from a .npy [n] or [n, 1]: integers (-1 = none) or floats (NaN = none) into
 * *y ([n], bw_free it). Anything else than a class id >= 0 or "none" is refused. */
int bw_labels_npy(const bw_src *src, int64_t n, int32_t **y);
/* Append float32 rows to w's features, converted to t (F16 converts in place). */
int bw_put_rows(burrow_writer *w, float *rows, int64_t nrows, int64_t dim, burrow_dtype t);

/* "[2708, 1433]": an array's shape, for messages. */
const char *bw_shape_str(char *buf, size_t cap, int ndim, const int64_t *shape);

/* ---------------------------------------------------------------- id maps (idmap.c) */

/* import --relabel: node ids (integers, or any text) numbered 0..N-1 in the order they are
 * first added. Integer keys stay integers (orig_ids.npy int64) until a key that is not an
 * integer as %lld writes it comes; then every key is text (orig_ids.txt). */
typedef struct bw_idmap bw_idmap;
/* A map that refuses to grow past limit bytes (BURROW_E_NOMEM saying so). */
int bw_idmap_open(bw_idmap **out, size_t limit);
void bw_idmap_close(bw_idmap *m);
/* The id of key (added when absent and add; else *id = -1). */
int bw_idmap_num(bw_idmap *m, int64_t key, bool add, int64_t *id);
int bw_idmap_text(bw_idmap *m, const char *s, size_t len, bool add, int64_t *id);
int64_t bw_idmap_count(const bw_idmap *m);
bool bw_idmap_strings(const bw_idmap *m);
/* The key of id: its integer (-1 once keys are text), or its text (NULL while integers). */
int64_t bw_idmap_num_at(const bw_idmap *m, int64_t id);
const char *bw_idmap_text_at(const bw_idmap *m, int64_t id);
/* orig_ids.npy (int64 [N]) or orig_ids.txt (one key a line) into w, and meta.json's "orig_ids". */
int bw_idmap_put(const bw_idmap *m, burrow_writer *w);

/* ---------------------------------------------------------------- keyed inputs (relabel.c) */

/* Edges whose ids are keys of map: b NULL: a first pass that adds every key to map; else each
 * edge's mapped ids go to b (the keys must be in map). tally (required): max_id is the map's
 * count - 1; self-loops; seen marked in the pass with b. *count: edges read. */
int bw_relabel_text_edges(bw_csv *c, bw_idmap *map, burrow_csr_builder *b, int64_t *count, burrow_progress_fn fn,
			  void *user, bw_edge_tally *tally);
int bw_relabel_npy_edges(const bw_src *src, bw_idmap *map, burrow_csr_builder *b, int64_t *count,
			 burrow_progress_fn fn, void *user, bw_edge_tally *tally);

/* A LINQS-style node file read whole: "id f_1 ... f_D label" a line (blanks, tabs or commas; .gz;
 * '#' comments). Labels: integers as class ids (-1 none), or names numbered in sorted order. */
typedef struct bw_content {
	int64_t n, dim;            /* nodes (lines), features per node (D >= 0) */
	int64_t *ids;              /* [n] with a map: the map's id of the line; else the line's integer id */
	float *feat;               /* [n, dim] */
	int32_t *label;            /* [n] class ids, -1 none */
	int32_t num_classes;
	char **class_names;        /* [num_classes] sorted, or NULL when the labels were integers */
} bw_content;
/* Read path into ct (bw_content_free it); with map each line's id is added to map and must be
 * new; the features and labels may take at most mem bytes. */
int bw_content_load(const char *path, bw_idmap *map, size_t mem, bw_content *ct);
void bw_content_free(bw_content *ct);
/* row[v] ([n], bw_free it): node v's line index in ct, -1 when none (two lines for one node:
 * BURROW_E_FORMAT). relabel: line i is node i. */
int bw_content_rows(const bw_content *ct, const char *path, bool relabel, int64_t n, int64_t **row);

/* ---------------------------------------------------------------- typed graphs (hetero.c) */

/* The kinds of input files: OGB's gzipped comma-separated text without a header, a user's
 * text (commas, tabs or blanks; gzip detected; '#' comments; a header line detected), .npy. */
enum { BW_IN_NONE = 0, BW_IN_CSV, BW_IN_TEXT, BW_IN_NPY };

typedef struct bw_htype {
	char name[BURROW_MAX_NAME];
	int64_t n;             /* nodes */
	int feat_kind;         /* BW_IN_NONE (no features), BW_IN_CSV or BW_IN_NPY */
	bw_member feat;
} bw_htype;

typedef struct bw_hrel {
	int src, dst;          /* type indices */
	char name[BURROW_MAX_NAME];
	int kind;              /* BW_IN_CSV, BW_IN_TEXT or BW_IN_NPY */
	bw_member edges;       /* one edge "src dst" a line or row: src-type id, dst-type id */
	int64_t listed;        /* the edge count a num-edge-list states, -1 when none */
	int64_t read;          /* out: edges read */
} bw_hrel;

/* A typed graph to write from files: types, relations, and what to add. Big (bw_malloc it). */
typedef struct bw_hplan {
	int num_types, num_relations;
	bw_htype type[BURROW_MAX_TYPES];
	bw_hrel rel[BURROW_MAX_RELATIONS];
	int target;                  /* the labelled type, -1 when none */
	burrow_dtype feat_dtype;     /* F32, F16, or INVALID: float16 .npy input stays f16, the rest f32 */
	bool add_reverse;            /* burrow_prep_opts.add_reverse */
	int fill;                    /* enum burrow_feat_fill */
	size_t mem;                  /* memory for one relation's edges before they spill */
	const char *spill;           /* spill folder */
	burrow_progress_fn progress; /* may be NULL */
	void *progress_user;
} bw_hplan;

/* Names, counts and the relations' types of p checked before anything is written; messages
 * name the relation's file. */
int bw_hplan_check(const bw_hplan *p);
/* Write p's types, target, relations (with their reverses under add_reverse), features
 * (filled under BURROW_FEAT_FILL_MEAN) into w. Labels and splits are the caller's. */
int bw_hetero_put(burrow_writer *w, bw_hplan *p);
/* meta.json's "typed" part of a source object: add_reverse, fill, edges per relation. */
struct cJSON;
void bw_hplan_json(const bw_hplan *p, struct cJSON *j);

/* ---------------------------------------------------------------- --fill mean (fill.c) */

/* Fill every featureless type of the typed dataset at dir that a relation joins to a featured
 * (or already filled) type: row v gets the mean of its neighbors' rows over those relations
 * (each edge once; a relation and its "rev_" twin count once), accumulated in float32, zeros for
 * a node without such neighbors; written as float16 features/<type>.npy, then meta.json is
 * rewritten atomically (feat_dim, feat_dtype, "fill": "mean"). Rounds in dependency order
 * (authors from papers, then institutions from authors). Streamed: the filled rows in chunks,
 * the featured rows read in ascending order, a relation stored the other way transposed with
 * the CSR builder (spilling beside the dataset); mem_bytes (0: half the memory) bounds them,
 * and the bytes written do not depend on it. Progress: phase "fill", rows of the type. */
int bw_typed_fill_mean(const char *dir, size_t mem_bytes, burrow_progress_fn fn, void *user);

/* ---------------------------------------------------------------- in-place layouts (lsc.c) */

/* burrow prep's layout "mag240m" or "igbh": source's processed/ tree into the typed dataset out,
 * the feature files named in place (nothing copied), then o->fill (bw_typed_fill_mean). */
int bw_prep_layout(const char *layout, const char *source, const burrow_prep_opts *o, const char *out,
		   const char *spill, size_t mem);

/* ---------------------------------------------------------------- edge splits (link.c) */

/* The kinds of fixed negatives of meta.json's "edge_split": none, node pairs [M, 2] per
 * split (ogbl-collab, ppa, ddi), or K destinations per positive [E, K] (ogbl-citation2). */
enum { BW_NEG_NONE = 0, BW_NEG_PAIRS, BW_NEG_PER_SOURCE };

/* An edge split to write (index 0 train, 1 valid, 2 test; arrays borrowed). */
typedef struct bw_link_split {
	const char *name;           /* for messages */
	int64_t num_nodes;          /* every id in [0, num_nodes) */
	int64_t n_pos[3];
	const int64_t *pos[3];      /* [n_pos, 2] (src, dst) */
	int neg;                    /* BW_NEG_* */
	int64_t num_neg;            /* K of per_source */
	int64_t n_neg[3];           /* rows of negs (valid, test) */
	const int64_t *negs[3];     /* pairs [n_neg, 2] or per_source [n_pos, K] */
	const float *weight[3];     /* [n_pos] each, or NULL (all three or none) */
	const int32_t *year[3];     /* [n_pos] each, or NULL (all three or none) */
	bool directed;
	const char *metric;         /* OGB's eval metric ("hits@50", "mrr"), or NULL */
} bw_link_split;

/* Check e's ids and write its files and meta.json's "edge_split" into w (before commit). */
int bw_link_split_put(burrow_writer *w, const bw_link_split *e);

/* A random edge split of a whole graph (import --edge-split). */
typedef struct bw_link_draw {
	const char *name;           /* for messages */
	const burrow_csr *graph;    /* every edge, sorted rows, no duplicates; borrowed */
	bool symmetric;             /* graph holds both directions: an edge is (u, v), u < v */
	double frac[3];             /* train, valid, test fractions of the edges (sum in (0, 1]) */
	uint64_t seed;
	size_t mem_bytes;           /* budget of the training graph's build */
	const char *spill_dir;
	int64_t sizes[3];           /* out: edges in train, valid, test */
	int64_t per_source;         /* 0: "pairs" negatives; K > 0: K uniform destinations per positive */
} bw_link_draw;

/* Shuffle the graph's edges with the seed, cut them into train / valid / test by frac, write
 * the training edges as w's graph (symmetrized when the graph is), and the split with as
 * many uniformly drawn non-edge pairs as positives for valid and for test ("pairs", metric
 * hits@50), or with per_source uniform destinations (any node, as OGB's citation2 draws
 * them) for each of their positives ("per_source", metric mrr). The same seed gives the
 * same split. */
int bw_link_split_random(burrow_writer *w, bw_link_draw *in);

/* ---------------------------------------------------------------- generators' draws (gen.c, gen_typed.c) */

/* A keyed bijection of [0, n) (a 4-round Feistel network walked until it falls inside): node
 * ids are ranks scrambled by it, in O(1) memory at any size. */
typedef struct bw_feistel {
	uint64_t key, n, mask;
	int half;
} bw_feistel;
void bw_feistel_init(bw_feistel *f, uint64_t key, uint64_t n);
uint64_t bw_feistel_fwd(const bw_feistel *f, uint64_t x);
uint64_t bw_feistel_inv(const bw_feistel *f, uint64_t x);
/* A rank in [0, n) of density proportional to rank^(-1/2) (Chung-Lu weights: a power-law
 * degree tail of exponent 3). */
int64_t bw_plaw_rank(bw_rng *r, int64_t n);
/* Type `type`'s features [n, o->feat_dim] of o->feat_dtype into w: x_v = mu[y_v] + N(0, I), the
 * class means of norm about `signal` from mean_key, the noise of node v from (key, v). */
int bw_gen_type_features(const burrow_gen_opts *o, burrow_writer *w, int type, const int32_t *y, int64_t n,
			 double signal, uint64_t mean_key, uint64_t key);
/* The typed twins (gen_typed.c): defaults of BURROW_GEN_MAG and BURROW_GEN_IGBH over
 * burrow_gen_defaults' own, and the generator itself (o already merged with the defaults). */
void bw_gen_typed_defaults(burrow_gen_opts *o);
int bw_gen_typed(const burrow_gen_opts *o, const char *dir);

#endif /* BURROW_DSIO_H */
