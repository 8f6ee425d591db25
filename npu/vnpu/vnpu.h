/* SPDX-License-Identifier: MIT */
/*
 * vnpu internals shared by its files: the objects behind the Level Zero
 * handles it hands out, and helpers.  Nothing here is exported: the
 * library's version script (vnpu.map) exports the loader's table getters
 * only.
 */
#ifndef VNPU_H
#define VNPU_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <level_zero/ze_api.h>
#include <level_zero/loader/ze_loader.h>

#include "npuring.h"
#include "npu/ze_graph.h"


/* Compiler version reported: below 7.5, so callers send the classic IR. */
#define VNPU_COMPILER_MAJOR	7
#define VNPU_COMPILER_MINOR	4
#define VNPU_DRIVER_VERSION	1
#define VNPU_MAX_OPSET		13
#define VNPU_MAX_ARGS		256
#define VNPU_MAX_INPUT		(1ULL << 34)

/* Native blob: our own format. */
#define VNPU_BLOB_MAGIC		"VNPUBLOB"
#define VNPU_BLOB_VERSION	1

enum vnpu_magic {
	M_CONTEXT = 0x564e7001,
	M_QUEUE,
	M_LIST,
	M_FENCE,
	M_GRAPH,
	M_QUERY,
	M_PROF_POOL,
	M_PROF_QUERY,
};

/*
 * The graph extension version vnpu presents (VNPU_GRAPH_VERSION) and the
 * newest it can: the one npuring's declarations reach (npu/ze_graph.h).
 */
#define VNPU_GRAPH_NEWEST	8

/* NPUs vnpu can present (VNPU_DEVICES): all alike but for the index. */
#define VNPU_MAX_DEVICES	4

struct vnpu_device {
	int magic;
	uint32_t index;		/* 0 .. VNPU_DEVICES - 1 */
	uint32_t pci_id;
	const char *platform;
	uint32_t tiles;
	uint32_t graph_minor;	/* 1.N presented; 0: no graph extension */
	uint32_t init_stage;	/* the stage a graph requires */
};

struct vnpu_context {
	int magic;
	pthread_mutex_t lock;
	bool lost;
	unsigned long executions;
};

struct vnpu_alloc {
	void *ptr;
	size_t size;
	uint64_t id;
	struct vnpu_context *ctx;
	struct vnpu_alloc *next;
};

/*
 * Variables appear as the NPU compiler shows them: an input
 * "vpux_ie_read_value_<id>" and an output "vpux_ie_assign_<id>" (@var is
 * the variable's index, -1 for an ordinary argument).
 */
#define VNPU_READ_PREFIX	"vpux_ie_read_value_"
#define VNPU_ASSIGN_PREFIX	"vpux_ie_assign_"

struct vnpu_arg {
	char name[NPR_ZE_ARG_NAME_MAX];
	int var;
	bool out;
	uint32_t index;		/* port index in its direction */
	uint32_t elem;		/* enum npr_elem_type */
	uint32_t rank;
	int64_t dims[NPR_MAX_RANK];
	size_t bytes;
};

struct vnpu_graph {
	int magic;
	struct vnpu_context *ctx;
	pthread_mutex_t lock;
	int fd;			/* the CPU device that executes it */
	uint32_t exec;
	uint32_t nargs, nin;
	uint32_t nvars;
	struct vnpu_arg *args;
	void **value;		/* current argument values */
	uint8_t *blob;
	size_t blob_size;
	bool initialized;
	bool profiling;		/* created with ENABLE_PROFILING */
	int users;		/* recorded executes that use it */
};

/* profile.c: a graph's pool of profiling queries, and one query */
struct vnpu_prof_pool {
	int magic;
	struct vnpu_graph *graph;
	uint32_t count;
	int queries;		/* live queries of the pool */
};

struct vnpu_prof_query {
	int magic;
	struct vnpu_prof_pool *pool;
	pthread_mutex_t lock;
	uint32_t nrec;		/* the last execution's records, or 0 */
	struct npr_ze_profiling_layer_info *rec;
};

struct vnpu_cmd {
	struct vnpu_graph *graph;
	bool init;		/* AppendGraphInitialize, not an execute */
	uint32_t req;		/* a request bound to the snapshot */
	struct vnpu_prof_query *query;	/* its profiling query, or NULL */
	void **state;		/* per variable: read_value, assign buffers */
	/* a memory copy (graph NULL): bytes from src to dst */
	void *dst;
	const void *src;
	size_t bytes;
};

struct vnpu_list {
	int magic;
	struct vnpu_context *ctx;
	bool closed;
	int ncmds, cap;
	struct vnpu_cmd *cmds;
};

struct vnpu_fence;

struct vnpu_job {
	struct vnpu_list **lists;
	uint32_t nlists;
	struct vnpu_fence *fence;
	struct vnpu_job *next;
};

struct vnpu_queue {
	int magic;
	struct vnpu_context *ctx;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct vnpu_job *head, *tail;
	unsigned long submitted, completed;
	unsigned long peak;	/* most executions in flight at once */
	unsigned long hold;	/* VNPU_QUEUE_HOLD: wait for this many */
	long exec_us;		/* VNPU_EXEC_US: each execution's time */
	long exec_slow;		/* VNPU_EXEC_SLOW: only that many, 0: all */
	ze_result_t last;
	bool stop;
	bool turbo;		/* NPU command-queue extension */
	uint32_t workload;
};

struct vnpu_fence {
	int magic;
	struct vnpu_queue *queue;
	bool pending, signaled;
	ze_result_t result;
};

struct vnpu_query {
	int magic;
	char *layers;
};

#define VNPU_LOG_MAX	4096

#define CHECK(obj, m)	((obj) && (obj)->magic == (m))

/* vnpu.c */
extern struct vnpu_device vnpu_dev;	/* the first; the others copy it */
extern int vnpu_drv;
extern pthread_mutex_t vnpu_mem_lock;
extern struct vnpu_alloc *vnpu_allocs;
extern __thread char vnpu_build_log[VNPU_LOG_MAX];

void vnpu_set_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* names.c */
ze_result_t vnpu_check_arg_names(const struct vnpu_graph *g);
void vnpu_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
long vnpu_env_long(const char *name);
void vnpu_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vnpu_census(const void *xml, size_t xml_size, uint64_t weights);
void *vnpu_translate(zel_handle_type_t type, void *h);
struct vnpu_context *vnpu_ctx_of(ze_context_handle_t h, bool ext);
bool vnpu_dev_ok(ze_device_handle_t h, bool ext);
struct vnpu_alloc *vnpu_alloc_find(const void *p, size_t need);

/* queue.c: command lists, queues and their device threads, fences */
ze_result_t vnpu_list_create(ze_context_handle_t h, ze_device_handle_t d,
			     const ze_command_list_desc_t *desc,
			     ze_command_list_handle_t *out);
ze_result_t vnpu_list_destroy(ze_command_list_handle_t h);
ze_result_t vnpu_list_close(ze_command_list_handle_t h);
ze_result_t vnpu_list_reset(ze_command_list_handle_t h);
ze_result_t vnpu_list_copy(ze_command_list_handle_t h, void *dst,
			   const void *src, size_t size, ze_event_handle_t sig,
			   uint32_t nwait, ze_event_handle_t *wait);
ze_result_t vnpu_list_barrier(ze_command_list_handle_t h,
			      ze_event_handle_t sig, uint32_t nwait,
			      ze_event_handle_t *wait);
ze_result_t vnpu_queue_create(ze_context_handle_t h, ze_device_handle_t d,
			      const ze_command_queue_desc_t *desc,
			      ze_command_queue_handle_t *out);
ze_result_t vnpu_queue_destroy(ze_command_queue_handle_t h);
ze_result_t vnpu_queue_execute(ze_command_queue_handle_t h, uint32_t n,
			       ze_command_list_handle_t *lists,
			       ze_fence_handle_t fh);
ze_result_t vnpu_queue_sync(ze_command_queue_handle_t h, uint64_t t);
ze_result_t vnpu_fence_create(ze_command_queue_handle_t h,
			      const ze_fence_desc_t *desc,
			      ze_fence_handle_t *out);
ze_result_t vnpu_fence_destroy(ze_fence_handle_t h);
ze_result_t vnpu_fence_sync(ze_fence_handle_t h, uint64_t t);
ze_result_t vnpu_fence_query(ze_fence_handle_t h);
ze_result_t vnpu_fence_reset(ze_fence_handle_t h);

/* graph.c: the graph extension */
extern struct npr_ze_graph_ddi vnpu_graph_ddi;
void vnpu_graph_version(uint32_t minor);
ze_result_t vnpu_run_init(struct vnpu_cmd *cmd);
bool vnpu_initialized(struct vnpu_graph *g);
extern const struct npr_ze_command_queue_npu_ddi vnpu_cq_npu_ddi;

/* profile.c: the graph profiling extension */
extern const struct npr_ze_graph_profiling_ddi vnpu_prof_ddi;
struct vnpu_prof_query *vnpu_prof_query_of(void *h, struct vnpu_graph *g);
void vnpu_prof_collect(struct vnpu_cmd *cmd);

#endif /* VNPU_H */
