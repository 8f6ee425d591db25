/* SPDX-License-Identifier: MIT */
/*
 * The ops the CPU backend's graph fusion pass (lib/passes/lmfuse.c) makes
 * of a transformer's primitive ops: FusedAttention-1 and FusedNorm-1.
 * Attributes and shape inference in lib/ops/fused.c, the kernels in
 * ref/kernels/fused.c.  They are not OpenVINO ops: no file declares
 * them, only a compiled graph (and a blob of it) holds them.
 */
#ifndef NPR_OPS_FUSED_H
#define NPR_OPS_FUSED_H

#include "graph/graph.h"

enum npr_fattn_mask {
	NPR_FATTN_MASK_NONE,	/* no mask input */
	NPR_FATTN_MASK_ADD,	/* f32 mask added to the scaled scores */
	NPR_FATTN_MASK_SELECT,	/* boolean mask: where it is @fill_when,
				 * the score becomes @fill */
};

/**
 * struct npr_fattn_params - attributes of FusedAttention
 * @scale: the scores are (query . key) * @scale.
 * @key_t: key is given as [..., E, S] (a pre-transposed key).
 * @mask: enum npr_fattn_mask, from attribute "mask".
 * @fill_when: NPR_FATTN_MASK_SELECT: the mask value that replaces a score.
 * @fill: NPR_FATTN_MASK_SELECT: the score put there (often -inf).
 */
struct npr_fattn_params {
	float scale;
	bool key_t;
	int mask;
	bool fill_when;
	float fill;
};

enum npr_fnorm_mode {
	NPR_FNORM_LAYER,	/* (x - mean) / std */
	NPR_FNORM_RMS,		/* x / root mean square */
};

/**
 * struct npr_fnorm_params - attributes of FusedNorm
 * @mode: enum npr_fnorm_mode.
 * @axis: the first normalized axis (attribute "axis", negative counts
 *        from the end); infer stores it counted from the front.
 * @eps: epsilon.
 * @inside: eps is added to the variance (mean square), else to its square
 *          root.
 */
struct npr_fnorm_params {
	int mode;
	int64_t axis;
	float eps;
	bool inside;
};

int npr_fattn_shape(const struct npr_shape *q, const struct npr_shape *k,
		    const struct npr_shape *v, bool key_t,
		    struct npr_shape *out, struct npr_shape *scores);

bool npr_fnorm_param_ok(const struct npr_shape *x, int64_t axis,
			const struct npr_shape *p);

#endif /* NPR_OPS_FUSED_H */
