/* SPDX-License-Identifier: MIT */
/*
 * Private to ref/conv: the plan (struct npr_conv_plan) that conv.c
 * builds and run.c runs, and the limits both read.
 */
#ifndef NPR_REF_CONV_INTERNAL_H
#define NPR_REF_CONV_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "conv.h"
#include "ops/eltwise.h"
#include "sys.h"

enum { PATH_GEMM1X1, PATH_IM2COL, PATH_DW, PATH_DIRECT, PATH_T };

struct npr_conv_plan {
	struct npr_conv_desc d;
	int path;
	int64_t cg, kg;			/* channels per group in, out */
	struct npr_gemm_a *a;		/* per group */
	float *wdw;			/* depthwise: [C][kh*kw] */
	int (*dw_flat)(const struct npr_conv_desc *, const float *,
		       const float *, float *, const float *, float, int,
		       float, float);
	int (*dw_vec)(const struct npr_conv_desc *, const float *,
		      const float *, float *, const float *, float, int,
		      float, float);
	/* a window over the whole plane (global depthwise): a dot product */
	void (*dw_dot)(const float *, const float *, int64_t, int64_t,
		       float *);
	void (*dw_plane)(const struct npr_conv_desc *, const float *,
			 const float *, float *, const float *, float, int,
			 float, float);
	struct npr_dw_tab *dwt;		/* depthwise: small planes, by runs */
	float *bias;
	npr_gemm_pack_b pack;		/* im2col packer for this CPU */
	void (*unpad)(const struct npr_conv_desc *, const float *, int64_t,
		      float *, const float *, const float *, int, float,
		      float, int64_t, int64_t);
	int64_t hp, wp;			/* direct: padded input plane */
	int64_t *boff;			/* direct: offset of each GEMM row */
	float *wt;			/* T: weights [K / 64][C * taps][64] */
	int64_t np, tw;			/* T: channel panels, tiles per row */
	bool flat;			/* T: 1x1, the plane as one row */
	bool sweep;			/* T: several images per sweep */
	bool pooled;			/* T: a MaxPool fused, see pool */
	bool mean;			/* T: the mean over the plane fused */
	struct npr_pool_desc pool;
	bool residual;
	int act;
	float lo, hi;
	bool borrowed;			/* a[].data, wdw, wt, wu[]: prepared,
					 * not ours */
	const struct npr_gemm_kern *kern;	/* what the plan was made for */
	float **wu;			/* Winograd: U[16], see wino_new() */
	int64_t wth, wtw;		/* Winograd: tiles per column, row */
	int64_t *wboff;			/* Winograd: row c of V[xi] */
	int64_t wnb;			/* Winograd: most tiles a block */
	int64_t wsub;			/* Winograd: groups a sub-block */
	int post;			/* NPR_POST_*, see npr_conv_plan_post() */
	float *pslope;			/* PReLU: 1 or K slopes */
	int64_t npslope;
	struct npr_eltwise_params pop;	/* NPR_POST_UNARY: the activation */
	float pbeta;
};


/* The pixel-major path (PATH_T, see conv.c). */
/*
 * depth block: 1024 rows of a panel's weights are 256 KiB, which stay in
 * L2 while the block's tiles sweep them; fewer blocks mean fewer round
 * trips of the sums (256 measured 1-2% slower on every layer tried)
 */
#define T_KC			1024
#define T_MAXPIX		16384
#define T_MAXBUF		(4 << 20)	/* bytes of sums per image */
#define T_MAXSWEEP		(8 << 20)	/* bytes of sums per sweep */

/* The Winograd path (see conv.c). */
#define WINO_MINC	16
#define WINO_MINK	32
#define WINO_MINTILES	32
#define WINO_DEEP	128	/* input channels */
#define WINO_VBYTES	(512 << 10)	/* V of a block */

/* NPR_CONV_WINO=1: wherever the shape fits, however few tiles (tests) */
static inline bool wino_forced(void)
{
	return npr_env(NPR_ENV_CONV_WINO);
}

#endif /* NPR_REF_CONV_INTERNAL_H */
