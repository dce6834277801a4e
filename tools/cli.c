/* cli.c: shared helpers of the burrow command: error lines, option parsing, numbers, progress. */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static bool interrupted_quiet;
static volatile sig_atomic_t interrupted_sig;
static sem_t interrupted_sem;
static char interrupted_line[3][192]; /* "burrow: CMD: interrupted (SIGINT|SIGTERM|SIGHUP)\n" */
static size_t interrupted_len[3];

/* The handler runs in whichever thread the signal lands on (libraries such as OpenBLAS start
 * threads before main, so the signals cannot be blocked everywhere). It writes the line at
 * once (write is async-signal-safe): under mpirun the launcher kills the ranks that have not
 * ended about a second after passing the signal on, and a busy machine may not have run the
 * thread below by then. Then it wakes that thread, which removes the temporaries. */
static void on_interrupt(int sig)
{
	if (!interrupted_sig) {
		interrupted_sig = sig;
		const int k = sig == SIGINT ? 0 : sig == SIGTERM ? 1 : 2;
		if (!interrupted_quiet && write(STDERR_FILENO, interrupted_line[k], interrupted_len[k]) < 0)
			interrupted_quiet = true; /* nothing to do about it */
		sem_post(&interrupted_sem); /* async-signal-safe */
	}
}

/* The thread that acts on a signal: it is an ordinary thread, so it may walk and remove
 * folders (nothing here need be async-signal-safe); it ends the process. */
static void *interrupt_thread(void *arg)
{
	(void)arg;
	while (sem_wait(&interrupted_sem) != 0)
		;
	const int sig = interrupted_sig;
	burrow_remove_temporaries();
	_exit(sig == SIGBUS ? EXIT_FAIL : 128 + sig);
}

static const char *bus_cmd = "";
static char bus_line[PATH_MAX + 256];

static void bus_cat(size_t *k, const char *s)
{
	while (*s && *k < sizeof bus_line - 2)
		bus_line[(*k)++] = *s++;
}

/* SIGBUS in one of the library's file mappings: the file shrank under the run (or its device
 * failed a read). One line naming it, then the thread above removes the temporaries and
 * exits 1; this thread waits for that (returning would fault again). A fault anywhere else
 * is let through as the signal it is. */
static void on_bus(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	char path[PATH_MAX];
	if (!burrow_mapped_file(si->si_addr, path, sizeof path)) {
		signal(SIGBUS, SIG_DFL);
		return;
	}
	if (!interrupted_sig) {
		interrupted_sig = sig;
		size_t k = 0;
		bus_cat(&k, "burrow: ");
		bus_cat(&k, bus_cmd);
		bus_cat(&k, ": ");
		bus_cat(&k, path);
		bus_cat(&k, ": a mapped read failed: the file shrank under the run (truncated?) or its device failed\n");
		if (write(STDERR_FILENO, bus_line, k) < 0)
			interrupted_quiet = true;
		sem_post(&interrupted_sem);
	}
	for (;;)
		pause();
}

int cli_interrupts_init(const char *cmd, bool quiet)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	static const char *names[] = {"SIGINT", "SIGTERM", "SIGHUP"};
	for (int i = 0; i < 3; i++) {
		snprintf(interrupted_line[i], sizeof interrupted_line[i], "%sburrow: %s: interrupted (%s)\n",
			 isatty(STDERR_FILENO) ? "\r\033[K" : "", cmd, names[i]);
		interrupted_len[i] = strlen(interrupted_line[i]);
	}
	interrupted_quiet = quiet;
	bus_cmd = cmd;
	pthread_t th;
	if (sem_init(&interrupted_sem, 0, 0) != 0 || pthread_create(&th, NULL, interrupt_thread, NULL) != 0)
		return -1;
	pthread_detach(th);
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
		struct sigaction sa;
		/* a signal the parent ignores (nohup, a background job of a script) stays ignored */
		if (sigaction(sigs[i], NULL, &sa) != 0 || sa.sa_handler == SIG_IGN)
			continue;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_interrupt;
		sa.sa_flags = SA_RESTART;
		sigfillset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
	struct sigaction sb;
	memset(&sb, 0, sizeof sb);
	sb.sa_sigaction = on_bus;
	sb.sa_flags = SA_SIGINFO;
	sigfillset(&sb.sa_mask);
	sigaction(SIGBUS, &sb, NULL);
	return 0;
}

int cli_fail(const char *what, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "burrow: %s: ", what);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_FAIL;
}

const char *cli_lib_message(const char *what, int status)
{
	const char *msg = burrow_last_error();
	if (!msg || !*msg)
		return burrow_strerror(status);
	/* the library often names the operation too ("train: ..."): once on the line is enough */
	const size_t n = strlen(what);
	if (!strncmp(msg, what, n) && msg[n] == ':' && msg[n + 1] == ' ')
		msg += n + 2;
	return cli_text(msg);
}

const char *cli_text(const char *s)
{
	static char bufs[4][8192];
	static int next;
	static const char named[] = "\a\b\t\n\v\f\r", letter[] = "abtnvfr";
	char *b = bufs[next++ & 3];
	size_t k = 0;
	for (const unsigned char *c = (const unsigned char *)s; *c && k < 8000; c++) {
		const char *e = strchr(named, *c);
		if (*c == '\\' || e) {
			b[k++] = '\\';
			b[k++] = *c == '\\' ? '\\' : letter[e - named];
		} else if (*c < 0x20 || *c == 0x7f) {
			k += (size_t)snprintf(b + k, 5, "\\x%02x", *c);
		} else {
			b[k++] = (char)*c;
		}
	}
	b[k] = '\0';
	return b;
}

int cli_lib_fail(const char *what, int status) { return cli_fail(what, "%s", cli_lib_message(what, status)); }

int cli_homogeneous(const char *cmd, const char *dir, const burrow_dataset *ds)
{
	const int types = burrow_dataset_get_info(ds)->num_types;
	if (!types)
		return EXIT_OK;
	/* train's refusal until the trainer takes typed datasets (issue 31: the typed trainer replaces it) */
	if (!strcmp(cmd, "train"))
		return cli_fail(cmd, "%s: a typed dataset (%d node types); train it with --model rgcn, rsage or rgat",
				cli_text(dir), types);
	return cli_fail(cmd, "%s: a typed dataset (%d node types); burrow %s reads homogeneous graphs only",
			cli_text(dir), types, cmd);
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "burrow: %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'burrow %s --help')\n", cmd);
	return EXIT_USAGE;
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts, const struct option *longopts)
{
	char spec[128];
	snprintf(spec, sizeof spec, ":%s", shortopts); /* leading ':' reports missing arguments */
	opterr = 0;
	int c = getopt_long(argc, argv, spec, longopts, NULL);
	if (c == '?') {
		if (optopt)
			cli_usage(cmd, "unknown option '-%c'", optopt);
		else
			cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
	} else if (c == ':') {
		cli_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
		c = '?';
	}
	return c;
}

bool cli_i64(const char *s, int64_t *v)
{
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return false;
	*v = x;
	return true;
}

bool cli_f64(const char *s, double *v)
{
	char *end;
	errno = 0;
	double x = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(x))
		return false;
	*v = x;
	return true;
}

bool cli_bytes(const char *s, int64_t *v)
{
	char *end;
	errno = 0;
	double x = strtod(s, &end);
	if (errno || end == s || x < 0)
		return false;
	double mul = 1;
	switch (*end) {
	case 'k': case 'K': mul = 1024.0; end++; break;
	case 'm': case 'M': mul = 1024.0 * 1024; end++; break;
	case 'g': case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
	case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
	default: break;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end || x * mul > 9e18)
		return false;
	*v = (int64_t)(x * mul);
	return true;
}

const char *cli_human_bytes(double b, char *buf, size_t cap)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	int u = 0;
	while (b >= 1024 && u < 5) {
		b /= 1024;
		u++;
	}
	snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
	return buf;
}

const char *cli_grouped(int64_t v, char *buf, size_t cap)
{
	char digits[32];
	int n = snprintf(digits, sizeof digits, "%lld", (long long)(v < 0 ? -v : v));
	size_t k = 0;
	if (v < 0 && k + 1 < cap)
		buf[k++] = '-';
	for (int i = 0; i < n && k + 2 < cap; i++) {
		if (i && (n - i) % 3 == 0)
			buf[k++] = ',';
		buf[k++] = digits[i];
	}
	buf[k] = '\0';
	return buf;
}

static int cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double cli_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double cli_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_progress_init(cli_progress *p, bool quiet)
{
	memset(p, 0, sizeof *p);
	p->enabled = !quiet && isatty(STDERR_FILENO);
	/* hours-long runs in the background: BURROW_PROGRESS=SECONDS logs plain lines instead */
	const char *every = getenv("BURROW_PROGRESS");
	double s;
	if (!quiet && !p->enabled && every && cli_f64(every, &s) && s > 0) {
		p->enabled = true;
		p->log_every = s;
	}
	p->start = p->last = cli_now();
}

/* One plain progress line (BURROW_PROGRESS): at a phase's start and end and every log_every s. */
static void progress_line(cli_progress *p, const char *phase, uint64_t done, uint64_t total, double now)
{
	const bool fresh = strncmp(p->phase, phase, sizeof p->phase) || done < p->last_done;
	if (fresh) {
		snprintf(p->phase, sizeof p->phase, "%s", phase);
		p->phase_start = now;
	}
	p->last_done = done;
	if (!fresh && done != total && now - p->last < p->log_every)
		return;
	p->last = now;
	if (total)
		fprintf(stderr, "burrow: progress: %s%s %.1f%% (%llu of %llu) at %.1f s\n", p->label, phase,
			100.0 * (double)done / (double)total, (unsigned long long)done, (unsigned long long)total,
			now - p->start);
	else
		fprintf(stderr, "burrow: progress: %s%s %llu at %.1f s\n", p->label, phase, (unsigned long long)done,
			now - p->start);
	fflush(stderr);
}

void cli_progress_cb(void *user, const char *phase, uint64_t done, uint64_t total)
{
	cli_progress *p = user;
	if (!p->enabled)
		return;
	double now = cli_now();
	if (p->log_every > 0) {
		progress_line(p, phase, done, total, now);
		return;
	}
	if (strncmp(p->phase, phase, sizeof p->phase) || done < p->last_done) {
		snprintf(p->phase, sizeof p->phase, "%s", phase);
		p->phase_start = now;
	} else if (now - p->last < 0.2 && done != total) {
		p->last_done = done;
		return;
	}
	p->last_done = done;
	p->last = now;
	double el = now - p->phase_start, rate = el > 0 ? (double)done / el : 0;
	if (total) {
		double f = (double)done / (double)total;
		int w = 30, fill = (int)(f * w);
		double eta = f > 0 ? el * (1 - f) / f : 0;
		fprintf(stderr, "\r  %s%-10s [%.*s%*s] %5.1f%%  %6.1fs  ETA %5.0fs  %8.1f/s \033[K", p->label, phase, fill,
			"##############################", w - fill, "", 100 * f, el, eta, rate);
	} else {
		fprintf(stderr, "\r  %s%-10s %llu  %6.1fs  %8.1f/s \033[K", p->label, phase, (unsigned long long)done, el,
			rate);
	}
	if (done == total)
		fputs(p->erase ? "\r\033[K" : "\n", stderr);
	fflush(stderr);
}

void cli_progress_done(cli_progress *p)
{
	if (p->enabled && p->phase[0])
		fflush(stderr);
}

void cli_log(int level, const char *msg, void *user)
{
	(void)user;
	static const char *const names[] = {"error", "warning", "note", "debug"};
	fprintf(stderr, "burrow: %s: %s\n", names[level < 0 ? 0 : level > 3 ? 3 : level], msg);
}

bool cli_is_parts_dir(const char *dir)
{
	char path[4096], buf[512];
	if (snprintf(path, sizeof path, "%s/meta.json", dir) >= (int)sizeof path)
		return false;
	/* not blocking on a FIFO: what is not a regular file is no parts directory (the library's
	 * reader then refuses it in its line) */
	struct stat sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	ssize_t n = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? read(fd, buf, sizeof buf - 1) : -1;
	close(fd);
	if (n < 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, "\"burrow-parts\"") != NULL;
}

bool cli_split(const char *s, double f[3])
{
	char buf[128];
	if (strlen(s) >= sizeof buf)
		return false;
	strcpy(buf, s);
	char *save = NULL, *tok = strtok_r(buf, ",", &save);
	int k = 0;
	for (; tok && k < 3; tok = strtok_r(NULL, ",", &save))
		if (!cli_f64(tok, &f[k++]) || !(f[k - 1] >= 0))
			return false;
	const double sum = f[0] + f[1] + f[2];
	return k == 3 && !tok && sum > 0 && sum <= 1 + 1e-9;
}

/* The size of the MPI job that started this process (from the launchers' environment:
 * Open MPI, MPICH's PMI), 1 when not under mpirun; *rank gets this process's rank. */
int cli_launcher_size(int *rank)
{
	static const char *const sizes[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"};
	static const char *const ranks[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK"};
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		const char *v = getenv(sizes[i]), *r = getenv(ranks[i]);
		if (v) {
			*rank = r ? atoi(r) : 0;
			return atoi(v);
		}
	}
	*rank = 0;
	return 1;
}
