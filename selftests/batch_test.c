// SPDX-License-Identifier: MIT
/*
 * npr-batch, run as a program (../tools/npr-batch) on a directory made
 * for each test from the shared photos: copies of them, a JPEG written
 * here from one of them, a raw f32 tensor, a truncated PNG and a text
 * file.  Checked: one line per input in input order, each photo's top
 * class equal to npr-run's for the same file, an error line for each bad
 * input and exit status 1, --unordered giving the same lines, 1 and 4
 * requests in flight giving the same lines, a list file and standard
 * input giving what the directory gives, the eventfd fallback (polled
 * completions) too, every line valid JSON (python3's json module), and
 * the usage errors' exit status 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <jpeglib.h>

#include "harness.h"
#include "../tools/image.h"
#include "files.h"

#define SQUEEZE	"models/ir/squeezenet1.1/FP16/squeezenet1.1.xml"
#define RAW_BYTES	(3 * 227 * 227 * 4)	/* squeezenet's input in f32 */

static const char *const photos[] = { "astronaut", "chelsea", "coffee" };
#define NPHOTOS	3
#define COPIES	3
/* the directory: 9 PNG copies, a JPEG, a raw tensor, 2 bad files */
#define NFILES	(NPHOTOS * COPIES + 4)

#define NEED_SHARED() do {						\
	if (!npr_test_shared_ok())					\
		SKIP(return, "no shared data at %s", npr_test_shared());	\
} while (0)

/* A tool: $NPR_TOOLS/NAME, else the one built next to this program. */
#define tool npr_test_tool

static char *shared(const char *rel)
{
	static char buf[4][PATH_MAX];
	static int next;
	char *b = buf[next++ % 4];

	if (snprintf(b, PATH_MAX, "%s/%s", npr_test_shared(), rel) >= PATH_MAX)
		b[0] = 0;
	return b;
}

/* The integer after "KEY": in @s; -1 when absent. */
static long jint(const char *s, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(s, pat);
	return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

/* Split @s at newlines in place; the lines in @v (at most @max). */
static int lines(char *s, char **v, int max)
{
	int n = 0;
	char *nl;

	while (s && *s && n < max) {
		v[n++] = s;
		nl = strchr(s, '\n');
		if (!nl)
			break;
		*nl = 0;
		s = nl + 1;
	}
	return n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A JPEG of @png at quality 95, written to @path. */
static int write_jpeg(const char *png, const char *path)
{
	struct jpeg_compress_struct c;
	struct jpeg_error_mgr jerr;
	struct npr_image img;
	JSAMPROW row;
	FILE *f;

	if (npr_image_load_png(png, &img))
		return -1;
	f = fopen(path, "wb");
	if (!f) {
		npr_image_free(&img);
		return -1;
	}
	c.err = jpeg_std_error(&jerr);
	jpeg_create_compress(&c);
	jpeg_stdio_dest(&c, f);
	c.image_width = img.w;
	c.image_height = img.h;
	c.input_components = 3;
	c.in_color_space = JCS_RGB;
	jpeg_set_defaults(&c);
	jpeg_set_quality(&c, 95, TRUE);
	jpeg_start_compress(&c, TRUE);
	while (c.next_scanline < c.image_height) {
		row = img.px + (size_t)c.next_scanline * img.w * 3;
		jpeg_write_scanlines(&c, &row, 1);
	}
	jpeg_finish_compress(&c);
	jpeg_destroy_compress(&c);
	npr_image_free(&img);
	return fclose(f);
}

static int copy_file(const char *from, const char *to, size_t limit)
{
	char buf[65536];
	size_t n, done = 0;
	FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
	int err = 0;

	if (!a || !b)
		err = -1;
	while (!err && done < limit &&
	       (n = fread(buf, 1, sizeof(buf), a)) > 0) {
		if (n > limit - done)
			n = limit - done;
		if (fwrite(buf, 1, n, b) != n)
			err = -1;
		done += n;
	}
	if (a)
		fclose(a);
	if (b && fclose(b))
		err = -1;
	return err;
}

/*
 * The test directory; names[] its files in sorted order, kind[] 'p' for a
 * PNG copy of photos[photo[]], 'j' the JPEG of coffee, 'r' the raw
 * tensor, 'x' a bad file.
 */
FIXTURE(batch) {
	char dir[64];
	char names[NFILES][PATH_MAX];
	char kind[NFILES];
	int photo[NFILES];
	int top[NPHOTOS + 1];	/* npr-run's top class; [NPHOTOS]: raw */
};

/* npr-run's top class of @argv's run, -1 if it failed. */
static int npr_run_top(char *const argv[])
{
	char *out, *err;
	int st = npr_test_run(&out, &err, NULL, NULL, argv);
	long c = st == 0 && out ? jint(out, "class") : -1;

	free(out);
	free(err);
	return (int)c;
}

FIXTURE_SETUP(batch)
{
	char path[PATH_MAX], src[PATH_MAX], dir[PATH_MAX], *sorted[NFILES];
	int i, k, n = 0;
	FILE *f;

	self->dir[0] = 0;
	NEED_SHARED();
	strcpy(self->dir, "/tmp/npr-batch-test-dir.XXXXXX");
	ASSERT_NE(mkdtemp(self->dir), NULL);
	/* a copy: the names below are written into the same fixture */
	strcpy(dir, self->dir);
	for (k = 0; k < COPIES; k++)
		for (i = 0; i < NPHOTOS; i++) {
			snprintf(src, sizeof(src), "images/%s.png", photos[i]);
			snprintf(path, sizeof(path), "%s/%d-%s.png", self->dir,
				 k, photos[i]);
			ASSERT_EQ(copy_file(shared(src), path, SIZE_MAX), 0);
		}
	snprintf(path, sizeof(path), "%s/1-coffee.jpg", self->dir);
	ASSERT_EQ(write_jpeg(shared("images/coffee.png"), path), 0);
	snprintf(path, sizeof(path), "%s/2-ramp.f32", self->dir);
	f = fopen(path, "wb");
	ASSERT_NE(f, NULL);
	for (i = 0; i < RAW_BYTES / 4; i++) {
		float v = (float)(i % 227);

		fwrite(&v, 4, 1, f);
	}
	ASSERT_EQ(fclose(f), 0);
	snprintf(path, sizeof(path), "%s/1-corrupt.png", self->dir);
	ASSERT_EQ(copy_file(shared("images/chelsea.png"), path, 3000), 0);
	snprintf(path, sizeof(path), "%s/0-notes.txt", self->dir);
	f = fopen(path, "w");
	ASSERT_NE(f, NULL);
	fputs("not an input\n", f);
	ASSERT_EQ(fclose(f), 0);

	/* the directory's order: sorted by name */
	for (k = 0; k < COPIES; k++)
		for (i = 0; i < NPHOTOS; i++) {
			snprintf(self->names[n], PATH_MAX, "%s/%d-%s.png",
				 dir, k, photos[i]);
			n++;
		}
	snprintf(self->names[n++], PATH_MAX, "%s/1-coffee.jpg", dir);
	snprintf(self->names[n++], PATH_MAX, "%s/2-ramp.f32", dir);
	snprintf(self->names[n++], PATH_MAX, "%s/1-corrupt.png", dir);
	snprintf(self->names[n++], PATH_MAX, "%s/0-notes.txt", dir);
	for (i = 0; i < NFILES; i++)
		sorted[i] = self->names[i];
	qsort(sorted, NFILES, sizeof(*sorted), cmp_str);
	{
		char tmp[NFILES][PATH_MAX];

		for (i = 0; i < NFILES; i++)
			strcpy(tmp[i], sorted[i]);
		memcpy(self->names, tmp, sizeof(tmp));
	}
	for (i = 0; i < NFILES; i++) {
		const char *b = strrchr(self->names[i], '/') + 1;

		self->photo[i] = -1;
		self->kind[i] = strstr(b, ".jpg") ? 'j' :
				strstr(b, ".f32") ? 'r' : 'x';
		for (k = 0; k < NPHOTOS; k++)
			if (!strcmp(b + 2, photos[k]) ||
			    (!strncmp(b + 2, photos[k], strlen(photos[k])) &&
			     !strcmp(b + 2 + strlen(photos[k]), ".png"))) {
				self->kind[i] = 'p';
				self->photo[i] = k;
			}
	}

	for (i = 0; i < NPHOTOS; i++) {
		snprintf(src, sizeof(src), "images/%s.png", photos[i]);
		char *argv[] = { (char *)tool("npr-run"), "-m", shared(SQUEEZE),
				 "-i", shared(src), "--top", "1", "--json",
				 NULL };

		self->top[i] = npr_run_top(argv);
		ASSERT_GE(self->top[i], 0);
	}
	snprintf(path, sizeof(path), "data=%s/2-ramp.f32", self->dir);
	{
		char *argv[] = { (char *)tool("npr-run"), "-m", shared(SQUEEZE),
				 "--input", path, "--top", "1", "--json",
				 NULL };

		self->top[NPHOTOS] = npr_run_top(argv);
		ASSERT_GE(self->top[NPHOTOS], 0);
	}
}

FIXTURE_TEARDOWN(batch)
{
	if (self->dir[0])
		npr_test_rm_tree(self->dir);
}

/* npr-batch with @extra options (NULL-terminated, at most 6) on @src. */
static int batch(char **out, const char *env, const char *in,
		 const char *src, const char *const *extra)
{
	char *argv[16] = { (char *)tool("npr-batch"), "-m", shared(SQUEEZE),
			   "--top", "1" };
	char *err;
	int n = 5, st;

	while (extra && *extra)
		argv[n++] = (char *)*extra++;
	argv[n++] = (char *)src;
	argv[n] = NULL;
	st = npr_test_run(out, &err, env, in, argv);
	free(err);
	return st;
}

/* @out is one line per file of the directory, in order, each right. */
static void check_ordered(struct npr_test *_metadata,
			  FIXTURE_DATA(batch) *self, char *out)
{
	char *v[NFILES + 2], name[PATH_MAX + 16];
	int n, i;

	n = lines(out, v, NFILES + 2);
	ASSERT_EQ(n, NFILES);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(jint(v[i], "index"), i);
		snprintf(name, sizeof(name), "\"name\":\"%s\"", self->names[i]);
		EXPECT_NE(strstr(v[i], name), NULL);
		switch (self->kind[i]) {
		case 'p':
			EXPECT_EQ(jint(v[i], "class"), self->top[self->photo[i]]);
			break;
		case 'j':	/* the JPEG of coffee */
			EXPECT_EQ(jint(v[i], "class"), self->top[2]);
			break;
		case 'r':
			EXPECT_EQ(jint(v[i], "class"), self->top[NPHOTOS]);
			break;
		default:
			EXPECT_NE(strstr(v[i], "\"error\":\""), NULL);
			EXPECT_EQ(strstr(v[i], "\"top\""), NULL);
		}
	}
}

TEST_F(batch, ordered_matches_npr_run)
{
	char *out;

	EXPECT_EQ(batch(&out, NULL, NULL, self->dir, NULL), 1);
	ASSERT_NE(out, NULL);
	check_ordered(_metadata, self, out);
	free(out);
}

/* The corrupt PNG and the text file say what is wrong with them. */
TEST_F(batch, error_lines)
{
	char *out;

	EXPECT_EQ(batch(&out, NULL, NULL, self->dir, NULL), 1);
	ASSERT_NE(out, NULL);
	EXPECT_NE(strstr(out, "1-corrupt.png\",\"error\":\"truncated PNG file\""),
		  NULL);
	EXPECT_NE(strstr(out, "0-notes.txt\",\"error\":\"13 bytes: not a PNG or JPEG image"),
		  NULL);
	free(out);
}

TEST_F(batch, unordered_same_set)
{
	static const char *const un[] = { "--unordered", NULL };
	char *a, *b, *va[NFILES + 2], *vb[NFILES + 2];
	int na, nb, i;

	EXPECT_EQ(batch(&a, NULL, NULL, self->dir, NULL), 1);
	EXPECT_EQ(batch(&b, NULL, NULL, self->dir, un), 1);
	ASSERT_NE(a, NULL);
	ASSERT_NE(b, NULL);
	na = lines(a, va, NFILES + 2);
	nb = lines(b, vb, NFILES + 2);
	ASSERT_EQ(na, NFILES);
	ASSERT_EQ(nb, NFILES);
	qsort(va, na, sizeof(*va), cmp_str);
	qsort(vb, nb, sizeof(*vb), cmp_str);
	for (i = 0; i < na; i++)
		EXPECT_STREQ(va[i], vb[i]);
	free(a);
	free(b);
}

TEST_F(batch, nireq_1_and_4_agree)
{
	static const char *const one[] = { "--nireq", "1", NULL };
	static const char *const four[] = { "--nireq", "4", NULL };
	char *a, *b;

	EXPECT_EQ(batch(&a, NULL, NULL, self->dir, one), 1);
	EXPECT_EQ(batch(&b, NULL, NULL, self->dir, four), 1);
	ASSERT_NE(a, NULL);
	ASSERT_NE(b, NULL);
	EXPECT_STREQ(a, b);
	check_ordered(_metadata, self, a);
	free(a);
	free(b);
}

/* A list file, standard input and the polled eventfd fallback give what
 * the directory gives. */
TEST_F(batch, list_stdin_fallback_agree)
{
	char list[PATH_MAX], *a, *b;
	FILE *f;
	int i;

	snprintf(list, sizeof(list), "%s.list", self->dir);
	f = fopen(list, "w");
	ASSERT_NE(f, NULL);
	for (i = 0; i < NFILES; i++)
		fprintf(f, "%s\n", self->names[i]);
	ASSERT_EQ(fclose(f), 0);

	EXPECT_EQ(batch(&a, NULL, NULL, self->dir, NULL), 1);
	ASSERT_NE(a, NULL);
	EXPECT_EQ(batch(&b, NULL, NULL, list, NULL), 1);
	EXPECT_STREQ(a, b);
	free(b);
	EXPECT_EQ(batch(&b, NULL, list, "-", NULL), 1);
	EXPECT_STREQ(a, b);
	free(b);
	EXPECT_EQ(batch(&b, "NPR_RING_FALLBACK=1", NULL, self->dir, NULL), 1);
	EXPECT_STREQ(a, b);
	free(b);
	free(a);
	unlink(list);
}

/* Every line, the summary of --json included, is a JSON object. */
TEST_F(batch, json_lines_parse)
{
	static const char *const js[] = { "--json", "--nireq", "2", NULL };
	static const char check[] =
		"import json, sys\n"
		"v = [json.loads(l) for l in open(sys.argv[1])]\n"
		"s = v.pop()['summary']\n"
		"assert s['inputs'] == len(v) == int(sys.argv[2]), s\n"
		"assert s['failed'] == 2 and s['ok'] == len(v) - 2, s\n"
		"assert s['inputs_per_s'] > 0 and s['wall_s'] > 0, s\n"
		"assert [x['index'] for x in v] == list(range(len(v)))\n"
		"for x in v:\n"
		"    assert ('error' in x) != ('top' in x), x\n"
		"    assert 'error' in x or x['kind'] == 'classes', x\n";
	char path[] = "/tmp/npr-batch-test-out.XXXXXX", n[16], *out, *err;
	char *py = getenv("PYTHON") ? getenv("PYTHON") : "python3";
	int fd, st;

	EXPECT_EQ(batch(&out, NULL, NULL, self->dir, js), 1);
	ASSERT_NE(out, NULL);
	fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, out, strlen(out)), (ssize_t)strlen(out));
	close(fd);
	free(out);
	snprintf(n, sizeof(n), "%d", NFILES);
	{
		char *argv[] = { py, "-c", (char *)check, path, n, NULL };

		st = npr_test_run(&out, &err, NULL, NULL, argv);
	}
	unlink(path);
	if (st == 127) {
		free(out);
		free(err);
		SKIP(return, "no %s to parse the lines", py);
	}
	if (st)
		TH_LOG("%s", err);
	EXPECT_EQ(st, 0);
	free(out);
	free(err);
}

/* Usage errors exit 2; --version names the tool and the package. */
TEST(usage_and_version)
{
	static const char *const cases[][4] = {
		{ "-m", "x.xml", NULL },		/* no inputs */
		{ "/tmp", NULL },			/* no model */
		{ "-m", "x.xml", "--nireq", "0" },	/* then /tmp */
		{ "-m", "x.xml", "--bogus", NULL },
		{ "-m", "x.xml", "--out-dir", "/proc/npr-none" },
	};
	char *argv[8], *out, *err;
	size_t c;
	int n;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		argv[0] = (char *)tool("npr-batch");
		for (n = 0; n < 4 && cases[c][n]; n++)
			argv[n + 1] = (char *)cases[c][n];
		argv[++n] = c >= 2 ? "/tmp" : NULL;
		argv[n + 1] = NULL;
		EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 2);
		EXPECT_NE(strstr(err, "npr-batch"), NULL);
		free(out);
		free(err);
	}
	argv[1] = "--version";
	argv[2] = NULL;
	EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 0);
	EXPECT_EQ(strncmp(out, "npr-batch (npuring) ", 20), 0);
	free(out);
	free(err);
}

TEST_HARNESS_MAIN
