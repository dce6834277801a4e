/* mpi_gw.c: MPI's error codes as Burrow statuses. */
#include "mpi_gw.h"

int bw_err_mpi(int code, const char *what)
{
	char text[MPI_MAX_ERROR_STRING];
	int len = 0;
	if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
		snprintf(text, sizeof text, "MPI error %d", code);
	return bw_err(BURROW_E_MPI, "%s: %s", what, text);
}
