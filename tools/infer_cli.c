/* infer_cli.c: one parser for the options burrow eval, embed and predict share. */
#include "infer_cli.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

enum { O_CKPT = 256, O_MEM, O_CHUNK, O_SCRATCH, O_THREADS, O_DEVICE, O_TF32, O_HELP };

static const struct option shared[] = {
	{"checkpoint", required_argument, 0, O_CKPT}, {"mem", required_argument, 0, O_MEM},
	{"eval-chunk", required_argument, 0, O_CHUNK}, {"scratch", required_argument, 0, O_SCRATCH},
	{"threads", required_argument, 0, O_THREADS},  {"help", no_argument, 0, O_HELP},
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
