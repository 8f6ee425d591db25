// SPDX-License-Identifier: MIT
/*
 * The tools' output contracts, checked by running the programs built next
 * to this one (../tools/): npr-bench --cache-dir (FEIL and FIL, the second
 * compile loaded from the cache, one entry in the directory), npr-bench
 * --profile (the ten costliest layers, in order, with shares), a
 * compiled-model blob given to npr-bench as its model, and
 * npr-info (devices, properties with RO/RW, the completion path and its
 * reason, query_model's count against the layers in the IR file).  No
 * timing is asserted, only the shape and the consistency of what is
 * printed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define EYE	"models/ir/open-closed-eye-0001/FP32/open-closed-eye-0001.xml"
#define FACE	"models/ir/face-detection-retail-0004/FP32-v10/face-detection-retail-0004.xml"

#define NEED_SHARED() do {						\
	if (!npr_test_shared_ok())					\
		SKIP(return, "no shared data at %s", npr_test_shared());	\
} while (0)

/*
 * A tool: $NPR_TOOLS/NAME (the installed selftests' runner sets it to the
 * tools' directory), else the one built next to this program,
 * BUILD/tools/NAME.
 */
static const char *tool(const char *name)
{
	static char buf[8][PATH_MAX];
	static int next;
	char self[PATH_MAX];
	char *b = buf[next++ % 8];
	const char *dir = getenv("NPR_TOOLS");
	ssize_t n;

	if (dir && *dir) {
		if (snprintf(b, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
			b[0] = 0;
		return b;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		n = 0;
	self[n] = 0;
	if (snprintf(b, PATH_MAX, "%s/../tools/%s", dirname(self), name) >=
	    PATH_MAX)
		b[0] = 0;
	return b;
}

static char *model(const char *rel)
{
	static char buf[4][PATH_MAX];
	static int next;
	char *b = buf[next++ % 4];

	if (snprintf(b, PATH_MAX, "%s/%s", npr_test_shared(), rel) >= PATH_MAX)
		b[0] = 0;
	return b;
}

static char *slurp_fd(int fd)
{
	size_t len = 0, cap = 65536;
	char *s = malloc(cap + 1);
	ssize_t r;

	if (!s)
		return NULL;
	lseek(fd, 0, SEEK_SET);
	while ((r = read(fd, s + len, cap - len)) > 0) {
		len += r;
		if (len == cap) {
			char *t = realloc(s, 2 * cap + 1);

			if (!t)
				break;
			s = t;
			cap *= 2;
		}
	}
	s[len] = 0;
	return s;
}

/*
 * Run argv (NULL-terminated) with NAME=VALUE @env (or NULL); its stdout
 * and stderr in *out and *err (malloc'd).  Return: the exit status, or -1
 * when it did not exit normally.
 */
static int run(char **out, char **err, const char *env, char *const argv[])
{
	char o[] = "/tmp/npr-tools-test.XXXXXX", e[] = "/tmp/npr-tools-test.XXXXXX";
	int fo = mkstemp(o), fe = mkstemp(e), st = 0;
	pid_t pid;

	*out = *err = NULL;
	if (fo < 0 || fe < 0)
		return -1;
	unlink(o);
	unlink(e);
	pid = fork();
	if (pid == 0) {
		dup2(fo, 1);
		dup2(fe, 2);
		if (env)
			putenv((char *)env);
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		st = -1;
	*out = slurp_fd(fo);
	*err = slurp_fd(fe);
	close(fo);
	close(fe);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
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

static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
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

		EXPECT_EQ(run(&out, &err, NULL, argv), 0);
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
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
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

		EXPECT_EQ(run(&out, &err, NULL, argv), 0);
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

		EXPECT_EQ(run(&out, &err, NULL, argv), 1);
		EXPECT_NE(strstr(err, "--cache-dir"), NULL);
		free(out);
		free(err);
	}
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
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

		EXPECT_EQ(run(&out, &err, NULL, argv), 0);
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

		EXPECT_EQ(run(&out, &err, NULL, argv), 0);
		ASSERT_NE(out, NULL);
		EXPECT_NE(strstr(out, "1 entries"), NULL);
		EXPECT_NE(strstr(out, " cpu "), NULL);
		free(out);
		free(err);
	}
	{
		char *argv[] = { (char *)tool("npr-cache"), "-C", dir, "verify",
				 NULL };

		EXPECT_EQ(run(&out, &err, NULL, argv), 0);
		ASSERT_NE(out, NULL);
		EXPECT_NE(strstr(out, "1 entries, 0 bad"), NULL);
		free(out);
		free(err);
	}
	{
		char *argv[] = { (char *)tool("npr-cache"), "-C", dir, "why",
				 "-m", model(EYE), NULL };

		EXPECT_EQ(run(&out, &err, NULL, argv), 0);
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

		EXPECT_EQ(run(&out, &err, NULL, argv), 1);
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

		EXPECT_EQ(run(&out, &err, NULL, argv), 0);
		ASSERT_NE(out, NULL);
		EXPECT_NE(strstr(out, "removed 1 of 1"), NULL);
		free(out);
		free(err);
	}
	census(dir, &blobs, &metas, &other);
	EXPECT_EQ(blobs + metas, 0);
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
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

		EXPECT_EQ(run(&out[r], &err, NULL, argv), 0);
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

		EXPECT_EQ(run(&text, &err, NULL, argv), 0);
		free(err);
		ASSERT_NE(text, NULL);
		EXPECT_NE(strstr(text, "(from the cache)"), NULL);
		free(text);
	}
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
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
	EXPECT_EQ(run(&out, &err, NULL, argv), 0);
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
	EXPECT_EQ(run(&out, &err, NULL, argv), 0);
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

		EXPECT_EQ(run(&out, &err, NULL, argv), 0);
		free(out);
		free(err);
	}
	{
		char *argv[] = { (char *)tool("npr-bench"), "-d", "cpu", "-m",
				 path, "--niter", "2", "--json", NULL };

		EXPECT_EQ(run(&out, &err, NULL, argv), 0);
		ASSERT_NE(out, NULL);
		EXPECT_GT(jnum(out, "median_ms"), 0);
		free(out);
		free(err);
	}
	{	/* the blob's shapes and properties are fixed */
		char *argv[] = { (char *)tool("npr-bench"), "-d", "cpu", "-m",
				 path, "-b", "2", NULL };

		EXPECT_EQ(run(&out, &err, NULL, argv), 1);
		ASSERT_NE(err, NULL);
		EXPECT_NE(strstr(err, "compiled blob"), NULL);
		free(out);
		free(err);
	}
	{	/* a truncated blob is refused by IMPORT, not parsed as XML */
		char *argv[] = { (char *)tool("npr-bench"), "-d", "cpu", "-m",
				 path, NULL };

		ASSERT_EQ(truncate(path, 100), 0);
		EXPECT_EQ(run(&out, &err, NULL, argv), 1);
		ASSERT_NE(err, NULL);
		EXPECT_NE(strstr(err, "truncated"), NULL);
		free(out);
		free(err);
	}
	unlink(path);
}

TEST(bench_new_options_need_a_model)
{
	char *argv[] = { (char *)tool("npr-bench"), "-d", "null", "--profile",
			 NULL };
	char *out, *err;

	EXPECT_EQ(run(&out, &err, NULL, argv), 1);
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

	EXPECT_EQ(run(&out, &err, NULL, argv), 0);
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

	EXPECT_EQ(run(&out, &err, "NPR_RING_FALLBACK=1", argv), 0);
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
	EXPECT_EQ(run(&out, &err, NULL, argv), 0);
	ASSERT_NE(out, NULL);
	p = strstr(out, "  query_model ");
	ASSERT_NE(p, NULL);
	p = strstr(p, ": ");
	ASSERT_NE(p, NULL);
	ASSERT_EQ(sscanf(p, ": %u of %u layers supported", &sup, &all), 2);
	fd = open(model(EYE), O_RDONLY);
	ASSERT_GE(fd, 0);
	xml = slurp_fd(fd);
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

	EXPECT_EQ(run(&out, &err, NULL, argv), 2);
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

	EXPECT_EQ(run(&out, &err, NULL, argv), 0);
	ASSERT_NE(out, NULL);
	EXPECT_NE(strstr(out, "usage: npr-info"), NULL);
	EXPECT_NE(strstr(out, "--device"), NULL);
	free(out);
	free(err);
	EXPECT_EQ(run(&out, &err, NULL, argv2), 2);
	ASSERT_NE(err, NULL);
	EXPECT_NE(strstr(err, "usage: npr-info"), NULL);
	free(out);
	free(err);
}

TEST_HARNESS_MAIN
