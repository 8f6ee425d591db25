/* SPDX-License-Identifier: MIT */
/*
 * The im2col packer for the GEMM's B operand, written once and compiled
 * twice: in run.c for any CPU and in ref/arch/x86/conv_dw_avx512.c with
 * -mavx512f -O3 (its copy and stride-2 loops vectorise there).  Define
 * PACK_IM2COL and UNPAD_ROWS to the functions' names first: the suffix
 * _generic names the portable build, _avx512 the one that runs only where
 * CPUID reports AVX-512F.  Each function is documented once below, under
 * its _generic name; the _avx512 build takes the same arguments.
 */

/**
 * npr_pack_im2col_generic() - pack rows [@k0, @k0 + @kc) and columns
 * [@j0, @j0 + @nc) of the im2col matrix into GEMM B panels
 * @src: a struct npr_im2col_src.
 * @k0: first row (input channel c at tap (ky, kx)).
 * @kc: rows.
 * @j0: first column (output pixel).
 * @nc: columns, at most NPR_PACK_NC.
 * @nr: panel width.
 * @dst: Out. The panels, @nr columns each, zero past @nc.
 *
 * Row k of the im2col matrix is input channel c at tap (ky, kx); column j
 * is output pixel (oy, ox).  Each row is built contiguous in L1 first, one
 * output row at a time (the input row is fixed there, and the pixels whose
 * tap falls inside it form one range: zeros, a vector copy, zeros), then
 * cut into the NR-wide panels.  Two passes, but both are long vector
 * loops; writing panels directly cut runs at every panel edge and was
 * three times slower.  Also npr_pack_im2col_avx512() (see the top of this
 * file).
 */
void PACK_IM2COL(const void *src, int64_t k0, int64_t kc, int64_t j0,
		 int64_t nc, int nr, float *dst)
{
	const struct npr_im2col_src *s = src;
	const struct npr_conv_desc *d = s->d;
	int64_t taps = d->kh * d->kw, k, ncp = (nc + nr - 1) / nr * nr;
	int64_t pstride = kc * nr;
	float row[NPR_PACK_NC + 64];

	for (k = 0; k < kc; k++) {
		int64_t kk = k0 + k, c = kk / taps, r = kk % taps;
		int64_t ky = r / d->kw, kx = r % d->kw;
		const float *xc = s->x + c * d->H * d->W;
		int64_t off = kx * d->dw - d->pw, o0, o1, q, p;
		int64_t oy = j0 / d->OW, ox = j0 % d->OW;

		/* valid ox: 0 <= ox * sw + off < W */
		o0 = off >= 0 ? 0 : (-off + d->sw - 1) / d->sw;
		o1 = d->W - 1 - off < 0 ? 0 : (d->W - 1 - off) / d->sw + 1;
		if (o1 > d->OW)
			o1 = d->OW;
		if (o0 > o1)
			o0 = o1;
		/* 1: the row of the im2col matrix, contiguous, in L1 */
		for (q = 0; q < nc; oy++, ox = 0) {
			int64_t run = d->OW - ox, iy, a, b, t;
			float *restrict o = row + q - ox;

			if (run > nc - q)
				run = nc - q;
			iy = oy * d->sh - d->ph + ky * d->dh;
			a = ox < o0 ? o0 : ox;
			b = ox + run < o1 ? ox + run : o1;
			if (iy < 0 || iy >= d->H || a > b)
				a = b = ox + run;
			for (t = ox; t < a; t++)
				o[t] = 0.0f;
			if (a < b) {
				const float *restrict xr = xc + iy * d->W + off;

				if (d->sw == 1)
					for (t = a; t < b; t++)
						o[t] = xr[t];
				else if (d->sw == 2)
					for (t = a; t < b; t++)
						o[t] = xr[2 * t];
				else
					for (t = a; t < b; t++)
						o[t] = xr[t * d->sw];
			}
			for (t = b; t < ox + run; t++)
				o[t] = 0.0f;
			q += run;
		}
		for (; q < ncp; q++)
			row[q] = 0.0f;
		/* 2: its NR-wide pieces into the panels */
		for (p = 0; p < ncp; p += nr) {
			float *restrict dp = dst + (p / nr) * pstride + k * nr;
			int l;

			for (l = 0; l < nr; l++)
				dp[l] = row[p + l];
		}
	}
}

/**
 * npr_unpad_rows_generic() - the direct path's write-out: output channels
 * [@k0, @k1) computed at pitch @wp, into @y at pitch OW, with the epilogue
 * @d: geometry.
 * @t: the sums, OH rows of pitch @wp per channel.
 * @wp: the padded plane's pitch.
 * @y: Out. The output planes.
 * @bias: K values, or NULL.
 * @res: the residual, shaped like @y, or NULL.
 * @act: enum npr_act.
 * @lo: Clamp's lower bound.
 * @hi: Clamp's upper bound.
 * @k0: first channel.
 * @k1: end channel.
 *
 * The GEMM of a direct (stride 1) convolution wrote the output rows at
 * the padded input's pitch; the OW valid columns of each row are copied
 * into @y with the bias, the residual and the activation.  Also
 * npr_unpad_rows_avx512() (see the top of this file).
 */
void UNPAD_ROWS(const struct npr_conv_desc *d, const float *t, int64_t wp,
		float *y, const float *bias, const float *res, int act,
		float lo, float hi, int64_t k0, int64_t k1)
{
	int64_t k, oy, ox, npix = d->OH * d->OW;

	for (k = k0; k < k1; k++) {
		float b = bias ? bias[k] : 0.0f;

		for (oy = 0; oy < d->OH; oy++) {
			const float *restrict tr = t + (k * d->OH + oy) * wp;
			float *restrict yr = y + k * npix + oy * d->OW;
			const float *restrict rr = res ?
				res + k * npix + oy * d->OW : NULL;

			if (rr)
				for (ox = 0; ox < d->OW; ox++)
					yr[ox] = tr[ox] + b + rr[ox];
			else
				for (ox = 0; ox < d->OW; ox++)
					yr[ox] = tr[ox] + b;
			if (act == NPR_ACT_RELU)
				for (ox = 0; ox < d->OW; ox++)
					yr[ox] = yr[ox] > 0 ? yr[ox] : 0;
			else if (act == NPR_ACT_CLAMP)
				for (ox = 0; ox < d->OW; ox++) {
					float v = yr[ox] < lo ? lo : yr[ox];

					yr[ox] = v > hi ? hi : v;
				}
		}
	}
}
