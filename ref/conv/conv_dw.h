/* SPDX-License-Identifier: MIT */
/*
 * The depthwise plane kernels, written once and compiled twice: in run.c
 * for any CPU and in ref/arch/x86/conv_dw_avx512.c with -mavx512f, where
 * the row loops vectorise 16 wide.  Define DW_PLANE, DW_FLAT, DW_FLAT2
 * and DW_AXPY (and, in the AVX-512 build, DW_VEC and DW_RUN) to the
 * functions' names first: the suffix _generic names the portable build,
 * _avx512 the one that runs only where CPUID reports AVX-512F.  Each
 * function is documented once below, under its _generic name (or its
 * _avx512 one where there is no other); the _avx512 build takes the same
 * arguments.
 */

/**
 * npr_dw_plane_generic() - one depthwise output plane
 * @d: geometry (one input and one output channel per group).
 * @x: the input plane.
 * @wc: its kh x kw weights.
 * @y: Out. The output plane.
 * @res: the residual plane, or NULL.
 * @b: the bias.
 * @act: enum npr_act.
 * @lo: Clamp's lower bound.
 * @hi: Clamp's upper bound.
 *
 * One output row at a time stays in L1: it starts at the bias, each tap
 * whose input row exists adds a weighted input row over the output
 * pixels whose tap is inside the input, then the residual and activation.
 * npr_dw_flat_generic() is faster for strides 1 and 2; this one serves
 * the rest and is what that one falls back to when it cannot get memory.
 * Also npr_dw_plane_avx512() (see the top of this file).
 */
void DW_PLANE(const struct npr_conv_desc *d, const float *x, const float *wc,
	      float *y, const float *res, float b, int act, float lo, float hi)
{
	int64_t oy, ky, kx, ox;

	for (oy = 0; oy < d->OH; oy++) {
		float *restrict yr = y + oy * d->OW;

		for (ox = 0; ox < d->OW; ox++)
			yr[ox] = b;
		for (ky = 0; ky < d->kh; ky++) {
			int64_t iy = oy * d->sh - d->ph + ky * d->dh;
			const float *xr = x + iy * d->W;

			if (iy < 0 || iy >= d->H)
				continue;
			for (kx = 0; kx < d->kw; kx++) {
				float wv = wc[ky * d->kw + kx];
				int64_t off = kx * d->dw - d->pw, o0, o1;

				/* valid ox: 0 <= ox * sw + off < W */
				o0 = off >= 0 ? 0 : (-off + d->sw - 1) / d->sw;
				o1 = d->W - 1 - off < 0 ? 0 :
				     (d->W - 1 - off) / d->sw + 1;
				if (o1 > d->OW)
					o1 = d->OW;
				if (d->sw == 1) {
					const float *restrict xs = xr + off;

					for (ox = o0; ox < o1; ox++)
						yr[ox] += wv * xs[ox];
				} else if (d->sw == 2) {
					const float *restrict xs = xr + off;

					for (ox = o0; ox < o1; ox++)
						yr[ox] += wv * xs[2 * ox];
				} else {
					for (ox = o0; ox < o1; ox++)
						yr[ox] += wv * xr[ox * d->sw + off];
				}
			}
		}
		if (res)
			for (ox = 0; ox < d->OW; ox++)
				yr[ox] += res[oy * d->OW + ox];
		if (act == NPR_ACT_RELU) {
			for (ox = 0; ox < d->OW; ox++)
				yr[ox] = yr[ox] > 0 ? yr[ox] : 0;
		} else if (act == NPR_ACT_CLAMP) {
			for (ox = 0; ox < d->OW; ox++) {
				float v = yr[ox] < lo ? lo : yr[ox];

				yr[ox] = v > hi ? hi : v;
			}
		}
	}
}

/*
 * Depthwise plane, flat form for stride 1 or 2: the input is copied into
 * a zero-padded plane of pitch Wp, and the output is computed at the same
 * pitch, so that every tap becomes one long loop t -> t * s + const over
 * the whole plane (the Wp - OW extra columns per row are computed and
 * dropped: few at stride 1, half at stride 2).  Short rows (7, 14, 28
 * pixels) then vectorise as well as long ones.  Chunks of CH outputs keep
 * the accumulators in L1.
 */
#define DW_CH	1024

/* acc[0..n) += wv * xs[0..n): the inner loop of every flat tap */
static inline void DW_AXPY(float *restrict acc, const float *restrict xs,
			   float wv, int64_t n)
{
	int64_t t = 0;

#ifdef __AVX512F__
	__m512 w = _mm512_set1_ps(wv);

	for (; t + 16 <= n; t += 16)
		_mm512_storeu_ps(acc + t,
				 _mm512_fmadd_ps(w, _mm512_loadu_ps(xs + t),
						 _mm512_loadu_ps(acc + t)));
	if (t < n) {
		__mmask16 m = (__mmask16)((1u << (n - t)) - 1);

		_mm512_mask_storeu_ps(acc + t, m,
			_mm512_fmadd_ps(w, _mm512_maskz_loadu_ps(m, xs + t),
					_mm512_maskz_loadu_ps(m, acc + t)));
		return;
	}
#endif
	for (; t < n; t++)
		acc[t] += wv * xs[t];
}

/*
 * Stride 2, no dilation: the padded input split into four planes by row
 * and column parity, plane (pr, pc)[i][j] = padded[2i + pr][2j + pc], all
 * of pitch wh.  Tap (ky, kx) of output (oy, ox) is then plane (ky & 1,
 * kx & 1) at (oy + ky / 2, ox + kx / 2): one flat, stride-1 loop per tap
 * again, with the output at pitch wh (about OW + 1).
 */
static int DW_FLAT2(const struct npr_conv_desc *d, const float *x,
		    const float *wc, float *y, const float *res, float b,
		    int act, float lo, float hi)
{
	static _Thread_local float *buf;
	static _Thread_local size_t cap;
	int64_t wh = d->OW + (d->kw - 1) / 2 + 1;
	int64_t hh = d->OH + (d->kh - 1) / 2 + 1, ps = hh * wh, P = wh;
	int64_t q, i, j, t0, t, ky, kx, oy, n2;
	float acc[DW_CH], *tmp;

	if (!npr_scratch(&buf, &cap, 4 * ps + 64 + 2 * wh))
		return -1;
	tmp = buf + 4 * ps + 64;
	/* each padded input row once into tmp, then split by column parity */
	for (q = 0; q < 2; q++)
		for (i = 0; i < hh; i++) {
			int64_t iy = 2 * i + q - d->ph;
			float *restrict de = buf + (2 * q) * ps + i * wh;
			float *restrict dodd = buf + (2 * q + 1) * ps + i * wh;
			int64_t w = d->W;

			if (iy < 0 || iy >= d->H) {
				memset(de, 0, sizeof(float) * wh);
				memset(dodd, 0, sizeof(float) * wh);
				continue;
			}
			if (w > 2 * wh - d->pw)
				w = 2 * wh - d->pw;
			memset(tmp, 0, sizeof(float) * 2 * wh);
			if (w > 0)
				memcpy(tmp + d->pw, x + iy * d->W, sizeof(float) * w);
			j = 0;
#ifdef __AVX512F__
			{
				const __m512i ie = _mm512_set_epi32(30, 28, 26,
					24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4,
					2, 0);
				const __m512i io = _mm512_add_epi32(ie,
					_mm512_set1_epi32(1));

				for (; j + 16 <= wh; j += 16) {
					__m512 lo16 = _mm512_loadu_ps(tmp + 2 * j);
					__m512 hi16 = _mm512_loadu_ps(tmp + 2 * j + 16);

					_mm512_storeu_ps(de + j,
						_mm512_permutex2var_ps(lo16, ie, hi16));
					_mm512_storeu_ps(dodd + j,
						_mm512_permutex2var_ps(lo16, io, hi16));
				}
			}
#endif
			for (; j < wh; j++) {
				de[j] = tmp[2 * j];
				dodd[j] = tmp[2 * j + 1];
			}
		}
	memset(buf + 4 * ps, 0, sizeof(float) * 64);
	for (t0 = 0; t0 < d->OH * P; t0 += DW_CH) {
		int64_t n = d->OH * P - t0 < DW_CH ? d->OH * P - t0 : DW_CH;

		for (t = 0; t < n; t++)
			acc[t] = b;
		for (ky = 0; ky < d->kh; ky++)
			for (kx = 0; kx < d->kw; kx++) {
				const float *restrict xs = buf +
					((ky & 1) * 2 + (kx & 1)) * ps +
					(ky / 2) * wh + kx / 2 + t0;
				float wv = wc[ky * d->kw + kx];

				DW_AXPY(acc, xs, wv, n);
			}
		/* the output rows of this chunk, a vector loop each */
		for (oy = t0 / P; oy * P < t0 + n; oy++) {
			int64_t rs = oy * P, a = rs > t0 ? rs : t0;
			int64_t e = rs + d->OW < t0 + n ? rs + d->OW : t0 + n;
			float *restrict yo = y + oy * d->OW + (a - rs);
			const float *ac = acc + (a - t0);

			if (a >= e)
				continue;
			n2 = e - a;
			if (res) {
				const float *restrict rr = res + oy * d->OW + (a - rs);

				for (t = 0; t < n2; t++)
					yo[t] = ac[t] + rr[t];
				ac = yo;
			}
			if (act == NPR_ACT_RELU) {
				for (t = 0; t < n2; t++)
					yo[t] = ac[t] > 0 ? ac[t] : 0;
			} else if (act == NPR_ACT_CLAMP) {
				for (t = 0; t < n2; t++) {
					float v = ac[t] < lo ? lo : ac[t];

					yo[t] = v > hi ? hi : v;
				}
			} else if (!res) {
				memcpy(yo, ac, sizeof(float) * n2);
			}
		}
	}
	return 0;
}

/**
 * npr_dw_flat_generic() - npr_dw_plane_generic() as flat loops over a
 * padded copy, for strides 1 and 2
 * @d: as npr_dw_plane_generic(); sh == sw, 1 or 2.
 * @x: as npr_dw_plane_generic().
 * @wc: as npr_dw_plane_generic().
 * @y: as npr_dw_plane_generic().
 * @res: as npr_dw_plane_generic().
 * @b: as npr_dw_plane_generic().
 * @act: as npr_dw_plane_generic().
 * @lo: as npr_dw_plane_generic().
 * @hi: as npr_dw_plane_generic().
 *
 * The padded copy is a per-thread buffer kept from call to call (its
 * zero border too, while planes of one geometry follow); stride 2
 * without dilation splits it by row and column parity (DW_FLAT2).  Also
 * npr_dw_flat_avx512() (see the top of this file).
 *
 * Context: any thread.
 * Return: 0, or -1 without memory for the padded copy (the caller then
 * runs npr_dw_plane_generic()).
 */
int DW_FLAT(const struct npr_conv_desc *d, const float *x,
		   const float *wc, float *y, const float *res, float b,
		   int act, float lo, float hi)
{
	static _Thread_local float *buf;
	static _Thread_local size_t cap;
	static _Thread_local int64_t geo[6];
	int64_t s = d->sw, Wp, Hp, P, need, iy, t0, t, ky, kx, oy, n2;
	float acc[DW_CH];
	float *xp;

	if (s == 2 && d->sh == 2 && d->dh == 1 && d->dw == 1)
		return DW_FLAT2(d, x, wc, y, res, b, act, lo, hi);
	Wp = d->pw + d->W;
	need = (d->OW - 1) * s + (d->kw - 1) * d->dw + 1;
	if (Wp < need)
		Wp = need;
	P = Wp;
	Hp = d->ph + d->H;
	need = (d->OH - 1) * s + (d->kh - 1) * d->dh + 1;
	if (Hp < need)
		Hp = need;
	Hp += 2;
	if ((size_t)(Hp * Wp) > cap)
		geo[0] = -1;	/* a new buffer: its border is not zeroed yet */
	if (!npr_scratch(&buf, &cap, Hp * Wp))
		return -1;
	xp = buf;
	/* the padding stays zero while planes of one geometry follow */
	if (geo[0] != Hp || geo[1] != Wp || geo[2] != d->ph ||
	    geo[3] != d->pw || geo[4] != d->H || geo[5] != d->W) {
		memset(xp, 0, sizeof(float) * Hp * Wp);
		geo[0] = Hp; geo[1] = Wp; geo[2] = d->ph;
		geo[3] = d->pw; geo[4] = d->H; geo[5] = d->W;
	}
	for (iy = 0; iy < d->H; iy++)
		memcpy(xp + (d->ph + iy) * Wp + d->pw, x + iy * d->W,
		       sizeof(float) * d->W);
	for (t0 = 0; t0 < d->OH * P; t0 += DW_CH) {
		int64_t n = d->OH * P - t0 < DW_CH ? d->OH * P - t0 : DW_CH;

		for (t = 0; t < n; t++)
			acc[t] = b;
		for (ky = 0; ky < d->kh; ky++)
			for (kx = 0; kx < d->kw; kx++) {
				const float *restrict xs = xp + t0 * s +
					ky * d->dh * Wp + kx * d->dw;
				float wv = wc[ky * d->kw + kx];

				if (s == 1)
					DW_AXPY(acc, xs, wv, n);
				else
					for (t = 0; t < n; t++)
						acc[t] += wv * xs[2 * t];
			}
		/* the output rows of this chunk, a vector loop each */
		for (oy = t0 / P; oy * P < t0 + n; oy++) {
			int64_t rs = oy * P, a = rs > t0 ? rs : t0;
			int64_t e = rs + d->OW < t0 + n ? rs + d->OW : t0 + n;
			float *restrict yo = y + oy * d->OW + (a - rs);
			const float *ac = acc + (a - t0);

			if (a >= e)
				continue;
			n2 = e - a;
			if (res) {
				const float *restrict rr = res + oy * d->OW + (a - rs);

				for (t = 0; t < n2; t++)
					yo[t] = ac[t] + rr[t];
				ac = yo;
			}
			if (act == NPR_ACT_RELU) {
				for (t = 0; t < n2; t++)
					yo[t] = ac[t] > 0 ? ac[t] : 0;
			} else if (act == NPR_ACT_CLAMP) {
				for (t = 0; t < n2; t++) {
					float v = ac[t] < lo ? lo : ac[t];

					yo[t] = v > hi ? hi : v;
				}
			} else if (!res) {
				memcpy(yo, ac, sizeof(float) * n2);
			}
		}
	}
	return 0;
}
#undef DW_CH

#if defined(DW_VEC) && defined(__AVX512F__)
/*
 * npr_dw_vec_avx512() (below): eight output rows at a time (eight
 * independent FMA chains: two FMA pipes times the 4-cycle latency), 16
 * output pixels per row and register.
 */
#define DW_VEC_BLK	8	/* 128 output columns per pass */
#define DW_VEC_ROWS	8

/* lanes l of a 16-wide load at column c0 with 0 <= c0 + l < W */
static inline __mmask16 dw_vec_mask(int64_t c0, int64_t W)
{
	int64_t a = c0 < 0 ? -c0 : 0, e = W - c0 < 16 ? W - c0 : 16;

	if (e <= a)
		return 0;
	return (__mmask16)(((1u << e) - 1) & ~((1u << a) - 1));
}

/* One block of 16 columns of eight output rows; @s is 1 or 2 (constant). */
static inline __attribute__((always_inline)) void
dw_vec_blk(const float *const *rows, int64_t kh, int64_t kw, int64_t s,
	   int64_t dw, int64_t off, const float *wc, const __mmask16 *ml,
	   const __mmask16 *mh, __m512 vb, __m512 *out)
{
	const __m512i ie = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16,
					    14, 12, 10, 8, 6, 4, 2, 0);
	__m512 a0 = vb, a1 = vb, a2 = vb, a3 = vb;
	__m512 a4 = vb, a5 = vb, a6 = vb, a7 = vb;
	int64_t ky, kx;

#define DW_TAP(acc, p)							\
	do {								\
		const float *xs_ = (p) + o;				\
		__m512 v_ = _mm512_maskz_loadu_ps(m0, xs_);		\
									\
		if (s == 2)						\
			v_ = _mm512_permutex2var_ps(v_, ie,		\
				_mm512_maskz_loadu_ps(m1, xs_ + 16));	\
		acc = _mm512_fmadd_ps(w, v_, acc);			\
	} while (0)
	for (ky = 0; ky < kh; ky++) {
		const float *p0 = rows[ky * DW_VEC_ROWS];
		const float *p1 = rows[ky * DW_VEC_ROWS + 1];
		const float *p2 = rows[ky * DW_VEC_ROWS + 2];
		const float *p3 = rows[ky * DW_VEC_ROWS + 3];
		const float *p4 = rows[ky * DW_VEC_ROWS + 4];
		const float *p5 = rows[ky * DW_VEC_ROWS + 5];
		const float *p6 = rows[ky * DW_VEC_ROWS + 6];
		const float *p7 = rows[ky * DW_VEC_ROWS + 7];

		for (kx = 0; kx < kw; kx++) {
			__m512 w = _mm512_set1_ps(wc[ky * kw + kx]);
			__mmask16 m0 = ml[kx], m1 = mh[kx];
			int64_t o = off + kx * dw;

			if (p0)
				DW_TAP(a0, p0);
			if (p1)
				DW_TAP(a1, p1);
			if (p2)
				DW_TAP(a2, p2);
			if (p3)
				DW_TAP(a3, p3);
			if (p4)
				DW_TAP(a4, p4);
			if (p5)
				DW_TAP(a5, p5);
			if (p6)
				DW_TAP(a6, p6);
			if (p7)
				DW_TAP(a7, p7);
		}
	}
#undef DW_TAP
	out[0] = a0;
	out[1] = a1;
	out[2] = a2;
	out[3] = a3;
	out[4] = a4;
	out[5] = a5;
	out[6] = a6;
	out[7] = a7;
}

/*
 * 3x3, no dilation: 16 output columns per register, strip by strip down
 * the plane, or for layers larger than L2 row by row (the plane is then
 * read and written in order, which the hardware prefetchers follow when
 * it comes from L3 or memory): the three input rows
 * are loaded (three taps each, masked at the plane's edges; rows outside
 * read a zero row) into three partial sums, one per tap row, so the FMA
 * chains are three long and neighbouring strips overlap.  At stride 2 a
 * tap's 16 columns are the even (kx 0, 2) or odd (kx 1) lanes of two
 * loads.
 */
#define DW3_ZW	128
#define DW3_BIG	(1 << 20)	/* bytes of input per layer: about one L2 */
#define DW3_STRIPS	32	/* output rows up to 512 wide */
static const float dw3_zero[DW3_ZW];

static inline __attribute__((always_inline)) __m512
dw3_row(const float *p, int64_t s, __mmask16 m0, __mmask16 m1,
	__mmask16 m2, __mmask16 m3, __m512 w0, __m512 w1, __m512 w2,
	__m512 acc)
{
	const __m512i ie = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16,
					    14, 12, 10, 8, 6, 4, 2, 0);
	const __m512i io = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17,
					    15, 13, 11, 9, 7, 5, 3, 1);

	if (s == 1 && (m0 & m1 & m2) == 0xffff) {
		/* inside the plane: plain loads, folded into the FMAs */
		acc = _mm512_fmadd_ps(w0, _mm512_loadu_ps(p), acc);
		acc = _mm512_fmadd_ps(w1, _mm512_loadu_ps(p + 1), acc);
		acc = _mm512_fmadd_ps(w2, _mm512_loadu_ps(p + 2), acc);
	} else if (s == 1) {
		acc = _mm512_fmadd_ps(w0, _mm512_maskz_loadu_ps(m0, p), acc);
		acc = _mm512_fmadd_ps(w1, _mm512_maskz_loadu_ps(m1, p + 1), acc);
		acc = _mm512_fmadd_ps(w2, _mm512_maskz_loadu_ps(m2, p + 2), acc);
	} else {
		bool in = (m0 & m1 & m2 & m3) == 0xffff;
		__m512 lo = in ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(m0, p);
		__m512 hi = in ? _mm512_loadu_ps(p + 16) :
			    _mm512_maskz_loadu_ps(m1, p + 16);
		__m512 lo2 = in ? _mm512_loadu_ps(p + 2) :
			     _mm512_maskz_loadu_ps(m2, p + 2);
		__m512 hi2 = in ? _mm512_loadu_ps(p + 18) :
			     _mm512_maskz_loadu_ps(m3, p + 18);

		acc = _mm512_fmadd_ps(w0, _mm512_permutex2var_ps(lo, ie, hi), acc);
		acc = _mm512_fmadd_ps(w1, _mm512_permutex2var_ps(lo, io, hi), acc);
		acc = _mm512_fmadd_ps(w2, _mm512_permutex2var_ps(lo2, ie, hi2),
				      acc);
	}
	return acc;
}

static inline __attribute__((always_inline)) void
dw3_plane(const struct npr_conv_desc *d, int64_t s, bool rowmajor,
	  const float *x, const float *wc, float *y, const float *res,
	  float b, int act, float lo, float hi)
{
	const __m512 w00 = _mm512_set1_ps(wc[0]), w01 = _mm512_set1_ps(wc[1]);
	const __m512 w02 = _mm512_set1_ps(wc[2]), w10 = _mm512_set1_ps(wc[3]);
	const __m512 w11 = _mm512_set1_ps(wc[4]), w12 = _mm512_set1_ps(wc[5]);
	const __m512 w20 = _mm512_set1_ps(wc[6]), w21 = _mm512_set1_ps(wc[7]);
	const __m512 w22 = _mm512_set1_ps(wc[8]);
	const __m512 vb = _mm512_set1_ps(b), vlo = _mm512_set1_ps(lo);
	const __m512 vhi = _mm512_set1_ps(hi), vz = _mm512_setzero_ps();
	const int64_t H = d->H, W = d->W, OH = d->OH, OW = d->OW;
	const int64_t ph = d->ph, pw = d->pw;
	const float *z = dw3_zero + 32;
	__mmask16 mk[DW3_STRIPS][5];
	int64_t ox0, oy, st, ns = (OW + 15) / 16;

	/* per strip of 16 outputs: the output mask and the load masks */
	for (st = 0; st < ns; st++) {
		int64_t c0 = st * 16 * s - pw;

		mk[st][0] = dw_vec_mask(0, OW - st * 16);
		mk[st][1] = dw_vec_mask(c0, W);
		mk[st][2] = dw_vec_mask(c0 + (s == 1 ? 1 : 16), W);
		mk[st][3] = dw_vec_mask(c0 + 2, W);
		mk[st][4] = dw_vec_mask(c0 + 18, W);
	}
	if (!rowmajor) {
		/* strip by strip, each walking down the plane */
		for (st = 0, ox0 = 0; st < ns; st++, ox0 += 16) {
			int64_t c0 = ox0 * s - pw;
			const __mmask16 m0 = mk[st][0], m1 = mk[st][1];
			const __mmask16 m2 = mk[st][2], m3 = mk[st][3];
			const __mmask16 m4 = mk[st][4];

			for (oy = 0; oy < OH; oy++) {
				int64_t iy = oy * s - ph;
				const float *p0 = iy >= 0 && iy < H ?
						  x + iy * W + c0 : z;
				const float *p1 = iy + 1 >= 0 && iy + 1 < H ?
						  x + (iy + 1) * W + c0 : z;
				const float *p2 = iy + 2 >= 0 && iy + 2 < H ?
						  x + (iy + 2) * W + c0 : z;
				__m512 a0, a1, a2;

				a0 = dw3_row(p0, s, m1, m2, m3, m4, w00, w01,
					     w02, vb);
				a1 = dw3_row(p1, s, m1, m2, m3, m4, w10, w11,
					     w12, vz);
				a2 = dw3_row(p2, s, m1, m2, m3, m4, w20, w21,
					     w22, vz);
				a0 = _mm512_add_ps(a0, _mm512_add_ps(a1, a2));
				if (res)
					a0 = _mm512_add_ps(a0,
						_mm512_maskz_loadu_ps(m0,
							res + oy * OW + ox0));
				if (act == NPR_ACT_RELU)
					a0 = _mm512_max_ps(a0, vz);
				else if (act == NPR_ACT_CLAMP)
					a0 = _mm512_min_ps(_mm512_max_ps(a0, vlo),
							   vhi);
				_mm512_mask_storeu_ps(y + oy * OW + ox0, m0, a0);
			}
		}
		return;
	}
	/* row by row, strips inside: the plane is read and written in order */
	for (oy = 0; oy < OH; oy++) {
		int64_t iy = oy * s - ph;
		const float *r0 = iy >= 0 && iy < H ? x + iy * W : z;
		const float *r1 = iy + 1 >= 0 && iy + 1 < H ? x + (iy + 1) * W : z;
		const float *r2 = iy + 2 >= 0 && iy + 2 < H ? x + (iy + 2) * W : z;

		for (st = 0, ox0 = 0; st < ns; st++, ox0 += 16) {
			int64_t c0 = ox0 * s - pw;
			const __mmask16 *m = mk[st];
			__m512 a0, a1, a2;

			/* the zero row is read at the same columns */
			a0 = dw3_row((r0 == z ? z : r0 + c0), s, m[1], m[2], m[3],
				     m[4], w00, w01, w02, vb);
			a1 = dw3_row((r1 == z ? z : r1 + c0), s, m[1], m[2], m[3],
				     m[4], w10, w11, w12, vz);
			a2 = dw3_row((r2 == z ? z : r2 + c0), s, m[1], m[2], m[3],
				     m[4], w20, w21, w22, vz);
			a0 = _mm512_add_ps(a0, _mm512_add_ps(a1, a2));
			if (res)
				a0 = _mm512_add_ps(a0, _mm512_maskz_loadu_ps(m[0],
						   res + oy * OW + ox0));
			if (act == NPR_ACT_RELU)
				a0 = _mm512_max_ps(a0, vz);
			else if (act == NPR_ACT_CLAMP)
				a0 = _mm512_min_ps(_mm512_max_ps(a0, vlo), vhi);
			_mm512_mask_storeu_ps(y + oy * OW + ox0, m[0], a0);
		}
	}
}

/**
 * npr_dw_vec_avx512() - npr_dw_plane_generic() with the accumulators in
 * registers, stride 1 or 2
 * @d: as npr_dw_plane_generic().
 * @x: as npr_dw_plane_generic().
 * @wc: as npr_dw_plane_generic().
 * @y: as npr_dw_plane_generic().
 * @res: as npr_dw_plane_generic().
 * @b: as npr_dw_plane_generic().
 * @act: as npr_dw_plane_generic().
 * @lo: as npr_dw_plane_generic().
 * @hi: as npr_dw_plane_generic().
 *
 * Every tap is one masked unaligned load of the input row (the mask
 * drops the columns left and right of the input, so no padded copy is
 * made) and one FMA; at stride 2 a tap loads 32 input columns and keeps
 * the even ones.  The residual, the activation and the store follow
 * while the sums are still in registers.  3x3 layers without dilation
 * and with narrow enough planes take a kernel of their own (dw3_plane()).
 * Built in the AVX-512 object only.
 *
 * Return: 0, or -1 for what it does not cover (a stride other than 1 or
 * 2, sh != sw, or a kernel over 16 taps wide or high); then
 * npr_dw_flat_avx512() or npr_dw_plane_avx512() run.
 */
int DW_VEC(const struct npr_conv_desc *d, const float *x, const float *wc,
	   float *y, const float *res, float b, int act, float lo, float hi)
{
	__mmask16 mlo[DW_VEC_BLK][16], mhi[DW_VEC_BLK][16], mo[DW_VEC_BLK];
	const float *rows[16 * DW_VEC_ROWS];
	const int64_t s = d->sw, kh = d->kh, kw = d->kw, H = d->H, W = d->W;
	const int64_t OH = d->OH, OW = d->OW, dw = d->dw, pw = d->pw;
	int64_t oy, ox0, ky, kx, nb, blk, x0, r;
	const __m512 vb = _mm512_set1_ps(b), vlo = _mm512_set1_ps(lo);
	const __m512 vhi = _mm512_set1_ps(hi), vz = _mm512_setzero_ps();

	if ((s != 1 && s != 2) || d->sh != s || kw > 16 || kh > 16)
		return -1;
	if (kh == 3 && kw == 3 && dw == 1 && d->dh == 1 && pw < 32 &&
	    OW <= 16 * DW3_STRIPS) {
		/*
		 * A layer larger than L2 comes from L3 or memory: walk each
		 * plane in address order then (112x112 planes: 0.145 ->
		 * 0.116 ms, at batch 8 2.5x).  Else down each strip, which
		 * costs less per row (0.028 against 0.038 ms on 384 x 14x14
		 * planes).
		 */
		bool big = d->N * d->C * H * W * (int64_t)sizeof(float) >
			   DW3_BIG;

		if (s == 1 && big)
			dw3_plane(d, 1, true, x, wc, y, res, b, act, lo, hi);
		else if (s == 1)
			dw3_plane(d, 1, false, x, wc, y, res, b, act, lo, hi);
		else if (big)
			dw3_plane(d, 2, true, x, wc, y, res, b, act, lo, hi);
		else
			dw3_plane(d, 2, false, x, wc, y, res, b, act, lo, hi);
		return 0;
	}
	for (x0 = 0; x0 < OW; x0 += 16 * DW_VEC_BLK) {
		nb = (OW - x0 + 15) / 16;
		if (nb > DW_VEC_BLK)
			nb = DW_VEC_BLK;
		/* per block and tap column: which loaded lanes are input */
		for (blk = 0; blk < nb; blk++) {
			int64_t ox = x0 + blk * 16;

			mo[blk] = dw_vec_mask(0, OW - ox);
			for (kx = 0; kx < kw; kx++) {
				int64_t c0 = ox * s + kx * dw - pw;

				mlo[blk][kx] = dw_vec_mask(c0, W);
				mhi[blk][kx] = dw_vec_mask(c0 + 16, W);
			}
		}
		for (oy = 0; oy < OH; oy += DW_VEC_ROWS) {
			int64_t nr = OH - oy < DW_VEC_ROWS ? OH - oy : DW_VEC_ROWS;

			/* the input row of each (tap row, output row), or NULL */
			for (ky = 0; ky < kh; ky++)
				for (r = 0; r < DW_VEC_ROWS; r++) {
					int64_t iy = (oy + r) * s - d->ph +
						     ky * d->dh;

					rows[ky * DW_VEC_ROWS + r] =
						r < nr && iy >= 0 && iy < H ?
						x + iy * W : NULL;
				}
			for (blk = 0; blk < nb; blk++) {
				__m512 acc[DW_VEC_ROWS];

				ox0 = x0 + blk * 16;
				if (s == 1)
					dw_vec_blk(rows, kh, kw, 1, dw, ox0 - pw,
						   wc, mlo[blk], mhi[blk], vb, acc);
				else
					dw_vec_blk(rows, kh, kw, 2, dw,
						   2 * ox0 - pw, wc, mlo[blk],
						   mhi[blk], vb, acc);
				for (r = 0; r < nr; r++) {
					float *yo = y + (oy + r) * OW + ox0;
					__m512 v = acc[r];

					if (res)
						v = _mm512_add_ps(v,
							_mm512_maskz_loadu_ps(mo[blk],
								res + (oy + r) * OW +
								ox0));
					if (act == NPR_ACT_RELU)
						v = _mm512_max_ps(v, vz);
					else if (act == NPR_ACT_CLAMP)
						v = _mm512_min_ps(_mm512_max_ps(v, vlo),
								  vhi);
					_mm512_mask_storeu_ps(yo, mo[blk], v);
				}
			}
		}
	}
	return 0;
}

/*
 * Small planes at stride 1 with the output as wide as the input (OW ==
 * W): output pixel t of a plane reads input pixel t + off[tap] for every
 * tap, so the plane is cut into vectors of 16 consecutive pixels across
 * rows, and each tap is one masked load at a fixed offset.  The masks
 * (which lanes of each vector the tap finds inside the input) depend on
 * the geometry only: the plan makes them once (dw_tab_new() in
 * ref/conv/conv.c).  A run
 * of planes is one call, so nothing is set up per plane but the weights:
 * a 7x7 plane is four vectors (49 of 64 lanes useful, against 7 of 16
 * with a register per row), a 14x14 thirteen (196 of 208).
 */
static inline __attribute__((always_inline)) void
dw_run_planes(const struct npr_dw_tab *t, int64_t taps, const float *x,
	      const float *w, const float *bias, float *y, const float *res,
	      int64_t p0, int64_t p1, int act, float lo, float hi)
{
	const int64_t npix = t->npix, nv = t->nv, C = t->C;
	const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
	const __m512 vz = _mm512_setzero_ps();
	const __mmask16 mlast = (__mmask16)((1u << (npix - 16 * (nv - 1))) - 1);
	int64_t pl, v0, tp, j;

	for (pl = p0; pl < p1; pl++) {
		int64_t c = pl % C;
		const float *xp = x + pl * t->ipix, *wc = w + c * taps;
		float *yp = y + pl * npix;
		const float *rp = res ? res + pl * npix : NULL;
		const __m512 vb = _mm512_set1_ps(bias ? bias[c] : 0.0f);
		__m512 wv[NPR_DW_TAPS];

		for (tp = 0; tp < taps; tp++)
			wv[tp] = _mm512_set1_ps(wc[tp]);
		for (v0 = 0; v0 < nv; v0 += 4) {
			int64_t n = nv - v0 < 4 ? nv - v0 : 4;
			const uint16_t *m = t->m + v0 * taps;
			const float *q = xp + 16 * v0;
			__m512 acc[4] = { vb, vb, vb, vb };

			if (n == 4) {
				for (tp = 0; tp < taps; tp++) {
					const float *qt = q + t->off[tp];

					for (j = 0; j < 4; j++)
						acc[j] = _mm512_fmadd_ps(wv[tp],
							_mm512_maskz_loadu_ps(
								m[j * taps + tp],
								qt + 16 * j), acc[j]);
				}
			} else {
				for (tp = 0; tp < taps; tp++) {
					const float *qt = q + t->off[tp];

					for (j = 0; j < 3; j++)
						if (j < n)
							acc[j] = _mm512_fmadd_ps(wv[tp],
								_mm512_maskz_loadu_ps(
									m[j * taps + tp],
									qt + 16 * j),
								acc[j]);
				}
			}
			for (j = 0; j < n; j++) {
				__mmask16 mo = v0 + j == nv - 1 ? mlast : 0xffff;
				__m512 v = acc[j];

				if (rp)
					v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mo,
						rp + 16 * (v0 + j)));
				if (act == NPR_ACT_RELU)
					v = _mm512_max_ps(v, vz);
				else if (act == NPR_ACT_CLAMP)
					v = _mm512_min_ps(_mm512_max_ps(v, vlo), vhi);
				_mm512_mask_storeu_ps(yp + 16 * (v0 + j), mo, v);
			}
		}
	}
}

/*
 * 3x3, padding 1, stride 1, output as large as the input (every stride-1
 * depthwise layer of mobilenet_v2): the three taps of a tap row are one
 * load and two lane shifts.  Per output vector and tap row, the input
 * vector under it (x[t - W .. t - W + 15] for the row above) is loaded
 * once, and the vectors one pixel left and right of it are shifted out
 * of it and its neighbours (which the previous and next output vector
 * load anyway), the shift zeroing the lanes whose pixel falls off the
 * left or right edge of its row (cm[v][0], cm[v][1]).  Loads outside the
 * plane (the rows above the first and below the last) are masked by
 * position.  Per output vector: 3 loads, 6 shifts, 9 FMAs, where a
 * masked load per tap made 9 loads crossing cache lines and 9 mask
 * loads.
 */
static inline __attribute__((always_inline)) __m512
dw3s_load(const float *xp, int64_t pos, int64_t ipix)
{
	if (pos >= 0 && pos + 16 <= ipix)
		return _mm512_loadu_ps(xp + pos);
	return _mm512_maskz_loadu_ps(dw_vec_mask(pos, ipix), xp + pos);
}

#define DW3S_L(k, cur, prev) _mm512_castsi512_ps(_mm512_maskz_alignr_epi32( \
	(k), _mm512_castps_si512(cur), _mm512_castps_si512(prev), 15))
#define DW3S_R(k, nxt, cur) _mm512_castsi512_ps(_mm512_maskz_alignr_epi32( \
	(k), _mm512_castps_si512(nxt), _mm512_castps_si512(cur), 1))

static void dw3s_run(const struct npr_dw_tab *t, const float *x,
		     const float *w, const float *bias, float *y,
		     const float *res, int64_t p0, int64_t p1, int act,
		     float lo, float hi)
{
	const int64_t npix = t->npix, nv = t->nv, C = t->C, W = t->W;
	const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
	const __m512 vz = _mm512_setzero_ps();
	const __mmask16 mlast = (__mmask16)((1u << (npix - 16 * (nv - 1))) - 1);
	int64_t pl, v;

	for (pl = p0; pl < p1; pl++) {
		int64_t c = pl % C;
		const float *xp = x + pl * npix, *wc = w + c * 9;
		float *yp = y + pl * npix;
		const float *rp = res ? res + pl * npix : NULL;
		const __m512 vb = _mm512_set1_ps(bias ? bias[c] : 0.0f);
		const __m512 w0 = _mm512_set1_ps(wc[0]), w1 = _mm512_set1_ps(wc[1]);
		const __m512 w2 = _mm512_set1_ps(wc[2]), w3 = _mm512_set1_ps(wc[3]);
		const __m512 w4 = _mm512_set1_ps(wc[4]), w5 = _mm512_set1_ps(wc[5]);
		const __m512 w6 = _mm512_set1_ps(wc[6]), w7 = _mm512_set1_ps(wc[7]);
		const __m512 w8 = _mm512_set1_ps(wc[8]);
		/* the vector before and at output vector v, per tap row */
		__m512 pa = dw3s_load(xp, -W - 16, npix);
		__m512 ca = dw3s_load(xp, -W, npix);
		__m512 pb = vz;
		__m512 cb = dw3s_load(xp, 0, npix);
		__m512 pc = dw3s_load(xp, W - 16, npix);
		__m512 cc = dw3s_load(xp, W, npix);

		for (v = 0; v < nv; v++) {
			const int64_t o = 16 * v + 16;
			const __mmask16 kl = t->cm[2 * v], kr = t->cm[2 * v + 1];
			const __mmask16 mo = v == nv - 1 ? mlast : 0xffff;
			__m512 na = dw3s_load(xp, o - W, npix);
			__m512 nb = dw3s_load(xp, o, npix);
			__m512 nc = dw3s_load(xp, o + W, npix);
			__m512 a0, a1, a2;

			a0 = _mm512_fmadd_ps(w0, DW3S_L(kl, ca, pa), vb);
			a1 = _mm512_mul_ps(w3, DW3S_L(kl, cb, pb));
			a2 = _mm512_mul_ps(w6, DW3S_L(kl, cc, pc));
			a0 = _mm512_fmadd_ps(w1, ca, a0);
			a1 = _mm512_fmadd_ps(w4, cb, a1);
			a2 = _mm512_fmadd_ps(w7, cc, a2);
			a0 = _mm512_fmadd_ps(w2, DW3S_R(kr, na, ca), a0);
			a1 = _mm512_fmadd_ps(w5, DW3S_R(kr, nb, cb), a1);
			a2 = _mm512_fmadd_ps(w8, DW3S_R(kr, nc, cc), a2);
			a0 = _mm512_add_ps(a0, _mm512_add_ps(a1, a2));
			if (rp)
				a0 = _mm512_add_ps(a0, _mm512_maskz_loadu_ps(mo,
						   rp + 16 * v));
			if (act == NPR_ACT_RELU)
				a0 = _mm512_max_ps(a0, vz);
			else if (act == NPR_ACT_CLAMP)
				a0 = _mm512_min_ps(_mm512_max_ps(a0, vlo), vhi);
			_mm512_mask_storeu_ps(yp + 16 * v, mo, a0);
			pa = ca; ca = na;
			pb = cb; cb = nb;
			pc = cc; cc = nc;
		}
	}
}
#undef DW3S_L
#undef DW3S_R

/*
 * 3x3, padding 1, stride 2: per output row and tap row, the 32 input
 * columns under 16 outputs are two loads (masked at the row's end), the
 * centre and right taps their even and odd lanes, and the left tap the
 * odd lanes shifted by one lane, the first lane from the previous
 * vector's odd lanes (zero at the row's start, which is the padding).
 * Output rows of up to 8 pixels go two to a vector (lanes 0-7 and 8-15),
 * from two input rows per tap row.
 */
static inline __attribute__((always_inline)) __m512
dw3s2_row(const float *r, int64_t W, int64_t c0)
{
	int64_t n = W - c0;

	if (n >= 16)
		return _mm512_loadu_ps(r + c0);
	return _mm512_maskz_loadu_ps(n > 0 ? (__mmask16)((1u << n) - 1) : 0,
				     r + c0);
}

static inline __attribute__((always_inline)) __m512
dw3s2_epi(__m512 a, const float *rp, __mmask16 mo, int act, __m512 vlo,
	  __m512 vhi)
{
	if (rp)
		a = _mm512_add_ps(a, _mm512_maskz_loadu_ps(mo, rp));
	if (act == NPR_ACT_RELU)
		a = _mm512_max_ps(a, _mm512_setzero_ps());
	else if (act == NPR_ACT_CLAMP)
		a = _mm512_min_ps(_mm512_max_ps(a, vlo), vhi);
	return a;
}

static void dw3s2_run(const struct npr_dw_tab *t, const float *x,
		      const float *w, const float *bias, float *y,
		      const float *res, int64_t p0, int64_t p1, int act,
		      float lo, float hi)
{
	const int64_t H = t->H, W = t->W, OH = t->OH, OW = t->OW, C = t->C;
	const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
	const __m512 vz = _mm512_setzero_ps();
	const __m512i ie = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16,
					    14, 12, 10, 8, 6, 4, 2, 0);
	const __m512i io = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17,
					    15, 13, 11, 9, 7, 5, 3, 1);
	/*
	 * two rows a vector (ie and io then take lanes 0-7 from the first
	 * input row, 8-15 from the second): the left tap, lanes 0 and 8 zero
	 */
	const __m512i il2 = _mm512_set_epi32(29, 27, 25, 23, 21, 19, 17, 0,
					     13, 11, 9, 7, 5, 3, 1, 0);
	int64_t pl, oy, ox0;

	for (pl = p0; pl < p1; pl++) {
		int64_t c = pl % C;
		const float *xp = x + pl * H * W, *wc = w + c * 9;
		float *yp = y + pl * OH * OW;
		const float *rp = res ? res + pl * OH * OW : NULL;
		const __m512 vb = _mm512_set1_ps(bias ? bias[c] : 0.0f);
		__m512 wk[9];
		int ky;

		for (ky = 0; ky < 9; ky++)
			wk[ky] = _mm512_set1_ps(wc[ky]);
		if (OW <= 8) {
			const __mmask16 m0 = (__mmask16)((1u << OW) - 1);

			for (oy = 0; oy < OH; oy += 2) {
				__m512 acc, part[3];
				__mmask16 m1;

				for (ky = 0; ky < 3; ky++) {
					int64_t iy = 2 * oy - 1 + ky;
					__m512 a = iy >= 0 && iy < H ?
						   dw3s2_row(xp + iy * W, W, 0) : vz;
					__m512 b = iy + 2 >= 0 && iy + 2 < H ?
						   dw3s2_row(xp + (iy + 2) * W, W, 0) :
						   vz;

					part[ky] = _mm512_mul_ps(wk[3 * ky],
						_mm512_maskz_permutex2var_ps(
							(__mmask16)0xfefe, a, il2, b));
					part[ky] = _mm512_fmadd_ps(wk[3 * ky + 1],
						_mm512_permutex2var_ps(a, ie, b),
						part[ky]);
					part[ky] = _mm512_fmadd_ps(wk[3 * ky + 2],
						_mm512_permutex2var_ps(a, io, b),
						part[ky]);
				}
				acc = _mm512_add_ps(vb, _mm512_add_ps(part[0],
						    _mm512_add_ps(part[1], part[2])));
				m1 = oy + 1 < OH ? (__mmask16)(m0 << 8) : 0;
				if (rp)
					acc = _mm512_add_ps(acc, _mm512_mask_loadu_ps(
						_mm512_maskz_loadu_ps(m0, rp + oy * OW),
						m1, rp + (oy + 1) * OW - 8));
				acc = dw3s2_epi(acc, NULL, 0, act, vlo, vhi);
				_mm512_mask_storeu_ps(yp + oy * OW, m0, acc);
				_mm512_mask_storeu_ps(yp + (oy + 1) * OW - 8, m1, acc);
			}
			continue;
		}
		for (oy = 0; oy < OH; oy++) {
			const float *r[3];
			__m512 op[3] = { vz, vz, vz };

			for (ky = 0; ky < 3; ky++) {
				int64_t iy = 2 * oy - 1 + ky;

				r[ky] = iy >= 0 && iy < H ? xp + iy * W : NULL;
			}
			for (ox0 = 0; ox0 < OW; ox0 += 16) {
				__mmask16 mo = OW - ox0 >= 16 ? 0xffff :
					       (__mmask16)((1u << (OW - ox0)) - 1);
				__m512 acc = vb, part[3] = { vz, vz, vz };

				/* a sum per tap row: three chains of three */
				for (ky = 0; ky < 3; ky++) {
					__m512 l, h, e, o;

					if (!r[ky])
						continue;
					l = dw3s2_row(r[ky], W, 2 * ox0);
					h = dw3s2_row(r[ky], W, 2 * ox0 + 16);
					e = _mm512_permutex2var_ps(l, ie, h);
					o = _mm512_permutex2var_ps(l, io, h);
					part[ky] = _mm512_mul_ps(wk[3 * ky],
						_mm512_castsi512_ps(_mm512_alignr_epi32(
							_mm512_castps_si512(o),
							_mm512_castps_si512(op[ky]), 15)));
					part[ky] = _mm512_fmadd_ps(wk[3 * ky + 1], e,
								   part[ky]);
					part[ky] = _mm512_fmadd_ps(wk[3 * ky + 2], o,
								   part[ky]);
					op[ky] = o;
				}
				acc = _mm512_add_ps(acc, _mm512_add_ps(part[0],
						    _mm512_add_ps(part[1], part[2])));
				acc = dw3s2_epi(acc, rp ? rp + oy * OW + ox0 : NULL,
						mo, act, vlo, vhi);
				_mm512_mask_storeu_ps(yp + oy * OW + ox0, mo, acc);
			}
		}
	}
}

/**
 * npr_dw_run_avx512() - depthwise planes [@p0, @p1) with a plan's tables
 * @t: the tables dw_tab_new() (ref/conv/conv.c) made for the geometry.
 * @x: the input planes, t->ipix floats each; plane p is channel p % C.
 * @w: the weights, t->taps per channel.
 * @bias: C values, or NULL.
 * @y: Out. The output planes, t->npix floats each.
 * @res: the residual, shaped like @y, or NULL.
 * @p0: the first plane (image times C plus channel).
 * @p1: the end plane.
 * @act: enum npr_act.
 * @lo: Clamp's lower bound.
 * @hi: Clamp's upper bound.
 *
 * 3x3 at stride 2 (t->s2) runs by rows, 3x3 with padding 1 and OH == H
 * (t->cm) shifts one load per row into the three taps, any other plane
 * takes a masked load per tap (t->m).  Built in the AVX-512 object only.
 */
void DW_RUN(const struct npr_dw_tab *t, const float *x, const float *w,
	    const float *bias, float *y, const float *res, int64_t p0,
	    int64_t p1, int act, float lo, float hi)
{
	if (t->s2)
		dw3s2_run(t, x, w, bias, y, res, p0, p1, act, lo, hi);
	else if (t->cm)
		dw3s_run(t, x, w, bias, y, res, p0, p1, act, lo, hi);
	else if (t->taps == 9)
		dw_run_planes(t, 9, x, w, bias, y, res, p0, p1, act, lo, hi);
	else
		dw_run_planes(t, t->taps, x, w, bias, y, res, p0, p1, act, lo,
			      hi);
}
#undef DW_VEC_BLK
#undef DW_VEC_ROWS
#undef DW3_ZW
#undef DW3_BIG
#undef DW3_STRIPS
#endif
