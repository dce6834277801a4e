/* abi.c: the size field that opens every public options and stats struct, checked in one place. */
#include "internal.h"

#include <string.h>

int bw_opts_in(void *local, size_t known, const void *given, const char *name)
{
	size_t size;
	memcpy(&size, given, sizeof size);
	if (size < sizeof size)
		return bw_err(BURROW_E_INVAL, "%s: size %zu: fill it with its _defaults() function (this library knows %zu bytes)",
			      name, size, known);
	const unsigned char *g = given;
	for (size_t i = known; i < size; i++)
		if (g[i])
			return bw_err(BURROW_E_UNSUPPORTED, "%s: a field at byte %zu is set, past the %zu bytes libburrow %s knows",
				      name, i, known, burrow_version());
	memcpy((char *)local + sizeof size, g + sizeof size, BW_MIN(size, known) - sizeof size);
	return 0;
}

int bw_stats_check(const void *out, const char *name)
{
	size_t size;
	if (!out)
		return 0;
	memcpy(&size, out, sizeof size);
	if (size < sizeof size)
		return bw_err(BURROW_E_INVAL, "%s: size %zu: set .size = sizeof before the call", name, size);
	return 0;
}

void bw_stats_out(void *out, const void *full, size_t known)
{
	size_t size;
	if (!out)
		return;
	memcpy(&size, out, sizeof size);
	if (size >= sizeof size)
		memcpy((char *)out + sizeof size, (const char *)full + sizeof size, BW_MIN(size, known) - sizeof size);
}
