// SPDX-License-Identifier: MIT
/*
 * Precision agreement of the shared IR networks that selftests/models_test.c
 * does not already compare: every variant (FP16, FP16-INT8, ...) against
 * the FP32 one, or the FP16 one when there is no FP32, on the same input.
 * Tolerances are per network and justified in Documentation/testing.rst.
 *
 * Inputs: image inputs get astronaut.png (the face crop for face networks)
 * resized bilinearly to the input's H x W, BGR 0..255 NCHW (Open Model
 * Zoo's preprocessing; one channel: gray); the others deterministic data:
 * head_pose_angles (yaw, pitch, roll) = (10, -5, 3) degrees, seq_ind = 0
 * then 1s (the LPR decoder's sequence marker).
 *
 * Detectors ([1,1,N,7] outputs) are compared by their detections above
 * 0.5 confidence: each reference detection must have one in the variant
 * of the same label with IoU >= min_iou and a confidence within conf_tol.
 * Other outputs: max |a - b| / (max(ref) - min(ref)) <= rel_tol.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <npuring.h>

#include "tools/image.h"
#include "harness.h"

#define MAX_PORTS	8
#define MAX_VARIANTS	4
#define MAX_DET		64

/* astronaut.png: her face (see models_test.c) */
static const int face_crop[4] = { 181, 57, 271, 178 };
/* her right eye, 36 x 36 px, for the gaze network's eye inputs */
static const int eye_crop[4] = { 188, 84, 224, 120 };

struct port {
	__u32 type, rank;
	__s64 dims[NPR_MAX_RANK];
	size_t count, bytes;
	char name[128];
};

/* compile with ENABLE_PROFILING and count the executed NprQConv nodes */
static bool count_qconv;

struct net {
	int fd;
	__u32 model, exec, req, nin, nout;
	struct port in[MAX_PORTS], out[MAX_PORTS];
};

static bool shared_path(char *buf, size_t len, const char *dir,
			const char *rel)
{
	int n = snprintf(buf, len, "%s/%s/%s", npr_test_shared(), dir, rel);

	return n > 0 && (size_t)n < len && !access(buf, R_OK);
}

static void port_query(struct npr_test *_metadata, struct net *n,
		       __u32 index, int output, struct port *p)
{
	struct npr_port_info pi;
	__u32 i;

	npr_prep_port_info(&pi, n->exec, index, output, p->name,
			   sizeof(p->name));
	ASSERT_EQ(npr_ioctl(n->fd, NPR_IOCTL_PORT_INFO, &pi), 0);
	p->type = pi.elem_type;
	p->rank = pi.rank;
	p->count = 1;
	for (i = 0; i < pi.rank; i++) {
		p->dims[i] = pi.dims[i];
		p->count *= (size_t)pi.dims[i];
	}
	ASSERT_NE(npr_elem_size(p->type), 0);
	p->bytes = p->count * npr_elem_size(p->type);
}

static void net_open(struct npr_test *_metadata, struct net *n,
		     const char *path)
{
	struct npr_model_info mi = { .size = sizeof(mi) };
	struct npr_prop_arg prof = { .param = NPR_PARAM_ENABLE_PROFILING,
				     .value = 1 };
	struct npr_model_load ml;
	struct npr_req_create rc;
	struct npr_compile co;
	__u32 i;
	int ret;

	memset(n, 0, sizeof(*n));
	n->fd = npr_open("cpu", 0);
	ASSERT_GE(n->fd, 0);
	npr_prep_model_load(&ml, path, NULL);
	ret = npr_ioctl(n->fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (ret)
		TH_LOG("%s: MODEL_LOAD: %s", path, npr_last_error());
	ASSERT_EQ(ret, 0);
	n->model = ml.handle;
	npr_prep_compile(&co, n->model);
	if (count_qconv) {
		co.props = (uintptr_t)&prof;
		co.num_props = 1;
	}
	ret = npr_ioctl(n->fd, NPR_IOCTL_COMPILE, &co);
	if (ret)
		TH_LOG("%s: COMPILE: %s", path, npr_last_error());
	ASSERT_EQ(ret, 0);
	n->exec = co.exec;
	npr_prep_req_create(&rc, n->exec);
	ASSERT_EQ(npr_ioctl(n->fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	n->req = rc.req;
	mi.handle = n->exec;
	ASSERT_EQ(npr_ioctl(n->fd, NPR_IOCTL_MODEL_INFO, &mi), 0);
	ASSERT_LE(mi.num_inputs, MAX_PORTS);
	ASSERT_LE(mi.num_outputs, MAX_PORTS);
	n->nin = mi.num_inputs;
	n->nout = mi.num_outputs;
	for (i = 0; i < n->nin; i++)
		port_query(_metadata, n, i, 0, &n->in[i]);
	for (i = 0; i < n->nout; i++)
		port_query(_metadata, n, i, 1, &n->out[i]);
}

static void crop(struct npr_test *_metadata, const struct npr_image *src,
		 const int *box, struct npr_image *dst)
{
	int w = box[2] - box[0], h = box[3] - box[1], y;

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

/* An image input: rank 4, batch 1, 1 or 3 channels, not tiny. */
static bool is_image(const struct port *p)
{
	return p->rank == 4 && p->dims[0] == 1 &&
	       (p->dims[1] == 1 || p->dims[1] == 3) && p->dims[2] >= 16;
}

static void set_inputs(struct npr_test *_metadata, struct net *n,
		       const struct npr_image *photo, const int *box)
{
	__u32 i, k;
	int ret;

	for (i = 0; i < n->nin; i++) {
		const struct port *p = &n->in[i];
		struct npr_tensor_arg ta;
		float *f;
		void *buf;

		buf = malloc(p->bytes + 1);
		ASSERT_NONNULL(buf);
		if (is_image(p)) {
			struct npr_image part = { 0 }, sized = { 0 };
			const int *b = box;
			struct npr_preproc pp;

			if (strstr(p->name, "eye"))
				b = eye_crop;
			if (b)
				crop(_metadata, photo, b, &part);
			ASSERT_EQ(npr_image_resize_bilinear(b ? &part : photo,
							    (int)p->dims[3],
							    (int)p->dims[2],
							    &sized), 0);
			npr_preproc_default(&pp);
			pp.gray = p->dims[1] == 1;
			ASSERT_EQ(npr_image_to_tensor(&sized, &pp, p->type,
						      buf), 0);
			npr_image_free(&sized);
			if (b)
				npr_image_free(&part);
		} else {
			f = malloc(p->count * sizeof(float) + 1);
			ASSERT_NONNULL(f);
			for (k = 0; k < p->count; k++) {
				if (strstr(p->name, "seq_ind"))
					f[k] = k ? 1.0f : 0.0f;
				else if (strstr(p->name, "angles"))
					f[k] = (const float[]){ 10, -5, 3 }[k % 3];
				else
					f[k] = (float)(k % 7) - 3.0f;
			}
			for (k = 0; k < p->count; k++) {
				switch (p->type) {
				case NPR_ELEM_F32:
					((float *)buf)[k] = f[k];
					break;
				case NPR_ELEM_F16:
					((uint16_t *)buf)[k] =
						npr_half_from_float(f[k]);
					break;
				case NPR_ELEM_I32:
					((int32_t *)buf)[k] = (int32_t)f[k];
					break;
				case NPR_ELEM_I64:
					((int64_t *)buf)[k] = (int64_t)f[k];
					break;
				default:
					TH_LOG("input %s: type %u", p->name,
					       p->type);
					ASSERT_TRUE(false);
				}
			}
			free(f);
		}
		npr_prep_tensor(&ta, n->req, i, 0, buf, p->bytes);
		ta.elem_type = p->type;
		ta.rank = p->rank;
		for (k = 0; k < p->rank; k++)
			ta.dims[k] = p->dims[k];
		ret = npr_ioctl(n->fd, NPR_IOCTL_SET_TENSOR, &ta);
		free(buf);
		if (ret)
			TH_LOG("SET_TENSOR %s: %s", p->name, npr_last_error());
		ASSERT_EQ(ret, 0);
	}
}

/* Output @index as floats; caller frees. */
static float *get_output(struct npr_test *_metadata, struct net *n,
			 __u32 index)
{
	const struct port *p = &n->out[index];
	struct npr_tensor_arg ta;
	float *out;
	void *raw;
	size_t i;

	ASSERT_TRUE(p->type == NPR_ELEM_F32 || p->type == NPR_ELEM_F16);
	raw = malloc(p->bytes);
	out = malloc(p->count * sizeof(float) + 1);
	ASSERT_NONNULL(raw);
	ASSERT_NONNULL(out);
	npr_prep_tensor(&ta, n->req, index, 1, raw, p->bytes);
	ASSERT_EQ(npr_ioctl(n->fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	for (i = 0; i < p->count; i++)
		out[i] = p->type == NPR_ELEM_F32 ? ((float *)raw)[i] :
			 npr_half_to_float(((uint16_t *)raw)[i]);
	free(raw);
	return out;
}

/* The outputs of one variant on the photo. */
struct result {
	int nqconv;
	__u32 nout;
	struct port port[MAX_PORTS];
	float *out[MAX_PORTS];
};

/* the NprQConv nodes the last inference of @n executed (the profile) */
static int qconv_count(struct npr_test *_metadata, struct net *n)
{
	struct npr_profile p = { .size = sizeof(p), .req = n->req };
	struct npr_profile_rec *recs;
	int count = 0;
	__u32 i;

	if (npr_ioctl(n->fd, NPR_IOCTL_PROFILE, &p) != -EMSGSIZE)
		return -1;
	recs = calloc(p.count, sizeof(*recs));
	if (!recs)
		return -1;
	p.recs = (uintptr_t)recs;
	if (npr_ioctl(n->fd, NPR_IOCTL_PROFILE, &p)) {
		free(recs);
		return -1;
	}
	for (i = 0; i < p.count; i++)
		count += recs[i].status == NPR_PROF_EXECUTED &&
			 !strcmp(recs[i].type, "NprQConv");
	free(recs);
	return count;
}

static void run_variant(struct npr_test *_metadata, const char *rel,
			const int *box, struct result *r)
{
	struct npr_image photo = { 0 };
	struct npr_infer inf;
	char path[4096];
	struct net n;
	__u32 i;
	int ret;

	if (!shared_path(path, sizeof(path), "models/ir", rel))
		SKIP(return, "model %s not found", path);
	ASSERT_TRUE(shared_path(path, sizeof(path), "images",
				"astronaut.png"));
	ASSERT_EQ(npr_image_load_png(path, &photo), 0);
	shared_path(path, sizeof(path), "models/ir", rel);
	net_open(_metadata, &n, path);
	set_inputs(_metadata, &n, &photo, box);
	npr_image_free(&photo);
	npr_prep_infer(&inf, n.req);
	ret = npr_ioctl(n.fd, NPR_IOCTL_INFER, &inf);
	if (ret)
		TH_LOG("INFER: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	if (count_qconv)
		r->nqconv = qconv_count(_metadata, &n);
	r->nout = n.nout;
	for (i = 0; i < n.nout; i++) {
		r->port[i] = n.out[i];
		r->out[i] = get_output(_metadata, &n, i);
	}
	EXPECT_EQ(npr_close(n.fd), 0);
}

struct det {
	float label, conf, box[4];
};

static int detections(const float *o, size_t count, struct det *d)
{
	size_t i;
	int n = 0;

	for (i = 0; i + 7 <= count && n < MAX_DET; i += 7) {
		if (o[i] < 0)
			break;
		if (o[i + 2] < 0.5f)
			continue;
		d[n].label = o[i + 1];
		d[n].conf = o[i + 2];
		memcpy(d[n].box, &o[i + 3], sizeof(d[n].box));
		n++;
	}
	return n;
}

static double iou(const struct det *a, const struct det *b)
{
	double x0 = fmax(a->box[0], b->box[0]), y0 = fmax(a->box[1], b->box[1]);
	double x1 = fmin(a->box[2], b->box[2]), y1 = fmin(a->box[3], b->box[3]);
	double in = fmax(0, x1 - x0) * fmax(0, y1 - y0);
	double ua = (a->box[2] - a->box[0]) * (a->box[3] - a->box[1]) +
		    (b->box[2] - b->box[0]) * (b->box[3] - b->box[1]) - in;

	return ua > 0 ? in / ua : 0;
}

/*
 * One network: @variants[0] is the reference.  @rel_tol for tensors,
 * @min_iou and @conf_tol for detectors.
 */
struct network {
	const char *dir;
	const char *variants[MAX_VARIANTS];
	const int *box;
	double rel_tol, int8_tol;
	double abs_tol;
	double min_iou, conf_tol;
};

static void compare(struct npr_test *_metadata, const struct network *nw,
		    const struct result *ref, const struct result *r,
		    const char *name)
{
	__u32 i;

	ASSERT_EQ(ref->nout, r->nout);
	for (i = 0; i < ref->nout; i++) {
		const struct port *p = &ref->port[i];
		double rel_tol = strstr(name, "INT8") ? nw->int8_tol :
				 nw->rel_tol;
		const float *o = NULL;
		__u32 j2;
		size_t k;

		/* variants may list their outputs in another order */
		for (j2 = 0; j2 < r->nout; j2++)
			if (!strcmp(r->port[j2].name, p->name))
				o = r->out[j2];
		if (!o) {
			TH_LOG("%s: no output %s", name, p->name);
			ASSERT_TRUE(false);
		}
		for (j2 = 0; j2 < r->nout; j2++)
			if (!strcmp(r->port[j2].name, p->name))
				ASSERT_EQ(p->count, r->port[j2].count);
		if (p->rank == 4 && p->dims[3] == 7 && p->dims[1] == 1) {
			struct det a[MAX_DET], b[MAX_DET];
			int na = detections(ref->out[i], p->count, a);
			int nb = detections(o, p->count, b);
			double worst_iou = 1, worst_conf = 0;
			int j, m;

			for (j = 0; j < na; j++) {
				double best = 0, dc = 1;

				for (m = 0; m < nb; m++) {
					double v = iou(&a[j], &b[m]);

					if (b[m].label == a[j].label &&
					    v > best) {
						best = v;
						dc = fabs(a[j].conf - b[m].conf);
					}
				}
				worst_iou = fmin(worst_iou, best);
				worst_conf = fmax(worst_conf, dc);
			}
			TH_LOG("%s %s: %d vs %d detections, min IoU %.4f, max |dconf| %.4f",
			       name, p->name, na, nb, worst_iou, worst_conf);
			EXPECT_GE(na, 1);
			EXPECT_GE(worst_iou, nw->min_iou);
			EXPECT_LE(worst_conf, nw->conf_tol);
		} else {
			float lo = INFINITY, hi = -INFINITY;
			double md = 0, rel;

			for (k = 0; k < p->count; k++) {
				lo = fminf(lo, ref->out[i][k]);
				hi = fmaxf(hi, ref->out[i][k]);
				md = fmax(md, fabs((double)ref->out[i][k] -
						   o[k]));
			}
			rel = hi > lo ? md / (hi - lo) : md;
			TH_LOG("%s %s: max |diff| %.6g, range %.6g, relative %.6f",
			       name, p->name, md, (double)(hi - lo), rel);
			/* a single value has no range: absolute tolerance */
			if (nw->abs_tol)
				EXPECT_LE(md, strstr(name, "INT8") ?
					  nw->abs_tol : nw->abs_tol / 5);
			else
				EXPECT_LE(rel, rel_tol);
		}
	}
}

static void agree(struct npr_test *_metadata, const struct network *nw)
{
	struct result ref = { 0 }, r;
	char rel[512];
	int v;
	__u32 i;

	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s (set NPR_SHARED)",
		     npr_test_shared());
	snprintf(rel, sizeof(rel), "%s/%s/%s.xml", nw->dir, nw->variants[0],
		 nw->dir);
	run_variant(_metadata, rel, nw->box, &ref);
	for (v = 1; v < MAX_VARIANTS && nw->variants[v]; v++) {
		memset(&r, 0, sizeof(r));
		snprintf(rel, sizeof(rel), "%s/%s/%s.xml", nw->dir,
			 nw->variants[v], nw->dir);
		run_variant(_metadata, rel, nw->box, &r);
		compare(_metadata, nw, &ref, &r, nw->variants[v]);
		for (i = 0; i < r.nout; i++)
			free(r.out[i]);
	}
	for (i = 0; i < ref.nout; i++)
		free(ref.out[i]);
}

FIXTURE(prec) {
	int unused;
};

FIXTURE_VARIANT(prec) {
	struct network nw;
};

FIXTURE_SETUP(prec)
{
}

FIXTURE_TEARDOWN(prec)
{
}

FIXTURE_VARIANT_ADD(prec, face_detection_adas) { .nw = {
	"face-detection-adas-0001", { "FP16-v11", "FP16-INT8" },
	.min_iou = 0.9, .conf_tol = 0.02 } };
FIXTURE_VARIANT_ADD(prec, pedestrian_detection_adas) { .nw = {
	"pedestrian-detection-adas-0002", { "FP16-v11", "FP16-INT8" },
	.min_iou = 0.8, .conf_tol = 0.3 } };
FIXTURE_VARIANT_ADD(prec, gaze_estimation) { .nw = {
	"gaze-estimation-adas-0002", { "FP16-v11", "FP16-INT8" },
	.box = face_crop, .rel_tol = 0.01, .int8_tol = 0.1 } };
FIXTURE_VARIANT_ADD(prec, head_pose_estimation) { .nw = {
	"head-pose-estimation-adas-0001", { "FP16-v11", "FP16-INT8" },
	.box = face_crop, .abs_tol = 3.0 } };
FIXTURE_VARIANT_ADD(prec, license_plate_recognition) { .nw = {
	"license-plate-recognition-barrier-0001", { "FP16", "FP16-INT8" },
	.rel_tol = 0.01, .int8_tol = 0.1 } };
FIXTURE_VARIANT_ADD(prec, person_attributes) { .nw = {
	"person-attributes-recognition-crossroad-0230",
	{ "FP32", "FP16", "FP16-INT8" }, .rel_tol = 0.01, .int8_tol = 0.2 } };
FIXTURE_VARIANT_ADD(prec, person_reidentification) { .nw = {
	"person-reidentification-retail-0287",
	{ "FP32", "FP16", "FP16-INT8" }, .rel_tol = 0.01, .int8_tol = 0.2 } };
FIXTURE_VARIANT_ADD(prec, super_resolution_1032) { .nw = {
	"single-image-super-resolution-1032",
	{ "FP32", "FP16", "FP16-INT8" }, .rel_tol = 0.01, .int8_tol = 0.3 } };
FIXTURE_VARIANT_ADD(prec, super_resolution_1033) { .nw = {
	"single-image-super-resolution-1033",
	{ "FP32", "FP16", "FP16-INT8" }, .rel_tol = 0.01, .int8_tol = 0.25 } };
FIXTURE_VARIANT_ADD(prec, text_super_resolution) { .nw = {
	"text-image-super-resolution-0001",
	{ "FP32", "FP16", "FP16-INT8" }, .rel_tol = 0.01, .int8_tol = 0.1 } };
FIXTURE_VARIANT_ADD(prec, vehicle_attributes) { .nw = {
	"vehicle-attributes-recognition-barrier-0039",
	{ "FP32", "FP16", "FP16-INT8" }, .rel_tol = 0.01, .int8_tol = 0.3 } };

TEST_F_TIMEOUT(prec, variants_agree, 600)
{
	agree(_metadata, &variant->nw);
}

/* The single-variant networks: they load, compile and run. */
FIXTURE_VARIANT_ADD(prec, person_detection_retail) { .nw = {
	"person-detection-retail-0013", { "FP32" } } };
FIXTURE_VARIANT_ADD(prec, squeezenet) { .nw = {
	"squeezenet1.1", { "FP16" } } };

/*
 * OpenVINO INT8 IR on the int8 kernels (the FakeQuantize rules of
 * lib/passes/lowp.c).  The FP16-INT8 variant's agreement with the FP32
 * one must be no worse than that of the same INT8 IR computed in f32
 * (NPR_LOWP_OFF=1) by more than LOWP_MARGIN: relative error (tensors),
 * IoU and confidence (detectors); the same detections and the same top
 * class of each output wherever the f32 emulation has the FP32 one's.
 * The int8 path differs from the emulation by a rounding step here and
 * there (an exact integer sum against a float one, rounded once), which
 * after tens of layers measures at most 0.02 of the range (see
 * Documentation/testing.rst); LOWP_MARGIN is 0.03.  The pass must have
 * made convolutions int8 (NprQConv nodes executed, from the profile),
 * NPR_LOWP_OFF=1 none, and every int8 kernel this CPU has (NPR_INT8_ISA)
 * the bits of the scalar one.
 */
#define LOWP_MARGIN	0.03

struct agreement {
	double rel, iou, dconf;
	int ndet, top[MAX_PORTS];
};

static int top_of(const float *o, size_t count)
{
	size_t i, best = 0;

	for (i = 1; i < count; i++)
		if (o[i] > o[best])
			best = i;
	return (int)best;
}

static void measure(struct npr_test *_metadata, const struct result *ref,
		    const struct result *r, struct agreement *a)
{
	__u32 i;

	memset(a, 0, sizeof(*a));
	a->iou = 1;
	ASSERT_EQ(ref->nout, r->nout);
	for (i = 0; i < ref->nout; i++) {
		const struct port *p = &ref->port[i];
		const float *o = NULL;
		__u32 j;
		size_t k;

		for (j = 0; j < r->nout; j++)
			if (!strcmp(r->port[j].name, p->name) &&
			    r->port[j].count == p->count)
				o = r->out[j];
		ASSERT_NONNULL(o);
		a->top[i] = top_of(o, p->count);
		if (p->rank == 4 && p->dims[3] == 7 && p->dims[1] == 1) {
			struct det d0[MAX_DET], d1[MAX_DET];
			int n0 = detections(ref->out[i], p->count, d0);
			int n1 = detections(o, p->count, d1), x, y;

			a->ndet = n1;
			for (x = 0; x < n0; x++) {
				double best = 0, dc = 1;

				for (y = 0; y < n1; y++)
					if (d1[y].label == d0[x].label &&
					    iou(&d0[x], &d1[y]) > best) {
						best = iou(&d0[x], &d1[y]);
						dc = fabs(d0[x].conf -
							  d1[y].conf);
					}
				a->iou = fmin(a->iou, best);
				a->dconf = fmax(a->dconf, dc);
			}
		} else {
			float lo = INFINITY, hi = -INFINITY;
			double md = 0;

			for (k = 0; k < p->count; k++) {
				lo = fminf(lo, ref->out[i][k]);
				hi = fmaxf(hi, ref->out[i][k]);
				md = fmax(md, fabs((double)ref->out[i][k] -
						   o[k]));
			}
			a->rel = fmax(a->rel, hi > lo ? md / (hi - lo) : md);
		}
	}
}

static void free_result(struct result *r)
{
	__u32 i;

	for (i = 0; i < r->nout; i++)
		free(r->out[i]);
	memset(r, 0, sizeof(*r));
}

static bool isa_ok(const char *isa)
{
	unsigned int a, b, c, d;

	__builtin_cpu_init();
	if (!strcmp(isa, "vnni512"))
		return __builtin_cpu_supports("avx512vnni") &&
		       __builtin_cpu_supports("avx512bw") &&
		       __builtin_cpu_supports("avx512vl");
	if (!strcmp(isa, "avxvnni"))
		/* CPUID.(7,1):EAX bit 4 */
		return __get_cpuid_count(7, 1, &a, &b, &c, &d) &&
		       (a >> 4 & 1) && __builtin_cpu_supports("avx2");
	if (!strcmp(isa, "avx2"))
		return __builtin_cpu_supports("avx2") &&
		       __builtin_cpu_supports("fma");
	return true;
}

static bool same_bits(const struct result *a, const struct result *b)
{
	__u32 i;

	if (a->nout != b->nout)
		return false;
	for (i = 0; i < a->nout; i++)
		if (a->port[i].count != b->port[i].count ||
		    memcmp(a->out[i], b->out[i],
			   a->port[i].count * sizeof(float)))
			return false;
	return true;
}

FIXTURE(lowp) {
	int unused;
};

FIXTURE_VARIANT(lowp) {
	const char *dir, *fp32;
	int min_qconv;		/* NprQConv nodes at least */
};

FIXTURE_SETUP(lowp)
{
}

FIXTURE_TEARDOWN(lowp)
{
	unsetenv("NPR_LOWP_OFF");
	unsetenv("NPR_INT8_ISA");
	count_qconv = false;
}

FIXTURE_VARIANT_ADD(lowp, face_detection_retail) {
	"face-detection-retail-0004", "FP32-v10", 20 };
FIXTURE_VARIANT_ADD(lowp, person_attributes) {
	"person-attributes-recognition-crossroad-0230", "FP32", 10 };
FIXTURE_VARIANT_ADD(lowp, vehicle_attributes) {
	"vehicle-attributes-recognition-barrier-0039", "FP32", 5 };

TEST_F_TIMEOUT(lowp, int8_ir, 900)
{
	static const char *const isas[] = { "scalar", "avx2", "avxvnni",
					    "vnni512" };
	struct result ref = { 0 }, on = { 0 }, off = { 0 }, r = { 0 };
	struct agreement a_on, a_off;
	char rel[512];
	__u32 i;
	size_t k;

	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s (set NPR_SHARED)",
		     npr_test_shared());
	snprintf(rel, sizeof(rel), "%s/%s/%s.xml", variant->dir,
		 variant->fp32, variant->dir);
	run_variant(_metadata, rel, NULL, &ref);
	snprintf(rel, sizeof(rel), "%s/FP16-INT8/%s.xml", variant->dir,
		 variant->dir);
	count_qconv = true;
	setenv("NPR_LOWP_OFF", "1", 1);
	run_variant(_metadata, rel, NULL, &off);
	unsetenv("NPR_LOWP_OFF");
	run_variant(_metadata, rel, NULL, &on);
	measure(_metadata, &ref, &off, &a_off);
	measure(_metadata, &ref, &on, &a_on);
	TH_LOG("%s: NprQConv %d (NPR_LOWP_OFF: %d); against %s: int8 rel %.4f IoU %.4f dconf %.4f, f32 emulation rel %.4f IoU %.4f dconf %.4f",
	       variant->dir, on.nqconv, off.nqconv, variant->fp32, a_on.rel,
	       a_on.iou, a_on.dconf, a_off.rel, a_off.iou, a_off.dconf);
	EXPECT_EQ(off.nqconv, 0);
	EXPECT_GE(on.nqconv, variant->min_qconv);
	EXPECT_LE(a_on.rel, a_off.rel + LOWP_MARGIN);
	EXPECT_GE(a_on.iou, a_off.iou - LOWP_MARGIN);
	EXPECT_LE(a_on.dconf, a_off.dconf + LOWP_MARGIN);
	EXPECT_EQ(a_on.ndet, a_off.ndet);
	for (i = 0; i < ref.nout; i++) {
		int want = top_of(ref.out[i], ref.port[i].count);

		if (ref.port[i].count > 1 && a_off.top[i] == want)
			EXPECT_EQ(a_on.top[i], want);
	}
	/* every int8 kernel: the bits of the default one */
	for (k = 0; k < sizeof(isas) / sizeof(isas[0]); k++) {
		if (!isa_ok(isas[k])) {
			TH_LOG("this CPU has no %s", isas[k]);
			continue;
		}
		setenv("NPR_INT8_ISA", isas[k], 1);
		run_variant(_metadata, rel, NULL, &r);
		TH_LOG("NPR_INT8_ISA=%s: %s", isas[k],
		       same_bits(&r, &on) ? "the same bits" : "DIFFERENT");
		EXPECT_TRUE(same_bits(&r, &on));
		EXPECT_EQ(r.nqconv, on.nqconv);
		free_result(&r);
	}
	free_result(&ref);
	free_result(&on);
	free_result(&off);
}

TEST_HARNESS_MAIN
