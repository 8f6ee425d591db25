// SPDX-License-Identifier: MIT
/*
 * The objects behind handles and their lifetimes: the per-device handle
 * table (type tag, generation, index), and references, destruction and
 * the few questions both the model and the request commands ask of
 * models, compiled models (execs), requests and buffer objects.
 *
 * Everything here that touches the handle table or a reference count runs
 * under dev->lock, which the caller holds unless a function says
 * otherwise.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

#include "backend.h"
#include "object.h"
#include "sys.h"

/* ---- handles ------------------------------------------------------------ */

/**
 * npr_handle_alloc() - a new handle for an object
 * @dev: the device (dev->lock held).
 * @obj: the object; the handle table holds it until the handle is freed.
 * @type: NPR_HANDLE_*.
 * @out: Out. The handle.
 *
 * Return: 0, -ENOSPC when the table is full, or -ENOMEM.
 */
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

/**
 * npr_handle_get_locked() - the object a handle names
 * @dev: the device (dev->lock held).
 * @h: the handle.
 * @type: the NPR_HANDLE_* it must be, or 0 for any.
 * @err: Out. Set on failure only.
 *
 * Return: the object, or NULL with *@err -ENOENT (no live object) or
 * -EBADF (another type).
 */
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

/**
 * npr_handle_free_locked() - forget a live handle
 * @dev: the device (dev->lock held).
 * @h: a handle npr_handle_get_locked() just found; its object is the
 *     caller's to destroy.
 */
void npr_handle_free_locked(struct npr_device *dev, uint32_t h)
{
	int idx = (int)(h & HANDLE_IDX_MASK) - 1;

	dev->slots[idx].obj = NULL;
	dev->slots[idx].next_free = dev->free_slot;
	dev->free_slot = idx;
}

/* ---- objects ------------------------------------------------------------ */

/**
 * npr_model_destroy() - free a model no handle names any more
 * @m: the model, or NULL.
 */
void npr_model_destroy(struct npr_model *m)
{
	if (!m)
		return;
	npr_graph_free(m->g);
	free(m->wpath);
	free(m);
}

static void ports_free(struct npr_port *p, int n)
{
	int i;

	for (i = 0; p && i < n; i++)
		free(p[i].name);
	free(p);
}

/**
 * npr_exec_put() - drop a reference to a compiled model
 * @ex: the compiled model (dev->lock held when a handle or a request may
 *      still reference it); freed with the backend's data at the last.
 *
 * At the last, the free memory the allocator keeps goes back to the
 * system (malloc_trim()): a compiled model's constants, plans and its
 * requests' buffers below the allocator's mmap threshold leave holes in
 * its heaps that it would otherwise keep, and a process that loads,
 * runs and destroys many models grew by hundreds of MB with its bytes in
 * use flat.
 */
void npr_exec_put(struct npr_exec *ex)
{
	if (--ex->refs)
		return;
	npr_backend_exec_destroy(ex);
	ports_free(ex->in, ex->nin);
	ports_free(ex->out, ex->nout);
	npr_graph_free(ex->g);
	npr_graph_free(ex->src);
	free(ex->prep);
	free(ex->native);
	free(ex);
	malloc_trim(0);
}

/**
 * npr_exec_get() - a compiled model by handle, with a reference
 * @dev: the device.
 * @h: the exec handle.
 * @err: Out. Set on failure only.
 *
 * Context: takes dev->lock; the caller drops the reference with
 * npr_exec_put() under dev->lock.
 *
 * Return: the compiled model, or NULL with *@err set if @h is not one.
 */
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

/**
 * npr_exec_free() - free a compiled model that no handle names
 * @ex: the compiled model (its only reference), or NULL.
 */
void npr_exec_free(struct npr_exec *ex)
{
	if (ex)
		npr_exec_put(ex);
}

/**
 * npr_exec_user_inputs() - inputs the caller sees
 * @ex: the compiled model.
 *
 * Return: the compiled graph's inputs less the state ports.
 */
int npr_exec_user_inputs(const struct npr_exec *ex)
{
	return ex->nin - ex->g->nstate_in;
}

/**
 * npr_exec_user_outputs() - outputs the caller sees
 * @ex: the compiled model.
 *
 * Return: the compiled graph's outputs less the state ports.
 */
int npr_exec_user_outputs(const struct npr_exec *ex)
{
	return ex->nout - ex->g->nstate_out;
}

/**
 * npr_bo_put() - drop a reference to a buffer object
 * @bo: the BO (dev->lock held), or NULL; unmapped and closed (device
 *      memory: given back to the backend) at the last.
 */
void npr_bo_put(struct npr_bo *bo)
{
	if (!bo || --bo->refs)
		return;
	if (bo->memfd < 0) {
		npr_backend_bo_free(bo->dev, bo->addr);
	} else {
		munmap(bo->addr, bo->bytes);
		close(bo->memfd);
	}
	free(bo);
}

/**
 * npr_port_unbind() - let go of the BO bound to a request port, if any
 * @slot: the port's entry of rq->bo_in or rq->bo_out (dev->lock held);
 *        NULL after.
 */
void npr_port_unbind(struct npr_bo **slot)
{
	if (!*slot)
		return;
	(*slot)->bound--;
	npr_bo_put(*slot);
	*slot = NULL;
}

/**
 * npr_request_destroy() - free a request no handle names any more
 * @rq: the request, with no job in flight (dev->lock held): its BO
 *      bindings, the backend's data, its buffers and its reference to
 *      the compiled model go.
 */
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
	free(rq->cap_in);
	free(rq->cap_out);
	for (i = 0; rq->vs && i < rq->ex->g->nvars; i++)
		free(rq->vs[i].buf);
	free(rq->vs);
	free(rq->pitch);
	free(rq->in);
	free(rq->out);
	npr_exec_put(rq->ex);
	free(rq);
}

/**
 * npr_object_destroy() - drop the handle's hold on an object
 * @type: NPR_HANDLE_* of the handle.
 * @obj: the object (dev->lock held): a model or request is freed, an
 *       exec or BO loses a reference.
 */
void npr_object_destroy(int type, void *obj)
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

/* ---- the memory budget -------------------------------------------------- */

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* calloc(@n + 1, @size), as REQ_CREATE allocates its per-port arrays. */
static uint64_t array_bytes(int n, size_t size)
{
	return npr_alloc_cost((uint64_t)(n + 1) * size);
}

/*
 * The largest tensor of @g and its bodies in *@big (NULL if none): each
 * value with a static shape, computed or constant; -EFBIG for one whose
 * size does not fit in size_t (*@big is then that one).  The owned
 * constants' bytes add to *@owned.
 */
static int largest(const struct npr_graph *g, const struct npr_value **big,
		   uint64_t *big_bytes, uint64_t *owned)
{
	int i, k, err;

	for (i = 0; i < g->nvals; i++) {
		const struct npr_value *v = &g->vals[i];
		int64_t numel = npr_shape_numel(&v->shape);
		uint64_t bytes;

		if (v->owned)
			*owned = add_sat(*owned, npr_alloc_cost(v->nbytes));
		if (!npr_shape_static(&v->shape))
			continue;
		bytes = npr_tensor_bytes(v->type, numel);
		if (numel < 0 || bytes == SIZE_MAX) {
			*big = v;
			*big_bytes = UINT64_MAX;
			return -EFBIG;
		}
		if (bytes > *big_bytes || !*big) {
			*big = v;
			*big_bytes = bytes;
		}
	}
	for (i = 0; i < g->nnodes; i++)
		for (k = 0; k < g->nodes[i].nbodies; k++) {
			err = largest(g->nodes[i].bodies[k].g, big, big_bytes,
				      owned);
			if (err)
				return err;
		}
	return 0;
}

/* The name of value @v of @g for a message. */
static const char *value_name(const struct npr_graph *g,
			      const struct npr_value *v)
{
	if (v->name)
		return v->name;
	if (v->producer >= 0 && v->producer < g->nnodes)
		return g->nodes[v->producer].name;
	return "?";
}

/**
 * npr_exec_budget() - the memory a compiled model needs, against its limit
 * @ex: the compiled model: its graph compiled; after the backend's compile
 *      (which sets @ex->be_exec_bytes and @ex->be_req_bytes) for the
 *      totals, else only its tensors are checked.
 *
 * Sets @ex->exec_bytes (the owned constants and what the backend holds)
 * and @ex->req_bytes (what REQ_CREATE allocates for one request: the
 * request, its per-port arrays and buffers, the profile, the backend's
 * part).  The limit is @ex->props.max_model_mb (NPR_MAX_MODEL_MEMORY_MB,
 * 0: none) against their sum.
 *
 * Return: 0, or -EFBIG with a message naming the largest tensor, its
 * shape and bytes and the limit, when a tensor's size does not fit in
 * size_t, a tensor alone or the sum is over the limit.
 */
int npr_exec_budget(struct npr_exec *ex)
{
	const struct npr_graph *g = ex->g;
	const struct npr_value *big = NULL;
	uint64_t limit = (uint64_t)ex->props.max_model_mb << 20;
	uint64_t big_bytes = 0, owned = 0, req;
	char b1[128];
	int i, err;

	err = largest(g, &big, &big_bytes, &owned);
	if (err)
		return npr_err(-EFBIG, "tensor %s of shape %s: its size does not fit in memory",
			       value_name(g, big),
			       npr_shape_str(&big->shape, b1, sizeof(b1)));
	if (limit && big && big_bytes > limit)
		return npr_err(-EFBIG, "tensor %s of shape %s needs %llu bytes, more than NPR_MAX_MODEL_MEMORY_MB (%u MiB)",
			       value_name(g, big),
			       npr_shape_str(&big->shape, b1, sizeof(b1)),
			       (unsigned long long)big_bytes,
			       ex->props.max_model_mb);
	req = npr_alloc_cost(sizeof(struct npr_request));
	req = add_sat(req, 2 * array_bytes(ex->nin, sizeof(struct npr_tensor)));
	req = add_sat(req, 2 * array_bytes(ex->nout,
					   sizeof(struct npr_tensor)));
	req = add_sat(req, 4 * array_bytes(ex->nin, sizeof(void *)));
	req = add_sat(req, 4 * array_bytes(ex->nout, sizeof(void *)));
	req = add_sat(req, array_bytes(ex->nout, sizeof(size_t)));
	for (i = 0; i < ex->nin; i++)
		req = add_sat(req, npr_alloc_cost(ex->in[i].bytes));
	for (i = 0; i < ex->nout; i++)
		req = add_sat(req, npr_alloc_cost(ex->out[i].bytes));
	if (ex->props.profiling)
		req = add_sat(req, npr_alloc_cost((uint64_t)(g->nnodes ?
							     g->nnodes : 1) *
						  sizeof(struct npr_prof)));
	ex->req_bytes = add_sat(req, ex->be_req_bytes);
	ex->exec_bytes = add_sat(owned, ex->be_exec_bytes);
	if (limit && add_sat(ex->exec_bytes, ex->req_bytes) > limit)
		return npr_err(-EFBIG, "the compiled model needs %llu bytes (%llu its own, %llu per request), more than NPR_MAX_MODEL_MEMORY_MB (%u MiB); its largest tensor is %s of shape %s, %llu bytes",
			       (unsigned long long)add_sat(ex->exec_bytes,
							   ex->req_bytes),
			       (unsigned long long)ex->exec_bytes,
			       (unsigned long long)ex->req_bytes,
			       ex->props.max_model_mb,
			       big ? value_name(g, big) : "-",
			       big ? npr_shape_str(&big->shape, b1,
						   sizeof(b1)) : "-",
			       (unsigned long long)big_bytes);
	return 0;
}
