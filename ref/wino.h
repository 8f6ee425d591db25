/* SPDX-License-Identifier: MIT */
/*
 * Winograd F(2x2, 3x3) input and output transforms, included by
 * wino.c (portable) and wino_avx512.c (-mavx512f -mfma -O3) with
 * WINO_IN and WINO_OUT naming the two builds.  Both work on a block of
 * tiles [t0, t1) (tile t at tile row t / tw, column t % tw), the one
 * the 16 GEMMs of conv.c's Winograd path then take, so that V and M
 * stay in L2.
 *
 * The four input rows of a tile row are first copied, zero padded, into
 * @pad with their even and odd columns apart (row r: even columns at
 * pad[r * 2 * we], odd ones at pad[r * 2 * we + we], we = tw + 1): the
 * 4x4 tile tx then starts at even column tx, and the loops run over
 * consecutive tiles.
 */

void WINO_IN(const struct npr_conv_desc *d, const float *x, int64_t tw,
	     int64_t t0, int64_t t1, float *restrict pad, float *restrict v,
	     int64_t ldv, int64_t vs)
{
	int64_t we = tw + 1, c, r, j, ty, tx, tx0, tx1;
	int64_t je0 = (d->pw + 1) / 2, je1 = (d->W + d->pw + 1) / 2;
	int64_t jo0 = d->pw / 2, jo1 = (d->W + d->pw) / 2;

	/* padded columns 2j (even), 2j + 1 (odd) that are inside the row */
	if (je1 > we)
		je1 = we;
	if (jo1 > we)
		jo1 = we;
	for (c = 0; c < d->C; c++) {
		const float *xc = x + c * d->H * d->W;

		for (ty = t0 / tw; ty * tw < t1; ty++) {
			const float *a0 = pad, *a1 = a0 + 2 * we;
			const float *a2 = a1 + 2 * we, *a3 = a2 + 2 * we;
			const float *b0 = a0 + we, *b1 = a1 + we;
			const float *b2 = a2 + we, *b3 = a3 + we;
			float *restrict v0, *restrict v1, *restrict v2, *restrict v3;
			float *restrict v4, *restrict v5, *restrict v6, *restrict v7;
			float *restrict v8, *restrict v9, *restrict v10;
			float *restrict v11, *restrict v12, *restrict v13;
			float *restrict v14, *restrict v15;

			tx0 = ty * tw < t0 ? t0 - ty * tw : 0;
			tx1 = (ty + 1) * tw > t1 ? t1 - ty * tw : tw;
			/* the 16 matrices apart, for the compiler */
			v0 = v + c * ldv + ty * tw - t0;
			v1 = v0 + vs; v2 = v1 + vs; v3 = v2 + vs;
			v4 = v3 + vs; v5 = v4 + vs; v6 = v5 + vs;
			v7 = v6 + vs; v8 = v7 + vs; v9 = v8 + vs;
			v10 = v9 + vs; v11 = v10 + vs; v12 = v11 + vs;
			v13 = v12 + vs; v14 = v13 + vs; v15 = v14 + vs;
			for (r = 0; r < 4; r++) {
				float *restrict e = pad + r * 2 * we;
				float *restrict o = e + we;
				int64_t iy = 2 * ty + r - d->ph;
				const float *xr;

				memset(e, 0, sizeof(float) * 2 * we);
				if (iy < 0 || iy >= d->H)
					continue;
				/* column ix of the row at xr[ix + pw] */
				xr = xc + iy * d->W - d->pw;
				for (j = je0; j < je1; j++)
					e[j] = xr[2 * j];
				for (j = jo0; j < jo1; j++)
					o[j] = xr[2 * j + 1];
			}
#ifdef __AVX512F__
			for (tx = tx0; tx < tx1; tx += 16) {
				__mmask16 k = tx1 - tx >= 16 ? 0xffff :
					(__mmask16)((1u << (tx1 - tx)) - 1);
/* row (e, o) of 16 tiles, its horizontal transform into h0..h3 */
#define WINO_HV(e, o, h0, h1, h2, h3)					\
	__m512 h0, h1, h2, h3;						\
	do {								\
		__m512 e0_ = _mm512_maskz_loadu_ps(k, e + tx);		\
		__m512 e1_ = _mm512_maskz_loadu_ps(k, e + tx + 1);	\
		__m512 o0_ = _mm512_maskz_loadu_ps(k, o + tx);		\
		__m512 o1_ = _mm512_maskz_loadu_ps(k, o + tx + 1);	\
		h0 = _mm512_sub_ps(e0_, e1_);				\
		h1 = _mm512_add_ps(o0_, e1_);				\
		h2 = _mm512_sub_ps(e1_, o0_);				\
		h3 = _mm512_sub_ps(o0_, o1_);				\
	} while (0)
				WINO_HV(a0, b0, p0, p1, p2, p3);
				WINO_HV(a1, b1, q0, q1, q2, q3);
				WINO_HV(a2, b2, r0, r1, r2, r3);
				WINO_HV(a3, b3, s0, s1, s2, s3);
#undef WINO_HV
#define WINO_ST(vp, x) _mm512_mask_storeu_ps(vp + tx, k, x)
				WINO_ST(v0, _mm512_sub_ps(p0, r0));
				WINO_ST(v1, _mm512_sub_ps(p1, r1));
				WINO_ST(v2, _mm512_sub_ps(p2, r2));
				WINO_ST(v3, _mm512_sub_ps(p3, r3));
				WINO_ST(v4, _mm512_add_ps(q0, r0));
				WINO_ST(v5, _mm512_add_ps(q1, r1));
				WINO_ST(v6, _mm512_add_ps(q2, r2));
				WINO_ST(v7, _mm512_add_ps(q3, r3));
				WINO_ST(v8, _mm512_sub_ps(r0, q0));
				WINO_ST(v9, _mm512_sub_ps(r1, q1));
				WINO_ST(v10, _mm512_sub_ps(r2, q2));
				WINO_ST(v11, _mm512_sub_ps(r3, q3));
				WINO_ST(v12, _mm512_sub_ps(q0, s0));
				WINO_ST(v13, _mm512_sub_ps(q1, s1));
				WINO_ST(v14, _mm512_sub_ps(q2, s2));
				WINO_ST(v15, _mm512_sub_ps(q3, s3));
#undef WINO_ST
			}
#else
			for (tx = tx0; tx < tx1; tx++) {
/* row @a of the tile, its horizontal transform into h0..h3 */
#define WINO_H(e, o, h0, h1, h2, h3)					\
	float h0 = e[tx] - e[tx + 1], h1 = o[tx] + e[tx + 1];		\
	float h2 = e[tx + 1] - o[tx], h3 = o[tx] - o[tx + 1]
				WINO_H(a0, b0, p0, p1, p2, p3);
				WINO_H(a1, b1, q0, q1, q2, q3);
				WINO_H(a2, b2, r0, r1, r2, r3);
				WINO_H(a3, b3, s0, s1, s2, s3);
#undef WINO_H
				v0[tx] = p0 - r0;
				v1[tx] = p1 - r1;
				v2[tx] = p2 - r2;
				v3[tx] = p3 - r3;
				v4[tx] = q0 + r0;
				v5[tx] = q1 + r1;
				v6[tx] = q2 + r2;
				v7[tx] = q3 + r3;
				v8[tx] = r0 - q0;
				v9[tx] = r1 - q1;
				v10[tx] = r2 - q2;
				v11[tx] = r3 - q3;
				v12[tx] = q0 - s0;
				v13[tx] = q1 - s1;
				v14[tx] = q2 - s2;
				v15[tx] = q3 - s3;
			}
#endif
		}
	}
}

void WINO_OUT(const struct npr_conv_desc *d, const float *m, int64_t ldm,
	      int64_t ms, int64_t tw, int64_t t0, int64_t t1, float *y,
	      const float *bias, const float *res, int act, float lo,
	      float hi, float *restrict row)
{
	int64_t npix = d->OH * d->OW, k, ty, tx, tx0, tx1, a, ox, ox1;
	float *restrict r0 = row, *restrict r1 = row + 2 * tw;

	for (k = 0; k < d->K; k++) {
		float b = bias ? bias[k] : 0.0f;

		for (ty = t0 / tw; ty * tw < t1; ty++) {
			const float *mk = m + k * ldm + ty * tw - t0;

			tx0 = ty * tw < t0 ? t0 - ty * tw : 0;
			tx1 = (ty + 1) * tw > t1 ? t1 - ty * tw : tw;
#ifdef __AVX512F__
			for (tx = tx0; tx < tx1; tx += 16) {
				const __m512i lo = _mm512_set_epi32(23, 7, 22, 6,
					21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
				const __m512i hi = _mm512_set_epi32(31, 15, 30, 14,
					29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
				int64_t n = tx1 - tx < 16 ? tx1 - tx : 16;
				__mmask16 k = (__mmask16)((1u << n) - 1);
				__mmask16 kl = n >= 8 ? 0xffff :
					(__mmask16)((1u << 2 * n) - 1);
				__mmask16 kh = n <= 8 ? 0 :
					(__mmask16)((1u << (2 * n - 16)) - 1);
				__m512 s0[4], s1[4], y00, y01, y10, y11;
				int i;

				for (i = 0; i < 4; i++) {
					const float *q = mk + i * 4 * ms + tx;
					__m512 m0 = _mm512_maskz_loadu_ps(k, q);
					__m512 m1 = _mm512_maskz_loadu_ps(k, q + ms);
					__m512 m2 = _mm512_maskz_loadu_ps(k, q + 2 * ms);
					__m512 m3 = _mm512_maskz_loadu_ps(k, q + 3 * ms);
					__m512 t = _mm512_sub_ps(m1, m2);

					s0[i] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
					s1[i] = _mm512_sub_ps(t, m3);
				}
				y00 = _mm512_add_ps(_mm512_add_ps(s0[0], s0[1]), s0[2]);
				y01 = _mm512_add_ps(_mm512_add_ps(s1[0], s1[1]), s1[2]);
				y10 = _mm512_sub_ps(_mm512_sub_ps(s0[1], s0[2]), s0[3]);
				y11 = _mm512_sub_ps(_mm512_sub_ps(s1[1], s1[2]), s1[3]);
				_mm512_mask_storeu_ps(r0 + 2 * tx, kl,
					_mm512_permutex2var_ps(y00, lo, y01));
				_mm512_mask_storeu_ps(r0 + 2 * tx + 16, kh,
					_mm512_permutex2var_ps(y00, hi, y01));
				_mm512_mask_storeu_ps(r1 + 2 * tx, kl,
					_mm512_permutex2var_ps(y10, lo, y11));
				_mm512_mask_storeu_ps(r1 + 2 * tx + 16, kh,
					_mm512_permutex2var_ps(y10, hi, y11));
			}
#else
			for (tx = tx0; tx < tx1; tx++) {
				float s0[4], s1[4];
				int i;

				for (i = 0; i < 4; i++) {
					float m0 = mk[(i * 4 + 0) * ms + tx];
					float m1 = mk[(i * 4 + 1) * ms + tx];
					float m2 = mk[(i * 4 + 2) * ms + tx];
					float m3 = mk[(i * 4 + 3) * ms + tx];

					s0[i] = m0 + m1 + m2;
					s1[i] = m1 - m2 - m3;
				}
				r0[2 * tx] = s0[0] + s0[1] + s0[2];
				r0[2 * tx + 1] = s1[0] + s1[1] + s1[2];
				r1[2 * tx] = s0[1] - s0[2] - s0[3];
				r1[2 * tx + 1] = s1[1] - s1[2] - s1[3];
			}
#endif
			ox1 = 2 * tx1 < d->OW ? 2 * tx1 : d->OW;
			for (a = 0; a < 2 && 2 * ty + a < d->OH; a++) {
				int64_t off = k * npix + (2 * ty + a) * d->OW;
				const float *src = a ? r1 : r0;
				const float *rs = res ? res + off : NULL;
				float *dst = y + off;

				for (ox = 2 * tx0; ox < ox1; ox++) {
					float v = src[ox] + b;

					if (rs)
						v += rs[ox];
					if (act == NPR_ACT_RELU)
						v = v > 0 ? v : 0;
					else if (act == NPR_ACT_CLAMP)
						v = v < lo ? lo : v > hi ? hi : v;
					dst[ox] = v;
				}
			}
		}
	}
}
