// SPDX-License-Identifier: MIT
/*
 * Kernels of the low-precision ops (lib/ops/quant.h).
 *
 * NprQConv: per image, group and block of up to QBLK output pixels, the
 * window's bytes are packed (padding reads the x zero point) into groups
 * of four reduction steps per pixel, the layout vpdpbusd reads
 * (ref/kernels/qgemm.h); the matrix kernel of this CPU (AVX-512 VNNI,
 * AVX-VNNI, AVX2, or the scalar one here: NPR_INT8_ISA picks one)
 * multiplies the group's weight rows with it and writes the requantized
 * output.  The x zero point comes off through a per-channel term made
 * from the weight sums the compile pass stored.  Blocks (and, when there
 * are few, ranges of channels) run on the thread pool.
 *
 * The element-wise ops do what the f32 nodes they replace did, in the
 * same order of operations, so they give the same bits.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/quant.h"
#include "qgemm.h"
#include "registry.h"
#include "ref/threads.h"
#include "sys.h"

#define QBLK	128	/* output pixels packed at a time */

/*
 * Round to nearest, ties to even, as nearbyintf() in the default mode,
 * for |v| <= 1024 (callers clamp first): adding 1.5 x 2^23 leaves no
 * fraction bits.  x86 min/max semantics (the second operand when either
 * is NaN), as the vector kernels compute them.
 */
static inline float rne(float v)
{
	return (v + 12582912.0f) - 12582912.0f;
}

static inline float vmax(float a, float b)
{
	return a > b ? a : b;
}

static inline float vmin(float a, float b)
{
	return a < b ? a : b;
}

static void qgemm_scalar(const struct npr_qgemm_args *a)
{
	int64_t r, p, q;

	for (r = 0; r < a->m; r++) {
		const int8_t *w = a->w + r * a->kr;

		for (p = 0; p < a->npx; p++) {
			uint32_t acc = 0;
			float f;

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
			((uint8_t *)a->y)[r * a->ldy + p] =
				(uint8_t)((int)rne(f) + a->zy);
		}
	}
}

static const struct npr_qgemm_kern kerns[] = {
#if defined(__x86_64__)
	{ "vnni512", npr_qgemm_vnni512 },
	{ "avxvnni", npr_qgemm_avxvnni },
	{ "avx2", npr_qgemm_avx2 },
#endif
	{ "scalar", qgemm_scalar },
};

static bool cpu_has(const char *isa)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (!strcmp(isa, "vnni512"))
		return __builtin_cpu_supports("avx512vnni") &&
		       __builtin_cpu_supports("avx512vl") &&
		       __builtin_cpu_supports("avx512bw");
	if (!strcmp(isa, "avxvnni"))
		return __builtin_cpu_supports("avxvnni") &&
		       __builtin_cpu_supports("fma");
	if (!strcmp(isa, "avx2"))
		return __builtin_cpu_supports("avx2") &&
		       __builtin_cpu_supports("fma");
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
	npr_qgemm_fn fn;
	int64_t C, H, W, K, OH, OW, P, cg, kg;
	int64_t nblk, nkc, kc;	/* pixel blocks; channel ranges of kc */
	int64_t win;		/* cg x kh x kw */
	int groups;
	bool nomem;
};

/* per-thread pack buffer, kept for the next call */
static __thread uint8_t *pack_buf;
static __thread size_t pack_cap;

static uint8_t *pack_get(size_t bytes)
{
	if (bytes > pack_cap) {
		free(pack_buf);
		pack_cap = 0;
		pack_buf = malloc(bytes);
		if (!pack_buf)
			return NULL;
		pack_cap = bytes;
	}
	return pack_buf;
}

/*
 * Pack pixels [p0, p0 + np) of image @n, group @g: reduction index r of
 * pixel q at buf[((r >> 2) * ldx + q) * 4 + (r & 3)].
 */
static void pack(const struct qconv *c, int64_t n, int64_t g, int64_t p0,
		 int64_t np, int64_t ldx, uint8_t *buf)
{
	const struct npr_quant_params *p = c->p;
	int64_t kh = p->kernel[0], kw = p->kernel[1], r;
	uint8_t z = (uint8_t)p->xz;

	for (r = 0; r < p->kr; r++) {
		uint8_t *d = buf + (r >> 2) * ldx * 4 + (r & 3);
		int64_t ci, i, j, q = 0, oh, ow;
		const uint8_t *src;

		if (r >= c->win) {
			for (q = 0; q < ldx; q++)
				d[q * 4] = z;
			continue;
		}
		ci = r / (kh * kw);
		i = r / kw % kh;
		j = r % kw;
		src = c->x + ((n * c->C + g * c->cg + ci) * c->H) * c->W;
		oh = p0 / c->OW;
		ow = p0 % c->OW;
		while (q < np) {
			int64_t seg = c->OW - ow < np - q ? c->OW - ow : np - q;
			int64_t ih = oh * p->stride[0] - p->pb[0] +
				     i * p->dil[0], s;
			int64_t iw0 = ow * p->stride[1] - p->pb[1] +
				      j * p->dil[1];
			const uint8_t *row = src + ih * c->W;

			if (ih < 0 || ih >= c->H) {
				for (s = 0; s < seg; s++)
					d[(q + s) * 4] = z;
			} else if (p->stride[1] == 1 && iw0 >= 0 &&
				   iw0 + seg <= c->W) {
				for (s = 0; s < seg; s++)
					d[(q + s) * 4] = row[iw0 + s];
			} else {
				for (s = 0; s < seg; s++) {
					int64_t iw = iw0 + s * p->stride[1];

					d[(q + s) * 4] = iw >= 0 && iw < c->W ?
							 row[iw] : z;
				}
			}
			q += seg;
			ow = 0;
			oh++;
		}
		for (; q < ldx; q++)
			d[q * 4] = z;
	}
}

static void qconv_item(void *arg, int it, int tid)
{
	struct qconv *c = arg;
	int64_t kcn = it % c->nkc, rest = it / c->nkc;
	int64_t b = rest % c->nblk, ng = rest / c->nblk;
	int64_t g = ng % c->groups, n = ng / c->groups;
	int64_t p0 = b * QBLK, np = c->P - p0 < QBLK ? c->P - p0 : QBLK;
	int64_t ldx = (np + 31) & ~(int64_t)31;
	int64_t k0 = g * c->kg + kcn * c->kc, k1;
	struct npr_qgemm_args a;
	uint8_t *buf;

	(void)tid;
	k1 = k0 + c->kc < (g + 1) * c->kg ? k0 + c->kc : (g + 1) * c->kg;
	if (k0 >= k1)
		return;
	buf = pack_get((size_t)c->p->kr * ldx);
	if (!buf) {
		c->nomem = true;
		return;
	}
	pack(c, n, g, p0, np, ldx, buf);
	a = (struct npr_qgemm_args){
		.w = c->w + k0 * c->p->kr, .x = buf, .kr = c->p->kr,
		.ldx = ldx, .m = k1 - k0, .npx = np, .comp = c->comp + k0,
		.mul = c->mul + k0, .add = c->add + k0, .div = c->p->sy,
		.f32out = c->p->f32out, .zy = c->p->zy, .lo = c->p->lo,
		.hi = c->p->hi, .flo = c->p->flo, .fhi = c->p->fhi,
		.y = (char *)c->y + ((n * c->K + k0) * c->P + p0) * c->es,
		.ldy = c->P,
	};
	c->fn(&a);
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
	int32_t *comp;

	c.P = c.OH * c.OW;
	c.cg = c.C / p->groups;
	c.kg = c.K / p->groups;
	c.win = c.cg * p->kernel[0] * p->kernel[1];
	if (!N || !c.P)
		return 0;
	comp = malloc(sizeof(*comp) * c.K);
	if (!comp)
		return -ENOMEM;
	for (k = 0; k < c.K; k++)
		comp[k] = (int32_t)((uint32_t)p->xz * (uint32_t)wsum[k]);
	c.comp = comp;
	c.nblk = (c.P + QBLK - 1) / QBLK;
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
		free(comp);
		return -EFBIG;
	}
	npr_parallel_for((int)(items * c.nkc), qconv_item, &c);
	free(comp);
	return c.nomem ? -ENOMEM : 0;
}

static int ref_quantize(const struct npr_node *n, const struct npr_tensor *in,
			struct npr_tensor *out)
{
	const struct npr_quant_params *p = n->params;
	int64_t i, cnt = npr_shape_numel(&in[0].shape);
	const float *x = in[0].data;
	uint8_t *y = out[0].data;
	float zy = (float)p->zy;

	for (i = 0; i < cnt; i++) {
		float v = rne(vmin(vmax(x[i] / p->sy, -1024.0f), 1024.0f)) + zy;

		y[i] = (uint8_t)vmin(vmax(v, 0.0f), 255.0f);
	}
	return 0;
}

static int ref_dequantize(const struct npr_node *n,
			  const struct npr_tensor *in, struct npr_tensor *out)
{
	const struct npr_quant_params *p = n->params;
	int64_t i, cnt = npr_shape_numel(&in[0].shape);
	const uint8_t *x = in[0].data;
	float *y = out[0].data, za = (float)p->za;

	for (i = 0; i < cnt; i++)
		y[i] = ((float)x[i] - za) * p->sa;
	return 0;
}

static int ref_qlut(const struct npr_node *n, const struct npr_tensor *in,
		    struct npr_tensor *out)
{
	int64_t i, cnt = npr_shape_numel(&in[0].shape);
	const uint8_t *x = in[0].data, *t = in[1].data;
	uint8_t *y = out[0].data;

	for (i = 0; i < cnt; i++)
		y[i] = t[x[i]];
	return 0;
}

static int ref_qadd(const struct npr_node *n, const struct npr_tensor *in,
		    struct npr_tensor *out)
{
	const struct npr_quant_params *p = n->params;
	int64_t i, cnt = npr_shape_numel(&in[0].shape);
	const uint8_t *a = in[0].data, *b = in[1].data;
	uint8_t *y = out[0].data;
	float za = (float)p->za, zb = (float)p->zb, zy = (float)p->zy;

	for (i = 0; i < cnt; i++) {
		float v = ((float)a[i] - za) * p->sa +
			  ((float)b[i] - zb) * p->sb;

		v = rne(vmin(vmax(v / p->sy, -1024.0f), 1024.0f)) + zy;
		y[i] = (uint8_t)vmin(vmax(v, (float)p->lo), (float)p->hi);
	}
	return 0;
}

/* The op definitions of lib/ops/quant.c these kernels evaluate. */
const struct npr_kernel npr_kernels_quant[] = {
	{ "NprQConv", 1, 1, ref_qconv },
	{ "NprQuantize", 1, 1, ref_quantize },
	{ "NprDequantize", 1, 1, ref_dequantize },
	{ "NprQLut", 1, 1, ref_qlut },
	{ "NprQAdd", 1, 1, ref_qadd },
	{ NULL },
};
