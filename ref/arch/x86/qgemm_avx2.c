// SPDX-License-Identifier: MIT
/*
 * NprQConv's matrix kernel with AVX2, built with -mavx2 -mfma.
 *
 * vpmaddubsw would multiply u8 by s8 and add pairs into a saturating
 * i16: 255 x 127 x 2 does not fit, so its results would depend on the
 * data.  This kernel stays exact instead, and so gives the bits of the
 * other variants: the bytes of each group of four are split into i16
 * lanes (activations zero-extended, weights sign-extended) and
 * vpmaddwd sums the pairs into i32.  That is two vpmaddwd per four
 * reductions of eight pixels where vpmaddubsw needs one plus the
 * vpmaddwd that widens it: about 1.5x its instructions, and no accuracy
 * lost.
 */
#include <immintrin.h>

static inline __m256i dot16(__m256i acc, __m256i x, __m256i w)
{
	__m256i m = _mm256_set1_epi32(0x00ff00ff);
	__m256i xe = _mm256_and_si256(x, m);
	__m256i xo = _mm256_srli_epi16(x, 8);
	__m256i we = _mm256_srai_epi16(_mm256_slli_epi16(w, 8), 8);
	__m256i wo = _mm256_srai_epi16(w, 8);

	acc = _mm256_add_epi32(acc, _mm256_madd_epi16(xe, we));
	return _mm256_add_epi32(acc, _mm256_madd_epi16(xo, wo));
}

#define DOT(acc, x, w)	dot16(acc, x, w)

/*
 * dot16() in parts, for a kernel that reuses them: the weights' even and
 * odd bytes widened once, each pixel's bytes once.
 */
struct dot_w {
	__m256i e, o;
};

struct dot_x {
	__m256i e, o;
};

static inline struct dot_w dot_w(__m256i w)
{
	return (struct dot_w){ _mm256_srai_epi16(_mm256_slli_epi16(w, 8), 8),
			       _mm256_srai_epi16(w, 8) };
}

static inline struct dot_x dot_x(__m256i x)
{
	return (struct dot_x){ _mm256_and_si256(x, _mm256_set1_epi32(
							0x00ff00ff)),
			       _mm256_srli_epi16(x, 8) };
}

static inline __m256i dot_split(__m256i acc, struct dot_x x, struct dot_w w)
{
	acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x.e, w.e));
	return _mm256_add_epi32(acc, _mm256_madd_epi16(x.o, w.o));
}

#define DOT_SPLIT
#define KERN		npr_qgemm_avx2
#define KERN_NHWC	npr_qnhwc_avx2
#define KERN_DW		npr_qdwn_avx2
#include "qgemm_avx256.h"

/* the depthwise kernel, vectorized with this file's flags */
#define QDW	npr_qdw_avx2
#define QDW_TAP	qdw_tap
#include "ref/kernels/qdw.h"
