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

/* C++ spells C11's _Static_assert static_assert; undefined at the end */
#if defined(__cplusplus) && !defined(_Static_assert)
#define _Static_assert static_assert
#define NPR_UAPI_STATIC_ASSERT
#endif

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
	NPR_HANDLE_BO		= 4,
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
 * Numbering is ABI.  Each property has one type (enum npr_prop_type), a
 * mutability (RO or RW) and a scope: "device" properties are read and
 * written on the fd (handle 0); "exec" properties are read on a compiled
 * model's handle, where they hold the value in force for that model
 * (the device's at compile time, overridden by the properties passed to
 * NPR_IOCTL_COMPILE).  RW properties may be passed to NPR_IOCTL_COMPILE.
 * The names are OpenVINO's property names; NPR_IOCTL_PROP_INFO maps
 * names to ids and describes each property.  Documentation/properties.rst
 * has the whole table with defaults and ranges.
 */
enum npr_param_id {
	NPR_PARAM_FULL_DEVICE_NAME		= 1,	/* string, RO, device */
	NPR_PARAM_DEVICE_ARCHITECTURE		= 2,	/* string, RO, device */
	NPR_PARAM_INFERENCE_NUM_THREADS		= 3,	/* int, RW, device exec */
	NPR_PARAM_LOG_LEVEL			= 4,	/* enum npr_log_level, RW */
	NPR_PARAM_PERFORMANCE_HINT		= 5,	/* enum npr_perf_hint, RW */
	NPR_PARAM_ENABLE_PROFILING		= 6,	/* bool, RW, device exec */
	NPR_PARAM_SUPPORTED_PROPERTIES		= 7,	/* list, RO, device exec */
	NPR_PARAM_AVAILABLE_DEVICES		= 8,	/* list, RO, device */
	NPR_PARAM_DEVICE_TYPE			= 9,	/* enum npr_device_kind, RO */
	NPR_PARAM_DEVICE_UUID			= 10,	/* string, RO, device */
	NPR_PARAM_OPTIMIZATION_CAPABILITIES	= 11,	/* list, RO, device */
	NPR_PARAM_RANGE_FOR_ASYNC_INFER_REQUESTS = 12,	/* int list, RO, device */
	NPR_PARAM_RANGE_FOR_STREAMS		= 13,	/* int list, RO, device */
	NPR_PARAM_OPTIMAL_NUMBER_OF_INFER_REQUESTS = 14, /* int, RO, device exec */
	NPR_PARAM_EXECUTION_DEVICES		= 15,	/* list, RO, exec */
	NPR_PARAM_DEVICE_ID			= 16,	/* string, RO, device */
	NPR_PARAM_PERFORMANCE_HINT_NUM_REQUESTS	= 17,	/* int, RW, device exec */
	NPR_PARAM_INFERENCE_PRECISION_HINT	= 18,	/* enum npr_elem_type, RW */
	NPR_PARAM_EXECUTION_MODE_HINT		= 19,	/* enum npr_exec_mode, RW */
	NPR_PARAM_NUM_STREAMS			= 20,	/* int, RW, device exec */
	NPR_PARAM_ENABLE_CPU_PINNING		= 21,	/* bool, RW, device exec */
	NPR_PARAM_MODEL_PRIORITY		= 22,	/* enum npr_priority, RW */
	NPR_PARAM_CACHE_DIR			= 23,	/* string, RW, device exec */
	NPR_PARAM_CACHING_PROPERTIES		= 24,	/* list, RO, device */
	NPR_PARAM_DISABLE_TRANSFORMATIONS	= 25,	/* bool, RW, device exec */
	NPR_PARAM_EXCLUSIVE_ASYNC_REQUESTS	= 26,	/* bool, RW, device exec */
	NPR_PARAM_COMPILATION_NUM_THREADS	= 27,	/* int, RW, device exec */
	NPR_PARAM_MODEL_NAME			= 28,	/* string, RO, exec */
	NPR_PARAM_LOADED_FROM_CACHE		= 29,	/* bool, RO, exec */
	NPR_PARAM_NPR_CACHE_MAX_MB		= 30,	/* int, RW, device exec */
	NPR_PARAM_NPR_CACHE_REQUIRED		= 31,	/* bool, RW, device exec */
	/*
	 * The most memory one compiled model may ask for, in MiB: its
	 * exec_bytes plus one request's request_bytes (struct
	 * npr_model_info).  COMPILE over it fails with -EFBIG, naming the
	 * largest tensor; so does an INFER whose shapes, read from the
	 * input values, would grow a request's buffers past it.  Default:
	 * half of the machine's memory (or of RLIMIT_AS when that is
	 * lower); 0: no limit.
	 */
	NPR_PARAM_NPR_MAX_MODEL_MEMORY_MB	= 32,	/* int, RW, device exec */
	/*
	 * The NPU plugin's properties, from 64 on: only the npu device has
	 * them (-ENOPROTOOPT elsewhere).  Documentation/npu.rst.
	 */
	NPR_PARAM_NPU_DRIVER_VERSION		= 64,	/* int, RO, device */
	NPR_PARAM_NPU_COMPILER_VERSION		= 65,	/* int, RO, device */
	NPR_PARAM_DEVICE_PCI_INFO		= 66,	/* string, RO, device */
	NPR_PARAM_DEVICE_GOPS			= 67,	/* list, RO, device */
	NPR_PARAM_NPU_DEVICE_ALLOC_MEM_SIZE	= 68,	/* int, RO, device */
	NPR_PARAM_NPU_DEVICE_TOTAL_MEM_SIZE	= 69,	/* int, RO, device */
	NPR_PARAM_NPU_MAX_TILES			= 70,	/* int, RO, device */
	NPR_PARAM_NPU_TILES			= 71,	/* int, RW, device exec */
	NPR_PARAM_NPU_TURBO			= 72,	/* bool, RW, device exec */
	NPR_PARAM_NPU_BYPASS_UMD_CACHING	= 73,	/* bool, RW, device exec */
	NPR_PARAM_NPU_DEFER_WEIGHTS_LOAD	= 74,	/* bool, RW, device exec */
	NPR_PARAM_NPU_COMPILATION_MODE_PARAMS	= 75,	/* string, RW, device exec */
	NPR_PARAM_NPU_COMPILER_DYNAMIC_QUANTIZATION = 76, /* bool, RW, device exec */
	NPR_PARAM_NPR_NPU_LOADER_VERSION	= 77,	/* string, RO, device */
	/*
	 * Dynamic input shapes on the cpu device: the number of input shape
	 * signatures whose plans a compiled model keeps, least recently used
	 * first out (0: plan every inference).  Default 16.
	 */
	NPR_PARAM_CPU_RUNTIME_CACHE_CAPACITY	= 78,	/* int, RW, device exec */
	/* plans made for a new input shape signature (cache misses) */
	NPR_PARAM_NPR_RUNTIME_CACHE_MISSES	= 79,	/* int, RO, exec */
	/* plans the cache dropped to make room */
	NPR_PARAM_NPR_RUNTIME_CACHE_EVICTIONS	= 80,	/* int, RO, exec */
	NPR_PARAM_WORKLOAD_TYPE			= 86,	/* enum, RW, dev exec */
	NPR_PARAM_NPU_COMPILER_TYPE		= 87,	/* enum, RW, dev exec */
	/*
	 * The longest a synchronous NPR_IOCTL_INFER may take, in ms; 0 (the
	 * default): no limit.  Past it INFER fails with -ETIME and its
	 * result is discarded: the outputs hold unspecified values and a
	 * stateful model's variables keep the values they had before the
	 * call.  The cpu device stops at the next node boundary after the
	 * limit; the npu device stops waiting at the limit and leaves the
	 * inference to the device, which keeps the request's memory until
	 * it is done: a later INFER of the request waits for that first
	 * (Documentation/npu.rst).  OpenVINO has no such property (its
	 * InferRequest::wait_for() times the wait, not the inference).
	 * Ring jobs use their SQE's deadline_ns instead.
	 */
	NPR_PARAM_NPR_INFER_TIMEOUT_MS		= 96,	/* int, RW, device exec */
	/*
	 * What EXPORT and the model cache put in a blob (enum
	 * npr_cache_mode): OPTIMIZE_SIZE leaves out the constants that lie
	 * in the model's own weights file and records where each lies;
	 * IMPORT reads them from WEIGHTS_PATH, a cache hit from the model's
	 * file (Documentation/blob.rst).  A caching property.
	 */
	NPR_PARAM_CACHE_MODE			= 100,	/* enum, RW, device exec */
	/* IMPORT of a weightless blob: the model's weights file (.bin, .onnx) */
	NPR_PARAM_WEIGHTS_PATH			= 101,	/* string, RW, device exec */
	/*
	 * npu, a stateful decoder whose variables grow (a KV cache made
	 * state by NPR_IOCTL_MAKE_STATEFUL, its inputs' sequence and past
	 * dimensions dynamic): COMPILE builds two static graphs, as the NPU
	 * plugin's LLM pipeline does: a prefill graph of MAX_PROMPT_LEN
	 * tokens (the prompt padded) and a one-token generate graph whose KV
	 * cache holds MAX_PROMPT_LEN + MIN_RESPONSE_LEN positions.  A longer
	 * prompt fails INFER with -EINVAL, a longer context with -ENOSPC.
	 * Defaults 1024 and 128, as OpenVINO's.
	 */
	NPR_PARAM_MAX_PROMPT_LEN		= 106,	/* int, RW, dev exec */
	NPR_PARAM_MIN_RESPONSE_LEN		= 107,	/* int, RW, dev exec */
	/*
	 * cpu: infer with denormal numbers flushed to zero, in the results
	 * (FTZ) and in the operands (DAZ), as OpenVINO's CPU plugin's
	 * property of this name: arithmetic on denormals takes a slow path
	 * on x86 cores, up to ten times slower per layer; the results are
	 * no longer IEEE's for values below 2^-126.  Default false.  Read
	 * at each inference; x86-64 only (elsewhere it is taken and has no
	 * effect).
	 */
	NPR_PARAM_CPU_DENORMALS_OPTIMIZATION	= 108,	/* bool, RW, dev exec */
	NPR_PARAM_MAX,
};

/**
 * enum npr_prop_type - how a property's value travels in struct npr_param
 * @NPR_PROP_INT: signed 64-bit integer in @value.
 * @NPR_PROP_BOOL: 0 or 1 in @value.
 * @NPR_PROP_STRING: NUL-terminated string through @ptr / @len.
 * @NPR_PROP_ENUM: the number in @value; GET also writes the value's name
 *	to @ptr when @ptr is set, and SET takes the name from @ptr when
 *	@ptr is set (else the number from @value).
 * @NPR_PROP_LIST: strings through @ptr / @len, each NUL-terminated, the
 *	list ended by an empty string (so an empty list is one NUL byte).
 * @NPR_PROP_INT_LIST: an array of __s64 through @ptr, @len in bytes.
 */
enum npr_prop_type {
	NPR_PROP_INT		= 1,
	NPR_PROP_BOOL		= 2,
	NPR_PROP_STRING		= 3,
	NPR_PROP_ENUM		= 4,
	NPR_PROP_LIST		= 5,
	NPR_PROP_INT_LIST	= 6,
};

/* NPR_PARAM_PERFORMANCE_HINT */
enum npr_perf_hint {
	NPR_PERF_HINT_LATENCY			= 1,
	NPR_PERF_HINT_THROUGHPUT		= 2,
	NPR_PERF_HINT_CUMULATIVE_THROUGHPUT	= 3,
};

/* NPR_PARAM_LOG_LEVEL, names LOG_NONE ... LOG_TRACE */
enum npr_log_level {
	NPR_LOG_NONE	= 0,
	NPR_LOG_ERROR	= 1,
	NPR_LOG_WARNING	= 2,
	NPR_LOG_INFO	= 3,
	NPR_LOG_DEBUG	= 4,
	NPR_LOG_TRACE	= 5,
};

/* NPR_PARAM_EXECUTION_MODE_HINT */
enum npr_exec_mode {
	NPR_EXEC_MODE_PERFORMANCE	= 1,
	NPR_EXEC_MODE_ACCURACY		= 2,
};

/* NPR_PARAM_MODEL_PRIORITY */
enum npr_priority {
	NPR_PRIORITY_LOW	= 1,
	NPR_PRIORITY_MEDIUM	= 2,
	NPR_PRIORITY_HIGH	= 3,
};

/* NPR_PARAM_CACHE_MODE */
enum npr_cache_mode {
	NPR_CACHE_MODE_OPTIMIZE_SPEED	= 1,	/* the default: weights inside */
	NPR_CACHE_MODE_OPTIMIZE_SIZE	= 2,	/* weightless */
};

/* NPR_PARAM_WORKLOAD_TYPE (npu): the command queue's workload type */
enum npr_workload {
	NPR_WORKLOAD_DEFAULT	= 1,
	NPR_WORKLOAD_EFFICIENT	= 2,	/* the driver's BACKGROUND */
};

/*
 * NPR_PARAM_NPU_COMPILER_TYPE (npu): which compiler compiles; npuring
 * has the driver's only (PLUGIN is refused with -EOPNOTSUPP).
 */
enum npr_npu_compiler {
	NPR_NPU_COMPILER_DRIVER	= 1,
	NPR_NPU_COMPILER_PLUGIN	= 2,
};

/* NPR_PARAM_DEVICE_TYPE, names "integrated" and "discrete" */
enum npr_device_kind {
	NPR_DEVICE_KIND_INTEGRATED	= 1,
	NPR_DEVICE_KIND_DISCRETE	= 2,
};

/* NPR_PARAM_NUM_STREAMS: a count >= 1, or this */
#define NPR_NUM_STREAMS_AUTO	(-1)

/* Longest string property value, NUL included. */
#define NPR_PROP_STR_MAX	4096

/**
 * struct npr_param - NPR_IOCTL_GET_PARAM, NPR_IOCTL_SET_PARAM
 * @size: In. sizeof(struct npr_param).
 * @flags: In. Must be 0.
 * @handle: In. 0 for the device, or an exec handle for a compiled model.
 * @param: In. enum npr_param_id.
 * @value: In/Out. Integer, boolean or enum value (enum npr_prop_type).
 * @ptr: In. User buffer for string, list and enum-name values (GET:
 *       filled; SET: read).  Must be 0 for integer and boolean values.
 * @len: In/Out. Size of @ptr in bytes.  On GET, set to the needed size
 *       (terminating NULs included); -EMSGSIZE if @ptr is too small.  On
 *       SET of a string, the string's NUL must lie within @len.
 * @type: In. 0, or the enum npr_prop_type the caller expects: a
 *        different type fails with -EPROTOTYPE.  Out. The property's type.
 *
 * Errors: -ENOPROTOOPT for an unknown property or one that does not
 * exist in the handle's scope, -EPERM for writing a read-only property or
 * any property of a compiled model, -EPROTOTYPE for the wrong type,
 * -ERANGE for a number out of range, -EINVAL for an unknown enum name or
 * a malformed value.
 */
struct npr_param {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 param;
	__u64 value;
	__u64 ptr;
	__u32 len;
	__u32 type;
};
_Static_assert(sizeof(struct npr_param) == 40, "npr_param ABI");

/**
 * struct npr_prop_info - NPR_IOCTL_PROP_INFO: describe one property
 * @size: In. sizeof(struct npr_prop_info).
 * @flags: In. 0: describe the @index'th property the handle supports
 *         (-ENOENT past the last one); NPR_PROP_INFO_BY_ID: describe @id;
 *         NPR_PROP_INFO_BY_NAME: describe the property named @name.
 * @handle: In. 0 for the device, or an exec handle.
 * @index: In. Position in the handle's list of supported properties.
 * @id: In (BY_ID) / Out. enum npr_param_id.
 * @type: Out. enum npr_prop_type.
 * @access: Out. NPR_PROP_ACCESS_* bits.
 * @reserved: Must be 0.
 * @name: In (BY_NAME, NUL-terminated) / Out. OpenVINO's property name.
 */
struct npr_prop_info {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 index;
	__u32 id;
	__u32 type;
	__u32 access;
	__u32 reserved;
	char name[64];
};
_Static_assert(sizeof(struct npr_prop_info) == 96, "npr_prop_info ABI");

#define NPR_PROP_INFO_BY_ID	(1U << 0)
#define NPR_PROP_INFO_BY_NAME	(1U << 1)

#define NPR_PROP_ACCESS_RW	(1U << 0)	/* writable on the device */
#define NPR_PROP_ACCESS_COMPILE	(1U << 1)	/* accepted by COMPILE */
#define NPR_PROP_ACCESS_CACHING	(1U << 2)	/* part of the cache key */

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
 *
 * With NPR_MODEL_LOAD_DEFER (paths only, not with NPR_MODEL_LOAD_MEMORY)
 * the files are only opened and stat'ed: a file that cannot be opened
 * fails here as without the flag, but the model is read and parsed at the
 * first command that needs it (MODEL_INFO, PORT_INFO, QUERY_MODEL,
 * MAKE_STATEFUL, COMPILE), whose errors are then those the load would
 * have given.  With a CACHE_DIR, COMPILE of such a handle keys the cache
 * entry by the files' identity (absolute path, device, inode, size and
 * modification time) instead of their contents, so that a hit reads
 * neither file; a file changed on disk is a miss.
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
#define NPR_MODEL_LOAD_DEFER	(1U << 1)

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
 * @exec_bytes: Out (version 2, size 48). On an exec handle: the bytes the
 *              compiled model itself holds, its owned weights (constants
 *              folded or copied at COMPILE, weights packed by the
 *              backend).  Weights still mapped from the model file are not
 *              counted.  0 on a model handle.
 * @request_bytes: Out (version 2). On an exec handle: the most bytes
 *                 NPR_IOCTL_REQ_CREATE allocates for one request of it
 *                 (activations, state, the port buffers, bookkeeping).
 *                 Outputs whose shape depends on input values are counted
 *                 as empty; INFER grows them.  0 on a model handle.
 *
 * COMPILE refuses a model whose @exec_bytes plus @request_bytes exceed
 * NPR_PARAM_NPR_MAX_MODEL_MEMORY_MB with -EFBIG (see there).
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
	__u64 exec_bytes;
	__u64 request_bytes;
};
_Static_assert(sizeof(struct npr_model_info) == 48, "npr_model_info ABI");

/**
 * struct npr_port_info - NPR_IOCTL_PORT_INFO
 * @size: In. sizeof(struct npr_port_info).
 * @flags: In. NPR_PORT_OUTPUT selects outputs, else inputs.
 * @handle: In. Model or exec handle.
 * @index: In. Port index, < num_inputs or num_outputs.
 * @elem_type: Out. enum npr_elem_type the caller reads or writes.
 * @rank: Out. Number of dimensions.
 * @dims: Out. Dimensions; -1 for a dynamic dimension of a model or of
 *        an exec (an input's dynamic dimension, and what depends on it).
 *        An output of an exec whose rank depends on input values has
 *        rank 0 and dims[0] = -1 (GET_TENSOR gives each inference's
 *        shape).
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
 * @dims: Dimensions, each >= 0 (0: an empty tensor), or -1 for a dynamic
 *        dimension: each request's SET_TENSOR gives it (cpu device).
 */
struct npr_shape_arg {
	__u32 index;
	__u32 rank;
	__s64 dims[NPR_MAX_RANK];
};
_Static_assert(sizeof(struct npr_shape_arg) == 72, "npr_shape_arg ABI");

/**
 * struct npr_shape_range - one input shape with bounds, for
 * NPR_IOCTL_COMPILE with NPR_COMPILE_SHAPE_RANGES
 * @index: Input port index.
 * @rank: Number of dimensions, 1..NPR_MAX_RANK.
 * @lo: Per dimension the smallest size, 0..2^31; 0 past @rank.
 * @hi: Per dimension the largest size, @lo..2^31, or -1 for no upper
 *      bound; 0 past @rank.  @lo == @hi makes the dimension static; any
 *      other pair makes it dynamic, and SET_TENSOR refuses a size outside
 *      [@lo, @hi] with -EINVAL (OpenVINO's Dimension(lo, hi)).
 */
struct npr_shape_range {
	__u32 index;
	__u32 rank;
	__s64 lo[NPR_MAX_RANK];
	__s64 hi[NPR_MAX_RANK];
};
_Static_assert(sizeof(struct npr_shape_range) == 136, "npr_shape_range ABI");

/**
 * struct npr_prop_arg - one property for NPR_IOCTL_COMPILE
 * @param: enum npr_param_id of a property with NPR_PROP_ACCESS_COMPILE.
 * @reserved: Must be 0.
 * @value: Integer, boolean or enum value; for a string property a pointer
 *         to a NUL-terminated string of at most NPR_PROP_STR_MAX bytes.
 *
 * Checked like NPR_IOCTL_SET_PARAM (same errnos); the values override
 * the device's for the compiled model only.
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
 * @flags: In. 0 or NPR_COMPILE_SHAPE_RANGES.
 * @model: In. Model handle.
 * @exec: Out. Exec (compiled model) handle.
 * @shapes: In. Pointer to @num_shapes struct npr_shape_arg (struct
 *          npr_shape_range with NPR_COMPILE_SHAPE_RANGES), or 0.
 * @props: In. Pointer to @num_props struct npr_prop_arg, or 0.
 * @num_shapes: In. Entries in @shapes (at most one per input).
 * @num_props: In. Entries in @props.
 *
 * The exec keeps what it needs of the model; the model may be destroyed
 * afterwards.  -EFBIG when the compiled model and one request of it would
 * need more memory than NPR_PARAM_NPR_MAX_MODEL_MEMORY_MB, or a tensor's
 * size does not fit in the address space; the message names the largest
 * tensor (name, shape, bytes) and the limit.
 *
 * Dynamic shapes: an input keeps the dimensions the model declares
 * dynamic unless a shape fixes them, and a shape may make a dimension
 * dynamic (-1, or a range).  Each request then gives its inputs' shapes
 * with NPR_IOCTL_SET_TENSOR (or BO_BIND) and reads its outputs' with
 * NPR_IOCTL_GET_TENSOR; PORT_INFO reports -1 for such dimensions.  Only
 * the cpu device runs them (-EOPNOTSUPP elsewhere); such an exec cannot
 * be exported nor cached (-EOPNOTSUPP, and the cache skips it).
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

/* @shapes points to struct npr_shape_range entries (bounded dimensions) */
#define NPR_COMPILE_SHAPE_RANGES	(1U << 0)

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
 *         destroyed or the port is rebound; for a port with a dynamic
 *         shape, also until its shape changes (a SET_TENSOR of a larger
 *         input, an INFER giving a larger output may move the buffer).
 * @req: In. Request handle.
 * @index: In. Port index.
 * @elem_type: In (SET: must equal the port's type) / Out (GET).
 * @rank: In (SET: must equal the compiled rank) / Out (GET; for an
 *        output whose shape depends on input values, that of the last
 *        inference).
 * @dims: In (SET: must equal the compiled dims; a dynamic dimension of
 *        an input takes any size within its bounds, 0 included, which
 *        this request's inferences then use) / Out (GET; -1 for a
 *        dynamic input dimension before any SET_TENSOR).
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
 *
 * With the compiled model's NPR_PARAM_NPR_INFER_TIMEOUT_MS set, an
 * inference that takes longer fails with -ETIME (the times still go
 * back); its outputs are then unspecified and a stateful model's
 * variables unchanged.
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
 * @user_data: In. With NPR_GET_ERROR_JOB: the failed ring job's
 *             user_data; else must be 0.  (Appended: version 0 of the
 *             struct ends before it.)
 *
 * Reads the calling thread's last failure detail; GET_ERROR itself does
 * not replace it.  A @buf shorter than the message is filled with a
 * truncated, NUL-terminated copy and the call returns -EMSGSIZE.
 *
 * With NPR_GET_ERROR_JOB it reads instead the message of the most recent
 * ring job of this fd with @user_data that completed with res < 0 (@err
 * is that res).  The ring remembers the last cq_entries such failures;
 * -ENOENT when none with @user_data is remembered.
 */
struct npr_get_error {
	__u32 size;
	__u32 flags;
	__u64 buf;
	__u32 len;
	__s32 err;
	__u64 user_data;
};
_Static_assert(sizeof(struct npr_get_error) == 32, "npr_get_error ABI");

#define NPR_GET_ERROR_JOB	(1U << 0)

/**
 * struct npr_state_arg - NPR_IOCTL_STATE_INFO, _GET, _SET and _RESET:
 * the variables of a request of a stateful model
 * @size: In. sizeof(struct npr_state_arg).
 * @flags: In. RESET: NPR_STATE_RESET_ALL resets every variable (@index
 *         is then ignored); SET: NPR_STATE_TRUNCATE; 0 elsewhere.
 * @req: In. Request handle.
 * @index: In. Variable index, below @count (-ENOENT otherwise: walk
 *         STATE_INFO from 0 until -ENOENT to list the variables).
 * @count: Out (on success). Number of variables of the request's compiled
 *         model.
 * @elem_type: Out (INFO, GET) / In (SET: must equal the variable's).
 *             Floating-point variables are held in f32.
 * @rank: Out / In (SET: must equal the variable's).
 * @name_len: In/Out. INFO: size of @name; set to the needed size with the
 *            NUL (-EMSGSIZE when too small; 0 asks for the size).
 * @dims: Out / In (SET: must equal the variable's).
 * @name: In. INFO: user buffer for the variable_id.
 * @data: In. GET: buffer to fill; SET: the new value.
 * @bytes: In. GET: size of @data, at least the value's (-EMSGSIZE, size
 *         written back); SET: exactly the value's size.  Out: the size.
 *
 * Each request has its own copy of every variable.  Before the first
 * inference and after RESET, a variable holds its ReadValue's initial
 * value (zeros when it has none); each successful INFER stores what the
 * variable's Assign computed.  SET replaces the value used by the next
 * inference.  None of these may run while the request is inferring.
 *
 * A variable with a dynamic dimension (NPR_MAKE_STATEFUL_PATTERN: a KV
 * cache) reports -1 there in INFO's @dims and its current length in
 * GET's; SET takes any length there (the others must be equal), RESET
 * empties it.  SET with NPR_STATE_TRUNCATE keeps the first @dims[axis]
 * positions along that dimension, at most the current length (rolling
 * back rejected tokens): @dims is the new shape, @data and @bytes are
 * ignored; -EINVAL for a variable without a dynamic dimension.
 */
struct npr_state_arg {
	__u32 size;
	__u32 flags;
	__u32 req;
	__u32 index;
	__u32 count;
	__u32 elem_type;
	__u32 rank;
	__u32 name_len;
	__s64 dims[NPR_MAX_RANK];
	__u64 name;
	__u64 data;
	__u64 bytes;
};
_Static_assert(sizeof(struct npr_state_arg) == 120, "npr_state_arg ABI");

#define NPR_STATE_RESET_ALL	(1U << 0)
#define NPR_STATE_TRUNCATE	(1U << 1)

/**
 * struct npr_export - NPR_IOCTL_EXPORT: a compiled model as a blob
 * @size: In. sizeof(struct npr_export).
 * @flags: In. Must be 0.
 * @exec: In. Exec handle.
 * @reserved: Must be 0.
 * @data: In. User buffer for the blob, or 0 to ask for its size.
 * @bytes: In. Size of @data.  Out. Size of the blob (-EMSGSIZE when
 *         @data is too small).
 *
 * The blob (format in Documentation/blob.rst) holds the compiled graph,
 * the compiled model's properties and its ports; it imports on a device
 * of the same backend and architecture with the same library version.
 */
struct npr_export {
	__u32 size;
	__u32 flags;
	__u32 exec;
	__u32 reserved;
	__u64 data;
	__u64 bytes;
};
_Static_assert(sizeof(struct npr_export) == 32, "npr_export ABI");

/**
 * struct npr_import - NPR_IOCTL_IMPORT: a compiled model from a blob
 * @size: In. sizeof(struct npr_import).
 * @flags: In. Must be 0.
 * @data: In. The blob.
 * @bytes: In. Its size.
 * @exec: Out. Exec handle.
 * @reserved: Must be 0.
 *
 * The blob is copied; it may be freed when the call returns.
 *
 * Errors: -ENOEXEC (not a blob), -EPROTONOSUPPORT (another blob format
 * or library version, or weights packed for another kernel layout),
 * -ENODEV (another backend or architecture),
 * -EBADMSG (truncated, or the checksum does not match), -EINVAL (a
 * payload that is not a valid compiled model).
 */
struct npr_import {
	__u32 size;
	__u32 flags;
	__u64 data;
	__u64 bytes;
	__u32 exec;
	__u32 reserved;
};
_Static_assert(sizeof(struct npr_import) == 32, "npr_import ABI");

/**
 * enum npr_prof_status - what happened to a node in the last inference
 * @NPR_PROF_NOT_RUN: no inference yet.
 * @NPR_PROF_EXECUTED: its kernel ran.
 * @NPR_PROF_OPTIMIZED_OUT: removed at compile time (folded into a
 *	constant, unused) or fused into another node's kernel.
 */
enum npr_prof_status {
	NPR_PROF_NOT_RUN	= 0,
	NPR_PROF_EXECUTED	= 1,
	NPR_PROF_OPTIMIZED_OUT	= 2,
};

/**
 * struct npr_profile_rec - one node of a profile
 * @name: the node's name in the original model (cut to 63 bytes).
 * @type: its op type.
 * @kernel: the kernel the backend ran ("ref", "gemm_avx512", ...), or ""
 *          when none ran.
 * @status: enum npr_prof_status.
 * @reserved: 0.
 * @real_ns: wall-clock time of the node in the last inference, ns.
 */
struct npr_profile_rec {
	char name[64];
	char type[32];
	char kernel[32];
	__u32 status;
	__u32 reserved;
	__u64 real_ns;
};
_Static_assert(sizeof(struct npr_profile_rec) == 144, "npr_profile_rec ABI");

/**
 * struct npr_profile - NPR_IOCTL_PROFILE: per-node times of a request
 * @size: In. sizeof(struct npr_profile).
 * @flags: In. Must be 0.
 * @req: In. Request handle; its compiled model must have ENABLE_PROFILING
 *       (-ENODATA otherwise).
 * @count: In. Entries in @recs.  Out. Records available (-EMSGSIZE when
 *         more than @count; 0 @recs asks for the number).
 * @recs: In. Pointer to @count struct npr_profile_rec, in execution order.
 */
struct npr_profile {
	__u32 size;
	__u32 flags;
	__u32 req;
	__u32 count;
	__u64 recs;
};
_Static_assert(sizeof(struct npr_profile) == 24, "npr_profile ABI");

/**
 * struct npr_query_model - NPR_IOCTL_QUERY_MODEL: which layers of a model
 * the device supports
 * @size: In. sizeof(struct npr_query_model).
 * @flags: In. Must be 0.
 * @model: In. Model handle.
 * @num_layers: Out. Layers in the model (Parameters, Constants and
 *              Results included).
 * @num_supported: Out. Of those, the ones the device supports.
 * @len: In. Size of @names.  Out. Size needed (-EMSGSIZE when larger than
 *       the buffer; 0 @names asks for it).
 * @names: In. User buffer for the supported layers' names, each
 *         NUL-terminated, the list ended by an empty string.
 *
 * Computed after the pipeline COMPILE runs, on the model's own shapes: a
 * layer folded into a constant is supported.  A Parameter or Constant is
 * listed only when every layer it feeds is, a Result only when the layer
 * feeding it is.
 */
struct npr_query_model {
	__u32 size;
	__u32 flags;
	__u32 model;
	__u32 num_layers;
	__u32 num_supported;
	__u32 len;
	__u64 names;
};
_Static_assert(sizeof(struct npr_query_model) == 32, "npr_query_model ABI");

/**
 * struct npr_bo_create - NPR_IOCTL_BO_CREATE: a buffer object of the
 * device (the memory behind a remote tensor)
 * @size: In. sizeof(struct npr_bo_create).
 * @flags: In. Must be 0.
 * @bytes: In. Size, 1 .. 2^40 bytes; zero-filled.
 * @handle: Out. BO handle.
 * @reserved: Must be 0.
 *
 * On the cpu device a BO is shared memory (a memfd) mapped into the
 * process; NPR_IOCTL_BO_INFO gives its address and, on request, a file
 * descriptor of it to mmap elsewhere or pass to another process.  On the
 * npu device it is memory of the NPU driver (zeMemAllocHost), without a
 * file descriptor (NPR_BO_INFO_FD: -EOPNOTSUPP); bound to a port it is
 * the graph's argument itself, read and written without a copy, while
 * SET_TENSOR memory, bound or not, is copied.
 */
struct npr_bo_create {
	__u32 size;
	__u32 flags;
	__u64 bytes;
	__u32 handle;
	__u32 reserved;
};
_Static_assert(sizeof(struct npr_bo_create) == 24, "npr_bo_create ABI");

/**
 * struct npr_bo_info - NPR_IOCTL_BO_INFO
 * @size: In. sizeof(struct npr_bo_info).
 * @flags: In. NPR_BO_INFO_FD: also return a new file descriptor of the
 *         memory in @fd (close-on-exec; the caller closes it).
 * @handle: In. BO handle.
 * @bound: Out. Request ports the BO is bound to.
 * @bytes: Out. Its size.
 * @addr: Out. Its address in this process.
 * @fd: Out. With NPR_BO_INFO_FD the descriptor, else -1.
 * @reserved: Must be 0.
 */
struct npr_bo_info {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 bound;
	__u64 bytes;
	__u64 addr;
	__s32 fd;
	__u32 reserved;
};
_Static_assert(sizeof(struct npr_bo_info) == 40, "npr_bo_info ABI");

#define NPR_BO_INFO_FD		(1U << 0)

/**
 * struct npr_bo_bind - NPR_IOCTL_BO_BIND: a remote tensor on a request
 * port, without copies
 * @size: In. sizeof(struct npr_bo_bind).
 * @flags: In. NPR_PORT_OUTPUT selects an output port, else an input.
 * @req: In. Request handle.
 * @index: In. Port index.
 * @bo: In. BO handle of the same fd.
 * @elem_type: In. Must equal the port's element type.
 * @rank: In. Must equal the port's rank.
 * @reserved: Must be 0.
 * @dims: In. Must equal the port's dims (an input's dynamic dimension: any
 *        size within its bounds, which sets the input's shape).
 * @strides: In. Byte strides per dimension, all 0 for dense; others must
 *           be the dense ones (the devices read dense tensors).
 * @offset: In. Byte offset of the tensor in the BO, a multiple of the
 *          element size; offset + tensor size must fit in the BO
 *          (-ERANGE).
 *
 * The request holds the BO until the port is set again or the request is
 * destroyed, even if the BO's handle is destroyed meanwhile.  Inference
 * reads inputs from and writes outputs to the BO directly; GET_TENSOR with
 * NPR_TENSOR_MAP returns its address.
 */
struct npr_bo_bind {
	__u32 size;
	__u32 flags;
	__u32 req;
	__u32 index;
	__u32 bo;
	__u32 elem_type;
	__u32 rank;
	__u32 reserved;
	__s64 dims[NPR_MAX_RANK];
	__s64 strides[NPR_MAX_RANK];
	__u64 offset;
};
_Static_assert(sizeof(struct npr_bo_bind) == 168, "npr_bo_bind ABI");

/**
 * struct npr_state_pair - one explicit state of NPR_IOCTL_MAKE_STATEFUL
 * @input: In. Pointer to the NUL-terminated name of the input carrying
 *         the state into the model (its tensor name, or its layer name).
 * @output: In. Pointer to the name of the output carrying it out.
 */
struct npr_state_pair {
	__u64 input;
	__u64 output;
};
_Static_assert(sizeof(struct npr_state_pair) == 16, "npr_state_pair ABI");

/**
 * struct npr_make_stateful - NPR_IOCTL_MAKE_STATEFUL: turn explicit state
 * inputs and outputs of a model into variables
 * @size: In. sizeof(struct npr_make_stateful); 24 (without @shapes,
 *        @num_shapes and @reserved) is accepted too.
 * @flags: In. 0 or NPR_MAKE_STATEFUL_PATTERN.
 * @model: In. Model handle; changed in place.
 * @count: In. Entries in @pairs, 1 .. 1024; 1 with
 *         NPR_MAKE_STATEFUL_PATTERN.
 * @pairs: In. Pointer to @count struct npr_state_pair.  With
 *         NPR_MAKE_STATEFUL_PATTERN one pair of name patterns, each with
 *         exactly one '*' standing for a non-empty string:
 *         "past_key_values.*" and "present.*" pair every input
 *         past_key_values.X with the output present.X (-ENOENT when no
 *         input matches or a matching input has no such output).
 * @shapes: In. Pointer to @num_shapes struct npr_shape_arg, or 0: input
 *          shapes as NPR_IOCTL_COMPILE takes them (indexes of the model's
 *          inputs before this call).  A pair's input takes its shape, so
 *          that a model declaring a symbolic dimension (an ONNX batch)
 *          gets static variables; every shape must fit the declared one.
 * @num_shapes: In. Entries in @shapes (at most one per input).
 * @reserved: In. Must be 0.
 *
 * Each pair's input becomes a ReadValue (initial value zeros) and its
 * output an Assign of one variable named after the input, so that the
 * model's callers no longer pass the state around: it stays in each
 * request (NPR_IOCTL_STATE_*).  The pair's input and output must have
 * the same element type and shape, and the input's shape (declared or
 * given in @shapes) must be static (-EINVAL otherwise).  Nothing changes
 * unless every pair is valid.
 *
 * NPR_MAKE_STATEFUL_PATTERN is the stateful conversion of a language
 * model's KV cache (as OpenVINO's of optimum exports): the pairs are
 * found by name and the variables keep their dynamic dimensions, but a
 * dynamic first one (the batch), which is 1 unless @shapes gives it
 * (dims of @shapes may then be -1: dynamic).  COMPILE requires each such
 * variable to have one dynamic dimension left and its output to append
 * to it, present = Concat(past, new) along that dimension: each INFER
 * then appends the new part to the request's copy in storage reserved
 * ahead (grown geometrically), and STATE_SET with NPR_STATE_TRUNCATE
 * shortens it.  The variable starts empty (0 along that dimension).
 */
struct npr_make_stateful {
	__u32 size;
	__u32 flags;
	__u32 model;
	__u32 count;
	__u64 pairs;
	__u64 shapes;
	__u32 num_shapes;
	__u32 reserved;
};
_Static_assert(sizeof(struct npr_make_stateful) == 40, "npr_make_stateful ABI");

#define NPR_MAKE_STATEFUL_PATTERN	(1U << 0)

/* ---- the ring: asynchronous jobs (ioctls 0x0d..0x0f) ------------------- */

/**
 * enum npr_op - job opcodes of struct npr_sqe
 * @NPR_OP_NOP: complete with res 0.  With @len > 0 a worker sleeps @len
 *              microseconds first (at most 10 s): a job of known length
 *              for tests and measurements.  A deadline that passes during
 *              the sleep ends it with -ETIME (status NPR_JOB_EXPIRED).
 * @NPR_OP_INFER: run request @handle; res 0 or -errno.  Past its deadline
 *                it completes with -ETIME, status NPR_JOB_EXPIRED, its
 *                result discarded as with NPR_PARAM_NPR_INFER_TIMEOUT_MS:
 *                the cpu device stops at the next node boundary; on the
 *                npu device it completes at the deadline, and the
 *                request stays busy (-EBUSY to SUBMIT, HANDLE_DESTROY)
 *                until the device is done with its buffers; other devices
 *                when the inference ends.  An npu job holds no worker
 *                while on the device: the jobs in flight are not capped
 *                by the ring's workers.
 * @NPR_OP_COMPILE: compile model @handle with defaults; res is the new
 *                  exec handle (> 0) or -errno.
 * @NPR_OP_LOAD: load the IR model whose NUL-terminated .xml path is at
 *               @addr (copied at submission); res is the model handle.
 *               The .xml and its .bin (the path with .xml replaced) are
 *               read into memory with IORING_OP_READs on the worker's
 *               own io_uring (pread on the fallback path); an .onnx
 *               path is loaded as MODEL_LOAD loads it.  On a device with
 *               a CACHE_DIR the job is MODEL_LOAD with
 *               NPR_MODEL_LOAD_DEFER: the files are read only when a
 *               COMPILE misses the cache.
 * @NPR_OP_CANCEL: cancel the job whose user_data equals @addr.  res 0 if
 *                 a queued job was cancelled (it completes with
 *                 -ECANCELED) or a running INFER was asked to stop (it
 *                 completes with -ECANCELED, status NPR_JOB_CANCELED, when
 *                 its backend stops it early: the CPU backend checks
 *                 between nodes; on the npu device it completes at once,
 *                 its result discarded, the request busy until the device
 *                 is done with it; else normally), -EALREADY if another
 *                 kind of job is running, or an npu INFER whose result is
 *                 being completed (it completes normally), -ENOENT if no
 *                 such job is in flight.
 * @NPR_OP_IMPORT: NPR_IOCTL_IMPORT as a job: @addr points at a struct
 *                 npr_import; res is the new exec handle (> 0).
 * @NPR_OP_EXPORT: NPR_IOCTL_EXPORT as a job: @addr points at a struct
 *                 npr_export; res 0, the blob's size in its @bytes.
 * @NPR_OP_STATE_GET: NPR_IOCTL_STATE_GET as a job: @addr points at a
 *                    struct npr_state_arg; res 0.
 * @NPR_OP_STATE_SET: NPR_IOCTL_STATE_SET as a job, the same way.
 * @NPR_OP_STATE_RESET: NPR_IOCTL_STATE_RESET as a job, the same way.
 *
 * The argument struct of IMPORT, EXPORT and the STATE jobs is copied and
 * checked at submission like the ioctl's (size, flags, reserved fields;
 * a STATE job's request handle too: it is held, like INFER's, until the
 * job completes).  The struct and the buffers it points at must stay
 * valid until the completion: its Out fields are written back before the
 * completion is posted, also on failure (-EMSGSIZE: the needed size).
 */
enum npr_op {
	NPR_OP_NOP		= 0,
	NPR_OP_INFER		= 1,
	NPR_OP_COMPILE		= 2,
	NPR_OP_LOAD		= 3,
	NPR_OP_CANCEL		= 4,
	NPR_OP_IMPORT		= 5,
	NPR_OP_EXPORT		= 6,
	NPR_OP_STATE_GET	= 7,
	NPR_OP_STATE_SET	= 8,
	NPR_OP_STATE_RESET	= 9,
	NPR_OP_MAX,
};

/**
 * struct npr_sqe - one job, an element of NPR_IOCTL_SUBMIT's array
 * @opcode: enum npr_op.
 * @flags: NPR_SQE_*.
 * @reserved0: Must be 0.
 * @handle: Request (INFER) or model (COMPILE) handle; 0 otherwise.
 * @user_data: Copied unchanged into the job's completion.
 * @addr: LOAD: path pointer; CANCEL: user_data of the target; IMPORT,
 *        EXPORT, STATE_*: pointer to the argument struct; else 0.
 * @len: NOP: microseconds to sleep on a worker (<= 10000000); else 0.
 * @reserved1: Must be 0.
 * @deadline_ns: Absolute CLOCK_MONOTONIC deadline in ns, 0 for none.  A
 *               job that has not started by then completes with -ETIME
 *               (started_ns == finished_ns); a running INFER or NOP
 *               too (started_ns < finished_ns; see enum npr_op); other
 *               running jobs complete normally.
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
 * @NPR_JOB_CANCELED: cancelled (res -ECANCELED): before it started, or
 *                    an INFER stopped while running.
 * @NPR_JOB_EXPIRED: its deadline passed (res -ETIME): before it started
 *                   (started_ns == finished_ns), or while an INFER or NOP
 *                   ran (its result discarded).
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
 *             (cqe->user_data and cqe->res as the job's; with
 *             NPR_RING_SETUP_RECORDS cqe->flags names the job's record);
 *             else must be 0.
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
 *
 * Flags: NPR_RING_SETUP_FALLBACK forces the eventfd path.
 * NPR_RING_SETUP_ATTACH posts completions into the caller's ring
 * (@attach_fd).  An io_uring CQE has room for user_data and res only: an
 * IORING_OP_MSG_RING posts a 16-byte CQE even into a ring set up with
 * IORING_SETUP_CQE32 (its big_cqe[] words arrive as 0), so status and the
 * three timestamps cannot travel in it.  NPR_RING_SETUP_RECORDS (with
 * ATTACH) keeps them: each completion is also written as a whole struct
 * npr_cqe into one of @cq_entries record slots of the fd, and the CQE's
 * upper 16 flag bits carry the slot (NPR_CQE_RECORD(cqe->flags), which
 * the kernel passes with IORING_MSG_RING_FLAGS_PASS, Linux 6.3).  The
 * caller takes the record with NPR_IOCTL_RING_RECORD, which frees the
 * slot; until then the job counts as in flight, so a caller that never
 * takes its records meets -EBUSY at SUBMIT after @cq_entries jobs, as a
 * caller of the fd's own ring that never reaps.  A kernel without
 * IORING_MSG_RING_FLAGS_PASS fails RING_SETUP with -EOPNOTSUPP (plain
 * ATTACH still works there).  The caller's ring may have 16- or 32-byte
 * CQEs.
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
#define NPR_RING_SETUP_RECORDS	(1U << 2)

/*
 * With NPR_RING_SETUP_RECORDS, the record slot of a completion posted into
 * the caller's ring: the CQE's flags >> NPR_CQE_RECORD_SHIFT (the flag
 * bits below stay 0, so IORING_CQE_F_BUFFER and the others are clear).
 * NPR_CQE_NO_RECORD: the job has no record, because it completed while
 * the fd was closing (its res says how: -ECANCELED if it never ran).
 */
#define NPR_CQE_RECORD_SHIFT	16
#define NPR_CQE_NO_RECORD	0xffffU
#define NPR_CQE_RECORD(cqe_flags)	((__u32)(cqe_flags) >> NPR_CQE_RECORD_SHIFT)

/**
 * struct npr_ring_record - NPR_IOCTL_RING_RECORD: take a completion's record
 * @size: In. sizeof(struct npr_ring_record).
 * @flags: In. Must be 0.
 * @slot: In. NPR_CQE_RECORD() of the completion's io_uring CQE.
 * @reserved: Must be 0.
 * @user_data: In. The CQE's user_data: a check that @slot is this job's.
 * @cqe: Out. The whole completion: res, status, queued_ns, started_ns and
 *       finished_ns as NPR_IOCTL_REAP gives them.
 *
 * Only with NPR_RING_SETUP_RECORDS (else -EINVAL).  The record is copied
 * out and its slot freed, so each record is taken once: -ENOENT when
 * @slot holds no record or another job's (taken already, or a wrong
 * slot); -EINVAL for @slot NPR_CQE_NO_RECORD or out of range.  Records
 * may be taken in any order and from any thread.
 */
struct npr_ring_record {
	__u32 size;
	__u32 flags;
	__u32 slot;
	__u32 reserved;
	__u64 user_data;
	struct npr_cqe cqe;
};
_Static_assert(sizeof(struct npr_ring_record) == 72, "npr_ring_record ABI");

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
#define NPR_IOCTL_PROP_INFO		_IOWR('N', 0x10, struct npr_prop_info)
#define NPR_IOCTL_STATE_INFO		_IOWR('N', 0x11, struct npr_state_arg)
#define NPR_IOCTL_STATE_GET		_IOWR('N', 0x12, struct npr_state_arg)
#define NPR_IOCTL_STATE_SET		_IOWR('N', 0x13, struct npr_state_arg)
#define NPR_IOCTL_STATE_RESET		_IOWR('N', 0x14, struct npr_state_arg)
#define NPR_IOCTL_EXPORT		_IOWR('N', 0x15, struct npr_export)
#define NPR_IOCTL_IMPORT		_IOWR('N', 0x16, struct npr_import)
#define NPR_IOCTL_PROFILE		_IOWR('N', 0x17, struct npr_profile)
#define NPR_IOCTL_QUERY_MODEL		_IOWR('N', 0x18, struct npr_query_model)
#define NPR_IOCTL_BO_CREATE		_IOWR('N', 0x19, struct npr_bo_create)
#define NPR_IOCTL_BO_INFO		_IOWR('N', 0x1a, struct npr_bo_info)
#define NPR_IOCTL_BO_BIND		_IOWR('N', 0x1b, struct npr_bo_bind)
#define NPR_IOCTL_MAKE_STATEFUL		_IOWR('N', 0x1c, struct npr_make_stateful)
#define NPR_IOCTL_RING_SETUP		_IOWR('N', 0x0d, struct npr_ring_setup)
#define NPR_IOCTL_SUBMIT		_IOWR('N', 0x0e, struct npr_submit)
#define NPR_IOCTL_REAP			_IOWR('N', 0x0f, struct npr_reap)
#define NPR_IOCTL_RING_RECORD		_IOWR('N', 0x1f, struct npr_ring_record)

#ifdef NPR_UAPI_STATIC_ASSERT
#undef _Static_assert
#undef NPR_UAPI_STATIC_ASSERT
#endif

#endif /* _UAPI_NPURING_H */
