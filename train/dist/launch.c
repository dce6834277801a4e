/* launch.c: the launcher's MPI of the public API (burrow_mpi_*): start and stop MPI and the
 * few job-wide reductions a launcher prints, over one world communicator of the
 * communication layer, so that the burrow command calls no MPI itself. */
#include "comm.h"

static bw_comm *g_world; /* opened by burrow_mpi_start, closed by burrow_mpi_stop */

int burrow_mpi_start(int *rank, int *size)
{
	int st;
	if ((st = bw_comm_mpi_start(rank, size)))
		return st;
	return g_world ? 0 : bw_comm_world(&g_world);
}

int burrow_mpi_stop(void)
{
	bw_comm_close(g_world);
	g_world = NULL;
	return bw_comm_mpi_stop();
}

void burrow_mpi_abort(int code) { bw_comm_mpi_abort(code); }

/* The world communicator, or an error when burrow_mpi_start has not run. */
static int world(const char *what)
{
	return g_world ? 0 : bw_err(BURROW_E_INVAL, "%s: MPI is not started (burrow_mpi_start)", what);
}

static int reduce(void *v, int n, bw_comm_type t, int op, const char *what)
{
	static const bw_comm_op ops[] = {BW_COMM_SUM, BW_COMM_MAX, BW_COMM_MIN};
	int st;
	if ((st = world(what)))
		return st;
	if (op < BURROW_REDUCE_SUM || op > BURROW_REDUCE_MIN || n < 0 || (n && !v))
		return bw_err(BURROW_E_INVAL, "%s: reduction %d of %d values", what, op, n);
	return bw_comm_allreduce(g_world, NULL, v, n, t, ops[op], what);
}

int burrow_mpi_allreduce_f64(double *v, int n, int op) { return reduce(v, n, BW_COMM_F64, op, "mpi: all-reduce"); }
int burrow_mpi_allreduce_i64(int64_t *v, int n, int op) { return reduce(v, n, BW_COMM_I64, op, "mpi: all-reduce"); }

int burrow_mpi_bcast(void *buf, size_t bytes, int root)
{
	int st;
	if ((st = world("mpi: broadcast")))
		return st;
	return bw_comm_bcast(g_world, buf, (int64_t)bytes, BW_COMM_BYTE, root, "mpi: broadcast");
}

/* A one-value all-reduce: no rank leaves it before every rank has entered it. */
int burrow_mpi_barrier(void)
{
	int one = 1, st;
	if ((st = world("mpi: barrier")))
		return st;
	return bw_comm_allreduce(g_world, NULL, &one, 1, BW_COMM_INT, BW_COMM_SUM, "mpi: barrier");
}
