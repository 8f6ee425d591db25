/* SPDX-License-Identifier: MIT */
/*
 * The depthwise plane kernel, written once and compiled twice: in conv.c
 * for any CPU and in conv_dw_avx512.c with -mavx512f, where the row loops
 * vectorise 16 wide.  Define DW_PLANE to the function's name first.
 *
 * One output row at a time stays in L1: it starts at the bias, each tap
 * whose input row exists adds a weighted input row over the output
 * pixels whose tap is inside the input, then the residual and activation.
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
