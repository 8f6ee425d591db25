// SPDX-License-Identifier: MIT
/*
 * npr-info - list the devices, their properties, and the completion path
 * (io_uring or the eventfd fallback) their rings use, with the reason;
 * with -m, the layers of a model a device supports (query_model).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "json.h"
#include "npuring.h"
#include "tool.h"

/* --json: the writer, else NULL for text */
static struct npr_json *js;

static const char *reason_str(const struct npr_ring_setup *rs, char *buf,
			      size_t len)
{
	switch (rs->reason) {
	case NPR_RING_WHY_NONE:
		return "io_uring available";
	case NPR_RING_WHY_FORCED:
		return "forced (NPR_RING_FALLBACK or NPR_RING_SETUP_FALLBACK)";
	case NPR_RING_WHY_DISABLED:
		return "disabled by sysctl kernel.io_uring_disabled";
	case NPR_RING_WHY_ERRNO:
		snprintf(buf, len, "io_uring_setup failed: %s%s",
			 strerror(rs->err),
			 rs->err == 38 ? " (kernel without io_uring)" :
			 rs->err == 1 ? " (seccomp or sysctl)" : "");
		return buf;
	}
	return "unknown";
}

/* One property as a JSON object: name, access, type and value. */
static void json_prop(const struct npr_prop_info *pi,
		      const struct npr_param *pa, const char *buf, int err)
{
	static const char *const types[] = {
		[NPR_PROP_INT] = "int", [NPR_PROP_BOOL] = "bool",
		[NPR_PROP_STRING] = "string", [NPR_PROP_ENUM] = "enum",
		[NPR_PROP_LIST] = "list", [NPR_PROP_INT_LIST] = "int_list",
	};
	const char *p;
	__u32 k;

	npr_json_begin_object(js);
	npr_json_kv_string(js, "name", pi->name);
	npr_json_kv_string(js, "access",
			   pi->access & NPR_PROP_ACCESS_RW ? "RW" : "RO");
	npr_json_kv_string(js, "type", pi->type < 7 && types[pi->type] ?
			   types[pi->type] : "unknown");
	npr_json_key(js, err ? "error" : "value");
	if (err) {
		npr_json_string(js, strerror(-err));
	} else if (pi->type == NPR_PROP_INT) {
		npr_json_int(js, (long long)pa->value);
	} else if (pi->type == NPR_PROP_BOOL) {
		npr_json_bool(js, pa->value);
	} else if (pi->type == NPR_PROP_LIST) {
		npr_json_begin_array(js);
		for (p = buf; *p; p += strlen(p) + 1)
			npr_json_string(js, p);
		npr_json_end_array(js);
	} else if (pi->type == NPR_PROP_INT_LIST) {
		npr_json_begin_array(js);
		for (k = 0; k < pa->len / 8; k++)
			npr_json_int(js, ((const long long *)buf)[k]);
		npr_json_end_array(js);
	} else {
		npr_json_string(js, buf);
	}
	npr_json_end_object(js);
}

/* Every property of the handle, with its value. */
static void print_props(int fd, __u32 handle)
{
	__u32 i;

	for (i = 0;; i++) {
		struct npr_prop_info pi = {
			.size = sizeof(pi), .handle = handle, .index = i,
		};
		struct npr_param pa = { .size = sizeof(pa), .handle = handle };
		char buf[4096];
		int err;

		if (npr_ioctl(fd, NPR_IOCTL_PROP_INFO, &pi))
			break;
		pa.param = pi.id;
		if (pi.type != NPR_PROP_INT && pi.type != NPR_PROP_BOOL) {
			pa.ptr = (uintptr_t)buf;
			pa.len = sizeof(buf);
		}
		buf[0] = 0;
		err = npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &pa);
		if (js) {
			json_prop(&pi, &pa, buf, err);
			continue;
		}
		printf("    %-34s %s  ", pi.name,
		       pi.access & NPR_PROP_ACCESS_RW ? "RW" : "RO");
		if (err) {
			printf("(%s)\n", strerror(-err));
			continue;
		}
		switch (pi.type) {
		case NPR_PROP_INT:
			printf("%lld\n", (long long)pa.value);
			break;
		case NPR_PROP_BOOL:
			printf("%s\n", pa.value ? "YES" : "NO");
			break;
		case NPR_PROP_LIST: {
			const char *p;

			for (p = buf; *p; p += strlen(p) + 1)
				printf("%s%s", p == buf ? "" : " ", p);
			printf("\n");
			break;
		}
		case NPR_PROP_INT_LIST: {
			const long long *v = (const long long *)buf;
			__u32 k;

			for (k = 0; k < pa.len / 8; k++)
				printf("%s%lld", k ? " " : "", v[k]);
			printf("\n");
			break;
		}
		default:	/* strings and enum names */
			printf("%s\n", buf);
		}
	}
}

static long long get_int(int fd, __u32 id)
{
	struct npr_param pa = { .size = sizeof(pa), .param = id };

	return npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &pa) ? -1 :
	       (long long)pa.value;
}

static const char *get_str(int fd, __u32 id, char *buf, size_t len)
{
	struct npr_param pa = {
		.size = sizeof(pa), .param = id, .ptr = (uintptr_t)buf,
		.len = (__u32)len,
	};

	if (npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &pa))
		snprintf(buf, len, "unknown (%s)", npr_last_error());
	return buf;
}

/* The layers of an NPU's stack, from the npu properties. */
static void print_npu(int fd)
{
	char buf[256];
	long long v = get_int(fd, NPR_PARAM_NPU_COMPILER_VERSION);

	if (js) {
		npr_json_key(js, "npu");
		npr_json_begin_object(js);
		npr_json_kv_string(js, "loader_version",
				   get_str(fd, NPR_PARAM_NPR_NPU_LOADER_VERSION,
					   buf, sizeof(buf)));
		npr_json_kv_int(js, "driver_version",
				get_int(fd, NPR_PARAM_NPU_DRIVER_VERSION));
		snprintf(buf, sizeof(buf), "%lld.%lld", v >> 16, v & 0xffff);
		npr_json_kv_string(js, "compiler_version", buf);
		npr_json_kv_string(js, "platform",
				   get_str(fd, NPR_PARAM_DEVICE_ARCHITECTURE,
					   buf, sizeof(buf)));
		npr_json_kv_int(js, "tiles",
				get_int(fd, NPR_PARAM_NPU_MAX_TILES));
		npr_json_kv_string(js, "pci_address",
				   get_str(fd, NPR_PARAM_DEVICE_PCI_INFO, buf,
					   sizeof(buf)));
		npr_json_kv_int(js, "memory_allocated",
				get_int(fd, NPR_PARAM_NPU_DEVICE_ALLOC_MEM_SIZE));
		npr_json_kv_int(js, "memory_total",
				get_int(fd, NPR_PARAM_NPU_DEVICE_TOTAL_MEM_SIZE));
		npr_json_end_object(js);
		return;
	}
	printf("  npu stack\n");
	printf("    Level Zero loader  %s\n",
	       get_str(fd, NPR_PARAM_NPR_NPU_LOADER_VERSION, buf, sizeof(buf)));
	printf("    driver version     %lld\n",
	       get_int(fd, NPR_PARAM_NPU_DRIVER_VERSION));
	printf("    compiler version   %lld.%lld\n", v >> 16, v & 0xffff);
	printf("    platform           %s\n",
	       get_str(fd, NPR_PARAM_DEVICE_ARCHITECTURE, buf, sizeof(buf)));
	printf("    tiles              %lld\n",
	       get_int(fd, NPR_PARAM_NPU_MAX_TILES));
	printf("    PCI address        %s\n",
	       get_str(fd, NPR_PARAM_DEVICE_PCI_INFO, buf, sizeof(buf)));
	printf("    memory             %lld of %lld bytes allocated\n",
	       get_int(fd, NPR_PARAM_NPU_DEVICE_ALLOC_MEM_SIZE),
	       get_int(fd, NPR_PARAM_NPU_DEVICE_TOTAL_MEM_SIZE));
}

/* query_model: the layers of @model the device supports. */
static int print_query(int fd, const char *model)
{
	struct npr_query_model q = { .size = sizeof(q) };
	struct npr_model_load ml;
	char *names;
	const char *p;
	int err;

	npr_prep_model_load(&ml, model, NULL);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err) {
		fprintf(stderr, "npr-info: %s: %s\n", model, npr_last_error());
		if (js) {	/* keep the JSON whole */
			npr_json_key(js, "query_model");
			npr_json_begin_object(js);
			npr_json_kv_string(js, "model", model);
			npr_json_kv_string(js, "error", npr_last_error());
			npr_json_end_object(js);
		}
		return 1;
	}
	q.model = ml.handle;
	err = npr_ioctl(fd, NPR_IOCTL_QUERY_MODEL, &q);
	names = err == -EMSGSIZE ? malloc(q.len) : NULL;
	if (names) {
		q.names = (uintptr_t)names;
		err = npr_ioctl(fd, NPR_IOCTL_QUERY_MODEL, &q);
	}
	if (err || !names) {
		fprintf(stderr, "npr-info: query_model: %s\n",
			npr_last_error());
		if (js) {
			npr_json_key(js, "query_model");
			npr_json_begin_object(js);
			npr_json_kv_string(js, "model", model);
			npr_json_kv_string(js, "error", npr_last_error());
			npr_json_end_object(js);
		}
		free(names);
		return 1;
	}
	if (js) {
		npr_json_key(js, "query_model");
		npr_json_begin_object(js);
		npr_json_kv_string(js, "model", model);
		npr_json_kv_uint(js, "supported", q.num_supported);
		npr_json_kv_uint(js, "layers", q.num_layers);
		npr_json_key(js, "names");
		npr_json_begin_array(js);
		for (p = names; *p; p += strlen(p) + 1)
			npr_json_string(js, p);
		npr_json_end_array(js);
		npr_json_end_object(js);
		free(names);
		return 0;
	}
	printf("  query_model %s: %u of %u layers supported\n", model,
	       q.num_supported, q.num_layers);
	for (p = names; *p; p += strlen(p) + 1)
		printf("    %s\n", p);
	free(names);
	return 0;
}

static const char usage[] =
"usage: npr-info [-d DEVICE] [-m MODEL] [--json]\n"
"\n"
"List the devices of every backend (or DEVICE), their properties and\n"
"their completion path (io_uring or the eventfd fallback, and why).\n"
"With -m, also the layers of MODEL the device supports (query_model).\n"
"\n"
"  -d, --device DEVICE  only this device (cpu, npu, npu.1, null, ...)\n"
"  -m, --model MODEL    the layers of MODEL (IR .xml or ONNX .onnx) DEVICE\n"
"                       supports; needs -d\n"
"      --json           print one JSON object instead of text\n"
"  -h, --help           show this help\n"
"      --version        print the version\n"
"\n"
"Exit status: 0 on success, 1 when a device named with -d (or the cpu or\n"
"null device) cannot be opened or -m fails, 2 on a usage error.\n";

static const struct option long_opts[] = {
	{ "device", required_argument, NULL, 'd' },
	{ "model", required_argument, NULL, 'm' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* One device: its description, properties and query_model. */
static int show_device(const char *name, bool only, const char *model)
{
	struct npr_device_info di = { .size = sizeof(di) };
	struct npr_ring_setup rs = { .size = sizeof(rs) };
	const char *path, *reason;
	char buf[128];
	int fd = npr_open(name, 0), err, ret = 0;

	if (fd < 0) {
		/* an absent NPU is not an error of this listing; the
		 * message names the missing layer */
		if (js) {
			npr_json_begin_object(js);
			npr_json_kv_string(js, "name", name);
			npr_json_kv_string(js, "error", npr_last_error());
			npr_json_end_object(js);
		} else {
			printf("%s: cannot open: %s\n", name,
			       npr_last_error());
		}
		return only || strcmp(name, "npu");
	}
	err = npr_ioctl(fd, NPR_IOCTL_DEVICE_INFO, &di);
	if (!err)
		err = npr_ioctl(fd, NPR_IOCTL_RING_SETUP, &rs);
	if (err) {
		if (js) {
			npr_json_begin_object(js);
			npr_json_kv_string(js, "name", name);
			npr_json_kv_string(js, "error", strerror(-err));
			npr_json_end_object(js);
		} else {
			printf("%s: %s\n", name, strerror(-err));
		}
		npr_close(fd);
		return 1;
	}
	path = rs.path == NPR_RING_PATH_URING ? "io_uring" :
						"eventfd fallback";
	reason = reason_str(&rs, buf, sizeof(buf));
	if (js) {
		npr_json_begin_object(js);
		npr_json_kv_string(js, "name", di.name);
		npr_json_kv_string(js, "full_name", di.full_name);
		npr_json_kv_string(js, "architecture", di.arch);
		npr_json_kv_uint(js, "threads", di.num_threads);
		npr_json_key(js, "capabilities");
		npr_json_begin_array(js);
		if (di.caps & NPR_CAP_FP32)
			npr_json_string(js, "fp32");
		if (di.caps & NPR_CAP_FP16)
			npr_json_string(js, "fp16");
		if (di.caps & NPR_CAP_INT8)
			npr_json_string(js, "int8");
		if (di.caps & NPR_CAP_EXPORT_IMPORT)
			npr_json_string(js, "export-import");
		npr_json_end_array(js);
		npr_json_kv_uint(js, "ring_workers", rs.workers);
		npr_json_kv_string(js, "completion_path", path);
		npr_json_kv_string(js, "completion_reason", reason);
	} else {
		printf("%s\n", di.name);
		printf("  full name        %s\n", di.full_name);
		printf("  architecture     %s\n", di.arch);
		printf("  threads          %u\n", di.num_threads);
		printf("  capabilities    %s%s%s%s\n",
		       di.caps & NPR_CAP_FP32 ? " fp32" : "",
		       di.caps & NPR_CAP_FP16 ? " fp16" : "",
		       di.caps & NPR_CAP_INT8 ? " int8" : "",
		       di.caps & NPR_CAP_EXPORT_IMPORT ? " export-import" : "");
		printf("  ring workers     %u\n", rs.workers);
		printf("  completion path  %s: %s\n", path, reason);
	}
	if (di.device_type == NPR_DEVICE_NPU)
		print_npu(fd);
	if (js) {
		npr_json_key(js, "properties");
		npr_json_begin_array(js);
	} else {
		printf("  properties\n");
	}
	print_props(fd, 0);
	if (js)
		npr_json_end_array(js);
	if (model)
		ret = print_query(fd, model);
	if (js)
		npr_json_end_object(js);
	npr_close(fd);
	return ret;
}

/*
 * Every device of a backend: its AVAILABLE_DEVICES, read on the device
 * its bare name opens; the reason if that does not open.
 */
static int show_backend(const char *backend)
{
	struct npr_param pa = { .size = sizeof(pa) };
	char list[1024];
	const char *p;
	int fd = npr_open(backend, 0), ret = 0;

	if (fd < 0)
		return show_device(backend, false, NULL);
	pa.param = NPR_PARAM_AVAILABLE_DEVICES;
	pa.ptr = (uintptr_t)list;
	pa.len = sizeof(list);
	if (npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &pa) || !list[0]) {
		npr_close(fd);
		return show_device(backend, false, NULL);
	}
	npr_close(fd);
	for (p = list; *p && p < list + sizeof(list); p += strlen(p) + 1)
		ret |= show_device(p, false, NULL);
	return ret;
}

int main(int argc, char **argv)
{
	const char *only = NULL, *model = NULL;
	bool json = false;
	unsigned int i;
	int ret = 0, c;

	npr_tool_init("npr-info");
	while ((c = getopt_long(argc, argv, "d:m:h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'd': only = optarg; break;
		case 'm': model = optarg; break;
		case 'j': json = true; break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case 'V':
			npr_tool_version();
			return 0;
		default:
			npr_tool_usage(NULL);
		}
	}
	if (optind != argc)
		npr_tool_usage("unexpected argument '%s'", argv[optind]);
	if (model && !only)
		npr_tool_usage("-m needs -d");
	if (json) {
		js = npr_tool_json_begin(0);
		npr_json_begin_object(js);
		npr_json_key(js, "devices");
		npr_json_begin_array(js);
	}
	if (only)
		ret = show_device(only, true, model);
	for (i = 0; !only && npr_backend_at(i); i++)
		ret |= show_backend(npr_backend_at(i));
	if (js) {
		npr_json_end_array(js);
		npr_json_end_object(js);
		npr_tool_json_end(js);
	}
	return ret;
}
