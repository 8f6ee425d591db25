// SPDX-License-Identifier: MIT
/*
 * The element-wise low-precision kernels (ref/kernels/qew.h: NprQuantize,
 * NprDequantize, NprQAdd, NprQLut): every variant this CPU has against
 * the scalar one, byte for byte and bit for bit, on random inputs and on
 * the edges: zero points 0, 128 and 255, tiny, huge, infinite and NaN
 * inputs and scales, results that lie exactly on a rounding tie, the
 * bounds lo and hi, lengths that are not multiples of the vector widths
 * and unaligned pointers, with guard bytes after every output that must
 * stay untouched.  Then the ops through the kernel registry (chunks over
 * the threads) against the scalar kernels, and the set NPR_INT8_ISA
 * picks.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "ops/quant.h"
#include "ref/kernels/qew.h"
#include "ref/kernels/qgemm.h"
#include "ref/kernels/registry.h"
#include "harness.h"

static const char *const variants[] = { "avx512vbmi", "avx512", "avx2" };

#define NVARIANTS	(sizeof(variants) / sizeof(variants[0]))
#define GUARD		64
#define MAXN		4200

static const int64_t lens[] = {
	0, 1, 2, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129,
	255, 1000, 4099,
};

static const int zeros[] = { 0, 128, 255, 1, 37 };

/* tiny (down to a denormal), ordinary and huge scales */
static const float scales[] = {
	1.0f, 0.5f, 2.0f, 1.0f / 255, 0.0078125f, 0.0123f, 3.7f,
	1e-30f, 1e-40f, 1e30f,
};

#define NLENS	(sizeof(lens) / sizeof(lens[0]))
#define NZEROS	(sizeof(zeros) / sizeof(zeros[0]))
#define NSCALES	(sizeof(scales) / sizeof(scales[0]))

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng_state >> 33);
}

static float rnd_float(float sy)
{
	float u = (float)(rnd() % 2000001) / 1000000.0f - 1.0f;

	switch (rnd() % 8) {
	case 0:	/* on a tie of x / sy: k + 0.5 steps */
		return ((float)((int)(rnd() % 600) - 300) + 0.5f) * sy;
	case 1:	/* an integer number of steps */
		return (float)((int)(rnd() % 600) - 300) * sy;
	case 2:	/* around the range, past the clamps */
		return u * 2000.0f * sy;
	default:
		return u * 300.0f * sy;
	}
}

/* the edges: zeros, tiny, huge, infinite, NaN */
static const float edges[] = {
	0.0f, -0.0f, 1e-45f, -1e-45f, 1e-38f, 3e38f, -3e38f,
	INFINITY, -INFINITY, NAN, -NAN, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f,
	127.5f, 128.5f, 254.5f, 255.5f, 1023.5f, 1024.5f, -1024.5f,
};

#define NEDGES	(sizeof(edges) / sizeof(edges[0]))

static void fill_floats(float *x, int64_t n, float sy)
{
	int64_t i;

	for (i = 0; i < n; i++)
		x[i] = rnd() % 5 ? rnd_float(sy) : edges[rnd() % NEDGES];
}

static void fill_bytes(uint8_t *x, int64_t n)
{
	int64_t i;

	for (i = 0; i < n; i++) {
		uint32_t r = rnd();

		/* the ends of the range often */
		x[i] = r % 7 == 0 ? 0 : r % 7 == 1 ? 255 : (uint8_t)(r >> 8);
	}
}

/*
 * An output buffer of @n elements of @es bytes, @off elements past the
 * start of an allocation (so off the vector alignment), guards around.
 */
struct out {
	uint8_t *buf;
	size_t size;
};

static void *out_at(struct out *o, int64_t n, size_t es, int off)
{
	o->size = (n + off) * es + GUARD;
	o->buf = malloc(o->size);
	if (o->buf)
		memset(o->buf, 0xa5, o->size);
	return o->buf ? o->buf + off * es : NULL;
}

/* the guards still hold 0xa5 */
static bool guards_ok(const struct out *o, int64_t n, size_t es, int off)
{
	size_t i;

	for (i = 0; i < off * es; i++)
		if (o->buf[i] != 0xa5)
			return false;
	for (i = (off + n) * es; i < o->size; i++)
		if (o->buf[i] != 0xa5)
			return false;
	return true;
}

TEST(quantize_variants_match_scalar)
{
	const struct npr_qew_kern *ref = npr_qew_get("scalar");
	float *xb = malloc(sizeof(float) * (MAXN + 4));
	size_t v, l, z, s;
	int checked = 0;

	ASSERT_NONNULL(ref);
	ASSERT_NONNULL(xb);
	for (v = 0; v < NVARIANTS; v++) {
		const struct npr_qew_kern *k = npr_qew_get(variants[v]);

		if (!k) {
			TH_LOG("%s: not on this CPU", variants[v]);
			continue;
		}
		for (l = 0; l < NLENS; l++)
			for (z = 0; z < NZEROS; z++)
				for (s = 0; s < NSCALES; s++) {
					int off = (int)(l + z + s) % 4;
					int64_t n = lens[l];
					float *x = xb + (z + s) % 4;
					struct out a, b;
					uint8_t *ya, *yb;

					fill_floats(x, n, scales[s]);
					ya = out_at(&a, n, 1, off);
					yb = out_at(&b, n, 1, off);
					ASSERT_TRUE(ya && yb);
					ref->quantize(x, ya, n, scales[s],
						      zeros[z]);
					k->quantize(x, yb, n, scales[s],
						    zeros[z]);
					ASSERT_EQ(memcmp(a.buf, b.buf, a.size),
						  0);
					ASSERT_TRUE(guards_ok(&b, n, 1, off));
					free(a.buf);
					free(b.buf);
					checked++;
				}
	}
	TH_LOG("%d cases", checked);
	free(xb);
}

TEST(quantize_rounds_ties_to_even)
{
	static const float x[] = { 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f,
				   126.5f, 127.5f };
	static const uint8_t want[] = { 128, 130, 130, 128, 126, 126,
					254, 255 };
	size_t v;

	for (v = 0; v <= NVARIANTS; v++) {
		const struct npr_qew_kern *k =
			npr_qew_get(v < NVARIANTS ? variants[v] : "scalar");
		uint8_t y[8];

		if (!k)
			continue;
		k->quantize(x, y, 8, 1.0f, 128);
		ASSERT_EQ(memcmp(y, want, 8), 0);
	}
}

TEST(dequantize_variants_match_scalar)
{
	const struct npr_qew_kern *ref = npr_qew_get("scalar");
	uint8_t *xb = malloc(MAXN + 4);
	static const float special[] = { INFINITY, NAN };
	size_t v, l, z, s;

	ASSERT_NONNULL(ref);
	ASSERT_NONNULL(xb);
	for (v = 0; v < NVARIANTS; v++) {
		const struct npr_qew_kern *k = npr_qew_get(variants[v]);

		if (!k)
			continue;
		for (l = 0; l < NLENS; l++)
			for (z = 0; z < NZEROS; z++)
				for (s = 0; s < NSCALES + 2; s++) {
					float sa = s < NSCALES ? scales[s] :
						   special[s - NSCALES];
					int off = (int)(l + s) % 4;
					int64_t n = lens[l];
					uint8_t *x = xb + (z + s) % 4;
					struct out a, b;
					float *ya, *yb;

					fill_bytes(x, n);
					/* unaligned f32 stores too */
					ya = out_at(&a, n, 4, off);
					yb = out_at(&b, n, 4, off);
					ASSERT_TRUE(ya && yb);
					ref->dequantize(x, ya, n, sa, zeros[z]);
					k->dequantize(x, yb, n, sa, zeros[z]);
					ASSERT_EQ(memcmp(a.buf, b.buf, a.size),
						  0);
					ASSERT_TRUE(guards_ok(&b, n, 4, off));
					free(a.buf);
					free(b.buf);
				}
	}
	free(xb);
}

/* scales and bounds of NprQAdd, ties included */
static void add_params(struct npr_quant_params *p, int c)
{
	static const float sy[] = { 1.0f, 2.0f, 0.5f, 0.0317f, 1e-30f, 1e30f };

	memset(p, 0, sizeof(*p));
	p->za = zeros[rnd() % NZEROS];
	p->zb = zeros[rnd() % NZEROS];
	p->zy = zeros[rnd() % NZEROS];
	p->lo = 0;
	p->hi = 255;
	switch (c % 4) {
	case 0:	/* halves of integers: ties */
		p->sa = 0.5f;
		p->sb = c % 8 ? 1.0f : 0.0f;
		p->sy = 1.0f;
		break;
	case 1:	/* (a + b) / 2: ties at every odd sum */
		p->sa = p->sb = 1.0f;
		p->sy = 2.0f;
		break;
	case 2:
		p->sa = scales[rnd() % NSCALES];
		p->sb = scales[rnd() % NSCALES];
		p->sy = sy[rnd() % (sizeof(sy) / sizeof(sy[0]))];
		break;
	default:
		p->sa = 0.0123f + (float)(rnd() % 100) * 1e-4f;
		p->sb = 0.0271f + (float)(rnd() % 100) * 1e-4f;
		p->sy = 0.03f + (float)(rnd() % 100) * 1e-4f;
		break;
	}
	if (c % 3 == 1) {	/* a ReLU's or a Clip's bounds */
		p->lo = p->zy > 200 ? 200 : p->zy;
		p->hi = 200 + (int)(rnd() % 56);
	}
}

TEST(add_variants_match_scalar)
{
	const struct npr_qew_kern *ref = npr_qew_get("scalar");
	uint8_t *ab = malloc(MAXN + 4), *bb = malloc(MAXN + 4);
	size_t v, l;
	int c;

	ASSERT_NONNULL(ref);
	ASSERT_TRUE(ab && bb);
	for (v = 0; v < NVARIANTS; v++) {
		const struct npr_qew_kern *k = npr_qew_get(variants[v]);

		if (!k)
			continue;
		for (l = 0; l < NLENS; l++)
			for (c = 0; c < 48; c++) {
				struct npr_quant_params p;
				int off = (int)(l + c) % 4;
				int64_t n = lens[l];
				uint8_t *a = ab + c % 4, *b = bb + (c / 4) % 4;
				struct out ra, rb;
				uint8_t *ya, *yb;

				add_params(&p, c);
				fill_bytes(a, n);
				fill_bytes(b, n);
				ya = out_at(&ra, n, 1, off);
				yb = out_at(&rb, n, 1, off);
				ASSERT_TRUE(ya && yb);
				ref->add(a, b, ya, n, &p);
				k->add(a, b, yb, n, &p);
				ASSERT_EQ(memcmp(ra.buf, rb.buf, ra.size), 0);
				ASSERT_TRUE(guards_ok(&rb, n, 1, off));
				free(ra.buf);
				free(rb.buf);
			}
	}
	free(ab);
	free(bb);
}

TEST(add_rounds_ties_to_even_and_clamps)
{
	/* (a + b) / 2 + 10: 10.5, 11.5, 12.5, 13.5, 11, 14.5 */
	static const uint8_t a[] = { 1, 3, 5, 7, 2, 9 };
	static const uint8_t b[] = { 0, 0, 0, 0, 0, 0 };
	static const uint8_t want[] = { 10, 12, 12, 14, 11, 14 };
	/* the same within [11, 13] */
	static const uint8_t clamped[] = { 11, 12, 12, 13, 11, 13 };
	struct npr_quant_params p = {
		.sa = 1.0f, .sb = 1.0f, .sy = 2.0f, .zy = 10, .lo = 0,
		.hi = 255,
	};
	size_t v;

	for (v = 0; v <= NVARIANTS; v++) {
		const struct npr_qew_kern *k =
			npr_qew_get(v < NVARIANTS ? variants[v] : "scalar");
		uint8_t y[6];

		if (!k)
			continue;
		p.lo = 0;
		p.hi = 255;
		k->add(a, b, y, 6, &p);
		ASSERT_EQ(memcmp(y, want, 6), 0);
		p.lo = 11;
		p.hi = 13;
		k->add(a, b, y, 6, &p);
		ASSERT_EQ(memcmp(y, clamped, 6), 0);
	}
}

TEST(lut_variants_match_scalar)
{
	const struct npr_qew_kern *ref = npr_qew_get("scalar");
	uint8_t *xb = malloc(MAXN + 4), t[256];
	size_t v, l;
	int c;

	ASSERT_NONNULL(ref);
	ASSERT_NONNULL(xb);
	for (v = 0; v < NVARIANTS; v++) {
		const struct npr_qew_kern *k = npr_qew_get(variants[v]);

		if (!k)
			continue;
		for (l = 0; l < NLENS; l++)
			for (c = 0; c < 6; c++) {
				int off = (int)(l + c) % 4;
				int64_t n = lens[l], i;
				uint8_t *x = xb + c % 4;
				struct out a, b;
				uint8_t *ya, *yb;

				/* every index, then random ones */
				for (i = 0; i < n; i++)
					x[i] = c ? (uint8_t)rnd() : (uint8_t)i;
				fill_bytes(t, 256);
				ya = out_at(&a, n, 1, off);
				yb = out_at(&b, n, 1, off);
				ASSERT_TRUE(ya && yb);
				ref->lut(x, t, ya, n);
				k->lut(x, t, yb, n);
				ASSERT_EQ(memcmp(a.buf, b.buf, a.size), 0);
				ASSERT_TRUE(guards_ok(&b, n, 1, off));
				free(a.buf);
				free(b.buf);
			}
	}
	free(xb);
}

static void tensor_1d(struct npr_tensor *t, unsigned int type, void *data,
		      int64_t n, size_t es)
{
	memset(t, 0, sizeof(*t));
	t->type = type;
	t->shape.rank = 1;
	t->shape.d[0] = n;
	t->data = data;
	t->nbytes = n * es;
}

/*
 * The four ops through the kernel registry (the set npr_qew_best() picks,
 * chunks over the threads) against the scalar kernels on the whole
 * tensor, at sizes below, at and past one chunk.
 */
TEST(ops_through_the_registry_match_scalar)
{
	static const int64_t sizes[] = { 1, 1000, 16384, 16385, 100003 };
	const struct npr_qew_kern *ref = npr_qew_get("scalar");
	npr_eval_fn quant = npr_kernel_find(npr_op_find("NprQuantize", 1));
	npr_eval_fn deq = npr_kernel_find(npr_op_find("NprDequantize", 1));
	npr_eval_fn add = npr_kernel_find(npr_op_find("NprQAdd", 1));
	npr_eval_fn lut = npr_kernel_find(npr_op_find("NprQLut", 1));
	int64_t nmax = sizes[sizeof(sizes) / sizeof(sizes[0]) - 1];
	float *f = malloc(sizeof(float) * nmax);
	float *fy = malloc(sizeof(float) * nmax);
	float *fr = malloc(sizeof(float) * nmax);
	uint8_t *a = malloc(nmax), *b = malloc(nmax), t[256];
	uint8_t *y = malloc(nmax), *r = malloc(nmax);
	struct npr_tensor in[2], out;
	struct npr_node n = { .name = "q", .nout = 1 };
	size_t s;

	ASSERT_TRUE(ref && quant && deq && add && lut);
	ASSERT_TRUE(f && fy && fr && a && b && y && r);
	TH_LOG("the set in use: %s", npr_qew_best()->name);
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		int64_t cnt = sizes[s];
		struct npr_quant_params p;

		add_params(&p, (int)s * 4 + 3);
		n.params = &p;
		fill_floats(f, cnt, p.sy);
		fill_bytes(a, cnt);
		fill_bytes(b, cnt);
		fill_bytes(t, 256);

		n.type = "NprQuantize";
		n.nin = 1;
		tensor_1d(&in[0], NPR_ELEM_F32, f, cnt, 4);
		tensor_1d(&out, NPR_ELEM_U8, y, cnt, 1);
		ASSERT_EQ(quant(&n, in, &out), 0);
		ref->quantize(f, r, cnt, p.sy, p.zy);
		ASSERT_EQ(memcmp(y, r, cnt), 0);

		n.type = "NprDequantize";
		tensor_1d(&in[0], NPR_ELEM_U8, a, cnt, 1);
		tensor_1d(&out, NPR_ELEM_F32, fy, cnt, 4);
		ASSERT_EQ(deq(&n, in, &out), 0);
		ref->dequantize(a, fr, cnt, p.sa, p.za);
		ASSERT_EQ(memcmp(fy, fr, cnt * 4), 0);

		n.type = "NprQAdd";
		n.nin = 2;
		tensor_1d(&in[1], NPR_ELEM_U8, b, cnt, 1);
		tensor_1d(&out, NPR_ELEM_U8, y, cnt, 1);
		ASSERT_EQ(add(&n, in, &out), 0);
		ref->add(a, b, r, cnt, &p);
		ASSERT_EQ(memcmp(y, r, cnt), 0);

		n.type = "NprQLut";
		tensor_1d(&in[1], NPR_ELEM_U8, t, 256, 1);
		ASSERT_EQ(lut(&n, in, &out), 0);
		ref->lut(a, t, r, cnt);
		ASSERT_EQ(memcmp(y, r, cnt), 0);
	}
	free(f);
	free(fy);
	free(fr);
	free(a);
	free(b);
	free(y);
	free(r);
}

/* @isa (an NPR_INT8_ISA name) picks @set, or the best one without it */
static const char *picked(const char *isa)
{
	setenv("NPR_INT8_ISA", isa, 1);
	return npr_qew_best()->name;
}

TEST(int8_isa_scalar_picks_the_scalar_set)
{
	ASSERT_STREQ(picked("scalar"), "scalar");
}

TEST(int8_isa_avx2_picks_the_avx2_set_once)
{
	if (!npr_qgemm_get("avx2"))
		SKIP(return, "this CPU has no AVX2");
	ASSERT_STREQ(picked("avx2"), "avx2");
	/* chosen once per process */
	setenv("NPR_INT8_ISA", "scalar", 1);
	ASSERT_STREQ(npr_qew_best()->name, "avx2");
}

TEST(int8_isa_avxvnni_picks_the_avx2_set)
{
	if (!npr_qgemm_get("avxvnni"))
		SKIP(return, "this CPU has no AVX-VNNI");
	ASSERT_STREQ(picked("avxvnni"), "avx2");
}

TEST(int8_isa_vnni512_picks_an_avx512_set)
{
	const char *want = npr_qew_get("avx512vbmi") ? "avx512vbmi" :
			   "avx512";

	if (!npr_qgemm_get("vnni512"))
		SKIP(return, "this CPU has no AVX-512 VNNI");
	ASSERT_STREQ(picked("vnni512"), want);
}

TEST(without_int8_isa_the_best_set_runs)
{
	unsetenv("NPR_INT8_ISA");
	if (npr_qew_get("avx512vbmi"))
		ASSERT_STREQ(npr_qew_best()->name, "avx512vbmi");
	else if (npr_qew_get("avx512"))
		ASSERT_STREQ(npr_qew_best()->name, "avx512");
	else if (npr_qew_get("avx2"))
		ASSERT_STREQ(npr_qew_best()->name, "avx2");
	else
		ASSERT_STREQ(npr_qew_best()->name, "scalar");
}

TEST(unknown_names_give_no_set)
{
	ASSERT_NULL(npr_qew_get("vnni512"));
	ASSERT_NULL(npr_qew_get(""));
	ASSERT_NONNULL(npr_qew_get("scalar"));
}

TEST_HARNESS_MAIN
