// SPDX-License-Identifier: MIT
/*
 * The tools' output contracts, checked by running the programs built next
 * to this one (../tools/): npr-bench --cache-dir (FEIL and FIL, the second
 * compile loaded from the cache, one entry in the directory), npr-bench
 * --profile (the ten costliest layers, in order, with shares), a
 * compiled-model blob given to npr-bench as its model, and
 * npr-info (devices, properties with RO/RW, the completion path and its
 * reason, query_model's count against the layers in the IR file).  Then
 * the conventions every tool keeps: --version; the exit status of each of
 * 45 command lines (2 for usage errors, 1 for failures, 0 for
 * every --shape syntax accepted) and the valid names or values their
 * messages list; status 1 and a message when stdout is /dev/full; --json
 * of every tool read back by python3's json module; benchmark_app's
 * spellings; "IR vN" and "ONNX (opset N)"; a JPEG made here from a shared
 * PNG classified as the PNG is, and a corrupt one refused.  No timing is
 * asserted, only the shape and the consistency of what is printed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jpeglib.h>

#include "harness.h"
#include "tools/image.h"
#include "files.h"

#define EYE	"models/ir/open-closed-eye-0001/FP32/open-closed-eye-0001.xml"
#define FACE	"models/ir/face-detection-retail-0004/FP32-v10/face-detection-retail-0004.xml"
#define SQUEEZE	"models/ir/squeezenet1.1/FP16/squeezenet1.1.xml"
#define MOBILE	"models/onnx/mobilenet_v2.onnx"
#define PHOTO	"images/coffee.png"

#define NEED_SHARED() do {						\
	if (!npr_test_shared_ok())					\
		SKIP(return, "no shared data at %s", npr_test_shared());	\
} while (0)

/* A tool: $NPR_TOOLS/NAME, else the one built next to this program. */
#define tool npr_test_tool

static char *model(const char *rel)
{
	static char buf[4][PATH_MAX];
	static int next;
	char *b = buf[next++ % 4];

	if (snprintf(b, PATH_MAX, "%s/%s", npr_test_shared(), rel) >= PATH_MAX)
		b[0] = 0;
	return b;
}

/* The number after "KEY": in a JSON line; -1e300 when absent. */
static double jnum(const char *s, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(s, pat);
	return p ? strtod(p + strlen(pat), NULL) : -1e300;
}

/* Files and directories in @dir: *.blob, *.meta, anything else. */
static void census(const char *dir, int *blobs, int *metas, int *other)
{
	struct dirent *d;
	DIR *dp = opendir(dir);

	*blobs = *metas = *other = 0;
	while (dp && (d = readdir(dp))) {
		size_t l = strlen(d->d_name);

		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		if (l > 5 && !strcmp(d->d_name + l - 5, ".blob"))
			(*blobs)++;
		else if (l > 5 && !strcmp(d->d_name + l - 5, ".meta"))
			(*metas)++;
		else
			(*other)++;
	}
	if (dp)
		closedir(dp);
}

/* Both runs report FEIL and FIL; FIL's compile came from the cache; the
 * directory holds one entry and nothing left behind. */
TEST(bench_cache_dir_json)
{
	char dir[] = "/tmp/npr-tools-test-cache.XXXXXX";
	int r, blobs, metas, other;
	char *out, *err;

	NEED_SHARED();
	ASSERT_NE(mkdtemp(dir), NULL);
	for (r = 0; r < 2; r++) {
		char *argv[] = { (char *)tool("npr-bench"), "-d", "cpu", "-m",
				 model(EYE), "--cache-dir", dir, "--niter", "2",
				 "--json", NULL };
		double feil, fil;

		EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 0);
		ASSERT_NE(out, NULL);
		feil = jnum(out, "feil_ms");
		fil = jnum(out, "fil_ms");
		EXPECT_GT(feil, 0);
		EXPECT_GT(fil, 0);
		/* each is the sum of its parts (printed to 1 us) */
		EXPECT_LT(fabs(feil - jnum(out, "feil_load_ms") -
			       jnum(out, "feil_compile_ms") -
			       jnum(out, "feil_infer_ms")), 0.01);
		EXPECT_LT(fabs(fil - jnum(out, "fil_load_ms") -
			       jnum(out, "fil_compile_ms") -
			       jnum(out, "fil_infer_ms")), 0.01);
		EXPECT_EQ(jnum(out, "loaded_from_cache"), 1);
		EXPECT_GT(jnum(out, "median_ms"), 0);
		/* one line of JSON */
		EXPECT_EQ(out[0], '{');
		EXPECT_NE(strstr(out, "}\n"), NULL);
		EXPECT_EQ(strchr(out, '\n'), out + strlen(out) - 1);
		free(out);
		free(err);
		census(dir, &blobs, &metas, &other);
		EXPECT_EQ(blobs, 1);
		EXPECT_EQ(metas, 1);
		EXPECT_EQ(other, 0);
	}
	npr_test_rm_tree(dir);
}

TEST(bench_cache_dir_text)
{
	char dir[] = "/tmp/npr-tools-test-cache.XXXXXX";
	char *out, *err, *feil, *fil;

	NEED_SHARED();
	ASSERT_NE(mkdtemp(dir), NULL);
	{
		char *argv[] = { (char *)tool("npr-bench"), "-d", "cpu", "-m",
				 model(EYE), "--cache-dir", dir, "--niter", "2",
				 NULL };

		EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 0);
	}
	ASSERT_NE(out, NULL);
	feil = strstr(out, "FEIL ");
	fil = strstr(out, "\nFIL ");
	EXPECT_NE(feil, NULL);
	EXPECT_NE(fil, NULL);
	if (feil && fil) {
		EXPECT_LT(feil, fil);
		EXPECT_NE(strstr(feil, "empty cache entry"), NULL);
		char *eol = strchr(fil + 1, '\n');
		size_t l = eol ? (size_t)(eol - fil) : strlen(fil);

		EXPECT_NE(memmem(fil, l, "(LOADED_FROM_CACHE)", 19), NULL);
	}
	EXPECT_NE(strstr(out, "latency ms:"), NULL);
	free(out);
	free(err);
	/* a directory that cannot be made: a message, exit status 1 */
	{
		char *argv[] = { (char *)tool("npr-bench"), "-d", "cpu", "-m",
				 model(EYE), "--cache-dir",
				 "/proc/npr-no-such-dir/cache", NULL };

		EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 1);
		EXPECT_NE(strstr(err, "--cache-dir"), NULL);
		free(out);
		free(err);
	}
	npr_test_rm_tree(dir);
}

/* The text of the only .meta file in @dir, or NULL. */
static char *only_meta(const char *dir)
{
	char path[PATH_MAX], *buf = NULL;
	struct dirent *d;
	DIR *dp = opendir(dir);
	size_t got;
	FILE *f;

	while (dp && !buf && (d = readdir(dp))) {
		size_t l = strlen(d->d_name);

		if (l <= 5 || strcmp(d->d_name + l - 5, ".meta"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		f = fopen(path, "r");
		buf = f ? calloc(1, 16384) : NULL;
		if (buf) {
			got = fread(buf, 1, 16383, f);
			buf[got] = 0;
		}
		if (f)
			fclose(f);
	}
	if (dp)
		closedir(dp);
	return buf;
}

/*
 * npr-bench --cache-dir loads deferred: its entry is keyed by the model's
 * files (file= and bin= lines).  npr-cache lists it, verifies it, finds
 * it for "why" (and names the caching line that differs when a caching
 * property does), and prunes it.
 */
TEST(cache_tool_file_keyed_entry)
{
	char dir[] = "/tmp/npr-tools-test-cache.XXXXXX";
	int blobs, metas, other;
	char *out, *err, *meta;

	NEED_SHARED();
	ASSERT_NE(mkdtemp(dir), NULL);
	{
		char *argv[] = { (char *)tool("npr-bench"), "-d", "cpu", "-m",
				 model(EYE), "--cache-dir", dir, "--niter", "1",
				 "--json", NULL };

		EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 0);
		ASSERT_NE(out, NULL);
		EXPECT_EQ(jnum(out, "loaded_from_cache"), 1);
		free(out);
		free(err);
	}
	census(dir, &blobs, &metas, &other);
	EXPECT_EQ(blobs, 1);
	meta = only_meta(dir);
	ASSERT_NE(meta, NULL);
	EXPECT_EQ(strncmp(meta, "file=/", 6), 0);
	EXPECT_NE(strstr(meta, "open-closed-eye-0001.xml dev="), NULL);
	EXPECT_NE(strstr(meta, "\nbin=/"), NULL);
	EXPECT_EQ(strstr(meta, "model="), NULL);
	free(meta);
	{
		char *argv[] = { (char *)tool("npr-cache"), "-C", dir, "list",
				 NULL };

		EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 0);
		ASSERT_NE(out, NULL);
		EXPECT_NE(strstr(out, "1 entries"), NULL);
		EXPECT_NE(strstr(out, " cpu "), NULL);
		free(out);
		free(err);
	}
	{
		char *argv[] = { (char *)tool("npr-cache"), "-C", dir, "verify",
				 NULL };

		EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 0);
		ASSERT_NE(out, NULL);
		EXPECT_NE(strstr(out, "1 entries, 0 bad"), NULL);
		free(out);
		free(err);
	}
	{
		char *argv[] = { (char *)tool("npr-cache"), "-C", dir, "why",
				 "-m", model(EYE), NULL };

		EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 0);
		ASSERT_NE(out, NULL);
		EXPECT_NE(strstr(out, "in the cache: "), NULL);
		EXPECT_NE(strstr(out, "keyed by the model's files"), NULL);
		free(out);
		free(err);
	}
	{
		char *argv[] = { (char *)tool("npr-cache"), "-C", dir, "why",
				 "-m", model(EYE), "--prop",
				 "EXECUTION_MODE_HINT=ACCURACY", NULL };

		EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 1);
		ASSERT_NE(out, NULL);
		EXPECT_NE(strstr(out, "not in the cache"), NULL);
		EXPECT_NE(strstr(out, "  caching  cached "), NULL);
		EXPECT_EQ(strstr(out, "  file "), NULL);
		free(out);
		free(err);
	}
	{
		char *argv[] = { (char *)tool("npr-cache"), "-C", dir, "prune",
				 "--max-mb", "0", NULL };

		EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 0);
		ASSERT_NE(out, NULL);
		EXPECT_NE(strstr(out, "removed 1 of 1"), NULL);
		free(out);
		free(err);
	}
	census(dir, &blobs, &metas, &other);
	EXPECT_EQ(blobs + metas, 0);
	npr_test_rm_tree(dir);
}

/*
 * npr-run --cache-dir: the first run stores the entry (keyed by the
 * model's files), the second comes from the cache and prints the same
 * detections and outputs; the text says which.
 */
TEST(run_cache_dir)
{
	char dir[] = "/tmp/npr-tools-test-cache.XXXXXX";
	char *out[2] = { NULL, NULL }, *err, *meta, *text;
	int r, blobs, metas, other;

	NEED_SHARED();
	ASSERT_NE(mkdtemp(dir), NULL);
	for (r = 0; r < 2; r++) {
		char *argv[] = { (char *)tool("npr-run"), "-d", "cpu", "-m",
				 model(FACE), "-i", model("images/astronaut.png"),
				 "--cache-dir", dir, "--json", NULL };

		EXPECT_EQ(npr_test_run(&out[r], &err, NULL, NULL, argv), 0);
		free(err);
		ASSERT_NE(out[r], NULL);
		EXPECT_EQ(jnum(out[r], "loaded_from_cache"), r);
		ASSERT_NE(strstr(out[r], "\"outputs\":"), NULL);
	}
	/* the outputs (detections, values) are the same */
	EXPECT_STREQ(strstr(out[0], "\"outputs\":"),
		     strstr(out[1], "\"outputs\":"));
	EXPECT_NE(strstr(out[1], "\"label\""), NULL);
	free(out[0]);
	free(out[1]);
	census(dir, &blobs, &metas, &other);
	EXPECT_EQ(blobs, 1);
	EXPECT_EQ(other, 0);
	meta = only_meta(dir);
	ASSERT_NE(meta, NULL);
	EXPECT_EQ(strncmp(meta, "file=/", 6), 0);
	free(meta);
	{
		char *argv[] = { (char *)tool("npr-run"), "-d", "cpu", "-m",
				 model(FACE), "-i", model("images/astronaut.png"),
				 "--cache-dir", dir, NULL };

		EXPECT_EQ(npr_test_run(&text, &err, NULL, NULL, argv), 0);
		free(err);
		ASSERT_NE(text, NULL);
		EXPECT_NE(strstr(text, "(from the cache)"), NULL);
		free(text);
	}
	npr_test_rm_tree(dir);
}

/* Rows of the --profile table: name, type, kernel, us, share. */
TEST(bench_profile_text)
{
	char *argv[] = { (char *)tool("npr-bench"), "-d", "cpu", "-m",
			 model(FACE), "--profile", "--niter", "2", NULL };
	char *out, *err, *p, *line;
	double prev = 1e300, sum = 0;
	int rows = 0;

	NEED_SHARED();
	EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 0);
	ASSERT_NE(out, NULL);
	p = strstr(out, "costliest layers");
	ASSERT_NE(p, NULL);
	p = strchr(p, '\n') + 1;
	/* the column header */
	EXPECT_EQ(strncmp(p, "  name", 6), 0);
	EXPECT_NE(strstr(p, "kernel"), NULL);
	p = strchr(p, '\n') + 1;
	for (line = strtok(p, "\n"); line && !strncmp(line, "  ", 2);
	     line = strtok(NULL, "\n")) {
		char name[64], type[32], kernel[32];
		double us, share;

		ASSERT_EQ(sscanf(line, "%63s %31s %31s %lf %lf%%", name, type,
				 kernel, &us, &share), 5);
		EXPECT_GT(us, 0);
		EXPECT_LE(us, prev);	/* costliest first */
		EXPECT_GT(share, 0);
		EXPECT_LE(share, 100);
		EXPECT_NE(strcmp(kernel, "-"), 0);
		prev = us;
		sum += share;
		rows++;
	}
	/* the model runs far more than ten layers */
	EXPECT_EQ(rows, 10);
	EXPECT_LE(sum, 100.5);
	free(out);
	free(err);
}

TEST(bench_profile_json)
{
	char *argv[] = { (char *)tool("npr-bench"), "-d", "cpu", "-m",
			 model(FACE), "--profile", "--niter", "2", "--json",
			 NULL };
	char *out, *err, *p;
	double prev = 1e300, sum = 0;
	int n = 0;

	NEED_SHARED();
	EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 0);
	ASSERT_NE(out, NULL);
	p = strstr(out, "\"profile\":[{");
	ASSERT_NE(p, NULL);
	while ((p = strstr(p, "{\"name\":\""))) {
		double us = jnum(p, "us"), share = jnum(p, "share");

		EXPECT_NE(strstr(p, "\"type\":\""), NULL);
		EXPECT_NE(strstr(p, "\"kernel\":\""), NULL);
		EXPECT_GT(us, 0);
		EXPECT_LE(us, prev);
		EXPECT_GT(share, 0);
		EXPECT_LE(share, 1);
		prev = us;
		sum += share;
		n++;
		p++;
	}
	EXPECT_EQ(n, 10);
	EXPECT_LE(sum, 1.005);
	free(out);
	free(err);
}

TEST(bench_runs_a_compiled_blob)
{
	char path[] = "/tmp/npr-tools-test-blob.XXXXXX";
	char *out, *err;
	int fd;

	NEED_SHARED();
	fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	close(fd);
	{
		char *argv[] = { (char *)tool("npr-compile"), "-d", "cpu",
				 "-m", model(EYE), "-o", path, NULL };

		EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 0);
		free(out);
		free(err);
	}
	{
		char *argv[] = { (char *)tool("npr-bench"), "-d", "cpu", "-m",
				 path, "--niter", "2", "--json", NULL };

		EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 0);
		ASSERT_NE(out, NULL);
		EXPECT_GT(jnum(out, "median_ms"), 0);
		free(out);
		free(err);
	}
	{	/* the blob's shapes and properties are fixed */
		char *argv[] = { (char *)tool("npr-bench"), "-d", "cpu", "-m",
				 path, "-b", "2", NULL };

		EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 2);
		ASSERT_NE(err, NULL);
		EXPECT_NE(strstr(err, "compiled blob"), NULL);
		free(out);
		free(err);
	}
	{	/* a truncated blob is refused by IMPORT, not parsed as XML */
		char *argv[] = { (char *)tool("npr-bench"), "-d", "cpu", "-m",
				 path, NULL };

		ASSERT_EQ(truncate(path, 100), 0);
		EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 1);
		ASSERT_NE(err, NULL);
		EXPECT_NE(strstr(err, "truncated"), NULL);
		free(out);
		free(err);
	}
	unlink(path);
}

/* The top classes of npr-run --json: from "outputs" on. */
static char *run_outputs(struct npr_test *_metadata, char **argv, int want)
{
	char *out, *err, *p, *r = NULL;

	EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), want);
	if (want && err)
		r = strdup(err);
	if (!want && out && (p = strstr(out, "\"outputs\":")))
		r = strdup(p);
	free(out);
	free(err);
	return r;
}

TEST(run_imports_a_weightless_blob_with_weights)
{
	char path[] = "/tmp/npr-tools-test-wl.XXXXXX";
	char bin[PATH_MAX], *want, *got;
	struct stat sb, sw;
	int fd;

	NEED_SHARED();
	snprintf(bin, sizeof(bin), "%s", model(EYE));
	strcpy(strrchr(bin, '.'), ".bin");
	fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	close(fd);
	{
		char *argv[] = { (char *)tool("npr-compile"), "-d", "cpu",
				 "-m", model(EYE), "-o", path, "--prop",
				 "CACHE_MODE=OPTIMIZE_SIZE", NULL };

		free(run_outputs(_metadata, argv, 0));
	}
	/* the weights stay in their file */
	ASSERT_EQ(stat(path, &sw), 0);
	ASSERT_EQ(stat(bin, &sb), 0);
	EXPECT_LT(sw.st_size, sb.st_size / 2);
	{
		char *argv[] = { (char *)tool("npr-run"), "-d", "cpu", "-m",
				 model(EYE), "-i", model(PHOTO), "--json",
				 NULL };

		want = run_outputs(_metadata, argv, 0);
	}
	{
		char *argv[] = { (char *)tool("npr-run"), "-d", "cpu", "-m",
				 path, "--weights", bin, "-i", model(PHOTO),
				 "--json", NULL };

		got = run_outputs(_metadata, argv, 0);
	}
	ASSERT_NE(want, NULL);
	ASSERT_NE(got, NULL);
	EXPECT_STREQ(got, want);
	free(got);
	{	/* without the weights: the import says what it needs */
		char *argv[] = { (char *)tool("npr-run"), "-d", "cpu", "-m",
				 path, "-i", model(PHOTO), NULL };

		got = run_outputs(_metadata, argv, 1);
		ASSERT_NE(got, NULL);
		EXPECT_NE(strstr(got, "WEIGHTS_PATH"), NULL);
		free(got);
	}
	{	/* another model's weights: refused, not run */
		char *argv[] = { (char *)tool("npr-bench"), "-d", "cpu", "-m",
				 path, "--weights", model(FACE), "--niter",
				 "1", NULL };

		strcpy(strrchr(argv[6], '.'), ".bin");
		free(run_outputs(_metadata, argv, 1));
	}
	{	/* --weights with a model is a usage error */
		char *argv[] = { (char *)tool("npr-run"), "-d", "cpu", "-m",
				 model(EYE), "--weights", bin, "-i",
				 model(PHOTO), NULL };

		got = run_outputs(_metadata, argv, 2);
		ASSERT_NE(got, NULL);
		EXPECT_NE(strstr(got, "weightless"), NULL);
		free(got);
	}
	free(want);
	unlink(path);
}

TEST(bench_new_options_need_a_model)
{
	char *argv[] = { (char *)tool("npr-bench"), "-d", "null", "--profile",
			 NULL };
	char *out, *err;

	EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 2);
	ASSERT_NE(err, NULL);
	EXPECT_NE(strstr(err, "need -m"), NULL);
	free(out);
	free(err);
}

/* "    NAME   RO  value" or RW: every property line of a device. */
static int prop_lines(const char *s, int *ro, int *rw)
{
	const char *p = strstr(s, "  properties\n");
	int n = 0;

	*ro = *rw = 0;
	if (!p)
		return 0;
	p = strchr(p, '\n') + 1;
	while (!strncmp(p, "    ", 4) && p[4] != ' ') {
		char name[64], acc[8];

		if (sscanf(p, "%63s %7s", name, acc) == 2) {
			if (!strcmp(acc, "RO"))
				(*ro)++;
			else if (!strcmp(acc, "RW"))
				(*rw)++;
		}
		n++;
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
	return n;
}

TEST(info_devices_properties_completion_path)
{
	char *argv[] = { (char *)tool("npr-info"), NULL };
	char *out, *err, *null;
	int n, ro, rw;

	EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 0);
	ASSERT_NE(out, NULL);
	/* cpu first, then npu (listed, or why not), then null */
	EXPECT_EQ(strncmp(out, "cpu\n", 4), 0);
	EXPECT_TRUE(strstr(out, "\nnpu\n") || strstr(out, "\nnpu: cannot open: "));
	null = strstr(out, "\nnull\n");
	ASSERT_NE(null, NULL);
	EXPECT_NE(strstr(out, "  full name        "), NULL);
	EXPECT_NE(strstr(out, "  architecture     "), NULL);
	EXPECT_NE(strstr(out, "  ring workers     "), NULL);
	EXPECT_TRUE(strstr(out, "  completion path  io_uring: ") ||
		    strstr(out, "  completion path  eventfd fallback: "));
	n = prop_lines(out, &ro, &rw);
	EXPECT_EQ(n, ro + rw);	/* every property is marked */
	EXPECT_GT(ro, 5);
	EXPECT_GT(rw, 5);
	EXPECT_NE(strstr(out, "    FULL_DEVICE_NAME"), NULL);
	{
		/* the marks agree with SUPPORTED_PROPERTIES' NAME:RO/RW */
		char *sp = strstr(out, "    SUPPORTED_PROPERTIES");
		char *l = strstr(out, "    INFERENCE_NUM_THREADS");

		ASSERT_NE(sp, NULL);
		ASSERT_NE(l, NULL);
		EXPECT_NE(strstr(sp, "INFERENCE_NUM_THREADS:RW"), NULL);
		EXPECT_NE(strstr(sp, "FULL_DEVICE_NAME:RO"), NULL);
		EXPECT_EQ(strncmp(l + 4 + 35, "RW", 2), 0);
	}
	/* the null device lists as many properties */
	EXPECT_EQ(prop_lines(null + 1, &ro, &rw), n);
	free(out);
	free(err);
}

TEST(info_fallback_is_named_with_its_reason)
{
	char *argv[] = { (char *)tool("npr-info"), "-d", "null", NULL };
	char *out, *err;

	EXPECT_EQ(npr_test_run(&out, &err, "NPR_RING_FALLBACK=1", NULL, argv), 0);
	ASSERT_NE(out, NULL);
	EXPECT_EQ(strncmp(out, "null\n", 5), 0);
	EXPECT_NE(strstr(out, "  completion path  eventfd fallback: forced (NPR_RING_FALLBACK"),
		  NULL);
	EXPECT_EQ(strstr(out, "\ncpu\n"), NULL);	/* -d: that device only */
	free(out);
	free(err);
}

/* query_model's count is the number of <layer> elements of the IR file
 * and the names listed after it; this model runs entirely on the CPU. */
TEST(info_query_model)
{
	char *argv[] = { (char *)tool("npr-info"), "-d", "cpu", "-m",
			 model(EYE), NULL };
	unsigned int sup = 0, all = 0;
	char *out, *err, *p, *xml;
	int layers = 0, names = 0, fd;

	NEED_SHARED();
	EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 0);
	ASSERT_NE(out, NULL);
	p = strstr(out, "  query_model ");
	ASSERT_NE(p, NULL);
	p = strstr(p, ": ");
	ASSERT_NE(p, NULL);
	ASSERT_EQ(sscanf(p, ": %u of %u layers supported", &sup, &all), 2);
	fd = open(model(EYE), O_RDONLY);
	ASSERT_GE(fd, 0);
	xml = npr_test_slurp_fd(fd);
	close(fd);
	ASSERT_NE(xml, NULL);
	for (char *q = xml; (q = strstr(q, "<layer ")); q++)
		layers++;
	free(xml);
	EXPECT_EQ((int)all, layers);
	EXPECT_EQ(sup, all);
	for (p = strchr(p, '\n') + 1; !strncmp(p, "    ", 4); names++) {
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
	EXPECT_EQ(names, (int)sup);
	free(out);
	free(err);
}

TEST(info_usage_errors)
{
	char *argv[] = { (char *)tool("npr-info"), "-m", "x.xml", NULL };
	char *out, *err;

	EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 2);
	ASSERT_NE(err, NULL);
	EXPECT_NE(strstr(err, "-m needs -d"), NULL);
	free(out);
	free(err);
}

TEST(info_help)
{
	char *argv[] = { (char *)tool("npr-info"), "--help", NULL };
	char *argv2[] = { (char *)tool("npr-info"), "--bogus", NULL };
	char *out, *err;

	EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 0);
	ASSERT_NE(out, NULL);
	EXPECT_NE(strstr(out, "usage: npr-info"), NULL);
	EXPECT_NE(strstr(out, "--device"), NULL);
	free(out);
	free(err);
	EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv2), 2);
	ASSERT_NE(err, NULL);
	EXPECT_NE(strstr(err, "Try 'npr-info --help'"), NULL);
	free(out);
	free(err);
}

/* ---- the conventions every tool keeps (tools/tool.c, args.c, json.c) -- */

static const char *const all_tools[] = {
	"npr-run", "npr-compile", "npr-cache", "npr-info", "npr-bench",
	"npr-generate",
};
#define NTOOLS	(int)(sizeof(all_tools) / sizeof(all_tools[0]))

/*
 * Run argv with its stdout going to the file @out_path; stderr in *err.
 * Return: the exit status, or -1.
 */
static int run_to(const char *out_path, char **err, char *const argv[])
{
	char e[] = "/tmp/npr-tools-test.XXXXXX";
	int fe = mkstemp(e), st = 0;
	pid_t pid;

	*err = NULL;
	if (fe < 0)
		return -1;
	unlink(e);
	pid = fork();
	if (pid == 0) {
		int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fo < 0)
			_exit(126);
		dup2(fo, 1);
		dup2(fe, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		st = -1;
	*err = npr_test_slurp_fd(fe);
	close(fe);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(version_on_every_tool)
{
	int i;

	for (i = 0; i < NTOOLS; i++) {
		char *argv[] = { (char *)tool(all_tools[i]), "--version", NULL };
		char want[128], *out, *err;

		snprintf(want, sizeof(want), "%s (npuring) %s\n", all_tools[i],
			 NPR_LIB_VERSION);
		EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 0);
		ASSERT_NE(out, NULL);
		EXPECT_STREQ(out, want);
		free(out);
		free(err);
	}
}

/* One command line, its exit status, and what stderr must say. */
struct exit_case {
	int status;
	const char *says;	/* NULL: anything */
	const char *argv[16];	/* [0]: the tool; "@E", "@S", "@M", "@P":
				 * the eye, squeezenet, mobilenet, the photo */
};

static const struct exit_case exit_cases[] = {
	/* usage errors: 2 */
	{ 2, "unrecognized option", { "npr-run", "--bogus" } },
	{ 2, "no input data", { "npr-run", "-m", "@E" } },
	{ 2, "no model", { "npr-run", "-i", "@P" } },
	{ 2, "expected NAME=D0,D1,..., NAME[D0,D1,...] or [D0,D1,...]",
	  { "npr-run", "-m", "@E", "-i", "@P", "--shape",
	    "input.1=1x3x32x32" } },
	{ 2, "expected NAME=", { "npr-run", "-m", "@E", "-i", "@P",
				 "--shape", "input.1[1,3,32,32" } },
	{ 2, "expected NAME=", { "npr-run", "-m", "@E", "-i", "@P",
				 "--shape", "[1,3,?,32]" } },
	{ 2, "expected NAME=", { "npr-run", "-m", "@E", "-i", "@P",
				 "--shape", "input.1=1,3,,32" } },
	{ 2, "expected NAME=", { "npr-run", "-m", "@E", "-i", "@P",
				 "--shape", "=1,3,32,32" } },
	{ 2, "its inputs: input.1", { "npr-run", "-m", "@E", "-i", "@P",
				      "--shape", "wrong[1,3,32,32]" } },
	{ 2, "its inputs: input.1", { "npr-run", "-m", "@E", "--input",
				      "wrong=/dev/null" } },
	{ 2, "LOG_NONE, LOG_ERROR", { "npr-run", "-m", "@E", "-i", "@P",
				      "--prop", "LOG_LEVEL=LOUD" } },
	{ 0, NULL, { "npr-run", "-m", "@E", "-i", "@P", "--prop",
		     "INFERENCE_NUM_THREADS=1" } },
	{ 2, "not an integer", { "npr-run", "-m", "@E", "-i", "@P",
				 "--niter", "x" } },
	{ 2, "unexpected argument", { "npr-run", "-m", "@E", "-i", "@P",
				      "extra" } },
	{ 2, "LATENCY, THROUGHPUT, CUMULATIVE_THROUGHPUT",
	  { "npr-bench", "-m", "@E", "--prop", "PERFORMANCE_HINT=FAST" } },
	{ 2, "LATENCY, THROUGHPUT, CUMULATIVE_THROUGHPUT",
	  { "npr-bench", "-m", "@E", "-hint", "fast" } },
	{ 2, "INFERENCE_NUM_THREADS", { "npr-bench", "-m", "@E", "--prop",
					"NO_SUCH_PROPERTY=1" } },
	{ 2, "is a number", { "npr-bench", "-m", "@E", "--prop",
			      "INFERENCE_NUM_THREADS=many" } },
	{ 2, "YES, NO", { "npr-bench", "-m", "@E", "--prop",
			  "ENABLE_PROFILING=maybe" } },
	{ 2, "sync or async", { "npr-bench", "-m", "@E", "-api", "later" } },
	{ 2, "no_counters", { "npr-bench", "-m", "@E", "-report_type", "x" } },
	{ 2, "one request", { "npr-bench", "-m", "@E", "-api", "sync",
			      "-nireq", "2" } },
	{ 2, "expected NAME=", { "npr-bench", "-m", "@E", "-shape",
				 "input.1=1x3x32x32" } },
	{ 2, "exclude", { "npr-bench", "-m", "@E", "-b", "2", "-shape",
			  "[1,3,32,32]" } },
	{ 2, "no output", { "npr-compile", "-m", "@E" } },
	{ 2, "its inputs: input.1", { "npr-compile", "-m", "@E", "-o",
				      "/dev/null", "--shape", "x=1,2" } },
	{ 2, "LATENCY, THROUGHPUT", { "npr-compile", "-m", "@E", "-o",
				      "/dev/null", "--prop",
				      "PERFORMANCE_HINT=FAST" } },
	{ 2, "unknown command", { "npr-cache", "-C", "/tmp", "bogus" } },
	{ 2, "no command", { "npr-cache", "-C", "/tmp" } },
	{ 2, "--max-mb", { "npr-cache", "-C", "/tmp", "prune" } },
	{ 2, "--max-mb", { "npr-cache", "-C", "/tmp", "prune", "--max-mb",
			   "lots" } },
	{ 2, "why needs -m", { "npr-cache", "-C", "/tmp", "why" } },
	{ 2, "-m needs -d", { "npr-info", "-m", "@E" } },
	{ 2, "unexpected argument", { "npr-info", "cpu" } },
	{ 2, "not one of f32, f16, i64, i32, u8", { "npr-run", "-m", "@E",
		"--input", "input.1=x.bin:f64" } },
	/* run-time failures: 1 */
	{ 1, "nonexistent", { "npr-run", "-m", "/nonexistent/m.xml", "-i",
			      "@P" } },
	{ 1, "nonexistent", { "npr-run", "-m", "@E", "-i",
			      "/nonexistent/photo.jpg" } },
	{ 1, NULL, { "npr-bench", "-d", "nodev", "-m", "@E" } },
	{ 1, NULL, { "npr-info", "-d", "nodev" } },
	{ 1, "nonexistent", { "npr-cache", "-C", "/nonexistent/dir",
			      "list" } },
	{ 1, NULL, { "npr-compile", "-m", "@E", "-o",
		     "/nonexistent/dir/x.blob" } },
	/* the shape syntaxes accepted: 0 */
	{ 0, NULL, { "npr-run", "-m", "@E", "-i", "@P", "--shape",
		     "input.1=1,3,32,32" } },
	{ 0, NULL, { "npr-run", "-m", "@E", "-i", "@P", "--shape",
		     "input.1[1,3,32,32]" } },
	{ 0, NULL, { "npr-run", "-m", "@E", "-i", "@P", "-shape",
		     "[1,3,32,32]" } },
	{ 0, NULL, { "npr-run", "-m", "@E", "-i", "@P", "-data_shape",
		     "input.1[1,3,32,32]", "-niter", "2" } },
	{ 0, NULL, { "npr-compile", "-m", "@E", "-o", "/dev/null",
		     "--shape", "[1,3,32,32]" } },
};

static const char *expand(const char *a)
{
	if (!strcmp(a, "@E"))
		return model(EYE);
	if (!strcmp(a, "@S"))
		return model(SQUEEZE);
	if (!strcmp(a, "@M"))
		return model(MOBILE);
	if (!strcmp(a, "@P"))
		return model(PHOTO);
	return a;
}

TEST(exit_status_of_each_case)
{
	size_t i;
	int k;

	NEED_SHARED();
	for (i = 0; i < sizeof(exit_cases) / sizeof(exit_cases[0]); i++) {
		const struct exit_case *c = &exit_cases[i];
		char *argv[17] = { (char *)tool(c->argv[0]) };
		char *out, *err;
		int st;

		for (k = 1; c->argv[k]; k++)
			argv[k] = (char *)expand(c->argv[k]);
		st = npr_test_run(&out, &err, NULL, NULL, argv);
		ASSERT_NE(err, NULL);
		if (st != c->status || (c->says && !strstr(err, c->says)))
			TH_LOG("case %zu: %s %s %s: %s", i, c->argv[0],
			       c->argv[1], c->argv[2] ? c->argv[2] : "", err);
		EXPECT_EQ(st, c->status);
		if (c->says)
			EXPECT_NE(strstr(err, c->says), NULL);
		/* every usage error points at --help */
		if (c->status == 2)
			EXPECT_NE(strstr(err, "--help"), NULL);
		free(out);
		free(err);
	}
}

TEST(write_errors_fail_with_status_1)
{
	char dir[] = "/tmp/npr-tools-test-full.XXXXXX";
	struct {
		const char *argv[12];
	} c[] = {
		{ { "npr-info" } },
		{ { "npr-info", "--json" } },
		{ { "npr-info", "--help" } },
		{ { "npr-run", "--version" } },
		{ { "npr-run", "-m", "@E", "-i", "@P" } },
		{ { "npr-run", "-m", "@E", "-i", "@P", "--json" } },
		{ { "npr-bench", "-d", "null", "--niter", "1000" } },
		{ { "npr-bench", "-m", "@E", "--niter", "2", "--json" } },
		{ { "npr-compile", "-m", "@E", "-o", "@T" } },
		{ { "npr-cache", "-C", "@D", "list" } },
		{ { "npr-cache", "-C", "@D", "list", "--json" } },
	};
	char blob[PATH_MAX];
	size_t i;
	int k;

	NEED_SHARED();
	if (access("/dev/full", W_OK))
		SKIP(return, "no writable /dev/full");
	ASSERT_NE(mkdtemp(dir), NULL);
	snprintf(blob, sizeof(blob), "%s/eye.blob", dir);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *argv[13] = { (char *)tool(c[i].argv[0]) };
		char *err;

		for (k = 1; c[i].argv[k]; k++)
			argv[k] = !strcmp(c[i].argv[k], "@T") ? blob :
				  !strcmp(c[i].argv[k], "@D") ? dir :
				  (char *)expand(c[i].argv[k]);
		EXPECT_EQ(run_to("/dev/full", &err, argv), 1);
		ASSERT_NE(err, NULL);
		if (!strstr(err, "write error on standard output"))
			TH_LOG("%s %s: %s", c[i].argv[0], c[i].argv[1], err);
		EXPECT_NE(strstr(err, "write error on standard output"), NULL);
		free(err);
	}
	npr_test_rm_tree(dir);
}

/*
 * Run argv with stdout to a file, then python3's json module on it with
 * the check @py (d is the document).  Return: python's exit status, or
 * -2 for the tool's own failure.
 */
static int json_check(char *const argv[], const char *py)
{
	char path[] = "/tmp/npr-tools-test-json.XXXXXX";
	char *cmd = NULL, *err;
	int fd = mkstemp(path), st;

	if (fd < 0)
		return -1;
	close(fd);
	st = run_to(path, &err, argv);
	if (st) {
		TH_LOG("%s: exit %d: %s", argv[0], st, err ? err : "");
		free(err);
		unlink(path);
		return -2;
	}
	free(err);
	if (asprintf(&cmd, "/usr/bin/python3 -c 'import json, sys\n"
		     "d = json.load(open(sys.argv[1]))\n%s' %s", py,
		     path) < 0)
		cmd = NULL;
	st = cmd ? system(cmd) : -1;
	free(cmd);
	unlink(path);
	return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

#define NEED_PYTHON() do {						\
	if (system("/usr/bin/python3 -c \"import json\" 2>/dev/null"))	\
		SKIP(return, "no /usr/bin/python3 to parse the JSON");	\
} while (0)

TEST(json_of_npr_info_parses)
{
	char *argv[] = { (char *)tool("npr-info"), "--json", NULL };
	char *argv2[] = { (char *)tool("npr-info"), "-d", "cpu", "-m",
			  model(EYE), "--json", NULL };

	NEED_SHARED();
	NEED_PYTHON();
	EXPECT_EQ(json_check(argv,
		"names = [x[\"name\"] for x in d[\"devices\"]]\n"
		"assert names[0] == \"cpu\" and names[-1] == \"null\", names\n"
		"p = d[\"devices\"][0][\"properties\"]\n"
		"assert any(x[\"name\"] == \"INFERENCE_NUM_THREADS\" and "
		"x[\"access\"] == \"RW\" and x[\"type\"] == \"int\" for x in p)\n"
		"assert d[\"devices\"][0][\"completion_path\"] in "
		"(\"io_uring\", \"eventfd fallback\")"), 0);
	EXPECT_EQ(json_check(argv2,
		"q = d[\"devices\"][0][\"query_model\"]\n"
		"assert q[\"supported\"] == q[\"layers\"] == len(q[\"names\"])"
		" > 0, q"), 0);
}

TEST(json_of_npr_run_parses)
{
	char *argv[] = { (char *)tool("npr-run"), "-m", model(SQUEEZE), "-i",
			 model(PHOTO), "--top", "1000", "--niter", "2",
			 "--json", NULL };
	char *argv2[] = { (char *)tool("npr-run"), "-m", model(FACE), "-i",
			  model(PHOTO), "--json", NULL };

	NEED_SHARED();
	NEED_PYTHON();
	/* 1000 classes: a document of about 26 KB */
	EXPECT_EQ(json_check(argv,
		"o = d[\"outputs\"][0]\n"
		"assert d[\"format\"].startswith(\"IR v\"), d[\"format\"]\n"
		"assert o[\"kind\"] == \"classes\" and len(o[\"top\"]) == 1000\n"
		"s = [x[\"score\"] for x in o[\"top\"]]\n"
		"assert s == sorted(s, reverse=True)\n"
		"assert d[\"timings_ms\"][\"steady_runs\"] == 1\n"
		"assert d[\"inputs\"][0][\"source\"].endswith(\"coffee.png\")"),
		  0);
	EXPECT_EQ(json_check(argv2,
		"o = d[\"outputs\"][0]\n"
		"assert o[\"kind\"] == \"detections\", o\n"
		"assert all(len(x[\"box\"]) == 4 for x in o[\"detections\"])"),
		  0);
}

TEST(json_of_npr_bench_parses)
{
	char *argv[] = { (char *)tool("npr-bench"), "-m", model(FACE),
			 "--niter", "3", "--profile", "--json", NULL };
	char *argv2[] = { (char *)tool("npr-bench"), "-d", "null", "--niter",
			  "2000", "--json", NULL };

	NEED_SHARED();
	NEED_PYTHON();
	EXPECT_EQ(json_check(argv,
		"assert d[\"niter\"] == 3 and d[\"api\"] == \"async\"\n"
		"assert len(d[\"profile\"]) == 10, d[\"profile\"]\n"
		"assert 0 < sum(x[\"share\"] for x in d[\"profile\"]) <= 1.0001"),
		  0);
	EXPECT_EQ(json_check(argv2,
		"assert d[\"device\"] == \"null\" and d[\"iters\"] == 2000\n"
		"assert d[\"ring_nop_poll_us\"] > 0"), 0);
}

TEST(json_of_npr_compile_and_npr_cache_parses)
{
	char dir[] = "/tmp/npr-tools-test-json.XXXXXX";
	char blob[PATH_MAX];

	NEED_SHARED();
	NEED_PYTHON();
	ASSERT_NE(mkdtemp(dir), NULL);
	snprintf(blob, sizeof(blob), "%s/eye.blob", dir);
	{
		char *argv[] = { (char *)tool("npr-compile"), "-m", model(EYE),
				 "-o", blob, "--json", NULL };
		char py[PATH_MAX + 128];

		snprintf(py, sizeof(py),
			 "assert d[\"output\"] == \"%s\" and d[\"bytes\"] > 0 "
			 "and d[\"device\"] == \"cpu\"", blob);
		EXPECT_EQ(json_check(argv, py), 0);
	}
	{	/* one entry through npr-bench's cache, then each command */
		char *bench[] = { (char *)tool("npr-bench"), "-m", model(EYE),
				  "--cache-dir", dir, "--niter", "1", NULL };
		char *list[] = { (char *)tool("npr-cache"), "-C", dir, "list",
				 "--json", NULL };
		char *verify[] = { (char *)tool("npr-cache"), "-C", dir,
				   "--json", "verify", NULL };
		char *why[] = { (char *)tool("npr-cache"), "-C", dir, "why",
				"-m", model(EYE), "--json", NULL };
		char *prune[] = { (char *)tool("npr-cache"), "-C", dir,
				  "prune", "--max-mb", "0", "--json", NULL };
		char *out, *err;

		EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, bench), 0);
		free(out);
		free(err);
		EXPECT_EQ(json_check(list,
			"assert d[\"count\"] == len(d[\"entries\"]) == 1\n"
			"assert d[\"entries\"][0][\"device\"] == \"cpu\""), 0);
		EXPECT_EQ(json_check(verify,
			"assert d[\"bad\"] == 0 and "
			"d[\"entries\"][0][\"status\"] == \"ok\""), 0);
		EXPECT_EQ(json_check(why,
			"assert d[\"in_cache\"] and "
			"d[\"keyed_by\"] in (\"files\", \"contents\")"), 0);
		EXPECT_EQ(json_check(prune,
			"assert d[\"removed\"] == 1 and d[\"bytes_left\"] == 0"),
			  0);
	}
	npr_test_rm_tree(dir);
}

/* benchmark_app's spellings mean what they mean there; -t stays threads. */
TEST(bench_takes_benchmark_app_spellings)
{
	char *argv[] = { (char *)tool("npr-bench"), "-m", model(EYE),
			 "-dcpu", "-niter", "5", "-nireq", "2", "-nthreads",
			 "1", "-api", "async", "-hint", "latency", "-nstreams",
			 "1", "-report_type", "no_counters", "-shape",
			 "[1,3,32,32]", "-json_stats", NULL };
	char *argv2[] = { (char *)tool("npr-bench"), "-m", model(EYE),
			  "-api", "sync", "-niter", "4", "-t", "1",
			  "-data_shape", "input.1[1,3,32,32]", "-json_stats",
			  NULL };
	char *out, *err;

	NEED_SHARED();
	EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 0);
	ASSERT_NE(out, NULL);
	EXPECT_EQ(jnum(out, "niter"), 5);
	EXPECT_EQ(jnum(out, "nireq"), 2);
	EXPECT_EQ(jnum(out, "threads"), 1);
	EXPECT_NE(strstr(out, "\"api\":\"async\""), NULL);
	free(out);
	free(err);
	EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv2), 0);
	ASSERT_NE(out, NULL);
	EXPECT_EQ(jnum(out, "niter"), 4);
	EXPECT_EQ(jnum(out, "threads"), 1);
	EXPECT_EQ(jnum(out, "nireq"), 1);
	EXPECT_NE(strstr(out, "\"api\":\"sync\""), NULL);
	free(out);
	free(err);
}

TEST(run_names_the_model_format)
{
	char *ir[] = { (char *)tool("npr-run"), "-m", model(EYE), "-i",
		       model(PHOTO), NULL };
	char *onnx[] = { (char *)tool("npr-run"), "-m", model(MOBILE), "-i",
			 model(PHOTO), "--shape", "input[1,3,224,224]", NULL };
	char *out, *err, *p;

	NEED_SHARED();
	EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, ir), 0);
	ASSERT_NE(out, NULL);
	EXPECT_NE(strstr(out, " (IR v11, "), NULL);
	free(out);
	free(err);
	EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, onnx), 0);
	ASSERT_NE(out, NULL);
	p = strstr(out, " (ONNX (opset ");
	ASSERT_NE(p, NULL);
	EXPECT_GE(atoi(p + strlen(" (ONNX (opset ")), 7);
	EXPECT_EQ(strstr(out, "IR v0"), NULL);
	free(out);
	free(err);
}

/*
 * The library prints nothing itself; a tool passes its log on to stderr:
 * warnings by default, the CPU plan's debug lines with NPR_LOG_LEVEL.
 */
TEST(run_prints_the_library_log_it_is_asked_for)
{
	char *argv[] = { (char *)tool("npr-run"), "-m", model(EYE), "-i",
			 model(PHOTO), NULL };
	char *out, *err;

	NEED_SHARED();
	EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 0);
	ASSERT_NE(err, NULL);
	EXPECT_EQ(strstr(err, "npuring: cpu:"), NULL);
	free(out);
	free(err);
	EXPECT_EQ(npr_test_run(&out, &err, "NPR_LOG_LEVEL=debug", NULL, argv), 0);
	ASSERT_NE(err, NULL);
	EXPECT_NE(strstr(err, "npr-run: npuring: cpu: "), NULL);
	free(out);
	free(err);
}

/* The shared photo as a JPEG at @path (quality 92). */
static int photo_jpeg(const char *path)
{
	struct jpeg_compress_struct c;
	struct jpeg_error_mgr e;
	struct npr_image img;
	FILE *f;

	if (npr_image_load_png(model(PHOTO), &img))
		return -1;
	f = fopen(path, "wb");
	if (!f) {
		npr_image_free(&img);
		return -1;
	}
	c.err = jpeg_std_error(&e);
	jpeg_create_compress(&c);
	jpeg_stdio_dest(&c, f);
	c.image_width = img.w;
	c.image_height = img.h;
	c.input_components = 3;
	c.in_color_space = JCS_RGB;
	jpeg_set_defaults(&c);
	jpeg_set_quality(&c, 92, TRUE);
	jpeg_start_compress(&c, TRUE);
	while (c.next_scanline < c.image_height) {
		JSAMPROW r = img.px + (size_t)c.next_scanline * img.w * 3;

		jpeg_write_scanlines(&c, &r, 1);
	}
	jpeg_finish_compress(&c);
	jpeg_destroy_compress(&c);
	npr_image_free(&img);
	return fclose(f) ? -1 : 0;
}

/* The class npr-run puts first for the photo @path. */
static int top_class(const char *path)
{
	char *argv[] = { (char *)tool("npr-run"), "-m", model(SQUEEZE), "-i",
			 (char *)path, "--json", NULL };
	char *out, *err, *p;
	int cls = -1;

	if (npr_test_run(&out, &err, NULL, NULL, argv) == 0 && out &&
	    (p = strstr(out, "\"class\":")))
		cls = atoi(p + 8);
	free(out);
	free(err);
	return cls;
}

TEST(run_classifies_a_jpeg_as_its_png)
{
	char path[] = "/tmp/npr-tools-test-photo.XXXXXX";
	char *out, *err;
	int fd, png_cls;

	NEED_SHARED();
	fd = mkstemp(path);	/* no suffix: the contents decide */
	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_EQ(photo_jpeg(path), 0);
	png_cls = top_class(model(PHOTO));
	EXPECT_GE(png_cls, 0);
	EXPECT_EQ(top_class(path), png_cls);
	/* a corrupt JPEG: a message, status 1, no crash */
	ASSERT_EQ(truncate(path, 3000), 0);
	{
		char *argv[] = { (char *)tool("npr-run"), "-m", model(SQUEEZE),
				 "-i", path, NULL };

		EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, argv), 1);
		ASSERT_NE(err, NULL);
		EXPECT_NE(strstr(err, "corrupt JPEG file"), NULL);
		free(out);
		free(err);
	}
	unlink(path);
}

static int write_path(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, buf, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}

/*
 * npr-run feeds a KV-cache language model (tiny_gpt of models/llm): its
 * int64 prompt from a raw file with :i64 (and the same ids as :i32,
 * converted), its empty past from 0-byte files with 0 dimensions in
 * --shape; the dumped logits of the prompt's last position are the
 * golden ones within 1e-4 of their largest magnitude.  A file whose size
 * is not the input's in the given type is refused.
 */
TEST(run_feeds_typed_and_empty_inputs)
{
	char dir[] = "/tmp/npr-tools-test-lm.XXXXXX", ids[PATH_MAX];
	char ids32[PATH_MAX], empty[PATH_MAX], spec[4][PATH_MAX + 32];
	char shapes[8][64], inputs[8][PATH_MAX + 64], dump[PATH_MAX];
	char logits[PATH_MAX + 16];
	const char *mdl = model("models/llm/tiny_gpt.onnx");
	float *gold = NULL, *got = NULL;
	int64_t *tok = NULL;
	size_t glen = 0, tlen = 0, olen = 0;
	int32_t t32[8];
	int round, i, k;

	NEED_SHARED();
	if (access(mdl, R_OK))
		SKIP(return, "no models/llm/tiny_gpt.onnx in the shared data");
	ASSERT_NONNULL(mkdtemp(dir));
	snprintf(ids, sizeof(ids), "%s/ids.i64", dir);
	snprintf(ids32, sizeof(ids32), "%s/ids.i32", dir);
	snprintf(empty, sizeof(empty), "%s/empty", dir);
	snprintf(dump, sizeof(dump), "%s/out", dir);
	snprintf(logits, sizeof(logits), "%s/logits.f32", dump);
	tok = npr_test_slurp(model("models/llm/tiny_gpt.tokens.i64"),
				  &tlen);
	gold = npr_test_slurp(
		model("models/llm/tiny_gpt.prefill_logits.f32"), &glen);
	ASSERT_TRUE(tok && gold && tlen >= 8 * sizeof(int64_t) &&
		    glen == 512 * sizeof(float));
	for (i = 0; i < 8; i++)
		t32[i] = (int32_t)tok[i];
	ASSERT_EQ(write_path(ids, tok, 8 * sizeof(int64_t)), 0);
	ASSERT_EQ(write_path(ids32, t32, sizeof(t32)), 0);
	ASSERT_EQ(write_path(empty, "", 0), 0);
	snprintf(spec[0], sizeof(spec[0]), "input_ids=%s:i64", ids);
	snprintf(spec[1], sizeof(spec[1]), "input_ids=%s:i32", ids32);
	snprintf(spec[2], sizeof(spec[2]), "input_ids=%s:i32", ids);
	for (round = 0; round < 3; round++) {
		char *argv[48] = { (char *)tool("npr-run"), "-m", (char *)mdl,
				   "--input", spec[round], "--shape",
				   "input_ids=1,8", "--dump", dump };
		char *out, *err;
		int st, n = 9;

		for (i = 0; i < 8; i++) {
			snprintf(shapes[i], sizeof(shapes[i]),
				 "past_key_values.%d.%s=1,4,0,32", i / 2,
				 i % 2 ? "value" : "key");
			snprintf(inputs[i], sizeof(inputs[i]),
				 "past_key_values.%d.%s=%s", i / 2,
				 i % 2 ? "value" : "key", empty);
			argv[n++] = "--shape";
			argv[n++] = shapes[i];
			argv[n++] = "--input";
			argv[n++] = inputs[i];
		}
		unlink(logits);
		st = npr_test_run(&out, &err, NULL, NULL, argv);
		if (round == 2) {
			/* 64 bytes of i64 ids read as i32: 16 values, not 8 */
			EXPECT_EQ(st, 1);
			EXPECT_NE(strstr(err, "needs 8 i32 values (32 bytes)"),
				  NULL);
		} else {
			double e = 0, big = 0;

			if (st)
				TH_LOG("npr-run: %s", err);
			ASSERT_EQ(st, 0);
			EXPECT_NE(strstr(out, "[1,4,0,32]"), NULL);
			got = npr_test_slurp(logits, &olen);
			ASSERT_NONNULL(got);
			ASSERT_EQ(olen, 8 * 512 * sizeof(float));
			for (k = 0; k < 512; k++) {
				double d = fabs(got[7 * 512 + k] - gold[k]);

				e = d > e ? d : e;
				big = fabs(gold[k]) > big ? fabs(gold[k]) : big;
			}
			EXPECT_LE(e, 1e-4 * big);
			free(got);
		}
		free(out);
		free(err);
	}
	free(tok);
	free(gold);
	{
		char *rm[] = { "rm", "-rf", dir, NULL }, *out, *err;

		EXPECT_EQ(npr_test_run(&out, &err, NULL, NULL, rm), 0);
		free(out);
		free(err);
	}
}

TEST_HARNESS_MAIN
