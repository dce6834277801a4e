/* train_cli.c: restoring a trainer from a checkpoint for burrow eval, embed and predict; the
 * pipeline options burrow train and burrow bench train parse alike. */
#define _GNU_SOURCE
#include "train_cli.h"

#include "cli.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *resolve(const char *ckpt)
{
	struct stat sb;
	char *p = NULL;
	if (stat(ckpt, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		if (asprintf(&p, "%s/best.ckpt", ckpt) < 0)
			return NULL;
		if (stat(p, &sb) == 0)
			return p;
		free(p);
		if (asprintf(&p, "%s/last.ckpt", ckpt) < 0)
			return NULL;
		return p;
	}
	if (asprintf(&p, "%s", ckpt) < 0)
		return NULL;
	return p;
}

int train_cli_checkpoint_split(const char *cmd, const char *path, burrow_train_opts *o)
{
	burrow_train_opts ck = *o;
	int st = burrow_checkpoint_read_opts(path, &ck);
	if (st < 0)
		return cli_lib_fail(cmd, st);
	const double *a = o->split, *b = ck.split;
	if (a[0] + a[1] + a[2] > 0 && (a[0] != b[0] || a[1] != b[1] || a[2] != b[2])) {
		if (b[0] + b[1] + b[2] > 0)
			return cli_fail(cmd, "%s: the model trained on a random split %g,%g,%g drawn from seed %" PRIu64
					     "; --split %g,%g,%g differs (leave it out: the checkpoint's is used)",
					path, b[0], b[1], b[2], ck.seed, a[0], a[1], a[2]);
		return cli_fail(cmd, "%s: the model trained on the dataset's splits; --split %g,%g,%g differs (leave it out)",
				path, a[0], a[1], a[2]);
	}
	memcpy(o->split, b, sizeof o->split);
	o->seed = ck.seed;
	return 0;
}

void train_cli_resume_warn(const char *cmd, const char *path, const burrow_train_opts *o)
{
	burrow_train_opts ck = *o;
	if (burrow_checkpoint_read_opts(path, &ck) < 0)
		return;
	static const char *const names[3] = {"lr", "weight decay", "momentum"};
	const double was[3] = {ck.lr, ck.weight_decay, ck.momentum}, now[3] = {o->lr, o->weight_decay, o->momentum};
	char a[192] = "", b[192] = "";
	for (int i = 0; i < 3; i++)
		if (was[i] != now[i]) {
			snprintf(a + strlen(a), sizeof a - strlen(a), "%s%s %g", *a ? ", " : "", names[i], was[i]);
			snprintf(b + strlen(b), sizeof b - strlen(b), "%s%s %g", *b ? ", " : "", names[i], now[i]);
		}
	if (*a)
		fprintf(stderr, "burrow: %s: warning: %s trained with %s, this run uses %s (--resume takes --lr, "
				"--weight-decay and --momentum from the command line or their defaults)\n",
			cmd, path, a, b);
}

/* A checkpoint's model against the dataset's kind: a typed model (rgcn, rsage, rgat) for a
 * homogeneous dataset, or a homogeneous one for a typed dataset, refused naming the file
 * before the trainer opens (an mlp's file records which it is: the load refuses it). */
static int same_kind(const char *cmd, const char *path, const char *dir, const burrow_dataset *ds,
		     const burrow_train_opts *o)
{
	const bool typed = burrow_dataset_get_info(ds)->num_types > 0, typed_model = o->model >= BURROW_MODEL_RGCN;
	if (o->model == BURROW_MODEL_MLP || typed == typed_model)
		return EXIT_OK;
	return cli_fail(cmd, "%s: the checkpoint holds a %s model of a %s dataset; %s is %s", path,
			burrow_model_name(o->model), typed_model ? "typed" : "homogeneous", cli_text(dir),
			typed ? "a typed dataset" : "homogeneous");
}

int train_cli_restore(const char *cmd, const char *dir, const char *ckpt, const burrow_train_opts *extra,
		      burrow_dataset **ds, burrow_trainer **t, burrow_train_opts *model)
{
	*ds = NULL;
	*t = NULL;
	int st = burrow_device_check(extra->device); /* before any work */
	if (st < 0)
		return cli_lib_fail(cmd, st);
	char *path = resolve(ckpt);
	if (!path)
		return cli_fail(cmd, "out of memory");
	burrow_train_opts o = *extra;
	if (train_cli_checkpoint_split(cmd, path, &o)) {
		free(path);
		return EXIT_FAIL;
	}
	/* each message names its cause: the checkpoint's model (read_opts, load), the dataset
	 * (its open, the trainer's features and labels), the machine (memory, the device); typed
	 * models too (the library says what of embed and predict a typed model lacks) */
	st = burrow_checkpoint_read_opts(path, &o);
	if (st >= 0 && (st = burrow_dataset_open(ds, dir)) >= 0 &&
	    (same_kind(cmd, path, dir, *ds, &o) != EXIT_OK || train_cli_select_split(cmd, *ds) != EXIT_OK)) {
		free(path);
		burrow_dataset_close(*ds);
		*ds = NULL;
		return EXIT_FAIL;
	}
	if (st >= 0 && (st = burrow_trainer_open(t, *ds, &o)) >= 0)
		st = burrow_trainer_load(*t, path);
	free(path);
	if (st < 0) {
		cli_lib_fail(cmd, st);
		burrow_trainer_close(*t);
		burrow_dataset_close(*ds);
		*t = NULL;
		*ds = NULL;
		return EXIT_FAIL;
	}
	if (model)
		*model = o;
	return 0;
}

int train_cli_checkpoint_dir(const char *cmd, const char *dir, bool resume, bool best_only, char **last, char **best,
			     int *made)
{
	*last = *best = NULL;
	if (made)
		*made = 0;
	if (asprintf(last, "%s/last.ckpt", dir) < 0 || asprintf(best, "%s/best.ckpt", dir) < 0) {
		*best = NULL;
		goto fail_msg;
	}
	struct stat sb;
	if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode)) { /* known now, not after the first epoch */
		cli_fail(cmd, "%s: not a directory (--checkpoint names the folder of last.ckpt and best.ckpt)", dir);
		goto fail;
	}
	const bool have = stat(*last, &sb) == 0;
	if (resume && !have) {
		cli_fail(cmd, "%s: no checkpoint to resume from", *last);
		goto fail;
	}
	if (!resume && (have || (best_only && stat(*best, &sb) == 0))) {
		cli_fail(cmd, "%s already holds a checkpoint; %sremove it", dir, have ? "use --resume to continue it or " : "");
		goto fail;
	}
	char *path = strdup(dir);
	if (!path)
		goto fail_msg;
	int n = 0; /* mkdir -p, counting the folders it makes (a tail of the path) */
	for (char *p = path + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			n += mkdir(path, 0755) == 0;
			*p = '/';
		}
	int mk = mkdir(path, 0755), err = errno;
	free(path);
	if (mk != 0 && err != EEXIST) {
		cli_fail(cmd, "%s: cannot create the checkpoint directory: %s", dir, strerror(err));
		goto fail;
	}
	if (made)
		*made = n + (mk == 0);
	return 0;
fail_msg:
	cli_fail(cmd, "out of memory");
fail:
	free(*last);
	free(*best);
	*last = *best = NULL;
	return EXIT_FAIL;
}

bool train_cli_save_last(int e, int epochs, int every, bool best_only)
{
	return !best_only && (every <= 1 || e % every == 0 || e == epochs);
}

void train_cli_checkpoint_unmake(const char *dir, int made)
{
	char *path = strdup(dir);
	if (!path)
		return;
	for (size_t k = strlen(path); k > 1 && path[k - 1] == '/'; k--)
		path[k - 1] = '\0';
	for (int i = 0; i < made; i++) {
		if (rmdir(path) != 0) /* not empty: what an earlier epoch saved stays */
			break;
		char *slash = strrchr(path, '/');
		if (!slash || slash == path)
			break;
		*slash = '\0';
	}
	free(path);
}

bool train_cli_parse_cache(const char *s, burrow_train_opts *o)
{
	const size_t n = strlen(s);
	if (n > 1 && s[n - 1] == '%') {
		char num[64];
		double f;
		if (n - 1 >= sizeof num)
			return false;
		memcpy(num, s, n - 1);
		num[n - 1] = '\0';
		if (!cli_f64(num, &f) || f < 0 || f > 100)
			return false;
		o->cache_fraction = f / 100;
		return true;
	}
	int64_t b;
	if (!cli_bytes(s, &b))
		return false;
	o->cache_bytes = b;
	o->cache_fraction = -1;
	return true;
}

bool train_cli_parse_fanout(const char *s, int32_t *out, int *n)
{
	char *end;
	*n = 0;
	while (*s) {
		errno = 0;
		long v = strtol(s, &end, 10);
		if (errno || end == s || (v < 1 && v != -1) || v > INT32_MAX || *n >= BURROW_MAX_LAYERS)
			return false;
		out[(*n)++] = (int32_t)v;
		if (*end == ',')
			end++;
		else if (*end)
			return false;
		s = end;
	}
	return *n > 0;
}

bool train_cli_parse_splits(const char *s, unsigned *out)
{
	static const char *const names[3] = {"train", "valid", "test"};
	*out = 0;
	while (*s) {
		const size_t len = strcspn(s, ",");
		int k = 0;
		while (k < 3 && !(strlen(names[k]) == len && !strncmp(s, names[k], len)))
			k++;
		if (k == 3 || *out & 1u << k)
			return false;
		*out |= 1u << k;
		s += len;
		if (*s == ',' && !*++s)
			return false;
	}
	return *out != 0;
}

int train_cli_layers_fanout(const char *cmd, burrow_train_opts *o, bool layers_set, const char *fanout, int nfanout)
{
	if (!fanout) {
		for (int l = 0; l < o->layers; l++) /* the library's default, spelled out for the header line */
			o->fanout[l] = burrow_train_fanout(o, l);
		return 0;
	}
	if (!layers_set)
		o->layers = nfanout;
	else if (nfanout != o->layers)
		return !cmd ? EXIT_USAGE
			    : cli_usage(cmd, "--fanout %s has %d value%s but --layers is %d: give one per layer, or drop --layers",
					fanout, nfanout, nfanout == 1 ? "" : "s", o->layers);
	return 0;
}

const char *train_cli_num(char *buf, size_t cap, int width, int prec, double scale, const char *unit, double v)
{
	if (v < 0)
		snprintf(buf, cap, "%*s", width, "-");
	else
		snprintf(buf, cap, "%*.*f%s", width - (int)strlen(unit), prec, v * scale, unit);
	return buf;
}

void train_cli_json_num(FILE *f, const char *key, char conv, int prec, double v)
{
	if (v < 0)
		fprintf(f, ", \"%s\": null", key);
	else if (conv == 'f')
		fprintf(f, ", \"%s\": %.*f", key, prec, v);
	else
		fprintf(f, ", \"%s\": %.*g", key, prec, v);
}

/* The metric the run's evaluations report (train_cli_set_metric): "accuracy" until told. */
static char metric_name[24] = "accuracy";

const char *train_cli_metric(char *buf, size_t cap, int metric, int k)
{
	if (metric == BURROW_METRIC_HITS)
		snprintf(buf, cap, "hits@%d", k);
	else
		snprintf(buf, cap, "%s", metric == BURROW_METRIC_MRR	 ? "mrr"
					 : metric == BURROW_METRIC_AUC	 ? "auc"
					 : metric == BURROW_METRIC_ROCAUC ? "rocauc"
									  : "accuracy");
	return buf;
}

void train_cli_set_metric(const burrow_eval_stats *ev)
{
	train_cli_metric(metric_name, sizeof metric_name, ev->metric, ev->metric_k);
}

const char *train_cli_best(char *buf, size_t cap, const burrow_best *b)
{
	char v[16], t[16];
	train_cli_num(t, sizeof t, 0, 4, 1, "", b->test_acc);
	if (b->valid_acc < 0)
		snprintf(buf, cap, "no valid split: test %s %s at epoch %d, the last evaluation", metric_name, t, b->epoch);
	else
		snprintf(buf, cap, "best valid %s at epoch %d: test %s %s",
			 train_cli_num(v, sizeof v, 0, 4, 1, "", b->valid_acc), b->epoch, metric_name, t);
	return buf;
}

const char *train_cli_habits(const burrow_train_opts *o)
{
	static char buf[192];
	buf[0] = '\0';
	switch (o->lr_schedule) {
	case BURROW_LR_STEP:
		snprintf(buf, sizeof buf, ", lr step x%g every %d epochs", o->lr_gamma, o->lr_step);
		break;
	case BURROW_LR_COSINE: snprintf(buf, sizeof buf, ", lr cosine to %g", o->lr_min); break;
	case BURROW_LR_PLATEAU:
		snprintf(buf, sizeof buf, ", lr x%g after %d evaluations without improvement", o->lr_gamma, o->lr_patience);
		break;
	default: break;
	}
	if (o->patience > 0)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), ", patience %d", o->patience);
	if (o->normalize_features)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), ", normalized features");
	return buf;
}

const char *train_cli_stopped(int stopped, int patience)
{
	static char buf[160];
	buf[0] = '\0';
	if (stopped > 0)
		snprintf(buf, sizeof buf, "; stopped early after epoch %d: %d evaluation%s without a better valid accuracy "
					  "(--patience %d)",
			 stopped, patience, patience == 1 ? "" : "s", patience);
	return buf;
}

const char *train_cli_result(char *buf, size_t cap, const burrow_best *b, int trained, int done, int epochs,
			     const char *resumed_from)
{
	char best[160];
	if (b->epoch >= 0)
		train_cli_best(best, sizeof best, b);
	if (trained > 0)
		snprintf(buf, cap, "%s", b->epoch >= 0 ? best : "no evaluation (--eval-every 0)");
	else if (resumed_from)
		snprintf(buf, cap, "nothing trained: %s already holds %d epoch%s (--epochs %d)%s%s", resumed_from, done,
			 done == 1 ? "" : "s", epochs, b->epoch >= 0 ? "; " : "", b->epoch >= 0 ? best : "");
	else
		snprintf(buf, cap, "nothing trained: --epochs %d", epochs);
	return buf;
}

FILE *train_cli_log_open(const char *path, bool resume, int done)
{
	if (!resume)
		return fopen(path, "w");
	FILE *f = fopen(path, "r+");
	if (!f)
		return errno == ENOENT ? fopen(path, "a") : NULL;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	long at = 0, keep = 0; /* bytes read; to keep: up to the last line to keep that is not a config line */
	int epoch;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] != '\n' || (sscanf(line, "{\"epoch\": %d", &epoch) == 1 && epoch > done))
			break;
		at += (long)n;
		if (strncmp(line, "{\"config\":", 10))
			keep = at;
	}
	free(line);
	const bool cut = n > 0 || keep < at;
	if (ferror(f) || (cut && (fflush(f) != 0 || ftruncate(fileno(f), keep) != 0)) || fseek(f, 0, SEEK_END) != 0) {
		const int e = errno;
		fclose(f);
		errno = e;
		return NULL;
	}
	return f;
}

/* After a log line: flushed, and neither that nor an earlier write failed (a full disk). */
static int log_flushed(FILE *f)
{
	if (fflush(f) == 0 && !ferror(f))
		return 0;
	if (!errno)
		errno = EIO;
	return -1;
}

/* w as one shell word: as it is when it holds nothing a shell reads, else in single quotes. */
static void shell_word(char *buf, size_t cap, const char *w)
{
	const size_t at = strlen(buf);
	if (*w && !w[strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_./,:=%+@")]) {
		snprintf(buf + at, cap - at, " %s", w);
		return;
	}
	snprintf(buf + at, cap - at, " '");
	for (; *w; w++)
		snprintf(buf + strlen(buf), cap - strlen(buf), *w == '\'' ? "'\\''" : "%c", *w);
	snprintf(buf + strlen(buf), cap - strlen(buf), "'");
}

/* "burrow train DIR OPTIONS..." (malloc'd): the parse moved the directory last. */
static char *command_line(const train_log_run *r)
{
	size_t cap = 32;
	for (int i = 0; i < r->argc; i++)
		cap += 4 * strlen(r->argv[i]) + 3;
	char *buf = malloc(cap);
	if (!buf)
		return NULL;
	snprintf(buf, cap, "burrow %s", r->argc > 0 ? r->argv[0] : "train");
	shell_word(buf, cap, r->dir);
	for (int i = 1; i < r->argc; i++)
		if (r->argv[i] != r->dir)
			shell_word(buf, cap, r->argv[i]);
	return buf;
}

/* The config object of r, NULL when out of memory. */
static cJSON *config_json(const train_log_run *r)
{
	cJSON *top = cJSON_CreateObject(), *c = cJSON_AddObjectToObject(top, "config"), *ds = NULL;
	char *cmd = command_line(r);
	cJSON *opts = cJSON_Duplicate(r->options, true);
	bool ok = c && cmd && opts && cJSON_AddStringToObject(c, "burrow", burrow_version()) &&
		  cJSON_AddStringToObject(c, "command", cmd) && (ds = cJSON_AddObjectToObject(c, "dataset")) &&
		  (r->ranks > 0 ? cJSON_AddNumberToObject(c, "ranks", r->ranks) : cJSON_AddNullToObject(c, "ranks")) &&
		  (r->resumed_from ? cJSON_AddStringToObject(c, "resumed_from", r->resumed_from)
				   : cJSON_AddNullToObject(c, "resumed_from")) &&
		  (r->resumed_from ? cJSON_AddNumberToObject(c, "after_epoch", r->after_epoch)
				   : cJSON_AddNullToObject(c, "after_epoch")) &&
		  cJSON_AddStringToObject(ds, "path", r->dir) && cJSON_AddStringToObject(ds, "name", r->name ? r->name : "") &&
		  cJSON_AddNumberToObject(ds, "nodes", (double)r->nodes) && cJSON_AddNumberToObject(ds, "classes", r->classes) &&
		  cJSON_AddBoolToObject(ds, "typed", r->typed) &&
		  (r->ranks > 0 ? cJSON_AddNumberToObject(ds, "parts", r->ranks) : cJSON_AddNullToObject(ds, "parts"));
	free(cmd);
	if (ok && cJSON_AddItemToObject(c, "options", opts))
		return top;
	cJSON_Delete(opts);
	cJSON_Delete(top);
	return NULL;
}

int train_cli_log_config(FILE *f, const train_log_run *r)
{
	errno = 0;
	cJSON *top = config_json(r);
	char *text = top ? cJSON_PrintUnformatted(top) : NULL;
	cJSON_Delete(top);
	if (!text) {
		errno = ENOMEM;
		return -1;
	}
	fprintf(f, "%s\n", text);
	cJSON_free(text);
	return log_flushed(f);
}

int train_cli_log_epoch(FILE *f, const burrow_epoch_stats *es, const burrow_eval_stats *ev, int ranks,
			const burrow_comm_stats *cs)
{
	errno = 0;
	fprintf(f, "{\"epoch\": %d, \"loss\": %.17g", es->epoch, es->loss);
	train_cli_json_num(f, "train_acc", 'g', 17, es->train_acc);
	train_cli_json_num(f, "valid_acc", 'g', 17, ev->valid_acc);
	train_cli_json_num(f, "test_acc", 'g', 17, ev->test_acc);
	fprintf(f,
		", \"batches\": %lld, \"epoch_s\": %.6f, \"sample_s\": %.6f, \"io_wait_s\": %.6f, \"compute_s\": %.6f, "
		"\"eval_s\": %.6f, \"rows_read\": %lld",
		(long long)es->batches, es->epoch_s, es->sample_s, es->io_wait_s, es->compute_s, ev->eval_s,
		(long long)es->rows_read);
	train_cli_json_num(f, "cache_hit_rate", 'f', 6, es->cache_hit_rate);
	fprintf(f, ", \"spilled_bytes\": %lld", (long long)ev->spilled_bytes);
	/* what a mini-batch epoch asked of the store; null where nothing was (one schema for all runs) */
	if (es->rows_requested > 0)
		fprintf(f, ", \"rows_requested\": %lld, \"reads\": %lld, \"pages_read\": %lld, \"bytes_read\": %lld",
			(long long)es->rows_requested, (long long)es->reads, (long long)es->pages_read,
			(long long)es->bytes_read);
	else
		fprintf(f, ", \"rows_requested\": null, \"reads\": null, \"pages_read\": null, \"bytes_read\": null");
	if (es->threads > 0)
		fprintf(f, ", \"threads\": %d", es->threads);
	else
		fprintf(f, ", \"threads\": null");
	if (ev->metric == BURROW_METRIC_HITS || ev->metric == BURROW_METRIC_MRR || ev->metric == BURROW_METRIC_AUC) {
		char m[24]; /* link prediction: valid_acc and test_acc hold this metric */
		fprintf(f, ", \"metric\": \"%s\"", train_cli_metric(m, sizeof m, ev->metric, ev->metric_k));
		train_cli_json_num(f, "valid_auc", 'g', 17, ev->valid_auc);
		train_cli_json_num(f, "test_auc", 'g', 17, ev->test_auc);
	}
	if (ranks > 0)
		fprintf(f, ", \"ranks\": %d, \"comm_s\": %.6f, \"exposed_comm_s\": %.6f", ranks, cs->comm_s,
			cs->exposed_comm_s);
	fprintf(f, "}\n");
	return log_flushed(f);
}

int train_cli_log_final(FILE *f, const burrow_best *b, int epochs, int trained, double total_s, uint64_t checksum,
			int ranks, bool weights_equal)
{
	errno = 0;
	fprintf(f, "{\"final\": true");
	train_cli_json_num(f, "best_epoch", 'g', 10, b->epoch);
	train_cli_json_num(f, "valid_acc", 'g', 17, b->valid_acc);
	train_cli_json_num(f, "test_acc", 'g', 17, b->test_acc);
	fprintf(f, ", \"epochs\": %d, \"trained\": %d, \"total_s\": %.6f, \"weights_checksum\": \"%016llx\"", epochs,
		trained, total_s, (unsigned long long)checksum);
	if (ranks > 0)
		fprintf(f, ", \"ranks\": %d, \"weights_equal\": %s", ranks, weights_equal ? "true" : "false");
	fprintf(f, "}\n");
	return log_flushed(f);
}

static const char *split_name; /* --split-name, borrowed from argv */

void train_cli_use_split(const char *name) { split_name = name; }

int train_cli_select_split(const char *cmd, burrow_dataset *ds)
{
	int st = burrow_dataset_select_split(ds, split_name);
	return st < 0 ? cli_lib_fail(cmd, st) : EXIT_OK;
}
