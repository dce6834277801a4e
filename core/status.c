/* status.c: status codes, the thread-local last-error message, the library version. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define BW_STR2(x) #x
#define BW_STR(x) BW_STR2(x)

static _Thread_local char last_error[1024];

const char *burrow_version(void)
{
	return BW_STR(BURROW_VERSION_MAJOR) "." BW_STR(BURROW_VERSION_MINOR) "." BW_STR(BURROW_VERSION_PATCH);
}

const char *burrow_strerror(int status)
{
	switch (status) {
	case BURROW_OK: return "success";
	case BURROW_DONE: return "done";
	case BURROW_E_INVAL: return "invalid argument";
	case BURROW_E_NOMEM: return "out of memory";
	case BURROW_E_IO: return "I/O error";
	case BURROW_E_FORMAT: return "bad file format";
	case BURROW_E_UNSUPPORTED: return "not supported";
	case BURROW_E_CUDA: return "CUDA error";
	case BURROW_E_MPI: return "MPI error";
	case BURROW_E_METIS: return "METIS error";
	case BURROW_E_NOTFOUND: return "not found";
	case BURROW_E_EXISTS: return "already exists";
	case BURROW_E_RANGE: return "out of range";
	default: return "unknown status";
	}
}

const char *burrow_last_error(void) { return last_error; }

int bw_err(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof last_error, fmt, ap);
	va_end(ap);
	bw_log(BURROW_LOG_DEBUG, "error %d: %s", status, last_error);
	return status;
}

int bw_err_errno(int errnum, const char *path, const char *what)
{
	int st;
	switch (errnum) {
	case ENOENT: st = BURROW_E_NOTFOUND; break;
	case ENOMEM: st = BURROW_E_NOMEM; break;
	case EEXIST:
	case ENOTEMPTY: st = BURROW_E_EXISTS; break;
	case EINVAL: st = BURROW_E_INVAL; break;
	default: st = BURROW_E_IO; break;
	}
	return bw_err(st, "%s: %s: %s", path, what, strerror(errnum));
}

int bw_err_thread(int rc, const char *who, const char *what)
{
	return bw_err(BURROW_E_NOMEM, "%s: cannot start %s: %s", who, what, strerror(rc));
}

int bw_err_prefix(int status, const char *prefix)
{
	char tmp[sizeof last_error];
	size_t k = strlen(prefix);
	if (k > sizeof tmp - 3)
		k = sizeof tmp - 3;
	memcpy(tmp, prefix, k);
	tmp[k++] = ':';
	tmp[k++] = ' ';
	size_t rest = strlen(last_error);
	if (rest > sizeof tmp - 1 - k)
		rest = sizeof tmp - 1 - k;
	memcpy(tmp + k, last_error, rest);
	tmp[k + rest] = '\0';
	memcpy(last_error, tmp, sizeof last_error);
	return status;
}

int bw_err_rebase(int status, const char *from, const char *to)
{
	size_t lf = strlen(from);
	if (status >= 0 || strncmp(last_error, from, lf))
		return status;
	char tmp[sizeof last_error];
	snprintf(tmp, sizeof tmp, "%s", last_error + lf);
	size_t lt = strlen(to);
	if (lt > sizeof last_error - 1)
		lt = sizeof last_error - 1;
	memcpy(last_error, to, lt);
	size_t rest = strlen(tmp);
	if (rest > sizeof last_error - 1 - lt)
		rest = sizeof last_error - 1 - lt;
	memcpy(last_error + lt, tmp, rest);
	last_error[lt + rest] = '\0';
	return status;
}

void bw_assert_fail(const char *expr, const char *file, int line)
{
	bw_log(BURROW_LOG_ERROR, "internal error: assertion '%s' failed at %s:%d", expr, file, line);
	fprintf(stderr, "libburrow: internal error: assertion '%s' failed at %s:%d\n", expr, file, line);
	abort();
}
