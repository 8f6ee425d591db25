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
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

#include "backend.h"
#include "object.h"

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
 */
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
 * @bo: the BO (dev->lock held), or NULL; unmapped and closed at the last.
 */
void npr_bo_put(struct npr_bo *bo)
{
	if (!bo || --bo->refs)
		return;
	munmap(bo->addr, bo->bytes);
	close(bo->memfd);
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
	free(rq->cap_out);
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
