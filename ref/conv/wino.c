// SPDX-License-Identifier: MIT
/*
 * Winograd F(2x2, 3x3): the weight transform and the portable build of
 * the input and output transforms (wino.h).  The path itself (tiles,
 * the 16 GEMMs, threads) is planned in conv.c and run in run.c.
 *
 * With g a 3x3 kernel, d a 4x4 input tile and Y the 2x2 output tile,
 * Y = A^T [(G g G^T) . (B^T d B)] A, where
 *   G   = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1],
 *   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1],
 *   A^T = [1 1 1 0; 0 1 -1 -1]
 * (the correlation a convolution layer computes).  Summed over input
 * channels, the 16 element-wise products are 16 matrix products
 * M[xi] = U[xi] V[xi], U[xi] [K x C], V[xi] [C x tiles].
 */
#include <stdint.h>
#include <string.h>

#include "conv.h"

#define WINO_IN npr_wino_in_generic
#define WINO_OUT npr_wino_out_generic
#define WINO_ROW wino_row_generic
#include "wino.h"

/**
 * npr_wino_weights() - the weight transform U = G g G^T
 * @w: the weights, [K, C, 3, 3].
 * @K: output channels.
 * @C: input channels.
 * @u: Out. U[xi][K][C] for the 16 tile positions xi = 4 i + j, 16 K C
 *     floats.
 */
void npr_wino_weights(const float *w, int64_t K, int64_t C, float *u)
{
	static const float G[4][3] = {
		{ 1.0f, 0.0f, 0.0f }, { 0.5f, 0.5f, 0.5f },
		{ 0.5f, -0.5f, 0.5f }, { 0.0f, 0.0f, 1.0f },
	};
	int64_t k, c;
	int i, j, a, b;

	for (k = 0; k < K; k++)
		for (c = 0; c < C; c++) {
			const float *g = w + (k * C + c) * 9;
			float t[4][3];

			for (i = 0; i < 4; i++)	/* G g */
				for (b = 0; b < 3; b++)
					t[i][b] = G[i][0] * g[b] +
						  G[i][1] * g[3 + b] +
						  G[i][2] * g[6 + b];
			for (i = 0; i < 4; i++)	/* (G g) G^T */
				for (j = 0; j < 4; j++) {
					float s = 0.0f;

					for (a = 0; a < 3; a++)
						s += t[i][a] * G[j][a];
					u[((i * 4 + j) * K + k) * C + c] = s;
				}
		}
}
