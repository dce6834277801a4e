/* bench_io.c: burrow bench io DIR: feature gathers per engine, cold, against fio's random read
 * of the same file, block size and queue depth. */
#define _GNU_SOURCE
#include "cli.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define BW_BENCH_MIN(a, b) ((a) < (b) ? (a) : (b))
#define BW_BENCH_MAX(a, b) ((a) > (b) ? (a) : (b))

static void help(void)
{
	printf("usage: burrow bench io DIR [--rows N] [--batch B] [--qd Q] [--threads T] [--engine E]\n"
	       "                       [--cache BYTES] [--policy clock|degree] [--trace uniform|degree]\n"
	       "                       [--max-read BYTES] [--inflight K] [--repeat R] [--seed S]\n"
	       "                       [--fio-seconds S] [--no-fio] [--mmap-random] [--json]\n\n"
	       "Gather N random feature rows, B per gather with K gathers in flight, with each engine,\n"
	       "cold (O_DIRECT bypasses the page cache; for mmap the file's pages are dropped first with\n"
	       "posix_fadvise(DONTNEED)), and print rows/s, read requests per second (IOPS), MB/s and\n"
	       "read latency p50/p99. When fio is installed, fio's random read of the same file (block\n"
	       "size = one row rounded out to the read alignment, the same queue depth split over T\n"
	       "jobs, O_DIRECT, io_uring) runs too, and the uring engine's rows/s is printed as a\n"
	       "fraction of fio's IOPS. With --repeat R each engine runs R times (interleaved) and the\n"
	       "median run by rows/s is printed.\n\n"
	       "DIR is a dataset directory, a directory holding features.npy, or a .npy file.\n\n"
	       "  --rows N          rows gathered per run (200000)\n"
	       "  --batch B         rows per gather (4096)\n"
	       "  --inflight K      gathers in flight (2)\n"
	       "  --qd Q            reads in flight in the store (128)\n"
	       "  --threads T       store threads; 0 = each engine's default (0)\n"
	       "  --engine E        uring, pread, mmap or all (all)\n"
	       "  --max-read BYTES  largest merged read (64K)\n"
	       "  --cache BYTES     cache budget (0: none)\n"
	       "  --policy P        clock (dynamic, default) or degree (static; needs a dataset)\n"
	       "  --trace T         uniform ids, or degree: ids drawn in proportion to their degree,\n"
	       "                    as neighbour sampling touches them (needs a dataset) (uniform)\n"
	       "  --repeat R        runs per engine; medians are printed (1)\n"
	       "  --seed S          ids depend only on the seed and the run (0)\n"
	       "  --fio-seconds S   fio's run time (5)\n"
	       "  --no-fio          skip fio\n"
	       "  --mmap-random     mmap engine with madvise(MADV_RANDOM): one page per fault, no\n"
	       "                    readahead (default: the kernel's readahead, as NumPy memmap has)\n"
	       "  --json            one JSON object per line and engine\n");
}

typedef struct run {
	double seconds, rows_per_s, iops, mb_per_s, p50, p99, reads_per_row, bytes_per_row;
	uint64_t rows, reads, bytes_read, hits, misses;
	uint64_t rounded_bytes; /* the requested rows, each rounded out to whole blocks */
	int64_t kernel_bytes;   /* what the kernel read from the disk for the run (/proc/self/io
				   read_bytes: O_DIRECT reads, page faults and their readahead); -1 unknown */
	int threads, qd;
	int64_t rss_peak, lib_peak;
	int fill;             /* how a static cache was filled (enum burrow_cache_fill) */
	double fill_seconds;  /* and how long it took */
	uint64_t fill_bytes;  /* bytes it asked of the file */
} run;

typedef struct bench {
	const char *path;
	burrow_dataset *ds;
	const burrow_csr *g;
	int64_t rows, batch, inflight, seed;
	burrow_store_opts opts;
	int64_t cache;
	bool degree_cache, degree_trace;
	const burrow_store_info *info; /* of the last store opened */
	size_t row_bytes, block_bytes, out_row_bytes;
	int64_t num_rows, dim;
	burrow_dtype dtype;
	bool direct;
	int64_t data_offset;
} bench;

static uint64_t mix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

/* Batch b's ids of run r: a function of (seed, r, b) only. */
static void make_ids(const bench *b, int r, int64_t batch, int64_t *ids, int64_t n)
{
	uint64_t key = mix(mix((uint64_t)b->seed) ^ mix((uint64_t)r * 0x100000001b3ull + 7) ^ (uint64_t)batch);
	for (int64_t i = 0; i < n; i++) {
		uint64_t x = mix(key + (uint64_t)i);
		if (b->degree_trace && b->g->num_edges > 0)
			ids[i] = burrow_csr_index(b->g, (int64_t)(x % (uint64_t)b->g->num_edges));
		else
			ids[i] = (int64_t)(x % (uint64_t)b->num_rows);
	}
}

static int64_t peak_rss(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (int64_t)ru.ru_maxrss * 1024;
}

/* Bytes this process has caused the kernel to read from storage (all threads, including
 * io_uring's workers and readahead for page faults), or -1 when /proc/self/io is missing. */
static int64_t kernel_read_bytes(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	if (!f)
		return -1;
	char line[128];
	long long v = -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "read_bytes: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* Drop the file's cached pages (what an mmap run would otherwise find warm). */
static void drop_cache(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO: the store refuses it next */
	if (fd < 0)
		return;
	fdatasync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

static int one_run(bench *b, int engine, int rep, run *out)
{
	memset(out, 0, sizeof *out);
	drop_cache(b->path);
	burrow_store_opts o = b->opts;
	o.engine = engine;
	burrow_store *s;
	int st = burrow_store_open(&s, b->path, &o);
	if (st < 0)
		return st;
	const burrow_store_info *in = burrow_store_get_info(s);
	b->row_bytes = in->row_bytes;
	b->out_row_bytes = in->out_row_bytes;
	b->block_bytes = in->block_bytes;
	b->num_rows = in->num_rows;
	b->dim = in->dim;
	b->dtype = in->file_dtype;
	b->direct = in->direct || b->direct;
	b->data_offset = in->data_offset;
	if (engine == BURROW_STORE_URING && in->engine != BURROW_STORE_URING) {
		burrow_store_close(s);
		return BURROW_E_UNSUPPORTED; /* the warning said why */
	}
	if (b->cache > 0) {
		st = b->degree_cache ? burrow_store_cache_degree(s, b->g, (size_t)b->cache)
				     : burrow_store_cache_clock(s, (size_t)b->cache);
		if (st < 0)
			goto out_close;
	}
	if (b->degree_trace) { /* page the graph's indices in: the trace must not wait on them */
		volatile int64_t sink = 0;
		int64_t step = 4096 / b->g->index_width;
		for (int64_t e = 0; e < b->g->num_edges; e += step)
			sink += burrow_csr_index(b->g, e);
		(void)sink;
	}
	burrow_store_reset_stats(s);
	burrow_mem_reset_peak();

	const int64_t K = b->inflight, B = b->batch, nb = (b->rows + B - 1) / B;
	int64_t *ids = malloc((size_t)B * sizeof *ids);
	char *buf = malloc((size_t)(K * B) * in->out_row_bytes);
	burrow_store_ticket **tk = calloc((size_t)K, sizeof *tk);
	if (!ids || !buf || !tk) {
		st = BURROW_E_NOMEM;
		goto out_free;
	}
	uint64_t rounded = 0;
	const int64_t k0 = kernel_read_bytes();
	double t0 = cli_now();
	for (int64_t i = 0; i < nb + K; i++) {
		int64_t slot = i % K;
		if (tk[slot]) {
			int w = burrow_store_wait(s, tk[slot]);
			tk[slot] = NULL;
			if (w < 0 && st == 0)
				st = w;
		}
		if (st == 0 && i < nb) {
			int64_t n = BW_BENCH_MIN(B, b->rows - i * B);
			make_ids(b, rep, i, ids, n);
			for (int64_t k = 0; k < n; k++) {
				int64_t ro = in->data_offset + ids[k] * (int64_t)in->row_bytes, A = (int64_t)in->block_bytes;
				rounded += (uint64_t)((ro + (int64_t)in->row_bytes + A - 1) / A * A - ro / A * A);
			}
			st = burrow_store_submit(s, ids, (size_t)n, buf + (size_t)(slot * B) * in->out_row_bytes, &tk[slot]);
		}
	}
	double secs = cli_now() - t0;
	const int64_t k1 = kernel_read_bytes();
	if (st == 0) {
		burrow_store_stats ss = {.size = sizeof ss};
		burrow_store_get_stats(s, &ss);
		size_t lib_peak;
		burrow_mem_stats(NULL, &lib_peak);
		*out = (run){.seconds = secs, .rows = ss.rows, .reads = ss.reads, .bytes_read = ss.bytes_read,
			     .hits = ss.cache_hits, .misses = ss.cache_misses, .p50 = ss.read_p50_us, .p99 = ss.read_p99_us,
			     .threads = in->threads, .qd = in->queue_depth, .rss_peak = peak_rss(),
			     .lib_peak = (int64_t)lib_peak};
		out->rounded_bytes = rounded;
		out->kernel_bytes = k0 >= 0 && k1 >= k0 ? k1 - k0 : -1;
		out->fill = in->cache_fill;
		out->fill_seconds = in->cache_fill_seconds;
		out->fill_bytes = in->cache_fill_bytes;
		out->rows_per_s = (double)ss.rows / secs;
		out->iops = (double)ss.reads / secs;
		out->mb_per_s = (double)ss.bytes_read / secs / 1e6;
		out->reads_per_row = ss.rows ? (double)ss.reads / (double)ss.rows : 0;
		out->bytes_per_row = ss.rows ? (double)ss.bytes_read / (double)ss.rows : 0;
	}
out_free:
	free(tk);
	free(buf);
	free(ids);
out_close:
	burrow_store_close(s);
	return st;
}

/* ------------------------------------------------------------ fio */

static bool have_fio(void)
{
	const char *path = getenv("PATH");
	if (!path)
		return false;
	char *p = strdup(path), *save = NULL;
	bool found = false;
	for (char *d = strtok_r(p, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char f[4096];
		snprintf(f, sizeof f, "%s/fio", *d ? d : ".");
		found = access(f, X_OK) == 0;
	}
	free(p);
	return found;
}

/* Run fio's random read and fill out (iops, MB/s, latency); false with a reason on failure. */
static bool run_fio(const bench *b, int64_t bs, int jobs, int depth, int seconds, run *out, char *why, size_t cap)
{
	char a_file[4200], a_bs[64], a_jobs[64], a_depth[64], a_rt[64];
	snprintf(a_file, sizeof a_file, "--filename=%s", b->path);
	snprintf(a_bs, sizeof a_bs, "--bs=%lld", (long long)bs);
	snprintf(a_jobs, sizeof a_jobs, "--numjobs=%d", jobs);
	snprintf(a_depth, sizeof a_depth, "--iodepth=%d", depth);
	snprintf(a_rt, sizeof a_rt, "--runtime=%d", seconds);
	char *argv[] = {"fio", "--name=burrow-bench-io", a_file, "--readonly", "--rw=randread", a_bs, "--direct=1",
			"--ioengine=io_uring", a_jobs, a_depth, a_rt, "--time_based", "--group_reporting",
			"--randrepeat=0", "--norandommap", "--output-format=json", NULL};
	int pipefd[2];
	if (pipe(pipefd) < 0) {
		snprintf(why, cap, "pipe: %s", strerror(errno));
		return false;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_addclose(&fa, pipefd[0]);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int rc = posix_spawnp(&pid, "fio", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (rc) {
		close(pipefd[0]);
		snprintf(why, cap, "cannot run fio: %s", strerror(rc));
		return false;
	}
	size_t len = 0, size = 1 << 16;
	char *text = malloc(size);
	ssize_t r;
	while (text && (r = read(pipefd[0], text + len, size - len - 1)) > 0) {
		len += (size_t)r;
		if (size - len < 4096) {
			char *t = realloc(text, size *= 2);
			if (!t) {
				free(text);
				text = NULL;
			}
			text = t;
		}
	}
	close(pipefd[0]);
	int status;
	waitpid(pid, &status, 0);
	if (!text || !WIFEXITED(status) || WEXITSTATUS(status)) {
		free(text);
		snprintf(why, cap, "fio failed (exit status %d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return false;
	}
	text[len] = '\0';
	/* fio may print notices before the JSON */
	char *start = strchr(text, '{');
	cJSON *j = start ? cJSON_Parse(start) : NULL;
	cJSON *job = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "jobs"), 0);
	cJSON *rd = cJSON_GetObjectItem(job, "read");
	cJSON *iops = cJSON_GetObjectItem(rd, "iops"), *bw = cJSON_GetObjectItem(rd, "bw_bytes");
	cJSON *pct = cJSON_GetObjectItem(cJSON_GetObjectItem(rd, "clat_ns"), "percentile");
	bool ok = cJSON_IsNumber(iops);
	if (ok) {
		memset(out, 0, sizeof *out);
		out->seconds = seconds;
		out->iops = iops->valuedouble;
		out->rows_per_s = 0;
		out->mb_per_s = cJSON_IsNumber(bw) ? bw->valuedouble / 1e6 : out->iops * (double)bs / 1e6;
		cJSON *p50 = cJSON_GetObjectItem(pct, "50.000000"), *p99 = cJSON_GetObjectItem(pct, "99.000000");
		out->p50 = cJSON_IsNumber(p50) ? p50->valuedouble / 1000 : 0;
		out->p99 = cJSON_IsNumber(p99) ? p99->valuedouble / 1000 : 0;
		out->threads = jobs;
		out->qd = jobs * depth;
	} else {
		snprintf(why, cap, "could not read fio's JSON output");
	}
	cJSON_Delete(j);
	free(text);
	return ok;
}

/* ------------------------------------------------------------ output */

static int cmp_run(const void *a, const void *b)
{
	double x = ((const run *)a)->rows_per_s + ((const run *)a)->iops * 1e-9,
	       y = ((const run *)b)->rows_per_s + ((const run *)b)->iops * 1e-9;
	return (x > y) - (x < y);
}

/* The median run (by rows/s, or IOPS for fio); runs are reordered. */
static run median(run *r, int n)
{
	qsort(r, (size_t)n, sizeof *r, cmp_run);
	return r[(n - 1) / 2];
}

static const char *fill_name(int fill)
{
	return fill == BURROW_FILL_SEQUENTIAL ? "sequential" : fill == BURROW_FILL_RANDOM ? "random" : "none";
}

static void print_json(const char *engine, const run *r, int runs, double fio_iops)
{
	printf("{\"engine\":\"%s\",\"rows\":%llu,\"seconds\":%.6f,\"rows_per_s\":%.1f,\"iops\":%.1f,\"mb_per_s\":%.3f,"
	       "\"bytes_read\":%llu,\"reads\":%llu,\"p50_us\":%.2f,\"p99_us\":%.2f,\"cache_hits\":%llu,"
	       "\"cache_misses\":%llu,\"threads\":%d,\"queue_depth\":%d,\"peak_rss_bytes\":%lld,"
	       "\"lib_peak_bytes\":%lld,\"rounded_bytes\":%llu,\"kernel_read_bytes\":%lld,\"cache_fill\":\"%s\","
	       "\"cache_fill_seconds\":%.6f,\"cache_fill_bytes\":%llu,\"runs\":%d",
	       engine, (unsigned long long)r->rows, r->seconds, r->rows_per_s, r->iops, r->mb_per_s,
	       (unsigned long long)r->bytes_read, (unsigned long long)r->reads, r->p50, r->p99,
	       (unsigned long long)r->hits, (unsigned long long)r->misses, r->threads, r->qd, (long long)r->rss_peak,
	       (long long)r->lib_peak, (unsigned long long)r->rounded_bytes, (long long)r->kernel_bytes,
	       fill_name(r->fill), r->fill_seconds, (unsigned long long)r->fill_bytes, runs);
	if (fio_iops > 0)
		printf(",\"vs_fio\":%.4f", r->rows_per_s / fio_iops);
	printf("}\n");
}

static void print_row(const char *engine, const run *r)
{
	char a[32], b[32], k[32];
	if (r->kernel_bytes >= 0)
		snprintf(k, sizeof k, "%.1f", (double)r->kernel_bytes / 1e6);
	else
		snprintf(k, sizeof k, "-");
	printf("%-6s %12s %10s %9.1f %8.1f %8.1f %9.2f %9.0f %8.2f %4d %5d %10.1f %10s\n", engine,
	       cli_grouped((int64_t)(r->rows_per_s + 0.5), a, sizeof a), cli_grouped((int64_t)(r->iops + 0.5), b, sizeof b),
	       r->mb_per_s, r->p50, r->p99, r->reads_per_row, r->bytes_per_row, r->seconds, r->threads, r->qd,
	       (double)r->bytes_read / 1e6, k);
}

/* ------------------------------------------------------------ main */

enum { O_ROWS = 256, O_BATCH, O_QD, O_THREADS, O_ENGINE, O_CACHE, O_POLICY, O_TRACE, O_MAXREAD, O_INFLIGHT,
       O_REPEAT, O_SEED, O_FIOSEC, O_NOFIO, O_JSON, O_MMAPRANDOM, O_HELP };

/* The features file of DIR (dataset dir, dir with features.npy, or a file); opens the dataset
 * when there is one. */
static int resolve(bench *b, const char *dir, char **owned)
{
	struct stat st;
	if (stat(dir, &st) < 0)
		return cli_fail("bench io", "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		b->path = dir;
		return 0;
	}
	char meta[4096];
	snprintf(meta, sizeof meta, "%s/meta.json", dir);
	if (access(meta, R_OK) == 0) {
		int s = burrow_dataset_open(&b->ds, dir);
		if (s < 0)
			return cli_lib_fail("bench io", s);
		if (cli_homogeneous("bench io", dir, b->ds) != EXIT_OK)
			return EXIT_FAIL;
		b->g = burrow_dataset_graph(b->ds);
		b->path = burrow_dataset_features_path(b->ds);
		if (!b->path)
			return cli_fail("bench io", "%s: the dataset has no features", dir);
		return 0;
	}
	if (asprintf(owned, "%s/features.npy", dir) < 0)
		return cli_fail("bench io", "out of memory");
	b->path = *owned;
	return 0;
}

/* One bench io: the options, then what the runs measured (medians per engine; fio's in
 * med[3]). */
typedef struct io_run {
	bench b;
	int64_t repeat, fio_seconds;
	bool json, no_fio;
	int engines[3], nengines;
	char *owned; /* the features path resolve made, when it made one */
	run med[4];
	bool ran[4], fio_ok, fio_tried;
	char fio_why[256];
	int64_t fio_bs;
	int fio_jobs, fio_depth;
} io_run;

/* The command line into r: 0 to go on, -1 after --help, else the exit code. */
static int io_parse(io_run *r, int argc, char **argv)
{
	static const struct option lo[] = {
		{"rows", required_argument, 0, O_ROWS},        {"batch", required_argument, 0, O_BATCH},
		{"qd", required_argument, 0, O_QD},            {"threads", required_argument, 0, O_THREADS},
		{"engine", required_argument, 0, O_ENGINE},    {"cache", required_argument, 0, O_CACHE},
		{"policy", required_argument, 0, O_POLICY},    {"trace", required_argument, 0, O_TRACE},
		{"max-read", required_argument, 0, O_MAXREAD}, {"inflight", required_argument, 0, O_INFLIGHT},
		{"repeat", required_argument, 0, O_REPEAT},    {"seed", required_argument, 0, O_SEED},
		{"fio-seconds", required_argument, 0, O_FIOSEC}, {"no-fio", no_argument, 0, O_NOFIO},
		{"json", no_argument, 0, O_JSON},              {"mmap-random", no_argument, 0, O_MMAPRANDOM},
		{"help", no_argument, 0, O_HELP},
		{0, 0, 0, 0},
	};
	bench *b = &r->b;
	int64_t v;
	int c;
#define NUM(var, lo_, hi_, bytes)                                                                               \
	do {                                                                                                    \
		if (!((bytes) ? cli_bytes(optarg, &v) : cli_i64(optarg, &v)) || v < (lo_) || v > (hi_))         \
			return cli_usage("bench io", "--%s wants a number in [%lld, %lld], got '%s'",            \
					 lo[c - O_ROWS].name, (long long)(lo_), (long long)(hi_), optarg);       \
		var = v;                                                                                        \
	} while (0)
	while ((c = cli_getopt("bench io", argc, argv, "h", lo)) != -1) {
		switch (c) {
		case O_ROWS: NUM(b->rows, 1, (int64_t)1 << 40, false); break;
		case O_BATCH: NUM(b->batch, 1, (int64_t)1 << 24, false); break;
		case O_QD: NUM(b->opts.queue_depth, 1, 65536, false); break;
		case O_THREADS: NUM(b->opts.threads, 0, 1024, false); break;
		case O_CACHE: NUM(b->cache, 0, (int64_t)1 << 50, true); break;
		case O_MAXREAD: NUM(b->opts.max_read_bytes, 1, (int64_t)1 << 30, true); break;
		case O_INFLIGHT: NUM(b->inflight, 1, 1024, false); break;
		case O_REPEAT: NUM(r->repeat, 1, 1000, false); break;
		case O_SEED: NUM(b->seed, 0, INT64_MAX, false); break;
		case O_FIOSEC: NUM(r->fio_seconds, 1, 3600, false); break;
		case O_NOFIO: r->no_fio = true; break;
		case O_JSON: r->json = true; break;
		case O_MMAPRANDOM: b->opts.mmap_random = true; break;
		case O_ENGINE:
			if (!strcmp(optarg, "all"))
				break;
			r->engines[0] = burrow_store_engine_parse(optarg);
			r->nengines = 1;
			if (r->engines[0] < 0)
				return cli_usage("bench io", "unknown engine '%s' (uring, pread, mmap or all)", optarg);
			break;
		case O_POLICY:
			if (strcmp(optarg, "clock") && strcmp(optarg, "degree"))
				return cli_usage("bench io", "unknown cache policy '%s' (clock or degree)", optarg);
			b->degree_cache = !strcmp(optarg, "degree");
			break;
		case O_TRACE:
			if (strcmp(optarg, "uniform") && strcmp(optarg, "degree"))
				return cli_usage("bench io", "unknown trace '%s' (uniform or degree)", optarg);
			b->degree_trace = !strcmp(optarg, "degree");
			break;
		case 'h':
		case O_HELP: help(); return -1;
		default: return EXIT_USAGE;
		}
	}
#undef NUM
	if (argc - optind != 1)
		return cli_usage("bench io", "expected one dataset directory or .npy file");
	int rc = resolve(b, argv[optind], &r->owned);
	if (!rc && (b->degree_trace || b->degree_cache) && !b->g)
		rc = cli_usage("bench io", "--trace degree and --policy degree need a dataset directory (with meta.json)");
	return rc;
}

/* Every engine --repeat times (and fio beside uring, when it is installed and not refused),
 * then each one's median run. 0, or the exit code after printing why. */
static int io_measure(io_run *r)
{
	const bench *b = &r->b;
	const int64_t repeat = r->repeat;
	run *runs = calloc((size_t)(repeat * 4), sizeof *runs);
	int rc = 0;
	bool use_fio = !r->no_fio && have_fio();
	if (!use_fio)
		snprintf(r->fio_why, sizeof r->fio_why, "%s",
			 r->no_fio ? "skipped (--no-fio)" : "not installed: no fio comparison");
	for (int64_t i = 0; i < repeat && !rc; i++) {
		for (int e = 0; e < r->nengines && !rc; e++) {
			int s = one_run(&r->b, r->engines[e], (int)i, &runs[r->engines[e] * repeat + i]);
			if (s < 0) {
				rc = cli_lib_fail("bench io", s);
				break;
			}
			r->ran[r->engines[e]] = true;
		}
		if (use_fio && !rc && b->block_bytes) {
			/* one row rounded out to whole blocks; the queue depth split over the threads */
			int uring_threads = runs[BURROW_STORE_URING * repeat + i].threads;
			r->fio_jobs = b->opts.threads > 0 ? b->opts.threads : uring_threads > 0 ? uring_threads : 2;
			r->fio_depth = BW_BENCH_MAX(1, b->opts.queue_depth / r->fio_jobs);
			r->fio_bs = (int64_t)((b->row_bytes + b->block_bytes - 1) / b->block_bytes * b->block_bytes);
			r->fio_tried = true;
			if (run_fio(b, r->fio_bs, r->fio_jobs, r->fio_depth, (int)r->fio_seconds, &runs[3 * repeat + i],
				    r->fio_why, sizeof r->fio_why))
				r->fio_ok = true;
			else
				use_fio = false;
		}
	}
	if (!rc) {
		for (int e = 0; e < 3; e++)
			if (r->ran[e])
				r->med[e] = median(runs + e * repeat, (int)repeat);
		if (r->fio_ok)
			r->med[3] = median(runs + 3 * repeat, (int)repeat);
	}
	free(runs);
	return rc;
}

/* --json: one object per engine, and fio's (or why it did not run). */
static void io_print_json(const io_run *r)
{
	const run *med = r->med;
	const double fio_iops = r->fio_ok ? med[3].iops : 0;
	for (int e = 0; e < 3; e++)
		if (r->ran[e])
			print_json(burrow_store_engine_name(e), &med[e], (int)r->repeat, fio_iops);
	if (r->fio_ok)
		printf("{\"engine\":\"fio\",\"rows\":0,\"seconds\":%.3f,\"rows_per_s\":0,\"iops\":%.1f,\"mb_per_s\":%.3f,"
		       "\"bytes_read\":0,\"p50_us\":%.2f,\"p99_us\":%.2f,\"bs\":%lld,\"numjobs\":%d,\"iodepth\":%d,"
		       "\"runs\":%lld}\n",
		       med[3].seconds, med[3].iops, med[3].mb_per_s, med[3].p50, med[3].p99, (long long)r->fio_bs,
		       r->fio_jobs, r->fio_depth, (long long)r->repeat);
	else
		printf("{\"engine\":\"fio\",\"available\":false,\"why\":\"%s\"}\n", r->fio_why);
}

/* The text report's head and table: the file, the trace, a row per engine and fio's. */
static void io_print_table(const io_run *r)
{
	const bench *b = &r->b;
	const run *med = r->med;
	const int64_t repeat = r->repeat;
	char g1[32], h1[32];
	printf("bench io: %s\n", b->path);
	printf("  %s rows x %zu B (%s x %lld), reads aligned to %zu B, %s, %s\n", cli_grouped(b->num_rows, g1, sizeof g1),
	       b->row_bytes, burrow_dtype_name(b->dtype), (long long)b->dim, b->block_bytes,
	       b->direct ? "O_DIRECT" : "page cache", cli_human_bytes((double)b->data_offset + (double)b->num_rows * (double)b->row_bytes, h1, sizeof h1));
	printf("  %s %s rows per run in gathers of %lld (%lld in flight), cache %s%s, %lld run%s per engine%s\n",
	       cli_grouped(b->rows, g1, sizeof g1), b->degree_trace ? "degree-weighted" : "uniform", (long long)b->batch,
	       (long long)b->inflight, b->cache ? cli_human_bytes((double)b->cache, h1, sizeof h1) : "none",
	       b->cache ? (b->degree_cache ? " (static, by degree)" : " (CLOCK)") : "", (long long)repeat,
	       repeat > 1 ? "s" : "", repeat > 1 ? " (medians by rows/s)" : "");
	printf("\nengine       rows/s       IOPS      MB/s   p50 us   p99 us reads/row bytes/row  seconds  thr    qd  asked MB  kernel MB\n");
	for (int e = 0; e < 3; e++)
		if (r->ran[e])
			print_row(burrow_store_engine_name(e), &med[e]);
	if (r->fio_ok) {
		char a[32];
		printf("%-6s %12s %10s %9.1f %8.1f %8.1f %9s %9lld %8.2f %4d %5d\n", "fio", "-",
		       cli_grouped((int64_t)(med[3].iops + 0.5), a, sizeof a), med[3].mb_per_s, med[3].p50, med[3].p99, "1.00",
		       (long long)r->fio_bs, med[3].seconds, r->fio_jobs, r->fio_jobs * r->fio_depth);
	}
	printf("\n");
}

/* The text report's notes under the table: the ratios, reads per row, cache fills and hits,
 * memory. */
static void io_print_notes(const io_run *r)
{
	const run *med = r->med;
	const bool *ran = r->ran;
	const double fio_iops = r->fio_ok ? med[3].iops : 0;
	if (r->fio_ok && ran[BURROW_STORE_URING])
		printf("uring rows/s / fio IOPS = %.3f   (fio randread bs=%lld, %d jobs x iodepth %d, O_DIRECT, io_uring)\n",
		       med[0].rows_per_s / fio_iops, (long long)r->fio_bs, r->fio_jobs, r->fio_depth);
	else if (r->fio_tried && !r->fio_ok)
		printf("fio: %s\n", r->fio_why);
	else if (!r->fio_tried)
		printf("fio: %s\n", r->fio_why);
	for (int e = 0; e < 2; e++)
		if (ran[e] && med[e].rows)
			printf("%s: %.3f reads per row, %.1f bytes read per row; the rows rounded out to whole blocks: "
			       "%.1f bytes per row\n",
			       burrow_store_engine_name(e), med[e].reads_per_row, med[e].bytes_per_row,
			       (double)med[e].rounded_bytes / (double)med[e].rows);
	if (ran[BURROW_STORE_URING] && ran[BURROW_STORE_MMAP] && med[2].rows_per_s > 0)
		printf("uring rows/s / mmap rows/s = %.2fx\n", med[0].rows_per_s / med[2].rows_per_s);
	if (ran[BURROW_STORE_URING] && ran[BURROW_STORE_PREAD] && med[1].rows_per_s > 0)
		printf("uring rows/s / pread rows/s = %.2fx\n", med[0].rows_per_s / med[1].rows_per_s);
	for (int e = 0; e < 3; e++)
		if (ran[e] && med[e].fill != BURROW_FILL_NONE)
			printf("%s cache fill: %s, %.1f MB in %.2f s (%.0f MB/s; not in the times above)\n",
			       burrow_store_engine_name(e), fill_name(med[e].fill), (double)med[e].fill_bytes / 1e6,
			       med[e].fill_seconds, med[e].fill_seconds > 0 ? (double)med[e].fill_bytes / 1e6 / med[e].fill_seconds : 0);
	for (int e = 0; e < 3; e++)
		if (ran[e] && r->b.cache > 0 && med[e].hits + med[e].misses)
			printf("%s cache hits: %.1f%%\n", burrow_store_engine_name(e),
			       100.0 * (double)med[e].hits / (double)(med[e].hits + med[e].misses));
	char r1[32];
	printf("asked MB: what the engine's reads requested (mmap: the rows' blocks it touched); kernel MB: what\n"
	       "the kernel read from the disk meanwhile (/proc/self/io read_bytes: readahead included)\n");
	printf("memory: peak RSS %s (process, all runs); library peak per run:",
	       cli_human_bytes((double)peak_rss(), r1, sizeof r1));
	for (int e = 0; e < 3; e++)
		if (ran[e])
			printf(" %s %s", burrow_store_engine_name(e), cli_human_bytes((double)med[e].lib_peak, r1, sizeof r1));
	printf("\n");
}

int bench_io(int argc, char **argv)
{
	io_run r = {
		.b = {.rows = 200000, .batch = 4096, .inflight = 2},
		.repeat = 1,
		.fio_seconds = 5,
		.engines = {BURROW_STORE_URING, BURROW_STORE_PREAD, BURROW_STORE_MMAP},
		.nengines = 3,
	};
	burrow_store_defaults(&r.b.opts);
	int rc = io_parse(&r, argc, argv);
	if (!rc && !(rc = io_measure(&r))) {
		if (r.json) {
			io_print_json(&r);
		} else {
			io_print_table(&r);
			io_print_notes(&r);
		}
	}
	burrow_dataset_close(r.b.ds);
	free(r.owned);
	return rc < 0 ? EXIT_OK : rc;
}
