/* SPDX-License-Identifier: MIT */
/*
 * NprQConv's depthwise kernel (one input channel per group), plain C
 * written for the vectorizer: ref/kernels/quant.c includes it for the
 * scalar build, ref/arch/x86/qgemm_vnni512.c and qgemm_avx2.c with
 * their -m flags.  QDW names the function.  The sums are exact integers
 * and the write-out the operations of the matrix kernels (fmaf, then
 * the division, the clamp and rounding to nearest even), so every build
 * gives the same bits.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ref/kernels/qgemm.h"

#define QDW_COLS	256	/* output columns summed at a time */
#define QDW_VEC		16	/* columns per step, rounded up to it */

/* acc[q] += s[q] * w for q < n, n a multiple of QDW_VEC */
static inline void QDW_TAP(uint32_t *restrict acc, const uint8_t *restrict s,
			   int64_t n, int32_t w)
{
	int64_t c, q;

	for (c = 0; c < n; c += QDW_VEC, acc += QDW_VEC, s += QDW_VEC)
		for (q = 0; q < QDW_VEC; q++)
			acc[q] += (uint32_t)((int32_t)s[q] * w);
}

/**
 * struct npr_qdw_out - a plane's write-out constants
 * @mul: the scale of the centred sum.
 * @add: added after it.
 * @div: u8: the output scale.
 * @lo: u8: the smallest value less the zero point.
 * @hi: u8: the largest less the zero point.
 * @flo: f32: the lower bound.
 * @fhi: f32: the upper bound.
 * @zy: u8: the zero point.
 * @lut: u8: NULL or the table of the results.
 * @lut8: the same as bytes.
 * @late: the table is applied to whole rows (QDW_LUT_ROW), not here.
 */
struct npr_qdw_out {
	float mul, add, div, lo, hi, flo, fhi;
	int32_t zy;
	const int32_t *lut;
	const uint8_t *lut8;
	bool late;
};

/*
 * QDW_OUT_U8(o, acc, y, cnt) and QDW_OUT_F32 write cnt <= QDW_VEC
 * outputs from centred sums; an includer may give vector ones.
 */
#ifndef QDW_OUT_U8
static inline void QDW_OUT_U8(const struct npr_qdw_out *o,
			      const uint32_t *acc, uint8_t *y, int cnt)
{
	int q;

	for (q = 0; q < cnt; q++) {
		float v = fmaf((float)(int32_t)acc[q], o->mul, o->add) / o->div;

		v = v > o->lo ? v : o->lo;
		v = v < o->hi ? v : o->hi;
		v = (v + 12582912.0f) - 12582912.0f;
		y[q] = (uint8_t)((int32_t)v + o->zy);
		if (o->lut && !o->late)
			y[q] = (uint8_t)o->lut[y[q]];
	}
}

static inline void QDW_OUT_F32(const struct npr_qdw_out *o,
			       const uint32_t *acc, float *y, int cnt)
{
	int q;

	for (q = 0; q < cnt; q++) {
		float v = fmaf((float)(int32_t)acc[q], o->mul, o->add);

		v = v > o->flo ? v : o->flo;
		y[q] = v < o->fhi ? v : o->fhi;
	}
}
#endif

/**
 * QDW() - one channel plane of a depthwise NprQConv
 * @a: the plane (ref/kernels/qgemm.h); its rows are readable
 *     QDW_VEC bytes beyond the windows.
 */
void QDW(const struct npr_qdw_args *a)
{
	uint32_t acc[QDW_COLS];
	const struct npr_qdw_out o = {
		.mul = a->mul, .add = a->add, .div = a->div,
		.lo = (float)(a->lo - a->zy), .hi = (float)(a->hi - a->zy),
		.flo = a->flo, .fhi = a->fhi, .zy = a->zy, .lut = a->lut,
		.lut8 = a->lut8,
#ifdef QDW_LATE
		.late = a->lut8 && QDW_LATE,
#endif
	};
	const uint32_t comp = (uint32_t)a->comp;
	int64_t oh, c0, c, n, nv, q;
	int i, j;

	for (oh = 0; oh < a->oh; oh++) {
		for (c0 = 0; c0 < a->ow; c0 += QDW_COLS) {
			n = a->ow - c0 < QDW_COLS ? a->ow - c0 : QDW_COLS;
			nv = (n + QDW_VEC - 1) & ~(int64_t)(QDW_VEC - 1);
			for (q = 0; q < nv; q++)
				acc[q] = -comp;
			for (i = 0; i < a->kh; i++) {
				const uint8_t *row = a->x + (oh * a->sh +
						     i * a->dh) * a->ldx + c0;

				for (j = 0; j < a->kw; j++) {
					int64_t t = (int64_t)j * a->dw;
					const uint8_t *s = row + t / a->sw +
							   t % a->sw * a->plane;

					QDW_TAP(acc, s, nv,
						a->w[i * a->kw + j]);
				}
			}
			for (c = 0; c < n; c += QDW_VEC) {
				int64_t at = oh * a->ow + c0 + c;
				int cnt = n - c < QDW_VEC ? (int)(n - c) :
					  QDW_VEC;

				if (a->f32out)
					QDW_OUT_F32(&o, acc + c,
						    (float *)a->y + at, cnt);
				else
					QDW_OUT_U8(&o, acc + c,
						   (uint8_t *)a->y + at, cnt);
			}
#ifdef QDW_LUT_ROW
			if (o.late)
				QDW_LUT_ROW((uint8_t *)a->y + oh * a->ow + c0,
					    n, a->lut8);
#endif
		}
	}
}
