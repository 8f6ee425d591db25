// SPDX-License-Identifier: MIT
/*
 * Request commands: REQ_CREATE, SET/GET_TENSOR, INFER, PROFILE, the
 * variables of stateful models, buffer objects, and the ring's INFER and
 * STATE_* jobs.
 *
 * Called from the ioctl table in lib/dev.c with the argument already
 * copied in and its size checked, or from a ring job (lib/ring/ring.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "backend.h"
#include "object.h"
#include "request.h"
#include "sys.h"
#include "tensor.h"
#include "uarg.h"

/* ---- variables of stateful models (lib/passes/stateful.c) ------------------------- */

/* A request no ring job holds: -ENOENT, -EBADF or -EBUSY otherwise. */
static struct npr_request *request_idle(struct npr_device *dev, uint32_t h,
					int *err)
{
	struct npr_request *rq;

	pthread_mutex_lock(&dev->lock);
	rq = npr_handle_get_locked(dev, h, NPR_HANDLE_REQUEST, err);
	if (rq && rq->busy) {
		*err = npr_err(-EBUSY, "request 0x%08x has a job in flight", h);
		rq = NULL;
	}
	pthread_mutex_unlock(&dev->lock);
	return rq;
}

/* ---- variables that grow: a KV cache (struct npr_variable @append_axis) -- */

/* Copy between the store of variable @k and dense memory @d, @len positions. */
static void store_copy(struct npr_request *rq, int k, void *d, int64_t len,
		       bool out)
{
	struct npr_var_store *vs = &rq->vs[k];
	size_t o, blk = len * vs->row;

	for (o = 0; o < vs->outer && blk; o++) {
		char *st = (char *)vs->buf + o * vs->cap * vs->row;

		if (out)
			memcpy((char *)d + o * blk, st, blk);
		else
			memcpy(st, (const char *)d + o * blk, blk);
	}
}

/* After an inference: append the new part the Assign computed. */
static int store_append(struct npr_request *rq, int k)
{
	const struct npr_variable *v = &rq->ex->g->vars[k];
	const struct npr_tensor *x = &rq->out[v->state_out];
	struct npr_var_store *vs = &rq->vs[k];
	int64_t add = x->shape.d[v->append_axis];
	size_t o, blk = add * vs->row;
	int err;

	err = npr_var_reserve(rq, k, vs->len + add);
	if (err)
		return err;
	for (o = 0; o < vs->outer && blk; o++)
		memcpy((char *)vs->buf + (o * vs->cap + vs->len) * vs->row,
		       (const char *)x->data + o * blk, blk);
	vs->len += add;
	npr_var_publish(rq, k);
	return 0;
}

/* The stores of a request whose model has variables that grow. */
static int store_init(struct npr_request *rq)
{
	const struct npr_graph *g = rq->ex->g;
	int i, j, any = 0;

	for (i = 0; i < g->nvars; i++)
		any |= g->vars[i].append_axis >= 0;
	if (!any)
		return 0;
	rq->vs = calloc(g->nvars, sizeof(*rq->vs));
	rq->pitch = calloc(rq->ex->nin + 1, sizeof(*rq->pitch));
	if (!rq->vs || !rq->pitch)
		return -ENOMEM;
	for (i = 0; i < g->nvars; i++) {
		const struct npr_variable *v = &g->vars[i];

		if (v->append_axis < 0)
			continue;
		rq->vs[i].outer = 1;
		rq->vs[i].row = npr_elem_size(v->type);
		for (j = 0; j < v->shape.rank; j++) {
			if (j < v->append_axis)
				rq->vs[i].outer *= v->shape.d[j];
			else if (j > v->append_axis)
				rq->vs[i].row *= v->shape.d[j];
		}
		npr_var_publish(rq, i);
	}
	return 0;
}

/* Variable @k (all when -1) back to its initial value. */
static void state_reset(struct npr_request *rq, int k)
{
	const struct npr_graph *g = rq->ex->g;
	int i;

	for (i = 0; i < g->nvars; i++) {
		const struct npr_variable *v = &g->vars[i];

		if (k >= 0 && i != k)
			continue;
		if (v->append_axis >= 0) {
			rq->vs[i].len = 0;
			npr_var_publish(rq, i);
			continue;
		}
		memset(rq->in[v->state_in].data, 0, rq->in[v->state_in].nbytes);
		if (v->valid_in >= 0)
			*(uint8_t *)rq->in[v->valid_in].data = 0;
	}
}

/*
 * After a successful inference: keep what each Assign computed.  A
 * variable that grows appends; one that cannot grow (its memory over
 * NPR_MAX_MODEL_MEMORY_MB) fails the inference with the others kept.
 */
static int state_commit(struct npr_request *rq)
{
	const struct npr_graph *g = rq->ex->g;
	int i, err = 0;

	for (i = 0; i < g->nvars; i++) {
		const struct npr_variable *v = &g->vars[i];

		if (v->state_out < 0)
			continue;
		if (v->append_axis >= 0) {
			int e = store_append(rq, i);

			if (e && !err)
				err = e;
			continue;
		}
		memcpy(rq->in[v->state_in].data, rq->out[v->state_out].data,
		       rq->in[v->state_in].nbytes);
		if (v->valid_in >= 0)
			*(uint8_t *)rq->in[v->valid_in].data = 1;
	}
	return err;
}

/* SET (or, @trunc, SET with NPR_STATE_TRUNCATE) of a variable that grows. */
static int store_set(struct npr_request *rq, int k, struct npr_state_arg *a,
		     bool trunc)
{
	const struct npr_variable *v = &rq->ex->g->vars[k];
	struct npr_var_store *vs = &rq->vs[k];
	int64_t len = a->dims[v->append_axis];
	size_t bytes;
	int i, err;

	for (i = 0; i < v->shape.rank; i++)
		if (i != v->append_axis && a->dims[i] != v->shape.d[i])
			return npr_err(-EINVAL, "variable %s: dimension %d is %lld, not %lld",
				       v->id, i, (long long)v->shape.d[i],
				       (long long)a->dims[i]);
	if (len < 0 || len > (1LL << 31) || (trunc && len > vs->len))
		return npr_err(-EINVAL, "variable %s: length %lld along dimension %d (%s %lld)",
			       v->id, (long long)len, v->append_axis,
			       trunc ? "it holds" : "at most",
			       trunc ? (long long)vs->len : 1LL << 31);
	if (trunc) {
		vs->len = len;
		npr_var_publish(rq, k);
		return 0;
	}
	bytes = vs->outer * len * vs->row;
	if ((!a->data && bytes) || a->bytes != bytes)
		return npr_err(-EINVAL, "variable %s: %zu bytes expected, got %llu",
			       v->id, bytes, (unsigned long long)a->bytes);
	err = npr_var_reserve(rq, k, len);
	if (err)
		return err;
	store_copy(rq, k, (void *)(uintptr_t)a->data, len, false);
	vs->len = len;
	npr_var_publish(rq, k);
	return 0;
}

/**
 * npr_request_state() - run a variable command on a request
 * @rq: the request, held (no other job runs it).
 * @a: the argument, copied in and its flags checked.
 * @cmd: NPR_IOCTL_STATE_INFO, _GET, _SET or _RESET.
 *
 * A variable that is not set yet reads as its initial value when that is
 * a constant (the usual case), else as zeros: an initial value computed
 * from the inputs exists only during INFER.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_request_state(struct npr_request *rq, struct npr_state_arg *a,
		      unsigned long cmd)
{
	unsigned int nr = _IOC_NR(cmd);
	const struct npr_variable *v;
	const struct npr_graph *g;
	struct npr_tensor *t;
	bool grows;
	int i;

	g = rq->ex->g;
	a->count = g->nvars;
	if (nr == _IOC_NR(NPR_IOCTL_STATE_RESET) &&
	    (a->flags & NPR_STATE_RESET_ALL)) {
		state_reset(rq, -1);
		return 0;
	}
	if (a->index >= (uint32_t)g->nvars)
		return npr_err(-ENOENT, "variable %u: the model has %d variables",
			       a->index, g->nvars);
	v = &g->vars[a->index];
	t = &rq->in[v->state_in];
	grows = v->append_axis >= 0;
	switch (nr) {
	case _IOC_NR(NPR_IOCTL_STATE_INFO):
		a->elem_type = v->type;
		a->rank = v->shape.rank;
		for (i = 0; i < NPR_MAX_RANK; i++)
			a->dims[i] = i < v->shape.rank ? v->shape.d[i] : 0;
		a->bytes = t->nbytes;
		return npr_put_string(v->id, a->name, &a->name_len);
	case _IOC_NR(NPR_IOCTL_STATE_GET):
		a->elem_type = v->type;
		a->rank = v->shape.rank;
		for (i = 0; i < NPR_MAX_RANK; i++)
			a->dims[i] = i < t->shape.rank ? t->shape.d[i] : 0;
		if ((!a->data && t->nbytes) || a->bytes < t->nbytes) {
			a->bytes = t->nbytes;
			return npr_err(-EMSGSIZE, "variable %s: %zu bytes needed",
				       v->id, t->nbytes);
		}
		if (grows) {
			store_copy(rq, a->index, (void *)(uintptr_t)a->data,
				   rq->vs[a->index].len, true);
		} else if (v->valid_in >= 0 &&
		    !*(uint8_t *)rq->in[v->valid_in].data) {
			const struct npr_value *init =
				&g->vals[g->nodes[v->read_node].in[2]];

			if (init->data && init->nbytes == t->nbytes)
				memcpy((void *)(uintptr_t)a->data, init->data,
				       t->nbytes);
			else
				memset((void *)(uintptr_t)a->data, 0,
				       t->nbytes);
		} else
			memcpy((void *)(uintptr_t)a->data, t->data, t->nbytes);
		a->bytes = t->nbytes;
		return 0;
	case _IOC_NR(NPR_IOCTL_STATE_SET):
		if (a->elem_type != v->type || a->rank != (uint32_t)v->shape.rank)
			return npr_err(-EINVAL, "variable %s is %s of rank %d",
				       v->id, npr_elem_name(v->type),
				       v->shape.rank);
		if (grows)
			return store_set(rq, a->index, a,
					 a->flags & NPR_STATE_TRUNCATE);
		if (a->flags & NPR_STATE_TRUNCATE)
			return npr_err(-EINVAL, "variable %s has no dynamic dimension to truncate",
				       v->id);
		for (i = 0; i < v->shape.rank; i++)
			if (a->dims[i] != v->shape.d[i])
				return npr_err(-EINVAL, "variable %s: dimension %d is %lld, not %lld",
					       v->id, i,
					       (long long)v->shape.d[i],
					       (long long)a->dims[i]);
		if (!a->data || a->bytes != t->nbytes)
			return npr_err(-EINVAL, "variable %s: %zu bytes expected, got %llu",
				       v->id, t->nbytes,
				       (unsigned long long)a->bytes);
		memcpy(t->data, (const void *)(uintptr_t)a->data, t->nbytes);
		if (v->valid_in >= 0)
			*(uint8_t *)rq->in[v->valid_in].data = 1;
		return 0;
	default:	/* RESET */
		state_reset(rq, (int)a->index);
		return 0;
	}
}

static int state_ioctl(struct npr_device *dev, void *arg, unsigned long cmd)
{
	struct npr_state_arg *a = arg;
	struct npr_request *rq;
	int err;

	err = npr_check_flags(a->flags, cmd == NPR_IOCTL_STATE_RESET ?
			      NPR_STATE_RESET_ALL : cmd == NPR_IOCTL_STATE_SET ?
			      NPR_STATE_TRUNCATE : 0);
	if (err)
		return err;
	rq = request_idle(dev, a->req, &err);
	if (!rq)
		return err;
	return npr_request_state(rq, a, cmd);
}

/**
 * npr_state_info_ioctl() - NPR_IOCTL_STATE_INFO
 * @dev: the device.
 * @arg: struct npr_state_arg, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_state_info_ioctl(struct npr_device *dev, void *arg)
{
	return state_ioctl(dev, arg, NPR_IOCTL_STATE_INFO);
}

/**
 * npr_state_get_ioctl() - NPR_IOCTL_STATE_GET
 * @dev: the device.
 * @arg: struct npr_state_arg, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_state_get_ioctl(struct npr_device *dev, void *arg)
{
	return state_ioctl(dev, arg, NPR_IOCTL_STATE_GET);
}

/**
 * npr_state_set_ioctl() - NPR_IOCTL_STATE_SET
 * @dev: the device.
 * @arg: struct npr_state_arg, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_state_set_ioctl(struct npr_device *dev, void *arg)
{
	return state_ioctl(dev, arg, NPR_IOCTL_STATE_SET);
}

/**
 * npr_state_reset_ioctl() - NPR_IOCTL_STATE_RESET
 * @dev: the device.
 * @arg: struct npr_state_arg, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_state_reset_ioctl(struct npr_device *dev, void *arg)
{
	return state_ioctl(dev, arg, NPR_IOCTL_STATE_RESET);
}

/* ---- shapes of dynamic inputs ------------------------------------------------ */

/**
 * port_dims() - check a caller's dims against a port's shape and bounds
 * @p: the port (an input may have dynamic dimensions).
 * @out: the port is an output.
 * @rank: the caller's rank.
 * @dims: the caller's dims (NPR_MAX_RANK of them).
 * @shape: Out. The tensor's shape.
 *
 * A static dimension must be equal, a dynamic one of an input within its
 * bounds (struct npr_port @lo, @hi); past @rank every dim must be 0.
 *
 * Return: the tensor's bytes, or -EINVAL (-EFBIG when its size does not
 * fit) with a message naming the port, the dimension and its bounds.
 */
static int64_t port_dims(const struct npr_port *p, bool out, uint32_t rank,
			 const __s64 *dims, struct npr_shape *shape)
{
	const char *what = out ? "output" : "input";
	char buf[128];
	int64_t numel;
	size_t bytes;
	int i;

	if (rank != (uint32_t)p->shape.rank)
		return npr_err(-EINVAL, "%s %s has rank %d, not %u", what,
			       p->name, p->shape.rank, rank);
	shape->rank = p->shape.rank;
	for (i = 0; i < NPR_MAX_RANK; i++) {
		int64_t d = dims[i];

		if (i >= p->shape.rank) {
			if (d)
				return npr_err(-EINVAL, "%s %s: dims past the rank must be 0",
					       what, p->name);
			continue;
		}
		if (p->shape.d[i] >= 0 && d != p->shape.d[i])
			return npr_err(-EINVAL, "%s %s has shape %s (dim %d is %lld, not %lld)",
				       what, p->name,
				       npr_shape_str(&p->shape, buf, sizeof(buf)),
				       i, (long long)p->shape.d[i],
				       (long long)d);
		if (p->shape.d[i] < 0 &&
		    (d < p->lo[i] || (p->hi[i] >= 0 && d > p->hi[i]) ||
		     d > (1LL << 31))) {
			char hi[32] = "";

			if (p->hi[i] >= 0)
				snprintf(hi, sizeof(hi), "%lld",
					 (long long)p->hi[i]);
			return npr_err(-EINVAL, "%s %s: dimension %d is %lld, outside its bounds %lld..%s%s",
				       what, p->name, i, (long long)d,
				       (long long)p->lo[i], hi,
				       p->hi[i] < 0 ? " (no upper bound but 2^31)" : "");
		}
		shape->d[i] = d;
	}
	numel = npr_shape_numel(shape);
	bytes = npr_tensor_bytes(p->type, numel);
	if (numel < 0 || bytes > ((size_t)1 << 40))
		return npr_err(-EFBIG, "%s %s: shape %s has too many elements",
			       what, p->name,
			       npr_shape_str(shape, buf, sizeof(buf)));
	return (int64_t)bytes;
}

/* ---- profiles ------------------------------------------------------------ */

/*
 * Node @i's record: operations only (no Parameter, Const or Result);
 * nodes that compile removed are "optimized out" with no time.
 */
static bool prof_listed(const struct npr_graph *g, int i)
{
	const struct npr_node *n = &g->nodes[i];

	return !(n->op->flags & (NPR_OP_SOURCE | NPR_OP_SINK));
}

/**
 * npr_request_profile_ioctl() - NPR_IOCTL_PROFILE
 * @dev: the device.
 * @arg: struct npr_profile, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_request_profile_ioctl(struct npr_device *dev, void *arg)
{
	struct npr_profile *a = arg;
	struct npr_profile_rec *r = (void *)(uintptr_t)a->recs;
	const struct npr_graph *g;
	struct npr_request *rq;
	uint32_t n = 0, k = 0;
	int err, i;

	err = npr_check_flags(a->flags, 0);
	if (err)
		return err;
	rq = request_idle(dev, a->req, &err);
	if (!rq)
		return err;
	if (!rq->prof)
		return npr_err(-ENODATA, "ENABLE_PROFILING was off when this model was compiled");
	g = rq->ex->g;
	for (i = 0; i < g->nnodes; i++)
		n += prof_listed(g, i);
	if (!a->recs || a->count < n) {
		uint32_t room = a->recs ? a->count : 0;

		a->count = n;
		return npr_err(-EMSGSIZE, "%u profile records, room for %u",
			       n, room);
	}
	for (i = 0; i < g->nnodes; i++) {
		const struct npr_node *nd = &g->nodes[i];
		const struct npr_prof *p = &rq->prof[i];
		struct npr_profile_rec *o = &r[k];

		if (!prof_listed(g, i))
			continue;
		memset(o, 0, sizeof(*o));
		snprintf(o->name, sizeof(o->name), "%s", nd->name);
		snprintf(o->type, sizeof(o->type), "%s", nd->type);
		if (nd->dead || p->fused) {
			o->status = NPR_PROF_OPTIMIZED_OUT;
		} else if (p->kernel) {
			o->status = NPR_PROF_EXECUTED;
			snprintf(o->kernel, sizeof(o->kernel), "%s", p->kernel);
			o->real_ns = p->ns;
		} else {
			o->status = NPR_PROF_NOT_RUN;
		}
		k++;
	}
	a->count = k;
	return 0;
}

/* ---- buffer objects (remote tensors) ------------------------------------ */

/**
 * npr_bo_create_ioctl() - NPR_IOCTL_BO_CREATE
 * @dev: the device.
 * @arg: struct npr_bo_create, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_bo_create_ioctl(struct npr_device *dev, void *arg)
{
	struct npr_bo_create *a = arg;
	struct npr_bo *bo;
	int err;

	err = npr_check_args(a->flags, 0, a->reserved);
	if (err)
		return err;
	if (!a->bytes || a->bytes > (1ULL << 40))
		return npr_err(-ERANGE, "BO of %llu bytes: 1 .. 2^40",
			       (unsigned long long)a->bytes);
	bo = calloc(1, sizeof(*bo));
	if (!bo)
		return -ENOMEM;
	bo->refs = 1;
	bo->bytes = a->bytes;
	bo->dev = dev;
	if (npr_backend_has_bo_alloc(dev)) {
		/* the device's own memory, bound to it as it is */
		bo->memfd = -1;
		err = npr_backend_bo_alloc(dev, a->bytes, &bo->addr);
		if (err) {
			free(bo);
			return err;
		}
		goto handle;
	}
	bo->memfd = memfd_create("npuring-bo", MFD_CLOEXEC);
	if (bo->memfd < 0) {
		err = npr_err(-errno, "memfd_create: %s", strerror(errno));
		free(bo);
		return err;
	}
	if (ftruncate(bo->memfd, (off_t)a->bytes)) {
		err = npr_err(-errno, "BO of %llu bytes: %s",
			      (unsigned long long)a->bytes, strerror(errno));
		goto fail;
	}
	bo->addr = mmap(NULL, a->bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
			bo->memfd, 0);
	if (bo->addr == MAP_FAILED) {
		err = npr_err(errno == ENOMEM ? -ENOMEM : -errno,
			      "BO of %llu bytes: mmap: %s",
			      (unsigned long long)a->bytes, strerror(errno));
		goto fail;
	}
handle:
	pthread_mutex_lock(&dev->lock);
	err = npr_handle_alloc(dev, bo, NPR_HANDLE_BO, &a->handle);
	if (err)
		npr_bo_put(bo);
	pthread_mutex_unlock(&dev->lock);
	return err;
fail:
	close(bo->memfd);
	free(bo);
	return err;
}

/**
 * npr_bo_info_ioctl() - NPR_IOCTL_BO_INFO
 * @dev: the device.
 * @arg: struct npr_bo_info, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_bo_info_ioctl(struct npr_device *dev, void *arg)
{
	struct npr_bo_info *a = arg;
	struct npr_bo *bo;
	int err;

	err = npr_check_args(a->flags, NPR_BO_INFO_FD, a->reserved);
	if (err)
		return err;
	pthread_mutex_lock(&dev->lock);
	bo = npr_handle_get_locked(dev, a->handle, NPR_HANDLE_BO, &err);
	if (bo) {
		a->bytes = bo->bytes;
		a->addr = (uintptr_t)bo->addr;
		a->bound = bo->bound;
		a->fd = -1;
		if ((a->flags & NPR_BO_INFO_FD) && bo->memfd < 0) {
			err = npr_err(-EOPNOTSUPP, "BO 0x%08x is memory of the %s device's driver, which has no file descriptor",
				      a->handle, dev->info.name);
		} else if (a->flags & NPR_BO_INFO_FD) {
			a->fd = fcntl(bo->memfd, F_DUPFD_CLOEXEC, 3);
			if (a->fd < 0)
				err = npr_err(-errno, "dup: %s", strerror(errno));
		}
	}
	pthread_mutex_unlock(&dev->lock);
	return err;
}

/**
 * npr_bo_bind_ioctl() - NPR_IOCTL_BO_BIND
 * @dev: the device.
 * @arg: struct npr_bo_bind, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_bo_bind_ioctl(struct npr_device *dev, void *arg)
{
	struct npr_bo_bind *a = arg;
	bool out = a->flags & NPR_PORT_OUTPUT;
	struct npr_request *rq;
	struct npr_port *p;
	struct npr_bo *bo;
	struct npr_shape shape;
	int64_t stride, bytes;
	int err, i, cnt;

	err = npr_check_args(a->flags, NPR_PORT_OUTPUT, a->reserved);
	if (err)
		return err;
	pthread_mutex_lock(&dev->lock);
	rq = npr_handle_get_locked(dev, a->req, NPR_HANDLE_REQUEST, &err);
	if (rq && rq->busy) {
		err = npr_err(-EBUSY, "request 0x%08x has a job in flight", a->req);
		goto out;
	}
	if (!rq)
		goto out;
	bo = npr_handle_get_locked(dev, a->bo, NPR_HANDLE_BO, &err);
	if (!bo)
		goto out;
	cnt = out ? npr_exec_user_outputs(rq->ex) : npr_exec_user_inputs(rq->ex);
	if (a->index >= (uint32_t)cnt) {
		err = npr_err(-EINVAL, "%s index %u out of range (%d)",
			      out ? "output" : "input", a->index, cnt);
		goto out;
	}
	p = out ? &rq->ex->out[a->index] : &rq->ex->in[a->index];
	if (out && !npr_shape_static(&p->shape)) {
		err = npr_err(-EOPNOTSUPP, "output %s depends on input values or dynamic input dimensions: its buffer is the request's, read it with GET_TENSOR",
			      p->name);
		goto out;
	}
	if (a->elem_type != p->type) {
		err = npr_err(-EINVAL, "%s %s is %s of rank %d, not %s of rank %u",
			      out ? "output" : "input", p->name,
			      npr_elem_name(p->type), p->shape.rank,
			      npr_elem_name(a->elem_type), a->rank);
		goto out;
	}
	bytes = port_dims(p, out, a->rank, a->dims, &shape);
	if (bytes < 0) {
		err = (int)bytes;
		goto out;
	}
	/* strides: all zero, or exactly the dense ones */
	stride = (int64_t)npr_elem_size(p->type);
	for (i = shape.rank - 1; i >= 0; i--) {
		if (a->strides[i] && a->strides[i] != stride) {
			err = npr_err(-EINVAL, "%s %s: stride %lld of dimension %d is not dense (%lld); the device reads dense tensors",
				      out ? "output" : "input", p->name,
				      (long long)a->strides[i], i,
				      (long long)stride);
			goto out;
		}
		stride *= shape.d[i];
	}
	for (i = shape.rank; i < NPR_MAX_RANK; i++)
		if (a->strides[i]) {
			err = npr_err(-EINVAL, "strides past the rank must be 0");
			goto out;
		}
	if (a->offset % npr_elem_size(p->type)) {
		err = npr_err(-EINVAL, "offset %llu is not a multiple of the element size",
			      (unsigned long long)a->offset);
		goto out;
	}
	if (a->offset > bo->bytes || (size_t)bytes > bo->bytes - a->offset) {
		err = npr_err(-ERANGE, "%s %s needs %zu bytes at offset %llu; the BO has %zu",
			      out ? "output" : "input", p->name, (size_t)bytes,
			      (unsigned long long)a->offset, bo->bytes);
		goto out;
	}
	{
		struct npr_bo **slot = out ? &rq->bo_out[a->index] :
					     &rq->bo_in[a->index];
		struct npr_tensor *t = out ? &rq->out[a->index] :
					     &rq->in[a->index];

		bo->refs++;
		bo->bound++;
		npr_port_unbind(slot);
		*slot = bo;
		t->data = (char *)bo->addr + a->offset;
		t->shape = shape;
		t->nbytes = bytes;
	}
out:
	pthread_mutex_unlock(&dev->lock);
	return err;
}

/**
 * npr_request_create_ioctl() - NPR_IOCTL_REQ_CREATE
 * @dev: the device.
 * @arg: struct npr_req_create, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_request_create_ioctl(struct npr_device *dev, void *arg)
{
	struct npr_req_create *a = arg;
	struct npr_request *rq;
	struct npr_exec *ex;
	int err, i;

	err = npr_check_flags(a->flags, 0);
	if (err)
		return err;
	ex = npr_exec_get(dev, a->exec, &err);
	if (!ex)
		return err;
	rq = calloc(1, sizeof(*rq));
	if (!rq) {
		pthread_mutex_lock(&dev->lock);
		npr_exec_put(ex);
		pthread_mutex_unlock(&dev->lock);
		return -ENOMEM;
	}
	rq->ex = ex;
	rq->in = calloc(ex->nin + 1, sizeof(*rq->in));
	rq->out = calloc(ex->nout + 1, sizeof(*rq->out));
	rq->own_in = calloc(ex->nin + 1, sizeof(void *));
	rq->own_out = calloc(ex->nout + 1, sizeof(void *));
	rq->bo_in = calloc(ex->nin + 1, sizeof(*rq->bo_in));
	rq->bo_out = calloc(ex->nout + 1, sizeof(*rq->bo_out));
	rq->cap_in = calloc(ex->nin + 1, sizeof(*rq->cap_in));
	rq->cap_out = calloc(ex->nout + 1, sizeof(*rq->cap_out));
	err = -ENOMEM;
	if (!rq->in || !rq->out || !rq->own_in || !rq->own_out ||
	    !rq->bo_in || !rq->bo_out || !rq->cap_in || !rq->cap_out)
		goto fail;
	for (i = 0; i < ex->nin + ex->nout; i++) {
		bool out = i >= ex->nin;
		int k = out ? i - ex->nin : i;
		struct npr_port *p = out ? &ex->out[k] : &ex->in[k];
		struct npr_tensor *t = out ? &rq->out[k] : &rq->in[k];
		void **own = out ? &rq->own_out[k] : &rq->own_in[k];

		*own = npr_alloc(p->bytes);
		if (!*own)
			goto fail;
		memset(*own, 0, p->bytes);
		t->type = p->type;
		t->shape = p->shape;
		t->data = *own;
		t->nbytes = p->bytes;
		if (out)
			rq->cap_out[k] = p->bytes;
		else
			rq->cap_in[k] = p->bytes;
	}
	err = store_init(rq);
	if (err)
		goto fail;
	state_reset(rq, -1);
	if (ex->props.profiling) {
		rq->prof = calloc(ex->g->nnodes ? ex->g->nnodes : 1,
				  sizeof(*rq->prof));
		if (!rq->prof)
			goto fail;
	}
	err = npr_backend_request_create(rq);
	if (err)
		goto fail;
	pthread_mutex_lock(&dev->lock);
	err = npr_handle_alloc(dev, rq, NPR_HANDLE_REQUEST, &a->req);
	if (err)
		npr_request_destroy(rq);
	pthread_mutex_unlock(&dev->lock);
	return err;
fail:
	pthread_mutex_lock(&dev->lock);
	npr_request_destroy(rq);
	pthread_mutex_unlock(&dev->lock);
	return err;
}

static int tensor_ioctl(struct npr_device *dev, void *arg, bool set)
{
	struct npr_tensor_arg *a = arg;
	uint32_t known = NPR_PORT_OUTPUT |
			 (set ? NPR_TENSOR_BIND : NPR_TENSOR_MAP);
	struct npr_request *rq;
	struct npr_port *p;
	struct npr_tensor *t;
	struct npr_shape shape;
	bool out = a->flags & NPR_PORT_OUTPUT;
	int64_t bytes;
	int err, i, cnt;

	err = npr_check_flags(a->flags, known);
	if (err)
		return err;
	pthread_mutex_lock(&dev->lock);
	rq = npr_handle_get_locked(dev, a->req, NPR_HANDLE_REQUEST, &err);
	pthread_mutex_unlock(&dev->lock);
	if (!rq)
		return err;
	cnt = out ? npr_exec_user_outputs(rq->ex) : npr_exec_user_inputs(rq->ex);
	if (a->index >= (uint32_t)cnt)
		return npr_err(-EINVAL, "%s index %u out of range (%d)",
			       out ? "output" : "input", a->index, cnt);
	p = out ? &rq->ex->out[a->index] : &rq->ex->in[a->index];
	t = out ? &rq->out[a->index] : &rq->in[a->index];
	if (!set) {
		/* the request's shape: a dynamic output's last one */
		if (out && !npr_shape_static(&t->shape))
			return npr_err(-ENODATA, "output %s depends on input values and has no shape before the first inference",
				       p->name);
		/* a dynamic input before its first SET_TENSOR: -1 dims */
		a->elem_type = p->type;
		a->rank = t->shape.rank;
		for (i = 0; i < NPR_MAX_RANK; i++)
			a->dims[i] = i < t->shape.rank ? t->shape.d[i] : 0;
		if (a->flags & NPR_TENSOR_MAP) {
			a->data = (uintptr_t)t->data;
			a->bytes = t->nbytes;
			return 0;
		}
		if ((!a->data && t->nbytes) || a->bytes < t->nbytes) {
			err = npr_err(-EMSGSIZE, "%s %s needs %zu bytes, buffer has %llu",
				      out ? "output" : "input", p->name,
				      t->nbytes, (unsigned long long)a->bytes);
			a->bytes = t->nbytes;
			return err;
		}
		if (t->nbytes)
			memcpy((void *)(uintptr_t)a->data, t->data, t->nbytes);
		a->bytes = t->nbytes;
		return 0;
	}
	if (out && !npr_shape_static(&p->shape))
		return npr_err(-EOPNOTSUPP, "output %s depends on input values or dynamic input dimensions: its buffer is the request's, read it with GET_TENSOR",
			       p->name);
	if (a->elem_type != p->type)
		return npr_err(-EINVAL, "%s %s is %s, not %s",
			       out ? "output" : "input", p->name,
			       npr_elem_name(p->type),
			       npr_elem_name(a->elem_type));
	bytes = port_dims(p, out, a->rank, a->dims, &shape);
	if (bytes < 0)
		return (int)bytes;
	if ((!a->data && bytes) || a->bytes != (uint64_t)bytes)
		return npr_err(-EINVAL, "%s %s needs exactly %lld bytes, got %llu",
			       out ? "output" : "input", p->name,
			       (long long)bytes,
			       (unsigned long long)a->bytes);
	pthread_mutex_lock(&dev->lock);
	npr_port_unbind(out ? &rq->bo_out[a->index] : &rq->bo_in[a->index]);
	pthread_mutex_unlock(&dev->lock);
	if (a->flags & NPR_TENSOR_BIND) {
		t->data = (void *)(uintptr_t)a->data;
	} else {
		void **own = out ? &rq->own_out[a->index] :
				   &rq->own_in[a->index];

		/* a dynamic input's own buffer grows and is kept */
		if (!out && (size_t)bytes > rq->cap_in[a->index]) {
			char what[96];
			void *np;

			snprintf(what, sizeof(what), "input %u (%s)",
				 a->index, p->name);
			err = npr_request_grow(rq, rq->cap_in[a->index], bytes,
					       what);
			if (err)
				return err;
			np = npr_alloc(bytes);
			if (!np)
				return -ENOMEM;
			free(*own);
			*own = np;
			rq->cap_in[a->index] = bytes;
		}
		t->data = *own;
		if (bytes)
			memcpy(t->data, (void *)(uintptr_t)a->data, bytes);
	}
	t->shape = shape;
	t->nbytes = bytes;
	return 0;
}

/**
 * npr_request_set_tensor_ioctl() - NPR_IOCTL_SET_TENSOR
 * @dev: the device.
 * @arg: struct npr_tensor_arg, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_request_set_tensor_ioctl(struct npr_device *dev, void *arg)
{
	return tensor_ioctl(dev, arg, true);
}

/**
 * npr_request_get_tensor_ioctl() - NPR_IOCTL_GET_TENSOR
 * @dev: the device.
 * @arg: struct npr_tensor_arg, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_request_get_tensor_ioctl(struct npr_device *dev, void *arg)
{
	return tensor_ioctl(dev, arg, false);
}

/**
 * npr_request_infer_ioctl() - NPR_IOCTL_INFER
 * @dev: the device.
 * @arg: struct npr_infer, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_request_infer_ioctl(struct npr_device *dev, void *arg)
{
	struct npr_infer *a = arg;
	struct npr_request *rq;
	uint32_t timeout_ms;
	int err;

	err = npr_check_args(a->flags, 0, a->reserved);
	if (err)
		return err;
	pthread_mutex_lock(&dev->lock);
	rq = npr_handle_get_locked(dev, a->req, NPR_HANDLE_REQUEST, &err);
	pthread_mutex_unlock(&dev->lock);
	if (!rq)
		return err;
	/* fixed at compile time: no lock needed */
	timeout_ms = rq->ex->props.infer_timeout_ms;
	a->started_ns = npr_now_ns();
	err = npr_request_infer(rq, timeout_ms ? a->started_ns +
				timeout_ms * 1000000ull : 0);
	a->finished_ns = npr_now_ns();
	if (err == -ETIME) {
		char why[256];

		/* npr_err() writes the buffer it would read */
		snprintf(why, sizeof(why), "%s", npr_last_error());
		npr_err(err, "the inference took longer than NPR_INFER_TIMEOUT_MS (%u ms): %s",
			timeout_ms, why);
	}
	return err;
}

/* ---- running requests, and ring jobs (lib/ring/ring.c) --------------------- */

/* -EINVAL when an input of a dynamic shape has not been given one. */
static int infer_ready(const struct npr_request *rq)
{
	const struct npr_exec *ex = rq->ex;
	int i;

	for (i = 0; ex->dyn_inputs && i < ex->nin; i++) {
		char b[128];

		if (!npr_shape_static(&rq->in[i].shape))
			return npr_err(-EINVAL, "input %s has the dynamic shape %s: give its tensor with SET_TENSOR (or BO_BIND) before INFER",
				       ex->in[i].name,
				       npr_shape_str(&rq->in[i].shape, b,
						     sizeof(b)));
	}
	return 0;
}

/**
 * npr_request_infer() - run a request once: the backend, then the
 * variables of a stateful model keep what its Assign ops computed
 * @rq: the request (not running elsewhere).
 * @deadline_ns: CLOCK_MONOTONIC time by which it must end, 0 for none.
 *
 * Past @deadline_ns the result is discarded: the backend may stop early
 * (the cpu backend does, at a node boundary; the npu backend stops
 * waiting for the device, which keeps the request busy until it is
 * done), and an inference that
 * succeeded too late fails all the same; either way the variables are
 * not committed and the outputs are left as they are (unspecified).
 *
 * Return: the backend's result, -ETIME, or -EINVAL when an input of a
 * dynamic shape has not been given one (SET_TENSOR, BO_BIND).
 */
int npr_request_infer(struct npr_request *rq, uint64_t deadline_ns)
{
	int err = infer_ready(rq);

	if (err)
		return err;
	rq->deadline_ns = deadline_ns;
	err = npr_backend_infer(rq);
	rq->deadline_ns = 0;
	return npr_request_infer_end(rq, err, deadline_ns, npr_now_ns());
}

/**
 * npr_request_infer_async() - start a request's inference on a backend
 * with infer_async, for a ring job
 * @rq: the request (held by the job).
 * @done: what the backend calls when the inference ended; its handler
 *        finishes with npr_request_infer_end().
 *
 * Return: 0 when it started (@done will be called), else -errno as
 * npr_request_infer().
 */
int npr_request_infer_async(struct npr_request *rq,
			    const struct npr_infer_done *done)
{
	int err = infer_ready(rq);

	return err ? err : npr_backend_infer_async(rq, done);
}

/**
 * npr_request_infer_end() - what follows an inference: its deadline, then
 * the variables of a stateful model keep what its Assign ops computed
 * @rq: the request.
 * @err: the backend's result.
 * @deadline_ns: the inference's deadline (CLOCK_MONOTONIC), 0 for none.
 * @end: when it ended.
 *
 * Past @deadline_ns the result is discarded: the variables are not
 * committed and the outputs are left as they are (unspecified).
 *
 * Return: @err, -ETIME, or state_commit()'s error.
 */
int npr_request_infer_end(struct npr_request *rq, int err,
			  uint64_t deadline_ns, uint64_t end)
{
	if (!err && deadline_ns && end > deadline_ns)
		err = npr_err(-ETIME, "it ended %llu us past its deadline; its result is discarded",
			      (unsigned long long)(end - deadline_ns) / 1000);
	if (!err)
		err = state_commit(rq);
	return err;
}

/**
 * npr_request_acquire() - mark a request busy for a ring job
 * @dev: the device.
 * @h: the request handle.
 * @out: Out. The request, NULL on failure.
 *
 * Context: takes dev->lock.  DESTROY, PROFILE, BO_BIND, the variable
 * commands and other jobs refuse the request with -EBUSY until
 * npr_request_release().
 *
 * Return: 0, -ENOENT, -EBADF, or -EBUSY.
 */
int npr_request_acquire(struct npr_device *dev, uint32_t h,
			struct npr_request **out)
{
	struct npr_request *rq;
	int err = 0;

	pthread_mutex_lock(&dev->lock);
	rq = npr_handle_get_locked(dev, h, NPR_HANDLE_REQUEST, &err);
	if (rq && rq->busy) {
		err = npr_err(-EBUSY, "request 0x%08x already has a job in flight",
			      h);
		rq = NULL;
	}
	if (rq)
		rq->busy = 1;
	pthread_mutex_unlock(&dev->lock);
	*out = rq;
	return rq ? 0 : err;
}

/**
 * npr_request_hold() - one more job of the chain that already holds @rq
 * @dev: the device.
 * @rq: a request npr_request_acquire() marked busy.
 *
 * Context: takes dev->lock.
 */
void npr_request_hold(struct npr_device *dev, struct npr_request *rq)
{
	pthread_mutex_lock(&dev->lock);
	rq->busy++;
	pthread_mutex_unlock(&dev->lock);
}

/**
 * npr_request_release() - a job that held @rq is done with it
 * @dev: the device.
 * @rq: the request.
 *
 * Context: takes dev->lock.
 */
void npr_request_release(struct npr_device *dev, struct npr_request *rq)
{
	pthread_mutex_lock(&dev->lock);
	rq->busy--;
	pthread_mutex_unlock(&dev->lock);
}
