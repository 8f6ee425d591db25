/* SPDX-License-Identifier: MIT */
/*
 * npuring userspace ABI, version 1.
 *
 * Every argument struct begins with "__u32 size; __u32 flags;", uses only
 * fixed-width fields, passes pointers as __u64, pads explicitly with
 * reserved fields that must be zero, and grows only by appending.
 *
 * Validation order, identical for every command (see Documentation/uapi.rst):
 *
 *   1. arg == NULL or size < the version-0 size       -> -EINVAL
 *   2. size > the size this library knows, and any
 *      byte past the known size is non-zero            -> -E2BIG
 *   3. a flag bit this library does not know           -> -EOPNOTSUPP
 *   4. a reserved field is non-zero                    -> -EINVAL
 *   5. a handle that does not name a live object       -> -ENOENT
 *   6. a handle that names an object of the wrong type -> -EBADF
 *   7. command-specific checks (documented per struct)
 *
 * A buffer that is too small for a variable-size output fails with
 * -EMSGSIZE and the needed size is written back.  Every call returns >= 0 on
 * success or a negative errno; errno itself is never touched.  The detail
 * message of the last failure on the calling thread is read with
 * NPR_IOCTL_GET_ERROR.
 */
#ifndef _UAPI_NPURING_H
#define _UAPI_NPURING_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define NPR_UAPI_VERSION	1

#define NPR_MAX_RANK		8

/**
 * enum npr_elem_type - element types of tensors and constants
 *
 * The numbering is ABI; new types are appended.
 */
enum npr_elem_type {
	NPR_ELEM_UNDEFINED = 0,
	NPR_ELEM_F32	= 1,
	NPR_ELEM_F16	= 2,
	NPR_ELEM_BF16	= 3,
	NPR_ELEM_F64	= 4,
	NPR_ELEM_I8	= 5,
	NPR_ELEM_U8	= 6,
	NPR_ELEM_I16	= 7,
	NPR_ELEM_U16	= 8,
	NPR_ELEM_I32	= 9,
	NPR_ELEM_U32	= 10,
	NPR_ELEM_I64	= 11,
	NPR_ELEM_U64	= 12,
	NPR_ELEM_BOOLEAN = 13,	/* one byte per element, 0 or 1 */
	NPR_ELEM_U1	= 14,	/* packed bits, MSB first */
	NPR_ELEM_I4	= 15,
	NPR_ELEM_U4	= 16,
	NPR_ELEM_MAX,
};

/**
 * enum npr_device_type - what kind of device an fd drives
 */
enum npr_device_type {
	NPR_DEVICE_CPU	= 1,
	NPR_DEVICE_NPU	= 2,
	NPR_DEVICE_NULL	= 3,
};

/* Handle type tags, stored in bits 28..31 of every handle. */
enum npr_handle_type {
	NPR_HANDLE_MODEL	= 1,
	NPR_HANDLE_EXEC		= 2,
	NPR_HANDLE_REQUEST	= 3,
};

/**
 * struct npr_device_info - NPR_IOCTL_DEVICE_INFO
 * @size: In. sizeof(struct npr_device_info) as the caller knows it.
 * @flags: In. Must be 0.
 * @api_version: Out. NPR_UAPI_VERSION of the library.
 * @device_type: Out. enum npr_device_type.
 * @caps: Out. NPR_CAP_* bits.
 * @num_threads: Out. CPUs the backend may use.
 * @reserved: Must be 0.
 * @name: Out. Short device name ("cpu", "npu.1"), NUL-terminated.
 * @full_name: Out. Human-readable device name, NUL-terminated.
 * @arch: Out. Device architecture ("x86_64", "3720"), NUL-terminated.
 */
struct npr_device_info {
	__u32 size;
	__u32 flags;
	__u32 api_version;
	__u32 device_type;
	__u64 caps;
	__u32 num_threads;
	__u32 reserved;
	char name[32];
	char full_name[128];
	char arch[32];
};
_Static_assert(sizeof(struct npr_device_info) == 224, "npr_device_info ABI");

#define NPR_CAP_FP32		(1ULL << 0)
#define NPR_CAP_FP16		(1ULL << 1)
#define NPR_CAP_INT8		(1ULL << 2)
#define NPR_CAP_EXPORT_IMPORT	(1ULL << 3)

/**
 * enum npr_param_id - property identifiers for GET_PARAM / SET_PARAM
 *
 * Integer properties travel in npr_param.value, string properties through
 * npr_param.ptr / npr_param.len.  Numbering is ABI.
 */
enum npr_param_id {
	NPR_PARAM_FULL_DEVICE_NAME	= 1,	/* string, RO, device */
	NPR_PARAM_DEVICE_ARCHITECTURE	= 2,	/* string, RO, device */
	NPR_PARAM_INFERENCE_NUM_THREADS	= 3,	/* int, RW, device and exec */
	NPR_PARAM_LOG_LEVEL		= 4,	/* int 0..4, RW, device */
	NPR_PARAM_PERFORMANCE_HINT	= 5,	/* enum npr_perf_hint, RW, device and exec */
	NPR_PARAM_ENABLE_PROFILING	= 6,	/* bool, RW, device and exec */
	NPR_PARAM_MAX,
};

enum npr_perf_hint {
	NPR_PERF_HINT_LATENCY		= 1,
	NPR_PERF_HINT_THROUGHPUT	= 2,
};

/**
 * struct npr_param - NPR_IOCTL_GET_PARAM, NPR_IOCTL_SET_PARAM
 * @size: In. sizeof(struct npr_param).
 * @flags: In. Must be 0.
 * @handle: In. 0 for the device, or an exec handle for a compiled model.
 * @param: In. enum npr_param_id.
 * @value: In/Out. Integer value.
 * @ptr: In. User buffer for string values (GET: filled; SET: read).
 * @len: In/Out. Length of @ptr in bytes.  On GET, set to the needed length
 *       including the NUL; -EMSGSIZE if @ptr is too small.
 * @reserved: Must be 0.
 */
struct npr_param {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 param;
	__u64 value;
	__u64 ptr;
	__u32 len;
	__u32 reserved;
};
_Static_assert(sizeof(struct npr_param) == 40, "npr_param ABI");

/**
 * struct npr_model_load - NPR_IOCTL_MODEL_LOAD
 * @size: In. sizeof(struct npr_model_load).
 * @flags: In. NPR_MODEL_LOAD_*.
 * @xml: In. Pointer to a NUL-terminated path of the IR .xml file, or with
 *       NPR_MODEL_LOAD_MEMORY a pointer to the xml bytes.
 * @xml_size: In. With NPR_MODEL_LOAD_MEMORY, size of the xml bytes; else 0.
 * @bin: In. Path of the .bin file (0: the .xml path with .bin), or with
 *       NPR_MODEL_LOAD_MEMORY a pointer to the weights (0 if none).
 * @bin_size: In. With NPR_MODEL_LOAD_MEMORY, size of the weights; else 0.
 * @handle: Out. Model handle.
 * @reserved: Must be 0.
 *
 * With NPR_MODEL_LOAD_MEMORY both buffers are copied; they may be freed
 * when the call returns.  Files are mapped read-only and the mapping lives
 * as long as the model or any exec compiled from it.
 */
struct npr_model_load {
	__u32 size;
	__u32 flags;
	__u64 xml;
	__u64 xml_size;
	__u64 bin;
	__u64 bin_size;
	__u32 handle;
	__u32 reserved;
};
_Static_assert(sizeof(struct npr_model_load) == 48, "npr_model_load ABI");

#define NPR_MODEL_LOAD_MEMORY	(1U << 0)

/**
 * struct npr_model_info - NPR_IOCTL_MODEL_INFO
 * @size: In. sizeof(struct npr_model_info).
 * @flags: In. Must be 0.
 * @handle: In. Model or exec handle.
 * @num_inputs: Out. Number of model inputs (Parameters).
 * @num_outputs: Out. Number of model outputs (Results).
 * @num_nodes: Out. Number of graph nodes, constants included.
 * @ir_version: Out. IR version of the source file (10, 11), 0 if none.
 * @reserved: Must be 0.
 */
struct npr_model_info {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 num_inputs;
	__u32 num_outputs;
	__u32 num_nodes;
	__u32 ir_version;
	__u32 reserved;
};
_Static_assert(sizeof(struct npr_model_info) == 32, "npr_model_info ABI");

/**
 * struct npr_port_info - NPR_IOCTL_PORT_INFO
 * @size: In. sizeof(struct npr_port_info).
 * @flags: In. NPR_PORT_OUTPUT selects outputs, else inputs.
 * @handle: In. Model or exec handle.
 * @index: In. Port index, < num_inputs or num_outputs.
 * @elem_type: Out. enum npr_elem_type the caller reads or writes.
 * @rank: Out. Number of dimensions.
 * @dims: Out. Dimensions; -1 for a dynamic dimension (models only).
 * @name: In. User buffer for the port's tensor name (or its layer name).
 * @name_len: In/Out. Size of @name; set to the needed size incl. NUL.
 *            -EMSGSIZE when too small (0 asks for the size only).
 * @reserved: Must be 0.
 */
struct npr_port_info {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 index;
	__u32 elem_type;
	__u32 rank;
	__s64 dims[NPR_MAX_RANK];
	__u64 name;
	__u32 name_len;
	__u32 reserved;
};
_Static_assert(sizeof(struct npr_port_info) == 104, "npr_port_info ABI");

#define NPR_PORT_OUTPUT		(1U << 0)

/**
 * struct npr_shape_arg - one input shape override for NPR_IOCTL_COMPILE
 * @index: Input port index.
 * @rank: Number of dimensions, 1..NPR_MAX_RANK.
 * @dims: Dimensions, each >= 1.
 */
struct npr_shape_arg {
	__u32 index;
	__u32 rank;
	__s64 dims[NPR_MAX_RANK];
};
_Static_assert(sizeof(struct npr_shape_arg) == 72, "npr_shape_arg ABI");

/**
 * struct npr_prop_arg - one property for NPR_IOCTL_COMPILE
 * @param: enum npr_param_id.
 * @reserved: Must be 0.
 * @value: Integer value.
 */
struct npr_prop_arg {
	__u32 param;
	__u32 reserved;
	__u64 value;
};
_Static_assert(sizeof(struct npr_prop_arg) == 16, "npr_prop_arg ABI");

/**
 * struct npr_compile - NPR_IOCTL_COMPILE
 * @size: In. sizeof(struct npr_compile).
 * @flags: In. Must be 0.
 * @model: In. Model handle.
 * @exec: Out. Exec (compiled model) handle.
 * @shapes: In. Pointer to @num_shapes struct npr_shape_arg, or 0.
 * @props: In. Pointer to @num_props struct npr_prop_arg, or 0.
 * @num_shapes: In. Entries in @shapes (at most one per input).
 * @num_props: In. Entries in @props.
 *
 * The exec keeps what it needs of the model; the model may be destroyed
 * afterwards.
 */
struct npr_compile {
	__u32 size;
	__u32 flags;
	__u32 model;
	__u32 exec;
	__u64 shapes;
	__u64 props;
	__u32 num_shapes;
	__u32 num_props;
};
_Static_assert(sizeof(struct npr_compile) == 40, "npr_compile ABI");

/**
 * struct npr_req_create - NPR_IOCTL_REQ_CREATE
 * @size: In. sizeof(struct npr_req_create).
 * @flags: In. Must be 0.
 * @exec: In. Exec handle.
 * @req: Out. Request handle.  The request owns one buffer per input and
 *       output, sized for the compiled shapes.
 */
struct npr_req_create {
	__u32 size;
	__u32 flags;
	__u32 exec;
	__u32 req;
};
_Static_assert(sizeof(struct npr_req_create) == 16, "npr_req_create ABI");

/**
 * struct npr_tensor_arg - NPR_IOCTL_SET_TENSOR, NPR_IOCTL_GET_TENSOR
 * @size: In. sizeof(struct npr_tensor_arg).
 * @flags: In. NPR_PORT_OUTPUT selects an output port, else an input.
 *         NPR_TENSOR_BIND (SET only): bind the caller's memory instead of
 *         copying; it must stay valid and unchanged until the request is
 *         destroyed or another tensor is set on that port.
 *         NPR_TENSOR_MAP (GET only): do not copy, return in @data a
 *         pointer to the request's own buffer, valid until the request is
 *         destroyed or the port is rebound.
 * @req: In. Request handle.
 * @index: In. Port index.
 * @elem_type: In (SET: must equal the port's type) / Out (GET).
 * @rank: In (SET: must equal the compiled rank) / Out (GET).
 * @dims: In (SET: must equal the compiled dims) / Out (GET).
 * @data: In. Caller buffer (SET: read; GET: written) / Out with MAP.
 * @bytes: In. Size of @data; SET needs exactly the tensor size, GET at
 *         least it (-EMSGSIZE, needed size written back).  Out: tensor size.
 */
struct npr_tensor_arg {
	__u32 size;
	__u32 flags;
	__u32 req;
	__u32 index;
	__u32 elem_type;
	__u32 rank;
	__s64 dims[NPR_MAX_RANK];
	__u64 data;
	__u64 bytes;
};
_Static_assert(sizeof(struct npr_tensor_arg) == 104, "npr_tensor_arg ABI");

#define NPR_TENSOR_BIND		(1U << 1)
#define NPR_TENSOR_MAP		(1U << 2)

/**
 * struct npr_infer - NPR_IOCTL_INFER (synchronous)
 * @size: In. sizeof(struct npr_infer).
 * @flags: In. Must be 0.
 * @req: In. Request handle.
 * @reserved: Must be 0.
 * @started_ns: Out. CLOCK_MONOTONIC time execution began, ns.
 * @finished_ns: Out. CLOCK_MONOTONIC time execution ended, ns.
 */
struct npr_infer {
	__u32 size;
	__u32 flags;
	__u32 req;
	__u32 reserved;
	__u64 started_ns;
	__u64 finished_ns;
};
_Static_assert(sizeof(struct npr_infer) == 32, "npr_infer ABI");

/**
 * struct npr_handle_destroy - NPR_IOCTL_HANDLE_DESTROY
 * @size: In. sizeof(struct npr_handle_destroy).
 * @flags: In. Must be 0.
 * @handle: In. Any handle.  Objects that others depend on stay alive
 *          (reference counted) until the last user is gone; the handle
 *          itself is invalid at once.
 * @reserved: Must be 0.
 */
struct npr_handle_destroy {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 reserved;
};
_Static_assert(sizeof(struct npr_handle_destroy) == 16, "npr_handle_destroy ABI");

/**
 * struct npr_get_error - NPR_IOCTL_GET_ERROR
 * @size: In. sizeof(struct npr_get_error).
 * @flags: In. Must be 0.
 * @buf: In. User buffer for the NUL-terminated message.
 * @len: In/Out. Size of @buf; set to the needed size incl. NUL.
 * @err: Out. The negative errno of the last failure on this thread, 0 if
 *       none.
 *
 * Reads the calling thread's last failure detail; GET_ERROR itself does
 * not replace it.  A @buf shorter than the message is filled with a
 * truncated, NUL-terminated copy and the call returns -EMSGSIZE.
 */
struct npr_get_error {
	__u32 size;
	__u32 flags;
	__u64 buf;
	__u32 len;
	__s32 err;
};
_Static_assert(sizeof(struct npr_get_error) == 24, "npr_get_error ABI");


/* ---- the ring: asynchronous jobs (ioctls 0x0d..0x0f) ------------------- */

/**
 * enum npr_op - job opcodes of struct npr_sqe
 * @NPR_OP_NOP: complete with res 0.  With @len > 0 a worker sleeps @len
 *              microseconds first (at most 10 s): a job of known length
 *              for tests and measurements.
 * @NPR_OP_INFER: run request @handle; res 0 or -errno.
 * @NPR_OP_COMPILE: compile model @handle with defaults; res is the new
 *                  exec handle (> 0) or -errno.
 * @NPR_OP_LOAD: load the IR model whose NUL-terminated .xml path is at
 *               @addr (copied at submission); res is the model handle.
 * @NPR_OP_CANCEL: cancel the job whose user_data equals @addr.  res 0 if
 *                 a queued job was cancelled (it completes with
 *                 -ECANCELED), -EALREADY if it is running (it completes
 *                 normally), -ENOENT if no such job is in flight.
 */
enum npr_op {
	NPR_OP_NOP	= 0,
	NPR_OP_INFER	= 1,
	NPR_OP_COMPILE	= 2,
	NPR_OP_LOAD	= 3,
	NPR_OP_CANCEL	= 4,
	NPR_OP_MAX,
};

/**
 * struct npr_sqe - one job, an element of NPR_IOCTL_SUBMIT's array
 * @opcode: enum npr_op.
 * @flags: NPR_SQE_*.
 * @reserved0: Must be 0.
 * @handle: Request (INFER) or model (COMPILE) handle; 0 otherwise.
 * @user_data: Copied unchanged into the job's completion.
 * @addr: LOAD: path pointer; CANCEL: user_data of the target; else 0.
 * @len: NOP: microseconds to sleep on a worker (<= 10000000); else 0.
 * @reserved1: Must be 0.
 * @deadline_ns: Absolute CLOCK_MONOTONIC deadline in ns, 0 for none.  A
 *               job that has not started by then completes with -ETIME.
 * @reserved2: Must be 0.
 */
struct npr_sqe {
	__u8 opcode;
	__u8 flags;
	__u16 reserved0;
	__u32 handle;
	__u64 user_data;
	__u64 addr;
	__u32 len;
	__u32 reserved1;
	__u64 deadline_ns;
	__u64 reserved2[3];
};
_Static_assert(sizeof(struct npr_sqe) == 64, "npr_sqe ABI");

/*
 * NPR_SQE_LINK: the next SQE of the same batch runs only after this one
 * succeeded (res >= 0); otherwise it, and the rest of the chain, complete
 * with -ECANCELED.  NPR_SQE_DRAIN: start only after every job submitted
 * earlier on this fd has completed.
 */
#define NPR_SQE_LINK		(1U << 0)
#define NPR_SQE_DRAIN		(1U << 1)

/**
 * enum npr_job_status - the status word of a completion
 * @NPR_JOB_OK: ran, res >= 0.
 * @NPR_JOB_FAILED: ran, res < 0.
 * @NPR_JOB_CANCELED: did not run: cancelled (res -ECANCELED).
 * @NPR_JOB_EXPIRED: did not run: its deadline passed (res -ETIME).
 * @NPR_JOB_LINK_BROKEN: did not run: an earlier linked job failed
 *                       (res -ECANCELED).
 */
enum npr_job_status {
	NPR_JOB_OK		= 0,
	NPR_JOB_FAILED		= 1,
	NPR_JOB_CANCELED	= 2,
	NPR_JOB_EXPIRED		= 3,
	NPR_JOB_LINK_BROKEN	= 4,
};

/**
 * struct npr_cqe - one completion, an element of NPR_IOCTL_REAP's array
 * @user_data: The job's user_data.
 * @res: >= 0 on success or -errno.
 * @status: enum npr_job_status.
 * @queued_ns: CLOCK_MONOTONIC ns when the job was submitted.
 * @started_ns: when it started (== @finished_ns if it never ran).
 * @finished_ns: when it completed.
 * @reserved: 0.
 */
struct npr_cqe {
	__u64 user_data;
	__s32 res;
	__u32 status;
	__u64 queued_ns;
	__u64 started_ns;
	__u64 finished_ns;
	__u64 reserved;
};
_Static_assert(sizeof(struct npr_cqe) == 48, "npr_cqe ABI");

/**
 * enum npr_ring_path - how completions are delivered
 * @NPR_RING_PATH_URING: an io_uring owned by the fd (or the caller's).
 * @NPR_RING_PATH_FALLBACK: an eventfd and worker threads.
 */
enum npr_ring_path {
	NPR_RING_PATH_URING	= 1,
	NPR_RING_PATH_FALLBACK	= 2,
};

/**
 * enum npr_ring_reason - why the fallback path is active
 * @NPR_RING_WHY_NONE: it is not.
 * @NPR_RING_WHY_FORCED: NPR_RING_SETUP_FALLBACK or the environment
 *                       variable NPR_RING_FALLBACK=1.
 * @NPR_RING_WHY_DISABLED: sysctl kernel.io_uring_disabled forbids it.
 * @NPR_RING_WHY_ERRNO: io_uring setup failed with npr_ring_setup.err
 *                      (ENOSYS: old kernel; EPERM: seccomp or sysctl).
 */
enum npr_ring_reason {
	NPR_RING_WHY_NONE	= 0,
	NPR_RING_WHY_FORCED	= 1,
	NPR_RING_WHY_DISABLED	= 2,
	NPR_RING_WHY_ERRNO	= 3,
};

/**
 * struct npr_ring_setup - NPR_IOCTL_RING_SETUP
 * @size: In. sizeof(struct npr_ring_setup).
 * @flags: In. NPR_RING_SETUP_*.
 * @cq_entries: In. Completion queue size, a power of two 1..32768, 0 for
 *              the default 256: at most this many jobs are in flight
 *              (submitted and not yet reaped).  Out: the size in force.
 * @attach_fd: In. With NPR_RING_SETUP_ATTACH the caller's io_uring fd:
 *             completions are posted into its CQ with IORING_OP_MSG_RING
 *             (cqe->user_data and cqe->res as the job's); else must be 0.
 * @ring_fd: Out. Pollable descriptor: readable when completions wait.
 *           The fd owns it; do not close it.
 * @path: Out. enum npr_ring_path.
 * @reason: Out. enum npr_ring_reason.
 * @err: Out. With NPR_RING_WHY_ERRNO, the positive errno.
 * @workers: Out. Worker threads (jobs that run concurrently).
 * @reserved: Must be 0.
 *
 * Optional: the first SUBMIT sets the ring up with defaults.  Once set up
 * the call only reports (cq_entries and flags must then be 0 or match);
 * -EBUSY if asked for something else.
 */
struct npr_ring_setup {
	__u32 size;
	__u32 flags;
	__u32 cq_entries;
	__s32 attach_fd;
	__s32 ring_fd;
	__u32 path;
	__u32 reason;
	__s32 err;
	__u32 workers;
	__u32 reserved;
};
_Static_assert(sizeof(struct npr_ring_setup) == 40, "npr_ring_setup ABI");

#define NPR_RING_SETUP_FALLBACK	(1U << 0)
#define NPR_RING_SETUP_ATTACH	(1U << 1)

/**
 * struct npr_submit - NPR_IOCTL_SUBMIT
 * @size: In. sizeof(struct npr_submit).
 * @flags: In. Must be 0.
 * @sqes: In. Pointer to @count struct npr_sqe; read during the call only.
 * @count: In. 1..cq_entries.
 * @submitted: Out. Jobs accepted.
 *
 * Every SQE is validated first (reserved fields, opcode, flags, handles,
 * in that order); on the first bad one nothing is submitted, @submitted is
 * its index and the call fails with its errno.  When fewer than @count
 * completion slots are free, the leading SQEs that fit are submitted (a
 * link chain is never split): -EBUSY if none fit.  Reap, then retry.
 */
struct npr_submit {
	__u32 size;
	__u32 flags;
	__u64 sqes;
	__u32 count;
	__u32 submitted;
};
_Static_assert(sizeof(struct npr_submit) == 24, "npr_submit ABI");

/**
 * struct npr_reap - NPR_IOCTL_REAP
 * @size: In. sizeof(struct npr_reap).
 * @flags: In. NPR_REAP_POLL: busy-poll instead of sleeping.
 * @cqes: In. Pointer to @max struct npr_cqe.
 * @max: In. >= 1.
 * @min: In. Wait until at least this many (<= @max) are available.
 * @timeout_ns: In. Longest wait in ns; 0 waits forever (when @min > 0).
 * @count: Out. Completions copied, oldest first.
 * @reserved: Must be 0.
 *
 * Return: 0, or -ETIME when fewer than @min arrived in time (@count still
 * says how many were copied).  In attach mode completions go to the
 * caller's ring only and REAP fails with -EINVAL.  One thread at a time:
 * a concurrent REAP on the same fd fails with -EBUSY.
 */
struct npr_reap {
	__u32 size;
	__u32 flags;
	__u64 cqes;
	__u32 max;
	__u32 min;
	__u64 timeout_ns;
	__u32 count;
	__u32 reserved;
};
_Static_assert(sizeof(struct npr_reap) == 40, "npr_reap ABI");

#define NPR_REAP_POLL		(1U << 0)

#define NPR_IOCTL_TYPE			'N'
#define NPR_IOCTL_DEVICE_INFO		_IOWR('N', 0x00, struct npr_device_info)
#define NPR_IOCTL_GET_PARAM		_IOWR('N', 0x01, struct npr_param)
#define NPR_IOCTL_SET_PARAM		_IOWR('N', 0x02, struct npr_param)
#define NPR_IOCTL_MODEL_LOAD		_IOWR('N', 0x03, struct npr_model_load)
#define NPR_IOCTL_MODEL_INFO		_IOWR('N', 0x04, struct npr_model_info)
#define NPR_IOCTL_PORT_INFO		_IOWR('N', 0x05, struct npr_port_info)
#define NPR_IOCTL_COMPILE		_IOWR('N', 0x06, struct npr_compile)
#define NPR_IOCTL_REQ_CREATE		_IOWR('N', 0x07, struct npr_req_create)
#define NPR_IOCTL_SET_TENSOR		_IOWR('N', 0x08, struct npr_tensor_arg)
#define NPR_IOCTL_GET_TENSOR		_IOWR('N', 0x09, struct npr_tensor_arg)
#define NPR_IOCTL_INFER			_IOWR('N', 0x0a, struct npr_infer)
#define NPR_IOCTL_HANDLE_DESTROY	_IOWR('N', 0x0b, struct npr_handle_destroy)
#define NPR_IOCTL_GET_ERROR		_IOWR('N', 0x0c, struct npr_get_error)
#define NPR_IOCTL_RING_SETUP		_IOWR('N', 0x0d, struct npr_ring_setup)
#define NPR_IOCTL_SUBMIT		_IOWR('N', 0x0e, struct npr_submit)
#define NPR_IOCTL_REAP			_IOWR('N', 0x0f, struct npr_reap)

#endif /* _UAPI_NPURING_H */
