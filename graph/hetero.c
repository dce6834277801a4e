/* hetero.c: typed graphs (dataset format version 2, docs/format.md): names, the check of a
 * typed graph, and the reader of a version-2 directory against its meta.json. */
#define _GNU_SOURCE
#include "dataset_internal.h"
#include "csr_internal.h"

#include <string.h>

bool bw_type_name_ok(const char *s)
{
	if (!s || !*s)
		return false;
	size_t n = 0;
	for (const char *c = s; *c; c++, n++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
		      *c == '-'))
			return false;
	return n < BURROW_MAX_NAME;
}

void bw_relation_dir(char *buf, size_t cap, const char *src, const char *name, const char *dst)
{
	snprintf(buf, cap, "%s___%s___%s", src, name, dst);
}
