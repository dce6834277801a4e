/* infer_cli.c: one parser for the options burrow eval, embed and predict share. */
#include "infer_cli.h"
#include "train_cli.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { O_CKPT = 256, O_MEM, O_CHUNK, O_SCRATCH, O_THREADS, O_DEVICE, O_TF32, O_HELP, O_SPLIT_NAME };

static const struct option shared[] = {
	{"checkpoint", required_argument, 0, O_CKPT}, {"mem", required_argument, 0, O_MEM},
	{"eval-chunk", required_argument, 0, O_CHUNK}, {"scratch", required_argument, 0, O_SCRATCH},
	{"threads", required_argument, 0, O_THREADS},  {"help", no_argument, 0, O_HELP},
	{"split-name", required_argument, 0, O_SPLIT_NAME},
	{"device", required_argument, 0, O_DEVICE},    {"tf32", no_argument, 0, O_TF32},
};
#define N_SHARED (sizeof shared / sizeof *shared)
#define N_NO_DEVICE (N_SHARED - 2) /* the last two are --device and --tf32 */
#define MAX_OWN 16

/* One shared option c with its argument into a: 0, or EXIT_USAGE after printing why. */
static int take_shared(const char *cmd, infer_args *a, int c, const char *arg)
{
	int64_t v;
	switch (c) {
	case O_CKPT: a->ckpt = arg; break;
	case O_MEM:
		if (!cli_bytes(arg, &a->o.mem_bytes) || a->o.mem_bytes < 1)
			return cli_usage(cmd, "--mem wants a byte count, got '%s'", arg);
		break;
	case O_CHUNK:
		if (!cli_i64(arg, &v) || v < 1)
			return cli_usage(cmd, "--eval-chunk wants a positive integer, got '%s'", arg);
		a->o.eval_chunk = v;
		break;
	case O_SCRATCH: a->o.scratch_dir = arg; break;
	case O_THREADS:
		if (!cli_i64(arg, &v) || v < 1 || v > 4096)
			return cli_usage(cmd, "--threads wants an integer in [1, 4096], got '%s'", arg);
		a->o.threads = (int)v;
		break;
	case O_DEVICE:
		if (burrow_device_check(arg) == BURROW_E_INVAL)
			return cli_usage(cmd, "--device wants cpu, cuda or cuda:N, got '%s'", arg);
		a->o.device = arg;
		break;
	case O_TF32: a->o.tf32 = true; break;
	case O_SPLIT_NAME: train_cli_use_split(arg); break;
	default: return EXIT_USAGE;
	}
	return 0;
}

int infer_args_parse(const infer_cmd *cmd, int argc, char **argv, infer_args *a)
{
	struct option lo[N_SHARED + MAX_OWN + 1];
	size_t n = cmd->device ? N_SHARED : N_NO_DEVICE;
	memcpy(lo, shared, n * sizeof *lo);
	for (const struct option *p = cmd->own; p && p->name; p++) {
		assert(n < N_SHARED + MAX_OWN && p->val >= INFER_OWN);
		lo[n++] = *p;
	}
	lo[n] = (struct option){0, 0, 0, 0};
	burrow_train_defaults(&a->o);
	a->ckpt = a->dir = NULL;
	int c, rc = 0;
	while (!rc && (c = cli_getopt(cmd->name, argc, argv, "h", lo)) != -1) {
		if (c == '?')
			return EXIT_USAGE;
		if (c == 'h' || c == O_HELP) {
			cmd->help();
			return -1;
		}
		rc = c >= INFER_OWN ? cmd->take(a, cmd->self, c, optarg) : take_shared(cmd->name, a, c, optarg);
	}
	if (rc)
		return rc;
	if (argc - optind != 1)
		return cli_usage(cmd->name, "expected one dataset directory");
	a->dir = argv[optind];
	return 0;
}

void infer_args_progress(infer_args *a, cli_progress *pb)
{
	cli_progress_init(pb, false);
	pb->erase = true;
	a->o.progress = cli_progress_cb;
	a->o.progress_user = pb;
}

int infer_out_free(const char *cmd, const char *out, bool force)
{
	struct stat sb;
	if (!force && stat(out, &sb) == 0)
		return cli_fail(cmd, "%s exists (use --force to replace it)", out);
	return 0;
}

/* OUT minus ".npy", then suffix. */
static int sidecar(char *buf, size_t cap, const char *out, const char *suffix)
{
	size_t l = strlen(out);
	if (l > 4 && !strcmp(out + l - 4, ".npy"))
		l -= 4;
	return snprintf(buf, cap, "%.*s%s", (int)l, out, suffix) < (int)cap ? 0 : -1;
}

/* rows int64 [n] as an .npy (version 1.0) at path. */
static int save_i64(const char *path, const int64_t *v, int64_t n)
{
	char hdr[128];
	int k = snprintf(hdr, sizeof hdr, "{'descr': '<i8', 'fortran_order': False, 'shape': (%lld,), }", (long long)n);
	int pad = 64 - (10 + k + 1) % 64;
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	unsigned short hl = (unsigned short)(k + pad + 1);
	fwrite("\x93NUMPY\x01\x00", 1, 8, f);
	fputc(hl & 0xff, f);
	fputc(hl >> 8, f);
	fwrite(hdr, 1, (size_t)k, f);
	for (int i = 0; i < pad; i++)
		fputc(' ', f);
	fputc('\n', f);
	fwrite(v, sizeof *v, (size_t)n, f);
	return fclose(f) == 0 ? 0 : -1;
}

/* The lines of a text file (one id each) into *lines ([count], each in *text; free both). */
static int read_lines(const char *path, char **text, char ***lines, int64_t *count)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	*text = malloc((size_t)len + 1);
	int64_t c = 0;
	if (*text && fread(*text, 1, (size_t)len, f) == (size_t)len) {
		(*text)[len] = '\0';
		for (long i = 0; i < len; i++)
			c += (*text)[i] == '\n';
	}
	fclose(f);
	if (!*text || !(*lines = malloc((size_t)(c ? c : 1) * sizeof **lines)))
		return -1;
	char *p = *text;
	for (int64_t i = 0; i < c; i++) {
		(*lines)[i] = p;
		p = strchr(p, '\n');
		*p++ = '\0';
	}
	*count = c;
	return 0;
}

/* Row i's node: ids[i], or i. */
static int64_t row_node(const int64_t *ids, int64_t i) { return ids ? ids[i] : i; }

int infer_orig_ids(const char *cmd, const char *dir, const char *out, const int64_t *ids, int64_t n)
{
	char path[4096], dst[4096];
	struct stat sb;
	int rc = 0;
	if (snprintf(path, sizeof path, "%s/orig_ids.npy", dir) < (int)sizeof path && stat(path, &sb) == 0) {
		burrow_npy_array a;
		int st = burrow_npy_read(path, &a);
		if (st < 0)
			return cli_lib_fail(cmd, st);
		int64_t *v = malloc((size_t)(n ? n : 1) * sizeof *v);
		if (!v || a.dtype != BURROW_DTYPE_I64 || sidecar(dst, sizeof dst, out, ".orig_ids.npy"))
			rc = cli_fail(cmd, "%s: cannot map the rows back to the original ids", path);
		for (int64_t i = 0; !rc && i < n; i++)
			if (row_node(ids, i) < 0 || row_node(ids, i) >= a.count)
				rc = cli_fail(cmd, "%s: %lld ids, none for node %lld", path, (long long)a.count,
					      (long long)row_node(ids, i));
			else
				v[i] = ((const int64_t *)a.data)[row_node(ids, i)];
		if (!rc && save_i64(dst, v, n))
			rc = cli_fail(cmd, "%s: cannot write", dst);
		free(v);
		burrow_npy_free(&a);
	} else if (snprintf(path, sizeof path, "%s/orig_ids.txt", dir) < (int)sizeof path && stat(path, &sb) == 0) {
		char *text = NULL, **lines = NULL;
		int64_t c = 0;
		FILE *f = NULL;
		if (read_lines(path, &text, &lines, &c) || sidecar(dst, sizeof dst, out, ".orig_ids.txt") ||
		    !(f = fopen(dst, "w")))
			rc = cli_fail(cmd, "%s: cannot map the rows back to the original ids", path);
		for (int64_t i = 0; !rc && i < n; i++)
			if (row_node(ids, i) < 0 || row_node(ids, i) >= c)
				rc = cli_fail(cmd, "%s: %lld ids, none for node %lld", path, (long long)c, (long long)row_node(ids, i));
			else
				fprintf(f, "%s\n", lines[row_node(ids, i)]);
		if (f && fclose(f) != 0)
			rc = cli_fail(cmd, "%s: cannot write", dst);
		free(text);
		free(lines);
	} else {
		return 0;
	}
	if (!rc)
		fprintf(stderr, "burrow: %s: wrote %s (row i's original id, from %s)\n", cmd, dst, path);
	return rc;
}
