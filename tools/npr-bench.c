// SPDX-License-Identifier: MIT
/*
 * npr-bench - throughput and latency of a model through the ring, or, on
 * the null device without a model, the ring's own per-job cost beside the
 * raw io_uring floors measured in the same run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <dirent.h>
#include <liburing.h>

#include "npuring.h"
#include "args.h"

static struct {
	const char *dev, *model;
	int threads, batch, nireq, niter;
	double time_s;
	bool poll, json;
	const char *cache_dir;	/* --cache-dir: FEIL and FIL */
	bool profile;		/* --profile: the costliest layers */
} opt = { .dev = "cpu", .nireq = 1 };

static const char help[] =
"usage: npr-bench -d DEV [-m MODEL.xml] [-t THREADS] [-b BATCH] [--nireq N]\n"
"                 [--niter N | --time S] [--poll] [--json]\n"
"                 [--cache-dir DIR] [--profile]\n"
"\n"
"Keep N requests of MODEL in flight through the ring of device DEV and\n"
"report latency percentiles and throughput.  On the null device without\n"
"-m, measure the ring's per-job cost with a polling and a sleeping waiter\n"
"beside the raw io_uring floors (NOP, MSG_RING round trip).\n"
"\n"
"  -d, --device DEV   device (default cpu)\n"
"  -m, --model XML    the model's .xml file\n"
"  -t, --threads T    INFERENCE_NUM_THREADS of the compiled model\n"
"  -b, --batch B      first dimension of every input (default: the model's)\n"
"      --nireq N      requests in flight (default 1, at most 256)\n"
"      --niter N      completions to measure (default 50; null: 200000)\n"
"      --time S       measure for S seconds instead\n"
"      --poll         busy-poll for completions instead of sleeping\n"
"      --json         print one JSON line\n"
"      --cache-dir DIR  first inference latency with an empty cache entry\n"
"                     (FEIL) and from the model cache in DIR (FIL)\n"
"      --profile      ENABLE_PROFILING: the ten costliest layers\n"
"  -h, --help         show this help\n";

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "npr-bench: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void __attribute__((noreturn)) die_lib(int fd, const char *what,
					      int err)
{
	char msg[512];
	struct npr_get_error ge = { .size = sizeof(ge) };

	ge.buf = (uintptr_t)msg;
	ge.len = sizeof(msg);
	if (fd < 0 || npr_ioctl(fd, NPR_IOCTL_GET_ERROR, &ge) < 0)
		snprintf(msg, sizeof(msg), "%s", strerror(-err));
	die("%s: %s", what, msg);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int parse_int(const char *name, const char *s, int min, int max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		die("%s: '%s' is not an integer in %d..%d", name, s, min, max);
	return (int)v;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Percentile @p (0..100) of sorted @v in ms. */
static double pct_ms(const uint64_t *v, size_t n, double p)
{
	size_t i;

	if (!n)
		return 0;
	i = (size_t)(p / 100.0 * (double)(n - 1) + 0.5);
	return v[i] / 1e6;
}

static void progress(size_t done, size_t total, double frac)
{
	static int last = -1;
	int w = 40, k = (int)(frac * w);

	if (!isatty(2) || opt.json || k == last)
		return;
	last = k;
	fprintf(stderr, "\r[%.*s%*s] %zu", k,
		"########################################", w - k, "", done);
	if (total)
		fprintf(stderr, "/%zu", total);
	if (frac >= 1)
		fputc('\n', stderr);
}

static long peak_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* ---- the null device: ring overhead ---------------------------------- */

#define FLOOR_ITERS	200000

static double raw_nop_us(int iters)
{
	struct io_uring r;
	struct io_uring_cqe *c;
	uint64_t t0;
	int i;

	if (io_uring_queue_init(8, &r, 0))
		return -1;
	t0 = now_ns();
	for (i = 0; i < iters; i++) {
		io_uring_prep_nop(io_uring_get_sqe(&r));
		io_uring_submit_and_wait(&r, 1);
		io_uring_peek_cqe(&r, &c);
		io_uring_cqe_seen(&r, c);
	}
	t0 = now_ns() - t0;
	io_uring_queue_exit(&r);
	return t0 / 1e3 / iters;
}

struct ping {
	struct io_uring r;
	int peer_fd, iters;
};

static void poll_one(struct io_uring *r)
{
	struct io_uring_cqe *c;

	while (io_uring_peek_cqe(r, &c))
		;
	io_uring_cqe_seen(r, c);
}

static void send_msg(struct io_uring *r, int fd)
{
	struct io_uring_sqe *s = io_uring_get_sqe(r);

	io_uring_prep_msg_ring(s, fd, 0, 1, 0);
	s->flags |= IOSQE_CQE_SKIP_SUCCESS;
	io_uring_submit(r);
}

static void *pong(void *p)
{
	struct ping *pp = p;
	int i;

	for (i = 0; i < pp->iters; i++) {
		poll_one(&pp->r);
		send_msg(&pp->r, pp->peer_fd);
	}
	return NULL;
}

static double raw_msg_ring_rtt_us(int iters)
{
	struct ping a, b;
	pthread_t t;
	uint64_t t0;
	int i;

	if (io_uring_queue_init(8, &a.r, 0))
		return -1;
	if (io_uring_queue_init(8, &b.r, 0)) {
		io_uring_queue_exit(&a.r);
		return -1;
	}
	b.peer_fd = a.r.ring_fd;
	b.iters = iters;
	pthread_create(&t, NULL, pong, &b);
	t0 = now_ns();
	for (i = 0; i < iters; i++) {
		send_msg(&a.r, b.r.ring_fd);
		poll_one(&a.r);
	}
	t0 = now_ns() - t0;
	pthread_join(t, NULL);
	io_uring_queue_exit(&a.r);
	io_uring_queue_exit(&b.r);
	return t0 / 1e3 / iters;
}

static void submit_all(int fd, struct npr_sqe *s, unsigned int n)
{
	struct npr_submit su = { .size = sizeof(su) };
	int err;

	su.sqes = (uintptr_t)s;
	su.count = n;
	err = npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su);
	if (err)
		die_lib(fd, "SUBMIT", err);
}

static void reap_n(int fd, struct npr_cqe *c, unsigned int n, bool poll)
{
	struct npr_reap re = { .size = sizeof(re) };
	int err;

	re.flags = poll ? NPR_REAP_POLL : 0;
	re.cqes = (uintptr_t)c;
	re.max = n;
	re.min = n;
	err = npr_ioctl(fd, NPR_IOCTL_REAP, &re);
	if (err)
		die_lib(fd, "REAP", err);
}

/*
 * One NOP job per round trip, submitted and reaped by this thread; with
 * @worker a DRAIN NOP, which a worker thread has to be woken for.
 */
static double ring_nop_us(int fd, int iters, bool poll, bool worker)
{
	struct npr_sqe s = { .opcode = NPR_OP_NOP };
	struct npr_cqe c;
	uint64_t t0 = now_ns();
	int i;

	if (worker)
		s.flags = NPR_SQE_DRAIN;
	for (i = 0; i < iters; i++) {
		s.user_data = i;
		submit_all(fd, &s, 1);
		reap_n(fd, &c, 1, poll);
	}
	return (now_ns() - t0) / 1e3 / iters;
}

/*
 * Batches of 32 jobs that complete on a worker thread (a DRAIN NOP heads
 * each batch, so none completes inline): per-job cost and the voluntary
 * context switches of the waiting thread per batch.
 */
static double ring_batch_us(int fd, int batches, bool poll, double *wakes)
{
	struct npr_sqe s[32];
	struct npr_cqe c[32];
	struct rusage r0, r1;
	uint64_t t0;
	int i, k;

	memset(s, 0, sizeof(s));
	for (k = 0; k < 32; k++)
		s[k].opcode = NPR_OP_NOP;
	s[0].flags = NPR_SQE_DRAIN;
	getrusage(RUSAGE_THREAD, &r0);
	t0 = now_ns();
	for (i = 0; i < batches; i++) {
		submit_all(fd, s, 32);
		reap_n(fd, c, 32, poll);
	}
	t0 = now_ns() - t0;
	getrusage(RUSAGE_THREAD, &r1);
	*wakes = (double)(r1.ru_nvcsw - r0.ru_nvcsw) / batches;
	return t0 / 1e3 / (batches * 32.0);
}

static void bench_null_ring(int fd)
{
	int iters = opt.niter ? opt.niter : FLOOR_ITERS;
	struct npr_ring_setup rs = { .size = sizeof(rs) };
	double nop, msg, rpoll, rsleep, rwork, bpoll, bsleep, wpoll, wsleep;
	int err;

	err = npr_ioctl(fd, NPR_IOCTL_RING_SETUP, &rs);
	if (err)
		die_lib(fd, "RING_SETUP", err);
	progress(0, 7, 0);
	nop = raw_nop_us(iters);
	progress(1, 7, 1 / 7.0);
	msg = raw_msg_ring_rtt_us(iters / 4);
	progress(2, 7, 2 / 7.0);
	rpoll = ring_nop_us(fd, iters, true, false);
	progress(3, 7, 3 / 7.0);
	rsleep = ring_nop_us(fd, iters, false, false);
	progress(4, 7, 4 / 7.0);
	rwork = ring_nop_us(fd, iters / 8, false, true);
	progress(5, 7, 5 / 7.0);
	bpoll = ring_batch_us(fd, iters / 64, true, &wpoll);
	progress(6, 7, 6 / 7.0);
	bsleep = ring_batch_us(fd, iters / 64, false, &wsleep);
	progress(7, 7, 1);
	if (opt.json) {
		printf("{\"device\":\"null\",\"path\":\"%s\",\"iters\":%d,"
		       "\"raw_nop_us\":%.3f,\"raw_msg_ring_rtt_us\":%.3f,"
		       "\"ring_nop_poll_us\":%.3f,\"ring_nop_sleep_us\":%.3f,"
		       "\"ring_overhead_poll_us\":%.3f,"
		       "\"ring_nop_worker_sleep_us\":%.3f,"
		       "\"batch32_poll_us_per_job\":%.3f,"
		       "\"batch32_sleep_us_per_job\":%.3f,"
		       "\"batch32_poll_wakeups\":%.2f,"
		       "\"batch32_sleep_wakeups\":%.2f,\"peak_rss_kb\":%ld}\n",
		       rs.path == NPR_RING_PATH_URING ? "io_uring" : "fallback",
		       iters, nop, msg, rpoll, rsleep, rpoll - nop, rwork, bpoll,
		       bsleep, wpoll, wsleep, peak_rss_kb());
		return;
	}
	printf("completion path: %s\n",
	       rs.path == NPR_RING_PATH_URING ? "io_uring" : "eventfd fallback");
	printf("raw io_uring NOP round trip      %8.3f us\n", nop);
	printf("raw MSG_RING round trip (2 thr)  %8.3f us\n", msg);
	printf("ring NOP job, polling waiter     %8.3f us  (+%.3f over raw NOP)\n",
	       rpoll, rpoll - nop);
	printf("ring NOP job, sleeping waiter    %8.3f us\n", rsleep);
	printf("ring NOP job via a worker, sleep %8.3f us\n", rwork);
	printf("batch of 32 via a worker, poll   %8.3f us/job, %.2f waiter switches/batch\n",
	       bpoll, wpoll);
	printf("batch of 32 via a worker, sleep  %8.3f us/job, %.2f waiter switches/batch\n",
	       bsleep, wsleep);
}

/* ---- a model --------------------------------------------------------- */

/* ---- first inference (--cache-dir) and layer profile (--profile) ------ */

/* Extra JSON members of the model's line, each with its leading comma. */
static char json_extra[8192];

static void json_add(const char *fmt, ...)
{
	size_t len = strlen(json_extra);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(json_extra + len, sizeof(json_extra) - len, fmt, ap);
	va_end(ap);
}

/* @s as a JSON string body (quotes and backslashes escaped, controls
 * dropped) into @buf. */
static const char *json_esc(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	for (; *s && o + 3 < len; s++) {
		if (*s == '"' || *s == '\\')
			buf[o++] = '\\';
		if ((unsigned char)*s >= 0x20)
			buf[o++] = *s;
	}
	buf[o] = 0;
	return buf;
}

/* COMPILE's properties: -t, --profile and a cache directory. */
static unsigned int compile_props(struct npr_prop_arg *p, const char *cache)
{
	unsigned int n = 0;

	memset(p, 0, 3 * sizeof(*p));
	if (opt.threads) {
		p[n].param = NPR_PARAM_INFERENCE_NUM_THREADS;
		p[n++].value = opt.threads;
	}
	if (opt.profile) {
		p[n].param = NPR_PARAM_ENABLE_PROFILING;
		p[n++].value = 1;
	}
	if (cache) {
		p[n].param = NPR_PARAM_CACHE_DIR;
		p[n++].value = (uintptr_t)cache;
	}
	return n;
}

static void destroy(int fd, __u32 handle)
{
	struct npr_handle_destroy d = { .size = sizeof(d), .handle = handle };

	npr_ioctl(fd, NPR_IOCTL_HANDLE_DESTROY, &d);
}

struct first {
	double load_ms, compile_ms, infer_ms, total_ms;
	int64_t from_cache;
};

/*
 * MODEL_LOAD, COMPILE with CACHE_DIR @cache, one INFER; all timed.  With
 * a cache the load is deferred (NPR_MODEL_LOAD_DEFER): the entry is keyed
 * by the model's files, and a hit never reads them.
 */
static void first_pass(int fd, const char *cache,
		       const struct npr_shape_arg *shapes, unsigned int nshapes,
		       struct first *r)
{
	struct npr_model_load ml = { .size = sizeof(ml) };
	struct npr_compile co = { .size = sizeof(co) };
	struct npr_req_create rc = { .size = sizeof(rc) };
	struct npr_infer inf = { .size = sizeof(inf) };
	struct npr_param pa = { .size = sizeof(pa) };
	struct npr_prop_arg props[3];
	uint64_t t0, t1, t2, t3;
	int err;

	t0 = now_ns();
	ml.xml = (uintptr_t)opt.model;
	if (cache)
		ml.flags = NPR_MODEL_LOAD_DEFER;
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err)
		die_lib(fd, opt.model, err);
	t1 = now_ns();
	co.model = ml.handle;
	co.shapes = (uintptr_t)shapes;
	co.num_shapes = nshapes;
	co.num_props = compile_props(props, cache);
	co.props = (uintptr_t)props;
	err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	if (err)
		die_lib(fd, "COMPILE", err);
	t2 = now_ns();
	rc.exec = co.exec;
	err = npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc);
	if (err)
		die_lib(fd, "REQ_CREATE", err);
	inf.req = rc.req;
	err = npr_ioctl(fd, NPR_IOCTL_INFER, &inf);
	if (err)
		die_lib(fd, "INFER", err);
	t3 = now_ns();
	pa.handle = co.exec;
	pa.param = NPR_PARAM_LOADED_FROM_CACHE;
	err = npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &pa);
	if (err)
		die_lib(fd, "GET_PARAM LOADED_FROM_CACHE", err);
	r->from_cache = (int64_t)pa.value;
	r->load_ms = (t1 - t0) / 1e6;
	r->compile_ms = (t2 - t1) / 1e6;
	r->infer_ms = (t3 - t2) / 1e6;
	r->total_ms = (t3 - t0) / 1e6;
	destroy(fd, rc.req);
	destroy(fd, co.exec);
	destroy(fd, ml.handle);
}

/* Move the entry files of directory @from into @to; remove @from. */
static void move_entries(const char *from, const char *to)
{
	char a[4096], b[4096];
	struct dirent *d;
	DIR *dp = opendir(from);

	if (!dp)
		die("%s: %s", from, strerror(errno));
	while ((d = readdir(dp))) {
		if (d->d_name[0] == '.')
			continue;
		if (snprintf(a, sizeof(a), "%s/%s", from, d->d_name) >=
		    (int)sizeof(a) ||
		    snprintf(b, sizeof(b), "%s/%s", to, d->d_name) >=
		    (int)sizeof(b))
			die("--cache-dir: path too long");
		if (rename(a, b))
			die("cannot move %s to %s: %s", a, b, strerror(errno));
	}
	closedir(dp);
	if (rmdir(from))
		die("cannot remove %s: %s", from, strerror(errno));
}

/*
 * FEIL: load, compile and first inference with an empty cache entry (a
 * fresh directory inside DIR, so the entry is written as a miss writes
 * it); that entry then replaces DIR's, and FIL is the same with DIR: the
 * compiled model comes from the cache.  An untimed pass without a cache
 * runs first, so that the process's one-time costs (worker threads, the
 * first touches of the library) fall on neither.
 */
static void bench_first(int fd, const struct npr_shape_arg *shapes,
			unsigned int nshapes)
{
	struct first feil, fil;
	char scratch[4096];

	first_pass(fd, NULL, shapes, nshapes, &feil);	/* warm-up */
	if (mkdir(opt.cache_dir, 0755) && errno != EEXIST)
		die("--cache-dir %s: %s", opt.cache_dir, strerror(errno));
	if (snprintf(scratch, sizeof(scratch), "%s/.npr-bench.XXXXXX",
		     opt.cache_dir) >= (int)sizeof(scratch))
		die("--cache-dir: path too long");
	if (!mkdtemp(scratch))
		die("--cache-dir %s: %s", opt.cache_dir, strerror(errno));
	first_pass(fd, scratch, shapes, nshapes, &feil);
	move_entries(scratch, opt.cache_dir);
	first_pass(fd, opt.cache_dir, shapes, nshapes, &fil);
	json_add(",\"feil_ms\":%.3f,\"feil_load_ms\":%.3f,"
		 "\"feil_compile_ms\":%.3f,\"feil_infer_ms\":%.3f,"
		 "\"fil_ms\":%.3f,\"fil_load_ms\":%.3f,"
		 "\"fil_compile_ms\":%.3f,\"fil_infer_ms\":%.3f,"
		 "\"loaded_from_cache\":%lld",
		 feil.total_ms, feil.load_ms, feil.compile_ms, feil.infer_ms,
		 fil.total_ms, fil.load_ms, fil.compile_ms, fil.infer_ms,
		 (long long)fil.from_cache);
	if (opt.json)
		return;
	printf("FEIL %.3f ms (empty cache entry): load %.3f + compile %.3f + first inference %.3f\n",
	       feil.total_ms, feil.load_ms, feil.compile_ms, feil.infer_ms);
	printf("FIL  %.3f ms (%s): load %.3f + compile %.3f + first inference %.3f\n",
	       fil.total_ms, fil.from_cache ? "LOADED_FROM_CACHE" :
	       "not from the cache", fil.load_ms, fil.compile_ms,
	       fil.infer_ms);
}

struct layer {
	struct npr_profile_rec r;
	uint64_t ns;
};

static int by_ns(const void *a, const void *b)
{
	const struct layer *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

/* The ten costliest layers of the last inference of each request. */
static void bench_profile(int fd, const struct npr_sqe *s, int nreq)
{
	struct npr_profile pr = { .size = sizeof(pr) };
	struct npr_profile_rec *recs;
	struct layer *l;
	uint64_t total = 0;
	unsigned int n, i, shown;
	char e1[160], e2[80], e3[80];
	int err, k;

	pr.req = s[0].handle;
	err = npr_ioctl(fd, NPR_IOCTL_PROFILE, &pr);	/* the count */
	if (err && err != -EMSGSIZE)
		die_lib(fd, "PROFILE", err);
	n = pr.count;
	recs = calloc(n ? n : 1, sizeof(*recs));
	l = calloc(n ? n : 1, sizeof(*l));
	if (!recs || !l)
		die("out of memory");
	for (k = 0; k < nreq; k++) {
		pr.req = s[k].handle;
		pr.count = n;
		pr.recs = (uintptr_t)recs;
		err = npr_ioctl(fd, NPR_IOCTL_PROFILE, &pr);
		if (err)
			die_lib(fd, "PROFILE", err);
		for (i = 0; i < n && i < pr.count; i++) {
			l[i].r = recs[i];
			if (recs[i].status == NPR_PROF_EXECUTED)
				l[i].ns += recs[i].real_ns;
		}
	}
	for (i = 0; i < n; i++)
		total += l[i].ns;
	qsort(l, n, sizeof(*l), by_ns);
	shown = n < 10 ? n : 10;
	while (shown && !l[shown - 1].ns)
		shown--;
	if (opt.json) {
		json_add(",\"profile\":[");
		for (i = 0; i < shown; i++)
			json_add("%s{\"name\":\"%s\",\"type\":\"%s\","
				 "\"kernel\":\"%s\",\"us\":%.1f,\"share\":%.4f}",
				 i ? "," : "",
				 json_esc(l[i].r.name, e1, sizeof(e1)),
				 json_esc(l[i].r.type, e2, sizeof(e2)),
				 json_esc(l[i].r.kernel, e3, sizeof(e3)),
				 l[i].ns / 1e3 / nreq,
				 total ? (double)l[i].ns / total : 0.0);
		json_add("]");
	} else {
		printf("costliest layers (last inference of %d request%s, %.3f ms in %u layers):\n",
		       nreq, nreq > 1 ? "s" : "", total / 1e6 / nreq, n);
		printf("  %-40s %-18s %-18s %10s %6s\n", "name", "type",
		       "kernel", "us", "share");
		for (i = 0; i < shown; i++)
			printf("  %-40.40s %-18.18s %-18.18s %10.1f %5.1f%%\n",
			       l[i].r.name, l[i].r.type,
			       l[i].r.kernel[0] ? l[i].r.kernel : "-",
			       l[i].ns / 1e3 / nreq,
			       total ? 100.0 * l[i].ns / total : 0.0);
	}
	free(recs);
	free(l);
}


/* A compiled-model blob: IMPORT it; what COMPILE would take is fixed. */
static __u32 import_blob(int fd, void *blob, size_t blen)
{
	struct npr_import ia = {
		.size = sizeof(ia), .data = (uintptr_t)blob, .bytes = blen,
	};
	int err;

	if (opt.batch || opt.threads || opt.profile || opt.cache_dir)
		die("%s is a compiled blob: -b, -t, --profile and --cache-dir apply when compiling it (npr-compile --prop, --shape)",
		    opt.model);
	err = npr_ioctl(fd, NPR_IOCTL_IMPORT, &ia);
	free(blob);
	if (err)
		die_lib(fd, opt.model, err);
	return ia.exec;
}

/* MODEL_LOAD and COMPILE with -b, -t, --profile, --cache-dir. */
static __u32 load_compile(int fd)
{
	struct npr_model_load ml = { .size = sizeof(ml) };
	struct npr_model_info mi = { .size = sizeof(mi) };
	struct npr_compile co = { .size = sizeof(co) };
	struct npr_shape_arg shapes[64];
	struct npr_prop_arg props[3];
	unsigned int i;
	int err;

	ml.xml = (uintptr_t)opt.model;
	/* keyed by the files, as bench_first's entry is */
	if (opt.cache_dir)
		ml.flags = NPR_MODEL_LOAD_DEFER;
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err)
		die_lib(fd, opt.model, err);
	mi.handle = ml.handle;
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_INFO, &mi);
	if (err)
		die_lib(fd, "MODEL_INFO", err);
	co.model = ml.handle;
	if (opt.batch) {
		if (mi.num_inputs > 64)
			die("%u inputs: -b handles at most 64", mi.num_inputs);
		for (i = 0; i < mi.num_inputs; i++) {
			struct npr_port_info pi = { .size = sizeof(pi) };
			unsigned int k;

			pi.handle = ml.handle;
			pi.index = i;
			err = npr_ioctl(fd, NPR_IOCTL_PORT_INFO, &pi);
			if (err)
				die_lib(fd, "PORT_INFO", err);
			memset(&shapes[i], 0, sizeof(shapes[i]));
			shapes[i].index = i;
			shapes[i].rank = pi.rank;
			for (k = 0; k < pi.rank; k++)
				shapes[i].dims[k] = pi.dims[k] < 1 ? 1 :
						    pi.dims[k];
			if (pi.rank)
				shapes[i].dims[0] = opt.batch;
		}
		co.shapes = (uintptr_t)shapes;
		co.num_shapes = mi.num_inputs;
	}
	if (opt.cache_dir)
		bench_first(fd, opt.batch ? shapes : NULL,
			    opt.batch ? mi.num_inputs : 0);
	co.num_props = compile_props(props, opt.cache_dir);
	co.props = (uintptr_t)props;
	err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	if (err)
		die_lib(fd, "COMPILE", err);
	/* the exec keeps what it needs: peak RSS is the compiled model's */
	destroy(fd, ml.handle);
	return co.exec;
}

static void bench_model(int fd)
{
	struct npr_sqe s[256];
	struct npr_cqe c[256];
	uint64_t *lat, t0, tend = 0, t1;
	size_t nlat = 0, cap, total, submitted, inflight, blen;
	unsigned int i;
	char msg[512];
	void *blob;
	__u32 exec;
	int err;

	err = npr_arg_read_blob(opt.model, &blob, &blen, msg, sizeof(msg));
	if (err < 0)
		die("%s", msg);
	exec = blob ? import_blob(fd, blob, blen) : load_compile(fd);
	memset(s, 0, sizeof(s));
	for (i = 0; i < (unsigned int)opt.nireq; i++) {
		struct npr_req_create rc = { .size = sizeof(rc) };

		rc.exec = exec;
		err = npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc);
		if (err)
			die_lib(fd, "REQ_CREATE", err);
		s[i].opcode = NPR_OP_INFER;
		s[i].handle = rc.req;
		s[i].user_data = i;
	}
	total = opt.time_s ? 0 : (size_t)(opt.niter ? opt.niter : 50);
	cap = total ? total + 256 : 1 << 20;
	lat = malloc(cap * sizeof(*lat));
	if (!lat)
		die("out of memory");
	/* one warm-up round, not measured */
	submit_all(fd, s, opt.nireq);
	reap_n(fd, c, opt.nireq, opt.poll);
	t0 = now_ns();
	if (opt.time_s)
		tend = t0 + (uint64_t)(opt.time_s * 1e9);
	submit_all(fd, s, opt.nireq);
	submitted = inflight = opt.nireq;
	while (inflight) {
		struct npr_reap re = { .size = sizeof(re) };
		unsigned int k;

		re.flags = opt.poll ? NPR_REAP_POLL : 0;
		re.cqes = (uintptr_t)c;
		re.max = opt.nireq;
		re.min = 1;
		err = npr_ioctl(fd, NPR_IOCTL_REAP, &re);
		if (err)
			die_lib(fd, "REAP", err);
		t1 = now_ns();
		inflight -= re.count;
		for (k = 0; k < re.count; k++) {
			if (c[k].res < 0)
				die("inference failed: %s", strerror(-c[k].res));
			if (nlat < cap)
				lat[nlat++] = c[k].finished_ns - c[k].queued_ns;
			if (total ? submitted < total : t1 < tend) {
				submit_all(fd, &s[c[k].user_data], 1);
				submitted++;
				inflight++;
			}
		}
		progress(nlat, total, total ? (double)nlat / total :
			 (t1 >= tend ? 1.0 : (double)(t1 - t0) / (tend - t0)));
	}
	t1 = now_ns() - t0;
	if (opt.profile)
		bench_profile(fd, s, opt.nireq);
	qsort(lat, nlat, sizeof(*lat), cmp_u64);
	{
		double fps = nlat * (double)(opt.batch ? opt.batch : 1) /
			     (t1 / 1e9);

		if (opt.json) {
			printf("{\"device\":\"%s\",\"model\":\"%s\",\"batch\":%d,"
			       "\"threads\":%d,\"nireq\":%d,\"niter\":%zu,"
			       "\"median_ms\":%.3f,\"p10_ms\":%.3f,"
			       "\"p90_ms\":%.3f,\"p99_ms\":%.3f,"
			       "\"throughput_fps\":%.2f,\"peak_rss_kb\":%ld%s}\n",
			       opt.dev, opt.model, opt.batch ? opt.batch : 1,
			       opt.threads, opt.nireq, nlat,
			       pct_ms(lat, nlat, 50), pct_ms(lat, nlat, 10),
			       pct_ms(lat, nlat, 90), pct_ms(lat, nlat, 99),
			       fps, peak_rss_kb(), json_extra);
		} else {
			printf("device %s, %d in flight, %zu inferences in %.2f s\n",
			       opt.dev, opt.nireq, nlat, t1 / 1e9);
			printf("latency ms: p10 %.3f  p50 %.3f  p90 %.3f  p99 %.3f\n",
			       pct_ms(lat, nlat, 10), pct_ms(lat, nlat, 50),
			       pct_ms(lat, nlat, 90), pct_ms(lat, nlat, 99));
			printf("throughput: %.2f fps   peak RSS %ld kB\n", fps,
			       peak_rss_kb());
		}
	}
	free(lat);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "model", required_argument, NULL, 'm' },
		{ "threads", required_argument, NULL, 't' },
		{ "batch", required_argument, NULL, 'b' },
		{ "nireq", required_argument, NULL, 'n' },
		{ "niter", required_argument, NULL, 'N' },
		{ "time", required_argument, NULL, 'T' },
		{ "poll", no_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "cache-dir", required_argument, NULL, 'C' },
		{ "profile", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c, fd;

	while ((c = getopt_long(argc, argv, "d:m:t:b:h", lo, NULL)) != -1) {
		switch (c) {
		case 'd': opt.dev = optarg; break;
		case 'm': opt.model = optarg; break;
		case 't': opt.threads = parse_int("-t", optarg, 1, 1024); break;
		case 'b': opt.batch = parse_int("-b", optarg, 1, 4096); break;
		case 'n': opt.nireq = parse_int("--nireq", optarg, 1, 256); break;
		case 'N': opt.niter = parse_int("--niter", optarg, 1, 100000000); break;
		case 'T': {
			char *end;

			opt.time_s = strtod(optarg, &end);
			if (*end || end == optarg || !(opt.time_s > 0) ||
			    opt.time_s > 86400)
				die("--time: '%s' is not a number of seconds in (0, 86400]",
				    optarg);
			break;
		}
		case 'p': opt.poll = true; break;
		case 'j': opt.json = true; break;
		case 'C': opt.cache_dir = optarg; break;
		case 'P': opt.profile = true; break;
		case 'h': fputs(help, stdout); return 0;
		default: fputs(help, stderr); return 2;
		}
	}
	if (optind < argc)
		die("unexpected argument '%s' (see --help)", argv[optind]);
	if (opt.niter && opt.time_s)
		die("--niter and --time exclude each other");
	if ((opt.cache_dir || opt.profile) && !opt.model)
		die("--cache-dir and --profile need -m MODEL");
	if (opt.cache_dir && !opt.cache_dir[0])
		die("--cache-dir: empty path");
	fd = npr_open(opt.dev, 0);
	if (fd < 0)
		die_lib(-1, opt.dev, fd);
	if (opt.model)
		bench_model(fd);
	else if (!strcmp(opt.dev, "null"))
		bench_null_ring(fd);
	else
		die("-m MODEL is needed (only the null device runs without one)");
	npr_close(fd);
	return 0;
}
