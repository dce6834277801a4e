/* comm_check.c: run under mpirun by tests/test_mpi.c: every operation of the communication
 * layer through one implementation (argument: "staged", on the CPU device, whose buffers are
 * host memory; "staged-gpu" or "nccl", on cuda:<local rank>) equals the MPI implementation on
 * host buffers, the reference: bit for bit for the staged path (the same MPI calls on copies),
 * within 1e-6 relative for NCCL's float sums (its own summation order), exactly otherwise; the
 * receive buffers' gaps stay untouched; the dispatchers refuse bad arguments. Exit 0 on every
 * rank when right. The program uses no MPI of its own: the MPI implementation is the reference. */
#include "../../core/internal.h"
#include "../../train/compute/compute.h"
#include "../../train/dist/comm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, K;
static const char *mode;
static bw_comm *ref, *sut; /* the MPI reference on host buffers; the implementation under test */
static const bw_device *dev;

static void die(const char *what, const char *why)
{
	fprintf(stderr, "comm-check (%s): rank %d: %s: %s\n", mode, rank, what, why);
	fflush(stderr);
	bw_comm_mpi_abort(1);
}

static void ok_or_die(int st, const char *what)
{
	if (st)
		die(what, burrow_last_error());
}

/* A device copy of n host bytes (owned by the caller: dfree). */
static void *dput(const void *host, size_t n)
{
	void *p = NULL;
	ok_or_die(bw_device_alloc(dev, n ? n : 1, &p), "device alloc");
	if (n)
		ok_or_die(bw_device_upload(dev, p, host, n), "upload");
	return p;
}

static void dget(void *host, const void *p, size_t n) { ok_or_die(n ? bw_device_download(dev, host, p, n) : 0, "download"); }
static void dfree(void *p) { bw_device_free(dev, p); }

/* Rank- and position-dependent values of every type, with fractions that make float sums
 * depend on their order. */
static void fill(void *buf, bw_comm_type t, int64_t n, int salt)
{
	for (int64_t i = 0; i < n; i++) {
		const int64_t v = (rank * 7919 + i * 31 + salt * 104729) % 100003;
		switch (t) {
		case BW_COMM_INT: ((int *)buf)[i] = (int)(v - 50000); break;
		case BW_COMM_I64: ((int64_t *)buf)[i] = v * 1000003 - 7; break;
		case BW_COMM_U64: ((uint64_t *)buf)[i] = (uint64_t)v * 2654435761u; break;
		case BW_COMM_F32: ((float *)buf)[i] = (float)v / 997.0f + 1.0f / (float)(1 + i % 13); break;
		case BW_COMM_F64: ((double *)buf)[i] = (double)v / 997.0 + 1.0 / (double)(1 + i % 13); break;
		case BW_COMM_BYTE: ((unsigned char *)buf)[i] = (unsigned char)(v * 37); break;
		}
	}
}

/* got equals want: bit for bit, or for NCCL's float sums within 1e-6 relative. */
static void same(const char *what, const void *got, const void *want, bw_comm_type t, int64_t n, bool sum)
{
	const bool loose = sum && bw_comm_kind(sut) == BURROW_COMM_NCCL && (t == BW_COMM_F32 || t == BW_COMM_F64);
	if (!loose) {
		if (memcmp(got, want, (size_t)n * bw_comm_type_size(t)))
			die(what, "differs from the MPI implementation's result");
		return;
	}
	for (int64_t i = 0; i < n; i++) {
		const double g = t == BW_COMM_F32 ? ((const float *)got)[i] : ((const double *)got)[i];
		const double w = t == BW_COMM_F32 ? ((const float *)want)[i] : ((const double *)want)[i];
		if (fabs(g - w) > 1e-6 * fmax(1.0, fabs(w)))
			die(what, "differs from the MPI implementation's sum by more than 1e-6 relative");
	}
}

/* All-reduce, in place and not, of every type and reduction the implementation has. */
static void check_allreduce(void)
{
	enum { N = 10007 };
	static const bw_comm_op ops[] = {BW_COMM_SUM, BW_COMM_MAX, BW_COMM_MIN, BW_COMM_BOR};
	for (int t = BW_COMM_INT; t <= BW_COMM_BYTE; t++) {
		for (int o = 0; o < 4; o++) {
			const bw_comm_op op = ops[o];
			if (op == BW_COMM_BOR && (t == BW_COMM_F32 || t == BW_COMM_F64))
				continue;
			if (op == BW_COMM_BOR && bw_comm_kind(sut) == BURROW_COMM_NCCL)
				continue; /* refused: checked below */
			const size_t bytes = (size_t)N * bw_comm_type_size(t);
			void *in = malloc(bytes), *want = malloc(bytes), *got = malloc(bytes);
			fill(in, t, N, o);
			for (int place = 0; place < 2; place++) {
				void *d_in = dput(in, bytes), *d_out = dput(in, bytes);
				memcpy(want, in, bytes);
				ok_or_die(bw_comm_allreduce(ref, place ? NULL : in, want, N, t, op, "ref"), "reference all-reduce");
				ok_or_die(bw_comm_allreduce(sut, place ? NULL : d_in, d_out, N, t, op, "sut"), "all-reduce");
				dget(got, d_out, bytes);
				same(place ? "all-reduce in place" : "all-reduce", got, want, t, N, op == BW_COMM_SUM);
				dfree(d_in);
				dfree(d_out);
			}
			free(in);
			free(want);
			free(got);
		}
	}
	if (bw_comm_kind(sut) == BURROW_COMM_NCCL) {
		int x = 1;
		void *d = dput(&x, sizeof x);
		if (bw_comm_allreduce(sut, NULL, d, 1, BW_COMM_INT, BW_COMM_BOR, "or") != BURROW_E_UNSUPPORTED)
			die("nccl", "a bitwise-or all-reduce was not refused");
		dfree(d);
	}
}

/* Non-blocking all-reduces: two in one wait, one driven by test. */
static void check_iallreduce(void)
{
	enum { N = 4099 };
	float a[N], b[N], wa[N], wb[N], ga[N], gb[N];
	fill(a, BW_COMM_F32, N, 11);
	fill(b, BW_COMM_F32, N, 12);
	memcpy(wa, a, sizeof a);
	memcpy(wb, b, sizeof b);
	bw_comm_req rr[2], rq[2];
	bw_comm_req_null(&rr[0]);
	bw_comm_req_null(&rr[1]);
	bw_comm_req_null(&rq[0]);
	bw_comm_req_null(&rq[1]);
	ok_or_die(bw_comm_iallreduce(ref, wa, N, BW_COMM_F32, BW_COMM_SUM, &rr[0], "ref"), "ref iallreduce");
	ok_or_die(bw_comm_iallreduce(ref, wb, N, BW_COMM_F32, BW_COMM_SUM, &rr[1], "ref"), "ref iallreduce");
	ok_or_die(bw_comm_wait(rr, 2, "ref"), "ref wait");
	float *da = dput(a, sizeof a), *db = dput(b, sizeof b);
	ok_or_die(bw_comm_iallreduce(sut, da, N, BW_COMM_F32, BW_COMM_SUM, &rq[0], "sut"), "iallreduce");
	if (bw_comm_iallreduce(sut, da, N, BW_COMM_F32, BW_COMM_SUM, &rq[0], "again") != BURROW_E_INVAL)
		die("iallreduce", "a request still in flight was posted again");
	ok_or_die(bw_comm_iallreduce(sut, db, N, BW_COMM_F32, BW_COMM_SUM, &rq[1], "sut"), "iallreduce");
	int done = 0;
	while (!done)
		ok_or_die(bw_comm_test(rq, 2, &done, "test"), "test");
	if (rq[0].active || rq[1].active)
		die("test", "completed requests are still active");
	dget(ga, da, sizeof ga);
	dget(gb, db, sizeof gb);
	same("iallreduce (a)", ga, wa, BW_COMM_F32, N, true);
	same("iallreduce (b)", gb, wb, BW_COMM_F32, N, true);
	dfree(da);
	dfree(db);
}

static void check_bcast(void)
{
	enum { N = 777 };
	double x[N], w[N], g[N];
	fill(x, BW_COMM_F64, N, 21);
	memcpy(w, x, sizeof x);
	ok_or_die(bw_comm_bcast(ref, w, N, BW_COMM_F64, K - 1, "ref"), "ref bcast");
	double *d = dput(x, sizeof x);
	ok_or_die(bw_comm_bcast(sut, d, N, BW_COMM_F64, K - 1, "sut"), "bcast");
	dget(g, d, sizeof g);
	same("bcast", g, w, BW_COMM_F64, N, false);
	if (bw_comm_bcast(sut, d, N, BW_COMM_F64, K, "bad root") != BURROW_E_RANGE)
		die("bcast", "a root outside the ranks was not refused");
	dfree(d);
}

static void check_alltoall(void)
{
	const int c = 3;
	int *s = malloc((size_t)K * c * sizeof *s), *w = malloc((size_t)K * c * sizeof *w), *g = malloc((size_t)K * c * sizeof *g);
	fill(s, BW_COMM_INT, (int64_t)K * c, 31);
	ok_or_die(bw_comm_alltoall(ref, s, w, c, BW_COMM_INT, "ref"), "ref alltoall");
	int *ds = dput(s, (size_t)K * c * sizeof *s), *dr = dput(s, (size_t)K * c * sizeof *s);
	ok_or_die(bw_comm_alltoall(sut, ds, dr, c, BW_COMM_INT, "sut"), "alltoall");
	dget(g, dr, (size_t)K * c * sizeof *g);
	same("alltoall", g, w, BW_COMM_INT, (int64_t)K * c, false);
	dfree(ds);
	dfree(dr);
	free(s);
	free(w);
	free(g);
}

/* Variable all-to-all, blocking and not: rank r sends (r + j) % 4 + j elements to rank j
 * (zero for some pairs), the receive side with a gap of 2 elements after each peer's block
 * that holds a sentinel both implementations must leave alone. */
static void counts(int n, const int *peer, int *scnt, int *sdsp, int *rcnt, int *rdsp, int64_t *stot, int64_t *rtot)
{
	int64_t s = 0, r = 0;
	for (int j = 0; j < n; j++) {
		const int p = peer ? peer[j] : j;
		scnt[j] = (rank + p) % 4 == 0 ? 0 : (rank + p) % 4 + p;
		rcnt[j] = (p + rank) % 4 == 0 ? 0 : (p + rank) % 4 + rank;
		sdsp[j] = (int)s;
		rdsp[j] = (int)r;
		s += scnt[j];
		r += rcnt[j] + 2;
	}
	*stot = s;
	*rtot = r;
}

static void check_alltoallv(void)
{
	int *scnt = malloc(4 * (size_t)K * sizeof *scnt), *sdsp = scnt + K, *rcnt = scnt + 2 * K, *rdsp = scnt + 3 * K;
	int64_t ns, nr;
	counts(K, NULL, scnt, sdsp, rcnt, rdsp, &ns, &nr);
	for (int blocking = 0; blocking < 2; blocking++) {
		const bw_comm_type t = blocking ? BW_COMM_I64 : BW_COMM_F32;
		const size_t u = bw_comm_type_size(t);
		void *s = malloc((size_t)(ns + 1) * u), *w = malloc((size_t)nr * u), *g = malloc((size_t)nr * u);
		fill(s, t, ns, 41 + blocking);
		memset(w, 0xA5, (size_t)nr * u);
		void *ds = dput(s, (size_t)ns * u), *dr = dput(w, (size_t)nr * u);
		if (blocking) {
			ok_or_die(bw_comm_alltoallv(ref, s, scnt, sdsp, w, rcnt, rdsp, t, "ref"), "ref alltoallv");
			ok_or_die(bw_comm_alltoallv(sut, ds, scnt, sdsp, dr, rcnt, rdsp, t, "sut"), "alltoallv");
		} else {
			bw_comm_req a, b;
			bw_comm_req_null(&a);
			bw_comm_req_null(&b);
			ok_or_die(bw_comm_ialltoallv(ref, s, scnt, sdsp, w, rcnt, rdsp, t, &a, "ref"), "ref ialltoallv");
			ok_or_die(bw_comm_wait(&a, 1, "ref"), "ref wait");
			ok_or_die(bw_comm_ialltoallv(sut, ds, scnt, sdsp, dr, rcnt, rdsp, t, &b, "sut"), "ialltoallv");
			bw_comm_req two[2] = {a, b};
			two[0].active = true; /* a request of the reference beside one of the implementation's */
			two[0].comm = ref;
			if (bw_comm_wait(two, 2, "mixed") != BURROW_E_INVAL)
				die("wait", "requests of two communicators in one call were not refused");
			int done = 0;
			while (!done)
				ok_or_die(bw_comm_test(&b, 1, &done, "test"), "test");
		}
		dget(g, dr, (size_t)nr * u);
		same(blocking ? "alltoallv (with gaps)" : "ialltoallv (with gaps)", g, w, t, nr, false);
		free(s);
		free(w);
		free(g);
		dfree(ds);
		dfree(dr);
	}
	scnt[0] = -1;
	if (bw_comm_alltoallv(sut, NULL, scnt, sdsp, NULL, rcnt, rdsp, BW_COMM_INT, "bad") != BURROW_E_INVAL)
		die("alltoallv", "a negative count was not refused");
	free(scnt);
}

/* The halo's neighbor all-to-all over the other ranks in reverse order, rows of 5 floats. */
static void check_neighbors(void)
{
	const int R = 5, n = K - 1;
	int *nbr = malloc((size_t)(n ? n : 1) * sizeof *nbr), *cd = malloc(4 * (size_t)(n ? n : 1) * sizeof *cd);
	for (int j = 0, k = 0; j < K; j++)
		if (K - 1 - j != rank)
			nbr[k++] = K - 1 - j;
	int64_t ns, nr;
	counts(n, nbr, cd, cd + n, cd + 2 * n, cd + 3 * n, &ns, &nr);
	bw_comm *rn = NULL, *sn = NULL;
	ok_or_die(bw_comm_neighbors(&rn, ref, n, nbr), "ref neighbors");
	ok_or_die(bw_comm_neighbors(&sn, sut, n, nbr), "neighbors");
	float *s = malloc((size_t)(ns + 1) * R * sizeof *s), *w = malloc((size_t)(nr + 1) * R * sizeof *w),
	      *g = malloc((size_t)(nr + 1) * R * sizeof *g);
	fill(s, BW_COMM_F32, ns * R, 51);
	memset(w, 0x5A, (size_t)nr * R * sizeof *w);
	float *ds = dput(s, (size_t)ns * R * sizeof *s), *dr = dput(w, (size_t)nr * R * sizeof *w);
	bw_comm_req a, b;
	bw_comm_req_null(&a);
	bw_comm_req_null(&b);
	ok_or_die(bw_comm_ineighbor_alltoallv(rn, s, cd, cd + n, w, cd + 2 * n, cd + 3 * n, R, &a, "ref"), "ref nbr");
	ok_or_die(bw_comm_wait(&a, 1, "ref"), "ref wait");
	ok_or_die(bw_comm_ineighbor_alltoallv(sn, ds, cd, cd + n, dr, cd + 2 * n, cd + 3 * n, R, &b, "sut"), "nbr");
	ok_or_die(bw_comm_wait(&b, 1, "wait"), "wait");
	dget(g, dr, (size_t)nr * R * sizeof *g);
	same("neighbor all-to-all", g, w, BW_COMM_F32, nr * R, false);
	if (bw_comm_ineighbor_alltoallv(sut, ds, cd, cd + n, dr, cd + 2 * n, cd + 3 * n, R, &b, "x") != BURROW_E_INVAL)
		die("neighbor all-to-all", "a communicator without neighbors was not refused");
	bw_comm_close(rn);
	bw_comm_close(sn);
	dfree(ds);
	dfree(dr);
	free(s);
	free(w);
	free(g);
	free(nbr);
	free(cd);
}

int main(int argc, char **argv)
{
	bw_backend be;
	bool gpu;
	mode = argc == 2 ? argv[1] : "?";
	if (bw_comm_mpi_start(&rank, &K))
		return 1;
	gpu = !strcmp(mode, "nccl") || !strcmp(mode, "staged-gpu");
	if (!gpu && strcmp(mode, "staged"))
		die("usage", "comm_check staged|staged-gpu|nccl");
	ok_or_die(bw_comm_world(&ref), "the MPI world");
	if (gpu) { /* one GPU per rank by local rank (staged-gpu: every rank on cuda:0) */
		bw_comm *node = NULL;
		ok_or_die(bw_comm_node(&node, ref), "the node's ranks");
		bw_backend_cfg cfg = {.index = !strcmp(mode, "nccl") ? bw_comm_rank(node) : 0};
		bw_comm_close(node);
		ok_or_die(bw_backend_open(&be, BW_BACKEND_CUDA, &cfg), "the GPU");
	} else {
		ok_or_die(bw_backend_init(&be, BW_BACKEND_CPU, 1), "the CPU");
	}
	dev = be.dev;
	ok_or_die(bw_comm_open(&sut, gpu && !strcmp(mode, "nccl") ? BURROW_COMM_NCCL : BURROW_COMM_STAGED, dev),
		  "the communicator under test");
	bw_comm *dup = NULL;
	ok_or_die(bw_comm_dup(&dup, sut), "dup");
	if (bw_comm_kind(dup) != bw_comm_kind(sut) || bw_comm_rank(dup) != rank || bw_comm_size(dup) != K)
		die("dup", "the duplicate is not the same kind over the same ranks");
	bw_comm_close(dup);
	check_allreduce();
	check_iallreduce();
	check_bcast();
	check_alltoall();
	check_alltoallv();
	check_neighbors();
	printf("comm-check (%s): rank %d of %d: ok (%s equals mpi)\n", mode, rank, K, sut->iface->name);
	fflush(stdout);
	bw_comm_close(sut);
	bw_comm_close(ref);
	bw_backend_release(&be);
	bw_comm_mpi_stop();
	return 0;
}
