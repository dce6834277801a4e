/* dlprogress.h: the download progress display shared by burrow download and burrow prep:
 * a bar with bytes, rate and ETA on a terminal, a line every few seconds otherwise. */
#ifndef BURROW_DLPROGRESS_H
#define BURROW_DLPROGRESS_H

#include "cli.h"

typedef struct dl_progress {
	bool quiet, tty;
	bool started;
	double t0, last;          /* when the first report came, and the last line */
	uint64_t first;           /* bytes already there at the first report (a resumed .part) */
	uint64_t done, total;
	cli_progress *other;      /* receives every other phase (prep), may be NULL */
} dl_progress;

void dl_progress_init(dl_progress *p, bool quiet, cli_progress *other);
/* A burrow_progress_fn: "download" is drawn here, other phases go to p->other. */
void dl_progress_cb(void *user, const char *phase, uint64_t done, uint64_t total);
/* End the bar's line on a terminal. */
void dl_progress_done(dl_progress *p);

#endif
