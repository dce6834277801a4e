/* download.c: fetch a dataset's zip over HTTP(S) with libcurl into NAME.zip.part, resume
 * an interrupted transfer with a Range request, check the size, rename when whole. */
#define _GNU_SOURCE
#include "../core/internal.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void burrow_download_defaults(burrow_download_opts *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
	o->connect_timeout_s = 30;
	o->stall_timeout_s = 60;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_status;
static void init_curl(void) { curl_init_status = curl_global_init(CURL_GLOBAL_DEFAULT); }

#define WBUF ((size_t)1 << 20)

/* One transfer into the .part file, which is opened (for appending) only when the
 * first byte of the body arrives, so that a refused request leaves no file behind. */
typedef struct xfer {
	const burrow_download_opts *o;
	const char *part;
	int fd;
	char *buf;
	size_t fill;
	int64_t offset;       /* bytes the .part held when this transfer started */
	int64_t written;      /* bytes of this transfer on disk */
	int wst;              /* a write error (its message is the last error), 0 when none */
} xfer;

static int flush_buf(xfer *x)
{
	if (x->fill == 0 || x->wst)
		return x->wst;
	if (x->fd < 0) {
		x->fd = open(x->part, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (x->fd < 0)
			return x->wst = bw_err_errno(errno, x->part, "open");
	}
	int st = bw_write_all(x->fd, x->buf, x->fill, x->part);
	if (st)
		return x->wst = st;
	x->written += (int64_t)x->fill;
	x->fill = 0;
	return 0;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *user)
{
	xfer *x = user;
	size_t n = size * nmemb;
	if (x->fill + n > WBUF && flush_buf(x))
		return 0;
	if (n > WBUF) {
		if (x->fd < 0 && (x->fd = open(x->part, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0) {
			x->wst = bw_err_errno(errno, x->part, "open");
			return 0;
		}
		if ((x->wst = bw_write_all(x->fd, data, n, x->part)))
			return 0;
		x->written += (int64_t)n;
		return n;
	}
	memcpy(x->buf + x->fill, data, n);
	x->fill += n;
	return n;
}

static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	(void)ultotal;
	(void)ulnow;
	xfer *x = user;
	if (x->o->progress)
		x->o->progress(x->o->progress_user, "download", (uint64_t)(x->offset + dlnow),
			       dltotal > 0 ? (uint64_t)(x->offset + dltotal) : 0);
	return 0;
}

static int64_t file_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

static CURL *new_handle(const char *url, const burrow_download_opts *o, char *errbuf)
{
	CURL *c = curl_easy_init();
	if (!c)
		return NULL;
	errbuf[0] = '\0';
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, o->connect_timeout_s > 0 ? o->connect_timeout_s : 30L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, o->stall_timeout_s > 0 ? o->stall_timeout_s : 60L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "burrow/0.1");
	return c;
}

/* The size the server reports for url (HEAD), -1 when it does not say. */
static int64_t remote_size(const char *url, const burrow_download_opts *o)
{
	char errbuf[CURL_ERROR_SIZE];
	CURL *c = new_handle(url, o, errbuf);
	curl_off_t len = -1;
	if (!c)
		return -1;
	curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	if (curl_easy_perform(c) != CURLE_OK || curl_easy_getinfo(c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len) != CURLE_OK)
		len = -1;
	curl_easy_cleanup(c);
	return (int64_t)len;
}

/* Outcomes of one transfer besides success and failure. */
enum { XFER_RESTART = 1 };

/* One transfer from the .part's current size on; 0 when the .part is now whole. */
static int transfer(const char *url, const char *part, const burrow_download_opts *o)
{
	char errbuf[CURL_ERROR_SIZE];
	xfer x = {.o = o, .part = part, .fd = -1};
	int st = 0;
	x.offset = file_size(part);
	if (x.offset < 0)
		x.offset = 0;
	if (!(x.buf = bw_malloc(WBUF)))
		return BURROW_E_NOMEM;
	CURL *c = new_handle(url, o, errbuf);
	if (!c) {
		bw_free(x.buf);
		return bw_err(BURROW_E_NOMEM, "%s: cannot start a transfer", url);
	}
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &x);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, &x);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	if (x.offset > 0)
		curl_easy_setopt(c, CURLOPT_RESUME_FROM_LARGE, (curl_off_t)x.offset);
	CURLcode cr = curl_easy_perform(c);
	int fst = flush_buf(&x); /* keep every byte received: the next run resumes after it */
	long code = 0;
	curl_off_t clen = -1;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_getinfo(c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &clen);
	const int64_t have = x.offset + x.written;
	if (x.wst || fst) {
		st = x.wst ? x.wst : fst; /* the write error's message stands */
	} else if (cr == CURLE_RANGE_ERROR) {
		st = XFER_RESTART; /* the server ignores Range: start over */
	} else if (cr == CURLE_HTTP_RETURNED_ERROR && code == 416 && x.offset > 0) {
		int64_t whole = remote_size(url, o);
		st = whole == x.offset ? 0 : XFER_RESTART;
	} else if (cr == CURLE_HTTP_RETURNED_ERROR) {
		st = bw_err(code == 404 || code == 410 ? BURROW_E_NOTFOUND : BURROW_E_IO, "%s: HTTP %ld%s", url, code,
			    code == 404 ? " (not found)" : code == 403 ? " (forbidden)" : "");
	} else if (cr != CURLE_OK) {
		char total[32] = "?";
		if (clen >= 0)
			snprintf(total, sizeof total, "%lld", (long long)(x.offset + clen));
		if (have > 0)
			st = bw_err(BURROW_E_IO,
				    "%s: download stopped at %lld of %s bytes (%s); %s is kept: run again to resume", url,
				    (long long)have, total, errbuf[0] ? errbuf : curl_easy_strerror(cr), part);
		else
			st = bw_err(BURROW_E_IO, "%s: %s", url, errbuf[0] ? errbuf : curl_easy_strerror(cr));
	} else if (clen >= 0 && have != x.offset + clen) {
		st = bw_err(BURROW_E_IO, "%s: %lld bytes received, the server announced %lld; %s is kept: run again", url,
			    (long long)have, (long long)(x.offset + clen), part);
	} else if (x.fd < 0 && x.offset == 0) {
		/* an empty body: create the (empty) file so that the rename below finds it */
		x.fd = open(part, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (x.fd < 0)
			st = bw_err_errno(errno, part, "open");
	}
	if (x.fd >= 0) {
		if (!st && fsync(x.fd) < 0)
			st = bw_err_errno(errno, part, "fsync");
		close(x.fd);
	}
	curl_easy_cleanup(c);
	bw_free(x.buf);
	return st;
}

/* Is the answer a zip (a local file header, or an empty archive's end record)? Else it is
 * removed and refused: an error page must not sit under the zip's name. */
static int check_zip(const char *part, const char *url)
{
	unsigned char magic[4] = {0};
	int fd = open(part, O_RDONLY | O_CLOEXEC);
	ssize_t got = fd >= 0 ? read(fd, magic, sizeof magic) : -1;
	if (fd >= 0)
		close(fd);
	if (got == 4 && magic[0] == 'P' && magic[1] == 'K' &&
	    ((magic[2] == 3 && magic[3] == 4) || (magic[2] == 5 && magic[3] == 6)))
		return 0;
	long long size = file_size(part);
	unlink(part);
	return bw_err(BURROW_E_FORMAT, "%s: the answer (%lld bytes) is not a zip file; nothing was kept", url, size);
}

int burrow_download(const char *name, const char *root, const burrow_download_opts *opts, char *path, size_t path_cap)
{
	burrow_download_opts o;
	char *final = NULL, *part = NULL, *file = NULL;
	int st;

	if (path && path_cap)
		path[0] = '\0';
	burrow_download_defaults(&o);
	if (opts && (st = bw_opts_in(&o, sizeof o, opts, "burrow_download_opts")))
		return st;
	if (!name || !*name || strchr(name, '/'))
		return bw_err(BURROW_E_INVAL, "download: '%s' is not a dataset name", name ? name : "");
	const burrow_catalog_entry *e = burrow_catalog_find(name);
	const char *url = o.url ? o.url : e ? e->url : NULL;
	if (!url)
		return bw_err(BURROW_E_NOTFOUND, "download: '%s' is not in the catalog (see 'burrow datasets'); give a URL",
			      name);
	if (!root)
		root = "data";
	if ((st = bw_mkdir_p(root, 0755)))
		return st;
	const char *base = e ? e->name : name;
	size_t fl = strlen(base) + 8;
	if (!(file = bw_malloc(fl)))
		return BURROW_E_NOMEM;
	snprintf(file, fl, "%s.zip", base);
	final = bw_path_join(root, file);
	part = final ? bw_malloc(strlen(final) + 8) : NULL;
	if (!final || !part) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	sprintf(part, "%s.part", final);
	if (path && path_cap)
		snprintf(path, path_cap, "%s", final);
	if (file_size(final) >= 0) {
		st = 0; /* already here */
		goto out;
	}
	pthread_once(&curl_once, init_curl);
	if (curl_init_status != CURLE_OK) {
		st = bw_err(BURROW_E_UNSUPPORTED, "download: libcurl failed to start: %s", curl_easy_strerror(curl_init_status));
		goto out;
	}
	st = transfer(url, part, &o);
	if (st == XFER_RESTART) {
		bw_log(BURROW_LOG_INFO, "%s: the server cannot resume this download; starting over", url);
		if (unlink(part) < 0 && errno != ENOENT) {
			st = bw_err_errno(errno, part, "remove");
			goto out;
		}
		st = transfer(url, part, &o);
		if (st == XFER_RESTART)
			st = bw_err(BURROW_E_IO, "%s: the server refuses the download", url);
	}
	if (st)
		goto out;
	if ((st = check_zip(part, url)))
		goto out;
	st = bw_replace_file(part, final);
out:
	bw_free(file);
	bw_free(final);
	bw_free(part);
	return st;
}
