// SPDX-License-Identifier: MIT
/*
 * PNG loading (libpng), bilinear resize, tensor conversion.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

#include "npuring.h"
#include "image.h"

void npr_preproc_default(struct npr_preproc *pp)
{
	int i;

	memset(pp, 0, sizeof(*pp));
	pp->scale = 1.0f;
	for (i = 0; i < 3; i++)
		pp->std[i] = 1.0f;
}

static void quiet_warning(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

/**
 * npr_image_load_png() - read any PNG as 8-bit RGB
 * @path: file name.
 * @img: filled on success; free with npr_image_free().
 *
 * Return: 0, -errno of fopen, or -EINVAL for a file that is not a valid
 * PNG.
 */
int npr_image_load_png(const char *path, struct npr_image *img)
{
	png_structp png = NULL;
	png_infop info = NULL;
	png_bytep *volatile rows = NULL;
	uint8_t *volatile px = NULL;
	unsigned char sig[8];
	FILE *f;
	int err = -EINVAL, y;

	memset(img, 0, sizeof(*img));
	f = fopen(path, "rb");
	if (!f)
		return -errno;
	if (fread(sig, 1, 8, f) != 8 || png_sig_cmp(sig, 0, 8))
		goto out;
	png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL,
				     quiet_warning);
	if (!png)
		goto out;
	info = png_create_info_struct(png);
	if (!info)
		goto out;
	if (setjmp(png_jmpbuf(png))) {
		err = -EINVAL;
		goto out;
	}
	png_init_io(png, f);
	png_set_sig_bytes(png, 8);
	png_read_info(png, info);
	png_set_expand(png);
	png_set_strip_16(png);
	png_set_strip_alpha(png);
	png_set_gray_to_rgb(png);
	png_set_interlace_handling(png);
	png_read_update_info(png, info);
	img->w = (int)png_get_image_width(png, info);
	img->h = (int)png_get_image_height(png, info);
	img->c = 3;
	if (img->w <= 0 || img->h <= 0 || img->w > 65536 || img->h > 65536 ||
	    png_get_rowbytes(png, info) != (size_t)img->w * 3)
		goto out;
	px = malloc((size_t)img->w * img->h * 3);
	rows = malloc(sizeof(*rows) * img->h);
	if (!px || !rows) {
		err = -ENOMEM;
		goto out;
	}
	for (y = 0; y < img->h; y++)
		rows[y] = px + (size_t)y * img->w * 3;
	png_read_image(png, rows);
	png_read_end(png, NULL);
	img->px = px;
	px = NULL;
	err = 0;
out:
	if (png)
		png_destroy_read_struct(&png, info ? &info : NULL, NULL);
	free(rows);
	free(px);
	fclose(f);
	if (err)
		memset(img, 0, sizeof(*img));
	return err;
}

void npr_image_free(struct npr_image *img)
{
	free(img->px);
	memset(img, 0, sizeof(*img));
}

/*
 * Pixel-centre aligned bilinear interpolation: dst pixel x maps to source
 * (x + 0.5) * sw / dw - 0.5, clamped at the borders.
 */
int npr_image_resize_bilinear(const struct npr_image *src, int w, int h,
			      struct npr_image *dst)
{
	float sx = (float)src->w / w, sy = (float)src->h / h;
	int x, y, c;

	if (w <= 0 || h <= 0)
		return -EINVAL;
	dst->px = malloc((size_t)w * h * 3);
	if (!dst->px)
		return -ENOMEM;
	dst->w = w;
	dst->h = h;
	dst->c = 3;
	for (y = 0; y < h; y++) {
		float fy = (y + 0.5f) * sy - 0.5f;
		int y0, y1;
		float wy;

		if (fy < 0)
			fy = 0;
		y0 = (int)fy;
		if (y0 > src->h - 1)
			y0 = src->h - 1;
		y1 = y0 + 1 < src->h ? y0 + 1 : y0;
		wy = fy - y0;
		for (x = 0; x < w; x++) {
			float fx = (x + 0.5f) * sx - 0.5f;
			int x0, x1;
			float wx;

			if (fx < 0)
				fx = 0;
			x0 = (int)fx;
			if (x0 > src->w - 1)
				x0 = src->w - 1;
			x1 = x0 + 1 < src->w ? x0 + 1 : x0;
			wx = fx - x0;
			for (c = 0; c < 3; c++) {
				const uint8_t *p = src->px;
				float a = p[((size_t)y0 * src->w + x0) * 3 + c];
				float b = p[((size_t)y0 * src->w + x1) * 3 + c];
				float d = p[((size_t)y1 * src->w + x0) * 3 + c];
				float e = p[((size_t)y1 * src->w + x1) * 3 + c];
				float v = (a * (1 - wx) + b * wx) * (1 - wy) +
					  (d * (1 - wx) + e * wx) * wy;

				dst->px[((size_t)y * w + x) * 3 + c] =
					(uint8_t)lrintf(v < 0 ? 0 : v > 255 ? 255 : v);
			}
		}
	}
	return 0;
}

uint16_t npr_half_from_float(float f)
{
	uint32_t x, sign, man;
	int exp;

	memcpy(&x, &f, 4);
	sign = (x >> 16) & 0x8000;
	exp = (int)((x >> 23) & 0xff) - 112;
	man = x & 0x7fffff;
	if (exp >= 31)
		return sign | 0x7c00;
	if (exp <= 0) {
		if (exp < -10)
			return sign;
		man |= 0x800000;
		{
			int shift = 14 - exp;
			uint32_t r = man >> shift, rem = man & ((1u << shift) - 1);
			uint32_t half = 1u << (shift - 1);

			if (rem > half || (rem == half && (r & 1)))
				r++;
			return sign | r;
		}
	}
	{
		uint32_t r = ((uint32_t)exp << 10) | (man >> 13);
		uint32_t rem = man & 0x1fff;

		if (rem > 0x1000 || (rem == 0x1000 && (r & 1)))
			r++;
		return sign | r;
	}
}

int npr_image_to_tensor(const struct npr_image *img,
			const struct npr_preproc *pp, unsigned int elem_type,
			void *out)
{
	size_t hw = (size_t)img->w * img->h, i;
	int c;

	if (elem_type != NPR_ELEM_F32 && elem_type != NPR_ELEM_F16)
		return -EINVAL;
	for (c = 0; c < 3; c++) {
		int src = pp->rgb ? c : 2 - c;

		for (i = 0; i < hw; i++) {
			float v = ((float)img->px[i * 3 + src] - pp->mean[c]) /
				  pp->std[c] * pp->scale;
			size_t o = pp->nhwc ? i * 3 + c : c * hw + i;

			if (elem_type == NPR_ELEM_F32)
				((float *)out)[o] = v;
			else
				((uint16_t *)out)[o] = npr_half_from_float(v);
		}
	}
	return 0;
}
