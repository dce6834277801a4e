/* autothreads.c: the thread count of full-graph epochs in one process on the CPU: the faster
 * of the count asked (--threads, OMP_NUM_THREADS, or every core) and one, measured while
 * training and measured again from time to time; OMP_DYNAMIC=false keeps the count asked. */
#include "driver.h"

#include <stdlib.h>
#include <strings.h>

/* Every kernel of the CPU backend has the same bits at any thread count (backend_cpu.c), so
 * the count may follow the machine's load without moving a bit. Beside a process that keeps
 * a core busy, this process gets one CPU's time whatever its threads (2 cores, Cora gcn, a
 * busy loop pinned to core 0 in another session: 98% CPU at 2 threads, as at one; docs/train.md),
 * and two threads on it only add their wake-ups; beside several, they wait at each parallel
 * region's end for the one whose core is taken, and ran slower than one (load 7 on 2 cores:
 * 0.77x); quiet, they are 1.5-1.8x faster. So, as OpenMP's dynamic adjustment of the team
 * (OMP_DYNAMIC, MKL_DYNAMIC) lets a runtime give fewer threads than asked, the count asked is
 * the most: the epoch after the first (which maps and faults its buffers in) runs at it, the
 * next, a probe, at one; the faster count (the count asked only when clearly faster:
 * AUTO_MARGIN) runs until the next probe, which runs one epoch at
 * the other count. Probes come AUTO_PROBE epochs apart, twice as far each time one confirms
 * the choice (up to AUTO_PROBE_MAX: a probe at the slower count costs an epoch at its speed),
 * AUTO_PROBE again when one changes it, and at once when the count that runs gets slower than
 * the other's last mean (a load that comes during the run). Each count's time is a running
 * mean of its last epochs, so one noisy epoch does not decide alone. */
#define AUTO_PROBE 8
#define AUTO_PROBE_MAX 64
/* The count asked runs only while its epochs take at most this share of one thread's: beside
 * a busy process both counts get one CPU's time and measure alike (2 threads pinned 0.97x one,
 * medians of 9, docs/train.md), and a strict "faster" flipped between them on noise, a probe
 * each flip; a tie now goes to one thread, which also leaves the other core to the busy one.
 * Quiet, two threads are 1.6-1.9x one: far inside the margin. */
#define AUTO_MARGIN 0.9

/* Does the count asked look faster than one thread by the margin, on the means so far? */
static bool most_wins(const bw_auto_threads *a) { return a->mean_s[0] < AUTO_MARGIN * a->mean_s[1]; }

void bw_auto_threads_init(bw_auto_threads *a, const bw_backend *be)
{
	*a = (bw_auto_threads){0};
	const char *dyn = getenv("OMP_DYNAMIC");
	if (be->kind != BW_BACKEND_CPU || be->threads < 2 || (dyn && strcasecmp(dyn, "false") == 0))
		return; /* a GPU, one thread, a count the user pinned: nothing to choose */
	a->most = be->threads;
	a->most_gemm = be->gemm_threads;
	a->cur = a->most;
	a->next_probe = 2;
	a->interval = AUTO_PROBE;
}

int bw_auto_threads_next(const bw_auto_threads *a)
{
	if (!a->most)
		return 0;
	const int other = a->cur == 1 ? a->most : 1;
	return a->epochs == a->next_probe ? other : a->cur;
}

void bw_auto_threads_set(const bw_auto_threads *a, bw_backend *be, int threads)
{
	if (!a->most || threads < 1)
		return;
	be->threads = threads;
	be->gemm_threads = threads < a->most_gemm ? threads : a->most_gemm;
}

void bw_auto_threads_done(bw_auto_threads *a, int threads, double seconds)
{
	if (!a->most || threads < 1)
		return;
	const int slot = threads == 1;
	if (a->epochs++ == 0)
		return; /* the first epoch faults its buffers in: not a measure */
	a->mean_s[slot] = a->mean_s[slot] > 0 ? 0.5 * (a->mean_s[slot] + seconds) : seconds;
	if (a->mean_s[0] <= 0 || a->mean_s[1] <= 0)
		return;
	if (threads == a->cur) { /* not a probe: probe next when the other count looks better now */
		if (most_wins(a) != (a->cur == a->most))
			a->next_probe = a->epochs;
		return;
	}
	const int best = most_wins(a) ? a->most : 1;
	if (best != a->cur)
		bw_log(BURROW_LOG_DEBUG, "train: %d thread%s from now on (epochs of %.4f s at %d, %.4f s at 1)", best,
		       best == 1 ? "" : "s", a->mean_s[0], a->most, a->mean_s[1]);
	a->interval = best == a->cur ? (a->interval * 2 < AUTO_PROBE_MAX ? a->interval * 2 : AUTO_PROBE_MAX) : AUTO_PROBE;
	a->cur = best;
	a->next_probe = a->epochs + a->interval;
}
