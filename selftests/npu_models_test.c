// SPDX-License-Identifier: MIT
/*
 * Models on the npu device over vnpu, the software NPU: real models agree
 * with the cpu device and so does query_model; export and import of the
 * driver's native binary; stateful models over 100 steps with resets;
 * INFER jobs of npu requests on the ring; the ONNX models against their
 * golden outputs; models with sub-graphs (TensorIterator, silero VAD).
 *
 * vnpu is found through NPR_VNPU (set by `make check`) or next to this
 * program: ../npu/vnpu/ in the build tree, ../vnpu/ when installed
 * (<libdir>/npuring/selftests/ and <libdir>/npuring/vnpu/).  Without
 * the Level Zero loader, or without vnpu and an NPU, the tests skip and say
 * why.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <npuring.h>

#include "backend.h"
#include "passes/compile.h"
#include "graph/graph.h"
#include "ir/ir.h"
#include "onnx/onnx.h"

#include "blob_io.h"
#include "harness.h"
#include "npu_util.h"

/*
 * vnpu runs the graph it is given with the same CPU kernels as the cpu
 * device; the graph it gets is the model as written, which it compiles as
 * the cpu device does, so results agree to float rounding of equal
 * operations.  Allow 1e-4 relative to the output's range.
 */
#define NPU_REL_TOL	1e-4

/*
 * Run @rel on cpu and npu with the same inputs, @steps inferences on one
 * request (stateful models carry state between them); every output of
 * every step must agree.
 */
static void compare_with_cpu(struct npr_test *_metadata, const char *rel,
			     const __s64 *shape, int steps)
{
	struct net c, p;
	char path[4096];
	int step, ret;
	__u32 i;

	model_path(path, sizeof(path), rel);
	if (access(path, R_OK))
		SKIP(return, "model %s not found", path);
	ASSERT_EQ(net_open_shape(_metadata, &c, "cpu", path, shape), 0);
	if (net_open_shape(_metadata, &p, "npu", path, shape))
		TH_LOG("npu: %s", npr_last_error());
	ASSERT_GT(p.req, 0);
	ASSERT_EQ(p.nin, c.nin);
	ASSERT_EQ(p.nout, c.nout);
	for (step = 0; step < steps; step++) {
		net_fill(_metadata, &c, 7 + step);
		net_fill(_metadata, &p, 7 + step);
		ASSERT_EQ(net_infer(&c), 0);
		ret = net_infer(&p);
		if (ret)
			TH_LOG("npu infer: %s", npr_last_error());
		ASSERT_EQ(ret, 0);
		for (i = 0; i < c.nout; i++) {
			size_t j, count, count2;
			float *a = net_output(_metadata, &c, i, &count);
			float *b = net_output(_metadata, &p, i, &count2);
			float lo = INFINITY, hi = -INFINITY, diff = 0;

			ASSERT_EQ(p.type[1][i], c.type[1][i]);
			ASSERT_EQ(count, count2);
			ASSERT_NONNULL(a);
			ASSERT_NONNULL(b);
			for (j = 0; j < count; j++) {
				lo = fminf(lo, a[j]);
				hi = fmaxf(hi, a[j]);
				diff = fmaxf(diff, fabsf(a[j] - b[j]));
			}
			if (step == steps - 1)
				TH_LOG("%s output %u: %zu values, range %g..%g, max |cpu-npu| %g",
				       rel, i, count, lo, hi, diff);
			EXPECT_LE(diff, NPU_REL_TOL * fmaxf(hi - lo, 1e-6f));
			free(a);
			free(b);
		}
	}
	net_close(&c);
	net_close(&p);
}

/* ---- the models agree with the cpu device ------------------------------- */

FIXTURE(npu_model) {
	int unused;
};

FIXTURE_VARIANT(npu_model) {
	const char *path;	/* under models/ir, or ../onnx/... */
	__s64 shape[4];		/* input 0's static shape, if dynamic */
	int steps;		/* inferences in a row (stateful models) */
};

FIXTURE_VARIANT_ADD(npu_model, squeezenet_fp16) {
	.path = "squeezenet1.1/FP16/squeezenet1.1.xml",
};
FIXTURE_VARIANT_ADD(npu_model, landmarks_fp32) {
	.path = "landmarks-regression-retail-0009/FP32/landmarks-regression-retail-0009.xml",
};
FIXTURE_VARIANT_ADD(npu_model, landmarks_fp16_int8) {
	.path = "landmarks-regression-retail-0009/FP16-INT8/landmarks-regression-retail-0009.xml",
};
FIXTURE_VARIANT_ADD(npu_model, eye_fp32) {
	.path = "open-closed-eye-0001/FP32/open-closed-eye-0001.xml",
};
FIXTURE_VARIANT_ADD(npu_model, eye_fp16) {
	.path = "open-closed-eye-0001/FP16/open-closed-eye-0001.xml",
};
/* three outputs of one shape: ports must not be matched by size */
FIXTURE_VARIANT_ADD(npu_model, head_pose_fp16) {
	.path = "head-pose-estimation-adas-0001/FP16-v11/head-pose-estimation-adas-0001.xml",
};
/* three inputs */
FIXTURE_VARIANT_ADD(npu_model, gaze_fp16_int8) {
	.path = "gaze-estimation-adas-0002/FP16-INT8/gaze-estimation-adas-0002.xml",
};
FIXTURE_VARIANT_ADD(npu_model, license_plate_fp16) {
	.path = "license-plate-recognition-barrier-0001/FP16/license-plate-recognition-barrier-0001.xml",
};
FIXTURE_VARIANT_ADD(npu_model, face_detection_fp16_int8) {
	.path = "face-detection-retail-0004/FP16-INT8/face-detection-retail-0004.xml",
};
/* ONNX: the model as written, whatever the frontend, is what the NPU gets */
FIXTURE_VARIANT_ADD(npu_model, squeezenet_onnx) {
	.path = "../onnx/squeezenet1_1.onnx", .shape = { 1, 3, 224, 224 },
};
/* stateful: the variables travel as hidden graph arguments */
FIXTURE_VARIANT_ADD(npu_model, stateful_adder) {
	.path = "../ir-stateful/adder_v11.xml", .steps = 5,
};
FIXTURE_VARIANT_ADD(npu_model, stateful_sliding_window) {
	.path = "../ir-stateful/sliding_window_summator_v10.xml", .steps = 6,
};
/* a variable nothing assigns: two plain inputs and a Select, as on cpu */
FIXTURE_VARIANT_ADD(npu_model, stateful_unassigned) {
	.path = "../ir-stateful/dynamic_variable_v11.xml", .steps = 3,
};
FIXTURE_VARIANT_ADD(npu_model, person_attributes_fp32) {
	.path = "person-attributes-recognition-crossroad-0230/FP32/person-attributes-recognition-crossroad-0230.xml",
};
/* a Loop: its body, port map and back edge go to the driver as IR */
FIXTURE_VARIANT_ADD(npu_model, loop_2d_add) {
	.path = "../ir-small/loop_2d_add.xml",
};

FIXTURE_SETUP(npu_model)
{
	REQUIRE_NPU();
}

FIXTURE_TEARDOWN(npu_model)
{
}

TEST_F(npu_model, agrees_with_cpu)
{
	compare_with_cpu(_metadata, variant->path,
			 variant->shape[0] ? variant->shape : NULL,
			 variant->steps ? variant->steps : 1);
}

/* ---- the compiler receives the model as written ------------------------- */

/* "key:count,..." sorted by key, of @n keys (sorted in place). */
static void counts_text(char **key, int n, char *out, size_t len)
{
	size_t used = 0;
	int i, j, c;

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (strcmp(key[i], key[j]) > 0) {
				char *t = key[i];

				key[i] = key[j];
				key[j] = t;
			}
	out[0] = 0;
	for (i = 0; i < n; i = j) {
		for (j = i, c = 0; j < n && !strcmp(key[j], key[i]); j++)
			c++;
		used += snprintf(out + used, used < len ? len - used : 0,
				 "%s%s:%d", i ? "," : "", key[i], c);
	}
}

/*
 * The model file's own census, counted here with libxml2: the top-level
 * layers by type, the element_type attributes of their <data>, and the
 * bytes of its weights file.
 */
static void source_census(struct npr_test *_metadata, const char *xml,
			  char *types, char *ops, size_t len)
{
	char *tkey[2048], *okey[2048];
	int nt = 0, no = 0, i;
	xmlNode *net, *layers, *l, *d;
	xmlDoc *doc;

	doc = xmlReadFile(xml, NULL, XML_PARSE_NONET | XML_PARSE_HUGE);
	ASSERT_NONNULL(doc);
	net = xmlDocGetRootElement(doc);
	for (layers = net->children; layers; layers = layers->next)
		if (layers->type == XML_ELEMENT_NODE &&
		    !strcmp((const char *)layers->name, "layers"))
			break;
	ASSERT_NONNULL(layers);
	for (l = layers->children; l; l = l->next) {
		if (l->type != XML_ELEMENT_NODE ||
		    strcmp((const char *)l->name, "layer"))
			continue;
		ASSERT_LT(no, 2048);
		okey[no++] = (char *)xmlGetProp(l, BAD_CAST "type");
		for (d = l->children; d; d = d->next) {
			xmlChar *et;

			if (d->type != XML_ELEMENT_NODE ||
			    strcmp((const char *)d->name, "data"))
				continue;
			et = xmlGetProp(d, BAD_CAST "element_type");
			if (et)
				tkey[nt++] = (char *)et;
		}
	}
	xmlFreeDoc(doc);
	counts_text(tkey, nt, types, len);
	counts_text(okey, no, ops, len);
	for (i = 0; i < nt; i++)
		xmlFree(tkey[i]);
	for (i = 0; i < no; i++)
		xmlFree(okey[i]);
}

/* The value of " key=" in @line, up to the next space, into @out. */
static void field_of(const char *line, const char *key, char *out,
		     size_t len)
{
	char pat[32];
	const char *p;
	size_t n;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	out[0] = 0;
	if (!p)
		return;
	p += strlen(pat);
	n = strcspn(p, " \n");
	snprintf(out, len, "%.*s", (int)n, p);
}

FIXTURE(npu_written) {
	int unused;
};

FIXTURE_VARIANT(npu_written) {
	const char *path;	/* under models/ir */
};

FIXTURE_VARIANT_ADD(npu_written, squeezenet_fp16) {
	.path = "squeezenet1.1/FP16/squeezenet1.1.xml",
};
FIXTURE_VARIANT_ADD(npu_written, face_detection_fp16_int8) {
	.path = "face-detection-retail-0004/FP16-INT8/face-detection-retail-0004.xml",
};
FIXTURE_VARIANT_ADD(npu_written, gaze_fp16_int8) {
	.path = "gaze-estimation-adas-0002/FP16-INT8/gaze-estimation-adas-0002.xml",
};
FIXTURE_VARIANT_ADD(npu_written, head_pose_fp16) {
	.path = "head-pose-estimation-adas-0001/FP16-v11/head-pose-estimation-adas-0001.xml",
};
FIXTURE_VARIANT_ADD(npu_written, person_attributes_fp32) {
	.path = "person-attributes-recognition-crossroad-0230/FP32/person-attributes-recognition-crossroad-0230.xml",
};

FIXTURE_SETUP(npu_written)
{
	REQUIRE_NPU();
}

FIXTURE_TEARDOWN(npu_written)
{
}

/*
 * What vnpu's compiler received (its census in VNPU_TRACE) has the
 * model's own element types, layer types and counts, no constant
 * without an edge, and no more weight bytes than the model's weights
 * file plus the writer's alignment of each constant.  The outputs agree
 * with cpu (npu_model.*.agrees_with_cpu).
 */
TEST_F(npu_written, compiler_receives_the_model_as_written)
{
	char trace[] = "/tmp/npu_written_XXXXXX", path[4096], bin[4096];
	char st[4096], so[4096], rt[4096], ro[4096], w[64], orph[16];
	struct npr_model_load ml;
	struct npr_compile co;
	const char *line;
	char *t;
	long consts = 0;
	struct stat sb;
	int fd, tfd;
	char *dot, *c;

	model_path(path, sizeof(path), variant->path);
	if (access(path, R_OK))
		SKIP(return, "model %s not found", path);
	source_census(_metadata, path, st, so, sizeof(st));
	snprintf(bin, sizeof(bin), "%s", path);
	dot = strrchr(bin, '.');
	ASSERT_NONNULL(dot);
	strcpy(dot, ".bin");
	ASSERT_EQ(stat(bin, &sb), 0);
	c = strstr(so, "Const:");
	if (c)
		consts = atol(c + 6);
	tfd = mkstemp(trace);
	ASSERT_GE(tfd, 0);
	close(tfd);
	setenv("VNPU_TRACE", trace, 1);
	fd = npr_open("npu", 0);
	ASSERT_GE(fd, 0);
	npr_prep_model_load(&ml, path, NULL);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	npr_prep_compile(&co, ml.handle);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_COMPILE, &co), 0);
	npr_close(fd);
	unsetenv("VNPU_TRACE");
	t = slurp(trace);
	unlink(trace);
	ASSERT_NONNULL(t);
	line = strstr(t, "\nir layers=");
	ASSERT_NONNULL(line);
	field_of(line, "types", rt, sizeof(rt));
	field_of(line, "ops", ro, sizeof(ro));
	field_of(line, "weights", w, sizeof(w));
	field_of(line, "orphans", orph, sizeof(orph));
	TH_LOG("%s: source types %s; received %s", variant->path, st, rt);
	TH_LOG("received weights %s bytes, the model's file %lld, %ld constants",
	       w, (long long)sb.st_size, consts);
	EXPECT_STREQ(rt, st);
	EXPECT_STREQ(ro, so);
	EXPECT_STREQ(orph, "0");
	EXPECT_GT(atoll(w), 0);
	EXPECT_LE(atoll(w), (long long)sb.st_size +
		  consts * NPR_IR_WRITE_ALIGN);
	free(t);
}

/* query_model goes through the driver's network query */
TEST(npu_query_model_agrees_with_cpu)
{
	const char *dev[2] = { "cpu", "npu" };
	struct npr_query_model q[2];
	char path[4096];
	int k;

	REQUIRE_NPU();
	model_path(path, sizeof(path), "squeezenet1.1/FP16/squeezenet1.1.xml");
	for (k = 0; k < 2; k++) {
		struct npr_model_load ml;
		int fd = npr_open(dev[k], 0), ret;

		ASSERT_GE(fd, 0);
		npr_prep_model_load(&ml, path, NULL);
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
		memset(&q[k], 0, sizeof(q[k]));
		q[k].size = sizeof(q[k]);
		q[k].model = ml.handle;
		ret = npr_ioctl(fd, NPR_IOCTL_QUERY_MODEL, &q[k]);
		if (ret && ret != -EMSGSIZE)
			TH_LOG("%s: %s", dev[k], npr_last_error());
		EXPECT_TRUE(!ret || ret == -EMSGSIZE);
		npr_close(fd);
	}
	TH_LOG("cpu %u/%u, npu %u/%u layers supported", q[0].num_supported,
	       q[0].num_layers, q[1].num_supported, q[1].num_layers);
	EXPECT_EQ(q[1].num_layers, q[0].num_layers);
	EXPECT_EQ(q[1].num_supported, q[0].num_supported);
	EXPECT_GT(q[1].num_supported, 0);
}


/* A whole file, its size in *@len; NULL if it is empty or unreadable. */
static void *slurp_n(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 &&
	    !fseek(f, 0, SEEK_SET)) {
		buf = malloc((size_t)n);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

/* ---- export and import: the driver's native binary ---------------------- */

/* The blob layout (Documentation/blob.rst) and the library's checksum. */
#define NATIVE_TRAILER	48

/* Run @n on the seeded input; output 0's bytes. */
static void *run_bytes(struct npr_test *_metadata, struct net *n)
{
	struct npr_tensor_arg t;
	void *buf = malloc(n->bytes[1][0]);

	net_fill(_metadata, n, 7);
	if (!buf || net_infer(n)) {
		free(buf);
		return NULL;
	}
	npr_prep_tensor(&t, n->req, 0, 1, buf, n->bytes[1][0]);
	if (npr_ioctl(n->fd, NPR_IOCTL_GET_TENSOR, &t)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * EXPORT stores the driver's native binary with our trailer; IMPORT gives
 * it to the driver as NATIVE (no compile: the trace shows format 1), and
 * the imported model computes the same bytes.  Damaged native sections
 * (resealed, so the blob's own checksum passes) are refused: truncated,
 * foreign, another NPU, a corrupt binary.
 */
TEST(npu_export_imports_the_native_binary)
{
	char trace[] = "/tmp/npu_test_traceXXXXXX", path[4096], *t;
	unsigned char *blob, *c;
	void *a = NULL, *b = NULL;
	struct net n, m;
	size_t len, tr;
	__u32 exec;
	uint32_t pci;
	int tfd;

	REQUIRE_NPU();
	tfd = mkstemp(trace);
	ASSERT_GE(tfd, 0);
	close(tfd);
	setenv("VNPU_TRACE", trace, 1);
	model_path(path, sizeof(path), EYE);
	ASSERT_EQ(net_open(_metadata, &n, "npu", path), 0);
	a = run_bytes(_metadata, &n);
	ASSERT_NONNULL(a);
	ASSERT_EQ(blob_export(n.fd, n.exec, &blob, &len), 0);
	ASSERT_GT(len, BLOB_HDR + NATIVE_TRAILER);
	tr = len - NATIVE_TRAILER;
	EXPECT_EQ(memcmp(blob + tr, "NPRNPUN", 8), 0);
	memcpy(&pci, blob + tr + 12, 4);
	EXPECT_TRUE(pci == 0x7D1D || pci == 0x643E);
	/* import on a fresh device: native, same result */
	memset(&m, 0, sizeof(m));
	m.fd = npr_open("npu", 0);
	ASSERT_GE(m.fd, 0);
	EXPECT_EQ(truncate(trace, 0), 0);
	ASSERT_EQ(blob_import(m.fd, blob, len, &exec), 0);
	ASSERT_EQ(net_attach(_metadata, &m, exec), 0);
	t = slurp(trace);
	ASSERT_NONNULL(t);
	TH_LOG("import: %s", t);
	EXPECT_NONNULL(strstr(t, "create format=1 "));
	EXPECT_NULL(strstr(t, "format=2"));
	free(t);
	b = run_bytes(_metadata, &m);
	ASSERT_NONNULL(b);
	EXPECT_EQ(memcmp(a, b, n.bytes[1][0]), 0);
	/* the imported model exports again */
	c = NULL;
	{
		size_t len2;

		EXPECT_EQ(blob_export(m.fd, exec, &c, &len2), 0);
		EXPECT_EQ(len2, len);
		free(c);
	}
	c = malloc(len);
	ASSERT_NONNULL(c);
	/* truncated (the blob's own size check) */
	EXPECT_EQ(blob_import(m.fd, blob, len - 1, &exec), -EBADMSG);
	/* foreign trailer */
	memcpy(c, blob, len);
	c[tr] ^= 0x20;
	blob_reseal(c, len);
	EXPECT_EQ(blob_import(m.fd, c, len, &exec), -ENOEXEC);
	TH_LOG("foreign: %s", npr_last_error());
	/* another trailer version */
	memcpy(c, blob, len);
	c[tr + 8] ^= 2;
	blob_reseal(c, len);
	EXPECT_EQ(blob_import(m.fd, c, len, &exec), -EPROTONOSUPPORT);
	/* compiled for another NPU (0xAD1D is a 3720 too) */
	memcpy(c, blob, len);
	pci = 0xAD1D;
	memcpy(c + tr + 12, &pci, 4);
	blob_reseal(c, len);
	EXPECT_EQ(blob_import(m.fd, c, len, &exec), -ENODEV);
	TH_LOG("other NPU: %s", npr_last_error());
	EXPECT_NONNULL(strstr(npr_last_error(), "0xad1d"));
	/* a corrupt binary, and a wrong size */
	memcpy(c, blob, len);
	c[tr - 100] ^= 1;
	blob_reseal(c, len);
	EXPECT_EQ(blob_import(m.fd, c, len, &exec), -EBADMSG);
	memcpy(c, blob, len);
	c[tr + 24] ^= 1;
	blob_reseal(c, len);
	EXPECT_EQ(blob_import(m.fd, c, len, &exec), -EBADMSG);
	/* the section shorter than a trailer */
	memcpy(c, blob, len);
	{
		uint64_t nlen, psize;
		size_t cut;

		/* the section's u64 size sits before the binary: find it */
		for (cut = BLOB_HDR; cut + 8 <= tr; cut++) {
			memcpy(&nlen, c + cut, 8);
			if (nlen == len - cut - 8)
				break;
		}
		ASSERT_LT(cut + 8, tr);
		nlen = 4;
		memcpy(c + cut, &nlen, 8);
		psize = cut + 8 + 4 - BLOB_HDR;
		memcpy(c + 80, &psize, 8);
		blob_reseal(c, cut + 8 + 4);
		EXPECT_EQ(blob_import(m.fd, c, cut + 8 + 4, &exec), -EBADMSG);
		TH_LOG("short section: %s", npr_last_error());
	}
	free(c);
	free(a);
	free(b);
	free(blob);
	net_close(&n);
	net_close(&m);
	/*
	 * The compile-time NPU properties travel with the native binary: an
	 * imported model reports them and its queue gets the turbo flag.
	 */
	{
		struct npr_model_load ml;
		struct npr_compile co;
		int fd = npr_open("npu", 0), fd2;

		ASSERT_GE(fd, 0);
		ASSERT_EQ(set_int(fd, NPR_PARAM_NPU_TILES, 1), 0);
		ASSERT_EQ(set_int(fd, NPR_PARAM_NPU_TURBO, 1), 0);
		ASSERT_EQ(set_str(fd, NPR_PARAM_NPU_COMPILATION_MODE_PARAMS,
				  "optimization-level=2"), 0);
		npr_prep_model_load(&ml, path, NULL);
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
		npr_prep_compile(&co, ml.handle);
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_COMPILE, &co), 0);
		ASSERT_EQ(blob_export(fd, co.exec, &blob, &len), 0);
		fd2 = npr_open("npu", 0);
		ASSERT_GE(fd2, 0);
		EXPECT_EQ(truncate(trace, 0), 0);
		ASSERT_EQ(blob_import(fd2, blob, len, &exec), 0);
		EXPECT_EQ(get_int_of(fd2, exec, NPR_PARAM_NPU_TILES), 1);
		EXPECT_EQ(get_int_of(fd2, exec, NPR_PARAM_NPU_TURBO), 1);
		{
			char mode[64] = "";

			EXPECT_EQ(get_str(fd2, exec,
					  NPR_PARAM_NPU_COMPILATION_MODE_PARAMS,
					  mode, sizeof(mode)), 0);
			EXPECT_STREQ(mode, "optimization-level=2");
		}
		t = slurp(trace);
		ASSERT_NONNULL(t);
		EXPECT_NONNULL(strstr(t, "queue turbo=1"));
		free(t);
		free(blob);
		npr_close(fd);
		npr_close(fd2);
	}
	unlink(trace);
	unsetenv("VNPU_TRACE");
}

/* A blob exported from a 4000 does not import on a 3720. */
TEST(npu_import_refuses_another_architecture)
{
	char file[] = "/tmp/npu_test_blobXXXXXX", path[4096];
	unsigned char *blob = NULL;
	size_t len = 0;
	__u32 exec;
	int bfd, st, fd;
	pid_t pid;
	FILE *f;

	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s (set NPR_SHARED)",
		     npr_test_shared());
	bfd = mkstemp(file);
	ASSERT_GE(bfd, 0);
	close(bfd);
	model_path(path, sizeof(path), EYE);
	/* the loader reads VNPU_PLATFORM once per process: a child exports */
	fflush(NULL);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		struct net n;

		setenv("VNPU_PLATFORM", "4000", 1);
		if (!npu_available())
			_exit(2);
		if (net_open(_metadata, &n, "npu", path) ||
		    blob_export(n.fd, n.exec, &blob, &len))
			_exit(1);
		f = fopen(file, "w");
		if (!f || fwrite(blob, 1, len, f) != len || fclose(f))
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	REQUIRE_NPU();
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(WEXITSTATUS(st), 0);
	blob = (unsigned char *)slurp_n(file, &len);
	ASSERT_NONNULL(blob);
	fd = npr_open("npu", 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(blob_import(fd, blob, len, &exec), -ENODEV);
	TH_LOG("%s", npr_last_error());
	EXPECT_NONNULL(strstr(npr_last_error(), "4000"));
	npr_close(fd);
	free(blob);
	unlink(file);
}

/* The model cache stores the native binary too: a hit imports NATIVE. */
TEST(npu_cache_hit_imports_the_native_binary)
{
	char trace[] = "/tmp/npu_test_traceXXXXXX";
	char dir[] = "/tmp/npu_test_cacheXXXXXX", path[4096], *t;
	void *a = NULL, *b = NULL;
	struct net n[3];
	int k, tfd;

	REQUIRE_NPU();
	tfd = mkstemp(trace);
	ASSERT_GE(tfd, 0);
	close(tfd);
	ASSERT_NONNULL(mkdtemp(dir));
	setenv("VNPU_TRACE", trace, 1);
	model_path(path, sizeof(path), EYE);
	/* 0 compiles and stores, 1 hits, 2 misses: NPU_TILES is in the key */
	for (k = 0; k < 3; k++) {
		struct npr_model_load ml;
		struct npr_compile co;

		memset(&n[k], 0, sizeof(n[k]));
		n[k].fd = npr_open("npu", 0);
		ASSERT_GE(n[k].fd, 0);
		ASSERT_EQ(set_str(n[k].fd, NPR_PARAM_CACHE_DIR, dir), 0);
		if (k == 2)
			ASSERT_EQ(set_int(n[k].fd, NPR_PARAM_NPU_TILES, 1), 0);
		EXPECT_EQ(truncate(trace, 0), 0);
		npr_prep_model_load(&ml, path, NULL);
		ASSERT_EQ(npr_ioctl(n[k].fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
		npr_prep_compile(&co, ml.handle);
		ASSERT_EQ(npr_ioctl(n[k].fd, NPR_IOCTL_COMPILE, &co), 0);
		ASSERT_EQ(net_attach(_metadata, &n[k], co.exec), 0);
		EXPECT_EQ(get_int_of(n[k].fd, co.exec,
				     NPR_PARAM_LOADED_FROM_CACHE), k == 1);
		t = slurp(trace);
		ASSERT_NONNULL(t);
		EXPECT_NONNULL(strstr(t, k == 1 ? "create format=1 " :
						  "create format=2 "));
		free(t);
	}
	a = run_bytes(_metadata, &n[0]);
	b = run_bytes(_metadata, &n[1]);
	ASSERT_NONNULL(a);
	ASSERT_NONNULL(b);
	EXPECT_EQ(memcmp(a, b, n[0].bytes[1][0]), 0);
	free(a);
	free(b);
	net_close(&n[0]);
	net_close(&n[1]);
	net_close(&n[2]);
	unlink(trace);
	unsetenv("VNPU_TRACE");
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		EXPECT_EQ(system(cmd), 0);
	}
}

/* ---- stateful models: 100 steps with resets ----------------------------- */

static int reset_all(struct net *n)
{
	struct npr_state_arg sa = {
		.size = sizeof(sa), .flags = NPR_STATE_RESET_ALL, .req = n->req,
	};

	return npr_ioctl(n->fd, NPR_IOCTL_STATE_RESET, &sa);
}

/*
 * The OpenVINO stateful snippets over 100 inferences on npu and cpu with
 * the same inputs, every variable reset at steps 25 and 60 on both: the
 * npu binds each variable to one buffer shared by the compiler's
 * vpux_ie_read_value_/vpux_ie_assign_ arguments and resets by zero
 * filling; the snippets' initial values are zeros, so outputs must agree
 * at every step (1e-4 of the range, as the models above).
 */
FIXTURE(npu_stateful) {
	int unused;
};

FIXTURE_VARIANT(npu_stateful) {
	const char *model;
};

FIXTURE_VARIANT_ADD(npu_stateful, adder) {
	.model = "../ir-stateful/adder_v11.xml",
};
FIXTURE_VARIANT_ADD(npu_stateful, sliding_window) {
	.model = "../ir-stateful/sliding_window_summator_v10.xml",
};
FIXTURE_VARIANT_ADD(npu_stateful, summator) {
	.model = "../ir-stateful/summator_v10.xml",
};

FIXTURE_SETUP(npu_stateful)
{
}

FIXTURE_TEARDOWN(npu_stateful)
{
}

TEST_F(npu_stateful, hundred_steps_with_resets_agree_with_cpu)
{
	struct net c, p;
	char path[4096];
	float worst = 0, first = 0, last = 0;
	int step;
	__u32 i;

	REQUIRE_NPU();
	model_path(path, sizeof(path), variant->model);
	if (access(path, R_OK))
		SKIP(return, "model %s not found", path);
	ASSERT_EQ(net_open(_metadata, &c, "cpu", path), 0);
	if (net_open(_metadata, &p, "npu", path))
		TH_LOG("npu: %s", npr_last_error());
	ASSERT_GT(p.req, 0);
	ASSERT_EQ(p.nout, c.nout);
	for (step = 0; step < 100; step++) {
		if (step == 25 || step == 60) {
			ASSERT_EQ(reset_all(&c), 0);
			ASSERT_EQ(reset_all(&p), 0);
		}
		net_fill(_metadata, &c, 11 + step);
		net_fill(_metadata, &p, 11 + step);
		ASSERT_EQ(net_infer(&c), 0);
		ASSERT_EQ(net_infer(&p), 0);
		for (i = 0; i < c.nout; i++) {
			size_t j, count, count2;
			float *a = net_output(_metadata, &c, i, &count);
			float *b = net_output(_metadata, &p, i, &count2);
			float lo = INFINITY, hi = -INFINITY, diff = 0;

			ASSERT_NONNULL(a);
			ASSERT_NONNULL(b);
			ASSERT_EQ(count, count2);
			for (j = 0; j < count; j++) {
				lo = fminf(lo, a[j]);
				hi = fmaxf(hi, a[j]);
				diff = fmaxf(diff, fabsf(a[j] - b[j]));
			}
			EXPECT_LE(diff, NPU_REL_TOL * fmaxf(hi - lo, 1.0f));
			worst = fmaxf(worst, diff);
			if (step == 24 && !i)
				first = a[0];
			if (step == 25 && !i)
				last = a[0];
			free(a);
			free(b);
		}
	}
	/* the state mattered: a reset changed the output (accumulators) */
	TH_LOG("%s: 100 steps, max |cpu-npu| %g; output 0 before/after the first reset %g / %g",
	       variant->model, worst, first, last);
	EXPECT_NE(first, last);
	net_close(&c);
	net_close(&p);
}


/* ---- the ring: INFER jobs of npu requests ------------------------------- */

/*
 * Eight npu requests run as ring jobs (a linked pair among them) on the
 * io_uring path and on the fallback path: each completes once with its
 * user_data, res 0, status OK and ordered timestamps, the ring fd polls
 * readable, and every output equals a synchronous INFER of the same
 * input on the same compiled model.  A device lost on the third
 * execution fails that job (-ENODEV, FAILED) and breaks its link.
 */
static void ring_jobs(struct npr_test *_metadata, bool fallback)
{
	struct npr_ring_setup rs = {
		.size = sizeof(rs),
		.flags = fallback ? NPR_RING_SETUP_FALLBACK : 0,
	};
	struct npr_sqe s[8];
	struct npr_cqe c[8];
	struct npr_submit su = { .size = sizeof(su), .sqes = (uintptr_t)s };
	struct npr_reap re = {
		.size = sizeof(re), .cqes = (uintptr_t)c, .max = 8, .min = 8,
	};
	struct npr_req_create rc;
	struct pollfd pfd;
	void *want[8], *got;
	char path[4096];
	__u32 req[8];
	struct net n;
	bool seen[8] = { false };
	int k, ret;

	REQUIRE_NPU();
	model_path(path, sizeof(path), EYE);
	ASSERT_EQ(net_open(_metadata, &n, "npu", path), 0);
	ret = npr_ioctl(n.fd, NPR_IOCTL_RING_SETUP, &rs);
	if (ret)
		TH_LOG("RING_SETUP: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	TH_LOG("ring path %u, %u workers", rs.path, rs.workers);
	/* the expected outputs, from synchronous INFER on request 0 */
	for (k = 0; k < 8; k++) {
		want[k] = NULL;
		net_fill(_metadata, &n, 100 + k);
		ASSERT_EQ(net_infer(&n), 0);
		want[k] = malloc(n.bytes[1][0]);
		ASSERT_NONNULL(want[k]);
		{
			struct npr_tensor_arg t;

			npr_prep_tensor(&t, n.req, 0, 1, want[k],
					n.bytes[1][0]);
			ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_GET_TENSOR, &t), 0);
		}
	}
	for (k = 0; k < 8; k++) {
		__u32 keep = n.req;

		npr_prep_req_create(&rc, n.exec);
		ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
		req[k] = rc.req;
		n.req = req[k];
		net_fill(_metadata, &n, 100 + k);
		n.req = keep;
		memset(&s[k], 0, sizeof(s[k]));
		s[k].opcode = NPR_OP_INFER;
		s[k].handle = req[k];
		s[k].user_data = 1000 + k;
	}
	s[4].flags = NPR_SQE_LINK;	/* 5 runs after 4 */
	su.count = 8;
	ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_SUBMIT, &su), 0);
	EXPECT_EQ(su.submitted, 8);
	pfd.fd = rs.ring_fd;
	pfd.events = POLLIN;
	EXPECT_EQ(poll(&pfd, 1, 60000), 1);
	ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_REAP, &re), 0);
	ASSERT_EQ(re.count, 8);
	for (k = 0; k < 8; k++) {
		int j = (int)(c[k].user_data - 1000);
		struct npr_tensor_arg t;

		ASSERT_TRUE(j >= 0 && j < 8);
		EXPECT_FALSE(seen[j]);
		seen[j] = true;
		EXPECT_EQ(c[k].res, 0);
		EXPECT_EQ(c[k].status, NPR_JOB_OK);
		EXPECT_LE(c[k].queued_ns, c[k].started_ns);
		EXPECT_LE(c[k].started_ns, c[k].finished_ns);
		got = malloc(n.bytes[1][0]);
		ASSERT_NONNULL(got);
		npr_prep_tensor(&t, req[j], 0, 1, got, n.bytes[1][0]);
		ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_GET_TENSOR, &t), 0);
		EXPECT_EQ(memcmp(got, want[j], n.bytes[1][0]), 0);
		free(got);
	}
	/* the linked job started after its predecessor finished */
	for (k = 0; k < 8; k++)
		if (c[k].user_data == 1005) {
			int m;

			for (m = 0; m < 8; m++)
				if (c[m].user_data == 1004)
					EXPECT_GE(c[k].started_ns,
						  c[m].finished_ns);
		}
	/* a lost device fails the job and breaks its link: the context has
	 * run 16 executions, the 17th loses it */
	setenv("VNPU_FAULT_DEVICE_LOST", "17", 1);
	{
		struct npr_sqe f[2];

		memset(f, 0, sizeof(f));
		f[0].opcode = NPR_OP_INFER;
		f[0].handle = req[0];
		f[0].user_data = 1;
		f[0].flags = NPR_SQE_LINK;
		f[1].opcode = NPR_OP_INFER;
		f[1].handle = req[1];
		f[1].user_data = 2;
		su.sqes = (uintptr_t)f;
		su.count = 2;
		ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_SUBMIT, &su), 0);
		re.min = re.max = 2;
		ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_REAP, &re), 0);
		ASSERT_EQ(re.count, 2);
		for (k = 0; k < 2; k++) {
			if (c[k].user_data == 1) {
				EXPECT_EQ(c[k].res, -ENODEV);
				EXPECT_EQ(c[k].status, NPR_JOB_FAILED);
			} else {
				EXPECT_EQ(c[k].res, -ECANCELED);
				EXPECT_EQ(c[k].status, NPR_JOB_LINK_BROKEN);
			}
		}
	}
	unsetenv("VNPU_FAULT_DEVICE_LOST");
	for (k = 0; k < 8; k++)
		free(want[k]);
	net_close(&n);
}

TEST(npu_ring_completions)
{
	ring_jobs(_metadata, false);
}

TEST(npu_ring_completions_fallback)
{
	ring_jobs(_metadata, true);
}

/* ---- ONNX models against their golden outputs --------------------------- */

/*
 * The models of models/onnx on npu over vnpu against the reference
 * outputs stored with them (PyTorch or onnxruntime, computed elsewhere),
 * within their stated tolerance: max |npu - ref| <= 1e-4 max |ref|, at
 * batch 1 and 4.
 */
#define GOLDEN_TOL_REL	1e-4

FIXTURE(npu_golden) {
	int unused;
};

FIXTURE_VARIANT(npu_golden) {
	const char *name;
	int batch;
	__s64 h, w;
};

FIXTURE_VARIANT_ADD(npu_golden, squeezenet1_1_b1) {
	.name = "squeezenet1_1", .batch = 1, .h = 224, .w = 224,
};
FIXTURE_VARIANT_ADD(npu_golden, squeezenet1_1_b4) {
	.name = "squeezenet1_1", .batch = 4, .h = 224, .w = 224,
};
FIXTURE_VARIANT_ADD(npu_golden, mobilenet_v2_b1) {
	.name = "mobilenet_v2", .batch = 1, .h = 224, .w = 224,
};
FIXTURE_VARIANT_ADD(npu_golden, ppocr_cls_b4) {
	.name = "ppocr_mobile_v2.0_cls", .batch = 4, .h = 48, .w = 192,
};

FIXTURE_SETUP(npu_golden)
{
}

FIXTURE_TEARDOWN(npu_golden)
{
}

TEST_F(npu_golden, matches_reference_outputs)
{
	__s64 shape[4] = { variant->batch, 3, variant->h, variant->w };
	char path[4096], file[4096];
	struct npr_tensor_arg t;
	float *in, *ref, *out;
	size_t in_len = 0, ref_len = 0, count = 0, i;
	float maxref = 0, maxdiff = 0;
	struct net n;

	REQUIRE_NPU();
	snprintf(path, sizeof(path), "%.3000s/models/onnx/%s.onnx",
		 npr_test_shared(), variant->name);
	snprintf(file, sizeof(file), "%.3000s/models/onnx/%s.input_b%d.f32",
		 npr_test_shared(), variant->name, variant->batch);
	in = slurp_n(file, &in_len);
	snprintf(file, sizeof(file), "%.3000s/models/onnx/%s.output_b%d.f32",
		 npr_test_shared(), variant->name, variant->batch);
	ref = slurp_n(file, &ref_len);
	if (access(path, R_OK) || !in || !ref) {
		free(in);
		free(ref);
		SKIP(return, "%s or its reference data not found", path);
	}
	ASSERT_EQ(net_open_shape(_metadata, &n, "npu", path, shape), 0);
	ASSERT_EQ(n.nin, 1);
	ASSERT_EQ(n.nout, 1);
	ASSERT_EQ(n.bytes[0][0], in_len);
	npr_prep_tensor(&t, n.req, 0, 0, in, in_len);
	t.elem_type = NPR_ELEM_F32;
	t.rank = 4;
	memcpy(t.dims, shape, sizeof(shape));
	ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_SET_TENSOR, &t), 0);
	ASSERT_EQ(net_infer(&n), 0);
	out = net_output(_metadata, &n, 0, &count);
	ASSERT_NONNULL(out);
	ASSERT_EQ(count * sizeof(float), ref_len);
	for (i = 0; i < count; i++) {
		maxref = fmaxf(maxref, fabsf(ref[i]));
		maxdiff = fmaxf(maxdiff, fabsf(out[i] - ref[i]));
	}
	TH_LOG("%s batch %d on npu: max |npu - ref| %.3g, relative %.3g (tolerance %.0e)",
	       variant->name, variant->batch, maxdiff,
	       maxdiff / maxref, GOLDEN_TOL_REL);
	EXPECT_GT(maxref, 0);
	EXPECT_LE(maxdiff, GOLDEN_TOL_REL * maxref);
	free(in);
	free(ref);
	free(out);
	net_close(&n);
}

/* ---- models with sub-graphs -------------------------------------------- */

/*
 * The shared TensorIterator + LSTMCell snippets come without weights:
 * write the xml next to a .bin of zeros but for the two Reshape targets
 * (as rnn_body_test does, where the closed form is checked on cpu), and
 * run it on cpu and npu.
 */
struct ti_snippet {
	const char *name;
	size_t bin_size;
	int64_t t1[2];		/* Reshape targets at offset 0 ... */
	size_t t2_off;		/* ... and t2_off */
	int64_t t2[3];
};

static void ti_snippet_agrees(struct npr_test *_metadata,
			      const struct ti_snippet *f)
{
	char dir[] = "/tmp/npr-npu-XXXXXX", src[4096], xml[4200], bin[4200];
	size_t len = 0;
	void *text;
	FILE *fo;
	int fd;

	REQUIRE_NPU();
	snprintf(src, sizeof(src), "%.3000s/models/ir-small/%s",
		 npr_test_shared(), f->name);
	text = slurp_n(src, &len);
	if (!text)
		SKIP(return, "model %s not found", src);
	ASSERT_NONNULL(mkdtemp(dir));
	snprintf(xml, sizeof(xml), "%s/m.xml", dir);
	snprintf(bin, sizeof(bin), "%s/m.bin", dir);
	fo = fopen(xml, "wb");
	ASSERT_NONNULL(fo);
	ASSERT_EQ(fwrite(text, 1, len, fo), len);
	fclose(fo);
	free(text);
	fd = open(bin, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(ftruncate(fd, f->bin_size), 0);
	ASSERT_EQ(pwrite(fd, f->t1, sizeof(f->t1), 0), (ssize_t)sizeof(f->t1));
	ASSERT_EQ(pwrite(fd, f->t2, sizeof(f->t2), f->t2_off),
		  (ssize_t)sizeof(f->t2));
	close(fd);
	compare_with_cpu(_metadata, xml, NULL, 1);
	unlink(xml);
	unlink(bin);
	rmdir(dir);
}

TEST(npu_ti_resnet_agrees_with_cpu)
{
	static const struct ti_snippet f = {
		.name = "ti_resnet.xml", .bin_size = 8396840,
		.t1 = { 1, 512 }, .t2_off = 8396816, .t2 = { 1, 1, 512 },
	};

	ti_snippet_agrees(_metadata, &f);
}

/* a TensorIterator walking its sequence backwards (stride -1) */
TEST(npu_ti_negative_stride_agrees_with_cpu)
{
	static const struct ti_snippet f = {
		.name = "ti_negative_stride.xml", .bin_size = 3149864,
		.t1 = { 1, 512 }, .t2_off = 3149840, .t2 = { 1, 1, 256 },
	};

	ti_snippet_agrees(_metadata, &f);
}

/* Read @count f32 values at element @off of models/onnx/@name. */
static bool onnx_f32_at(const char *name, size_t off, float *out,
			size_t count)
{
	char path[4096];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "%.3000s/models/onnx/%s",
		 npr_test_shared(), name);
	f = fopen(path, "rb");
	if (!f)
		return false;
	ok = !fseek(f, (long)(off * sizeof(float)), SEEK_SET) &&
	     fread(out, sizeof(float), count, f) == count;
	fclose(f);
	return ok;
}

/* Input or output port of @n named @name, or -1. */
static int net_port(struct npr_test *_metadata, struct net *n, int output,
		    const char *name)
{
	__u32 i;

	for (i = 0; i < (output ? n->nout : n->nin); i++) {
		struct npr_port_info pi;
		char buf[128];

		npr_prep_port_info(&pi, n->exec, i, output, buf, sizeof(buf));
		if (npr_ioctl(n->fd, NPR_IOCTL_PORT_INFO, &pi))
			return -1;
		if (!strcmp(buf, name))
			return (int)i;
	}
	return -1;
}

static void net_set(struct npr_test *_metadata, struct net *n,
		    const char *name, const void *data, size_t bytes)
{
	struct npr_tensor_arg t;
	int i = net_port(_metadata, n, 0, name);

	if (i < 0)
		TH_LOG("no input %s", name);
	ASSERT_GE(i, 0);
	ASSERT_EQ(n->bytes[0][i], bytes);
	npr_prep_tensor(&t, n->req, i, 0, (void *)data, bytes);
	t.elem_type = n->type[0][i];
	t.rank = n->rank[0][i];
	memcpy(t.dims, n->dims[0][i], sizeof(t.dims));
	ASSERT_EQ(npr_ioctl(n->fd, NPR_IOCTL_SET_TENSOR, &t), 0);
}

/*
 * Silero VAD v4 (ONNX: an If on sr holding more Ifs, and LSTMs), compiled
 * at batch 1, on chunk 4 of the reference stream (where speech starts)
 * with the LSTM state ONNX Runtime carried into it: on npu, output, hn
 * and cn match the golden values within 1e-4 of each output's absolute
 * maximum, as models_test checks on cpu, and agree with cpu.
 */
TEST(npu_silero_vad_one_chunk_matches_golden)
{
	static const char *const outs[] = { "output", "hn", "cn" };
	static const char *const gold[] = {
		"silero_vad_v4.stream.output.f32",
		"silero_vad_v4.stream.hn.f32",
		"silero_vad_v4.stream.cn.f32",
	};
	const size_t chunk = 4, state = 2 * 64;
	float in[512], h[128], c[128], want[128];
	struct npr_shape_arg sa[3] = {
		{ .index = 0, .rank = 2, .dims = { 1, 512 } },
		{ .index = 2, .rank = 3, .dims = { 2, 1, 64 } },
		{ .index = 3, .rank = 3, .dims = { 2, 1, 64 } },
	};
	struct npr_model_load ml;
	struct npr_compile co;
	char path[4096];
	int64_t sr = 16000;
	struct net n[2];
	int d, o, ret;

	REQUIRE_NPU();
	snprintf(path, sizeof(path), "%.3000s/models/onnx/silero_vad_v4.onnx",
		 npr_test_shared());
	if (access(path, R_OK) ||
	    !onnx_f32_at("silero_vad_v4.stream.input.f32", chunk * 512, in,
			 512) ||
	    !onnx_f32_at("silero_vad_v4.stream.h_in.f32", chunk * state, h,
			 state) ||
	    !onnx_f32_at("silero_vad_v4.stream.c_in.f32", chunk * state, c,
			 state))
		SKIP(return, "%s or its reference stream not found", path);
	for (d = 0; d < 2; d++) {
		memset(&n[d], 0, sizeof(n[d]));
		n[d].fd = npr_open(d ? "npu" : "cpu", 0);
		ASSERT_GE(n[d].fd, 0);
		npr_prep_model_load(&ml, path, NULL);
		ASSERT_EQ(npr_ioctl(n[d].fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
		n[d].model = ml.handle;
		npr_prep_compile(&co, n[d].model);
		co.shapes = (uintptr_t)sa;
		co.num_shapes = 3;
		ret = npr_ioctl(n[d].fd, NPR_IOCTL_COMPILE, &co);
		if (ret)
			TH_LOG("%s: COMPILE: %s", d ? "npu" : "cpu",
			       npr_last_error());
		ASSERT_EQ(ret, 0);
		ASSERT_EQ(net_attach(_metadata, &n[d], co.exec), 0);
		net_set(_metadata, &n[d], "input", in, sizeof(in));
		net_set(_metadata, &n[d], "sr", &sr, sizeof(sr));
		net_set(_metadata, &n[d], "h", h, sizeof(h));
		net_set(_metadata, &n[d], "c", c, sizeof(c));
		ret = net_infer(&n[d]);
		if (ret)
			TH_LOG("%s: INFER: %s", d ? "npu" : "cpu",
			       npr_last_error());
		ASSERT_EQ(ret, 0);
	}
	for (o = 0; o < 3; o++) {
		size_t cnt = o ? state : 1, k, count[2];
		double amax = 0, md = 0, mc = 0;
		float *got[2];

		for (d = 0; d < 2; d++) {
			int i = net_port(_metadata, &n[d], 1, outs[o]);

			ASSERT_GE(i, 0);
			got[d] = net_output(_metadata, &n[d], i, &count[d]);
			ASSERT_NONNULL(got[d]);
			ASSERT_EQ(count[d], cnt);
		}
		ASSERT_TRUE(onnx_f32_at(gold[o], chunk * cnt, want, cnt));
		for (k = 0; k < cnt; k++) {
			amax = fmax(amax, fabs(want[k]));
			md = fmax(md, fabs((double)got[1][k] - want[k]));
			mc = fmax(mc, fabs((double)got[1][k] - got[0][k]));
		}
		TH_LOG("%s on npu: max |npu - ref| %.3g, |npu - cpu| %.3g, 1e-4 of absmax %.3g",
		       outs[o], md, mc, 1e-4 * amax);
		EXPECT_GT(amax, 0);
		EXPECT_LE(md, 1e-4 * amax);
		EXPECT_LE(mc, 1e-4 * amax);
		free(got[0]);
		free(got[1]);
	}
	net_close(&n[0]);
	net_close(&n[1]);
}

/*
 * The whole reference stream (20 chunks) through Silero VAD made stateful
 * on npu: the ONNX model compiled at batch 1 and written to IR (Ifs and
 * LSTMs with their bodies), h -> hn and c -> cn made variables, so the
 * driver gets ReadValue/Assign pairs next to If bodies.  Each chunk's
 * output and the final state match the reference within 1e-4 of their
 * absolute maximum, as models_test checks on cpu.
 */
TEST(npu_silero_vad_stateful_stream_matches_golden)
{
	static const char *const st_name[2] = { "h", "c" };
	static const char *const st_gold[2] = {
		"silero_vad_v4.stream.hn.f32", "silero_vad_v4.stream.cn.f32",
	};
	struct npr_shape sh[4] = {
		{ .rank = 2, .d = { 1, 512 } }, { .rank = -1 },
		{ .rank = 3, .d = { 2, 1, 64 } },
		{ .rank = 3, .d = { 2, 1, 64 } },
	};
	struct npr_state_pair pairs[2] = {
		{ (uintptr_t)"h", (uintptr_t)"hn" },
		{ (uintptr_t)"c", (uintptr_t)"cn" },
	};
	struct npr_make_stateful ms = {
		.size = sizeof(ms), .count = 2, .pairs = (uintptr_t)pairs,
	};
	const size_t chunks = 20, state = 2 * 64;
	float in[512], gold[20], want[128], got_st[128];
	struct npr_graph *g = NULL, *cg = NULL;
	struct npr_model_load ml;
	struct npr_compile co;
	char path[4096], *xml = NULL;
	size_t xml_len, bin_len, k, count;
	double amax = 0, md = 0;
	int64_t sr = 16000;
	void *bin = NULL;
	struct net n;
	int i, v, ret;

	REQUIRE_NPU();
	snprintf(path, sizeof(path), "%.3000s/models/onnx/silero_vad_v4.onnx",
		 npr_test_shared());
	if (access(path, R_OK) ||
	    !onnx_f32_at("silero_vad_v4.stream.output.f32", 0, gold, chunks))
		SKIP(return, "%s or its reference stream not found", path);
	ret = npr_onnx_load_file(path, &g);
	if (!ret)
		ret = g->ninputs == 4 ?
		      npr_compile_graph(g, sh, npr_backend_evaluator(), &cg) :
		      -EINVAL;
	if (!ret)
		ret = npr_ir_write_mem(cg, &xml, &xml_len, &bin, &bin_len);
	if (ret)
		TH_LOG("batch-1 IR: %s", npr_last_error());
	npr_graph_free(cg);
	npr_graph_free(g);
	ASSERT_EQ(ret, 0);

	memset(&n, 0, sizeof(n));
	n.fd = npr_open("npu", 0);
	ASSERT_GE(n.fd, 0);
	npr_prep_model_load_mem(&ml, xml, xml_len, bin, bin_len);
	ret = npr_ioctl(n.fd, NPR_IOCTL_MODEL_LOAD, &ml);
	free(xml);
	free(bin);
	ASSERT_EQ(ret, 0);
	ms.model = ml.handle;
	ret = npr_ioctl(n.fd, NPR_IOCTL_MAKE_STATEFUL, &ms);
	if (ret)
		TH_LOG("MAKE_STATEFUL: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	npr_prep_compile(&co, ml.handle);
	ret = npr_ioctl(n.fd, NPR_IOCTL_COMPILE, &co);
	if (ret)
		TH_LOG("COMPILE: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	ASSERT_EQ(net_attach(_metadata, &n, co.exec), 0);
	/* input and sr in, output out: the state is gone from the ports */
	ASSERT_EQ(n.nin, 2);
	ASSERT_EQ(n.nout, 1);
	for (k = 0; k < chunks; k++)
		amax = fmax(amax, fabs(gold[k]));
	for (k = 0; k < chunks; k++) {
		float *got;

		ASSERT_TRUE(onnx_f32_at("silero_vad_v4.stream.input.f32",
					k * 512, in, 512));
		net_set(_metadata, &n, "input", in, sizeof(in));
		net_set(_metadata, &n, "sr", &sr, sizeof(sr));
		ret = net_infer(&n);
		if (ret)
			TH_LOG("chunk %zu: INFER: %s", k, npr_last_error());
		ASSERT_EQ(ret, 0);
		got = net_output(_metadata, &n, 0, &count);
		ASSERT_NONNULL(got);
		ASSERT_EQ(count, 1);
		md = fmax(md, fabs((double)got[0] - gold[k]));
		free(got);
	}
	TH_LOG("output over %zu chunks on npu: max |diff| %.3g, 1e-4 of absmax %.3g",
	       chunks, md, 1e-4 * amax);
	EXPECT_GT(amax, 0);
	EXPECT_LE(md, 1e-4 * amax);
	/* the state after the last chunk is the reference's hn, cn */
	for (i = 0; i < 2; i++) {
		struct npr_state_arg sa = { .size = sizeof(sa), .req = n.req };
		char name[32];

		for (v = 0; v < 2; v++) {
			sa.index = v;
			sa.name = (uintptr_t)name;
			sa.name_len = sizeof(name);
			ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_STATE_INFO, &sa), 0);
			if (!strcmp(name, st_name[i]))
				break;
		}
		ASSERT_LT(v, 2);
		sa.data = (uintptr_t)got_st;
		sa.bytes = sizeof(got_st);
		ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_STATE_GET, &sa), 0);
		ASSERT_EQ(sa.bytes, sizeof(got_st));
		ASSERT_TRUE(onnx_f32_at(st_gold[i], (chunks - 1) * state, want,
					state));
		amax = md = 0;
		for (k = 0; k < state; k++) {
			amax = fmax(amax, fabs(want[k]));
			md = fmax(md, fabs((double)got_st[k] - want[k]));
		}
		TH_LOG("%s after %zu chunks on npu: max |diff| %.3g, 1e-4 of absmax %.3g",
		       st_name[i], chunks, md, 1e-4 * amax);
		EXPECT_LE(md, 1e-4 * amax);
	}
	net_close(&n);
}

TEST_HARNESS_MAIN
