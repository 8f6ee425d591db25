/* SPDX-License-Identifier: MIT */
/*
 * Winograd F(2x2, 3x3) input and output transforms, included by
 * wino.c (portable) and wino_avx512.c (-mavx512f -mfma -O3) with
 * WINO_IN and WINO_OUT naming the two builds.  See conv.c's Winograd
 * path for the layout of V and M.
 *
 * The input plane of channel c is first copied, zero padded, into @pad
 * with its even and odd columns apart (row r: even columns at
 * pad[r * 2 * we], odd ones at pad[r * 2 * we + we], we = tw + 1): the
 * 4x4 tile tx then starts at even column tx, and every loop below runs
 * over consecutive tiles.
 */

void WINO_IN(const struct npr_conv_desc *d, const float *x, int64_t th,
	     int64_t tw, int64_t c0, int64_t c1, float *restrict pad,
	     float *restrict v, int64_t vs)
{
	int64_t we = tw + 1, hp = 2 * th + 2, T = th * tw, c, r, j, ty, tx;

	for (c = c0; c < c1; c++) {
		const float *xc = x + c * d->H * d->W;

		for (r = 0; r < hp; r++) {
			float *e = pad + r * 2 * we, *o = e + we;
			int64_t iy = r - d->ph;

			if (iy < 0 || iy >= d->H) {
				memset(e, 0, sizeof(float) * 2 * we);
				continue;
			}
			for (j = 0; j < we; j++) {
				int64_t ix = 2 * j - d->pw;

				e[j] = ix >= 0 && ix < d->W ?
				       xc[iy * d->W + ix] : 0.0f;
				o[j] = ix + 1 >= 0 && ix + 1 < d->W ?
				       xc[iy * d->W + ix + 1] : 0.0f;
			}
		}
		for (ty = 0; ty < th; ty++) {
			const float *e0 = pad + 2 * ty * 2 * we;
			const float *e1 = e0 + 2 * we, *e2 = e1 + 2 * we;
			const float *e3 = e2 + 2 * we;
			float *vo = v + c * T + ty * tw;

			for (tx = 0; tx < tw; tx++) {
				const float *row[4] = { e0, e1, e2, e3 };
				float h[4][4];
				int k;

				for (k = 0; k < 4; k++) {
					const float *ev = row[k], *ov = row[k] + we;
					float a0 = ev[tx], b0 = ov[tx];
					float a1 = ev[tx + 1], b1 = ov[tx + 1];

					h[k][0] = a0 - a1;
					h[k][1] = b0 + a1;
					h[k][2] = a1 - b0;
					h[k][3] = b0 - b1;
				}
				for (k = 0; k < 4; k++) {
					vo[(0 * 4 + k) * vs + tx] = h[0][k] - h[2][k];
					vo[(1 * 4 + k) * vs + tx] = h[1][k] + h[2][k];
					vo[(2 * 4 + k) * vs + tx] = h[2][k] - h[1][k];
					vo[(3 * 4 + k) * vs + tx] = h[1][k] - h[3][k];
				}
			}
		}
	}
}

void WINO_OUT(const struct npr_conv_desc *d, const float *m, int64_t ms,
	      int64_t th, int64_t tw, int64_t k0, int64_t k1, float *y,
	      const float *bias, const float *res, int act, float lo,
	      float hi, float *restrict row)
{
	int64_t T = th * tw, npix = d->OH * d->OW, k, ty, tx, a, ox;
	float *restrict r0 = row, *restrict r1 = row + 2 * tw;

	for (k = k0; k < k1; k++) {
		float b = bias ? bias[k] : 0.0f;

		for (ty = 0; ty < th; ty++) {
			const float *mk = m + k * T + ty * tw;

			for (tx = 0; tx < tw; tx++) {
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
			for (a = 0; a < 2 && 2 * ty + a < d->OH; a++) {
				int64_t off = k * npix + (2 * ty + a) * d->OW;
				const float *src = a ? r1 : r0;
				const float *rs = res ? res + off : NULL;
				float *dst = y + off;

				for (ox = 0; ox < d->OW; ox++) {
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
