/* SPDX-License-Identifier: MIT */
/*
 * Winograd F(2x2, 3x3) input and output transforms, included by
 * ref/conv/wino.c (portable) and ref/arch/x86/wino_avx512.c (-mavx512f
 * -mfma -O3) with WINO_IN and WINO_OUT naming the two builds: the
 * suffix _generic is the portable one, _avx512 the one that runs only
 * where CPUID reports AVX-512F (its #ifdef __AVX512F__ parts compiled
 * in).  Each function is documented once below, under its _generic
 * name; the _avx512 build takes the same arguments.  The input transform
 * works on a block of tiles [t0, t1) (tile t at tile row t / tw, column
 * t % tw), the one the 16 matrix products of run.c's Winograd path then
 * take, so that V stays in L2; the output transform on the few tiles of
 * one product's tile, while their sums are in L1.
 *
 * The four input rows of a tile row are first copied, zero padded, into
 * @pad with their even and odd columns apart (a slot of 2 we floats:
 * even columns, then odd ones, we = tw + 1): the 4x4 tile tx then starts
 * at even column tx, and the loops run over consecutive tiles.  Tile
 * rows overlap by two input rows, which stay in their slots.
 */

/*
 * Input row @iy of plane @xc (zero outside it) with its padded columns
 * 2j at e[j], 2j + 1 at o[j], j < we.
 */
static inline void WINO_ROW(const struct npr_conv_desc *d, const float *xc,
			    int64_t iy, int64_t we, float *restrict e,
			    float *restrict o)
{
	const float *xr = xc + iy * d->W;	/* column ix at xr[ix] */
	int64_t j;

	if (iy < 0 || iy >= d->H) {
		memset(e, 0, sizeof(float) * 2 * we);
		return;
	}
#ifdef __AVX512F__
	{
		const __m512i ie = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18,
						    16, 14, 12, 10, 8, 6, 4, 2, 0);
		const __m512i io = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19,
						    17, 15, 13, 11, 9, 7, 5, 3, 1);

		/* padded columns 2j.. are input columns 2j - pw.. */
		for (j = 0; j < we; j += 16) {
			int64_t i0 = 2 * j - d->pw;
			int64_t l0 = i0 < 0 ? -i0 : 0;
			int64_t l1 = d->W - i0 < 32 ? d->W - i0 : 32;
			uint32_t m = 0;
			__mmask16 ks = we - j >= 16 ? 0xffff :
				(__mmask16)((1u << (we - j)) - 1);
			__m512 lo, hi;

			/* lanes [l0, l1) of the 32 are inside the row: a
			 * masked load touches no column outside it */
			if (l1 > l0)
				m = (l1 >= 32 ? ~0u : (1u << l1) - 1) &
				    ~((1u << l0) - 1);
			lo = _mm512_maskz_loadu_ps((__mmask16)m, xr + i0);
			hi = _mm512_maskz_loadu_ps((__mmask16)(m >> 16),
						   xr + i0 + 16);
			_mm512_mask_storeu_ps(e + j, ks,
					      _mm512_permutex2var_ps(lo, ie, hi));
			_mm512_mask_storeu_ps(o + j, ks,
					      _mm512_permutex2var_ps(lo, io, hi));
		}
	}
#else
	for (j = 0; j < we; j++) {
		int64_t i0 = 2 * j - d->pw;

		e[j] = i0 >= 0 && i0 < d->W ? xr[i0] : 0.0f;
		o[j] = i0 + 1 >= 0 && i0 + 1 < d->W ? xr[i0 + 1] : 0.0f;
	}
#endif
}

/**
 * npr_wino_in_generic() - the input transform V = B^T d B of a block of
 * tiles
 * @d: the geometry (3x3, stride 1, dilation 1).
 * @x: one image's input, [C, H, W].
 * @tw: tiles per tile row.
 * @t0: the first tile (tile t at tile row t / tw, column t % tw).
 * @t1: the end tile.
 * @pad: scratch of 8 (@tw + 1) floats.
 * @v: Out. V[xi][c][t - @t0], tile position xi = 4 i + j.
 * @ldv: the pitch of @v's rows (one per input channel).
 * @vs: the distance between the 16 matrices of @v.
 *
 * Also npr_wino_in_avx512() (see the top of this file).
 */
void WINO_IN(const struct npr_conv_desc *d, const float *x, int64_t tw,
	     int64_t t0, int64_t t1, float *restrict pad, float *restrict v,
	     int64_t ldv, int64_t vs)
{
	int64_t we = tw + 1, c, r, ty, tx, tx0, tx1;

	for (c = 0; c < d->C; c++) {
		const float *xc = x + c * d->H * d->W;
		/* the input row each of the four slots holds: tile rows
		 * share two, and row iy goes to slot iy & 3 */
		int64_t have[4] = { INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN };

		for (ty = t0 / tw; ty * tw < t1; ty++) {
			const float *a0, *a1, *a2, *a3, *b0, *b1, *b2, *b3;
			const float *rows[4];
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
				int64_t iy = 2 * ty + r - d->ph, sl = iy & 3;
				float *e = pad + sl * 2 * we;

				if (have[sl] != iy)
					WINO_ROW(d, xc, iy, we, e, e + we);
				have[sl] = iy;
				rows[r] = e;
			}
			a0 = rows[0]; a1 = rows[1]; a2 = rows[2]; a3 = rows[3];
			b0 = a0 + we; b1 = a1 + we; b2 = a2 + we; b3 = a3 + we;
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

/**
 * npr_wino_out_generic() - the output transform Y = A^T M A of @n tiles
 * @m: the sums as the pixel-major tile leaves them
 *     (npr_gemm_t7_avx512()): M[xi] of tile i, channel kk of the panel
 *     at m[xi * @ms + i * 64 + kk].
 * @ms: the distance between the 16 matrices of @m.
 * @n: the tiles.
 * @nv: vectors of 16 channels in the panel.
 * @r0: Out. The tiles' top output rows, r0[(2 i + b) * 64 + kk] for
 *      column b = 0, 1 of tile i.
 * @r1: Out. Their bottom output rows, laid out the same.
 *
 * Tile i's 2x2 outputs go pixel-major into the two rows, which the t7
 * write-out then transposes into the planes with the epilogue.  Vectors
 * run along the channels, so nothing is shuffled.  Also
 * npr_wino_out_avx512() (see the top of this file), which needs @m, @r0
 * and @r1 64-byte aligned and @ms a multiple of 16 (aligned loads and
 * stores).
 */
void WINO_OUT(const float *m, int64_t ms, int n, int nv, float *restrict r0,
	      float *restrict r1)
{
	int i, v;

	for (i = 0; i < n; i++)
		for (v = 0; v < nv; v++) {
			const float *q = m + i * 64 + v * 16;
			float *o0 = r0 + 2 * i * 64 + v * 16;
			float *o1 = r1 + 2 * i * 64 + v * 16;
#ifdef __AVX512F__
			__m512 s0[4], s1[4];
			int a;

			for (a = 0; a < 4; a++) {
				__m512 m0 = _mm512_load_ps(q + (4 * a) * ms);
				__m512 m1 = _mm512_load_ps(q + (4 * a + 1) * ms);
				__m512 m2 = _mm512_load_ps(q + (4 * a + 2) * ms);
				__m512 m3 = _mm512_load_ps(q + (4 * a + 3) * ms);
				__m512 t = _mm512_sub_ps(m1, m2);

				s0[a] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
				s1[a] = _mm512_sub_ps(t, m3);
			}
			_mm512_store_ps(o0, _mm512_add_ps(_mm512_add_ps(s0[0],
					s0[1]), s0[2]));
			_mm512_store_ps(o0 + 64, _mm512_add_ps(_mm512_add_ps(
					s1[0], s1[1]), s1[2]));
			_mm512_store_ps(o1, _mm512_sub_ps(_mm512_sub_ps(s0[1],
					s0[2]), s0[3]));
			_mm512_store_ps(o1 + 64, _mm512_sub_ps(_mm512_sub_ps(
					s1[1], s1[2]), s1[3]));
#else
			int kk, a;

			for (kk = 0; kk < 16; kk++) {
				float s0[4], s1[4];

				for (a = 0; a < 4; a++) {
					float m0 = q[(4 * a) * ms + kk];
					float m1 = q[(4 * a + 1) * ms + kk];
					float m2 = q[(4 * a + 2) * ms + kk];
					float m3 = q[(4 * a + 3) * ms + kk];

					s0[a] = m0 + m1 + m2;
					s1[a] = m1 - m2 - m3;
				}
				o0[kk] = s0[0] + s0[1] + s0[2];
				o0[64 + kk] = s1[0] + s1[1] + s1[2];
				o1[kk] = s0[1] - s0[2] - s0[3];
				o1[64 + kk] = s1[1] - s1[2] - s1[3];
			}
#endif
		}
}
