/* halo_check.c: run under mpirun by tests/test_mpi.c: the halo exchange delivers exactly the
 * owners' rows in forward and sums halo gradients into their owners in backward, checked
 * against values recomputed from global ids. Exit 0 on every rank when right. */
#include "../../core/internal.h"
#include "../../train/dist/halo.h"

#include <mpi.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 3000
#define DIM 5

static int K, rank;
static int64_t owner(int64_t v) { return v * K / N; }
static int64_t lo_of(int r) { return ((int64_t)r * N + K - 1) / K; }
static float f(int64_t v, int c) { return (float)v * 0.001f + (float)c; }
static float g(int64_t v, int from, int c) { return (float)(from + 1) * 1000.0f + (float)v + 0.5f * (float)c; }

static void die(const char *msg)
{
	fprintf(stderr, "halo-check: rank %d: %s\n", rank, msg);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

/* adjacency of v with part j: does v have a neighbor owned by j? */
static bool touches(const burrow_csr *gr, int64_t v, int j)
{
	for (int64_t p = gr->indptr[v]; p < gr->indptr[v + 1]; p++)
		if (owner(burrow_csr_index(gr, p)) == j)
			return true;
	return false;
}

/* Backward: every rank sends g(v, rank) for each of its halo nodes v; each owned row must
 * end up with the sum of its (kept, under boundary sampling p < 1) copies' gradients / p. */
static void check_backward(bw_halo *h, const burrow_csr *gr, float *grad, int64_t n_owned, int64_t nh,
			   const int64_t *halo_ids, double p, uint64_t key)
{
	const int64_t lo = lo_of(rank);
	memset(grad, 0, (size_t)(n_owned + nh) * DIM * sizeof *grad);
	for (int64_t i = 0; i < nh; i++)
		for (int c = 0; c < DIM; c++)
			grad[(n_owned + i) * DIM + c] = g(halo_ids[i], rank, c);
	if (bw_halo_backward_start(h, grad, DIM) || bw_halo_backward_finish(h, grad))
		die(burrow_last_error());
	for (int64_t i = 0; i < n_owned; i++)
		for (int c = 0; c < DIM; c++) {
			double want = 0;
			for (int j = 0; j < K; j++)
				if (j != rank && touches(gr, lo + i, j) && bw_halo_keep(key, lo + i, p))
					want += g(lo + i, j, c) / p;
			if (fabs(grad[i * DIM + c] - want) > 1e-3 * fabs(want) + 1e-6)
				die(p < 1 ? "sampled backward: an owned row's gradient is not the sum of its kept copies / p"
					  : "backward: an owned row's gradient is not the sum of its halo copies");
		}
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &K);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	/* the same random symmetric graph on every rank; owners are contiguous id ranges
	 * (check that lo_of matches owner) */
	burrow_csr_opts o;
	burrow_csr_defaults(&o);
	o.symmetrize = true;
	burrow_csr_builder *b;
	burrow_csr gr;
	if (burrow_csr_builder_open(&b, N, &o))
		die(burrow_last_error());
	bw_rng r;
	bw_rng_seed(&r, 77);
	for (int i = 0; i < 4 * N; i++) {
		int64_t u = (int64_t)bw_rng_below(&r, N), v = (int64_t)bw_rng_below(&r, N);
		burrow_csr_builder_add(b, &u, &v, 1);
	}
	if (burrow_csr_builder_finish(b, &gr))
		die(burrow_last_error());
	const int64_t lo = lo_of(rank), hi = lo_of(rank + 1), n_owned = hi - lo;
	for (int64_t v = lo; v < hi; v++)
		if (owner(v) != rank)
			die("owner ranges disagree");

	/* halo (by owner part, ascending ids) and send lists (what j's halo holds of ours) */
	int64_t *halo_ids = malloc(N * sizeof *halo_ids), *send_local = malloc((size_t)K * N * sizeof *send_local);
	int64_t *halo_off = calloc((size_t)K + 1, sizeof *halo_off), *send_off = calloc((size_t)K + 1, sizeof *send_off);
	int64_t nh = 0, ns = 0;
	for (int j = 0; j < K; j++) {
		halo_off[j] = nh;
		send_off[j] = ns;
		if (j == rank)
			continue;
		for (int64_t u = lo_of(j); u < lo_of(j + 1); u++)
			if (touches(&gr, u, rank))
				halo_ids[nh++] = u;
		for (int64_t v = lo; v < hi; v++)
			if (touches(&gr, v, j))
				send_local[ns++] = v - lo;
	}
	halo_off[K] = nh;
	send_off[K] = ns;

	bw_halo *h;
	bw_comm *world;
	bw_backend be;
	if (bw_backend_init(&be, BW_BACKEND_CPU, 0) || bw_comm_world(&world) ||
	    bw_halo_open(&h, world, &be, n_owned, send_local, send_off, halo_off))
		die(burrow_last_error());
	float *emb = malloc((size_t)(n_owned + nh) * DIM * sizeof *emb);
	for (int round = 0; round < 3; round++) {
		for (int64_t i = 0; i < n_owned + nh; i++)
			for (int c = 0; c < DIM; c++)
				emb[i * DIM + c] = i < n_owned ? f(lo + i, c) + (float)round : NAN;
		if (bw_halo_forward_start(h, emb, DIM))
			die(burrow_last_error());
		/* overlap: poll for progress the way the trainer does between chunks */
		int done;
		while ((done = bw_halo_test(h)) == 0)
			;
		if (done < 0)
			die(burrow_last_error());
		for (int64_t i = 0; i < nh; i++)
			for (int c = 0; c < DIM; c++)
				if (emb[(n_owned + i) * DIM + c] != f(halo_ids[i], c) + (float)round)
					die("forward: a halo row differs from its owner's row");
	}
	float *grad = calloc((size_t)(n_owned + nh) * DIM, sizeof *grad);
	check_backward(h, &gr, grad, n_owned, nh, halo_ids, 1.0, 0);
	/* boundary sampling: only kept nodes travel, scaled by 1/p; both sides agree on which */
	const double p = 0.5;
	const uint64_t key = 99;
	int64_t *send_gid = malloc((size_t)(ns ? ns : 1) * sizeof *send_gid);
	for (int64_t k = 0; k < ns; k++)
		send_gid[k] = lo + send_local[k];
	if (bw_halo_sample(h, p, key, send_gid, halo_ids))
		die(burrow_last_error());
	int64_t kept = 0;
	for (int64_t i = 0; i < nh; i++)
		kept += bw_halo_keep(key, halo_ids[i], p);
	if (bw_halo_kept(h) != kept || kept < nh * 3 / 10 || kept > nh * 7 / 10)
		die("boundary sampling keeps the wrong number of halo rows");
	for (int64_t i = 0; i < n_owned + nh; i++)
		for (int c = 0; c < DIM; c++)
			emb[i * DIM + c] = i < n_owned ? f(lo + i, c) : NAN;
	if (bw_halo_forward_start(h, emb, DIM) || bw_halo_wait(h))
		die(burrow_last_error());
	for (int64_t i = 0; i < nh; i++)
		for (int c = 0; c < DIM; c++) {
			float want = bw_halo_keep(key, halo_ids[i], p) ? (float)(1 / p) * f(halo_ids[i], c) : 0.0f;
			if (emb[(n_owned + i) * DIM + c] != want)
				die("sampled forward: a halo row is not its owner's row scaled by 1/p, or not zero");
		}
	check_backward(h, &gr, grad, n_owned, nh, halo_ids, p, key);
	/* sampling off: every row again */
	if (bw_halo_sample(h, 1.0, 0, NULL, NULL) || bw_halo_kept(h) != nh)
		die("boundary sampling does not turn off");
	if (bw_halo_forward_start(h, emb, DIM) || bw_halo_wait(h))
		die(burrow_last_error());
	for (int64_t i = 0; i < nh; i++)
		if (emb[(n_owned + i) * DIM] != f(halo_ids[i], 0))
			die("forward after sampling: a halo row differs from its owner's row");
	free(send_gid);

	bw_halo_stats st;
	bw_halo_get_stats(h, &st);
	if (st.exchanges != 7)
		die("stats count the wrong number of exchanges");
	printf("halo-check: rank %d of %d ok (%lld owned, %lld halo, %lld sent)\n", rank, K, (long long)n_owned,
	       (long long)nh, (long long)ns);
	bw_halo_close(h);
	bw_comm_close(world);
	bw_backend_release(&be);
	burrow_csr_builder_close(b);
	free(emb);
	free(grad);
	free(halo_ids);
	free(send_local);
	free(halo_off);
	free(send_off);
	MPI_Finalize();
	return 0;
}
