// SPDX-License-Identifier: MIT
/*
 * PNG and JPEG decoding from a memory buffer, for npr-batch: its files
 * arrive through io_uring reads, not through a FILE.  Both give 8-bit RGB
 * as npr_image_load_png() does (alpha dropped, 16-bit samples scaled, no
 * gamma correction), so a photo gives the same tensor either way.  And
 * the element conversions of raw tensors and outputs, to and from f32.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>
#include <jpeglib.h>

#include "npuring.h"
#include "batch-decode.h"

/* The limits of image.c: 64k per side, 128 Mpixel in all. */
#define DECODE_MAX_SIDE		65536
#define DECODE_MAX_PIXELS	(1L << 27)

/**
 * batch_sniff() - the image format of a buffer, from its signature
 * @buf: the file's bytes.
 * @len: how many.
 *
 * Return: BATCH_FMT_PNG, BATCH_FMT_JPEG, or BATCH_FMT_OTHER.
 */
enum batch_format batch_sniff(const void *buf, size_t len)
{
	const unsigned char *b = buf;

	if (len >= 8 && !png_sig_cmp(b, 0, 8))
		return BATCH_FMT_PNG;
	if (len >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff)
		return BATCH_FMT_JPEG;
	return BATCH_FMT_OTHER;
}

static bool too_large(unsigned long w, unsigned long h)
{
	return w > DECODE_MAX_SIDE || h > DECODE_MAX_SIDE ||
	       w * h > (unsigned long)DECODE_MAX_PIXELS;
}

/* ---- PNG ---- */

struct png_mem {
	const unsigned char *buf;
	size_t len, off;
	char *msg;
	size_t msglen;
};

static void png_mem_read(png_structp png, png_bytep out, size_t n)
{
	struct png_mem *m = png_get_io_ptr(png);

	if (n > m->len - m->off)
		png_error(png, "truncated PNG file");
	memcpy(out, m->buf + m->off, n);
	m->off += n;
}

static void png_mem_fail(png_structp png, png_const_charp what)
{
	struct png_mem *m = png_get_error_ptr(png);

	if (strstr(what, "truncated"))
		snprintf(m->msg, m->msglen, "%s", what);
	else
		snprintf(m->msg, m->msglen, "corrupt PNG file: %s", what);
	png_longjmp(png, 1);
}

static void png_mem_warn(png_structp png, png_const_charp what)
{
	/* a bad ancillary chunk does not stop the read */
	(void)png;
	(void)what;
}

static int decode_png(const void *buf, size_t len, struct npr_image *img,
		      char *msg, size_t msglen)
{
	struct png_mem m = { buf, len, 0, msg, msglen };
	png_bytep *volatile rows = NULL;
	uint8_t *volatile px = NULL;
	png_structp png;
	png_infop info = NULL;
	png_uint_32 w, h, y;
	volatile int err = -ENOMEM;

	png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &m, png_mem_fail,
				     png_mem_warn);
	if (png)
		info = png_create_info_struct(png);
	if (!png || !info) {
		snprintf(msg, msglen, "out of memory");
		goto out;
	}
	if (setjmp(png_jmpbuf(png))) {
		err = -EINVAL;	/* png_mem_fail() said why */
		goto out;
	}
	png_set_read_fn(png, &m, png_mem_read);
	png_read_info(png, info);
	w = png_get_image_width(png, info);
	h = png_get_image_height(png, info);
	if (too_large(w, h)) {
		snprintf(msg, msglen, "%ux%u pixels is too large", w, h);
		err = -EFBIG;
		goto out;
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
		snprintf(msg, msglen, "PNG cannot be converted to 8-bit RGB");
		err = -EINVAL;
		goto out;
	}
	px = malloc((size_t)w * h * 3);
	rows = malloc(sizeof(*rows) * h);
	if (!px || !rows) {
		snprintf(msg, msglen, "out of memory");
		goto out;
	}
	for (y = 0; y < h; y++)
		rows[y] = px + (size_t)y * w * 3;
	png_read_image(png, rows);
	png_read_end(png, NULL);
	img->w = (int)w;
	img->h = (int)h;
	img->c = 3;
	img->px = px;
	px = NULL;
	err = 0;
out:
	free(rows);
	free(px);
	if (png)
		png_destroy_read_struct(&png, info ? &info : NULL, NULL);
	return err;
}

/* ---- JPEG ---- */

struct jpeg_fail {
	struct jpeg_error_mgr mgr;
	jmp_buf jb;
	char *msg;
	size_t msglen;
};

static void jpeg_mem_fail(j_common_ptr cinfo)
{
	struct jpeg_fail *f = (struct jpeg_fail *)cinfo->err;
	char what[JMSG_LENGTH_MAX];

	f->mgr.format_message(cinfo, what);
	snprintf(f->msg, f->msglen, "corrupt JPEG file: %s", what);
	longjmp(f->jb, 1);
}

/* Warnings (a premature end of data, most often) are failures too: a
 * truncated photo would otherwise be classified half grey. */
static void jpeg_mem_warn(j_common_ptr cinfo, int level)
{
	if (level < 0)
		jpeg_mem_fail(cinfo);
}

static int decode_jpeg(const void *buf, size_t len, struct npr_image *img,
		       char *msg, size_t msglen)
{
	struct jpeg_decompress_struct cinfo;
	struct jpeg_fail fail;
	uint8_t *volatile px = NULL;
	volatile int err = -EINVAL;
	JSAMPROW row;

	cinfo.err = jpeg_std_error(&fail.mgr);
	fail.mgr.error_exit = jpeg_mem_fail;
	fail.mgr.emit_message = jpeg_mem_warn;
	fail.msg = msg;
	fail.msglen = msglen;
	if (setjmp(fail.jb))
		goto out;
	jpeg_create_decompress(&cinfo);
	jpeg_mem_src(&cinfo, buf, len);
	jpeg_read_header(&cinfo, TRUE);
	if (too_large(cinfo.image_width, cinfo.image_height)) {
		snprintf(msg, msglen, "%ux%u pixels is too large",
			 cinfo.image_width, cinfo.image_height);
		err = -EFBIG;
		goto out;
	}
	cinfo.out_color_space = JCS_RGB;
	jpeg_start_decompress(&cinfo);
	if (cinfo.output_components != 3) {
		snprintf(msg, msglen, "JPEG cannot be converted to RGB");
		goto out;
	}
	px = malloc((size_t)cinfo.output_width * cinfo.output_height * 3);
	if (!px) {
		snprintf(msg, msglen, "out of memory");
		err = -ENOMEM;
		goto out;
	}
	while (cinfo.output_scanline < cinfo.output_height) {
		row = px + (size_t)cinfo.output_scanline *
			   cinfo.output_width * 3;
		jpeg_read_scanlines(&cinfo, &row, 1);
	}
	jpeg_finish_decompress(&cinfo);
	img->w = (int)cinfo.output_width;
	img->h = (int)cinfo.output_height;
	img->c = 3;
	img->px = px;
	px = NULL;
	err = 0;
out:
	free(px);
	jpeg_destroy_decompress(&cinfo);
	return err;
}

/**
 * batch_decode() - decode a PNG or JPEG held in memory as 8-bit RGB
 * @buf: the file's bytes.
 * @len: how many.
 * @img: filled on success (release with npr_image_free()); zeroed on
 *       failure.
 * @msg: why it failed, without the file name.
 * @msglen: size of @msg.
 *
 * Return: 0, -EINVAL for a buffer that is neither format or is corrupt
 * or truncated, -EFBIG for an image over 65536 pixels a side or 128
 * Mpixel, -ENOMEM.
 */
int batch_decode(const void *buf, size_t len, struct npr_image *img,
		 char *msg, size_t msglen)
{
	memset(img, 0, sizeof(*img));
	switch (batch_sniff(buf, len)) {
	case BATCH_FMT_PNG:
		return decode_png(buf, len, img, msg, msglen);
	case BATCH_FMT_JPEG:
		return decode_jpeg(buf, len, img, msg, msglen);
	default:
		snprintf(msg, msglen, "not a PNG or JPEG image");
		return -EINVAL;
	}
}
