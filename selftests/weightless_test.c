// SPDX-License-Identifier: MIT
/*
 * Weightless blobs (CACHE_MODE OPTIMIZE_SIZE, Documentation/blob.rst):
 * real IR models exported weightless are much smaller than with their
 * weights, import with WEIGHTS_PATH and give bit-identical outputs to the
 * full blob; a missing, truncated or modified weights file is refused
 * with its own errno; the model cache stores small entries, a hit works
 * and a changed .bin is never served stale.  On cpu, and on npu when
 * there is one (vnpu with NPR_VNPU).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blob_util.h"
#include "files.h"

FIXTURE_VARIANT_ADD(blob, cpu) {
	.device = "cpu",
};

FIXTURE_VARIANT_ADD(blob, npu) {
	.device = "npu",
};

#define FDR "models/ir/face-detection-retail-0004/"

/* A scratch directory with a copy of model @rel (.xml and .bin). */
struct copy {
	char dir[64], xml[128], bin[128];
};

static int copy_file(const char *from, const char *to)
{
	char buf[1 << 16];
	int in = open(from, O_RDONLY), out, err = 0;
	ssize_t n;

	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		close(in);
		return -errno;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			err = -EIO;
	if (n < 0)
		err = -errno;
	close(in);
	close(out);
	return err;
}

static int copy_model(struct copy *c, const char *rel)
{
	char src[8192];
	size_t n;
	int err;

	strcpy(c->dir, "/tmp/npr-weightless.XXXXXX");
	if (!mkdtemp(c->dir))
		return -errno;
	snprintf(c->xml, sizeof(c->xml), "%s/m.xml", c->dir);
	snprintf(c->bin, sizeof(c->bin), "%s/m.bin", c->dir);
	if (snprintf(src, sizeof(src), "%.4000s/%.4000s", npr_test_shared(),
		     rel) >= (int)sizeof(src))
		return -ENAMETOOLONG;
	err = copy_file(src, c->xml);
	if (err)
		return err;
	n = strlen(src);
	strcpy(src + n - 4, ".bin");
	return copy_file(src, c->bin);
}

static void copy_remove(struct copy *c)
{
	if (c->dir[0] == '/')
		npr_test_rm_tree(c->dir);
}

/* Flip the lowest bit of the byte in the middle of file @path. */
static int flip_bit(const char *path)
{
	unsigned char byte;
	int fd = open(path, O_RDWR), err = 0;
	off_t mid;

	if (fd < 0)
		return -errno;
	mid = lseek(fd, 0, SEEK_END) / 2;
	if (pread(fd, &byte, 1, mid) != 1)
		err = -EIO;
	byte ^= 1;
	if (!err && pwrite(fd, &byte, 1, mid) != 1)
		err = -EIO;
	close(fd);
	return err;
}

static int set_str(int fd, __u32 param, const char *s)
{
	struct npr_param pa = {
		.size = sizeof(pa), .param = param, .ptr = (uintptr_t)s,
		.len = strlen(s) + 1,
	};

	return npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &pa);
}

/*
 * Load @xml (@flags: NPR_MODEL_LOAD_DEFER or 0) and compile it with
 * CACHE_MODE @mode and, if @dir, CACHE_DIR @dir.
 */
static int compile_mode(int fd, const char *xml, __u32 flags, int mode,
			const char *dir, __u32 *exec)
{
	struct npr_prop_arg pa[2] = {
		{ .param = NPR_PARAM_CACHE_MODE, .value = (__u64)mode },
		{ .param = NPR_PARAM_CACHE_DIR, .value = (uintptr_t)dir },
	};
	struct npr_model_load ml;
	struct npr_compile co;
	int err;

	npr_prep_model_load(&ml, xml, NULL);
	ml.flags = flags;
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err)
		return err;
	npr_prep_compile(&co, ml.handle);
	co.props = (uintptr_t)pa;
	co.num_props = dir ? 2 : 1;
	err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	*exec = co.exec;
	return err;
}

static int from_cache(int fd, __u32 exec)
{
	struct npr_param pa = {
		.size = sizeof(pa), .handle = exec,
		.param = NPR_PARAM_LOADED_FROM_CACHE,
	};
	int err = npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &pa);

	return err ? err : (int)pa.value;
}

/*
 * Model @rel exported with and without its weights: the weightless blob
 * is under a fifth of the full one and imports (WEIGHTS_PATH) to the
 * full blob's outputs, bit for bit.
 */
static void same_outputs(struct npr_test *_metadata,
			 FIXTURE_DATA(blob) *self, const char *rel)
{
	unsigned char *full = NULL, *wl = NULL, *a = NULL, *b = NULL;
	size_t flen = 0, wlen = 0, alen = 0, blen = 0;
	__u32 e_full, e_wl, i_full, i_wl;
	struct copy c = { .dir = "" };
	int err;

	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s", npr_test_shared());
	ASSERT_EQ(copy_model(&c, rel), 0);
	ASSERT_EQ(compile_mode(self->fd, c.xml, 0,
			       NPR_CACHE_MODE_OPTIMIZE_SPEED, NULL, &e_full), 0);
	err = compile_mode(self->fd, c.xml, 0, NPR_CACHE_MODE_OPTIMIZE_SIZE,
			   NULL, &e_wl);
	if (err)
		TH_LOG("%s: %s", rel, npr_last_error());
	ASSERT_EQ(err, 0);
	ASSERT_EQ(blob_export(self->fd, e_full, &full, &flen), 0);
	ASSERT_EQ(blob_export(self->fd, e_wl, &wl, &wlen), 0);
	TH_LOG("%s: blob %zu bytes, weightless %zu bytes", rel, flen, wlen);
	EXPECT_EQ(*(__u32 *)(full + 8), 3);
	EXPECT_EQ(*(__u32 *)(wl + 8), 4);
	EXPECT_LT(wlen * 5, flen);
	ASSERT_EQ(blob_import(self->fd, full, flen, &i_full), 0);
	ASSERT_EQ(set_str(self->fd, NPR_PARAM_WEIGHTS_PATH, c.bin), 0);
	err = blob_import(self->fd, wl, wlen, &i_wl);
	if (err)
		TH_LOG("import: %s", npr_last_error());
	ASSERT_EQ(err, 0);
	ASSERT_EQ(run(self->fd, i_full, 1, &a, &alen), 0);
	ASSERT_EQ(run(self->fd, i_wl, 1, &b, &blen), 0);
	ASSERT_EQ(alen, blen);
	EXPECT_EQ(memcmp(a, b, alen), 0);
	free(a);
	/* and the compiled model's own */
	ASSERT_EQ(run(self->fd, e_wl, 1, &a, &alen), 0);
	ASSERT_EQ(alen, blen);
	EXPECT_EQ(memcmp(a, b, alen), 0);
	free(a);
	free(b);
	free(full);
	free(wl);
	copy_remove(&c);
}

TEST_F(blob, fp32_face_detection)
{
	same_outputs(_metadata, self, FDR "FP32-v10/face-detection-retail-0004.xml");
}

TEST_F(blob, fp16_face_detection)
{
	same_outputs(_metadata, self, FDR "FP16/face-detection-retail-0004.xml");
}

TEST_F(blob, fp16_squeezenet)
{
	same_outputs(_metadata, self, "models/ir/squeezenet1.1/FP16/squeezenet1.1.xml");
}

/*
 * A weightless blob without WEIGHTS_PATH, with a missing, a truncated,
 * a grown and a modified weights file: each refused with its errno, and
 * the right file still imports.
 */
TEST_F(blob, refuses_other_weights)
{
	struct copy c = { .dir = "" };
	char other[160];
	unsigned char *wl = NULL;
	size_t wlen = 0;
	__u32 e, imp;

	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s", npr_test_shared());
	ASSERT_EQ(copy_model(&c, FDR "FP32-v10/face-detection-retail-0004.xml"),
		  0);
	ASSERT_EQ(compile_mode(self->fd, c.xml, 0,
			       NPR_CACHE_MODE_OPTIMIZE_SIZE, NULL, &e), 0);
	ASSERT_EQ(blob_export(self->fd, e, &wl, &wlen), 0);

	EXPECT_EQ(blob_import(self->fd, wl, wlen, &imp), -ENOENT);
	TH_LOG("no WEIGHTS_PATH: %s", npr_last_error());
	EXPECT_NE(strstr(npr_last_error(), "WEIGHTS_PATH"), NULL);

	snprintf(other, sizeof(other), "%s/none.bin", c.dir);
	ASSERT_EQ(set_str(self->fd, NPR_PARAM_WEIGHTS_PATH, other), 0);
	EXPECT_EQ(blob_import(self->fd, wl, wlen, &imp), -ENOENT);
	TH_LOG("missing: %s", npr_last_error());

	/* truncated by one byte, then grown by one */
	snprintf(other, sizeof(other), "%s/other.bin", c.dir);
	ASSERT_EQ(copy_file(c.bin, other), 0);
	{
		struct stat st;

		ASSERT_EQ(stat(other, &st), 0);
		ASSERT_EQ(truncate(other, st.st_size - 1), 0);
		ASSERT_EQ(set_str(self->fd, NPR_PARAM_WEIGHTS_PATH, other), 0);
		EXPECT_EQ(blob_import(self->fd, wl, wlen, &imp), -ESTALE);
		TH_LOG("truncated: %s", npr_last_error());
		ASSERT_EQ(truncate(other, st.st_size + 1), 0);
		EXPECT_EQ(blob_import(self->fd, wl, wlen, &imp), -ESTALE);
		ASSERT_EQ(truncate(other, st.st_size), 0);
	}

	/* the same size, one bit in the middle changed */
	ASSERT_EQ(copy_file(c.bin, other), 0);
	ASSERT_EQ(flip_bit(other), 0);
	EXPECT_EQ(blob_import(self->fd, wl, wlen, &imp), -ESTALE);
	TH_LOG("modified: %s", npr_last_error());
	EXPECT_NE(strstr(npr_last_error(), "changed"), NULL);

	ASSERT_EQ(set_str(self->fd, NPR_PARAM_WEIGHTS_PATH, c.bin), 0);
	EXPECT_EQ(blob_import(self->fd, wl, wlen, &imp), 0);
	free(wl);
	copy_remove(&c);
}

/*
 * The model cache with OPTIMIZE_SIZE: the entry is small, a hit reads
 * the weights from the model's .bin and gives the compile's outputs; a
 * .bin rewritten in place with the same size and modification time (the
 * same key for a deferred load) is not served stale: the hit fails its
 * check, the model is compiled again from the new weights.
 */
TEST_F(blob, cache_entry_small_and_never_stale)
{
	unsigned char *a = NULL, *b = NULL;
	size_t alen = 0, blen = 0;
	struct copy c = { .dir = "" };
	char cdir[160], path[256];
	struct stat st, bst;
	__u32 e1, e2, e3, e4;

	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s", npr_test_shared());
	ASSERT_EQ(copy_model(&c, FDR "FP16/face-detection-retail-0004.xml"), 0);
	snprintf(cdir, sizeof(cdir), "%s/cache", c.dir);
	ASSERT_EQ(compile_mode(self->fd, c.xml, NPR_MODEL_LOAD_DEFER,
			       NPR_CACHE_MODE_OPTIMIZE_SIZE, cdir, &e1), 0);
	EXPECT_EQ(from_cache(self->fd, e1), 0);
	ASSERT_EQ(compile_mode(self->fd, c.xml, NPR_MODEL_LOAD_DEFER,
			       NPR_CACHE_MODE_OPTIMIZE_SIZE, cdir, &e2), 0);
	EXPECT_EQ(from_cache(self->fd, e2), 1);
	{
		/* the one entry, under a fifth of the weights file */
		FILE *ls;
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "ls %s/*.blob", cdir);
		ls = popen(cmd, "r");
		ASSERT_NE(ls, NULL);
		ASSERT_NE(fgets(path, sizeof(path), ls), NULL);
		pclose(ls);
		path[strcspn(path, "\n")] = 0;
		ASSERT_EQ(stat(path, &st), 0);
		ASSERT_EQ(stat(c.bin, &bst), 0);
		TH_LOG("entry %lld bytes, weights file %lld bytes",
		       (long long)st.st_size, (long long)bst.st_size);
		EXPECT_LT(st.st_size * 5, bst.st_size);
	}
	ASSERT_EQ(run(self->fd, e1, 1, &a, &alen), 0);
	ASSERT_EQ(run(self->fd, e2, 1, &b, &blen), 0);
	ASSERT_EQ(alen, blen);
	EXPECT_EQ(memcmp(a, b, alen), 0);
	free(a);
	free(b);

	/* rewrite a weight in place, keep size and modification time */
	ASSERT_EQ(flip_bit(c.bin), 0);
	{
		struct timespec ts[2] = { bst.st_atim, bst.st_mtim };

		ASSERT_EQ(utimensat(AT_FDCWD, c.bin, ts, 0), 0);
	}
	ASSERT_EQ(compile_mode(self->fd, c.xml, NPR_MODEL_LOAD_DEFER,
			       NPR_CACHE_MODE_OPTIMIZE_SIZE, cdir, &e3), 0);
	EXPECT_EQ(from_cache(self->fd, e3), 0);
	/* what a compile of the changed file gives, without a cache */
	ASSERT_EQ(compile_mode(self->fd, c.xml, 0,
			       NPR_CACHE_MODE_OPTIMIZE_SPEED, NULL, &e4), 0);
	ASSERT_EQ(run(self->fd, e3, 1, &a, &alen), 0);
	ASSERT_EQ(run(self->fd, e4, 1, &b, &blen), 0);
	ASSERT_EQ(alen, blen);
	EXPECT_EQ(memcmp(a, b, alen), 0);
	free(a);
	free(b);
	copy_remove(&c);
}

TEST_HARNESS_MAIN
