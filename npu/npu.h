/* SPDX-License-Identifier: MIT */
/*
 * What the npu backend's files share: the loader's entry points, what the
 * one-time initialisation found, the per-device, per-model and
 * per-request state.  device.c binds the loader, finds and probes the NPU
 * and answers its properties; backend.c compiles, exports and runs models.
 * Include only where the Level Zero headers are present.
 */
#ifndef NPR_NPU_H
#define NPR_NPU_H

#include <pthread.h>

#include "backend.h"
#include "object.h"
#include "ze_graph.h"
#include <level_zero/loader/ze_loader.h>

#define NPU_MAX_DEVICES	16

/* The loader's entry points, resolved at run time. */
struct npr_ze_loader {
	ze_result_t (*Init)(ze_init_flags_t);
	ze_result_t (*DriverGet)(uint32_t *, ze_driver_handle_t *);
	ze_result_t (*DriverGetProperties)(ze_driver_handle_t,
					   ze_driver_properties_t *);
	ze_result_t (*DriverGetExtensionProperties)(ze_driver_handle_t,
		uint32_t *, ze_driver_extension_properties_t *);
	ze_result_t (*DriverGetExtensionFunctionAddress)(ze_driver_handle_t,
		const char *, void **);
	ze_result_t (*DeviceGet)(ze_driver_handle_t, uint32_t *,
				 ze_device_handle_t *);
	ze_result_t (*DeviceGetProperties)(ze_device_handle_t,
					   ze_device_properties_t *);
	ze_result_t (*ContextCreate)(ze_driver_handle_t,
				     const ze_context_desc_t *,
				     ze_context_handle_t *);
	ze_result_t (*ContextDestroy)(ze_context_handle_t);
	ze_result_t (*MemAllocHost)(ze_context_handle_t,
				    const ze_host_mem_alloc_desc_t *, size_t,
				    size_t, void **);
	ze_result_t (*MemFree)(ze_context_handle_t, void *);
	ze_result_t (*CommandQueueCreate)(ze_context_handle_t,
		ze_device_handle_t, const ze_command_queue_desc_t *,
		ze_command_queue_handle_t *);
	ze_result_t (*CommandQueueDestroy)(ze_command_queue_handle_t);
	ze_result_t (*CommandQueueExecuteCommandLists)(
		ze_command_queue_handle_t, uint32_t,
		ze_command_list_handle_t *, ze_fence_handle_t);
	ze_result_t (*CommandListCreate)(ze_context_handle_t,
		ze_device_handle_t, const ze_command_list_desc_t *,
		ze_command_list_handle_t *);
	ze_result_t (*CommandListDestroy)(ze_command_list_handle_t);
	ze_result_t (*CommandListClose)(ze_command_list_handle_t);
	ze_result_t (*FenceCreate)(ze_command_queue_handle_t,
				   const ze_fence_desc_t *,
				   ze_fence_handle_t *);
	ze_result_t (*FenceDestroy)(ze_fence_handle_t);
	ze_result_t (*FenceHostSynchronize)(ze_fence_handle_t, uint64_t);
	ze_result_t (*FenceReset)(ze_fence_handle_t);
	ze_result_t (*CommandListReset)(ze_command_list_handle_t);
	ze_result_t (*CommandListAppendMemoryCopy)(ze_command_list_handle_t,
		void *, const void *, size_t, ze_event_handle_t, uint32_t,
		ze_event_handle_t *);
};

extern struct npr_ze_loader npr_ze;

/* What the one-time initialisation found. */
struct npr_npu_found {
	int err;
	char msg[512];
	ze_driver_handle_t drv;
	uint32_t ndev;
	ze_device_handle_t dev[NPU_MAX_DEVICES];
	const struct npr_ze_graph_ddi *graph;
	uint32_t graph_version;
	char loader_version[64];	/* "1.8.0", or "" if unknown */
	bool cq_npu;	/* the NPU command-queue extension (turbo) */
	const struct npr_ze_command_queue_npu_ddi *cq_npu_ddi;
	/* the graph profiling extension's table, or NULL */
	const struct npr_ze_graph_profiling_ddi *prof;
	char init_call[16];	/* "zeInitDrivers" or "zeInit" */
};

extern struct npr_npu_found npr_npu;

struct npu_device {
	ze_context_handle_t ctx;
	ze_device_handle_t dev;
	uint32_t pci_id;
	uint32_t driver_version;
	uint32_t tiles;
	double gops;		/* int8, the NPU plugin's formula */
	char pci[32];		/* "DDDD:BB:DD.F", or "" if unknown */
	uint8_t uuid[16];	/* ze_device_properties_t.uuid */
	struct npr_ze_device_graph_properties gprops;
	bool lost;
};

/*
 * One graph argument: inputs first, then outputs, in the driver's order;
 * @port is the model's input or output it carries.
 */
struct npu_arg {
	unsigned int type;
	size_t numel;
	size_t bytes;
	int port;	/* -1: the assign of a variable that nothing writes */
	bool out;
	int var;	/* a state argument: the variable, else -1 */
	int peer;	/* a read_value: its assign argument, or -1 */
};

/* The NPU compiler's names of state arguments. */
#define NPU_READ_PREFIX		"vpux_ie_read_value_"
#define NPU_ASSIGN_PREFIX	"vpux_ie_assign_"

struct npu_exec {
	npr_ze_graph_handle_t graph;
	ze_command_queue_handle_t queue;
	pthread_mutex_t lock;	/* SetArgumentValue + Append are one step */
	bool init_pending;	/* NPU_DEFER_WEIGHTS_LOAD: on first request */
	bool profiling;		/* ENABLE_PROFILING graph (profile.c) */
	uint32_t nargs;
	struct npu_arg *arg;
	/* run.c: the waiter of the queue's executions (wlock) */
	struct npu_device *nd;
	pthread_mutex_t wlock;
	pthread_cond_t wcv;	/* CLOCK_MONOTONIC */
	pthread_t waiter;
	bool has_waiter, wstop;
	struct npu_request *whead, *wtail;	/* executions, in order */
	/* a decoder's static graphs (llm.c); then nothing above is used */
	struct npu_llm *llm;
	/* the variables live in the argument buffers: neither copied in
	 * from nor out to the request's state ports (llm.c's graphs) */
	bool state_on_device;
};

/* run.c: where a request's execution is */
enum npu_state {
	NPU_IDLE,
	NPU_PREPARING,		/* its inputs are being copied in */
	NPU_ON_DEVICE,		/* the device owns its buffers */
	NPU_FINISHING,		/* the waiter copies its outputs out */
};

struct npu_request {
	void **buf;
	void **bound;		/* what the recorded execute has: buf[i] or
				 * a BO of the device the caller bound */
	bool *shared;		/* buf[i] is its read_value's buffer */
	ze_command_list_handle_t list;
	ze_fence_handle_t fence;
	npr_ze_prof_pool_handle_t pool;	/* profiling: one query */
	npr_ze_prof_query_handle_t query;	/* each execute's */
	/* run.c, under the model's wlock */
	enum npu_state state;
	struct npr_request *rq;
	struct npu_request *wnext;	/* the waiter's list */
	bool discard;			/* nobody waits: drop the result */
	bool orphan;			/* its request is gone: free it */
	struct npr_infer_done done;	/* fn NULL: npr_npu_infer() waits */
	int res;
	uint64_t started, finished;
};

const char *npr_ze_result_str(ze_result_t r);
int npr_ze_errno(ze_result_t r);

#define ZE_FAIL(r, what)						\
	npr_err(npr_ze_errno(r), "npu: %s failed: %s (0x%x)", what,	\
		npr_ze_result_str(r), (unsigned int)(r))

const char *npr_platform_of(uint32_t pci_id);

int npr_npu_probe(struct npr_device *dev, int index);
int npr_npu_count(void);
int npr_npu_bo_alloc(struct npr_device *dev, size_t bytes, void **addr);
void npr_npu_bo_free(struct npr_device *dev, void *addr);
void npr_npu_release(struct npr_device *dev);
int npr_npu_ir_graph(const struct npr_graph *g, const unsigned int *types,
		     struct npr_graph **out);
int npr_npu_written_graph(const struct npr_exec *ex, struct npr_graph **out);

int npr_npu_infer(struct npr_request *rq);
int npr_npu_infer_async(struct npr_request *rq,
			const struct npr_infer_done *done);
bool npr_npu_request_orphan(struct npr_request *rq,
			    struct npu_request *nr);
void npr_npu_request_free(struct npu_device *nd, struct npu_exec *ne,
			  struct npu_request *nr);
void npr_npu_waiter_init(struct npu_exec *ne, struct npu_device *nd);
void npr_npu_waiter_stop(struct npu_exec *ne);

/* backend.c: one static graph, as llm.c compiles and runs its two */
int npr_npu_part_compile(struct npr_exec *ex);
void npr_npu_part_destroy(struct npr_exec *ex);
int npr_npu_part_request(struct npr_request *rq);
void npr_npu_part_request_destroy(struct npr_request *rq);
int npr_npu_part_infer(struct npr_request *rq);

/* llm.c: a decoder as a prefill and a generate graph */
bool npr_npu_llm_wanted(const struct npr_exec *ex);
int npr_npu_llm_compile(struct npr_exec *ex);
void npr_npu_llm_destroy(struct npr_exec *ex);
int npr_npu_llm_request(struct npr_request *rq);
void npr_npu_llm_request_destroy(struct npr_request *rq);
int npr_npu_llm_infer(struct npr_request *rq);

int npr_npu_prof_attach(struct npr_request *rq);
void npr_npu_prof_detach(struct npu_request *nr);
int npr_npu_prof_read(struct npr_request *rq);
int npr_npu_param(const struct npr_device *dev, const struct npr_props *p,
		  uint32_t id, int64_t *value);
int npr_npu_param_bytes(const struct npr_device *dev, uint32_t id,
			char *buf, size_t *len);

#endif /* NPR_NPU_H */
