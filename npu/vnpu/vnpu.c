// SPDX-License-Identifier: MIT
/*
 * vnpu: a software NPU, packaged as a Level Zero driver library that the
 * system's Level Zero loader loads like the Intel NPU driver (soname
 * libze_intel_vpu.so.1, or any path listed in ZE_ENABLE_ALT_DRIVERS).
 *
 * It answers as an NPU 3720 (VNPU_PLATFORM=3720, the default) or 4000
 * (VNPU_PLATFORM=4000) with the NPU driver UUID, implements the core calls
 * npu/ uses and graph extension slots 0-22 (version 1.8), accepts serialized
 * IR (NGRAPH_LITE, classic layout) and its own native blob, and executes
 * graphs with npuring's CPU device on one device thread per command queue.
 *
 * Only the loader's table getters are exported (vnpu.map); everything else,
 * including the npuring library linked in, is hidden.
 *
 * Fault injection, read at the time of the call:
 *   VNPU_FAULT_COMPILE=1      graph creation from IR fails with a build log
 *   VNPU_FAULT_OOM=1          zeMemAllocHost fails: out of device memory
 *   VNPU_FAULT_DEVICE_LOST=N  the Nth graph execution of a context loses
 *                             the device; the context stays lost
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <level_zero/zet_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/loader/ze_loader.h>

#include "../../lib/include/npuring.h"
#include "../ze_graph.h"

#define VNPU_API	__attribute__((visibility("default")))

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
};

struct vnpu_device {
	int magic;
	uint32_t pci_id;
	const char *platform;
	uint32_t tiles;
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

struct vnpu_arg {
	char name[NPR_ZE_ARG_NAME_MAX];
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
	struct vnpu_arg *args;
	void **value;		/* current argument values */
	uint8_t *blob;
	size_t blob_size;
	bool initialized;
};

struct vnpu_cmd {
	struct vnpu_graph *graph;
	uint32_t req;		/* a request bound to the snapshot */
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
	ze_result_t last;
	bool stop;
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

static struct vnpu_device vdev = { .magic = 1 };
static int vdrv;		/* the driver handle points here */
static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vnpu_alloc *allocs;
static uint64_t next_alloc_id = 1;
static __thread char build_log[4096];

static void set_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void set_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(build_log, sizeof(build_log), fmt, ap);
	va_end(ap);
}

static long env_long(const char *name)
{
	const char *s = getenv(name);

	return s ? strtol(s, NULL, 10) : 0;
}

/* Loader-wrapped handles reach extension calls: unwrap them. */
static ze_result_t (*translate_fn)(zel_handle_type_t, void *, void **);

static void translate_resolve(void)
{
	void *lib = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_NOLOAD);

	if (lib)
		*(void **)&translate_fn = dlsym(lib, "zelLoaderTranslateHandle");
}

static void *translate(zel_handle_type_t type, void *h)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	void *out = NULL;

	if (!h)
		return NULL;
	pthread_once(&once, translate_resolve);
	if (translate_fn && translate_fn(type, h, &out) == ZE_RESULT_SUCCESS &&
	    out)
		return out;
	return h;
}

#define CHECK(obj, m)	((obj) && (obj)->magic == (m))

static struct vnpu_context *ctx_of(ze_context_handle_t h, bool ext)
{
	struct vnpu_context *c = ext ? translate(ZEL_HANDLE_CONTEXT, h) :
				       (void *)h;

	return CHECK(c, M_CONTEXT) ? c : NULL;
}

static bool dev_ok(ze_device_handle_t h, bool ext)
{
	void *d = ext ? translate(ZEL_HANDLE_DEVICE, h) : (void *)h;

	return d == (void *)&vdev;
}

static struct vnpu_alloc *alloc_find(const void *p, size_t need)
{
	struct vnpu_alloc *a;

	for (a = allocs; a; a = a->next)
		if ((const char *)p >= (char *)a->ptr &&
		    (const char *)p < (char *)a->ptr + a->size)
			return (size_t)((char *)a->ptr + a->size -
					(const char *)p) >= need ? a : NULL;
	return NULL;
}

/* ---- driver ------------------------------------------------------------ */

static void pick_platform(void)
{
	const char *p = getenv("VNPU_PLATFORM");

	if (p && !strcmp(p, "4000")) {
		vdev.pci_id = NPR_NPU_PCI_LNL;
		vdev.platform = "4000";
		vdev.tiles = 6;
	} else {
		vdev.pci_id = NPR_NPU_PCI_MTL;
		vdev.platform = "3720";
		vdev.tiles = 2;
	}
}

static ze_result_t vnpu_init(ze_init_flags_t flags)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (flags && !(flags & ZE_INIT_FLAG_VPU_ONLY))
		return ZE_RESULT_ERROR_UNINITIALIZED;
	pthread_once(&once, pick_platform);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t vnpu_driver_get(uint32_t *count, ze_driver_handle_t *out)
{
	if (!count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (*count && out)
		out[0] = (ze_driver_handle_t)&vdrv;
	*count = 1;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t vnpu_driver_api_version(ze_driver_handle_t d,
					   ze_api_version_t *v)
{
	if (d != (void *)&vdrv)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!v)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	*v = ZE_API_VERSION_1_4;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t vnpu_driver_props(ze_driver_handle_t d,
				     ze_driver_properties_t *p)
{
	static const uint8_t uuid[16] = NPR_ZE_NPU_DRIVER_UUID;

	if (d != (void *)&vdrv)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	memcpy(p->uuid.id, uuid, sizeof(uuid));
	p->driverVersion = VNPU_DRIVER_VERSION;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t vnpu_driver_ipc(ze_driver_handle_t d,
				   ze_driver_ipc_properties_t *p)
{
	if (d != (void *)&vdrv)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	p->flags = 0;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t vnpu_driver_ext_props(ze_driver_handle_t d, uint32_t *count,
					 ze_driver_extension_properties_t *p)
{
	uint32_t n = 8, i;	/* the graph ext, then _1_2 ... _1_8 */

	if (d != (void *)&vdrv)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (!*count || !p) {
		*count = n;
		return ZE_RESULT_SUCCESS;
	}
	for (i = 0; i < n && i < *count; i++) {
		memset(&p[i], 0, sizeof(p[i]));
		if (!i) {
			snprintf(p[i].name, sizeof(p[i].name), "%s",
				 NPR_ZE_GRAPH_EXT_NAME);
			p[i].version = NPR_ZE_GRAPH_VERSION_1_8;
		} else {
			snprintf(p[i].name, sizeof(p[i].name), "%s_1_%u",
				 NPR_ZE_GRAPH_EXT_NAME, i + 1);
			p[i].version = NPR_ZE_GRAPH_VERSION(i + 1);
		}
	}
	*count = i;
	return ZE_RESULT_SUCCESS;
}

static const struct npr_ze_graph_ddi graph_ddi;

static ze_result_t vnpu_driver_ext_fn(ze_driver_handle_t d, const char *name,
				      void **fn)
{
	if (d != (void *)&vdrv)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!name || !fn)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (!strstr(name, NPR_ZE_GRAPH_EXT_NAME))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	*fn = (void *)&graph_ddi;
	return ZE_RESULT_SUCCESS;
}

/* ---- device ------------------------------------------------------------ */

static ze_result_t vnpu_device_get(ze_driver_handle_t d, uint32_t *count,
				   ze_device_handle_t *out)
{
	if (d != (void *)&vdrv)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (*count && out)
		out[0] = (ze_device_handle_t)&vdev;
	*count = 1;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t vnpu_device_sub(ze_device_handle_t d, uint32_t *count,
				   ze_device_handle_t *out)
{
	if (!dev_ok(d, false))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	*count = 0;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t vnpu_device_props(ze_device_handle_t d,
				     ze_device_properties_t *p)
{
	static const uint8_t uuid[16] = NPR_ZE_NPU_DEVICE_UUID;

	if (!dev_ok(d, false))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	p->type = ZE_DEVICE_TYPE_VPU;
	p->vendorId = 0x8086;
	p->deviceId = vdev.pci_id;
	p->flags = ZE_DEVICE_PROPERTY_FLAG_INTEGRATED;
	p->subdeviceId = 0;
	p->coreClockRate = vdev.tiles == 2 ? 1400 : 1950;
	p->maxMemAllocSize = 1ULL << 32;
	p->maxHardwareContexts = 64;
	p->maxCommandQueuePriority = 0;
	p->numThreadsPerEU = 1;
	p->physicalEUSimdWidth = 512;
	p->numEUsPerSubslice = 1;
	p->numSubslicesPerSlice = 1;
	p->numSlices = vdev.tiles;
	p->timerResolution = 1;
	p->timestampValidBits = 64;
	p->kernelTimestampValidBits = 0;
	memcpy(p->uuid.id, uuid, sizeof(uuid));
	snprintf(p->name, sizeof(p->name),
		 "vnpu software NPU %s (npuring)", vdev.platform);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t vnpu_device_queue_groups(ze_device_handle_t d,
		uint32_t *count, ze_command_queue_group_properties_t *p)
{
	if (!dev_ok(d, false))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (*count && p) {
		p->flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE |
			   ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
		p->maxMemoryFillPatternSize = 4;
		p->numQueues = 1;
	}
	*count = 1;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t vnpu_device_status(ze_device_handle_t d)
{
	return dev_ok(d, false) ? ZE_RESULT_SUCCESS :
				  ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

/* ---- context ----------------------------------------------------------- */

static ze_result_t vnpu_context_create(ze_driver_handle_t d,
				       const ze_context_desc_t *desc,
				       ze_context_handle_t *out)
{
	struct vnpu_context *c;

	if (d != (void *)&vdrv)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	c = calloc(1, sizeof(*c));
	if (!c)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	c->magic = M_CONTEXT;
	pthread_mutex_init(&c->lock, NULL);
	*out = (ze_context_handle_t)c;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t vnpu_context_destroy(ze_context_handle_t h)
{
	struct vnpu_context *c = ctx_of(h, false);
	struct vnpu_alloc **pp;

	if (!c)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&mem_lock);
	for (pp = &allocs; *pp;) {
		struct vnpu_alloc *a = *pp;

		if (a->ctx == c) {
			*pp = a->next;
			free(a->ptr);
			free(a);
		} else {
			pp = &a->next;
		}
	}
	pthread_mutex_unlock(&mem_lock);
	c->magic = 0;
	pthread_mutex_destroy(&c->lock);
	free(c);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t vnpu_context_status(ze_context_handle_t h)
{
	struct vnpu_context *c = ctx_of(h, false);
	bool lost;

	if (!c)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&c->lock);
	lost = c->lost;
	pthread_mutex_unlock(&c->lock);
	return lost ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_SUCCESS;
}

/* ---- memory ------------------------------------------------------------ */

static ze_result_t vnpu_mem_alloc_host(ze_context_handle_t h,
				       const ze_host_mem_alloc_desc_t *desc,
				       size_t size, size_t align, void **out)
{
	struct vnpu_context *c = ctx_of(h, false);
	struct vnpu_alloc *a;

	if (!c)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (!size || size > (1ULL << 40))
		return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
	if (align & (align - 1))
		return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
	if (env_long("VNPU_FAULT_OOM"))
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	if (align < 4096)
		align = 4096;
	a = calloc(1, sizeof(*a));
	if (!a)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	if (posix_memalign(&a->ptr, align, (size + 4095) & ~(size_t)4095)) {
		free(a);
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	}
	a->size = size;
	a->ctx = c;
	pthread_mutex_lock(&mem_lock);
	a->id = next_alloc_id++;
	a->next = allocs;
	allocs = a;
	pthread_mutex_unlock(&mem_lock);
	*out = a->ptr;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t vnpu_mem_free(ze_context_handle_t h, void *p)
{
	struct vnpu_context *c = ctx_of(h, false);
	struct vnpu_alloc **pp;

	if (!c)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	pthread_mutex_lock(&mem_lock);
	for (pp = &allocs; *pp; pp = &(*pp)->next) {
		struct vnpu_alloc *a = *pp;

		if (a->ptr == p && a->ctx == c) {
			*pp = a->next;
			pthread_mutex_unlock(&mem_lock);
			free(a->ptr);
			free(a);
			return ZE_RESULT_SUCCESS;
		}
	}
	pthread_mutex_unlock(&mem_lock);
	return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

static ze_result_t vnpu_mem_props(ze_context_handle_t h, const void *p,
				  ze_memory_allocation_properties_t *props,
				  ze_device_handle_t *dev)
{
	struct vnpu_alloc *a;

	if (!ctx_of(h, false))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p || !props)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	pthread_mutex_lock(&mem_lock);
	a = alloc_find(p, 0);
	props->type = a ? ZE_MEMORY_TYPE_HOST : ZE_MEMORY_TYPE_UNKNOWN;
	props->id = a ? a->id : 0;
	props->pageSize = a ? 4096 : 0;
	pthread_mutex_unlock(&mem_lock);
	if (dev)
		*dev = NULL;
	return ZE_RESULT_SUCCESS;
}

/* ---- command lists ----------------------------------------------------- */

static ze_result_t vnpu_list_create(ze_context_handle_t h,
				    ze_device_handle_t d,
				    const ze_command_list_desc_t *desc,
				    ze_command_list_handle_t *out)
{
	struct vnpu_context *c = ctx_of(h, false);
	struct vnpu_list *l;

	if (!c || !dev_ok(d, false))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->commandQueueGroupOrdinal)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	l = calloc(1, sizeof(*l));
	if (!l)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	l->magic = M_LIST;
	l->ctx = c;
	*out = (ze_command_list_handle_t)l;
	return ZE_RESULT_SUCCESS;
}

static void list_clear(struct vnpu_list *l)
{
	int i;

	for (i = 0; i < l->ncmds; i++) {
		struct npr_handle_destroy hd = {
			.size = sizeof(hd), .handle = l->cmds[i].req,
		};

		npr_ioctl(l->cmds[i].graph->fd, NPR_IOCTL_HANDLE_DESTROY, &hd);
	}
	l->ncmds = 0;
	l->closed = false;
}

static ze_result_t vnpu_list_destroy(ze_command_list_handle_t h)
{
	struct vnpu_list *l = (void *)h;

	if (!CHECK(l, M_LIST))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	list_clear(l);
	free(l->cmds);
	l->magic = 0;
	free(l);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t vnpu_list_close(ze_command_list_handle_t h)
{
	struct vnpu_list *l = (void *)h;

	if (!CHECK(l, M_LIST))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	l->closed = true;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t vnpu_list_reset(ze_command_list_handle_t h)
{
	struct vnpu_list *l = (void *)h;

	if (!CHECK(l, M_LIST))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	list_clear(l);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t vnpu_list_barrier(ze_command_list_handle_t h,
				     ze_event_handle_t sig, uint32_t nwait,
				     ze_event_handle_t *wait)
{
	struct vnpu_list *l = (void *)h;

	if (!CHECK(l, M_LIST))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (sig || nwait)
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	return l->closed ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_SUCCESS;
}

/* ---- queues, the device thread, fences --------------------------------- */

static ze_result_t run_graph(struct vnpu_context *c, struct vnpu_cmd *cmd)
{
	struct npr_infer inf = { .size = sizeof(inf), .req = cmd->req };
	long lose = env_long("VNPU_FAULT_DEVICE_LOST");
	int err;

	pthread_mutex_lock(&c->lock);
	c->executions++;
	if (lose > 0 && c->executions == (unsigned long)lose)
		c->lost = true;
	if (c->lost) {
		pthread_mutex_unlock(&c->lock);
		return ZE_RESULT_ERROR_DEVICE_LOST;
	}
	pthread_mutex_unlock(&c->lock);
	err = npr_ioctl(cmd->graph->fd, NPR_IOCTL_INFER, &inf);
	if (err) {
		fprintf(stderr, "vnpu: graph execution failed: %s\n",
			npr_last_error());
		return ZE_RESULT_ERROR_UNKNOWN;
	}
	return ZE_RESULT_SUCCESS;
}

static void *device_thread(void *arg)
{
	struct vnpu_queue *q = arg;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct vnpu_job *j;
		ze_result_t res = ZE_RESULT_SUCCESS;
		uint32_t i;
		int k;

		while (!q->head && !q->stop)
			pthread_cond_wait(&q->cond, &q->lock);
		if (!q->head)
			break;
		j = q->head;
		pthread_mutex_unlock(&q->lock);
		for (i = 0; i < j->nlists && res == ZE_RESULT_SUCCESS; i++)
			for (k = 0; k < j->lists[i]->ncmds &&
				    res == ZE_RESULT_SUCCESS; k++)
				res = run_graph(q->ctx, &j->lists[i]->cmds[k]);
		pthread_mutex_lock(&q->lock);
		q->head = j->next;
		if (!q->head)
			q->tail = NULL;
		if (j->fence) {
			j->fence->result = res;
			j->fence->pending = false;
			j->fence->signaled = true;
		}
		q->last = res;
		q->completed++;
		pthread_cond_broadcast(&q->cond);
		free(j->lists);
		free(j);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

static ze_result_t vnpu_queue_create(ze_context_handle_t h,
				     ze_device_handle_t d,
				     const ze_command_queue_desc_t *desc,
				     ze_command_queue_handle_t *out)
{
	struct vnpu_context *c = ctx_of(h, false);
	struct vnpu_queue *q;

	if (!c || !dev_ok(d, false))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->ordinal || desc->index)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	q = calloc(1, sizeof(*q));
	if (!q)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	q->magic = M_QUEUE;
	q->ctx = c;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	if (pthread_create(&q->thread, NULL, device_thread, q)) {
		free(q);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	*out = (ze_command_queue_handle_t)q;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t vnpu_queue_destroy(ze_command_queue_handle_t h)
{
	struct vnpu_queue *q = (void *)h;

	if (!CHECK(q, M_QUEUE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&q->lock);
	q->stop = true;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	q->magic = 0;
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
	free(q);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t vnpu_queue_execute(ze_command_queue_handle_t h, uint32_t n,
				      ze_command_list_handle_t *lists,
				      ze_fence_handle_t fh)
{
	struct vnpu_queue *q = (void *)h;
	struct vnpu_fence *f = (void *)fh;
	struct vnpu_job *j;
	uint32_t i;

	if (!CHECK(q, M_QUEUE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!n || !lists)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	if (f && (!CHECK(f, M_FENCE) || f->queue != q))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	for (i = 0; i < n; i++) {
		struct vnpu_list *l = (void *)lists[i];

		if (!CHECK(l, M_LIST))
			return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
		if (!l->closed || l->ctx != q->ctx)
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	}
	j = calloc(1, sizeof(*j));
	if (!j || !(j->lists = calloc(n, sizeof(*j->lists)))) {
		free(j);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	memcpy(j->lists, lists, n * sizeof(*lists));
	j->nlists = n;
	j->fence = f;
	pthread_mutex_lock(&q->lock);
	if (f && (f->pending || f->signaled)) {
		/* a fence must be reset before it is used again */
		pthread_mutex_unlock(&q->lock);
		free(j->lists);
		free(j);
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	}
	if (f)
		f->pending = true;
	if (q->tail)
		q->tail->next = j;
	else
		q->head = j;
	q->tail = j;
	q->submitted++;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	return ZE_RESULT_SUCCESS;
}

/* Wait on @q->cond until @done(), at most @timeout ns (UINT64_MAX: forever). */
static ze_result_t queue_wait(struct vnpu_queue *q, uint64_t timeout,
			      bool (*done)(void *), void *arg)
{
	struct timespec ts;

	if (timeout != UINT64_MAX) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += timeout / 1000000000;
		ts.tv_nsec += timeout % 1000000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
	}
	while (!done(arg)) {
		if (timeout == 0)
			return ZE_RESULT_NOT_READY;
		if (timeout == UINT64_MAX)
			pthread_cond_wait(&q->cond, &q->lock);
		else if (pthread_cond_timedwait(&q->cond, &q->lock, &ts))
			return done(arg) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
	}
	return ZE_RESULT_SUCCESS;
}

static bool queue_idle(void *arg)
{
	struct vnpu_queue *q = arg;

	return q->completed == q->submitted;
}

static ze_result_t vnpu_queue_sync(ze_command_queue_handle_t h, uint64_t t)
{
	struct vnpu_queue *q = (void *)h;
	ze_result_t r;

	if (!CHECK(q, M_QUEUE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&q->lock);
	r = queue_wait(q, t, queue_idle, q);
	if (r == ZE_RESULT_SUCCESS)
		r = q->last;
	pthread_mutex_unlock(&q->lock);
	return r;
}

static ze_result_t vnpu_fence_create(ze_command_queue_handle_t h,
				     const ze_fence_desc_t *desc,
				     ze_fence_handle_t *out)
{
	struct vnpu_queue *q = (void *)h;
	struct vnpu_fence *f;

	if (!CHECK(q, M_QUEUE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	f = calloc(1, sizeof(*f));
	if (!f)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	f->magic = M_FENCE;
	f->queue = q;
	f->signaled = desc->flags & ZE_FENCE_FLAG_SIGNALED;
	*out = (ze_fence_handle_t)f;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t vnpu_fence_destroy(ze_fence_handle_t h)
{
	struct vnpu_fence *f = (void *)h;
	bool busy;

	if (!CHECK(f, M_FENCE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&f->queue->lock);
	busy = f->pending;
	pthread_mutex_unlock(&f->queue->lock);
	if (busy)
		return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
	f->magic = 0;
	free(f);
	return ZE_RESULT_SUCCESS;
}

static bool fence_done(void *arg)
{
	return ((struct vnpu_fence *)arg)->signaled;
}

static ze_result_t vnpu_fence_sync(ze_fence_handle_t h, uint64_t t)
{
	struct vnpu_fence *f = (void *)h;
	ze_result_t r;

	if (!CHECK(f, M_FENCE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&f->queue->lock);
	if (!f->pending && !f->signaled) {
		pthread_mutex_unlock(&f->queue->lock);
		return ZE_RESULT_NOT_READY;	/* nothing will signal it */
	}
	r = queue_wait(f->queue, t, fence_done, f);
	if (r == ZE_RESULT_SUCCESS)
		r = f->result;
	pthread_mutex_unlock(&f->queue->lock);
	return r;
}

static ze_result_t vnpu_fence_query(ze_fence_handle_t h)
{
	struct vnpu_fence *f = (void *)h;
	ze_result_t r;

	if (!CHECK(f, M_FENCE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&f->queue->lock);
	r = f->signaled ? f->result : ZE_RESULT_NOT_READY;
	pthread_mutex_unlock(&f->queue->lock);
	return r;
}

static ze_result_t vnpu_fence_reset(ze_fence_handle_t h)
{
	struct vnpu_fence *f = (void *)h;
	ze_result_t r = ZE_RESULT_SUCCESS;

	if (!CHECK(f, M_FENCE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&f->queue->lock);
	if (f->pending)
		r = ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
	else
		f->signaled = false;
	f->result = ZE_RESULT_SUCCESS;
	pthread_mutex_unlock(&f->queue->lock);
	return r;
}

/* ---- graphs ------------------------------------------------------------ */

static int get_u64(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	if ((size_t)(end - *p) < 8)
		return -1;
	memcpy(v, *p, 8);
	*p += 8;
	return 0;
}

/* Check the build-flag grammar: --key="..." sections, then --config K="V". */
static int check_flags(const char *s)
{
	static const char *const keys[] = {
		"--inputs_precisions=\"", "--inputs_layouts=\"",
		"--outputs_precisions=\"", "--outputs_layouts=\"",
	};
	size_t i;

	if (!s)
		return 0;
	while (*s) {
		const char *q;

		while (*s == ' ')
			s++;
		if (!*s)
			break;
		if (!strncmp(s, "--config", 8) && (s[8] == ' ' || !s[8])) {
			s += 8;
			while (*s == ' ')
				s++;
			while (*s) {
				q = strchr(s, '=');
				if (!q || q == s || q[1] != '"') {
					set_log("vnpu: bad --config entry near \"%.40s\"", s);
					return -1;
				}
				q = strchr(q + 2, '"');
				if (!q) {
					set_log("vnpu: unterminated --config value");
					return -1;
				}
				s = q + 1;
				while (*s == ' ')
					s++;
			}
			break;
		}
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (!strncmp(s, keys[i], strlen(keys[i])))
				break;
		if (i == sizeof(keys) / sizeof(keys[0])) {
			set_log("vnpu: unknown build flag near \"%.40s\"", s);
			return -1;
		}
		q = strchr(s + strlen(keys[i]), '"');
		if (!q) {
			set_log("vnpu: unterminated build flag %.24s", keys[i]);
			return -1;
		}
		s = q + 1;
	}
	return 0;
}

static void graph_free(struct vnpu_graph *g)
{
	if (g->fd >= 0)
		npr_close(g->fd);
	free(g->args);
	free(g->value);
	free(g->blob);
	pthread_mutex_destroy(&g->lock);
	g->magic = 0;
	free(g);
}

/* Load IR into the CPU device, compile it, describe its arguments. */
static ze_result_t graph_build(struct vnpu_graph *g, const void *xml,
			       size_t xml_size, const void *bin,
			       size_t bin_size)
{
	struct npr_model_load ml;
	struct npr_model_info mi = { .size = sizeof(mi) };
	struct npr_compile cp;
	uint32_t i;

	g->fd = npr_open("cpu", 0);
	if (g->fd < 0) {
		set_log("vnpu: %s", npr_last_error());
		return ZE_RESULT_ERROR_UNKNOWN;
	}
	npr_prep_model_load_mem(&ml, xml, xml_size, bin_size ? bin : NULL,
				bin_size);
	if (npr_ioctl(g->fd, NPR_IOCTL_MODEL_LOAD, &ml)) {
		set_log("vnpu: cannot read the IR: %s", npr_last_error());
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	}
	npr_prep_compile(&cp, ml.handle);
	if (npr_ioctl(g->fd, NPR_IOCTL_COMPILE, &cp)) {
		set_log("vnpu: compilation failed: %s", npr_last_error());
		return ZE_RESULT_ERROR_UNKNOWN;
	}
	g->exec = cp.exec;
	mi.handle = g->exec;
	if (npr_ioctl(g->fd, NPR_IOCTL_MODEL_INFO, &mi))
		return ZE_RESULT_ERROR_UNKNOWN;
	g->nin = mi.num_inputs;
	g->nargs = mi.num_inputs + mi.num_outputs;
	if (g->nargs > VNPU_MAX_ARGS) {
		set_log("vnpu: %u arguments, at most %d supported", g->nargs,
			VNPU_MAX_ARGS);
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	}
	g->args = calloc(g->nargs + 1, sizeof(*g->args));
	g->value = calloc(g->nargs + 1, sizeof(*g->value));
	if (!g->args || !g->value)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	for (i = 0; i < g->nargs; i++) {
		struct vnpu_arg *a = &g->args[i];
		struct npr_port_info pi;
		size_t numel = 1;
		uint32_t k;

		a->out = i >= g->nin;
		a->index = a->out ? i - g->nin : i;
		npr_prep_port_info(&pi, g->exec, a->index, a->out, a->name,
				   sizeof(a->name));
		if (npr_ioctl(g->fd, NPR_IOCTL_PORT_INFO, &pi)) {
			set_log("vnpu: argument %u: %s", i, npr_last_error());
			return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
		}
		a->elem = pi.elem_type;
		a->rank = pi.rank;
		for (k = 0; k < pi.rank; k++) {
			a->dims[k] = pi.dims[k];
			numel *= (size_t)pi.dims[k];
		}
		a->bytes = numel * npr_elem_size(a->elem);
		if (!npr_elem_size(a->elem) || pi.rank > NPR_ZE_ARG_DIMS) {
			set_log("vnpu: argument %s: type %s rank %u unsupported",
				a->name, npr_elem_name(a->elem), pi.rank);
			return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
		}
	}
	/* the native blob: our header, then the IR it was built from */
	g->blob_size = 8 + 4 + 4 + 8 + xml_size + 8 + bin_size;
	g->blob = malloc(g->blob_size);
	if (!g->blob)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	{
		uint8_t *p = g->blob;
		uint32_t ver = VNPU_BLOB_VERSION, plat = vdev.pci_id;
		uint64_t xs = xml_size, bs = bin_size;

		memcpy(p, VNPU_BLOB_MAGIC, 8);
		memcpy(p + 8, &ver, 4);
		memcpy(p + 12, &plat, 4);
		memcpy(p + 16, &xs, 8);
		memcpy(p + 24, xml, xml_size);
		memcpy(p + 24 + xml_size, &bs, 8);
		if (bin_size)
			memcpy(p + 32 + xml_size, bin, bin_size);
	}
	return ZE_RESULT_SUCCESS;
}

static ze_result_t graph_create(ze_context_handle_t hc, ze_device_handle_t hd,
				uint32_t format, const uint8_t *in, size_t size,
				const char *flags, npr_ze_graph_handle_t *out)
{
	struct vnpu_context *c = ctx_of(hc, true);
	const uint8_t *p = in, *end, *xml, *bin;
	uint64_t xs, bs;
	struct vnpu_graph *g;
	ze_result_t r;

	build_log[0] = 0;
	if (!c || !dev_ok(hd, true))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!in || !out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (!size || size > VNPU_MAX_INPUT)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	end = in + size;
	if (format == NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE) {
		uint32_t n;

		if (size < 8) {
			set_log("vnpu: IR buffer of %zu bytes is too short", size);
			return ZE_RESULT_ERROR_INVALID_SIZE;
		}
		memcpy(&n, in + 4, 4);
		if (n != 2) {
			set_log("vnpu: IR buffer holds %u parts, expected 2", n);
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
		}
		p = in + 8;
		if (check_flags(flags))
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
		if (env_long("VNPU_FAULT_COMPILE")) {
			set_log("vnpu: compilation failed: fault injected by VNPU_FAULT_COMPILE");
			return ZE_RESULT_ERROR_UNKNOWN;
		}
	} else if (format == NPR_ZE_GRAPH_FORMAT_NATIVE) {
		uint32_t ver, plat;

		if (size < 16 || memcmp(in, VNPU_BLOB_MAGIC, 8)) {
			set_log("vnpu: not a vnpu native blob");
			return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
		}
		memcpy(&ver, in + 8, 4);
		memcpy(&plat, in + 12, 4);
		if (ver != VNPU_BLOB_VERSION || plat != vdev.pci_id) {
			set_log("vnpu: blob version %u for device 0x%x, this is version %u on 0x%x",
				ver, plat, VNPU_BLOB_VERSION, vdev.pci_id);
			return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
		}
		p = in + 16;
	} else {
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	}
	if (get_u64(&p, end, &xs) || xs > (uint64_t)(end - p)) {
		set_log("vnpu: truncated input (xml size)");
		return ZE_RESULT_ERROR_INVALID_SIZE;
	}
	xml = p;
	p += xs;
	if (get_u64(&p, end, &bs) || bs != (uint64_t)(end - p)) {
		set_log("vnpu: truncated input or trailing bytes (weights size)");
		return ZE_RESULT_ERROR_INVALID_SIZE;
	}
	bin = p;
	g = calloc(1, sizeof(*g));
	if (!g)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	g->magic = M_GRAPH;
	g->ctx = c;
	g->fd = -1;
	pthread_mutex_init(&g->lock, NULL);
	r = graph_build(g, xml, xs, bin, bs);
	if (r) {
		graph_free(g);
		return r;
	}
	*out = (npr_ze_graph_handle_t)g;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t g_create(ze_context_handle_t c, ze_device_handle_t d,
			    const struct npr_ze_graph_desc *desc,
			    npr_ze_graph_handle_t *out)
{
	if (!desc)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	return graph_create(c, d, desc->format, desc->pInput, desc->inputSize,
			    desc->pBuildFlags, out);
}

static ze_result_t g_create2(ze_context_handle_t c, ze_device_handle_t d,
			     const struct npr_ze_graph_desc_2 *desc,
			     npr_ze_graph_handle_t *out)
{
	if (!desc)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->flags & ~(NPR_ZE_GRAPH_FLAG_DISABLE_CACHING |
			    NPR_ZE_GRAPH_FLAG_INPUT_PERSISTENT))
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	return graph_create(c, d, desc->format, desc->pInput, desc->inputSize,
			    desc->pBuildFlags, out);
}

#define GRAPH(h)	((struct vnpu_graph *)(h))
#define GRAPH_OK(h)	CHECK(GRAPH(h), M_GRAPH)

static ze_result_t g_destroy(npr_ze_graph_handle_t h)
{
	if (!GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	graph_free(GRAPH(h));
	return ZE_RESULT_SUCCESS;
}

static ze_result_t g_props(npr_ze_graph_handle_t h,
			   struct npr_ze_graph_properties *p)
{
	if (!GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	p->numGraphArgs = GRAPH(h)->nargs;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t g_props2(npr_ze_graph_handle_t h,
			    struct npr_ze_graph_properties_2 *p)
{
	if (!GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	p->numGraphArgs = GRAPH(h)->nargs;
	p->initStageRequired = NPR_ZE_GRAPH_STAGE_INITIALIZE;
	return ZE_RESULT_SUCCESS;
}

static uint32_t prec_of(uint32_t elem)
{
	switch (elem) {
	case NPR_ELEM_F32: return NPR_ZE_PREC_FP32;
	case NPR_ELEM_F16: return NPR_ZE_PREC_FP16;
	case NPR_ELEM_BF16: return NPR_ZE_PREC_BF16;
	case NPR_ELEM_F64: return NPR_ZE_PREC_FP64;
	case NPR_ELEM_I8: return NPR_ZE_PREC_INT8;
	case NPR_ELEM_U8: return NPR_ZE_PREC_UINT8;
	case NPR_ELEM_I16: return NPR_ZE_PREC_INT16;
	case NPR_ELEM_U16: return NPR_ZE_PREC_UINT16;
	case NPR_ELEM_I32: return NPR_ZE_PREC_INT32;
	case NPR_ELEM_U32: return NPR_ZE_PREC_UINT32;
	case NPR_ELEM_I64: return NPR_ZE_PREC_INT64;
	case NPR_ELEM_U64: return NPR_ZE_PREC_UINT64;
	case NPR_ELEM_BOOLEAN: return NPR_ZE_PREC_BOOLEAN;
	}
	return NPR_ZE_PREC_UNKNOWN;
}

static uint32_t meta_of(uint32_t elem)
{
	switch (elem) {
	case NPR_ELEM_F32: return NPR_ZE_META_F32;
	case NPR_ELEM_F16: return NPR_ZE_META_F16;
	case NPR_ELEM_BF16: return NPR_ZE_META_BF16;
	case NPR_ELEM_F64: return NPR_ZE_META_F64;
	case NPR_ELEM_I8: return NPR_ZE_META_I8;
	case NPR_ELEM_U8: return NPR_ZE_META_U8;
	case NPR_ELEM_I16: return NPR_ZE_META_I16;
	case NPR_ELEM_U16: return NPR_ZE_META_U16;
	case NPR_ELEM_I32: return NPR_ZE_META_I32;
	case NPR_ELEM_U32: return NPR_ZE_META_U32;
	case NPR_ELEM_I64: return NPR_ZE_META_I64;
	case NPR_ELEM_U64: return NPR_ZE_META_U64;
	case NPR_ELEM_BOOLEAN: return NPR_ZE_META_BOOLEAN;
	}
	return NPR_ZE_META_UNDEFINED;
}

static uint32_t layout_of(uint32_t rank)
{
	switch (rank) {
	case 1: return NPR_ZE_LAYOUT_C;
	case 2: return NPR_ZE_LAYOUT_NC;
	case 3: return NPR_ZE_LAYOUT_CHW;
	case 4: return NPR_ZE_LAYOUT_NCHW;
	case 5: return NPR_ZE_LAYOUT_NCDHW;
	}
	return NPR_ZE_LAYOUT_ANY;
}

static ze_result_t fill_arg(npr_ze_graph_handle_t h, uint32_t i,
			    struct npr_ze_graph_argument_properties *p)
{
	struct vnpu_arg *a;
	uint32_t k;

	if (!GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (i >= GRAPH(h)->nargs)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	a = &GRAPH(h)->args[i];
	snprintf(p->name, sizeof(p->name), "%s", a->name);
	p->type = a->out ? NPR_ZE_GRAPH_ARG_OUTPUT : NPR_ZE_GRAPH_ARG_INPUT;
	for (k = 0; k < NPR_ZE_ARG_DIMS; k++)
		p->dims[k] = k < a->rank ? (uint32_t)a->dims[k] : 1;
	p->networkPrecision = p->devicePrecision = prec_of(a->elem);
	p->networkLayout = p->deviceLayout = layout_of(a->rank);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t g_arg_props(npr_ze_graph_handle_t h, uint32_t i,
			       struct npr_ze_graph_argument_properties *p)
{
	return fill_arg(h, i, p);
}

static ze_result_t g_arg_props2(npr_ze_graph_handle_t h, uint32_t i,
				struct npr_ze_graph_argument_properties_2 *p)
{
	ze_result_t r = fill_arg(h, i, p ? &p->v1 : NULL);

	if (r)
		return r;
	p->quantReverseScale = GRAPH(h)->args[i].out ? 0.0f : 1.0f;
	p->quantZeroPoint = 0;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t g_arg_props3(npr_ze_graph_handle_t h, uint32_t i,
				struct npr_ze_graph_argument_properties_3 *p)
{
	ze_result_t r = g_arg_props2(h, i, p ? &p->v2 : NULL);

	if (r)
		return r;
	p->dims_count = GRAPH(h)->args[i].rank;
	snprintf(p->debug_friendly_name, sizeof(p->debug_friendly_name), "%s",
		 GRAPH(h)->args[i].name);
	snprintf(p->associated_tensor_names[0],
		 sizeof(p->associated_tensor_names[0]), "%s",
		 GRAPH(h)->args[i].name);
	p->associated_tensor_names_count = 1;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t g_arg_meta(npr_ze_graph_handle_t h, uint32_t i,
			      struct npr_ze_graph_argument_metadata *p)
{
	struct vnpu_arg *a;
	uint32_t k;

	if (!GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (i >= GRAPH(h)->nargs)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	a = &GRAPH(h)->args[i];
	p->type = a->out ? NPR_ZE_GRAPH_ARG_OUTPUT : NPR_ZE_GRAPH_ARG_INPUT;
	snprintf(p->friendly_name, sizeof(p->friendly_name), "%s", a->name);
	p->data_type = meta_of(a->elem);
	for (k = 0; k < a->rank && k < NPR_ZE_META_DIMS; k++)
		p->shape[k] = (uint64_t)a->dims[k];
	p->shape_size = a->rank;
	snprintf(p->tensor_names[0], sizeof(p->tensor_names[0]), "%s",
		 a->name);
	p->tensor_names_count = 1;
	snprintf(p->input_name, sizeof(p->input_name), "%s", a->name);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t g_set_arg(npr_ze_graph_handle_t h, uint32_t i,
			     const void *value)
{
	struct vnpu_graph *g = GRAPH(h);

	if (!GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!value)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (i >= g->nargs)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&g->lock);
	g->value[i] = (void *)value;
	pthread_mutex_unlock(&g->lock);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t g_append_init(ze_command_list_handle_t hl,
				 npr_ze_graph_handle_t h, ze_event_handle_t sig,
				 uint32_t nwait, ze_event_handle_t *wait)
{
	struct vnpu_list *l = translate(ZEL_HANDLE_COMMAND_LIST, hl);

	if (!CHECK(l, M_LIST) || !GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (sig || nwait)
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	GRAPH(h)->initialized = true;	/* nothing to upload */
	return l->closed ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_SUCCESS;
}

/*
 * The execute command takes the arguments' values as they are now: later
 * SetArgumentValue calls do not change what was recorded.
 */
static ze_result_t g_append_exec(ze_command_list_handle_t hl,
				 npr_ze_graph_handle_t h, void *prof,
				 ze_event_handle_t sig, uint32_t nwait,
				 ze_event_handle_t *wait)
{
	struct vnpu_list *l = translate(ZEL_HANDLE_COMMAND_LIST, hl);
	struct vnpu_graph *g = GRAPH(h);
	struct npr_req_create rc;
	struct vnpu_cmd *cmd;
	ze_result_t r = ZE_RESULT_SUCCESS;
	uint32_t i;

	if (!CHECK(l, M_LIST) || !GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (prof || sig || nwait)
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	if (l->closed || l->ctx != g->ctx)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	if (l->ncmds == l->cap) {
		int cap = l->cap ? 2 * l->cap : 4;
		struct vnpu_cmd *c = realloc(l->cmds, cap * sizeof(*c));

		if (!c)
			return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		l->cmds = c;
		l->cap = cap;
	}
	npr_prep_req_create(&rc, g->exec);
	if (npr_ioctl(g->fd, NPR_IOCTL_REQ_CREATE, &rc))
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	pthread_mutex_lock(&g->lock);
	pthread_mutex_lock(&mem_lock);
	for (i = 0; i < g->nargs && !r; i++) {
		struct vnpu_arg *a = &g->args[i];
		struct npr_tensor_arg t;
		uint32_t k;

		if (!g->value[i]) {
			fprintf(stderr, "vnpu: argument %u (%s) was not set before the execute was appended\n",
				i, a->name);
			r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
			break;
		}
		if (!alloc_find(g->value[i], a->bytes)) {
			fprintf(stderr, "vnpu: argument %u (%s) is not a %zu-byte allocation of this driver\n",
				i, a->name, a->bytes);
			r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
			break;
		}
		npr_prep_tensor(&t, rc.req, a->index, a->out, g->value[i],
				a->bytes);
		t.flags |= NPR_TENSOR_BIND;
		t.elem_type = a->elem;
		t.rank = a->rank;
		for (k = 0; k < a->rank; k++)
			t.dims[k] = a->dims[k];
		if (npr_ioctl(g->fd, NPR_IOCTL_SET_TENSOR, &t)) {
			fprintf(stderr, "vnpu: argument %u: %s\n", i,
				npr_last_error());
			r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
		}
	}
	pthread_mutex_unlock(&mem_lock);
	pthread_mutex_unlock(&g->lock);
	if (r) {
		struct npr_handle_destroy hd = {
			.size = sizeof(hd), .handle = rc.req,
		};

		npr_ioctl(g->fd, NPR_IOCTL_HANDLE_DESTROY, &hd);
		return r;
	}
	cmd = &l->cmds[l->ncmds++];
	cmd->graph = g;
	cmd->req = rc.req;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t g_native(npr_ze_graph_handle_t h, size_t *size,
			    uint8_t *buf)
{
	struct vnpu_graph *g = GRAPH(h);

	if (!GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!size)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (!buf) {
		*size = g->blob_size;
		return ZE_RESULT_SUCCESS;
	}
	if (*size < g->blob_size)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	memcpy(buf, g->blob, g->blob_size);
	*size = g->blob_size;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t g_native2(npr_ze_graph_handle_t h, size_t *size,
			     const uint8_t **buf)
{
	if (!GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!size || !buf)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	*size = GRAPH(h)->blob_size;
	*buf = GRAPH(h)->blob;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t g_dev_props(ze_device_handle_t d,
			       struct npr_ze_device_graph_properties *p)
{
	if (!dev_ok(d, true))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	p->graphExtensionVersion = NPR_ZE_GRAPH_VERSION_1_8;
	p->compilerMajor = VNPU_COMPILER_MAJOR;
	p->compilerMinor = VNPU_COMPILER_MINOR;
	p->graphFormatsSupported = NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE;
	p->maxOVOpsetVersionSupported = VNPU_MAX_OPSET;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t g_dev_props2(ze_device_handle_t d,
				struct npr_ze_device_graph_properties_2 *p)
{
	ze_result_t r = g_dev_props(d, (void *)p);

	if (r)
		return r;
	p->elfVersion[0] = 1;
	p->elfVersion[1] = p->elfVersion[2] = 0;
	p->runtimeVersion[0] = 1;
	p->runtimeVersion[1] = p->runtimeVersion[2] = 0;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t q_create2(ze_context_handle_t hc, ze_device_handle_t hd,
			     const struct npr_ze_graph_desc_2 *desc,
			     npr_ze_graph_query_handle_t *out)
{
	npr_ze_graph_handle_t gh;
	struct vnpu_query *q;
	struct npr_ze_graph_desc_2 d;
	ze_result_t r;

	if (!desc || !out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	/*
	 * Every layer the CPU device can compile is supported: compile the
	 * whole model; the answer is all layers or none.
	 */
	d = *desc;
	d.pBuildFlags = NULL;
	r = g_create2(hc, hd, &d, &gh);
	q = calloc(1, sizeof(*q));
	if (!q) {
		if (!r)
			graph_free(GRAPH(gh));
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	q->magic = M_QUERY;
	q->layers = strdup(r ? "" : "<all>");
	if (!r)
		graph_free(GRAPH(gh));
	if (!q->layers) {
		free(q);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	*out = (npr_ze_graph_query_handle_t)q;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t q_create(ze_context_handle_t hc, ze_device_handle_t hd,
			    const struct npr_ze_graph_desc *desc,
			    npr_ze_graph_query_handle_t *out)
{
	struct npr_ze_graph_desc_2 d;

	if (!desc)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	memset(&d, 0, sizeof(d));
	memcpy(&d, desc, sizeof(*desc));
	return q_create2(hc, hd, &d, out);
}

static ze_result_t q_destroy(npr_ze_graph_query_handle_t h)
{
	struct vnpu_query *q = (void *)h;

	if (!CHECK(q, M_QUERY))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	free(q->layers);
	q->magic = 0;
	free(q);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t q_layers(npr_ze_graph_query_handle_t h, size_t *size,
			    char *buf)
{
	struct vnpu_query *q = (void *)h;
	size_t need;

	if (!CHECK(q, M_QUERY))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!size)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	need = strlen(q->layers) + 1;
	if (buf) {
		if (*size < need)
			return ZE_RESULT_ERROR_INVALID_SIZE;
		memcpy(buf, q->layers, need);
	}
	*size = need;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t g_build_log(npr_ze_graph_handle_t h, uint32_t *size,
			       char *buf)
{
	uint32_t need = (uint32_t)strlen(build_log) + 1;

	if (!size)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (buf) {
		if (*size < need)
			return ZE_RESULT_ERROR_INVALID_SIZE;
		memcpy(buf, build_log, need);
	}
	*size = need;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t g_ctx_mem(ze_context_handle_t hc, uint32_t type,
			     struct npr_ze_graph_memory_query *m)
{
	struct vnpu_alloc *a;

	if (!ctx_of(hc, true))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!m)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (type != NPR_ZE_GRAPH_MEM_DDR)
		return ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
	m->total = 1ULL << 32;
	m->allocated = 0;
	pthread_mutex_lock(&mem_lock);
	for (a = allocs; a; a = a->next)
		m->allocated += a->size;
	pthread_mutex_unlock(&mem_lock);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t g_init(npr_ze_graph_handle_t h)
{
	if (!GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	GRAPH(h)->initialized = true;
	return ZE_RESULT_SUCCESS;
}

static const struct npr_ze_graph_ddi graph_ddi = {
	.pfnCreate = g_create,
	.pfnDestroy = g_destroy,
	.pfnGetProperties = g_props,
	.pfnGetArgumentProperties = g_arg_props,
	.pfnSetArgumentValue = g_set_arg,
	.pfnAppendGraphInitialize = g_append_init,
	.pfnAppendGraphExecute = g_append_exec,
	.pfnGetNativeBinary = g_native,
	.pfnDeviceGetGraphProperties = g_dev_props,
	.pfnGraphGetArgumentMetadata = g_arg_meta,
	.pfnGetArgumentProperties2 = g_arg_props2,
	.pfnGetArgumentProperties3 = g_arg_props3,
	.pfnQueryNetworkCreate = q_create,
	.pfnQueryNetworkDestroy = q_destroy,
	.pfnQueryNetworkGetSupportedLayers = q_layers,
	.pfnBuildLogGetString = g_build_log,
	.pfnCreate2 = g_create2,
	.pfnQueryNetworkCreate2 = q_create2,
	.pfnQueryContextMemory = g_ctx_mem,
	.pfnDeviceGetGraphProperties2 = g_dev_props2,
	.pfnGetNativeBinary2 = g_native2,
	.pfnGetProperties2 = g_props2,
	.pfnGraphInitialize = g_init,
};

/* ---- the table getters the loader looks up ----------------------------- */

static bool version_ok(ze_api_version_t v)
{
	return ZE_MAJOR_VERSION(v) == 1;
}

#define GETTER_BEGIN(fn, type)						\
VNPU_API ze_result_t fn(ze_api_version_t v, type *t);			\
VNPU_API ze_result_t fn(ze_api_version_t v, type *t)			\
{									\
	if (!t)								\
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;		\
	if (!version_ok(v))						\
		return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
#define GETTER_END	return ZE_RESULT_SUCCESS; }
#define EMPTY_GETTER(fn, type)	GETTER_BEGIN(fn, type) GETTER_END

GETTER_BEGIN(zeGetGlobalProcAddrTable, ze_global_dditable_t)
	t->pfnInit = vnpu_init;
GETTER_END

GETTER_BEGIN(zeGetDriverProcAddrTable, ze_driver_dditable_t)
	t->pfnGet = vnpu_driver_get;
	t->pfnGetApiVersion = vnpu_driver_api_version;
	t->pfnGetProperties = vnpu_driver_props;
	t->pfnGetIpcProperties = vnpu_driver_ipc;
	t->pfnGetExtensionProperties = vnpu_driver_ext_props;
	t->pfnGetExtensionFunctionAddress = vnpu_driver_ext_fn;
GETTER_END

GETTER_BEGIN(zeGetDeviceProcAddrTable, ze_device_dditable_t)
	t->pfnGet = vnpu_device_get;
	t->pfnGetSubDevices = vnpu_device_sub;
	t->pfnGetProperties = vnpu_device_props;
	t->pfnGetCommandQueueGroupProperties = vnpu_device_queue_groups;
	t->pfnGetStatus = vnpu_device_status;
GETTER_END

GETTER_BEGIN(zeGetContextProcAddrTable, ze_context_dditable_t)
	t->pfnCreate = vnpu_context_create;
	t->pfnDestroy = vnpu_context_destroy;
	t->pfnGetStatus = vnpu_context_status;
GETTER_END

GETTER_BEGIN(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t)
	t->pfnCreate = vnpu_queue_create;
	t->pfnDestroy = vnpu_queue_destroy;
	t->pfnExecuteCommandLists = vnpu_queue_execute;
	t->pfnSynchronize = vnpu_queue_sync;
GETTER_END

GETTER_BEGIN(zeGetCommandListProcAddrTable, ze_command_list_dditable_t)
	t->pfnCreate = vnpu_list_create;
	t->pfnDestroy = vnpu_list_destroy;
	t->pfnClose = vnpu_list_close;
	t->pfnReset = vnpu_list_reset;
	t->pfnAppendBarrier = vnpu_list_barrier;
GETTER_END

GETTER_BEGIN(zeGetFenceProcAddrTable, ze_fence_dditable_t)
	t->pfnCreate = vnpu_fence_create;
	t->pfnDestroy = vnpu_fence_destroy;
	t->pfnHostSynchronize = vnpu_fence_sync;
	t->pfnQueryStatus = vnpu_fence_query;
	t->pfnReset = vnpu_fence_reset;
GETTER_END

GETTER_BEGIN(zeGetMemProcAddrTable, ze_mem_dditable_t)
	t->pfnAllocHost = vnpu_mem_alloc_host;
	t->pfnFree = vnpu_mem_free;
	t->pfnGetAllocProperties = vnpu_mem_props;
GETTER_END

EMPTY_GETTER(zeGetEventProcAddrTable, ze_event_dditable_t)
EMPTY_GETTER(zeGetEventPoolProcAddrTable, ze_event_pool_dditable_t)
EMPTY_GETTER(zeGetImageProcAddrTable, ze_image_dditable_t)
EMPTY_GETTER(zeGetKernelProcAddrTable, ze_kernel_dditable_t)
EMPTY_GETTER(zeGetModuleProcAddrTable, ze_module_dditable_t)
EMPTY_GETTER(zeGetModuleBuildLogProcAddrTable, ze_module_build_log_dditable_t)
EMPTY_GETTER(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)
EMPTY_GETTER(zeGetSamplerProcAddrTable, ze_sampler_dditable_t)
EMPTY_GETTER(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)

EMPTY_GETTER(zetGetDeviceProcAddrTable, zet_device_dditable_t)
EMPTY_GETTER(zetGetContextProcAddrTable, zet_context_dditable_t)
EMPTY_GETTER(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)
EMPTY_GETTER(zetGetKernelProcAddrTable, zet_kernel_dditable_t)
EMPTY_GETTER(zetGetModuleProcAddrTable, zet_module_dditable_t)
EMPTY_GETTER(zetGetDebugProcAddrTable, zet_debug_dditable_t)
EMPTY_GETTER(zetGetMetricProcAddrTable, zet_metric_dditable_t)
EMPTY_GETTER(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)
EMPTY_GETTER(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)
EMPTY_GETTER(zetGetMetricQueryPoolProcAddrTable,
	     zet_metric_query_pool_dditable_t)
EMPTY_GETTER(zetGetMetricStreamerProcAddrTable,
	     zet_metric_streamer_dditable_t)
EMPTY_GETTER(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)

EMPTY_GETTER(zesGetDeviceProcAddrTable, zes_device_dditable_t)
EMPTY_GETTER(zesGetDriverProcAddrTable, zes_driver_dditable_t)
EMPTY_GETTER(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)
EMPTY_GETTER(zesGetEngineProcAddrTable, zes_engine_dditable_t)
EMPTY_GETTER(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)
EMPTY_GETTER(zesGetFanProcAddrTable, zes_fan_dditable_t)
EMPTY_GETTER(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)
EMPTY_GETTER(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)
EMPTY_GETTER(zesGetLedProcAddrTable, zes_led_dditable_t)
EMPTY_GETTER(zesGetMemoryProcAddrTable, zes_memory_dditable_t)
EMPTY_GETTER(zesGetPerformanceFactorProcAddrTable,
	     zes_performance_factor_dditable_t)
EMPTY_GETTER(zesGetPowerProcAddrTable, zes_power_dditable_t)
EMPTY_GETTER(zesGetPsuProcAddrTable, zes_psu_dditable_t)
EMPTY_GETTER(zesGetRasProcAddrTable, zes_ras_dditable_t)
EMPTY_GETTER(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)
EMPTY_GETTER(zesGetStandbyProcAddrTable, zes_standby_dditable_t)
EMPTY_GETTER(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)
