// SPDX-License-Identifier: MIT
/*
 * The int8 kernel of blocked weights (ref/kernels/qgemm.h, struct
 * npr_qnhwc_args) of every ISA this CPU has against the scalar one, on
 * random blocks of every shape class (taps, channel groups, partial
 * blocks of channels, pixel counts that leave partial tiles, u8 and f32
 * outputs, tables, gaps between pixels): the same bytes.  And ties: sums
 * whose quotient by the output scale is exactly a half-integer, where
 * the vector kernels' reciprocal shortcut must give way to the
 * division, rounded to even as integer arithmetic says.  The depthwise
 * kernels (per channel, groups of four taps) likewise: both AVX-512 VNNI
 * ways of interleaving the taps (byte permutes, unpacks) and the 256-bit
 * ones.  Then whole NprQConv nodes through the kernel registry: blocked
 * weights (the layout lib/ops/quant.h documents, made here from the
 * rows) with NCHW and NHWC inputs and outputs against the rows on NCHW,
 * over windows, strides, dilations, padding, channel counts and batches.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ops/quant.h"
#include "ref/kernels/qgemm.h"
#include "ref/kernels/qnhwc.h"
#include "ref/kernels/registry.h"

static const char *const isas[] = { "vnni512", "avxvnni", "avx2" };

static uint32_t rng = 12345;

static uint32_t rnd(void)
{
	rng = rng * 1664525u + 1013904223u;
	return rng >> 8;
}

struct blk {
	struct npr_qnhwc_args a;
	uint8_t *x;
	const uint8_t **ind;
	int8_t *w;
	int32_t *comp, lut[256];
	uint8_t lut8[256];
	float *mul, *add;
	size_t ybytes;
};

static void blk_free(struct blk *b)
{
	free(b->x);
	free(b->ind);
	free(b->w);
	free(b->comp);
	free(b->mul);
	free(b->add);
}

/* a random block; false when out of memory */
static bool blk_make(struct blk *b, int64_t taps, int64_t cq, int64_t kb,
		     int64_t m, int64_t npx, bool f32out, bool lut)
{
	int64_t nx = (npx + 3) * taps, i;
	size_t nw = (size_t)(kb * taps * cq * 64);

	memset(b, 0, sizeof(*b));
	b->x = malloc((size_t)(nx * cq * 4));
	b->ind = malloc(sizeof(*b->ind) * (size_t)(npx * taps));
	b->w = malloc(nw);
	b->comp = calloc((size_t)kb * 16, sizeof(int32_t));
	b->mul = calloc((size_t)kb * 16, sizeof(float));
	b->add = calloc((size_t)kb * 16, sizeof(float));
	if (!b->x || !b->ind || !b->w || !b->comp || !b->mul || !b->add)
		return false;
	for (i = 0; i < nx * cq * 4; i++)
		b->x[i] = (uint8_t)rnd();
	/* pointers anywhere in x, repeats and all */
	for (i = 0; i < npx * taps; i++)
		b->ind[i] = b->x + (rnd() % nx) * cq * 4;
	for (i = 0; i < (int64_t)nw; i++)
		b->w[i] = (int8_t)rnd();
	for (i = 0; i < kb * 16; i++) {
		b->comp[i] = (int32_t)(rnd() % 20001) - 10000;
		b->mul[i] = (float)((rnd() % 1000) + 1) * 1e-5f;
		b->add[i] = (float)((int)(rnd() % 2001) - 1000) * 0.01f;
	}
	for (i = 0; i < 256; i++) {
		b->lut[i] = (int32_t)((i * 7 + 3) & 255);
		b->lut8[i] = (uint8_t)b->lut[i];
	}
	b->a = (struct npr_qnhwc_args){
		.ind = b->ind, .taps = taps, .cq = cq, .w = b->w, .kb = kb,
		.m = m, .npx = npx, .comp = b->comp, .mul = b->mul,
		.add = b->add, .div = (float)((rnd() % 500) + 1) * 1e-3f,
		.f32out = f32out, .zy = (int)(rnd() % 256), .lo = 0,
		.hi = 255, .flo = -50.0f, .fhi = 50.0f,
		.ldy = m + (rnd() % 2 ? 5 : 0),
		.lut = lut ? b->lut : NULL, .lut8 = lut ? b->lut8 : NULL,
	};
	b->a.lo = (int)(rnd() % 64);
	b->a.hi = 255 - (int)(rnd() % 64);
	b->ybytes = (size_t)(npx * b->a.ldy) * (f32out ? 4 : 1);
	return true;
}

/* run @fn on @b into a fresh buffer (guard bytes around it checked) */
static uint8_t *blk_run(struct blk *b, npr_qnhwc_fn fn)
{
	uint8_t *y = malloc(b->ybytes + 128);

	if (!y)
		return NULL;
	memset(y, 0xa5, b->ybytes + 128);
	b->a.y = y + 64;
	fn(&b->a);
	return y;
}

TEST(every_isa_equals_scalar)
{
	static const int64_t tapv[] = { 1, 9, 49 }, cqv[] = { 1, 3, 16 };
	int cases = 0, isa_n = 0;
	size_t s, t, c;

	for (s = 0; s < sizeof(isas) / sizeof(isas[0]); s++) {
		const struct npr_qgemm_kern *k = npr_qgemm_get(isas[s]);

		if (!k) {
			TH_LOG("this CPU has no %s", isas[s]);
			continue;
		}
		isa_n++;
		for (t = 0; t < 3; t++)
			for (c = 0; c < 9; c++) {
				int64_t kb = 1 + rnd() % 5;
				int64_t m = kb * 16 - (int64_t)(rnd() % 16);
				int64_t npx = 1 + rnd() % 40;
				int mode = (int)(c % 3);
				struct blk b;
				uint8_t *ys, *yv;

				ASSERT_TRUE(blk_make(&b, tapv[t], cqv[c / 3], kb, m,
						     npx, mode == 1,
						     mode == 2));
				ys = blk_run(&b, npr_qnhwc_scalar);
				yv = blk_run(&b, k->nhwc);
				ASSERT_NONNULL(ys);
				ASSERT_NONNULL(yv);
				if (memcmp(ys, yv, b.ybytes + 128))
					TH_LOG("%s: taps %lld cq %lld kb %lld m %lld npx %lld mode %d differ",
					       isas[s], (long long)tapv[t],
					       (long long)cqv[c / 3], (long long)kb,
					       (long long)m, (long long)npx,
					       mode);
				EXPECT_EQ(memcmp(ys, yv, b.ybytes + 128), 0);
				free(ys);
				free(yv);
				blk_free(&b);
				cases++;
			}
	}
	TH_LOG("%d blocks on %d vector kernels", cases, isa_n);
	if (!isa_n)
		SKIP(return, "this CPU has none of the vector int8 kernels");
}

/*
 * One input byte 1 and one weight per channel, a multiple of 7 up to
 * 126, the rest 0: each sum is a known integer s; with mul 1, add 0 and
 * div 14 (whose reciprocal no float holds) s / 14 is a half-integer for
 * an odd multiple of 7, which rounds to even.  91 times the reciprocal
 * is 6.50000048 in floats: the shortcut alone would give 7, not 6.
 */
/*
 * A depthwise block: @taps pointers a pixel to rows of @ch channels; the
 * item covers channels [@xc0, @xc0 + m).
 */
static bool dw_make(struct blk *b, int64_t taps, int64_t kb, int64_t m,
		    int64_t npx, int64_t xc0, int mode)
{
	int64_t ch = xc0 + kb * 16 + 3, i;

	if (!blk_make(b, taps, (taps + 3) / 4, kb, m, npx, mode == 1,
		      mode == 2))
		return false;
	free(b->x);
	b->x = malloc((size_t)((npx + 3) * taps * ch));
	if (!b->x)
		return false;
	for (i = 0; i < (npx + 3) * taps * ch; i++)
		b->x[i] = (uint8_t)rnd();
	for (i = 0; i < npx * taps; i++)
		b->ind[i] = b->x + (rnd() % ((npx + 3) * taps)) * ch;
	/* the taps past the last of the last group have zero weights */
	for (i = 0; i < kb * 16 * b->a.cq * 4; i++)
		if ((i / 64 % b->a.cq) * 4 + i % 4 >= taps)
			b->w[i] = 0;
	b->a.xc0 = xc0;
	return true;
}

TEST(depthwise_equals_scalar)
{
	static const int64_t tapv[] = { 1, 3, 9, 25 };
	const struct {
		const char *name;
		npr_qnhwc_fn fn;
	} ks[] = {
		{ "vnni512", npr_qgemm_get("vnni512") ?
		  npr_qgemm_get("vnni512")->nhwc_dw : NULL },
		{ "vnni512 unpacks", npr_qgemm_get("vnni512") ?
		  npr_qdwn_vnni512_unpack : NULL },
		{ "vnni512 permutes", npr_qgemm_get("vnni512") &&
		  __builtin_cpu_supports("avx512vbmi") ?
		  npr_qdwn_vnni512_vbmi : NULL },
		{ "avxvnni", npr_qgemm_get("avxvnni") ?
		  npr_qgemm_get("avxvnni")->nhwc_dw : NULL },
		{ "avx2", npr_qgemm_get("avx2") ?
		  npr_qgemm_get("avx2")->nhwc_dw : NULL },
	};
	int cases = 0;
	size_t s, t, c;

	for (s = 0; s < sizeof(ks) / sizeof(ks[0]); s++) {
		if (!ks[s].fn) {
			TH_LOG("this CPU cannot run the %s kernel", ks[s].name);
			continue;
		}
		for (t = 0; t < 4; t++)
			for (c = 0; c < 6; c++) {
				int64_t kb = 1 + rnd() % 3;
				int64_t m = kb * 16 - (int64_t)(rnd() % 16);
				struct blk b;
				uint8_t *ys, *yv;

				ASSERT_TRUE(dw_make(&b, tapv[t], kb, m,
						    1 + rnd() % 20,
						    (int64_t)(rnd() % 3) * 16,
						    (int)(c % 3)));
				ys = blk_run(&b, npr_qdwn_scalar);
				yv = blk_run(&b, ks[s].fn);
				ASSERT_NONNULL(ys);
				ASSERT_NONNULL(yv);
				if (memcmp(ys, yv, b.ybytes + 128))
					TH_LOG("%s: taps %lld kb %lld m %lld mode %d differ",
					       ks[s].name, (long long)tapv[t],
					       (long long)kb, (long long)m,
					       (int)(c % 3));
				EXPECT_EQ(memcmp(ys, yv, b.ybytes + 128), 0);
				free(ys);
				free(yv);
				blk_free(&b);
				cases++;
			}
	}
	TH_LOG("%d depthwise blocks", cases);
	if (!cases)
		SKIP(return, "this CPU has no vector depthwise kernel");
}

TEST(ties_round_to_even)
{
	const int64_t kb = 2, npx = 13, cq = 4;
	size_t s;
	int isa_n = 0, ties = 0;

	for (s = 0; s < sizeof(isas) / sizeof(isas[0]) + 1; s++) {
		const struct npr_qgemm_kern *k = s < 3 ?
			npr_qgemm_get(isas[s]) : npr_qgemm_get("scalar");
		struct blk b;
		uint8_t *y;
		int64_t p, ch, i;

		if (!k)
			continue;
		isa_n++;
		ASSERT_TRUE(blk_make(&b, 1, cq, kb, kb * 16, npx, false,
				     false));
		memset(b.x, 0, (size_t)((npx + 3) * cq * 4));
		for (p = 0; p < npx; p++) {
			b.ind[p] = b.x + p * cq * 4;
			b.x[p * cq * 4 + p % (cq * 4)] = 1;
		}
		memset(b.w, 0, (size_t)(kb * cq * 64));
		for (ch = 0; ch < kb * 16; ch++)
			for (i = 0; i < cq * 4; i++)
				b.w[((ch / 16 * cq + i / 4) * 16 + ch % 16) * 4 +
				    i % 4] = (int8_t)(7 * ((ch * 5 + i * 3) % 18 + 1));
		for (ch = 0; ch < kb * 16; ch++) {
			b.comp[ch] = 0;
			b.mul[ch] = 1.0f;
			b.add[ch] = 0.0f;
		}
		b.a.div = 14.0f;
		b.a.zy = 0;
		b.a.lo = 0;
		b.a.hi = 255;
		y = blk_run(&b, k->nhwc);
		ASSERT_NONNULL(y);
		for (p = 0; p < npx; p++)
			for (ch = 0; ch < kb * 16; ch++) {
				int64_t idx = p % (cq * 4);
				int sum = 7 * (int)((ch * 5 + idx * 3) % 18 + 1);
				/* sum / 14 rounded half to even */
				int q = sum / 14, r = sum % 14;
				int want = q + (2 * r > 14 ||
						(2 * r == 14 && q % 2));

				ties += 2 * r == 14;
				EXPECT_EQ(y[64 + p * b.a.ldy + ch], want);
			}
		free(y);
		blk_free(&b);
	}
	TH_LOG("%d kernels, %d half-integer quotients", isa_n, ties);
	ASSERT_GT(ties, 0);
}

struct conv_case {
	int64_t N, C, H, W, K, kh, kw, s, pad, dil;
	bool dw, f32out, lut;
};

static void tensor4(struct npr_tensor *t, unsigned int type, void *data,
		    int64_t a, int64_t b, int64_t c, int64_t d, size_t es)
{
	memset(t, 0, sizeof(*t));
	t->type = type;
	t->shape.rank = 4;
	t->shape.d[0] = a;
	t->shape.d[1] = b;
	t->shape.d[2] = c;
	t->shape.d[3] = d;
	t->data = data;
	t->nbytes = (size_t)(a * b * c * d) * es;
}

static void tensor1(struct npr_tensor *t, unsigned int type, void *data,
		    int64_t a, int64_t b, size_t es)
{
	memset(t, 0, sizeof(*t));
	t->type = type;
	t->shape.rank = b ? 2 : 1;
	t->shape.d[0] = a;
	t->shape.d[1] = b;
	t->data = data;
	t->nbytes = (size_t)(a * (b ? b : 1)) * es;
}

/* [N][C][S] <-> [N][S][C] for elements of @es bytes */
static void swap_cs(void *d, const void *s, int64_t N, int64_t C, int64_t S,
		    size_t es, bool to_nhwc)
{
	int64_t n, c, p;

	for (n = 0; n < N; n++)
		for (c = 0; c < C; c++)
			for (p = 0; p < S; p++) {
				int64_t f = (n * C + c) * S + p;
				int64_t l = (n * S + p) * C + c;

				memcpy((char *)d + (to_nhwc ? l : f) * es,
				       (const char *)s + (to_nhwc ? f : l) * es,
				       es);
			}
}

/* one case: rows on NCHW against blocked in each layout; 0 or a count */
static int conv_case_run(const struct conv_case *k)
{
	npr_eval_fn conv = npr_kernel_find(npr_op_find("NprQConv", 1));
	int64_t cg = k->dw ? 1 : k->C, T = k->kh * k->kw;
	int64_t kr = (cg * T + 3) & ~(int64_t)3, i, r, c, t;
	int64_t OH = (k->H + 2 * k->pad - (k->kh - 1) * k->dil - 1) / k->s + 1;
	int64_t OW = (k->W + 2 * k->pad - (k->kw - 1) * k->dil - 1) / k->s + 1;
	int64_t Cp = (k->C + 3) & ~(int64_t)3, K16 = (k->K + 15) & ~15;
	int64_t bkr = k->dw ? (T + 3) & ~(int64_t)3 : T * Cp;
	int64_t nx = k->N * k->C * k->H * k->W, ny = k->N * k->K * OH * OW;
	size_t es = k->f32out ? 4 : 1;
	uint8_t *x = malloc(nx), *xl = malloc(nx), tab[256];
	int8_t *w = calloc(k->K * kr, 1), *wb = calloc(K16 * bkr, 1);
	int32_t *ws = calloc(k->K, 4);
	float *mul = malloc(4 * k->K), *add = malloc(4 * k->K);
	char *y0 = malloc(ny * es), *y1 = malloc(ny * es), *yl = malloc(ny * es);
	struct npr_quant_params p = {
		.stride = { k->s, k->s }, .dil = { k->dil, k->dil },
		.pb = { k->pad, k->pad }, .pe = { k->pad, k->pad },
		.kernel = { k->kh, k->kw }, .groups = k->dw ? k->C : 1,
		.kr = kr, .xz = (int)(rnd() % 256), .f32out = k->f32out,
		.lo = 3, .hi = 250, .flo = -30.0f, .fhi = 30.0f,
		.sy = 0.05f + (float)(rnd() % 100) * 1e-3f,
		.zy = (int)(rnd() % 256),
	};
	struct npr_node n = { .name = "c", .type = "NprQConv", .nout = 1,
			      .nin = k->lut ? 6 : 5, .params = &p };
	struct npr_tensor in[6], out;
	int bad = 0, lay;

	if (!conv || !x || !xl || !w || !wb || !ws || !mul || !add || !y0 ||
	    !y1 || !yl)
		return -1;
	for (i = 0; i < nx; i++)
		x[i] = (uint8_t)rnd();
	for (i = 0; i < 256; i++)
		tab[i] = (uint8_t)rnd();
	for (i = 0; i < k->K; i++) {
		for (r = 0; r < cg * T; r++) {
			w[i * kr + r] = (int8_t)rnd();
			ws[i] += w[i * kr + r];
		}
		mul[i] = (float)(rnd() % 100 + 1) * 1e-4f;
		add[i] = (float)((int)(rnd() % 200) - 100) * 0.01f;
	}
	/* the blocked layout, from the rows, as lib/ops/quant.h writes it */
	for (i = 0; i < k->K; i++)
		for (c = 0; c < cg; c++)
			for (t = 0; t < T; t++) {
				r = k->dw ? t : t * Cp + c;
				wb[((i / 16 * (bkr / 4) + r / 4) * 16 + i % 16) *
				   4 + r % 4] = w[i * kr + c * T + t];
			}
	tensor4(&in[0], NPR_ELEM_U8, x, k->N, k->C, k->H, k->W, 1);
	tensor1(&in[1], NPR_ELEM_I8, w, k->K, kr, 1);
	tensor1(&in[2], NPR_ELEM_I32, ws, k->K, 0, 4);
	tensor1(&in[3], NPR_ELEM_F32, mul, k->K, 0, 4);
	tensor1(&in[4], NPR_ELEM_F32, add, k->K, 0, 4);
	tensor1(&in[5], NPR_ELEM_U8, tab, 256, 0, 1);
	tensor4(&out, k->f32out ? NPR_ELEM_F32 : NPR_ELEM_U8, y0, k->N, k->K,
		OH, OW, es);
	if (conv(&n, in, &out))
		return -1;
	p.wblocked = true;
	p.kr = bkr;
	tensor1(&in[1], NPR_ELEM_I8, wb, K16, bkr, 1);
	swap_cs(xl, x, k->N, k->C, k->H * k->W, 1, true);
	for (lay = 0; lay < 4; lay++) {
		p.xnhwc = lay & 1;
		p.ynhwc = !k->f32out && (lay & 2);
		in[0].data = p.xnhwc ? xl : x;
		out.data = p.ynhwc ? yl : y1;
		if (conv(&n, in, &out))
			return -1;
		if (p.ynhwc)
			swap_cs(y1, yl, k->N, k->K, OH * OW, es, false);
		bad += memcmp(y0, y1, ny * es) != 0;
	}
	free(x);
	free(xl);
	free(w);
	free(wb);
	free(ws);
	free(mul);
	free(add);
	free(y0);
	free(y1);
	free(yl);
	return bad;
}

TEST(blocked_equals_rows)
{
	static const struct conv_case cases[] = {
		/* N, C, H, W, K, kh, kw, s, pad, dil, dw, f32out, lut */
		{ 1, 16, 9, 11, 20, 1, 1, 1, 0, 1, false, false, false },
		{ 2, 32, 10, 7, 64, 3, 3, 1, 1, 1, false, false, true },
		{ 1, 20, 13, 13, 33, 3, 3, 2, 1, 1, false, false, false },
		{ 1, 3, 30, 29, 16, 7, 7, 2, 3, 1, false, false, false },
		{ 2, 8, 12, 12, 24, 3, 3, 1, 2, 2, false, false, false },
		{ 1, 6, 9, 9, 17, 5, 3, 1, 0, 1, false, true, false },
		{ 1, 64, 5, 5, 70, 3, 3, 1, 1, 1, false, true, false },
		{ 1, 24, 14, 14, 24, 3, 3, 1, 1, 1, true, false, false },
		{ 2, 40, 15, 15, 40, 3, 3, 2, 1, 1, true, false, true },
		{ 1, 16, 11, 11, 16, 5, 5, 1, 2, 1, true, true, false },
		{ 1, 20, 9, 9, 20, 3, 3, 1, 2, 2, true, false, false },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int bad = conv_case_run(&cases[i]);

		ASSERT_GE(bad, 0);
		if (bad)
			TH_LOG("case %zu: %d layouts differ from the rows", i,
			       bad);
		EXPECT_EQ(bad, 0);
	}
}

/*
 * NprQMaxPool with a window far larger than its input (65536 taps a side,
 * the most an attribute allows, padded so that 1000 x 1000 windows fit):
 * every window covers the whole 3 x 3 plane, so each output is the
 * plane's maximum.  The kernel visits only the taps inside the input:
 * walking every row of each window (and every column of the rows inside)
 * took 2.6e11 steps here, minutes.
 */
TEST(qmaxpool_window_far_larger_than_the_input)
{
	struct npr_quant_params p = {
		.stride = { 1, 1 }, .dil = { 1, 1 }, .pb = { 33266, 33266 },
		.pe = { 33266, 33266 }, .kernel = { 65536, 65536 },
		.xnhwc = true, .ynhwc = true,
	};
	struct npr_node n = { .name = "pool", .type = "NprQMaxPool",
			      .params = &p, .nout = 1 };
	struct npr_tensor in = { 0 }, out = { 0 };
	const int64_t O = 1000, np = O * O;
	uint8_t x[4 * 9], *y = malloc(4 * np);
	int64_t i;
	int c;

	ASSERT_NONNULL(y);
	for (i = 0; i < 4 * 9; i++)
		x[i] = (uint8_t)((i * 37 + 11) % 251);
	in.type = out.type = NPR_ELEM_U8;
	in.shape.rank = out.shape.rank = 4;
	in.shape.d[0] = out.shape.d[0] = 1;
	in.shape.d[1] = out.shape.d[1] = 4;
	in.shape.d[2] = in.shape.d[3] = 3;
	out.shape.d[2] = out.shape.d[3] = O;
	in.data = x;
	in.nbytes = sizeof(x);
	out.data = y;
	out.nbytes = 4 * np;
	ASSERT_EQ(npr_qmaxpool(&n, &in, &out), 0);
	for (c = 0; c < 4; c++) {
		uint8_t m = 0;
		int64_t bad = 0;

		for (i = 0; i < 9; i++)	/* NHWC: pixel i, channel c */
			m = x[i * 4 + c] > m ? x[i * 4 + c] : m;
		for (i = 0; i < np; i++)
			bad += y[i * 4 + c] != m;
		EXPECT_EQ(bad, 0);
	}
	free(y);
}

TEST_HARNESS_MAIN
