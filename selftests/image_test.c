// SPDX-License-Identifier: MIT
/*
 * The tools' image code (tools/image.c): PNG files of every colour type
 * and bit depth, written here with libpng, read back as the expected RGB;
 * broken files fail with -EINVAL and say why; bilinear resize against
 * values worked out by hand (they are what cv2.resize INTER_LINEAR gives);
 * tensor layout and preprocessing; f32 <-> f16 conversion, exhaustively.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <png.h>

#include "harness.h"
#include "npuring.h"
#include "tools/image.h"

#define W	7	/* odd sizes catch row padding and sub-byte packing */
#define H	5

/* The reference picture: every pixel and channel different. */
static uint8_t ref_px(int x, int y, int c)
{
	return (uint8_t)(x * 37 + y * 11 + c * 85);
}

static uint8_t ref_gray(int x, int y)
{
	return (uint8_t)(x * 29 + y * 7);
}

struct png_spec {
	int color_type;		/* PNG_COLOR_TYPE_* */
	int bit_depth;
	int interlace;		/* PNG_INTERLACE_* */
	bool trns;		/* palette: add a transparency chunk */
};

/*
 * Sample @c of pixel (x, y) at the file's bit depth, for the colour types
 * that store samples directly; alpha is anything but opaque to show that
 * it is ignored.
 */
static unsigned int sample(const struct png_spec *s, int x, int y, int c)
{
	int max = (1 << s->bit_depth) - 1;
	bool gray = !(s->color_type & PNG_COLOR_MASK_COLOR);
	int color_channels = gray ? 1 : 3;

	if (c == color_channels)		/* alpha */
		return (unsigned int)((x + y) * max / (W + H));
	if (s->bit_depth < 8)
		return ref_gray(x, y) & max;
	if (gray)
		return s->bit_depth == 16 ? ref_gray(x, y) * 257u :
					    ref_gray(x, y);
	return s->bit_depth == 16 ? ref_px(x, y, c) * 257u : ref_px(x, y, c);
}

/* What the loader must produce for pixel (x, y) of such a file. */
static void expected(const struct png_spec *s, int x, int y, uint8_t rgb[3])
{
	int c;

	if (s->color_type == PNG_COLOR_TYPE_PALETTE) {
		/* palette entry i is ref_px(i, 0, .); pixel uses i = x */
		for (c = 0; c < 3; c++)
			rgb[c] = ref_px(x, 0, c);
		return;
	}
	if (!(s->color_type & PNG_COLOR_MASK_COLOR)) {
		unsigned int v = sample(s, x, y, 0);
		uint8_t g;

		if (s->bit_depth < 8)
			g = (uint8_t)(v * 255 / ((1 << s->bit_depth) - 1));
		else
			g = ref_gray(x, y);
		rgb[0] = rgb[1] = rgb[2] = g;
		return;
	}
	for (c = 0; c < 3; c++)
		rgb[c] = ref_px(x, y, c);
}

/* A new empty temporary file; its name in @path. */
static int tmp_file(char *path, size_t len)
{
	const char *dir = getenv("TMPDIR");

	snprintf(path, len, "%s/npr-image-XXXXXX", dir ? dir : "/tmp");
	return mkstemp(path);
}

/* Row @y as libpng's write functions take it after the setup below. */
static void make_row(const struct png_spec *s, int y, void *row)
{
	bool palette = s->color_type == PNG_COLOR_TYPE_PALETTE;
	int channels = 1, x, c;
	unsigned int v;

	if (!palette)
		channels = (s->color_type & PNG_COLOR_MASK_COLOR ? 3 : 1) +
			   (s->color_type & PNG_COLOR_MASK_ALPHA ? 1 : 0);
	for (x = 0; x < W; x++) {
		for (c = 0; c < channels; c++) {
			v = palette ? (unsigned int)x : sample(s, x, y, c);
			if (s->bit_depth == 16)
				((uint16_t *)row)[x * channels + c] = v;
			else
				((uint8_t *)row)[x * channels + c] = v;
		}
	}
}

/* Write a W x H PNG of the given kind to a new temporary file. */
static int write_png(const struct png_spec *s, char *path, size_t len)
{
	const uint16_t one = 1;
	png_structp png;
	png_infop info;
	png_color pal[W];
	png_byte trns[W];
	uint8_t *row;
	FILE *f;
	int fd, x, y, pass, passes;

	fd = tmp_file(path, len);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "wb");
	if (!f) {
		close(fd);
		return -errno;
	}
	png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	info = png_create_info_struct(png);
	row = calloc(W * 4, 2);
	if (setjmp(png_jmpbuf(png))) {
		png_destroy_write_struct(&png, &info);
		fclose(f);
		free(row);
		return -EIO;
	}
	png_init_io(png, f);
	png_set_IHDR(png, info, W, H, s->bit_depth, s->color_type,
		     s->interlace, PNG_COMPRESSION_TYPE_DEFAULT,
		     PNG_FILTER_TYPE_DEFAULT);
	if (s->color_type == PNG_COLOR_TYPE_PALETTE) {
		for (x = 0; x < W; x++) {
			pal[x].red = ref_px(x, 0, 0);
			pal[x].green = ref_px(x, 0, 1);
			pal[x].blue = ref_px(x, 0, 2);
			trns[x] = (png_byte)(x * 30);
		}
		png_set_PLTE(png, info, pal, W);
		if (s->trns)
			png_set_tRNS(png, info, trns, W, NULL);
	}
	png_write_info(png, info);
	/* rows: one byte per sample below 8 bits, host-order 16-bit */
	if (s->bit_depth < 8)
		png_set_packing(png);
	if (s->bit_depth == 16 && *(const uint8_t *)&one)
		png_set_swap(png);
	passes = png_set_interlace_handling(png);
	for (pass = 0; pass < passes; pass++) {
		for (y = 0; y < H; y++) {
			make_row(s, y, row);
			png_write_row(png, row);
		}
	}
	png_write_end(png, NULL);
	png_destroy_write_struct(&png, &info);
	free(row);
	return fclose(f) ? -errno : 0;
}

FIXTURE(png) {
	char path[4096];
};

FIXTURE_VARIANT(png) {
	struct png_spec spec;
};

FIXTURE_VARIANT_ADD(png, rgb8) {
	.spec = { PNG_COLOR_TYPE_RGB, 8, PNG_INTERLACE_NONE, false },
};
FIXTURE_VARIANT_ADD(png, rgb8_interlaced) {
	.spec = { PNG_COLOR_TYPE_RGB, 8, PNG_INTERLACE_ADAM7, false },
};
FIXTURE_VARIANT_ADD(png, rgba8) {
	.spec = { PNG_COLOR_TYPE_RGBA, 8, PNG_INTERLACE_NONE, false },
};
FIXTURE_VARIANT_ADD(png, rgb16) {
	.spec = { PNG_COLOR_TYPE_RGB, 16, PNG_INTERLACE_NONE, false },
};
FIXTURE_VARIANT_ADD(png, rgba16) {
	.spec = { PNG_COLOR_TYPE_RGBA, 16, PNG_INTERLACE_NONE, false },
};
FIXTURE_VARIANT_ADD(png, gray1) {
	.spec = { PNG_COLOR_TYPE_GRAY, 1, PNG_INTERLACE_NONE, false },
};
FIXTURE_VARIANT_ADD(png, gray2) {
	.spec = { PNG_COLOR_TYPE_GRAY, 2, PNG_INTERLACE_NONE, false },
};
FIXTURE_VARIANT_ADD(png, gray4) {
	.spec = { PNG_COLOR_TYPE_GRAY, 4, PNG_INTERLACE_NONE, false },
};
FIXTURE_VARIANT_ADD(png, gray8) {
	.spec = { PNG_COLOR_TYPE_GRAY, 8, PNG_INTERLACE_NONE, false },
};
FIXTURE_VARIANT_ADD(png, gray16) {
	.spec = { PNG_COLOR_TYPE_GRAY, 16, PNG_INTERLACE_NONE, false },
};
FIXTURE_VARIANT_ADD(png, gray_alpha8) {
	.spec = { PNG_COLOR_TYPE_GRAY_ALPHA, 8, PNG_INTERLACE_NONE, false },
};
FIXTURE_VARIANT_ADD(png, gray_alpha16) {
	.spec = { PNG_COLOR_TYPE_GRAY_ALPHA, 16, PNG_INTERLACE_ADAM7, false },
};
FIXTURE_VARIANT_ADD(png, palette8) {
	.spec = { PNG_COLOR_TYPE_PALETTE, 8, PNG_INTERLACE_NONE, false },
};
FIXTURE_VARIANT_ADD(png, palette4_trns) {
	.spec = { PNG_COLOR_TYPE_PALETTE, 4, PNG_INTERLACE_NONE, true },
};

FIXTURE_SETUP(png)
{
	ASSERT_EQ(write_png(&variant->spec, self->path, sizeof(self->path)),
		  0);
}

FIXTURE_TEARDOWN(png)
{
	unlink(self->path);
}

TEST_F(png, loads_as_8bit_rgb)
{
	struct npr_image img;
	uint8_t rgb[3];
	int x, y, c, bad = 0;

	ASSERT_EQ(npr_image_load_png(self->path, &img), 0);
	ASSERT_EQ(img.w, W);
	ASSERT_EQ(img.h, H);
	ASSERT_EQ(img.c, 3);
	for (y = 0; y < H; y++) {
		for (x = 0; x < W; x++) {
			expected(&variant->spec, x, y, rgb);
			for (c = 0; c < 3; c++) {
				if (img.px[(y * W + x) * 3 + c] == rgb[c])
					continue;
				if (!bad++)
					TH_LOG("pixel %d,%d channel %d: %u, want %u",
					       x, y, c,
					       img.px[(y * W + x) * 3 + c],
					       rgb[c]);
			}
		}
	}
	EXPECT_EQ(bad, 0);
	npr_image_free(&img);
	EXPECT_NULL(img.px);
}

TEST_F(png, truncated_file_fails_with_einval)
{
	struct npr_image img;
	long size;
	FILE *f;

	f = fopen(self->path, "r+b");
	ASSERT_NONNULL(f);
	ASSERT_EQ(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	fclose(f);
	ASSERT_EQ(truncate(self->path, size - 20), 0);
	EXPECT_EQ(npr_image_load_png(self->path, &img), -EINVAL);
	EXPECT_NULL(img.px);
	EXPECT_NONNULL(strstr(npr_image_last_error(), "truncated"));
}

TEST(png_missing_file_fails_with_enoent)
{
	struct npr_image img;

	EXPECT_EQ(npr_image_load_png("/nonexistent/x.png", &img), -ENOENT);
	EXPECT_NULL(img.px);
	EXPECT_NONNULL(strstr(npr_image_last_error(), "/nonexistent/x.png"));
}

TEST(png_not_a_png_fails_with_einval)
{
	struct npr_image img;
	char path[4096];
	int fd = tmp_file(path, sizeof(path));

	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, "GIF89a and more bytes", 21), 21);
	close(fd);
	EXPECT_EQ(npr_image_load_png(path, &img), -EINVAL);
	EXPECT_NONNULL(strstr(npr_image_last_error(), "not a PNG"));
	unlink(path);
}

TEST(png_corrupt_crc_fails_with_einval)
{
	struct png_spec s = {
		PNG_COLOR_TYPE_RGB, 8, PNG_INTERLACE_NONE, false
	};
	struct npr_image img;
	char path[4096];
	FILE *f;

	ASSERT_EQ(write_png(&s, path, sizeof(path)), 0);
	/* byte 29 is the IHDR CRC: the first chunk's checksum */
	f = fopen(path, "r+b");
	ASSERT_NONNULL(f);
	ASSERT_EQ(fseek(f, 29, SEEK_SET), 0);
	fputc(0x5a, f);
	fclose(f);
	EXPECT_EQ(npr_image_load_png(path, &img), -EINVAL);
	EXPECT_NONNULL(strstr(npr_image_last_error(), "corrupt"));
	unlink(path);
}

TEST(png_too_wide_fails_with_efbig)
{
	const png_uint_32 w = 70000;
	char path[4096];
	struct npr_image img;
	png_structp png;
	png_infop info;
	uint8_t *row;
	FILE *f;
	int fd;

	fd = tmp_file(path, sizeof(path));
	ASSERT_GE(fd, 0);
	f = fdopen(fd, "wb");
	row = calloc(w / 8 + 1, 1);
	ASSERT_NONNULL(f);
	ASSERT_NONNULL(row);
	png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	info = png_create_info_struct(png);
	ASSERT_EQ(setjmp(png_jmpbuf(png)), 0);
	png_init_io(png, f);
	png_set_IHDR(png, info, w, 1, 1, PNG_COLOR_TYPE_GRAY,
		     PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
		     PNG_FILTER_TYPE_DEFAULT);
	png_write_info(png, info);
	png_write_row(png, row);
	png_write_end(png, NULL);
	png_destroy_write_struct(&png, &info);
	fclose(f);
	free(row);

	EXPECT_EQ(npr_image_load_png(path, &img), -EFBIG);
	EXPECT_NULL(img.px);
	EXPECT_NONNULL(strstr(npr_image_last_error(), "too large"));
	unlink(path);
}

/* ---- resize -------------------------------------------------------------- */

static void fill(struct npr_image *img, int w, int h, const uint8_t *v)
{
	img->w = w;
	img->h = h;
	img->c = 3;
	img->px = malloc((size_t)w * h * 3);
	memcpy(img->px, v, (size_t)w * h * 3);
}

TEST(resize_same_size_is_identity)
{
	struct npr_image src, dst;
	uint8_t v[W * H * 3];
	int i;

	for (i = 0; i < W * H * 3; i++)
		v[i] = (uint8_t)(i * 7);
	fill(&src, W, H, v);
	ASSERT_EQ(npr_image_resize_bilinear(&src, W, H, &dst), 0);
	EXPECT_EQ(memcmp(dst.px, v, sizeof(v)), 0);
	npr_image_free(&src);
	npr_image_free(&dst);
}

/* 2 -> 4 pixels: centres at -0.25 (edge), 0.25, 0.75, 1.25 (edge). */
TEST(resize_upscale_aligns_pixel_centres)
{
	static const uint8_t v[] = { 0, 0, 0, 255, 255, 255 };
	static const uint8_t want[] = { 0, 64, 191, 255 };
	struct npr_image src, dst;
	int x;

	fill(&src, 2, 1, v);
	ASSERT_EQ(npr_image_resize_bilinear(&src, 4, 1, &dst), 0);
	for (x = 0; x < 4; x++)
		EXPECT_EQ(dst.px[x * 3 + 1], want[x]);
	npr_image_free(&src);
	npr_image_free(&dst);
}

/* Halving samples exactly between four pixels: their rounded mean. */
TEST(resize_halving_averages_2x2_blocks)
{
	static const uint8_t v[4 * 2 * 3] = {
		10, 0, 0,  20, 0, 0,  100, 0, 0,  201, 0, 0,
		30, 0, 0,  40, 0, 0,  100, 0, 0,  200, 0, 0,
	};
	struct npr_image src, dst;

	fill(&src, 4, 2, v);
	ASSERT_EQ(npr_image_resize_bilinear(&src, 2, 1, &dst), 0);
	EXPECT_EQ(dst.px[0], 25);
	EXPECT_EQ(dst.px[3], 150);	/* 150.25 */
	npr_image_free(&src);
	npr_image_free(&dst);
}

TEST(resize_downscale_of_constant_is_constant)
{
	struct npr_image src, dst;
	uint8_t *v = malloc(640 * 480 * 3);
	int i;

	ASSERT_NONNULL(v);
	memset(v, 77, 640 * 480 * 3);
	fill(&src, 640, 480, v);
	ASSERT_EQ(npr_image_resize_bilinear(&src, 227, 113, &dst), 0);
	for (i = 0; i < 227 * 113 * 3; i++)
		if (dst.px[i] != 77)
			break;
	EXPECT_EQ(i, 227 * 113 * 3);
	npr_image_free(&src);
	npr_image_free(&dst);
	free(v);
}

TEST(resize_rejects_bad_sizes)
{
	static const uint8_t v[3] = { 1, 2, 3 };
	struct npr_image src, dst = { 0 }, none = { 0 };

	fill(&src, 1, 1, v);
	EXPECT_EQ(npr_image_resize_bilinear(&src, 0, 4, &dst), -EINVAL);
	EXPECT_EQ(npr_image_resize_bilinear(&src, 4, -1, &dst), -EINVAL);
	EXPECT_EQ(npr_image_resize_bilinear(&none, 4, 4, &dst), -EINVAL);
	EXPECT_NULL(dst.px);
	npr_image_free(&src);
}

/* ---- tensor -------------------------------------------------------------- */

/* 2 x 1 pixels: (R, G, B) = (1, 2, 3) and (4, 5, 6). */
static const uint8_t two_px[] = { 1, 2, 3, 4, 5, 6 };

TEST(tensor_default_is_bgr_nchw_0_255)
{
	static const float want[] = { 3, 6, 2, 5, 1, 4 };
	struct npr_preproc pp;
	struct npr_image img;
	float out[6];
	int i;

	fill(&img, 2, 1, two_px);
	npr_preproc_default(&pp);
	ASSERT_EQ(npr_image_to_tensor(&img, &pp, NPR_ELEM_F32, out), 0);
	for (i = 0; i < 6; i++)
		EXPECT_EQ(out[i], want[i]);
	npr_image_free(&img);
}

TEST(tensor_rgb_nhwc_scale_mean_std)
{
	/* (p / 2 - mean) / std, channels R G B interleaved */
	static const float want[] = {
		(0.5f - 1) / 2, (1.0f - 0) / 4, (1.5f + 1) / 0.5f,
		(2.0f - 1) / 2, (2.5f - 0) / 4, (3.0f + 1) / 0.5f,
	};
	struct npr_preproc pp;
	struct npr_image img;
	float out[6];
	int i;

	fill(&img, 2, 1, two_px);
	npr_preproc_default(&pp);
	pp.rgb = true;
	pp.nhwc = true;
	pp.scale = 0.5f;
	pp.mean[0] = 1;
	pp.mean[2] = -1;
	pp.std[0] = 2;
	pp.std[1] = 4;
	pp.std[2] = 0.5f;
	ASSERT_EQ(npr_image_to_tensor(&img, &pp, NPR_ELEM_F32, out), 0);
	for (i = 0; i < 6; i++)
		EXPECT_NEAR(out[i], want[i], 1e-6);
	npr_image_free(&img);
}

TEST(tensor_gray_is_bt601_luma)
{
	struct npr_preproc pp;
	struct npr_image img;
	float out[2];

	fill(&img, 2, 1, two_px);
	npr_preproc_default(&pp);
	pp.gray = true;
	ASSERT_EQ(npr_image_to_tensor(&img, &pp, NPR_ELEM_F32, out), 0);
	EXPECT_NEAR(out[0], 0.299 * 1 + 0.587 * 2 + 0.114 * 3, 1e-5);
	EXPECT_NEAR(out[1], 0.299 * 4 + 0.587 * 5 + 0.114 * 6, 1e-5);
	npr_image_free(&img);
}

TEST(tensor_f16_matches_f32)
{
	struct npr_preproc pp;
	struct npr_image img;
	float f[6];
	uint16_t h[6];
	int i;

	fill(&img, 2, 1, two_px);
	npr_preproc_default(&pp);
	pp.scale = 1 / 255.0f;
	ASSERT_EQ(npr_image_to_tensor(&img, &pp, NPR_ELEM_F32, f), 0);
	ASSERT_EQ(npr_image_to_tensor(&img, &pp, NPR_ELEM_F16, h), 0);
	for (i = 0; i < 6; i++)
		EXPECT_EQ(h[i], npr_half_from_float(f[i]));
	npr_image_free(&img);
}

TEST(tensor_rejects_other_types_and_zero_std)
{
	struct npr_preproc pp;
	struct npr_image img;
	float out[6];

	fill(&img, 2, 1, two_px);
	npr_preproc_default(&pp);
	EXPECT_EQ(npr_image_to_tensor(&img, &pp, NPR_ELEM_U8, out), -EINVAL);
	pp.std[1] = 0;
	EXPECT_EQ(npr_image_to_tensor(&img, &pp, NPR_ELEM_F32, out), -EINVAL);
	npr_image_free(&img);
}

/* ---- f16 ----------------------------------------------------------------- */

static float bits_f(uint32_t x)
{
	float f;

	memcpy(&f, &x, sizeof(f));
	return f;
}

TEST(half_every_value_round_trips)
{
	uint32_t h, bad = 0;

	for (h = 0; h < 0x10000; h++) {
		float f = npr_half_to_float((uint16_t)h);
		uint16_t back = npr_half_from_float(f);

		if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) {
			/* NaN stays NaN */
			if (!isnan(f) || (back & 0x7c00) != 0x7c00 ||
			    !(back & 0x3ff))
				bad++;
			continue;
		}
		if (back != h && !bad++)
			TH_LOG("0x%04x -> %g -> 0x%04x", h, f, back);
	}
	EXPECT_EQ(bad, 0);
}

TEST(half_rounds_to_nearest_even)
{
	EXPECT_EQ(npr_half_from_float(1.0f), 0x3c00);
	/* exactly between 1 and 1 + 2^-10: to the even 1 */
	EXPECT_EQ(npr_half_from_float(1.0f + 0x1p-11f), 0x3c00);
	/* between 1 + 2^-10 and 1 + 2^-9: to the even 1 + 2^-9 */
	EXPECT_EQ(npr_half_from_float(1.0f + 3 * 0x1p-11f), 0x3c02);
	EXPECT_EQ(npr_half_from_float(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
	EXPECT_EQ(npr_half_from_float(-2.0f), 0xc000);
	EXPECT_EQ(npr_half_from_float(65504.0f), 0x7bff);
	EXPECT_EQ(npr_half_from_float(65519.0f), 0x7bff);
	EXPECT_EQ(npr_half_from_float(65520.0f), 0x7c00);	/* overflow */
	EXPECT_EQ(npr_half_from_float(-1e10f), 0xfc00);
	EXPECT_EQ(npr_half_from_float(bits_f(0x7f800000)), 0x7c00);
	EXPECT_TRUE(isnan(npr_half_to_float(npr_half_from_float(NAN))));
	/* subnormals: 2^-24 is the smallest; half of it ties to 0 */
	EXPECT_EQ(npr_half_from_float(0x1p-24f), 0x0001);
	EXPECT_EQ(npr_half_from_float(0x1p-25f), 0x0000);
	EXPECT_EQ(npr_half_from_float(0x1.01p-25f), 0x0001);
	EXPECT_EQ(npr_half_from_float(3 * 0x1p-25f), 0x0002);
	EXPECT_EQ(npr_half_from_float(0x1p-14f - 0x1p-25f), 0x0400);
	EXPECT_EQ(npr_half_from_float(-0x1p-30f), 0x8000);
	EXPECT_EQ(npr_half_to_float(0x0001), 0x1p-24f);
	EXPECT_EQ(npr_half_to_float(0x3555), 0x1.554p-2f);
}

#ifdef __FLT16_MAX__
/* The compiler's own conversion (IEEE, round to nearest even) agrees. */
TEST(half_matches_compiler_float16)
{
	uint32_t x = 0x12345678, i, bad = 0;

	for (i = 0; i < 2000000; i++) {
		_Float16 ref;
		uint16_t want;
		float f;

		x = x * 1664525u + 1013904223u;	/* any bit pattern */
		f = bits_f(x);
		if (isnan(f))
			continue;
		ref = (_Float16)f;
		memcpy(&want, &ref, sizeof(want));
		if (npr_half_from_float(f) != want && !bad++)
			TH_LOG("%a: 0x%04x, want 0x%04x", f,
			       npr_half_from_float(f), want);
	}
	EXPECT_EQ(bad, 0);
}
#endif

TEST_HARNESS_MAIN
