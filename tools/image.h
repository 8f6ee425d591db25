/* SPDX-License-Identifier: MIT */
/*
 * Images for the tools and tests: PNG and JPEG loading, bilinear resize, and the
 * conversion to a model input tensor with the usual preprocessing.
 */
#ifndef NPR_TOOLS_IMAGE_H
#define NPR_TOOLS_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * struct npr_image - an 8-bit RGB image
 * @w: width in pixels.
 * @h: height in pixels.
 * @c: channels per pixel, always 3 (R, G, B).
 * @px: @h rows of @w pixels, top to bottom, @c bytes per pixel, no
 *      padding.  Owned by the image; freed by npr_image_free().
 */
struct npr_image {
	int w, h, c;
	uint8_t *px;
};

/**
 * struct npr_preproc - how pixels become tensor values
 * @rgb: channel order R, G, B; the default is B, G, R, which is what Open
 *       Model Zoo models expect.
 * @scale: multiplier applied to the 0..255 pixel value first (1 keeps
 *         0..255, 1/255 gives 0..1).
 * @mean: per-channel value subtracted after scaling, in the tensor's
 *        channel order.
 * @std: per-channel divisor applied last, in the tensor's channel order.
 * @nhwc: write N, H, W, C (channels interleaved) instead of N, C, H, W.
 * @gray: write one channel, the BT.601 luma 0.299 R + 0.587 G + 0.114 B,
 *        instead of three; @mean[0] and @std[0] apply to it.
 *
 * Each value is (pixel * @scale - @mean[c]) / @std[c].
 * npr_preproc_default() gives BGR, NCHW, scale 1, mean 0, std 1.
 */
struct npr_preproc {
	bool rgb;
	float scale;
	float mean[3];
	float std[3];
	bool nhwc;
	bool gray;
};

void npr_preproc_default(struct npr_preproc *pp);

int npr_image_load(const char *path, struct npr_image *img);
int npr_image_load_png(const char *path, struct npr_image *img);
int npr_image_load_jpeg(const char *path, struct npr_image *img);
const char *npr_image_last_error(void);
void npr_image_free(struct npr_image *img);
int npr_image_resize_bilinear(const struct npr_image *src, int w, int h,
			      struct npr_image *dst);
int npr_image_to_tensor(const struct npr_image *img,
			const struct npr_preproc *pp, unsigned int elem_type,
			void *out);

uint16_t npr_half_from_float(float f);
float npr_half_to_float(uint16_t h);

bool npr_tensor_elem_ok(unsigned int t);
float npr_tensor_elem_get(const void *d, unsigned int t, size_t i);
void npr_tensor_elem_set(void *d, unsigned int t, size_t i, float v);
float npr_f32_from_le(const uint8_t *b);
void npr_f32_to_le(float f, uint8_t *b);

#endif /* NPR_TOOLS_IMAGE_H */
