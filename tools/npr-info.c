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

#include "npuring.h"

static const char *const devices[] = { "cpu", "npu", "null" };

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
		free(names);
		return 1;
	}
	printf("  query_model %s: %u of %u layers supported\n", model,
	       q.num_supported, q.num_layers);
	for (p = names; *p; p += strlen(p) + 1)
		printf("    %s\n", p);
	free(names);
	return 0;
}

static const char usage[] =
"usage: npr-info [-d DEVICE] [-m MODEL]\n"
"\n"
"List the devices (or DEVICE), their properties and their completion\n"
"path (io_uring or the eventfd fallback, and why).  With -m, also the\n"
"layers of MODEL the device supports (query_model).\n"
"\n"
"  -d, --device DEVICE  only this device: cpu, npu or null\n"
"  -m, --model MODEL    the layers of MODEL (.xml or .onnx) DEVICE supports;\n"
"                       needs -d\n"
"  -h, --help           show this help\n";

static const struct option long_opts[] = {
	{ "device", required_argument, NULL, 'd' },
	{ "model", required_argument, NULL, 'm' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	const char *only = NULL, *model = NULL;
	size_t i;
	int ret = 0, c;

	while ((c = getopt_long(argc, argv, "d:m:h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'd': only = optarg; break;
		case 'm': model = optarg; break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind != argc || (model && !only)) {
		fputs(usage, stderr);
		if (model && !only)
			fputs("npr-info: -m needs -d\n", stderr);
		return 2;
	}
	for (i = 0; i < sizeof(devices) / sizeof(devices[0]) || only; i++) {
		const char *name = only ? only : devices[i];
		struct npr_device_info di = { .size = sizeof(di) };
		struct npr_ring_setup rs = { .size = sizeof(rs) };
		char buf[128];
		int fd = npr_open(name, 0), err;

		if (fd < 0) {
			/* an absent NPU is not an error of this listing; the
			 * message names the missing layer */
			printf("%s: cannot open: %s\n", name, npr_last_error());
			if (only || strcmp(name, "npu"))
				ret = 1;
			if (only)
				break;
			continue;
		}
		err = npr_ioctl(fd, NPR_IOCTL_DEVICE_INFO, &di);
		if (!err)
			err = npr_ioctl(fd, NPR_IOCTL_RING_SETUP, &rs);
		if (err) {
			printf("%s: %s\n", name, strerror(-err));
			ret = 1;
			npr_close(fd);
			if (only)
				break;
			continue;
		}
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
		printf("  completion path  %s: %s\n",
		       rs.path == NPR_RING_PATH_URING ? "io_uring" :
						      "eventfd fallback",
		       reason_str(&rs, buf, sizeof(buf)));
		if (di.device_type == NPR_DEVICE_NPU)
			print_npu(fd);
		printf("  properties\n");
		print_props(fd, 0);
		if (model)
			ret |= print_query(fd, model);
		npr_close(fd);
		if (only)
			break;
	}
	return ret;
}
