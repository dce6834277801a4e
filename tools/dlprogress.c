/* dlprogress.c: download progress: bytes, rate and ETA (see dlprogress.h). */
#include "dlprogress.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LINE_EVERY_S 10.0 /* without a terminal: one line this often */

void dl_progress_init(dl_progress *p, bool quiet, cli_progress *other)
{
	memset(p, 0, sizeof *p);
	p->quiet = quiet;
	p->tty = isatty(STDERR_FILENO);
	p->other = other;
}

static void draw(dl_progress *p, double now, bool final)
{
	char a[32], b[32], r[32];
	double el = now - p->t0, rate = el > 0 ? (double)(p->done - p->first) / el : 0;
	cli_human_bytes((double)p->done, a, sizeof a);
	cli_human_bytes(rate, r, sizeof r);
	if (p->total) {
		double f = (double)p->done / (double)p->total;
		double eta = rate > 0 ? (double)(p->total - p->done) / rate : 0;
		cli_human_bytes((double)p->total, b, sizeof b);
		if (p->tty) {
			int w = 24, fill = (int)(f * w);
			fprintf(stderr, "\r  download [%.*s%*s] %5.1f%%  %s / %s  %s/s  ETA %.0fs   ", fill,
				"########################", w - fill, "", 100 * f, a, b, r, eta);
		} else {
			fprintf(stderr, "burrow: download: %s of %s (%.0f%%), %s/s, ETA %.0f s\n", a, b, 100 * f, r, eta);
		}
	} else if (p->tty) {
		fprintf(stderr, "\r  download %s  %s/s   ", a, r);
	} else {
		fprintf(stderr, "burrow: download: %s, %s/s\n", a, r);
	}
	if (p->tty && final)
		fputc('\n', stderr);
	fflush(stderr);
}

void dl_progress_cb(void *user, const char *phase, uint64_t done, uint64_t total)
{
	dl_progress *p = user;
	if (strcmp(phase, "download")) {
		if (p->other)
			cli_progress_cb(p->other, phase, done, total);
		return;
	}
	if (p->quiet)
		return;
	double now = cli_now();
	if (!p->started) {
		p->started = true;
		p->t0 = p->last = now;
		p->first = done;
	}
	p->done = done;
	p->total = total;
	if (now - p->last < (p->tty ? 0.2 : LINE_EVERY_S))
		return;
	p->last = now;
	draw(p, now, false);
}

void dl_progress_done(dl_progress *p)
{
	if (!p->quiet && p->started && p->tty)
		draw(p, cli_now(), true);
}
