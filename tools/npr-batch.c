// SPDX-License-Identifier: MIT
/*
 * npr-batch - run a model on many inputs (photos or raw tensors) with N
 * requests in flight and print one JSON line per input.
 *
 * One io_uring drives everything: the files are opened, sized, read and
 * closed with IORING_OP_OPENAT / STATX / READ / CLOSE, and the library's
 * ring posts each INFER job's completion into the same CQ
 * (NPR_RING_SETUP_ATTACH, IORING_OP_MSG_RING).  Where the library cannot
 * attach (its eventfd fallback), an IORING_OP_POLL_ADD on its ring_fd
 * announces completions, which NPR_IOCTL_REAP then collects.
 *
 * Pipeline: nireq + 2 input slots read and decode ahead; a decoded input
 * waits for a free request, is copied into it (SET_TENSOR) and submitted;
 * at its completion the outputs are read and its line is formatted.  Lines
 * are printed in input order (held back until the earlier ones are out) or
 * as they complete (--unordered).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <liburing.h>

#include "npuring.h"
#include "args.h"
#include "image.h"
#include "json.h"
#include "tool.h"
#include "batch-decode.h"

#define MAX_NIREQ	256
#define MAX_TOP		1001
#define PREFETCH	2		/* input slots beyond nireq */
#define MAX_FILE	(256u << 20)	/* largest input file read */
#define NUM_VALUES	8		/* values shown of another output */

/* user_data: kind in bits 56..63, request in 40..55, input index below */
enum { K_OPEN = 1, K_STATX, K_READ, K_CLOSE, K_INFER, K_POLL };
#define UD(kind, hi, lo) ((uint64_t)(kind) << 56 | (uint64_t)(hi) << 40 | \
			  (uint64_t)(lo))
#define UD_KIND(ud)	((unsigned int)((ud) >> 56))
#define UD_HI(ud)	((unsigned int)((ud) >> 40) & 0xffff)
#define UD_LO(ud)	((ud) & ((1ull << 40) - 1))

static struct {
	const char *dev, *model, *src, *out_dir;
	struct npr_arg_shape *shapes;
	int nshapes, threads, nireq, top;
	float threshold;
	bool unordered, json;
	struct npr_preproc pp;
} opt = { .dev = "cpu", .nireq = 4, .top = 5, .threshold = 0.5f };

static const char help[] =
"usage: npr-batch [-d DEVICE] -m MODEL [--shape SHAPE] [-t THREADS]\n"
"                 [--nireq N] [--unordered] [--top K] [--threshold T]\n"
"                 [--out-dir DIR] [--json] [--rgb] [--scale S]\n"
"                 [--mean A,B,C] [--std A,B,C]  DIR | LISTFILE | -\n"
"\n"
"Run MODEL (OpenVINO IR .xml, ONNX, or a compiled blob) on every input:\n"
"the files of DIR (sorted by name, hidden ones skipped), the paths listed\n"
"one per line in LISTFILE, or on standard input with '-'.  An input is a\n"
"PNG or JPEG photo, or a raw tensor of exactly the input's size (in its\n"
"element type, or in little-endian f32).  Files are read through io_uring\n"
"and N requests stay in flight on the device's ring.  One JSON line per\n"
"input goes to standard output: the top-K classes of a classifier, the\n"
"boxes of an SSD detector ([1,1,N,7] output), or, for other outputs, the\n"
"files written into --out-dir (else the shape and first values); an\n"
"input that cannot be read or decoded gets a line with \"error\".\n"
"Throughput goes to standard error at the end.\n"
"\n"
"  -d, --device DEV      device to open (default cpu)\n"
"  -m, --model MODEL     .xml (the .bin next to it), .onnx, or a blob\n"
"      --shape SHAPE     an input's shape: NAME=1,3,224,224,\n"
"                        NAME[1,3,224,224], or [1,3,224,224]\n"
"  -t, --threads T       INFERENCE_NUM_THREADS of the compiled model\n"
"                        (benchmark_app's -nthreads; its -t is a time)\n"
"      --nireq N         requests in flight (default 4, at most 256)\n"
"      --unordered       print each line when its input completes\n"
"                        (default: in input order)\n"
"      --top K           classes listed for a classifier (default 5)\n"
"      --threshold T     lowest confidence of a detection (default 0.5)\n"
"      --out-dir DIR     write other outputs as DIR/BASE.OUTPUT.f32\n"
"      --json            the final summary as a JSON line on standard\n"
"                        output instead of text on standard error\n"
"      --rgb, --scale S, --mean A,B,C, --std A,B,C\n"
"                        photo preprocessing, as npr-run's\n"
"  -h, --help            show this help\n"
"      --version         print the version and exit\n"
"-nireq, -nthreads and -shape, benchmark_app's spellings, are accepted.\n"
"\n"
"Exit status: 0 when every input succeeded, 1 when one failed or on a\n"
"run-time failure, 2 on a usage error.\n";

/* A library call failed: "npr-batch: <what>: <errno text>: <detail>". */
static void __attribute__((noreturn)) fail_lib(const char *what, int err)
{
	const char *detail = npr_last_error();

	npr_tool_fail("%s: %s%s%s", what, strerror(-err),
		      *detail ? ": " : "", detail);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		npr_tool_fail("out of memory (%zu bytes)", n);
	return p;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		npr_tool_fail("out of memory");
	return p;
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		npr_tool_fail("out of memory");
	return p;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A float as JSON shows it: 6 significant digits. */
static double shown(float v)
{
	char buf[32];

	if (!isfinite(v))
		return v;
	snprintf(buf, sizeof(buf), "%.6g", v);
	return strtod(buf, NULL);
}

/* ---- the model ---- */

struct port {
	char *name;
	unsigned int type, rank;
	int64_t dims[NPR_MAX_RANK];
	size_t numel, bytes;
};

static struct model {
	int fd;
	__u32 exec;
	struct port in;
	struct port *outs;
	int nout;
	bool image_in;		/* [N,C,H,W] with C = 1 or 3 */
} m;

static void port_set_shape(struct port *p, unsigned int rank,
			   const __s64 *dims)
{
	unsigned int i;

	p->rank = rank;
	p->numel = 1;
	for (i = 0; i < rank; i++) {
		p->dims[i] = dims[i];
		p->numel *= dims[i] > 0 ? dims[i] : 0;
	}
	p->bytes = p->numel * npr_elem_size(p->type);
}

static void port_query(__u32 handle, int idx, bool output, struct port *p)
{
	struct npr_port_info pi;
	char name[1024];
	int err;

	npr_prep_port_info(&pi, handle, idx, output, name, sizeof(name));
	err = npr_ioctl(m.fd, NPR_IOCTL_PORT_INFO, &pi);
	if (err)
		fail_lib("PORT_INFO", err);
	p->name = xstrdup(name);
	p->type = pi.elem_type;
	port_set_shape(p, pi.rank, pi.dims);
}

static bool port_dynamic(const struct port *p)
{
	unsigned int i;

	for (i = 0; i < p->rank; i++)
		if (p->dims[i] < 0)
			return true;
	return false;
}

/*
 * Load (or import) the model, compile it with --shape and -t, and read
 * its one input and its outputs.
 */
static void model_setup(void)
{
	struct npr_shape_arg *shapes;
	struct npr_model_info mi = { .size = sizeof(mi) };
	struct npr_prop_arg prop[2] = { { 0 } };
	struct npr_model_load ml;
	struct npr_compile co;
	char msg[512];
	size_t blen = 0;
	void *blob;
	int err, i;

	err = npr_arg_read_blob(opt.model, &blob, &blen, msg, sizeof(msg));
	if (err < 0)
		npr_tool_fail("%s", msg);
	if (blob) {
		struct npr_import ia = {
			.size = sizeof(ia), .data = (uintptr_t)blob,
			.bytes = blen,
		};

		if (opt.nshapes)
			npr_tool_fail("%s: a compiled blob has fixed shapes; --shape does not apply",
				      opt.model);
		err = npr_ioctl(m.fd, NPR_IOCTL_IMPORT, &ia);
		free(blob);
		if (err)
			fail_lib(opt.model, err);
		m.exec = ia.exec;
	} else {
		npr_prep_model_load(&ml, opt.model, NULL);
		err = npr_ioctl(m.fd, NPR_IOCTL_MODEL_LOAD, &ml);
		if (err)
			fail_lib(opt.model, err);
		shapes = xcalloc(opt.nshapes, sizeof(*shapes));
		err = npr_arg_resolve_shapes(m.fd, ml.handle, opt.shapes,
					     opt.nshapes, shapes, msg,
					     sizeof(msg));
		if (err && npr_arg_is_usage(err))
			npr_tool_usage("%s", msg);
		if (err)
			npr_tool_fail("%s", msg);
		npr_prep_compile(&co, ml.handle);
		co.shapes = (uintptr_t)shapes;
		co.num_shapes = opt.nshapes;
		/*
		 * Several requests in flight: each on a CPU of its own (the
		 * THROUGHPUT hint), not each on every CPU; -t sets the
		 * threads of each request instead.
		 */
		prop[0].param = NPR_PARAM_PERFORMANCE_HINT;
		prop[0].value = opt.nireq > 1 ? NPR_PERF_HINT_THROUGHPUT :
						NPR_PERF_HINT_LATENCY;
		co.num_props = 1;
		if (opt.threads) {
			prop[1].param = NPR_PARAM_INFERENCE_NUM_THREADS;
			prop[1].value = opt.threads;
			co.num_props = 2;
		}
		co.props = (uintptr_t)prop;
		err = npr_ioctl(m.fd, NPR_IOCTL_COMPILE, &co);
		if (err)
			fail_lib("COMPILE", err);
		m.exec = co.exec;
		free(shapes);
	}

	mi.handle = m.exec;
	err = npr_ioctl(m.fd, NPR_IOCTL_MODEL_INFO, &mi);
	if (err)
		fail_lib("MODEL_INFO", err);
	if (mi.num_inputs != 1)
		npr_tool_fail("%s: the model has %u inputs; npr-batch feeds models with one",
			      opt.model, mi.num_inputs);
	port_query(m.exec, 0, false, &m.in);
	if (port_dynamic(&m.in))
		npr_tool_fail("input %s has a dynamic shape: give --shape %s=D0,D1,...",
			      m.in.name, m.in.name);
	if (!npr_tensor_elem_ok(m.in.type))
		npr_tool_fail("input %s: element type %s is not supported",
			      m.in.name, npr_elem_name(m.in.type));
	m.image_in = m.in.rank == 4 && (m.in.dims[1] == 1 ||
					m.in.dims[1] == 3) &&
		     m.in.dims[0] >= 1 && m.in.dims[2] >= 1 &&
		     m.in.dims[2] <= INT_MAX && m.in.dims[3] >= 1 &&
		     m.in.dims[3] <= INT_MAX;
	m.nout = mi.num_outputs;
	m.outs = xcalloc(m.nout, sizeof(*m.outs));
	for (i = 0; i < m.nout; i++) {
		port_query(m.exec, i, true, &m.outs[i]);
		if (!npr_tensor_elem_ok(m.outs[i].type))
			npr_tool_fail("output %s: element type %s is not supported",
				      m.outs[i].name, npr_elem_name(m.outs[i].type));
	}
}

/* ---- the inputs ---- */

static struct {
	char **names;
	size_t n, cap;
} in;

static void add_input(const char *name)
{
	if (in.n == in.cap) {
		in.cap = in.cap ? 2 * in.cap : 256;
		in.names = realloc(in.names, in.cap * sizeof(*in.names));
		if (!in.names)
			npr_tool_fail("out of memory");
	}
	in.names[in.n++] = xstrdup(name);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of @dir, sorted by name; hidden ones and directories left. */
static void list_dir(const char *dir)
{
	size_t first = in.n;
	struct dirent *d;
	char path[PATH_MAX];
	DIR *dp = opendir(dir);

	if (!dp)
		npr_tool_fail("%s: %s", dir, strerror(errno));
	while ((errno = 0, d = readdir(dp))) {
		if (d->d_name[0] == '.' || d->d_type == DT_DIR)
			continue;
		if (snprintf(path, sizeof(path), "%s%s%s", dir,
			     dir[strlen(dir) - 1] == '/' ? "" : "/",
			     d->d_name) >= (int)sizeof(path))
			npr_tool_fail("%s/%s: path too long", dir, d->d_name);
		add_input(path);
	}
	if (errno)
		npr_tool_fail("%s: %s", dir, strerror(errno));
	closedir(dp);
	qsort(in.names + first, in.n - first, sizeof(*in.names), cmp_str);
}

/* One path a line; empty lines skipped. */
static void list_file(FILE *f, const char *what)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	while ((len = getline(&line, &cap, f)) >= 0) {
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len)
			add_input(line);
	}
	if (ferror(f))
		npr_tool_fail("%s: %s", what, strerror(errno));
	free(line);
}

static void collect_inputs(void)
{
	unsigned char head[8];
	struct stat st;
	size_t n;
	FILE *f;

	if (!strcmp(opt.src, "-")) {
		list_file(stdin, "standard input");
	} else if (stat(opt.src, &st)) {
		npr_tool_fail("%s: %s", opt.src, strerror(errno));
	} else if (S_ISDIR(st.st_mode)) {
		list_dir(opt.src);
	} else {
		f = fopen(opt.src, "r");
		if (!f)
			npr_tool_fail("%s: %s", opt.src, strerror(errno));
		/* a photo given alone is one input, not a list */
		n = fread(head, 1, sizeof(head), f);
		if (batch_sniff(head, n) != BATCH_FMT_OTHER) {
			add_input(opt.src);
		} else {
			rewind(f);
			list_file(f, opt.src);
		}
		fclose(f);
	}
	if (in.n >= (1ull << 40))
		npr_tool_fail("%s: too many inputs", opt.src);
}

/* ---- the batch ---- */

enum slot_state { S_FREE, S_IO, S_READY };

/* An input on its way in: read, decoded, waiting for a request. */
struct slot {
	enum slot_state state;
	size_t idx;
	int fd;
	struct statx stx;
	uint8_t *buf;
	size_t size, off;
	void *tensor;		/* m.in.bytes */
	int img_w, img_h;	/* the photo's size; 0 for a raw tensor */
};

struct request {
	__u32 handle;
	bool busy;
	size_t idx;
	int img_w, img_h;
	void **out;		/* per output, m.outs[i].bytes (or grown) */
	size_t *out_bytes;
	float *f;		/* one output as f32 */
	size_t f_cap;
};

static struct batch {
	struct io_uring ring;
	bool attached;
	int ring_fd;		/* unattached: the library's pollable fd */
	bool poll_armed;
	unsigned int io_inflight, jobs_inflight;
	struct slot *slots;
	int nslots;
	struct request *reqs;
	size_t next_in, next_out, done, failed;
	char **lines;		/* ordered: lines waiting for earlier ones */
} b;

static struct io_uring_sqe *get_sqe(void)
{
	struct io_uring_sqe *s = io_uring_get_sqe(&b.ring);

	if (!s) {
		int err = io_uring_submit(&b.ring);

		if (err < 0)
			npr_tool_fail("io_uring_submit: %s", strerror(-err));
		s = io_uring_get_sqe(&b.ring);
		if (!s)
			npr_tool_fail("io_uring: no submission queue entry");
	}
	b.io_inflight++;
	return s;
}

/* Print @line (ordered: when every earlier line is out). */
static void emit(size_t idx, char *line)
{
	b.done++;
	if (opt.unordered) {
		fputs(line, stdout);
		free(line);
		return;
	}
	b.lines[idx] = line;
	while (b.next_out < in.n && b.lines[b.next_out]) {
		fputs(b.lines[b.next_out], stdout);
		free(b.lines[b.next_out]);
		b.lines[b.next_out++] = NULL;
	}
}

/* A JSON writer into memory, for one line. */
struct linebuf {
	char *s;
	size_t len;
	FILE *f;
	struct npr_json *j;
};

static void line_open(struct linebuf *l, size_t idx)
{
	l->s = NULL;
	l->f = open_memstream(&l->s, &l->len);
	if (!l->f)
		npr_tool_fail("open_memstream: %s", strerror(errno));
	l->j = npr_json_new(l->f, 0);
	if (!l->j)
		npr_tool_fail("out of memory");
	npr_json_begin_object(l->j);
	npr_json_kv_uint(l->j, "index", idx);
	npr_json_kv_string(l->j, "name", in.names[idx]);
}

static char *line_close(struct linebuf *l)
{
	int err;

	npr_json_end_object(l->j);
	err = npr_json_free(l->j);
	if (fclose(l->f) || err)
		npr_tool_fail("formatting a JSON line: %s",
			      strerror(err ? -err : errno));
	return l->s;
}

/* Input @idx failed: its error line. */
static void __attribute__((format(printf, 2, 3)))
input_failed(size_t idx, const char *fmt, ...)
{
	struct linebuf l;
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	line_open(&l, idx);
	npr_json_kv_string(l.j, "error", msg);
	b.failed++;
	emit(idx, line_close(&l));
}

/* ---- one input's file ---- */

static void slot_start(struct slot *s)
{
	struct io_uring_sqe *q = get_sqe();

	s->state = S_IO;
	s->idx = b.next_in++;
	s->fd = -1;
	s->off = s->size = 0;
	io_uring_prep_openat(q, AT_FDCWD, in.names[s->idx],
			     O_RDONLY | O_CLOEXEC, 0);
	io_uring_sqe_set_data64(q, UD(K_OPEN, s - b.slots, s->idx));
}

static void slot_close_fd(struct slot *s)
{
	struct io_uring_sqe *q;

	if (s->fd < 0)
		return;
	q = get_sqe();
	io_uring_prep_close(q, s->fd);
	io_uring_sqe_set_data64(q, UD(K_CLOSE, 0, 0));
	s->fd = -1;
}

static void __attribute__((format(printf, 2, 3)))
slot_failed(struct slot *s, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	slot_close_fd(s);
	s->state = S_FREE;
	input_failed(s->idx, "%s", msg);
}

static void slot_read(struct slot *s)
{
	struct io_uring_sqe *q = get_sqe();

	io_uring_prep_read(q, s->fd, s->buf + s->off, s->size - s->off,
			   s->off);
	io_uring_sqe_set_data64(q, UD(K_READ, s - b.slots, s->idx));
}

/* A raw tensor: the input's bytes as they are, or f32 converted. */
static int fill_raw(struct slot *s, char *msg, size_t len)
{
	size_t i;

	if (s->size == m.in.bytes) {
		memcpy(s->tensor, s->buf, s->size);
		return 0;
	}
	if (m.in.type != NPR_ELEM_F32 && s->size == m.in.numel * 4) {
		for (i = 0; i < m.in.numel; i++)
			npr_tensor_elem_set(s->tensor, m.in.type, i,
				 npr_f32_from_le(s->buf + i * 4));
		return 0;
	}
	if (m.in.type == NPR_ELEM_F32)
		snprintf(msg, len, "%zu bytes: not a PNG or JPEG image, nor a raw tensor of input %s (%zu bytes)",
			 s->size, m.in.name, m.in.bytes);
	else
		snprintf(msg, len, "%zu bytes: not a PNG or JPEG image, nor a raw tensor of input %s (%zu bytes of %s or %zu of f32)",
			 s->size, m.in.name, m.in.bytes,
			 npr_elem_name(m.in.type), m.in.numel * 4);
	return -EINVAL;
}

/* A photo, resized and preprocessed as npr-run does it. */
static int fill_image(struct slot *s, char *msg, size_t len)
{
	struct npr_image orig, sized = { 0 };
	struct npr_preproc pp = opt.pp;
	size_t per = m.in.numel / m.in.dims[0], n, i, esz;
	float *f = NULL;
	int err;

	if (!m.image_in) {
		snprintf(msg, len, "input %s is not an image input ([N,C,H,W] with C = 1 or 3)",
			 m.in.name);
		return -EINVAL;
	}
	err = batch_decode(s->buf, s->size, &orig, msg, len);
	if (err)
		return err;
	s->img_w = orig.w;
	s->img_h = orig.h;
	err = npr_image_resize_bilinear(&orig, (int)m.in.dims[3],
					(int)m.in.dims[2], &sized);
	npr_image_free(&orig);
	if (err) {
		snprintf(msg, len, "resize: %s", npr_image_last_error());
		return err;
	}
	pp.gray = m.in.dims[1] == 1;
	esz = npr_elem_size(m.in.type);
	if (m.in.type != NPR_ELEM_F32 && m.in.type != NPR_ELEM_F16)
		f = xmalloc(per * sizeof(float));
	for (n = 0; !err && n < (size_t)m.in.dims[0]; n++) {
		if (f) {
			err = npr_image_to_tensor(&sized, &pp, NPR_ELEM_F32, f);
			for (i = 0; !err && i < per; i++)
				npr_tensor_elem_set(s->tensor, m.in.type,
					       n * per + i, f[i]);
		} else {
			err = npr_image_to_tensor(&sized, &pp, m.in.type,
					(char *)s->tensor + n * per * esz);
		}
	}
	if (err)
		snprintf(msg, len, "%s", npr_image_last_error());
	free(f);
	npr_image_free(&sized);
	return err;
}

static void slot_decode(struct slot *s)
{
	char msg[512];
	int err;

	s->img_w = s->img_h = 0;
	if (batch_sniff(s->buf, s->size) != BATCH_FMT_OTHER)
		err = fill_image(s, msg, sizeof(msg));
	else
		err = fill_raw(s, msg, sizeof(msg));
	free(s->buf);
	s->buf = NULL;
	if (err) {
		slot_failed(s, "%s", msg);
		return;
	}
	s->state = S_READY;
}

static void on_file_cqe(unsigned int kind, struct slot *s, int res)
{
	switch (kind) {
	case K_OPEN:
		if (res < 0) {
			slot_failed(s, "%s", strerror(-res));
			return;
		}
		s->fd = res;
		struct io_uring_sqe *q = get_sqe();

		io_uring_prep_statx(q, s->fd, "", AT_EMPTY_PATH,
				    STATX_TYPE | STATX_SIZE, &s->stx);
		io_uring_sqe_set_data64(q, UD(K_STATX, s - b.slots, s->idx));
		return;
	case K_STATX:
		if (res < 0) {
			slot_failed(s, "%s", strerror(-res));
			return;
		}
		if (!S_ISREG(s->stx.stx_mode)) {
			slot_failed(s, "not a regular file");
			return;
		}
		if (!s->stx.stx_size) {
			slot_failed(s, "empty file");
			return;
		}
		if (s->stx.stx_size > MAX_FILE) {
			slot_failed(s, "%llu bytes is too large (at most %u)",
				    (unsigned long long)s->stx.stx_size,
				    MAX_FILE);
			return;
		}
		s->size = s->stx.stx_size;
		s->buf = malloc(s->size);
		if (!s->buf) {
			slot_failed(s, "out of memory (%zu bytes)", s->size);
			return;
		}
		slot_read(s);
		return;
	case K_READ:
		if (res <= 0) {
			free(s->buf);
			s->buf = NULL;
			slot_failed(s, "%s", res ? strerror(-res) :
				    "the file shrank while being read");
			return;
		}
		s->off += res;
		if (s->off < s->size) {
			slot_read(s);
			return;
		}
		slot_close_fd(s);
		slot_decode(s);
		return;
	}
}

/* ---- the jobs ---- */

/* The message of a failed INFER job. */
static void job_message(uint64_t ud, int res, char *buf, size_t len)
{
	struct npr_get_error ge = { .size = sizeof(ge) };

	ge.flags = NPR_GET_ERROR_JOB;
	ge.user_data = ud;
	ge.buf = (uintptr_t)buf;
	ge.len = len;
	if (npr_ioctl(m.fd, NPR_IOCTL_GET_ERROR, &ge) || !*buf)
		snprintf(buf, len, "%s", strerror(-res));
}

/* Lowest input index among the decoded slots, or NULL. */
static struct slot *ready_slot(void)
{
	struct slot *best = NULL;
	int i;

	for (i = 0; i < b.nslots; i++)
		if (b.slots[i].state == S_READY &&
		    (!best || b.slots[i].idx < best->idx))
			best = &b.slots[i];
	return best;
}

static void submit_jobs(void)
{
	struct npr_submit su = { .size = sizeof(su) };
	struct npr_sqe sqe;
	struct slot *s;
	int r, err;

	for (r = 0; r < opt.nireq; r++) {
		struct request *rq = &b.reqs[r];
		struct npr_tensor_arg ta;

		if (rq->busy)
			continue;
		s = ready_slot();
		if (!s)
			return;
		npr_prep_tensor(&ta, rq->handle, 0, 0, s->tensor, m.in.bytes);
		ta.elem_type = m.in.type;
		ta.rank = m.in.rank;
		memcpy(ta.dims, m.in.dims, sizeof(ta.dims));
		err = npr_ioctl(m.fd, NPR_IOCTL_SET_TENSOR, &ta);
		if (err)
			fail_lib("SET_TENSOR", err);
		memset(&sqe, 0, sizeof(sqe));
		sqe.opcode = NPR_OP_INFER;
		sqe.handle = rq->handle;
		sqe.user_data = UD(K_INFER, r, s->idx);
		su.sqes = (uintptr_t)&sqe;
		su.count = 1;
		err = npr_ioctl(m.fd, NPR_IOCTL_SUBMIT, &su);
		if (err)
			fail_lib("SUBMIT", err);
		rq->busy = true;
		rq->idx = s->idx;
		rq->img_w = s->img_w;
		rq->img_h = s->img_h;
		s->state = S_FREE;
		b.jobs_inflight++;
	}
}

/* Output @i of request @rq as f32, its shape in @p. */
static int read_output(struct request *rq, int i, struct port *p)
{
	struct npr_tensor_arg ta;
	size_t n;
	int err;

	*p = m.outs[i];
	npr_prep_tensor(&ta, rq->handle, i, 1, rq->out[i], rq->out_bytes[i]);
	err = npr_ioctl(m.fd, NPR_IOCTL_GET_TENSOR, &ta);
	if (err == -EMSGSIZE) {
		/* a shape known only after inference */
		free(rq->out[i]);
		rq->out[i] = xmalloc(ta.bytes);
		rq->out_bytes[i] = ta.bytes;
		npr_prep_tensor(&ta, rq->handle, i, 1, rq->out[i], ta.bytes);
		err = npr_ioctl(m.fd, NPR_IOCTL_GET_TENSOR, &ta);
	}
	if (err)
		return err;
	port_set_shape(p, ta.rank, ta.dims);
	if (p->numel > rq->f_cap) {
		free(rq->f);
		rq->f = xmalloc(p->numel * sizeof(float));
		rq->f_cap = p->numel;
	}
	for (n = 0; n < p->numel; n++)
		rq->f[n] = npr_tensor_elem_get(rq->out[i], p->type, n);
	return 0;
}

/* An SSD DetectionOutput: [1,1,N,7] rows of image_id, label, conf, box. */
static bool is_detector(const struct port *p)
{
	return p->rank == 4 && p->dims[0] == 1 && p->dims[1] == 1 &&
	       p->dims[2] >= 1 && p->dims[3] == 7;
}

/*
 * A classifier, as npr-run decides it: [N,C] or [N,C,1,1] with 1000 or
 * 1001 classes, or any C >= 2 values forming a probability distribution.
 */
static bool is_classifier(const struct port *p, const float *f)
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
		double sum = 0;

		for (i = 0; i < (size_t)c; i++) {
			float v = f[n * c + i];

			if (!(v >= -1e-3f && v <= 1.001f))
				return false;
			sum += v;
		}
		if (fabs(sum - 1) > 0.01)
			return false;
	}
	return true;
}

/* The top-K classes of each image of the batch, best first (ties: the
 * lower class), NaN never shown above a number. */
static void json_classes(struct npr_json *j, const struct port *p,
			 const float *f)
{
	size_t c = p->dims[1], n;
	int top = opt.top < (int)c ? opt.top : (int)c, k, best;
	bool *taken = xcalloc(c, sizeof(bool));
	size_t i;

	npr_json_kv_string(j, "kind", "classes");
	npr_json_key(j, "top");
	npr_json_begin_array(j);
	for (n = 0; n < (size_t)p->dims[0]; n++) {
		const float *s = f + n * c;

		memset(taken, 0, c * sizeof(bool));
		for (k = 0; k < top; k++) {
			best = -1;
			for (i = 0; i < c; i++) {
				if (taken[i])
					continue;
				if (best < 0 || s[i] > s[best] ||
				    (isnan(s[best]) && !isnan(s[i])))
					best = (int)i;
			}
			taken[best] = true;
			npr_json_begin_object(j);
			if (p->dims[0] > 1)
				npr_json_kv_uint(j, "image", n);
			npr_json_kv_int(j, "class", best);
			npr_json_kv_double(j, "score", shown(s[best]));
			npr_json_end_object(j);
		}
	}
	npr_json_end_array(j);
	free(taken);
}

static void json_detections(struct npr_json *j, const struct port *p,
			    const float *f, const struct request *rq)
{
	/* boxes in pixels of the photo, else as the model gives them */
	double W = rq->img_w ? rq->img_w : 1, H = rq->img_h ? rq->img_h : 1;
	int64_t r;
	int k;

	npr_json_kv_string(j, "kind", "detections");
	npr_json_key(j, "detections");
	npr_json_begin_array(j);
	for (r = 0; r < p->dims[2]; r++) {
		const float *d = f + r * 7;
		double box[4] = { d[3] * W, d[4] * H, d[5] * W, d[6] * H };

		if (d[0] < 0 || !(d[2] >= opt.threshold))
			continue;
		npr_json_begin_object(j);
		npr_json_kv_int(j, "label", (int)d[1]);
		npr_json_kv_double(j, "confidence", shown(d[2]));
		npr_json_key(j, "box");
		npr_json_begin_array(j);
		for (k = 0; k < 4; k++)
			npr_json_double(j, rq->img_w ? round(box[k] * 10) / 10 :
					shown((float)box[k]));
		npr_json_end_array(j);
		npr_json_end_object(j);
	}
	npr_json_end_array(j);
}

static void json_shape(struct npr_json *j, const struct port *p)
{
	unsigned int i;

	npr_json_key(j, "shape");
	npr_json_begin_array(j);
	for (i = 0; i < p->rank; i++)
		npr_json_int(j, p->dims[i]);
	npr_json_end_array(j);
}

/* --out-dir: BASE.OUTPUT.f32, '/' in OUTPUT becomes '_'. */
static int write_output(const struct port *p, const float *f, size_t idx,
			char *path, size_t plen)
{
	const char *base = strrchr(in.names[idx], '/');
	uint8_t *buf;
	size_t n;
	char *c;
	FILE *out;
	int err = 0;

	base = base ? base + 1 : in.names[idx];
	if (snprintf(path, plen, "%s/%s.%s.f32", opt.out_dir, base,
		     p->name) >= (int)plen)
		return -ENAMETOOLONG;
	for (c = path + strlen(opt.out_dir) + 1 + strlen(base) + 1; *c; c++)
		if (*c == '/')
			*c = '_';
	buf = xmalloc(p->numel * 4);
	for (n = 0; n < p->numel; n++)
		npr_f32_to_le(f[n], buf + n * 4);
	out = fopen(path, "wb");
	if (!out || fwrite(buf, 4, p->numel, out) != p->numel)
		err = -errno;
	if (out && fclose(out) && !err)
		err = -errno;
	free(buf);
	return err ? err : 0;
}

/* Another output without --out-dir: its shape and first values. */
static void json_values(struct npr_json *j, const struct port *p,
			const float *f)
{
	size_t k, n = p->numel > 2 * NUM_VALUES ? NUM_VALUES : p->numel;

	npr_json_kv_string(j, "kind", "tensor");
	json_shape(j, p);
	npr_json_key(j, "values");
	npr_json_begin_array(j);
	for (k = 0; k < n; k++)
		npr_json_double(j, shown(f[k]));
	npr_json_end_array(j);
}

/* Request @r completed with @res: its input's line. */
static void on_job_cqe(uint64_t ud, int res)
{
	struct request *rq = &b.reqs[UD_HI(ud)];
	char msg[PATH_MAX + 256];
	struct linebuf l;
	struct port p;
	int i, err;

	b.jobs_inflight--;
	rq->busy = false;
	if (res < 0) {
		job_message(ud, res, msg, sizeof(msg));
		input_failed(rq->idx, "INFER: %s", msg);
		return;
	}
	line_open(&l, rq->idx);
	if (m.nout > 1) {
		npr_json_key(l.j, "outputs");
		npr_json_begin_array(l.j);
	}
	for (i = 0; i < m.nout; i++) {
		err = read_output(rq, i, &p);
		if (err)
			fail_lib("GET_TENSOR", err);
		if (m.nout > 1) {
			npr_json_begin_object(l.j);
			npr_json_kv_string(l.j, "output", p.name);
		}
		if (is_detector(&p)) {
			json_detections(l.j, &p, rq->f, rq);
		} else if (opt.top && is_classifier(&p, rq->f)) {
			json_classes(l.j, &p, rq->f);
		} else if (opt.out_dir) {
			err = write_output(&p, rq->f, rq->idx, msg,
					   sizeof(msg));
			if (err)
				npr_tool_fail("%s: %s", msg, strerror(-err));
			npr_json_kv_string(l.j, "kind", "file");
			npr_json_kv_string(l.j, "file", msg);
			json_shape(l.j, &p);
		} else {
			json_values(l.j, &p, rq->f);
		}
		if (m.nout > 1)
			npr_json_end_object(l.j);
	}
	if (m.nout > 1)
		npr_json_end_array(l.j);
	emit(rq->idx, line_close(&l));
}

/* Unattached: collect what REAP has; re-arm the poll. */
static void reap_jobs(void)
{
	struct npr_cqe cqes[MAX_NIREQ];
	struct npr_reap re = { .size = sizeof(re) };
	unsigned int i;
	int err;

	re.cqes = (uintptr_t)cqes;
	re.max = opt.nireq;
	re.min = 0;
	err = npr_ioctl(m.fd, NPR_IOCTL_REAP, &re);
	if (err && err != -ETIME)
		fail_lib("REAP", err);
	for (i = 0; i < re.count; i++)
		on_job_cqe(cqes[i].user_data, cqes[i].res);
}

static void arm_poll(void)
{
	struct io_uring_sqe *q;

	if (b.attached || b.poll_armed)
		return;
	q = get_sqe();
	io_uring_prep_poll_add(q, b.ring_fd, POLLIN);
	io_uring_sqe_set_data64(q, UD(K_POLL, 0, 0));
	b.poll_armed = true;
}

static void on_cqe(uint64_t ud, int res)
{
	unsigned int kind = UD_KIND(ud);

	if (kind == K_INFER) {
		on_job_cqe(ud, res);
		return;
	}
	b.io_inflight--;
	switch (kind) {
	case K_OPEN: case K_STATX: case K_READ:
		on_file_cqe(kind, &b.slots[UD_HI(ud)], res);
		break;
	case K_CLOSE:
		break;
	case K_POLL:
		b.poll_armed = false;
		if (res < 0)
			npr_tool_fail("poll on the device's ring: %s",
				      strerror(-res));
		reap_jobs();
		break;
	default:
		npr_tool_fail("unexpected completion %#llx",
			      (unsigned long long)ud);
	}
}

/* io_uring, the library's ring attached to it, the requests, the slots. */
static void batch_setup(void)
{
	struct npr_ring_setup rs = { .size = sizeof(rs) };
	struct io_uring_params p = { 0 };
	unsigned int entries;
	int err, i;

	b.nslots = opt.nireq + PREFETCH;
	entries = 2 * (b.nslots + opt.nireq) + 8;
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 4 * entries;
	err = io_uring_queue_init_params(entries, &b.ring, &p);
	if (err)
		npr_tool_fail("io_uring_queue_init: %s", strerror(-err));

	rs.flags = NPR_RING_SETUP_ATTACH;
	rs.attach_fd = b.ring.ring_fd;
	rs.cq_entries = 256;
	err = npr_ioctl(m.fd, NPR_IOCTL_RING_SETUP, &rs);
	if (err == -EOPNOTSUPP) {
		/* the eventfd fallback: poll its ring_fd instead */
		memset(&rs, 0, sizeof(rs));
		rs.size = sizeof(rs);
		rs.cq_entries = 256;
		err = npr_ioctl(m.fd, NPR_IOCTL_RING_SETUP, &rs);
	} else {
		b.attached = true;
	}
	if (err)
		fail_lib("RING_SETUP", err);
	b.ring_fd = rs.ring_fd;

	b.reqs = xcalloc(opt.nireq, sizeof(*b.reqs));
	for (i = 0; i < opt.nireq; i++) {
		struct request *rq = &b.reqs[i];
		struct npr_req_create rc;
		int k;

		npr_prep_req_create(&rc, m.exec);
		err = npr_ioctl(m.fd, NPR_IOCTL_REQ_CREATE, &rc);
		if (err)
			fail_lib("REQ_CREATE", err);
		rq->handle = rc.req;
		rq->out = xcalloc(m.nout, sizeof(*rq->out));
		rq->out_bytes = xcalloc(m.nout, sizeof(*rq->out_bytes));
		for (k = 0; k < m.nout; k++) {
			rq->out_bytes[k] = m.outs[k].bytes;
			rq->out[k] = xmalloc(m.outs[k].bytes);
		}
	}
	b.slots = xcalloc(b.nslots, sizeof(*b.slots));
	for (i = 0; i < b.nslots; i++) {
		b.slots[i].tensor = xmalloc(m.in.bytes);
		b.slots[i].fd = -1;
	}
	if (!opt.unordered)
		b.lines = xcalloc(in.n, sizeof(*b.lines));
}

static void batch_run(void)
{
	struct io_uring_cqe *c;
	unsigned int head, n;
	int i, err;

	while (b.done < in.n) {
		for (i = 0; i < b.nslots && b.next_in < in.n; i++)
			if (b.slots[i].state == S_FREE)
				slot_start(&b.slots[i]);
		submit_jobs();
		if (b.jobs_inflight)
			arm_poll();
		if (b.done == in.n)
			break;
		if (!b.io_inflight && !b.jobs_inflight)
			npr_tool_fail("internal error: %zu inputs left, nothing in flight",
				      in.n - b.done);
		err = io_uring_submit_and_wait(&b.ring, 1);
		if (err < 0 && err != -EINTR)
			npr_tool_fail("io_uring_submit_and_wait: %s",
				      strerror(-err));
		n = 0;
		io_uring_for_each_cqe(&b.ring, head, c) {
			on_cqe(c->user_data, c->res);
			n++;
		}
		io_uring_cq_advance(&b.ring, n);
	}
	/* the last closes */
	while (b.io_inflight > (b.poll_armed ? 1u : 0u)) {
		err = io_uring_submit_and_wait(&b.ring, 1);
		if (err < 0 && err != -EINTR)
			npr_tool_fail("io_uring_submit_and_wait: %s",
				      strerror(-err));
		n = 0;
		io_uring_for_each_cqe(&b.ring, head, c) {
			if (UD_KIND(c->user_data) == K_CLOSE)
				b.io_inflight--;
			n++;
		}
		io_uring_cq_advance(&b.ring, n);
	}
}

static void summary(double load_s, double wall_s)
{
	size_t ok = in.n - b.failed;
	double rate = wall_s > 0 ? in.n / wall_s : 0;
	struct npr_json *j;
	int err;

	if (!opt.json) {
		fprintf(stderr, "npr-batch: %zu input%s (%zu ok, %zu failed) in %.3f s: %.1f inputs/s, %d request%s in flight (model ready in %.3f s)\n",
			in.n, in.n == 1 ? "" : "s", ok, b.failed, wall_s, rate,
			opt.nireq, opt.nireq > 1 ? "s" : "", load_s);
		return;
	}
	j = npr_json_new(stdout, 0);
	if (!j)
		npr_tool_fail("out of memory");
	npr_json_begin_object(j);
	npr_json_key(j, "summary");
	npr_json_begin_object(j);
	npr_json_kv_string(j, "device", opt.dev);
	npr_json_kv_string(j, "model", opt.model);
	npr_json_kv_uint(j, "inputs", in.n);
	npr_json_kv_uint(j, "ok", ok);
	npr_json_kv_uint(j, "failed", b.failed);
	npr_json_kv_int(j, "nireq", opt.nireq);
	npr_json_kv_bool(j, "ordered", !opt.unordered);
	npr_json_kv_string(j, "completions", b.attached ? "attached" :
			   "polled");
	npr_json_kv_double(j, "model_ready_s", round(load_s * 1e6) / 1e6);
	npr_json_kv_double(j, "wall_s", round(wall_s * 1e6) / 1e6);
	npr_json_kv_double(j, "inputs_per_s", round(rate * 1e3) / 1e3);
	npr_json_end_object(j);
	npr_json_end_object(j);
	err = npr_json_free(j);
	if (err)
		npr_tool_fail("standard output: %s", strerror(-err));
}

/* ---- main ---- */

/* OpenVINO benchmark_app's single-dash spellings */
static const struct npr_tool_alias aliases[] = {
	{ "nireq", "nireq" }, { "nthreads", "threads" }, { "shape", "shape" },
	{ NULL, NULL },
};

static void parse_args(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "device",	required_argument,	NULL, 'd' },
		{ "model",	required_argument,	NULL, 'm' },
		{ "shape",	required_argument,	NULL, 'S' },
		{ "threads",	required_argument,	NULL, 't' },
		{ "nireq",	required_argument,	NULL, 'n' },
		{ "unordered",	no_argument,		NULL, 'u' },
		{ "top",	required_argument,	NULL, 'k' },
		{ "threshold",	required_argument,	NULL, 'T' },
		{ "out-dir",	required_argument,	NULL, 'o' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "rgb",	no_argument,		NULL, 'r' },
		{ "scale",	required_argument,	NULL, 'c' },
		{ "mean",	required_argument,	NULL, 'M' },
		{ "std",	required_argument,	NULL, 's' },
		{ "help",	no_argument,		NULL, 'h' },
		{ "version",	no_argument,		NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct stat st;
	char msg[512];
	int c, i;

	npr_preproc_default(&opt.pp);
	npr_tool_aliases(argc, argv, "d:m:t:h", lopts, aliases);
	while ((c = getopt_long(argc, argv, "d:m:t:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			opt.dev = optarg;
			break;
		case 'm':
			opt.model = optarg;
			break;
		case 'S':
			if (npr_arg_parse_shapes(optarg, &opt.shapes,
						 &opt.nshapes, msg,
						 sizeof(msg)))
				npr_tool_usage("%s", msg);
			break;
		case 't':
			opt.threads = npr_tool_int("-t", optarg, 1, 1024);
			break;
		case 'n':
			opt.nireq = npr_tool_int("--nireq", optarg, 1, MAX_NIREQ);
			break;
		case 'u':
			opt.unordered = true;
			break;
		case 'k':
			opt.top = npr_tool_int("--top", optarg, 0, MAX_TOP);
			break;
		case 'T':
			opt.threshold = npr_tool_float("--threshold", optarg);
			break;
		case 'o':
			opt.out_dir = optarg;
			break;
		case 'j':
			opt.json = true;
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
					npr_tool_usage("--std: a divisor is zero");
			break;
		case 'h':
			fputs(help, stdout);
			exit(NPR_EXIT_OK);
		case 'V':
			npr_tool_version();
			exit(NPR_EXIT_OK);
		default:
			npr_tool_usage(NULL);
		}
	}
	if (!opt.model)
		npr_tool_usage("no model: give -m MODEL");
	if (optind == argc)
		npr_tool_usage("no inputs: give a directory, a list file or '-'");
	if (optind + 1 < argc)
		npr_tool_usage("unexpected argument '%s': give one directory, list file or '-'",
			       argv[optind + 1]);
	opt.src = argv[optind];
	if (opt.out_dir && stat(opt.out_dir, &st))
		npr_tool_usage("--out-dir %s: %s", opt.out_dir, strerror(errno));
	if (opt.out_dir && !S_ISDIR(st.st_mode))
		npr_tool_usage("--out-dir %s: not a directory", opt.out_dir);
}

int main(int argc, char **argv)
{
	double t0, t1, t2;
	int err;

	npr_tool_init("npr-batch");
	parse_args(argc, argv);
	collect_inputs();

	t0 = now_s();
	m.fd = npr_open(opt.dev, 0);
	if (m.fd < 0)
		fail_lib(opt.dev, m.fd);
	model_setup();
	batch_setup();
	t1 = now_s();
	batch_run();
	t2 = now_s();
	if (fflush(stdout))
		npr_tool_fail("standard output: %s", strerror(errno));
	summary(t1 - t0, t2 - t1);

	/* the attached ring must outlive the device's fd */
	err = npr_close(m.fd);
	if (err)
		fail_lib("close", err);
	io_uring_queue_exit(&b.ring);
	if (fflush(stdout) || ferror(stdout))
		npr_tool_fail("standard output: %s", strerror(errno ? errno : EIO));
	return b.failed ? 1 : 0;
}
