// SPDX-License-Identifier: MIT
/*
 * Real OpenVINO IR models on real photos, through the public API: every
 * model loads, compiles and runs; FP16 and INT8 variants of a network agree
 * with FP32 within stated tolerances; IR v10 and v11 of one network give
 * the same detections; squeezenet1.1 finds the cat and the coffee;
 * face-detection-retail-0004 finds the astronaut's face and only hers.
 * Silero VAD v4 (ONNX: If, LSTM) matches ONNX Runtime's reference stream,
 * one chunk with explicit state, and all 20 chunks as a stateful model.
 *
 * Models and photos come from $NPR_SHARED (models/ir, models/onnx,
 * images); without
 * them the tests skip.  Preprocessing is Open Model Zoo's: BGR, 0..255 as
 * float, NCHW, bilinear resize to the input's H x W, converted to the
 * input's element type (f16 for the IR v10 FP16 models).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
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
#include "tools/image.h"
#include "harness.h"

#define MAX_PORTS	8

/* the models, under models/ir */
#define SQUEEZENET	"squeezenet1.1/FP16/squeezenet1.1.xml"
#define LM_DIR	"landmarks-regression-retail-0009/"
#define LM_XML	"/landmarks-regression-retail-0009.xml"
#define EYE_DIR	"open-closed-eye-0001/"
#define EYE_XML	"/open-closed-eye-0001.xml"
#define FD_DIR	"face-detection-retail-0004/"
#define FD_XML	"/face-detection-retail-0004.xml"

/*
 * Regions of astronaut.png (512 x 512), x0, y0, x1, y1 in pixels, found
 * by cropping the photo and looking at the crops.  Her face from hairline
 * to chin and ear to ear: the box face-detection-retail-0004 returns.
 */
static const int face_crop[4] = { 181, 57, 271, 178 };

/*
 * Windows of the face (36 x 36 px) where the FP32 eye-state
 * probabilities are not saturated, found by scanning the face in 20 px
 * steps: on a clear eye the softmax says 1.000000 in every precision and
 * would hide any difference.  The eye itself comes first.
 */
static const int eye_windows[][4] = {
	{ 188, 84, 224, 120 },	/* her right eye, centred: p ~ 1 */
	{ 210, 60, 246, 96 },	/* forehead between the brows: p ~ 0.04 */
	{ 230, 140, 266, 176 },	/* mouth corner and cheek: p ~ 0.52 */
	{ 190, 60, 226, 96 },	/* the brow above that eye: p ~ 0.99 */
};

struct port {
	__u32 type;
	__u32 rank;
	__s64 dims[NPR_MAX_RANK];
	size_t count;
	size_t bytes;
	char name[128];
};

/* One model, compiled, with one request. */
struct net {
	int fd;
	__u32 model, exec, req;
	__u32 ir_version;
	__u32 nin, nout;
	struct port in[MAX_PORTS], out[MAX_PORTS];
};

/* ---- helpers ------------------------------------------------------------ */

/* The device net_open() opens: "cpu", or "npu" in the npu tests. */
static const char *net_device = "cpu";

static float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, x;
	float f;

	if (!exp) {
		f = ldexpf((float)man, -24);
		return sign ? -f : f;
	}
	if (exp == 31)
		x = sign | 0x7f800000u | (man << 13);
	else
		x = sign | ((exp + 112) << 23) | (man << 13);
	memcpy(&f, &x, sizeof(f));
	return f;
}

static bool shared_path(char *buf, size_t len, const char *dir,
			const char *rel)
{
	int n = snprintf(buf, len, "%s/%s/%s", npr_test_shared(), dir, rel);

	return n > 0 && (size_t)n < len && !access(buf, R_OK);
}

#define REQUIRE_SHARED()						\
	do {								\
		if (!npr_test_shared_ok())				\
			SKIP(return, "no shared data at %s (set NPR_SHARED)", \
			     npr_test_shared());			\
	} while (0)

static void port_query(struct npr_test *_metadata, struct net *n,
		       __u32 index, int output, struct port *p)
{
	struct npr_port_info pi;
	size_t elem;
	__u32 i;

	npr_prep_port_info(&pi, n->exec, index, output, p->name,
			   sizeof(p->name));
	ASSERT_EQ(npr_ioctl(n->fd, NPR_IOCTL_PORT_INFO, &pi), 0);
	p->type = pi.elem_type;
	p->rank = pi.rank;
	p->count = 1;
	for (i = 0; i < pi.rank; i++) {
		ASSERT_GE(pi.dims[i], 1);
		p->dims[i] = pi.dims[i];
		p->count *= (size_t)pi.dims[i];
	}
	elem = npr_elem_size(p->type);
	ASSERT_NE(elem, 0);
	p->bytes = p->count * elem;
}

/*
 * Open a device and bring up model @rel (under models/ir): load, compile,
 * create a request, describe the ports.  Skips when the file is missing.
 */
static void net_open(struct npr_test *_metadata, struct net *n,
		     const char *rel)
{
	struct npr_model_info mi = { .size = sizeof(mi) };
	struct npr_model_load ml;
	struct npr_req_create rc;
	struct npr_compile co;
	char path[4096];
	__u32 i;
	int ret;

	memset(n, 0, sizeof(*n));
	n->fd = -1;
	if (!shared_path(path, sizeof(path), "models/ir", rel))
		SKIP(return, "model %s not found", path);
	n->fd = npr_open(net_device, 0);
	ASSERT_GE(n->fd, 0);

	npr_prep_model_load(&ml, path, NULL);
	ret = npr_ioctl(n->fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (ret)
		TH_LOG("%s: MODEL_LOAD: %s", rel, npr_last_error());
	ASSERT_EQ(ret, 0);
	n->model = ml.handle;

	mi.handle = n->model;
	ASSERT_EQ(npr_ioctl(n->fd, NPR_IOCTL_MODEL_INFO, &mi), 0);
	n->ir_version = mi.ir_version;

	npr_prep_compile(&co, n->model);
	ret = npr_ioctl(n->fd, NPR_IOCTL_COMPILE, &co);
	if (ret)
		TH_LOG("%s: COMPILE: %s", rel, npr_last_error());
	ASSERT_EQ(ret, 0);
	n->exec = co.exec;

	npr_prep_req_create(&rc, n->exec);
	ASSERT_EQ(npr_ioctl(n->fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	n->req = rc.req;

	mi.handle = n->exec;
	ASSERT_EQ(npr_ioctl(n->fd, NPR_IOCTL_MODEL_INFO, &mi), 0);
	ASSERT_GE(mi.num_inputs, 1);
	ASSERT_LE(mi.num_inputs, MAX_PORTS);
	ASSERT_GE(mi.num_outputs, 1);
	ASSERT_LE(mi.num_outputs, MAX_PORTS);
	n->nin = mi.num_inputs;
	n->nout = mi.num_outputs;
	for (i = 0; i < n->nin; i++)
		port_query(_metadata, n, i, 0, &n->in[i]);
	for (i = 0; i < n->nout; i++)
		port_query(_metadata, n, i, 1, &n->out[i]);
}

static void net_close(struct npr_test *_metadata, struct net *n)
{
	if (n->fd >= 0)
		EXPECT_EQ(npr_close(n->fd), 0);
	n->fd = -1;
}

static void image_load(struct npr_test *_metadata, const char *name,
		       struct npr_image *img)
{
	char path[4096];

	if (!shared_path(path, sizeof(path), "images", name))
		SKIP(return, "image %s not found", path);
	ASSERT_EQ(npr_image_load_png(path, img), 0);
	ASSERT_EQ(img->c, 3);
}

static void image_crop(struct npr_test *_metadata,
		       const struct npr_image *src, const int box[4],
		       struct npr_image *dst)
{
	int w = box[2] - box[0], h = box[3] - box[1], y;

	ASSERT_TRUE(box[0] >= 0 && box[1] >= 0 && w > 0 && h > 0);
	ASSERT_TRUE(box[2] <= src->w && box[3] <= src->h);
	dst->px = malloc((size_t)w * h * 3);
	ASSERT_NONNULL(dst->px);
	dst->w = w;
	dst->h = h;
	dst->c = 3;
	for (y = 0; y < h; y++)
		memcpy(dst->px + (size_t)y * w * 3,
		       src->px + ((size_t)(box[1] + y) * src->w + box[0]) * 3,
		       (size_t)w * 3);
}

/* Resize @img to input @index's H x W, BGR 0..255 NCHW, and set it. */
static void net_set_image(struct npr_test *_metadata, struct net *n,
			  __u32 index, const struct npr_image *img)
{
	const struct port *p = &n->in[index];
	struct npr_image sized = { 0 };
	struct npr_preproc pp;
	struct npr_tensor_arg ta;
	void *buf;
	__u32 i;
	int ret;

	ASSERT_EQ(p->rank, 4);
	ASSERT_EQ(p->dims[0], 1);
	ASSERT_EQ(p->dims[1], 3);
	ASSERT_TRUE(p->type == NPR_ELEM_F32 || p->type == NPR_ELEM_F16);
	ASSERT_EQ(npr_image_resize_bilinear(img, (int)p->dims[3],
					    (int)p->dims[2], &sized), 0);
	npr_preproc_default(&pp);	/* BGR, 0..255, NCHW */
	buf = malloc(p->bytes);
	ASSERT_NONNULL(buf);
	ASSERT_EQ(npr_image_to_tensor(&sized, &pp, p->type, buf), 0);
	npr_image_free(&sized);

	npr_prep_tensor(&ta, n->req, index, 0, buf, p->bytes);
	ta.elem_type = p->type;
	ta.rank = p->rank;
	for (i = 0; i < p->rank; i++)
		ta.dims[i] = p->dims[i];
	ret = npr_ioctl(n->fd, NPR_IOCTL_SET_TENSOR, &ta);
	free(buf);
	if (ret)
		TH_LOG("SET_TENSOR: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
}

static void net_infer(struct npr_test *_metadata, struct net *n)
{
	struct npr_infer in;
	int ret;

	npr_prep_infer(&in, n->req);
	ret = npr_ioctl(n->fd, NPR_IOCTL_INFER, &in);
	if (ret)
		TH_LOG("INFER: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
}

/* Output @index as floats, whatever its element type; caller frees. */
static float *net_output(struct npr_test *_metadata, struct net *n,
			 __u32 index)
{
	const struct port *p = &n->out[index];
	struct npr_tensor_arg ta;
	float *out;
	void *raw;
	size_t i;

	ASSERT_TRUE(p->type == NPR_ELEM_F32 || p->type == NPR_ELEM_F16);
	raw = malloc(p->bytes);
	out = malloc(p->count * sizeof(float));
	ASSERT_NONNULL(raw);
	ASSERT_NONNULL(out);
	npr_prep_tensor(&ta, n->req, index, 1, raw, p->bytes);
	ASSERT_EQ(npr_ioctl(n->fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	ASSERT_EQ(ta.bytes, p->bytes);
	for (i = 0; i < p->count; i++)
		out[i] = p->type == NPR_ELEM_F32 ? ((float *)raw)[i] :
			 half_to_float(((uint16_t *)raw)[i]);
	free(raw);
	return out;
}

/*
 * The whole path: model @rel on photo @image (cropped to @crop unless
 * NULL); returns output 0 as floats and its element count.
 */
static float *run_on_image(struct npr_test *_metadata, const char *rel,
			   const char *image, const int *crop, size_t *count)
{
	struct npr_image img = { 0 }, part = { 0 };
	struct net n;
	float *out;

	image_load(_metadata, image, &img);
	if (_metadata->skipped)
		return NULL;
	if (crop) {
		image_crop(_metadata, &img, crop, &part);
		npr_image_free(&img);
		img = part;
	}
	net_open(_metadata, &n, rel);
	if (_metadata->skipped) {
		npr_image_free(&img);
		return NULL;
	}
	ASSERT_EQ(n.nin, 1);
	net_set_image(_metadata, &n, 0, &img);
	npr_image_free(&img);
	net_infer(_metadata, &n);
	out = net_output(_metadata, &n, 0);
	*count = n.out[0].count;
	net_close(_metadata, &n);
	return out;
}

static double max_abs_diff(const float *a, const float *b, size_t n,
			   size_t *at)
{
	double m = 0;
	size_t i;

	*at = 0;
	for (i = 0; i < n; i++) {
		double d = fabs((double)a[i] - b[i]);

		if (d > m || isnan(d)) {
			m = isnan(d) ? INFINITY : d;
			*at = i;
		}
	}
	return m;
}

/* ---- detections (DetectionOutput: [1, 1, N, 7]) ------------------------- */

struct det {
	int label;
	float conf;
	float x0, y0, x1, y1;	/* normalized */
};

/*
 * Detections above @thresh, best first.  A row with image_id -1 ends the
 * list, as DetectionOutput writes it.
 */
static int detections(const float *out, size_t count, float thresh,
		      struct det *d, int max)
{
	size_t rows = count / 7, r;
	int n = 0, i, j;

	for (r = 0; r < rows; r++) {
		const float *row = out + r * 7;

		if (row[0] < 0)
			break;
		if (row[2] <= thresh || n == max)
			continue;
		d[n].label = (int)row[1];
		d[n].conf = row[2];
		d[n].x0 = row[3];
		d[n].y0 = row[4];
		d[n].x1 = row[5];
		d[n].y1 = row[6];
		n++;
	}
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && d[j].conf > d[j - 1].conf; j--) {
			struct det t = d[j];

			d[j] = d[j - 1];
			d[j - 1] = t;
		}
	return n;
}

static double iou(const struct det *a, const struct det *b)
{
	double ix = fmin(a->x1, b->x1) - fmax(a->x0, b->x0);
	double iy = fmin(a->y1, b->y1) - fmax(a->y0, b->y0);
	double inter, ua;

	if (ix <= 0 || iy <= 0)
		return 0;
	inter = ix * iy;
	ua = (a->x1 - a->x0) * (a->y1 - a->y0) +
	     (b->x1 - b->x0) * (b->y1 - b->y0) - inter;
	return ua > 0 ? inter / ua : 0;
}

static void log_det(const char *what, const struct det *d, int w, int h)
{
	TH_LOG("%s: label %d conf %.5f box %.1f,%.1f - %.1f,%.1f px", what,
	       d->label, d->conf, d->x0 * w, d->y0 * h, d->x1 * w,
	       d->y1 * h);
}

/* ---- every model runs -------------------------------------------------- */

FIXTURE(model) {
	int unused;
};

/**
 * @path: under models/ir.
 * @ir_version: what MODEL_INFO must report.
 * @image: photo fed to the input.
 * @crop: region of the photo, NULL for all of it.
 */
FIXTURE_VARIANT(model) {
	const char *path;
	__u32 ir_version;
	const char *image;
	const int *crop;
};

FIXTURE_VARIANT_ADD(model, squeezenet_fp16) {
	.path = SQUEEZENET,
	.ir_version = 10, .image = "chelsea.png",
};
FIXTURE_VARIANT_ADD(model, landmarks_fp32) {
	.path = LM_DIR "FP32" LM_XML,
	.ir_version = 11, .image = "astronaut.png", .crop = face_crop,
};
FIXTURE_VARIANT_ADD(model, landmarks_fp32_alt) {
	.path = LM_DIR "FP32-alt" LM_XML,
	.ir_version = 11, .image = "astronaut.png", .crop = face_crop,
};
FIXTURE_VARIANT_ADD(model, landmarks_fp16_v11) {
	.path = LM_DIR "FP16-v11" LM_XML,
	.ir_version = 11, .image = "astronaut.png", .crop = face_crop,
};
FIXTURE_VARIANT_ADD(model, landmarks_fp16_int8) {
	.path = LM_DIR "FP16-INT8" LM_XML,
	.ir_version = 11, .image = "astronaut.png", .crop = face_crop,
};
FIXTURE_VARIANT_ADD(model, eye_fp32) {
	.path = EYE_DIR "FP32" EYE_XML,
	.ir_version = 11, .image = "astronaut.png", .crop = eye_windows[0],
};
FIXTURE_VARIANT_ADD(model, eye_fp16) {
	.path = EYE_DIR "FP16" EYE_XML,
	.ir_version = 11, .image = "astronaut.png", .crop = eye_windows[0],
};
FIXTURE_VARIANT_ADD(model, face_fp32_v10) {
	.path = FD_DIR "FP32-v10" FD_XML,
	.ir_version = 10, .image = "astronaut.png",
};
FIXTURE_VARIANT_ADD(model, face_fp32_v11) {
	.path = FD_DIR "FP32-v11" FD_XML,
	.ir_version = 11, .image = "astronaut.png",
};
FIXTURE_VARIANT_ADD(model, face_fp16) {
	.path = FD_DIR "FP16" FD_XML,
	.ir_version = 10, .image = "astronaut.png",
};
FIXTURE_VARIANT_ADD(model, face_fp16_int8) {
	.path = FD_DIR "FP16-INT8" FD_XML,
	.ir_version = 10, .image = "astronaut.png",
};

FIXTURE_SETUP(model)
{
	REQUIRE_SHARED();
}

FIXTURE_TEARDOWN(model)
{
}

TEST_F(model, loads_compiles_and_runs)
{
	struct npr_image img = { 0 }, part = { 0 };
	size_t i, nonzero = 0;
	struct net n;
	__u32 k;

	image_load(_metadata, variant->image, &img);
	if (_metadata->skipped)
		return;
	if (variant->crop) {
		image_crop(_metadata, &img, variant->crop, &part);
		npr_image_free(&img);
		img = part;
	}
	net_open(_metadata, &n, variant->path);
	if (_metadata->skipped)
		return;
	EXPECT_EQ(n.ir_version, variant->ir_version);
	ASSERT_EQ(n.nin, 1);
	net_set_image(_metadata, &n, 0, &img);
	npr_image_free(&img);
	net_infer(_metadata, &n);
	/* twice: a request runs again with the same result */
	for (k = 0; k < n.nout; k++) {
		float *a = net_output(_metadata, &n, k), *b;

		net_infer(_metadata, &n);
		b = net_output(_metadata, &n, k);
		for (i = 0; i < n.out[k].count; i++) {
			if (!isfinite(a[i])) {
				TH_LOG("output %s[%zu] = %g", n.out[k].name, i,
				       a[i]);
				ASSERT_TRUE(isfinite(a[i]));
			}
			if (a[i] != 0)
				nonzero++;
		}
		EXPECT_EQ(memcmp(a, b, n.out[k].count * sizeof(float)), 0);
		TH_LOG("output %s: %s, %zu values, %zu non-zero",
		       n.out[k].name, npr_elem_name(n.out[k].type),
		       n.out[k].count, nonzero);
		EXPECT_GT(nonzero, 0);
		free(a);
		free(b);
	}
	net_close(_metadata, &n);
}

/* ---- precisions agree --------------------------------------------------- */

/*
 * How far FP16 and INT8 may drift from FP32.
 *
 * FP16 weights carry a relative rounding error of at most 2^-11 (~5e-4);
 * this library computes in f32 after decompressing them, so the error is
 * the weights' alone, on the order of 1e-3 relative per layer, and it
 * grows slowly with depth.  INT8 models quantise every activation that
 * enters a FakeQuantize to 256 levels of its calibrated range (a step of
 * ~0.4% of the range, half of it as rounding error) and their weights to
 * int8 per output channel; the network output moves by a few percent of
 * its range.  The limits below sit a few times above what was measured
 * (logged by each test) and well below what would change the answer a
 * user gets: a landmark moving 0.02 of a 48-pixel face crop is one pixel.
 */
#define LANDMARKS_FP16_TOL	0.02	/* normalized coordinates, 0..1 */
#define LANDMARKS_INT8_TOL	0.05
#define EYE_FP16_TOL		0.02	/* softmax probabilities */
#define FACE_FP16_MIN_IOU	0.9
#define FACE_INT8_MIN_IOU	0.8
#define FACE_FP16_CONF_TOL	0.01
#define FACE_INT8_CONF_TOL	0.05

TEST(landmarks_precisions_agree)
{
	static const char *const names[] = { "x0", "y0", "x1", "y1", "x2",
					     "y2", "x3", "y3", "x4", "y4" };
	float *fp32, *alt, *fp16, *int8;
	size_t n, n2, at, i;
	double d;

	REQUIRE_SHARED();
	fp32 = run_on_image(_metadata, LM_DIR "FP32" LM_XML, "astronaut.png",
			    face_crop, &n);
	if (_metadata->skipped)
		return;
	ASSERT_EQ(n, 10);
	for (i = 0; i < n; i++)
		TH_LOG("FP32 %s = %.6f", names[i], fp32[i]);

	/* same .bin, another serialisation of the same graph: identical */
	alt = run_on_image(_metadata, LM_DIR "FP32-alt" LM_XML,
			   "astronaut.png", face_crop, &n2);
	if (_metadata->skipped)
		return;
	ASSERT_EQ(n2, n);
	d = max_abs_diff(fp32, alt, n, &at);
	TH_LOG("FP32-alt vs FP32: max abs diff %.3g (at %s)", d, names[at]);
	EXPECT_EQ(d, 0.0);

	fp16 = run_on_image(_metadata, LM_DIR "FP16-v11" LM_XML,
			    "astronaut.png", face_crop, &n2);
	if (_metadata->skipped)
		return;
	ASSERT_EQ(n2, n);
	d = max_abs_diff(fp32, fp16, n, &at);
	TH_LOG("FP16 vs FP32: max abs diff %.3g (at %s)", d, names[at]);
	EXPECT_LE(d, LANDMARKS_FP16_TOL);

	int8 = run_on_image(_metadata, LM_DIR "FP16-INT8" LM_XML,
			    "astronaut.png", face_crop, &n2);
	if (_metadata->skipped)
		return;
	ASSERT_EQ(n2, n);
	d = max_abs_diff(fp32, int8, n, &at);
	TH_LOG("INT8 vs FP32: max abs diff %.3g (at %s)", d, names[at]);
	EXPECT_LE(d, LANDMARKS_INT8_TOL);
	free(fp32);
	free(alt);
	free(fp16);
	free(int8);
}

/*
 * open-closed-eye-0001's three MaxPool-8 leave their indices unread, so
 * the cpu device pools them on the vectorised path; NPR_CPU_REF=1 runs
 * the reference kernels (the scalar pool, indices and all).  Same
 * probabilities, to float rounding.
 */
TEST(eye_state_fast_pools_match_reference_kernels)
{
	float *fast, *ref;
	size_t n, n2;
	double d;

	REQUIRE_SHARED();
	fast = run_on_image(_metadata, EYE_DIR "FP32" EYE_XML, "astronaut.png",
			    eye_windows[0], &n);
	if (_metadata->skipped)
		return;
	setenv("NPR_CPU_REF", "1", 1);
	ref = run_on_image(_metadata, EYE_DIR "FP32" EYE_XML, "astronaut.png",
			   eye_windows[0], &n2);
	unsetenv("NPR_CPU_REF");
	if (_metadata->skipped)
		return;
	ASSERT_EQ(n, n2);
	ASSERT_EQ(n, 2);
	/*
	 * a confident softmax: p = [7.8e-31, 1] here, so compare the logit
	 * difference, log p0 - log p1, which a wrong pool would move by far
	 * more than rounding
	 */
	ASSERT_GT(fast[0], 0.0f);
	ASSERT_GT(ref[0], 0.0f);
	d = fabs((log(fast[0]) - log(fast[1])) - (log(ref[0]) - log(ref[1])));
	TH_LOG("fast p = [%.9g, %.9g], reference [%.9g, %.9g]; logit difference apart by %.3g",
	       fast[0], fast[1], ref[0], ref[1], d);
	EXPECT_LE(d, 1e-4);
	free(fast);
	free(ref);
}

TEST(eye_state_precisions_agree)
{
	double d, worst = 0;
	float *fp32, *fp16;
	size_t n, n2, at, i;

	REQUIRE_SHARED();
	for (i = 0; i < sizeof(eye_windows) / sizeof(eye_windows[0]); i++) {
		fp32 = run_on_image(_metadata, EYE_DIR "FP32" EYE_XML,
				    "astronaut.png", eye_windows[i], &n);
		if (_metadata->skipped)
			return;
		ASSERT_EQ(n, 2);
		/* a softmax */
		EXPECT_NEAR(fp32[0] + fp32[1], 1.0, 1e-5);
		fp16 = run_on_image(_metadata, EYE_DIR "FP16" EYE_XML,
				    "astronaut.png", eye_windows[i], &n2);
		if (_metadata->skipped)
			return;
		ASSERT_EQ(n2, n);
		d = max_abs_diff(fp32, fp16, n, &at);
		TH_LOG("window %d,%d: FP32 p = [%.6f, %.6f], FP16 p = [%.6f, %.6f], diff %.3g",
		       eye_windows[i][0], eye_windows[i][1], fp32[0],
		       fp32[1], fp16[0], fp16[1], d);
		EXPECT_LE(d, EYE_FP16_TOL);
		/* the same class wins where FP32 is clear about it */
		if (fabs(fp32[0] - fp32[1]) > 2 * EYE_FP16_TOL)
			EXPECT_EQ(fp32[0] > fp32[1], fp16[0] > fp16[1]);
		if (d > worst)
			worst = d;
		free(fp32);
		free(fp16);
	}
	TH_LOG("FP16 vs FP32: max abs diff %.3g", worst);
}

static void face_top(struct npr_test *_metadata, const char *prec,
		     struct det *top)
{
	char rel[256];
	struct det d[16];
	float *out;
	size_t n;
	int nd;

	snprintf(rel, sizeof(rel), FD_DIR "%s" FD_XML, prec);
	out = run_on_image(_metadata, rel, "astronaut.png", NULL, &n);
	if (_metadata->skipped)
		return;
	ASSERT_EQ(n, 200 * 7);
	nd = detections(out, n, 0.5f, d, 16);
	free(out);
	ASSERT_GE(nd, 1);
	*top = d[0];
	log_det(prec, top, 512, 512);
}

TEST(face_detection_precisions_agree)
{
	struct det fp32, fp16, int8;
	double o;

	REQUIRE_SHARED();
	face_top(_metadata, "FP32-v10", &fp32);
	if (_metadata->skipped)
		return;
	face_top(_metadata, "FP16", &fp16);
	if (_metadata->skipped)
		return;
	face_top(_metadata, "FP16-INT8", &int8);
	if (_metadata->skipped)
		return;

	o = iou(&fp32, &fp16);
	TH_LOG("FP16 vs FP32: IoU %.5f, confidence diff %.3g", o,
	       fabs(fp16.conf - fp32.conf));
	EXPECT_EQ(fp16.label, fp32.label);
	EXPECT_GE(o, FACE_FP16_MIN_IOU);
	EXPECT_NEAR(fp16.conf, fp32.conf, FACE_FP16_CONF_TOL);

	o = iou(&fp32, &int8);
	TH_LOG("INT8 vs FP32: IoU %.5f, confidence diff %.3g", o,
	       fabs(int8.conf - fp32.conf));
	EXPECT_EQ(int8.label, fp32.label);
	EXPECT_GE(o, FACE_INT8_MIN_IOU);
	EXPECT_NEAR(int8.conf, fp32.conf, FACE_INT8_CONF_TOL);
}

/*
 * The same weights (byte-identical .bin) and graph in IR v10 and v11: the
 * reader must build the same computation, so the outputs may differ only
 * by float reassociation, if at all.
 */
TEST(face_detection_ir_v10_and_v11_agree)
{
	float *v10, *v11;
	size_t n, n2, at;
	double d;

	REQUIRE_SHARED();
	v10 = run_on_image(_metadata, FD_DIR "FP32-v10" FD_XML,
			   "astronaut.png", NULL, &n);
	if (_metadata->skipped)
		return;
	v11 = run_on_image(_metadata, FD_DIR "FP32-v11" FD_XML,
			   "astronaut.png", NULL, &n2);
	if (_metadata->skipped)
		return;
	ASSERT_EQ(n, n2);
	d = max_abs_diff(v10, v11, n, &at);
	TH_LOG("v11 vs v10: max abs diff %.3g (row %zu, field %zu)", d,
	       at / 7, at % 7);
	EXPECT_LE(d, 1e-5);
	free(v10);
	free(v11);
}

/* ---- the answers are right ---------------------------------------------- */

static void top_k(const float *p, size_t n, int *idx, int k)
{
	int i, j;

	for (i = 0; i < k; i++)
		idx[i] = -1;
	for (size_t c = 0; c < n; c++) {
		for (i = 0; i < k; i++)
			if (idx[i] < 0 || p[c] > p[idx[i]])
				break;
		if (i == k)
			continue;
		for (j = k - 1; j > i; j--)
			idx[j] = idx[j - 1];
		idx[i] = (int)c;
	}
}

static float *classify(struct npr_test *_metadata, const char *image,
		       int *top, int k)
{
	double sum = 0;
	float *p;
	size_t n, c;
	int i;

	p = run_on_image(_metadata, SQUEEZENET, image, NULL, &n);
	if (_metadata->skipped)
		return NULL;
	ASSERT_EQ(n, 1000);
	for (c = 0; c < n; c++)
		sum += p[c];
	/* a softmax, summed from f16 values */
	EXPECT_NEAR(sum, 1.0, 0.01);
	top_k(p, n, top, k);
	for (i = 0; i < k; i++)
		TH_LOG("%s: #%d class %d p %.5f", image, i + 1, top[i],
		       p[top[i]]);
	return p;
}

/* ImageNet 281..285: tabby, tiger cat, Persian, Siamese, Egyptian cat */
TEST(squeezenet_sees_a_cat)
{
	int top[5];
	float *p;

	REQUIRE_SHARED();
	p = classify(_metadata, "chelsea.png", top, 5);
	if (_metadata->skipped)
		return;
	EXPECT_GE(top[0], 281);
	EXPECT_LE(top[0], 285);
	free(p);
}

/* ImageNet 967 espresso, 968 cup, 504 coffee mug */
TEST(squeezenet_sees_coffee)
{
	bool found = false;
	int top[5], i;
	float *p;

	REQUIRE_SHARED();
	p = classify(_metadata, "coffee.png", top, 5);
	if (_metadata->skipped)
		return;
	for (i = 0; i < 3; i++)
		if (top[i] == 967 || top[i] == 968 || top[i] == 504)
			found = true;
	EXPECT_TRUE(found);
	free(p);
}

/* Every precision of face-detection-retail-0004 must find her face. */
FIXTURE(face) {
	int unused;
};

FIXTURE_VARIANT(face) {
	const char *prec;
};

FIXTURE_VARIANT_ADD(face, fp32_v10) { .prec = "FP32-v10" };
FIXTURE_VARIANT_ADD(face, fp32_v11) { .prec = "FP32-v11" };
FIXTURE_VARIANT_ADD(face, fp16) { .prec = "FP16" };
FIXTURE_VARIANT_ADD(face, fp16_int8) { .prec = "FP16-INT8" };

FIXTURE_SETUP(face)
{
	REQUIRE_SHARED();
}

FIXTURE_TEARDOWN(face)
{
}

/*
 * astronaut.png is 512 x 512 with one frontal face.  Cropping the photo
 * shows her face from hairline (y ~75) to chin (y ~185) and from x ~183
 * to ~272, eyes at y ~100, the tip of the nose near (226, 125); her hair
 * reaches up to y ~15 and out to x ~152..300, the suit's collar ring
 * starts below the chin.  So: the box centre must fall between the eyes
 * and the mouth and near the nose's column (x 200..250, y 95..145), the
 * box must be face-sized (60..140 px wide, 80..170 px tall; the face is
 * ~90 x 110), and it must stay on her head, hair included
 * (x 150..300, y 15..215).
 */
TEST_F(face, finds_the_astronaut)
{
	struct det d[16];
	char rel[256];
	float *out;
	double cx, cy, w, h;
	size_t n;
	int nd, i;

	snprintf(rel, sizeof(rel), FD_DIR "%s" FD_XML, variant->prec);
	out = run_on_image(_metadata, rel, "astronaut.png", NULL, &n);
	if (_metadata->skipped)
		return;
	ASSERT_EQ(n, 200 * 7);
	nd = detections(out, n, 0.5f, d, 16);
	for (i = 0; i < nd; i++)
		log_det("detection", &d[i], 512, 512);
	ASSERT_EQ(nd, 1);
	EXPECT_EQ(d[0].label, 1);

	cx = (d[0].x0 + d[0].x1) / 2 * 512;
	cy = (d[0].y0 + d[0].y1) / 2 * 512;
	w = (d[0].x1 - d[0].x0) * 512;
	h = (d[0].y1 - d[0].y0) * 512;
	TH_LOG("centre %.1f,%.1f size %.1f x %.1f px", cx, cy, w, h);
	EXPECT_GE(cx, 200);
	EXPECT_LE(cx, 250);
	EXPECT_GE(cy, 95);
	EXPECT_LE(cy, 145);
	EXPECT_GE(w, 60);
	EXPECT_LE(w, 140);
	EXPECT_GE(h, 80);
	EXPECT_LE(h, 170);
	EXPECT_GE(d[0].x0 * 512, 150);
	EXPECT_LE(d[0].x1 * 512, 300);
	EXPECT_GE(d[0].y0 * 512, 15);
	EXPECT_LE(d[0].y1 * 512, 215);
	free(out);
}

/*
 * A coffee cup on a table: no face at all.  (chelsea.png is no negative:
 * the detector gives the cat's face 0.36 in FP32 and 0.61 in INT8.)
 */
TEST_F(face, finds_no_face_in_coffee)
{
	struct det d[16];
	char rel[256];
	float *out;
	size_t n;
	int nd, i;

	snprintf(rel, sizeof(rel), FD_DIR "%s" FD_XML, variant->prec);
	out = run_on_image(_metadata, rel, "coffee.png", NULL, &n);
	if (_metadata->skipped)
		return;
	ASSERT_EQ(n, 200 * 7);
	nd = detections(out, n, 0.5f, d, 16);
	for (i = 0; i < nd; i++)
		log_det("detection", &d[i], 600, 400);
	EXPECT_EQ(nd, 0);
	free(out);
}

/*
 * Landmarks on the face crop, in the model's order (two eyes, nose tip,
 * two mouth corners; x, y normalized to the crop): the eyes above the
 * nose, the nose above the mouth, left and right kept apart.
 */
TEST(landmarks_fall_on_the_face)
{
	float *p;
	size_t n;

	REQUIRE_SHARED();
	p = run_on_image(_metadata, LM_DIR "FP32" LM_XML, "astronaut.png",
			 face_crop, &n);
	if (_metadata->skipped)
		return;
	ASSERT_EQ(n, 10);
	TH_LOG("eyes (%.3f,%.3f) (%.3f,%.3f) nose (%.3f,%.3f) mouth (%.3f,%.3f) (%.3f,%.3f)",
	       p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9]);
	for (size_t i = 0; i < n; i++) {
		EXPECT_GE(p[i], 0.0f);
		EXPECT_LE(p[i], 1.0f);
	}
	/* eyes above the nose above the mouth corners */
	EXPECT_LT(p[1], p[5]);
	EXPECT_LT(p[3], p[5]);
	EXPECT_LT(p[5], p[7]);
	EXPECT_LT(p[5], p[9]);
	/* the first eye and mouth corner on the left of the crop */
	EXPECT_LT(p[0], p[4]);
	EXPECT_LT(p[4], p[2]);
	EXPECT_LT(p[6], p[8]);
	free(p);
}

/* ---- the image models on npu ------------------------------------------ */

/*
 * The npu device over vnpu, the software NPU (make check sets NPR_VNPU),
 * or over an NPU; skipped with the reason when there is neither.
 */
#define REQUIRE_NPU()							\
	do {								\
		int _fd;						\
									\
		REQUIRE_SHARED();					\
		_fd = npr_open("npu", 0);				\
		if (_fd < 0)						\
			SKIP(return, "no npu device: %s (make check sets NPR_VNPU)", \
			     npr_last_error());				\
		npr_close(_fd);						\
	} while (0)

/*
 * How far npu may drift from cpu: 1e-4 of each output's range.  vnpu
 * runs the cpu kernels on the constants the IR carries, so it measures
 * identical; an NPU computes in f16 and would need its own limits.
 */
#define NPU_REL_TOL	1e-4

/*
 * Every image model of the fixture above on npu, on its photo: each
 * output agrees with cpu within NPU_REL_TOL of its range, and a second
 * inference gives the same bytes.
 */
TEST_F(model, agrees_on_npu)
{
	struct npr_image img = { 0 }, part = { 0 };
	float *out[2][MAX_PORTS] = { { NULL } };
	struct net n[2];
	__u32 k;
	int d;

	REQUIRE_NPU();
	image_load(_metadata, variant->image, &img);
	if (_metadata->skipped)
		return;
	if (variant->crop) {
		image_crop(_metadata, &img, variant->crop, &part);
		npr_image_free(&img);
		img = part;
	}
	for (d = 0; d < 2; d++) {
		net_device = d ? "npu" : "cpu";
		net_open(_metadata, &n[d], variant->path);
		if (_metadata->skipped)
			return;
		ASSERT_EQ(n[d].nin, 1);
		net_set_image(_metadata, &n[d], 0, &img);
		net_infer(_metadata, &n[d]);
		for (k = 0; k < n[d].nout; k++)
			out[d][k] = net_output(_metadata, &n[d], k);
	}
	npr_image_free(&img);
	ASSERT_EQ(n[1].nout, n[0].nout);
	for (k = 0; k < n[0].nout; k++) {
		double lo = INFINITY, hi = -INFINITY, md = 0;
		float *again;
		size_t i;

		ASSERT_EQ(n[1].out[k].type, n[0].out[k].type);
		ASSERT_EQ(n[1].out[k].count, n[0].out[k].count);
		for (i = 0; i < n[0].out[k].count; i++) {
			lo = fmin(lo, out[0][k][i]);
			hi = fmax(hi, out[0][k][i]);
			md = fmax(md, fabs((double)out[1][k][i] -
					   out[0][k][i]));
		}
		TH_LOG("output %s: %zu values, range %g..%g, max |npu - cpu| %.3g (tolerance %.3g)",
		       n[0].out[k].name, n[0].out[k].count, lo, hi, md,
		       NPU_REL_TOL * fmax(hi - lo, 1e-6));
		EXPECT_LE(md, NPU_REL_TOL * fmax(hi - lo, 1e-6));
		net_infer(_metadata, &n[1]);
		again = net_output(_metadata, &n[1], k);
		EXPECT_EQ(memcmp(again, out[1][k],
				 n[0].out[k].count * sizeof(float)), 0);
		free(again);
		free(out[0][k]);
		free(out[1][k]);
	}
	net_close(_metadata, &n[0]);
	net_close(_metadata, &n[1]);
}

/*
 * What a user gets from the npu: squeezenet1.1 calls chelsea.png a cat
 * (ImageNet 281..285), and face-detection-retail-0004 INT8 finds one face
 * on astronaut.png, centred between her eyes and mouth (the bounds of
 * face.finds_the_astronaut).
 */
TEST(npu_sees_the_cat_and_the_astronaut)
{
	struct det det[16];
	double cx, cy;
	float *p;
	size_t n;
	int top[5], nd;

	REQUIRE_NPU();
	net_device = "npu";
	p = classify(_metadata, "chelsea.png", top, 5);
	if (_metadata->skipped)
		return;
	EXPECT_GE(top[0], 281);
	EXPECT_LE(top[0], 285);
	free(p);
	p = run_on_image(_metadata, FD_DIR "FP16-INT8" FD_XML, "astronaut.png",
			 NULL, &n);
	if (_metadata->skipped)
		return;
	ASSERT_EQ(n, 200 * 7);
	nd = detections(p, n, 0.5f, det, 16);
	ASSERT_EQ(nd, 1);
	log_det("npu detection", &det[0], 512, 512);
	EXPECT_EQ(det[0].label, 1);
	cx = (det[0].x0 + det[0].x1) / 2 * 512;
	cy = (det[0].y0 + det[0].y1) / 2 * 512;
	EXPECT_GE(cx, 200);
	EXPECT_LE(cx, 250);
	EXPECT_GE(cy, 95);
	EXPECT_LE(cy, 145);
	free(p);
}

/* ---- Silero VAD v4 (ONNX), one streamed chunk ------------------------- */

/* Read @count f32 values at element @off of models/onnx/@name. */
static bool read_f32_at(const char *name, size_t off, float *out,
			size_t count)
{
	char path[4096];
	FILE *f;
	bool ok;

	if (!shared_path(path, sizeof(path), "models/onnx", name))
		return false;
	f = fopen(path, "rb");
	if (!f)
		return false;
	ok = !fseek(f, (long)(off * sizeof(float)), SEEK_SET) &&
	     fread(out, sizeof(float), count, f) == count;
	fclose(f);
	return ok;
}

static void set_named(struct npr_test *_metadata, struct net *n,
		      const char *name, __u32 type, const void *data,
		      size_t bytes)
{
	struct npr_tensor_arg ta;
	__u32 i, k;
	int ret;

	for (i = 0; i < n->nin; i++)
		if (!strcmp(n->in[i].name, name))
			break;
	if (i == n->nin)
		TH_LOG("no input %s", name);
	ASSERT_LT(i, n->nin);
	ASSERT_EQ(n->in[i].bytes, bytes);
	npr_prep_tensor(&ta, n->req, i, 0, (void *)data, bytes);
	ta.elem_type = type;
	ta.rank = n->in[i].rank;
	for (k = 0; k < ta.rank; k++)
		ta.dims[k] = n->in[i].dims[k];
	ret = npr_ioctl(n->fd, NPR_IOCTL_SET_TENSOR, &ta);
	if (ret)
		TH_LOG("SET_TENSOR %s: %s", name, npr_last_error());
	ASSERT_EQ(ret, 0);
}

/*
 * Chunk 4 of the reference stream (where speech starts), with the LSTM
 * state ONNX Runtime carried into it: output, hn and cn match the golden
 * values within 1e-4 of each output's absolute maximum.  The model runs
 * through the ONNX If (on sr, then nested ones on shapes) and LSTM
 * translations, compiled at batch 1.
 */
TEST(silero_vad_one_chunk_matches_golden)
{
	static const char *const outs[] = { "output", "hn", "cn" };
	static const char *const gold[] = {
		"silero_vad_v4.stream.output.f32",
		"silero_vad_v4.stream.hn.f32",
		"silero_vad_v4.stream.cn.f32",
	};
	const size_t chunk = 4, state = 2 * 64;
	float in[512], h[128], c[128], want[128];
	struct npr_model_load ml;
	char path[4096];
	int64_t sr = 16000;
	struct net n;
	__u32 i, o;
	int ret;

	REQUIRE_SHARED();
	if (!shared_path(path, sizeof(path), "models/onnx",
			 "silero_vad_v4.onnx"))
		SKIP(return, "model %s not found", path);
	ASSERT_TRUE(read_f32_at("silero_vad_v4.stream.input.f32",
				chunk * 512, in, 512));
	ASSERT_TRUE(read_f32_at("silero_vad_v4.stream.h_in.f32",
				chunk * state, h, state));
	ASSERT_TRUE(read_f32_at("silero_vad_v4.stream.c_in.f32",
				chunk * state, c, state));

	memset(&n, 0, sizeof(n));
	n.fd = npr_open("cpu", 0);
	ASSERT_GE(n.fd, 0);
	npr_prep_model_load(&ml, path, NULL);
	ret = npr_ioctl(n.fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (ret)
		TH_LOG("MODEL_LOAD: errno %d: %s", ret, npr_last_error());
	ASSERT_EQ(ret, 0);
	n.model = ml.handle;
	{
		struct npr_model_info mi = { .size = sizeof(mi) };
		struct npr_req_create rc;
		struct npr_compile co;

		/* input [1, 512], h and c [2, 1, 64]: batch 1 */
		struct npr_shape_arg sa[3] = {
			{ .index = 0, .rank = 2, .dims = { 1, 512 } },
			{ .index = 2, .rank = 3, .dims = { 2, 1, 64 } },
			{ .index = 3, .rank = 3, .dims = { 2, 1, 64 } },
		};

		npr_prep_compile(&co, n.model);
		co.shapes = (uintptr_t)sa;
		co.num_shapes = 3;
		ret = npr_ioctl(n.fd, NPR_IOCTL_COMPILE, &co);
		if (ret)
			TH_LOG("COMPILE: %s", npr_last_error());
		ASSERT_EQ(ret, 0);
		n.exec = co.exec;
		npr_prep_req_create(&rc, n.exec);
		ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
		n.req = rc.req;
		mi.handle = n.exec;
		ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_MODEL_INFO, &mi), 0);
		ASSERT_LE(mi.num_inputs, MAX_PORTS);
		ASSERT_LE(mi.num_outputs, MAX_PORTS);
		n.nin = mi.num_inputs;
		n.nout = mi.num_outputs;
		for (i = 0; i < n.nin; i++)
			port_query(_metadata, &n, i, 0, &n.in[i]);
		for (i = 0; i < n.nout; i++)
			port_query(_metadata, &n, i, 1, &n.out[i]);
	}
	set_named(_metadata, &n, "input", NPR_ELEM_F32, in, sizeof(in));
	set_named(_metadata, &n, "sr", NPR_ELEM_I64, &sr, sizeof(sr));
	set_named(_metadata, &n, "h", NPR_ELEM_F32, h, sizeof(h));
	set_named(_metadata, &n, "c", NPR_ELEM_F32, c, sizeof(c));
	net_infer(_metadata, &n);
	for (o = 0; o < 3; o++) {
		size_t cnt = o ? state : 1, k;
		double amax = 0, md = 0;
		float *got;

		for (i = 0; i < n.nout; i++)
			if (!strcmp(n.out[i].name, outs[o]))
				break;
		ASSERT_LT(i, n.nout);
		ASSERT_EQ(n.out[i].count, cnt);
		ASSERT_TRUE(read_f32_at(gold[o], chunk * cnt, want, cnt));
		got = net_output(_metadata, &n, i);
		for (k = 0; k < cnt; k++) {
			amax = fmax(amax, fabs(want[k]));
			md = fmax(md, fabs((double)got[k] - want[k]));
		}
		TH_LOG("%s: max |diff| %.3g, 1e-4 of absmax %.3g", outs[o],
		       md, 1e-4 * amax);
		EXPECT_LE(md, 1e-4 * amax);
		free(got);
	}
	net_close(_metadata, &n);
}

/*
 * The whole reference stream (20 chunks) through Silero VAD made stateful:
 * h -> hn and c -> cn become variables (NPR_IOCTL_MAKE_STATEFUL), so the
 * caller passes only input and sr and the state stays in the request,
 * starting from zeros as the reference did.  Every chunk's output and the
 * final state match the golden stream within 1e-4 of their absolute
 * maximum.  The ONNX file declares a symbolic batch, so MAKE_STATEFUL is
 * given the state shapes at batch 1 (without them it fails with -EINVAL
 * naming the dynamic shape).  With @via_ir the model is instead first
 * compiled at batch 1 and written to IR (lib/ir/write.c, If and LSTM
 * bodies included), the way a fixed-shape deployment would, and that IR,
 * whose shapes are static, is loaded and made stateful without shapes.
 */
static void silero_stream(struct npr_test *_metadata, bool via_ir)
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
	const size_t chunks = 20, state = 2 * 64;
	float in[512], gold[20], want[128], got_st[128];
	struct npr_graph *g = NULL, *cg = NULL;
	struct npr_state_pair pairs[2] = {
		{ (uintptr_t)"h", (uintptr_t)"hn" },
		{ (uintptr_t)"c", (uintptr_t)"cn" },
	};
	struct npr_make_stateful ms = {
		.size = sizeof(ms), .count = 2, .pairs = (uintptr_t)pairs,
	};
	/* ONNX inputs: input [batch, samples], sr, h and c [2, batch, 64] */
	struct npr_shape_arg st_shapes[2] = {
		{ .index = 2, .rank = 3, .dims = { 2, 1, 64 } },
		{ .index = 3, .rank = 3, .dims = { 2, 1, 64 } },
	};
	struct npr_shape_arg bad[1] = {
		{ .index = 2, .rank = 3, .dims = { 3, 1, 64 } },
	};
	struct npr_shape_arg in_shape[1] = {
		{ .index = 0, .rank = 2, .dims = { 1, 512 } },
	};
	struct npr_model_info mi = { .size = sizeof(mi) };
	struct npr_model_load ml;
	struct npr_req_create rc;
	struct npr_compile co;
	char path[4096], *xml = NULL;
	size_t xml_len, bin_len, k;
	double amax = 0, md = 0;
	int64_t sr = 16000;
	void *bin = NULL;
	struct net n;
	__u32 i;
	int ret;

	REQUIRE_SHARED();
	if (!shared_path(path, sizeof(path), "models/onnx",
			 "silero_vad_v4.onnx"))
		SKIP(return, "model %s not found", path);
	ASSERT_TRUE(read_f32_at("silero_vad_v4.stream.output.f32", 0, gold,
				chunks));
	if (via_ir) {
		ret = npr_onnx_load_file(path, &g);
		if (!ret)
			ret = g->ninputs == 4 ?
			      npr_compile_graph(g, sh, npr_backend_evaluator(),
						&cg) : -EINVAL;
		if (!ret)
			ret = npr_ir_write_mem(cg, &xml, &xml_len, &bin,
					       &bin_len);
		if (ret)
			TH_LOG("batch-1 IR: %s", npr_last_error());
		npr_graph_free(cg);
		npr_graph_free(g);
		ASSERT_EQ(ret, 0);
	}

	memset(&n, 0, sizeof(n));
	n.fd = npr_open("cpu", 0);
	ASSERT_GE(n.fd, 0);
	if (via_ir)
		npr_prep_model_load_mem(&ml, xml, xml_len, bin, bin_len);
	else
		npr_prep_model_load(&ml, path, NULL);
	ret = npr_ioctl(n.fd, NPR_IOCTL_MODEL_LOAD, &ml);
	free(xml);
	free(bin);
	if (ret)
		TH_LOG("MODEL_LOAD: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	n.model = ml.handle;
	ms.model = n.model;
	if (!via_ir) {
		/* h and c are [2, batch, 64]: not static until fixed */
		ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_MAKE_STATEFUL, &ms),
			  -EINVAL);
		EXPECT_NE(strstr(npr_last_error(), "dynamic shape"), NULL);
		/* a shape that does not fit the declared one */
		ms.shapes = (uintptr_t)bad;
		ms.num_shapes = 1;
		ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_MAKE_STATEFUL, &ms),
			  -EINVAL);
		EXPECT_NE(strstr(npr_last_error(), "does not fit"), NULL);
		ms.shapes = (uintptr_t)st_shapes;
		ms.num_shapes = 2;
	}
	ret = npr_ioctl(n.fd, NPR_IOCTL_MAKE_STATEFUL, &ms);
	if (ret)
		TH_LOG("MAKE_STATEFUL: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	npr_prep_compile(&co, n.model);
	if (!via_ir) {
		co.shapes = (uintptr_t)in_shape;
		co.num_shapes = 1;
	}
	ret = npr_ioctl(n.fd, NPR_IOCTL_COMPILE, &co);
	if (ret)
		TH_LOG("COMPILE: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	n.exec = co.exec;
	npr_prep_req_create(&rc, n.exec);
	ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	n.req = rc.req;
	mi.handle = n.exec;
	ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_MODEL_INFO, &mi), 0);
	/* input and sr in, output out: the state is gone from the ports */
	ASSERT_EQ(mi.num_inputs, 2);
	ASSERT_EQ(mi.num_outputs, 1);
	n.nin = mi.num_inputs;
	n.nout = mi.num_outputs;
	for (i = 0; i < n.nin; i++)
		port_query(_metadata, &n, i, 0, &n.in[i]);
	port_query(_metadata, &n, 0, 1, &n.out[0]);
	EXPECT_STREQ(n.out[0].name, "output");
	for (k = 0; k < chunks; k++)
		amax = fmax(amax, fabs(gold[k]));
	for (k = 0; k < chunks; k++) {
		float *got;

		ASSERT_TRUE(read_f32_at("silero_vad_v4.stream.input.f32",
					k * 512, in, 512));
		set_named(_metadata, &n, "input", NPR_ELEM_F32, in,
			  sizeof(in));
		set_named(_metadata, &n, "sr", NPR_ELEM_I64, &sr, sizeof(sr));
		net_infer(_metadata, &n);
		ASSERT_EQ(n.out[0].count, 1);
		got = net_output(_metadata, &n, 0);
		md = fmax(md, fabs((double)got[0] - gold[k]));
		free(got);
	}
	TH_LOG("output over %zu chunks: max |diff| %.3g, 1e-4 of absmax %.3g",
	       chunks, md, 1e-4 * amax);
	EXPECT_LE(md, 1e-4 * amax);
	/* the state after the last chunk is the reference's hn, cn */
	for (i = 0; i < 2; i++) {
		struct npr_state_arg sa = { .size = sizeof(sa), .req = n.req };
		char name[32];
		int v;

		for (v = 0; v < 2; v++) {
			sa.index = v;
			sa.name = (uintptr_t)name;
			sa.name_len = sizeof(name);
			ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_STATE_INFO, &sa), 0);
			if (!strcmp(name, st_name[i]))
				break;
		}
		ASSERT_LT(v, 2);
		EXPECT_EQ(sa.count, 2);
		sa.data = (uintptr_t)got_st;
		sa.bytes = sizeof(got_st);
		ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_STATE_GET, &sa), 0);
		ASSERT_EQ(sa.bytes, sizeof(got_st));
		ASSERT_TRUE(read_f32_at(st_gold[i], (chunks - 1) * state, want,
					state));
		amax = md = 0;
		for (k = 0; k < state; k++) {
			amax = fmax(amax, fabs(want[k]));
			md = fmax(md, fabs((double)got_st[k] - want[k]));
		}
		TH_LOG("final %s: max |diff| %.3g, 1e-4 of absmax %.3g",
		       st_name[i], md, 1e-4 * amax);
		EXPECT_LE(md, 1e-4 * amax);
	}
	net_close(_metadata, &n);
}

TEST(silero_vad_stateful_straight_from_onnx)
{
	silero_stream(_metadata, false);
}

TEST(silero_vad_stateful_through_batch1_ir)
{
	silero_stream(_metadata, true);
}

TEST_HARNESS_MAIN
