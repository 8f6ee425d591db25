// SPDX-License-Identifier: MIT
/*
 * JPEG input of the tools (tools/image.c): a shared photo read from its
 * PNG, written here as a JPEG with libjpeg and read back through
 * npr_image_load() equals the PNG's pixels within JPEG's loss; the format
 * is told by the first bytes, not the name; a gray JPEG comes back as RGB;
 * truncated, garbled and unknown files fail with -EINVAL and a message,
 * and nothing is printed by libjpeg.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jpeglib.h>

#include "harness.h"
#include "npuring.h"
#include "tools/image.h"

#define PHOTO	"images/astronaut.png"

static int tmp_file(char *path, size_t len, const char *suffix)
{
	int fd;

	snprintf(path, len, "/tmp/npr-jpeg-XXXXXX%s", suffix);
	fd = mkstemps(path, (int)strlen(suffix));
	if (fd >= 0)
		close(fd);
	return fd < 0 ? -errno : 0;
}

/* @img as a JPEG of @quality, in @comps components (1: its red plane). */
static int write_jpeg(const char *path, const struct npr_image *img,
		      int quality, int comps)
{
	struct jpeg_compress_struct c;
	struct jpeg_error_mgr e;
	uint8_t *row = malloc((size_t)img->w * 3);
	FILE *f = fopen(path, "wb");
	int x;

	if (!f || !row) {
		free(row);
		if (f)
			fclose(f);
		return -1;
	}
	c.err = jpeg_std_error(&e);
	jpeg_create_compress(&c);
	jpeg_stdio_dest(&c, f);
	c.image_width = img->w;
	c.image_height = img->h;
	c.input_components = comps;
	c.in_color_space = comps == 3 ? JCS_RGB : JCS_GRAYSCALE;
	jpeg_set_defaults(&c);
	jpeg_set_quality(&c, quality, TRUE);
	jpeg_start_compress(&c, TRUE);
	while (c.next_scanline < c.image_height) {
		const uint8_t *src = img->px + (size_t)c.next_scanline *
					       img->w * 3;
		JSAMPROW r = row;

		for (x = 0; x < img->w * comps; x++)
			row[x] = src[comps == 3 ? x : x * 3];
		jpeg_write_scanlines(&c, &r, 1);
	}
	jpeg_finish_compress(&c);
	jpeg_destroy_compress(&c);
	free(row);
	return fclose(f) ? -1 : 0;
}

/* The shared photo's path (in a static buffer). */
static const char *photo(void)
{
	static char path[8192];

	if (snprintf(path, sizeof(path), "%s/%s", npr_test_shared(), PHOTO) >=
	    (int)sizeof(path))
		path[0] = 0;
	return path;
}

static int load_photo(struct npr_image *img)
{
	return npr_image_load_png(photo(), img);
}

/* Mean and largest absolute difference of two images of one size. */
static void diff(const struct npr_image *a, const struct npr_image *b,
		 double *mean, int *max)
{
	size_t i, n = (size_t)a->w * a->h * 3;
	double sum = 0;

	*max = 0;
	for (i = 0; i < n; i++) {
		int d = abs((int)a->px[i] - (int)b->px[i]);

		sum += d;
		if (d > *max)
			*max = d;
	}
	*mean = sum / n;
}

TEST(jpeg_of_a_shared_photo_matches_its_png)
{
	struct npr_image png, jpg;
	char path[64];
	double mean;
	int max;

	if (load_photo(&png))
		SKIP(return, "no %s in %s", PHOTO, npr_test_shared());
	ASSERT_EQ(tmp_file(path, sizeof(path), ".jpg"), 0);
	ASSERT_EQ(write_jpeg(path, &png, 95, 3), 0);
	ASSERT_EQ(npr_image_load(path, &jpg), 0);
	unlink(path);
	ASSERT_EQ(jpg.w, png.w);
	ASSERT_EQ(jpg.h, png.h);
	ASSERT_EQ(jpg.c, 3);
	diff(&png, &jpg, &mean, &max);
	TH_LOG("quality 95: mean |diff| %.3f, max %d", mean, max);
	/* quality 95 with 4:2:0 chroma: about 1.5 on average */
	EXPECT_LT(mean, 3.0);
	EXPECT_LT(max, 96);
	EXPECT_GT(max, 0);	/* it went through JPEG's loss */
	npr_image_free(&png);
	npr_image_free(&jpg);
}

TEST(format_is_told_by_contents_not_name)
{
	struct npr_image png, a, b;
	char jpg_as_png[64];

	if (load_photo(&png))
		SKIP(return, "no %s in %s", PHOTO, npr_test_shared());
	ASSERT_EQ(tmp_file(jpg_as_png, sizeof(jpg_as_png), ".png"), 0);
	ASSERT_EQ(write_jpeg(jpg_as_png, &png, 90, 3), 0);
	EXPECT_EQ(npr_image_load(jpg_as_png, &a), 0);
	EXPECT_EQ(a.w, png.w);
	/* the PNG decoder itself refuses it */
	EXPECT_EQ(npr_image_load_png(jpg_as_png, &b), -EINVAL);
	unlink(jpg_as_png);
	EXPECT_EQ(npr_image_load(photo(), &b), 0);
	EXPECT_EQ(memcmp(b.px, png.px, (size_t)png.w * png.h * 3), 0);
	npr_image_free(&png);
	npr_image_free(&a);
	npr_image_free(&b);
}

TEST(gray_jpeg_comes_back_as_equal_channels)
{
	struct npr_image img, out;
	uint8_t px[16 * 8 * 3];
	char path[64];
	int i;

	for (i = 0; i < 16 * 8 * 3; i++)
		px[i] = (uint8_t)(i / 3 % 16 * 8 + i / 48 * 4);
	img = (struct npr_image){ .w = 16, .h = 8, .c = 3, .px = px };
	ASSERT_EQ(tmp_file(path, sizeof(path), ".jpg"), 0);
	ASSERT_EQ(write_jpeg(path, &img, 100, 1), 0);
	ASSERT_EQ(npr_image_load(path, &out), 0);
	unlink(path);
	ASSERT_EQ(out.w, 16);
	for (i = 0; i < 16 * 8; i++) {
		EXPECT_EQ(out.px[i * 3], out.px[i * 3 + 1]);
		EXPECT_EQ(out.px[i * 3], out.px[i * 3 + 2]);
		EXPECT_LE(abs(out.px[i * 3] - px[i * 3]), 4);
	}
	npr_image_free(&out);
}

/* The photo's JPEG cut to @keep bytes, or with bytes @at.. overwritten. */
static int broken_jpeg(char *path, size_t len, long keep, long at)
{
	struct npr_image png;
	FILE *f;
	long n;

	if (load_photo(&png))
		return -ENOENT;
	if (tmp_file(path, len, ".jpg") || write_jpeg(path, &png, 90, 3)) {
		npr_image_free(&png);
		return -EIO;
	}
	npr_image_free(&png);
	if (keep >= 0 && truncate(path, keep))
		return -errno;
	if (at >= 0) {
		f = fopen(path, "r+b");
		if (!f || fseek(f, at, SEEK_SET))
			return -EIO;
		for (n = 0; n < 64; n++)
			fputc(n & 1 ? 0xff : 0xd9, f);
		if (fclose(f))
			return -EIO;
	}
	return 0;
}

TEST(truncated_jpeg_fails_with_einval)
{
	struct npr_image img;
	char path[64];
	int err = broken_jpeg(path, sizeof(path), 4000, -1);

	if (err == -ENOENT)
		SKIP(return, "no %s in %s", PHOTO, npr_test_shared());
	ASSERT_EQ(err, 0);
	EXPECT_EQ(npr_image_load(path, &img), -EINVAL);
	EXPECT_NULL(img.px);
	TH_LOG("%s", npr_image_last_error());
	EXPECT_NONNULL(strstr(npr_image_last_error(), "corrupt JPEG file"));
	unlink(path);
}

TEST(garbled_jpeg_fails_with_einval)
{
	struct npr_image img;
	char path[64];
	int err = broken_jpeg(path, sizeof(path), -1, 1000);

	if (err == -ENOENT)
		SKIP(return, "no %s in %s", PHOTO, npr_test_shared());
	ASSERT_EQ(err, 0);
	EXPECT_EQ(npr_image_load(path, &img), -EINVAL);
	EXPECT_NULL(img.px);
	TH_LOG("%s", npr_image_last_error());
	EXPECT_NONNULL(strstr(npr_image_last_error(), "JPEG"));
	unlink(path);
}

TEST(neither_png_nor_jpeg_fails_with_einval)
{
	struct npr_image img;
	char path[64];
	FILE *f;

	ASSERT_EQ(tmp_file(path, sizeof(path), ".jpg"), 0);
	f = fopen(path, "wb");
	ASSERT_NONNULL(f);
	fputs("GIF89a, not a photo we read", f);
	fclose(f);
	EXPECT_EQ(npr_image_load(path, &img), -EINVAL);
	EXPECT_NONNULL(strstr(npr_image_last_error(),
			      "neither a PNG nor a JPEG"));
	unlink(path);
	EXPECT_EQ(npr_image_load("/nonexistent/photo.jpg", &img), -ENOENT);
}

TEST_HARNESS_MAIN
