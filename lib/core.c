// SPDX-License-Identifier: MIT
/*
 * Devices, fd-scoped handle tables and the ioctl dispatcher.
 *
 * Every argument is validated here, in the order the uapi header fixes,
 * before anything reaches a backend.  The command handlers are in
 * lib/core_model.c (models, compiled models) and lib/core_req.c (requests,
 * variables, buffer objects).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>

#include "core.h"
#include "ir/ir.h"
#include "onnx/onnx.h"

/* ---- the fd -> device table -------------------------------------------- */

static pthread_mutex_t devtab_lock = PTHREAD_MUTEX_INITIALIZER;
static struct npr_device **devtab;
static int devtab_len;

static struct npr_device *dev_lookup(int fd)
{
	struct npr_device *dev = NULL;

	pthread_mutex_lock(&devtab_lock);
	if (fd >= 0 && fd < devtab_len)
		dev = devtab[fd];
	pthread_mutex_unlock(&devtab_lock);
	return dev;
}

static int dev_register(struct npr_device *dev)
{
	int fd = dev->fd, err = 0;

	pthread_mutex_lock(&devtab_lock);
	if (fd >= devtab_len) {
		int len = devtab_len ? devtab_len : 16;
		struct npr_device **t;

		while (len <= fd)
			len *= 2;
		t = realloc(devtab, sizeof(*t) * len);
		if (!t) {
			err = -ENOMEM;
			goto out;
		}
		memset(t + devtab_len, 0, sizeof(*t) * (len - devtab_len));
		devtab = t;
		devtab_len = len;
	}
	devtab[fd] = dev;
out:
	pthread_mutex_unlock(&devtab_lock);
	return err;
}

/*
 * 64-byte aligned memory, freed with free().  From 2 MiB up the block is
 * aligned to 2 MiB and advised for transparent huge pages: where THP is
 * "madvise" (the default of many distributions) large weights and
 * activations would otherwise live on 4 KiB pages, and streaming
 * resnet18's 45 MB of packed weights walks through 11,000 of them
 * (huge pages: 4-5% faster on it).  Without THP the advice does nothing.
 */
void *npr_alloc(size_t bytes)
{
	const size_t huge = 2 << 20;
	size_t n = bytes ? (bytes + 63) & ~(size_t)63 : 64;
	void *p = NULL;

	if (n >= huge) {
		if (posix_memalign(&p, huge, n))
			return NULL;
		madvise(p, n, MADV_HUGEPAGE);
		return p;
	}
	if (posix_memalign(&p, 64, n))
		return NULL;
	return p;
}

int npr_cpu_count(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	n = CPU_COUNT(&set);
	return n > 0 ? n : 1;
}

/* ---- handles ------------------------------------------------------------ */

int npr_handle_alloc(struct npr_device *dev, void *obj, int type,
		     uint32_t *out)
{
	struct npr_slot *s;
	int idx;

	if (dev->free_slot >= 0) {
		idx = dev->free_slot;
		dev->free_slot = dev->slots[idx].next_free;
	} else {
		if (dev->nslots >= (int)HANDLE_IDX_MASK)
			return npr_err(-ENOSPC, "too many objects on this fd");
		if (dev->nslots == dev->cap_slots) {
			int cap = dev->cap_slots ? dev->cap_slots * 2 : 64;
			struct npr_slot *ns = realloc(dev->slots,
						      sizeof(*ns) * cap);

			if (!ns)
				return -ENOMEM;
			dev->slots = ns;
			dev->cap_slots = cap;
		}
		idx = dev->nslots++;
		dev->slots[idx].gen = 0;
	}
	s = &dev->slots[idx];
	s->obj = obj;
	s->type = type;
	s->gen = (s->gen + 1) & HANDLE_GEN_MASK;
	if (!s->gen)
		s->gen = 1;
	s->next_free = -1;
	*out = ((uint32_t)type << HANDLE_TYPE_SHIFT) |
	       ((uint32_t)s->gen << HANDLE_GEN_SHIFT) | (uint32_t)(idx + 1);
	return 0;
}

/* Caller holds dev->lock.  Returns the object, or NULL with *err set. */
void *npr_handle_get_locked(struct npr_device *dev, uint32_t h, int type,
			    int *err)
{
	uint32_t idx = (h & HANDLE_IDX_MASK), gen;
	struct npr_slot *s;

	if (!idx || idx > (uint32_t)dev->nslots)
		goto noent;
	s = &dev->slots[idx - 1];
	gen = (h >> HANDLE_GEN_SHIFT) & HANDLE_GEN_MASK;
	if (!s->obj || s->gen != gen ||
	    s->type != (h >> HANDLE_TYPE_SHIFT))
		goto noent;
	if (type && s->type != type) {
		*err = npr_err(-EBADF, "handle 0x%08x is not a %s", h,
			       type == NPR_HANDLE_MODEL ? "model" :
			       type == NPR_HANDLE_EXEC ? "compiled model" :
			       "request");
		return NULL;
	}
	return s->obj;
noent:
	*err = npr_err(-ENOENT, "handle 0x%08x does not name a live object",
		       h);
	return NULL;
}

static void handle_free_locked(struct npr_device *dev, uint32_t h)
{
	int idx = (int)(h & HANDLE_IDX_MASK) - 1;

	dev->slots[idx].obj = NULL;
	dev->slots[idx].next_free = dev->free_slot;
	dev->free_slot = idx;
}

/* ---- objects ------------------------------------------------------------ */

void npr_model_destroy(struct npr_model *m)
{
	if (!m)
		return;
	npr_graph_free(m->g);
	free(m);
}

static void ports_free(struct npr_port *p, int n)
{
	int i;

	for (i = 0; p && i < n; i++)
		free(p[i].name);
	free(p);
}

void npr_exec_put(struct npr_exec *ex)
{
	if (--ex->refs)
		return;
	npr_backend_exec_destroy(ex);
	ports_free(ex->in, ex->nin);
	ports_free(ex->out, ex->nout);
	npr_graph_free(ex->g);
	free(ex->prep);
	free(ex->native);
	free(ex);
}

struct npr_exec *npr_exec_get(struct npr_device *dev, uint32_t h, int *err)
{
	struct npr_exec *ex;

	pthread_mutex_lock(&dev->lock);
	ex = npr_handle_get_locked(dev, h, NPR_HANDLE_EXEC, err);
	if (ex)
		ex->refs++;
	pthread_mutex_unlock(&dev->lock);
	return ex;
}

void npr_exec_free(struct npr_exec *ex)
{
	if (ex)
		npr_exec_put(ex);
}

/* Drop a reference; the caller holds dev->lock. */
void npr_bo_put(struct npr_bo *bo)
{
	if (!bo || --bo->refs)
		return;
	munmap(bo->addr, bo->bytes);
	close(bo->memfd);
	free(bo);
}

/* The BO bound to a request port, if any, is let go. */
void npr_port_unbind(struct npr_bo **slot)
{
	if (!*slot)
		return;
	(*slot)->bound--;
	npr_bo_put(*slot);
	*slot = NULL;
}

void npr_request_destroy(struct npr_request *rq)
{
	int i;

	free(rq->prof);
	for (i = 0; rq->bo_in && i < rq->ex->nin; i++)
		npr_port_unbind(&rq->bo_in[i]);
	for (i = 0; rq->bo_out && i < rq->ex->nout; i++)
		npr_port_unbind(&rq->bo_out[i]);
	free(rq->bo_in);
	free(rq->bo_out);
	npr_backend_request_destroy(rq);
	for (i = 0; rq->own_in && i < rq->ex->nin; i++)
		free(rq->own_in[i]);
	for (i = 0; rq->own_out && i < rq->ex->nout; i++)
		free(rq->own_out[i]);
	free(rq->own_in);
	free(rq->own_out);
	free(rq->cap_out);
	free(rq->in);
	free(rq->out);
	npr_exec_put(rq->ex);
	free(rq);
}

static void object_destroy(int type, void *obj)
{
	switch (type) {
	case NPR_HANDLE_MODEL:
		npr_model_destroy(obj);
		break;
	case NPR_HANDLE_EXEC:
		npr_exec_put(obj);
		break;
	case NPR_HANDLE_REQUEST:
		npr_request_destroy(obj);
		break;
	case NPR_HANDLE_BO:
		npr_bo_put(obj);
		break;
	}
}

/* ---- open / close ------------------------------------------------------- */

static int do_open(const char *name, unsigned int flags)
{
	const struct npr_backend_ops *ops;
	unsigned long mark = npr_err_mark();
	struct npr_device *dev;
	int index = 0, err;

	if (!name)
		return npr_err(-EINVAL, "no device name");
	if (flags)
		return npr_err(-EINVAL, "npr_open: flags must be 0");
	ops = npr_backend_find(name, &index);
	if (!ops)
		return npr_err(-ENODEV, "no device \"%s\" (known: cpu, npu, null)", name);
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return npr_err(-ENOMEM, "out of memory");
	dev->ops = ops;
	dev->free_slot = -1;
	npr_props_init(&dev->props);
	pthread_mutex_init(&dev->lock, NULL);
	dev->info.size = sizeof(dev->info);
	dev->info.api_version = NPR_UAPI_VERSION;
	err = npr_backend_probe(dev, index);
	if (err)
		goto fail;
	dev->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (dev->fd < 0) {
		err = npr_err(-errno, "eventfd: %s", strerror(errno));
		goto fail;
	}
	err = dev_register(dev);
	if (err) {
		close(dev->fd);
		goto fail;
	}
	return dev->fd;
fail:
	pthread_mutex_destroy(&dev->lock);
	if (dev->priv)
		npr_backend_release(dev);
	free(dev->priv);
	free(dev);
	return npr_err_default(err, mark);
}

static int do_close(int fd)
{
	struct npr_device *dev;
	int i;

	pthread_mutex_lock(&devtab_lock);
	dev = (fd >= 0 && fd < devtab_len) ? devtab[fd] : NULL;
	if (dev)
		devtab[fd] = NULL;
	pthread_mutex_unlock(&devtab_lock);
	if (!dev)
		return npr_err(-EBADF, "fd %d is not an open npuring device",
			       fd);
	/* stops the workers: no job runs past this point */
	npr_ring_destroy(dev);
	/* reverse order of creation: newest slots were appended last */
	for (i = dev->nslots - 1; i >= 0; i--) {
		/* requests before execs before models, whatever the slot */
		if (dev->slots[i].obj &&
		    dev->slots[i].type == NPR_HANDLE_REQUEST)
			object_destroy(NPR_HANDLE_REQUEST, dev->slots[i].obj);
	}
	for (i = dev->nslots - 1; i >= 0; i--)
		if (dev->slots[i].obj &&
		    dev->slots[i].type != NPR_HANDLE_REQUEST)
			object_destroy(dev->slots[i].type, dev->slots[i].obj);
	free(dev->slots);
	close(dev->fd);
	pthread_mutex_destroy(&dev->lock);
	npr_backend_release(dev);
	free(dev->priv);
	free(dev);
	return 0;
}

/* ---- argument copy-in / copy-out ------------------------------------- */

/*
 * Copy the caller's struct into a zeroed kernel-side copy of @ksize bytes.
 * Order: NULL or size below version 0 -> -EINVAL; unknown non-zero tail
 * -> -E2BIG.
 */
static int copy_in(void *karg, size_t ksize, size_t v0, const void *uarg,
		   uint32_t *usize)
{
	uint32_t us;
	size_t i;

	if (!uarg)
		return npr_err(-EINVAL, "argument pointer is NULL");
	memcpy(&us, uarg, sizeof(us));
	if (us < v0)
		return npr_err(-EINVAL,
			       "argument size %u is smaller than %zu", us, v0);
	for (i = ksize; i < us; i++)
		if (((const unsigned char *)uarg)[i])
			return npr_err(-E2BIG,
				       "argument has non-zero bytes past the %zu this library knows",
				       ksize);
	memset(karg, 0, ksize);
	memcpy(karg, uarg, us < ksize ? us : ksize);
	*usize = us;
	return 0;
}

static void copy_out(void *uarg, const void *karg, size_t ksize,
		     uint32_t usize)
{
	/* never rewrite the caller's size field */
	size_t n = usize < ksize ? usize : ksize;

	if (n > 4)
		memcpy((char *)uarg + 4, (const char *)karg + 4, n - 4);
}

int npr_check_flags(uint32_t flags, uint32_t known)
{
	if (flags & ~known)
		return npr_err(-EOPNOTSUPP, "unknown flag bits 0x%x",
			       flags & ~known);
	return 0;
}

int npr_check_reserved(uint32_t v)
{
	if (v)
		return npr_err(-EINVAL, "reserved field is not zero");
	return 0;
}

/* Flags, then the reserved word: the uapi's validation order. */
int npr_check_args(uint32_t flags, uint32_t known, uint32_t reserved)
{
	int err = npr_check_flags(flags, known);

	return err ? err : npr_check_reserved(reserved);
}

uint64_t npr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/**
 * npr_put_bytes() - copy @n bytes to a user buffer with the -EMSGSIZE
 * contract: *@len becomes @n; a missing or short buffer is -EMSGSIZE
 * @p: the bytes.
 * @n: how many.
 * @ptr: the user buffer, or 0 to ask for the size.
 * @len: In: its size.  Out: @n.
 */
int npr_put_bytes(const void *p, size_t n, uint64_t ptr, uint32_t *len)
{
	uint32_t have = *len;

	if (n > UINT32_MAX)
		return npr_err(-EOVERFLOW, "value too long");
	*len = (uint32_t)n;
	if (!ptr || have < n)
		return npr_err(-EMSGSIZE, "buffer of %u bytes, %zu needed",
			       have, n);
	memcpy((void *)(uintptr_t)ptr, p, n);
	return 0;
}

/* A NUL-terminated string likewise; a short buffer gets it cut, with NUL. */
int npr_put_string(const char *s, uint64_t ptr, uint32_t *len)
{
	size_t need = strlen(s) + 1;
	uint32_t have = *len;

	if (ptr && have && have < need) {
		memcpy((void *)(uintptr_t)ptr, s, have - 1);
		((char *)(uintptr_t)ptr)[have - 1] = 0;
	}
	return npr_put_bytes(s, need, ptr, len);
}

/* ---- commands ------------------------------------------------------------ */

static int cmd_device_info(struct npr_device *dev, void *arg)
{
	struct npr_device_info *a = arg;
	uint32_t size = a->size;
	int err;

	err = npr_check_flags(a->flags, 0);
	if (err)
		return err;
	err = npr_check_reserved(a->reserved);
	if (err)
		return err;
	*a = dev->info;
	a->size = size;
	a->num_threads = dev->props.num_threads ? dev->props.num_threads :
						  (uint32_t)npr_cpu_count();
	return 0;
}

static int cmd_param(struct npr_device *dev, void *arg, bool set)
{
	struct npr_param *a = arg;
	struct npr_exec *ex = NULL;
	int err;

	err = npr_check_flags(a->flags, 0);
	if (err)
		return err;
	pthread_mutex_lock(&dev->lock);
	if (a->handle) {
		ex = npr_handle_get_locked(dev, a->handle, NPR_HANDLE_EXEC, &err);
		if (!ex)
			goto out;
	}
	err = npr_prop_param(dev, ex, a, set);
out:
	pthread_mutex_unlock(&dev->lock);
	return err;
}

static int cmd_prop_info(struct npr_device *dev, void *arg)
{
	struct npr_prop_info *a = arg;
	struct npr_exec *ex = NULL;
	int err;

	err = npr_check_flags(a->flags, NPR_PROP_INFO_BY_ID |
			      NPR_PROP_INFO_BY_NAME);
	if (err)
		return err;
	if (a->flags == (NPR_PROP_INFO_BY_ID | NPR_PROP_INFO_BY_NAME))
		return npr_err(-EINVAL, "flags: BY_ID and BY_NAME exclude each other");
	err = npr_check_reserved(a->reserved);
	if (err)
		return err;
	pthread_mutex_lock(&dev->lock);
	if (a->handle) {
		ex = npr_handle_get_locked(dev, a->handle, NPR_HANDLE_EXEC, &err);
		if (!ex)
			goto out;
	}
	err = npr_prop_info(dev, ex, a);
out:
	pthread_mutex_unlock(&dev->lock);
	return err;
}

static int cmd_destroy(struct npr_device *dev, void *arg)
{
	struct npr_handle_destroy *a = arg;
	void *obj;
	int err;

	err = npr_check_args(a->flags, 0, a->reserved);
	if (err)
		return err;
	pthread_mutex_lock(&dev->lock);
	obj = npr_handle_get_locked(dev, a->handle, 0, &err);
	if (obj && (a->handle >> HANDLE_TYPE_SHIFT) == NPR_HANDLE_REQUEST &&
	    ((struct npr_request *)obj)->busy) {
		err = npr_err(-EBUSY, "request 0x%08x has a job in flight",
			      a->handle);
		obj = NULL;
	}
	if (obj) {
		handle_free_locked(dev, a->handle);
		object_destroy(a->handle >> HANDLE_TYPE_SHIFT, obj);
	}
	pthread_mutex_unlock(&dev->lock);
	return err;
}

static int cmd_get_error(struct npr_device *dev, void *arg)
{
	struct npr_get_error *a = arg;
	const char *msg = npr_last_error();
	char *job = NULL;
	size_t need;
	int err = 0;

	/* never overwrite the message */
	if (a->flags & ~NPR_GET_ERROR_JOB)
		return -EOPNOTSUPP;
	if (a->flags & NPR_GET_ERROR_JOB) {
		err = npr_ring_job_error(dev, a->user_data, &job, &a->err);
		if (err)
			return err;
		msg = job;
	} else if (a->user_data) {
		return -EINVAL;
	} else {
		a->err = npr_last_errno();
	}
	need = strlen(msg) + 1;
	if (!a->buf || a->len < need) {
		if (a->buf && a->len) {
			memcpy((void *)(uintptr_t)a->buf, msg, a->len - 1);
			((char *)(uintptr_t)a->buf)[a->len - 1] = 0;
		}
		err = -EMSGSIZE;
	} else {
		memcpy((void *)(uintptr_t)a->buf, msg, need);
	}
	a->len = need;
	free(job);
	return err;
}

/* ---- dispatch ------------------------------------------------------------ */

static const struct cmd {
	size_t ksize, v0;
} cmds[] = {
	[0x00] = { sizeof(struct npr_device_info), sizeof(struct npr_device_info) },
	[0x01] = { sizeof(struct npr_param), sizeof(struct npr_param) },
	[0x02] = { sizeof(struct npr_param), sizeof(struct npr_param) },
	[0x03] = { sizeof(struct npr_model_load), sizeof(struct npr_model_load) },
	[0x04] = { sizeof(struct npr_model_info), sizeof(struct npr_model_info) },
	[0x05] = { sizeof(struct npr_port_info), sizeof(struct npr_port_info) },
	[0x06] = { sizeof(struct npr_compile), sizeof(struct npr_compile) },
	[0x07] = { sizeof(struct npr_req_create), sizeof(struct npr_req_create) },
	[0x08] = { sizeof(struct npr_tensor_arg), sizeof(struct npr_tensor_arg) },
	[0x09] = { sizeof(struct npr_tensor_arg), sizeof(struct npr_tensor_arg) },
	[0x0a] = { sizeof(struct npr_infer), sizeof(struct npr_infer) },
	[0x0b] = { sizeof(struct npr_handle_destroy), sizeof(struct npr_handle_destroy) },
	[0x0c] = { sizeof(struct npr_get_error),
		   offsetof(struct npr_get_error, user_data) },
	[0x10] = { sizeof(struct npr_prop_info), sizeof(struct npr_prop_info) },
	[0x11] = { sizeof(struct npr_state_arg), sizeof(struct npr_state_arg) },
	[0x12] = { sizeof(struct npr_state_arg), sizeof(struct npr_state_arg) },
	[0x13] = { sizeof(struct npr_state_arg), sizeof(struct npr_state_arg) },
	[0x14] = { sizeof(struct npr_state_arg), sizeof(struct npr_state_arg) },
	[0x15] = { sizeof(struct npr_export), sizeof(struct npr_export) },
	[0x16] = { sizeof(struct npr_import), sizeof(struct npr_import) },
	[0x17] = { sizeof(struct npr_profile), sizeof(struct npr_profile) },
	[0x18] = { sizeof(struct npr_query_model), sizeof(struct npr_query_model) },
	[0x19] = { sizeof(struct npr_bo_create), sizeof(struct npr_bo_create) },
	[0x1a] = { sizeof(struct npr_bo_info), sizeof(struct npr_bo_info) },
	[0x1b] = { sizeof(struct npr_bo_bind), sizeof(struct npr_bo_bind) },
	[0x1c] = { sizeof(struct npr_make_stateful), 24 },
	[0x0d] = { sizeof(struct npr_ring_setup), sizeof(struct npr_ring_setup) },
	[0x0e] = { sizeof(struct npr_submit), sizeof(struct npr_submit) },
	[0x0f] = { sizeof(struct npr_reap), sizeof(struct npr_reap) },
};

/*
 * Ring jobs that carry an ioctl's argument struct (IMPORT, EXPORT, the
 * variables): the struct is copied and checked like the ioctl's at
 * submission (steps 1-4 of the validation order), run on a worker, and its
 * outputs are written back before the completion is posted.
 */
int npr_job_arg_in(unsigned long cmd, const void *uarg, void *karg,
		   uint32_t *usize)
{
	unsigned int nr = _IOC_NR(cmd);
	const struct npr_state_arg *st = karg;
	int err;

	err = copy_in(karg, cmds[nr].ksize, cmds[nr].v0, uarg, usize);
	if (err)
		return err;
	switch (nr) {
	case _IOC_NR(NPR_IOCTL_IMPORT):
		return npr_check_args(((struct npr_import *)karg)->flags, 0,
				      ((struct npr_import *)karg)->reserved);
	case _IOC_NR(NPR_IOCTL_EXPORT):
		return npr_check_args(((struct npr_export *)karg)->flags, 0,
				      ((struct npr_export *)karg)->reserved);
	default:
		return npr_check_flags(st->flags,
				       nr == _IOC_NR(NPR_IOCTL_STATE_RESET) ?
				       NPR_STATE_RESET_ALL : 0);
	}
}

void npr_job_arg_out(unsigned long cmd, void *uarg, const void *karg,
		     uint32_t usize)
{
	copy_out(uarg, karg, cmds[_IOC_NR(cmd)].ksize, usize);
}

/* Run it; @rq is the request a variable job holds, NULL otherwise. */
int npr_job_run_arg(struct npr_device *dev, struct npr_request *rq,
		    unsigned long cmd, void *karg)
{
	unsigned long mark = npr_err_mark();
	unsigned int nr = _IOC_NR(cmd);
	int err;

	switch (nr) {
	case _IOC_NR(NPR_IOCTL_IMPORT):
		err = npr_cmd_import(dev, karg);
		break;
	case _IOC_NR(NPR_IOCTL_EXPORT):
		err = npr_cmd_export(dev, karg);
		break;
	default:
		err = npr_state_op(rq, karg, nr);
	}
	return npr_err_default(err, mark);
}

static int do_ioctl(int fd, unsigned long cmd, void *arg)
{
	union {
		struct npr_device_info di;
		struct npr_param pa;
		struct npr_model_load ml;
		struct npr_model_info mi;
		struct npr_port_info pi;
		struct npr_compile co;
		struct npr_req_create rc;
		struct npr_tensor_arg ta;
		struct npr_infer in;
		struct npr_handle_destroy hd;
		struct npr_get_error ge;
		struct npr_prop_info pi2;
		struct npr_state_arg st;
		struct npr_export ex;
		struct npr_import im;
		struct npr_profile pr;
		struct npr_query_model qm;
		struct npr_bo_create bc;
		struct npr_bo_info bi;
		struct npr_bo_bind bb;
		struct npr_make_stateful mk;
		struct npr_ring_setup rs;
		struct npr_submit su;
		struct npr_reap re;
	} k;
	unsigned long mark = npr_err_mark();
	unsigned int nr = _IOC_NR(cmd);
	struct npr_device *dev;
	uint32_t usize = 0;
	int err;

	if (_IOC_TYPE(cmd) != NPR_IOCTL_TYPE || _IOC_DIR(cmd) !=
	    (_IOC_READ | _IOC_WRITE) || nr >= sizeof(cmds) / sizeof(cmds[0]) ||
	    !cmds[nr].ksize)
		return npr_err(-ENOTTY, "unknown ioctl 0x%lx", cmd);
	if (nr == _IOC_NR(NPR_IOCTL_GET_ERROR)) {
		/* reads the message without replacing it */
		dev = dev_lookup(fd);
		if (!dev)
			return -EBADF;
		if (!arg)
			return -EINVAL;
		memcpy(&usize, arg, 4);
		if (usize < cmds[nr].v0)
			return -EINVAL;
		for (size_t i = cmds[nr].ksize; i < usize; i++)
			if (((unsigned char *)arg)[i])
				return -E2BIG;
		memset(&k, 0, cmds[nr].ksize);
		memcpy(&k, arg, usize < cmds[nr].ksize ? usize :
			   cmds[nr].ksize);
		err = cmd_get_error(dev, &k);
		copy_out(arg, &k, cmds[nr].ksize, usize);
		return err;
	}
	dev = dev_lookup(fd);
	if (!dev)
		return npr_err(-EBADF, "fd %d is not an open npuring device",
			       fd);
	err = copy_in(&k, cmds[nr].ksize, cmds[nr].v0, arg, &usize);
	if (err)
		return err;
	switch (nr) {
	case 0x00: err = cmd_device_info(dev, &k); break;
	case 0x01: err = cmd_param(dev, &k, false); break;
	case 0x02: err = cmd_param(dev, &k, true); break;
	case 0x03: err = npr_cmd_model_load(dev, &k); break;
	case 0x04: err = npr_cmd_model_info(dev, &k); break;
	case 0x05: err = npr_cmd_port_info(dev, &k); break;
	case 0x06: err = npr_cmd_compile(dev, &k); break;
	case 0x07: err = npr_cmd_req_create(dev, &k); break;
	case 0x08: err = npr_cmd_tensor(dev, &k, true); break;
	case 0x09: err = npr_cmd_tensor(dev, &k, false); break;
	case 0x0a: err = npr_cmd_infer(dev, &k); break;
	case 0x0b: err = cmd_destroy(dev, &k); break;
	case 0x10: err = cmd_prop_info(dev, &k); break;
	case 0x11: case 0x12: case 0x13: case 0x14:
		err = npr_cmd_state(dev, &k, nr);
		break;
	case 0x15: err = npr_cmd_export(dev, &k); break;
	case 0x16: err = npr_cmd_import(dev, &k); break;
	case 0x17: err = npr_cmd_profile(dev, &k); break;
	case 0x18: err = npr_cmd_query_model(dev, &k); break;
	case 0x19: err = npr_cmd_bo_create(dev, &k); break;
	case 0x1a: err = npr_cmd_bo_info(dev, &k); break;
	case 0x1b: err = npr_cmd_bo_bind(dev, &k); break;
	case 0x1c: err = npr_cmd_make_stateful(dev, &k); break;
	case 0x0d: err = npr_ring_setup(dev, &k.rs); break;
	case 0x0e: err = npr_ring_submit(dev, &k.su); break;
	case 0x0f: err = npr_ring_reap(dev, &k.re); break;
	default: err = -ENOTTY;
	}
	/* outputs (including needed sizes on -EMSGSIZE) go back either way */
	if (!err || err == -EMSGSIZE ||
	    nr == 0x0e || (nr == 0x0f && err == -ETIME))
		copy_out(arg, &k, cmds[nr].ksize, usize);
	return npr_err_default(err, mark);
}

/*
 * The public entry points: the library never changes errno, whatever the
 * code below (libc, libxml2, libpng) does to it.
 */
int npr_open(const char *name, unsigned int flags)
{
	int saved = errno, ret = do_open(name, flags);

	errno = saved;
	return ret;
}

int npr_close(int fd)
{
	int saved = errno, ret = do_close(fd);

	errno = saved;
	return ret;
}

int npr_ioctl(int fd, unsigned long cmd, void *arg)
{
	int saved = errno, ret = do_ioctl(fd, cmd, arg);

	errno = saved;
	return ret;
}
