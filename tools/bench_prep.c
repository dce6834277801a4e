/* bench_prep.c: burrow bench prep: generate an OGB-style zip (csv.gz members, products
 * layout), then time `zcat` over its csv.gz members (the decompression floor) against
 * `burrow prep` with ample memory and with a small --mem, in one run; report peak RSS
 * and whether the two preps wrote the same bytes. */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>

static void help(void)
{
	printf("usage: burrow bench prep [--dir DIR] [--edges E] [--nodes N] [--dim D] [--mem BYTES] [--keep]\n\n"
	       "Write an OGB-style zip with E random edges among N nodes and N x D features (\"%%.6f\" text,\n"
	       "gzip level 1 members, stored in the zip) under DIR, unless DIR/bench.zip exists. Then, in\n"
	       "one run: zcat over the csv.gz members to /dev/null, burrow prep with the default memory,\n"
	       "and burrow prep --mem BYTES; print wall times, the ratio prep / zcat, peak RSS of each\n"
	       "prep, and whether the two datasets are byte-identical (cmp).\n\n"
	       "  --dir DIR     scratch folder (required: needs about 3 GB at the defaults)\n"
	       "  --edges E     50000000\n"
	       "  --nodes N     2000000\n"
	       "  --dim D       100\n"
	       "  --mem BYTES   256M\n"
	       "  --keep        keep the datasets written (the zip and members are always kept)\n");
}

static uint64_t rs = 0x2545f4914f6cdd1dull;
static inline uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

/* A gzip file written through one deflate stream (level 1). */
typedef struct gzw {
	FILE *f;
	z_stream z;
	char *in, *out;
	size_t fill;
} gzw;

#define GZBUF ((size_t)1 << 20)

static int gz_open(gzw *g, const char *path)
{
	memset(g, 0, sizeof *g);
	g->f = fopen(path, "wb");
	g->in = malloc(GZBUF);
	g->out = malloc(GZBUF);
	if (!g->f || !g->in || !g->out || deflateInit2(&g->z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return cli_fail("bench prep", "%s: cannot write: %s", path, strerror(errno));
	return 0;
}

static int gz_pump(gzw *g, int flush)
{
	g->z.next_in = (Bytef *)g->in;
	g->z.avail_in = (uInt)g->fill;
	do {
		g->z.next_out = (Bytef *)g->out;
		g->z.avail_out = (uInt)GZBUF;
		deflate(&g->z, flush);
		size_t n = GZBUF - g->z.avail_out;
		if (n && fwrite(g->out, 1, n, g->f) != n)
			return cli_fail("bench prep", "write failed: %s", strerror(errno));
	} while (g->z.avail_out == 0);
	g->fill = 0;
	return 0;
}

/* Room for at least 64 more bytes. */
static inline char *gz_room(gzw *g)
{
	if (g->fill + 4096 > GZBUF && gz_pump(g, Z_NO_FLUSH))
		return NULL;
	return g->in + g->fill;
}

static int gz_close(gzw *g)
{
	int st = gz_pump(g, Z_FINISH);
	deflateEnd(&g->z);
	if (fclose(g->f) != 0 && !st)
		st = cli_fail("bench prep", "close failed: %s", strerror(errno));
	free(g->in);
	free(g->out);
	return st;
}

static inline size_t put_u(char *p, uint64_t v)
{
	char t[24];
	size_t n = 0;
	do
		t[n++] = (char)('0' + v % 10);
	while (v /= 10);
	for (size_t i = 0; i < n; i++)
		p[i] = t[n - 1 - i];
	return n;
}

/* "-0.123456": a value in (-1, 1) with six decimals, as OGB's feature files hold. */
static inline size_t put_feat(char *p, uint64_t r)
{
	size_t k = 0;
	int64_t v = (int64_t)(r % 1999999) - 999999;
	if (v < 0) {
		p[k++] = '-';
		v = -v;
	}
	p[k++] = '0';
	p[k++] = '.';
	for (int i = 5; i >= 0; i--) {
		p[k + (size_t)i] = (char)('0' + v % 10);
		v /= 10;
	}
	return k + 6;
}

static int write_members(const char *dir, int64_t e, int64_t n, int64_t d)
{
	char path[4096];
	gzw g;
	double t0 = cli_now();
	snprintf(path, sizeof path, "%s/members/edge.csv.gz", dir);
	if (gz_open(&g, path))
		return EXIT_FAIL;
	for (int64_t i = 0; i < e; i++) {
		char *p = gz_room(&g);
		if (!p)
			return EXIT_FAIL;
		size_t k = put_u(p, rnd() % (uint64_t)n);
		p[k++] = ',';
		k += put_u(p + k, rnd() % (uint64_t)n);
		p[k++] = '\n';
		g.fill += k;
	}
	if (gz_close(&g))
		return EXIT_FAIL;
	snprintf(path, sizeof path, "%s/members/node-feat.csv.gz", dir);
	if (gz_open(&g, path))
		return EXIT_FAIL;
	for (int64_t v = 0; v < n; v++) {
		for (int64_t j = 0; j < d; j++) {
			char *p = gz_room(&g);
			if (!p)
				return EXIT_FAIL;
			size_t k = put_feat(p, rnd());
			p[k++] = j + 1 < d ? ',' : '\n';
			g.fill += k;
		}
	}
	if (gz_close(&g))
		return EXIT_FAIL;
	/* labels, counts, a random 8 / 2 / 90 split as in products */
	const char *small[] = {"node-label", "num-node-list", "num-edge-list", "train", "valid", "test"};
	for (int m = 0; m < 6; m++) {
		snprintf(path, sizeof path, "%s/members/%s.csv.gz", dir, small[m]);
		if (gz_open(&g, path))
			return EXIT_FAIL;
		if (m == 1 || m == 2) {
			char *p = gz_room(&g);
			size_t k = put_u(p, (uint64_t)(m == 1 ? n : e));
			p[k++] = '\n';
			g.fill += k;
		}
		for (int64_t v = 0; (m == 0 || m >= 3) && v < n; v++) {
			uint64_t cls = (uint64_t)v * 2654435761u % 1000;
			if (m >= 3 && (int)(cls < 80 ? 3 : cls < 100 ? 4 : 5) != m)
				continue;
			char *p = gz_room(&g);
			if (!p)
				return EXIT_FAIL;
			size_t k = put_u(p, m == 0 ? rnd() % 47 : (uint64_t)v);
			p[k++] = '\n';
			g.fill += k;
		}
		if (gz_close(&g))
			return EXIT_FAIL;
	}
	fprintf(stderr, "burrow: bench prep: wrote the csv.gz members in %.1f s\n", cli_now() - t0);
	return 0;
}

static int write_zip(const char *dir)
{
	static const char *const members[][2] = {
		{"edge", "raw/edge.csv.gz"},           {"node-feat", "raw/node-feat.csv.gz"},
		{"node-label", "raw/node-label.csv.gz"}, {"num-node-list", "raw/num-node-list.csv.gz"},
		{"num-edge-list", "raw/num-edge-list.csv.gz"}, {"train", "split/sales_ranking/train.csv.gz"},
		{"valid", "split/sales_ranking/valid.csv.gz"}, {"test", "split/sales_ranking/test.csv.gz"},
	};
	char path[4096], name[256];
	int err;
	snprintf(path, sizeof path, "%s/bench.zip.tmp", dir);
	zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
	if (!za)
		return cli_fail("bench prep", "%s: cannot create the zip (libzip error %d)", path, err);
	zip_file_add(za, "bench/RELEASE_v1.txt", zip_source_buffer(za, "bench\n", 6, 0), 0);
	for (size_t i = 0; i < sizeof members / sizeof members[0]; i++) {
		char src[4096];
		snprintf(src, sizeof src, "%s/members/%s.csv.gz", dir, members[i][0]);
		snprintf(name, sizeof name, "bench/%s", members[i][1]);
		zip_source_t *s = zip_source_file(za, src, 0, -1);
		zip_int64_t idx = s ? zip_file_add(za, name, s, 0) : -1;
		if (idx < 0)
			return cli_fail("bench prep", "%s: %s", src, zip_strerror(za));
		zip_set_file_compression(za, (zip_uint64_t)idx, ZIP_CM_STORE, 0);
	}
	if (zip_close(za) < 0)
		return cli_fail("bench prep", "%s: %s", path, zip_strerror(za));
	char final[4096];
	snprintf(final, sizeof final, "%s/bench.zip", dir);
	if (rename(path, final) < 0)
		return cli_fail("bench prep", "%s: rename: %s", final, strerror(errno));
	return 0;
}

/* Run a shell command; wall seconds and the child's peak RSS in KiB. */
static int timed(const char *cmd, double *wall, long *rss_kib)
{
	double t0 = cli_now();
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	struct rusage ru;
	if (pid < 0 || wait4(pid, &status, 0, &ru) < 0)
		return -1;
	*wall = cli_now() - t0;
	*rss_kib = ru.ru_maxrss;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static double loadavg(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

int bench_prep(int argc, char **argv)
{
	static const struct option lo[] = {{"dir", required_argument, 0, 'd'},   {"edges", required_argument, 0, 'e'},
					   {"nodes", required_argument, 0, 'n'}, {"dim", required_argument, 0, 'D'},
					   {"mem", required_argument, 0, 'm'},   {"keep", no_argument, 0, 'k'},
					   {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
	const char *dir = NULL, *mem = "256M";
	int64_t e = 50000000, n = 2000000, d = 100, v;
	bool keep = false;
	int c;
	while ((c = cli_getopt("bench prep", argc, argv, "h", lo)) != -1) {
		switch (c) {
		case '?': return EXIT_USAGE;
		case 'h': help(); return EXIT_OK;
		case 'd': dir = optarg; break;
		case 'm':
			if (!cli_bytes(optarg, &v) || v < 1)
				return cli_usage("bench prep", "--mem wants a size, got '%s'", optarg);
			mem = optarg;
			break;
		case 'k': keep = true; break;
		default:
			if (!cli_i64(optarg, &v) || v < 1)
				return cli_usage("bench prep", "wants a positive count, got '%s'", optarg);
			if (c == 'e')
				e = v;
			else if (c == 'n')
				n = v;
			else
				d = v;
		}
	}
	if (!dir)
		return cli_usage("bench prep", "--dir is required (a scratch folder with a few GB free)");
	char path[4096], cmd[16384], self[4096];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	if (sl <= 0)
		return cli_fail("bench prep", "cannot find the burrow binary");
	self[sl] = '\0';
	snprintf(path, sizeof path, "%s/bench.zip", dir);
	struct stat sb;
	if (stat(path, &sb) < 0) {
		snprintf(cmd, sizeof cmd, "mkdir -p '%s/members'", dir);
		if (system(cmd) != 0 || write_members(dir, e, n, d) || write_zip(dir))
			return EXIT_FAIL;
		stat(path, &sb);
	} else {
		fprintf(stderr, "burrow: bench prep: reusing %s (the options describe how it was made)\n", path);
	}
	double tz, t1, t2;
	long rz, r1, r2;
	char b[32];
	printf("zip %s (%s), load average %.2f on %ld cores before the runs\n", path,
	       cli_human_bytes((double)sb.st_size, b, sizeof b), loadavg(), sysconf(_SC_NPROCESSORS_ONLN));
	snprintf(cmd, sizeof cmd, "zcat '%s'/members/*.csv.gz > /dev/null", dir);
	if (timed(cmd, &tz, &rz) != 0)
		return cli_fail("bench prep", "zcat failed");
	printf("zcat over the csv.gz members     %8.2f s\n", tz);
	snprintf(cmd, sizeof cmd, "rm -rf '%s/ample' '%s/small' && '%s' prep '%s' --out '%s/ample' --quiet", dir, dir, self,
		 path, dir);
	if (timed(cmd, &t1, &r1) != 0)
		return cli_fail("bench prep", "prep failed: %s", cmd);
	printf("burrow prep (default --mem)      %8.2f s  %5.2fx zcat  peak RSS %s\n", t1, t1 / tz,
	       cli_human_bytes((double)r1 * 1024, b, sizeof b));
	snprintf(cmd, sizeof cmd, "'%s' prep '%s' --out '%s/small' --mem %s --quiet", self, path, dir, mem);
	if (timed(cmd, &t2, &r2) != 0)
		return cli_fail("bench prep", "prep failed: %s", cmd);
	printf("burrow prep --mem %-6s          %8.2f s  %5.2fx zcat  peak RSS %s\n", mem, t2, t2 / tz,
	       cli_human_bytes((double)r2 * 1024, b, sizeof b));
	snprintf(cmd, sizeof cmd,
		 "cd '%s' && for f in indptr.npy indices.npy features.npy labels.npy split/train.npy split/valid.npy "
		 "split/test.npy meta.json; do cmp ample/$f small/$f || exit 1; done",
		 dir);
	int same = system(cmd) == 0;
	printf("byte-identical outputs (cmp)     %s\n", same ? "yes" : "NO");
	printf("load average after the runs      %.2f\n", loadavg());
	if (!keep) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s/ample' '%s/small'", dir, dir);
		if (system(cmd) != 0)
			fprintf(stderr, "burrow: bench prep: could not remove the datasets in %s\n", dir);
	}
	return same ? EXIT_OK : EXIT_FAIL;
}
