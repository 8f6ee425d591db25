/* SPDX-License-Identifier: MIT */
/*
 * The depthwise plane kernel, written once and compiled twice: in conv.c
 * for any CPU and in conv_dw_avx512.c with -mavx512f, where the row loops
 * vectorise 16 wide.  Define DW_PLANE to the function's name first.
 *
 * One output row at a time stays in L1: it starts at the bias, each tap
 * whose input row exists adds a weighted input row over the output
 * pixels whose tap is inside the input, then the residual and activation.
 * DW_FLAT (below) is faster for strides 1 and 2; DW_PLANE serves the
 * rest and is what DW_FLAT falls back to when it cannot get memory.
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

	if ((size_t)(4 * ps + 64 + 2 * wh) > cap) {
		free(buf);
		cap = 4 * ps + 64 + 2 * wh;
		buf = malloc(sizeof(float) * cap);
		npr_free_at_thread_exit(&buf);
		if (!buf) {
			cap = 0;
			return -1;
		}
	}
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
	if ((size_t)(Hp * Wp) > cap) {
		free(buf);
		cap = Hp * Wp;
		buf = malloc(sizeof(float) * cap);
		npr_free_at_thread_exit(&buf);
		geo[0] = -1;
		if (!buf) {
			cap = 0;
			return -1;
		}
	}
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
