// SPDX-License-Identifier: MIT
/*
 * npr-bench - throughput and latency of a model through the ring, or, on
 * the null device without a model, the ring's own per-job cost beside the
 * raw io_uring floors measured in the same run.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
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
#include "json.h"
#include "tool.h"

static struct {
	const char *dev, *model;
	int threads, batch, nireq, niter;
	double time_s;
	bool poll, json;
	const char *cache_dir;	/* --cache-dir: FEIL and FIL */
	const char *weights;	/* --weights: a weightless blob's */
	bool profile;		/* --profile: the costliest layers */
	bool sync;		/* --api sync: INFER calls, no ring */
	bool nireq_set;
	const char *props[64];	/* --prop, --hint, --nstreams */
	int nprops;
	struct npr_arg_shape *shapes;
	int nshapes;
} opt = { .dev = "cpu", .nireq = 1 };

/* --json: the writer, else NULL for text */
static struct npr_json *js;

static const char help[] =
"usage: npr-bench -d DEV [-m MODEL] [-t THREADS] [-b BATCH] [--nireq N]\n"
"                 [--niter N | --time S] [--api sync|async] [--poll]\n"
"                 [--shape SHAPE] [--hint HINT] [--nstreams N]\n"
"                 [--prop NAME=VALUE ...] [--json] [--cache-dir DIR]\n"
"                 [--profile] [--weights FILE]\n"
"\n"
"Keep N requests of MODEL in flight through the ring of device DEV and\n"
"report latency percentiles and throughput.  On the null device without\n"
"-m, measure the ring's per-job cost with a polling and a sleeping waiter\n"
"beside the raw io_uring floors (NOP, MSG_RING round trip).\n"
"\n"
"  -d, --device DEV   device (default cpu)\n"
"  -m, --model MODEL  an IR .xml (with its .bin), an ONNX .onnx, or a\n"
"                     compiled-model blob of npr-compile\n"
"  -t, --threads T    INFERENCE_NUM_THREADS of the compiled model\n"
"  -b, --batch B      first dimension of every input (default: the model's)\n"
"      --nireq N      requests in flight (default 1, at most 256)\n"
"      --niter N      completions to measure (default 50; null: 200000)\n"
"      --time S       measure for S seconds instead\n"
"      --api API      async (default): requests through the ring; sync:\n"
"                     one request, one INFER call after the other\n"
"      --poll         busy-poll for completions instead of sleeping\n"
"      --shape SHAPE  an input's shape: NAME=1,3,224,224, NAME[1,3,224,224]\n"
"                     or [1,3,224,224] for the only input; may repeat;\n"
"                     a 0 dimension is an empty tensor\n"
"      --hint HINT    PERFORMANCE_HINT: latency, throughput,\n"
"                     cumulative_throughput, or none (not set)\n"
"      --nstreams N   NUM_STREAMS\n"
"      --prop NAME=VALUE  a device property by its name; may repeat\n"
"      --json         print one JSON object\n"
"      --cache-dir DIR  first inference latency with an empty cache entry\n"
"                     (FEIL) and from the model cache in DIR (FIL)\n"
"      --profile      ENABLE_PROFILING: the ten costliest layers\n"
"      --weights FILE the weights file of a weightless blob (CACHE_MODE\n"
"                     OPTIMIZE_SIZE), read at import (WEIGHTS_PATH)\n"
"      --report-type T  no_counters, or average_counters or\n"
"                     detailed_counters (both: --profile)\n"
"  -h, --help         show this help\n"
"      --version      print the version\n"
"\n"
"OpenVINO benchmark_app's spellings work too: -m -d -b -niter -nireq\n"
"-nthreads (--threads) -shape -data_shape (--shape: shapes are static)\n"
"-hint -nstreams -api -report_type -json_stats (--json).  But -t is\n"
"npuring's threads, not benchmark_app's seconds: that is --time.\n"
"\n"
"Exit status: 0 on success, 1 on failure, 2 on a usage error.\n";

#define die npr_tool_fail

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

	if (!isatty(2) || js || k == last)
		return;
	last = k;
	fprintf(stderr, "\r[%.*s%*s] %zu", k,
		"########################################", w - k, "", done);
	if (total)
		fprintf(stderr, "/%zu", total);
	if (frac >= 1)
		fputc('\n', stderr);
}

/* @v rounded to 3 decimals, as the text shows it */
static double r3(double v)
{
	return round(v * 1000) / 1000;
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
	if (js) {
		npr_json_begin_object(js);
		npr_json_kv_string(js, "device", "null");
		npr_json_kv_string(js, "path", rs.path == NPR_RING_PATH_URING ?
				   "io_uring" : "fallback");
		npr_json_kv_int(js, "iters", iters);
		npr_json_kv_double(js, "raw_nop_us", r3(nop));
		npr_json_kv_double(js, "raw_msg_ring_rtt_us", r3(msg));
		npr_json_kv_double(js, "ring_nop_poll_us", r3(rpoll));
		npr_json_kv_double(js, "ring_nop_sleep_us", r3(rsleep));
		npr_json_kv_double(js, "ring_overhead_poll_us", r3(rpoll - nop));
		npr_json_kv_double(js, "ring_nop_worker_sleep_us", r3(rwork));
		npr_json_kv_double(js, "batch32_poll_us_per_job", r3(bpoll));
		npr_json_kv_double(js, "batch32_sleep_us_per_job", r3(bsleep));
		npr_json_kv_double(js, "batch32_poll_wakeups", r3(wpoll));
		npr_json_kv_double(js, "batch32_sleep_wakeups", r3(wsleep));
		npr_json_kv_int(js, "peak_rss_kb", peak_rss_kb());
		npr_json_end_object(js);
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

struct first {
	double load_ms, compile_ms, infer_ms, total_ms;
	int64_t from_cache;
};

/* --cache-dir's results, for the JSON object */
static struct first feil, fil;
static bool have_first;

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
	have_first = true;
	if (js)
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
	if (js) {
		npr_json_key(js, "profile");
		npr_json_begin_array(js);
		for (i = 0; i < shown; i++) {
			npr_json_begin_object(js);
			npr_json_kv_string(js, "name", l[i].r.name);
			npr_json_kv_string(js, "type", l[i].r.type);
			npr_json_kv_string(js, "kernel", l[i].r.kernel);
			npr_json_kv_double(js, "us",
					   round(l[i].ns / 1e2 / nreq) / 10);
			npr_json_kv_double(js, "share", total ?
					   round(1e4 * l[i].ns / total) / 1e4 :
					   0.0);
			npr_json_end_object(js);
		}
		npr_json_end_array(js);
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

	if (opt.batch || opt.threads || opt.profile || opt.cache_dir ||
	    opt.nshapes || opt.nprops)
		npr_tool_usage("%s is a compiled blob: -b, -t, --shape, --prop, --hint, --nstreams, --profile and --cache-dir apply when compiling it (npr-compile --prop, --shape)",
			       opt.model);
	if (opt.weights) {
		char msg[512];

		err = npr_arg_set_weights(fd, opt.weights, msg, sizeof(msg));
		if (err && npr_arg_is_usage(err))
			npr_tool_usage("%s", msg);
		if (err)
			die("%s", msg);
	}
	err = npr_ioctl(fd, NPR_IOCTL_IMPORT, &ia);
	free(blob);
	if (err)
		die_lib(fd, opt.model, err);
	return ia.exec;
}

/*
 * The requests run on their own zeroed inputs: an input whose shape stays
 * dynamic (the model's, without --shape or -b) has none to run.
 */
static void check_static(int fd, __u32 exec, unsigned int n)
{
	unsigned int i, k;

	for (i = 0; i < n; i++) {
		struct npr_port_info pi;
		char name[256];

		npr_prep_port_info(&pi, exec, i, 0, name, sizeof(name));
		if (npr_ioctl(fd, NPR_IOCTL_PORT_INFO, &pi))
			snprintf(name, sizeof(name), "%u", i);
		for (k = 0; k < pi.rank; k++)
			if (pi.dims[k] < 0)
				die("input %s has a dynamic shape (dimension %u): give --shape %s=D0,D1,... or -b N",
				    name, k, name);
	}
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
	if (opt.nshapes) {
		char msg[2048];

		if (opt.nshapes > 64)
			npr_tool_usage("at most 64 --shape");
		err = npr_arg_resolve_shapes(fd, ml.handle, opt.shapes,
					     opt.nshapes, shapes, msg,
					     sizeof(msg));
		if (err && npr_arg_is_usage(err))
			npr_tool_usage("%s", msg);
		if (err)
			die("%s", msg);
		co.shapes = (uintptr_t)shapes;
		co.num_shapes = opt.nshapes;
	} else if (opt.batch) {
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
		bench_first(fd, co.num_shapes ? shapes : NULL, co.num_shapes);
	co.num_props = compile_props(props, opt.cache_dir);
	co.props = (uintptr_t)props;
	err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	if (err)
		die_lib(fd, "COMPILE", err);
	/* the exec keeps what it needs: peak RSS is the compiled model's */
	destroy(fd, ml.handle);
	check_static(fd, co.exec, mi.num_inputs);
	return co.exec;
}

/*
 * --api sync: one request, INFER after INFER from this thread, each
 * call's wall time a latency; @total calls, or opt.time_s seconds.
 */
static size_t bench_sync(int fd, __u32 req, uint64_t *lat, size_t cap,
			 size_t total, uint64_t *elapsed)
{
	uint64_t t0, tend = 0, t;
	size_t n = 0;
	int err;

	for (t0 = now_ns(), t = 0; ; ) {
		struct npr_infer inf = { .size = sizeof(inf), .req = req };
		uint64_t a = now_ns();

		err = npr_ioctl(fd, NPR_IOCTL_INFER, &inf);
		if (err)
			die_lib(fd, "INFER", err);
		t = now_ns();
		if (!tend) {		/* the first call warms up */
			t0 = t;
			tend = t0 + (uint64_t)(opt.time_s * 1e9);
			continue;
		}
		if (n < cap)
			lat[n++] = t - a;
		progress(n, total, total ? (double)n / total :
			 (t >= tend ? 1.0 : (double)(t - t0) / (tend - t0)));
		if (total ? n >= total : t >= tend)
			break;
	}
	*elapsed = t - t0;
	return n;
}

static void bench_model(int fd)
{
	struct npr_sqe s[256];
	struct npr_cqe c[256];
	uint64_t *lat, t0, tend = 0, t1;
	double fps;
	size_t nlat = 0, cap, total, submitted, inflight, blen;
	unsigned int i;
	char msg[512];
	void *blob;
	__u32 exec;
	int err;

	err = npr_arg_read_blob(opt.model, &blob, &blen, msg, sizeof(msg));
	if (err < 0)
		die("%s", msg);
	if (!blob && opt.weights)
		npr_tool_usage("%s: --weights is for a weightless compiled blob; a model reads its own weights",
			       opt.model);
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
	if (opt.sync) {
		nlat = bench_sync(fd, s[0].handle, lat, cap, total, &t1);
		goto report;
	}
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
report:
	qsort(lat, nlat, sizeof(*lat), cmp_u64);
	fps = nlat * (double)(opt.batch ? opt.batch : 1) / (t1 / 1e9);
	if (!js) {
		if (opt.profile)
			bench_profile(fd, s, opt.nireq);
		printf("device %s, %s, %d in flight, %zu inferences in %.2f s\n",
		       opt.dev, opt.sync ? "sync" : "async", opt.nireq, nlat,
		       t1 / 1e9);
		printf("latency ms: p10 %.3f  p50 %.3f  p90 %.3f  p99 %.3f\n",
		       pct_ms(lat, nlat, 10), pct_ms(lat, nlat, 50),
		       pct_ms(lat, nlat, 90), pct_ms(lat, nlat, 99));
		printf("throughput: %.2f fps   peak RSS %ld kB\n", fps,
		       peak_rss_kb());
		free(lat);
		return;
	}
	npr_json_begin_object(js);
	npr_json_kv_string(js, "device", opt.dev);
	npr_json_kv_string(js, "model", opt.model);
	npr_json_kv_string(js, "api", opt.sync ? "sync" : "async");
	npr_json_kv_int(js, "batch", opt.batch ? opt.batch : 1);
	npr_json_kv_int(js, "threads", opt.threads);
	npr_json_kv_int(js, "nireq", opt.nireq);
	npr_json_kv_uint(js, "niter", nlat);
	npr_json_kv_double(js, "median_ms", r3(pct_ms(lat, nlat, 50)));
	npr_json_kv_double(js, "p10_ms", r3(pct_ms(lat, nlat, 10)));
	npr_json_kv_double(js, "p90_ms", r3(pct_ms(lat, nlat, 90)));
	npr_json_kv_double(js, "p99_ms", r3(pct_ms(lat, nlat, 99)));
	npr_json_kv_double(js, "throughput_fps", round(fps * 100) / 100);
	npr_json_kv_int(js, "peak_rss_kb", peak_rss_kb());
	if (have_first) {
		npr_json_kv_double(js, "feil_ms", r3(feil.total_ms));
		npr_json_kv_double(js, "feil_load_ms", r3(feil.load_ms));
		npr_json_kv_double(js, "feil_compile_ms", r3(feil.compile_ms));
		npr_json_kv_double(js, "feil_infer_ms", r3(feil.infer_ms));
		npr_json_kv_double(js, "fil_ms", r3(fil.total_ms));
		npr_json_kv_double(js, "fil_load_ms", r3(fil.load_ms));
		npr_json_kv_double(js, "fil_compile_ms", r3(fil.compile_ms));
		npr_json_kv_double(js, "fil_infer_ms", r3(fil.infer_ms));
		npr_json_kv_int(js, "loaded_from_cache", fil.from_cache);
	}
	if (opt.profile)
		bench_profile(fd, s, opt.nireq);
	npr_json_end_object(js);
	free(lat);
}

/* The benchmark_app words this tool takes (tool.h). */
static const struct npr_tool_alias aliases[] = {
	{ "niter", "niter" }, { "nireq", "nireq" },
	{ "nthreads", "threads" }, { "shape", "shape" },
	{ "data_shape", "shape" }, { "hint", "hint" },
	{ "nstreams", "nstreams" }, { "api", "api" },
	{ "report_type", "report-type" }, { "json_stats", "json" },
	{ NULL, NULL },
};

/* --hint, --nstreams: a --prop of their own. */
static void add_prop(const char *name, const char *value)
{
	char *s;
	size_t i;

	if (opt.nprops == 64)
		npr_tool_usage("at most 64 --prop, --hint and --nstreams");
	if (asprintf(&s, "%s=%s", name, value) < 0)
		die("out of memory");
	for (i = strlen(name) + 1; s[i] && !strcmp(name, "PERFORMANCE_HINT");
	     i++)
		s[i] = toupper((unsigned char)s[i]);
	opt.props[opt.nprops++] = s;
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
		{ "api", required_argument, NULL, 'A' },
		{ "shape", required_argument, NULL, 'S' },
		{ "hint", required_argument, NULL, 'H' },
		{ "nstreams", required_argument, NULL, 's' },
		{ "prop", required_argument, NULL, 'o' },
		{ "report-type", required_argument, NULL, 'R' },
		{ "weights", required_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	static const char shortopts[] = "d:m:t:b:h";
	char msg[1024];
	int c, fd, i, err;

	npr_tool_init("npr-bench");
	npr_tool_aliases(argc, argv, shortopts, lo, aliases);
	while ((c = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		switch (c) {
		case 'd': opt.dev = optarg; break;
		case 'm': opt.model = optarg; break;
		case 't': opt.threads = npr_tool_int("-t", optarg, 1, 1024); break;
		case 'b': opt.batch = npr_tool_int("-b", optarg, 1, 4096); break;
		case 'n':
			opt.nireq = npr_tool_int("--nireq", optarg, 1, 256);
			opt.nireq_set = true;
			break;
		case 'N': opt.niter = npr_tool_int("--niter", optarg, 1, 100000000); break;
		case 'T': {
			char *end;

			opt.time_s = strtod(optarg, &end);
			if (*end || end == optarg || !(opt.time_s > 0) ||
			    opt.time_s > 86400)
				npr_tool_usage("--time: '%s' is not a number of seconds in (0, 86400]",
					       optarg);
			break;
		}
		case 'p': opt.poll = true; break;
		case 'j': opt.json = true; break;
		case 'C': opt.cache_dir = optarg; break;
		case 'W': opt.weights = optarg; break;
		case 'P': opt.profile = true; break;
		case 'A':
			if (strcmp(optarg, "sync") && strcmp(optarg, "async"))
				npr_tool_usage("--api %s: sync or async", optarg);
			opt.sync = !strcmp(optarg, "sync");
			break;
		case 'S':
			err = npr_arg_parse_shapes(optarg, &opt.shapes,
						   &opt.nshapes, msg,
						   sizeof(msg));
			if (err == -ENOMEM)
				die("%s", msg);
			if (err)
				npr_tool_usage("%s", msg);
			break;
		case 'H':
			if (strcasecmp(optarg, "none"))
				add_prop("PERFORMANCE_HINT", optarg);
			break;
		case 's':
			add_prop("NUM_STREAMS", optarg);
			break;
		case 'o':
			if (opt.nprops == 64)
				npr_tool_usage("at most 64 --prop");
			opt.props[opt.nprops++] = optarg;
			break;
		case 'R':
			if (!strcmp(optarg, "average_counters") ||
			    !strcmp(optarg, "detailed_counters"))
				opt.profile = true;
			else if (strcmp(optarg, "no_counters"))
				npr_tool_usage("--report-type %s: no_counters, average_counters or detailed_counters",
					       optarg);
			break;
		case 'h': fputs(help, stdout); return 0;
		case 'V': npr_tool_version(); return 0;
		default: npr_tool_usage(NULL);
		}
	}
	if (optind < argc)
		npr_tool_usage("unexpected argument '%s'", argv[optind]);
	if (opt.niter && opt.time_s)
		npr_tool_usage("--niter and --time exclude each other");
	if ((opt.cache_dir || opt.profile || opt.nshapes || opt.nprops ||
	     opt.sync) && !opt.model)
		npr_tool_usage("--cache-dir, --profile, --shape, --prop, --hint, --nstreams and --api need -m MODEL");
	if (opt.cache_dir && !opt.cache_dir[0])
		npr_tool_usage("--cache-dir: empty path");
	if (opt.nshapes && opt.batch)
		npr_tool_usage("-b and --shape exclude each other: give the batch in the shape");
	if (opt.sync && opt.nireq_set && opt.nireq > 1)
		npr_tool_usage("--api sync runs one request: --nireq %d does not apply",
			       opt.nireq);
	fd = npr_open(opt.dev, 0);
	if (fd < 0)
		die_lib(-1, opt.dev, fd);
	for (i = 0; i < opt.nprops; i++) {
		err = npr_arg_set_prop(fd, opt.props[i], msg, sizeof(msg));
		if (err && npr_arg_is_usage(err))
			npr_tool_usage("%s", msg);
		if (err)
			die("%s", msg);
	}
	if (opt.json)
		js = npr_tool_json_begin(0);
	if (opt.model)
		bench_model(fd);
	else if (!strcmp(opt.dev, "null"))
		bench_null_ring(fd);
	else
		npr_tool_usage("-m MODEL is needed (only the null device runs without one)");
	if (js)
		npr_tool_json_end(js);
	npr_close(fd);
	npr_arg_free_shapes(opt.shapes, opt.nshapes);
	return 0;
}
