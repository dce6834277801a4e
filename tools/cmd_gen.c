/* cmd_gen.c: burrow gen csbm|rmat|papers|hsbm|citation2|mag|igbh OUT: synthetic datasets. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
	burrow_gen_opts c, r, p, h, l, m, g;
	burrow_gen_defaults(&m, BURROW_GEN_MAG);
	burrow_gen_defaults(&g, BURROW_GEN_IGBH);
	burrow_gen_defaults(&l, BURROW_GEN_CITATION2);
	burrow_gen_defaults(&h, BURROW_GEN_HSBM);
	burrow_gen_defaults(&c, BURROW_GEN_CSBM);
	burrow_gen_defaults(&r, BURROW_GEN_RMAT);
	burrow_gen_defaults(&p, BURROW_GEN_PAPERS);
	printf("usage: burrow gen csbm OUT [--nodes N] [--classes C] [--avg-degree d] [--homophily h]\n"
	       "                          [--feat-dim D] [--signal s] [--tasks T] [--edge-feat-dim De]\n"
	       "                          [--edge-signal e] [--node-features-from-edges mean|sum|max]\n"
	       "                          [common options]\n"
	       "       burrow gen rmat OUT [--scale S] [--edge-factor F] [--feat-dim D] [--classes C]\n"
	       "                          [--signal s] [common options]\n"
	       "       burrow gen papers OUT [--fraction F] [--homophily h] [--signal s] [common options]\n"
	       "       burrow gen hsbm OUT [--nodes N] [--avg-degree d] [--homophily h] [--signal s]\n"
	       "                          [--target-signal t] [common options]\n"
	       "       burrow gen citation2 OUT [--fraction F] [--homophily h] [--signal s] [link options]\n"
	       "                          [common options]\n"
	       "       burrow gen mag|igbh OUT [--fraction F] [--homophily h] [--signal s] [--fill none|mean]\n"
	       "                          [common options]\n\n"
	       "Generate a synthetic dataset directory OUT, deterministic by --seed.\n\n"
	       "csbm: contextual stochastic block model. Nodes get uniform random classes; N*d/2 edges\n"
	       "  each join a random node to one of its own class with probability h, else to one of\n"
	       "  another class; the graph is symmetrized (mean degree about d). With --tasks T it is\n"
	       "  multi-label: T binary tasks, each holding a random half of the classes; a node is\n"
	       "  positive with probability 0.75 when its class is in the task's half, else 0.1; 5%% of\n"
	       "  the labels unknown (-1). The class itself is not stored (labels.npy int8 [N, T]).\n"
	       "rmat: Graph500 Kronecker edges (a, b, c = 0.57, 0.19, 0.19), F * 2^S of them, vertex ids\n"
	       "  scrambled, symmetrized; classes uniform at random, carried by the features only.\n"
	       "Features (all): x = mu[class] + N(0, I), ||mu[class]|| about s, so two classes lie about\n"
	       "  s*sqrt(2) noise standard deviations apart. Split (csbm, rmat): random 60/20/20.\n"
	       "papers: ogbn-papers100M's shape times F: 111,059,956 nodes, 1,615,685,872 edges drawn\n"
	       "  (then symmetrized), 128 float16 features, 172 classes, splits of 1,207,179 / 125,265 /\n"
	       "  214,338 nodes (the only labelled ones; the rest -1). Degrees follow a power law (tail\n"
	       "  exponent 3); an edge stays in its source's class with probability h. Float16 because\n"
	       "  float32 features take 57 GB at F = 1. Edges sort in runs of --mem bytes, spilled to disk.\n"
	       "hsbm: a typed graph (format version 2) whose classes the relations carry: N papers (the\n"
	       "  target; features of weak signal t), N authors (features of signal s), max(C, N/100)\n"
	       "  fields (no features); relations writes (author -> paper) and cites (paper -> paper), N*d/2\n"
	       "  each, has_topic (paper -> field), N; each edge stays in the paper's class with\n"
	       "  probability h. A relational model beats an MLP on the papers' own features.\n"
	       "citation2: ogbl-citation2's shape times F, a link dataset: 2,927,963 nodes, 30,561,187\n"
	       "  directed edges drawn as papers draws them (power-law degrees, classes carried by the\n"
	       "  features; loops and repeats dropped, so slightly fewer remain), 128 float32 features;\n"
	       "  86,956 edges each for valid and test, each with 1000 uniform destinations as negatives\n"
	       "  (MRR, as OGB's citation2), the rest for training; no labels. At F = 1 the split holds\n"
	       "  the graph in memory: about 3 GB, 1.5 GB of features and 1.5 GB of negatives on disk.\n"
	       "mag: a typed twin of OGB-LSC's MAG240M times F (format version 2): paper 121,751,666 (the\n"
	       "  target; 768 float16 features), author 122,383,112, institution 25,721 (no features);\n"
	       "  writes (author -> paper) 386,022,720, affiliated_with (author -> institution) 44,592,586,\n"
	       "  cites (paper -> paper) 1,297,748,926 edges, each with its reverse rev_<name>; 153 classes;\n"
	       "  splits 1,112,392 / 138,949 / 88,092 and 58,726 more labelled papers (test-challenge), the\n"
	       "  rest -1. Each count is round(F x real); degrees follow a power law; an edge stays in its\n"
	       "  destination's class with probability h, so authors write mostly within one class.\n"
	       "igbh: IGBH-full's graph as MLPerf's GNN benchmark uses it, times F: paper 269,346,174, author\n"
	       "  277,220,883, institute 26,918, fos 712,960, all with 1024 float32 features; cites (paper ->\n"
	       "  paper) 3,996,442,004, written_by (paper -> author) 716,761,549, affiliated_to (author ->\n"
	       "  institute) 48,521,486, topic (paper -> fos) 1,050,280,600, each with its reverse; 19 classes\n"
	       "  (--classes 2983: IGB's other label set), IGB's 60/20/20 split of the labelled papers.\n\n"
	       "link options (csbm, rmat, papers, citation2): a link dataset (docs/format.md, \"edge_split\")\n"
	       "  instead of labels and node splits: the generated edges shuffled by --seed and cut into\n"
	       "  train / valid / test; the graph holds the training edges only. The split holds the whole\n"
	       "  graph in memory (16 bytes per edge), as import --edge-split does.\n"
	       "  --edge-split a,b,c  train, valid, test fractions of the edges (sum in (0, 1]; citation2:\n"
	       "                     86,956 * F edges for valid and test)\n"
	       "  --negatives K      valid's and test's fixed negatives: 'pairs' (as many uniform non-edge\n"
	       "                     pairs as positives, as ogbl-collab; metric hits@50) or 'per_source:K'\n"
	       "                     (K uniform destinations per positive, as ogbl-citation2; metric mrr)\n"
	       "                     (pairs; citation2: per_source:%d)\n"
	       "  --directed         keep each edge as drawn, no reverse (citation2: always directed)\n\n"
	       "csbm options (defaults):\n"
	       "  --nodes N          %lld\n"
	       "  --avg-degree d     %g\n"
	       "  --homophily h      %g\n"
	       "  --tasks T          0 (one class per node); 1 .. 4096: multi-label\n"
	       "  --edge-feat-dim De 0 (none); 1 .. 4096: edge_features.npy [E, De], both directions of an\n"
	       "                     edge alike: column 0 is +e if the edge joins two nodes of one class,\n"
	       "                     else -e, plus N(0, 1); the others (mu[y_u] + mu[y_v]) / 2 + N(0, 1),\n"
	       "                     class means of norm about e\n"
	       "  --edge-signal e    %g\n"
	       "  --node-features-from-edges R   features.npy = the mean, sum or max of each node's\n"
	       "                     edge features (no --feat-dim features; ogbn-proteins' recipe)\n"
	       "rmat options:\n"
	       "  --scale S          %d\n"
	       "  --edge-factor F    %g\n"
	       "papers options:\n"
	       "  --fraction F       %g (of the full size, in (0, 4]; a ratio such as 1/64 too)\n"
	       "  --homophily h      %g\n"
	       "  (classes %d, feat-dim %lld, feat-dtype f16, signal %g unless given)\n"
	       "hsbm options:\n"
	       "  --nodes N          %lld (papers; as many authors)\n"
	       "  --avg-degree d     %g\n"
	       "  --homophily h      %g\n"
	       "  --signal s         %g (the authors' features)\n"
	       "  --target-signal t  %g (the papers' own features)\n"
	       "  (feat-dim %lld unless given)\n"
	       "mag, igbh options:\n"
	       "  --fraction F       %g (of the full size, in (0, 4]; a ratio such as 1/64 too)\n"
	       "  --homophily h      %g\n"
	       "  --fill M           none (default: authors and institutions stay featureless) or mean\n"
	       "  (mag: classes %d, feat-dim %lld, feat-dtype f16; igbh: classes %d, feat-dim %lld,\n"
	       "   feat-dtype f32; signal %g unless given)\n"
	       "citation2 options:\n"
	       "  --fraction F       %g (of the full size, in (0, 4]; a ratio such as 1/64 too)\n"
	       "  --homophily h      %g\n"
	       "  (classes %d, feat-dim %lld, feat-dtype f32, signal %g unless given)\n"
	       "common options:\n"
	       "  --classes C        %d\n"
	       "  --feat-dim D       %lld\n"
	       "  --feat-dtype T     f32 or f16 (f32)\n"
	       "  --signal s         %g\n"
	       "  --seed S           0\n"
	       "  --threads T        OpenMP threads (all)\n"
	       "  --mem BYTES        memory budget of the edge sort, K/M/G suffixes (csbm, rmat: none,\n"
	       "                     in memory; papers, mag, igbh: half the physical memory or of the\n"
	       "                     cgroup's limit)\n"
	       "  --tmp-dir DIR      folder for the sort's spill files ($TMPDIR, else /tmp)\n"
	       "  --order O          csbm, rmat, papers, citation2: the output renumbered in a locality\n"
	       "                     order, bfs, degree, rcm or random (from --seed), as 'burrow reorder'\n"
	       "                     writes it (orig_ids.npy back to the generated ids; docs/store.md);\n"
	       "                     generated into a scratch folder beside OUT first, so it takes twice\n"
	       "                     the disk while it runs\n"
	       "  --force            replace OUT if it exists\n"
	       "  --quiet            no progress bar\n",
	       l.neg_per_source, (long long)c.num_nodes, c.avg_degree, c.homophily, c.edge_signal, r.scale, r.edge_factor,
	       p.fraction, p.homophily,
	       p.num_classes, (long long)p.feat_dim, p.signal, (long long)h.num_nodes, h.avg_degree, h.homophily,
	       h.signal, h.target_signal, (long long)h.feat_dim, m.fraction, m.homophily, m.num_classes,
	       (long long)m.feat_dim, g.num_classes, (long long)g.feat_dim, m.signal, l.fraction, l.homophily, l.num_classes,
	       (long long)l.feat_dim, l.signal, c.num_classes,
	       (long long)c.feat_dim, c.signal);
}

/* --edge-split a,b,c, --negatives pairs|per_source:K (NULL when not given) and --directed into o;
 * nonzero after a usage message. */
static int link_opts(burrow_gen_opts *o, const char *split, const char *neg, bool directed)
{
	if (split) {
		char *end = NULL;
		const char *p = split;
		for (int i = 0; i < 3; i++) {
			o->edge_split[i] = strtod(p, &end);
			if (end == p || (i < 2 ? *end != ',' : *end != 0) || !(o->edge_split[i] >= 0 && o->edge_split[i] <= 1))
				return cli_usage("gen", "--edge-split wants three fractions in [0, 1] a,b,c, got '%s'", split);
			p = end + 1;
		}
		const double sum = o->edge_split[0] + o->edge_split[1] + o->edge_split[2];
		if (!(sum > 0 && sum <= 1 + 1e-9))
			return cli_usage("gen", "--edge-split: the fractions' sum must lie in (0, 1], got '%s'", split);
	}
	int64_t k;
	if (neg && !strcmp(neg, "pairs"))
		o->neg_per_source = 0;
	else if (neg && !strncmp(neg, "per_source:", 11) && cli_i64(neg + 11, &k) && k >= 1 && k <= (1 << 20))
		o->neg_per_source = (int32_t)k;
	else if (neg)
		return cli_usage("gen", "--negatives wants pairs or per_source:K (K in [1, 2^20]), got '%s'", neg);
	if (directed)
		o->directed = true;
	if ((neg || directed) && !split && o->kind != BURROW_GEN_CITATION2)
		return cli_usage("gen", "--negatives and --directed go with --edge-split (a link dataset)");
	return 0;
}

enum { O_NODES = 256, O_CLASSES, O_DEG, O_HOMO, O_DIM, O_DTYPE, O_SIGNAL, O_SCALE, O_EF, O_SEED, O_THREADS,
       O_FRACTION, O_MEM, O_TMP, O_FORCE, O_QUIET, O_TSIGNAL, O_TASKS, O_ESPLIT, O_NEG, O_DIRECTED, O_EFDIM, O_ESIGNAL,
       O_NFE, O_FILL, O_HELP, O_ORDER };

int cmd_gen(int argc, char **argv)
{
	static const struct option lo[] = {
		{"nodes", required_argument, 0, O_NODES},     {"classes", required_argument, 0, O_CLASSES},
		{"avg-degree", required_argument, 0, O_DEG},  {"homophily", required_argument, 0, O_HOMO},
		{"feat-dim", required_argument, 0, O_DIM},    {"feat-dtype", required_argument, 0, O_DTYPE},
		{"signal", required_argument, 0, O_SIGNAL},   {"scale", required_argument, 0, O_SCALE},
		{"edge-factor", required_argument, 0, O_EF},  {"seed", required_argument, 0, O_SEED},
		{"threads", required_argument, 0, O_THREADS}, {"fraction", required_argument, 0, O_FRACTION},
		{"mem", required_argument, 0, O_MEM},         {"tmp-dir", required_argument, 0, O_TMP},
		{"force", no_argument, 0, O_FORCE},
		{"quiet", no_argument, 0, O_QUIET},           {"target-signal", required_argument, 0, O_TSIGNAL},
		{"tasks", required_argument, 0, O_TASKS},     {"edge-split", required_argument, 0, O_ESPLIT},
		{"negatives", required_argument, 0, O_NEG},   {"directed", no_argument, 0, O_DIRECTED},
		{"edge-feat-dim", required_argument, 0, O_EFDIM}, {"edge-signal", required_argument, 0, O_ESIGNAL},
		{"node-features-from-edges", required_argument, 0, O_NFE}, {"fill", required_argument, 0, O_FILL},
		{"help", no_argument, 0, O_HELP},             {"order", required_argument, 0, O_ORDER},
		{0, 0, 0, 0},
	};
	/* parse into a kind-neutral set, then apply to the kind's defaults */
	struct {
		bool set;
		const char *val;
	} v[O_ORDER + 1] = {0};
	bool quiet = false, force = false;
	int c;
	while ((c = cli_getopt("gen", argc, argv, "h", lo)) != -1) {
		if (c == '?')
			return EXIT_USAGE;
		if (c == 'h' || c == O_HELP) {
			help();
			return EXIT_OK;
		}
		if (c == O_QUIET)
			quiet = true;
		else if (c == O_FORCE)
			force = true;
		else {
			v[c].set = true;
			v[c].val = optarg;
		}
	}
	if (argc - optind != 2)
		return cli_usage("gen", "expected a generator (csbm, rmat, papers, hsbm, citation2, mag or igbh) and an "
				 "output directory");
	const char *kind = argv[optind], *out = argv[optind + 1];
	burrow_gen_opts o;
	if (!strcmp(kind, "csbm"))
		burrow_gen_defaults(&o, BURROW_GEN_CSBM);
	else if (!strcmp(kind, "rmat"))
		burrow_gen_defaults(&o, BURROW_GEN_RMAT);
	else if (!strcmp(kind, "papers"))
		burrow_gen_defaults(&o, BURROW_GEN_PAPERS);
	else if (!strcmp(kind, "hsbm"))
		burrow_gen_defaults(&o, BURROW_GEN_HSBM);
	else if (!strcmp(kind, "citation2"))
		burrow_gen_defaults(&o, BURROW_GEN_CITATION2);
	else if (!strcmp(kind, "mag"))
		burrow_gen_defaults(&o, BURROW_GEN_MAG);
	else if (!strcmp(kind, "igbh"))
		burrow_gen_defaults(&o, BURROW_GEN_IGBH);
	else
		return cli_usage("gen", "unknown generator '%s' (csbm, rmat, papers, hsbm, citation2, mag or igbh)", kind);
	/* which kinds take each kind-specific option */
	static const struct {
		int id;
		bool csbm, rmat, papers, hsbm, citation2, typed; /* typed: mag and igbh */
	} only[] = {{O_NODES, 1, 0, 0, 1, 0, 0},    {O_DEG, 1, 0, 0, 1, 0, 0},      {O_HOMO, 1, 0, 1, 1, 1, 1},
		    {O_SCALE, 0, 1, 0, 0, 0, 0},    {O_EF, 0, 1, 0, 0, 0, 0},       {O_FRACTION, 0, 0, 1, 0, 1, 1},
		    {O_TSIGNAL, 0, 0, 0, 1, 0, 0},  {O_TASKS, 1, 0, 0, 0, 0, 0},    {O_ESPLIT, 1, 1, 1, 0, 1, 0},
		    {O_NEG, 1, 1, 1, 0, 1, 0},      {O_DIRECTED, 1, 1, 1, 0, 1, 0}, {O_EFDIM, 1, 0, 0, 0, 0, 0},
		    {O_ESIGNAL, 1, 0, 0, 0, 0, 0},  {O_NFE, 1, 0, 0, 0, 0, 0},      {O_FILL, 0, 0, 0, 0, 0, 1},
		    {O_ORDER, 1, 1, 1, 0, 1, 0}};
	for (size_t i = 0; i < sizeof only / sizeof only[0]; i++) {
		bool ok = o.kind == BURROW_GEN_CSBM        ? only[i].csbm
			  : o.kind == BURROW_GEN_RMAT      ? only[i].rmat
			  : o.kind == BURROW_GEN_PAPERS    ? only[i].papers
			  : o.kind == BURROW_GEN_HSBM      ? only[i].hsbm
			  : o.kind == BURROW_GEN_CITATION2 ? only[i].citation2
							   : only[i].typed;
		if (v[only[i].id].set && !ok)
			return cli_usage("gen", "option '--%s' is not for %s", lo[only[i].id - O_NODES].name, kind);
	}

	int64_t i64;
	double f;
#define INT_OPT(id, field, lo_, hi_)                                                                      \
	if (v[id].set) {                                                                                  \
		if (!cli_i64(v[id].val, &i64) || i64 < (lo_) || i64 > (hi_))                               \
			return cli_usage("gen", "--%s wants an integer in [%lld, %lld], got '%s'",          \
					 lo[id - O_NODES].name, (long long)(lo_), (long long)(hi_), v[id].val); \
		o.field = i64;                                                                            \
	}
#define REAL_OPT(id, field, lo_, hi_)                                                                   \
	if (v[id].set) {                                                                                \
		if (!cli_f64(v[id].val, &f) || f < (lo_) || f > (hi_))                                   \
			return cli_usage("gen", "--%s wants a number in [%g, %g], got '%s'",              \
					 lo[id - O_NODES].name, (double)(lo_), (double)(hi_), v[id].val); \
		o.field = f;                                                                            \
	}
	INT_OPT(O_NODES, num_nodes, 2, (int64_t)1 << 40)
	INT_OPT(O_CLASSES, num_classes, 1, 1 << 20)
	REAL_OPT(O_DEG, avg_degree, 0, 1e9)
	REAL_OPT(O_HOMO, homophily, 0, 1)
	INT_OPT(O_DIM, feat_dim, 1, 1 << 20)
	REAL_OPT(O_SIGNAL, signal, 0, 1e6)
	REAL_OPT(O_TSIGNAL, target_signal, 0, 1e6)
	INT_OPT(O_SCALE, scale, 1, 40)
	REAL_OPT(O_EF, edge_factor, 1e-6, 1e6)
	INT_OPT(O_SEED, seed, 0, INT64_MAX)
	INT_OPT(O_TASKS, num_tasks, 1, 4096)
	INT_OPT(O_THREADS, threads, 1, 4096)
	INT_OPT(O_EFDIM, edge_feat_dim, 1, 4096)
	REAL_OPT(O_ESIGNAL, edge_signal, 0, 1e6)
	if (v[O_NFE].set) {
		burrow_edge_reduce r;
		if (burrow_edge_reduce_parse(v[O_NFE].val, &r))
			return cli_usage("gen", "--node-features-from-edges wants mean, sum or max, got '%s'", v[O_NFE].val);
		o.node_features_from_edges = true;
		o.edge_reduce = r;
	}
	if ((v[O_ESIGNAL].set || v[O_NFE].set) && !o.edge_feat_dim)
		return cli_usage("gen", "--edge-signal and --node-features-from-edges need --edge-feat-dim");
	if (v[O_FRACTION].set) { /* a number, or a ratio such as 1/64 */
		const char *s = v[O_FRACTION].val, *slash = strchr(s, '/');
		double num, den = 1;
		char head[64];
		bool ok = slash ? (size_t)(slash - s) < sizeof head && cli_f64(slash + 1, &den) : cli_f64(s, &num);
		if (ok && slash) {
			memcpy(head, s, (size_t)(slash - s));
			head[slash - s] = 0;
			ok = cli_f64(head, &num) && den > 0;
		}
		if (!ok || !(num / den > 0 && num / den <= 4))
			return cli_usage("gen", "--fraction wants a number or ratio (1/64) in (0, 4], got '%s'", s);
		o.fraction = num / den;
	}
#undef INT_OPT
#undef REAL_OPT
	if (v[O_DTYPE].set) {
		o.feat_dtype = burrow_dtype_parse(v[O_DTYPE].val);
		if (o.feat_dtype != BURROW_DTYPE_F32 && o.feat_dtype != BURROW_DTYPE_F16)
			return cli_usage("gen", "--feat-dtype wants f32 or f16, got '%s'", v[O_DTYPE].val);
	}
	if (v[O_MEM].set) {
		if (!cli_bytes(v[O_MEM].val, &i64) || i64 < 1)
			return cli_usage("gen", "--mem wants a size in bytes (K/M/G suffixes), got '%s'", v[O_MEM].val);
		o.mem_bytes = (size_t)i64;
	}
	if (v[O_TMP].set)
		o.spill_dir = v[O_TMP].val;
	if (v[O_FILL].set) {
		if (strcmp(v[O_FILL].val, "none") && strcmp(v[O_FILL].val, "mean"))
			return cli_usage("gen", "--fill wants none or mean, got '%s'", v[O_FILL].val);
		o.fill = strcmp(v[O_FILL].val, "mean") ? BURROW_FEAT_FILL_NONE : BURROW_FEAT_FILL_MEAN;
	}
	if (v[O_ORDER].set && burrow_order_parse(v[O_ORDER].val, &o.order))
		return cli_usage("gen", "--order wants bfs, degree, rcm or random, got '%s'", v[O_ORDER].val);
	if (link_opts(&o, v[O_ESPLIT].val, v[O_NEG].val, v[O_DIRECTED].set))
		return EXIT_USAGE;
	o.overwrite = force;
	cli_progress prog;
	cli_progress_init(&prog, quiet);
	o.progress = cli_progress_cb;
	o.progress_user = &prog;
	double t0 = cli_now();
	int st = burrow_gen(&o, out);
	cli_progress_done(&prog);
	if (st == BURROW_E_EXISTS && !force)
		return cli_fail("gen", "%s (use --force to replace it)", burrow_last_error());
	if (st < 0)
		return cli_lib_fail("gen", st);
	if (!quiet)
		fprintf(stderr, "burrow: gen: wrote %s in %.1f s\n", out, cli_now() - t0);
	return EXIT_OK;
}
