/* csv.c: lines of numbers out of a stream (OGB's csv.gz files, users' edge lists), and
 * .npy arrays streamed out of .npz members. Every message names the source and line. */
#define _GNU_SOURCE
#include "dsio.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

int bw_parse_f32_slow(const char *s, const char *end, float *v, const char **next)
{
	char buf[128];
	size_t n = 0;
	/* the token: up to a separator or line end */
	while (s + n < end && n < sizeof buf - 1 && !strchr(",\t \r\n", s[n]))
		n++;
	if (n == 0 || n == sizeof buf - 1)
		return 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	char *e;
	errno = 0;
	float f = strtof(buf, &e);
	if (e == buf)
		return 1;
	*v = f;
	*next = s + (e - buf);
	return 0;
}

int bw_csv_err(const bw_csv *c, int status, const char *fmt, ...)
{
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return bw_err(status, "%s:%lld: %s", bw_rd_name(c->rd), (long long)c->lineno, what);
}

int bw_csv_open(bw_csv *c, const bw_src *src, bool gunzip, char sep, bool comments)
{
	memset(c, 0, sizeof *c);
	c->sep = sep;
	c->comments = comments;
	return bw_rd_open(&c->rd, src, gunzip, true);
}

void bw_csv_close(bw_csv *c)
{
	bw_rd_close(c->rd);
	c->rd = NULL;
}

int bw_csv_next_line(bw_csv *c, bool *more)
{
	*more = false;
	for (;;) {
		if (c->p == c->end) {
			size_t n;
			int st = bw_rd_next(c->rd, &c->p, &n);
			if (st)
				return st;
			if (n == 0) { /* the end: p and end both NULL, so a call after it ends again */
				c->end = c->p;
				return 0;
			}
			c->end = c->p + n;
		}
		/* blocks end at line ends, so a line never straddles two */
		c->lineno++;
		c->line = c->p;
		const char *q = c->p;
		while (*q == ' ' || *q == '\t' || *q == '\r')
			q++;
		if (*q == '\n' || (c->comments && *q == '#')) {
			const char *nl = memchr(q, '\n', (size_t)(c->end - q));
			c->p = nl ? nl + 1 : c->end;
			continue;
		}
		*more = true;
		return 0;
	}
}

static inline bool is_blank(char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; }

/* Split the current line into fields: start and length of field i (strict mode splits at
 * each separator and trims blanks; loose mode splits at runs of blanks and commas). */
static int64_t fields(const bw_csv *c, const char **start, size_t *len, int64_t cap)
{
	const char *p = c->line, *nl = memchr(p, '\n', (size_t)(c->end - p));
	int64_t k = 0;
	if (c->sep) {
		for (const char *f = p;;) {
			const char *e = f;
			while (e < nl && *e != c->sep)
				e++;
			const char *a = f, *b = e;
			while (a < b && is_blank(*a))
				a++;
			while (b > a && is_blank(b[-1]))
				b--;
			if (k < cap) {
				start[k] = a;
				len[k] = (size_t)(b - a);
			}
			k++;
			if (e == nl)
				return k;
			f = e + 1;
		}
	}
	for (const char *q = p; q < nl;) {
		while (q < nl && (is_blank(*q) || *q == ','))
			q++;
		if (q == nl)
			break;
		const char *a = q;
		while (q < nl && !is_blank(*q) && *q != ',')
			q++;
		if (k < cap) {
			start[k] = a;
			len[k] = (size_t)(q - a);
		}
		k++;
	}
	return k;
}

int64_t bw_csv_count_fields(const bw_csv *c) { return fields(c, NULL, NULL, 0); }

/* The slow path after a line failed to parse: say whether the column count is wrong or
 * which field is not a number. */
static int diagnose(bw_csv *c, int64_t k, bool integer)
{
	int64_t n = fields(c, NULL, NULL, 0);
	if (n != k)
		return bw_csv_err(c, BURROW_E_FORMAT, "expected %lld column%s, found %lld", (long long)k, k == 1 ? "" : "s",
				  (long long)n);
	const char **start = bw_malloc((size_t)n * sizeof *start);
	size_t *len = bw_malloc((size_t)n * sizeof *len);
	int st = 0;
	if (!start || !len) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	fields(c, start, len, n);
	for (int64_t j = 0; j < n && !st; j++) {
		const char *e = start[j] + len[j], *next = NULL;
		int64_t iv;
		float fv;
		int r = integer ? bw_parse_i64(start[j], e, &iv, &next) : bw_parse_f32(start[j], e, &fv, &next);
		if (r == 2)
			st = bw_csv_err(c, BURROW_E_RANGE, "column %lld: %.*s does not fit in 64 bits", (long long)j + 1,
					(int)BW_MIN(len[j], 40), start[j]);
		else if (r || next != e || len[j] == 0)
			st = bw_csv_err(c, BURROW_E_FORMAT, "column %lld: '%.*s' is not %s", (long long)j + 1,
					(int)BW_MIN(len[j], 40), start[j], integer ? "an integer" : "a number");
	}
	if (!st)
		st = bw_csv_err(c, BURROW_E_FORMAT, "malformed line");
out:
	bw_free(start);
	bw_free(len);
	return st;
}

/* After a field: step over the separator to the next field (false when there is none). */
static inline bool next_field(const bw_csv *c, const char **pp)
{
	const char *p = *pp;
	if (c->sep) {
		while (*p == ' ')
			p++;
		if (*p != c->sep)
			return false;
		p++;
		while (*p == ' ')
			p++;
		*pp = p;
		return true;
	}
	const char *s = p;
	while (is_blank(*p) || *p == ',')
		p++;
	*pp = p;
	return p != s && *p != '\n';
}

/* After the last field: only blanks may remain before the line end. */
static inline bool line_end(const char **pp)
{
	const char *p = *pp;
	while (is_blank(*p))
		p++;
	if (*p != '\n')
		return false;
	*pp = p + 1;
	return true;
}

int bw_csv_ints(bw_csv *c, int64_t *v, int64_t k)
{
	const char *p = c->p;
	while (is_blank(*p))
		p++;
	for (int64_t j = 0; j < k; j++)
		if ((j > 0 && !next_field(c, &p)) || bw_parse_i64(p, c->end, &v[j], &p))
			return diagnose(c, k, true);
	if (!line_end(&p))
		return diagnose(c, k, true);
	c->p = p;
	return 0;
}

int bw_csv_floats(bw_csv *c, float *v, int64_t k)
{
	const char *p = c->p;
	while (is_blank(*p))
		p++;
	for (int64_t j = 0; j < k; j++)
		if ((j > 0 && !next_field(c, &p)) || bw_parse_f32(p, c->end, &v[j], &p))
			return diagnose(c, k, false);
	if (!line_end(&p))
		return diagnose(c, k, false);
	c->p = p;
	return 0;
}

int bw_csv_label(bw_csv *c, int64_t *v)
{
	const char *p = c->p;
	while (is_blank(*p))
		p++;
	if (!strncasecmp(p, "nan", 3)) {
		const char *q = p + 3;
		if (line_end(&q)) {
			*v = -1;
			c->p = q;
			return 0;
		}
	}
	return bw_csv_ints(c, v, 1);
}

int bw_csv_words(bw_csv *c, char *words, size_t cap, int64_t k)
{
	const char *start[BURROW_MAX_TYPES];
	size_t len[BURROW_MAX_TYPES];
	if (k > BURROW_MAX_TYPES)
		return bw_csv_err(c, BURROW_E_INVAL, "more than %d words asked of a line", BURROW_MAX_TYPES);
	const int64_t n = fields(c, start, len, k);
	if (n != k)
		return bw_csv_err(c, BURROW_E_FORMAT, "expected %lld column%s, found %lld", (long long)k, k == 1 ? "" : "s",
				  (long long)n);
	for (int64_t i = 0; i < k; i++) {
		bool ok = len[i] > 0 && len[i] < cap;
		for (size_t j = 0; ok && j < len[i]; j++) {
			const char ch = start[i][j];
			ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' ||
			     ch == '-';
		}
		if (!ok)
			return bw_csv_err(c, BURROW_E_FORMAT, "column %lld: '%.*s' is not a name (1 to %zu of A-Z a-z 0-9 _ -)",
					  (long long)i + 1, (int)BW_MIN(len[i], 40), start[i], cap - 1);
		memcpy(words + (size_t)i * cap, start[i], len[i]);
		words[(size_t)i * cap + len[i]] = '\0';
	}
	const char *nl = memchr(c->line, '\n', (size_t)(c->end - c->line));
	c->p = nl + 1;
	return 0;
}

/* ---------------------------------------------------------------- npy members */

/* Exactly n bytes of the stream into dst (NULL: skip them). */
static int take(bw_npys *s, char *dst, size_t n)
{
	while (n > 0) {
		if (s->p == s->end) {
			size_t got;
			int st = bw_rd_next(s->rd, &s->p, &got);
			if (st)
				return st;
			if (got == 0)
				return bw_err(BURROW_E_FORMAT, "%s: truncated: the array ends %zu bytes early", s->name, n);
			s->end = s->p + got;
		}
		size_t m = BW_MIN(n, (size_t)(s->end - s->p));
		if (dst) {
			memcpy(dst, s->p, m);
			dst += m;
		}
		s->p += m;
		n -= m;
	}
	return 0;
}

int bw_npys_open(bw_npys *s, const bw_src *src)
{
	unsigned char pre[12];
	char *hdr = NULL;
	size_t need = 10;
	int st;

	memset(s, 0, sizeof *s);
	snprintf(s->name, sizeof s->name, "%s", src->name ? src->name : src->path);
	if ((st = bw_rd_open(&s->rd, src, false, false)))
		return st;
	if ((st = take(s, (char *)pre, 10)))
		goto fail;
	if (memcmp(pre, "\x93NUMPY", 6) != 0) {
		st = bw_err(BURROW_E_FORMAT, "%s: not a .npy array (bad magic)", s->name);
		goto fail;
	}
	if (pre[6] >= 2) {
		if ((st = take(s, (char *)pre + 10, 2)))
			goto fail;
		need = 12;
	}
	size_t hl = need == 10 ? (size_t)pre[8] | (size_t)pre[9] << 8
			       : (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
	if (hl > (1u << 20)) {
		st = bw_err(BURROW_E_FORMAT, "%s: .npy header of %zu bytes is implausible", s->name, hl);
		goto fail;
	}
	if (!(hdr = bw_malloc(need + hl))) {
		st = BURROW_E_NOMEM;
		goto fail;
	}
	memcpy(hdr, pre, need);
	if ((st = take(s, hdr + need, hl)) || (st = bw_npy_parse(hdr, need + hl, &s->h, s->name)))
		goto fail;
	s->left = (uint64_t)bw_npy_data_bytes(&s->h);
	uint64_t want = (uint64_t)s->h.data_offset + s->left, size = bw_rd_usize(s->rd);
	if (size != want) {
		st = bw_err(BURROW_E_FORMAT, "%s: %llu bytes, but its header's shape needs %llu", s->name,
			    (unsigned long long)size, (unsigned long long)want);
		goto fail;
	}
	bw_free(hdr);
	return 0;
fail:
	bw_free(hdr);
	bw_rd_close(s->rd);
	s->rd = NULL;
	return st;
}

int bw_npys_read(bw_npys *s, void *dst, size_t n)
{
	if (n > s->left)
		return bw_err(BURROW_E_INVAL, "%s: read past the array's end", s->name);
	s->left -= n;
	return take(s, dst, n);
}

void bw_npys_close(bw_npys *s)
{
	bw_rd_close(s->rd);
	s->rd = NULL;
}

#define CSV_EDGE_CHUNK ((size_t)1 << 16)

int bw_csv_header(bw_csv *c, bool force, bool *skipped)
{
	bool more;
	*skipped = false;
	int st = bw_csv_next_line(c, &more);
	if (st || !more)
		return st;
	const char *nl = memchr(c->line, '\n', (size_t)(c->end - c->line));
	bool letter = false;
	for (const char *q = c->line; q < nl && !letter; q++)
		letter = (*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || *q == '_';
	if (force || letter) {
		c->p = nl + 1;
		*skipped = true;
	} else { /* not a header: the next bw_csv_next_line finds this line again */
		c->p = c->line;
		c->lineno--;
	}
	return 0;
}

int bw_csv_edges(bw_csv *c, int64_t num_nodes, burrow_csr_builder *b, burrow_progress_fn progress, void *user,
		 int64_t *count, bw_edge_tally *tally)
{
	int64_t *s = bw_malloc(CSV_EDGE_CHUNK * sizeof *s), *d = bw_malloc(CSV_EDGE_CHUNK * sizeof *d), v[2], e = 0;
	size_t k = 0;
	bool more;
	int st = 0;
	if (!s || !d) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	while (!(st = bw_csv_next_line(c, &more)) && more) {
		if ((st = bw_csv_ints(c, v, 2)))
			goto out;
		for (int j = 0; j < 2; j++)
			if (v[j] < 0 || (b && v[j] >= num_nodes)) {
				st = b ? bw_csv_err(c, BURROW_E_RANGE, "node id %lld out of range [0, %lld)", (long long)v[j],
						    (long long)num_nodes)
				       : bw_csv_err(c, BURROW_E_RANGE, "node id %lld is negative", (long long)v[j]);
				goto out;
			}
		if (tally) {
			tally->max_id = BW_MAX(tally->max_id, BW_MAX(v[0], v[1]));
			tally->self_loops += v[0] == v[1];
			if (tally->seen)
				for (int j = 0; j < 2; j++)
					tally->seen[v[j] >> 6] |= UINT64_C(1) << (v[j] & 63);
		}
		s[k] = v[0];
		d[k] = v[1];
		e++;
		if (++k == CSV_EDGE_CHUNK) {
			if (b && (st = burrow_csr_builder_add(b, s, d, k)))
				goto out;
			k = 0;
			if (progress)
				progress(user, "edges", bw_rd_consumed(c->rd), bw_rd_size(c->rd));
		}
	}
	if (!st && k && b)
		st = burrow_csr_builder_add(b, s, d, k);
	if (!st && progress)
		progress(user, "edges", bw_rd_size(c->rd), bw_rd_size(c->rd));
	*count = e;
out:
	bw_free(s);
	bw_free(d);
	return st;
}

int bw_csv_tokens(bw_csv *c, const char **start, size_t *len, int64_t k, int64_t cap, int64_t *found)
{
	const int64_t n = fields(c, start, len, cap);
	if (found)
		*found = n;
	if ((k > 0 && n != k) || n == 0)
		return bw_csv_err(c, BURROW_E_FORMAT, "expected %lld column%s, found %lld", (long long)k, k == 1 ? "" : "s",
				  (long long)n);
	const char *nl = memchr(c->line, '\n', (size_t)(c->end - c->line));
	c->p = nl + 1;
	return 0;
}
