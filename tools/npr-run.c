// SPDX-License-Identifier: MIT
/*
 * npr-run - run a model once (or a few times) on a photo or raw tensors and
 * print what came out: top-k classes, SSD detections, or output summaries,
 * with load / compile / inference timings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "npuring.h"
#include "image.h"

#define MAX_PORTS	64

struct port {
	char name[512];
	unsigned int type;
	int rank;
	int64_t dims[NPR_MAX_RANK];
	size_t numel, bytes;
	void *data;
	float *f;		/* outputs as f32 */
};

static struct {
	const char *dev, *model, *image, *dump;
	const char *inputs[MAX_PORTS];
	int ninputs;
	const char *shapes[MAX_PORTS];
	int nshapes;
	int top, niter;
	bool json;
	float threshold;
	struct npr_preproc pp;
} opt = { .dev = "cpu", .top = 5, .niter = 1, .threshold = 0.5f };

static void usage(FILE *f)
{
	fprintf(f,
"usage: npr-run -d DEVICE -m MODEL.xml (-i PHOTO.png | --input NAME=FILE.f32 ...)\n"
"               [--shape NAME=1,3,H,W] [--top K] [--threshold T] [--niter N]\n"
"               [--dump DIR] [--json] [--rgb] [--mean a,b,c] [--std a,b,c]\n"
"               [--scale S]\n"
"\n"
"Runs MODEL on DEVICE and prints top-K classes (classifier outputs),\n"
"detections (SSD outputs [1,1,N,7]) or output summaries, and the load,\n"
"compile, first and steady-state inference times.\n"
"\n"
"Preprocessing of -i (Open Model Zoo defaults): the photo is resized\n"
"bilinearly to the model input's H x W, channels in BGR order, values\n"
"0..255, NCHW layout, converted to the input's element type.  --rgb uses\n"
"RGB order; --mean/--std (in the tensor's channel order) and --scale give\n"
"value = (pixel - mean) / std * scale.\n"
"\n"
"--input NAME=FILE reads raw little-endian f32 (converted to the input's\n"
"element type).  --dump DIR writes every output as DIR/<name>.f32 and\n"
"DIR/outputs.json.  --json prints one JSON object instead of text.\n");
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "npr-run: %s: %s: %s\n", what, strerror(-err),
		npr_last_error());
	exit(1);
}

static int parse_floats(const char *s, float *out, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		char *end;

		out[i] = strtof(s, &end);
		if (end == s)
			return -1;
		s = end;
		if (i < n - 1) {
			if (*s != ',')
				return -1;
			s++;
		}
	}
	return *s ? -1 : 0;
}

static float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f;
	uint32_t man = h & 0x3ff, bits;
	float f;

	if (exp == 0x1f)
		bits = sign | 0x7f800000 | (man << 13);
	else if (exp)
		bits = sign | ((exp + 112) << 23) | (man << 13);
	else {
		f = man * 5.9604644775390625e-8f;
		return sign ? -f : f;
	}
	memcpy(&f, &bits, 4);
	return f;
}

static float to_f32(const void *d, unsigned int t, size_t i)
{
	switch (t) {
	case NPR_ELEM_F32: return ((const float *)d)[i];
	case NPR_ELEM_F16: return half_to_float(((const uint16_t *)d)[i]);
	case NPR_ELEM_I32: return (float)((const int32_t *)d)[i];
	case NPR_ELEM_I64: return (float)((const int64_t *)d)[i];
	case NPR_ELEM_U8: case NPR_ELEM_BOOLEAN:
		return ((const uint8_t *)d)[i];
	case NPR_ELEM_I8: return ((const int8_t *)d)[i];
	}
	return NAN;
}

static void from_f32(void *d, unsigned int t, size_t i, float v)
{
	switch (t) {
	case NPR_ELEM_F32: ((float *)d)[i] = v; break;
	case NPR_ELEM_F16: ((uint16_t *)d)[i] = npr_half_from_float(v); break;
	case NPR_ELEM_I32: ((int32_t *)d)[i] = (int32_t)v; break;
	case NPR_ELEM_I64: ((int64_t *)d)[i] = (int64_t)v; break;
	case NPR_ELEM_U8: ((uint8_t *)d)[i] = (uint8_t)v; break;
	case NPR_ELEM_I8: ((int8_t *)d)[i] = (int8_t)v; break;
	}
}

static void port_query(int fd, uint32_t h, int idx, bool out, struct port *p)
{
	struct npr_port_info pi;
	int err, i;

	npr_prep_port_info(&pi, h, idx, out, p->name, sizeof(p->name));
	err = npr_ioctl(fd, NPR_IOCTL_PORT_INFO, &pi);
	if (err)
		die("PORT_INFO", err);
	p->type = pi.elem_type;
	p->rank = pi.rank;
	p->numel = 1;
	for (i = 0; i < p->rank; i++) {
		p->dims[i] = pi.dims[i];
		p->numel *= pi.dims[i] > 0 ? pi.dims[i] : 1;
	}
	p->bytes = p->numel * npr_elem_size(p->type);
}

static void shape_str(const struct port *p, char *buf, size_t len)
{
	size_t o = 0;
	int i;

	o += snprintf(buf + o, len - o, "[");
	for (i = 0; i < p->rank && o < len; i++)
		o += snprintf(buf + o, len - o, "%s%lld", i ? "," : "",
			      (long long)p->dims[i]);
	if (o < len)
		snprintf(buf + o, len - o, "]");
}

static const char *find_arg(const char *const *list, int n, const char *name)
{
	size_t len = strlen(name);
	int i;

	for (i = 0; i < n; i++)
		if (!strncmp(list[i], name, len) && list[i][len] == '=')
			return list[i] + len + 1;
	return NULL;
}

static int image_input(const struct port *p)
{
	return p->rank == 4 && (p->dims[1] == 3 || p->dims[1] == 1);
}

static void fill_image(struct port *p, struct npr_image *orig)
{
	struct npr_image img, small;
	int err;

	err = npr_image_load_png(opt.image, &img);
	if (err) {
		fprintf(stderr, "npr-run: %s: cannot read PNG: %s\n", opt.image,
			strerror(-err));
		exit(1);
	}
	err = npr_image_resize_bilinear(&img, (int)p->dims[3], (int)p->dims[2],
					&small);
	if (err)
		die("resize", err);
	if (p->dims[1] == 1) {
		/* gray: average into the first channel plane */
		size_t i, hw = (size_t)small.w * small.h;

		for (i = 0; i < hw; i++) {
			float v = (small.px[i * 3] + small.px[i * 3 + 1] +
				   small.px[i * 3 + 2]) / 3.0f;

			from_f32(p->data, p->type, i,
				 (v - opt.pp.mean[0]) / opt.pp.std[0] * opt.pp.scale);
		}
	} else if (p->type == NPR_ELEM_F32 || p->type == NPR_ELEM_F16) {
		for (int b = 0; b < p->dims[0]; b++)
			npr_image_to_tensor(&small, &opt.pp, p->type,
					    (char *)p->data + b * (p->bytes / p->dims[0]));
	} else {
		fprintf(stderr, "npr-run: input %s is %s; -i needs f32 or f16\n",
			p->name, npr_elem_name(p->type));
		exit(1);
	}
	npr_image_free(&small);
	*orig = img;
}

static void fill_raw(struct port *p, const char *file)
{
	FILE *f = fopen(file, "rb");
	struct stat st;
	float *buf;
	size_t i;

	if (!f || fstat(fileno(f), &st)) {
		fprintf(stderr, "npr-run: %s: %s\n", file, strerror(errno));
		exit(1);
	}
	if ((size_t)st.st_size != p->numel * 4) {
		fprintf(stderr,
			"npr-run: %s: %lld bytes, input %s needs %zu f32 values (%zu bytes)\n",
			file, (long long)st.st_size, p->name, p->numel,
			p->numel * 4);
		exit(1);
	}
	buf = malloc(p->numel * 4 + 1);
	if (!buf || fread(buf, 4, p->numel, f) != p->numel) {
		fprintf(stderr, "npr-run: %s: short read\n", file);
		exit(1);
	}
	for (i = 0; i < p->numel; i++)
		from_f32(p->data, p->type, i, buf[i]);
	free(buf);
	fclose(f);
}

static int cmp_desc(const void *a, const void *b, void *arg)
{
	const float *s = arg;
	float x = s[*(const int *)a], y = s[*(const int *)b];

	return x < y ? 1 : x > y ? -1 : 0;
}

static bool is_classifier(const struct port *p)
{
	int i, big = 0;

	if (p->numel < 2)
		return false;
	for (i = 0; i < p->rank; i++)
		if (p->dims[i] > 1)
			big++;
	return big == 1 && (p->rank == 2 || p->rank == 4) &&
	       p->dims[1] == (int64_t)p->numel;
}

static bool is_detector(const struct port *p)
{
	return p->rank == 4 && p->dims[0] == 1 && p->dims[1] == 1 &&
	       p->dims[3] == 7;
}

static void sanitize(char *s)
{
	for (; *s; s++)
		if (*s == '/' || *s == ' ')
			*s = '_';
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void dump_outputs(struct port *outs, int nout)
{
	char path[8192];
	FILE *j;
	int i, k;

	mkdir(opt.dump, 0755);
	snprintf(path, sizeof(path), "%s/outputs.json", opt.dump);
	j = fopen(path, "w");
	if (!j) {
		fprintf(stderr, "npr-run: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	fprintf(j, "[");
	for (i = 0; i < nout; i++) {
		char name[512];
		FILE *f;

		snprintf(name, sizeof(name), "%.400s", outs[i].name);
		sanitize(name);
		snprintf(path, sizeof(path), "%s/%s.f32", opt.dump, name);
		f = fopen(path, "wb");
		if (!f || fwrite(outs[i].f, 4, outs[i].numel, f) != outs[i].numel) {
			fprintf(stderr, "npr-run: %s: %s\n", path, strerror(errno));
			exit(1);
		}
		fclose(f);
		fprintf(j, "%s{\"name\":", i ? "," : "");
		json_str(j, outs[i].name);
		fprintf(j, ",\"file\":");
		snprintf(path, sizeof(path), "%s.f32", name);
		json_str(j, path);
		fprintf(j, ",\"shape\":[");
		for (k = 0; k < outs[i].rank; k++)
			fprintf(j, "%s%lld", k ? "," : "",
				(long long)outs[i].dims[k]);
		fprintf(j, "],\"element_type\":\"f32\",\"source_element_type\":\"%s\"}",
			npr_elem_name(outs[i].type));
	}
	fprintf(j, "]\n");
	fclose(j);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "model", required_argument, NULL, 'm' },
		{ "image", required_argument, NULL, 'i' },
		{ "input", required_argument, NULL, 'I' },
		{ "shape", required_argument, NULL, 'S' },
		{ "top", required_argument, NULL, 'k' },
		{ "threshold", required_argument, NULL, 'T' },
		{ "niter", required_argument, NULL, 'n' },
		{ "dump", required_argument, NULL, 'D' },
		{ "json", no_argument, NULL, 'j' },
		{ "rgb", no_argument, NULL, 'r' },
		{ "mean", required_argument, NULL, 'M' },
		{ "std", required_argument, NULL, 's' },
		{ "scale", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct port ins[MAX_PORTS], outs[MAX_PORTS];
	struct npr_shape_arg shapes[MAX_PORTS];
	struct npr_model_info mi;
	struct npr_model_load ml;
	struct npr_compile co;
	struct npr_req_create rc;
	struct npr_image orig = { 0 };
	double t0, t_load, t_compile, t_first, *steady;
	int fd, err, c, i, k, nshapes = 0, image_used = 0;

	npr_preproc_default(&opt.pp);
	while ((c = getopt_long(argc, argv, "d:m:i:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'd': opt.dev = optarg; break;
		case 'm': opt.model = optarg; break;
		case 'i': opt.image = optarg; break;
		case 'I':
			if (opt.ninputs == MAX_PORTS)
				goto bad;
			opt.inputs[opt.ninputs++] = optarg;
			break;
		case 'S':
			if (opt.nshapes == MAX_PORTS)
				goto bad;
			opt.shapes[opt.nshapes++] = optarg;
			break;
		case 'k': opt.top = atoi(optarg); break;
		case 'T': opt.threshold = strtof(optarg, NULL); break;
		case 'n': opt.niter = atoi(optarg); break;
		case 'D': opt.dump = optarg; break;
		case 'j': opt.json = true; break;
		case 'r': opt.pp.rgb = true; break;
		case 'M':
			if (parse_floats(optarg, opt.pp.mean, 3))
				goto bad;
			break;
		case 's':
			if (parse_floats(optarg, opt.pp.std, 3))
				goto bad;
			break;
		case 'c': opt.pp.scale = strtof(optarg, NULL); break;
		case 'h': usage(stdout); return 0;
		default: goto bad;
		}
	}
	if (!opt.model || optind != argc || opt.niter < 1 || opt.top < 0)
		goto bad;

	fd = npr_open(opt.dev, 0);
	if (fd < 0)
		die(opt.dev, fd);
	t0 = now_ms();
	npr_prep_model_load(&ml, opt.model, NULL);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err)
		die(opt.model, err);
	t_load = now_ms() - t0;
	memset(&mi, 0, sizeof(mi));
	mi.size = sizeof(mi);
	mi.handle = ml.handle;
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_INFO, &mi);
	if (err)
		die("MODEL_INFO", err);
	if (mi.num_inputs > MAX_PORTS || mi.num_outputs > MAX_PORTS) {
		fprintf(stderr, "npr-run: too many ports\n");
		return 1;
	}
	for (i = 0; i < (int)mi.num_inputs; i++) {
		const char *s;

		port_query(fd, ml.handle, i, false, &ins[i]);
		s = find_arg(opt.shapes, opt.nshapes, ins[i].name);
		if (s) {
			struct npr_shape_arg *sa = &shapes[nshapes++];
			char *end;

			memset(sa, 0, sizeof(*sa));
			sa->index = i;
			while (*s && sa->rank < NPR_MAX_RANK) {
				sa->dims[sa->rank++] = strtoll(s, &end, 10);
				if (end == s)
					goto bad;
				s = *end == ',' ? end + 1 : end;
			}
		}
	}
	for (i = 0; i < opt.nshapes; i++) {
		for (k = 0; k < (int)mi.num_inputs; k++)
			if (find_arg(&opt.shapes[i], 1, ins[k].name))
				break;
		if (k == (int)mi.num_inputs) {
			fprintf(stderr, "npr-run: --shape %s: no such input\n",
				opt.shapes[i]);
			return 1;
		}
	}
	t0 = now_ms();
	npr_prep_compile(&co, ml.handle);
	co.shapes = (uintptr_t)shapes;
	co.num_shapes = nshapes;
	err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	if (err)
		die("compile", err);
	t_compile = now_ms() - t0;
	npr_prep_req_create(&rc, co.exec);
	err = npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc);
	if (err)
		die("REQ_CREATE", err);

	for (i = 0; i < (int)mi.num_inputs; i++) {
		struct port *p = &ins[i];
		struct npr_tensor_arg ta;
		const char *file;

		port_query(fd, co.exec, i, false, p);
		p->data = calloc(1, p->bytes ? p->bytes : 1);
		if (!p->data)
			die("malloc", -ENOMEM);
		file = find_arg(opt.inputs, opt.ninputs, p->name);
		if (file) {
			fill_raw(p, file);
		} else if (opt.image && !image_used && image_input(p)) {
			fill_image(p, &orig);
			image_used = 1;
		} else {
			fprintf(stderr, "npr-run: no data for input %s (give -i PHOTO or --input %s=FILE)\n",
				p->name, p->name);
			return 1;
		}
		npr_prep_tensor(&ta, rc.req, i, 0, p->data, p->bytes);
		ta.elem_type = p->type;
		ta.rank = p->rank;
		memcpy(ta.dims, p->dims, sizeof(p->dims));
		err = npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &ta);
		if (err)
			die("SET_TENSOR", err);
	}
	for (i = 0; i < opt.ninputs; i++) {
		for (k = 0; k < (int)mi.num_inputs; k++)
			if (find_arg(&opt.inputs[i], 1, ins[k].name))
				break;
		if (k == (int)mi.num_inputs) {
			fprintf(stderr, "npr-run: --input %s: no such input\n",
				opt.inputs[i]);
			return 1;
		}
	}

	steady = calloc(opt.niter, sizeof(double));
	if (!steady)
		die("malloc", -ENOMEM);
	for (i = 0; i < opt.niter; i++) {
		struct npr_infer inf;

		npr_prep_infer(&inf, rc.req);
		t0 = now_ms();
		err = npr_ioctl(fd, NPR_IOCTL_INFER, &inf);
		if (err)
			die("INFER", err);
		steady[i] = now_ms() - t0;
	}
	t_first = steady[0];
	if (opt.niter > 1)
		qsort(steady + 1, opt.niter - 1, sizeof(double), cmp_double);

	for (i = 0; i < (int)mi.num_outputs; i++) {
		struct port *p = &outs[i];
		struct npr_tensor_arg ta;
		size_t j;

		port_query(fd, co.exec, i, true, p);
		p->data = malloc(p->bytes ? p->bytes : 1);
		p->f = malloc(sizeof(float) * (p->numel ? p->numel : 1));
		if (!p->data || !p->f)
			die("malloc", -ENOMEM);
		npr_prep_tensor(&ta, rc.req, i, 1, p->data, p->bytes);
		err = npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &ta);
		if (err)
			die("GET_TENSOR", err);
		for (j = 0; j < p->numel; j++)
			p->f[j] = to_f32(p->data, p->type, j);
	}
	if (opt.dump)
		dump_outputs(outs, mi.num_outputs);

	if (opt.json) {
		printf("{\"device\":");
		json_str(stdout, opt.dev);
		printf(",\"model\":");
		json_str(stdout, opt.model);
		printf(",\"load_ms\":%.3f,\"compile_ms\":%.3f,\"first_infer_ms\":%.3f",
		       t_load, t_compile, t_first);
		if (opt.niter > 1)
			printf(",\"steady_infer_ms\":%.3f",
			       steady[1 + (opt.niter - 1) / 2]);
		printf(",\"outputs\":[");
	} else {
		printf("model    %s (IR v%u, %u nodes)\n", opt.model,
		       mi.ir_version, mi.num_nodes);
		printf("device   %s\n", opt.dev);
	}
	for (i = 0; i < (int)mi.num_outputs; i++) {
		struct port *p = &outs[i];
		char sh[128];

		shape_str(p, sh, sizeof(sh));
		if (opt.json) {
			printf("%s{\"name\":", i ? "," : "");
			json_str(stdout, p->name);
			printf(",\"shape\":\"%s\"", sh);
		} else {
			printf("output   %s %s %s\n", p->name,
			       npr_elem_name(p->type), sh);
		}
		if (is_detector(p)) {
			int64_t rows = p->dims[2], r, shown = 0;
			int W = orig.w ? orig.w : 1, H = orig.h ? orig.h : 1;

			if (opt.json)
				printf(",\"detections\":[");
			for (r = 0; r < rows; r++) {
				const float *d = p->f + r * 7;

				if (d[0] < 0)
					break;
				if (d[2] < opt.threshold)
					continue;
				if (opt.json)
					printf("%s{\"label\":%d,\"confidence\":%.5f,\"box\":[%.1f,%.1f,%.1f,%.1f]}",
					       shown ? "," : "", (int)d[1], d[2],
					       d[3] * W, d[4] * H, d[5] * W,
					       d[6] * H);
				else
					printf("  detection label %d confidence %.3f box %.0f,%.0f,%.0f,%.0f px\n",
					       (int)d[1], d[2], d[3] * W, d[4] * H,
					       d[5] * W, d[6] * H);
				shown++;
			}
			if (opt.json)
				printf("]");
			else if (!shown)
				printf("  no detection above %.2f\n",
				       opt.threshold);
		} else if (is_classifier(p) && opt.top) {
			int *idx = malloc(sizeof(int) * p->numel);
			int top = opt.top < (int)p->numel ? opt.top : (int)p->numel;

			if (!idx)
				die("malloc", -ENOMEM);
			for (k = 0; k < (int)p->numel; k++)
				idx[k] = k;
			qsort_r(idx, p->numel, sizeof(int), cmp_desc, p->f);
			if (opt.json)
				printf(",\"top\":[");
			for (k = 0; k < top; k++) {
				if (opt.json)
					printf("%s{\"class\":%d,\"score\":%.6f}",
					       k ? "," : "", idx[k], p->f[idx[k]]);
				else
					printf("  class %4d  score %.5f\n", idx[k],
					       p->f[idx[k]]);
			}
			if (opt.json)
				printf("]");
			free(idx);
		} else {
			size_t j, show = p->numel < 8 ? p->numel : 8;

			if (opt.json)
				printf(",\"values\":[");
			else
				printf("  values");
			for (j = 0; j < show; j++)
				printf(opt.json ? "%s%g" : "%s %g",
				       opt.json && j ? "," : "", p->f[j]);
			if (opt.json)
				printf("]");
			else
				printf("%s\n", p->numel > show ? " ..." : "");
		}
		if (opt.json)
			printf("}");
	}
	if (opt.json) {
		printf("]}\n");
	} else {
		printf("timing   load %.2f ms, compile %.2f ms, first inference %.2f ms",
		       t_load, t_compile, t_first);
		if (opt.niter > 1)
			printf(", steady %.2f ms (median of %d)",
			       steady[1 + (opt.niter - 1) / 2], opt.niter - 1);
		printf("\n");
	}
	npr_image_free(&orig);
	return npr_close(fd) ? 1 : 0;
bad:
	usage(stderr);
	return 2;
}
