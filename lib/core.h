/* SPDX-License-Identifier: MIT */
/*
 * Library-internal objects: devices (one per fd), handles, models, execs,
 * requests, and the backend interface.
 */
#ifndef NPR_CORE_H
#define NPR_CORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "graph/graph.h"
#include "backend.h"

struct npr_device;
struct npr_props;
struct npr_exec;
struct npr_prepared;
struct npr_request;


/*
 * Properties that a device holds and a compiled model snapshots; the table
 * in lib/props.c describes each (enum npr_param_id).
 */
struct npr_props {
	uint32_t num_threads;	/* 0: all CPUs the process may use */
	uint32_t log_level;	/* enum npr_log_level */
	uint32_t perf_hint;	/* enum npr_perf_hint */
	uint32_t profiling;
	uint32_t hint_num_requests;	/* 0: no limit */
	uint32_t precision_hint;	/* enum npr_elem_type */
	uint32_t exec_mode;	/* enum npr_exec_mode */
	int32_t num_streams;	/* >= 1, or NPR_NUM_STREAMS_AUTO */
	uint32_t cpu_pinning;
	uint32_t priority;	/* enum npr_priority */
	uint32_t disable_transformations;
	uint32_t exclusive_async;
	uint32_t compile_threads;	/* 0: all CPUs */
	char cache_dir[NPR_PROP_STR_MAX];	/* "" : no cache */
	uint32_t cache_max_mb;	/* 0: no limit */
	uint32_t cache_required;
	/* npu only (NPR_PARAM_NPU_*) */
	int32_t npu_tiles;	/* -1: the compiler chooses */
	uint32_t npu_turbo;
	uint32_t npu_bypass_umd_caching;
	uint32_t npu_defer_weights_load;
	uint32_t npu_dynamic_quantization;
	char npu_compilation_mode[NPR_PROP_STR_MAX];	/* "" : none */
};

/**
 * struct npr_port - one input or output of a compiled model, as the caller
 * sees it
 * @name: tensor name, or the layer name when the tensor has none.
 * @type: element type the caller reads or writes.
 * @shape: static shape; for an output whose shape depends on input
 *         values, rank -1 (the request's tensor has the actual one).
 * @value: index of the value in the compiled graph.
 * @bytes: size of one tensor of this port, 0 for a dynamic output.
 */
struct npr_port {
	char *name;
	unsigned int type;
	struct npr_shape shape;
	int value;
	size_t bytes;
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
	struct npr_model_file fx, fb;
	char buf[];
};

/**
 * struct npr_exec - a compiled model
 * @refs: one for the handle, one per live request.
 * @dev: the device.
 * @g: the compiled graph: lowered to compute types, shapes static,
 *     constants folded, dead nodes marked.  Constants the backend holds
 *     in its prepared form (ops->held) may have no data.
 * @nin, @in: inputs.
 * @nout, @out: outputs.
 * @props: properties in force for this compiled model.
 * @from_cache: imported from the model cache (LOADED_FROM_CACHE).
 * @priv: backend data.
 */
struct npr_exec {
	int refs;
	struct npr_device *dev;
	struct npr_graph *g;
	int nin, nout;
	struct npr_port *in, *out;
	struct npr_props props;
	bool from_cache;
	void *priv;
	struct npr_prepared *prep;	/* from a blob, for compile */
	/* imported: the backend's native section of the blob (native_export) */
	void *native;
	size_t native_len;
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
 * @cap_out: per output, bytes of @own_out (dynamic outputs grow).
 * @priv: backend data.
 */
/**
 * struct npr_bo - a buffer object: shared memory of the device
 * @refs: one for the handle, one per request port it is bound to.
 * @addr: mapping in this process.
 * @bytes: size.
 * @memfd: the memory's descriptor.
 * @bound: request ports it is bound to.
 */
struct npr_bo {
	int refs;
	void *addr;
	size_t bytes;
	int memfd;
	int bound;
};

struct npr_request {
	struct npr_exec *ex;
	struct npr_tensor *in, *out;
	void **own_in, **own_out;
	struct npr_bo **bo_in, **bo_out;
	struct npr_prof *prof;
	void *priv;
	int busy;	/* ring jobs that hold it (dev->lock) */
	int cancel;	/* set by a ring CANCEL while an INFER job runs: a
			 * backend may stop at a node boundary with
			 * -ECANCELED (atomic; cleared when the job starts) */
	size_t *cap_out;
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

struct npr_slot {
	void *obj;
	uint16_t gen;
	uint8_t type;
	int next_free;
};

/**
 * struct npr_device - everything behind one fd
 * @fd: the descriptor the caller holds (an eventfd until the ring lands).
 * @ops: backend.
 * @info: what DEVICE_INFO reports.
 * @lock: protects the handle table and object lifetimes.
 * @props: device-level properties.
 * @slots, @nslots, @free_slot: handle table.
 * @priv: backend data.
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
	struct npr_ring *ring;	/* lib/ring/ring.c, set up once under @lock */
};

/* lib/error.c */
unsigned long npr_err_mark(void);
int npr_err_default(int err, unsigned long mark);
int npr_last_errno(void);

/* lib/passes/compile.c */
int npr_compile_graph(const struct npr_graph *src,
		      const struct npr_shape *shapes, struct npr_graph **out);
int npr_compile_graph_take(struct npr_graph *src,
			   const struct npr_shape *shapes,
			   struct npr_graph **out);

/* lib/props.c; the callers hold dev->lock */
struct npr_exec;
void npr_props_init(struct npr_props *p);
int npr_prop_param(struct npr_device *dev, struct npr_exec *ex,
		   struct npr_param *a, bool set);
int npr_prop_compile_arg(struct npr_device *dev, struct npr_props *p,
			 const struct npr_prop_arg *pa);
int npr_prop_info(struct npr_device *dev, struct npr_exec *ex,
		  struct npr_prop_info *a);

/* lib/store/blob.c */
uint64_t npr_blob_hash(const void *p, size_t n);
int npr_blob_export(const struct npr_exec *ex, void **out, size_t *len);
int npr_blob_check_header(const struct npr_device *dev, const void *buf,
			  size_t len);
int npr_blob_import_mem(struct npr_device *dev, struct npr_blob *mem,
			struct npr_exec **out);
int npr_blob_import(struct npr_device *dev, const void *buf, size_t len,
		    struct npr_exec **out);
int npr_blob_import_compiled(struct npr_device *dev, struct npr_blob *mem,
			     struct npr_exec **out);

/* lib/query.c */
int npr_query_model(struct npr_device *dev, const struct npr_graph *model,
		    bool *supported);

/* lib/store/cache.c */
struct npr_cache_key {
	char lines[2 * 4096 + 1024];	/* what the key is made of, "name=value\n" */
	char name[33];		/* the entry's file name: 32 hex digits */
	char model_name[256];
};
void npr_model_hash(const struct npr_graph *g, char *out);
void npr_cache_model_lines(const struct npr_model *m, char *buf,
			   size_t len);
void npr_cache_key(const struct npr_device *dev, const char *model_lines,
		   int ninputs, const struct npr_shape *shapes,
		   const struct npr_props *p, const char *name,
		   struct npr_cache_key *k);
int npr_cache_get(struct npr_device *dev, const struct npr_cache_key *k,
		  const struct npr_props *p, struct npr_exec **out);
void npr_cache_put(const struct npr_exec *ex, const struct npr_cache_key *k);
int npr_cache_prune(const char *dir, uint64_t max, const char *keep);

/* lib/core.c: free a compiled model that no handle names */
void npr_exec_free(struct npr_exec *ex);

/* lib/core.c and lib/core_req.c, for ring jobs */
int npr_job_compile(struct npr_device *dev, uint32_t model, uint32_t *exec);
int npr_job_model_add(struct npr_device *dev, struct npr_graph *g,
		      uint32_t *model);
int npr_req_acquire(struct npr_device *dev, uint32_t h,
		    struct npr_request **rq);
void npr_req_release(struct npr_device *dev, struct npr_request *rq);
void npr_req_hold(struct npr_device *dev, struct npr_request *rq);
int npr_job_arg_in(unsigned long cmd, const void *uarg, void *karg,
		   uint32_t *usize);
void npr_job_arg_out(unsigned long cmd, void *uarg, const void *karg,
		     uint32_t usize);
int npr_job_run_arg(struct npr_device *dev, struct npr_request *rq,
		    unsigned long cmd, void *karg);
int npr_request_infer(struct npr_request *rq);

/* lib/ring/ring.c */
struct npr_ring;
int npr_ring_setup(struct npr_device *dev, struct npr_ring_setup *a);
int npr_ring_submit(struct npr_device *dev, struct npr_submit *a);
int npr_ring_reap(struct npr_device *dev, struct npr_reap *a);
void npr_ring_destroy(struct npr_device *dev);
int npr_ring_job_error(struct npr_device *dev, uint64_t user_data,
		       char **msg, int32_t *res);

/* aligned allocation for tensors */
void *npr_alloc(size_t bytes);

int npr_cpu_count(void);

/* CLOCK_MONOTONIC in ns */
uint64_t npr_now_ns(void);

/* lib/core_req.c: give dynamic output @i of @rq its shape for this
 * inference, growing its buffer; 0 or -ENOMEM */
int npr_request_out_shape(struct npr_request *rq, int i,
			  const struct npr_shape *s);

/* lib/core.c: user buffers with the -EMSGSIZE contract */
int npr_put_bytes(const void *p, size_t n, uint64_t ptr, uint32_t *len);
int npr_put_string(const char *s, uint64_t ptr, uint32_t *len);

/* lib/core.c: handle layout (type tag, generation, table index) */
#define HANDLE_TYPE_SHIFT	28
#define HANDLE_GEN_SHIFT	16
#define HANDLE_GEN_MASK		0xfffu
#define HANDLE_IDX_MASK		0xffffu

/* lib/core.c: handle tables (the caller holds dev->lock), object
 * references and argument checks, shared with the command handlers */
int npr_handle_alloc(struct npr_device *dev, void *obj, int type,
		     uint32_t *out);
void *npr_handle_get_locked(struct npr_device *dev, uint32_t h, int type,
			    int *err);
void npr_model_destroy(struct npr_model *m);
void npr_exec_put(struct npr_exec *ex);
/* Exec handle @h with a reference for the caller, who drops it with
 * npr_exec_put() under dev->lock; NULL and *err set if @h is not one.
 * Takes dev->lock. */
struct npr_exec *npr_exec_get(struct npr_device *dev, uint32_t h, int *err);
void npr_bo_put(struct npr_bo *bo);
void npr_port_unbind(struct npr_bo **slot);
void npr_request_destroy(struct npr_request *rq);
int npr_check_flags(uint32_t flags, uint32_t known);
int npr_check_reserved(uint32_t v);
int npr_check_args(uint32_t flags, uint32_t known, uint32_t reserved);

/* lib/core_model.c: model and compiled-model commands */
int npr_cmd_model_load(struct npr_device *dev, void *arg);
int npr_model_load_deferred(struct npr_device *dev, const char *xml,
			    const char *bin, uint32_t *handle);
int npr_model_read(struct npr_device *dev, uint32_t h);
int npr_cmd_model_info(struct npr_device *dev, void *arg);
int npr_user_inputs(const struct npr_exec *ex);
int npr_user_outputs(const struct npr_exec *ex);
int npr_cmd_port_info(struct npr_device *dev, void *arg);
int npr_cmd_compile(struct npr_device *dev, void *arg);
int npr_cmd_export(struct npr_device *dev, void *arg);
int npr_cmd_import(struct npr_device *dev, void *arg);
int npr_cmd_profile(struct npr_device *dev, void *arg);
int npr_cmd_query_model(struct npr_device *dev, void *arg);
int npr_cmd_make_stateful(struct npr_device *dev, void *arg);

/* lib/core_req.c: request, variable and buffer-object commands */
struct npr_request *npr_request_idle(struct npr_device *dev, uint32_t h,
				     int *err);
int npr_state_op(struct npr_request *rq, struct npr_state_arg *a,
		 unsigned int nr);
int npr_cmd_state(struct npr_device *dev, void *arg, unsigned int nr);
int npr_cmd_bo_create(struct npr_device *dev, void *arg);
int npr_cmd_bo_info(struct npr_device *dev, void *arg);
int npr_cmd_bo_bind(struct npr_device *dev, void *arg);
int npr_cmd_req_create(struct npr_device *dev, void *arg);
int npr_cmd_tensor(struct npr_device *dev, void *arg, bool set);
int npr_cmd_infer(struct npr_device *dev, void *arg);

#endif /* NPR_CORE_H */
