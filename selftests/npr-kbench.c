// SPDX-License-Identifier: MIT
/*
 * npr-kbench - kernel and model micro-benchmarks for the CPU backend
 *
 *   npr-kbench gemm [-t THREADS] [-r RUNS] [SIZE...]
 *	SGEMM GFLOP/s, square SIZE^3 (default 256 512 1024 2048), median
 *	of RUNS, as a percentage of the FMA peak of this machine's cores,
 *	measured first with a short FMA loop (or -p GFLOPS per core); the
 *	first line says which peak was used.
 *   npr-kbench model -m FILE [-b BATCH] [-t THREADS] [-r RUNS] [-w WARMUP]
 *	Whole-model median latency through the public npr_open/npr_ioctl
 *	API; input 0 gets batch BATCH, filled with a fixed pattern.  Prints
 *	one JSON line (median_ms, p10_ms, p90_ms, peak_rss_mb, ...).
 *   npr-kbench pool [-t THREADS] [-r RUNS] [-n LOOPS]
 *	The thread pool's cost per parallel_for, what a layer pays for its
 *	barrier: LOOPS back-to-back loops of THREADS empty items, and of
 *	THREADS items of about 2 us of work each against the same work on
 *	one thread; medians of RUNS, in microseconds per loop.
 *
 * The library's log up to NPR_LOG_INFO goes to stderr (NPR_CPU_PROFILE's
 * profiles, the testing switches set).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <npuring.h>

#include "ref/gemm.h"
#include "ref/threads.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#if defined(__x86_64__) || defined(__i386__)
/*
 * The FMA peak of one core of this machine, GFLOP/s: 16 independent
 * chains of vector FMAs (enough to cover two pipes times a 4-cycle
 * latency), the best of several short runs (a busy machine only lowers
 * it).  The width follows the GEMM kernel in use: 512-bit with AVX-512,
 * 256-bit with AVX2+FMA; 0 when neither is there.
 */
#define PEAK_CHAINS	16
#define PEAK_ITERS	200000

/* sixteen named accumulators: an array would live in memory at -O2 */
#define PEAK_LOOP(vec, set1, fma, add, store, lanes)			\
	do {								\
		vec m = set1(0.999999f), a = set1(1e-7f);		\
		vec c0 = set1(0), c1 = set1(1), c2 = set1(2), c3 = set1(3); \
		vec c4 = set1(4), c5 = set1(5), c6 = set1(6), c7 = set1(7); \
		vec c8 = set1(8), c9 = set1(9), ca = set1(10), cb = set1(11); \
		vec cc = set1(12), cd = set1(13), ce = set1(14), cf = set1(15); \
		float out[lanes];					\
		long it;						\
									\
		for (it = 0; it < iters; it++) {			\
			c0 = fma(c0, m, a); c1 = fma(c1, m, a);		\
			c2 = fma(c2, m, a); c3 = fma(c3, m, a);		\
			c4 = fma(c4, m, a); c5 = fma(c5, m, a);		\
			c6 = fma(c6, m, a); c7 = fma(c7, m, a);		\
			c8 = fma(c8, m, a); c9 = fma(c9, m, a);		\
			ca = fma(ca, m, a); cb = fma(cb, m, a);		\
			cc = fma(cc, m, a); cd = fma(cd, m, a);		\
			ce = fma(ce, m, a); cf = fma(cf, m, a);		\
		}							\
		c0 = add(add(add(c0, c1), add(c2, c3)),			\
			 add(add(c4, c5), add(c6, c7)));		\
		c8 = add(add(add(c8, c9), add(ca, cb)),			\
			 add(add(cc, cd), add(ce, cf)));		\
		store(out, add(c0, c8));				\
		peak_sink += out[0];					\
		return 2.0 * lanes * PEAK_CHAINS * iters;		\
	} while (0)

static volatile float peak_sink;

__attribute__((target("avx512f")))
static double peak_run_avx512(long iters)
{
	PEAK_LOOP(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps,
		  _mm512_storeu_ps, 16);
}

__attribute__((target("avx2,fma")))
static double peak_run_avx2(long iters)
{
	PEAK_LOOP(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps,
		  _mm256_storeu_ps, 8);
}

static double measure_peak(const char **how)
{
	double (*run)(long);
	double best = 0;
	int i;

	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f")) {
		run = peak_run_avx512;
		*how = "measured, 16 chains of 512-bit FMA";
	} else if (__builtin_cpu_supports("avx2") &&
		   __builtin_cpu_supports("fma")) {
		run = peak_run_avx2;
		*how = "measured, 16 chains of 256-bit FMA";
	} else {
		*how = "no vector FMA on this CPU";
		return 0;
	}
	run(PEAK_ITERS / 10);	/* wake the vector unit up */
	for (i = 0; i < 7; i++) {
		double t0 = now_s(), fl = run(PEAK_ITERS), t = now_s() - t0;

		if (t > 0 && fl / t * 1e-9 > best)
			best = fl / t * 1e-9;
	}
	return best;
}
#else
static double measure_peak(const char **how)
{
	*how = "not measured on this architecture";
	return 0;
}
#endif

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
	double pos = p * (n - 1);
	int i = (int)pos;

	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (v[i + 1] - v[i]) * (pos - i);
}

/* f32 to IEEE half, round to nearest even; normal range only (inputs here) */
static uint16_t to_half(float f)
{
	uint32_t x, sign, mant;
	int exp;

	memcpy(&x, &f, 4);
	sign = (x >> 16) & 0x8000;
	exp = (int)((x >> 23) & 0xff) - 127 + 15;
	mant = x & 0x7fffff;
	if (exp <= 0)
		return (uint16_t)sign;
	if (exp >= 31)
		return (uint16_t)(sign | 0x7c00);
	x = sign | (uint32_t)exp << 10 | mant >> 13;
	if ((mant & 0x1fff) > 0x1000 || ((mant & 0x1fff) == 0x1000 && (x & 1)))
		x++;
	return (uint16_t)x;
}

/* current resident set, MB, from /proc/self/status */
static double rss_now_mb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	double kb = 0;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = atof(line + 6);
	if (f)
		fclose(f);
	return kb / 1024;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: npr-kbench gemm [-t THREADS] [-r RUNS] [-p GFLOPS] [SIZE...]\n"
		"       npr-kbench model -m FILE [-b BATCH] [-t THREADS] [-r RUNS] [-w WARMUP]\n"
		"       npr-kbench pool [-t THREADS] [-r RUNS] [-n LOOPS]\n");
	return 2;
}

static int bench_gemm(int argc, char **argv)
{
	int threads = 1, runs = 5, opt, nsz = 0, i, r;
	int sizes[16] = { 0 };
	double peak = 0;
	const char *how = "given with -p";
	char *end;

	while ((opt = getopt(argc, argv, "t:r:p:")) != -1) {
		if (opt == 't')
			threads = atoi(optarg);
		else if (opt == 'r')
			runs = atoi(optarg);
		else if (opt == 'p') {
			peak = strtod(optarg, &end);
			if (end == optarg || *end || !(peak > 0) || peak > 1e6) {
				fprintf(stderr, "npr-kbench: -p %s: want a peak in GFLOP/s per core, > 0\n",
					optarg);
				return 2;
			}
		} else
			return usage();
	}
	if (threads < 1) {
		fprintf(stderr, "npr-kbench: -t %d: want at least one thread\n",
			threads);
		return 2;
	}
	if (!peak)
		peak = measure_peak(&how);
	if (peak > 0)
		printf("peak: %.1f GFLOP/s per core (%s), x %d threads = %.1f\n",
		       peak, how, threads, peak * threads);
	else
		printf("peak: unknown (%s); no percentages\n", how);
	for (; optind < argc && nsz < 16; optind++)
		sizes[nsz++] = atoi(argv[optind]);
	if (!nsz) {
		sizes[0] = 256; sizes[1] = 512; sizes[2] = 1024; sizes[3] = 2048;
		nsz = 4;
	}
	if (runs < 1)
		runs = 1;
	npr_par_set_limit(threads);
	for (i = 0; i < nsz; i++) {
		int64_t n = sizes[i], k;
		float *A = malloc(sizeof(float) * n * n);
		float *B = malloc(sizeof(float) * n * n);
		float *C = malloc(sizeof(float) * n * n);
		double *t = calloc(runs, sizeof(double)), med, gf, cmin = 1e9;
		int reps = n <= 256 ? 20 : n <= 512 ? 4 : 1;

		if (!A || !B || !C || !t)
			return 1;
		for (k = 0; k < n * n; k++) {
			A[k] = (float)((k * 7) % 13) * 0.1f - 0.6f;
			B[k] = (float)((k * 5) % 11) * 0.1f - 0.5f;
		}
		npr_sgemm(n, n, n, A, n, B, n, C, n, NULL, threads);
		for (r = 0; r < runs; r++) {
			double t0 = now_s(), c0 = cpu_s(), c;
			int q;

			for (q = 0; q < reps; q++)
				npr_sgemm(n, n, n, A, n, B, n, C, n, NULL,
					  threads);
			t[r] = (now_s() - t0) / reps;
			c = (cpu_s() - c0) / reps / threads;
			if (c < cmin)
				cmin = c;
		}
		qsort(t, runs, sizeof(double), cmp_d);
		med = pct(t, runs, 0.5);
		gf = 2.0 * n * n * n / med * 1e-9;
		printf("sgemm %s %5lld^3 threads %d: %7.1f GFLOP/s (%.0f%% of %.1f x %d peak), median %.3f ms; per CPU-second %.1f\n",
		       npr_gemm_kern_best()->name, (long long)n, threads, gf,
		       peak > 0 ? 100.0 * gf / (peak * threads) : 0.0, peak,
		       threads, med * 1e3,
		       2.0 * n * n * n / cmin * 1e-9 / threads);
		free(A);
		free(B);
		free(C);
		free(t);
	}
	return 0;
}

static int fail(int fd, const char *what, int err)
{
	fprintf(stderr, "npr-kbench: %s: %s (%d)\n", what, npr_last_error(),
		err);
	if (fd >= 0)
		npr_close(fd);
	return 1;
}

static int bench_model(int argc, char **argv)
{
	int threads = 1, runs = 20, warmup = 3, batch = 1, opt, fd, err, i;
	const char *model = NULL;
	struct npr_model_load ml;
	struct npr_port_info pi;
	struct npr_shape_arg sa;
	struct npr_prop_arg props[2];
	struct npr_compile co;
	struct npr_req_create rc;
	struct npr_tensor_arg ta;
	struct npr_infer inf;
	struct rusage ru;
	size_t count = 1;
	double *t, ct0, ct;
	float *in;

	while ((opt = getopt(argc, argv, "m:b:t:r:w:")) != -1) {
		switch (opt) {
		case 'm': model = optarg; break;
		case 'b': batch = atoi(optarg); break;
		case 't': threads = atoi(optarg); break;
		case 'r': runs = atoi(optarg); break;
		case 'w': warmup = atoi(optarg); break;
		default: return usage();
		}
	}
	if (!model || runs < 1 || batch < 1)
		return usage();
	fd = npr_open("cpu", 0);
	if (fd < 0)
		return fail(-1, "open", fd);
	npr_prep_model_load(&ml, model, NULL);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err)
		return fail(fd, "MODEL_LOAD", err);
	npr_prep_port_info(&pi, ml.handle, 0, 0, NULL, 0);
	err = npr_ioctl(fd, NPR_IOCTL_PORT_INFO, &pi);
	if (err)
		return fail(fd, "PORT_INFO", err);
	memset(&sa, 0, sizeof(sa));
	sa.rank = pi.rank;
	for (i = 0; i < (int)pi.rank; i++) {
		sa.dims[i] = pi.dims[i] < 1 ? 1 : pi.dims[i];
		if (i == 0)
			sa.dims[i] = batch;
		count *= sa.dims[i];
	}
	memset(props, 0, sizeof(props));
	props[0].param = NPR_PARAM_INFERENCE_NUM_THREADS;
	props[0].value = threads;
	props[1].param = NPR_PARAM_PERFORMANCE_HINT;
	props[1].value = NPR_PERF_HINT_LATENCY;
	npr_prep_compile(&co, ml.handle);
	co.shapes = (uintptr_t)&sa;
	co.num_shapes = 1;
	co.props = (uintptr_t)props;
	co.num_props = 2;
	ct0 = now_s();
	err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	ct = now_s() - ct0;
	if (err)
		return fail(fd, "COMPILE", err);
	{
		/* the exec keeps what it needs: free the model as a user would */
		struct npr_handle_destroy hd;

		npr_prep_destroy(&hd, ml.handle);
		err = npr_ioctl(fd, NPR_IOCTL_HANDLE_DESTROY, &hd);
		if (err)
			return fail(fd, "HANDLE_DESTROY", err);
	}
	npr_prep_req_create(&rc, co.exec);
	err = npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc);
	if (err)
		return fail(fd, "REQ_CREATE", err);
	in = malloc(count * sizeof(float));
	t = calloc(runs, sizeof(double));
	if (!in || !t)
		return 1;
	for (i = 0; i < (int)count; i++) {
		float v = (float)(((int64_t)i * 7919) % 1000) * 0.002f - 1.0f;

		if (pi.elem_type == NPR_ELEM_F16)
			((uint16_t *)in)[i] = to_half(v);
		else if (pi.elem_type == NPR_ELEM_U8 ||
			 pi.elem_type == NPR_ELEM_I8)
			((uint8_t *)in)[i] = (uint8_t)((int64_t)i * 7919 % 128);
		else
			in[i] = v;
	}
	if (pi.elem_type != NPR_ELEM_F32 && pi.elem_type != NPR_ELEM_F16 &&
	    pi.elem_type != NPR_ELEM_U8 && pi.elem_type != NPR_ELEM_I8) {
		fprintf(stderr, "npr-kbench: input type %u not supported\n",
			pi.elem_type);
		return 1;
	}
	npr_prep_tensor(&ta, rc.req, 0, 0, in,
			count * (pi.elem_type == NPR_ELEM_F32 ? 4 :
				 pi.elem_type == NPR_ELEM_F16 ? 2 : 1));
	ta.elem_type = pi.elem_type;
	ta.rank = sa.rank;
	for (i = 0; i < (int)sa.rank; i++)
		ta.dims[i] = sa.dims[i];
	err = npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &ta);
	if (err)
		return fail(fd, "SET_TENSOR", err);
	for (i = 0; i < warmup + runs; i++) {
		double t0 = now_s();

		npr_prep_infer(&inf, rc.req);
		err = npr_ioctl(fd, NPR_IOCTL_INFER, &inf);
		if (err)
			return fail(fd, "INFER", err);
		if (i >= warmup)
			t[i - warmup] = (now_s() - t0) * 1e3;
	}
	qsort(t, runs, sizeof(double), cmp_d);
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"runtime\":\"npuring\",\"model\":\"%s\",\"batch\":%d,"
	       "\"threads\":%d,\"runs\":%d,\"median_ms\":%.3f,\"p10_ms\":%.3f,"
	       "\"p90_ms\":%.3f,\"min_ms\":%.3f,\"compile_ms\":%.1f,"
	       "\"peak_rss_mb\":%.1f,\"rss_after_mb\":%.1f}\n",
	       model, batch, threads, runs, pct(t, runs, 0.5),
	       pct(t, runs, 0.1), pct(t, runs, 0.9), t[0], ct * 1e3,
	       ru.ru_maxrss / 1024.0, rss_now_mb());
	free(in);
	free(t);
	npr_close(fd);
	return 0;
}

/* pool: an item of about @spin iterations of dependent arithmetic */
struct pool_arg {
	long spin;
	_Atomic unsigned long sink;
};

static void pool_item(void *arg, int i, int tid)
{
	struct pool_arg *a = arg;
	unsigned long x = (unsigned long)i + 1;
	long k;

	(void)tid;
	for (k = 0; k < a->spin; k++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	a->sink += x;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* microseconds per loop of @n items over @loops loops; median of @runs */
static double pool_us(int threads, int n, long spin, int loops, int runs)
{
	struct pool_arg a = { .spin = spin };
	double t[64];
	int r, l;

	npr_par_set_limit(threads);
	for (r = 0; r < runs; r++) {
		double t0 = now_s();

		for (l = 0; l < loops; l++)
			npr_parallel_for(n, pool_item, &a);
		t[r] = (now_s() - t0) * 1e6 / loops;
	}
	qsort(t, runs, sizeof(t[0]), cmp_double);
	return t[runs / 2];
}

static int bench_pool(int argc, char **argv)
{
	int threads = 2, runs = 9, loops = 2000, opt;
	long spin;
	double one, e, w, w1;

	while ((opt = getopt(argc, argv, "t:r:n:")) != -1) {
		switch (opt) {
		case 't':
			threads = atoi(optarg);
			break;
		case 'r':
			runs = atoi(optarg);
			break;
		case 'n':
			loops = atoi(optarg);
			break;
		default:
			return usage();
		}
	}
	if (threads < 1 || threads > npr_pool_cpus() || runs < 1 ||
	    runs > 64 || loops < 1) {
		fprintf(stderr, "npr-kbench pool: want 1 <= -t <= %d, 1 <= -r <= 64, -n >= 1\n",
			npr_pool_cpus());
		return 2;
	}
	/* about 2 us an item: calibrate on this thread */
	for (spin = 1000;; spin *= 2) {
		one = pool_us(1, 1, spin, 200, 3);
		if (one >= 2.0 || spin > (1l << 30))
			break;
	}
	spin = (long)(spin * 2.0 / one);
	one = pool_us(1, 1, spin, loops, runs);
	e = pool_us(threads, threads, 0, loops, runs);
	w = pool_us(threads, threads, spin, loops, runs);
	w1 = pool_us(1, threads, spin, loops, runs);
	printf("pool: %d threads, %d loops a run, median of %d runs\n",
	       threads, loops, runs);
	printf("  empty loop of %d items:         %8.3f us\n", threads, e);
	printf("  %d items of %.2f us, %d threads: %8.3f us (one thread: %.3f us; overhead %.3f us a loop)\n",
	       threads, one, threads, w, w1, w - one);
	return 0;
}

/* the library's log (NPR_CPU_PROFILE's profile among it) on stderr */
static void log_stderr(void *priv, int level, const char *msg)
{
	(void)priv;
	(void)level;
	fprintf(stderr, "npuring: %s\n", msg);
}

int main(int argc, char **argv)
{
	npr_set_log(log_stderr, NULL, NPR_LOG_INFO);
	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "gemm"))
		return bench_gemm(argc - 1, argv + 1);
	if (!strcmp(argv[1], "model"))
		return bench_model(argc - 1, argv + 1);
	if (!strcmp(argv[1], "pool"))
		return bench_pool(argc - 1, argv + 1);
	return usage();
}
