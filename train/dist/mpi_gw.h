/* mpi_gw.h: the one gateway to MPI's errors: distributed training calls MPI through
 * BW_MPI, which turns MPI's error code into BURROW_E_MPI with MPI's own text. */
#ifndef BURROW_MPI_GW_H
#define BURROW_MPI_GW_H

#include "../../core/internal.h"

#include <mpi.h>

/* Translate an MPI error code into BURROW_E_MPI with MPI's own text and what was called. */
int bw_err_mpi(int code, const char *what);

static inline int bw_mpi_status(int code, const char *what) { return code == MPI_SUCCESS ? 0 : bw_err_mpi(code, what); }

/* The status of an MPI call: 0, or BURROW_E_MPI recorded with MPI's message. */
#define BW_MPI(call, what) bw_mpi_status((call), (what))

#endif
