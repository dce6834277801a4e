/* test_gen_typed.c: burrow gen mag|igbh: the real datasets' shapes times a fraction, the same bytes
 * whatever the threads and the budget, power-law rows, the planted classes, a model that learns them. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "util.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TU_SCRATCH_SUITE(gen_typed, 300);

/* The real shapes as their publishers state them (OGB-LSC's MAG240MDataset; IGBH-full as
 * MLPerf's GNN benchmark counts it, IGB's labelled papers 60 / 20 / 20), written out here apart
 * from the generator's tables. */
typedef struct ref_rel {
	const char *src, *name, *dst;
	double edges;
} ref_rel;
static const char *const MAG_TYPES[] = {"paper", "author", "institution"};
static const double MAG_NODES[] = {121751666, 122383112, 25721};
static const ref_rel MAG_RELS[] = {{"author", "writes", "paper", 386022720},
				   {"author", "affiliated_with", "institution", 44592586},
				   {"paper", "cites", "paper", 1297748926}};
static const double MAG_SPLIT[] = {1112392, 138949, 88092}, MAG_CHALLENGE = 58726;
static const char *const IGBH_TYPES[] = {"paper", "author", "institute", "fos"};
static const double IGBH_NODES[] = {269346174, 277220883, 26918, 712960};
static const ref_rel IGBH_RELS[] = {{"paper", "cites", "paper", 3996442004.0},
				    {"paper", "written_by", "author", 716761549},
				    {"author", "affiliated_to", "institute", 48521486},
				    {"paper", "topic", "fos", 1050280600}};

static char *gen_twin(int kind, double f, int threads, size_t mem, uint64_t seed, int64_t dim, double h,
		      const char *name)
{
	burrow_gen_opts o;
	burrow_gen_defaults(&o, kind);
	o.fraction = f;
	o.threads = threads;
	o.mem_bytes = mem;
	o.seed = seed;
	o.spill_dir = tu_dir;
	o.homophily = h;
	if (dim)
		o.feat_dim = dim;
	char *p = tu_path(tu_dir, "%s", name);
	cr_assert_eq(burrow_gen(&o, p), 0, "%s", burrow_last_error());
	return p;
}

static int find_type(const burrow_hetero *h, const char *name)
{
	for (int t = 0; t < h->num_types; t++)
		if (!strcmp(h->type_names[t], name))
			return t;
	cr_assert_fail("no type %s", name);
	return -1;
}

static const burrow_relation *find_rel(const burrow_hetero *h, const char *src, const char *name, const char *dst)
{
	const int s = find_type(h, src), d = find_type(h, dst);
	for (int r = 0; r < h->num_relations; r++)
		if (h->rel[r].src_type == s && h->rel[r].dst_type == d && !strcmp(h->rel[r].name, name))
			return &h->rel[r];
	cr_assert_fail("no relation %s %s %s", src, name, dst);
	return NULL;
}

/* Every (src, dst) of g, as src * N_dst + dst, sorted. */
static int cmp_i64(const void *a, const void *b)
{
	const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}
static int64_t *pairs(const burrow_csr *g, bool swap, int64_t n_src)
{
	int64_t *p = malloc((size_t)g->num_edges * sizeof *p);
	for (int64_t v = 0, i = 0; v < g->num_nodes; v++)
		for (int64_t j = g->indptr[v]; j < g->indptr[v + 1]; j++, i++) {
			const int64_t u = burrow_csr_index(g, j);
			p[i] = swap ? v * n_src + u : u * g->num_nodes + v;
		}
	qsort(p, (size_t)g->num_edges, sizeof *p, cmp_i64);
	return p;
}

/* Relations as named, with round(F x real) edges each, rows strictly increasing (distinct
 * sources), and the reverse the same edges turned round. */
static void check_relations(const burrow_hetero *h, const ref_rel *rels, int nrel, double f)
{
	cr_assert_eq(h->num_relations, 2 * nrel);
	for (int r = 0; r < nrel; r++) {
		char rev[64];
		snprintf(rev, sizeof rev, "rev_%s", rels[r].name);
		const burrow_relation *a = find_rel(h, rels[r].src, rels[r].name, rels[r].dst),
				      *b = find_rel(h, rels[r].dst, rev, rels[r].src);
		const int64_t m = llround(rels[r].edges * f);
		cr_assert_eq(a->graph.num_edges, m, "%s: %lld edges, expected %lld", rels[r].name,
			     (long long)a->graph.num_edges, (long long)m);
		cr_assert_eq(b->graph.num_edges, m, "%s", rev);
		for (int64_t v = 0; v < a->graph.num_nodes; v++)
			for (int64_t j = a->graph.indptr[v] + 1; j < a->graph.indptr[v + 1]; j++)
				cr_assert(burrow_csr_index(&a->graph, j) > burrow_csr_index(&a->graph, j - 1),
					  "%s: row %lld repeats a source", rels[r].name, (long long)v);
		if (a->src_type == a->dst_type)
			for (int64_t v = 0; v < a->graph.num_nodes; v++)
				for (int64_t j = a->graph.indptr[v]; j < a->graph.indptr[v + 1]; j++)
					cr_assert_neq(burrow_csr_index(&a->graph, j), v, "%s: a loop on %lld",
						      rels[r].name, (long long)v);
		int64_t *pa = pairs(&a->graph, false, 0), *pb = pairs(&b->graph, true, a->graph.num_nodes);
		cr_assert(!memcmp(pa, pb, (size_t)m * sizeof *pa), "%s is not %s turned round", rev, rels[r].name);
		free(pa);
		free(pb);
	}
}

/* Splits of the scaled sizes, disjoint; labels a class on exactly `labelled` papers, the split
 * ones among them, -1 elsewhere. */
static void check_labels(burrow_dataset *ds, const double *split, double labelled, double f, int C)
{
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	const int64_t n = in->num_nodes;
	const int32_t *y = burrow_dataset_labels(ds);
	char *in_split = calloc((size_t)n, 1);
	for (int s = 0; s < 3; s++) {
		int64_t got;
		const int64_t *ids = burrow_dataset_split(ds, s, &got);
		cr_assert_eq(got, llround(split[s] * f), "split %d has %lld papers", s, (long long)got);
		for (int64_t i = 0; i < got; i++) {
			cr_assert_eq(in_split[ids[i]], 0, "paper %lld in two splits", (long long)ids[i]);
			in_split[ids[i]] = 1;
			cr_assert(y[ids[i]] >= 0 && y[ids[i]] < C);
		}
	}
	int64_t have = 0;
	for (int64_t v = 0; v < n; v++)
		have += y[v] >= 0;
	cr_assert_eq(have, (int64_t)labelled, "%lld labelled papers, expected %.0f", (long long)have, labelled);
	free(in_split);
}

Test(gen_typed, mag_has_the_shape_of_mag240m_times_f)
{
	const double f = 1.0 / 16384;
	char *p = gen_twin(BURROW_GEN_MAG, f, 0, 0, 0, 0, 0.6, "m");
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, p), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_dataset_verify(ds), 0, "%s", burrow_last_error());
	const burrow_hetero *h = burrow_dataset_hetero(ds);
	cr_assert_not_null(h);
	cr_assert_eq(h->num_types, 3);
	cr_assert_eq(h->target_type, find_type(h, "paper"));
	for (int t = 0; t < 3; t++) {
		burrow_type_info ti;
		const int k = find_type(h, MAG_TYPES[t]);
		cr_assert_eq(burrow_dataset_type_info(ds, k, &ti), 0);
		cr_assert_eq(ti.num_nodes, llround(MAG_NODES[t] * f), "%s", MAG_TYPES[t]);
		cr_assert_eq(ti.feat_dim, t == 0 ? 768 : 0, "%s", MAG_TYPES[t]);
		if (t == 0)
			cr_assert_eq(ti.feat_dtype, BURROW_DTYPE_F16);
	}
	check_relations(h, MAG_RELS, 3, f);
	cr_assert_eq(burrow_dataset_get_info(ds)->num_classes, 153);
	double labelled = (double)llround(MAG_CHALLENGE * f); /* labelled, in no split */
	for (int s = 0; s < 3; s++)
		labelled += (double)llround(MAG_SPLIT[s] * f);
	check_labels(ds, MAG_SPLIT, labelled, f, 153);
	burrow_dataset_close(ds);
	free(p);
}

Test(gen_typed, igbh_has_the_shape_of_igbh_full_times_f)
{
	burrow_gen_opts d;
	burrow_gen_defaults(&d, BURROW_GEN_IGBH);
	cr_assert_eq(d.feat_dim, 1024);
	cr_assert_eq(d.feat_dtype, BURROW_DTYPE_F32);
	cr_assert_eq(d.num_classes, 19);
	const double f = 1.0 / 16384;
	for (int twok = 0; twok < 2; twok++) {
		burrow_gen_opts o = d;
		o.fraction = f;
		o.feat_dim = 8; /* 1024 float32 on every type: 137 MB at this fraction */
		o.num_classes = twok ? 2983 : 19;
		char *p = tu_path(tu_dir, "i%d", twok);
		cr_assert_eq(burrow_gen(&o, p), 0, "%s", burrow_last_error());
		burrow_dataset *ds;
		cr_assert_eq(burrow_dataset_open(&ds, p), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_dataset_verify(ds), 0, "%s", burrow_last_error());
		const burrow_hetero *h = burrow_dataset_hetero(ds);
		cr_assert_eq(h->num_types, 4);
		for (int t = 0; t < 4; t++) {
			burrow_type_info ti;
			cr_assert_eq(burrow_dataset_type_info(ds, find_type(h, IGBH_TYPES[t]), &ti), 0);
			cr_assert_eq(ti.num_nodes, llround(IGBH_NODES[t] * f), "%s", IGBH_TYPES[t]);
			cr_assert(ti.feat_dim == 8 && ti.feat_dtype == BURROW_DTYPE_F32, "%s", IGBH_TYPES[t]);
		}
		check_relations(h, IGBH_RELS, 4, f);
		/* IGB: labelled L papers (227,130,858 of the 19 classes, 157,675,969 of the 2983),
		 * train int(0.6 L), valid int(0.2 L), test the rest */
		const double L = twok ? 157675969 : 227130858, tr = floor(0.6 * L), va = floor(0.2 * L);
		const double split[3] = {tr, va, L - tr - va};
		double labelled = 0;
		for (int s = 0; s < 3; s++)
			labelled += (double)llround(split[s] * f);
		cr_assert_eq(burrow_dataset_get_info(ds)->num_classes, o.num_classes);
		check_labels(ds, split, labelled, f, o.num_classes);
		burrow_dataset_close(ds);
		free(p);
	}
}

static bool same_file(const char *a, const char *b)
{
	size_t la, lb;
	char *x = tu_read(a, &la), *y = tu_read(b, &lb);
	bool same = x && y && la == lb && memcmp(x, y, la) == 0;
	free(x);
	free(y);
	return same;
}

/* Every file under a (relative path rel) the same in b; count gets the files, differ those
 * that are not the same in c. */
static void same_tree(const char *a, const char *b, const char *c, const char *rel, int *count, int *differ)
{
	char *da = tu_path(a, "%s", rel);
	DIR *dir = opendir(da);
	cr_assert_not_null(dir, "%s", da);
	for (struct dirent *e; (e = readdir(dir));) {
		if (e->d_name[0] == '.')
			continue;
		char sub[512];
		snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
		char *fa = tu_path(a, "%s", sub), *fb = tu_path(b, "%s", sub), *fc = tu_path(c, "%s", sub);
		if (e->d_type == DT_DIR) {
			same_tree(a, b, c, sub, count, differ);
		} else {
			cr_assert(same_file(fa, fb), "%s differs between 1 thread in memory and 2 threads spilling", sub);
			++*count;
			*differ += strcmp(e->d_name, "meta.json") && !same_file(fa, fc);
		}
		free(fa);
		free(fb);
		free(fc);
	}
	closedir(dir);
	free(da);
}

Test(gen_typed, same_seed_same_bytes_whatever_the_threads_and_the_budget)
{
	for (int kind = BURROW_GEN_MAG; kind <= BURROW_GEN_IGBH; kind++) {
		const double f = 1.0 / 16384;
		char *a = gen_twin(kind, f, 1, 0, 0, 6, 0.6, kind == BURROW_GEN_MAG ? "ma" : "ia");
		char *b = gen_twin(kind, f, 2, (size_t)256 << 10, 0, 6, 0.6, kind == BURROW_GEN_MAG ? "mb" : "ib");
		char *c = gen_twin(kind, f, 2, 0, 1, 6, 0.6, kind == BURROW_GEN_MAG ? "mc" : "ic");
		int count = 0, differ = 0;
		same_tree(a, b, c, "", &count, &differ);
		/* meta, labels, 3 splits, 2 relation files each, features per featured type */
		const int want = kind == BURROW_GEN_MAG ? 5 + 12 + 1 : 5 + 16 + 4;
		cr_assert_eq(count, want, "%d files", count);
		/* all but meta.json, and perhaps the 2-row indptr of a relation into institutions */
		cr_assert(differ >= count - 2, "seed 1 changed %d of %d files", differ, count);
		free(a);
		free(b);
		free(c);
	}
}

/* Rows of the relations into papers follow a power law: the largest about sqrt(N) x the mean
 * (a uniform random graph of these means has none above 10x). */
Test(gen_typed, rows_have_a_power_law_tail)
{
	char *p = gen_twin(BURROW_GEN_MAG, 1.0 / 4096, 0, 0, 0, 4, 0.6, "m");
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, p), 0, "%s", burrow_last_error());
	const burrow_hetero *h = burrow_dataset_hetero(ds);
	const char *names[][3] = {{"paper", "cites", "paper"}, {"author", "writes", "paper"},
				  {"paper", "rev_writes", "author"}, {"author", "affiliated_with", "institution"}};
	for (int i = 0; i < 4; i++) {
		const burrow_csr *g = &find_rel(h, names[i][0], names[i][1], names[i][2])->graph;
		const double mean = (double)g->num_edges / (double)g->num_nodes;
		int64_t dmax = 0;
		for (int64_t v = 0; v < g->num_nodes; v++)
			dmax = g->indptr[v + 1] - g->indptr[v] > dmax ? g->indptr[v + 1] - g->indptr[v] : dmax;
		const double want = i == 3 ? 2.0 : 30.0; /* 6 institutions at this fraction */
		cr_assert((double)dmax > want * mean, "%s: largest row %lld, mean %.2f", names[i][1], (long long)dmax,
			  mean);
	}
	burrow_dataset_close(ds);
	free(p);
}

/* Classes seen through IGBH's labels (84% of its papers): a citation joins two papers of one
 * class about h + (1 - h) / C of the time, and two papers of one author share a class about
 * h^2 of the time (authors write mostly within one class: their filled means carry it). */
static void planted(double hh, double *cite_same, double *coauthor_same)
{
	char name[16];
	snprintf(name, sizeof name, "h%.1f", hh);
	char *p = gen_twin(BURROW_GEN_IGBH, 1.0 / 16384, 0, 0, 0, 4, hh, name);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, p), 0, "%s", burrow_last_error());
	const burrow_hetero *h = burrow_dataset_hetero(ds);
	const int32_t *y = burrow_dataset_labels(ds);
	const burrow_csr *c = &find_rel(h, "paper", "cites", "paper")->graph,
			 *w = &find_rel(h, "paper", "written_by", "author")->graph;
	int64_t both = 0, same = 0;
	for (int64_t v = 0; v < c->num_nodes; v++)
		for (int64_t j = c->indptr[v]; y[v] >= 0 && j < c->indptr[v + 1]; j++) {
			const int32_t yu = y[burrow_csr_index(c, j)];
			both += yu >= 0;
			same += yu == y[v];
		}
	*cite_same = (double)same / (double)both;
	both = same = 0;
	for (int64_t a = 0; a < w->num_nodes; a++) /* pairs of an author's consecutive papers */
		for (int64_t j = w->indptr[a] + 1; j < w->indptr[a + 1]; j++) {
			const int32_t y0 = y[burrow_csr_index(w, j - 1)], y1 = y[burrow_csr_index(w, j)];
			both += y0 >= 0 && y1 >= 0;
			same += y0 >= 0 && y0 == y1;
		}
	cr_assert(both > 1000, "%lld pairs", (long long)both);
	*coauthor_same = (double)same / (double)both;
	burrow_dataset_close(ds);
	free(p);
}

Test(gen_typed, edges_follow_the_planted_classes)
{
	double c6, a6, c0, a0;
	planted(0.6, &c6, &a6);
	planted(0.0, &c0, &a0);
	const double chance = 1.0 / 19;
	cr_assert(fabs(c6 - (0.6 + 0.4 * chance)) < 0.05, "citations within a class: %.3f with h = 0.6", c6);
	cr_assert(fabs(c0 - chance) < 0.02, "citations within a class: %.3f with h = 0", c0);
	cr_assert(a6 > 0.3 && a6 < 0.5, "an author's papers share a class: %.3f with h = 0.6", a6);
	cr_assert(fabs(a0 - chance) < 0.03, "an author's papers share a class: %.3f with h = 0", a0);
}

/* R-SAGE (learned embeddings for the featureless authors and institutions) learns the planted
 * classes of a small MAG twin: 4 classes of 16 features, well above chance (0.25). */
Test(gen_typed, rsage_on_mag_beats_chance)
{
	burrow_gen_opts g;
	burrow_gen_defaults(&g, BURROW_GEN_MAG);
	g.fraction = 1.0 / 2048;
	g.num_classes = 4;
	g.feat_dim = 16;
	char *p = tu_path(tu_dir, "m");
	cr_assert_eq(burrow_gen(&g, p), 0, "%s", burrow_last_error());
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, p), 0, "%s", burrow_last_error());
	burrow_train_opts o;
	burrow_train_defaults(&o);
	o.model = BURROW_MODEL_RSAGE;
	o.layers = 2;
	o.hidden = 32;
	o.fanout[0] = o.fanout[1] = 5;
	o.batch_size = 128;
	o.lr = 0.01;
	o.threads = 1;
	o.embed_types = true;
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	for (int e = 0; e < 3; e++) {
		burrow_epoch_stats es = {.size = sizeof es};
		cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
	}
	burrow_eval_stats ev = {.size = sizeof ev};
	cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
	cr_assert(ev.valid_acc > 0.6 && ev.test_acc > 0.6, "valid %.3f, test %.3f", ev.valid_acc, ev.test_acc);
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	free(p);
}

Test(gen_typed, bad_options_refused_writing_nothing)
{
	burrow_gen_opts o;
	char *p = tu_path(tu_dir, "x");
	burrow_gen_defaults(&o, BURROW_GEN_MAG);
	o.fraction = 1e-5; /* 0.26 institutions */
	cr_assert_eq(burrow_gen(&o, p), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "'institution' empty"), "%s", burrow_last_error());
	burrow_gen_defaults(&o, BURROW_GEN_IGBH);
	o.fraction = 1.0 / 16384;
	o.num_classes = 20;
	cr_assert_eq(burrow_gen(&o, p), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "19 or 2983"), "%s", burrow_last_error());
	burrow_gen_defaults(&o, BURROW_GEN_MAG);
	o.fraction = 1.0 / 16384;
	o.homophily = 1.5;
	cr_assert_eq(burrow_gen(&o, p), BURROW_E_INVAL);
	o.homophily = 0.6;
	o.edge_split[0] = 0.5;
	cr_assert_eq(burrow_gen(&o, p), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "homogeneous"), "%s", burrow_last_error());
	o.edge_split[0] = 0;
	o.fill = 7;
	cr_assert_eq(burrow_gen(&o, p), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "none or mean"), "%s", burrow_last_error());
	cr_assert(!tu_exists(p));
	free(p);
}

/* The command: info --verify passes; kind-specific options of other kinds and --fill's values
 * refused with a usage line (exit 2), nothing written; --fill mean gives authors and
 * institutions float16 features of the papers' width (their values: fill_mean's tests). */
Test(gen_typed, command_line)
{
	char *err = NULL;
	cr_assert_eq(tu_sh(NULL, &err, "cd %s && %s gen igbh i --fraction 1/16384 --feat-dim 4 --quiet && %s info i --verify",
			   tu_dir, tu_burrow(), tu_burrow()),
		     0, "%s", err);
	free(err);
	const char *bad[][2] = {{"mag x --nodes 10", "not for mag"},
				{"igbh x --fill maybe", "--fill wants none or mean"},
				{"papers x --fill mean", "not for papers"}};
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(tu_sh(NULL, &err, "cd %s && %s gen %s", tu_dir, tu_burrow(), bad[i][0]), 2, "%s", bad[i][0]);
		cr_assert(strstr(err, bad[i][1]), "%s: %s", bad[i][0], err);
		free(err);
	}
	char *x = tu_path(tu_dir, "x");
	cr_assert(!tu_exists(x));
	free(x);
	char *out = NULL;
	cr_assert_eq(tu_sh(&out, &err, "cd %s && %s gen mag m --fraction 1/16384 --feat-dim 8 --fill mean --quiet && %s info m "
				       "--verify",
			   tu_dir, tu_burrow(), tu_burrow()),
		     0, "%s", err);
	cr_assert(strstr(out, "author") && strstr(out, "8 x float16"), "%s", out);
	free(out);
	free(err);
	char *fa = tu_path(tu_dir, "m/features/author.npy"), *fi = tu_path(tu_dir, "m/features/institution.npy");
	cr_assert(tu_exists(fa) && tu_exists(fi));
	free(fa);
	free(fi);
}
