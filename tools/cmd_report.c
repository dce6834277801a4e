/* cmd_report.c: burrow report RUN.jsonl ... --out report.html: one self-contained HTML page
 * (inline SVG, no network, one small inline script) drawing what burrow train --log wrote:
 * loss and accuracy per epoch, each run's epoch time split into sample wait / I/O wait /
 * compute, rows read and cache hit rate, and for out-of-core runs the rate of rows read
 * against the disk's limit measured by burrow bench io --json; runs named by their configs.
 * Every plotted series also sits in its element's data-values attribute, as the log has it,
 * so a test (or a reader) can check the picture against the log. */
#define _GNU_SOURCE
#include "cli.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void help(void)
{
	printf("usage: burrow report RUN.jsonl [MORE.jsonl ...] --out REPORT.html [--disk BENCH.json]\n"
	       "                       [--title TEXT] [--force]\n\n"
	       "Draw the --log files of burrow train (one run each, mpirun runs too) into one\n"
	       "self-contained HTML file: inline SVG charts, no network access, nothing to install. It\n"
	       "shows a table of the runs (best epoch, valid and test accuracy, time), the loss and the\n"
	       "train, valid and test accuracies per epoch (the accuracy axis fitted to them; the runs\n"
	       "overlaid on one epoch axis, or each on its own epochs when their lengths differ more\n"
	       "than twice), each run's epoch time split into sample wait / I/O wait / compute / the\n"
	       "rest, the feature rows read from disk and the cache hit rate per epoch (where runs have\n"
	       "them), and the read rate in rows/s against the disk's limit. A run is named by what\n"
	       "differs between the runs' configurations (the log's first line: \"gcn\" and \"sage\",\n"
	       "\"lr 0.01\" and \"lr 0.003\"), or by its file name without .jsonl where nothing differs\n"
	       "or its log has no config line (an older burrow's).\n\n"
	       "  --out FILE        the HTML file (written under a temporary name, then renamed)\n"
	       "  --disk BENCH.json what 'burrow bench io DIR --json > BENCH.json' printed on the disk the\n"
	       "                    features live on: the limit is fio's random-read IOPS at the store's\n"
	       "                    block size (one read per row), else the uring engine's rows/s when fio\n"
	       "                    was not installed. Without it the read rate is drawn with no limit\n"
	       "  --title TEXT      the page's title (\"burrow train report\")\n"
	       "  --force           replace FILE if it exists\n");
}

/* ------------------------------------------------------------ the logs */

enum {
	K_LOSS, K_TRAIN, K_VALID, K_TEST, K_EPOCH_S, K_SAMPLE, K_IOWAIT, K_COMPUTE, K_EVAL, K_ROWS, K_HIT, K_COMM,
	K_EXPOSED, NK
};
static const char *const KEYS[NK] = {"loss",      "train_acc", "valid_acc", "test_acc",  "epoch_s",
				     "sample_s",  "io_wait_s", "compute_s", "eval_s",    "rows_read",
				     "cache_hit_rate", "comm_s", "exposed_comm_s"};

typedef struct run_log {
	char *name;              /* the file name without its folder and .jsonl (owned) */
	char *label;             /* what the legends call it: what differs in its config (owned) */
	cJSON *config;           /* the first config line's "config" (owned), NULL in an older log */
	int configs;             /* config lines read: 1 + the resumes */
	const char *path;        /* borrowed from argv */
	int n, cap;              /* epoch lines */
	double *epoch;           /* [n] */
	double *v[NK];           /* [n] each; NAN where the log has null or lacks the key */
	bool final;              /* a final line was read */
	double best_epoch, best_valid, best_test, total_s, ranks;
} run_log;

static void run_free(run_log *r)
{
	free(r->name);
	free(r->label);
	cJSON_Delete(r->config);
	free(r->epoch);
	for (int k = 0; k < NK; k++)
		free(r->v[k]);
}

static double num_of(const cJSON *o, const char *key)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(j) ? j->valuedouble : NAN;
}

static int grow(run_log *r)
{
	const int cap = r->cap ? 2 * r->cap : 64;
	double *e = realloc(r->epoch, (size_t)cap * sizeof *e);
	if (!e)
		return -1;
	r->epoch = e;
	for (int k = 0; k < NK; k++) {
		double *q = realloc(r->v[k], (size_t)cap * sizeof *q);
		if (!q)
			return -1;
		r->v[k] = q;
	}
	r->cap = cap;
	return 0;
}

/* Read one --log file; a line that is not a JSON object of burrow train's is an error naming
 * the file and line. */
static int read_log(const char *path, run_log *r)
{
	memset(r, 0, sizeof *r);
	r->path = path;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t bl = strlen(base);
	if (bl > 6 && !strcmp(base + bl - 6, ".jsonl"))
		bl -= 6;
	if (!(r->name = strndup(base, bl)))
		return cli_fail("report", "out of memory");
	FILE *f = fopen(path, "r");
	if (!f)
		return cli_fail("report", "%s: %s", path, strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = EXIT_OK;
	for (long lineno = 1; (len = getline(&line, &cap, f)) >= 0; lineno++) {
		const char *p = line;
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (!*p)
			continue;
		cJSON *o = cJSON_Parse(p);
		if (!cJSON_IsObject(o)) {
			cJSON_Delete(o);
			rc = cli_fail("report", "%s:%ld: not a JSON object (is this a burrow train --log file?)", path, lineno);
			break;
		}
		cJSON *cfg = cJSON_GetObjectItemCaseSensitive(o, "config");
		if (cJSON_IsObject(cfg)) {
			if (!r->configs++)
				r->config = cJSON_DetachItemViaPointer(o, cfg);
		} else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "final"))) {
			r->final = true;
			r->best_epoch = num_of(o, "best_epoch");
			r->best_valid = num_of(o, "valid_acc");
			r->best_test = num_of(o, "test_acc");
			r->total_s = num_of(o, "total_s");
			r->ranks = num_of(o, "ranks");
		} else if (!isnan(num_of(o, "epoch")) && !isnan(num_of(o, "loss"))) {
			if (r->n == r->cap && grow(r)) {
				cJSON_Delete(o);
				rc = cli_fail("report", "out of memory");
				break;
			}
			r->epoch[r->n] = num_of(o, "epoch");
			for (int k = 0; k < NK; k++)
				r->v[k][r->n] = num_of(o, KEYS[k]);
			r->n++;
		} else {
			cJSON_Delete(o);
			rc = cli_fail("report", "%s:%ld: neither a config line, an epoch line (\"epoch\", \"loss\", ...) nor the "
					      "final line of burrow train --log", path, lineno);
			break;
		}
		cJSON_Delete(o);
	}
	if (rc == EXIT_OK && ferror(f))
		rc = cli_fail("report", "%s: read failed: %s", path, strerror(errno));
	if (rc == EXIT_OK && r->n == 0)
		rc = cli_fail("report", "%s: no epoch lines (an empty log, or a run that trained nothing)", path);
	free(line);
	fclose(f);
	return rc;
}

/* ------------------------------------------------------------ naming runs */

/* A setting's value as text: strings as they are, numbers as %g, flags on / off, lists
 * joined with commas, null as "-". */
static void value_text(const cJSON *v, char *b, size_t cap)
{
	if (cJSON_IsString(v))
		snprintf(b, cap, "%s", v->valuestring);
	else if (cJSON_IsNumber(v))
		snprintf(b, cap, "%.15g", v->valuedouble);
	else if (cJSON_IsBool(v))
		snprintf(b, cap, "%s", cJSON_IsTrue(v) ? "on" : "off");
	else if (cJSON_IsArray(v)) {
		*b = '\0';
		const cJSON *e;
		cJSON_ArrayForEach(e, v)
		{
			char t[64];
			value_text(e, t, sizeof t);
			snprintf(b + strlen(b), cap - strlen(b), "%s%s", *b ? "," : "", t);
		}
	} else
		snprintf(b, cap, "-");
}

/* Options that say where a run's output goes or how it speaks, not what it trained. */
static bool is_output(const char *key)
{
	static const char *const skip[] = {"log", "checkpoint", "checkpoint_every", "checkpoint_best_only", "resume",
					   "quiet", "scratch"};
	for (size_t i = 0; i < sizeof skip / sizeof *skip; i++)
		if (!strcmp(key, skip[i]))
			return true;
	return false;
}

/* What names a run in its config, as key -> text (a new object, NULL when there is no
 * config): the model, the dataset, the mode, mpirun's ranks, then every option that is not
 * about output, in the log's order. */
static cJSON *settings(const cJSON *config)
{
	if (!config)
		return NULL;
	const cJSON *opts = cJSON_GetObjectItemCaseSensitive(config, "options"),
		    *ds = cJSON_GetObjectItemCaseSensitive(config, "dataset");
	cJSON *out = cJSON_CreateObject();
	char b[512];
	value_text(cJSON_GetObjectItemCaseSensitive(opts, "model"), b, sizeof b);
	cJSON_AddStringToObject(out, "model", b);
	value_text(cJSON_GetObjectItemCaseSensitive(ds, "name"), b, sizeof b);
	cJSON_AddStringToObject(out, "dataset", b);
	value_text(cJSON_GetObjectItemCaseSensitive(opts, "mode"), b, sizeof b);
	cJSON_AddStringToObject(out, "mode", b);
	const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(config, "ranks");
	snprintf(b, sizeof b, "%d", cJSON_IsNumber(ranks) ? ranks->valueint : 1);
	cJSON_AddStringToObject(out, "ranks", b);
	const cJSON *o;
	cJSON_ArrayForEach(o, opts)
	{
		if (!o->string || is_output(o->string) || cJSON_GetObjectItemCaseSensitive(out, o->string))
			continue;
		value_text(o, b, sizeof b);
		cJSON_AddStringToObject(out, o->string, b);
	}
	return out;
}

/* Run i's text of key, "-" where absent or null (an option of the other mode). */
static const char *setting(cJSON *const *set, int i, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(set[i], key);
	return cJSON_IsString(v) ? v->valuestring : "-";
}

/* Do two runs set key to different values? Where a run does not set it (an option of the
 * other mode, or of a newer burrow) it does not count: the mode tells that difference. */
static bool differs(cJSON *const *set, int nruns, const char *key)
{
	const char *first = NULL;
	for (int i = 0; i < nruns; i++) {
		const char *t = set[i] ? setting(set, i, key) : "-";
		if (!strcmp(t, "-"))
			continue;
		if (!first)
			first = t;
		else if (strcmp(first, t))
			return true;
	}
	return false;
}

#define LABEL_PARTS 5 /* settings named in a label; more are counted */

/* Run i's label from the settings that differ between runs (keys in their order): the model,
 * dataset and mode by their values, the others as "key value" (gcn, lr 0.01); its file name
 * when it has no config or nothing differs. NULL when out of memory. */
static char *label_of(cJSON *const *set, int nruns, int i, const cJSON *keys, const char *name)
{
	char b[1024] = "";
	int parts = 0, more = 0;
	const cJSON *k;
	cJSON_ArrayForEach(k, keys)
	{
		const char *t = set[i] ? setting(set, i, k->valuestring) : "-";
		if (!strcmp(t, "-") || !differs(set, nruns, k->valuestring))
			continue;
		if (parts == LABEL_PARTS) {
			more++;
			continue;
		}
		const bool bare = !strcmp(k->valuestring, "model") || !strcmp(k->valuestring, "dataset") ||
				  !strcmp(k->valuestring, "mode");
		char key[64];
		snprintf(key, sizeof key, "%s", k->valuestring);
		for (char *q = key; *q; q++)
			*q = *q == '_' ? '-' : *q;
		if (!strcmp(key, "ranks"))
			snprintf(b + strlen(b), sizeof b - strlen(b), "%s%s rank%s", parts ? ", " : "", t, strcmp(t, "1") ? "s" : "");
		else
			snprintf(b + strlen(b), sizeof b - strlen(b), "%s%s%s%s", parts ? ", " : "", bare ? "" : key,
				 bare ? "" : " ", t);
		parts++;
	}
	if (more)
		snprintf(b + strlen(b), sizeof b - strlen(b), " (+%d more)", more);
	return strdup(*b ? b : name);
}

/* Label every run by what differs between their configs (label_of); two runs that would
 * share a label get their file names after it. */
static int label_runs(run_log *runs, int nruns)
{
	cJSON **set = calloc((size_t)nruns, sizeof *set), *keys = cJSON_CreateArray();
	int rc = set && keys ? EXIT_OK : EXIT_FAIL;
	for (int i = 0; i < nruns && rc == EXIT_OK; i++) { /* every key once, in the order first seen */
		set[i] = settings(runs[i].config);
		const cJSON *v;
		cJSON_ArrayForEach(v, set[i])
		{
			bool seen = false;
			const cJSON *k;
			cJSON_ArrayForEach(k, keys) seen |= !strcmp(k->valuestring, v->string);
			if (!seen)
				cJSON_AddItemToArray(keys, cJSON_CreateString(v->string));
		}
	}
	for (int i = 0; i < nruns && rc == EXIT_OK; i++)
		if (!(runs[i].label = label_of(set, nruns, i, keys, runs[i].name)))
			rc = EXIT_FAIL;
	bool *twin = rc == EXIT_OK ? calloc((size_t)nruns, sizeof *twin) : NULL;
	for (int i = 0; twin && i < nruns; i++)
		for (int j = 0; j < nruns; j++)
			twin[i] |= j != i && !strcmp(runs[i].label, runs[j].label);
	for (int i = 0; i < nruns && rc == EXIT_OK; i++) {
		char *l = NULL;
		if (!twin || (twin[i] && strcmp(runs[i].label, runs[i].name) &&
			      asprintf(&l, "%s (%s)", runs[i].label, runs[i].name) < 0))
			rc = EXIT_FAIL;
		else if (l) {
			free(runs[i].label);
			runs[i].label = l;
		}
	}
	free(twin);
	for (int i = 0; set && i < nruns; i++)
		cJSON_Delete(set[i]);
	free(set);
	cJSON_Delete(keys);
	return rc == EXIT_OK ? EXIT_OK : cli_fail("report", "out of memory");
}

/* The disk's limit in rows/s from bench io --json: fio's IOPS, else uring's rows/s. */
static int read_disk(const char *path, double *limit, char *what, size_t cap)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return cli_fail("report", "%s: %s", path, strerror(errno));
	char *line = NULL;
	size_t lcap = 0;
	double fio = NAN, uring = NAN, bs = NAN;
	while (getline(&line, &lcap, f) >= 0) {
		cJSON *o = cJSON_Parse(line);
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "engine");
		if (cJSON_IsString(e) && !strcmp(e->valuestring, "fio") && !isnan(num_of(o, "iops"))) {
			fio = num_of(o, "iops");
			bs = num_of(o, "bs");
		} else if (cJSON_IsString(e) && !strcmp(e->valuestring, "uring")) {
			uring = num_of(o, "rows_per_s");
		}
		cJSON_Delete(o);
	}
	free(line);
	fclose(f);
	if (!isnan(fio) && fio > 0) {
		*limit = fio;
		snprintf(what, cap, "fio random reads, bs %.0f B: %.0f IOPS (burrow bench io, %s)", bs, fio, path);
	} else if (!isnan(uring) && uring > 0) {
		*limit = uring;
		snprintf(what, cap, "the uring engine's cold random gathers: %.0f rows/s (burrow bench io without fio, %s)",
			 uring, path);
	} else {
		return cli_fail("report", "%s: no fio or uring line with a rate: not the output of burrow bench io --json",
				path);
	}
	return EXIT_OK;
}

/* ------------------------------------------------------------ drawing */

static const char *const COLORS[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
				     "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};
#define NCOLORS (sizeof COLORS / sizeof COLORS[0])

enum { W = 560, H = 300, ML = 64, MR = 16, MT = 34, MB = 44 };

static void esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else
			fputc(*s, f);
	}
}

/* The series as the log has it: %.17g, "null" where absent. */
static void values_attr(FILE *f, const double *v, int n, double scale)
{
	fputs(" data-values=\"", f);
	for (int i = 0; i < n; i++)
		isnan(v[i]) ? fprintf(f, "%snull", i ? "," : "") : fprintf(f, "%s%.17g", i ? "," : "", v[i] * scale);
	fputc('"', f);
}

/* A step of 1, 2 or 5 times a power of ten giving about 5 ticks over span. */
static double nice_step(double span)
{
	if (!(span > 0))
		return 1;
	const double raw = span / 5, p = pow(10, floor(log10(raw))), m = raw / p;
	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

typedef struct axes {
	double x0, x1, y0, y1;
} axes;

static double px(const axes *a, double x) { return ML + (x - a->x0) / (a->x1 - a->x0) * (W - ML - MR); }
static double py(const axes *a, double y) { return H - MB - (y - a->y0) / (a->y1 - a->y0) * (H - MT - MB); }

static void tick_label(char *buf, size_t cap, double v, double step)
{
	if (fabs(v) >= 1e6) /* compact, so the labels stay clear of the axis title */
		snprintf(buf, cap, "%gM", v / 1e6);
	else if (fabs(v) >= 1e4)
		snprintf(buf, cap, "%gk", v / 1e3);
	else
		snprintf(buf, cap, "%.*f", step >= 1 ? 0 : (int)ceil(-log10(step)), v);
}

/* The frame: title, axes with ticks, axis labels. */
static void frame(FILE *f, const char *title, const char *ylabel, const axes *a, bool integer_x)
{
	fprintf(f, "<svg width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", W, H, W, H);
	fprintf(f, "<text x=\"%d\" y=\"20\" class=\"title\">", ML);
	esc(f, title);
	fprintf(f, "</text>\n");
	const double ys = nice_step(a->y1 - a->y0);
	for (double y = ceil(a->y0 / ys) * ys; y <= a->y1 + ys * 1e-9; y += ys) {
		char b[32];
		tick_label(b, sizeof b, y, ys);
		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", ML, W - MR, py(a, y), py(a, y));
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"yt\">%s</text>\n", ML - 6, py(a, y) + 4, b);
	}
	double xs = nice_step(a->x1 - a->x0);
	if (integer_x && xs < 1)
		xs = 1;
	for (double x = ceil(a->x0 / xs) * xs; x <= a->x1 + xs * 1e-9; x += xs) {
		char b[32];
		tick_label(b, sizeof b, x, xs);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"xt\">%s</text>", px(a, x), H - MB + 16, b);
	}
	fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" class=\"axis\"/>", ML, W - MR, H - MB, H - MB);
	fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" class=\"axis\"/>\n", ML, ML, MT, H - MB);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"xl\">epoch</text>", (ML + W - MR) / 2, H - 8);
	fprintf(f, "<text transform=\"translate(14 %d) rotate(-90)\" class=\"yl\">", (MT + H - MB) / 2);
	esc(f, ylabel);
	fprintf(f, "</text>\n");
}

/* One polyline over the non-absent values (scaled), carrying the log's values. */
static void polyline(FILE *f, const axes *a, const run_log *r, int key, double scale, const char *color,
		     const char *dash)
{
	fprintf(f, "<polyline class=\"series\" data-run=\"");
	esc(f, r->name);
	fprintf(f, "\" data-label=\"");
	esc(f, r->label);
	fprintf(f, "\" data-key=\"%s\"", KEYS[key]);
	values_attr(f, r->v[key], r->n, 1);
	fprintf(f, " fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s%s%s points=\"", color, dash ? " stroke-dasharray=\"" : "",
		dash ? dash : "", dash ? "\"" : "");
	for (int i = 0; i < r->n; i++)
		if (!isnan(r->v[key][i]))
			fprintf(f, "%.2f,%.2f ", px(a, r->epoch[i]), py(a, r->v[key][i] * scale));
	fprintf(f, "\"><title>");
	esc(f, r->label);
	fprintf(f, " %s</title></polyline>\n", KEYS[key]);
}

static void legend(FILE *f, const run_log *runs, int nruns, const char *extra)
{
	fprintf(f, "<div class=\"legend\">");
	for (int i = 0; i < nruns; i++) {
		fprintf(f, "<span data-run=\"");
		esc(f, runs[i].name);
		fprintf(f, "\"><i style=\"background:%s\"></i>", COLORS[i % NCOLORS]);
		esc(f, runs[i].label);
		fprintf(f, "</span>");
	}
	if (extra)
		fprintf(f, "<span>%s</span>", extra);
	fprintf(f, "</div>\n");
}

/* x from the first to the last epoch of any run (one epoch: a unit wide) */
static axes x_range(const run_log *runs, int nruns)
{
	axes a = {INFINITY, -INFINITY, 0, 1};
	for (int i = 0; i < nruns; i++)
		for (int j = 0; j < runs[i].n; j++) {
			a.x0 = fmin(a.x0, runs[i].epoch[j]);
			a.x1 = fmax(a.x1, runs[i].epoch[j]);
		}
	if (a.x1 <= a.x0) {
		a.x0 -= 0.5;
		a.x1 += 0.5;
	}
	return a;
}

/* The y-axis of keys[] over every run (scaled): 0 to ymax when ymax > 0, else 0 to the largest
 * value; fit: around the values (a tick step beyond them), within 0 to ymax. */
static axes y_range(const run_log *runs, int nruns, const int *keys, int nkeys, double scale, double ymax, bool fit)
{
	axes a = {0, 1, 0, ymax};
	double lo = INFINITY, hi = -INFINITY;
	for (int i = 0; i < nruns; i++)
		for (int k = 0; k < nkeys; k++)
			for (int j = 0; j < runs[i].n; j++)
				if (!isnan(runs[i].v[keys[k]][j])) {
					lo = fmin(lo, runs[i].v[keys[k]][j] * scale);
					hi = fmax(hi, runs[i].v[keys[k]][j] * scale);
				}
	if (fit && lo <= hi) {
		const double pad = fmax(0.05 * (hi - lo), 0.005 * ymax), step = nice_step(hi - lo + 2 * pad);
		a.y0 = fmax(0, floor((lo - pad) / step) * step);
		a.y1 = fmin(ymax, ceil((hi + pad) / step) * step);
	} else if (!(ymax > 0)) {
		a.y1 = hi > 0 ? hi * 1.05 : 1;
	}
	if (!(a.y1 > a.y0))
		a.y1 = a.y0 + 1;
	return a;
}

/* Runs [from, to) in one frame, x from their first to last epoch, y as given. */
static void draw_lines(FILE *f, const char *title, const char *ylabel, const run_log *runs, int from, int to,
		       const int *keys, const char *const *dashes, int nkeys, double scale, const axes *y)
{
	axes a = x_range(runs + from, to - from);
	a.y0 = y->y0;
	a.y1 = y->y1;
	fprintf(f, "<figure>");
	frame(f, title, ylabel, &a, true);
	for (int i = from; i < to; i++)
		for (int k = 0; k < nkeys; k++)
			polyline(f, &a, &runs[i], keys[k], scale, COLORS[i % NCOLORS], dashes ? dashes[k] : NULL);
	fprintf(f, "</svg></figure>\n");
}

#define TITLE_LABEL 56 /* characters of a run's label that fit a small multiple's title */

/* Lines of keys[] for every run (key k dashed as dashes[k]), on one y-axis (y_range): overlaid
 * on one epoch axis, or with own, one frame per run on its own epochs (small multiples, each
 * titled with its run's label and ylabel, the whole title once above them). */
static void line_chart(FILE *f, const char *title, const char *ylabel, const run_log *runs, int nruns, const int *keys,
		       const char *const *dashes, int nkeys, double scale, double ymax, bool fit, bool own)
{
	const axes y = y_range(runs, nruns, keys, nkeys, scale, ymax, fit);
	if (!own) {
		draw_lines(f, title, ylabel, runs, 0, nruns, keys, dashes, nkeys, scale, &y);
		return;
	}
	fprintf(f, "<h3>");
	esc(f, title);
	fprintf(f, "</h3>\n");
	for (int i = 0; i < nruns; i++) {
		char t[512];
		const int cut = (int)strlen(runs[i].label) > TITLE_LABEL;
		snprintf(t, sizeof t, "%.*s%s: %s", cut ? TITLE_LABEL - 3 : TITLE_LABEL, runs[i].label, cut ? "..." : "",
			 ylabel);
		draw_lines(f, t, ylabel, runs, i, i + 1, keys, dashes, nkeys, scale, &y);
	}
}

/* Does any run have a value of key (above 0 when positive)? */
static bool any_value(const run_log *runs, int nruns, int key, bool positive)
{
	for (int i = 0; i < nruns; i++)
		for (int j = 0; j < runs[i].n; j++)
			if (!isnan(runs[i].v[key][j]) && (!positive || runs[i].v[key][j] > 0))
				return true;
	return false;
}

/* Whether the runs' epoch spans differ by more than twice: then each is drawn on its own
 * epochs, so that a run of 20 is as readable beside one of 200. */
static bool own_epochs(const run_log *runs, int nruns, double *shortest, double *longest)
{
	*shortest = INFINITY;
	*longest = 0;
	for (int i = 0; i < nruns; i++) {
		const double span = runs[i].epoch[runs[i].n - 1] - runs[i].epoch[0] + 1;
		*shortest = fmin(*shortest, span);
		*longest = fmax(*longest, span);
	}
	return *longest > 2 * *shortest;
}

/* One run's epoch time as stacked bars: sample wait, I/O wait, compute, the rest. Their
 * colours are none of the runs' (COLORS), so a phase is not read as a run. */
static void time_chart(FILE *f, const run_log *r)
{
	static const int parts[3] = {K_SAMPLE, K_IOWAIT, K_COMPUTE};
	static const char *const pc[4] = {"#e6ab02", "#7a0177", "#525252", "#cccccc"};
	axes a = x_range(r, 1);
	a.x0 -= 0.5;
	a.x1 += 0.5;
	a.y1 = 0;
	for (int i = 0; i < r->n; i++)
		a.y1 = fmax(a.y1, isnan(r->v[K_EPOCH_S][i]) ? 0 : r->v[K_EPOCH_S][i]);
	a.y1 = a.y1 > 0 ? a.y1 * 1.05 : 1;
	char title[300];
	snprintf(title, sizeof title, "%s: epoch time (s)", r->label);
	fprintf(f, "<figure>");
	frame(f, title, "seconds", &a, true);
	const double bw = fmax(1, 0.7 * (W - ML - MR) / (a.x1 - a.x0));
	fprintf(f, "<g class=\"bars\" data-run=\"");
	esc(f, r->name);
	fprintf(f, "\">\n");
	for (int k = 0; k < 3; k++) {
		fprintf(f, "<g data-key=\"%s\"", KEYS[parts[k]]);
		values_attr(f, r->v[parts[k]], r->n, 1);
		fprintf(f, "></g>\n");
	}
	for (int i = 0; i < r->n; i++) {
		double base = 0;
		for (int k = 0; k < 4; k++) {
			double v = k < 3 ? r->v[parts[k]][i] : r->v[K_EPOCH_S][i] - base;
			if (isnan(v) || v <= 0)
				continue;
			fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"><title>epoch %g %s %.3f s</title></rect>",
				px(&a, r->epoch[i]) - bw / 2, py(&a, base + v), bw, py(&a, base) - py(&a, base + v), pc[k],
				r->epoch[i], k < 3 ? KEYS[parts[k]] : "rest", v);
			base += v;
		}
		fputc('\n', f);
	}
	fprintf(f, "</g></svg><div class=\"legend\">");
	static const char *const names[4] = {"sample wait", "I/O wait", "compute", "rest of epoch_s"};
	for (int k = 0; k < 4; k++)
		fprintf(f, "<span><i style=\"background:%s\"></i>%s</span>", pc[k], names[k]);
	fprintf(f, "</div></figure>\n");
}

/* Rows read per second of training, per epoch, for every run that read rows, against the limit. */
static void io_chart(FILE *f, const run_log *runs, int nruns, double limit, const char *what)
{
	axes a = x_range(runs, nruns);
	a.y1 = isnan(limit) ? 0 : limit;
	for (int i = 0; i < nruns; i++)
		for (int j = 0; j < runs[i].n; j++)
			if (runs[i].v[K_EPOCH_S][j] > 0 && !isnan(runs[i].v[K_ROWS][j]))
				a.y1 = fmax(a.y1, runs[i].v[K_ROWS][j] / runs[i].v[K_EPOCH_S][j]);
	a.y1 = a.y1 > 0 ? a.y1 * 1.1 : 1;
	fprintf(f, "<figure>");
	frame(f, "feature rows read from disk per second of training", "rows / s", &a, true);
	if (!isnan(limit)) {
		fprintf(f, "<line class=\"limit\" data-limit=\"%.17g\" x1=\"%d\" x2=\"%d\" y1=\"%.2f\" y2=\"%.2f\" stroke=\"#000\" "
			   "stroke-dasharray=\"6 4\"/>",
			limit, ML, W - MR, py(&a, limit), py(&a, limit));
		fprintf(f, "<text x=\"%d\" y=\"%.2f\" class=\"note\">disk limit %.0f rows/s</text>\n", W - MR - 4,
			py(&a, limit) - 5, limit);
	}
	for (int i = 0; i < nruns; i++) {
		const run_log *r = &runs[i];
		bool ooc = false;
		for (int j = 0; j < r->n; j++)
			ooc |= r->v[K_ROWS][j] > 0;
		if (!ooc)
			continue;
		fprintf(f, "<polyline class=\"series\" data-run=\"");
		esc(f, r->name);
		fprintf(f, "\" data-label=\"");
		esc(f, r->label);
		fprintf(f, "\" data-key=\"rows_per_s\"");
		fputs(" data-values=\"", f);
		for (int j = 0; j < r->n; j++) {
			const double v = r->v[K_ROWS][j] / r->v[K_EPOCH_S][j];
			isnan(v) || isinf(v) ? fprintf(f, "%snull", j ? "," : "") : fprintf(f, "%s%.17g", j ? "," : "", v);
		}
		fprintf(f, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", COLORS[i % NCOLORS]);
		for (int j = 0; j < r->n; j++) {
			const double v = r->v[K_ROWS][j] / r->v[K_EPOCH_S][j];
			if (!isnan(v) && !isinf(v))
				fprintf(f, "%.2f,%.2f ", px(&a, r->epoch[j]), py(&a, v));
		}
		fprintf(f, "\"/>\n");
	}
	fprintf(f, "</svg><p class=\"note\">");
	if (isnan(limit))
		fprintf(f, "No disk limit: give <code>--disk BENCH.json</code>, what <code>burrow bench io DIR --json</code> "
			   "printed on the disk the features live on.");
	else {
		fprintf(f, "The limit: ");
		esc(f, what);
		fprintf(f, ". A row read is one random read of the store's blocks, so rows/s compares with IOPS.");
	}
	fprintf(f, "</p></figure>\n");
}

static void fmt(char *b, size_t cap, const char *f, double v)
{
	if (isnan(v))
		snprintf(b, cap, "-");
	else
		snprintf(b, cap, f, v);
}

static void summary_table(FILE *f, const run_log *runs, int nruns)
{
	fprintf(f, "<table><tr><th>run</th><th>file</th><th>epochs</th><th>best epoch</th><th>valid</th><th>test</th>"
		   "<th>mean epoch_s</th><th>total s</th><th>ranks</th></tr>\n");
	for (int i = 0; i < nruns; i++) {
		const run_log *r = &runs[i];
		double sum = 0;
		int k = 0;
		for (int j = 0; j < r->n; j++)
			if (!isnan(r->v[K_EPOCH_S][j])) {
				sum += r->v[K_EPOCH_S][j];
				k++;
			}
		char be[32], va[32], te[32], me[32], to[32], ra[32];
		fmt(be, sizeof be, "%.0f", r->final ? r->best_epoch : NAN);
		fmt(va, sizeof va, "%.4f", r->final ? r->best_valid : NAN);
		fmt(te, sizeof te, "%.4f", r->final ? r->best_test : NAN);
		fmt(me, sizeof me, "%.3f", k ? sum / k : NAN);
		fmt(to, sizeof to, "%.2f", r->final ? r->total_s : NAN);
		fmt(ra, sizeof ra, "%.0f", r->final && !isnan(r->ranks) ? r->ranks : 1);
		const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(r->config, "command");
		fprintf(f, "<tr data-run=\"");
		esc(f, r->name);
		fprintf(f, "\" title=\"");
		esc(f, cJSON_IsString(cmd) ? cmd->valuestring : "no config line (an older log)");
		fprintf(f, "\"><td><i style=\"background:%s\"></i>", COLORS[i % NCOLORS]);
		esc(f, r->label);
		if (r->configs > 1)
			fprintf(f, " (resumed %d time%s)", r->configs - 1, r->configs > 2 ? "s" : "");
		fprintf(f, "</td><td>");
		esc(f, r->path);
		fprintf(f, "</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", r->n,
			be, va, te, me, to, ra);
	}
	fprintf(f, "</table>\n");
}

static const char STYLE[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1260px}"
	"h1{font-size:22px}h2{font-size:17px;margin-top:28px}h3{font-size:14px;margin:8px 0}"
	"figure{display:inline-block;margin:0 16px 16px 0;vertical-align:top}"
	"svg{background:#fff;border:1px solid #ddd}"
	"svg text{font:12px system-ui,sans-serif;fill:#333}svg .title{font-weight:600;font-size:13px}"
	".yt{text-anchor:end}.xt,.xl,.yl{text-anchor:middle}svg .note{text-anchor:end;font-size:11px}"
	".grid{stroke:#eee}.axis{stroke:#888}"
	"table{border-collapse:collapse}td,th{padding:3px 10px;border-bottom:1px solid #ddd;text-align:right}"
	"td:first-child,th:first-child,td:nth-child(2),th:nth-child(2){text-align:left}"
	".legend span{margin-right:14px;white-space:nowrap}"
	"i{display:inline-block;width:12px;height:12px;margin-right:5px;vertical-align:-1px}"
	"p.note{font-size:12px;color:#555;max-width:560px}";

/* After load, the script counts the points drawn and records it on <body data-points>: a
 * check that the page rendered, and ran, without a script error. */
static const char SCRIPT[] =
	"(function(){var n=0;var s=document.querySelectorAll('polyline.series');"
	"for(var i=0;i<s.length;i++)n+=s[i].points.numberOfItems;"
	"document.body.setAttribute('data-points',String(n));"
	"document.body.setAttribute('data-series',String(s.length));})();";

static void page(FILE *f, const char *title, const run_log *runs, int nruns, double limit, const char *what)
{
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>");
	esc(f, title);
	fprintf(f, "</title><style>%s</style></head>\n<body>\n<h1>", STYLE);
	esc(f, title);
	fprintf(f, "</h1>\n<h2>Runs</h2>\n");
	summary_table(f, runs, nruns);
	fprintf(f, "<p class=\"note\">Runs are named by what differs between their configurations (the first line "
		   "of each log; the file name where nothing differs or a log has none); hover a row for its command "
		   "line.</p>\n");
	fprintf(f, "<h2>Training</h2>\n");
	legend(f, runs, nruns, NULL);
	double shortest, longest;
	const bool own = own_epochs(runs, nruns, &shortest, &longest);
	if (nruns > 1)
		fprintf(f, "<p class=\"note\">%s</p>\n",
			own ? "The runs' lengths differ by more than twice: each run is drawn on its own epochs (small "
			      "multiples), all on one y-axis."
			    : "Every run on one epoch axis, as long as the longest run.");
	static const int loss[1] = {K_LOSS}, acc[3] = {K_VALID, K_TEST, K_TRAIN};
	static const char *const acc_dash[3] = {NULL, "2 3", "6 4"};
	line_chart(f, "training loss (mean over the epoch's batches)", "loss", runs, nruns, loss, NULL, 1, 1, 0, false, own);
	if (any_value(runs, nruns, K_VALID, false) || any_value(runs, nruns, K_TEST, false) ||
	    any_value(runs, nruns, K_TRAIN, false))
		line_chart(f, "accuracy: valid (solid), test (dotted), train (dashed)", "accuracy", runs, nruns, acc, acc_dash,
			   3, 1, 1, true, own);
	fprintf(f, "<h2>Where an epoch's time goes</h2>\n");
	for (int i = 0; i < nruns; i++)
		time_chart(f, &runs[i]);
	const bool rows_read = any_value(runs, nruns, K_ROWS, true), hits = any_value(runs, nruns, K_HIT, false);
	if (rows_read || hits) {
		fprintf(f, "<h2>Feature reads</h2>\n");
		legend(f, runs, nruns, NULL);
	}
	static const int rows[1] = {K_ROWS}, hit[1] = {K_HIT};
	if (rows_read)
		line_chart(f, "feature rows read from disk per epoch", "rows", runs, nruns, rows, NULL, 1, 1, 0, false, false);
	if (hits)
		line_chart(f, "feature cache hit rate (%)", "hit rate %", runs, nruns, hit, NULL, 1, 100, 100, false, false);
	if (rows_read)
		io_chart(f, runs, nruns, limit, what);
	else
		fprintf(f, "<p class=\"note\">No run read feature rows from disk (every row was served by the cache, "
			   "or full-graph mode): no feature-read charts.</p>\n");
	bool dist = false;
	for (int i = 0; i < nruns; i++)
		for (int j = 0; j < runs[i].n; j++)
			dist |= !isnan(runs[i].v[K_COMM][j]);
	if (dist) {
		fprintf(f, "<h2>Communication (mpirun runs)</h2>\n");
		static const int comm[2] = {K_COMM, K_EXPOSED};
		static const char *const comm_dash[2] = {NULL, "5 4"};
		line_chart(f, "communication s per epoch: all (solid), exposed (dashed)", "seconds", runs, nruns, comm,
			   comm_dash, 2, 1, 0, false, false);
	}
	fprintf(f, "<p class=\"note\">Made by burrow report from burrow train --log files; every series is in its "
		   "element's data-values attribute as the log has it.</p>\n<script>%s</script>\n</body></html>\n",
		SCRIPT);
}

/* ------------------------------------------------------------ the command */

enum { O_OUT = 256, O_DISK, O_TITLE, O_FORCE, O_HELP };

int cmd_report(int argc, char **argv)
{
	static const struct option lo[] = {
		{"out", required_argument, 0, O_OUT},     {"disk", required_argument, 0, O_DISK},
		{"title", required_argument, 0, O_TITLE}, {"force", no_argument, 0, O_FORCE},
		{"help", no_argument, 0, O_HELP},         {0, 0, 0, 0},
	};
	const char *out = NULL, *disk = NULL, *title = "burrow train report";
	bool force = false;
	int c;
	while ((c = cli_getopt("report", argc, argv, "h", lo)) != -1) {
		switch (c) {
		case '?': return EXIT_USAGE;
		case 'h':
		case O_HELP: help(); return EXIT_OK;
		case O_OUT: out = optarg; break;
		case O_DISK: disk = optarg; break;
		case O_TITLE: title = optarg; break;
		case O_FORCE: force = true; break;
		default: return EXIT_USAGE;
		}
	}
	const int nruns = argc - optind;
	if (nruns < 1)
		return cli_usage("report", "expected at least one burrow train --log file");
	if (!out)
		return cli_usage("report", "--out is required");
	if (!force && access(out, F_OK) == 0)
		return cli_fail("report", "%s exists (use --force to replace it)", out);
	run_log *runs = calloc((size_t)nruns, sizeof *runs);
	if (!runs)
		return cli_fail("report", "out of memory");
	int rc = EXIT_OK;
	double limit = NAN;
	char what[4400] = "";
	for (int i = 0; i < nruns && rc == EXIT_OK; i++)
		rc = read_log(argv[optind + i], &runs[i]);
	if (rc == EXIT_OK)
		rc = label_runs(runs, nruns);
	if (rc == EXIT_OK && disk)
		rc = read_disk(disk, &limit, what, sizeof what);
	char *tmp = NULL;
	if (rc == EXIT_OK && asprintf(&tmp, "%s.tmp.%ld", out, (long)getpid()) < 0) {
		tmp = NULL;
		rc = cli_fail("report", "out of memory");
	}
	if (rc == EXIT_OK) { /* a temporary name, renamed once whole */
		FILE *f = fopen(tmp, "w");
		if (!f) {
			rc = cli_fail("report", "%s: %s", tmp, strerror(errno));
		} else {
			page(f, title, runs, nruns, limit, what);
			const bool bad = ferror(f) || fflush(f) != 0 || fsync(fileno(f)) != 0;
			const int err = errno;
			if (fclose(f) != 0 || bad)
				rc = cli_fail("report", "%s: write failed: %s", out, strerror(bad ? err : errno));
			else if (rename(tmp, out) != 0)
				rc = cli_fail("report", "%s: rename failed: %s", out, strerror(errno));
			if (rc != EXIT_OK)
				unlink(tmp);
		}
	}
	if (rc == EXIT_OK) {
		int epochs = 0;
		for (int i = 0; i < nruns; i++)
			epochs += runs[i].n;
		fprintf(stderr, "burrow: report: wrote %s: %d run%s, %d epochs%s\n", out, nruns, nruns == 1 ? "" : "s",
			epochs, disk ? ", with the disk's limit" : "");
	}
	free(tmp);
	for (int i = 0; i < nruns; i++)
		run_free(&runs[i]);
	free(runs);
	return rc;
}
