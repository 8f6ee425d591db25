/* SPDX-License-Identifier: MIT */
/*
 * Library-internal objects (lib/object.c): devices (one per fd), the
 * handle table, models, compiled models (execs), requests and buffer
 * objects, with their references and lifetimes.
 */
#ifndef NPR_OBJECT_H
#define NPR_OBJECT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "graph/graph.h"
#include "props.h"

struct npr_backend_ops;
struct npr_prepared;
struct npr_ring;

/**
 * struct npr_port - one input or output of a compiled model, as the caller
 * sees it
 * @name: tensor name, or the layer name when the tensor has none.
 * @type: element type the caller reads or writes.
 * @shape: the compiled shape: -1 for an input's dynamic dimension and
 *         what depends on it; for an output whose rank depends on input
 *         values, rank -1 (the request's tensor has the actual one).
 * @value: index of the value in the compiled graph.
 * @bytes: size of one tensor of this port, 0 when @shape is not static.
 * @lo, @hi: an input's bounds per dimension: @lo == @hi == the size of a
 *           static one; @hi -1 for no upper bound.
 */
struct npr_port {
	char *name;
	unsigned int type;
	struct npr_shape shape;
	int value;
	size_t bytes;
	int64_t lo[NPR_MAX_RANK], hi[NPR_MAX_RANK];
};

/**
 * struct npr_model_file - what a model file is on disk, for the cache key
 * @absent: no such file (a derived .bin the model may not need).
 */
struct npr_model_file {
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec;
	bool absent;
};

/**
 * struct npr_model - a loaded model
 * @g: its graph; NULL until first needed for a handle loaded with
 *     NPR_MODEL_LOAD_DEFER (npr_model_read()).
 * @hashed: @hash is the content hash of @g (npr_model_hash()), taken at
 *          the first COMPILE with a CACHE_DIR and kept for the next ones;
 *          whatever changes @g (MAKE_STATEFUL) clears it.
 * @hash: 32 hex digits.
 * @by_file: NPR_MODEL_LOAD_DEFER: the cache key is the identity of the
 *           files (@xml_abs, @fx, @bin_abs, @fb), not @g's contents;
 *           whatever changes @g clears it.
 * @onnx: @xml is an .onnx file.
 * @xml, @bin: the paths as given (@bin NULL: derived from @xml); read
 *             with them.
 * @xml_abs, @bin_abs: the absolute paths (not resolved), for the key.
 * @wpath: the model's weights file, absolute (not resolved): the .bin of
 *         an IR (NULL if it has none), the .onnx itself; NULL for a model
 *         from memory.  A weightless cache entry's hit reads it.
 * @fx, @fb: the files as they were when stat'ed last: at the load, then
 *           just before they are read.
 * @buf: the strings.
 */
struct npr_model {
	struct npr_graph *g;
	bool hashed;
	char hash[33];
	bool by_file, onnx;
	const char *xml, *bin, *xml_abs, *bin_abs;
	char *wpath;	/* the weights file, absolute: .bin, .onnx; or NULL */
	struct npr_model_file fx, fb;
	char buf[];
};

/**
 * struct npr_exec - a compiled model
 * @refs: one for the handle, one per live request.
 * @dev: the device.
 * @g: the compiled graph: lowered to compute types, shapes static (but
 *     what depends on a dynamic input dimension or on input values),
 *     constants folded, dead nodes marked.  Constants the backend holds
 *     in its prepared form (ops->held) may have no data.
 * @src: for a backend that compiles the model as written
 *       (NPR_BACKEND_CAP_AS_WRITTEN), during its compile only: the model's
 *       graph with its own element types and constants, the shapes of @g,
 *       the nodes nothing needs marked dead (npr_compile_as_written()).
 * @nin, @in: inputs.
 * @nout, @out: outputs.
 * @props: properties in force for this compiled model.
 * @from_cache: imported from the model cache (LOADED_FROM_CACHE).
 * @wfile: compiled from a model read from its files: @g->weights is the
 *         model's weights file, which a weightless export refers to.
 * @priv: backend data.
 * @be_exec_bytes: set by the backend's compile: bytes it holds for the
 *                 compiled model (packed weights).
 * @be_req_bytes: set by the backend's compile: the most bytes its
 *                request_create allocates.
 * @exec_bytes, @req_bytes: the totals MODEL_INFO reports
 *                          (npr_exec_budget()).
 * @dyn_inputs: some user input has a dynamic dimension.
 * @plan_misses, @plan_evictions: a backend's plan cache for dynamic
 *                                inputs: plans made, plans dropped
 *                                (NPR_PARAM_NPR_RUNTIME_CACHE_*; atomic).
 */
struct npr_exec {
	int refs;
	struct npr_device *dev;
	struct npr_graph *g;
	struct npr_graph *src;
	int nin, nout;
	struct npr_port *in, *out;
	struct npr_props props;
	bool from_cache;
	bool wfile;
	void *priv;
	struct npr_prepared *prep;	/* from a blob, for compile */
	/* imported: the backend's native section of the blob (native_export) */
	void *native;
	size_t native_len;
	uint64_t be_exec_bytes, be_req_bytes;
	uint64_t exec_bytes, req_bytes;
	bool dyn_inputs;
	uint64_t plan_misses, plan_evictions;
};

/**
 * struct npr_bo - a buffer object: shared memory of the device
 * @refs: one for the handle, one per request port it is bound to.
 * @addr: mapping in this process.
 * @bytes: size.
 * @memfd: the memory's descriptor; -1 for device memory.
 * @bound: request ports it is bound to.
 * @dev: the device, whose backend allocated the memory when @memfd is
 *       -1 (npr_backend_bo_alloc()): a backend binds such a BO to the
 *       device as it is.
 */
struct npr_bo {
	int refs;
	void *addr;
	size_t bytes;
	int memfd;
	int bound;
	struct npr_device *dev;
};

/**
 * struct npr_request - an infer request
 * @ex: the compiled model (referenced).
 * @in, @out: one tensor per port, in the port's external type.  @data
 *            points at @own[i] unless the caller bound memory.
 * @own_in, @own_out: the request's own buffers.
 * @bo_in, @bo_out: per port, the BO bound to it (NPR_IOCTL_BO_BIND), or
 *                  NULL.
 * @prof: per graph node, with ENABLE_PROFILING; else NULL.
 * @cap_in, @cap_out: per port, bytes of @own_in, @own_out (those of
 *                   dynamic shapes grow).
 * @grown: bytes of the buffers sized at run time from the input values
 *         (dynamic outputs, a backend's dynamic values), counted against
 *         NPR_MAX_MODEL_MEMORY_MB by npr_request_grow().
 * @priv: backend data.
 * @busy: ring jobs that hold it (dev->lock).
 * @cancel: set by a ring CANCEL while an INFER job runs: a backend may
 *          stop at a node boundary with -ECANCELED (atomic; cleared when
 *          the job starts).
 * @deadline_ns: while npr_request_infer() runs, the CLOCK_MONOTONIC time
 *               by which the inference must end, 0 for none: a backend
 *               may stop at a node boundary past it with -ETIME.
 * @vs: per variable of the compiled model, the storage of one that grows
 *      (struct npr_variable @append_axis), else unused.
 * @pitch: per input: 0 when @in[i] is dense; else @in[i] is a variable
 *         kept with room to grow: @outer blocks of @in[i].nbytes /
 *         @outer bytes each, @pitch bytes apart.
 */
struct npr_request {
	struct npr_exec *ex;
	struct npr_tensor *in, *out;
	void **own_in, **own_out;
	struct npr_bo **bo_in, **bo_out;
	struct npr_prof *prof;
	void *priv;
	int busy;
	int cancel;
	uint64_t deadline_ns;
	size_t *cap_in, *cap_out;
	uint64_t grown;
	struct npr_var_store *vs;
	struct npr_pitched *pitch;
};

/**
 * struct npr_var_store - a request's copy of a variable that grows
 * @buf: @outer blocks of @cap positions of @row bytes.
 * @len: positions held, along the variable's append axis.
 * @cap: positions reserved.
 * @outer: product of the dimensions before the axis.
 * @row: bytes of one position (the dimensions after the axis).
 */
struct npr_var_store {
	void *buf;
	int64_t len, cap;
	size_t outer, row;
};

/**
 * struct npr_pitched - an input held in blocks with room between them
 * @pitch: bytes from one block's start to the next's; 0: dense.
 * @outer: blocks.
 */
struct npr_pitched {
	size_t pitch, outer;
};

/**
 * struct npr_prof - one node's profile record, kept by the request when
 * its compiled model has ENABLE_PROFILING; the backend fills it in
 * @ns: time of the node in the last inference.
 * @kernel: static name of the kernel that ran, NULL if none.
 * @fused: the node's work was done by another node's kernel.
 */
struct npr_prof {
	uint64_t ns;
	const char *kernel;
	bool fused;
};

/* one entry of the handle table */
struct npr_slot {
	void *obj;
	uint16_t gen;
	uint8_t type;
	int next_free;
};

/**
 * struct npr_device - everything behind one fd
 * @fd: the descriptor the caller holds: an eventfd, which the ring's
 *      fallback path signals.
 * @ops: backend; called only through lib/backend.c.
 * @info: what DEVICE_INFO reports.
 * @lock: protects the handle table and object lifetimes.
 * @props: device-level properties.
 * @slots, @nslots, @cap_slots, @free_slot: handle table.
 * @priv: backend data.
 * @ring: the ring (lib/ring/ring.c), set up once under @lock.
 */
struct npr_device {
	int fd;
	const struct npr_backend_ops *ops;
	struct npr_device_info info;
	pthread_mutex_t lock;
	struct npr_props props;
	struct npr_slot *slots;
	int nslots, cap_slots, free_slot;
	void *priv;
	struct npr_ring *ring;
};

/* handle layout (type tag, generation, table index) */
#define HANDLE_TYPE_SHIFT	28
#define HANDLE_GEN_SHIFT	16
#define HANDLE_GEN_MASK		0xfffu
#define HANDLE_IDX_MASK		0xffffu

/* the handle table; the caller holds dev->lock */
int npr_handle_alloc(struct npr_device *dev, void *obj, int type,
		     uint32_t *out);
void *npr_handle_get_locked(struct npr_device *dev, uint32_t h, int type,
			    int *err);
void npr_handle_free_locked(struct npr_device *dev, uint32_t h);
void npr_object_destroy(int type, void *obj);

void npr_model_destroy(struct npr_model *m);
struct npr_exec *npr_exec_get(struct npr_device *dev, uint32_t h, int *err);
void npr_exec_put(struct npr_exec *ex);
void npr_exec_free(struct npr_exec *ex);
int npr_exec_user_inputs(const struct npr_exec *ex);
int npr_exec_user_outputs(const struct npr_exec *ex);
int npr_exec_budget(struct npr_exec *ex);
void npr_request_destroy(struct npr_request *rq);
void npr_bo_put(struct npr_bo *bo);
void npr_port_unbind(struct npr_bo **slot);

#endif /* NPR_OBJECT_H */
