/* idmap.c: import --relabel's map from a user's node ids (integers or strings) to 0..N-1 in
 * first-seen order, and its orig_ids.npy / orig_ids.txt. */
#include "../graph/dataset_internal.h"
#include "dsio.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>

struct bw_idmap {
	int64_t n, cap;      /* ids given, room in num / off */
	int64_t *num;        /* [n] the integer key of each id (integer mode) */
	int64_t *off;        /* [n] where each id's text starts in text (string mode) */
	char *text;          /* string mode: the keys, each ended by '\0' */
	size_t text_len, text_cap;
	int64_t *slot;       /* [mask + 1] id + 1, 0 when empty (open addressing, linear probing) */
	uint64_t mask;
	bool strings;        /* some key was not an integer: every key is text */
	size_t limit;        /* bytes the map may hold */
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

static uint64_t hash_text(const char *s, size_t len)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * UINT64_C(0x100000001b3);
	return mix64(h);
}

static size_t map_bytes(const bw_idmap *m)
{
	return (size_t)(m->mask + 1) * sizeof *m->slot + (size_t)m->cap * 2 * sizeof(int64_t) + m->text_cap;
}

static int over_limit(const bw_idmap *m)
{
	return bw_err(BURROW_E_NOMEM, "import --relabel: the map of %lld ids needs more than %zu bytes (--mem); raise "
		      "--mem", (long long)m->n, m->limit);
}

int bw_idmap_open(bw_idmap **out, size_t limit)
{
	*out = NULL;
	bw_idmap *m = bw_calloc(1, sizeof *m);
	if (!m)
		return BURROW_E_NOMEM;
	m->mask = 1023;
	m->limit = limit;
	if (!(m->slot = bw_calloc(m->mask + 1, sizeof *m->slot))) {
		bw_free(m);
		return BURROW_E_NOMEM;
	}
	*out = m;
	return 0;
}

void bw_idmap_close(bw_idmap *m)
{
	if (!m)
		return;
	bw_free(m->num);
	bw_free(m->off);
	bw_free(m->text);
	bw_free(m->slot);
	bw_free(m);
}

int64_t bw_idmap_count(const bw_idmap *m) { return m->n; }
bool bw_idmap_strings(const bw_idmap *m) { return m->strings; }

static uint64_t key_hash(const bw_idmap *m, int64_t id)
{
	if (!m->strings)
		return mix64((uint64_t)m->num[id]);
	const char *s = m->text + m->off[id];
	return hash_text(s, strlen(s));
}

/* Twice the slots, every id placed again. */
static int rehash(bw_idmap *m, uint64_t slots)
{
	int64_t *t = bw_calloc(slots, sizeof *t);
	if (!t)
		return BURROW_E_NOMEM;
	bw_free(m->slot);
	m->slot = t;
	m->mask = slots - 1;
	for (int64_t id = 0; id < m->n; id++) {
		uint64_t h = key_hash(m, id) & m->mask;
		while (m->slot[h])
			h = (h + 1) & m->mask;
		m->slot[h] = id + 1;
	}
	return 0;
}

/* Room for one more id (and len bytes of text), within the limit. */
static int reserve(bw_idmap *m, size_t len)
{
	int st = 0;
	if ((uint64_t)(m->n + 1) * 2 > m->mask + 1 && (st = rehash(m, (m->mask + 1) * 2)))
		return st;
	if (m->n == m->cap) {
		size_t cap = (size_t)m->cap;
		if ((st = bw_grow(&m->num, &cap, (size_t)m->n + 1, sizeof *m->num, true)))
			return st;
		int64_t *off = bw_realloc(m->off, cap * sizeof *m->off);
		if (!off)
			return BURROW_E_NOMEM;
		m->off = off;
		m->cap = (int64_t)cap;
	}
	if (m->strings && (st = bw_grow(&m->text, &m->text_cap, m->text_len + len + 1, 1, true)))
		return st;
	return map_bytes(m) > m->limit ? over_limit(m) : 0;
}

/* Every integer key becomes its decimal text (the first key that is not an integer came). */
static int to_strings(bw_idmap *m)
{
	char buf[32];
	m->strings = true;
	for (int64_t id = 0; id < m->n; id++) {
		int k = snprintf(buf, sizeof buf, "%lld", (long long)m->num[id]);
		int st = bw_grow(&m->text, &m->text_cap, m->text_len + (size_t)k + 1, 1, true);
		if (st)
			return st;
		memcpy(m->text + m->text_len, buf, (size_t)k + 1);
		m->off[id] = (int64_t)m->text_len;
		m->text_len += (size_t)k + 1;
	}
	if (map_bytes(m) > m->limit)
		return over_limit(m);
	return rehash(m, m->mask + 1);
}

/* Is [s, s + len) an integer written as %lld writes it (so that its text and value are one key)? */
static bool canonical_int(const char *s, size_t len, int64_t *v)
{
	const char *next = NULL;
	if (len == 0 || len > 20 || bw_parse_i64(s, s + len, v, &next) || next != s + len || *s == '+')
		return false;
	const char *d = *s == '-' ? s + 1 : s;
	return !(d[0] == '0' && (len > (size_t)(d - s) + 1 || *s == '-'));
}

int bw_idmap_num(bw_idmap *m, int64_t key, bool add, int64_t *id)
{
	if (m->strings) {
		char buf[32];
		int k = snprintf(buf, sizeof buf, "%lld", (long long)key);
		return bw_idmap_text(m, buf, (size_t)k, add, id);
	}
	uint64_t h = mix64((uint64_t)key) & m->mask;
	for (; m->slot[h]; h = (h + 1) & m->mask)
		if (m->num[m->slot[h] - 1] == key) {
			*id = m->slot[h] - 1;
			return 0;
		}
	*id = -1;
	if (!add)
		return 0;
	int st = reserve(m, 0);
	if (st)
		return st;
	h = mix64((uint64_t)key) & m->mask; /* the table may have grown */
	while (m->slot[h])
		h = (h + 1) & m->mask;
	m->num[m->n] = key;
	m->slot[h] = m->n + 1;
	*id = m->n++;
	return 0;
}

int bw_idmap_text(bw_idmap *m, const char *s, size_t len, bool add, int64_t *id)
{
	int64_t v;
	int st;
	if (!m->strings) {
		if (canonical_int(s, len, &v))
			return bw_idmap_num(m, v, add, id);
		*id = -1;
		if (!add)
			return 0;
		if ((st = to_strings(m)))
			return st;
	}
	const uint64_t hv = hash_text(s, len);
	uint64_t h = hv & m->mask;
	for (; m->slot[h]; h = (h + 1) & m->mask) {
		const char *t = m->text + m->off[m->slot[h] - 1];
		if (!strncmp(t, s, len) && t[len] == '\0') {
			*id = m->slot[h] - 1;
			return 0;
		}
	}
	*id = -1;
	if (!add)
		return 0;
	if ((st = reserve(m, len)))
		return st;
	h = hv & m->mask;
	while (m->slot[h])
		h = (h + 1) & m->mask;
	memcpy(m->text + m->text_len, s, len);
	m->text[m->text_len + len] = '\0';
	m->off[m->n] = (int64_t)m->text_len;
	m->num[m->n] = -1;
	m->text_len += len + 1;
	m->slot[h] = m->n + 1;
	*id = m->n++;
	return 0;
}

int64_t bw_idmap_num_at(const bw_idmap *m, int64_t id) { return m->strings ? -1 : m->num[id]; }
const char *bw_idmap_text_at(const bw_idmap *m, int64_t id) { return m->strings ? m->text + m->off[id] : NULL; }

/* orig_ids.txt: one id a line, row i the original id of node i. */
static int put_text(const bw_idmap *m, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return bw_err_errno(errno, path, "create");
	for (int64_t id = 0; id < m->n; id++)
		if (fputs(m->text + m->off[id], f) < 0 || fputc('\n', f) < 0)
			break;
	const bool bad = ferror(f) != 0;
	if (fclose(f) != 0 || bad)
		return bw_err_errno(errno ? errno : EIO, path, "write");
	return 0;
}

int bw_idmap_put(const bw_idmap *m, burrow_writer *w)
{
	const char *rel = m->strings ? "orig_ids.txt" : "orig_ids.npy";
	char *path = NULL;
	int st = bw_writer_file(w, rel, &path);
	if (st)
		return st;
	const int64_t shape[1] = {m->n};
	st = m->strings ? put_text(m, path) : bw_npy_save(path, BURROW_DTYPE_I64, 1, shape, m->num, BW_NPY_ALIGN);
	bw_free(path);
	if (st)
		return bw_writer_rebase(w, st);
	cJSON *j = cJSON_CreateString(rel);
	return j ? bw_writer_meta_add(w, "orig_ids", j) : BURROW_E_NOMEM;
}
