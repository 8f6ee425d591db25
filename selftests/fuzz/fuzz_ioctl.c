// SPDX-License-Identifier: MIT
/*
 * Fuzz target: a sequence of npr_ioctl() calls read off the input, on a
 * fresh cpu or null device that starts with a small model, its compiled
 * model and a request.  Each step picks a command (or any number at all),
 * fills its struct from the input - handles live, destroyed, of another
 * kind or random; any size, flags and reserved fields - and calls it.
 *
 * Pointers in the structs always point at buffers the target owns, with
 * lengths that fit them: a library cannot tell a wild pointer from a good
 * one, so only what the caller can get wrong without lying about memory
 * is fuzzed.  Paths and the cache directory come from a fixed list of
 * harmless ones, for the same reason.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "fuzz.h"

#define MAX_STEPS	64
#define ARG_BYTES	512
#define BUF_BYTES	16384
#define NHANDLES	16

static const unsigned long cmds[] = {
	NPR_IOCTL_DEVICE_INFO, NPR_IOCTL_GET_PARAM, NPR_IOCTL_SET_PARAM,
	NPR_IOCTL_MODEL_LOAD, NPR_IOCTL_MODEL_INFO, NPR_IOCTL_PORT_INFO,
	NPR_IOCTL_COMPILE, NPR_IOCTL_REQ_CREATE, NPR_IOCTL_SET_TENSOR,
	NPR_IOCTL_GET_TENSOR, NPR_IOCTL_INFER, NPR_IOCTL_HANDLE_DESTROY,
	NPR_IOCTL_GET_ERROR, NPR_IOCTL_PROP_INFO, NPR_IOCTL_STATE_INFO,
	NPR_IOCTL_STATE_GET, NPR_IOCTL_STATE_SET, NPR_IOCTL_STATE_RESET,
	NPR_IOCTL_EXPORT, NPR_IOCTL_IMPORT, NPR_IOCTL_PROFILE,
	NPR_IOCTL_QUERY_MODEL, NPR_IOCTL_BO_CREATE, NPR_IOCTL_BO_INFO,
	NPR_IOCTL_BO_BIND, NPR_IOCTL_MAKE_STATEFUL, NPR_IOCTL_RING_SETUP,
	NPR_IOCTL_SUBMIT, NPR_IOCTL_REAP,
};
#define NCMDS	(sizeof(cmds) / sizeof(cmds[0]))

/*
 * The library runs a command by its number whatever size the command
 * encodes (as DRM does), so a made-up command with a known number gets
 * that command's pointers: only the caller can keep them valid.
 */
static unsigned long canonical(unsigned long cmd)
{
	unsigned int i;

	if (_IOC_TYPE(cmd) != NPR_IOCTL_TYPE ||
	    _IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE))
		return cmd;
	for (i = 0; i < NCMDS; i++)
		if (_IOC_NR(cmds[i]) == _IOC_NR(cmd))
			return cmds[i];
	return cmd;
}

/* Names MAKE_STATEFUL and friends may be given. */
static const char *const names[] = {
	"x", "y", "y/sink", "c", "", "no such port",
};

static char dir[64];

/* What one input works with. */
struct run {
	int fd;
	uint32_t h[NHANDLES];
	unsigned int nh;
	unsigned int inflight;
	unsigned char *buf;		/* every pointer points in here */
	unsigned char *blob;		/* an exported blob, for IMPORT */
	size_t blob_len;
};

static void cleanup(void)
{
	fz_clear_dir(dir);
	rmdir(dir);
}

static void keep(struct run *r, uint32_t h)
{
	if (h && r->nh < NHANDLES)
		r->h[r->nh++] = h;
}

/* A handle: live or destroyed, of another kind, 0 or random. */
static uint32_t handle(struct run *r, struct fz *f)
{
	unsigned int c = fz_u8(f);

	if (c < 192 && r->nh)
		return r->h[c % r->nh];
	if (c < 224 && r->nh)	/* the same object number, another kind */
		return (r->h[c % r->nh] & 0x0fffffff) |
		       (uint32_t)(1 + fz_u8(f) % 5) << 28;
	if (c < 240)
		return 0;
	return fz_u32(f);
}

/* @n bytes of the buffer, at an offset the input picks, aligned to 8. */
static void *area(struct run *r, struct fz *f, size_t n)
{
	size_t off;

	if (n > BUF_BYTES)
		n = BUF_BYTES;
	off = (fz_u16(f) % (BUF_BYTES - n + 1)) & ~(size_t)7;
	return r->buf + off;
}

/* A length of at most @max bytes: the whole, or any. */
static uint32_t len(struct fz *f, uint32_t max)
{
	return fz_u8(f) & 1 ? max : fz_u16(f) % (max + 1);
}

static void dims(struct fz *f, __s64 *d)
{
	int i;

	for (i = 0; i < NPR_MAX_RANK; i++)
		d[i] = fz_u8(f) < 200 ? (__s64)(fz_u8(f) % 6) :
					(__s64)fz_u64(f);
}

/* A model to load: the ReLU, the Add with its weights, or input bytes. */
static void model_bytes(struct run *r, struct fz *f, struct npr_model_load *a)
{
	size_t n;
	const uint8_t *p;
	void *b;

	switch (fz_u8(f) % 4) {
	case 0:
		a->xml = (uintptr_t)fz_relu_xml;
		a->xml_size = sizeof(fz_relu_xml) - 1;
		break;
	case 1:
		a->xml = (uintptr_t)fz_add_xml;
		a->xml_size = sizeof(fz_add_xml) - 1;
		a->bin = (uintptr_t)fz_add_bin;
		a->bin_size = fz_u8(f) & 1 ? sizeof(fz_add_bin) : fz_u8(f) % 16;
		break;
	default:
		p = fz_bytes(f, fz_u16(f) % 2048, &n);
		b = area(r, f, n);
		memcpy(b, p, n);
		a->xml = (uintptr_t)b;
		a->xml_size = n;
		break;
	}
}

/* The scalar fields of the command's struct. */
static void fill(struct run *r, struct fz *f, unsigned long cmd, void *arg)
{
	switch (cmd) {
	case NPR_IOCTL_GET_PARAM:
	case NPR_IOCTL_SET_PARAM: {
		struct npr_param *a = arg;

		a->handle = fz_u8(f) & 1 ? 0 : handle(r, f);
		a->param = fz_u8(f) % 80;
		a->value = fz_u8(f) & 1 ? fz_u8(f) : fz_u64(f);
		a->type = fz_u8(f) % 8;
		break;
	}
	case NPR_IOCTL_PROP_INFO: {
		struct npr_prop_info *a = arg;
		size_t n;
		const uint8_t *p;

		a->flags = fz_u8(f) % 4;
		a->handle = fz_u8(f) & 1 ? 0 : handle(r, f);
		a->index = fz_u8(f);
		a->id = fz_u8(f);
		p = fz_bytes(f, fz_u8(f) % 65, &n);
		memcpy(a->name, p, n);
		break;
	}
	case NPR_IOCTL_MODEL_LOAD: {
		struct npr_model_load *a = arg;

		a->flags = fz_u8(f) < 224 ? NPR_MODEL_LOAD_MEMORY :
					    fz_u8(f) % 4;
		break;
	}
	case NPR_IOCTL_MODEL_INFO:
	case NPR_IOCTL_QUERY_MODEL:
	case NPR_IOCTL_REQ_CREATE:
	case NPR_IOCTL_INFER:
	case NPR_IOCTL_HANDLE_DESTROY:
	case NPR_IOCTL_EXPORT:
	case NPR_IOCTL_PROFILE: {
		/* the handle is the third field in each of them */
		uint32_t *a = arg;

		a[2] = handle(r, f);
		break;
	}
	case NPR_IOCTL_PORT_INFO: {
		struct npr_port_info *a = arg;

		a->flags = fz_u8(f) % 2;
		a->handle = handle(r, f);
		a->index = fz_u8(f) % 4;
		break;
	}
	case NPR_IOCTL_COMPILE: {
		struct npr_compile *a = arg;

		a->model = handle(r, f);
		break;
	}
	case NPR_IOCTL_SET_TENSOR:
	case NPR_IOCTL_GET_TENSOR: {
		struct npr_tensor_arg *a = arg;

		a->flags = fz_u8(f) % 8;
		a->req = handle(r, f);
		a->index = fz_u8(f) % 3;
		a->elem_type = fz_u8(f) < 200 ? NPR_ELEM_F32 : fz_u8(f) % 20;
		a->rank = fz_u8(f) < 200 ? 2 : fz_u8(f) % 10;
		a->dims[0] = 1;
		a->dims[1] = 4;
		if (fz_u8(f) >= 200)
			dims(f, a->dims);
		break;
	}
	case NPR_IOCTL_STATE_INFO:
	case NPR_IOCTL_STATE_GET:
	case NPR_IOCTL_STATE_SET:
	case NPR_IOCTL_STATE_RESET: {
		struct npr_state_arg *a = arg;

		a->flags = fz_u8(f) % 2;
		a->req = handle(r, f);
		a->index = fz_u8(f) % 3;
		a->elem_type = fz_u8(f) % 20;
		a->rank = fz_u8(f) % 10;
		dims(f, a->dims);
		break;
	}
	case NPR_IOCTL_BO_CREATE: {
		struct npr_bo_create *a = arg;
		unsigned int c = fz_u8(f);

		if (c < 200)
			a->bytes = fz_u16(f);
		else if (c < 250)
			a->bytes = fz_u32(f) % (1 << 22);
		else
			a->bytes = c & 1 ? (1ull << 40) + 1 : 0;
		break;
	}
	case NPR_IOCTL_BO_INFO: {
		struct npr_bo_info *a = arg;

		a->flags = fz_u8(f) % 2;
		a->handle = handle(r, f);
		break;
	}
	case NPR_IOCTL_BO_BIND: {
		struct npr_bo_bind *a = arg;
		int i;

		a->flags = fz_u8(f) % 2;
		a->req = handle(r, f);
		a->index = fz_u8(f) % 3;
		a->bo = handle(r, f);
		a->elem_type = NPR_ELEM_F32;
		a->rank = 2;
		a->dims[0] = 1;
		a->dims[1] = 4;
		if (fz_u8(f) >= 200) {
			a->elem_type = fz_u8(f) % 20;
			a->rank = fz_u8(f) % 10;
			dims(f, a->dims);
			for (i = 0; i < NPR_MAX_RANK; i++)
				a->strides[i] = fz_u8(f) < 240 ? 0 :
						(__s64)fz_u64(f);
		}
		a->offset = fz_u8(f) < 200 ? fz_u8(f) % 32 : fz_u64(f);
		break;
	}
	case NPR_IOCTL_MAKE_STATEFUL: {
		struct npr_make_stateful *a = arg;

		a->model = handle(r, f);
		break;
	}
	case NPR_IOCTL_RING_SETUP: {
		struct npr_ring_setup *a = arg;

		a->flags = fz_u8(f) % 2;	/* not ATTACH: no caller ring */
		a->cq_entries = fz_u8(f) < 200 ? 1u << fz_u8(f) % 8 : fz_u32(f);
		break;
	}
	case NPR_IOCTL_REAP: {
		struct npr_reap *a = arg;

		a->flags = fz_u8(f) % 2;
		a->timeout_ns = fz_u8(f);
		break;
	}
	case NPR_IOCTL_GET_ERROR: {
		struct npr_get_error *a = arg;

		a->flags = fz_u8(f) % 2;
		a->user_data = fz_u8(f) % 4 ? 0 : fz_u8(f);
		break;
	}
	default:
		break;
	}
}

/*
 * The pointer fields, and the lengths that go with them, after the
 * struct's other bytes may have been overwritten: they always name
 * memory of the target.
 */
static void fill_ptrs(struct run *r, struct fz *f, unsigned long cmd,
		      void *arg)
{
	switch (cmd) {
	case NPR_IOCTL_GET_PARAM:
	case NPR_IOCTL_SET_PARAM: {
		struct npr_param *a = arg;
		unsigned int c = fz_u8(f);

		a->ptr = 0;
		if (c % 4 == 0)
			break;
		a->len = len(f, 256);
		a->ptr = (uintptr_t)area(r, f, a->len);
		if (cmd == NPR_IOCTL_SET_PARAM && c % 4 == 3) {
			/* a string: NUL-terminated within len, or not */
			memset((void *)(uintptr_t)a->ptr, 'a' + c % 26, a->len);
			if (a->len && (c & 0x80))
				((char *)(uintptr_t)a->ptr)[a->len - 1] = 0;
		}
		if (cmd == NPR_IOCTL_SET_PARAM &&
		    a->param == NPR_PARAM_CACHE_DIR) {
			/* nowhere but the target's own directory */
			a->ptr = (uintptr_t)(c & 0x80 ? dir : "");
			a->len = strlen((char *)(uintptr_t)a->ptr) + 1;
		}
		break;
	}
	case NPR_IOCTL_MODEL_LOAD: {
		struct npr_model_load *a = arg;

		a->xml = a->bin = a->xml_size = a->bin_size = 0;
		if (a->flags & NPR_MODEL_LOAD_MEMORY)
			model_bytes(r, f, a);
		else
			a->xml = (uintptr_t)"/nonexistent/model.xml";
		break;
	}
	case NPR_IOCTL_PORT_INFO: {
		struct npr_port_info *a = arg;

		a->name_len = len(f, 128);
		a->name = fz_u8(f) % 4 ? (uintptr_t)area(r, f, a->name_len) : 0;
		if (!a->name)
			a->name_len = 0;
		break;
	}
	case NPR_IOCTL_COMPILE: {
		struct npr_compile *a = arg;
		struct npr_shape_arg *s;
		struct npr_prop_arg *p;
		unsigned int i;

		a->num_shapes = fz_u8(f) % 4;
		s = area(r, f, 4 * sizeof(*s));
		for (i = 0; i < a->num_shapes; i++) {
			s[i].index = fz_u8(f) % 3;
			s[i].rank = fz_u8(f) < 200 ? 2 : fz_u8(f) % 10;
			s[i].dims[0] = 1;
			s[i].dims[1] = 1 + fz_u8(f) % 8;
			if (fz_u8(f) >= 220)
				dims(f, s[i].dims);
		}
		a->shapes = a->num_shapes ? (uintptr_t)s : 0;
		a->num_props = fz_u8(f) % 4;
		p = area(r, f, 4 * sizeof(*p));
		for (i = 0; i < a->num_props; i++) {
			p[i].param = fz_u8(f) % 80;
			p[i].reserved = fz_u8(f) == 0xff;
			p[i].value = fz_u8(f) < 200 ? fz_u8(f) % 4 : fz_u64(f);
			/* string properties: only harmless strings */
			if (p[i].param == NPR_PARAM_CACHE_DIR)
				p[i].value = (uintptr_t)(fz_u8(f) & 1 ? dir
								      : "");
			else if (p[i].param ==
				 NPR_PARAM_NPU_COMPILATION_MODE_PARAMS)
				p[i].value = (uintptr_t)"";
		}
		a->props = a->num_props ? (uintptr_t)p : 0;
		break;
	}
	case NPR_IOCTL_SET_TENSOR:
	case NPR_IOCTL_GET_TENSOR: {
		struct npr_tensor_arg *a = arg;

		a->bytes = fz_u8(f) < 200 ? 16 : len(f, 4096);
		a->data = (uintptr_t)area(r, f, a->bytes);
		break;
	}
	case NPR_IOCTL_STATE_INFO:
	case NPR_IOCTL_STATE_GET:
	case NPR_IOCTL_STATE_SET:
	case NPR_IOCTL_STATE_RESET: {
		struct npr_state_arg *a = arg;

		a->name_len = len(f, 128);
		a->name = (uintptr_t)area(r, f, a->name_len);
		a->bytes = len(f, 4096);
		a->data = (uintptr_t)area(r, f, a->bytes);
		break;
	}
	case NPR_IOCTL_GET_ERROR: {
		struct npr_get_error *a = arg;

		a->len = len(f, 512);
		a->buf = (uintptr_t)area(r, f, a->len);
		break;
	}
	case NPR_IOCTL_EXPORT: {
		struct npr_export *a = arg;

		a->bytes = fz_u8(f) & 1 ? 0 : len(f, BUF_BYTES);
		a->data = a->bytes || fz_u8(f) & 1 ?
			  (uintptr_t)area(r, f, a->bytes) : 0;
		break;
	}
	case NPR_IOCTL_IMPORT: {
		struct npr_import *a = arg;
		unsigned char *b;

		if (!r->blob_len)
			break;
		b = area(r, f, r->blob_len);
		memcpy(b, r->blob, r->blob_len);
		a->bytes = fz_u8(f) < 200 ? r->blob_len :
			   fz_u16(f) % (r->blob_len + 1);
		if (fz_u8(f) >= 240 && a->bytes)
			b[fz_u16(f) % a->bytes] ^= 1 << fz_u8(f) % 8;
		a->data = (uintptr_t)b;
		break;
	}
	case NPR_IOCTL_PROFILE: {
		struct npr_profile *a = arg;

		a->count = fz_u8(f) % 16;
		a->recs = (uintptr_t)area(r, f, a->count *
					  sizeof(struct npr_profile_rec));
		break;
	}
	case NPR_IOCTL_QUERY_MODEL: {
		struct npr_query_model *a = arg;

		a->len = len(f, 256);
		a->names = fz_u8(f) % 4 ? (uintptr_t)area(r, f, a->len) : 0;
		if (!a->names)
			a->len = 0;
		break;
	}
	case NPR_IOCTL_MAKE_STATEFUL: {
		struct npr_make_stateful *a = arg;
		/* one area for both: the shapes must not overwrite the
		 * pairs' name pointers, which only the caller can keep valid */
		struct npr_state_pair *p = area(r, f, 4 * sizeof(*p) +
						2 * sizeof(struct npr_shape_arg));
		struct npr_shape_arg *s = (void *)(p + 4);
		unsigned int i, n = 1 + fz_u8(f) % 4;

		a->count = fz_u8(f) < 240 ? n : fz_u32(f);
		for (i = 0; i < n; i++) {
			p[i].input = (uintptr_t)names[fz_u8(f) % 6];
			p[i].output = (uintptr_t)names[fz_u8(f) % 6];
		}
		a->pairs = (uintptr_t)p;
		if (a->count > n)
			a->count = n;
		a->num_shapes = fz_u8(f) % 3;
		for (i = 0; i < a->num_shapes; i++) {
			s[i].index = fz_u8(f) % 2;
			s[i].rank = 2;
			s[i].dims[0] = 1;
			s[i].dims[1] = fz_u8(f) % 6;
		}
		a->shapes = a->num_shapes ? (uintptr_t)s : 0;
		break;
	}
	case NPR_IOCTL_SUBMIT: {
		struct npr_submit *a = arg;
		struct npr_sqe *s = area(r, f, 4 * sizeof(*s));
		unsigned int i;

		a->count = 1 + fz_u8(f) % 4;
		for (i = 0; i < a->count; i++) {
			static const unsigned char ops[] = {
				NPR_OP_NOP, NPR_OP_INFER, NPR_OP_COMPILE,
				NPR_OP_CANCEL,
			};

			memset(&s[i], 0, sizeof(s[i]));
			s[i].opcode = ops[fz_u8(f) % 4];
			s[i].flags = fz_u8(f) % 4;
			s[i].handle = handle(r, f);
			s[i].user_data = i;
			s[i].addr = s[i].opcode == NPR_OP_CANCEL ? fz_u8(f) % 4
								  : 0;
		}
		a->sqes = (uintptr_t)s;
		break;
	}
	case NPR_IOCTL_REAP: {
		struct npr_reap *a = arg;

		a->max = 1 + fz_u8(f) % 8;
		a->min = 0;			/* never wait */
		a->cqes = (uintptr_t)area(r, f,
					  a->max * sizeof(struct npr_cqe));
		break;
	}
	default:
		break;
	}
}

/* Handles the call made, and descriptors to close. */
static void after(struct run *r, unsigned long cmd, void *arg, int ret)
{
	if (cmd == NPR_IOCTL_BO_INFO) {
		struct npr_bo_info *a = arg;

		/* a descriptor handed out is the caller's to close */
		if (!ret && (a->flags & NPR_BO_INFO_FD) && a->fd >= 0)
			close(a->fd);
	}
	if (cmd == NPR_IOCTL_SUBMIT && !ret)
		r->inflight += ((struct npr_submit *)arg)->submitted;
	if (cmd == NPR_IOCTL_REAP && !ret) {
		unsigned int n = ((struct npr_reap *)arg)->count;

		r->inflight -= n < r->inflight ? n : r->inflight;
	}
	if (ret)
		return;
	switch (cmd) {
	case NPR_IOCTL_MODEL_LOAD:
		keep(r, ((struct npr_model_load *)arg)->handle);
		break;
	case NPR_IOCTL_COMPILE:
		keep(r, ((struct npr_compile *)arg)->exec);
		break;
	case NPR_IOCTL_REQ_CREATE:
		keep(r, ((struct npr_req_create *)arg)->req);
		break;
	case NPR_IOCTL_IMPORT:
		keep(r, ((struct npr_import *)arg)->exec);
		break;
	case NPR_IOCTL_BO_CREATE:
		keep(r, ((struct npr_bo_create *)arg)->handle);
		break;
	default:
		break;
	}
}

/* The starting objects: a model, its compiled model, a request, a blob. */
static void prepare(struct run *r)
{
	struct npr_model_load ml;
	struct npr_compile co;
	struct npr_req_create rc;
	struct npr_export ex = { .size = sizeof(ex) };

	npr_prep_model_load_mem(&ml, fz_add_xml, sizeof(fz_add_xml) - 1,
				fz_add_bin, sizeof(fz_add_bin));
	if (npr_ioctl(r->fd, NPR_IOCTL_MODEL_LOAD, &ml))
		abort();
	keep(r, ml.handle);
	npr_prep_compile(&co, ml.handle);
	if (npr_ioctl(r->fd, NPR_IOCTL_COMPILE, &co))
		abort();
	keep(r, co.exec);
	npr_prep_req_create(&rc, co.exec);
	if (npr_ioctl(r->fd, NPR_IOCTL_REQ_CREATE, &rc))
		abort();
	keep(r, rc.req);
	ex.exec = co.exec;
	if (npr_ioctl(r->fd, NPR_IOCTL_EXPORT, &ex) == -EMSGSIZE &&
	    ex.bytes <= BUF_BYTES) {
		r->blob = malloc(ex.bytes);
		ex.data = (uintptr_t)r->blob;
		if (r->blob && !npr_ioctl(r->fd, NPR_IOCTL_EXPORT, &ex))
			r->blob_len = ex.bytes;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t argbuf[ARG_BYTES / 8 + 1];
	struct fz f = { data, size };
	struct run r = { 0 };
	unsigned int step;

	if (!dir[0]) {
		const char *t = getenv("TMPDIR");

		snprintf(dir, sizeof(dir), "%s/npr-fuzz-ioctl.XXXXXX",
			 t && strlen(t) < 32 ? t : "/tmp");
		if (!mkdtemp(dir))
			abort();
		atexit(cleanup);
	}
	r.fd = fz_open(fz_u8(&f) & 1 ? "null" : "cpu");
	r.buf = calloc(1, BUF_BYTES);
	if (r.fd < 0 || !r.buf)
		abort();
	prepare(&r);
	for (step = 0; step < MAX_STEPS && f.n; step++) {
		unsigned int c = fz_u8(&f), m;
		unsigned long cmd, key;
		void *arg = argbuf;
		__u32 *hdr = arg;
		int ret;

		cmd = c < 248 ? cmds[c % NCMDS] :
		      c & 1 ? fz_u32(&f) : _IOWR('N', fz_u8(&f), char[64]);
		memset(argbuf, 0, sizeof(argbuf));
		hdr[0] = _IOC_SIZE(cmd) < ARG_BYTES ? _IOC_SIZE(cmd)
						    : ARG_BYTES;
		key = canonical(cmd);
		fill(&r, &f, key, arg);
		m = fz_u8(&f);
		if (m & 0x01)		/* any size, within the buffer */
			hdr[0] = fz_u16(&f) % (ARG_BYTES + 1);
		if (m & 0x02)
			hdr[1] = fz_u32(&f);
		if (m & 0x04) {
			/* any byte but the size: reserved fields, tails */
			unsigned int pos = 4 + fz_u16(&f) % (ARG_BYTES - 4);

			((unsigned char *)arg)[pos] = fz_u8(&f);
		}
		fill_ptrs(&r, &f, key, arg);
		if (m & 0x08)
			arg = NULL;
		if (key == NPR_IOCTL_SUBMIT && r.inflight > 64)
			continue;	/* a full ring would refuse anyway */
		ret = npr_ioctl(r.fd, cmd, arg);
		if (arg)
			after(&r, key, arg, ret);
	}
	/* with jobs still in flight: close waits for or cancels them */
	npr_close(r.fd);
	fz_clear_dir(dir);	/* cache entries a compile wrote */
	free(r.buf);
	free(r.blob);
	return 0;
}
