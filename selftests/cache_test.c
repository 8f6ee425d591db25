// SPDX-License-Identifier: MIT
/*
 * The model cache (CACHE_DIR): a miss compiles and stores, a hit imports
 * and gives the same outputs; the key follows the caching properties and
 * the input shapes and ignores the others; a truncated or corrupt entry is
 * compiled again and replaced; NPR_CACHE_REQUIRED turns a miss into
 * -ENOENT; an entry with packed weights in another layout is compiled
 * again; least recently used entries are pruned under NPR_CACHE_MAX_MB;
 * a cache that cannot be written never fails a compile; a model changed in
 * one weight byte, or by MAKE_STATEFUL on its handle, misses; a writer
 * killed in the middle of an entry or out of disk loses nothing stored
 * and leaves nothing torn to be served.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "npuring.h"
#include "files.h"

#define EYE	"models/ir/open-closed-eye-0001/FP32/open-closed-eye-0001.xml"
#define LMK	"models/ir/landmarks-regression-retail-0009/FP32/landmarks-regression-retail-0009.xml"
#define FACE	"models/ir/face-detection-retail-0004/FP32-v10/face-detection-retail-0004.xml"

FIXTURE(cache) {
	int fd;
	char dir[64];
};

/* Every test on cpu, and on npu (vnpu, or an NPU) when there is one. */
FIXTURE_VARIANT(cache) {
	const char *device;
};

FIXTURE_VARIANT_ADD(cache, cpu) {
	.device = "cpu",
};

FIXTURE_VARIANT_ADD(cache, npu) {
	.device = "npu",
};

FIXTURE_SETUP(cache)
{
	self->fd = -1;
	self->dir[0] = 0;
	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s", npr_test_shared());
	self->fd = npr_open(variant->device, 0);
	if (self->fd < 0 && !strcmp(variant->device, "npu"))
		SKIP(return, "no npu device: %s (make check sets NPR_VNPU)",
		     npr_last_error());
	ASSERT_GE(self->fd, 0);
	strcpy(self->dir, "/tmp/npr-cache-test.XXXXXX");
	ASSERT_NE(mkdtemp(self->dir), NULL);
}

FIXTURE_TEARDOWN(cache)
{
	if (self->fd >= 0)
		npr_close(self->fd);
	if (self->dir[0] == '/')
		npr_test_rm_tree(self->dir);
}

struct opts {
	const char *dir;
	int exec_mode;		/* 0: leave */
	int perf_hint;		/* 0: leave */
	int required;
	int max_mb;		/* 0: leave */
	int batch;		/* > 0: input 0 = [batch,3,224,224] */
	int log_level;		/* 0: leave */
};

/* Compile the loaded @model with the cache options. */
static int compile_model(int fd, __u32 model, const struct opts *o,
			 __u32 *exec)
{
	struct npr_prop_arg pa[8];
	struct npr_shape_arg sh = {
		.index = 0, .rank = 4, .dims = { o->batch, 3, 224, 224 },
	};
	struct npr_compile co;
	int n = 0, err;

	pa[n++] = (struct npr_prop_arg){ .param = NPR_PARAM_CACHE_DIR,
					 .value = (uintptr_t)o->dir };
	if (o->exec_mode)
		pa[n++] = (struct npr_prop_arg){
			.param = NPR_PARAM_EXECUTION_MODE_HINT,
			.value = (__u64)o->exec_mode };
	if (o->perf_hint)
		pa[n++] = (struct npr_prop_arg){
			.param = NPR_PARAM_PERFORMANCE_HINT,
			.value = (__u64)o->perf_hint };
	if (o->required)
		pa[n++] = (struct npr_prop_arg){
			.param = NPR_PARAM_NPR_CACHE_REQUIRED, .value = 1 };
	if (o->max_mb)
		pa[n++] = (struct npr_prop_arg){
			.param = NPR_PARAM_NPR_CACHE_MAX_MB,
			.value = (__u64)o->max_mb };
	if (o->log_level)
		pa[n++] = (struct npr_prop_arg){
			.param = NPR_PARAM_LOG_LEVEL,
			.value = (__u64)o->log_level };
	npr_prep_compile(&co, model);
	co.props = (uintptr_t)pa;
	co.num_props = n;
	if (o->batch) {
		co.shapes = (uintptr_t)&sh;
		co.num_shapes = 1;
	}
	err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	*exec = co.exec;
	return err;
}

/* Load @rel and compile it with the cache options. */
static int compile(int fd, const char *rel, const struct opts *o,
		   __u32 *exec)
{
	struct npr_model_load ml;
	char path[4096];
	int err;

	if (snprintf(path, sizeof(path), "%s/%s", npr_test_shared(), rel) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	npr_prep_model_load(&ml, path, NULL);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err)
		return err;
	return compile_model(fd, ml.handle, o, exec);
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

/* Entries (*.blob) in the directory; the first one's name in @name. */
static int entries(const char *dir, char *name, size_t len)
{
	struct dirent *d;
	DIR *dp = opendir(dir);
	int n = 0;

	if (!dp)
		return -1;
	while ((d = readdir(dp))) {
		size_t l = strlen(d->d_name);

		if (l > 5 && !strcmp(d->d_name + l - 5, ".blob")) {
			if (!n && name)
				snprintf(name, len, "%s/%s", dir, d->d_name);
			n++;
		}
		if (d->d_name[0] == '.' && strstr(d->d_name, ".blob."))
			n += 1000;	/* a temporary file left behind */
	}
	closedir(dp);
	return n;
}

/* Run @exec once on a fixed input; the first output copied to @out. */
static int run(int fd, __u32 exec, float *out, size_t n)
{
	struct npr_req_create rc;
	struct npr_tensor_arg t;
	struct npr_infer inf;
	size_t k;
	int err;

	npr_prep_req_create(&rc, exec);
	err = npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc);
	if (err)
		return err;
	npr_prep_tensor(&t, rc.req, 0, 0, NULL, 0);
	t.flags = NPR_TENSOR_MAP;
	err = npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &t);
	if (err)
		return err;
	for (k = 0; k < t.bytes / 4; k++)
		((float *)(uintptr_t)t.data)[k] = (float)(k % 251);
	npr_prep_infer(&inf, rc.req);
	err = npr_ioctl(fd, NPR_IOCTL_INFER, &inf);
	if (err)
		return err;
	npr_prep_tensor(&t, rc.req, 0, 1, out, n * sizeof(float));
	err = npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &t);
	return err == -EMSGSIZE ? 0 : err;
}

TEST_F(cache, miss_then_hit_same_outputs)
{
	struct opts o = { .dir = self->dir };
	float a[256] = { 0 }, b[256] = { 0 };
	char meta[256], name[512];
	__u32 e1, e2;
	FILE *f;

	ASSERT_EQ(compile(self->fd, FACE, &o, &e1), 0);
	EXPECT_EQ(from_cache(self->fd, e1), 0);
	ASSERT_EQ(entries(self->dir, name, sizeof(name)), 1);
	ASSERT_EQ(compile(self->fd, FACE, &o, &e2), 0);
	EXPECT_EQ(from_cache(self->fd, e2), 1);
	EXPECT_EQ(entries(self->dir, NULL, 0), 1);
	ASSERT_EQ(run(self->fd, e1, a, 256), 0);
	ASSERT_EQ(run(self->fd, e2, b, 256), 0);
	EXPECT_EQ(memcmp(a, b, sizeof(a)), 0);
	/* the .meta file says what the key is made of */
	strcpy(name + strlen(name) - 5, ".meta");
	f = fopen(name, "r");
	ASSERT_NE(f, NULL);
	ASSERT_NE(fgets(meta, sizeof(meta), f), NULL);
	EXPECT_EQ(strncmp(meta, "model=", 6), 0);
	fclose(f);
}

/* The whole of a shared file, or NULL. */
static void *slurp(const char *rel, size_t *len)
{
	char path[4096];
	void *buf = NULL;
	long n;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%s", npr_test_shared(), rel) >=
	    (int)sizeof(path))
		return NULL;
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0) {
		rewind(f);
		buf = malloc(n);
		if (buf && fread(buf, 1, n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = n;
	}
	fclose(f);
	return buf;
}

static int load_mem(int fd, const void *xml, size_t xml_len, const void *bin,
		    size_t bin_len, __u32 *model)
{
	struct npr_model_load ml;
	int err;

	npr_prep_model_load_mem(&ml, xml, xml_len, bin, bin_len);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	*model = ml.handle;
	return err;
}

/* Hit or miss (1 or 0) of compiling @model, or -errno. */
static int hit(int fd, __u32 model, const struct opts *o)
{
	__u32 e;
	int err = compile_model(fd, model, o, &e);

	return err ? err : from_cache(fd, e);
}

/*
 * The model's hash is taken once per model handle; a model whose weights
 * differ in one byte is another model (a miss), and the first one still
 * hits, from its own handle or loaded again.
 */
TEST_F(cache, a_changed_weight_misses)
{
	const char *xml_rel = FACE;
	char bin_rel[256];
	struct opts o = { .dir = self->dir };
	size_t xml_len = 0, bin_len = 0;
	unsigned char *xml, *bin;
	__u32 a, b, c;

	ASSERT_LT(strlen(xml_rel), sizeof(bin_rel));
	strcpy(bin_rel, xml_rel);
	strcpy(bin_rel + strlen(bin_rel) - 4, ".bin");
	xml = slurp(xml_rel, &xml_len);
	bin = slurp(bin_rel, &bin_len);
	ASSERT_NE(xml, NULL);
	ASSERT_NE(bin, NULL);
	ASSERT_GT(bin_len, 1024);
	ASSERT_EQ(load_mem(self->fd, xml, xml_len, bin, bin_len, &a), 0);
	EXPECT_EQ(hit(self->fd, a, &o), 0);
	EXPECT_EQ(hit(self->fd, a, &o), 1);
	EXPECT_EQ(hit(self->fd, a, &o), 1);
	/* the memory load copied the weights: changing ours changes nothing
	 * for @a, and gives another model to the next load */
	bin[bin_len / 2] ^= 0x01;
	ASSERT_EQ(load_mem(self->fd, xml, xml_len, bin, bin_len, &b), 0);
	EXPECT_EQ(hit(self->fd, b, &o), 0);
	EXPECT_EQ(entries(self->dir, NULL, 0), 2);
	EXPECT_EQ(hit(self->fd, b, &o), 1);
	EXPECT_EQ(hit(self->fd, a, &o), 1);
	bin[bin_len / 2] ^= 0x01;
	ASSERT_EQ(load_mem(self->fd, xml, xml_len, bin, bin_len, &c), 0);
	EXPECT_EQ(hit(self->fd, c, &o), 1);
	/* the same model from its files: the same entry */
	ASSERT_EQ(compile(self->fd, FACE, &o, &c), 0);
	EXPECT_EQ(from_cache(self->fd, c), 1);
	EXPECT_EQ(entries(self->dir, NULL, 0), 2);
	free(xml);
	free(bin);
}

/* y = 2 * (x + h_in), h_out = x + h_in; "two" is the weight. */
static const char explicit_xml[] =
	"<?xml version=\"1.0\"?><net name=\"explicit\" version=\"11\"><layers>"
	"<layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\">"
	"<data shape=\"1,2\" element_type=\"f32\"/><output>"
	"<port id=\"0\" precision=\"FP32\" names=\"x\"><dim>1</dim><dim>2</dim></port></output></layer>"
	"<layer id=\"1\" name=\"h_in\" type=\"Parameter\" version=\"opset1\">"
	"<data shape=\"1,2\" element_type=\"f32\"/><output>"
	"<port id=\"0\" precision=\"FP32\" names=\"h_in\"><dim>1</dim><dim>2</dim></port></output></layer>"
	"<layer id=\"2\" name=\"add\" type=\"Add\" version=\"opset1\"><input>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>2</dim></port>"
	"<port id=\"1\" precision=\"FP32\"><dim>1</dim><dim>2</dim></port></input><output>"
	"<port id=\"2\" precision=\"FP32\" names=\"h_out\"><dim>1</dim><dim>2</dim></port></output></layer>"
	"<layer id=\"3\" name=\"two\" type=\"Const\" version=\"opset1\">"
	"<data element_type=\"f32\" shape=\"1\" offset=\"0\" size=\"4\"/><output>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim></port></output></layer>"
	"<layer id=\"4\" name=\"mul\" type=\"Multiply\" version=\"opset1\"><input>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>2</dim></port>"
	"<port id=\"1\" precision=\"FP32\"><dim>1</dim></port></input><output>"
	"<port id=\"2\" precision=\"FP32\" names=\"y\"><dim>1</dim><dim>2</dim></port></output></layer>"
	"<layer id=\"5\" name=\"y/sink\" type=\"Result\" version=\"opset1\"><input>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>2</dim></port></input></layer>"
	"<layer id=\"6\" name=\"h_out/sink\" type=\"Result\" version=\"opset1\"><input>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>2</dim></port></input></layer>"
	"</layers><edges>"
	"<edge from-layer=\"0\" from-port=\"0\" to-layer=\"2\" to-port=\"0\"/>"
	"<edge from-layer=\"1\" from-port=\"0\" to-layer=\"2\" to-port=\"1\"/>"
	"<edge from-layer=\"2\" from-port=\"2\" to-layer=\"4\" to-port=\"0\"/>"
	"<edge from-layer=\"3\" from-port=\"0\" to-layer=\"4\" to-port=\"1\"/>"
	"<edge from-layer=\"4\" from-port=\"2\" to-layer=\"5\" to-port=\"0\"/>"
	"<edge from-layer=\"2\" from-port=\"2\" to-layer=\"6\" to-port=\"0\"/>"
	"</edges></net>";

/*
 * MAKE_STATEFUL changes a loaded model: its next COMPILE hashes it again
 * and misses, while the same file loaded again still hits the entry
 * stored before the change.
 */
TEST_F(cache, make_stateful_is_another_model)
{
	static const float two = 2, three = 3;
	struct npr_state_pair sp = { (uintptr_t)"h_in", (uintptr_t)"h_out" };
	struct npr_make_stateful ms = {
		.size = sizeof(ms), .count = 1, .pairs = (uintptr_t)&sp,
	};
	struct opts o = { .dir = self->dir };
	size_t len = strlen(explicit_xml);
	__u32 a, b;

	ASSERT_EQ(load_mem(self->fd, explicit_xml, len, &two, 4, &a), 0);
	EXPECT_EQ(hit(self->fd, a, &o), 0);
	EXPECT_EQ(hit(self->fd, a, &o), 1);
	/* another weight value: another model */
	ASSERT_EQ(load_mem(self->fd, explicit_xml, len, &three, 4, &b), 0);
	EXPECT_EQ(hit(self->fd, b, &o), 0);
	EXPECT_EQ(entries(self->dir, NULL, 0), 2);
	ms.model = a;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MAKE_STATEFUL, &ms), 0);
	EXPECT_EQ(hit(self->fd, a, &o), 0);
	EXPECT_EQ(hit(self->fd, a, &o), 1);
	EXPECT_EQ(entries(self->dir, NULL, 0), 3);
	ASSERT_EQ(load_mem(self->fd, explicit_xml, len, &two, 4, &b), 0);
	EXPECT_EQ(hit(self->fd, b, &o), 1);
}

/* COMPILE of @model with the device's properties only. */
static int hit_plain(int fd, __u32 model)
{
	struct npr_compile co;
	int err;

	npr_prep_compile(&co, model);
	err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	return err ? err : from_cache(fd, co.exec);
}

/*
 * With CACHE_DIR on the device, MODEL_LOAD takes the model's hash: the
 * keys are the same as with CACHE_DIR given to COMPILE, a changed weight
 * still misses, and so does the model after MAKE_STATEFUL.
 */
TEST_F(cache, device_cache_dir_same_keys)
{
	static const float two = 2, three = 3;
	struct npr_state_pair sp = { (uintptr_t)"h_in", (uintptr_t)"h_out" };
	struct npr_make_stateful ms = {
		.size = sizeof(ms), .count = 1, .pairs = (uintptr_t)&sp,
	};
	struct npr_param pa = {
		.size = sizeof(pa), .param = NPR_PARAM_CACHE_DIR,
		.ptr = (uintptr_t)self->dir, .len = strlen(self->dir) + 1,
	};
	struct opts o = { .dir = self->dir };
	size_t len = strlen(explicit_xml);
	__u32 a, b;

	/* an entry stored with COMPILE's CACHE_DIR */
	ASSERT_EQ(load_mem(self->fd, explicit_xml, len, &two, 4, &a), 0);
	EXPECT_EQ(hit(self->fd, a, &o), 0);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_PARAM, &pa), 0);
	ASSERT_EQ(load_mem(self->fd, explicit_xml, len, &two, 4, &a), 0);
	EXPECT_EQ(hit_plain(self->fd, a), 1);
	ASSERT_EQ(load_mem(self->fd, explicit_xml, len, &three, 4, &b), 0);
	EXPECT_EQ(hit_plain(self->fd, b), 0);
	EXPECT_EQ(hit_plain(self->fd, b), 1);
	ms.model = a;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MAKE_STATEFUL, &ms), 0);
	EXPECT_EQ(hit_plain(self->fd, a), 0);
	EXPECT_EQ(hit_plain(self->fd, a), 1);
	EXPECT_EQ(entries(self->dir, NULL, 0), 3);
}

TEST_F(cache, key_follows_caching_properties_and_shapes)
{
	struct opts o = { .dir = self->dir };
	__u32 e;

	ASSERT_EQ(compile(self->fd, EYE, &o, &e), 0);
	/*
	 * PERFORMANCE_HINT is not a caching property on cpu: a hit; the NPU
	 * compiler takes it, so on npu it is one: a miss
	 */
	o.perf_hint = NPR_PERF_HINT_THROUGHPUT;
	ASSERT_EQ(compile(self->fd, EYE, &o, &e), 0);
	if (!strcmp(variant->device, "npu")) {
		EXPECT_EQ(from_cache(self->fd, e), 0);
		EXPECT_EQ(entries(self->dir, NULL, 0), 2);
		return;
	}
	EXPECT_EQ(from_cache(self->fd, e), 1);
	{
		/* and the hit answers with the properties asked for */
		struct npr_param pa = {
			.size = sizeof(pa), .handle = e,
			.param = NPR_PARAM_PERFORMANCE_HINT,
		};

		ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_PARAM, &pa), 0);
		EXPECT_EQ(pa.value, NPR_PERF_HINT_THROUGHPUT);
	}
	EXPECT_EQ(entries(self->dir, NULL, 0), 1);
	/* EXECUTION_MODE_HINT is: a second entry */
	o.exec_mode = NPR_EXEC_MODE_ACCURACY;
	ASSERT_EQ(compile(self->fd, EYE, &o, &e), 0);
	EXPECT_EQ(from_cache(self->fd, e), 0);
	EXPECT_EQ(entries(self->dir, NULL, 0), 2);
	/* so are the input shapes */
	o.exec_mode = 0;
	o.perf_hint = 0;
	ASSERT_EQ(compile(self->fd, "models/onnx/squeezenet1_1.onnx",
			  &(struct opts){ .dir = self->dir, .batch = 1 }, &e),
		  0);
	ASSERT_EQ(compile(self->fd, "models/onnx/squeezenet1_1.onnx",
			  &(struct opts){ .dir = self->dir, .batch = 2 }, &e),
		  0);
	EXPECT_EQ(from_cache(self->fd, e), 0);
	ASSERT_EQ(compile(self->fd, "models/onnx/squeezenet1_1.onnx",
			  &(struct opts){ .dir = self->dir, .batch = 1 }, &e),
		  0);
	EXPECT_EQ(from_cache(self->fd, e), 1);
	EXPECT_EQ(entries(self->dir, NULL, 0), 4);
}


/* Compile EYE into @dir with one property set, or none (@prop NULL). */
static int compile_with(int fd, const char *dir,
			const struct npr_prop_arg *prop, __u32 *exec)
{
	struct npr_prop_arg pa[2] = {
		{ .param = NPR_PARAM_CACHE_DIR, .value = (uintptr_t)dir },
	};
	struct npr_model_load ml;
	struct npr_compile co;
	char path[4096];
	int err;

	if (snprintf(path, sizeof(path), "%s/%s", npr_test_shared(), EYE) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	npr_prep_model_load(&ml, path, NULL);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err)
		return err;
	if (prop)
		pa[1] = *prop;
	npr_prep_compile(&co, ml.handle);
	co.props = (uintptr_t)pa;
	co.num_props = prop ? 2 : 1;
	err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	*exec = co.exec;
	return err;
}

/*
 * Every caching property, as the device's PROP_INFO lists them (no list
 * of our own): set to another value at compile, it makes another entry;
 * those the user cannot set (the architecture, the NPU driver and
 * compiler versions) are in the entry's key lines with their value.
 */
TEST_F(cache, every_caching_property_changes_the_key)
{
	static const char *const strs[] = {
		"optimization-level=1", "performance-hint-override=latency",
		"x",
	};
	struct npr_prop_info pi = { .size = sizeof(pi) };
	char meta[8192], name[512];
	int n = 1, tried = 0, i;
	__u32 e;

	ASSERT_EQ(compile_with(self->fd, self->dir, NULL, &e), 0);
	ASSERT_EQ(entries(self->dir, name, sizeof(name)), 1);
	strcpy(name + strlen(name) - 4, "meta");
	{
		FILE *f = fopen(name, "r");

		ASSERT_NONNULL(f);
		meta[fread(meta, 1, sizeof(meta) - 1, f)] = 0;
		fclose(f);
	}
	for (pi.index = 0; !npr_ioctl(self->fd, NPR_IOCTL_PROP_INFO, &pi);
	     pi.index++, pi.flags = 0) {
		struct npr_param cur = {
			.size = sizeof(cur), .param = pi.id,
		};
		char line[128];
		bool done = false;

		if (!(pi.access & NPR_PROP_ACCESS_CACHING))
			continue;
		tried++;
		snprintf(line, sizeof(line), "%s=", pi.name);
		EXPECT_NONNULL(strstr(meta, line));
		if (!(pi.access & NPR_PROP_ACCESS_COMPILE))
			continue;
		if (pi.type != NPR_PROP_STRING)
			ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_PARAM,
					    &cur), 0);
		/* the first other value the device accepts */
		for (i = 0; i < 40 && !done; i++) {
			struct npr_prop_arg pa = { .param = pi.id };
			int err;

			if (pi.type == NPR_PROP_STRING) {
				if (i >= (int)(sizeof(strs) / sizeof(strs[0])))
					break;
				pa.value = (uintptr_t)strs[i];
			} else if (pi.type == NPR_PROP_BOOL) {
				pa.value = !cur.value;
				i = 40;
			} else {
				/* cur+1, cur-1, cur+2, ...: an enum's or int's neighbour */
				pa.value = cur.value + (i % 2 ? -(i / 2 + 1) :
							i / 2 + 1);
			}
			err = compile_with(self->fd, self->dir, &pa, &e);
			if (err) {
				/* a value the device refuses, not a failure */
				EXPECT_TRUE(err == -EINVAL || err == -ERANGE);
				continue;
			}
			done = true;
			TH_LOG("%s: another value, another entry", pi.name);
			EXPECT_EQ(from_cache(self->fd, e), 0);
			EXPECT_EQ(entries(self->dir, NULL, 0), ++n);
		}
		/* a property the device takes one value of cannot vary */
		if (!done)
			TH_LOG("%s: the %s device accepts no other value",
			       pi.name, variant->device);
	}
	EXPECT_GE(tried, 3);
	if (!strcmp(variant->device, "npu")) {
		EXPECT_NONNULL(strstr(meta, "PERFORMANCE_HINT=LATENCY"));
		EXPECT_NONNULL(strstr(meta, "NPU_COMPILER_VERSION="));
		EXPECT_NONNULL(strstr(meta, "NPU_DRIVER_VERSION="));
	}
}

/* Truncate or corrupt the only entry: compiled again and replaced. */
/* The library's log, collected (npr_set_log()). */
struct logbuf {
	char *buf;
	size_t len, used;
};

static void collect(void *priv, int level, const char *msg)
{
	struct logbuf *b = priv;
	int n;

	(void)level;
	n = snprintf(b->buf + b->used, b->len - b->used, "%s\n", msg);
	if (n > 0)
		b->used = b->used + n < b->len ? b->used + n : b->len - 1;
}

/*
 * Evaluate @call with the library's log up to @max collected in @buf (at
 * most @len - 1 bytes): its warnings.
 */
#define with_log(buf, len, max, call)					\
	({								\
		struct logbuf npr_b = { (buf), (len), 0 };		\
		int npr_ret;						\
									\
		(buf)[0] = 0;						\
		npr_set_log(collect, &npr_b, (max));			\
		npr_ret = (call);					\
		npr_set_log(NULL, NULL, 0);				\
		npr_ret;						\
	})

/* The child's log to its stderr, as a program would print it. */
static void to_stderr(void *priv, int level, const char *msg)
{
	(void)priv;
	(void)level;
	dprintf(2, "%s\n", msg);
}

static void damage(struct npr_test *_metadata, FIXTURE_DATA(cache) *self,
		   bool cut)
{
	struct opts o = { .dir = self->dir };
	struct stat before, after;
	char name[512], why[1024];
	__u32 e;

	ASSERT_EQ(compile(self->fd, LMK, &o, &e), 0);
	ASSERT_EQ(entries(self->dir, name, sizeof(name)), 1);
	ASSERT_EQ(stat(name, &before), 0);
	if (cut) {
		ASSERT_EQ(truncate(name, before.st_size / 3), 0);
	} else {
		FILE *f = fopen(name, "r+b");
		int c;

		ASSERT_NE(f, NULL);
		fseek(f, before.st_size / 2, SEEK_SET);
		c = fgetc(f);
		fseek(f, before.st_size / 2, SEEK_SET);
		fputc(c ^ 0x10, f);
		fclose(f);
	}
	/*
	 * refused, and it says why: a warning, which the compile's
	 * LOG_LEVEL lets through a log that takes errors only
	 */
	o.log_level = NPR_LOG_WARNING;
	ASSERT_EQ(with_log(why, sizeof(why), NPR_LOG_ERROR,
			   compile(self->fd, LMK, &o, &e)), 0);
	o.log_level = 0;
	EXPECT_EQ(from_cache(self->fd, e), 0);
	EXPECT_NE(strstr(why, "does not import"), NULL);
	EXPECT_NE(strstr(why, "compiling again"), NULL);
	ASSERT_EQ(stat(name, &after), 0);
	EXPECT_EQ(after.st_size, before.st_size);
	ASSERT_EQ(compile(self->fd, LMK, &o, &e), 0);
	EXPECT_EQ(from_cache(self->fd, e), 1);
	EXPECT_EQ(entries(self->dir, NULL, 0), 1);
}

uint64_t npr_blob_hash(const void *p, size_t n);

/*
 * An entry whose packed weights are in another kernel layout (written by
 * a build whose GEMM packs differently): import refuses it, the compile
 * packs again, the entry is replaced and hits after that.
 */
TEST_F(cache, another_weight_layout_is_compiled_again)
{
	struct opts o = { .dir = self->dir };
	unsigned char *b = NULL;
	char name[512];
	uint64_t h, a;
	size_t len, i;
	bool patched = false;
	FILE *f;
	__u32 e;

	if (strcmp(variant->device, "cpu"))
		SKIP(return, "only the cpu backend stores packed weights under a layout name");
	ASSERT_EQ(compile(self->fd, EYE, &o, &e), 0);
	ASSERT_EQ(entries(self->dir, name, sizeof(name)), 1);
	f = fopen(name, "rb");
	ASSERT_NE(f, NULL);
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	rewind(f);
	b = malloc(len);
	ASSERT_NE(b, NULL);
	ASSERT_EQ(fread(b, 1, len, f), len);
	fclose(f);
	/* the layout name, "convN KERNEL mrM nrN", after the graph */
	for (i = 96; i + 12 < len && !patched; i++)
		if (!memcmp(b + i, "conv", 4) && b[i + 4] >= '0' &&
		    b[i + 4] <= '9' && memmem(b + i, 40, " mr", 3)) {
			b[i + 4] = b[i + 4] == '9' ? '8' : '9';
			patched = true;
		}
	ASSERT_TRUE(patched);
	a = npr_blob_hash(b + 96, len - 96);
	h = npr_blob_hash(b, 88);
	h = a ^ ((h << 17) | (h >> 47));
	memcpy(b + 88, &h, 8);
	/* replaced, not rewritten: that is how entries change */
	{
		char tmp[600];

		snprintf(tmp, sizeof(tmp), "%s.new", name);
		f = fopen(tmp, "wb");
		ASSERT_NE(f, NULL);
		ASSERT_EQ(fwrite(b, 1, len, f), len);
		fclose(f);
		ASSERT_EQ(rename(tmp, name), 0);
	}
	free(b);
	ASSERT_EQ(compile(self->fd, EYE, &o, &e), 0);
	EXPECT_EQ(from_cache(self->fd, e), 0);
	ASSERT_EQ(compile(self->fd, EYE, &o, &e), 0);
	EXPECT_EQ(from_cache(self->fd, e), 1);
	EXPECT_EQ(entries(self->dir, NULL, 0), 1);
}

TEST_F(cache, truncated_entry_is_replaced)
{
	damage(_metadata, self, true);
}

TEST_F(cache, corrupt_entry_is_replaced)
{
	damage(_metadata, self, false);
}

/*
 * A hit takes the entry's checksum beside the import (a hashing thread
 * hashes it a chunk at a time while the graph is read): a bit flipped in
 * the first, a middle or the last byte of a 2.6 MB entry is found all
 * the same, the entry compiled again and replaced, and it hits after.
 */
TEST_F(cache, flipped_bit_anywhere_in_a_large_entry)
{
	struct opts o = { .dir = self->dir };
	struct stat st;
	char name[512];
	int k, c;
	__u32 e;

	ASSERT_EQ(compile(self->fd, FACE, &o, &e), 0);
	ASSERT_EQ(entries(self->dir, name, sizeof(name)), 1);
	ASSERT_EQ(stat(name, &st), 0);
	ASSERT_GT(st.st_size, 2 << 20);
	for (k = 0; k < 4; k++) {
		/* the header's payload size, the payload's first byte,
		 * one in the middle, the entry's last */
		long off = k == 0 ? 87 : k == 1 ? 96 :
			   k == 2 ? st.st_size / 2 + 13 : st.st_size - 1;
		FILE *f = fopen(name, "r+b");

		ASSERT_NE(f, NULL);
		fseek(f, off, SEEK_SET);
		c = fgetc(f);
		fseek(f, off, SEEK_SET);
		fputc(c ^ (1 << k), f);
		fclose(f);
		ASSERT_EQ(compile(self->fd, FACE, &o, &e), 0);
		EXPECT_EQ(from_cache(self->fd, e), 0);
		ASSERT_EQ(compile(self->fd, FACE, &o, &e), 0);
		EXPECT_EQ(from_cache(self->fd, e), 1);
	}
	EXPECT_EQ(entries(self->dir, NULL, 0), 1);
}

TEST_F(cache, required_turns_a_miss_into_enoent)
{
	struct opts o = { .dir = self->dir, .required = 1 };
	__u32 e;

	EXPECT_EQ(compile(self->fd, EYE, &o, &e), -ENOENT);
	EXPECT_NE(strstr(npr_last_error(), "NPR_CACHE_REQUIRED"), NULL);
	EXPECT_EQ(entries(self->dir, NULL, 0), 0);
	o.required = 0;
	ASSERT_EQ(compile(self->fd, EYE, &o, &e), 0);
	o.required = 1;
	ASSERT_EQ(compile(self->fd, EYE, &o, &e), 0);
	EXPECT_EQ(from_cache(self->fd, e), 1);
}

/* Bytes of the files in @dir. */
static long long dir_bytes(const char *dir)
{
	struct dirent *d;
	DIR *dp = opendir(dir);
	long long n = 0;
	char path[512];
	struct stat st;

	if (!dp)
		return -1;
	while ((d = readdir(dp))) {
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (d->d_name[0] != '.' && !stat(path, &st))
			n += st.st_size;
	}
	closedir(dp);
	return n;
}

/* Bytes of @model's cache entry on the fixture's device. */
static long long entry_bytes(FIXTURE_DATA(cache) *self, const char *model)
{
	char dir[] = "/tmp/npr-cache-size.XXXXXX";
	struct opts o = { .dir = dir };
	long long n = -1;
	__u32 e;

	if (!mkdtemp(dir))
		return -1;
	if (!compile(self->fd, model, &o, &e))
		n = dir_bytes(dir);
	npr_test_rm_tree(dir);
	return n;
}

/*
 * A limit that holds eye and face but not landmarks too: landmarks, used
 * least recently, goes.  The entries' sizes depend on the device and the
 * CPU (an npu entry also holds the driver's native binary; on AVX-512 a
 * cpu entry holds Winograd's transformed weights too), so they are
 * measured first, in a scratch directory.
 */
TEST_F(cache, least_recently_used_is_pruned)
{
	long long eye = entry_bytes(self, EYE), lmk = entry_bytes(self, LMK);
	long long face = entry_bytes(self, FACE);
	struct opts o = { .dir = self->dir };
	__u32 e;

	ASSERT_GT(eye, 0);
	ASSERT_GT(lmk, 0);
	ASSERT_GT(face, 0);
	o.max_mb = (int)((eye + face + (1 << 20) - 1) >> 20);
	if (((long long)o.max_mb << 20) >= eye + lmk + face)
		SKIP(return, "no whole MiB holds eye and face but not landmarks (%lld, %lld, %lld bytes)",
		     eye, lmk, face);
	ASSERT_EQ(compile(self->fd, EYE, &o, &e), 0);
	ASSERT_EQ(compile(self->fd, LMK, &o, &e), 0);
	usleep(20000);
	ASSERT_EQ(compile(self->fd, EYE, &o, &e), 0);	/* a use */
	EXPECT_EQ(from_cache(self->fd, e), 1);
	usleep(20000);
	ASSERT_EQ(compile(self->fd, FACE, &o, &e), 0);
	EXPECT_EQ(entries(self->dir, NULL, 0), 2);
	ASSERT_EQ(compile(self->fd, EYE, &o, &e), 0);
	EXPECT_EQ(from_cache(self->fd, e), 1);
	ASSERT_EQ(compile(self->fd, FACE, &o, &e), 0);
	EXPECT_EQ(from_cache(self->fd, e), 1);
	ASSERT_EQ(compile(self->fd, LMK, &o, &e), 0);
	EXPECT_EQ(from_cache(self->fd, e), 0);
}

TEST_F(cache, unwritable_cache_never_fails_a_compile)
{
	struct opts o = { .dir = "/proc/npuring-no-such-dir/cache" };
	__u32 e;

	ASSERT_EQ(compile(self->fd, EYE, &o, &e), 0);
	EXPECT_EQ(from_cache(self->fd, e), 0);
}

/* ---- writers that die or run out of disk ---- */

/*
 * Under ThreadSanitizer a child forked from a process with a thread alive
 * may start none of its own ("starting new threads after multi-threaded
 * fork is not supported"), and the npu device's driver (the software NPU
 * over the Level Zero loader) has one alive when a test forks its writer.
 */
static bool tsan_forbids_fork(const char *device)
{
#if defined(__SANITIZE_THREAD__)
	return strcmp(device, "cpu");
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
	return strcmp(device, "cpu");
#endif
#endif
	return false;
}

/*
 * Compile @rel with the cache in @dir in a child process whose files may
 * grow to @fsize bytes: past that it dies of SIGXFSZ in the middle of
 * writing the entry, or with @full its writes fail with EFBIG as on a
 * full disk.  With @kill_ns the parent SIGKILLs it after that long.  Its
 * log (warnings) goes to its stderr, which is @errfd (-1: ours).
 *
 * Return: its wait status; exit 0 when it compiled without a hit.
 */
static int writer(const char *device, const char *rel, const char *dir,
		  rlim_t fsize, bool full, long kill_ns, int errfd)
{
	struct timespec ts = { kill_ns / 1000000000, kill_ns % 1000000000 };
	int status = -1;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct rlimit core = { 0, 0 }, rl = { fsize, fsize };
		struct opts o = { .dir = dir };
		__u32 e;
		int fd;

		setrlimit(RLIMIT_CORE, &core);
		signal(SIGXFSZ, full ? SIG_IGN : SIG_DFL);
		if (errfd >= 0)
			dup2(errfd, 2);
		npr_set_log(to_stderr, NULL, NPR_LOG_WARNING);
		fd = npr_open(device, 0);
		if (fd < 0)
			_exit(3);
		if (setrlimit(RLIMIT_FSIZE, &rl))
			_exit(3);
		if (compile(fd, rel, &o, &e))
			_exit(4);
		_exit(from_cache(fd, e) ? 5 : 0);
	}
	if (pid < 0)
		return -1;
	if (kill_ns) {
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
	}
	waitpid(pid, &status, 0);
	return status;
}

/* The whole of a file; NULL if it does not read. */
static void *file_bytes(const char *path, size_t *len)
{
	struct stat st;
	void *p = NULL;
	FILE *f = fopen(path, "rb");

	if (!f)
		return NULL;
	if (!fstat(fileno(f), &st) && (p = malloc(st.st_size + 1)) &&
	    fread(p, 1, st.st_size, f) != (size_t)st.st_size) {
		free(p);
		p = NULL;
	}
	fclose(f);
	*len = st.st_size;
	return p;
}

/* Remove the entries other than @keep (a .blob path) and temporary files. */
static void remove_others(const char *dir, const char *keep)
{
	char path[600], stem[600];
	struct dirent *d;
	DIR *dp = opendir(dir);

	if (!dp)
		return;
	snprintf(stem, sizeof(stem), "%.*s", (int)strlen(keep) - 5, keep);
	while ((d = readdir(dp))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (strncmp(path, stem, strlen(stem)))
			unlink(path);
	}
	closedir(dp);
}

/* Temporary files in @dir: writes that never finished. */
static int leftovers(const char *dir)
{
	struct dirent *d;
	DIR *dp = opendir(dir);
	int n = 0;

	if (!dp)
		return -1;
	while ((d = readdir(dp)))
		if (d->d_name[0] == '.' && strlen(d->d_name) > 2)
			n++;
	closedir(dp);
	return n;
}

#define OUTS	2048

/*
 * After a writer of face-detection died: the entry stored before (eye,
 * @eye_blob with bytes @eye_bytes) is untouched and hits with @eye_out;
 * face compiles, from a complete entry or from the model, to @face_out.
 */
static void after_writer(struct npr_test *_metadata,
			 FIXTURE_DATA(cache) *self, const char *eye_blob,
			 const void *eye_bytes, size_t eye_len,
			 const float *eye_out, const float *face_out,
			 const char *what)
{
	struct opts o = { .dir = self->dir };
	static float out[OUTS];
	size_t len = 0;
	void *now;
	__u32 e;

	now = file_bytes(eye_blob, &len);
	ASSERT_NE(now, NULL);
	EXPECT_TRUE(len == eye_len && !memcmp(now, eye_bytes, len));
	free(now);
	ASSERT_EQ(compile(self->fd, EYE, &o, &e), 0);
	EXPECT_EQ(from_cache(self->fd, e), 1);
	memset(out, 0, sizeof(out));
	ASSERT_EQ(run(self->fd, e, out, OUTS), 0);
	EXPECT_EQ(memcmp(out, eye_out, sizeof(out)), 0);
	ASSERT_EQ(compile(self->fd, FACE, &o, &e), 0);
	memset(out, 0, sizeof(out));
	ASSERT_EQ(run(self->fd, e, out, OUTS), 0);
	if (memcmp(out, face_out, sizeof(out)))
		TH_LOG("%s: face computes otherwise (from the cache: %d)",
		       what, from_cache(self->fd, e));
	EXPECT_EQ(memcmp(out, face_out, sizeof(out)), 0);
	remove_others(self->dir, eye_blob);
}

/*
 * A writer killed in the middle of an entry: cut by RLIMIT_FSIZE at the
 * entry's first byte, 4 KiB, a third, a half and its last byte (SIGXFSZ
 * kills it there), then SIGKILLed at a fifth, two, three and four fifths
 * of the time a whole write takes.  Each time the entry stored before is
 * untouched and hits, and the one being written is never served torn:
 * it is there whole (a late kill), or missing and compiled again.
 */
TEST_F(cache, killed_writer_leaves_no_corrupt_entry)
{
	struct opts o = { .dir = self->dir };
	struct opts none = { .dir = "/proc/npuring-no-such-dir/cache" };
	struct npr_export ex = { .size = sizeof(ex) };
	static float eye_out[OUTS], face_out[OUTS];
	char eye_blob[512], full[80], what[64];
	struct timespec t0, t1;
	void *eye_bytes;
	size_t eye_len;
	long long cuts[5];
	long span;
	int i, st;
	__u32 e;

	if (tsan_forbids_fork(variant->device))
		SKIP(return, "forks a writer while the driver has a thread, which ThreadSanitizer does not support");
	ASSERT_EQ(compile(self->fd, EYE, &o, &e), 0);
	ASSERT_EQ(run(self->fd, e, eye_out, OUTS), 0);
	ASSERT_EQ(entries(self->dir, eye_blob, sizeof(eye_blob)), 1);
	eye_bytes = file_bytes(eye_blob, &eye_len);
	ASSERT_NE(eye_bytes, NULL);
	ASSERT_EQ(compile(self->fd, FACE, &none, &e), 0);
	ASSERT_EQ(run(self->fd, e, face_out, OUTS), 0);
	ex.exec = e;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_EXPORT, &ex), -EMSGSIZE);
	ASSERT_GT(ex.bytes, 8192);
	cuts[0] = 1;
	cuts[1] = 4096;
	cuts[2] = ex.bytes / 3;
	cuts[3] = ex.bytes / 2;
	cuts[4] = ex.bytes - 1;
	for (i = 0; i < 5; i++) {
		st = writer(variant->device, FACE, self->dir, cuts[i], false,
			    0, -1);
		EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGXFSZ);
		EXPECT_EQ(entries(self->dir, NULL, 0) % 1000, 1);
		snprintf(what, sizeof(what), "cut at byte %lld", cuts[i]);
		after_writer(_metadata, self, eye_blob, eye_bytes, eye_len,
			     eye_out, face_out, what);
	}
	/* how long a whole write takes, in a directory of its own */
	snprintf(full, sizeof(full), "%s/whole", self->dir);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	st = writer(variant->device, FACE, full, RLIM_INFINITY, false, 0, -1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	span = (t1.tv_sec - t0.tv_sec) * 1000000000L + t1.tv_nsec - t0.tv_nsec;
	for (i = 1; i < 5; i++) {
		st = writer(variant->device, FACE, self->dir, RLIM_INFINITY,
			    false, span * i / 5, -1);
		EXPECT_TRUE(WIFSIGNALED(st) || WIFEXITED(st));
		snprintf(what, sizeof(what), "SIGKILL at %d/5", i);
		after_writer(_metadata, self, eye_blob, eye_bytes, eye_len,
			     eye_out, face_out, what);
	}
	free(eye_bytes);
}

/*
 * A full disk (RLIMIT_FSIZE of 64 KiB, SIGXFSZ ignored: writes fail with
 * EFBIG): the compile succeeds, the write of the 2.6 MB entry fails and
 * says so, leaves no temporary file, and the entry stored before is
 * untouched and hits.
 */
TEST_F(cache, full_disk_fails_the_write_not_the_compile)
{
	struct opts o = { .dir = self->dir };
	struct opts req = { .dir = self->dir, .required = 1 };
	char eye_blob[512], why[2048];
	void *before, *after;
	size_t blen, alen;
	int p[2], st;
	ssize_t n;
	__u32 e;

	if (tsan_forbids_fork(variant->device))
		SKIP(return, "forks a writer while the driver has a thread, which ThreadSanitizer does not support");
	ASSERT_EQ(compile(self->fd, EYE, &o, &e), 0);
	ASSERT_EQ(entries(self->dir, eye_blob, sizeof(eye_blob)), 1);
	before = file_bytes(eye_blob, &blen);
	ASSERT_NE(before, NULL);
	ASSERT_EQ(pipe(p), 0);
	st = writer(variant->device, FACE, self->dir, 64 << 10, true, 0,
		    p[1]);
	close(p[1]);
	n = read(p[0], why, sizeof(why) - 1);
	close(p[0]);
	why[n > 0 ? n : 0] = 0;
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT_NE(strstr(why, "cannot write to the cache"), NULL);
	EXPECT_NE(strstr(why, strerror(EFBIG)), NULL);
	EXPECT_EQ(leftovers(self->dir), 0);
	EXPECT_EQ(entries(self->dir, NULL, 0), 1);
	after = file_bytes(eye_blob, &alen);
	ASSERT_NE(after, NULL);
	EXPECT_TRUE(alen == blen && !memcmp(before, after, blen));
	free(before);
	free(after);
	ASSERT_EQ(compile(self->fd, EYE, &o, &e), 0);
	EXPECT_EQ(from_cache(self->fd, e), 1);
	EXPECT_EQ(compile(self->fd, FACE, &req, &e), -ENOENT);
}

/* ---- models loaded with NPR_MODEL_LOAD_DEFER: keyed by their files ---- */

/* Copy shared file @rel to @to; 0 or -errno. */
static int copy_file(const char *rel, const char *to, size_t extra)
{
	size_t len = 0;
	void *buf = slurp(rel, &len);
	FILE *f;
	int err = 0;

	if (!buf)
		return -ENOENT;
	f = fopen(to, "wb");
	if (!f) {
		free(buf);
		return -errno;
	}
	if (fwrite(buf, 1, len, f) != len)
		err = -EIO;
	while (!err && extra--)
		if (fputc(0, f) == EOF)
			err = -EIO;
	if (fclose(f) && !err)
		err = -EIO;
	free(buf);
	return err;
}

/* FACE's .xml and .bin copied into DIR/m/ as face.xml, face.bin. */
static void copy_face(struct npr_test *_metadata, FIXTURE_DATA(cache) *self,
		      char *xml, char *bin, size_t len)
{
	char rel[256];

	snprintf(xml, len, "%s/m", self->dir);
	ASSERT_EQ(mkdir(xml, 0755), 0);
	snprintf(xml, len, "%s/m/face.xml", self->dir);
	snprintf(bin, len, "%s/m/face.bin", self->dir);
	ASSERT_EQ(copy_file(FACE, xml, 0), 0);
	strcpy(rel, FACE);
	strcpy(rel + strlen(rel) - 4, ".bin");
	ASSERT_EQ(copy_file(rel, bin, 0), 0);
}

static int load_deferred(int fd, const char *xml, __u32 *model)
{
	struct npr_model_load ml;
	int err;

	npr_prep_model_load(&ml, xml, NULL);
	ml.flags = NPR_MODEL_LOAD_DEFER;
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	*model = ml.handle;
	return err;
}

/* MODEL_INFO's number of nodes, or -errno. */
static int num_nodes(int fd, __u32 h)
{
	struct npr_model_info mi = { .size = sizeof(mi), .handle = h };
	int err = npr_ioctl(fd, NPR_IOCTL_MODEL_INFO, &mi);

	return err ? err : (int)mi.num_nodes;
}

/*
 * A deferred model's first compile misses and stores an entry keyed by
 * the files (a file= and a bin= line); the next deferred load hits
 * without reading them: its .xml replaced by garbage and its .bin removed
 * after the load, it still hits and gives bit for bit the outputs of the
 * model loaded and compiled without a cache.  The garbage surfaces only
 * when the graph is needed (MODEL_INFO), with MODEL_LOAD's error.
 */
TEST_F(cache, deferred_hit_reads_no_file)
{
	struct opts o = { .dir = self->dir };
	float a[256] = { 0 }, b[256] = { 0 }, c[256] = { 0 };
	char xml[512], bin[512], name[512], meta[4096], garbage[600];
	char msg[512];
	struct npr_model_load ml;
	size_t got;
	int err;
	__u32 m, e;
	FILE *f;

	copy_face(_metadata, self, xml, bin, sizeof(xml));
	/* the reference: loaded and compiled without a cache */
	npr_prep_model_load(&ml, xml, NULL);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	ASSERT_EQ(hit_plain(self->fd, ml.handle), 0);
	{
		struct npr_compile co;

		npr_prep_compile(&co, ml.handle);
		ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_COMPILE, &co), 0);
		ASSERT_EQ(run(self->fd, co.exec, a, 256), 0);
	}
	ASSERT_EQ(load_deferred(self->fd, xml, &m), 0);
	ASSERT_EQ(compile_model(self->fd, m, &o, &e), 0);
	EXPECT_EQ(from_cache(self->fd, e), 0);
	ASSERT_EQ(run(self->fd, e, b, 256), 0);
	EXPECT_EQ(memcmp(a, b, sizeof(a)), 0);
	ASSERT_EQ(entries(self->dir, name, sizeof(name)), 1);
	strcpy(name + strlen(name) - 5, ".meta");
	f = fopen(name, "r");
	ASSERT_NE(f, NULL);
	got = fread(meta, 1, sizeof(meta) - 1, f);
	meta[got] = 0;
	fclose(f);
	EXPECT_EQ(strncmp(meta, "file=/", 6), 0);
	EXPECT_NE(strstr(meta, "/m/face.xml dev="), NULL);
	EXPECT_NE(strstr(meta, "\nbin=/"), NULL);
	EXPECT_NE(strstr(meta, "/m/face.bin dev="), NULL);
	EXPECT_EQ(strstr(meta, "model="), NULL);
	EXPECT_NE(strstr(meta, "\nname=cnn_fd_004_sq_light_ssd"), NULL);

	/* load, then take the files away: nothing reads them on a hit */
	ASSERT_EQ(load_deferred(self->fd, xml, &m), 0);
	snprintf(garbage, sizeof(garbage), "%s.new", xml);
	f = fopen(garbage, "w");
	ASSERT_NE(f, NULL);
	fputs("<net><layers><layer", f);
	fclose(f);
	ASSERT_EQ(rename(garbage, xml), 0);
	ASSERT_EQ(unlink(bin), 0);
	ASSERT_EQ(compile_model(self->fd, m, &o, &e), 0);
	EXPECT_EQ(from_cache(self->fd, e), 1);
	ASSERT_EQ(run(self->fd, e, c, 256), 0);
	EXPECT_EQ(memcmp(a, c, sizeof(a)), 0);
	EXPECT_EQ(entries(self->dir, NULL, 0), 1);
	/* the graph is needed now: the error MODEL_LOAD gives */
	npr_prep_model_load(&ml, xml, NULL);
	err = npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml);
	ASSERT_LT(err, 0);
	snprintf(msg, sizeof(msg), "%s", npr_last_error());
	EXPECT_EQ(num_nodes(self->fd, m), err);
	EXPECT_STREQ(npr_last_error(), msg);
	/* and so does a compile without a cache */
	EXPECT_EQ(hit_plain(self->fd, m), err);
	EXPECT_STREQ(npr_last_error(), msg);
}

/*
 * The key is the files' identity: a touched .bin, a rewritten .xml with
 * the same bytes (another inode) and a .bin of another size each miss;
 * the model as it is then hits again.
 */
TEST_F(cache, deferred_changed_file_misses)
{
	struct opts o = { .dir = self->dir };
	struct timespec ts[2] = { { 0, UTIME_OMIT }, { 1000000000, 5 } };
	char xml[512], bin[512], rel[256];
	float a[256] = { 0 }, b[256] = { 0 };
	__u32 m, e;

	copy_face(_metadata, self, xml, bin, sizeof(xml));
	ASSERT_EQ(load_deferred(self->fd, xml, &m), 0);
	EXPECT_EQ(hit(self->fd, m, &o), 0);
	ASSERT_EQ(load_deferred(self->fd, xml, &m), 0);
	ASSERT_EQ(compile_model(self->fd, m, &o, &e), 0);
	EXPECT_EQ(from_cache(self->fd, e), 1);
	ASSERT_EQ(run(self->fd, e, a, 256), 0);
	/* touched: another modification time */
	ASSERT_EQ(utimensat(AT_FDCWD, bin, ts, 0), 0);
	ASSERT_EQ(load_deferred(self->fd, xml, &m), 0);
	EXPECT_EQ(hit(self->fd, m, &o), 0);
	EXPECT_EQ(entries(self->dir, NULL, 0), 2);
	ASSERT_EQ(load_deferred(self->fd, xml, &m), 0);
	EXPECT_EQ(hit(self->fd, m, &o), 1);
	/* the same bytes written again: another file */
	ASSERT_EQ(unlink(xml), 0);
	ASSERT_EQ(copy_file(FACE, xml, 0), 0);
	ASSERT_EQ(load_deferred(self->fd, xml, &m), 0);
	EXPECT_EQ(hit(self->fd, m, &o), 0);
	EXPECT_EQ(entries(self->dir, NULL, 0), 3);
	/* another size (and the same modification time) */
	strcpy(rel, FACE);
	strcpy(rel + strlen(rel) - 4, ".bin");
	ASSERT_EQ(copy_file(rel, bin, 64), 0);
	ASSERT_EQ(utimensat(AT_FDCWD, bin, ts, 0), 0);
	ASSERT_EQ(load_deferred(self->fd, xml, &m), 0);
	ASSERT_EQ(compile_model(self->fd, m, &o, &e), 0);
	EXPECT_EQ(from_cache(self->fd, e), 0);
	EXPECT_EQ(entries(self->dir, NULL, 0), 4);
	ASSERT_EQ(run(self->fd, e, b, 256), 0);
	EXPECT_EQ(memcmp(a, b, sizeof(a)), 0);
	ASSERT_EQ(load_deferred(self->fd, xml, &m), 0);
	EXPECT_EQ(hit(self->fd, m, &o), 1);
	/* and the content-keyed entry is another one */
	ASSERT_EQ(compile(self->fd, FACE, &o, &e), 0);
	EXPECT_EQ(from_cache(self->fd, e), 0);
	EXPECT_EQ(entries(self->dir, NULL, 0), 5);
}

/*
 * A deferred load checks that the files open (the errors of MODEL_LOAD);
 * a model that does not parse loads, and fails at the first command that
 * needs its graph with the -errno and message MODEL_LOAD gives, also on
 * a cache miss; NPR_CACHE_REQUIRED fails a miss without reading.  A file
 * removed after the load fails the first command that needs it.
 */
TEST_F(cache, deferred_errors_are_those_of_model_load)
{
	struct opts o = { .dir = self->dir };
	struct npr_port_info pi = { .size = sizeof(pi) };
	char path[512], msg[512];
	struct npr_model_load ml;
	int err;
	__u32 m, e;
	FILE *f;

	/* a file that does not open: at the load, as without the flag */
	snprintf(path, sizeof(path), "%s/none.xml", self->dir);
	npr_prep_model_load(&ml, path, NULL);
	err = npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml);
	EXPECT_EQ(err, -ENOENT);
	snprintf(msg, sizeof(msg), "%s", npr_last_error());
	EXPECT_EQ(load_deferred(self->fd, path, &m), -ENOENT);
	EXPECT_STREQ(npr_last_error(), msg);
	/* not with MEMORY */
	npr_prep_model_load_mem(&ml, explicit_xml, strlen(explicit_xml),
				NULL, 0);
	ml.flags |= NPR_MODEL_LOAD_DEFER;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml), -EINVAL);
	EXPECT_NE(strstr(npr_last_error(), "NPR_MODEL_LOAD_DEFER"), NULL);

	/* a model that does not parse: an edge to a missing layer */
	snprintf(path, sizeof(path), "%s/bad.xml", self->dir);
	f = fopen(path, "w");
	ASSERT_NE(f, NULL);
	fputs("<?xml version=\"1.0\"?><net name=\"bad\" version=\"11\"><layers>"
	      "<layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\">"
	      "<data shape=\"1,2\" element_type=\"f32\"/><output>"
	      "<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>2</dim></port></output></layer>"
	      "</layers><edges><edge from-layer=\"0\" from-port=\"0\" to-layer=\"7\" to-port=\"0\"/>"
	      "</edges></net>", f);
	fclose(f);
	npr_prep_model_load(&ml, path, NULL);
	err = npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml);
	ASSERT_LT(err, 0);
	snprintf(msg, sizeof(msg), "%s", npr_last_error());
	ASSERT_EQ(load_deferred(self->fd, path, &m), 0);
	EXPECT_EQ(num_nodes(self->fd, m), err);
	EXPECT_STREQ(npr_last_error(), msg);
	pi.handle = m;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_PORT_INFO, &pi), err);
	EXPECT_STREQ(npr_last_error(), msg);
	o.required = 1;
	EXPECT_EQ(compile_model(self->fd, m, &o, &e), -ENOENT);
	EXPECT_NE(strstr(npr_last_error(), "NPR_CACHE_REQUIRED"), NULL);
	o.required = 0;
	EXPECT_EQ(compile_model(self->fd, m, &o, &e), err);
	EXPECT_STREQ(npr_last_error(), msg);
	EXPECT_EQ(entries(self->dir, NULL, 0), 0);

	/* a file removed after the load: the error of a missing file when
	 * the graph is needed */
	ASSERT_EQ(load_deferred(self->fd, path, &m), 0);
	ASSERT_EQ(unlink(path), 0);
	npr_prep_model_load(&ml, path, NULL);
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml), -ENOENT);
	snprintf(msg, sizeof(msg), "%s", npr_last_error());
	EXPECT_NE(strstr(msg, path), NULL);
	EXPECT_EQ(num_nodes(self->fd, m), -ENOENT);
	EXPECT_STREQ(npr_last_error(), msg);
	EXPECT_EQ(compile_model(self->fd, m, &o, &e), -ENOENT);
	EXPECT_STREQ(npr_last_error(), msg);
}

/*
 * A deferred handle read before its compile (MODEL_INFO) is still keyed
 * by its files; MAKE_STATEFUL makes it another model, keyed by content.
 */
TEST_F(cache, deferred_read_early_and_stateful)
{
	static const float two = 2;
	struct npr_state_pair sp = { (uintptr_t)"h_in", (uintptr_t)"h_out" };
	struct npr_make_stateful ms = {
		.size = sizeof(ms), .count = 1, .pairs = (uintptr_t)&sp,
	};
	struct opts o = { .dir = self->dir };
	char xml[512], bin[512];
	__u32 m;
	FILE *f;

	snprintf(xml, sizeof(xml), "%s/explicit.xml", self->dir);
	snprintf(bin, sizeof(bin), "%s/explicit.bin", self->dir);
	f = fopen(xml, "w");
	ASSERT_NE(f, NULL);
	fputs(explicit_xml, f);
	fclose(f);
	f = fopen(bin, "wb");
	ASSERT_NE(f, NULL);
	fwrite(&two, 4, 1, f);
	fclose(f);
	ASSERT_EQ(load_deferred(self->fd, xml, &m), 0);
	EXPECT_EQ(num_nodes(self->fd, m), 7);
	EXPECT_EQ(hit(self->fd, m, &o), 0);
	ASSERT_EQ(load_deferred(self->fd, xml, &m), 0);
	EXPECT_EQ(hit(self->fd, m, &o), 1);
	EXPECT_EQ(entries(self->dir, NULL, 0), 1);
	ms.model = m;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MAKE_STATEFUL, &ms), 0);
	EXPECT_EQ(hit(self->fd, m, &o), 0);
	EXPECT_EQ(hit(self->fd, m, &o), 1);
	EXPECT_EQ(entries(self->dir, NULL, 0), 2);
	/* the same stateful model loaded from memory: that content key */
	ASSERT_EQ(load_mem(self->fd, explicit_xml, strlen(explicit_xml), &two,
			   4, &m), 0);
	ms.model = m;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MAKE_STATEFUL, &ms), 0);
	EXPECT_EQ(hit(self->fd, m, &o), 1);
}

TEST_HARNESS_MAIN
