/* test_report.c: burrow report in a real browser. Two real training logs of two models (one
 * reading its features from disk) and a real bench io result become one HTML page; headless
 * Chromium renders it to a PNG (which must be a picture, not a blank page) and dumps the DOM
 * after its script ran: no script error, every plotted series (the test accuracy among them)
 * equal to the log's values, the runs named by what differs in their config lines, the point
 * count the script saw equal to the values drawn, the disk's limit equal to bench io's. Logs
 * made here (one without a config line) check the page's layout: labels, an accuracy axis
 * fitted to the data, runs of 20 and 200 epochs each on its own axis, no empty panels. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "util.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

TU_SCRATCH_SUITE(report, 300);

static const char *chromium(void)
{
	static const char *const names[] = {"chromium", "chromium-browser", "google-chrome"};
	for (size_t i = 0; i < 3; i++)
		if (tu_sh(NULL, NULL, "command -v %s >/dev/null 2>&1", names[i]) == 0)
			return names[i];
	return NULL;
}

/* The value of attribute `name` in the tag that starts at p ('<' ... '>'), malloc'd; NULL if absent. */
static char *attr(const char *p, const char *name)
{
	const char *end = strchr(p, '>');
	char key[64];
	snprintf(key, sizeof key, " %s=\"", name);
	const char *a = strstr(p, key);
	if (!a || (end && a > end))
		return NULL;
	a += strlen(key);
	return strndup(a, (size_t)(strchr(a, '"') - a));
}

/* The log's values of key per epoch line, as doubles (NAN for null), into v; their count. */
static int log_values(const char *path, const char *key, double *v, int cap)
{
	size_t len;
	char *text = tu_read(path, &len), *save = NULL;
	int n = 0;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		cJSON *o = cJSON_Parse(line);
		if (o && !cJSON_GetObjectItem(o, "final") && !cJSON_GetObjectItem(o, "config") && n < cap) {
			const cJSON *j = cJSON_GetObjectItem(o, key);
			if (!strcmp(key, "rows_per_s"))
				v[n++] = cJSON_GetObjectItem(o, "rows_read")->valuedouble /
					 cJSON_GetObjectItem(o, "epoch_s")->valuedouble;
			else
				v[n++] = cJSON_IsNumber(j) ? j->valuedouble : NAN;
		}
		cJSON_Delete(o);
	}
	free(text);
	return n;
}

/* Share of pixels that are not white in a PNG (8-bit RGB or RGBA, not interlaced); -1 when it
 * is not such a PNG. *w, *h get its size. */
static double ink(const unsigned char *p, size_t n, int *w, int *h)
{
	if (n < 33 || memcmp(p, "\x89PNG\r\n\x1a\n", 8))
		return -1;
	const unsigned char *ih = p + 16;
	*w = (int)((unsigned)ih[0] << 24 | ih[1] << 16 | ih[2] << 8 | ih[3]);
	*h = (int)((unsigned)ih[4] << 24 | ih[5] << 16 | ih[6] << 8 | ih[7]);
	const int depth = ih[8], color = ih[9], interlace = ih[12];
	if (depth != 8 || (color != 2 && color != 6) || interlace)
		return -1;
	const int bpp = color == 6 ? 4 : 3;
	const size_t stride = (size_t)*w * bpp + 1, raw_n = stride * (size_t)*h;
	unsigned char *z = malloc(n), *raw = malloc(raw_n);
	size_t zn = 0;
	for (size_t at = 8; at + 12 <= n;) { /* the IDAT chunks, concatenated */
		const size_t len = (size_t)p[at] << 24 | p[at + 1] << 16 | p[at + 2] << 8 | p[at + 3];
		if (!memcmp(p + at + 4, "IDAT", 4)) {
			memcpy(z + zn, p + at + 8, len);
			zn += len;
		}
		at += len + 12;
	}
	uLongf out = raw_n;
	double share = -1;
	if (uncompress(raw, &out, z, zn) == Z_OK && out == raw_n) {
		/* undo the row filters (PNG spec 9.2), then count */
		unsigned char *prev = calloc(stride, 1);
		long long dark = 0;
		for (int y = 0; y < *h; y++) {
			unsigned char *r = raw + (size_t)y * stride, f = r[0], *x = r + 1;
			for (size_t i = 0; i < stride - 1; i++) {
				const int a = i >= (size_t)bpp ? x[i - bpp] : 0, b = prev[i],
					  c = i >= (size_t)bpp ? prev[i - bpp] : 0;
				int pr = a;
				if (f == 4) {
					const int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
					pr = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
				}
				x[i] = (unsigned char)(x[i] + (f == 1 ? a : f == 2 ? b : f == 3 ? (a + b) / 2 : f == 4 ? pr : 0));
			}
			for (int i = 0; i < *w; i++)
				dark += x[i * bpp] < 200 || x[i * bpp + 1] < 200 || x[i * bpp + 2] < 200;
			memcpy(prev, x, stride - 1);
		}
		free(prev);
		share = (double)dark / ((double)*w * *h);
	}
	free(z);
	free(raw);
	return share;
}

Test(report, two_runs_render_in_chromium_and_the_charts_hold_the_logs)
{
	const char *chr = chromium();
	if (!chr)
		cr_skip_test("chromium is not installed (tools/install-deps.sh installs it)");
	char *d = tu_path(tu_dir, "csbm"), *la = tu_path(tu_dir, "sage-s0.jsonl"), *lb = tu_path(tu_dir, "gcn-s1.jsonl");
	char *bench = tu_path(tu_dir, "bench.json"), *html = tu_path(tu_dir, "report.html"), *png = tu_path(tu_dir, "r.png");
	char *out, *err;
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm %s --nodes 1500 --feat-dim 16 --quiet", tu_burrow(), d), 0, "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s train %s --layers 2 --hidden 8 --epochs 4 --batch 256 --log %s --quiet", tu_burrow(),
			   d, la),
		     0, "%s", err);
	free(err);
	/* --cache 0: every row from disk, an out-of-core run */
	cr_assert_eq(tu_sh(NULL, &err, "%s train %s --model gcn --seed 1 --layers 2 --hidden 8 --epochs 3 --batch 256 "
				       "--cache 0 --log %s --quiet",
			   tu_burrow(), d, lb),
		     0, "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s bench io %s --rows 3000 --repeat 1 --no-fio --json > %s", tu_burrow(), d, bench), 0,
		     "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s report %s %s --disk %s --out %s", tu_burrow(), la, lb, bench, html), 0, "%s", err);
	cr_assert(strstr(err, "wrote") && strstr(err, "2 runs, 7 epochs"), "%s", err);
	free(err);
	size_t hn;
	char *page = tu_read(html, &hn);
	cr_assert(page && !strstr(page, "http:") && !strstr(page, "https:") && !strstr(page, " src="),
		  "the page must fetch nothing");
	free(page);

	/* the picture: a PNG of the asked size with charts on it */
	const char *flags = "--headless --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0";
	cr_assert_eq(tu_sh(NULL, &err, "cd %s && timeout 120 %s %s --window-size=1280,2400 --screenshot=%s file://%s", tu_dir,
			   chr, flags, png, html),
		     0, "%s", err);
	cr_assert(!strstr(err, "CONSOLE"), "script error: %s", err);
	free(err);
	size_t pn;
	unsigned char *pb = tu_read(png, &pn);
	int w = 0, h = 0;
	const double share = ink(pb, pn, &w, &h);
	cr_assert(w == 1280 && h == 2400, "%d x %d", w, h);
	cr_assert(share > 0.01 && share < 0.6, "%.4f of the pixels are not white", share);
	free(pb);

	/* the DOM after the script ran */
	cr_assert_eq(tu_sh(&out, &err, "cd %s && timeout 120 %s %s --dump-dom file://%s", tu_dir, chr, flags, html), 0, "%s",
		     err);
	cr_assert(!strstr(err, "CONSOLE"), "script error: %s", err);
	const char *body = strstr(out, "<body");
	cr_assert(body, "%s", out);
	char *pts = attr(body, "data-points"), *ser = attr(body, "data-series");
	cr_assert(pts && ser, "the page's script did not run");
	long long drawn = 0, series = 0, tests = 0;
	const char *runs[2] = {"sage-s0", "gcn-s1"}, *logs[2] = {la, lb};
	/* named from their configs: the model first, then what else differs (--seed, --epochs) */
	const char *names[2][3] = {{"sage, ", "seed 0", "epochs 4"}, {"gcn, ", "seed 1", "epochs 3"}};
	for (const char *p = strstr(out, "<polyline"); p; p = strstr(p + 1, "<polyline")) {
		char *run = attr(p, "data-run"), *key = attr(p, "data-key"), *vals = attr(p, "data-values");
		char *label = attr(p, "data-label");
		cr_assert(run && key && vals && label);
		int r = !strcmp(run, runs[0]) ? 0 : !strcmp(run, runs[1]) ? 1 : -1;
		cr_assert(r >= 0, "unknown run %s", run);
		cr_assert(!strncmp(label, names[r][0], strlen(names[r][0])) && strstr(label, names[r][1]) &&
				  strstr(label, names[r][2]) && !strstr(label, run),
			  "%s is labelled '%s'", run, label);
		tests += !strcmp(key, "test_acc");
		char legend[512];
		snprintf(legend, sizeof legend, "<span data-run=\"%s\"><i style=\"background:#%*s", run, 0, "");
		const char *lg = strstr(out, legend);
		cr_assert(lg && !strncmp(strstr(lg, "</i>") + 4, label, strlen(label)), "no legend entry '%s'", label);
		free(label);
		double want[64];
		const int n = log_values(logs[r], key, want, 64);
		cr_assert_eq(n, r == 0 ? 4 : 3, "%s %s", run, key);
		char *q = vals;
		for (int i = 0; i < n; i++) {
			if (!strncmp(q, "null", 4)) {
				cr_assert(isnan(want[i]), "%s %s epoch %d: null, log %g", run, key, i + 1, want[i]);
				q += 4;
			} else {
				const double v = strtod(q, &q);
				cr_assert(v == want[i], "%s %s epoch %d: drawn %.17g, log %.17g", run, key, i + 1, v, want[i]);
				drawn++;
			}
			cr_assert(*q == (i + 1 < n ? ',' : '\0'), "%s %s: %s", run, key, vals);
			q++;
		}
		series++;
		free(run), free(key), free(vals);
	}
	/* loss, valid, test, train, rows read, hit rate for both runs; rows/s for the one that read */
	cr_assert_eq(series, 13);
	cr_assert_eq(tests, 2, "a test-accuracy curve per run");
	cr_assert_eq(atoll(ser), series);
	cr_assert_eq(atoll(pts), drawn, "the script saw %s points, %lld values drawn", pts, drawn);
	/* the time split of each run, and the disk's limit from bench io */
	for (int r = 0; r < 2; r++) {
		char key[96];
		snprintf(key, sizeof key, "class=\"bars\" data-run=\"%s\"", runs[r]);
		cr_assert(strstr(out, key), "no time chart for %s", runs[r]);
	}
	const char *lim = strstr(out, "data-limit=\"");
	cr_assert(lim);
	double uring = NAN;
	size_t bn;
	char *bj = tu_read(bench, &bn), *save = NULL;
	for (char *line = strtok_r(bj, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		cJSON *o = cJSON_Parse(line);
		if (o && !strcmp(cJSON_GetObjectItem(o, "engine")->valuestring, "uring"))
			uring = cJSON_GetObjectItem(o, "rows_per_s")->valuedouble;
		cJSON_Delete(o);
	}
	cr_assert_eq(strtod(lim + 12, NULL), uring);
	free(bj), free(pts), free(ser), free(out), free(err);

	/* a line that is not the log's: one error naming the file and line, nothing written */
	char *bad = tu_path(tu_dir, "bad.jsonl"), *o2 = tu_path(tu_dir, "o2.html");
	FILE *f = fopen(bad, "w");
	fputs("{\"epoch\": 1, \"loss\": 0.5}\nnot json\n", f);
	fclose(f);
	cr_assert_eq(tu_sh(NULL, &err, "%s report %s --out %s", tu_burrow(), bad, o2), 1);
	cr_assert(strstr(err, "bad.jsonl:2: not a JSON object"), "%s", err);
	cr_assert(!tu_exists(o2));
	free(err);
	free(d), free(la), free(lb), free(bench), free(html), free(png), free(bad), free(o2);
}

/* A log of `epochs` full-graph epochs (nothing read from disk: rows_read 0, no hit rate),
 * valid accuracy rising from v0 to v1, after a config line with lr and epochs (none when
 * lr is 0: a log of an older burrow). */
static void write_log(const char *path, double lr, int epochs, double v0, double v1)
{
	FILE *f = fopen(path, "w");
	cr_assert(f, "%s", path);
	if (lr > 0)
		fprintf(f, "{\"config\":{\"burrow\":\"0.1.0\",\"command\":\"burrow train cora --lr %g\",\"dataset\":{\"path\":"
			   "\"cora\",\"name\":\"cora\",\"nodes\":2708,\"classes\":7,\"typed\":false,\"parts\":null},\"ranks\":null,"
			   "\"resumed_from\":null,\"after_epoch\":null,\"options\":{\"mode\":\"full-graph\",\"model\":\"gcn\","
			   "\"batch\":null,\"lr\":%g,\"epochs\":%d,\"log\":\"%s\",\"seed\":0}}}\n",
			lr, lr, epochs, path);
	for (int e = 1; e <= epochs; e++) {
		const double v = v0 + (v1 - v0) * (e - 1) / (epochs - 1);
		fprintf(f, "{\"epoch\": %d, \"loss\": %g, \"train_acc\": %g, \"valid_acc\": %g, \"test_acc\": %g, \"batches\": 1, "
			   "\"epoch_s\": 0.01, \"sample_s\": 0, \"io_wait_s\": 0, \"compute_s\": 0.009, \"eval_s\": 0.001, "
			   "\"rows_read\": 0, \"cache_hit_rate\": null, \"spilled_bytes\": 0}\n",
			e, 2.0 / e, v + 0.01, v, v - 0.01);
	}
	fprintf(f, "{\"final\": true, \"best_epoch\": %d, \"valid_acc\": %g, \"test_acc\": %g, \"epochs\": %d, \"trained\": %d, "
		   "\"total_s\": 1, \"weights_checksum\": \"0000000000000000\"}\n",
		epochs, v1, v1 - 0.01, epochs, epochs);
	fclose(f);
}

/* The layout, read from the page itself: runs of 20 and 200 epochs that differ in --lr are
 * labelled "lr ..., epochs ..." (an older log without a config line by its file name), each
 * drawn across its own frame's width (small multiples), the accuracy axis spans the
 * accuracies' 0.72 to 0.77 (with less than a tenth around them), not 0 to 1, and runs that
 * read nothing from disk get no feature-read charts. */
Test(report, labels_axes_and_panels_follow_the_logs)
{
	char *a = tu_path(tu_dir, "a.jsonl"), *b = tu_path(tu_dir, "b.jsonl"), *old = tu_path(tu_dir, "old.jsonl");
	char *html = tu_path(tu_dir, "r.html"), *err;
	write_log(a, 0.01, 20, 0.72, 0.77);
	write_log(b, 0.003, 200, 0.73, 0.76);
	write_log(old, 0, 20, 0.74, 0.75);
	cr_assert_eq(tu_sh(NULL, &err, "%s report %s %s %s --out %s", tu_burrow(), a, b, old, html), 0, "%s", err);
	free(err);
	char *page = tu_read(html, NULL);
	cr_assert(page);
	const char *runs[3] = {"a", "b", "old"}, *labels[3] = {"lr 0.01, epochs 20", "lr 0.003, epochs 200", "old"};
	int losses = 0, accs = 0;
	for (const char *p = strstr(page, "<polyline"); p; p = strstr(p + 1, "<polyline")) {
		char *run = attr(p, "data-run"), *label = attr(p, "data-label"), *key = attr(p, "data-key");
		char *pts = attr(p, "points");
		cr_assert(run && label && key && pts);
		int r = 0;
		while (r < 3 && strcmp(run, runs[r]))
			r++;
		cr_assert(r < 3, "%s", run);
		cr_assert_str_eq(label, labels[r]);
		cr_assert(strcmp(key, "rows_read") && strcmp(key, "cache_hit_rate"), "a feature-read chart of nothing read");
		if (!strcmp(key, "loss")) { /* its own epochs across the whole frame: x from 64 to 544 */
			double x0, y, x1 = 0;
			cr_assert_eq(sscanf(pts, "%lf,%lf", &x0, &y), 2, "%s", pts);
			for (const char *q = pts; (q = strchr(q, ' ')) && q[1]; q++)
				sscanf(q + 1, "%lf,", &x1);
			cr_assert(x0 == 64 && x1 == 544, "%s loss from x %g to %g", run, x0, x1);
			losses++;
		}
		accs += !strcmp(key, "valid_acc");
		free(run), free(label), free(key), free(pts);
	}
	cr_assert_eq(losses, 3);
	cr_assert_eq(accs, 3);
	cr_assert(strstr(page, "small multiples") && strstr(page, "no feature-read charts") &&
			  !strstr(page, "<h2>Feature reads"),
		  "the page's notes");
	/* every accuracy frame's ticks: around 0.71 to 0.78, none at 0 or 1 */
	int frames = 0;
	for (const char *svg = strstr(page, "<svg"); svg; svg = strstr(svg + 1, "<svg")) {
		const char *end = strstr(svg, "</svg>");
		const char *acc = strstr(svg, "data-key=\"valid_acc\"");
		if (!acc || acc > end)
			continue;
		double lo = INFINITY, hi = -INFINITY;
		for (const char *t = strstr(svg, "class=\"yt\">"); t && t < end; t = strstr(t + 1, "class=\"yt\">")) {
			const double v = strtod(t + 11, NULL);
			lo = fmin(lo, v);
			hi = fmax(hi, v);
		}
		cr_assert(lo >= 0.6 && lo <= 0.71 && hi >= 0.78 && hi <= 0.9, "accuracy ticks from %g to %g", lo, hi);
		frames++;
	}
	cr_assert_eq(frames, 3, "an accuracy frame per run");
	free(page), free(a), free(b), free(old), free(html);
}
