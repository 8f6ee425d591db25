// SPDX-License-Identifier: MIT
/*
 * Every failure the system can give the library, one at a time, in the
 * manner of the kernel's fail-nth (selftests/fault.h): for each operation
 * (MODEL_LOAD of IR and ONNX from a file and from memory, COMPILE, EXPORT,
 * IMPORT, a COMPILE that stores into the cache and one that hits it,
 * REQ_CREATE, INFER; and npr_open() with RING_SETUP) and N = 1, 2, ...
 * the Nth allocation, file open, read or write, mmap or io_uring setup of
 * the library fails, until an N is reached that the operation no longer
 * gets to.  Each time: the call fails with a -errno and a message for it
 * that names at least the call (GET_ERROR's errno is the call's), or
 * succeeds where the failure is one it may absorb (a cache entry not
 * written, a ring that falls back); no block the wrapped allocators made
 * during it is live after destroying what it made (no leak); and the same
 * operation then succeeds without a fault, INFER with the same output
 * bits and the cache with its entry still there.
 *
 * Single-threaded and synchronous (INFERENCE_NUM_THREADS and
 * COMPILATION_NUM_THREADS 1), so the Nth call is the same call each time.
 * open-closed-eye-0001 is walked at every N; the two others, with their
 * thousands of sites in MODEL_LOAD, COMPILE and the cache store, every
 * 31st and 37th N there (and the store every N past the compile's sites):
 * NPR_FAULT_STRIDE=1 walks them whole (many minutes).  The sites per
 * operation are printed.  To look at one: NPR_FAULT_OPS (the operations
 * to walk, by name), NPR_FAULT_FROM (the first N), NPR_FAULT_ONE (that N
 * only), NPR_FAULT_BACKTRACE (the stack of each injected failure) and
 * NPR_FAULT_VERBOSE (each failure's errno and message).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fault.h"
#include "harness.h"
#include "npuring.h"
#include "files.h"

/* EXPECT (WANT) and ASSERT (NEED) of a condition, with a message. */
#define CHECK(cond, fatal, fmt, ...)					\
	do {								\
		if (!(cond)) {						\
			TH_LOG("%s:%d: " fmt, __FILE__, __LINE__,	\
			       ##__VA_ARGS__);				\
			NPR_TH_FAIL(fatal);				\
		}							\
	} while (0)
#define WANT(cond, fmt, ...)	CHECK(cond, false, fmt, ##__VA_ARGS__)
#define NEED(cond, fmt, ...)	CHECK(cond, true, fmt, ##__VA_ARGS__)

struct model {
	const char *name;
	const char *xml;	/* relative to the shared directory */
	const char *bin;	/* NULL: ONNX */
	int stride;		/* walk every stride-th N of the big ops */
	int rank;		/* > 0: input 0's shape at COMPILE */
	__s64 dims[4];
};

static const struct model eye = {
	"open-closed-eye-0001",
	"models/ir/open-closed-eye-0001/FP32/open-closed-eye-0001.xml",
	"models/ir/open-closed-eye-0001/FP32/open-closed-eye-0001.bin", 1,
};

static const struct model ppocr = {
	"ppocr_mobile_v2.0_cls",
	"models/onnx/ppocr_mobile_v2.0_cls.onnx", NULL, 31,
	4, { 1, 3, 48, 192 },
};

static const struct model squeeze = {
	"squeezenet1.1 FP16",
	"models/ir/squeezenet1.1/FP16/squeezenet1.1.xml",
	"models/ir/squeezenet1.1/FP16/squeezenet1.1.bin", 37,
};

/* One model's objects, made without faults, and what the walks use. */
struct ctx {
	struct npr_test *_metadata;
	const struct model *m;
	int fd;
	char xml[4096], bin[4096], dir[64];
	void *xml_mem, *bin_mem;
	size_t xml_len, bin_len;
	__u32 model, exec, req;
	void *blob, *blob2;	/* EXPORT of exec; room for another */
	size_t blob_len;
	void *out_ref;		/* INFER's first output, without faults */
	size_t out_len;
	__u32 made;		/* the handle the operation made, or 0 */
	int stride;
	/* the walk's tallies */
	int sites, absorbed, bare, walked;
	int compile_sites;	/* COMPILE's, once walked */
};

/*
 * The live blocks once they are at most @want (@want_bytes): the thread
 * that checksums a cache hit or an import beside it (lib/store/hash.c)
 * drops its reference on the blob a moment after the call returns, and
 * may drop one of a call before.  A leak never settles: after 2 s the
 * count is returned as it is.
 */
static long settle(long want, size_t want_bytes, size_t *bytes)
{
	long n = 0;
	int i;

	for (i = 0; i < 2000; i++) {
		n = fault_live(bytes, NULL);
		if (n < want || (n == want && *bytes <= want_bytes))
			break;
		usleep(1000);
	}
	return n;
}

/* A message that says no more than "CALL: strerror". */
static bool is_bare(const char *msg, int err)
{
	const char *colon = strchr(msg, ':');

	return colon && colon[1] == ' ' && !strcmp(colon + 2, strerror(-err)) &&
	       !memchr(msg, ' ', colon - msg);
}

/* Name the allocations made after @seq that are still live. */
static void log_leaks(unsigned long seq)
{
	void *callers[8];
	size_t sizes[8];
	Dl_info info;
	int n, i;

	n = fault_live_since(seq, callers, sizes, 8);
	for (i = 0; i < n && i < 8; i++) {
		if (!dladdr(callers[i], &info))
			info.dli_fbase = NULL;
		TH_LOG("  %zu bytes allocated at %s+%#lx", sizes[i],
		       info.dli_fname ? info.dli_fname : "?",
		       (unsigned long)((char *)callers[i] -
				       (char *)info.dli_fbase));
	}
}

static int set_int(int fd, __u32 id, __u64 v)
{
	struct npr_param pa = { .size = sizeof(pa), .param = id, .value = v };

	return npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &pa);
}

static int destroy(int fd, __u32 h)
{
	struct npr_handle_destroy hd;

	npr_prep_destroy(&hd, h);
	return npr_ioctl(fd, NPR_IOCTL_HANDLE_DESTROY, &hd);
}

/* Remove every file of the cache directory; their number. */
static int clear_dir(const char *dir)
{
	char path[512];
	struct dirent *d;
	DIR *dp = opendir(dir);
	int n = 0;

	if (!dp)
		return 0;
	while ((d = readdir(dp))) {
		if (d->d_name[0] == '.' && (!d->d_name[1] ||
		    (d->d_name[1] == '.' && !d->d_name[2])))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (!unlink(path))
			n++;
	}
	closedir(dp);
	return n;
}

/* Entries in the cache directory; temporary files count 1000 each. */
static int entries(const char *dir)
{
	struct dirent *d;
	DIR *dp = opendir(dir);
	int n = 0;

	if (!dp)
		return -1;
	while ((d = readdir(dp))) {
		size_t l = strlen(d->d_name);

		if (d->d_name[0] == '.' && l > 2)
			n += 1000;
		else if (l > 5 && !strcmp(d->d_name + l - 5, ".blob"))
			n++;
	}
	closedir(dp);
	return n;
}

/* The operations; each makes at most one handle, in c->made. */

static int op_load_file(struct ctx *c)
{
	struct npr_model_load ml;
	int err;

	npr_prep_model_load(&ml, c->xml, c->m->bin ? c->bin : NULL);
	err = npr_ioctl(c->fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (!err)
		c->made = ml.handle;
	return err;
}

static int op_load_mem(struct ctx *c)
{
	struct npr_model_load ml;
	int err;

	npr_prep_model_load_mem(&ml, c->xml_mem, c->xml_len, c->bin_mem,
				c->bin_len);
	err = npr_ioctl(c->fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (!err)
		c->made = ml.handle;
	return err;
}

static int compile_with(struct ctx *c, const char *dir)
{
	struct npr_prop_arg pa = { .param = NPR_PARAM_CACHE_DIR,
				   .value = (uintptr_t)dir };
	struct npr_shape_arg sh = { .index = 0, .rank = c->m->rank };
	struct npr_compile co;
	int err;

	npr_prep_compile(&co, c->model);
	if (c->m->rank) {
		memcpy(sh.dims, c->m->dims, sizeof(c->m->dims));
		co.shapes = (uintptr_t)&sh;
		co.num_shapes = 1;
	}
	if (dir) {
		co.props = (uintptr_t)&pa;
		co.num_props = 1;
	}
	err = npr_ioctl(c->fd, NPR_IOCTL_COMPILE, &co);
	if (!err)
		c->made = co.exec;
	return err;
}

static int op_compile(struct ctx *c)
{
	return compile_with(c, NULL);
}

static int op_cache(struct ctx *c)
{
	return compile_with(c, c->dir);
}

static int from_cache(struct ctx *c, __u32 exec)
{
	struct npr_param pa = { .size = sizeof(pa), .handle = exec,
				.param = NPR_PARAM_LOADED_FROM_CACHE };
	int err = npr_ioctl(c->fd, NPR_IOCTL_GET_PARAM, &pa);

	return err ? err : (int)pa.value;
}

static int op_export(struct ctx *c)
{
	struct npr_export ex = { .size = sizeof(ex), .exec = c->exec };
	int err;

	/* the size, then the blob */
	err = npr_ioctl(c->fd, NPR_IOCTL_EXPORT, &ex);
	if (err != -EMSGSIZE)
		return err ? err : -EPROTO;
	if (ex.bytes != c->blob_len)
		return -EBADMSG;
	memset(c->blob2, 0, c->blob_len);
	ex.data = (uintptr_t)c->blob2;
	err = npr_ioctl(c->fd, NPR_IOCTL_EXPORT, &ex);
	if (!err && memcmp(c->blob2, c->blob, c->blob_len))
		err = -EBADMSG;
	return err;
}

static int op_import(struct ctx *c)
{
	struct npr_import im = { .size = sizeof(im),
				 .data = (uintptr_t)c->blob,
				 .bytes = c->blob_len };
	int err = npr_ioctl(c->fd, NPR_IOCTL_IMPORT, &im);

	if (!err)
		c->made = im.exec;
	return err;
}

static int op_req_create(struct ctx *c)
{
	struct npr_req_create rc;
	int err;

	npr_prep_req_create(&rc, c->exec);
	err = npr_ioctl(c->fd, NPR_IOCTL_REQ_CREATE, &rc);
	if (!err)
		c->made = rc.req;
	return err;
}

static int op_infer(struct ctx *c)
{
	struct npr_infer in;

	npr_prep_infer(&in, c->req);
	return npr_ioctl(c->fd, NPR_IOCTL_INFER, &in);
}

/* The first output of @req: mapped, @len set. */
static const void *output(struct ctx *c, __u32 req, size_t *len)
{
	struct npr_tensor_arg t;

	npr_prep_tensor(&t, req, 0, 1, NULL, 0);
	t.flags |= NPR_TENSOR_MAP;
	if (npr_ioctl(c->fd, NPR_IOCTL_GET_TENSOR, &t))
		return NULL;
	*len = t.bytes;
	return (const void *)(uintptr_t)t.data;
}

/* Fill the first input of @req with a fixed ramp. */
static int fill_input(struct ctx *c, __u32 req)
{
	struct npr_tensor_arg t;
	size_t k;
	int err;

	npr_prep_tensor(&t, req, 0, 0, NULL, 0);
	t.flags = NPR_TENSOR_MAP;
	err = npr_ioctl(c->fd, NPR_IOCTL_GET_TENSOR, &t);
	if (err)
		return err;
	if (t.elem_type == NPR_ELEM_F16) {
		/* halves from 0.125 up to about 0.25 */
		for (k = 0; k < t.bytes / 2; k++)
			((__u16 *)(uintptr_t)t.data)[k] = 0x3000 + k % 251;
		return 0;
	}
	if (t.elem_type != NPR_ELEM_F32)
		return -EINVAL;
	for (k = 0; k < t.bytes / 4; k++)
		((float *)(uintptr_t)t.data)[k] = (float)(k % 251) / 251.0f;
	return 0;
}

/* @exec's output on the fixed input matches the reference bits. */
static int same_output(struct ctx *c, __u32 exec)
{
	struct npr_req_create rc;
	struct npr_infer in;
	const void *out;
	size_t len = 0;
	int err;

	npr_prep_req_create(&rc, exec);
	err = npr_ioctl(c->fd, NPR_IOCTL_REQ_CREATE, &rc);
	if (err)
		return err;
	err = fill_input(c, rc.req);
	npr_prep_infer(&in, rc.req);
	if (!err)
		err = npr_ioctl(c->fd, NPR_IOCTL_INFER, &in);
	if (!err) {
		out = output(c, rc.req, &len);
		if (!out || len != c->out_len || memcmp(out, c->out_ref, len))
			err = -EBADMSG;
	}
	destroy(c->fd, rc.req);
	return err;
}

struct op {
	const char *name;
	int (*run)(struct ctx *c);
	bool big;		/* walked with the model's stride */
	bool cache_hit;		/* the entry is there before and after */
	bool cache_put;		/* the directory is emptied before */
};

static const struct op ops[] = {
	{ "MODEL_LOAD file", op_load_file, .big = true },
	{ "MODEL_LOAD memory", op_load_mem, .big = true },
	{ "COMPILE", op_compile, .big = true },
	{ "EXPORT", op_export },
	{ "IMPORT", op_import },
	{ "cache put", op_cache, .big = true, .cache_put = true },
	{ "cache get", op_cache, .cache_hit = true },
	{ "REQ_CREATE", op_req_create },
	{ "INFER", op_infer },
};

/* After an operation, with or without a fault: destroy what it made. */
static void undo(struct ctx *c)
{
	if (c->made)
		destroy(c->fd, c->made);
	c->made = 0;
}

/* What the operation left is right, without a fault. */
static void check_clean(struct ctx *c, const struct op *o, int n)
{
	struct npr_test *_metadata = c->_metadata;
	const void *out;
	size_t len = 0;

	if (o->run == op_infer) {
		out = output(c, c->req, &len);
		NEED(out && len == c->out_len, "%s INFER after N=%d: no output",
		     c->m->name, n);
		WANT(!memcmp(out, c->out_ref, len),
		     "%s INFER after N=%d: the output differs", c->m->name, n);
	} else if (o->run == op_cache || o->run == op_compile ||
		   o->run == op_import) {
		WANT(!same_output(c, c->made),
		     "%s %s after N=%d: the compiled model computes otherwise",
		     c->m->name, o->name, n);
	}
	if (o->cache_hit)
		WANT(from_cache(c, c->made) == 1,
		     "%s %s after N=%d: the entry is lost", c->m->name, o->name,
		     n);
	if (o->run == op_cache)
		WANT(entries(c->dir) == 1, "%s %s after N=%d: %d entries",
		     c->m->name, o->name, n, entries(c->dir));
}

/* Run @o with its Nth fault for N = 1, 2, ... until none fires. */
static void walk(struct ctx *c, const struct op *o)
{
	struct npr_test *_metadata = c->_metadata;
	int stride = o->big ? c->stride : 1;
	struct npr_get_error ge;
	size_t bytes_before, bytes_after;
	long before, after;
	unsigned long seq;
	char msg[1024];
	bool fired;
	int n, err, step;

	c->sites = c->absorbed = c->bare = c->walked = 0;
	/* warm-up: what is made once per process is made now */
	if (o->cache_put)
		clear_dir(c->dir);
	err = o->run(c);
	NEED(!err, "%s %s: %s", c->m->name, o->name, npr_last_error());
	undo(c);
	n = getenv("NPR_FAULT_FROM") ? atoi(getenv("NPR_FAULT_FROM")) : 1;
	for (n = n > 0 ? n : 1;; n += step) {
		/* a store walks every site past the compile's */
		step = o->cache_put && n + stride > c->compile_sites - 16 ?
		       1 : stride;
		if (o->cache_put)
			clear_dir(c->dir);
		before = fault_live(&bytes_before, &seq);
		fault_arm(n, FAULT_ALL);
		err = o->run(c);
		fired = fault_disarm();
		if (!fired) {
			NEED(!err, "%s %s N=%d: %s", c->m->name, o->name, n,
			     npr_last_error());
			c->sites = fault_calls();	/* all of them */
			undo(c);
			break;
		}
		c->walked++;
		if (!err) {
			c->absorbed++;
		} else {
			memset(&ge, 0, sizeof(ge));
			ge.size = sizeof(ge);
			ge.buf = (uintptr_t)msg;
			ge.len = sizeof(msg);
			msg[0] = 0;
			WANT(err < 0, "%s %s N=%d (%s): returned %d",
			     c->m->name, o->name, n, fault_site(), err);
			WANT(!npr_ioctl(c->fd, NPR_IOCTL_GET_ERROR, &ge) &&
			     ge.err == err && msg[0],
			     "%s %s N=%d (%s): returned %d, message of %d: %s",
			     c->m->name, o->name, n, fault_site(), err,
			     ge.err, msg);
			/* at the least the call and the errno's text */
			WANT(strcmp(msg, strerror(-err)),
			     "%s %s N=%d (%s): the message names nothing: %s",
			     c->m->name, o->name, n, fault_site(), msg);
			if (is_bare(msg, err))
				c->bare++;
			if (getenv("NPR_FAULT_VERBOSE"))
				TH_LOG("%s N=%d %s: %d %s", o->name, n,
				       fault_site(), err, msg);
		}
		if (o->cache_put)
			WANT(entries(c->dir) <= 1,
			     "%s %s N=%d (%s): a temporary file is left",
			     c->m->name, o->name, n, fault_site());
		undo(c);
		after = settle(before, bytes_before, &bytes_after);
		NEED(before >= 0 && after >= 0, "too many blocks to track");
		WANT(after < before || (after == before &&
					bytes_after <= bytes_before),
		     "%s %s N=%d (%s): %ld blocks, %zd bytes leaked",
		     c->m->name, o->name, n, fault_site(), after - before,
		     (ssize_t)(bytes_after - bytes_before));
		if (after != before)
			log_leaks(seq);
		if (_metadata->failed)
			return;
		/* the same operation without a fault */
		if (o->cache_put)
			clear_dir(c->dir);
		err = o->run(c);
		NEED(!err, "%s %s after N=%d (%s): %s", c->m->name, o->name, n,
		     fault_site(), npr_last_error());
		check_clean(c, o, n);
		undo(c);
		if (_metadata->failed || getenv("NPR_FAULT_ONE"))
			return;
	}
	if (o->run == op_compile)
		c->compile_sites = c->sites;
	TH_LOG("%-22s %-18s %5d sites, %5d walked, %d absorbed, %d bare",
	       c->m->name, o->name, c->sites, c->walked, c->absorbed, c->bare);
}

static void setup(struct npr_test *_metadata, struct ctx *c,
		  const struct model *m)
{
	const char *s = getenv("NPR_FAULT_STRIDE");
	struct npr_req_create rc;
	struct npr_export ex = { .size = sizeof(ex) };
	const void *out;

	memset(c, 0, sizeof(*c));
	c->_metadata = _metadata;
	c->m = m;
	c->fd = -1;
	c->stride = s && atoi(s) > 0 ? atoi(s) : m->stride;
	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s", npr_test_shared());
	NEED(snprintf(c->xml, sizeof(c->xml), "%s/%s", npr_test_shared(),
		      m->xml) < (int)sizeof(c->xml), "path too long");
	if (m->bin)
		NEED(snprintf(c->bin, sizeof(c->bin), "%s/%s",
			      npr_test_shared(), m->bin) < (int)sizeof(c->bin),
		     "path too long");
	c->xml_mem = npr_test_slurp(c->xml, &c->xml_len);
	NEED(c->xml_mem, "cannot read %s", c->xml);
	if (m->bin) {
		c->bin_mem = npr_test_slurp(c->bin, &c->bin_len);
		NEED(c->bin_mem, "cannot read %s", c->bin);
	}
	/* in memory if there is a tmpfs: the walk writes thousands of
	 * entries, and fsync() on a disk would be most of its time */
	strcpy(c->dir, "/dev/shm/npr-fault-test.XXXXXX");
	if (!mkdtemp(c->dir)) {
		strcpy(c->dir, "/tmp/npr-fault-test.XXXXXX");
		ASSERT_NE(mkdtemp(c->dir), NULL);
	}
	c->fd = npr_open("cpu", 0);
	ASSERT_GE(c->fd, 0);
	ASSERT_EQ(set_int(c->fd, NPR_PARAM_INFERENCE_NUM_THREADS, 1), 0);
	ASSERT_EQ(set_int(c->fd, NPR_PARAM_COMPILATION_NUM_THREADS, 1), 0);
	ASSERT_EQ(op_load_file(c), 0);
	c->model = c->made;
	c->made = 0;
	NEED(!op_compile(c), "%s", npr_last_error());
	c->exec = c->made;
	c->made = 0;
	ex.exec = c->exec;
	ASSERT_EQ(npr_ioctl(c->fd, NPR_IOCTL_EXPORT, &ex), -EMSGSIZE);
	c->blob_len = ex.bytes;
	c->blob = malloc(c->blob_len);
	c->blob2 = malloc(c->blob_len);
	ASSERT_TRUE(c->blob && c->blob2);
	ex.data = (uintptr_t)c->blob;
	ASSERT_EQ(npr_ioctl(c->fd, NPR_IOCTL_EXPORT, &ex), 0);
	npr_prep_req_create(&rc, c->exec);
	ASSERT_EQ(npr_ioctl(c->fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	c->req = rc.req;
	ASSERT_EQ(fill_input(c, c->req), 0);
	ASSERT_EQ(op_infer(c), 0);
	out = output(c, c->req, &c->out_len);
	ASSERT_NE(out, NULL);
	c->out_ref = malloc(c->out_len);
	ASSERT_NE(c->out_ref, NULL);
	memcpy(c->out_ref, out, c->out_len);
	/* the cache holds the model's entry for the hits */
	ASSERT_EQ(op_cache(c), 0);
	undo(c);
	ASSERT_EQ(entries(c->dir), 1);
}

static void teardown(struct ctx *c)
{
	if (c->fd >= 0)
		npr_close(c->fd);
	if (c->dir[0] == '/') {
		clear_dir(c->dir);
		rmdir(c->dir);
	}
	free(c->xml_mem);
	free(c->bin_mem);
	free(c->blob);
	free(c->blob2);
	free(c->out_ref);
}

static void walk_model(struct npr_test *_metadata, struct ctx *c,
		       const struct model *m)
{
	size_t i;

	setup(_metadata, c, m);
	for (i = 0; !_metadata->failed && c->fd >= 0 &&
	     i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (getenv("NPR_FAULT_OPS") &&
		    !strstr(getenv("NPR_FAULT_OPS"), ops[i].name))
			continue;
		if (ops[i].cache_hit && entries(c->dir) != 1) {
			clear_dir(c->dir);
			if (op_cache(c) == 0)
				undo(c);
		}
		walk(c, &ops[i]);
	}
}

/*
 * npr_open() and RING_SETUP, on a device of their own each time: open
 * fails with a message, or the ring set up falls back (a failed
 * io_uring_queue_init()) and says why; closing frees everything.
 */
TEST(open_and_ring_setup)
{
	struct npr_ring_setup rs;
	int n, fd, err, sites = 0, fallbacks = 0;
	long before, after;
	size_t bytes;
	unsigned long seq;
	bool fired;

	/* warm-up: the process-wide state made by the first open */
	fd = npr_open("cpu", 0);
	ASSERT_GE(fd, 0);
	memset(&rs, 0, sizeof(rs));
	rs.size = sizeof(rs);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_RING_SETUP, &rs), 0);
	ASSERT_EQ(npr_close(fd), 0);
	for (n = 1;; n++) {
		before = fault_live(NULL, &seq);
		memset(&rs, 0, sizeof(rs));
		rs.size = sizeof(rs);
		fault_arm(n, FAULT_ALL);
		fd = npr_open("cpu", 0);
		err = fd < 0 ? fd : npr_ioctl(fd, NPR_IOCTL_RING_SETUP, &rs);
		fired = fault_disarm();
		if (fd >= 0)
			EXPECT_EQ(npr_close(fd), 0);
		if (!fired) {
			ASSERT_EQ(err, 0);
			break;
		}
		sites = n;
		if (err) {
			EXPECT_LT(err, 0);
			WANT(npr_last_error()[0] &&
			     strcmp(npr_last_error(), strerror(-err)),
			     "N=%d (%s): the message names nothing: '%s'", n,
			     fault_site(), npr_last_error());
		} else if (rs.path == NPR_RING_PATH_FALLBACK) {
			fallbacks++;
			EXPECT_EQ(rs.reason, NPR_RING_WHY_ERRNO);
			EXPECT_GT(rs.err, 0);
		}
		after = settle(before, SIZE_MAX, &bytes);
		WANT(after <= before, "N=%d (%s): %ld blocks leaked", n,
		     fault_site(), after - before);
		if (after != before)
			log_leaks(seq);
		if (_metadata->failed)
			break;
	}
	TH_LOG("npr_open + RING_SETUP: %d sites, %d fell back to threads",
	       sites, fallbacks);
}

/* One model per variant; teardown removes its scratch cache. */
FIXTURE(walk) {
	struct ctx c;
};

FIXTURE_VARIANT(walk) {
	const struct model *m;
};

FIXTURE_VARIANT_ADD(walk, ir_open_closed_eye) {
	.m = &eye,
};

FIXTURE_VARIANT_ADD(walk, onnx_ppocr_cls) {
	.m = &ppocr,
};

FIXTURE_VARIANT_ADD(walk, ir_squeezenet_fp16_stride) {
	.m = &squeeze,
};

FIXTURE_SETUP(walk)
{
	memset(&self->c, 0, sizeof(self->c));
	self->c.fd = -1;
}

FIXTURE_TEARDOWN(walk)
{
	teardown(&self->c);
}

TEST_F_TIMEOUT(walk, every_operation, 300)
{
	walk_model(_metadata, &self->c, variant->m);
}

TEST_HARNESS_MAIN
