/* SPDX-License-Identifier: MIT */
/*
 * The backend interface: what a backend implements (struct
 * npr_backend_ops), the registry of backends by device name, and one
 * wrapper per member.  lib/ calls a backend only through the wrappers,
 * which apply the default of an optional member the backend leaves NULL.
 */
#ifndef NPR_BACKEND_H
#define NPR_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"

struct npr_device;
struct npr_exec;
struct npr_graph;
struct npr_props;
struct npr_request;
struct npr_prepared;

/*
 * Capabilities a backend declares in npr_backend_ops.caps, asked with
 * npr_backend_has() instead of testing which backend a device runs.
 */
enum npr_backend_cap {
	/* infer is cheap enough to run inline on the submitting thread
	 * (the ring runs INFER jobs there and starts two workers) */
	NPR_BACKEND_CAP_INLINE_INFER	= 1u << 0,
	/* runs graphs whose shapes depend on input values or on dynamic
	 * input dimensions (infers them per inference and sizes outputs
	 * with npr_request_out_shape()) */
	NPR_BACKEND_CAP_DYNAMIC_SHAPES	= 1u << 1,
	/* has the NPU plugin's properties (NPR_PARAM_NPU_*) */
	NPR_BACKEND_CAP_NPU_PARAMS	= 1u << 2,
	/* runs one stream: NUM_STREAMS reads 1 and is read-only */
	NPR_BACKEND_CAP_ONE_STREAM	= 1u << 3,
	/* compiles the model as written: compile finds in ex->src the
	 * model's graph with its own element types, nothing lowered or
	 * folded (npr_compile_as_written()) */
	NPR_BACKEND_CAP_AS_WRITTEN	= 1u << 4,
	/* computes in f16: INFERENCE_PRECISION_HINT defaults to f16 and
	 * takes f16 or f32 (else only f32) */
	NPR_BACKEND_CAP_F16		= 1u << 5,
	/* runs the low-precision ops of lib/ops/quant.h: compile applies
	 * lib/passes/lowp.c to its graphs */
	NPR_BACKEND_CAP_INT8		= 1u << 6,
	/* without dynamic shapes, compiles a stateful model whose variables
	 * grow (a decoder's KV cache) into static graphs of its own: COMPILE
	 * lets its dynamic input dimensions through */
	NPR_BACKEND_CAP_STATIC_LM	= 1u << 7,
};

/**
 * struct npr_infer_done - how an asynchronous inference reports its end
 * @fn: called once with @arg, the inference's result (0 or -errno) and
 *      the CLOCK_MONOTONIC times it started and finished on the device.
 * @arg: the caller's.
 */
struct npr_infer_done {
	void (*fn)(void *arg, int res, uint64_t started_ns,
		   uint64_t finished_ns);
	void *arg;
};

/**
 * struct npr_backend_ops - what a backend implements
 * @api_version: NPR_BACKEND_API_VERSION the backend was written against.
 * @name: backend name, also the device name prefix ("cpu").
 * @caps: enum npr_backend_cap bits.
 * @probe: fill dev->info for device @index; -ENODEV if there is none.
 * @compile: build the backend's executable form of ex->g (already lowered,
 *           shape-inferred and folded); store it in ex->priv.  With
 *           NPR_BACKEND_CAP_AS_WRITTEN, ex->src is the model as written
 *           when the compile starts from a model (NULL for an import),
 *           for the time of the compile only.
 * @exec_destroy: free ex->priv.  Optional.
 * @request_create: per-request state in rq->priv (buffers, the recorded
 *                  work list).  Optional.
 * @request_destroy: free rq->priv.  Optional.
 * @infer: run one inference: read rq->in[] and write rq->out[] (both in
 *         the ports' external element types).  Return 0 or -errno with
 *         npr_err() set.  rq->deadline_ns (0: none) is when the caller
 *         gives up: past it the backend may stop and return -ETIME.
 * @infer_async: start one inference and return without waiting for it
 *               (the ring's INFER jobs use it, so that a job in flight
 *               holds no thread of the core).  Return 0 once the device
 *               owns the inference: then @done->fn is called exactly
 *               once, later, on a thread of the backend, with the result
 *               @infer would have returned (npr_err() set on that thread
 *               when it is < 0) and the CLOCK_MONOTONIC times the
 *               inference started and finished; or -errno with npr_err()
 *               set when nothing started (@done is not called).  While it
 *               runs the core may set rq->cancel: it has given up on the
 *               result (CANCEL, a deadline), and the backend need not
 *               write rq->out[]; it still calls @done when the device has
 *               let go of the request's memory.  Optional (absent: the
 *               ring runs @infer on a worker thread).
 * @query: which nodes of a compiled graph the device runs.  Optional
 *         (absent: every node with a reference kernel).
 * @release: free what probe put in dev->priv besides the memory itself
 *           (driver contexts), after every object of the device is gone;
 *           also called when probe fails.  Optional.
 * @param: the backend's value of a read-only integer property under @p
 *         (OPTIMAL_NUMBER_OF_INFER_REQUESTS of an NPU), or -ENOENT for
 *         the generic one.  Optional.
 * @prepared: the constants compile prepared (packed weights), for the
 *            blob; *out is malloc'd, the buffers stay the exec's.
 *            Optional (absent: none).
 * @held: whether the backend holds constant @value of ex->g in its
 *        prepared constants (packed weights it can unpack), so that a
 *        blob need not carry its bytes; compile may then free them (data
 *        NULL), and import gives it none.  Optional (absent: it holds
 *        none).
 * @param_bytes: a backend-specific string (or, for a list property,
 *               NUL-separated strings ending in an empty one) in @buf, its
 *               length with the last NUL in *@len (the PCI address of an
 *               NPU); -ENOENT if the backend has none.  Optional.
 * @native_export: the driver's compiled form of ex, stored in exported
 *                 blobs and the model cache after the graph; import hands
 *                 it back in ex->native and compile uses it instead of
 *                 compiling.  Optional (absent: blobs have no native
 *                 section).
 * @bo_alloc: the memory of a buffer object of @bytes (BO_CREATE),
 *            zero-filled, page-aligned, that the device reads and writes
 *            as it is (an NPU's driver allocation), in *@addr.  Optional
 *            (absent: shared memory of the process, a memfd).
 * @bo_free: free what bo_alloc gave.  With bo_alloc.
 * @count: how many devices the backend has (probe's @index runs below
 *         it), finding its driver first if no device was opened yet; 0
 *         or -errno with npr_err() set when there is none.  Optional
 *         (absent: one).
 *
 * Arguments are validated by lib/ before any of these is called.  lib/
 * calls them only through the npr_backend_*() wrappers of lib/backend.c,
 * which apply the default of an optional member left NULL.
 */
struct npr_backend_ops {
	unsigned int api_version;
	const char *name;
	unsigned int caps;
	int (*probe)(struct npr_device *dev, int index);
	int (*compile)(struct npr_exec *ex);
	void (*exec_destroy)(struct npr_exec *ex);
	int (*request_create)(struct npr_request *rq);
	void (*request_destroy)(struct npr_request *rq);
	int (*infer)(struct npr_request *rq);
	int (*infer_async)(struct npr_request *rq,
			   const struct npr_infer_done *done);
	int (*query)(struct npr_device *dev, const struct npr_graph *g,
		     bool *supported);
	void (*release)(struct npr_device *dev);
	int (*param)(const struct npr_device *dev, const struct npr_props *p,
		     uint32_t id, int64_t *value);
	int (*prepared)(const struct npr_exec *ex, struct npr_prepared **out);
	bool (*held)(const struct npr_exec *ex, int value);
	int (*param_bytes)(const struct npr_device *dev, uint32_t id,
			   char *buf, size_t *len);
	int (*native_export)(const struct npr_exec *ex, void **out,
			     size_t *len);
	int (*count)(void);
	int (*bo_alloc)(struct npr_device *dev, size_t bytes, void **addr);
	void (*bo_free)(struct npr_device *dev, void *addr);
};

/**
 * struct npr_prepared - a backend's prepared constants, opaque to lib/
 * @layout: what the bytes mean, as the backend names it; a backend refuses
 *          a layout other than its own with -EPROTONOSUPPORT.
 * @n: entries in @buf.
 * @buf: per buffer the node it belongs to, its index among that node's
 *       buffers, the bytes (64-byte aligned) and their size.
 *
 * Export writes them into the blob; import hands them to compile in
 * ex->prep, pointing into the blob's memory (ex->g->weights), which lives
 * as long as the exec.
 */
struct npr_prepared {
	char layout[64];
	int n;
	struct npr_prep_buf {
		int node, index;
		const void *data;
		uint64_t bytes;
	} buf[];
};

#define NPR_BACKEND_API_VERSION	1

extern const struct npr_backend_ops npr_cpu_backend_ops;
extern const struct npr_backend_ops npr_npu_backend_ops;
extern const struct npr_backend_ops npr_null_backend_ops;

const struct npr_backend_ops *npr_backend_find(const char *name, int *index);
npr_evaluator_fn npr_backend_evaluator(void);
bool npr_backend_has_kernel(const struct npr_op_def *op);
const char *npr_backend_name(const struct npr_device *dev);
int npr_backend_device_name(const struct npr_backend_ops *ops, int index,
			    char *buf, size_t len);
bool npr_backend_has(const struct npr_device *dev, unsigned int cap);

int npr_backend_probe(struct npr_device *dev, int index);
void npr_backend_release(struct npr_device *dev);
int npr_backend_compile(struct npr_exec *ex);
void npr_backend_exec_destroy(struct npr_exec *ex);
int npr_backend_request_create(struct npr_request *rq);
void npr_backend_request_destroy(struct npr_request *rq);
int npr_backend_infer(struct npr_request *rq);
bool npr_backend_has_infer_async(const struct npr_device *dev);
int npr_backend_infer_async(struct npr_request *rq,
			    const struct npr_infer_done *done);
int npr_backend_query(struct npr_device *dev, const struct npr_graph *g,
		      bool *supported);
int npr_backend_param(const struct npr_device *dev,
		      const struct npr_props *p, uint32_t id, int64_t *value);
int npr_backend_param_bytes(const struct npr_device *dev, uint32_t id,
			    char *buf, size_t *len);
int npr_backend_prepared(const struct npr_exec *ex,
			 struct npr_prepared **out);
bool npr_backend_holds_constants(const struct npr_device *dev);
bool npr_backend_held(const struct npr_exec *ex, int value);
bool npr_backend_has_native(const struct npr_device *dev);
bool npr_backend_has_bo_alloc(const struct npr_device *dev);
int npr_backend_bo_alloc(struct npr_device *dev, size_t bytes, void **addr);
void npr_backend_bo_free(struct npr_device *dev, void *addr);
int npr_backend_native_export(const struct npr_exec *ex, void **out,
			      size_t *len);

#endif /* NPR_BACKEND_H */
