// SPDX-License-Identifier: MIT
/*
 * The top of lib/: npr_open(), npr_close(), npr_ioctl(), the fd -> device
 * table, and the ioctl table.
 *
 * Every argument is copied in and its size checked here, in the order the
 * uapi header fixes, before a handler runs; the handlers check flags and
 * fields, and nothing reaches a backend before they have.  The handlers
 * are here (the device, properties, handles, errors), in lib/model.c
 * (models, compiled models), lib/request.c (requests, variables, buffer
 * objects) and lib/ring/ring.c (the ring).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "backend.h"
#include "error.h"
#include "model.h"
#include "object.h"
#include "props.h"
#include "request.h"
#include "ring/ring.h"
#include "sys.h"
#include "uarg.h"

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
		return npr_err(-ENODEV, "no device \"%s\" (known: cpu, npu, null)",
			       name);
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return npr_err(-ENOMEM, "out of memory");
	dev->ops = ops;
	dev->free_slot = -1;
	npr_props_init(&dev->props);
	/* a device computing in f16 (an NPU) does so unless told otherwise */
	if (npr_backend_has(dev, NPR_BACKEND_CAP_F16))
		dev->props.precision_hint = NPR_ELEM_F16;
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
	return npr_err_default_in(err, mark, "npr_open");
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
			npr_object_destroy(NPR_HANDLE_REQUEST, dev->slots[i].obj);
	}
	for (i = dev->nslots - 1; i >= 0; i--)
		if (dev->slots[i].obj &&
		    dev->slots[i].type != NPR_HANDLE_REQUEST)
			npr_object_destroy(dev->slots[i].type, dev->slots[i].obj);
	free(dev->slots);
	close(dev->fd);
	pthread_mutex_destroy(&dev->lock);
	npr_backend_release(dev);
	free(dev->priv);
	free(dev);
	return 0;
}

/* ---- commands ------------------------------------------------------------ */

static int device_info_ioctl(struct npr_device *dev, void *arg)
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

static int param_ioctl(struct npr_device *dev, void *arg, bool set)
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

static int get_param_ioctl(struct npr_device *dev, void *arg)
{
	return param_ioctl(dev, arg, false);
}

static int set_param_ioctl(struct npr_device *dev, void *arg)
{
	return param_ioctl(dev, arg, true);
}

static int prop_info_ioctl(struct npr_device *dev, void *arg)
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

static int destroy_ioctl(struct npr_device *dev, void *arg)
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
		npr_handle_free_locked(dev, a->handle);
		npr_object_destroy(a->handle >> HANDLE_TYPE_SHIFT, obj);
	}
	pthread_mutex_unlock(&dev->lock);
	return err;
}

static int get_error_ioctl(struct npr_device *dev, void *arg)
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

static int ring_setup_ioctl(struct npr_device *dev, void *arg)
{
	return npr_ring_setup(dev, arg);
}

static int submit_ioctl(struct npr_device *dev, void *arg)
{
	return npr_ring_submit(dev, arg);
}

static int reap_ioctl(struct npr_device *dev, void *arg)
{
	return npr_ring_reap(dev, arg);
}

static int ring_record_ioctl(struct npr_device *dev, void *arg)
{
	return npr_ring_record(dev, arg);
}

/* ---- the ioctl table ----------------------------------------------------- */

/*
 * The arguments get copied into a union of every argument struct; an
 * entry says how many bytes of it the command's struct is (ksize) and the
 * smallest size a caller may pass (v1: the end of the struct's last
 * version-1 field, NPR_UARG()).
 */
union ioctl_arg {
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
	struct npr_prop_info pr;
	struct npr_state_arg st;
	struct npr_export ex;
	struct npr_import im;
	struct npr_profile pf;
	struct npr_query_model qm;
	struct npr_bo_create bc;
	struct npr_bo_info bi;
	struct npr_bo_bind bb;
	struct npr_make_stateful mk;
	struct npr_ring_setup rs;
	struct npr_submit su;
	struct npr_reap re;
	struct npr_ring_record rr;
};

/**
 * struct ioctl_desc - one command
 * @cmd: NPR_IOCTL_*; the table is indexed by its number.
 * @fn: the handler, given the checked copy of the argument.
 * @ksize: sizeof the argument struct.
 * @v1: the smallest size a caller may pass.
 * @out_on_error: errors after which the outputs still go back (besides
 *                -EMSGSIZE, which carries the needed size): -1 for any.
 */
struct ioctl_desc {
	const char *name;	/* for a failure's message of last resort */
	unsigned long cmd;
	int (*fn)(struct npr_device *dev, void *arg);
	size_t ksize, v1;
	int out_on_error;
};

#define IOCTL(name, fn, type, last_v1) \
	[_IOC_NR(NPR_IOCTL_##name)] = { #name, NPR_IOCTL_##name, fn, \
					 NPR_UARG(type, last_v1), 0 }
/* a struct the ring's jobs carry too: its sizes from lib/uarg.h */
#define IOCTL_JOB(name, fn, sizes) \
	[_IOC_NR(NPR_IOCTL_##name)] = { #name, NPR_IOCTL_##name, fn, sizes, 0 }

static const struct ioctl_desc ioctls[] = {
	IOCTL(DEVICE_INFO, device_info_ioctl, struct npr_device_info, arch),
	IOCTL(GET_PARAM, get_param_ioctl, struct npr_param, type),
	IOCTL(SET_PARAM, set_param_ioctl, struct npr_param, type),
	IOCTL(MODEL_LOAD, npr_model_load_ioctl, struct npr_model_load,
	      reserved),
	IOCTL(MODEL_INFO, npr_model_info_ioctl, struct npr_model_info,
	      reserved),
	IOCTL(PORT_INFO, npr_model_port_info_ioctl, struct npr_port_info,
	      reserved),
	IOCTL(COMPILE, npr_model_compile_ioctl, struct npr_compile,
	      num_props),
	IOCTL(REQ_CREATE, npr_request_create_ioctl, struct npr_req_create,
	      req),
	IOCTL(SET_TENSOR, npr_request_set_tensor_ioctl, struct npr_tensor_arg,
	      bytes),
	IOCTL(GET_TENSOR, npr_request_get_tensor_ioctl, struct npr_tensor_arg,
	      bytes),
	/* the times go back with -ETIME (NPR_INFER_TIMEOUT_MS) too */
	[_IOC_NR(NPR_IOCTL_INFER)] = { "INFER", NPR_IOCTL_INFER,
		npr_request_infer_ioctl,
		NPR_UARG(struct npr_infer, finished_ns), -ETIME },
	IOCTL(HANDLE_DESTROY, destroy_ioctl, struct npr_handle_destroy,
	      reserved),
	/* user_data came with the ring */
	IOCTL(GET_ERROR, get_error_ioctl, struct npr_get_error, err),
	IOCTL(RING_SETUP, ring_setup_ioctl, struct npr_ring_setup, reserved),
	[_IOC_NR(NPR_IOCTL_SUBMIT)] = { "SUBMIT", NPR_IOCTL_SUBMIT, submit_ioctl,
		NPR_UARG(struct npr_submit, submitted), -1 },
	[_IOC_NR(NPR_IOCTL_REAP)] = { "REAP", NPR_IOCTL_REAP, reap_ioctl,
		NPR_UARG(struct npr_reap, reserved), -ETIME },
	IOCTL(PROP_INFO, prop_info_ioctl, struct npr_prop_info, name),
	IOCTL(STATE_INFO, npr_state_info_ioctl, struct npr_state_arg, bytes),
	IOCTL_JOB(STATE_GET, npr_state_get_ioctl, NPR_UARG_STATE),
	IOCTL_JOB(STATE_SET, npr_state_set_ioctl, NPR_UARG_STATE),
	IOCTL_JOB(STATE_RESET, npr_state_reset_ioctl, NPR_UARG_STATE),
	IOCTL_JOB(EXPORT, npr_model_export_ioctl, NPR_UARG_EXPORT),
	IOCTL_JOB(IMPORT, npr_model_import_ioctl, NPR_UARG_IMPORT),
	IOCTL(PROFILE, npr_request_profile_ioctl, struct npr_profile, recs),
	IOCTL(QUERY_MODEL, npr_model_query_ioctl, struct npr_query_model,
	      names),
	IOCTL(BO_CREATE, npr_bo_create_ioctl, struct npr_bo_create, reserved),
	IOCTL(BO_INFO, npr_bo_info_ioctl, struct npr_bo_info, reserved),
	IOCTL(BO_BIND, npr_bo_bind_ioctl, struct npr_bo_bind, offset),
	/* shapes came later */
	IOCTL(MAKE_STATEFUL, npr_model_make_stateful_ioctl,
	      struct npr_make_stateful, pairs),
	IOCTL(RING_RECORD, ring_record_ioctl, struct npr_ring_record, cqe),
};

/* GET_ERROR reads the message without replacing it: no npr_err() here */
static int get_error(int fd, const struct ioctl_desc *d, void *arg)
{
	union ioctl_arg k;
	struct npr_device *dev;
	uint32_t usize;
	int err;

	dev = dev_lookup(fd);
	if (!dev)
		return -EBADF;
	if (!arg)
		return -EINVAL;
	memcpy(&usize, arg, 4);
	if (usize < d->v1)
		return -EINVAL;
	for (size_t i = d->ksize; i < usize; i++)
		if (((unsigned char *)arg)[i])
			return -E2BIG;
	memset(&k, 0, d->ksize);
	memcpy(&k, arg, usize < d->ksize ? usize : d->ksize);
	err = get_error_ioctl(dev, &k);
	npr_uarg_out(arg, &k, d->ksize, usize);
	return err;
}

static int do_ioctl(int fd, unsigned long cmd, void *arg)
{
	unsigned long mark = npr_err_mark();
	unsigned int nr = _IOC_NR(cmd);
	const struct ioctl_desc *d;
	struct npr_device *dev;
	union ioctl_arg k;
	uint32_t usize = 0;
	int err;

	/* the size bits are not checked: the argument's own size field is */
	if (_IOC_TYPE(cmd) != NPR_IOCTL_TYPE ||
	    _IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE) ||
	    nr >= sizeof(ioctls) / sizeof(ioctls[0]) || !ioctls[nr].fn)
		return npr_err(-ENOTTY, "unknown ioctl 0x%lx", cmd);
	d = &ioctls[nr];
	if (d->cmd == NPR_IOCTL_GET_ERROR)
		return get_error(fd, d, arg);
	dev = dev_lookup(fd);
	if (!dev)
		return npr_err(-EBADF, "fd %d is not an open npuring device",
			       fd);
	err = npr_uarg_in(&k, d->ksize, d->v1, arg, &usize);
	if (err)
		return err;
	err = d->fn(dev, &k);
	/* outputs (including needed sizes on -EMSGSIZE) go back either way */
	if (!err || err == -EMSGSIZE || d->out_on_error == -1 ||
	    (d->out_on_error && err == d->out_on_error))
		npr_uarg_out(arg, &k, d->ksize, usize);
	return npr_err_default_in(err, mark, d->name);
}

/*
 * The public entry points: the library never changes errno, whatever the
 * code below (libc, libxml2, libpng) does to it.
 */

/**
 * npr_open() - open a device (lib/include/npuring.h has the contract)
 * @name: the device name.
 * @flags: must be 0.
 *
 * Return: a descriptor, or -errno.
 */
int npr_open(const char *name, unsigned int flags)
{
	int saved = errno, ret = do_open(name, flags);

	errno = saved;
	return ret;
}

/**
 * npr_close() - close a device (lib/include/npuring.h has the contract)
 * @fd: a descriptor from npr_open().
 *
 * Return: 0 or -EBADF.
 */
int npr_close(int fd)
{
	int saved = errno, ret = do_close(fd);

	errno = saved;
	return ret;
}

/**
 * npr_ioctl() - run a command (lib/include/npuring.h has the contract)
 * @fd: a descriptor from npr_open().
 * @cmd: NPR_IOCTL_*.
 * @arg: its argument struct.
 *
 * Return: >= 0 or -errno.
 */
int npr_ioctl(int fd, unsigned long cmd, void *arg)
{
	int saved = errno, ret = do_ioctl(fd, cmd, arg);

	errno = saved;
	return ret;
}
