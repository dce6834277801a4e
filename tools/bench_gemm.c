/* bench_gemm.c: burrow bench gemm: the CPU's sustained single-precision GEMM rate at the
 * shapes mini-batch training multiplies, through the backend's own product and through
 * cblas_sgemm directly, calls interleaved, medians: the limit bench train's ratios are against. */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "bench_gemm.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
	printf("usage: burrow bench gemm [--threads 1] [--m 16384,65536] [--k 128,256] [--n 256] [--seconds 1]\n"
	       "                         [--json]\n\n"
	       "For each m and k, the three products of a layer with input [m, k] and weight [k, n]:\n"
	       "  A B     [m, k] x [k, n]     its forward\n"
	       "  A^T G   [m, k]^T x [m, n]   its weight gradient\n"
	       "  G W^T   [m, n] x [k, n]^T   its input gradient\n"
	       "each through two paths, their calls interleaved:\n"
	       "  backend the CPU backend's product as training calls it: its own AVX-512 kernel where\n"
	       "          the shape fits (kernel avx512), else OpenBLAS at one thread per slice of rows\n"
	       "          (kernel openblas); BURROW_CPU_GEMM=blas makes it OpenBLAS throughout\n"
	       "  cblas   one cblas_sgemm call, OpenBLAS at --threads threads\n"
	       "GFLOP/s = 2 m n k / seconds, the median of the calls; the best of the table is the\n"
	       "measured GEMM rate. The load average is printed beside each row.\n\n"
	       "  --threads T   threads of both paths (default 1: one core's rate)\n"
	       "  --m, --k LIST rows of the input and its width, comma-separated\n"
	       "  --n N         the layer's output width\n"
	       "  --seconds S   time spent on each row pair (at least 3 calls of each path)\n"
	       "  --json        one JSON object per line\n");
}

const char *bench_gemm_shape_name(int shape)
{
	static const char *const names[GEMM_SHAPES] = {"A B", "A^T G", "G W^T"};
	return shape >= 0 && shape < GEMM_SHAPES ? names[shape] : "?";
}

const char *bench_load(char *buf, size_t cap)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double a, b, c;
	if (f && fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3)
		snprintf(buf, cap, "%.2f %.2f %.2f", a, b, c);
	else
		snprintf(buf, cap, "?");
	if (f)
		fclose(f);
	return buf;
}

static void fill(float *x, size_t n, uint64_t s)
{
	for (size_t i = 0; i < n; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		x[i] = (float)((double)(s >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
	}
}

/* The product's operands: M, N, K of burrow_gemm_run and its transposes. */
static void shape_dims(const gemm_cell *c, int64_t *M, int64_t *N, int64_t *K, bool *ta, bool *tb)
{
	*ta = c->shape == GEMM_ATG;
	*tb = c->shape == GEMM_GWT;
	*M = c->shape == GEMM_ATG ? c->k : c->m;
	*N = c->shape == GEMM_GWT ? c->k : c->n;
	*K = c->shape == GEMM_ATG ? c->m : c->shape == GEMM_GWT ? c->n : c->k;
}

/* Pairs of calls, one of each path, the first path alternating, until `seconds` passed
 * (at least 3, at most 1000 pairs); one untimed pair first. */
static int time_pairs(burrow_gemm *g, gemm_cell *cell, double seconds, const float *a, const float *b, float *c,
		      double *t[2])
{
	int64_t M, N, K;
	bool ta, tb;
	shape_dims(cell, &M, &N, &K, &ta, &tb);
	int st = 0;
	for (int p = 0; p < 2 && !st; p++)
		st = burrow_gemm_run(g, p, ta, tb, M, N, K, a, b, c);
	const double t0 = cli_now();
	int r = 0;
	for (; !st && r < 1000 && (r < 3 || cli_now() - t0 < seconds); r++)
		for (int q = 0; q < 2 && !st; q++) {
			const int p = (r + q) % 2;
			const double s = cli_now();
			st = burrow_gemm_run(g, p, ta, tb, M, N, K, a, b, c);
			t[p][r] = cli_now() - s;
		}
	cell->repeats = r;
	for (int p = 0; p < 2; p++)
		cell->kernel[p] = burrow_gemm_kernel(g, p, ta, tb, M, N, K);
	return st;
}

int bench_gemm_cell(burrow_gemm *g, gemm_cell *cell, double seconds)
{
	const int64_t m = cell->m, k = cell->k, n = cell->n;
	const size_t sa = (size_t)m * (size_t)k, sb = (size_t)(cell->shape == GEMM_AB ? k : m) * (size_t)n;
	float *a = malloc((size_t)m * (size_t)(n > k ? n : k) * sizeof *a), *b = malloc(sb * sizeof *b);
	float *c = malloc((size_t)m * (size_t)(n > k ? n : k) * sizeof *c);
	double *t[2] = {malloc(1000 * sizeof(double)), malloc(1000 * sizeof(double))};
	int st = BURROW_E_NOMEM;
	if (a && b && c && t[0] && t[1]) {
		/* A B: a = A [m, k], b = W [k, n]; A^T G: a = A, b = G [m, n]; G W^T: a = G [m, n], b = W [k, n] */
		fill(a, cell->shape == GEMM_GWT ? (size_t)m * (size_t)n : sa, 1);
		fill(b, cell->shape == GEMM_GWT ? (size_t)k * (size_t)n : sb, 2);
		st = time_pairs(g, cell, seconds, a, b, c, t);
	}
	const double flops = 2.0 * (double)m * (double)n * (double)k;
	for (int p = 0; p < 2 && !st; p++) {
		cell->median_s[p] = cli_median(t[p], cell->repeats);
		cell->gflops[p] = flops / cell->median_s[p] / 1e9;
	}
	free(t[0]);
	free(t[1]);
	free(a);
	free(b);
	free(c);
	return st;
}

/* A comma-separated list of positive sizes into v (at most 8); false when malformed. */
static bool parse_list(const char *s, int64_t v[8], int *n)
{
	char buf[128];
	snprintf(buf, sizeof buf, "%s", s);
	*n = 0;
	for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save))
		if (*n == 8 || !cli_i64(p, &v[(*n)++]) || v[*n - 1] < 1 || v[*n - 1] > (1 << 24))
			return false;
	return *n > 0;
}

typedef struct gemm_opts {
	int threads;
	int64_t m[8], k[8], n;
	int nm, nk;
	double seconds;
	bool json;
} gemm_opts;

enum { O_THREADS = 256, O_M, O_K, O_N, O_SECONDS, O_JSON, O_HELP };

/* The command line into o: 0 to go on, -1 after --help, else the exit code. */
static int gemm_parse(gemm_opts *o, int argc, char **argv)
{
	static const struct option lo[] = {
		{"threads", required_argument, 0, O_THREADS}, {"m", required_argument, 0, O_M},
		{"k", required_argument, 0, O_K},             {"n", required_argument, 0, O_N},
		{"seconds", required_argument, 0, O_SECONDS}, {"json", no_argument, 0, O_JSON},
		{"help", no_argument, 0, O_HELP},             {0, 0, 0, 0},
	};
	int c;
	int64_t v;
	while ((c = cli_getopt("bench gemm", argc, argv, "h", lo)) != -1) {
		switch (c) {
		case '?': return EXIT_USAGE;
		case 'h':
		case O_HELP: help(); return -1;
		case O_THREADS:
			if (!cli_i64(optarg, &v) || v < 1 || v > 4096)
				return cli_usage("bench gemm", "--threads wants an integer in [1, 4096], got '%s'", optarg);
			o->threads = (int)v;
			break;
		case O_M:
		case O_K:
			if (!parse_list(optarg, c == O_M ? o->m : o->k, c == O_M ? &o->nm : &o->nk))
				return cli_usage("bench gemm", "--%s wants up to 8 sizes in [1, 2^24], comma-separated, got '%s'",
						 c == O_M ? "m" : "k", optarg);
			break;
		case O_N:
			if (!cli_i64(optarg, &o->n) || o->n < 1 || o->n > (1 << 16))
				return cli_usage("bench gemm", "--n wants an integer in [1, 65536], got '%s'", optarg);
			break;
		case O_SECONDS:
			if (!cli_f64(optarg, &o->seconds) || !(o->seconds >= 0 && o->seconds <= 3600))
				return cli_usage("bench gemm", "--seconds wants a number in [0, 3600], got '%s'", optarg);
			break;
		case O_JSON: o->json = true; break;
		default: return EXIT_USAGE;
		}
	}
	if (optind != argc)
		return cli_usage("bench gemm", "unexpected argument '%s'", argv[optind]);
	return 0;
}

static const char *const PATHS[2] = {"backend", "cblas"};

static void print_cell(const gemm_opts *o, const gemm_cell *c)
{
	char load[48];
	bench_load(load, sizeof load);
	for (int p = 0; p < 2; p++)
		if (o->json)
			printf("{\"bench\": \"gemm\", \"shape\": \"%s\", \"m\": %lld, \"k\": %lld, \"n\": %lld, \"path\": \"%s\", "
			       "\"kernel\": \"%s\", \"threads\": %d, \"gflops\": %.3f, \"median_s\": %.6f, \"repeats\": %d, "
			       "\"load\": \"%s\"}\n",
			       bench_gemm_shape_name(c->shape), (long long)c->m, (long long)c->k, (long long)c->n, PATHS[p],
			       c->kernel[p], o->threads, c->gflops[p], c->median_s[p], c->repeats, load);
		else
			printf("%-6s %7lld %5lld %5lld  %-8s %-9s %9.1f %9.4f %4d  %s\n", bench_gemm_shape_name(c->shape),
			       (long long)c->m, (long long)c->k, (long long)c->n, PATHS[p], c->kernel[p], c->gflops[p],
			       c->median_s[p], c->repeats, load);
	fflush(stdout);
}

int bench_gemm(int argc, char **argv)
{
	gemm_opts o = {.threads = 1, .m = {16384, 65536}, .k = {128, 256}, .n = 256, .nm = 2, .nk = 2, .seconds = 1};
	int rc = gemm_parse(&o, argc, argv);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	burrow_gemm *g;
	int st = burrow_gemm_open(&g, o.threads);
	if (st < 0)
		return cli_lib_fail("bench gemm", st);
	if (!o.json)
		printf("burrow bench gemm: %d thread%s, float32, GFLOP/s = 2 m n k / s (median of the calls)\n\n"
		       "%-6s %7s %5s %5s  %-8s %-9s %9s %9s %4s  %s\n",
		       o.threads, o.threads == 1 ? "" : "s", "shape", "m", "k", "n", "path", "kernel", "GFLOP/s", "median_s",
		       "runs", "load");
	gemm_cell best = {.shape = -1};
	int best_p = 0;
	for (int i = 0; i < o.nm && !st; i++)
		for (int j = 0; j < o.nk && !st; j++)
			for (int s = 0; s < GEMM_SHAPES && !st; s++) {
				gemm_cell c = {.shape = s, .m = o.m[i], .k = o.k[j], .n = o.n};
				if ((st = bench_gemm_cell(g, &c, o.seconds)))
					break;
				print_cell(&o, &c);
				for (int p = 0; p < 2; p++)
					if (best.shape < 0 || c.gflops[p] > best.gflops[best_p]) {
						best = c;
						best_p = p;
					}
			}
	burrow_gemm_close(g);
	if (st < 0)
		return cli_lib_fail("bench gemm", st);
	char load[48];
	bench_load(load, sizeof load);
	if (o.json)
		printf("{\"bench\": \"gemm\", \"summary\": true, \"threads\": %d, \"gflops\": %.3f, \"shape\": \"%s\", "
		       "\"m\": %lld, \"k\": %lld, \"n\": %lld, \"path\": \"%s\", \"kernel\": \"%s\", \"load\": \"%s\"}\n",
		       o.threads, best.gflops[best_p], bench_gemm_shape_name(best.shape), (long long)best.m, (long long)best.k,
		       (long long)best.n, PATHS[best_p], best.kernel[best_p], load);
	else
		printf("\nthe measured GEMM rate: %.1f GFLOP/s at %d thread%s (%s, m %lld, k %lld, n %lld, %s, %s; load %s)\n",
		       best.gflops[best_p], o.threads, o.threads == 1 ? "" : "s", bench_gemm_shape_name(best.shape),
		       (long long)best.m, (long long)best.k, (long long)best.n, PATHS[best_p], best.kernel[best_p], load);
	return EXIT_OK;
}
