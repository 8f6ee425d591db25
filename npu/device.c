// SPDX-License-Identifier: MIT
/*
 * The npu backend's device side: binds the Level Zero loader, finds the
 * NPU driver and its devices, says why there is none, probes a device and
 * answers its properties.  Compiling and running models is in backend.c.
 *
 * The loader (libze_loader.so.1) is opened with dlopen() on the first
 * npr_open("npu"), so libnpuring runs where Level Zero is not installed.
 *
 * probe:          zeInitDrivers(NPU) where the loader has it, else
 *                 zeInit(VPU_ONLY); the driver whose UUID is the NPU
 *                 driver's, the graph extension (version >= 1.5), the
 *                 devices, one context per open device.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>


#if __has_include(<level_zero/ze_api.h>) && !defined(NPR_NO_LEVEL_ZERO)
#include "error.h"
#include "npu.h"
#include "sys.h"

/* The loader's entry points, resolved at run time. */
struct npr_ze_loader npr_ze;

static const char *const ze_names[] = {
	"zeInit", "zeDriverGet", "zeDriverGetProperties",
	"zeDriverGetExtensionProperties", "zeDriverGetExtensionFunctionAddress",
	"zeDeviceGet", "zeDeviceGetProperties", "zeContextCreate",
	"zeContextDestroy", "zeMemAllocHost", "zeMemFree",
	"zeCommandQueueCreate", "zeCommandQueueDestroy",
	"zeCommandQueueExecuteCommandLists", "zeCommandListCreate",
	"zeCommandListDestroy", "zeCommandListClose", "zeFenceCreate",
	"zeFenceDestroy", "zeFenceHostSynchronize", "zeFenceReset",
	"zeCommandListReset", "zeCommandListAppendMemoryCopy",
};

/* Optional entry points: older loaders may lack them. */
static ze_result_t (*ze_pci_props)(ze_device_handle_t,
				   ze_pci_ext_properties_t *);
static ze_result_t (*zel_versions)(size_t *, zel_component_version_t *);

_Static_assert(sizeof(npr_ze) == sizeof(ze_names) / sizeof(ze_names[0]) *
	       sizeof(void *), "one name per loader entry point");

/* What the one-time initialisation found. */
struct npr_npu_found npr_npu;

/**
 * npr_ze_result_str() - a Level Zero result code as text
 * @r: the ze_result_t a Level Zero call returned
 *
 * Return: a static string ("device lost", "invalid argument", ...); "error"
 * for a code it does not name.
 */
const char *npr_ze_result_str(ze_result_t r)
{
	switch (r) {
	case ZE_RESULT_SUCCESS: return "success";
	case ZE_RESULT_NOT_READY: return "not ready";
	case ZE_RESULT_ERROR_DEVICE_LOST: return "device lost";
	case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY: return "out of host memory";
	case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: return "out of device memory";
	case ZE_RESULT_ERROR_UNINITIALIZED: return "uninitialized";
	case ZE_RESULT_ERROR_UNSUPPORTED_VERSION: return "unsupported version";
	case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE: return "unsupported feature";
	case ZE_RESULT_ERROR_INVALID_ARGUMENT: return "invalid argument";
	case ZE_RESULT_ERROR_INVALID_NULL_HANDLE: return "invalid handle";
	case ZE_RESULT_ERROR_INVALID_NATIVE_BINARY: return "invalid native binary";
	case ZE_RESULT_ERROR_INVALID_SIZE: return "invalid size";
	default: return "error";
	}
}

/**
 * npr_ze_errno() - the errno for a failed Level Zero call
 * @r: the ze_result_t a Level Zero call returned (not ZE_RESULT_SUCCESS)
 *
 * Return: -ENODEV for a lost device, -ENOMEM for host or device memory,
 * -EOPNOTSUPP for an unsupported feature or version, -EINVAL for an invalid
 * argument, size or native binary, -EIO for anything else.
 */
int npr_ze_errno(ze_result_t r)
{
	switch (r) {
	case ZE_RESULT_ERROR_DEVICE_LOST: return -ENODEV;
	case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY:
	case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: return -ENOMEM;
	case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE:
	case ZE_RESULT_ERROR_UNSUPPORTED_VERSION: return -EOPNOTSUPP;
	case ZE_RESULT_ERROR_INVALID_ARGUMENT:
	case ZE_RESULT_ERROR_INVALID_SIZE:
	case ZE_RESULT_ERROR_INVALID_NATIVE_BINARY: return -EINVAL;
	default: return -EIO;
	}
}

/*
 * The PCI address of an accel node from sysfs: /sys/dev/char/MAJ:MIN
 * links to .../0000:00:0b.0/accel/accelN.  0, or -1 if unknown.
 */
static int sysfs_pci(const char *node, char *out, size_t len)
{
	char link[PATH_MAX], sys[64];
	struct stat st;
	const char *a;
	ssize_t n;

	if (stat(node, &st) || !S_ISCHR(st.st_mode))
		return -1;
	snprintf(sys, sizeof(sys), "/sys/dev/char/%u:%u", major(st.st_rdev),
		 minor(st.st_rdev));
	n = readlink(sys, link, sizeof(link) - 1);
	if (n <= 0)
		return -1;
	link[n] = 0;
	a = strstr(link, "/accel/");
	if (!a || a - link < 13 || a[-13] != '/')
		return -1;
	snprintf(out, len, "%.12s", a - 12);
	return 0;
}

/* Why zeInit found no NPU: look at the kernel side. */
static void diagnose(char *buf, size_t len, ze_result_t r)
{
	int (*drm_free)(void *) = NULL;
	void *(*drm_version)(int) = NULL;
	const char *dir = npr_env(NPR_ENV_ACCEL_DIR);	/* tests; /dev/accel */
	char path[PATH_MAX], name[64] = "", pci[32] = "?";
	struct dirent *de;
	void *drm;
	DIR *d;
	int fd;

	if (!dir || !*dir)
		dir = "/dev/accel";
	d = opendir(dir);
	de = NULL;
	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, "accel", 5))
			break;
	if (!de) {
		if (d)
			closedir(d);
		snprintf(buf, len,
			 "npu: no Level Zero NPU driver (zeInit: %s, 0x%x) and no %.200s/accel* node: the intel_vpu kernel driver is not loaded; for the software NPU set NPR_VNPU=1 (or NPR_VNPU or ZE_ENABLE_ALT_DRIVERS to the path of a vnpu libze_intel_vpu.so.1)",
			 npr_ze_result_str(r), (unsigned int)r, dir);
		return;
	}
	snprintf(path, sizeof(path), "%.3000s/%.32s", dir, de->d_name);
	closedir(d);
	sysfs_pci(path, pci, sizeof(pci));
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(buf, len,
			 "npu: cannot open %.200s (PCI %s): %s%s", path, pci,
			 strerror(errno), errno == EACCES ?
			 " (add the user to the \"render\" group)" : "");
		return;
	}
	drm = dlopen("libdrm.so.2", RTLD_NOW | RTLD_LOCAL);
	if (drm) {
		*(void **)&drm_version = dlsym(drm, "drmGetVersion");
		*(void **)&drm_free = dlsym(drm, "drmFreeVersion");
	}
	if (drm_version && drm_free) {
		/* drmVersion: three ints, then name_len and name */
		struct { int ma, mi, pa; int nl; char *n; } *v = drm_version(fd);

		if (v && v->n)
			snprintf(name, sizeof(name), "%.*s", v->nl, v->n);
		if (v)
			drm_free(v);
	}
	close(fd);
	if (drm)
		dlclose(drm);
	if (name[0] && strcmp(name, "intel_vpu") && strcmp(name, "intel_npu"))
		snprintf(buf, len, "npu: %.200s (PCI %s) is driven by \"%s\", not intel_vpu or intel_npu",
			 path, pci, name);
	else
		snprintf(buf, len,
			 "npu: %.200s exists (%s, PCI %s) but no Level Zero NPU driver answered (zeInit: %s, 0x%x): install the NPU user-mode driver (libze_intel_npu.so.1; libze_intel_vpu.so.1 for older ones)",
			 path, name[0] ? name : "driver unknown", pci,
			 npr_ze_result_str(r), (unsigned int)r);
}

/*
 * Point the loader at @dir/@rel (a vnpu) if that file exists; @dir is made
 * absolute first (the loader wants an absolute path).  True if it did.
 */
static bool vnpu_try(const char *dir, const char *rel)
{
	char abs[PATH_MAX], path[PATH_MAX + 64];

	if (!realpath(dir, abs))
		return false;
	snprintf(path, sizeof(path), "%s/%s", abs, rel);
	if (access(path, R_OK))
		return false;
	setenv("ZE_ENABLE_ALT_DRIVERS", path, 0);
	return true;
}

/*
 * NPR_VNPU=PATH loads the software NPU at PATH.  NPR_VNPU=1 loads the first
 * found of: the one installed next to this library (<dir of
 * libnpuring.so.0>/npuring/vnpu/, the private directory `make install` puts
 * it in); the one of a build tree (<dir of the program>/../npu/vnpu/, for
 * tools/ and selftests/); the one next to installed selftests (<dir of the
 * program>/../vnpu/, as they sit in <libdir>/npuring/selftests/); the one
 * in NPR_VNPU_DIR, which the Makefile sets to $(LIBDIR)/npuring/vnpu (for
 * installed programs linking the library statically, as the tools do).
 */
static void vnpu_select(void)
{
	static const char name[] = "libze_intel_vpu.so.1";
	const char *v = npr_env(NPR_ENV_VNPU);
	char exe[PATH_MAX], rel[64];
	Dl_info info;
	ssize_t n;

	if (!v || !*v || !strcmp(v, "0") ||
	    npr_env(NPR_ENV_ZE_ENABLE_ALT_DRIVERS))
		return;
	if (strcmp(v, "1")) {
		setenv("ZE_ENABLE_ALT_DRIVERS", v, 0);
		return;
	}
	/* the object this code is in: libnpuring.so.0, or a static program */
	if (dladdr((void *)vnpu_select, &info) && info.dli_fname &&
	    strchr(info.dli_fname, '/') &&
	    strlen(info.dli_fname) < sizeof(exe)) {
		strcpy(exe, info.dli_fname);
		*strrchr(exe, '/') = 0;
		snprintf(rel, sizeof(rel), "npuring/vnpu/%s", name);
		if (vnpu_try(*exe ? exe : "/", rel))
			return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		*strrchr(exe, '/') = 0;
		snprintf(rel, sizeof(rel), "../npu/vnpu/%s", name);
		if (vnpu_try(exe, rel))
			return;
		snprintf(rel, sizeof(rel), "../vnpu/%s", name);
		if (vnpu_try(exe, rel))
			return;
	}
#ifdef NPR_VNPU_DIR
	vnpu_try(NPR_VNPU_DIR, name);
#endif
}

/*
 * The current NPU user-mode driver is libze_intel_npu.so.1; a loader
 * older than 1.17.17 probes only libze_intel_gpu.so.1 and
 * libze_intel_vpu.so.1 (the name of older NPU drivers).  Such a loader
 * has no zeInitDrivers either (1.18): there, when the old name loads
 * nothing and the new one does, name it in the loader's driver list
 * (with the GPU driver, so that the list keeps what the loader would
 * have found).  The list must be set before zeInit; a list the user set
 * is left alone.
 */
static void npu_driver_name(void *loader)
{
	static const char *const names[] = {
		"libze_intel_vpu.so.1", "libze_intel_npu.so.1",
	};
	bool found[2];
	void *h;
	int i;

	if (dlsym(loader, "zeInitDrivers") ||
	    npr_env(NPR_ENV_ZE_ENABLE_ALT_DRIVERS))
		return;
	for (i = 0; i < 2; i++) {
		h = dlopen(names[i], RTLD_LAZY | RTLD_LOCAL);
		found[i] = h != NULL;
		if (h)
			dlclose(h);
	}
	if (!found[0] && found[1])
		setenv("ZE_ENABLE_ALT_DRIVERS",
		       "libze_intel_gpu.so.1,libze_intel_npu.so.1", 0);
}

/*
 * The drivers: with zeInitDrivers (loader 1.18 and newer), the NPU
 * drivers (driver type flag NPU), as the NPU plugin asks for them; else,
 * or if it fails, zeInit(VPU_ONLY) and zeDriverGet.  @n: room in @drv,
 * then the count.  npr_npu.init_call says which answered.
 */
static ze_result_t npu_drivers(void *loader, uint32_t *n,
			       ze_driver_handle_t *drv)
{
	struct npr_ze_init_driver_type_desc desc = {
		.stype = NPR_ZE_STYPE_INIT_DRIVER_TYPE_DESC,
		.flags = NPR_ZE_INIT_DRIVER_TYPE_NPU,
	};
	ze_result_t (*init_drivers)(uint32_t *, ze_driver_handle_t *,
		const struct npr_ze_init_driver_type_desc *);
	uint32_t room = *n;
	ze_result_t r;

	*(void **)&init_drivers = dlsym(loader, "zeInitDrivers");
	if (init_drivers) {
		r = init_drivers(n, drv, &desc);
		if (!r && *n) {
			snprintf(npr_npu.init_call, sizeof(npr_npu.init_call),
				 "zeInitDrivers");
			return r;
		}
		*n = room;
	}
	snprintf(npr_npu.init_call, sizeof(npr_npu.init_call), "zeInit");
	r = npr_ze.Init(ZE_INIT_FLAG_VPU_ONLY);
	if (!r)
		r = npr_ze.DriverGet(n, drv);
	return r;
}

static void npu_init_once(void)
{
	static const uint8_t npu_uuid[16] = NPR_ZE_NPU_DRIVER_UUID;
	ze_driver_extension_properties_t *ext = NULL;
	ze_driver_handle_t drv[16];
	uint32_t n = 16, i, next = 0;
	char ext_name[ZE_MAX_EXTENSION_NAME] = "";
	void *lib, **fn = (void **)&npr_ze;
	ze_result_t r;

	const char *loader = npr_env(NPR_ENV_ZE_LOADER);

	npr_npu.err = -ENODEV;
	vnpu_select();
	if (!loader || !*loader)
		loader = "libze_loader.so.1";
	lib = dlopen(loader, RTLD_NOW | RTLD_GLOBAL);
	if (!lib) {
		snprintf(npr_npu.msg, sizeof(npr_npu.msg),
			 "npu: the Level Zero loader %.200s cannot be loaded (%.120s): install it (apt-get install libze1)",
			 loader, dlerror());
		return;
	}
	for (i = 0; i < sizeof(ze_names) / sizeof(ze_names[0]); i++) {
		fn[i] = dlsym(lib, ze_names[i]);
		if (!fn[i]) {
			snprintf(npr_npu.msg, sizeof(npr_npu.msg),
				 "npu: the Level Zero loader lacks %s",
				 ze_names[i]);
			return;
		}
	}
	*(void **)&ze_pci_props = dlsym(lib, "zeDevicePciGetPropertiesExt");
	*(void **)&zel_versions = dlsym(lib, "zelLoaderGetVersions");
	npu_driver_name(lib);
	r = npu_drivers(lib, &n, drv);
	if (zel_versions) {
		zel_component_version_t v[16];
		size_t nv = 0, k;

		/* the count first: the loader fills exactly that many */
		memset(v, 0, sizeof(v));
		if (!zel_versions(&nv, NULL) && nv && nv <= 16 &&
		    !zel_versions(&nv, v))
			for (k = 0; k < nv && k < 16; k++)
				if (!strncmp(v[k].component_name, "loader",
					     sizeof(v[k].component_name)))
					snprintf(npr_npu.loader_version,
						 sizeof(npr_npu.loader_version),
						 "%d.%d.%d",
						 v[k].component_lib_version.major,
						 v[k].component_lib_version.minor,
						 v[k].component_lib_version.patch);
	}
	if (r || !n) {
		diagnose(npr_npu.msg, sizeof(npr_npu.msg), r);
		return;
	}
	npr_log(NPR_LOG_INFO, "npu: Level Zero drivers from %s (loader %s)",
		npr_npu.init_call, npr_npu.loader_version[0] ?
		npr_npu.loader_version : "of unknown version");
	for (i = 0; i < n && i < 16; i++) {
		ze_driver_properties_t p = {
			.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES,
		};

		if (!npr_ze.DriverGetProperties(drv[i], &p) &&
		    !memcmp(p.uuid.id, npu_uuid, sizeof(npu_uuid)))
			break;
	}
	if (i == n || i == 16) {
		snprintf(npr_npu.msg, sizeof(npr_npu.msg),
			 "npu: none of the %u Level Zero drivers is the NPU driver (wrong driver UUID)",
			 n);
		return;
	}
	npr_npu.drv = drv[i];
	/* the graph extension: the base name, or the newest _1_x name */
	n = 0;
	r = npr_ze.DriverGetExtensionProperties(npr_npu.drv, &n, NULL);
	if (!r && n && n < 4096) {
		ext = calloc(n, sizeof(*ext));
		if (ext)
			r = npr_ze.DriverGetExtensionProperties(npr_npu.drv, &n, ext);
	}
	for (i = 0; ext && !r && i < n; i++) {
		size_t len = strlen(NPR_ZE_GRAPH_EXT_NAME);

		if (!strcmp(ext[i].name, NPR_ZE_CQ_NPU_EXT_NAME) &&
		    ext[i].version >> 16 == 1)
			npr_npu.cq_npu = true;
		if (!strcmp(ext[i].name, NPR_ZE_PROFILING_EXT_NAME) &&
		    ext[i].version >> 16 == 1 &&
		    npr_ze.DriverGetExtensionFunctionAddress(npr_npu.drv,
				ext[i].name, (void **)&npr_npu.prof))
			npr_npu.prof = NULL;

		if (strncmp(ext[i].name, NPR_ZE_GRAPH_EXT_NAME, len) ||
		    (ext[i].name[len] && ext[i].name[len] != '_'))
			continue;
		if (ext[i].version >> 16 != 1 || ext[i].version <= next)
			continue;
		next = ext[i].version;
		snprintf(ext_name, sizeof(ext_name), "%s", ext[i].name);
	}
	free(ext);
	if (!next) {
		snprintf(npr_npu.msg, sizeof(npr_npu.msg),
			 "npu: the NPU driver does not offer %s",
			 NPR_ZE_GRAPH_EXT_NAME);
		return;
	}
	if (next < NPR_ZE_GRAPH_VERSION_MIN) {
		snprintf(npr_npu.msg, sizeof(npr_npu.msg),
			 "npu: the NPU driver's graph extension is version 1.%u; npuring needs 1.%u or newer",
			 next & 0xffff, NPR_ZE_GRAPH_VERSION_MIN & 0xffff);
		return;
	}
	if (npr_npu.cq_npu &&
	    npr_ze.DriverGetExtensionFunctionAddress(npr_npu.drv,
			NPR_ZE_CQ_NPU_EXT_NAME, (void **)&npr_npu.cq_npu_ddi))
		npr_npu.cq_npu_ddi = NULL;
	npr_npu.graph_version = next;
	r = npr_ze.DriverGetExtensionFunctionAddress(npr_npu.drv, ext_name,
						 (void **)&npr_npu.graph);
	if (r || !npr_npu.graph) {
		snprintf(npr_npu.msg, sizeof(npr_npu.msg),
			 "npu: %s listed but its table is missing (0x%x)",
			 ext_name, (unsigned int)r);
		return;
	}
	npr_npu.ndev = NPU_MAX_DEVICES;
	r = npr_ze.DeviceGet(npr_npu.drv, &npr_npu.ndev, npr_npu.dev);
	if (r || !npr_npu.ndev) {
		snprintf(npr_npu.msg, sizeof(npr_npu.msg),
			 "npu: the NPU driver reports no device (0x%x)",
			 (unsigned int)r);
		return;
	}
	npr_npu.err = 0;
}

/**
 * npr_platform_of() - the NPU platform name of a PCI device id
 * @pci_id: the device id zeDeviceGetProperties() reports
 *
 * The names the NPU plugin and its compiler use: 0x6240 "3700" (the
 * plugin's older table); Meteor Lake 0x7D1D and Arrow Lake 0xAD1D
 * "3720"; Lunar Lake 0x643E "4000"; Panther Lake 0xB03E and Wildcat Lake
 * 0xFD3E, both of the 50XX generation, "5010", the compiler's first name
 * of it.  Nova Lake 0xD71D (60XX) has no platform name in the sources
 * read: "AUTO_DETECT", as for any other id, lets the compiler choose.
 *
 * Return: a static string.
 */
const char *npr_platform_of(uint32_t pci_id)
{
	switch (pci_id) {
	case NPR_NPU_PCI_3700:
		return "3700";
	case NPR_NPU_PCI_MTL:
	case NPR_NPU_PCI_ARL:
		return "3720";
	case NPR_NPU_PCI_LNL:
		return "4000";
	case NPR_NPU_PCI_PTL:
	case NPR_NPU_PCI_WCL:
		return "5010";
	}
	return "AUTO_DETECT";
}

/*
 * The PCI address of the NPU: from the driver (zeDevicePciGetPropertiesExt)
 * or, if it has none, from sysfs: /sys/dev/char/MAJ:MIN of the accel node
 * links to .../0000:00:0b.0/accel/accelN.
 */
static void pci_address(struct npu_device *nd, int index)
{
	ze_pci_ext_properties_t pp = {
		.stype = ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES,
	};
	char node[64];

	nd->pci[0] = 0;
	if (ze_pci_props && !ze_pci_props(nd->dev, &pp) &&
	    pp.address.device) {
		snprintf(nd->pci, sizeof(nd->pci), "%04x:%02x:%02x.%x",
			 pp.address.domain & 0xffff, pp.address.bus & 0xff,
			 pp.address.device & 0xff, pp.address.function & 0xf);
		return;
	}
	snprintf(node, sizeof(node), "/dev/accel/accel%d", index);
	if (sysfs_pci(node, nd->pci, sizeof(nd->pci)))
		nd->pci[0] = 0;
}

static pthread_once_t npu_once = PTHREAD_ONCE_INIT;

/**
 * npr_npu_count() - how many NPUs the NPU driver has (npr_backend_ops.count)
 *
 * Binds the loader and finds the driver first, once per process, as the
 * first probe does.
 *
 * Return: the number of devices zeDeviceGet() listed (at most
 * NPU_MAX_DEVICES); -ENODEV with npr_err() set when there is no loader,
 * NPU driver or graph extension.
 */
int npr_npu_count(void)
{
	pthread_once(&npu_once, npu_init_once);
	if (npr_npu.err)
		return npr_err(npr_npu.err, "%s", npr_npu.msg);
	return (int)npr_npu.ndev;
}

/**
 * npr_npu_probe() - probe NPU @index and fill dev->info (npr_backend_ops.probe)
 * @dev: the device being opened; its priv gets a calloc'd struct npu_device
 * @index: the device's index among the NPU driver's devices
 *
 * The first call binds the Level Zero loader and finds the NPU driver, its
 * graph extension and devices, once per process.  Each probe then creates
 * one Level Zero context for @dev.  On failure dev->priv may already be
 * set: lib/ calls npr_npu_release() and frees it.
 *
 * Return: 0; -ENODEV if there is no loader, no NPU driver, no graph
 * extension 1.5 or newer, or no NPU at @index; -ENOMEM; the npr_ze_errno()
 * of a failed Level Zero call.  npr_err() is set for all but -ENOMEM.
 */
int npr_npu_probe(struct npr_device *dev, int index)
{
	ze_driver_properties_t dp = {
		.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES,
	};
	ze_device_properties_t p = {
		.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES,
	};
	ze_context_desc_t cd = { .stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC };
	struct npu_device *nd;
	ze_result_t r;

	pthread_once(&npu_once, npu_init_once);
	if (npr_npu.err)
		return npr_err(npr_npu.err, "%s", npr_npu.msg);
	if ((uint32_t)index >= npr_npu.ndev)
		return npr_err(-ENODEV, "npu.%d: the NPU driver has %u device(s)",
			       index, npr_npu.ndev);
	r = npr_ze.DeviceGetProperties(npr_npu.dev[index], &p);
	if (r)
		return ZE_FAIL(r, "zeDeviceGetProperties");
	if (p.type != ZE_DEVICE_TYPE_VPU)
		return npr_err(-ENODEV, "npu.%d: device type %d is not an NPU",
			       index, p.type);
	nd = calloc(1, sizeof(*nd));
	if (!nd)
		return -ENOMEM;
	dev->priv = nd;
	nd->dev = npr_npu.dev[index];
	nd->pci_id = p.deviceId;
	nd->tiles = p.numSlices;
	nd->gops = p.coreClockRate / 1e9 * p.numSlices * p.physicalEUSimdWidth;
	if (!npr_ze.DriverGetProperties(npr_npu.drv, &dp))
		nd->driver_version = dp.driverVersion;
	pci_address(nd, index);
	r = npr_ze.ContextCreate(npr_npu.drv, &cd, &nd->ctx);
	if (r) {
		nd->ctx = NULL;
		return ZE_FAIL(r, "zeContextCreate");
	}
	nd->gprops.stype = NPR_ZE_STYPE_DEVICE_GRAPH_PROPERTIES;
	r = npr_npu.graph->pfnDeviceGetGraphProperties(nd->dev, &nd->gprops);
	if (r)
		return ZE_FAIL(r, "DeviceGetGraphProperties");
	dev->info.device_type = NPR_DEVICE_NPU;
	/* export carries the driver's native binary, import gives it back */
	dev->info.caps = NPR_CAP_FP32 | NPR_CAP_FP16 | NPR_CAP_INT8 |
			 NPR_CAP_EXPORT_IMPORT;
	memcpy(nd->uuid, p.uuid.id, sizeof(nd->uuid));
	/* as AVAILABLE_DEVICES names it: "npu" alone, else "npu.N" */
	if (npr_npu.ndev > 1)
		snprintf(dev->info.name, sizeof(dev->info.name), "npu.%d",
			 index);
	else
		snprintf(dev->info.name, sizeof(dev->info.name), "npu");
	snprintf(dev->info.full_name, sizeof(dev->info.full_name), "%.127s",
		 p.name);
	snprintf(dev->info.arch, sizeof(dev->info.arch), "%s",
		 npr_platform_of(p.deviceId));
	return 0;
}


/**
 * npr_npu_param() - an NPU value of an integer property (npr_backend_ops.param)
 * @dev: an NPU device
 * @p: the properties the value is asked under (their perf_hint)
 * @id: the NPR_PARAM_* property
 * @value: out: the value; written only on success
 *
 * The NPU plugin's answers: OPTIMAL_NUMBER_OF_INFER_REQUESTS is 1 for
 * LATENCY, and for THROUGHPUT 4 on an NPU 3720 and 8 on the others;
 * NUM_STREAMS is 1; the driver and compiler versions (major << 16 | minor)
 * and the tile count as probed; the device memory sizes from the graph
 * extension's QueryContextMemory.
 *
 * Return: 0; -ENOENT for a property the NPU does not answer itself (the
 * generic one applies); the npr_ze_errno() of a failed memory query.
 */
int npr_npu_param(const struct npr_device *dev, const struct npr_props *p,
		     uint32_t id, int64_t *value)
{
	const struct npu_device *nd = dev->priv;
	struct npr_ze_graph_memory_query m = { 0 };
	ze_result_t r;

	switch (id) {
	case NPR_PARAM_OPTIMAL_NUMBER_OF_INFER_REQUESTS:
		if (p->perf_hint != NPR_PERF_HINT_THROUGHPUT)
			*value = 1;
		else
			*value = strcmp(dev->info.arch, "3720") ? 8 : 4;
		return 0;
	case NPR_PARAM_NUM_STREAMS:
		*value = 1;	/* an NPU runs one stream */
		return 0;
	case NPR_PARAM_NPU_DRIVER_VERSION:
		*value = nd->driver_version;
		return 0;
	case NPR_PARAM_NPU_COMPILER_VERSION:
		/* the plugin's encoding: major << 16 | minor */
		*value = (int64_t)nd->gprops.compilerMajor << 16 |
			 nd->gprops.compilerMinor;
		return 0;
	case NPR_PARAM_NPU_MAX_TILES:
		*value = nd->tiles;
		return 0;
	case NPR_PARAM_NPU_DEVICE_ALLOC_MEM_SIZE:
	case NPR_PARAM_NPU_DEVICE_TOTAL_MEM_SIZE:
		r = npr_npu.graph->pfnQueryContextMemory(nd->ctx,
						     NPR_ZE_GRAPH_MEM_DDR, &m);
		if (r)
			return ZE_FAIL(r, "QueryContextMemory");
		*value = (int64_t)(id == NPR_PARAM_NPU_DEVICE_TOTAL_MEM_SIZE ?
				   m.total : m.allocated);
		return 0;
	}
	return -ENOENT;
}

/**
 * npr_npu_param_bytes() - an NPU string property (npr_backend_ops.param_bytes)
 * @dev: an NPU device
 * @id: the NPR_PARAM_* property
 * @buf: out: the value, NUL-terminated; a list is NUL-separated strings
 *       ending in an empty one
 * @len: in: the size of @buf; out: the length used, the last NUL included
 *
 * DEVICE_UUID is the device's ze_device_properties_t uuid as
 * 8-4-4-4-12 hex digits; DEVICE_PCI_INFO is "DDDD:BB:DD.F";
 * NPR_NPU_LOADER_VERSION the Level Zero
 * loader's version, "unknown" if it does not report one; DEVICE_GOPS as
 * the NPU plugin computes it (clock in GHz x tiles x EU SIMD width for
 * int8, half for f16, none for f32), one "type:gops" string each.
 *
 * Return: 0; -ENOENT for a property the NPU does not have; -ENODATA if
 * the PCI address is unknown; -EOVERFLOW if @buf is too small.
 */
int npr_npu_param_bytes(const struct npr_device *dev, uint32_t id,
			   char *buf, size_t *len)
{
	const struct npu_device *nd = dev->priv;
	int n;

	switch (id) {
	case NPR_PARAM_DEVICE_PCI_INFO:
		if (!nd->pci[0])
			return npr_err(-ENODATA, "DEVICE_PCI_INFO: the NPU driver reports no PCI address and there is no /dev/accel node to look it up");
		n = snprintf(buf, *len, "%s", nd->pci);
		break;
	case NPR_PARAM_NPR_NPU_LOADER_VERSION:
		n = snprintf(buf, *len, "%s", npr_npu.loader_version[0] ?
			     npr_npu.loader_version : "unknown");
		break;
	case NPR_PARAM_DEVICE_UUID: {
		const uint8_t *u = nd->uuid;

		n = snprintf(buf, *len, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			     u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
			     u[8], u[9], u[10], u[11], u[12], u[13], u[14],
			     u[15]);
		break;
	}
	case NPR_PARAM_DEVICE_GOPS:
		n = snprintf(buf, *len, "f32:%.1f%cf16:%.1f%cu8:%.1f%ci8:%.1f%c",
			     0.0, 0, nd->gops / 2, 0, nd->gops, 0, nd->gops, 0);
		break;
	default:
		return -ENOENT;
	}
	if (n < 0 || (size_t)n >= *len)
		return npr_err(-EOVERFLOW, "property %u: value too long", id);
	*len = (size_t)n + 1;
	return 0;
}

/**
 * npr_npu_bo_alloc() - a buffer object's memory (npr_backend_ops.bo_alloc)
 * @dev: an NPU device
 * @bytes: the size
 * @addr: out: zeMemAllocHost() memory of the device's context,
 *        page-aligned and zero-filled, which a graph takes as an argument
 *        as it is
 *
 * Return: 0; the npr_ze_errno() of the failed allocation (-ENOMEM when
 * the device is out of memory).
 */
int npr_npu_bo_alloc(struct npr_device *dev, size_t bytes, void **addr)
{
	struct npu_device *nd = dev->priv;
	ze_host_mem_alloc_desc_t hd = {
		.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC,
	};
	ze_result_t r;

	r = npr_ze.MemAllocHost(nd->ctx, &hd, bytes, 4096, addr);
	if (r)
		return ZE_FAIL(r, "zeMemAllocHost of a BO");
	memset(*addr, 0, bytes);
	return 0;
}

/**
 * npr_npu_bo_free() - free a BO's memory (npr_backend_ops.bo_free)
 * @dev: the NPU device that allocated it, still open
 * @addr: what npr_npu_bo_alloc() gave
 */
void npr_npu_bo_free(struct npr_device *dev, void *addr)
{
	struct npu_device *nd = dev->priv;

	npr_ze.MemFree(nd->ctx, addr);
}

/**
 * npr_npu_release() - destroy the Level Zero context of @dev
 * @dev: an NPU device; its priv stays allocated, lib/ frees it
 *
 * npr_backend_ops.release: called after every object of @dev is gone, and
 * when npr_npu_probe() fails after setting dev->priv.
 */
void npr_npu_release(struct npr_device *dev)
{
	struct npu_device *nd = dev->priv;

	if (nd->ctx)
		npr_ze.ContextDestroy(nd->ctx);
	nd->ctx = NULL;
}

#endif
