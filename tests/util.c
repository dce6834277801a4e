/* util.c: helpers shared by the test files (see util.h). */
#define _GNU_SOURCE
#include "util.h"

#include <math.h>
#include <criterion/criterion.h>

#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

char *tu_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *t;
	if (asprintf(&t, "%s/burrow-test-XXXXXX", base && *base ? base : "/tmp") < 0)
		return NULL;
	if (!mkdtemp(t)) {
		free(t);
		return NULL;
	}
	return t;
}

char *tu_dir;

void tu_scratch_init(void) { tu_dir = tu_tmpdir(); }

void tu_scratch_fini(void)
{
	tu_rmrf(tu_dir);
	free(tu_dir);
	tu_dir = NULL;
}

void tu_rmrf(const char *path)
{
	char *cmd;
	if (path && asprintf(&cmd, "rm -rf '%s'", path) >= 0) {
		if (system(cmd) != 0)
			fprintf(stderr, "tu_rmrf: could not remove %s\n", path);
		free(cmd);
	}
}

char *tu_path(const char *dir, const char *fmt, ...)
{
	char *rel, *p;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&rel, fmt, ap) < 0)
		rel = NULL;
	va_end(ap);
	if (!rel || asprintf(&p, "%s/%s", dir, rel) < 0)
		p = NULL;
	free(rel);
	return p;
}

const char *tu_burrow(void)
{
	const char *b = getenv("BURROW_BIN");
	return b && *b ? b : "build/burrow";
}

const char *tu_datasets(void)
{
	const char *d = getenv("BURROW_DATASETS");
	struct stat sb;
	if (!d || !*d)
		d = "../shared/datasets";
	return stat(d, &sb) == 0 && S_ISDIR(sb.st_mode) ? d : NULL;
}

static char *slurp_fd(int fd)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	ssize_t r;
	while (buf && (r = read(fd, buf + n, cap - n - 1)) > 0) {
		n += (size_t)r;
		if (cap - n < 2) {
			char *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
	}
	if (buf)
		buf[n] = '\0';
	return buf;
}

int tu_sh(char **out, char **err, const char *fmt, ...)
{
	char *cmd;
	va_list ap;
	va_start(ap, fmt);
	int k = vasprintf(&cmd, fmt, ap);
	va_end(ap);
	if (k < 0)
		return -1;
	char ofile[] = "/tmp/burrow-test-out-XXXXXX", efile[] = "/tmp/burrow-test-err-XXXXXX";
	int ofd = mkstemp(ofile), efd = mkstemp(efile);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(ofd, 1);
		dup2(efd, 2);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	int status = -1;
	if (pid > 0)
		waitpid(pid, &status, 0);
	lseek(ofd, 0, SEEK_SET);
	lseek(efd, 0, SEEK_SET);
	if (out)
		*out = slurp_fd(ofd);
	if (err)
		*err = slurp_fd(efd);
	close(ofd);
	close(efd);
	unlink(ofile);
	unlink(efile);
	free(cmd);
	return pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void *tu_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

int tu_exists(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0;
}

long long tu_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

void tu_truncate(const char *path, long long n)
{
	if (truncate(path, n) != 0)
		fprintf(stderr, "tu_truncate: %s failed\n", path);
}

int tu_log_losses(const char *path, char losses[][40], int max)
{
	char *text = tu_read(path, NULL);
	if (!text)
		return -1;
	int n = 0;
	for (char *p = text; (p = strstr(p, "\"loss\": ")) && n < max; n++) {
		p += 8;
		size_t k = strcspn(p, ",}");
		snprintf(losses[n], 40, "%.*s", (int)k, p);
	}
	free(text);
	return n;
}

size_t tu_mem_now(void)
{
	size_t now;
	burrow_mem_stats(&now, NULL);
	return now;
}

pid_t tu_start(const char *errpath, char *const argv[])
{
	pid_t p = fork();
	if (p == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644), o = open("/dev/null", O_WRONLY);
		if (e < 0 || o < 0 || dup2(e, 2) < 0 || dup2(o, 1) < 0)
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	cr_assert(p > 0);
	return p;
}

void tu_wait_for(pid_t p, const char *pattern, const char *errpath)
{
	for (;;) {
		glob_t g;
		int r = glob(pattern, 0, NULL, &g);
		globfree(&g);
		if (r == 0)
			return;
		int status;
		if (waitpid(p, &status, WNOHANG) == p) {
			char *err = tu_read(errpath, NULL);
			cr_assert_fail("ended (status %d) before %s appeared: %s", status, pattern, err ? err : "");
		}
		usleep(2000);
	}
}

/* Regularized upper incomplete gamma Q(a, x) (series below a + 1, continued fraction above). */
static double gamma_q(double a, double x)
{
	if (x <= 0)
		return 1;
	const double lead = exp(-x + a * log(x) - lgamma(a));
	if (x < a + 1) {
		double ap = a, del = 1 / a, sum = del;
		for (int n = 0; n < 10000 && fabs(del) > fabs(sum) * 1e-16; n++) {
			ap += 1;
			del *= x / ap;
			sum += del;
		}
		return 1 - sum * lead;
	}
	double b = x + 1 - a, c = 1e300, d = 1 / b, h = d;
	for (int i = 1; i < 10000; i++) {
		double an = -i * (i - a);
		b += 2;
		d = an * d + b;
		d = fabs(d) < 1e-300 ? 1e-300 : d;
		c = b + an / c;
		c = fabs(c) < 1e-300 ? 1e-300 : c;
		d = 1 / d;
		double del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-16)
			break;
	}
	return lead * h;
}

/* P(chi-square with df degrees of freedom >= x). */
double tu_chi2_sf(double x, double df) { return gamma_q(df / 2, x / 2); }
