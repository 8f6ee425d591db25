// SPDX-License-Identifier: MIT
/*
 * Kernels of the low-precision ops (lib/ops/quant.h).
 *
 * NprQConv: per image, group and block of up to QBLK output pixels, the
 * window's bytes are packed (padding reads the x zero point) into groups
 * of four reduction steps per pixel, the layout vpdpbusd reads
 * (ref/kernels/qgemm.h): one im2col row per reduction step (a pointer
 * into x for a 1x1 convolution with stride 1), four rows interleaved
 * with SSE2 unpacks; the matrix kernel of this CPU (AVX-512 VNNI,
 * AVX-VNNI, AVX2, or the scalar one here: NPR_INT8_ISA picks one)
 * multiplies the group's weight rows with it and writes the requantized
 * output.  The x zero point comes off through a per-channel term made
 * from the weight sums the compile pass stored.  Blocks (and, when there
 * are few, ranges of channels) run on the thread pool.  A depthwise
 * convolution (one input and one output channel per group) runs per
 * channel plane instead: the plane padded, its columns split by the
 * stride so that every tap reads consecutive bytes, and the plane kernel
 * of ref/kernels/qdw.h.
 *
 * The element-wise ops do what the f32 nodes they replace did, in the
 * same order of operations, so they give the same bits; their AVX-512
 * and AVX2 variants (ref/kernels/qew.h) do the same operations on
 * vectors.
 */
#include <errno.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/quant.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include "qew.h"
#include "qgemm.h"
#include "qmath.h"
#include "qnhwc.h"
#include "registry.h"
#include "ref/threads.h"
#include "sys.h"

#define QBLK	128	/* output pixels packed at a time */

static void qgemm_scalar(const struct npr_qgemm_args *a)
{
	int64_t r, p, q;

	for (r = 0; r < a->m; r++) {
		const int8_t *w = a->w + r * a->kr;

		for (p = 0; p < a->npx; p++) {
			uint32_t acc = 0;
			float f;
			int u;

			for (q = 0; q < a->kr; q++)
				acc += (uint32_t)((int32_t)a->x[((q >> 2) *
							a->ldx + p) * 4 +
						       (q & 3)] * w[q]);
			acc -= (uint32_t)a->comp[r];
			f = fmaf((float)(int32_t)acc, a->mul[r], a->add[r]);
			if (a->f32out) {
				((float *)a->y)[r * a->ldy + p] =
					vmin(vmax(f, a->flo), a->fhi);
				continue;
			}
			f = vmin(vmax(f / a->div, (float)(a->lo - a->zy)),
				 (float)(a->hi - a->zy));
			u = (int)rne(f) + a->zy;
			((uint8_t *)a->y)[r * a->ldy + p] =
				(uint8_t)(a->lut ? a->lut[u] : u);
		}
	}
}

#define QDW	npr_qdw_scalar
#define QDW_TAP	qdw_tap_scalar
#include "qdw.h"

static const struct npr_qgemm_kern kerns[] = {
#if defined(__x86_64__)
	{ "vnni512", npr_qgemm_vnni512, npr_qdw_avx512, npr_qnhwc_vnni512,
	  npr_qdwn_vnni512 },
	{ "avxvnni", npr_qgemm_avxvnni, npr_qdw_avx2, npr_qnhwc_avxvnni,
	  npr_qdwn_avxvnni },
	{ "avx2", npr_qgemm_avx2, npr_qdw_avx2, npr_qnhwc_avx2,
	  npr_qdwn_avx2 },
#endif
	{ "scalar", qgemm_scalar, npr_qdw_scalar, npr_qnhwc_scalar,
	  npr_qdwn_scalar },
};

#if defined(__x86_64__)
/* AVX-VNNI: CPUID.(7,1):EAX bit 4 (older compilers lack its name) */
static bool avx_vnni(void)
{
	unsigned int a, b, c, d;

	return __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a >> 4 & 1);
}
#endif

static bool cpu_has(const char *isa)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (!strcmp(isa, "vnni512"))
		return __builtin_cpu_supports("avx512vnni") &&
		       __builtin_cpu_supports("avx512vl") &&
		       __builtin_cpu_supports("avx512bw");
	if (!strcmp(isa, "avxvnni"))
		return avx_vnni() && __builtin_cpu_supports("avx2") &&
		       __builtin_cpu_supports("fma");
	if (!strcmp(isa, "avx2"))
		return __builtin_cpu_supports("avx2") &&
		       __builtin_cpu_supports("fma");
	if (!strcmp(isa, "avx512"))
		return __builtin_cpu_supports("avx512f") &&
		       __builtin_cpu_supports("avx512bw");
	if (!strcmp(isa, "avx512vbmi"))
		return __builtin_cpu_supports("avx512f") &&
		       __builtin_cpu_supports("avx512bw") &&
		       __builtin_cpu_supports("avx512vbmi");
#endif
	return !strcmp(isa, "scalar");
}

/**
 * npr_qgemm_get() - an int8 matrix kernel by name
 * @name: "vnni512", "avxvnni", "avx2" or "scalar".
 *
 * Return: the kernel, or NULL if this CPU lacks its ISA (by CPUID) or
 * @name is none of these.
 */
const struct npr_qgemm_kern *npr_qgemm_get(const char *name)
{
	size_t i;

	if (!cpu_has(name))
		return NULL;
	for (i = 0; i < sizeof(kerns) / sizeof(kerns[0]); i++)
		if (!strcmp(kerns[i].name, name))
			return &kerns[i];
	return NULL;
}

/**
 * npr_qgemm_best() - the fastest int8 matrix kernel this CPU runs
 *
 * NPR_INT8_ISA picks one instead, if the CPU has it.  The first call
 * chooses; later calls return the same kernel.
 *
 * Return: the kernel (never NULL: "scalar" runs everywhere).
 */
const struct npr_qgemm_kern *npr_qgemm_best(void)
{
	static const struct npr_qgemm_kern *best;
	const struct npr_qgemm_kern *k = NULL;
	const char *env;
	size_t i;

	if (best)
		return best;
	env = npr_env(NPR_ENV_INT8_ISA);
	if (env)
		k = npr_qgemm_get(env);
	for (i = 0; !k && i < sizeof(kerns) / sizeof(kerns[0]); i++)
		k = npr_qgemm_get(kerns[i].name);
	best = k;
	return k;
}

struct qconv {
	const struct npr_quant_params *p;
	const uint8_t *x;
	const int8_t *w;
	const int32_t *comp;
	const float *mul, *add;
	void *y;
	size_t es;
	const int32_t *lut;	/* NULL, or the u8 results' table */
	struct qscratch *scratch;	/* one per thread (tid) */
	const uint8_t *lut8;	/* the same as bytes */
	npr_qgemm_fn fn;
	int64_t C, H, W, K, OH, OW, P, cg, kg;
	int64_t nblk, nkc, kc;	/* pixel blocks; channel ranges of kc */
	int64_t win;		/* cg x kh x kw */
	int groups;
	npr_qdw_fn dw;		/* depthwise (cg = kg = 1): the plane kernel */
	bool direct;		/* 1x1, stride 1, no padding: x is im2col */
	/*
	 * stride 1 with a window: x padded (xp, planes of PH x PW) and the
	 * output computed on its grid of PW columns (GP pixels), so that
	 * each im2col row is a pointer into xp; the PW - OW extra columns
	 * of each row are dropped when the block is written out.
	 */
	uint8_t *xp;
	int64_t PH, PW, GP;
	bool nomem;
};

/*
 * A thread's pack and output buffers for one call, freed when it returns
 * (kept across calls, each thread's would grow to the largest layer it
 * happened to run, and a long-lived process's memory with them).
 */
struct qscratch {
	uint8_t *pack, *out;
	size_t pack_cap, out_cap;
};

static uint8_t *buf_get(uint8_t **buf, size_t *cap, size_t bytes)
{
	if (bytes > *cap) {
		free(*buf);
		*cap = 0;
		*buf = malloc(bytes);
		if (!*buf)
			return NULL;
		*cap = bytes;
	}
	return *buf;
}

static uint8_t *pack_get(struct qscratch *q, size_t bytes)
{
	return buf_get(&q->pack, &q->pack_cap, bytes);
}

static void scratch_free(struct qscratch *q, int64_t n)
{
	int64_t i;

	for (i = 0; q && i < n; i++) {
		free(q[i].pack);
		free(q[i].out);
	}
	free(q);
}

/*
 * Reduction index @r of pixels [p0, p0 + np) of image @n, group @g, as
 * the np bytes the window reads (padding reads the x zero point): a
 * pointer into x when they lie there in a row (1x1, stride 1, no
 * padding), else made in @tmp.
 */
static const uint8_t *im2col_row(const struct qconv *c, int64_t n,
				 int64_t g, int64_t r, int64_t p0, int64_t np,
				 uint8_t *tmp)
{
	const struct npr_quant_params *p = c->p;
	int64_t kh = p->kernel[0], kw = p->kernel[1], ci, i, j, q = 0, oh, ow;
	uint8_t z = (uint8_t)p->xz;
	const uint8_t *src;

	if (r >= c->win) {
		memset(tmp, z, np);
		return tmp;
	}
	ci = r / (kh * kw);
	i = r / kw % kh;
	j = r % kw;
	if (c->xp)
		return c->xp + (n * c->C + g * c->cg + ci) * c->PH * c->PW +
		       i * p->dil[0] * c->PW + j * p->dil[1] + p0;
	src = c->x + ((n * c->C + g * c->cg + ci) * c->H) * c->W;
	if (c->direct)
		return src + p0;
	oh = p0 / c->OW;
	ow = p0 % c->OW;
	while (q < np) {
		int64_t seg = c->OW - ow < np - q ? c->OW - ow : np - q;
		int64_t ih = oh * p->stride[0] - p->pb[0] + i * p->dil[0], s;
		int64_t iw0 = ow * p->stride[1] - p->pb[1] + j * p->dil[1];
		const uint8_t *row = src + ih * c->W;

		if (ih < 0 || ih >= c->H) {
			memset(tmp + q, z, seg);
		} else if (p->stride[1] == 1 && iw0 >= 0 &&
			   iw0 + seg <= c->W) {
			memcpy(tmp + q, row + iw0, seg);
		} else {
			for (s = 0; s < seg; s++) {
				int64_t iw = iw0 + s * p->stride[1];

				tmp[q + s] = iw >= 0 && iw < c->W ? row[iw] : z;
			}
		}
		q += seg;
		ow = 0;
		oh++;
	}
	return tmp;
}

/* out[q * 4 + t] = r[t][q] for q < np; @z up to @ldx */
static void interleave4(const uint8_t *const r[4], int64_t np, int64_t ldx,
			uint8_t z, uint8_t *out)
{
	int64_t q = 0;
	int t;

#if defined(__SSE2__)
	for (; q + 16 <= np; q += 16) {
		__m128i a = _mm_loadu_si128((const __m128i *)(r[0] + q));
		__m128i b = _mm_loadu_si128((const __m128i *)(r[1] + q));
		__m128i c = _mm_loadu_si128((const __m128i *)(r[2] + q));
		__m128i d = _mm_loadu_si128((const __m128i *)(r[3] + q));
		__m128i ab0 = _mm_unpacklo_epi8(a, b);
		__m128i ab1 = _mm_unpackhi_epi8(a, b);
		__m128i cd0 = _mm_unpacklo_epi8(c, d);
		__m128i cd1 = _mm_unpackhi_epi8(c, d);
		__m128i *o = (__m128i *)(out + q * 4);

		_mm_storeu_si128(o, _mm_unpacklo_epi16(ab0, cd0));
		_mm_storeu_si128(o + 1, _mm_unpackhi_epi16(ab0, cd0));
		_mm_storeu_si128(o + 2, _mm_unpacklo_epi16(ab1, cd1));
		_mm_storeu_si128(o + 3, _mm_unpackhi_epi16(ab1, cd1));
	}
#endif
	for (; q < np; q++)
		for (t = 0; t < 4; t++)
			out[q * 4 + t] = r[t][q];
	memset(out + q * 4, z, (ldx - q) * 4);
}

/*
 * Pack pixels [p0, p0 + np) of image @n, group @g: reduction index r of
 * pixel q at buf[((r >> 2) * ldx + q) * 4 + (r & 3)].
 */
static void pack(const struct qconv *c, int64_t n, int64_t g, int64_t p0,
		 int64_t np, int64_t ldx, uint8_t *buf)
{
	uint8_t tmp[4][QBLK];
	const uint8_t *rows[4];
	int64_t r;
	int t;

	for (r = 0; r < c->p->kr; r += 4) {
		for (t = 0; t < 4; t++)
			rows[t] = im2col_row(c, n, g, r + t, p0, np, tmp[t]);
		interleave4(rows, np, ldx, (uint8_t)c->p->xz,
			    buf + r * ldx);
	}
}

/* rows [0, m) of a block on the padded grid from @t into the output */
static void grid_out(const struct qconv *c, const uint8_t *t, int64_t ldt,
		     int64_t m, int64_t p0, int64_t np, char *y)
{
	int64_t r, q = 0, es = c->es;

	while (q < np) {
		int64_t oh = (p0 + q) / c->PW, ow = (p0 + q) % c->PW;
		int64_t seg = c->PW - ow < np - q ? c->PW - ow : np - q;

		if (ow < c->OW) {
			int64_t cnt = c->OW - ow < seg ? c->OW - ow : seg;

			for (r = 0; r < m; r++)
				memcpy(y + (r * c->P + oh * c->OW + ow) * es,
				       t + (r * ldt + q) * es, cnt * es);
		}
		q += seg;
	}
}

static void qconv_item(void *arg, int it, int tid)
{
	struct qconv *c = arg;
	int64_t kcn = it % c->nkc, rest = it / c->nkc;
	int64_t b = rest % c->nblk, ng = rest / c->nblk;
	int64_t g = ng % c->groups, n = ng / c->groups;
	int64_t p0 = b * QBLK, np = c->GP - p0 < QBLK ? c->GP - p0 : QBLK;
	int64_t ldx = (np + 31) & ~(int64_t)31;
	int64_t k0 = g * c->kg + kcn * c->kc, k1;
	char *y = (char *)c->y;
	struct npr_qgemm_args a;
	uint8_t *buf, *t = NULL;

	k1 = k0 + c->kc < (g + 1) * c->kg ? k0 + c->kc : (g + 1) * c->kg;
	if (k0 >= k1)
		return;
	buf = pack_get(&c->scratch[tid], (size_t)c->p->kr * ldx);
	if (c->xp)
		t = buf_get(&c->scratch[tid].out, &c->scratch[tid].out_cap,
			    (k1 - k0) * ldx * c->es);
	if (!buf || (c->xp && !t)) {
		c->nomem = true;
		return;
	}
	pack(c, n, g, p0, np, ldx, buf);
	y += (n * c->K + k0) * c->P * c->es;
	a = (struct npr_qgemm_args){
		.w = c->w + k0 * c->p->kr, .x = buf, .kr = c->p->kr,
		.ldx = ldx, .m = k1 - k0, .npx = np, .comp = c->comp + k0,
		.mul = c->mul + k0, .add = c->add + k0, .div = c->p->sy,
		.f32out = c->p->f32out, .zy = c->p->zy, .lo = c->p->lo,
		.hi = c->p->hi, .flo = c->p->flo, .fhi = c->p->fhi,
		.y = t ? (void *)t : y + p0 * c->es, .ldy = t ? ldx : c->P,
		.lut = c->lut, .lut8 = c->lut8,
	};
	c->fn(&a);
	if (t)
		grid_out(c, t, ldx, k1 - k0, p0, np, y);
}

/* plane @it of xp: x's plane with the padding around it */
static void pad_item(void *arg, int it, int tid)
{
	struct qconv *c = arg;
	const struct npr_quant_params *p = c->p;
	const uint8_t *src = c->x + it * c->H * c->W;
	uint8_t *d = c->xp + it * c->PH * c->PW;
	int64_t i;

	(void)tid;
	memset(d, p->xz, p->pb[0] * c->PW);
	for (i = 0; i < c->H; i++) {
		uint8_t *row = d + (p->pb[0] + i) * c->PW;

		memset(row, p->xz, p->pb[1]);
		memcpy(row + p->pb[1], src + i * c->W, c->W);
		memset(row + p->pb[1] + c->W, p->xz, p->pe[1]);
	}
	memset(d + (p->pb[0] + c->H) * c->PW, p->xz, p->pe[0] * c->PW);
}

/* d[q] = s[q * st], q < cnt (the columns of one remainder modulo st) */
static void split_cols(uint8_t *d, const uint8_t *s, int64_t cnt, int64_t st)
{
	int64_t q = 0;

	if (st == 1) {
		memcpy(d, s, cnt);
		return;
	}
#if defined(__SSE2__)
	if (st == 2) {
		__m128i m = _mm_set1_epi16(0xff);

		for (; q + 16 <= cnt; q += 16) {
			const __m128i *v = (const __m128i *)(s + 2 * q);
			__m128i a = _mm_loadu_si128(v);
			__m128i b = _mm_loadu_si128(v + 1);

			_mm_storeu_si128((__m128i *)(d + q),
					 _mm_packus_epi16(_mm_and_si128(a, m),
							  _mm_and_si128(b, m)));
		}
	}
#endif
	for (; q < cnt; q++)
		d[q] = s[q * st];
}

/*
 * Depthwise: plane @it (image x channel), padded and its columns split
 * by the stride (struct npr_qdw_args), then the plane kernel.
 */
static void qdw_item(void *arg, int it, int tid)
{
	struct qconv *c = arg;
	const struct npr_quant_params *p = c->p;
	int64_t k = it % c->K, n = it / c->K, i, t, st = p->stride[1];
	int64_t ph = (c->OH - 1) * p->stride[0] +
		     (p->kernel[0] - 1) * p->dil[0] + 1;
	int64_t pw = (c->OW - 1) * st + (p->kernel[1] - 1) * p->dil[1] + 1;
	/* a split row, and the kernel's reads up to 16 columns past it */
	int64_t ldx = (pw + st - 1) / st + 16, plane = ph * ldx;
	const uint8_t *src = c->x + (n * c->C + k) * c->H * c->W;
	struct npr_qdw_args a;
	uint8_t *buf, *row;

	buf = pack_get(&c->scratch[tid], (size_t)(st * plane + pw + 32));
	if (!buf) {
		c->nomem = true;
		return;
	}
	row = buf + st * plane;
	memset(row + pw, p->xz, 32);
	for (i = 0; i < ph; i++) {
		int64_t ih = i - p->pb[0], l = p->pb[1] < pw ? p->pb[1] : pw, m;

		memset(row, p->xz, pw);
		if (ih >= 0 && ih < c->H) {
			m = c->W < pw - l ? c->W : pw - l;
			memcpy(row + l, src + ih * c->W, m);
		}
		for (t = 0; t < st; t++) {
			uint8_t *d = buf + t * plane + i * ldx;
			int64_t cnt = pw > t ? (pw - t + st - 1) / st : 0;

			split_cols(d, row + t, cnt, st);
			memset(d + cnt, p->xz, ldx - cnt);
		}
	}
	a = (struct npr_qdw_args){
		.x = buf, .ldx = ldx, .plane = plane,
		.w = c->w + k * p->kr,
		.kh = (int)p->kernel[0], .kw = (int)p->kernel[1],
		.sh = (int)p->stride[0], .sw = (int)st,
		.dh = (int)p->dil[0], .dw = (int)p->dil[1],
		.oh = c->OH, .ow = c->OW, .comp = c->comp[k],
		.mul = c->mul[k], .add = c->add[k], .div = p->sy,
		.f32out = p->f32out, .zy = p->zy, .lo = p->lo, .hi = p->hi,
		.flo = p->flo, .fhi = p->fhi,
		.y = (char *)c->y + (n * c->K + k) * c->P * c->es,
		.lut = c->lut, .lut8 = c->lut8,
	};
	c->dw(&a);
}

static int ref_qconv(const struct npr_node *n, const struct npr_tensor *in,
		     struct npr_tensor *out)
{
	const struct npr_quant_params *p = n->params;
	const int32_t *wsum = in[2].data;
	struct qconv c = {
		.p = p, .x = in[0].data, .w = in[1].data,
		.mul = in[3].data, .add = in[4].data, .y = out[0].data,
		.es = p->f32out ? sizeof(float) : 1,
		.fn = npr_qgemm_best()->fn,
		.C = in[0].shape.d[1], .H = in[0].shape.d[2],
		.W = in[0].shape.d[3], .K = out[0].shape.d[1],
		.OH = out[0].shape.d[2], .OW = out[0].shape.d[3],
		.groups = (int)p->groups,
	};
	int64_t N = in[0].shape.d[0], items, k, th = npr_par_threads();
	int32_t *comp, lut[256];

	if (p->wblocked)
		return npr_qconv_blocked(n, in, out, npr_qgemm_best());

	if (n->nin == 6) {
		for (k = 0; k < 256; k++)
			lut[k] = ((const uint8_t *)in[5].data)[k];
		c.lut = lut;
		c.lut8 = in[5].data;
	}
	c.P = c.OH * c.OW;
	c.cg = c.C / p->groups;
	c.kg = c.K / p->groups;
	c.win = c.cg * p->kernel[0] * p->kernel[1];
	c.direct = p->kernel[0] == 1 && p->kernel[1] == 1 &&
		   p->stride[0] == 1 && p->stride[1] == 1 && !p->pb[0] &&
		   !p->pb[1] && !p->pe[0] && !p->pe[1];
	if (!N || !c.P)
		return 0;
	comp = malloc(sizeof(*comp) * c.K);
	c.scratch = calloc(th > 0 ? th : 1, sizeof(*c.scratch));
	if (!comp || !c.scratch) {
		free(comp);
		free(c.scratch);
		return -ENOMEM;
	}
	for (k = 0; k < c.K; k++)
		comp[k] = (int32_t)((uint32_t)p->xz * (uint32_t)wsum[k]);
	c.comp = comp;
	if (c.cg == 1 && c.kg == 1) {
		c.dw = npr_qgemm_best()->dw;
		if (N * c.K > INT32_MAX) {
			free(comp);
			scratch_free(c.scratch, th);
			return -EFBIG;
		}
		npr_parallel_for((int)(N * c.K), qdw_item, &c);
		free(comp);
		scratch_free(c.scratch, th);
		return c.nomem ? -ENOMEM : 0;
	}
	c.GP = c.P;
	if (!c.direct && p->stride[0] == 1 && p->stride[1] == 1 &&
	    N * c.C <= INT32_MAX) {
		c.PH = c.H + p->pb[0] + p->pe[0];
		c.PW = c.W + p->pb[1] + p->pe[1];
		c.GP = (c.OH - 1) * c.PW + c.OW;
		/* the last windows read up to kw - 1 columns past a plane */
		c.xp = malloc(N * c.C * c.PH * c.PW + c.PW + 64);
		if (!c.xp) {
			free(comp);
			scratch_free(c.scratch, th);
			return -ENOMEM;
		}
		memset(c.xp + N * c.C * c.PH * c.PW, p->xz, c.PW + 64);
		npr_parallel_for((int)(N * c.C), pad_item, &c);
	}
	c.nblk = (c.GP + QBLK - 1) / QBLK;
	items = N * p->groups * c.nblk;
	c.nkc = 1;
	/* too few blocks for the threads: split the channels too */
	if (items < 2 * th && c.kg >= 32)
		c.nkc = (2 * th + items - 1) / items;
	if (c.nkc > c.kg / 16)
		c.nkc = c.kg / 16 > 1 ? c.kg / 16 : 1;
	c.kc = (c.kg + c.nkc - 1) / c.nkc;
	c.kc = (c.kc + 7) & ~(int64_t)7;
	if (items * c.nkc > INT32_MAX) {
		free(c.xp);
		free(comp);
		scratch_free(c.scratch, th);
		return -EFBIG;
	}
	npr_parallel_for((int)(items * c.nkc), qconv_item, &c);
	free(c.xp);
	free(comp);
	scratch_free(c.scratch, th);
	return c.nomem ? -ENOMEM : 0;
}

/*
 * The element-wise ops: the kernels of ref/kernels/qew.h, scalar here,
 * AVX-512 and AVX2 in ref/arch/x86/.  A tensor of fewer than 2 x EW_MIN
 * elements runs on the calling thread; a larger one in parts of equal
 * size (a multiple of 64 elements, so that no two threads write one
 * cache line), at least EW_MIN elements each, up to EW_PARTS per thread
 * so that a thread that is late or busy leaves parts to the others.
 */
#define EW_MIN		4096
#define EW_PARTS	4

static void quantize_scalar(const float *x, uint8_t *y, int64_t n, float sy,
			    int zy)
{
	float z = (float)zy;
	int64_t i;

	for (i = 0; i < n; i++) {
		float v = rne(vmin(vmax(x[i] / sy, -1024.0f), 1024.0f)) + z;

		y[i] = (uint8_t)vmin(vmax(v, 0.0f), 255.0f);
	}
}

static void dequantize_scalar(const uint8_t *x, float *y, int64_t n, float sa,
			      int za)
{
	float z = (float)za;
	int64_t i;

	for (i = 0; i < n; i++)
		y[i] = ((float)x[i] - z) * sa;
}

static void add_scalar(const uint8_t *a, const uint8_t *b, uint8_t *y,
		       int64_t n, const struct npr_quant_params *p)
{
	float za = (float)p->za, zb = (float)p->zb, zy = (float)p->zy;
	float sa = p->sa, sb = p->sb, sy = p->sy;
	float lo = (float)p->lo, hi = (float)p->hi;
	int64_t i;

	for (i = 0; i < n; i++) {
		float v = ((float)a[i] - za) * sa + ((float)b[i] - zb) * sb;

		v = rne(vmin(vmax(v / sy, -1024.0f), 1024.0f)) + zy;
		y[i] = (uint8_t)vmin(vmax(v, lo), hi);
	}
}

static void lut_scalar(const uint8_t *x, const uint8_t *t, uint8_t *y,
		       int64_t n)
{
	int64_t i;

	for (i = 0; i < n; i++)
		y[i] = t[x[i]];
}

static const struct npr_qew_kern qew_kerns[] = {
#if defined(__x86_64__)
	{ "avx512vbmi", npr_qew_quantize_avx512, npr_qew_dequantize_avx512,
	  npr_qew_add_avx512, npr_qew_lut_avx512vbmi },
	{ "avx512", npr_qew_quantize_avx512, npr_qew_dequantize_avx512,
	  npr_qew_add_avx512, npr_qew_lut_avx512 },
	{ "avx2", npr_qew_quantize_avx2, npr_qew_dequantize_avx2,
	  npr_qew_add_avx2, npr_qew_lut_avx2 },
#endif
	{ "scalar", quantize_scalar, dequantize_scalar, add_scalar,
	  lut_scalar },
};

/**
 * npr_qew_get() - a set of element-wise low-precision kernels by name
 * @name: "avx512vbmi", "avx512", "avx2" or "scalar".
 *
 * Return: the set, or NULL if this CPU lacks its ISA (by CPUID) or @name
 * is none of these.
 */
const struct npr_qew_kern *npr_qew_get(const char *name)
{
	size_t i;

	if (!cpu_has(name))
		return NULL;
	for (i = 0; i < sizeof(qew_kerns) / sizeof(qew_kerns[0]); i++)
		if (!strcmp(qew_kerns[i].name, name))
			return &qew_kerns[i];
	return NULL;
}

/**
 * npr_qew_best() - the fastest element-wise kernels this CPU runs
 *
 * NPR_INT8_ISA, when it names an ISA this CPU has, picks the set that
 * goes with that matrix kernel instead: vnni512 the AVX-512 one,
 * avxvnni and avx2 the AVX2 one, scalar the scalar one.  The first call
 * chooses; later calls return the same set.
 *
 * Return: the set (never NULL: "scalar" runs everywhere).
 * Context: any thread.
 */
const struct npr_qew_kern *npr_qew_best(void)
{
	/* NPR_INT8_ISA's names, each with the sets it picks, best first */
	static const char *const isa[][2] = {
		{ "vnni512", "avx512vbmi" }, { "vnni512", "avx512" },
		{ "avxvnni", "avx2" }, { "avx2", "avx2" },
		{ "scalar", "scalar" },
	};
	static const struct npr_qew_kern *best;
	const struct npr_qew_kern *k;
	const char *env;
	size_t i;

	k = __atomic_load_n(&best, __ATOMIC_ACQUIRE);
	if (k)
		return k;
	env = npr_env(NPR_ENV_INT8_ISA);
	for (i = 0; env && !k && i < sizeof(isa) / sizeof(isa[0]); i++)
		if (!strcmp(env, isa[i][0]) && cpu_has(env))
			k = npr_qew_get(isa[i][1]);
	for (i = 0; !k && i < sizeof(qew_kerns) / sizeof(qew_kerns[0]); i++)
		k = npr_qew_get(qew_kerns[i].name);
	__atomic_store_n(&best, k, __ATOMIC_RELEASE);
	return k;
}

struct ew {
	const struct npr_quant_params *p;
	const struct npr_qew_kern *k;
	const void *a, *b;
	void *y;
	int64_t cnt, part;
	void (*fn)(const struct ew *e, int64_t i0, int64_t i1);
};

static void ew_item(void *arg, int it, int tid)
{
	const struct ew *e = arg;
	int64_t i0 = (int64_t)it * e->part;

	(void)tid;
	e->fn(e, i0, e->cnt - i0 < e->part ? e->cnt : i0 + e->part);
}

static void ew_run(struct ew *e)
{
	int64_t th = npr_par_threads(), parts, k;

	k = th > 1 ? e->cnt / (th * EW_MIN) : 0;
	parts = k ? th * (k < EW_PARTS ? k : EW_PARTS) : e->cnt / EW_MIN;
	if (th <= 1 || parts <= 1) {
		e->fn(e, 0, e->cnt);
		return;
	}
	e->part = ((e->cnt + parts - 1) / parts + 63) & ~(int64_t)63;
	npr_parallel_for((int)((e->cnt + e->part - 1) / e->part), ew_item, e);
}

static void quantize_range(const struct ew *e, int64_t i0, int64_t i1)
{
	e->k->quantize((const float *)e->a + i0, (uint8_t *)e->y + i0,
		       i1 - i0, e->p->sy, e->p->zy);
}

static void dequantize_range(const struct ew *e, int64_t i0, int64_t i1)
{
	e->k->dequantize((const uint8_t *)e->a + i0, (float *)e->y + i0,
			 i1 - i0, e->p->sa, e->p->za);
}

static void lut_range(const struct ew *e, int64_t i0, int64_t i1)
{
	e->k->lut((const uint8_t *)e->a + i0, e->b, (uint8_t *)e->y + i0,
		  i1 - i0);
}

static void add_range(const struct ew *e, int64_t i0, int64_t i1)
{
	e->k->add((const uint8_t *)e->a + i0, (const uint8_t *)e->b + i0,
		  (uint8_t *)e->y + i0, i1 - i0, e->p);
}

static int ew(const struct npr_node *n, const struct npr_tensor *in,
	      struct npr_tensor *out,
	      void (*fn)(const struct ew *e, int64_t i0, int64_t i1))
{
	struct ew e = {
		.p = n->params, .k = npr_qew_best(), .a = in[0].data,
		.b = n->nin > 1 ? in[1].data : NULL, .y = out[0].data,
		.cnt = npr_shape_numel(&in[0].shape), .fn = fn,
	};

	ew_run(&e);
	return 0;
}

/*
 * NprQuantize and NprDequantize with scales per channel (input 1): the
 * same kernels a plane at a time, each with its channel's scale.
 */
struct chan_ew {
	const struct npr_quant_params *p;
	const struct npr_qew_kern *k;
	const void *x;
	void *y;
	const float *sc;
	int64_t C, plane;
	bool q;
};

static void chan_item(void *arg, int it, int tid)
{
	const struct chan_ew *e = arg;
	int64_t o = (int64_t)it * e->plane;
	float s = e->sc[it % e->C];

	(void)tid;
	if (e->q)
		e->k->quantize((const float *)e->x + o, (uint8_t *)e->y + o,
			       e->plane, s, e->p->zy);
	else
		e->k->dequantize((const uint8_t *)e->x + o, (float *)e->y + o,
				 e->plane, s, e->p->za);
}

static int chan_ew(const struct npr_node *n, const struct npr_tensor *in,
		   struct npr_tensor *out, bool q)
{
	struct chan_ew e = {
		.p = n->params, .k = npr_qew_best(), .x = in[0].data,
		.y = out[0].data, .sc = in[1].data, .C = in[0].shape.d[1],
		.q = q,
	};
	int64_t cnt = npr_shape_numel(&in[0].shape), planes, i;

	if (in[0].shape.rank < 2 || e.C < 1 || in[1].shape.rank != 1 ||
	    in[1].shape.d[0] != e.C)
		return -EINVAL;
	/* [N, C, ...]: N x C planes */
	planes = in[0].shape.d[0] * e.C;
	if (!cnt || !planes)
		return 0;
	e.plane = cnt / planes;
	if (planes > INT32_MAX)
		return -EFBIG;
	if (npr_par_threads() > 1 && cnt >= 2 * EW_MIN) {
		npr_parallel_for((int)planes, chan_item, &e);
	} else {
		for (i = 0; i < planes; i++)
			chan_item(&e, (int)i, 0);
	}
	return 0;
}

static int ref_quantize(const struct npr_node *n, const struct npr_tensor *in,
			struct npr_tensor *out)
{
	if (n->nin > 1)
		return chan_ew(n, in, out, true);
	if (((const struct npr_quant_params *)n->params)->xnhwc !=
	    ((const struct npr_quant_params *)n->params)->ynhwc)
		return npr_qew_relayout(n, in, out);
	return ew(n, in, out, quantize_range);
}

static int ref_dequantize(const struct npr_node *n,
			  const struct npr_tensor *in, struct npr_tensor *out)
{
	if (n->nin > 1)
		return chan_ew(n, in, out, false);
	if (((const struct npr_quant_params *)n->params)->xnhwc !=
	    ((const struct npr_quant_params *)n->params)->ynhwc)
		return npr_qew_relayout(n, in, out);
	return ew(n, in, out, dequantize_range);
}

static int ref_qlut(const struct npr_node *n, const struct npr_tensor *in,
		    struct npr_tensor *out)
{
	if (((const struct npr_quant_params *)n->params)->xnhwc !=
	    ((const struct npr_quant_params *)n->params)->ynhwc)
		return npr_qew_relayout(n, in, out);
	return ew(n, in, out, lut_range);
}

static int ref_qadd(const struct npr_node *n, const struct npr_tensor *in,
		    struct npr_tensor *out)
{
	return ew(n, in, out, add_range);
}

/*
 * NprQScale: clamp(rint((x - x_zero) * m[c] + b[c]) + y_zero, lo, hi)
 * per element (b 0 when absent), x and y NCHW or NHWC each: runs of one
 * channel (NCHW) or of every channel (NHWC) where both lie alike, else
 * element by element.
 */
static inline uint8_t qscale1(uint8_t x, float m, float a, float zx,
			      float zy, float lo, float hi)
{
	float v = ((float)x - zx) * m + a;

	v = rne(vmin(vmax(v, -1024.0f), 1024.0f)) + zy;
	return (uint8_t)vmin(vmax(v, lo), hi);
}

/*
 * qscale1() on 16 bytes, with multipliers @m and offsets @a (16 each, or
 * one each when @bcast)
 */
static void qscale16(const uint8_t *x, uint8_t *y, const float *m,
		     const float *a, bool bcast, float zx, float zy, float lo,
		     float hi)
{
	const __m128i z = _mm_setzero_si128();
	__m128i v = _mm_loadu_si128((const __m128i *)x), q[4], r[4];
	__m128i l16 = _mm_unpacklo_epi8(v, z), h16 = _mm_unpackhi_epi8(v, z);
	int k;

	q[0] = _mm_unpacklo_epi16(l16, z);
	q[1] = _mm_unpackhi_epi16(l16, z);
	q[2] = _mm_unpacklo_epi16(h16, z);
	q[3] = _mm_unpackhi_epi16(h16, z);
	for (k = 0; k < 4; k++) {
		__m128 f = _mm_cvtepi32_ps(q[k]);
		__m128 mk = bcast ? _mm_set1_ps(m[0]) : _mm_loadu_ps(m + 4 * k);
		__m128 ak = bcast ? _mm_set1_ps(a[0]) : _mm_loadu_ps(a + 4 * k);

		f = _mm_add_ps(_mm_mul_ps(_mm_sub_ps(f, _mm_set1_ps(zx)), mk),
			       ak);
		f = _mm_min_ps(_mm_max_ps(f, _mm_set1_ps(-1024.0f)),
			       _mm_set1_ps(1024.0f));
		f = _mm_sub_ps(_mm_add_ps(f, _mm_set1_ps(12582912.0f)),
			       _mm_set1_ps(12582912.0f));
		f = _mm_add_ps(f, _mm_set1_ps(zy));
		f = _mm_min_ps(_mm_max_ps(f, _mm_set1_ps(lo)), _mm_set1_ps(hi));
		r[k] = _mm_cvttps_epi32(f);
	}
	_mm_storeu_si128((__m128i *)y,
			 _mm_packus_epi16(_mm_packs_epi32(r[0], r[1]),
					  _mm_packs_epi32(r[2], r[3])));
}

static int ref_qscale(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out)
{
	const struct npr_quant_params *p = n->params;
	const uint8_t *x = in[0].data;
	const float *m = in[1].data;
	uint8_t *y = out[0].data;
	int64_t N = in[0].shape.d[0], C = in[0].shape.d[1], P, b, c, i, xi;
	float zx = (float)p->xz, zy = (float)p->zy;
	float lo = (float)p->lo, hi = (float)p->hi, *a;

	if (in[0].shape.rank < 2 || npr_shape_numel(&in[1].shape) != C ||
	    (n->nin > 2 && npr_shape_numel(&in[2].shape) != C))
		return -EINVAL;
	if (N < 1 || C < 1)
		return 0;
	a = calloc(C, sizeof(*a));
	if (!a)
		return -ENOMEM;
	if (n->nin > 2)
		memcpy(a, in[2].data, C * sizeof(*a));
	P = npr_shape_numel(&in[0].shape) / (N * C);
	for (b = 0; b < N; b++) {
		const uint8_t *xb = x + b * C * P;
		uint8_t *yb = y + b * C * P;

		if (p->xnhwc && p->ynhwc) {
			for (i = 0; i < P; i++) {
				const uint8_t *xp = xb + i * C;
				uint8_t *yp = yb + i * C;

				for (c = 0; c + 16 <= C; c += 16)
					qscale16(xp + c, yp + c, m + c, a + c,
						 false, zx, zy, lo, hi);
				for (; c < C; c++)
					yp[c] = qscale1(xp[c], m[c], a[c], zx,
							zy, lo, hi);
			}
			continue;
		}
		for (c = 0; c < C; c++) {
			i = 0;
			if (!p->xnhwc && !p->ynhwc)
				for (; i + 16 <= P; i += 16)
					qscale16(xb + c * P + i, yb + c * P + i,
						 m + c, a + c, true, zx, zy, lo,
						 hi);
			for (; i < P; i++) {
				xi = p->xnhwc ? i * C + c : c * P + i;
				yb[p->ynhwc ? i * C + c : c * P + i] =
					qscale1(xb[xi], m[c], a[c], zx, zy, lo,
						hi);
			}
		}
	}
	free(a);
	return 0;
}

/* The op definitions of lib/ops/quant.c these kernels evaluate. */
const struct npr_kernel npr_kernels_quant[] = {
	{ "NprQConv", 1, 1, ref_qconv },
	{ "NprQuantize", 1, 1, ref_quantize },
	{ "NprDequantize", 1, 1, ref_dequantize },
	{ "NprQLut", 1, 1, ref_qlut },
	{ "NprQAdd", 1, 1, ref_qadd },
	{ "NprQScale", 1, 1, ref_qscale },
	{ "NprQMaxPool", 1, 1, npr_qmaxpool },
	{ "NprQConcat", 1, 1, npr_qconcat },
	{ NULL },
};
