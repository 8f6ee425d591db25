// SPDX-License-Identifier: MIT
/*
 * Backends: the registry (device names map to backend ops tables) and one
 * wrapper per member of struct npr_backend_ops.  This is the only file of
 * lib/ that calls through a backend's ops table or names a backend; an
 * optional member a backend leaves NULL gets its default here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "npuring.h"
#include "object.h"
#include "ref/kernels/registry.h"

static const struct npr_backend_ops *const backends[] = {
	&npr_cpu_backend_ops,
	&npr_npu_backend_ops,
	&npr_null_backend_ops,
};

/**
 * npr_backend_find() - the backend behind a device name
 * @name: "cpu" or "cpu.N".
 * @index: set to N (0 when absent).
 *
 * Return: the backend ops, or NULL when no backend has that name.
 */
const struct npr_backend_ops *npr_backend_find(const char *name, int *index)
{
	size_t i;

	for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		const struct npr_backend_ops *b = backends[i];
		size_t len = strlen(b->name);
		char *end;
		long idx;

		if (strncmp(name, b->name, len))
			continue;
		if (!name[len]) {
			*index = 0;
			return b;
		}
		if (name[len] != '.' || !name[len + 1])
			continue;
		idx = strtol(name + len + 1, &end, 10);
		if (*end || idx < 0 || idx > 255)
			continue;
		*index = (int)idx;
		return b;
	}
	return NULL;
}

/**
 * npr_backend_at() - the name of the library's backend at @index
 * @index: 0, 1, ... in registration order.
 *
 * What a program walks to list the devices (each backend's
 * AVAILABLE_DEVICES), as OpenVINO walks its plugins.
 *
 * Context: any thread.
 * Return: "cpu", "npu", "null" (static), or NULL past the last.
 */
const char *npr_backend_at(unsigned int index)
{
	if (index >= sizeof(backends) / sizeof(backends[0]))
		return NULL;
	return backends[index]->name;
}

/**
 * npr_backend_device_name() - the name of device @index of a backend
 * @ops: the backend.
 * @index: 0, 1, ...
 * @buf: Out. The name: the backend's when it has one device ("npu"),
 *       else "name.index" ("npu.0", "npu.1"), both of which npr_open()
 *       accepts.
 * @len: The size of @buf.
 *
 * Return: 0; -ENODEV past the last device; the count member's -errno.
 */
int npr_backend_device_name(const struct npr_backend_ops *ops, int index,
			    char *buf, size_t len)
{
	int n = ops->count ? ops->count() : 1;

	if (n < 0)
		return n;
	if (index < 0 || index >= n)
		return -ENODEV;
	if (n == 1)
		snprintf(buf, len, "%s", ops->name);
	else
		snprintf(buf, len, "%s.%d", ops->name, index);
	return 0;
}

/**
 * npr_backend_evaluator() - the evaluator constant folding uses
 *
 * Compile folds a node whose inputs are all constant by running a kernel
 * (lib/ops/infer.c); lib/model.c compiles with the CPU backend's reference
 * kernels, whatever device runs the result, so folding gives the same
 * constants everywhere.  Only this registry names the backend.
 *
 * Context: any thread.
 * Return: npr_kernel_find() (ref/kernels/registry.c).
 */
npr_evaluator_fn npr_backend_evaluator(void)
{
	return npr_kernel_find;
}

/**
 * npr_backend_name() - the name of the backend a device runs on
 * @dev: the device.
 *
 * Return: "cpu", "npu" or "null"; static.
 */
const char *npr_backend_name(const struct npr_device *dev)
{
	return dev->ops->name;
}

/**
 * npr_backend_has() - whether a device's backend has a capability
 * @dev: the device.
 * @cap: one or more enum npr_backend_cap bits.
 *
 * Return: true if the backend declares every bit of @cap.
 */
bool npr_backend_has(const struct npr_device *dev, unsigned int cap)
{
	return (dev->ops->caps & cap) == cap;
}

/**
 * npr_backend_probe() - find device @index of the backend and describe it
 * @dev: the device, with dev->ops set; fills dev->info and dev->priv.
 * @index: N of "name.N".
 *
 * Return: 0, or -ENODEV if there is no such device, or -errno.
 */
int npr_backend_probe(struct npr_device *dev, int index)
{
	return dev->ops->probe(dev, index);
}

/**
 * npr_backend_release() - free the backend's driver state of a device
 * @dev: the device, after every object of it is gone, or after a failed
 *       probe that left dev->priv set.  Nothing to do without a release
 *       member; the memory of dev->priv itself stays the caller's to free.
 */
void npr_backend_release(struct npr_device *dev)
{
	if (dev->ops->release)
		dev->ops->release(dev);
}

/**
 * npr_backend_compile() - build the backend's executable form of ex->g
 * @ex: the compiled model (graph lowered, shapes static but for dynamic
 *      input dimensions and what depends on them or on input values,
 *      constants folded; ex->dyn_inputs says whether its inputs have
 *      dynamic dimensions), or an imported one with ex->prep and
 *      ex->native.
 *
 * Return: 0 or -errno with npr_err() set; ex->priv then holds the
 * backend's data, freed by npr_backend_exec_destroy().
 */
int npr_backend_compile(struct npr_exec *ex)
{
	return ex->dev->ops->compile(ex);
}

/**
 * npr_backend_exec_destroy() - free the backend's data of a compiled model
 * @ex: the compiled model; nothing to do when ex->priv is NULL.
 */
void npr_backend_exec_destroy(struct npr_exec *ex)
{
	if (ex->priv && ex->dev->ops->exec_destroy)
		ex->dev->ops->exec_destroy(ex);
}

/**
 * npr_backend_request_create() - the backend's per-request state
 * @rq: the request, its tensors allocated; fills rq->priv.
 *
 * Return: 0 (also without a request_create member) or -errno.
 */
int npr_backend_request_create(struct npr_request *rq)
{
	const struct npr_backend_ops *ops = rq->ex->dev->ops;

	return ops->request_create ? ops->request_create(rq) : 0;
}

/**
 * npr_backend_request_destroy() - free the backend's per-request state
 * @rq: the request; nothing to do when rq->priv is NULL.
 */
void npr_backend_request_destroy(struct npr_request *rq)
{
	const struct npr_backend_ops *ops = rq->ex->dev->ops;

	if (rq->priv && ops->request_destroy)
		ops->request_destroy(rq);
}

/**
 * npr_backend_infer() - run one inference
 * @rq: the request, not running elsewhere.
 *
 * Return: 0, or -errno with npr_err() set (-ECANCELED when rq->cancel
 * stopped it).
 */
int npr_backend_infer(struct npr_request *rq)
{
	return rq->ex->dev->ops->infer(rq);
}

/**
 * npr_backend_has_infer_async() - whether INFER can start without waiting
 * @dev: the device.
 *
 * Return: true when the backend has infer_async.
 */
bool npr_backend_has_infer_async(const struct npr_device *dev)
{
	return dev->ops->infer_async != NULL;
}

/**
 * npr_backend_infer_async() - start one inference, @done called at its end
 * @rq: the request, not running elsewhere.
 * @done: what the backend calls once the inference ended (struct
 *        npr_backend_ops, @infer_async, has the contract).
 *
 * Return: 0 (@done will be called), or -errno with npr_err() set (it will
 * not); -EOPNOTSUPP when the backend has no infer_async.
 */
int npr_backend_infer_async(struct npr_request *rq,
			    const struct npr_infer_done *done)
{
	if (!rq->ex->dev->ops->infer_async)
		return npr_err(-EOPNOTSUPP, "the %s backend has no asynchronous INFER",
			       rq->ex->dev->ops->name);
	return rq->ex->dev->ops->infer_async(rq, done);
}

/**
 * npr_backend_has_kernel() - whether an op has a reference kernel
 * @op: the op definition.
 *
 * What a device without a query member runs, and how query_model judges
 * a layer by its op alone.
 *
 * Return: true when the CPU backend's kernels include one for @op.
 */
bool npr_backend_has_kernel(const struct npr_op_def *op)
{
	return npr_kernel_find(op) != NULL;
}

/**
 * npr_backend_query() - which nodes of a compiled graph the device runs
 * @dev: the device.
 * @g: the compiled graph.
 * @supported: per node of @g, filled.  Without a query member: every node
 *             whose op has a reference kernel.
 *
 * Return: 0 or -errno.
 */
int npr_backend_query(struct npr_device *dev, const struct npr_graph *g,
		      bool *supported)
{
	int i;

	if (dev->ops->query)
		return dev->ops->query(dev, g, supported);
	for (i = 0; i < g->nnodes; i++)
		supported[i] = npr_backend_has_kernel(g->nodes[i].op);
	return 0;
}

/**
 * npr_backend_param() - the backend's value of a read-only integer property
 * @dev: the device.
 * @p: the properties in force (the device's or a compiled model's).
 * @id: enum npr_param_id.
 * @value: Out. The value.
 *
 * Return: 0, or -ENOENT when the backend has no value of its own (also
 * without a param member): the generic one applies.
 */
int npr_backend_param(const struct npr_device *dev,
		      const struct npr_props *p, uint32_t id, int64_t *value)
{
	return dev->ops->param ? dev->ops->param(dev, p, id, value) : -ENOENT;
}

/**
 * npr_backend_param_bytes() - a backend-specific string or list property
 * @dev: the device.
 * @id: enum npr_param_id.
 * @buf: Out. The string, or NUL-separated strings ending in an empty one.
 * @len: In: the size of @buf.  Out: the length with the last NUL.
 *
 * Return: 0, or -ENOENT when the backend has none (also without a
 * param_bytes member).
 */
int npr_backend_param_bytes(const struct npr_device *dev, uint32_t id,
			    char *buf, size_t *len)
{
	if (!dev->ops->param_bytes)
		return -ENOENT;
	return dev->ops->param_bytes(dev, id, buf, len);
}

/**
 * npr_backend_prepared() - the constants compile prepared, for a blob
 * @ex: the compiled model.
 * @out: Out. malloc'd by the backend, freed by the caller; the buffers it
 *       points at stay the exec's.  NULL without a prepared member.
 *
 * Return: 0 or -errno.
 */
int npr_backend_prepared(const struct npr_exec *ex,
			 struct npr_prepared **out)
{
	*out = NULL;
	if (!ex->dev->ops->prepared)
		return 0;
	return ex->dev->ops->prepared(ex, out);
}

/**
 * npr_backend_holds_constants() - whether the backend may hold constants
 * in its prepared form (it has a held member)
 * @dev: the device.
 *
 * Return: true if npr_backend_held() can answer true.
 */
bool npr_backend_holds_constants(const struct npr_device *dev)
{
	return dev->ops->held != NULL;
}

/**
 * npr_backend_held() - whether a constant lives in the prepared constants
 * @ex: the compiled model.
 * @value: a value index of ex->g.
 *
 * Return: true if a blob need not carry the bytes of @value; false
 * without a held member.
 */
bool npr_backend_held(const struct npr_exec *ex, int value)
{
	return ex->dev->ops->held && ex->dev->ops->held(ex, value);
}

/**
 * npr_backend_has_native() - whether blobs of the device carry the
 * driver's own compiled form (it has a native_export member)
 * @dev: the device.
 *
 * Return: true if export writes, and import reads, a native section.
 */
bool npr_backend_has_native(const struct npr_device *dev)
{
	return dev->ops->native_export != NULL;
}

/**
 * npr_backend_native_export() - the driver's compiled form of a model
 * @ex: the compiled model.
 * @out: Out. malloc'd, freed by the caller; NULL without a native_export
 *       member.
 * @len: Out. Its size; 0 without a native_export member.
 *
 * Return: 0 or -errno.
 */
int npr_backend_native_export(const struct npr_exec *ex, void **out,
			      size_t *len)
{
	*out = NULL;
	*len = 0;
	if (!ex->dev->ops->native_export)
		return 0;
	return ex->dev->ops->native_export(ex, out, len);
}

/**
 * npr_backend_has_bo_alloc() - whether the device allocates BO memory
 * itself (it has a bo_alloc member)
 * @dev: the device.
 *
 * Return: true if BO_CREATE takes its memory from npr_backend_bo_alloc()
 * instead of a memfd.
 */
bool npr_backend_has_bo_alloc(const struct npr_device *dev)
{
	return dev->ops->bo_alloc != NULL;
}

/**
 * npr_backend_bo_alloc() - device memory for a buffer object
 * @dev: the device, with a bo_alloc member.
 * @bytes: the size, 1 .. 2^40.
 * @addr: Out. The memory, zero-filled, mapped in this process.
 *
 * Return: 0, or -errno with npr_err() set.
 */
int npr_backend_bo_alloc(struct npr_device *dev, size_t bytes, void **addr)
{
	return dev->ops->bo_alloc(dev, bytes, addr);
}

/**
 * npr_backend_bo_free() - free what npr_backend_bo_alloc() gave
 * @dev: the device, still open (its driver context alive).
 * @addr: the memory.
 */
void npr_backend_bo_free(struct npr_device *dev, void *addr)
{
	dev->ops->bo_free(dev, addr);
}
