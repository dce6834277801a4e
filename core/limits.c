/* limits.c: what is left of the address space under RLIMIT_AS, and what a thread's stack takes of it. */
#define _GNU_SOURCE
#include "internal.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The process's mapped bytes now (VmSize of /proc/self/status), or 0 when unknown. Read
 * with open/read into a stack buffer: no allocation, so it is safe before main (see
 * tools/env.c) and under a limit that is already exhausted. */
size_t bw_as_used(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *p = strstr(buf, "\nVmSize:");
	return p ? (size_t)strtoull(p + 8, NULL, 10) * 1024 : 0;
}

bool bw_as_left(size_t *left, size_t *limit)
{
	struct rlimit rl;
	*left = *limit = SIZE_MAX;
	if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return false;
	const size_t used = bw_as_used();
	*limit = (size_t)rl.rlim_cur;
	*left = used < *limit ? *limit - used : 0;
	return true;
}

size_t bw_stack_bytes(void)
{
	pthread_attr_t a;
	size_t s = 8u << 20;
	if (pthread_getattr_default_np(&a) == 0) {
		if (pthread_attr_getstacksize(&a, &s) != 0)
			s = 8u << 20;
		pthread_attr_destroy(&a);
	}
	return s;
}
