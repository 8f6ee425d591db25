/* SPDX-License-Identifier: MIT */
/*
 * The Level Zero NPU graph extension ABI, declared for npuring from the
 * published tables of names, field orders and values (see
 * Documentation/npu.rst).  The core Level Zero API comes from the system's
 * <level_zero/ze_api.h> (loader API 1.4).
 *
 * Only the parts npu/ and npu/vnpu/ use are declared: the function table
 * up to slot 22 (extension version 1.8), the structures those slots take,
 * and the identifiers of the NPU driver.
 */
#ifndef NPR_ZE_GRAPH_H
#define NPR_ZE_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <level_zero/ze_api.h>

/* Extension name; drivers also list (and accept) "..._1_2" to "..._1_8". */
#define NPR_ZE_GRAPH_EXT_NAME		"ZE_extension_graph"

/* Extension versions: (1 << 16) | minor. */
#define NPR_ZE_GRAPH_VERSION(minor)	((1u << 16) | (minor))
#define NPR_ZE_GRAPH_VERSION_1_8	NPR_ZE_GRAPH_VERSION(8)
/* The version npuring needs: Create2, GetNativeBinary, GetProperties. */
#define NPR_ZE_GRAPH_VERSION_MIN	NPR_ZE_GRAPH_VERSION(5)

/*
 * The NPU command-queue extension, version 1.0: a queue descriptor's
 * pNext may carry { stype 0x1, pNext, ze_bool_t turbo }; its table has
 * one entry, SetWorkloadType(queue, DEFAULT 0 / BACKGROUND 1).
 */
#define NPR_ZE_CQ_NPU_EXT_NAME		"ZE_extension_command_queue_npu"
#define NPR_ZE_CQ_NPU_VERSION_1_0	((1u << 16) | 0)
#define NPR_ZE_STYPE_COMMAND_QUEUE_DESC_NPU	0x1

struct npr_ze_command_queue_desc_npu {
	uint32_t stype;
	const void *pNext;
	ze_bool_t turbo;
};

struct npr_ze_command_queue_npu_ddi {
	ze_result_t (*pfnSetWorkloadType)(ze_command_queue_handle_t, uint32_t);
};

/*
 * zeInitDrivers (loader 1.18 and newer; not in the 1.4 headers): its
 * descriptor and the driver type flag of NPU drivers.
 */
#define NPR_ZE_STYPE_INIT_DRIVER_TYPE_DESC	0x00020021
#define NPR_ZE_INIT_DRIVER_TYPE_GPU		(1u << 0)
#define NPR_ZE_INIT_DRIVER_TYPE_NPU		(1u << 1)

struct npr_ze_init_driver_type_desc {
	uint32_t stype;
	const void *pNext;
	uint32_t flags;
};

/* Workload types of SetWorkloadType. */
enum {
	NPR_ZE_WORKLOAD_DEFAULT		= 0,
	NPR_ZE_WORKLOAD_BACKGROUND	= 1,
};

typedef struct npr_ze_graph *npr_ze_graph_handle_t;

/*
 * The graph profiling extension, version 1.0: a pool of queries per
 * graph (a graph created with NPR_ZE_GRAPH_FLAG_ENABLE_PROFILING), one
 * query per execute (AppendGraphExecute's profiling query), its data as
 * per-layer records.
 */
#define NPR_ZE_PROFILING_EXT_NAME	"ZE_extension_profiling_data"
#define NPR_ZE_PROFILING_VERSION_1_0	((1u << 16) | 0)

typedef struct npr_ze_prof_pool *npr_ze_prof_pool_handle_t;
typedef struct npr_ze_prof_query *npr_ze_prof_query_handle_t;

/* ProfilingQueryGetData types */
enum {
	NPR_ZE_PROF_LAYER_LEVEL	= 0x1,
	NPR_ZE_PROF_TASK_LEVEL	= 0x2,
	NPR_ZE_PROF_RAW		= 0x4,
};

/* a layer record's status */
enum {
	NPR_ZE_LAYER_NOT_RUN		= 1,
	NPR_ZE_LAYER_OPTIMIZED_OUT	= 2,
	NPR_ZE_LAYER_EXECUTED		= 3,
};

struct npr_ze_profiling_layer_info {
	char name[256];
	char layer_type[50];
	uint32_t status;
	uint64_t start_time_ns;
	uint64_t duration_ns;
	uint32_t layer_id;
	uint64_t fused_layer_id;
	uint64_t dpu_ns;
	uint64_t sw_ns;
	uint64_t dma_ns;
};

_Static_assert(sizeof(struct npr_ze_profiling_layer_info) == 368,
	       "profiling layer info ABI");

struct npr_ze_device_profiling_data_properties {
	uint32_t stype;
	void *pNext;
	uint32_t extensionVersion;
};

struct npr_ze_graph_profiling_ddi {
	ze_result_t (*pfnProfilingPoolCreate)(npr_ze_graph_handle_t, uint32_t,
					      npr_ze_prof_pool_handle_t *);
	ze_result_t (*pfnProfilingPoolDestroy)(npr_ze_prof_pool_handle_t);
	ze_result_t (*pfnProfilingQueryCreate)(npr_ze_prof_pool_handle_t,
		uint32_t, npr_ze_prof_query_handle_t *);
	ze_result_t (*pfnProfilingQueryDestroy)(npr_ze_prof_query_handle_t);
	ze_result_t (*pfnProfilingQueryGetData)(npr_ze_prof_query_handle_t,
		uint32_t, uint32_t *, uint8_t *);
	ze_result_t (*pfnDeviceGetProfilingDataProperties)(ze_device_handle_t,
		struct npr_ze_device_profiling_data_properties *);
	ze_result_t (*pfnProfilingLogGetString)(npr_ze_prof_query_handle_t,
		uint32_t *, char *);
};
typedef struct npr_ze_graph_query *npr_ze_graph_query_handle_t;

/* Structure types.  Callers in use fill the 1.0 values for later structs. */
enum {
	NPR_ZE_STYPE_DEVICE_GRAPH_PROPERTIES	= 0x1,
	NPR_ZE_STYPE_GRAPH_DESC			= 0x2,
	NPR_ZE_STYPE_GRAPH_PROPERTIES		= 0x3,
	NPR_ZE_STYPE_GRAPH_ARGUMENT_PROPERTIES	= 0x4,
	NPR_ZE_STYPE_GRAPH_ARGUMENT_METADATA	= 0x6,
};

/* Graph input formats. */
enum {
	NPR_ZE_GRAPH_FORMAT_NATIVE	= 0x1,
	NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE	= 0x2,
};

/* ze_graph_desc_2_t flags. */
#define NPR_ZE_GRAPH_FLAG_DISABLE_CACHING	(1u << 0)
#define NPR_ZE_GRAPH_FLAG_ENABLE_PROFILING	(1u << 1)
#define NPR_ZE_GRAPH_FLAG_INPUT_PERSISTENT	(1u << 2)

/* Graph init stage (properties v2). */
enum {
	NPR_ZE_GRAPH_STAGE_COMMAND_LIST_INITIALIZE	= 0x1,
	NPR_ZE_GRAPH_STAGE_INITIALIZE			= 0x2,
};

enum {
	NPR_ZE_GRAPH_ARG_INPUT	= 0,
	NPR_ZE_GRAPH_ARG_OUTPUT	= 1,
};

/* Argument precisions. */
enum {
	NPR_ZE_PREC_UNKNOWN	= 0x00,
	NPR_ZE_PREC_FP32	= 0x01,
	NPR_ZE_PREC_FP16	= 0x02,
	NPR_ZE_PREC_UINT16	= 0x03,
	NPR_ZE_PREC_UINT8	= 0x04,
	NPR_ZE_PREC_INT32	= 0x05,
	NPR_ZE_PREC_INT16	= 0x06,
	NPR_ZE_PREC_INT8	= 0x07,
	NPR_ZE_PREC_BIN		= 0x08,
	NPR_ZE_PREC_BF16	= 0x09,
	NPR_ZE_PREC_UINT32	= 0x0A,
	NPR_ZE_PREC_UINT4	= 0x0B,
	NPR_ZE_PREC_INT4	= 0x0C,
	NPR_ZE_PREC_DYNAMIC	= 0x0D,
	NPR_ZE_PREC_BOOLEAN	= 0x0E,
	NPR_ZE_PREC_FP64	= 0x0F,
	NPR_ZE_PREC_UINT64	= 0x10,
	NPR_ZE_PREC_INT64	= 0x11,
};

/* Argument layouts. */
enum {
	NPR_ZE_LAYOUT_ANY	= 0x00,
	NPR_ZE_LAYOUT_NCHW	= 0x01,
	NPR_ZE_LAYOUT_NCDHW	= 0x03,
	NPR_ZE_LAYOUT_C		= 0x60,
	NPR_ZE_LAYOUT_CHW	= 0x80,
	NPR_ZE_LAYOUT_NC	= 0xC1,
	NPR_ZE_LAYOUT_BLOCKED	= 0xC8,
};

/* Metadata element types. */
enum {
	NPR_ZE_META_UNDEFINED = 0, NPR_ZE_META_DYNAMIC, NPR_ZE_META_BOOLEAN,
	NPR_ZE_META_BF16, NPR_ZE_META_F16, NPR_ZE_META_F32, NPR_ZE_META_F64,
	NPR_ZE_META_I4, NPR_ZE_META_I8, NPR_ZE_META_I16, NPR_ZE_META_I32,
	NPR_ZE_META_I64, NPR_ZE_META_U1, NPR_ZE_META_U4, NPR_ZE_META_U8,
	NPR_ZE_META_U16, NPR_ZE_META_U32, NPR_ZE_META_U64,
};

/* Memory query types. */
enum {
	NPR_ZE_GRAPH_MEM_DDR		= 0x1,
	NPR_ZE_GRAPH_MEM_DRIVER_CACHE	= 0x2,
	NPR_ZE_GRAPH_MEM_PROGRAM_CACHE	= 0x3,
};

#define NPR_ZE_ARG_NAME_MAX	256
#define NPR_ZE_ARG_DIMS		5
#define NPR_ZE_META_DIMS	8
#define NPR_ZE_TENSOR_NAMES	32

struct npr_ze_graph_desc {
	uint32_t stype;
	const void *pNext;
	uint32_t format;
	size_t inputSize;
	const uint8_t *pInput;
	const char *pBuildFlags;
};

struct npr_ze_graph_desc_2 {
	uint32_t stype;
	const void *pNext;
	uint32_t format;
	size_t inputSize;
	const uint8_t *pInput;
	const char *pBuildFlags;
	uint32_t flags;
};

struct npr_ze_device_graph_properties {
	uint32_t stype;
	void *pNext;
	uint32_t graphExtensionVersion;
	uint16_t compilerMajor;
	uint16_t compilerMinor;
	uint32_t graphFormatsSupported;
	uint32_t maxOVOpsetVersionSupported;
};

struct npr_ze_device_graph_properties_2 {
	uint32_t stype;
	void *pNext;
	uint32_t graphExtensionVersion;
	uint16_t compilerMajor;
	uint16_t compilerMinor;
	uint32_t graphFormatsSupported;
	uint32_t maxOVOpsetVersionSupported;
	uint32_t elfVersion[3];
	uint32_t runtimeVersion[3];
};

struct npr_ze_graph_properties {
	uint32_t stype;
	void *pNext;
	uint32_t numGraphArgs;
};

struct npr_ze_graph_properties_2 {
	uint32_t stype;
	void *pNext;
	uint32_t numGraphArgs;
	uint32_t initStageRequired;
};

struct npr_ze_graph_argument_properties {
	uint32_t stype;
	void *pNext;
	char name[NPR_ZE_ARG_NAME_MAX];
	uint32_t type;
	uint32_t dims[NPR_ZE_ARG_DIMS];
	uint32_t networkPrecision;
	uint32_t networkLayout;
	uint32_t devicePrecision;
	uint32_t deviceLayout;
};

struct npr_ze_graph_argument_properties_2 {
	struct npr_ze_graph_argument_properties v1;
	float quantReverseScale;
	uint8_t quantZeroPoint;
};

struct npr_ze_graph_argument_properties_3 {
	struct npr_ze_graph_argument_properties_2 v2;
	uint32_t dims_count;
	char debug_friendly_name[NPR_ZE_ARG_NAME_MAX];
	char associated_tensor_names[NPR_ZE_TENSOR_NAMES][NPR_ZE_ARG_NAME_MAX];
	uint32_t associated_tensor_names_count;
};

struct npr_ze_graph_argument_metadata {
	uint32_t stype;
	void *pNext;
	uint32_t type;
	char friendly_name[NPR_ZE_ARG_NAME_MAX];
	uint32_t data_type;
	uint64_t shape[NPR_ZE_META_DIMS];
	uint32_t shape_size;
	char tensor_names[NPR_ZE_TENSOR_NAMES][NPR_ZE_ARG_NAME_MAX];
	uint32_t tensor_names_count;
	char input_name[NPR_ZE_ARG_NAME_MAX];
};

struct npr_ze_graph_memory_query {
	uint64_t total;
	uint64_t allocated;
};

_Static_assert(sizeof(struct npr_ze_graph_desc) == 48, "graph desc ABI");
_Static_assert(sizeof(struct npr_ze_graph_desc_2) == 56, "graph desc 2 ABI");
_Static_assert(sizeof(struct npr_ze_device_graph_properties) == 32,
	       "device graph properties ABI");
_Static_assert(sizeof(struct npr_ze_device_graph_properties_2) == 56,
	       "device graph properties 2 ABI");
_Static_assert(sizeof(struct npr_ze_graph_properties) == 24,
	       "graph properties ABI");
_Static_assert(sizeof(struct npr_ze_graph_properties_2) == 24,
	       "graph properties 2 ABI");
_Static_assert(sizeof(struct npr_ze_graph_argument_properties) == 312,
	       "argument properties ABI");
_Static_assert(sizeof(struct npr_ze_graph_argument_properties_2) == 320,
	       "argument properties 2 ABI");
_Static_assert(offsetof(struct npr_ze_graph_argument_properties_3,
			dims_count) == 320, "argument properties 3 ABI");
_Static_assert(sizeof(struct npr_ze_graph_argument_properties_3) == 8776,
	       "argument properties 3 ABI");
_Static_assert(sizeof(struct npr_ze_graph_argument_metadata) == 8800,
	       "argument metadata ABI");

/*
 * The function table, in slot order.  Slots 0-8 are the frozen 1.0 base;
 * later slots are valid only when the driver's version covers them.
 */
struct npr_ze_graph_ddi {
	/* 1.0 */
	ze_result_t (*pfnCreate)(ze_context_handle_t, ze_device_handle_t,
				 const struct npr_ze_graph_desc *,
				 npr_ze_graph_handle_t *);
	ze_result_t (*pfnDestroy)(npr_ze_graph_handle_t);
	ze_result_t (*pfnGetProperties)(npr_ze_graph_handle_t,
					struct npr_ze_graph_properties *);
	ze_result_t (*pfnGetArgumentProperties)(npr_ze_graph_handle_t, uint32_t,
		struct npr_ze_graph_argument_properties *);
	ze_result_t (*pfnSetArgumentValue)(npr_ze_graph_handle_t, uint32_t,
					   const void *);
	ze_result_t (*pfnAppendGraphInitialize)(ze_command_list_handle_t,
		npr_ze_graph_handle_t, ze_event_handle_t, uint32_t,
		ze_event_handle_t *);
	ze_result_t (*pfnAppendGraphExecute)(ze_command_list_handle_t,
		npr_ze_graph_handle_t, void *profiling_query,
		ze_event_handle_t, uint32_t, ze_event_handle_t *);
	ze_result_t (*pfnGetNativeBinary)(npr_ze_graph_handle_t, size_t *,
					  uint8_t *);
	ze_result_t (*pfnDeviceGetGraphProperties)(ze_device_handle_t,
		struct npr_ze_device_graph_properties *);
	/* 1.1 */
	ze_result_t (*pfnGraphGetArgumentMetadata)(npr_ze_graph_handle_t,
		uint32_t, struct npr_ze_graph_argument_metadata *);
	ze_result_t (*pfnGetArgumentProperties2)(npr_ze_graph_handle_t,
		uint32_t, struct npr_ze_graph_argument_properties_2 *);
	/* 1.2 */
	ze_result_t (*pfnGetArgumentProperties3)(npr_ze_graph_handle_t,
		uint32_t, struct npr_ze_graph_argument_properties_3 *);
	/* 1.3 */
	ze_result_t (*pfnQueryNetworkCreate)(ze_context_handle_t,
		ze_device_handle_t, const struct npr_ze_graph_desc *,
		npr_ze_graph_query_handle_t *);
	ze_result_t (*pfnQueryNetworkDestroy)(npr_ze_graph_query_handle_t);
	ze_result_t (*pfnQueryNetworkGetSupportedLayers)(
		npr_ze_graph_query_handle_t, size_t *, char *);
	/* 1.4 */
	ze_result_t (*pfnBuildLogGetString)(npr_ze_graph_handle_t, uint32_t *,
					    char *);
	/* 1.5 */
	ze_result_t (*pfnCreate2)(ze_context_handle_t, ze_device_handle_t,
				  const struct npr_ze_graph_desc_2 *,
				  npr_ze_graph_handle_t *);
	ze_result_t (*pfnQueryNetworkCreate2)(ze_context_handle_t,
		ze_device_handle_t, const struct npr_ze_graph_desc_2 *,
		npr_ze_graph_query_handle_t *);
	ze_result_t (*pfnQueryContextMemory)(ze_context_handle_t, uint32_t,
					     struct npr_ze_graph_memory_query *);
	/* 1.6 */
	ze_result_t (*pfnDeviceGetGraphProperties2)(ze_device_handle_t,
		struct npr_ze_device_graph_properties_2 *);
	/* 1.7 */
	ze_result_t (*pfnGetNativeBinary2)(npr_ze_graph_handle_t, size_t *,
					   const uint8_t **);
	/* 1.8 */
	ze_result_t (*pfnGetProperties2)(npr_ze_graph_handle_t,
					 struct npr_ze_graph_properties_2 *);
	ze_result_t (*pfnGraphInitialize)(npr_ze_graph_handle_t);
};

_Static_assert(sizeof(struct npr_ze_graph_ddi) == 23 * sizeof(void *),
	       "graph ddi table: slots 0-22");

/* Identity of the Intel NPU driver and device. */
#define NPR_ZE_NPU_DRIVER_UUID { 0x01, 0x7d, 0xe9, 0x31, 0x6b, 0x4d, 0x4f, \
	0xd4, 0xaa, 0x9b, 0x5b, 0xed, 0x77, 0xfc, 0x8e, 0x89 }
#define NPR_ZE_NPU_DEVICE_UUID { 0x80, 0xd1, 0xd1, 0x1e, 0xb7, 0x38, 0x11, \
	0xea, 0xb3, 0xde, 0x02, 0x42, 0xac, 0x13, 0x00, 0x04 }

/* Argument name prefixes the NPU compiler gives state variables. */
#define NPR_ZE_STATE_READ_PREFIX	"vpux_ie_read_value_"
#define NPR_ZE_STATE_ASSIGN_PREFIX	"vpux_ie_assign_"

/* PCI device ids (vendor 0x8086) of the NPUs, by platform. */
#define NPR_NPU_PCI_3700	0x6240	/* the NPU plugin's older table */
#define NPR_NPU_PCI_MTL		0x7D1D	/* Meteor Lake, 37XX */
#define NPR_NPU_PCI_ARL		0xAD1D	/* Arrow Lake, 37XX */
#define NPR_NPU_PCI_LNL		0x643E	/* Lunar Lake, 40XX */
#define NPR_NPU_PCI_PTL		0xB03E	/* Panther Lake, 50XX */
#define NPR_NPU_PCI_WCL		0xFD3E	/* Wildcat Lake, 50XX */
#define NPR_NPU_PCI_NVL		0xD71D	/* Nova Lake, 60XX */

#endif /* NPR_ZE_GRAPH_H */
