/* log.c: the settable log callback through which all library messages go. */
#include "internal.h"

#include <stdatomic.h>

static burrow_log_fn log_fn;
static void *log_user;
static int log_max = BURROW_LOG_INFO;

void burrow_log_set(burrow_log_fn fn, void *user, int max_level)
{
	log_fn = fn;
	log_user = user;
	log_max = max_level;
}

void bw_log(int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!log_fn || level > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	log_fn(level, msg, log_user);
}
