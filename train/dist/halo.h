/* halo.h: the halo exchange between partition-parallel ranks (bw_comm): boundary rows out to
 * the parts that need them, halo rows in; in backward, halo gradients back to their owners.
 *
 * Layout (docs/partition.md): a rank owns local rows 0 .. n_owned-1 and keeps halo rows
 * n_owned .. n_owned+H-1 grouped by owner part (halo_offsets, K+1). For each part j its
 * send segment send_local[send_offsets[j] .. send_offsets[j+1]) lists, as local ids, the
 * owned rows j needs, in exactly the order of j's halo segment for this rank, so a buffer
 * goes out and lands without reordering. */
#ifndef BURROW_HALO_H
#define BURROW_HALO_H

#include "comm.h"
#include "../compute/compute.h"

typedef struct bw_halo bw_halo;

typedef struct bw_halo_stats {
	double comm_s;     /* seconds from post to completion, summed over exchanges */
	double wait_s;     /* seconds spent blocked in wait (exposed communication) */
	double test_s;     /* seconds inside bw_halo_test (progress driven between compute chunks) */
	int64_t bytes_out; /* bytes sent */
	int64_t exchanges;
} bw_halo_stats;

/* Build the exchange for this rank of comm (size K), whose buffers are memory of be's device:
 * be packs the rows out and adds the gradients in on its compute stream, and each post first
 * waits for that stream (so the communicator, on its own stream or the host, reads finished
 * rows). Arrays are borrowed for the call; be must outlive the exchange. */
int bw_halo_open(bw_halo **out, bw_comm *comm,
		 const bw_backend *be,        /* the compute backend on comm's device (borrowed) */
		 int64_t n_owned,             /* rows this rank owns */
		 const int64_t *send_local,   /* [send_offsets[K]] local ids of owned rows, by part */
		 const int64_t *send_offsets, /* [K+1] */
		 const int64_t *halo_offsets);/* [K+1]: halo rows by owner part */
void bw_halo_close(bw_halo *h);
int64_t bw_halo_rows(const bw_halo *h); /* H, halo rows this rank receives */

/* emb and grad below are memory of the backend's device. */
/* Forward: pack the owned rows others need from emb ([n_owned + H, dim], row-major) and
 * post the exchange; halo rows land in emb[n_owned ..] when it completes. emb must stay
 * valid and its owned send rows unchanged until wait. */
int bw_halo_forward_start(bw_halo *h, float *emb, int64_t dim);
/* Drive the exchange's progress without blocking: 1 when the exchange has completed, 0 if not yet. */
int bw_halo_test(bw_halo *h);
/* Block until the posted exchange completes (forward: halo rows are in place). */
int bw_halo_wait(bw_halo *h);

/* Backward: send the gradients of the halo rows (grad[n_owned ..], [H, dim]) to their
 * owners; bw_halo_backward_finish waits and adds what arrives into grad's owned rows. */
int bw_halo_backward_start(bw_halo *h, const float *grad, int64_t dim);
int bw_halo_backward_finish(bw_halo *h, float *grad);

void bw_halo_get_stats(const bw_halo *h, bw_halo_stats *s);

/* Boundary sampling (BNS-GCN): until the next call, each exchange moves only the boundary
 * nodes kept with probability p, decided by bw_halo_keep(key, global id, p) on the sending
 * and the receiving side alike (no extra message). Kept halo rows land scaled by 1/p and
 * dropped ones as zeros, so an aggregation over them estimates the full one without bias;
 * in backward only the kept rows' gradients go back, scaled by 1/p. p = 1 turns sampling
 * off. send_gid [n_send] and halo_gid [H] are the global ids of the send and halo rows
 * (borrowed for the call). Host-memory devices only (else BURROW_E_UNSUPPORTED). */
int bw_halo_sample(bw_halo *h, double p, uint64_t key, const int64_t *send_gid, const int64_t *halo_gid);
bool bw_halo_keep(uint64_t key, int64_t gid, double p);
/* Halo rows the current sample keeps (H when sampling is off). */
int64_t bw_halo_kept(const bw_halo *h);

#endif
