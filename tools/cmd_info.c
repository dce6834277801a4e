/* cmd_info.c: burrow info DIR: what a dataset holds, after checking it against meta.json; or
 * for a parts directory, the partition's summary. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
	printf("usage: burrow info DIR [--verify] [--json]\n\n"
	       "Check a dataset directory against its meta.json (every file's dtype, shape and size)\n"
	       "and describe it: nodes, edges, degrees, isolated nodes, features, classes and their\n"
	       "histogram, split sizes, bytes on disk.\n"
	       "For a parts directory (burrow partition's DIR/parts-K): the number of parts, the edge\n"
	       "cut, the imbalance, and per part its owned and halo nodes, send list and CSR entries.\n"
	       "For a typed dataset (format version 2): per node type its nodes and features, per\n"
	       "relation its edges and average in-degree, the target type's classes and splits.\n\n"
	       "  --verify   also check the contents: CSR structure, symmetry, label range, split ids, edge\n"
	       "             splits, every edge feature finite\n"
	       "             (typed: every relation's rows and id ranges);\n"
	       "             for parts, open every part and check its exchange lists and dataset\n"
	       "  --json     print one JSON object instead of the table\n");
}

/* A count, or "-" when meta.json does not record it (< 0). */
static const char *count_or_dash(int64_t v, char *buf, size_t cap)
{
	return v < 0 ? "-" : cli_grouped(v, buf, cap);
}

/* v * scale with prec decimals (then "%" when scale is 100), or "-" when absent (< 0). */
static const char *real_or_dash(double v, double scale, int prec, char *buf, size_t cap)
{
	if (v < 0)
		return "-";
	snprintf(buf, cap, "%.*f%s", prec, v * scale, scale == 100 ? "%" : "");
	return buf;
}

/* JSON: the number, or null when absent (< 0). */
/* s as a JSON string literal, quotes included, into one of four rotating buffers (enough
 * for one printf); a string longer than a buffer holds is cut, never left unterminated. */
static const char *jq(const char *s)
{
	static char bufs[4][4096];
	static int next;
	char *b = bufs[next++ & 3];
	size_t k = 0, cap = sizeof bufs[0] - 8;
	b[k++] = '"';
	for (const unsigned char *c = (const unsigned char *)s; *c && k < cap; c++) {
		if (*c == '"' || *c == '\\') {
			b[k++] = '\\';
			b[k++] = (char)*c;
		} else if (*c < 0x20) {
			k += (size_t)snprintf(b + k, 8, "\\u%04x", *c);
		} else {
			b[k++] = (char)*c;
		}
	}
	b[k++] = '"';
	b[k] = '\0';
	return b;
}

static void json_num(const char *key, double v, const char *sep)
{
	if (v < 0)
		printf("\"%s\": null%s", key, sep);
	else
		printf("\"%s\": %.17g%s", key, v, sep);
}

/* --verify on a parts directory (typed parts: burrow_parts_verify_typed): open every part (its exchange arrays checked against each
 * other and the partition book, its orig_ids in range and distinct) and check its dataset's
 * contents; across the parts, no input id is owned twice (so the orig_ids, as many as the
 * input's nodes, are a permutation of them). */
static int verify_parts(const char *dir, const burrow_parts *ps)
{
	const burrow_parts_info *pi = burrow_parts_get_info(ps);
	if (pi->num_types) { /* typed parts: per-type arrays, checked by the library */
		int st = burrow_parts_verify_typed(ps);
		return st < 0 ? cli_lib_fail("info", st) : EXIT_OK;
	}
	unsigned char *owner_seen = calloc((size_t)(pi->num_nodes / 8 + 1), 1);
	int rc = EXIT_OK;
	if (!owner_seen)
		return cli_fail("info", "out of memory");
	for (int i = 0; i < pi->num_parts && rc == EXIT_OK; i++) {
		burrow_part *p;
		int st = burrow_part_open(&p, ps, i);
		if (st >= 0)
			st = burrow_dataset_verify(burrow_part_dataset(p));
		if (st < 0)
			rc = cli_lib_fail("info", st);
		const burrow_part_info *in = st >= 0 ? burrow_part_get_info(p) : NULL;
		for (int64_t q = 0; in && q < in->num_owned && rc == EXIT_OK; q++) {
			const int64_t g = in->orig_ids[q]; /* in range: the part's open checked it */
			if (owner_seen[g / 8] >> (g % 8) & 1)
				rc = cli_fail("info", "%s/part-%d/orig_ids.npy: entry %lld (id %lld) is owned by an earlier part too",
					      dir, i, (long long)q, (long long)g);
			owner_seen[g / 8] |= (unsigned char)(1u << (g % 8));
		}
		burrow_part_close(p);
	}
	free(owner_seen);
	return rc;
}

/* burrow info DIR/parts-K: what burrow_partition recorded, "-" where it is absent. */
static int info_parts(const char *dir, bool verify, bool json)
{
	burrow_parts *ps;
	int st = burrow_parts_open(&ps, dir);
	if (st < 0)
		return cli_lib_fail("info", st);
	if (verify && (st = verify_parts(dir, ps)) != EXIT_OK) {
		burrow_parts_close(ps);
		return st;
	}
	const burrow_parts_info *pi = burrow_parts_get_info(ps);
	const int k = pi->num_parts;
	char a[64], b[64], c[64], d[64];
	if (json) {
		printf("{\"dir\": %s, \"format\": \"burrow-parts\", \"num_parts\": %d, \"dataset\": %s, "
		       "\"dataset_name\": %s, \"method\": %s, \"num_nodes\": %lld, \"num_edges\": %lld, "
		       "\"edge_cut\": %lld, ",
		       jq(dir), k, jq(pi->dataset), jq(pi->dataset_name), jq(pi->method), (long long)pi->num_nodes, (long long)pi->num_edges,
		       (long long)pi->edge_cut);
		json_num("sym_edges", (double)pi->sym_edges, ", ");
		json_num("cut_fraction", pi->cut_fraction, ", \"imbalance\": {");
		json_num("nodes", pi->imbalance_nodes, ", ");
		json_num("train", pi->imbalance_train, ", ");
		json_num("edges", pi->imbalance_edges, "}, ");
		json_num("halo_total", (double)pi->halo_total, ", ");
		json_num("replication_factor", pi->replication, ", \"parts\": [");
		for (int i = 0; i < k; i++) {
			printf("%s{\"part\": %d, \"owned\": %lld, \"halo\": %lld, ", i ? ", " : "", i,
			       (long long)(pi->node_offsets[i + 1] - pi->node_offsets[i]), (long long)pi->halo_sizes[i]);
			json_num("send", pi->send_sizes ? (double)pi->send_sizes[i] : -1, ", ");
			json_num("edges", pi->part_edges ? (double)pi->part_edges[i] : -1, "}");
		}
		printf("]%s}\n", verify ? ", \"verified\": true" : "");
		burrow_parts_close(ps);
		return EXIT_OK;
	}
	printf("parts      %s (%d parts%s%s)\n", cli_text(dir), k, pi->method[0] ? ", " : "", cli_text(pi->method));
	printf("dataset    %s%s%s%s\n", pi->dataset[0] ? cli_text(pi->dataset) : "-", pi->dataset_name[0] ? " (" : "",
	       cli_text(pi->dataset_name), pi->dataset_name[0] ? ")" : "");
	printf("nodes      %s (%s CSR entries)\n", cli_grouped(pi->num_nodes, a, sizeof a),
	       cli_grouped(pi->num_edges, b, sizeof b));
	printf("edge cut   %s of %s undirected edges (%s)\n", cli_grouped(pi->edge_cut, a, sizeof a),
	       count_or_dash(pi->sym_edges, b, sizeof b), real_or_dash(pi->cut_fraction, 100, 2, c, sizeof c));
	printf("imbalance  nodes %s  train %s  edges %s  (max part / average)\n",
	       real_or_dash(pi->imbalance_nodes, 1, 4, a, sizeof a), real_or_dash(pi->imbalance_train, 1, 4, b, sizeof b),
	       real_or_dash(pi->imbalance_edges, 1, 4, c, sizeof c));
	printf("halo       %s nodes in all, replication factor %s\n", count_or_dash(pi->halo_total, a, sizeof a),
	       real_or_dash(pi->replication, 1, 3, b, sizeof b));
	printf("%-6s %14s %14s %14s %14s\n", "part", "owned", "halo", "send", "CSR entries");
	for (int i = 0; i < k; i++)
		printf("%-6d %14s %14s %14s %14s\n", i, cli_grouped(pi->node_offsets[i + 1] - pi->node_offsets[i], a, sizeof a),
		       cli_grouped(pi->halo_sizes[i], b, sizeof b),
		       count_or_dash(pi->send_sizes ? pi->send_sizes[i] : -1, c, sizeof c),
		       count_or_dash(pi->part_edges ? pi->part_edges[i] : -1, d, sizeof d));
	if (verify)
		printf("verify     ok (every part: exchange lists, CSR structure, labels, splits)\n");
	burrow_parts_close(ps);
	return EXIT_OK;
}

/* Class histogram of the labels (n of them; last slot: unlabeled), or NULL out of memory. */
static int64_t *class_hist(const int32_t *lab, int64_t n, int32_t c)
{
	int64_t *hist = calloc((size_t)c + 1, sizeof *hist);
	for (int64_t v = 0; hist && lab && v < n; v++)
		hist[lab[v] >= 0 && lab[v] < c ? lab[v] : c]++;
	return hist;
}

/* The edge features' line of the table, or their JSON members (with a trailing ", "). */
static void info_edge_features(const burrow_dataset_info *in, bool json)
{
	char b[64];
	const double bytes =
		(double)in->num_edges * (double)in->edge_feat_dim * (double)burrow_dtype_size(in->edge_feat_dtype);
	if (json)
		printf("\"edge_feat_dim\": %lld, \"edge_feat_dtype\": \"%s\", ", (long long)in->edge_feat_dim,
		       in->edge_feat_dim ? burrow_dtype_name(in->edge_feat_dtype) : "");
	else if (in->edge_feat_dim)
		printf("edge feat  %lld x %s per CSR entry (%s)\n", (long long)in->edge_feat_dim,
		       burrow_dtype_name(in->edge_feat_dtype), cli_human_bytes(bytes, b, sizeof b));
}

/* burrow info of a typed dataset (format version 2): per node type its count and features,
 * per relation its edges and average in-degree (edges / destination nodes). */
static void info_typed(const char *dir, const burrow_dataset *ds, bool verify, bool json, const int64_t *hist)
{
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	const burrow_hetero *h = burrow_dataset_hetero(ds);
	const char *target = h->target_type >= 0 ? h->type_names[h->target_type] : NULL;
	const int64_t disk = burrow_dataset_disk_bytes(ds);
	const bool lab = burrow_dataset_labels(ds) != NULL;
	char a[64], b[64], c[64];
	if (json) {
		printf("{\"dir\": %s, \"name\": %s, \"format_version\": 2, \"num_types\": %d, \"num_relations\": %d, "
		       "\"target_type\": %s, \"num_edges\": %lld, \"node_types\": [",
		       jq(dir), jq(in->name), h->num_types, h->num_relations, target ? jq(target) : "null",
		       (long long)in->num_edges);
		for (int t = 0; t < h->num_types; t++) {
			burrow_type_info ti;
			burrow_dataset_type_info(ds, t, &ti);
			printf("%s{\"name\": %s, \"num_nodes\": %lld, \"feat_dim\": %lld, \"feat_dtype\": \"%s\"}", t ? ", " : "",
			       jq(ti.name), (long long)ti.num_nodes, (long long)ti.feat_dim,
			       ti.feat_dim ? burrow_dtype_name(ti.feat_dtype) : "");
		}
		printf("], \"relations\": [");
		for (int i = 0; i < h->num_relations; i++) {
			const burrow_relation *r = &h->rel[i];
			const int64_t nd = h->type_nodes[r->dst_type];
			printf("%s{\"src\": %s, \"name\": %s, \"dst\": %s, \"num_edges\": %lld, \"avg_in_degree\": %.6g}",
			       i ? ", " : "", jq(h->type_names[r->src_type]), jq(r->name), jq(h->type_names[r->dst_type]),
			       (long long)r->graph.num_edges, nd ? (double)r->graph.num_edges / (double)nd : 0.0);
		}
		printf("], \"num_classes\": %d, \"class_counts\": [", in->num_classes);
		for (int32_t k = 0; k < in->num_classes; k++)
			printf("%s%lld", k ? ", " : "", (long long)hist[k]);
		printf("], \"unlabeled\": %lld, \"num_train\": %lld, \"num_valid\": %lld, \"num_test\": %lld, "
		       "\"disk_bytes\": %lld, \"source\": %s%s}\n",
		       (long long)(lab ? hist[in->num_classes] : in->num_nodes), (long long)in->num_train,
		       (long long)in->num_valid, (long long)in->num_test, (long long)disk, in->source_json,
		       verify ? ", \"verified\": true" : "");
		return;
	}
	printf("dataset    %s (%s), typed: %d node types, %d relations\n", cli_text(dir), cli_text(in->name), h->num_types,
	       h->num_relations);
	printf("source     %s\n", in->source_json);
	printf("%-10s %-24s %16s  %s\n", "types", "", "nodes", "features");
	for (int t = 0; t < h->num_types; t++) {
		burrow_type_info ti;
		burrow_dataset_type_info(ds, t, &ti);
		if (ti.feat_dim)
			snprintf(c, sizeof c, "%lld x %s (%s)", (long long)ti.feat_dim, burrow_dtype_name(ti.feat_dtype),
				 cli_human_bytes((double)ti.num_nodes * (double)ti.feat_dim *
						 (double)burrow_dtype_size(ti.feat_dtype), b, sizeof b));
		printf("%-10s %-24s %16s  %s%s\n", "", cli_text(ti.name), cli_grouped(ti.num_nodes, a, sizeof a),
		       ti.feat_dim ? c : "none", t == h->target_type ? "  (target)" : "");
	}
	printf("%-10s %-40s %16s  %s\n", "relations", "", "edges", "avg in-degree");
	for (int i = 0; i < h->num_relations; i++) {
		const burrow_relation *r = &h->rel[i];
		const int64_t nd = h->type_nodes[r->dst_type];
		char rel[3 * BURROW_MAX_NAME + 8];
		snprintf(rel, sizeof rel, "%s %s %s", h->type_names[r->src_type], r->name, h->type_names[r->dst_type]);
		printf("%-10s %-40s %16s  %.2f\n", "", rel, cli_grouped(r->graph.num_edges, a, sizeof a),
		       nd ? (double)r->graph.num_edges / (double)nd : 0.0);
	}
	printf("edges      %s in all relations\n", cli_grouped(in->num_edges, a, sizeof a));
	printf("target     %s\n", target ? target : "none");
	printf("classes    %d", in->num_classes);
	for (int32_t k = 0; k < in->num_classes; k++)
		printf("%s%d:%lld", k ? " " : "  ", k, (long long)hist[k]);
	if (lab && hist[in->num_classes])
		printf("  unlabeled:%lld", (long long)hist[in->num_classes]);
	printf("\n");
	printf("splits     train %lld  valid %lld  test %lld\n", (long long)in->num_train, (long long)in->num_valid,
	       (long long)in->num_test);
	printf("disk       %s\n", cli_human_bytes((double)disk, a, sizeof a));
	if (verify)
		printf("verify     ok (every relation's CSR structure and id ranges, labels, splits)\n");
}

/* A link dataset's edge splits: one text line, or a JSON member after a ", ". */
static void info_edge_split(const burrow_dataset *ds, bool json)
{
	burrow_edge_split sp[3];
	if (!burrow_dataset_has_edge_split(ds))
		return;
	for (int i = 0; i < 3; i++)
		burrow_dataset_edge_split(ds, i, &sp[i]);
	char metric[32];
	if (sp[0].metric == BURROW_EDGE_METRIC_HITS)
		snprintf(metric, sizeof metric, "hits@%d", sp[0].metric_k);
	else
		snprintf(metric, sizeof metric, "%s", sp[0].metric == BURROW_EDGE_METRIC_MRR ? "mrr" : "auc");
	if (json) {
		printf(", \"edge_split\": {\"train\": %lld, \"valid\": %lld, \"test\": %lld, \"neg\": \"%s\", "
		       "\"valid_neg\": %lld, \"test_neg\": %lld, \"num_neg\": %lld, \"weight\": %s, \"year\": %s, "
		       "\"directed\": %s, \"metric\": \"%s\"}",
		       (long long)sp[0].num_pos, (long long)sp[1].num_pos, (long long)sp[2].num_pos,
		       burrow_edge_neg_name(sp[0].neg), (long long)sp[1].num_neg, (long long)sp[2].num_neg,
		       (long long)sp[1].k, sp[0].weight || sp[1].weight || sp[2].weight ? "true" : "false",
		       sp[0].year || sp[1].year ? "true" : "false", sp[0].directed ? "true" : "false", metric);
		return;
	}
	printf("edges      train %lld  valid %lld  test %lld positives (%s); negatives %s", (long long)sp[0].num_pos,
	       (long long)sp[1].num_pos, (long long)sp[2].num_pos, sp[0].directed ? "directed" : "undirected",
	       burrow_edge_neg_name(sp[0].neg));
	if (sp[0].neg == BURROW_EDGE_NEG_PAIRS)
		printf(" (valid %lld, test %lld)", (long long)sp[1].num_neg, (long long)sp[2].num_neg);
	if (sp[0].neg == BURROW_EDGE_NEG_PER_SOURCE)
		printf(" (%lld per positive)", (long long)sp[1].k);
	printf("%s%s; metric %s\n", sp[1].weight ? "; weights" : "", sp[1].year ? "; years" : "", metric);
}

int cmd_info(int argc, char **argv)
{
	static const struct option lo[] = {
		{"verify", no_argument, 0, 'v'}, {"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	bool verify = false, json = false;
	int c;
	while ((c = cli_getopt("info", argc, argv, "h", lo)) != -1) {
		if (c == '?')
			return EXIT_USAGE;
		if (c == 'h') {
			help();
			return EXIT_OK;
		}
		if (c == 'v')
			verify = true;
		if (c == 'j')
			json = true;
	}
	if (argc - optind != 1)
		return cli_usage("info", "expected one dataset or parts directory");
	const char *dir = argv[optind];
	if (cli_is_parts_dir(dir))
		return info_parts(dir, verify, json);

	burrow_dataset *ds;
	int st = burrow_dataset_open(&ds, dir);
	if (st < 0)
		return cli_lib_fail("info", st);
	if (verify && (st = burrow_dataset_verify(ds)) < 0) {
		burrow_dataset_close(ds);
		return cli_lib_fail("info", st);
	}
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	if (burrow_dataset_hetero(ds)) {
		int64_t *th = class_hist(burrow_dataset_labels(ds), in->num_nodes, in->num_classes);
		if (th)
			info_typed(dir, ds, verify, json, th);
		free(th);
		burrow_dataset_close(ds);
		return th ? EXIT_OK : cli_fail("info", "out of memory");
	}
	const burrow_csr *g = burrow_dataset_graph(ds);

	int64_t dmin = g->num_nodes ? INT64_MAX : 0, dmax = 0, isolated = 0;
	for (int64_t v = 0; v < g->num_nodes; v++) {
		int64_t d = g->indptr[v + 1] - g->indptr[v];
		dmin = d < dmin ? d : dmin;
		dmax = d > dmax ? d : dmax;
		isolated += d == 0;
	}
	double dmean = g->num_nodes ? (double)g->num_edges / (double)g->num_nodes : 0;
	int64_t *hist = calloc((size_t)in->num_classes + 1, sizeof *hist); /* last slot: unlabeled */
	if (!hist) {
		burrow_dataset_close(ds);
		return cli_fail("info", "out of memory");
	}
	const int32_t *lab = burrow_dataset_labels(ds);
	for (int64_t v = 0; lab && v < in->num_nodes; v++)
		hist[lab[v] >= 0 && lab[v] < in->num_classes ? lab[v] : in->num_classes]++;
	int64_t tc[3] = {0, 0, 0}; /* multi-label: unknown, negative, positive labels */
	const int8_t *ml = burrow_dataset_multilabels(ds);
	for (int64_t i = 0; ml && i < in->num_nodes * in->num_tasks; i++)
		tc[ml[i] + 1]++;
	int64_t disk = burrow_dataset_disk_bytes(ds);
	double feat_bytes = (double)in->num_nodes * (double)in->feat_dim * (double)burrow_dtype_size(in->feat_dtype);

	char a[64], b[64];
	if (json) {
		printf("{\"dir\": %s, \"name\": %s, \"num_nodes\": %lld, \"num_edges\": %lld, "
		       "\"symmetric\": %s, \"degree_min\": %lld, \"degree_mean\": %.6g, \"degree_max\": %lld, "
		       "\"isolated\": %lld, \"feat_dim\": %lld, \"feat_dtype\": \"%s\", \"num_classes\": %d, "
		       "\"class_counts\": [",
		       jq(dir), jq(in->name), (long long)in->num_nodes, (long long)in->num_edges,
		       in->symmetric ? "true" : "false", (long long)dmin, dmean, (long long)dmax, (long long)isolated,
		       (long long)in->feat_dim, in->feat_dim ? burrow_dtype_name(in->feat_dtype) : "", in->num_classes);
		for (int32_t k = 0; k < in->num_classes; k++)
			printf("%s%lld", k ? ", " : "", (long long)hist[k]);
		printf("], \"num_tasks\": %d, \"task_positive\": %lld, \"task_negative\": %lld, \"task_unknown\": %lld",
		       in->num_tasks, (long long)tc[2], (long long)tc[1], (long long)tc[0]);
		printf(", ");
		info_edge_features(in, true);
		printf("\"unlabeled\": %lld, \"num_train\": %lld, \"num_valid\": %lld, \"num_test\": %lld, "
		       "\"disk_bytes\": %lld, \"source\": %s",
		       (long long)(lab ? hist[in->num_classes] : in->num_nodes), (long long)in->num_train,
		       (long long)in->num_valid, (long long)in->num_test, (long long)disk, in->source_json);
		info_edge_split(ds, true);
		printf("}\n");
	} else {
		printf("dataset    %s (%s)\n", cli_text(dir), cli_text(in->name));
		printf("source     %s\n", in->source_json); /* JSON: its strings escaped */
		printf("nodes      %s\n", cli_grouped(in->num_nodes, a, sizeof a));
		printf("edges      %s CSR entries%s\n", cli_grouped(in->num_edges, a, sizeof a),
		       in->symmetric ? " (symmetric: each undirected edge stored both ways)" : " (directed)");
		printf("degree     min %lld  mean %.2f  max %lld\n", (long long)dmin, dmean, (long long)dmax);
		printf("isolated   %s nodes\n", cli_grouped(isolated, a, sizeof a));
		if (in->feat_dim)
			printf("features   %lld x %s (%s)\n", (long long)in->feat_dim, burrow_dtype_name(in->feat_dtype),
			       cli_human_bytes(feat_bytes, b, sizeof b));
		else
			printf("features   none\n");
		info_edge_features(in, false);
		printf("classes    %d", in->num_classes);
		for (int32_t k = 0; k < in->num_classes; k++)
			printf("%s%d:%lld", k ? " " : "  ", k, (long long)hist[k]);
		if (lab && hist[in->num_classes])
			printf("  unlabeled:%lld", (long long)hist[in->num_classes]);
		printf("\n");
		if (in->num_tasks)
			printf("tasks      %d binary (multi-label): %lld positive, %lld negative, %lld unknown labels\n",
			       in->num_tasks, (long long)tc[2], (long long)tc[1], (long long)tc[0]);
		printf("splits     train %lld  valid %lld  test %lld\n", (long long)in->num_train,
		       (long long)in->num_valid, (long long)in->num_test);
		info_edge_split(ds, false);
		printf("disk       %s\n", cli_human_bytes((double)disk, a, sizeof a));
		if (verify)
			printf("verify     ok (CSR structure%s, labels, splits%s%s)\n", in->symmetric ? ", symmetry" : "",
			       burrow_dataset_has_edge_split(ds) ? ", edge splits" : "", in->edge_feat_dim ? ", edge features finite" : "");
	}
	free(hist);
	burrow_dataset_close(ds);
	return EXIT_OK;
}
