// SPDX-License-Identifier: MIT
/*
 * Images for the tools and tests: PNG (libpng) and JPEG (libjpeg-turbo)
 * loading, bilinear resize, conversion to a model input tensor, and
 * f32 <-> f16.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <png.h>

#include "npuring.h"
#include "image.h"

/* Larger images are refused: 64k per side, 128 Mpixel in all. */
#define IMAGE_MAX_SIDE		65536
#define IMAGE_MAX_PIXELS	(1L << 27)

static __thread char last_error[256];

static void __attribute__((format(printf, 1, 2)))
set_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
}

/**
 * npr_image_last_error() - why the calling thread's last image call failed
 *
 * Return: a NUL-terminated message owned by the thread, valid until its
 * next failing image call; "" if there was none.
 */
const char *npr_image_last_error(void)
{
	return last_error;
}

/**
 * npr_preproc_default() - the Open Model Zoo preprocessing
 * @pp: filled with BGR, NCHW, scale 1, mean 0, std 1.
 */
void npr_preproc_default(struct npr_preproc *pp)
{
	int i;

	memset(pp, 0, sizeof(*pp));
	pp->scale = 1.0f;
	for (i = 0; i < 3; i++)
		pp->std[i] = 1.0f;
}

struct png_source {
	const char *path;
	FILE *f;
};

static void png_fail(png_structp png, png_const_charp msg)
{
	const struct png_source *src = png_get_error_ptr(png);

	if (feof(src->f))
		set_error("%s: truncated PNG file", src->path);
	else
		set_error("%s: corrupt PNG file: %s", src->path, msg);
	png_longjmp(png, 1);
}

static void png_warn(png_structp png, png_const_charp msg)
{
	/* warnings (bad ancillary chunks) do not stop the read */
	(void)png;
	(void)msg;
}

/**
 * npr_image_load_png() - read a PNG file as 8-bit RGB
 * @path: file name.
 * @img: filled on success; release it with npr_image_free().  Zeroed on
 *       failure.
 *
 * Every PNG colour type and bit depth is accepted: palette and gray
 * images are expanded to RGB, 16-bit samples are scaled to 8 bits, alpha
 * is dropped (the colour samples are kept as stored), interlaced images
 * are de-interlaced.  No gamma correction is applied.
 *
 * Return: 0, or the -errno of opening @path (-ENOENT, -EACCES, ...),
 * -EINVAL if the file is not a PNG or is corrupt or truncated, -EFBIG if
 * the image is larger than 65536 pixels per side or 128 Mpixel, -ENOMEM.
 * npr_image_last_error() says what was wrong.
 *
 * Context: any thread; calls on distinct images may run concurrently.
 */
int npr_image_load_png(const char *path, struct npr_image *img)
{
	png_structp png = NULL;
	png_infop info = NULL;
	struct png_source src;
	png_bytep *volatile rows = NULL;
	uint8_t *volatile px = NULL;
	unsigned char sig[8];
	png_uint_32 w, h;
	FILE *f;
	int err;

	memset(img, 0, sizeof(*img));
	last_error[0] = '\0';
	f = fopen(path, "rb");
	if (!f) {
		err = -errno;
		set_error("%s: %s", path, strerror(errno));
		return err;
	}
	err = -EINVAL;
	if (fread(sig, 1, sizeof(sig), f) != sizeof(sig) ||
	    png_sig_cmp(sig, 0, sizeof(sig))) {
		set_error("%s: not a PNG file", path);
		goto out_close;
	}
	src.path = path;
	src.f = f;
	png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, png_fail,
				     png_warn);
	if (!png)
		goto out_nomem;
	info = png_create_info_struct(png);
	if (!info)
		goto out_nomem;
	if (setjmp(png_jmpbuf(png))) {
		/* png_fail() has set the message */
		err = -EINVAL;
		goto out_destroy;
	}
	png_init_io(png, f);
	png_set_sig_bytes(png, sizeof(sig));
	png_read_info(png, info);
	w = png_get_image_width(png, info);
	h = png_get_image_height(png, info);
	if (w > IMAGE_MAX_SIDE || h > IMAGE_MAX_SIDE ||
	    (long)w * h > IMAGE_MAX_PIXELS) {
		set_error("%s: %ux%u pixels is too large", path, w, h);
		err = -EFBIG;
		goto out_destroy;
	}

	png_set_expand(png);
#ifdef PNG_READ_SCALE_16_TO_8_SUPPORTED
	png_set_scale_16(png);
#else
	png_set_strip_16(png);
#endif
	png_set_strip_alpha(png);
	png_set_gray_to_rgb(png);
	png_set_interlace_handling(png);
	png_read_update_info(png, info);

	if (png_get_channels(png, info) != 3 ||
	    png_get_bit_depth(png, info) != 8 ||
	    png_get_rowbytes(png, info) != (size_t)w * 3) {
		set_error("%s: cannot convert to 8-bit RGB", path);
		goto out_destroy;
	}
	px = malloc((size_t)w * h * 3);
	rows = malloc(sizeof(*rows) * h);
	if (!px || !rows)
		goto out_nomem;
	for (png_uint_32 y = 0; y < h; y++)
		rows[y] = px + (size_t)y * w * 3;
	png_read_image(png, rows);
	png_read_end(png, NULL);

	img->w = (int)w;
	img->h = (int)h;
	img->c = 3;
	img->px = px;
	px = NULL;
	err = 0;
	goto out_destroy;

out_nomem:
	set_error("%s: out of memory", path);
	err = -ENOMEM;
out_destroy:
	free(rows);
	free(px);
	if (png)
		png_destroy_read_struct(&png, info ? &info : NULL, NULL);
out_close:
	fclose(f);
	return err;
}

/* libjpeg's error manager: the first error longjmps back with a message. */
struct jpeg_fail {
	struct jpeg_error_mgr mgr;
	jmp_buf jmp;
	const char *path;
	int corrupt;		/* warnings about corrupt data seen */
};

static void jpeg_fail_exit(j_common_ptr c)
{
	struct jpeg_fail *jf = (struct jpeg_fail *)c->err;
	char msg[JMSG_LENGTH_MAX];

	c->err->format_message(c, msg);
	set_error("%s: corrupt JPEG file: %s", jf->path, msg);
	longjmp(jf->jmp, 1);
}

/* Warnings: nothing printed; corrupt data (level -1) fails the read. */
static void jpeg_fail_message(j_common_ptr c, int level)
{
	struct jpeg_fail *jf = (struct jpeg_fail *)c->err;
	char msg[JMSG_LENGTH_MAX];

	if (level >= 0 || jf->corrupt++)
		return;
	c->err->format_message(c, msg);
	set_error("%s: corrupt JPEG file: %s", jf->path, msg);
}

/**
 * npr_image_load_jpeg() - read a JPEG file as 8-bit RGB
 * @path: file name.
 * @img: filled on success; release it with npr_image_free().  Zeroed on
 *       failure.
 *
 * Baseline and progressive JPEG, colour (YCbCr, RGB) or gray, decoded by
 * libjpeg-turbo with its default (accurate integer) DCT and fancy
 * upsampling; gray images are expanded to RGB.  CMYK files are refused.
 * Data libjpeg calls corrupt (a truncated file, a bad Huffman code) is an
 * error, not a warning: no partly gray image comes back.
 *
 * Return: 0, or the -errno of opening @path, -EINVAL if the file is not
 * a JPEG or is corrupt, truncated or CMYK, -EFBIG if the image is larger
 * than 65536 pixels per side or 128 Mpixel, -ENOMEM.
 * npr_image_last_error() says what was wrong.
 *
 * Context: any thread; calls on distinct images may run concurrently.
 */
int npr_image_load_jpeg(const char *path, struct npr_image *img)
{
	struct jpeg_decompress_struct d;
	struct jpeg_fail jf;
	uint8_t *volatile px = NULL;
	volatile int err = -EINVAL;
	FILE *f;

	memset(img, 0, sizeof(*img));
	last_error[0] = '\0';
	f = fopen(path, "rb");
	if (!f) {
		err = -errno;
		set_error("%s: %s", path, strerror(errno));
		return err;
	}
	d.err = jpeg_std_error(&jf.mgr);
	jf.mgr.error_exit = jpeg_fail_exit;
	jf.mgr.emit_message = jpeg_fail_message;
	jf.path = path;
	jf.corrupt = 0;
	if (setjmp(jf.jmp)) {
		/* jpeg_fail_exit() has set the message */
		goto out;
	}
	jpeg_create_decompress(&d);
	jpeg_stdio_src(&d, f);
	jpeg_read_header(&d, TRUE);
	if (d.jpeg_color_space == JCS_CMYK || d.jpeg_color_space == JCS_YCCK) {
		set_error("%s: CMYK JPEG files are not supported", path);
		goto out;
	}
	if (d.image_width > IMAGE_MAX_SIDE || d.image_height > IMAGE_MAX_SIDE ||
	    (long)d.image_width * d.image_height > IMAGE_MAX_PIXELS) {
		set_error("%s: %ux%u pixels is too large", path,
			  d.image_width, d.image_height);
		err = -EFBIG;
		goto out;
	}
	d.out_color_space = JCS_RGB;
	jpeg_start_decompress(&d);
	if (d.output_components != 3) {
		set_error("%s: cannot convert to 8-bit RGB", path);
		goto out;
	}
	px = malloc((size_t)d.output_width * d.output_height * 3);
	if (!px) {
		set_error("%s: out of memory", path);
		err = -ENOMEM;
		goto out;
	}
	while (d.output_scanline < d.output_height && !jf.corrupt) {
		JSAMPROW row = px + (size_t)d.output_scanline *
				    d.output_width * 3;

		jpeg_read_scanlines(&d, &row, 1);
	}
	if (jf.corrupt)		/* jpeg_fail_message() has set the message */
		goto out;
	jpeg_finish_decompress(&d);
	if (jf.corrupt)
		goto out;
	img->w = (int)d.output_width;
	img->h = (int)d.output_height;
	img->c = 3;
	img->px = px;
	px = NULL;
	err = 0;
out:
	jpeg_destroy_decompress(&d);
	free(px);
	fclose(f);
	return err;
}

/**
 * npr_image_load() - read a PNG or JPEG file as 8-bit RGB
 * @path: file name; the format is told by the file's first bytes (the
 *        PNG signature, or a JPEG's start-of-image marker FF D8 FF), not
 *        by its name.
 * @img: as npr_image_load_png()'s.
 *
 * Return: npr_image_load_png()'s or npr_image_load_jpeg()'s; -EINVAL
 * for a file that is neither.
 *
 * Context: any thread; calls on distinct images may run concurrently.
 */
int npr_image_load(const char *path, struct npr_image *img)
{
	static const unsigned char png_sig[8] = {
		0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n',
	};
	unsigned char magic[8] = { 0 };
	FILE *f;
	size_t n;
	int err;

	memset(img, 0, sizeof(*img));
	last_error[0] = '\0';
	f = fopen(path, "rb");
	if (!f) {
		err = -errno;
		set_error("%s: %s", path, strerror(errno));
		return err;
	}
	n = fread(magic, 1, sizeof(magic), f);
	fclose(f);
	if (n == sizeof(magic) && !memcmp(magic, png_sig, sizeof(png_sig)))
		return npr_image_load_png(path, img);
	if (n >= 3 && magic[0] == 0xff && magic[1] == 0xd8 && magic[2] == 0xff)
		return npr_image_load_jpeg(path, img);
	set_error("%s: neither a PNG nor a JPEG file", path);
	return -EINVAL;
}

/**
 * npr_image_free() - release an image's pixels
 * @img: an image filled by this file's functions, or zeroed; zeroed on
 *       return, so freeing twice is harmless.
 */
void npr_image_free(struct npr_image *img)
{
	free(img->px);
	memset(img, 0, sizeof(*img));
}

static int image_check(const struct npr_image *img)
{
	if (!img->px || img->c != 3 || img->w <= 0 || img->h <= 0) {
		set_error("not an RGB image (%dx%d, %d channels)", img->w,
			  img->h, img->c);
		return -EINVAL;
	}
	return 0;
}

/*
 * Source sample position of each destination pixel along one axis, with
 * pixel centres aligned: destination i covers source (i + 0.5) * s / d - 0.5.
 * Positions outside the image are clamped to the edge pixels.
 */
static void resize_axis(int s, int d, int *i0, int *i1, float *wt)
{
	double ratio = (double)s / d;
	int i;

	for (i = 0; i < d; i++) {
		double pos = (i + 0.5) * ratio - 0.5;
		int lo = (int)floor(pos);
		float frac = (float)(pos - lo);

		if (lo < 0) {
			lo = 0;
			frac = 0;
		}
		if (lo >= s - 1) {
			lo = s - 1;
			frac = 0;
		}
		i0[i] = lo;
		i1[i] = lo + 1 < s ? lo + 1 : lo;
		wt[i] = frac;
	}
}

/**
 * npr_image_resize_bilinear() - resize with bilinear interpolation
 * @src: source image.
 * @w: destination width, >= 1.
 * @h: destination height, >= 1.
 * @dst: filled on success with a new image; release it with
 *       npr_image_free().  Untouched on failure.
 *
 * Pixel centres are aligned and there is no antialiasing filter, as in
 * OpenCV's cv2.resize() with INTER_LINEAR: results agree with it within
 * one level (OpenCV rounds fixed-point weights, this uses floats).
 *
 * Return: 0, -EINVAL for a bad @src or size, -ENOMEM.
 */
int npr_image_resize_bilinear(const struct npr_image *src, int w, int h,
			      struct npr_image *dst)
{
	int *x0 = NULL, *x1 = NULL, *y0 = NULL, *y1 = NULL;
	float *wx = NULL, *wy = NULL;
	uint8_t *px = NULL;
	int x, y, c, err;

	err = image_check(src);
	if (err)
		return err;
	if (w <= 0 || h <= 0 || w > IMAGE_MAX_SIDE || h > IMAGE_MAX_SIDE) {
		set_error("bad destination size %dx%d", w, h);
		return -EINVAL;
	}
	x0 = malloc(sizeof(int) * w);
	x1 = malloc(sizeof(int) * w);
	wx = malloc(sizeof(float) * w);
	y0 = malloc(sizeof(int) * h);
	y1 = malloc(sizeof(int) * h);
	wy = malloc(sizeof(float) * h);
	px = malloc((size_t)w * h * 3);
	if (!x0 || !x1 || !wx || !y0 || !y1 || !wy || !px) {
		set_error("out of memory");
		free(px);
		err = -ENOMEM;
		goto out;
	}
	resize_axis(src->w, w, x0, x1, wx);
	resize_axis(src->h, h, y0, y1, wy);

	for (y = 0; y < h; y++) {
		const uint8_t *r0 = src->px + (size_t)y0[y] * src->w * 3;
		const uint8_t *r1 = src->px + (size_t)y1[y] * src->w * 3;
		uint8_t *o = px + (size_t)y * w * 3;

		for (x = 0; x < w; x++) {
			const uint8_t *a = r0 + x0[x] * 3, *b = r0 + x1[x] * 3;
			const uint8_t *d = r1 + x0[x] * 3, *e = r1 + x1[x] * 3;

			for (c = 0; c < 3; c++) {
				float top = a[c] + (b[c] - a[c]) * wx[x];
				float bot = d[c] + (e[c] - d[c]) * wx[x];
				float v = top + (bot - top) * wy[y];

				/* v is within 0..255: a convex combination */
				*o++ = (uint8_t)lrintf(v);
			}
		}
	}
	dst->w = w;
	dst->h = h;
	dst->c = 3;
	dst->px = px;
out:
	free(x0);
	free(x1);
	free(wx);
	free(y0);
	free(y1);
	free(wy);
	return err;
}

/**
 * npr_half_from_float() - convert to IEEE 754 binary16
 * @f: any float.
 *
 * Rounds to nearest, ties to even; values beyond the half range become
 * infinities, values below its smallest subnormal become zeros, NaN stays
 * a (quiet) NaN.
 *
 * Return: the half's bit pattern.
 */
uint16_t npr_half_from_float(float f)
{
	uint32_t x, sign, man, r, rem, halfway;
	int exp, shift;

	memcpy(&x, &f, sizeof(x));
	sign = (x >> 16) & 0x8000;
	man = x & 0x7fffff;
	if (((x >> 23) & 0xff) == 0xff)			/* inf, NaN */
		return sign | 0x7c00 | (man ? 0x200 : 0);
	exp = (int)((x >> 23) & 0xff) - 127 + 15;	/* rebias */
	if (exp >= 31)
		return sign | 0x7c00;
	if (exp <= 0) {
		/* subnormal half: shift the full significand into place */
		if (exp < -10)
			return sign;
		man |= 0x800000;
		shift = 14 - exp;
	} else {
		shift = 13;
	}
	r = man >> shift;
	rem = man & ((1u << shift) - 1);
	halfway = 1u << (shift - 1);
	if (exp > 0)
		r |= (uint32_t)exp << 10;
	/* a carry out of the significand correctly bumps the exponent */
	if (rem > halfway || (rem == halfway && (r & 1)))
		r++;
	return sign | r;
}

/**
 * npr_half_to_float() - convert from IEEE 754 binary16
 * @h: a half's bit pattern.
 *
 * Return: the same value as a float (every half is exactly representable).
 */
float npr_half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, x;
	float f;

	if (exp == 0x1f) {
		x = sign | 0x7f800000 | (man << 13);
	} else if (exp) {
		x = sign | ((exp + 127 - 15) << 23) | (man << 13);
	} else {
		/* zero or subnormal: man * 2^-24 */
		f = ldexpf((float)man, -24);
		return sign ? -f : f;
	}
	memcpy(&f, &x, sizeof(f));
	return f;
}

/**
 * npr_image_to_tensor() - write an image as one model input image
 * @img: the image, already resized to the input's H x W.
 * @pp: preprocessing; see struct npr_preproc.
 * @elem_type: NPR_ELEM_F32 or NPR_ELEM_F16.
 * @out: room for img->w * img->h * 3 values (one with @pp->gray) of
 *       @elem_type, written as C, H, W (or H, W, C with @pp->nhwc).
 *
 * For a batch, call once per image with @out advanced by one image.
 *
 * Return: 0, or -EINVAL for a bad image, another element type, or a zero
 * std (npr_image_last_error() says which).
 */
int npr_image_to_tensor(const struct npr_image *img,
			const struct npr_preproc *pp, unsigned int elem_type,
			void *out)
{
	size_t hw = (size_t)img->w * img->h, i;
	int nc = pp->gray ? 1 : 3, c, err;

	err = image_check(img);
	if (err)
		return err;
	if (elem_type != NPR_ELEM_F32 && elem_type != NPR_ELEM_F16) {
		set_error("element type %u is not f32 or f16", elem_type);
		return -EINVAL;
	}
	for (c = 0; c < nc; c++) {
		if (pp->std[c] == 0 || !isfinite(pp->std[c])) {
			set_error("std[%d] is %g", c, pp->std[c]);
			return -EINVAL;
		}
	}
	for (c = 0; c < nc; c++) {
		/* the source channel feeding tensor channel c */
		int s = pp->rgb ? c : 2 - c;

		for (i = 0; i < hw; i++) {
			const uint8_t *p = img->px + i * 3;
			size_t o = pp->nhwc ? i * nc + c : c * hw + i;
			float v;

			if (pp->gray)
				v = 0.299f * p[0] + 0.587f * p[1] +
				    0.114f * p[2];
			else
				v = p[s];
			v = (v * pp->scale - pp->mean[c]) / pp->std[c];
			if (elem_type == NPR_ELEM_F32)
				((float *)out)[o] = v;
			else
				((uint16_t *)out)[o] = npr_half_from_float(v);
		}
	}
	return 0;
}

/* ---- element conversion, for raw tensors and outputs ---- */

static float bf16_to_float(uint16_t h)
{
	uint32_t x = (uint32_t)h << 16;
	float f;

	memcpy(&f, &x, sizeof(f));
	return f;
}

static uint16_t bf16_from_float(float f)
{
	uint32_t x;

	memcpy(&x, &f, sizeof(x));
	if ((x & 0x7fffffff) > 0x7f800000)
		return (x >> 16) | 0x40;	/* quiet NaN */
	x += 0x7fff + ((x >> 16) & 1);	/* to nearest, ties to even */
	return x >> 16;
}

/**
 * npr_tensor_elem_ok() - whether values of an element type convert to and from f32
 * @t: enum npr_elem_type.
 *
 * Return: true for the floating-point, integer and boolean types.
 */
bool npr_tensor_elem_ok(unsigned int t)
{
	switch (t) {
	case NPR_ELEM_F32: case NPR_ELEM_F16: case NPR_ELEM_BF16:
	case NPR_ELEM_F64: case NPR_ELEM_I8: case NPR_ELEM_U8:
	case NPR_ELEM_I16: case NPR_ELEM_U16: case NPR_ELEM_I32:
	case NPR_ELEM_U32: case NPR_ELEM_I64: case NPR_ELEM_U64:
	case NPR_ELEM_BOOLEAN:
		return true;
	}
	return false;
}

/**
 * npr_tensor_elem_get() - element @i of a tensor as f32
 * @d: the tensor's data.
 * @t: its element type (npr_tensor_elem_ok()).
 * @i: the element's index.
 *
 * Return: the value, rounded to f32.
 */
float npr_tensor_elem_get(const void *d, unsigned int t, size_t i)
{
	const uint16_t *h = d;

	switch (t) {
	case NPR_ELEM_F32:	return ((const float *)d)[i];
	case NPR_ELEM_F16:	return npr_half_to_float(h[i]);
	case NPR_ELEM_BF16:	return bf16_to_float(h[i]);
	case NPR_ELEM_F64:	return (float)((const double *)d)[i];
	case NPR_ELEM_I8:	return ((const int8_t *)d)[i];
	case NPR_ELEM_U8:	return ((const uint8_t *)d)[i];
	case NPR_ELEM_I16:	return ((const int16_t *)d)[i];
	case NPR_ELEM_U16:	return ((const uint16_t *)d)[i];
	case NPR_ELEM_I32:	return (float)((const int32_t *)d)[i];
	case NPR_ELEM_U32:	return (float)((const uint32_t *)d)[i];
	case NPR_ELEM_I64:	return (float)((const int64_t *)d)[i];
	case NPR_ELEM_U64:	return (float)((const uint64_t *)d)[i];
	case NPR_ELEM_BOOLEAN:	return ((const uint8_t *)d)[i] != 0;
	}
	return NAN;
}

/* Round to nearest and saturate into [lo, hi]; NaN becomes 0. */
static double to_int(float v, double lo, double hi)
{
	if (isnan(v))
		return 0;
	v = nearbyintf(v);
	return v < lo ? lo : v > hi ? hi : v;
}

/**
 * npr_tensor_elem_set() - store @v as element @i of a tensor
 * @d: the tensor's data.
 * @t: its element type (npr_tensor_elem_ok()).
 * @i: the element's index.
 * @v: the value; integers are rounded to nearest and saturated, NaN
 *     becomes 0.
 */
void npr_tensor_elem_set(void *d, unsigned int t, size_t i, float v)
{
	switch (t) {
	case NPR_ELEM_F32:
		((float *)d)[i] = v;
		break;
	case NPR_ELEM_F16:
		((uint16_t *)d)[i] = npr_half_from_float(v);
		break;
	case NPR_ELEM_BF16:
		((uint16_t *)d)[i] = bf16_from_float(v);
		break;
	case NPR_ELEM_F64:
		((double *)d)[i] = v;
		break;
	case NPR_ELEM_I8:
		((int8_t *)d)[i] = (int8_t)to_int(v, INT8_MIN, INT8_MAX);
		break;
	case NPR_ELEM_U8:
		((uint8_t *)d)[i] = (uint8_t)to_int(v, 0, UINT8_MAX);
		break;
	case NPR_ELEM_I16:
		((int16_t *)d)[i] = (int16_t)to_int(v, INT16_MIN, INT16_MAX);
		break;
	case NPR_ELEM_U16:
		((uint16_t *)d)[i] = (uint16_t)to_int(v, 0, UINT16_MAX);
		break;
	case NPR_ELEM_I32:
		((int32_t *)d)[i] = (int32_t)to_int(v, INT32_MIN, INT32_MAX);
		break;
	case NPR_ELEM_U32:
		((uint32_t *)d)[i] = (uint32_t)to_int(v, 0, UINT32_MAX);
		break;
	case NPR_ELEM_I64:
		/* 2^63 is the first float past INT64_MAX */
		((int64_t *)d)[i] = (int64_t)to_int(v, -0x1p63, 0x1p63 - 1024);
		break;
	case NPR_ELEM_U64:
		((uint64_t *)d)[i] = (uint64_t)to_int(v, 0, 0x1p64 - 2048);
		break;
	case NPR_ELEM_BOOLEAN:
		((uint8_t *)d)[i] = v != 0;
		break;
	}
}

/**
 * npr_f32_from_le() - a little-endian f32 from 4 bytes
 * @b: the bytes.
 *
 * Return: the value, whatever the host's byte order.
 */
float npr_f32_from_le(const uint8_t *b)
{
	uint32_t x = b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24;
	float f;

	memcpy(&f, &x, sizeof(f));
	return f;
}

/**
 * npr_f32_to_le() - an f32 as 4 little-endian bytes
 * @f: the value.
 * @b: where the bytes go.
 */
void npr_f32_to_le(float f, uint8_t *b)
{
	uint32_t x;

	memcpy(&x, &f, sizeof(x));
	b[0] = x;
	b[1] = x >> 8;
	b[2] = x >> 16;
	b[3] = x >> 24;
}
