/* cmd_gen.c: burrow gen csbm|rmat OUT: synthetic datasets. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static void help(void)
{
	burrow_gen_opts c, r;
	burrow_gen_defaults(&c, BURROW_GEN_CSBM);
	burrow_gen_defaults(&r, BURROW_GEN_RMAT);
	printf("usage: burrow gen csbm OUT [--nodes N] [--classes C] [--avg-degree d] [--homophily h]\n"
	       "                          [--feat-dim D] [--signal s] [common options]\n"
	       "       burrow gen rmat OUT [--scale S] [--edge-factor F] [--feat-dim D] [--classes C]\n"
	       "                          [--signal s] [common options]\n\n"
	       "Generate a synthetic dataset directory OUT, deterministic by --seed.\n\n"
	       "csbm: contextual stochastic block model. Nodes get uniform random classes; N*d/2 edges\n"
	       "  each join a random node to one of its own class with probability h, else to one of\n"
	       "  another class; the graph is symmetrized (mean degree about d).\n"
	       "rmat: Graph500 Kronecker edges (a, b, c = 0.57, 0.19, 0.19), F * 2^S of them, vertex ids\n"
	       "  scrambled, symmetrized; classes uniform at random, carried by the features only.\n"
	       "Features (both): x = mu[class] + N(0, I), ||mu[class]|| about s, so two classes lie about\n"
	       "  s*sqrt(2) noise standard deviations apart. Split: random 60/20/20.\n\n"
	       "csbm options (defaults):\n"
	       "  --nodes N          %lld\n"
	       "  --avg-degree d     %g\n"
	       "  --homophily h      %g\n"
	       "rmat options:\n"
	       "  --scale S          %d\n"
	       "  --edge-factor F    %g\n"
	       "common options:\n"
	       "  --classes C        %d\n"
	       "  --feat-dim D       %lld\n"
	       "  --feat-dtype T     f32 or f16 (f32)\n"
	       "  --signal s         %g\n"
	       "  --seed S           0\n"
	       "  --threads T        OpenMP threads (all)\n"
	       "  --force            replace OUT if it exists\n"
	       "  --quiet            no progress bar\n",
	       (long long)c.num_nodes, c.avg_degree, c.homophily, r.scale, r.edge_factor, c.num_classes,
	       (long long)c.feat_dim, c.signal);
}

enum { O_NODES = 256, O_CLASSES, O_DEG, O_HOMO, O_DIM, O_DTYPE, O_SIGNAL, O_SCALE, O_EF, O_SEED, O_THREADS,
       O_FORCE, O_QUIET, O_HELP };

int cmd_gen(int argc, char **argv)
{
	static const struct option lo[] = {
		{"nodes", required_argument, 0, O_NODES},     {"classes", required_argument, 0, O_CLASSES},
		{"avg-degree", required_argument, 0, O_DEG},  {"homophily", required_argument, 0, O_HOMO},
		{"feat-dim", required_argument, 0, O_DIM},    {"feat-dtype", required_argument, 0, O_DTYPE},
		{"signal", required_argument, 0, O_SIGNAL},   {"scale", required_argument, 0, O_SCALE},
		{"edge-factor", required_argument, 0, O_EF},  {"seed", required_argument, 0, O_SEED},
		{"threads", required_argument, 0, O_THREADS}, {"force", no_argument, 0, O_FORCE},
		{"quiet", no_argument, 0, O_QUIET},           {"help", no_argument, 0, O_HELP},
		{0, 0, 0, 0},
	};
	/* parse into a kind-neutral set, then apply to the kind's defaults */
	struct {
		bool set;
		const char *val;
	} v[O_HELP + 1] = {0};
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
		return cli_usage("gen", "expected a generator (csbm or rmat) and an output directory");
	const char *kind = argv[optind], *out = argv[optind + 1];
	burrow_gen_opts o;
	if (!strcmp(kind, "csbm"))
		burrow_gen_defaults(&o, BURROW_GEN_CSBM);
	else if (!strcmp(kind, "rmat"))
		burrow_gen_defaults(&o, BURROW_GEN_RMAT);
	else
		return cli_usage("gen", "unknown generator '%s' (csbm or rmat)", kind);
	const bool csbm = o.kind == BURROW_GEN_CSBM;
	static const int csbm_only[] = {O_NODES, O_DEG, O_HOMO}, rmat_only[] = {O_SCALE, O_EF};
	for (size_t i = 0; i < 3; i++)
		if (!csbm && v[csbm_only[i]].set)
			return cli_usage("gen", "option '--%s' is for csbm, not rmat", lo[csbm_only[i] - O_NODES].name);
	for (size_t i = 0; i < 2; i++)
		if (csbm && v[rmat_only[i]].set)
			return cli_usage("gen", "option '--%s' is for rmat, not csbm", lo[rmat_only[i] - O_NODES].name);

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
	INT_OPT(O_SCALE, scale, 1, 40)
	REAL_OPT(O_EF, edge_factor, 1e-6, 1e6)
	INT_OPT(O_SEED, seed, 0, INT64_MAX)
	INT_OPT(O_THREADS, threads, 1, 4096)
#undef INT_OPT
#undef REAL_OPT
	if (v[O_DTYPE].set) {
		o.feat_dtype = burrow_dtype_parse(v[O_DTYPE].val);
		if (o.feat_dtype != BURROW_DTYPE_F32 && o.feat_dtype != BURROW_DTYPE_F16)
			return cli_usage("gen", "--feat-dtype wants f32 or f16, got '%s'", v[O_DTYPE].val);
	}
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
