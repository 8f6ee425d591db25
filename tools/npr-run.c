// SPDX-License-Identifier: MIT
/*
 * npr-run - run a model on a photo or on raw tensors and print what came
 * out (top-k classes, SSD detections, or a summary of each output) with the
 * load, compile, first and steady-state inference times.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "npuring.h"
#include "image.h"
#include "args.h"
#include "json.h"
#include "tool.h"

#define MAX_ARGS	64	/* --input and --shape options each */
#define NUM_VALUES	8	/* values shown of a large output */
#define MAX_TOP		1001

struct port {
	char *name;
	unsigned int type;
	unsigned int rank;
	int64_t dims[NPR_MAX_RANK];
	size_t numel, bytes;
	void *data;		/* in the port's element type */
	float *f;		/* outputs, converted to f32 */
	const char *file;	/* inputs: --input file, or NULL */
	bool image;		/* inputs: filled from -i */
};

static struct {
	const char *dev, *model, *image, *dump, *cache_dir;
	const char *inputs[MAX_ARGS], *props[MAX_ARGS];
	int nprops;
	const char *weights;	/* --weights: a weightless blob's */
	struct npr_arg_shape *shapes;
	int ninputs, nshapes;
	int top, niter;
	float threshold;
	bool json, ring;
	bool info;
	struct npr_preproc pp;
} opt = { .dev = "cpu", .top = 5, .niter = 1, .threshold = 0.5f };

/* --json: the writer, else NULL for text */
static struct npr_json *js;

static const char help[] =
"usage: npr-run -d DEVICE -m MODEL (-i PHOTO | --input NAME=FILE ...)\n"
"               [--shape NAME=D0,D1,...] [--top K] [--threshold T]\n"
"               [--niter N] [--dump DIR] [--json] [--cache-dir DIR]\n"
"               [--prop NAME=VALUE ...] [--weights FILE]\n"
"               [--rgb] [--scale S] [--mean A,B,C] [--std A,B,C]\n"
"       npr-run -d DEVICE --info\n"
"       npr-run --version\n"
"\n"
"Load an OpenVINO IR model (the .bin next to the .xml) or an ONNX model\n"
"and compile it for DEVICE (or import a compiled-model blob written by\n"
"npr-compile), run it once (N times with --niter) and print the timings and the\n"
"outputs: the top-K classes of a classifier, the boxes of an SSD detector\n"
"([1,1,N,7] output), or the shape and first values of anything else.\n"
"\n"
"  -d, --device DEV      device to open (default cpu)\n"
"  -m, --model MODEL     an IR .xml (with its .bin), an ONNX .onnx, or a\n"
"                        compiled-model blob of npr-compile\n"
"  -i, --image PHOTO     a PNG or JPEG photo (told by its contents, not\n"
"                        its name) for the model's image input: the\n"
"                        first input of shape [N,C,H,W] with C = 1 or 3\n"
"      --input NAME=FILE[:TYPE]\n"
"                        raw little-endian values for input NAME, of\n"
"                        TYPE f32 (the default), f16, i64, i32 or u8,\n"
"                        converted to the input's element type; the\n"
"                        file holds exactly as many values as the input\n"
"      --shape SHAPE     an input's shape: NAME=1,3,224,224,\n"
"                        NAME[1,3,224,224] or [1,3,224,224] for the only\n"
"                        input; may repeat; a 0 dimension is an empty\n"
"                        tensor (NAME=1,4,0,32)\n"
"      --top K           classes shown for a classifier (default 5)\n"
"      --threshold T     lowest confidence of a detection (default 0.5)\n"
"      --niter N         run N times; the median of runs 2..N is the\n"
"                        steady-state time (default 1)\n"
"      --dump DIR        write each output as DIR/NAME.f32 (f32, little-\n"
"                        endian; '/' in NAME becomes '_') and\n"
"                        DIR/outputs.json describing them\n"
"      --json            print one JSON object instead of text\n"
"      --info            describe DEVICE (or say why it cannot be opened)\n"
"                        and exit\n"
"      --prop NAME=VALUE a device property by its name, set before the\n"
"                        model is compiled, e.g. INFERENCE_NUM_THREADS=1\n"
"      --weights FILE    the weights file of a weightless blob (npr-compile\n"
"                        --prop CACHE_MODE=OPTIMIZE_SIZE): the model's .bin\n"
"                        or .onnx, read at import (WEIGHTS_PATH)\n"
"      --cache-dir DIR   compile through the model cache in DIR\n"
"                        (CACHE_DIR); the model is loaded deferred\n"
"                        (NPR_MODEL_LOAD_DEFER), so a hit reads none of\n"
"                        its files unless --shape needs its inputs\n"
"      --ring            run each inference as an INFER job through the\n"
"                        device's ring (SUBMIT + REAP) instead of the\n"
"                        synchronous INFER call\n"
"  -h, --help            show this help\n"
"      --version         print the version\n"
"\n"
"benchmark_app's -niter, -shape and -data_shape work too.\n"
"\n"
"Preprocessing of -i, Open Model Zoo's by default: the photo is resized\n"
"to the input's W x H with bilinear interpolation (pixel centres\n"
"aligned, no antialiasing), channels in B, G, R order, values 0..255,\n"
"laid out N, C, H, W and converted to the input's element type; every\n"
"image of a batch gets the same photo.  A one-channel input gets the\n"
"luma 0.299 R + 0.587 G + 0.114 B.  Each value is\n"
"    (pixel * S - mean[c]) / std[c]\n"
"      --rgb             channels in R, G, B order\n"
"      --scale S         multiply pixels by S first (default 1)\n"
"      --mean A,B,C      subtract per channel, in the tensor's channel\n"
"                        order (default 0,0,0)\n"
"      --std A,B,C       divide per channel, in the tensor's channel order\n"
"                        (default 1,1,1)\n"
"\n"
"Exit status: 0 on success, 1 on failure, 2 on a usage error.\n";

#define usage_error npr_tool_usage
#define fail npr_tool_fail

/* A library call failed: "npr-run: <what>: <errno text>: <detail>". */
static void __attribute__((noreturn)) fail_lib(const char *what, int err)
{
	const char *detail = npr_last_error();

	fprintf(stderr, "npr-run: %s: %s%s%s\n", what, strerror(-err),
		*detail ? ": " : "", detail);
	exit(1);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		fail("out of memory (%zu bytes)", n);
	return p;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- option parsing ---- */

/*
 * Which of @args ("NAME=VALUE") names port @name: the value, or NULL.
 * Matching against the known port names lets a name contain '='.
 */
static const char *arg_for(const char *const *args, int n, const char *name)
{
	size_t len = strlen(name);
	int i;

	for (i = 0; i < n; i++)
		if (!strncmp(args[i], name, len) && args[i][len] == '=')
			return args[i] + len + 1;
	return NULL;
}

/* Every NAME=VALUE in @args names one port, and no port twice. */
static void check_arg_names(const char *opt_name, const char *const *args,
			    int n, const struct port *ports, int nports)
{
	int i, k, hits;

	for (i = 0; i < n; i++) {
		for (k = 0; k < nports; k++)
			if (arg_for(&args[i], 1, ports[k].name))
				break;
		if (k == nports) {
			char names[1024] = "";
			size_t o = 0;

			for (k = 0; k < nports && o < sizeof(names); k++)
				o += snprintf(names + o, sizeof(names) - o,
					      "%s%s", k ? ", " : "",
					      ports[k].name);
			usage_error("%s %s: the model has no input of that name; its inputs: %s",
				    opt_name, args[i], names);
		}
	}
	for (k = 0; k < nports; k++) {
		for (i = 0, hits = 0; i < n; i++)
			hits += arg_for(&args[i], 1, ports[k].name) != NULL;
		if (hits > 1)
			usage_error("%s: input %s given %d times", opt_name,
				    ports[k].name, hits);
	}
}

/* ---- ports ---- */

static void port_set_shape(struct port *p, unsigned int rank,
			   const __s64 *dims)
{
	unsigned int i;

	p->rank = rank;
	p->numel = 1;
	for (i = 0; i < rank; i++) {
		p->dims[i] = dims[i];
		if (dims[i] >= 0)	/* a dynamic -1 counts as 1 */
			p->numel *= dims[i];
	}
	p->bytes = p->numel * npr_elem_size(p->type);
}

static bool port_dynamic(const struct port *p)
{
	unsigned int i;

	for (i = 0; i < p->rank; i++)
		if (p->dims[i] < 0)
			return true;
	return false;
}

static void port_query(int fd, uint32_t handle, int idx, bool output,
		       struct port *p)
{
	struct npr_port_info pi;
	char small[256];
	int err;

	npr_prep_port_info(&pi, handle, idx, output, small, sizeof(small));
	err = npr_ioctl(fd, NPR_IOCTL_PORT_INFO, &pi);
	free(p->name);
	if (err == -EMSGSIZE) {
		p->name = xmalloc(pi.name_len);
		npr_prep_port_info(&pi, handle, idx, output, p->name,
				   pi.name_len);
		err = npr_ioctl(fd, NPR_IOCTL_PORT_INFO, &pi);
	} else {
		p->name = strdup(small);
		if (!p->name)
			fail("out of memory");
	}
	if (err)
		fail_lib("PORT_INFO", err);
	p->type = pi.elem_type;
	port_set_shape(p, pi.rank, pi.dims);
}

static void shape_str(const struct port *p, char *buf, size_t len)
{
	size_t o;
	unsigned int i;

	o = snprintf(buf, len, "[");
	for (i = 0; i < p->rank && o < len; i++)
		o += snprintf(buf + o, len - o, "%s%lld", i ? "," : "",
			      (long long)p->dims[i]);
	if (o < len)
		snprintf(buf + o, len - o, "]");
}

/* The -i target: rank 4, N C H W with C = 1 or 3. */
static bool image_like(const struct port *p)
{
	return p->rank == 4 && (p->dims[1] == 1 || p->dims[1] == 3) &&
	       p->dims[0] >= 1 && p->dims[2] >= 1 && p->dims[3] >= 1;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* ---- filling inputs ---- */

static void fill_image(struct port *p, struct npr_image *orig)
{
	struct npr_image sized = { 0 };
	struct npr_preproc pp = opt.pp;
	size_t per_image = p->numel / p->dims[0], n, i;
	float *f = NULL;
	int err;

	if (!npr_tensor_elem_ok(p->type))
		fail("input %s: element type %s cannot take an image", p->name,
		     npr_elem_name(p->type));
	if (p->dims[2] > INT_MAX || p->dims[3] > INT_MAX)
		fail("input %s: image size too large", p->name);
	err = npr_image_load(opt.image, orig);
	if (err)
		fail("%s", npr_image_last_error());
	err = npr_image_resize_bilinear(orig, (int)p->dims[3],
					(int)p->dims[2], &sized);
	if (err)
		fail("%s: resize to %lldx%lld: %s", opt.image,
		     (long long)p->dims[3], (long long)p->dims[2],
		     npr_image_last_error());
	pp.gray = p->dims[1] == 1;
	if (p->type != NPR_ELEM_F32 && p->type != NPR_ELEM_F16)
		f = xmalloc(per_image * sizeof(float));
	for (n = 0; n < (size_t)p->dims[0]; n++) {
		size_t at = n * per_image;

		if (f) {
			err = npr_image_to_tensor(&sized, &pp, NPR_ELEM_F32, f);
			for (i = 0; !err && i < per_image; i++)
				npr_tensor_elem_set(p->data, p->type, at + i, f[i]);
		} else {
			err = npr_image_to_tensor(&sized, &pp, p->type,
				(char *)p->data + at * npr_elem_size(p->type));
		}
		if (err)
			fail("input %s: %s", p->name, npr_image_last_error());
	}
	free(f);
	npr_image_free(&sized);
}

/*
 * Element @i of a file of little-endian @ftype values into element @i of
 * @p's buffer: copied when the types agree (int64 token ids stay exact),
 * else converted through f32 as npr_tensor_elem_set() rounds.
 */
static void raw_elem(struct port *p, const uint8_t *buf, unsigned int ftype,
		     size_t i)
{
	size_t es = npr_elem_size(ftype), b;
	uint8_t host[8];

	for (b = 0; b < es; b++)
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		host[b] = buf[i * es + es - 1 - b];
#else
		host[b] = buf[i * es + b];
#endif
	if (ftype == p->type)
		memcpy((uint8_t *)p->data + i * es, host, es);
	else
		npr_tensor_elem_set(p->data, p->type, i,
				    npr_tensor_elem_get(host, ftype, 0));
}

static void fill_raw(struct port *p)
{
	char msg[512], *file;
	unsigned int ftype;
	struct stat st;
	uint8_t *buf;
	size_t i, es;
	FILE *f;

	if (npr_arg_raw_input(p->file, &file, &ftype, msg, sizeof(msg)))
		usage_error("%s", msg);
	es = npr_elem_size(ftype);
	if (!npr_tensor_elem_ok(p->type))
		fail("--input %s: element type %s is not supported", p->name,
		     npr_elem_name(p->type));
	f = fopen(file, "rb");
	if (!f || fstat(fileno(f), &st))
		fail("%s: %s", file, strerror(errno));
	if ((uint64_t)st.st_size != p->numel * es)
		fail("%s: %lld bytes, but input %s needs %zu %s values (%zu bytes)",
		     file, (long long)st.st_size, p->name, p->numel,
		     npr_elem_name(ftype), p->numel * es);
	buf = xmalloc(p->numel * es + 1);
	if (fread(buf, es, p->numel, f) != p->numel)
		fail("%s: %s", file, ferror(f) ? strerror(errno) :
		     "file shrank while reading");
	for (i = 0; i < p->numel; i++)
		raw_elem(p, buf, ftype, i);
	free(buf);
	free(file);
	fclose(f);
}

/*
 * Decide where each input's data comes from: --input by name, -i for the
 * first image-like input not named by --input.  Report all that are left.
 */
static void assign_inputs(struct port *ins, int nin)
{
	char missing[1024] = "";
	size_t o = 0;
	int i, image = -1;

	for (i = 0; i < nin; i++) {
		ins[i].file = arg_for(opt.inputs, opt.ninputs, ins[i].name);
		if (!ins[i].file && opt.image && image < 0 &&
		    image_like(&ins[i])) {
			ins[i].image = true;
			image = i;
		}
	}
	if (opt.image && image < 0)
		usage_error("-i %s: the model has no image input left ([N,C,H,W] with C = 1 or 3)",
		     opt.image);
	for (i = 0; i < nin; i++)
		if (!ins[i].file && !ins[i].image && o < sizeof(missing))
			o += snprintf(missing + o, sizeof(missing) - o,
				      "%s%s", o ? ", " : "", ins[i].name);
	if (o)
		usage_error("no data for input%s %s: give -i PHOTO or --input NAME=FILE[:TYPE]",
		     strchr(missing, ',') ? "s" : "", missing);
}

/* ---- output interpretation ---- */

/* An SSD DetectionOutput: [1,1,N,7] rows of image_id, label, conf, box. */
static bool is_detector(const struct port *p)
{
	return p->rank == 4 && p->dims[0] == 1 && p->dims[1] == 1 &&
	       p->dims[2] >= 1 && p->dims[3] == 7;
}

/*
 * A classifier: [N,C] or [N,C,1,1] holding 1000 or 1001 (ImageNet, with
 * background) scores per image, or any C >= 2 values that form a
 * probability distribution.  Other small vectors (landmarks, angles,
 * sigmoid attributes) are printed as values.
 */
static bool is_classifier(const struct port *p)
{
	int64_t c = p->rank >= 2 ? p->dims[1] : 0;
	size_t i, n;

	if (!(p->rank == 2 || (p->rank == 4 && p->dims[2] == 1 &&
			       p->dims[3] == 1)))
		return false;
	if (p->dims[0] < 1 || c < 2)
		return false;
	if (c == 1000 || c == 1001)
		return true;
	for (n = 0; n < (size_t)p->dims[0]; n++) {
		const float *f = p->f + n * c;
		double sum = 0;

		for (i = 0; i < (size_t)c; i++) {
			if (!(f[i] >= -1e-3f && f[i] <= 1.001f))
				return false;
			sum += f[i];
		}
		if (fabs(sum - 1) > 0.01)
			return false;
	}
	return true;
}

static const float *scores_for_sort;

/* Higher scores first, NaN last, ties by index. */
static int cmp_score_desc(const void *a, const void *b)
{
	int i = *(const int *)a, j = *(const int *)b;
	float x = scores_for_sort[i], y = scores_for_sort[j];

	if (isnan(x) != isnan(y))
		return isnan(x) ? 1 : -1;
	if (x != y && !isnan(x))
		return x < y ? 1 : -1;
	return i - j;
}

/* All indices of @f, best score first. */
static int *rank_scores(const float *f, size_t n)
{
	int *idx = xmalloc(sizeof(int) * n);
	size_t i;

	for (i = 0; i < n; i++)
		idx[i] = (int)i;
	scores_for_sort = f;
	qsort(idx, n, sizeof(int), cmp_score_desc);
	return idx;
}

/* ---- JSON ---- */

static void json_shape(struct npr_json *j, const struct port *p)
{
	unsigned int i;

	npr_json_begin_array(j);
	for (i = 0; i < p->rank; i++)
		npr_json_int(j, p->dims[i]);
	npr_json_end_array(j);
}

/* @v rounded to @digits significant digits, as the text shows it */
static double sig(double v, int digits)
{
	char buf[40];

	snprintf(buf, sizeof(buf), "%.*g", digits, v);
	return strtod(buf, NULL);
}

/* @v rounded to 3 decimals, as the text shows it */
static double r3(double v)
{
	return round(v * 1000) / 1000;
}

/* ---- --dump ---- */

static void dump_outputs(const struct port *outs, int nout)
{
	char path[PATH_MAX], (*names)[256];
	struct npr_json *jw;
	uint8_t *buf;
	FILE *j, *f;
	int i, k;

	if (mkdir(opt.dump, 0777) && errno != EEXIST)
		fail("--dump %s: %s", opt.dump, strerror(errno));
	names = xmalloc(sizeof(*names) * nout);
	for (i = 0; i < nout; i++) {
		char *s;

		snprintf(names[i], sizeof(names[i]), "%.200s", outs[i].name);
		for (s = names[i]; *s; s++)
			if (*s == '/')
				*s = '_';
		if (!*names[i] || !strcmp(names[i], "outputs"))
			snprintf(names[i], sizeof(names[i]), "output%d", i);
		for (k = 0; k < i; k++)
			if (!strcmp(names[i], names[k]))
				snprintf(names[i] + strlen(names[i]),
					 sizeof(names[i]) - strlen(names[i]),
					 ".%d", i);
	}

	snprintf(path, sizeof(path), "%s/outputs.json", opt.dump);
	j = fopen(path, "w");
	jw = j ? npr_json_new(j, NPR_JSON_PRETTY) : NULL;
	if (!jw)
		fail("%s: %s", path, strerror(errno));
	npr_json_begin_array(jw);
	for (i = 0; i < nout; i++) {
		const struct port *p = &outs[i];
		size_t n;

		snprintf(path, sizeof(path), "%s/%s.f32", opt.dump, names[i]);
		buf = xmalloc(p->numel * 4);
		for (n = 0; n < p->numel; n++)
			npr_f32_to_le(p->f[n], buf + n * 4);
		f = fopen(path, "wb");
		if (!f || fwrite(buf, 4, p->numel, f) != p->numel ||
		    fclose(f))
			fail("%s: %s", path, strerror(errno));
		free(buf);

		npr_json_begin_object(jw);
		npr_json_kv_string(jw, "name", p->name);
		snprintf(path, sizeof(path), "%s.f32", names[i]);
		npr_json_kv_string(jw, "file", path);
		npr_json_key(jw, "shape");
		json_shape(jw, p);
		npr_json_kv_string(jw, "element_type", "f32");
		npr_json_kv_string(jw, "source_element_type",
				   npr_elem_name(p->type));
		npr_json_end_object(jw);
	}
	npr_json_end_array(jw);
	k = npr_json_free(jw);
	if (fclose(j) || k)
		fail("%s/outputs.json: %s", opt.dump,
		     strerror(k ? -k : errno));
	free(names);
}

/* ---- printing results ---- */

struct timings {
	double load, compile, first, first_exec;
	double steady, steady_exec;	/* medians of runs 2..niter */
	int from_cache;		/* --cache-dir: LOADED_FROM_CACHE, else -1 */
};

/* Detections at or above the threshold; the end marker rows skipped. */
static void print_detections(const struct port *p,
			     const struct npr_image *orig)
{
	/* boxes in pixels of the photo, else as the model gives them */
	double W = orig->px ? orig->w : 1, H = orig->px ? orig->h : 1;
	int64_t r, shown = 0;
	int k;

	if (js) {
		npr_json_kv_string(js, "kind", "detections");
		npr_json_key(js, "detections");
		npr_json_begin_array(js);
	}
	for (r = 0; r < p->dims[2]; r++) {
		const float *d = p->f + r * 7;
		double box[4] = { d[3] * W, d[4] * H, d[5] * W, d[6] * H };

		if (d[0] < 0 || !(d[2] >= opt.threshold))
			continue;
		if (!js) {
			printf(orig->px ? "  label %-3d confidence %.3f  box %.0f,%.0f %.0f,%.0f px\n" :
			       "  label %-3d confidence %.3f  box %.3f,%.3f %.3f,%.3f\n",
			       (int)d[1], d[2], box[0], box[1], box[2],
			       box[3]);
			shown++;
			continue;
		}
		shown++;
		npr_json_begin_object(js);
		npr_json_kv_int(js, "image_id", (int)d[0]);
		npr_json_kv_int(js, "label", (int)d[1]);
		npr_json_kv_double(js, "confidence", round(d[2] * 1e5) / 1e5);
		npr_json_key(js, "box");
		npr_json_begin_array(js);
		for (k = 0; k < 4; k++)
			npr_json_double(js, round(box[k] * 10) / 10);
		npr_json_end_array(js);
		npr_json_end_object(js);
	}
	if (js)
		npr_json_end_array(js);
	else if (!shown)
		printf("  no detection with confidence >= %g\n",
		       opt.threshold);
}

/* The top-k classes of each image of the batch. */
static void print_classes(const struct port *p)
{
	size_t c = p->dims[1], n;
	int top = opt.top < (int)c ? opt.top : (int)c, k;

	if (js) {
		npr_json_kv_string(js, "kind", "classes");
		npr_json_key(js, "top");
		npr_json_begin_array(js);
	}
	for (n = 0; n < (size_t)p->dims[0]; n++) {
		const float *f = p->f + n * c;
		int *idx = rank_scores(f, c);

		if (!js && p->dims[0] > 1)
			printf("  image %zu\n", n);
		for (k = 0; k < top; k++) {
			if (!js) {
				printf("  class %4d  score %.5f\n", idx[k],
				       f[idx[k]]);
				continue;
			}
			npr_json_begin_object(js);
			if (p->dims[0] > 1)
				npr_json_kv_uint(js, "image", n);
			npr_json_kv_int(js, "class", idx[k]);
			npr_json_kv_double(js, "score", sig(f[idx[k]], 6));
			npr_json_end_object(js);
		}
		free(idx);
	}
	if (js)
		npr_json_end_array(js);
}

/* The first values, or all of them when there are few. */
static void print_values(const struct port *p)
{
	size_t k, show = p->numel;

	if (show > 2 * NUM_VALUES)
		show = NUM_VALUES;
	if (js) {
		npr_json_kv_string(js, "kind", "tensor");
		npr_json_key(js, "values");
		npr_json_begin_array(js);
	} else {
		printf("  values");
	}
	for (k = 0; k < show; k++) {
		if (js)
			npr_json_double(js, sig(p->f[k], 6));
		else
			printf(" %.6g", p->f[k]);
	}
	if (js)
		npr_json_end_array(js);
	else
		printf("%s\n", p->numel > show ? " ..." : "");
}

static void print_output(const struct port *p, int i,
			 const struct npr_image *orig)
{
	char sh[160];

	if (js) {
		npr_json_begin_object(js);
		npr_json_kv_string(js, "name", p->name);
		npr_json_key(js, "shape");
		json_shape(js, p);
		npr_json_kv_string(js, "element_type", npr_elem_name(p->type));
	} else {
		shape_str(p, sh, sizeof(sh));
		printf("output  %s %s %s\n", p->name, npr_elem_name(p->type),
		       sh);
	}
	if (is_detector(p))
		print_detections(p, orig);
	else if (opt.top && is_classifier(p))
		print_classes(p);
	else
		print_values(p);
	if (js)
		npr_json_end_object(js);
}

static void print_report(const struct npr_model_info *mi,
			 const struct port *ins, const struct port *outs,
			 const struct npr_image *orig, const struct timings *t)
{
	char format[64];
	int i;

	npr_arg_model_format(opt.model, mi->ir_version, format,
			     sizeof(format));
	if (js) {
		npr_json_begin_object(js);
		npr_json_kv_string(js, "device", opt.dev);
		npr_json_kv_string(js, "model", opt.model);
		npr_json_kv_string(js, "format", format);
		npr_json_key(js, "timings_ms");
		npr_json_begin_object(js);
		npr_json_kv_double(js, "load", r3(t->load));
		npr_json_kv_double(js, "compile", r3(t->compile));
		npr_json_kv_double(js, "first_infer", r3(t->first));
		npr_json_kv_double(js, "first_exec", r3(t->first_exec));
		if (t->from_cache >= 0)
			npr_json_kv_int(js, "loaded_from_cache",
					t->from_cache);
		if (opt.niter > 1) {
			npr_json_kv_double(js, "steady_infer", r3(t->steady));
			npr_json_kv_double(js, "steady_exec",
					   r3(t->steady_exec));
			npr_json_kv_int(js, "steady_runs", opt.niter - 1);
		}
		npr_json_end_object(js);
		npr_json_key(js, "inputs");
		npr_json_begin_array(js);
		for (i = 0; i < (int)mi->num_inputs; i++) {
			npr_json_begin_object(js);
			npr_json_kv_string(js, "name", ins[i].name);
			npr_json_key(js, "shape");
			json_shape(js, &ins[i]);
			npr_json_kv_string(js, "element_type",
					   npr_elem_name(ins[i].type));
			npr_json_kv_string(js, "source", ins[i].image ?
					   opt.image : ins[i].file);
			npr_json_end_object(js);
		}
		npr_json_end_array(js);
		npr_json_key(js, "outputs");
		npr_json_begin_array(js);
	} else {
		printf("model   %s (%s, %u nodes)\n", opt.model, format,
		       mi->num_nodes);
		printf("device  %s\n", opt.dev);
		for (i = 0; i < (int)mi->num_inputs; i++) {
			char sh[160];

			shape_str(&ins[i], sh, sizeof(sh));
			printf("input   %s %s %s <- ", ins[i].name,
			       npr_elem_name(ins[i].type), sh);
			if (ins[i].image)
				printf("%s (%dx%d, %s, scale %g)\n",
				       base_name(opt.image), orig->w, orig->h,
				       opt.pp.rgb ? "RGB" : "BGR",
				       opt.pp.scale);
			else
				printf("%s\n", base_name(ins[i].file));
		}
	}
	for (i = 0; i < (int)mi->num_outputs; i++)
		print_output(&outs[i], i, orig);
	if (js) {
		npr_json_end_array(js);
		npr_json_end_object(js);
		return;
	}
	printf("timing  load %.2f ms, compile %.2f ms%s\n", t->load, t->compile,
	       t->from_cache < 0 ? "" : t->from_cache ?
	       " (from the cache)" : " (stored in the cache)");
	printf("        first inference %.2f ms (backend %.2f ms)\n", t->first,
	       t->first_exec);
	if (opt.niter > 1)
		printf("        steady inference %.2f ms (backend %.2f ms), median of %d runs\n",
		       t->steady, t->steady_exec, opt.niter - 1);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- main ---- */

/* Keep a NAME=VALUE argument of @opt_name for when ports are known. */
static void add_named(const char **list, int *n, const char *opt_name,
		      const char *value)
{
	if (!strchr(optarg, '=') || *optarg == '=')
		usage_error("%s %s: expected NAME=%s", opt_name, optarg,
			    value);
	if (*n == MAX_ARGS)
		usage_error("at most %d %s options", MAX_ARGS, opt_name);
	list[(*n)++] = optarg;
}

/* --input's FILE[:TYPE] names a type this reads, before anything runs. */
static void check_raw_type(const char *spec)
{
	unsigned int type;
	char msg[512], *path;

	if (npr_arg_raw_input(spec, &path, &type, msg, sizeof(msg)))
		usage_error("%s", msg);
	free(path);
}

static void parse_args(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "device",	required_argument,	NULL, 'd' },
		{ "model",	required_argument,	NULL, 'm' },
		{ "image",	required_argument,	NULL, 'i' },
		{ "input",	required_argument,	NULL, 'I' },
		{ "shape",	required_argument,	NULL, 'S' },
		{ "top",	required_argument,	NULL, 'k' },
		{ "threshold",	required_argument,	NULL, 'T' },
		{ "niter",	required_argument,	NULL, 'n' },
		{ "dump",	required_argument,	NULL, 'D' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "ring",	no_argument,		NULL, 'R' },
		{ "rgb",	no_argument,		NULL, 'r' },
		{ "scale",	required_argument,	NULL, 'c' },
		{ "mean",	required_argument,	NULL, 'M' },
		{ "std",	required_argument,	NULL, 's' },
		{ "help",	no_argument,		NULL, 'h' },
		{ "info",	no_argument,		NULL, 'F' },
		{ "cache-dir",	required_argument,	NULL, 'C' },
		{ "prop",	required_argument,	NULL, 'P' },
		{ "weights",	required_argument,	NULL, 'W' },
		{ "version",	no_argument,		NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct npr_tool_alias aliases[] = {
		{ "niter", "niter" }, { "shape", "shape" },
		{ "data_shape", "shape" }, { NULL, NULL },
	};
	char msg[1024];
	int c, i, err;

	npr_preproc_default(&opt.pp);
	npr_tool_aliases(argc, argv, "d:m:i:h", lopts, aliases);
	while ((c = getopt_long(argc, argv, "d:m:i:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			opt.dev = optarg;
			break;
		case 'm':
			opt.model = optarg;
			break;
		case 'i':
			opt.image = optarg;
			break;
		case 'I':
			add_named(opt.inputs, &opt.ninputs, "--input", "FILE");
			check_raw_type(strchr(optarg, '=') + 1);
			break;
		case 'S':
			err = npr_arg_parse_shapes(optarg, &opt.shapes,
						   &opt.nshapes, msg,
						   sizeof(msg));
			if (err == -ENOMEM)
				fail("%s", msg);
			if (err)
				usage_error("%s", msg);
			break;
		case 'k':
			opt.top = npr_tool_int("--top", optarg, 0, MAX_TOP);
			break;
		case 'T':
			opt.threshold = npr_tool_float("--threshold", optarg);
			break;
		case 'n':
			opt.niter = npr_tool_int("--niter", optarg, 1, 1000000);
			break;
		case 'D':
			opt.dump = optarg;
			break;
		case 'j':
			opt.json = true;
			break;
		case 'R':
			opt.ring = true;
			break;
		case 'r':
			opt.pp.rgb = true;
			break;
		case 'c':
			opt.pp.scale = npr_tool_float("--scale", optarg);
			break;
		case 'M':
			npr_tool_floats3("--mean", optarg, opt.pp.mean);
			break;
		case 's':
			npr_tool_floats3("--std", optarg, opt.pp.std);
			for (i = 0; i < 3; i++)
				if (opt.pp.std[i] == 0)
					usage_error("--std: a divisor is zero");
			break;
		case 'h':
			fputs(help, stdout);
			exit(0);
		case 'V':
			npr_tool_version();
			exit(0);
		case 'F':
			opt.info = true;
			break;
		case 'P':
			if (opt.nprops == MAX_ARGS)
				usage_error("at most %d --prop options",
					    MAX_ARGS);
			opt.props[opt.nprops++] = optarg;
			break;
		case 'C':
			opt.cache_dir = optarg;
			break;
		case 'W':
			opt.weights = optarg;
			break;
		default:
			usage_error(NULL);
		}
	}
	if (optind != argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (opt.info)
		return;
	if (!opt.model)
		usage_error("no model: give -m MODEL");
	if (!opt.image && !opt.ninputs)
		usage_error("no input data: give -i PHOTO or --input NAME=FILE");
}

/* --info: what DEVICE_INFO reports; npr_open's message if it fails. */
static int print_info(void)
{
	static const char *const types[] = {
		[NPR_DEVICE_CPU] = "cpu", [NPR_DEVICE_NPU] = "npu",
		[NPR_DEVICE_NULL] = "null",
	};
	struct npr_device_info di = { .size = sizeof(di) };
	int fd = npr_open(opt.dev, 0), err;

	if (fd < 0)
		fail_lib(opt.dev, fd);
	err = npr_ioctl(fd, NPR_IOCTL_DEVICE_INFO, &di);
	if (err)
		fail_lib("DEVICE_INFO", err);
	printf("device        %s\n", di.name);
	printf("type          %s\n", di.device_type < 4 &&
	       types[di.device_type] ? types[di.device_type] : "?");
	printf("name          %s\n", di.full_name);
	printf("architecture  %s\n", di.arch);
	printf("capabilities %s%s%s%s\n",
	       di.caps & NPR_CAP_FP32 ? " FP32" : "",
	       di.caps & NPR_CAP_FP16 ? " FP16" : "",
	       di.caps & NPR_CAP_INT8 ? " INT8" : "",
	       di.caps & NPR_CAP_EXPORT_IMPORT ? " EXPORT_IMPORT" : "");
	printf("threads       %u\n", di.num_threads);
	npr_close(fd);
	return 0;
}

/* One run of the model: the device, its objects, ports and results. */
struct run {
	int fd;
	__u32 model, exec, req;
	struct npr_model_info mi;
	struct port *ins, *outs;
	int nin, nout;
	struct npr_image orig;	/* the -i photo as read */
	struct timings t;
};

static void run_compile(struct run *r);

static void run_load(struct run *r)
{
	struct npr_model_load ml;
	size_t blen = 0;
	char msg[512];
	double t0;
	void *blob;
	int err, i;

	t0 = now_ms();
	err = npr_arg_read_blob(opt.model, &blob, &blen, msg, sizeof(msg));
	if (err < 0)
		fail("%s", msg);
	if (blob) {
		struct npr_import ia = {
			.size = sizeof(ia), .data = (uintptr_t)blob,
			.bytes = blen,
		};

		if (opt.nshapes)
			usage_error("%s: a compiled blob has fixed shapes; --shape does not apply",
				    opt.model);
		if (opt.cache_dir || opt.nprops)
			usage_error("%s: a compiled blob is compiled already; --cache-dir and --prop do not apply",
				    opt.model);
		if (opt.weights) {
			err = npr_arg_set_weights(r->fd, opt.weights, msg,
						  sizeof(msg));
			if (err && npr_arg_is_usage(err))
				usage_error("%s", msg);
			if (err)
				fail("%s", msg);
		}
		err = npr_ioctl(r->fd, NPR_IOCTL_IMPORT, &ia);
		free(blob);
		if (err)
			fail_lib(opt.model, err);
		r->exec = ia.exec;
	} else {
		if (opt.weights)
			usage_error("%s: --weights is for a weightless compiled blob; a model reads its own weights",
				    opt.model);
		npr_prep_model_load(&ml, opt.model, NULL);
		/* with a cache the files are read only on a miss */
		if (opt.cache_dir)
			ml.flags = NPR_MODEL_LOAD_DEFER;
		err = npr_ioctl(r->fd, NPR_IOCTL_MODEL_LOAD, &ml);
		if (err)
			fail_lib(opt.model, err);
		r->model = ml.handle;
	}
	r->t.load = now_ms() - t0;
	/* without --shape the compile needs nothing of the model: do it
	 * now and take the ports from the compiled model, so that a cache
	 * hit never reads the model's files */
	if (opt.cache_dir && !r->exec && !opt.nshapes)
		run_compile(r);

	memset(&r->mi, 0, sizeof(r->mi));
	r->mi.size = sizeof(r->mi);
	r->mi.handle = r->exec ? r->exec : r->model;
	err = npr_ioctl(r->fd, NPR_IOCTL_MODEL_INFO, &r->mi);
	if (err)
		fail_lib("MODEL_INFO", err);
	if (!r->exec)	/* a deferred model is read here: part of the load */
		r->t.load = now_ms() - t0;
	r->nin = r->mi.num_inputs;
	r->nout = r->mi.num_outputs;
	r->ins = calloc(r->nin + 1, sizeof(*r->ins));
	r->outs = calloc(r->nout + 1, sizeof(*r->outs));
	if (!r->ins || !r->outs)
		fail("out of memory");
	for (i = 0; i < r->nin; i++)
		port_query(r->fd, r->mi.handle, i, false, &r->ins[i]);
	check_arg_names("--input", opt.inputs, opt.ninputs, r->ins, r->nin);
}

/* Compile with the --shape overrides and create the request. */
static void run_compile(struct run *r)
{
	struct npr_shape_arg *shapes;
	struct npr_req_create rc;
	struct npr_compile co;
	char msg[2048];
	double t0;
	int err;

	if (r->req)		/* compiled before the ports were read */
		return;
	if (r->exec)		/* imported: compiled already */
		goto request;
	shapes = calloc(opt.nshapes + 1, sizeof(*shapes));
	if (!shapes)
		fail("out of memory");
	err = npr_arg_resolve_shapes(r->fd, r->model, opt.shapes, opt.nshapes,
				     shapes, msg, sizeof(msg));
	if (err && npr_arg_is_usage(err))
		usage_error("%s", msg);
	if (err)
		fail("%s", msg);

	t0 = now_ms();
	npr_prep_compile(&co, r->model);
	co.shapes = (uintptr_t)shapes;
	co.num_shapes = opt.nshapes;
	err = npr_ioctl(r->fd, NPR_IOCTL_COMPILE, &co);
	if (err)
		fail_lib("COMPILE", err);
	r->t.compile = now_ms() - t0;
	r->exec = co.exec;
	free(shapes);
	if (opt.cache_dir) {
		struct npr_param pa = {
			.size = sizeof(pa), .handle = r->exec,
			.param = NPR_PARAM_LOADED_FROM_CACHE,
		};

		err = npr_ioctl(r->fd, NPR_IOCTL_GET_PARAM, &pa);
		if (err)
			fail_lib("GET_PARAM LOADED_FROM_CACHE", err);
		r->t.from_cache = (int)pa.value;
	}
request:
	npr_prep_req_create(&rc, r->exec);
	err = npr_ioctl(r->fd, NPR_IOCTL_REQ_CREATE, &rc);
	if (err)
		fail_lib("REQ_CREATE", err);
	r->req = rc.req;
}

/* The compiled input shapes, then each input's data, set once. */
static void run_set_inputs(struct run *r)
{
	char sh[160];
	int err, i;

	for (i = 0; i < r->nin; i++) {
		port_query(r->fd, r->exec, i, false, &r->ins[i]);
		if (port_dynamic(&r->ins[i])) {
			shape_str(&r->ins[i], sh, sizeof(sh));
			fail("input %s has a dynamic shape %s: give --shape %s=D0,D1,...",
			     r->ins[i].name, sh, r->ins[i].name);
		}
	}
	assign_inputs(r->ins, r->nin);
	for (i = 0; i < r->nin; i++) {
		struct port *p = &r->ins[i];
		struct npr_tensor_arg ta;

		p->data = xmalloc(p->bytes);
		if (p->image)
			fill_image(p, &r->orig);
		else
			fill_raw(p);
		npr_prep_tensor(&ta, r->req, i, 0, p->data, p->bytes);
		ta.elem_type = p->type;
		ta.rank = p->rank;
		memcpy(ta.dims, p->dims, sizeof(ta.dims));
		err = npr_ioctl(r->fd, NPR_IOCTL_SET_TENSOR, &ta);
		if (err)
			fail_lib("SET_TENSOR", err);
	}
}

/* INFER --niter times; the first run alone, the median of the rest. */
static void run_infer(struct run *r)
{
	double *wall = xmalloc(sizeof(double) * opt.niter);
	double *exec = xmalloc(sizeof(double) * opt.niter);
	double t0;
	int err, i;

	for (i = 0; i < opt.niter; i++) {
		struct npr_infer inf;

		npr_prep_infer(&inf, r->req);
		t0 = now_ms();
		if (opt.ring) {
			struct npr_sqe sqe = { .opcode = NPR_OP_INFER };
			struct npr_submit su = { .size = sizeof(su) };
			struct npr_reap re = { .size = sizeof(re) };
			struct npr_cqe cqe = { 0 };

			sqe.handle = r->req;
			su.sqes = (uintptr_t)&sqe;
			su.count = 1;
			re.cqes = (uintptr_t)&cqe;
			re.max = re.min = 1;
			err = npr_ioctl(r->fd, NPR_IOCTL_SUBMIT, &su);
			if (!err)
				err = npr_ioctl(r->fd, NPR_IOCTL_REAP, &re);
			if (!err)
				err = cqe.res;
			inf.started_ns = cqe.started_ns;
			inf.finished_ns = cqe.finished_ns;
		} else {
			err = npr_ioctl(r->fd, NPR_IOCTL_INFER, &inf);
		}
		if (err)
			fail_lib("INFER", err);
		wall[i] = now_ms() - t0;
		exec[i] = (inf.finished_ns - inf.started_ns) / 1e6;
	}
	r->t.first = wall[0];
	r->t.first_exec = exec[0];
	if (opt.niter > 1) {
		r->t.steady = median(wall + 1, opt.niter - 1);
		r->t.steady_exec = median(exec + 1, opt.niter - 1);
	}
	free(wall);
	free(exec);
}

/* Every output, in its own type and as f32. */
static void run_get_outputs(struct run *r)
{
	int err, i;

	for (i = 0; i < r->nout; i++) {
		struct port *p = &r->outs[i];
		struct npr_tensor_arg ta;
		size_t n;

		port_query(r->fd, r->exec, i, true, p);
		if (!npr_tensor_elem_ok(p->type))
			fail("output %s: element type %s is not supported",
			     p->name, npr_elem_name(p->type));
		p->data = xmalloc(p->bytes);
		npr_prep_tensor(&ta, r->req, i, 1, p->data, p->bytes);
		err = npr_ioctl(r->fd, NPR_IOCTL_GET_TENSOR, &ta);
		if (err == -EMSGSIZE) {
			/* a shape known only after inference */
			free(p->data);
			p->data = xmalloc(ta.bytes);
			npr_prep_tensor(&ta, r->req, i, 1, p->data, ta.bytes);
			err = npr_ioctl(r->fd, NPR_IOCTL_GET_TENSOR, &ta);
		}
		if (err)
			fail_lib("GET_TENSOR", err);
		port_set_shape(p, ta.rank, ta.dims);
		p->f = xmalloc(sizeof(float) * p->numel);
		for (n = 0; n < p->numel; n++)
			p->f[n] = npr_tensor_elem_get(p->data, p->type, n);
	}
}

static void ports_free(struct port *ports, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		free(ports[i].name);
		free(ports[i].data);
		free(ports[i].f);
	}
	free(ports);
}

int main(int argc, char **argv)
{
	struct run r = { 0 };
	int err, i;

	npr_tool_init("npr-run");
	parse_args(argc, argv);
	if (opt.info)
		return print_info();

	r.fd = npr_open(opt.dev, 0);
	if (r.fd < 0)
		fail_lib(opt.dev, r.fd);
	r.t.from_cache = -1;
	for (i = 0; i < opt.nprops; i++) {
		char msg[2048];

		err = npr_arg_set_prop(r.fd, opt.props[i], msg, sizeof(msg));
		if (err && npr_arg_is_usage(err))
			usage_error("%s", msg);
		if (err)
			fail("%s", msg);
	}
	if (opt.cache_dir) {
		struct npr_param pa = {
			.size = sizeof(pa), .param = NPR_PARAM_CACHE_DIR,
			.ptr = (uintptr_t)opt.cache_dir,
			.len = strlen(opt.cache_dir) + 1,
		};

		err = npr_ioctl(r.fd, NPR_IOCTL_SET_PARAM, &pa);
		if (err)
			fail_lib("--cache-dir", err);
	}
	run_load(&r);
	run_compile(&r);
	run_set_inputs(&r);
	run_infer(&r);
	run_get_outputs(&r);

	if (opt.dump)
		dump_outputs(r.outs, r.nout);
	if (opt.json)
		js = npr_tool_json_begin(0);
	print_report(&r.mi, r.ins, r.outs, &r.orig, &r.t);
	if (js)
		npr_tool_json_end(js);

	ports_free(r.ins, r.nin);
	ports_free(r.outs, r.nout);
	npr_image_free(&r.orig);
	/* closing destroys the request, the exec and the model */
	err = npr_close(r.fd);
	if (err)
		fail_lib("close", err);
	npr_arg_free_shapes(opt.shapes, opt.nshapes);
	return 0;
}
