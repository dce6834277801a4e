/* burrow/dist.h: distributed training over MPI (libburrow_mpi): ranks, halo exchange, MPI helpers. */
#ifndef BURROW_DIST_PUBLIC_H
#define BURROW_DIST_PUBLIC_H

#include "core.h"
#include "train.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- distributed training */

/* Partition-parallel training over MPI (docs/distributed.md): one rank per part of a parts
 * directory written by burrow_partition. Each rank holds its part's rows and halo, and the
 * model is replicated, its gradients all-reduced after every step. Full-graph mode exchanges
 * each layer's halo rows with a non-blocking neighbor all-to-all while the inner rows
 * aggregate. Mini-batch mode (train.full_graph false) samples batches from each rank's own
 * training nodes over the whole graph (nodes owned elsewhere are expanded by their owners),
 * fetches the input rows the rank does not hold from their owners, and runs the same number
 * of steps on every rank. The caller starts MPI (burrow_mpi_start, or MPI_Init itself) before
 * burrow_dist_open and stops it after burrow_dist_close; every call below is collective over
 * every rank of the job, whose number must equal the number of parts. The burrow_dist_* calls are in
 * libburrow_mpi (pkg-config burrow-mpi), which holds all of libburrow too and links MPI;
 * libburrow itself links no MPI. */

enum burrow_halo_mode {
	BURROW_HALO_EXACT = 0,  /* every layer waits for this epoch's halo rows */
	BURROW_HALO_STALE = 1,  /* layers use the previous epoch's halo rows (PipeGCN-style): the
				   exchange overlaps the whole layer; the first epoch is exact */
};

/* How ranks communicate (--comm). */
enum burrow_comm_kind {
	BURROW_COMM_AUTO = 0,   /* MPI for host-memory buffers (the CPU); for GPU buffers NCCL where
				   the build has it, each rank of a node has its own GPU and NCCL
				   starts, else STAGED */
	BURROW_COMM_MPI = 1,    /* MPI on host buffers */
	BURROW_COMM_NCCL = 2,   /* NCCL on device buffers, one GPU per rank (CUDA builds) */
	BURROW_COMM_STAGED = 3, /* device -> pinned host -> MPI -> device on a copy stream, for ranks
				   that share a GPU; on the CPU its copies are memcpy (a check of
				   the path: it trains the same weights as MPI) */
};
/* "auto", "mpi", "nccl" or "staged" as enum burrow_comm_kind; -1 when unknown. */
BURROW_API int burrow_comm_parse(const char *name);
/* The name of an enum burrow_comm_kind ("?" when unknown). */
BURROW_API const char *burrow_comm_name(int kind);

typedef struct burrow_dist_opts {
	size_t size;            /* sizeof(burrow_dist_opts), set by burrow_dist_defaults(); first */
	burrow_train_opts train; /* model, optimizer, seed, threads (0: the node's CPUs divided by
				    its ranks, see burrow_dist_threads); full_graph true (the default
				    here) or false: mini-batch, with batch_size (per rank), fanout,
				    prefetch (0: no overlap with the previous batch's compute),
				    max_batches and the feature-cache options */
	int halo;                /* enum burrow_halo_mode (default EXACT) */
	bool overlap;            /* aggregate inner rows while the exchange is in flight (default
				    true); false posts, waits, then computes: the serialized baseline */
	double boundary_sample;  /* in (0, 1]: each training epoch exchanges a random fraction of
				    the boundary nodes, rescaled by 1 / fraction (BNS-GCN); layer 0
				    reads the halo features stored with the part, evaluation uses
				    every boundary node; not with BURROW_HALO_STALE (default 1: all) */
	bool grad_overlap;       /* both modes: all-reduce each layer's gradients as soon as its
				    backward is done, overlapped with the layers below (default
				    false: one all-reduce after the whole backward, as with overlap
				    false in full-graph mode; see docs/distributed.md) */
	int comm;                /* enum burrow_comm_kind (default AUTO: MPI on the CPU; with
				    train.device a GPU, NCCL where it starts, else STAGED). MPI
				    needs host buffers, NCCL GPU buffers: burrow_dist_check and
				    burrow_dist_open refuse a mismatch with BURROW_E_UNSUPPORTED
				    before anything is opened. train.device "cuda" puts each rank
				    on cuda:<local rank mod the node's GPUs>, "cuda:N" every rank
				    on cuda:N, in both modes; GPUs need boundary_sample 1 */
} burrow_dist_opts;

/* What an epoch communicated (seconds summed over this rank's layers and steps). */
typedef struct burrow_comm_stats {
	size_t size;            /* set by the caller: sizeof(burrow_comm_stats); the library writes at most this */
	double comm_s;          /* halo exchanges from post to completion, plus gradient all-reduces;
				   mini-batch: the sampling exchanges, the feature fetch from post to
				   completion seen, and the all-reduces */
	double exposed_comm_s;  /* of that, the time this rank was blocked waiting */
	double progress_s;      /* full-graph: time inside the test calls that drive the halo
				   exchange between chunks of compute (over TCP, mostly the copies
				   of the exchanged bytes); 0 in mini-batch mode */
} burrow_comm_stats;

typedef struct burrow_dist burrow_dist;

BURROW_API void burrow_dist_defaults(burrow_dist_opts *o);
/* Check o the way burrow_dist_open does before it opens anything (ranges, combinations, a
 * --comm this run cannot serve): 0, or the status and message it would fail with. Needs no
 * MPI, so a launcher can refuse once, before it starts MPI. */
BURROW_API int burrow_dist_check(const burrow_dist_opts *o);
/* Open part <rank> of parts_dir on every rank. A part count that differs from the number
 * of ranks, or a missing or inconsistent part, is an error on the rank that finds it. */
BURROW_API int burrow_dist_open(burrow_dist **out,           /* out: caller closes */
				const char *parts_dir,        /* a parts-K directory */
				const burrow_dist_opts *o);   /* copied; NULL = defaults */
BURROW_API void burrow_dist_close(burrow_dist *d);
BURROW_API int burrow_dist_rank(const burrow_dist *d);
BURROW_API int burrow_dist_size(const burrow_dist *d);
/* This rank's OpenMP and OpenBLAS threads: train.threads when positive, else the CPUs of
 * its node (the union of the affinity masks of the node's ranks) divided by the ranks on
 * that node, at most the CPUs this rank may run on, at least 1. */
BURROW_API int burrow_dist_threads(const burrow_dist *d);
/* The communication this run uses (enum burrow_comm_kind, never AUTO: what auto chose). */
BURROW_API int burrow_dist_comm(const burrow_dist *d);
/* Where a mini-batch run draws the rows this rank expands (train.sampler_device resolved,
 * auto: the model's device when it is a GPU): "cpu" or "cuda:N"; "cpu" in full-graph mode.
 * Static storage in d. */
BURROW_API const char *burrow_dist_sampler_device(const burrow_dist *d);
/* One epoch: full-graph, one step over all parts; mini-batch, max over ranks of
 * ceil(train nodes / batch_size) steps (st->batches). st (loss, train accuracy: global) and
 * cs may be NULL. */
BURROW_API int burrow_dist_train_epoch(burrow_dist *d, burrow_epoch_stats *st, burrow_comm_stats *cs);
/* Accuracy on each split over all parts (correct / total, reduced), updating the best. */
BURROW_API int burrow_dist_evaluate(burrow_dist *d, burrow_eval_stats *ev);
BURROW_API burrow_best burrow_dist_best(const burrow_dist *d);
/* Early stopping and the learning rate, as burrow_trainer_should_stop and burrow_trainer_lr
 * (the same answer on every rank: evaluation's counts are all-reduced). */
BURROW_API bool burrow_dist_should_stop(const burrow_dist *d);
BURROW_API double burrow_dist_lr(const burrow_dist *d);
/* Epochs trained so far (restored by burrow_dist_load). */
BURROW_API int burrow_dist_epoch(const burrow_dist *d);
/* The launcher's MPI (libburrow_mpi): what a program that calls no MPI itself, like the burrow
 * command, needs around burrow_dist_*. Each is over every rank of the job; a failure is
 * BURROW_E_MPI with MPI's message. Start MPI (threads funneled) unless it is started, and
 * this process's rank and the job's size. */
BURROW_API int burrow_mpi_start(int *rank,                    /* out */
				int *size);                   /* out: ranks of the job */
/* Stop MPI (after every burrow_dist_close); nothing when it is not started. */
BURROW_API int burrow_mpi_stop(void);
/* End the whole job with exit code `code` (a rank's fatal failure, so that no rank waits). */
BURROW_API void burrow_mpi_abort(int code);
enum burrow_reduce { BURROW_REDUCE_SUM = 0, BURROW_REDUCE_MAX = 1, BURROW_REDUCE_MIN = 2 };
/* Reduce n values in place over every rank (enum burrow_reduce), the result on every rank. */
BURROW_API int burrow_mpi_allreduce_f64(double *v,            /* [n], in and out */
					int n, int op);
BURROW_API int burrow_mpi_allreduce_i64(int64_t *v,           /* [n], in and out */
					int n, int op);
/* Rank root's `bytes` bytes at buf to every rank's buf. */
BURROW_API int burrow_mpi_bcast(void *buf, size_t bytes, int root);
/* Every rank has reached this call. */
BURROW_API int burrow_mpi_barrier(void);

/* Write a checkpoint of the replicated model (the format of burrow_trainer_save): rank 0
 * writes path atomically; collective, every rank returns rank 0's status. */
BURROW_API int burrow_dist_save(burrow_dist *d, const char *path);
/* Restore one: rank 0 reads and verifies path and broadcasts weights, optimizer state,
 * seed, epoch and best, so only rank 0 needs the file. Collective; on failure nothing
 * changes on any rank. Stale halos restart exact for one epoch. */
BURROW_API int burrow_dist_load(burrow_dist *d, const char *path);
/* FNV-1a over this rank's weights: equal on every rank when the replicas agree. */
BURROW_API uint64_t burrow_dist_weights_checksum(const burrow_dist *d);

#ifdef __cplusplus
}
#endif
#endif /* BURROW_DIST_PUBLIC_H */
