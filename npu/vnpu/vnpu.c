// SPDX-License-Identifier: MIT
/*
 * vnpu: a software NPU, packaged as a Level Zero driver library that the
 * system's Level Zero loader loads like the Intel NPU driver (soname
 * libze_intel_vpu.so.1, or any path listed in ZE_ENABLE_ALT_DRIVERS).
 *
 * It answers as an NPU 3720 (VNPU_PLATFORM=3720, the default) or 4000
 * (VNPU_PLATFORM=4000) with the NPU driver UUID, implements the core calls
 * npu/ uses and graph extension slots 0-22 (version 1.8, or the slots of
 * the older version VNPU_GRAPH_VERSION names; graphs ask for the
 * initialisation stage VNPU_INIT_STAGE names), accepts serialized
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
 *   VNPU_FAULT_UUID=1         the driver reports a UUID that is not the
 *                             NPU driver's
 *
 * Read when the loader initialises the driver:
 *   VNPU_DEVICES=N            N NPUs (1 to 4) instead of one
 *   VNPU_GRAPH_VERSION=N      the graph extension is 1.N (0: none), like an
 *                             older driver; the slots of later versions
 *                             refuse every call
 *   VNPU_INIT_STAGE=STAGE     INITIALIZE (default) or COMMAND_LIST_INITIALIZE
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

#include "vnpu.h"

#define VNPU_API	__attribute__((visibility("default")))

struct vnpu_device vnpu_dev = { .magic = 1 };
/* VNPU_DEVICES: vnpu_dev, then these */
static struct vnpu_device vnpu_more[VNPU_MAX_DEVICES - 1];
static uint32_t vnpu_ndev = 1;
int vnpu_drv;		/* the driver handle points here */
pthread_mutex_t vnpu_mem_lock = PTHREAD_MUTEX_INITIALIZER;
struct vnpu_alloc *vnpu_allocs;
static uint64_t next_alloc_id = 1;
__thread char vnpu_build_log[VNPU_LOG_MAX];

/**
 * vnpu_set_log() - set the calling thread's build log
 * @fmt: printf format of the message, then its arguments
 *
 * The log is what the graph extension's BuildLogGetString returns; it is
 * per thread and truncated to VNPU_LOG_MAX bytes.
 */
void vnpu_set_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(vnpu_build_log, sizeof(vnpu_build_log), fmt, ap);
	va_end(ap);
}

/**
 * vnpu_warn() - record why a call was refused
 * @fmt: printf format of the reason, then its arguments
 *
 * The reason goes to the calling thread's build log (read with
 * BuildLogGetString), as vnpu_set_log(), and with VNPU_DEBUG=1 also to
 * stderr.
 */
void vnpu_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(vnpu_build_log, sizeof(vnpu_build_log), fmt, ap);
	va_end(ap);
	if (vnpu_env_long("VNPU_DEBUG"))
		fprintf(stderr, "%s\n", vnpu_build_log);
}

/**
 * vnpu_env_long() - an environment variable as a number
 * @name: the variable, read at each call
 *
 * Return: its value as strtol() reads it in base 10; 0 if it is unset.
 */
long vnpu_env_long(const char *name)
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

/**
 * vnpu_translate() - unwrap a handle the Level Zero loader wrapped
 * @type: the handle's kind
 * @h: a handle as an extension call receives it; may be NULL
 *
 * Extension calls get the loader's handles, not the driver's.  The
 * loader's zelLoaderTranslateHandle() is looked up once, in the loaded
 * libze_loader.so.1.
 *
 * Return: the driver's handle; @h itself if there is no loader or it does
 * not know @h; NULL for NULL.
 */
void *vnpu_translate(zel_handle_type_t type, void *h)
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

/**
 * vnpu_ctx_of() - the vnpu context behind a context handle
 * @h: a context handle
 * @ext: true if @h came through an extension call (loader-wrapped, see
 *       vnpu_translate())
 *
 * Return: the context, or NULL if @h is not a live vnpu context.
 */
struct vnpu_context *vnpu_ctx_of(ze_context_handle_t h, bool ext)
{
	struct vnpu_context *c = ext ? vnpu_translate(ZEL_HANDLE_CONTEXT, h) :
				       (void *)h;

	return CHECK(c, M_CONTEXT) ? c : NULL;
}

/* The vnpu device behind a driver handle, or NULL. */
static struct vnpu_device *device_of(void *d)
{
	uint32_t i;

	if (d == (void *)&vnpu_dev)
		return &vnpu_dev;
	for (i = 1; i < vnpu_ndev; i++)
		if (d == (void *)&vnpu_more[i - 1])
			return &vnpu_more[i - 1];
	return NULL;
}

/**
 * vnpu_dev_ok() - whether a device handle is a vnpu device
 * @h: a device handle
 * @ext: true if @h came through an extension call (loader-wrapped, see
 *       vnpu_translate())
 *
 * Return: true if @h is one of the devices vnpu reports (VNPU_DEVICES).
 */
bool vnpu_dev_ok(ze_device_handle_t h, bool ext)
{
	void *d = ext ? vnpu_translate(ZEL_HANDLE_DEVICE, h) : (void *)h;

	return device_of(d) != NULL;
}

/**
 * vnpu_alloc_find() - the host allocation a pointer lies in
 * @p: a pointer, anywhere inside an allocation
 * @need: bytes that must follow @p inside it
 *
 * Context: the caller holds vnpu_mem_lock.
 *
 * Return: the zeMemAllocHost() allocation holding @p with at least @need
 * bytes from @p to its end, or NULL.
 */
struct vnpu_alloc *vnpu_alloc_find(const void *p, size_t need)
{
	struct vnpu_alloc *a;

	for (a = vnpu_allocs; a; a = a->next)
		if ((const char *)p >= (char *)a->ptr &&
		    (const char *)p < (char *)a->ptr + a->size)
			return (size_t)((char *)a->ptr + a->size -
					(const char *)p) >= need ? a : NULL;
	return NULL;
}

/* ---- driver ------------------------------------------------------------ */

/*
 * VNPU_GRAPH_VERSION=N: the graph extension at 1.N (0: none), like an
 * older driver; VNPU_INIT_STAGE: the initialisation stage a graph of
 * extension 1.8 asks for.  A value vnpu does not know is reported on
 * stderr and the default used.
 */
static void pick_mode(void)
{
	const char *gv = getenv("VNPU_GRAPH_VERSION");
	const char *st = getenv("VNPU_INIT_STAGE");
	char *end = NULL;
	long v = VNPU_GRAPH_NEWEST;

	if (gv && *gv) {
		v = strtol(gv, &end, 10);
		if (*end || v < 0 || v > VNPU_GRAPH_NEWEST) {
			fprintf(stderr, "vnpu: VNPU_GRAPH_VERSION=%s: not 0 to %d; presenting 1.%d\n",
				gv, VNPU_GRAPH_NEWEST, VNPU_GRAPH_NEWEST);
			v = VNPU_GRAPH_NEWEST;
		}
	}
	vnpu_dev.graph_minor = (uint32_t)v;
	vnpu_dev.init_stage = NPR_ZE_GRAPH_STAGE_INITIALIZE;
	if (st && !strcmp(st, "COMMAND_LIST_INITIALIZE"))
		vnpu_dev.init_stage = NPR_ZE_GRAPH_STAGE_COMMAND_LIST_INITIALIZE;
	else if (st && *st && strcmp(st, "INITIALIZE"))
		fprintf(stderr, "vnpu: VNPU_INIT_STAGE=%s: not INITIALIZE or COMMAND_LIST_INITIALIZE; using INITIALIZE\n",
			st);
	/* before 1.8 there is no host-side initialisation */
	if (vnpu_dev.graph_minor < 8)
		vnpu_dev.init_stage = NPR_ZE_GRAPH_STAGE_COMMAND_LIST_INITIALIZE;
	vnpu_graph_version(vnpu_dev.graph_minor);
}

/*
 * VNPU_DEVICES=N: N NPUs (1 to VNPU_MAX_DEVICES), alike but for their
 * index, which their PCI bus, UUID and name carry.
 */
static void pick_devices(void)
{
	const char *s = getenv("VNPU_DEVICES");
	char *end = NULL;
	long n = 1;
	uint32_t i;

	if (s && *s) {
		n = strtol(s, &end, 10);
		if (*end || n < 1 || n > VNPU_MAX_DEVICES) {
			fprintf(stderr, "vnpu: VNPU_DEVICES=%s: not 1 to %d; presenting one\n",
				s, VNPU_MAX_DEVICES);
			n = 1;
		}
	}
	for (i = 1; i < (uint32_t)n; i++) {
		vnpu_more[i - 1] = vnpu_dev;
		vnpu_more[i - 1].index = i;
	}
	vnpu_ndev = (uint32_t)n;
}

static void pick_platform(void)
{
	const char *p = getenv("VNPU_PLATFORM");

	if (p && !strcmp(p, "4000")) {
		vnpu_dev.pci_id = NPR_NPU_PCI_LNL;
		vnpu_dev.platform = "4000";
		vnpu_dev.tiles = 6;
	} else {
		vnpu_dev.pci_id = NPR_NPU_PCI_MTL;
		vnpu_dev.platform = "3720";
		vnpu_dev.tiles = 2;
	}
	pick_mode();
	pick_devices();
}

/**
 * vnpu_init() - zeInit
 * @flags: 0 or ZE_INIT_FLAG_VPU_ONLY
 *
 * Picks, once, the platform from VNPU_PLATFORM ("4000", else 3720), the
 * graph extension version from VNPU_GRAPH_VERSION and the initialisation
 * stage from VNPU_INIT_STAGE.
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_UNINITIALIZED for flags
 * without ZE_INIT_FLAG_VPU_ONLY (a GPU-only init finds no vnpu).
 */
static ze_result_t vnpu_init(ze_init_flags_t flags)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (flags && !(flags & ZE_INIT_FLAG_VPU_ONLY))
		return ZE_RESULT_ERROR_UNINITIALIZED;
	pthread_once(&once, pick_platform);
	return ZE_RESULT_SUCCESS;
}

/**
 * vnpu_driver_get() - zeDriverGet: the one vnpu driver
 * @count: in: room in @out (0: count only); out: 1
 * @out: out: the driver handle, or NULL
 *
 * Return: ZE_RESULT_SUCCESS, or ZE_RESULT_ERROR_INVALID_NULL_POINTER.
 */
static ze_result_t vnpu_driver_get(uint32_t *count, ze_driver_handle_t *out)
{
	if (!count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (*count && out)
		out[0] = (ze_driver_handle_t)&vnpu_drv;
	*count = 1;
	return ZE_RESULT_SUCCESS;
}

/**
 * vnpu_driver_api_version() - zeDriverGetApiVersion: 1.4
 * @d: the driver
 * @v: out: ZE_API_VERSION_1_4
 *
 * Return: ZE_RESULT_SUCCESS, ZE_RESULT_ERROR_INVALID_NULL_HANDLE or
 * _INVALID_NULL_POINTER.
 */
static ze_result_t vnpu_driver_api_version(ze_driver_handle_t d,
					   ze_api_version_t *v)
{
	if (d != (void *)&vnpu_drv)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!v)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	*v = ZE_API_VERSION_1_4;
	return ZE_RESULT_SUCCESS;
}

/**
 * vnpu_driver_props() - zeDriverGetProperties
 * @d: the driver
 * @p: out: the NPU driver's UUID (another with VNPU_FAULT_UUID=1) and
 *     driver version VNPU_DRIVER_VERSION; nothing else is filled
 *
 * Return: ZE_RESULT_SUCCESS, ZE_RESULT_ERROR_INVALID_NULL_HANDLE or
 * _INVALID_NULL_POINTER.
 */
static ze_result_t vnpu_driver_props(ze_driver_handle_t d,
				     ze_driver_properties_t *p)
{
	static const uint8_t uuid[16] = NPR_ZE_NPU_DRIVER_UUID;

	if (d != (void *)&vnpu_drv)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	memcpy(p->uuid.id, uuid, sizeof(uuid));
	if (vnpu_env_long("VNPU_FAULT_UUID"))
		p->uuid.id[15] ^= 0xff;	/* some other driver */
	p->driverVersion = VNPU_DRIVER_VERSION;
	return ZE_RESULT_SUCCESS;
}

/**
 * vnpu_driver_ipc() - zeDriverGetIpcProperties: no IPC
 * @d: the driver
 * @p: out: flags 0
 *
 * Return: ZE_RESULT_SUCCESS, ZE_RESULT_ERROR_INVALID_NULL_HANDLE or
 * _INVALID_NULL_POINTER.
 */
static ze_result_t vnpu_driver_ipc(ze_driver_handle_t d,
				   ze_driver_ipc_properties_t *p)
{
	if (d != (void *)&vnpu_drv)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	p->flags = 0;
	return ZE_RESULT_SUCCESS;
}

/**
 * vnpu_driver_ext_props() - zeDriverGetExtensionProperties
 * @d: the driver
 * @count: in: room in @p (0: count only); out: the number listed
 * @p: out: the extensions, or NULL
 *
 * The graph extension under its base name at the version presented
 * (VNPU_GRAPH_VERSION, default 1.8) and as _1_2 ... _1_N, then the NPU
 * command-queue extension and the graph profiling extension (1.0); no
 * graph extension for VNPU_GRAPH_VERSION=0.
 *
 * Return: ZE_RESULT_SUCCESS, ZE_RESULT_ERROR_INVALID_NULL_HANDLE or
 * _INVALID_NULL_POINTER.
 */
static ze_result_t vnpu_driver_ext_props(ze_driver_handle_t d, uint32_t *count,
					 ze_driver_extension_properties_t *p)
{
	uint32_t n, i, top = vnpu_dev.graph_minor;

	if (d != (void *)&vnpu_drv)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	n = top;	/* base name + _1_2 .. _1_top */
	n += 2;	/* then the NPU command-queue and profiling extensions */
	if (!*count || !p) {
		*count = n;
		return ZE_RESULT_SUCCESS;
	}
	for (i = 0; i < n && i < *count; i++) {
		memset(&p[i], 0, sizeof(p[i]));
		if (i == n - 1) {
			snprintf(p[i].name, sizeof(p[i].name), "%s",
				 NPR_ZE_PROFILING_EXT_NAME);
			p[i].version = NPR_ZE_PROFILING_VERSION_1_0;
		} else if (i == n - 2) {
			snprintf(p[i].name, sizeof(p[i].name), "%s",
				 NPR_ZE_CQ_NPU_EXT_NAME);
			p[i].version = NPR_ZE_CQ_NPU_VERSION_1_0;
		} else if (!i) {
			snprintf(p[i].name, sizeof(p[i].name), "%s",
				 NPR_ZE_GRAPH_EXT_NAME);
			p[i].version = NPR_ZE_GRAPH_VERSION(top);
		} else {
			snprintf(p[i].name, sizeof(p[i].name), "%s_1_%u",
				 NPR_ZE_GRAPH_EXT_NAME, i + 1);
			p[i].version = NPR_ZE_GRAPH_VERSION(i + 1);
		}
	}
	*count = i;
	return ZE_RESULT_SUCCESS;
}

/**
 * vnpu_driver_ext_fn() - zeDriverGetExtensionFunctionAddress
 * @d: the driver
 * @name: the extension's name; any name containing the graph extension's
 *        gets the one graph table (all 1.x versions share it)
 * @fn: out: the extension's function table
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_NULL_POINTER, _INVALID_ARGUMENT for another extension.
 */
static ze_result_t vnpu_driver_ext_fn(ze_driver_handle_t d, const char *name,
				      void **fn)
{
	if (d != (void *)&vnpu_drv)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!name || !fn)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (!strcmp(name, NPR_ZE_CQ_NPU_EXT_NAME)) {
		*fn = (void *)&vnpu_cq_npu_ddi;
		return ZE_RESULT_SUCCESS;
	}
	if (!strcmp(name, NPR_ZE_PROFILING_EXT_NAME)) {
		*fn = (void *)&vnpu_prof_ddi;
		return ZE_RESULT_SUCCESS;
	}
	if (!strstr(name, NPR_ZE_GRAPH_EXT_NAME))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	*fn = (void *)&vnpu_graph_ddi;
	return ZE_RESULT_SUCCESS;
}

/* ---- device ------------------------------------------------------------ */

/**
 * vnpu_device_get() - zeDeviceGet: the NPUs (one, or VNPU_DEVICES)
 * @d: the driver
 * @count: in: room in @out (0: count only); out: the number listed
 * @out: out: the device handles, or NULL
 *
 * Return: ZE_RESULT_SUCCESS, ZE_RESULT_ERROR_INVALID_NULL_HANDLE or
 * _INVALID_NULL_POINTER.
 */
static ze_result_t vnpu_device_get(ze_driver_handle_t d, uint32_t *count,
				   ze_device_handle_t *out)
{
	uint32_t i;

	if (d != (void *)&vnpu_drv)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (!*count || !out) {
		*count = vnpu_ndev;
		return ZE_RESULT_SUCCESS;
	}
	for (i = 0; i < vnpu_ndev && i < *count; i++)
		out[i] = i ? (ze_device_handle_t)&vnpu_more[i - 1] :
			     (ze_device_handle_t)&vnpu_dev;
	*count = i;
	return ZE_RESULT_SUCCESS;
}

/**
 * vnpu_device_sub() - zeDeviceGetSubDevices: none
 * @d: the device
 * @count: out: 0
 * @out: not written
 *
 * Return: ZE_RESULT_SUCCESS, ZE_RESULT_ERROR_INVALID_NULL_HANDLE or
 * _INVALID_NULL_POINTER.
 */
static ze_result_t vnpu_device_sub(ze_device_handle_t d, uint32_t *count,
				   ze_device_handle_t *out)
{
	if (!vnpu_dev_ok(d, false))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	*count = 0;
	return ZE_RESULT_SUCCESS;
}

/**
 * vnpu_device_props() - zeDeviceGetProperties
 * @d: the device
 * @p: out: a VPU with the platform's PCI id, the NPU device UUID (its
 *     last byte plus the device's index), the tiles as slices, the clock
 *     in Hz as the NPU plugin's GOPS formula expects; name "vnpu software
 *     NPU <platform> (npuring)", " #<index>" added after the platform for
 *     every device but the first
 *
 * Return: ZE_RESULT_SUCCESS, ZE_RESULT_ERROR_INVALID_NULL_HANDLE or
 * _INVALID_NULL_POINTER.
 */
static ze_result_t vnpu_device_props(ze_device_handle_t d,
				     ze_device_properties_t *p)
{
	static const uint8_t uuid[16] = NPR_ZE_NPU_DEVICE_UUID;
	struct vnpu_device *dv = device_of(d);
	char idx[16] = "";

	if (!dv)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	p->type = ZE_DEVICE_TYPE_VPU;
	p->vendorId = 0x8086;
	p->deviceId = vnpu_dev.pci_id;
	p->flags = ZE_DEVICE_PROPERTY_FLAG_INTEGRATED;
	p->subdeviceId = 0;
	/* in Hz, as the NPU plugin's GOPS formula expects */
	p->coreClockRate = vnpu_dev.tiles == 2 ? 1400000000u : 1950000000u;
	p->maxMemAllocSize = 1ULL << 32;
	p->maxHardwareContexts = 64;
	p->maxCommandQueuePriority = 0;
	p->numThreadsPerEU = 1;
	p->physicalEUSimdWidth = 512;
	p->numEUsPerSubslice = 1;
	p->numSubslicesPerSlice = 1;
	p->numSlices = vnpu_dev.tiles;
	p->timerResolution = 1;
	p->timestampValidBits = 64;
	p->kernelTimestampValidBits = 0;
	memcpy(p->uuid.id, uuid, sizeof(uuid));
	p->uuid.id[15] = (uint8_t)(p->uuid.id[15] + dv->index);
	if (dv->index)
		snprintf(idx, sizeof(idx), " #%u", dv->index);
	snprintf(p->name, sizeof(p->name),
		 "vnpu software NPU %s%s (npuring)", vnpu_dev.platform, idx);
	return ZE_RESULT_SUCCESS;
}

/**
 * vnpu_device_queue_groups() - zeDeviceGetCommandQueueGroupProperties
 * @d: the device
 * @count: in: room in @p (0: count only); out: 1
 * @p: out: one compute and copy group with one queue, or NULL
 *
 * Return: ZE_RESULT_SUCCESS, ZE_RESULT_ERROR_INVALID_NULL_HANDLE or
 * _INVALID_NULL_POINTER.
 */
static ze_result_t vnpu_device_queue_groups(ze_device_handle_t d,
		uint32_t *count, ze_command_queue_group_properties_t *p)
{
	if (!vnpu_dev_ok(d, false))
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

/**
 * vnpu_device_pci() - zeDevicePciGetPropertiesExt
 * @d: the device
 * @p: out: address 0000:00:0b.0, where the NPU sits on Meteor Lake and
 *     Lunar Lake (the bus is the device's index: 0000:01:0b.0 for the
 *     second of VNPU_DEVICES); link speed unknown (-1)
 *
 * Return: ZE_RESULT_SUCCESS, ZE_RESULT_ERROR_INVALID_NULL_HANDLE or
 * _INVALID_NULL_POINTER.
 */
static ze_result_t vnpu_device_pci(ze_device_handle_t d,
				   ze_pci_ext_properties_t *p)
{
	struct vnpu_device *dv = device_of(d);

	if (!dv)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	p->address.domain = 0;
	p->address.bus = dv->index;
	p->address.device = 0x0b;
	p->address.function = 0;
	p->maxSpeed.genVersion = -1;
	p->maxSpeed.width = -1;
	p->maxSpeed.maxBandwidth = -1;
	return ZE_RESULT_SUCCESS;
}

/**
 * vnpu_device_status() - zeDeviceGetStatus
 * @d: the device
 *
 * A lost device shows in zeContextGetStatus() only.
 *
 * Return: ZE_RESULT_SUCCESS, or ZE_RESULT_ERROR_INVALID_NULL_HANDLE.
 */
static ze_result_t vnpu_device_status(ze_device_handle_t d)
{
	return vnpu_dev_ok(d, false) ? ZE_RESULT_SUCCESS :
				  ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

/* ---- context ----------------------------------------------------------- */

/**
 * vnpu_context_create() - zeContextCreate
 * @d: the driver
 * @desc: the context descriptor; its contents are not read
 * @out: out: the new context
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_NULL_POINTER, _OUT_OF_HOST_MEMORY.
 */
static ze_result_t vnpu_context_create(ze_driver_handle_t d,
				       const ze_context_desc_t *desc,
				       ze_context_handle_t *out)
{
	struct vnpu_context *c;

	if (d != (void *)&vnpu_drv)
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

/**
 * vnpu_context_destroy() - zeContextDestroy
 * @h: the context
 *
 * Also frees the host allocations still made in it.
 *
 * Return: ZE_RESULT_SUCCESS, or ZE_RESULT_ERROR_INVALID_NULL_HANDLE.
 */
static ze_result_t vnpu_context_destroy(ze_context_handle_t h)
{
	struct vnpu_context *c = vnpu_ctx_of(h, false);
	struct vnpu_alloc **pp;

	if (!c)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&vnpu_mem_lock);
	for (pp = &vnpu_allocs; *pp;) {
		struct vnpu_alloc *a = *pp;

		if (a->ctx == c) {
			*pp = a->next;
			free(a->ptr);
			free(a);
		} else {
			pp = &a->next;
		}
	}
	pthread_mutex_unlock(&vnpu_mem_lock);
	c->magic = 0;
	pthread_mutex_destroy(&c->lock);
	free(c);
	return ZE_RESULT_SUCCESS;
}

/**
 * vnpu_context_status() - zeContextGetStatus
 * @h: the context
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_DEVICE_LOST once
 * VNPU_FAULT_DEVICE_LOST has struck an execution of this context (it
 * stays lost); ZE_RESULT_ERROR_INVALID_NULL_HANDLE.
 */
static ze_result_t vnpu_context_status(ze_context_handle_t h)
{
	struct vnpu_context *c = vnpu_ctx_of(h, false);
	bool lost;

	if (!c)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&c->lock);
	lost = c->lost;
	pthread_mutex_unlock(&c->lock);
	return lost ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_SUCCESS;
}

/* ---- memory ------------------------------------------------------------ */

/**
 * vnpu_mem_alloc_host() - zeMemAllocHost
 * @h: the context
 * @desc: the allocation descriptor; its flags are not read
 * @size: bytes, 1 to 1 TiB
 * @align: 0 or a power of two; at least page-aligned in any case
 * @out: out: the memory, freed with zeMemFree() or with the context
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_NULL_POINTER, _UNSUPPORTED_SIZE, _UNSUPPORTED_ALIGNMENT,
 * _OUT_OF_HOST_MEMORY; _OUT_OF_DEVICE_MEMORY when the memory cannot be
 * had or VNPU_FAULT_OOM=1.
 */
static ze_result_t vnpu_mem_alloc_host(ze_context_handle_t h,
				       const ze_host_mem_alloc_desc_t *desc,
				       size_t size, size_t align, void **out)
{
	struct vnpu_context *c = vnpu_ctx_of(h, false);
	struct vnpu_alloc *a;

	if (!c)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (!size || size > (1ULL << 40))
		return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
	if (align & (align - 1))
		return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
	if (vnpu_env_long("VNPU_FAULT_OOM"))
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
	pthread_mutex_lock(&vnpu_mem_lock);
	a->id = next_alloc_id++;
	a->next = vnpu_allocs;
	vnpu_allocs = a;
	pthread_mutex_unlock(&vnpu_mem_lock);
	*out = a->ptr;
	return ZE_RESULT_SUCCESS;
}

/**
 * vnpu_mem_free() - zeMemFree
 * @h: the context
 * @p: a zeMemAllocHost() pointer of this context
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_NULL_POINTER, _INVALID_ARGUMENT for a pointer that is not one.
 */
static ze_result_t vnpu_mem_free(ze_context_handle_t h, void *p)
{
	struct vnpu_context *c = vnpu_ctx_of(h, false);
	struct vnpu_alloc **pp;

	if (!c)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	pthread_mutex_lock(&vnpu_mem_lock);
	for (pp = &vnpu_allocs; *pp; pp = &(*pp)->next) {
		struct vnpu_alloc *a = *pp;

		if (a->ptr == p && a->ctx == c) {
			*pp = a->next;
			pthread_mutex_unlock(&vnpu_mem_lock);
			free(a->ptr);
			free(a);
			return ZE_RESULT_SUCCESS;
		}
	}
	pthread_mutex_unlock(&vnpu_mem_lock);
	return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

/**
 * vnpu_mem_props() - zeMemGetAllocProperties
 * @h: the context
 * @p: any pointer
 * @props: out: ZE_MEMORY_TYPE_HOST with the allocation's id and a 4 KiB
 *         page if @p lies in one of vnpu's allocations (of any context),
 *         else ZE_MEMORY_TYPE_UNKNOWN
 * @dev: out: NULL (host memory), if not NULL
 *
 * Return: ZE_RESULT_SUCCESS, ZE_RESULT_ERROR_INVALID_NULL_HANDLE or
 * _INVALID_NULL_POINTER.
 */
static ze_result_t vnpu_mem_props(ze_context_handle_t h, const void *p,
				  ze_memory_allocation_properties_t *props,
				  ze_device_handle_t *dev)
{
	struct vnpu_alloc *a;

	if (!vnpu_ctx_of(h, false))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p || !props)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	pthread_mutex_lock(&vnpu_mem_lock);
	a = vnpu_alloc_find(p, 0);
	props->type = a ? ZE_MEMORY_TYPE_HOST : ZE_MEMORY_TYPE_UNKNOWN;
	props->id = a ? a->id : 0;
	props->pageSize = a ? 4096 : 0;
	pthread_mutex_unlock(&vnpu_mem_lock);
	if (dev)
		*dev = NULL;
	return ZE_RESULT_SUCCESS;
}

/* ---- the table getters the loader looks up ----------------------------- */

static bool version_ok(ze_api_version_t v)
{
	return ZE_MAJOR_VERSION(v) == 1;
}

/**
 * GETTER_BEGIN() - define an exported Level Zero table getter
 * @fn: its name, as the loader looks it up (zeGetDriverProcAddrTable, ...)
 * @type: the dispatch table type it fills
 *
 * The function defined, ze_result_t @fn(ze_api_version_t v, @type *t),
 * fills the members of *t that vnpu implements (the statements up to
 * GETTER_END) and leaves the others as the loader passed them.
 * EMPTY_GETTER() defines one that fills nothing.  These are the only
 * symbols the library exports (vnpu.map).
 *
 * Return (of @fn): ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_POINTER
 * if t is NULL; ZE_RESULT_ERROR_UNSUPPORTED_VERSION for an API major
 * version other than 1.
 */
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

/** zeGetGlobalProcAddrTable() - zeInit */
GETTER_BEGIN(zeGetGlobalProcAddrTable, ze_global_dditable_t)
	t->pfnInit = vnpu_init;
GETTER_END

/** zeGetDriverProcAddrTable() - the zeDriver* calls vnpu implements */
GETTER_BEGIN(zeGetDriverProcAddrTable, ze_driver_dditable_t)
	t->pfnGet = vnpu_driver_get;
	t->pfnGetApiVersion = vnpu_driver_api_version;
	t->pfnGetProperties = vnpu_driver_props;
	t->pfnGetIpcProperties = vnpu_driver_ipc;
	t->pfnGetExtensionProperties = vnpu_driver_ext_props;
	t->pfnGetExtensionFunctionAddress = vnpu_driver_ext_fn;
GETTER_END

/** zeGetDeviceProcAddrTable() - the zeDevice* calls vnpu implements */
GETTER_BEGIN(zeGetDeviceProcAddrTable, ze_device_dditable_t)
	t->pfnGet = vnpu_device_get;
	t->pfnGetSubDevices = vnpu_device_sub;
	t->pfnGetProperties = vnpu_device_props;
	t->pfnGetCommandQueueGroupProperties = vnpu_device_queue_groups;
	t->pfnGetStatus = vnpu_device_status;
	t->pfnPciGetPropertiesExt = vnpu_device_pci;
GETTER_END

/** zeGetContextProcAddrTable() - zeContextCreate, Destroy and GetStatus */
GETTER_BEGIN(zeGetContextProcAddrTable, ze_context_dditable_t)
	t->pfnCreate = vnpu_context_create;
	t->pfnDestroy = vnpu_context_destroy;
	t->pfnGetStatus = vnpu_context_status;
GETTER_END

/** zeGetCommandQueueProcAddrTable() - the zeCommandQueue* calls (queue.c) */
GETTER_BEGIN(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t)
	t->pfnCreate = vnpu_queue_create;
	t->pfnDestroy = vnpu_queue_destroy;
	t->pfnExecuteCommandLists = vnpu_queue_execute;
	t->pfnSynchronize = vnpu_queue_sync;
GETTER_END

/** zeGetCommandListProcAddrTable() - the zeCommandList* calls (queue.c) */
GETTER_BEGIN(zeGetCommandListProcAddrTable, ze_command_list_dditable_t)
	t->pfnCreate = vnpu_list_create;
	t->pfnDestroy = vnpu_list_destroy;
	t->pfnClose = vnpu_list_close;
	t->pfnReset = vnpu_list_reset;
	t->pfnAppendBarrier = vnpu_list_barrier;
	t->pfnAppendMemoryCopy = vnpu_list_copy;
GETTER_END

/** zeGetFenceProcAddrTable() - the zeFence* calls (queue.c) */
GETTER_BEGIN(zeGetFenceProcAddrTable, ze_fence_dditable_t)
	t->pfnCreate = vnpu_fence_create;
	t->pfnDestroy = vnpu_fence_destroy;
	t->pfnHostSynchronize = vnpu_fence_sync;
	t->pfnQueryStatus = vnpu_fence_query;
	t->pfnReset = vnpu_fence_reset;
GETTER_END

/** zeGetMemProcAddrTable() - zeMemAllocHost, Free and GetAllocProperties */
GETTER_BEGIN(zeGetMemProcAddrTable, ze_mem_dditable_t)
	t->pfnAllocHost = vnpu_mem_alloc_host;
	t->pfnFree = vnpu_mem_free;
	t->pfnGetAllocProperties = vnpu_mem_props;
GETTER_END

/* The tables vnpu fills nothing in: no events, modules, kernels, tools or
 * sysman. */
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
