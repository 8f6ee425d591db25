// SPDX-License-Identifier: MIT
/*
 * The IR writer (lib/ir/write.c): every shared model, IR and ONNX, written
 * to IR v11 and read back, has the same structure (node count, op types,
 * output types and shapes, inputs and outputs) and gives bit-identical
 * outputs for the same deterministic input; a compiled graph written and
 * read back gives them too.  Errors: an unwritable directory, a value of
 * an element type IR cannot name, a name that is not UTF-8; none leaves a
 * file behind.
 *
 * Models come from $NPR_SHARED (models/ir, models/onnx); without them the
 * model tests skip.  ONNX models with a symbolic batch run at batch 1.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <npuring.h>

#include "backend.h"
#include "passes/compile.h"
#include "graph/graph.h"
#include "ir/ir.h"
#include "onnx/onnx.h"
#include "harness.h"
#include "files.h"

#define MAX_PORTS	8

/* One model loaded through the public API, compiled, with one request. */
struct run {
	__u32 model, exec, req;
	__u32 nin, nout;
	void *out[MAX_PORTS];
	size_t out_bytes[MAX_PORTS];
};

static bool model_path(char *buf, size_t len, const char *rel)
{
	int n = snprintf(buf, len, "%s/models/%s", npr_test_shared(), rel);

	return n > 0 && (size_t)n < len && !access(buf, R_OK);
}

static bool is_onnx(const char *path)
{
	size_t n = strlen(path);

	return n > 5 && !strcmp(path + n - 5, ".onnx");
}

/* Deterministic input bytes: a ramp for floats, zeros for integers. */
static void fill_input(void *buf, __u32 type, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++) {
		float f = (float)((i * 37 + 11) % 256);

		switch (type) {
		case NPR_ELEM_F32:
			((float *)buf)[i] = f;
			break;
		case NPR_ELEM_F16:
			((uint16_t *)buf)[i] = npr_f32_to_f16(f);
			break;
		default:
			memset((char *)buf + i * npr_elem_size(type), 0,
			       npr_elem_size(type));
			break;
		}
	}
}

/*
 * Compile model @r->model (input 0 of shape @dims if given, other dynamic
 * input dims set to 1), run it once on the deterministic input and keep
 * every output's bytes.
 */
static void run_model(struct npr_test *_metadata, int fd, struct run *r,
		      const __s64 *dims)
{
	struct npr_shape_arg sa[MAX_PORTS];
	struct npr_model_info mi = { .size = sizeof(mi) };
	struct npr_req_create rc;
	struct npr_compile co;
	struct npr_infer inf;
	__u32 i, k, nsa;
	int ret;

	mi.handle = r->model;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_MODEL_INFO, &mi), 0);
	ASSERT_LE(mi.num_inputs, MAX_PORTS);
	ASSERT_LE(mi.num_outputs, MAX_PORTS);
	r->nin = mi.num_inputs;
	r->nout = mi.num_outputs;
	memset(sa, 0, sizeof(sa));
	for (i = 0, nsa = 0; i < r->nin; i++) {
		struct npr_port_info pi;
		char name[128];

		npr_prep_port_info(&pi, r->model, i, 0, name, sizeof(name));
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_PORT_INFO, &pi), 0);
		if (!pi.rank)
			continue;	/* a scalar is static */
		sa[nsa].index = i;
		sa[nsa].rank = pi.rank;
		for (k = 0; k < pi.rank; k++)
			sa[nsa].dims[k] = !i && dims && dims[0] ? dims[k] :
					  pi.dims[k] < 1 ? 1 : pi.dims[k];
		nsa++;
	}
	npr_prep_compile(&co, r->model);
	co.shapes = (uintptr_t)sa;
	co.num_shapes = nsa;
	ret = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	if (ret)
		TH_LOG("COMPILE: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	r->exec = co.exec;
	npr_prep_req_create(&rc, r->exec);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	r->req = rc.req;
	for (i = 0; i < r->nin; i++) {
		struct npr_port_info pi;
		struct npr_tensor_arg ta;
		size_t count = 1;
		char name[128];
		void *buf;

		npr_prep_port_info(&pi, r->exec, i, 0, name, sizeof(name));
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_PORT_INFO, &pi), 0);
		for (k = 0; k < pi.rank; k++)
			count *= (size_t)pi.dims[k];
		ASSERT_NE(npr_elem_size(pi.elem_type), 0);
		buf = malloc(count * npr_elem_size(pi.elem_type) + 1);
		ASSERT_NONNULL(buf);
		fill_input(buf, pi.elem_type, count);
		npr_prep_tensor(&ta, r->req, i, 0, buf,
				count * npr_elem_size(pi.elem_type));
		ta.elem_type = pi.elem_type;
		ta.rank = pi.rank;
		for (k = 0; k < pi.rank; k++)
			ta.dims[k] = pi.dims[k];
		ret = npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &ta);
		free(buf);
		if (ret)
			TH_LOG("SET_TENSOR %u: %s", i, npr_last_error());
		ASSERT_EQ(ret, 0);
	}
	npr_prep_infer(&inf, r->req);
	ret = npr_ioctl(fd, NPR_IOCTL_INFER, &inf);
	if (ret)
		TH_LOG("INFER: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	for (i = 0; i < r->nout; i++) {
		struct npr_port_info pi;
		struct npr_tensor_arg ta;
		size_t count = 1;
		char name[128];

		npr_prep_port_info(&pi, r->exec, i, 1, name, sizeof(name));
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_PORT_INFO, &pi), 0);
		for (k = 0; k < pi.rank; k++)
			count *= (size_t)pi.dims[k];
		r->out_bytes[i] = count * npr_elem_size(pi.elem_type);
		r->out[i] = malloc(r->out_bytes[i] + 1);
		ASSERT_NONNULL(r->out[i]);
		npr_prep_tensor(&ta, r->req, i, 1, r->out[i],
				r->out_bytes[i]);
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
		ASSERT_EQ(ta.bytes, r->out_bytes[i]);
	}
}

static void run_free(struct run *r)
{
	__u32 i;

	for (i = 0; i < r->nout; i++)
		free(r->out[i]);
}

static int load_mem(int fd, const void *xml, size_t xml_len,
		    const void *bin, size_t bin_len, __u32 *handle)
{
	struct npr_model_load a;
	int err;

	npr_prep_model_load_mem(&a, xml, xml_len, bin, bin_len);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &a);
	if (!err)
		*handle = a.handle;
	return err;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Append the signature lines of @g (and its bodies, prefixed) to @s. */
static int sig_add(const struct npr_graph *g, bool shapes, const char *pre,
		   char ***s, int *n, int *cap)
{
	int i, j, b;

	for (i = 0; i < g->nnodes; i++) {
		const struct npr_node *nd = &g->nodes[i];
		char buf[2048], sh[256], sub[256];
		size_t off;

		if (nd->dead)
			continue;
		off = snprintf(buf, sizeof(buf), "%s%s in%d", pre, nd->type,
			       nd->nin);
		for (j = 0; j < nd->nout && off < sizeof(buf); j++) {
			const struct npr_value *v = &g->vals[nd->out[j]];

			off += snprintf(buf + off, sizeof(buf) - off, " %s%s",
					npr_elem_name(v->type),
					shapes ? npr_shape_str(&v->shape, sh,
							       sizeof(sh)) : "");
		}
		if (*n == *cap) {
			char **p = realloc(*s, sizeof(char *) * (*cap * 2 + 16));

			if (!p)
				return -ENOMEM;
			*s = p;
			*cap = *cap * 2 + 16;
		}
		(*s)[(*n)++] = strdup(buf);
		for (b = 0; b < nd->nbodies; b++) {
			const struct npr_body *bd = &nd->bodies[b];

			snprintf(sub, sizeof(sub), "%s%s/%d: %d rules %d back: ",
				 pre, nd->name, b, bd->nports, bd->nback);
			if (sig_add(bd->g, false, sub, s, n, cap))
				return -ENOMEM;
		}
	}
	return 0;
}

/*
 * "Convolution-1 f32[1,64,56,56] ..." per live node, bodies included
 * (their nodes without shapes, prefixed with the owner and its rules),
 * sorted.
 */
static char **signature(const struct npr_graph *g, bool shapes, int *count)
{
	char **s = NULL;
	int n = 0, cap = 0;

	if (sig_add(g, shapes, "", &s, &n, &cap)) {
		while (n-- > 0)
			free(s[n]);
		free(s);
		return NULL;
	}
	qsort(s, n, sizeof(*s), cmp_str);
	*count = n;
	return s;
}

static void free_sig(char **s, int n)
{
	while (n-- > 0)
		free(s[n]);
	free(s);
}

/*
 * Same live nodes (type, inputs, output types and shapes), same I/O.  A
 * graph that does not know all its shapes (ONNX) is compared without
 * them: the writer inferred them.
 */
static void same_structure(struct npr_test *_metadata,
			   const struct npr_graph *a, const struct npr_graph *b)
{
	bool shapes = true;
	char **sa, **sb;
	int na = 0, nb = 0, i;

	for (i = 0; i < a->nvals; i++)
		if (a->vals[i].shape.rank < 0)
			shapes = false;
	ASSERT_EQ(a->ninputs, b->ninputs);
	ASSERT_EQ(a->noutputs, b->noutputs);
	for (i = 0; i < a->ninputs; i++) {
		const struct npr_value *va = &a->vals[a->nodes[a->inputs[i]].out[0]];
		const struct npr_value *vb = &b->vals[b->nodes[b->inputs[i]].out[0]];

		EXPECT_EQ(va->type, vb->type);
		EXPECT_TRUE(npr_shape_eq(&va->shape, &vb->shape));
	}
	for (i = 0; i < a->noutputs; i++) {
		const struct npr_value *va = &a->vals[a->nodes[a->outputs[i]].in[0]];
		const struct npr_value *vb = &b->vals[b->nodes[b->outputs[i]].in[0]];

		EXPECT_EQ(va->type, vb->type);
		if (va->shape.rank >= 0)
			EXPECT_TRUE(npr_shape_eq(&va->shape, &vb->shape));
	}
	sa = signature(a, shapes, &na);
	sb = signature(b, shapes, &nb);
	ASSERT_NONNULL(sa);
	ASSERT_NONNULL(sb);
	EXPECT_EQ(na, nb);
	for (i = 0; i < na && i < nb; i++)
		if (strcmp(sa[i], sb[i])) {
			TH_LOG("node differs: \"%s\" vs \"%s\"", sa[i], sb[i]);
			EXPECT_TRUE(false);
			break;
		}
	free_sig(sa, na);
	free_sig(sb, nb);
}

/* ---- every shared model ------------------------------------------------ */

FIXTURE(rt) {
	int fd;
};

FIXTURE_VARIANT(rt) {
	const char *rel;	/* under models/ */
	__s64 dims[4];		/* input 0's shape if not the model's */
	/* an IR snippet without its .bin: zero weights of bin_size bytes
	 * but for two i64 Reshape targets at offset 0 and t2_off */
	size_t bin_size, t2_off;
	int64_t t1[2], t2[3];
};

#define IR(v, net, prec)						\
	FIXTURE_VARIANT_ADD(rt, v) { .rel = "ir/" net "/" prec "/" net ".xml" }

IR(fd_adas_fp16_int8, "face-detection-adas-0001", "FP16-INT8");
IR(fd_adas_fp16_v11, "face-detection-adas-0001", "FP16-v11");
IR(fd_retail_fp16_int8, "face-detection-retail-0004", "FP16-INT8");
IR(fd_retail_fp16, "face-detection-retail-0004", "FP16");
IR(fd_retail_fp32_v10, "face-detection-retail-0004", "FP32-v10");
IR(fd_retail_fp32_v11, "face-detection-retail-0004", "FP32-v11");
IR(gaze_fp16_int8, "gaze-estimation-adas-0002", "FP16-INT8");
IR(gaze_fp16_v11, "gaze-estimation-adas-0002", "FP16-v11");
IR(head_pose_fp16_int8, "head-pose-estimation-adas-0001", "FP16-INT8");
IR(head_pose_fp16_v11, "head-pose-estimation-adas-0001", "FP16-v11");
IR(landmarks_fp16_int8, "landmarks-regression-retail-0009", "FP16-INT8");
IR(landmarks_fp16_v11, "landmarks-regression-retail-0009", "FP16-v11");
IR(landmarks_fp32_alt, "landmarks-regression-retail-0009", "FP32-alt");
IR(landmarks_fp32, "landmarks-regression-retail-0009", "FP32");
IR(lpr_fp16_int8, "license-plate-recognition-barrier-0001", "FP16-INT8");
IR(lpr_fp16, "license-plate-recognition-barrier-0001", "FP16");
IR(eye_fp16, "open-closed-eye-0001", "FP16");
IR(eye_fp32, "open-closed-eye-0001", "FP32");
IR(pedestrian_fp16_int8, "pedestrian-detection-adas-0002", "FP16-INT8");
IR(pedestrian_fp16_v11, "pedestrian-detection-adas-0002", "FP16-v11");
IR(attributes_fp16_int8, "person-attributes-recognition-crossroad-0230", "FP16-INT8");
IR(attributes_fp16, "person-attributes-recognition-crossroad-0230", "FP16");
IR(attributes_fp32, "person-attributes-recognition-crossroad-0230", "FP32");
IR(person_fp32, "person-detection-retail-0013", "FP32");
IR(reid_fp16_int8, "person-reidentification-retail-0287", "FP16-INT8");
IR(reid_fp16, "person-reidentification-retail-0287", "FP16");
IR(reid_fp32, "person-reidentification-retail-0287", "FP32");
IR(sr1032_fp16_int8, "single-image-super-resolution-1032", "FP16-INT8");
IR(sr1032_fp16, "single-image-super-resolution-1032", "FP16");
IR(sr1032_fp32, "single-image-super-resolution-1032", "FP32");
IR(sr1033_fp16_int8, "single-image-super-resolution-1033", "FP16-INT8");
IR(sr1033_fp16, "single-image-super-resolution-1033", "FP16");
IR(sr1033_fp32, "single-image-super-resolution-1033", "FP32");
IR(squeezenet_fp16, "squeezenet1.1", "FP16");
IR(text_sr_fp16_int8, "text-image-super-resolution-0001", "FP16-INT8");
IR(text_sr_fp16, "text-image-super-resolution-0001", "FP16");
IR(text_sr_fp32, "text-image-super-resolution-0001", "FP32");
IR(vehicle_fp16_int8, "vehicle-attributes-recognition-barrier-0039", "FP16-INT8");
IR(vehicle_fp16, "vehicle-attributes-recognition-barrier-0039", "FP16");
IR(vehicle_fp32, "vehicle-attributes-recognition-barrier-0039", "FP32");
FIXTURE_VARIANT_ADD(rt, onnx_resnet18) { .rel = "onnx/resnet18.onnx" };
FIXTURE_VARIANT_ADD(rt, onnx_mobilenet_v2) { .rel = "onnx/mobilenet_v2.onnx" };
FIXTURE_VARIANT_ADD(rt, onnx_squeezenet1_1) { .rel = "onnx/squeezenet1_1.onnx" };
FIXTURE_VARIANT_ADD(rt, onnx_ppocr_cls) {
	.rel = "onnx/ppocr_mobile_v2.0_cls.onnx", .dims = { 1, 3, 48, 192 },
};
/* If (nested) and LSTM bodies */
FIXTURE_VARIANT_ADD(rt, onnx_silero_vad_v4) {
	.rel = "onnx/silero_vad_v4.onnx", .dims = { 1, 512 },
};
/* Loop and TensorIterator bodies, port maps and back edges */
FIXTURE_VARIANT_ADD(rt, ir_small_loop_2d_add) {
	.rel = "ir-small/loop_2d_add.xml",
};
FIXTURE_VARIANT_ADD(rt, ir_small_ti_negative_stride) {
	.rel = "ir-small/ti_negative_stride.xml", .bin_size = 3149864,
	.t1 = { 1, 512 }, .t2_off = 3149840, .t2 = { 1, 1, 256 },
};
FIXTURE_VARIANT_ADD(rt, ir_small_ti_resnet) {
	.rel = "ir-small/ti_resnet.xml", .bin_size = 8396840,
	.t1 = { 1, 512 }, .t2_off = 8396816, .t2 = { 1, 1, 512 },
};

FIXTURE_SETUP(rt)
{
	self->fd = npr_open("cpu", 0);
	ASSERT_GE(self->fd, 0);
}

FIXTURE_TEARDOWN(rt)
{
	if (self->fd >= 0)
		EXPECT_EQ(npr_close(self->fd), 0);
}

static struct npr_graph *load_graph(struct npr_test *_metadata,
				    const char *path)
{
	struct npr_graph *g = NULL;
	int err;

	err = is_onnx(path) ? npr_onnx_load_file(path, &g) :
	      npr_ir_load_file(path, NULL, &g);
	if (err)
		TH_LOG("%s: %s", path, npr_last_error());
	ASSERT_EQ(err, 0);
	/* the IR writer infers what a frontend left unshaped with the
	 * graph's evaluator, as the core's compiled graphs carry it */
	g->fold = npr_backend_evaluator();
	return g;
}

/* The weights a snippet variant stands for (see FIXTURE_VARIANT(rt)). */
static void *snippet_bin(const FIXTURE_VARIANT(rt) *v)
{
	char *bin = calloc(1, v->bin_size);

	if (bin) {
		memcpy(bin, v->t1, sizeof(v->t1));
		memcpy(bin + v->t2_off, v->t2, sizeof(v->t2));
	}
	return bin;
}

static void same_outputs(struct npr_test *_metadata, const struct run *a,
			 const struct run *b)
{
	__u32 i;

	ASSERT_EQ(a->nout, b->nout);
	for (i = 0; i < a->nout; i++) {
		ASSERT_EQ(a->out_bytes[i], b->out_bytes[i]);
		if (memcmp(a->out[i], b->out[i], a->out_bytes[i])) {
			TH_LOG("output %u differs", i);
			EXPECT_TRUE(false);
		}
	}
}

/* Loaded graph -> IR -> same structure, bit-identical outputs. */
TEST_F_TIMEOUT(rt, written_model_gives_identical_outputs, 300)
{
	struct npr_graph *g, *g2 = NULL;
	struct run orig = { 0 }, back = { 0 };
	struct npr_model_load ml;
	struct npr_weights *blob = NULL;
	char path[4096], *xml = NULL, *snip_xml = NULL;
	size_t xml_len, bin_len, snip_len = 0;
	void *bin = NULL, *snip_bin = NULL;
	int err;

	if (!model_path(path, sizeof(path), variant->rel))
		SKIP(return, "model %s not found", path);
	if (variant->bin_size) {
		snip_xml = npr_test_slurp(path, &snip_len);
		snip_bin = snippet_bin(variant);
		ASSERT_NONNULL(snip_xml);
		ASSERT_NONNULL(snip_bin);
		ASSERT_EQ(npr_ir_weights_from_memory(snip_bin, variant->bin_size,
						  &blob), 0);
		err = npr_ir_parse(snip_xml, snip_len, blob, &g);
		npr_weights_put(blob);
		blob = NULL;
		if (err)
			TH_LOG("%s: %s", path, npr_last_error());
		ASSERT_EQ(err, 0);
		g->fold = npr_backend_evaluator();
	} else {
		g = load_graph(_metadata, path);
	}
	err = npr_ir_write_mem(g, &xml, &xml_len, &bin, &bin_len);
	if (err)
		TH_LOG("write: %s", npr_last_error());
	ASSERT_EQ(err, 0);
	TH_LOG("%s: %d nodes, xml %zu bytes, bin %zu bytes", variant->rel,
	       g->nnodes, xml_len, bin_len);

	ASSERT_EQ(npr_ir_weights_from_memory(bin, bin_len, &blob), 0);
	err = npr_ir_parse(xml, xml_len, blob, &g2);
	npr_weights_put(blob);
	if (err)
		TH_LOG("read back: %s", npr_last_error());
	ASSERT_EQ(err, 0);
	EXPECT_EQ(g2->ir_version, 11);
	EXPECT_EQ(g2->nnodes, g->nnodes);
	same_structure(_metadata, g, g2);
	npr_graph_free(g2);
	npr_graph_free(g);

	if (variant->bin_size) {
		ASSERT_EQ(load_mem(self->fd, snip_xml, snip_len, snip_bin,
				   variant->bin_size, &orig.model), 0);
		free(snip_xml);
		free(snip_bin);
	} else {
		npr_prep_model_load(&ml, path, NULL);
		ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
		orig.model = ml.handle;
	}
	run_model(_metadata, self->fd, &orig, variant->dims);
	err = load_mem(self->fd, xml, xml_len, bin, bin_len, &back.model);
	if (err)
		TH_LOG("MODEL_LOAD written: %s", npr_last_error());
	ASSERT_EQ(err, 0);
	free(xml);
	free(bin);
	run_model(_metadata, self->fd, &back, variant->dims);
	same_outputs(_metadata, &orig, &back);
	run_free(&orig);
	run_free(&back);
}

/* ---- small graphs and error paths -------------------------------------- */

#define SMALL_REL	"ir/open-closed-eye-0001/FP32/open-closed-eye-0001.xml"

static char *tmp_dir(struct npr_test *_metadata)
{
	char *d = strdup("/tmp/npr-rt-XXXXXX");

	ASSERT_NONNULL(d);
	ASSERT_NONNULL(mkdtemp(d));
	return d;
}

static int count_entries(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void rm_dir(const char *dir)
{
	struct dirent *e;
	char p[4096];
	DIR *d = opendir(dir);

	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* A compiled graph (folded, f16 lowered) written to files runs the same. */
TEST(compiled_graph_written_to_files_runs_the_same)
{
	struct npr_graph *g, *c = NULL;
	struct npr_model_load ml;
	struct run orig = { 0 }, back = { 0 };
	char path[4096], xmlp[4200];
	char *dir;
	int fd, err;

	if (!model_path(path, sizeof(path),
			"ir/face-detection-retail-0004/FP32-v11/face-detection-retail-0004.xml"))
		SKIP(return, "model %s not found", path);
	g = load_graph(_metadata, path);
	ASSERT_EQ(npr_compile_graph(g, NULL, npr_backend_evaluator(), &c), 0);
	dir = tmp_dir(_metadata);
	snprintf(xmlp, sizeof(xmlp), "%s/compiled.xml", dir);
	err = npr_ir_write(c, xmlp, NULL);
	if (err)
		TH_LOG("write: %s", npr_last_error());
	ASSERT_EQ(err, 0);
	EXPECT_EQ(count_entries(dir), 2);
	npr_graph_free(c);
	npr_graph_free(g);

	fd = npr_open("cpu", 0);
	ASSERT_GE(fd, 0);
	npr_prep_model_load(&ml, path, NULL);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	orig.model = ml.handle;
	run_model(_metadata, fd, &orig, NULL);
	npr_prep_model_load(&ml, xmlp, NULL);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err)
		TH_LOG("MODEL_LOAD %s: %s", xmlp, npr_last_error());
	ASSERT_EQ(err, 0);
	back.model = ml.handle;
	run_model(_metadata, fd, &back, NULL);
	same_outputs(_metadata, &orig, &back);
	run_free(&orig);
	run_free(&back);
	EXPECT_EQ(npr_close(fd), 0);
	rm_dir(dir);
	free(dir);
}

/* Identical constants share one slice of the .bin. */
TEST(identical_constants_share_weights)
{
	struct npr_graph *g;
	size_t xml_len, bin_len, bin_len2;
	char path[4096], *xml = NULL;
	void *bin = NULL;
	int i, c = -1;

	if (!model_path(path, sizeof(path), SMALL_REL))
		SKIP(return, "model %s not found", path);
	g = load_graph(_metadata, path);
	ASSERT_EQ(npr_ir_write_mem(g, &xml, &xml_len, &bin, &bin_len), 0);
	free(xml);
	free(bin);
	for (i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i].type, "Const") &&
		    g->vals[g->nodes[i].out[0]].nbytes >= 64) {
			c = i;
			break;
		}
	ASSERT_GE(c, 0);
	/* point a second Const at the same bytes: the .bin does not grow */
	for (i = c + 1; i < g->nnodes; i++) {
		struct npr_value *a = &g->vals[g->nodes[c].out[0]];
		struct npr_value *b = &g->vals[g->nodes[i].out[0]];

		if (strcmp(g->nodes[i].type, "Const") || b->owned ||
		    b->type != a->type)
			continue;
		b->data = a->data;
		b->nbytes = a->nbytes;
		b->shape = a->shape;
		break;
	}
	ASSERT_LT(i, g->nnodes);
	ASSERT_EQ(npr_ir_write_mem(g, &xml, &xml_len, &bin, &bin_len2), 0);
	EXPECT_LT(bin_len2, bin_len);
	free(xml);
	free(bin);
	npr_graph_free(g);
}

TEST(unwritable_directory_fails_and_leaves_nothing)
{
	struct npr_graph *g;
	char path[4096], xmlp[4200];
	char *dir;
	int err;

	if (!model_path(path, sizeof(path), SMALL_REL))
		SKIP(return, "model %s not found", path);
	g = load_graph(_metadata, path);

	/* a directory that does not exist */
	err = npr_ir_write(g, "/nonexistent-npr-dir/m.xml", NULL);
	TH_LOG("errno %d: %s", err, npr_last_error());
	EXPECT_EQ(err, -ENOENT);
	EXPECT_NONNULL(strstr(npr_last_error(), "/nonexistent-npr-dir/m"));

	/* a directory nobody may write, root included */
	err = npr_ir_write(g, "/proc/npr-rt-test.xml", NULL);
	TH_LOG("errno %d: %s", err, npr_last_error());
	EXPECT_LT(err, 0);
	EXPECT_NONNULL(strstr(npr_last_error(), "cannot create"));

	/* read-only directory (not for root, who may write anyway) */
	dir = tmp_dir(_metadata);
	if (geteuid()) {
		ASSERT_EQ(chmod(dir, 0500), 0);
		snprintf(xmlp, sizeof(xmlp), "%s/m.xml", dir);
		err = npr_ir_write(g, xmlp, NULL);
		TH_LOG("errno %d: %s", err, npr_last_error());
		EXPECT_EQ(err, -EACCES);
		chmod(dir, 0700);
	}
	EXPECT_EQ(count_entries(dir), 0);

	/* .bin writable, .xml not: the .bin is not left behind */
	snprintf(xmlp, sizeof(xmlp), "%s/m.bin", dir);
	err = npr_ir_write(g, "/nonexistent-npr-dir/m.xml", xmlp);
	EXPECT_EQ(err, -ENOENT);
	EXPECT_EQ(count_entries(dir), 0);
	rm_dir(dir);
	free(dir);
	npr_graph_free(g);
}

TEST(unsupported_element_type_fails_naming_the_layer)
{
	struct npr_graph *g;
	char path[4096], xmlp[4200], *xml = (char *)"", *dir;
	size_t xml_len, bin_len;
	void *bin = NULL;
	int i, err;

	if (!model_path(path, sizeof(path), SMALL_REL))
		SKIP(return, "model %s not found", path);
	g = load_graph(_metadata, path);
	for (i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i].type, "Convolution"))
			break;
	ASSERT_LT(i, g->nnodes);
	g->vals[g->nodes[i].out[0]].type = NPR_ELEM_MAX + 3;
	err = npr_ir_write_mem(g, &xml, &xml_len, &bin, &bin_len);
	TH_LOG("errno %d: %s", err, npr_last_error());
	EXPECT_EQ(err, -EINVAL);
	EXPECT_NULL(xml);
	EXPECT_NULL(bin);
	EXPECT_NONNULL(strstr(npr_last_error(), g->nodes[i].name));
	EXPECT_NONNULL(strstr(npr_last_error(), "element type"));

	dir = tmp_dir(_metadata);
	snprintf(xmlp, sizeof(xmlp), "%s/m.xml", dir);
	EXPECT_EQ(npr_ir_write(g, xmlp, NULL), -EINVAL);
	EXPECT_EQ(count_entries(dir), 0);
	rm_dir(dir);
	free(dir);
	npr_graph_free(g);
}

/* XML holds UTF-8 only: a name that is not (a frontend passed any bytes
 * on), in the model or in a body, fails naming the layer. */
TEST(name_that_is_not_utf8_fails_naming_the_layer)
{
	struct npr_graph *g;
	char path[4096], *xml = (char *)"";
	size_t xml_len, bin_len;
	void *bin = NULL;
	int i, err;

	if (!model_path(path, sizeof(path), "ir-small/loop_2d_add.xml"))
		SKIP(return, "model %s not found", path);
	g = load_graph(_metadata, path);
	for (i = 0; i < g->nnodes; i++)
		if (g->nodes[i].nbodies)
			break;
	ASSERT_LT(i, g->nnodes);
	{
		struct npr_graph *b = g->nodes[i].bodies[0].g;
		struct npr_node *n = &b->nodes[b->nnodes - 1];

		free(n->name);
		n->name = strdup("cut\xc3");	/* a lone lead byte */
		ASSERT_NONNULL(n->name);
		err = npr_ir_write_mem(g, &xml, &xml_len, &bin, &bin_len);
		TH_LOG("errno %d: %s", err, npr_last_error());
		EXPECT_EQ(err, -EINVAL);
		EXPECT_NULL(xml);
		EXPECT_NULL(bin);
		EXPECT_NONNULL(strstr(npr_last_error(), "UTF-8"));
		EXPECT_NONNULL(strstr(npr_last_error(), "name"));
	}
	npr_graph_free(g);
}

TEST_HARNESS_MAIN
