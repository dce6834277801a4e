/* link_util.h: link datasets for the tests, written in the edge-split layout directly
 * (docs/format.md): a node dataset's undirected edges split at random into train / valid /
 * test, the graph rebuilt from the training edges, fixed negatives drawn for valid and test.
 * Include after criterion and util.h (needs the internal npy writer). */
#ifndef BURROW_TEST_LINK_UTIL_H
#define BURROW_TEST_LINK_UTIL_H

#include "../core/internal.h"
#include "../graph/npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct tu_link_cfg {
	double frac[3];     /* train, valid, test shares of the undirected edges */
	uint64_t seed;
	const char *neg;    /* "none", "pairs" or "per_source" */
	int64_t num_neg;    /* pairs: negatives per split = num_neg x positives; per_source: K */
	const char *metric; /* NULL: the default */
} tu_link_cfg;

static inline uint64_t tu_link_rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static inline void tu_link_save(const char *dir, const char *rel, burrow_dtype t, int ndim, const int64_t *shape,
				const void *data)
{
	char *p = tu_path(dir, "%s", rel);
	cr_assert_eq(bw_npy_save(p, t, ndim, shape, data, 64), 0, "%s", burrow_last_error());
	free(p);
}

/* out: src's graph's undirected edges (u < v, symmetric source) split as cfg says; src's
 * features linked; no labels, no node splits. */
static inline void tu_link_dataset(const char *src, const char *out, const tu_link_cfg *cfg)
{
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, src), 0, "%s", burrow_last_error());
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	const burrow_csr *g = burrow_dataset_graph(ds);
	const int64_t n = in->num_nodes;
	int64_t m = 0, *e = malloc((size_t)g->num_edges * 2 * sizeof *e + 16);
	for (int64_t u = 0; u < n; u++)
		for (int64_t j = g->indptr[u]; j < g->indptr[u + 1]; j++) {
			int64_t v = burrow_csr_index(g, j);
			if (u < v) {
				e[2 * m] = u;
				e[2 * m + 1] = v;
				m++;
			}
		}
	uint64_t s = cfg->seed;
	for (int64_t i = m - 1; i > 0; i--) {
		int64_t k = (int64_t)(tu_link_rng(&s) % (uint64_t)(i + 1)), a = e[2 * i], b = e[2 * i + 1];
		e[2 * i] = e[2 * k];
		e[2 * i + 1] = e[2 * k + 1];
		e[2 * k] = a;
		e[2 * k + 1] = b;
	}
	int64_t cnt[3];
	cnt[1] = (int64_t)(cfg->frac[1] * (double)m);
	cnt[2] = (int64_t)(cfg->frac[2] * (double)m);
	cnt[0] = m - cnt[1] - cnt[2];
	/* the training graph, both ways */
	int64_t *deg = calloc((size_t)n + 1, sizeof *deg), *ip = calloc((size_t)n + 1, sizeof *ip);
	for (int64_t i = 0; i < cnt[0]; i++) {
		deg[e[2 * i]]++;
		deg[e[2 * i + 1]]++;
	}
	for (int64_t v = 0; v < n; v++)
		ip[v + 1] = ip[v] + deg[v];
	int32_t *ind = malloc((size_t)(ip[n] + 1) * sizeof *ind);
	memset(deg, 0, (size_t)n * sizeof *deg);
	for (int64_t i = 0; i < cnt[0]; i++) {
		int64_t u = e[2 * i], v = e[2 * i + 1];
		ind[ip[u] + deg[u]++] = (int32_t)v;
		ind[ip[v] + deg[v]++] = (int32_t)u;
	}
	for (int64_t v = 0; v < n; v++) /* rows sorted */
		for (int64_t a = ip[v] + 1; a < ip[v + 1]; a++)
			for (int64_t b = a; b > ip[v] && ind[b - 1] > ind[b]; b--) {
				int32_t t = ind[b];
				ind[b] = ind[b - 1];
				ind[b - 1] = t;
			}
	mkdir(out, 0755);
	char *es = tu_path(out, "edge_split");
	mkdir(es, 0755);
	free(es);
	int64_t sh[2] = {n + 1, 2};
	tu_link_save(out, "indptr.npy", BURROW_DTYPE_I64, 1, sh, ip);
	sh[0] = ip[n];
	tu_link_save(out, "indices.npy", BURROW_DTYPE_I32, 1, sh, ind);
	if (in->feat_dim) {
		char *f = tu_path(out, "features.npy");
		cr_assert_eq(symlink(burrow_dataset_features_path(ds), f), 0);
		free(f);
	}
	const bool pairs = !strcmp(cfg->neg, "pairs"), per = !strcmp(cfg->neg, "per_source");
	int64_t nneg[3] = {0, 0, 0}, off = 0;
	for (int sp = 0; sp < 3; sp++) {
		char rel[64];
		static const char *names[3] = {"train", "valid", "test"};
		snprintf(rel, sizeof rel, "edge_split/%s_pos.npy", names[sp]);
		sh[0] = cnt[sp];
		sh[1] = 2;
		tu_link_save(out, rel, BURROW_DTYPE_I64, 2, sh, e + 2 * off);
		if (sp > 0 && (pairs || per)) {
			const int64_t rows = pairs ? cnt[sp] * cfg->num_neg : cnt[sp], w = pairs ? 2 : cfg->num_neg;
			int64_t *ng = malloc((size_t)(rows * w + 1) * sizeof *ng);
			for (int64_t i = 0; i < rows * w; i++)
				ng[i] = (int64_t)(tu_link_rng(&s) % (uint64_t)n);
			snprintf(rel, sizeof rel, "edge_split/%s_neg%s.npy", names[sp], pairs ? "" : "_dst");
			sh[0] = rows;
			sh[1] = w;
			tu_link_save(out, rel, BURROW_DTYPE_I64, 2, sh, ng);
			free(ng);
			nneg[sp] = rows;
		}
		off += cnt[sp];
	}
	char *meta = tu_path(out, "meta.json");
	FILE *f = fopen(meta, "w");
	fprintf(f,
		"{\"format\": \"burrow-dataset\", \"version\": 1, \"name\": \"%s-link\", \"num_nodes\": %lld, "
		"\"num_edges\": %lld, \"feat_dim\": %lld, \"feat_dtype\": \"float32\", \"num_classes\": 0, "
		"\"symmetric\": true, \"edge_split\": {\"train\": %lld, \"valid\": %lld, \"test\": %lld, \"neg\": \"%s\", "
		"\"num_neg\": %lld, \"valid_neg\": %lld, \"test_neg\": %lld, \"weight\": false, \"year\": false, "
		"\"directed\": false%s%s%s}}\n",
		in->name, (long long)n, (long long)ip[n], (long long)in->feat_dim, (long long)cnt[0], (long long)cnt[1],
		(long long)cnt[2], cfg->neg, (long long)(per ? cfg->num_neg : 0), (long long)nneg[1], (long long)nneg[2],
		cfg->metric ? ", \"metric\": \"" : "", cfg->metric ? cfg->metric : "", cfg->metric ? "\"" : "");
	fclose(f);
	free(meta);
	free(e);
	free(deg);
	free(ip);
	free(ind);
	burrow_dataset_close(ds);
}

#endif
