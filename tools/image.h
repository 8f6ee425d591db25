/* SPDX-License-Identifier: MIT */
/*
 * Images for the tools and tests: PNG loading, bilinear resize, and the
 * conversion to an NCHW tensor with the usual model preprocessing.
 */
#ifndef NPR_TOOLS_IMAGE_H
#define NPR_TOOLS_IMAGE_H

#include <stdbool.h>
#include <stdint.h>

/* 8-bit RGB, rows top to bottom, c = 3. */
struct npr_image {
	int w, h, c;
	uint8_t *px;
};

/**
 * struct npr_preproc - how pixels become tensor values
 * @rgb: channel order RGB (default BGR, as Open Model Zoo models expect).
 * @scale: multiplier applied after the mean is subtracted (1: 0..255).
 * @mean: per-channel mean, in the tensor's channel order.
 * @std: per-channel divisor, in the tensor's channel order.
 * @nhwc: write NHWC instead of NCHW.
 */
struct npr_preproc {
	bool rgb;
	float scale;
	float mean[3];
	float std[3];
	bool nhwc;
};

void npr_preproc_default(struct npr_preproc *pp);
int npr_image_load_png(const char *path, struct npr_image *img);
void npr_image_free(struct npr_image *img);
int npr_image_resize_bilinear(const struct npr_image *src, int w, int h,
			      struct npr_image *dst);
/* Writes w*h*3 values of elem_type (NPR_ELEM_F32 or NPR_ELEM_F16). */
int npr_image_to_tensor(const struct npr_image *img,
			const struct npr_preproc *pp, unsigned int elem_type,
			void *out);

/* f32 -> IEEE half, round to nearest even. */
uint16_t npr_half_from_float(float f);

#endif /* NPR_TOOLS_IMAGE_H */
