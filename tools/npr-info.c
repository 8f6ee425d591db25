// SPDX-License-Identifier: MIT
/*
 * npr-info - list the devices, their properties, and the completion path
 * (io_uring or the eventfd fallback) their rings use, with the reason.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npuring.h"

static const char *const devices[] = { "cpu", "null" };

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

int main(int argc, char **argv)
{
	size_t i;
	int ret = 0;

	if (argc > 1) {
		fprintf(stderr, "usage: npr-info\n"
			"List the devices, their properties and their completion path.\n");
		return strcmp(argv[1], "-h") && strcmp(argv[1], "--help") ? 2 : 0;
	}
	for (i = 0; i < sizeof(devices) / sizeof(devices[0]); i++) {
		struct npr_device_info di = { .size = sizeof(di) };
		struct npr_ring_setup rs = { .size = sizeof(rs) };
		char buf[128];
		int fd = npr_open(devices[i], 0), err;

		if (fd < 0) {
			printf("%s: cannot open: %s\n", devices[i],
			       strerror(-fd));
			ret = 1;
			continue;
		}
		err = npr_ioctl(fd, NPR_IOCTL_DEVICE_INFO, &di);
		if (!err)
			err = npr_ioctl(fd, NPR_IOCTL_RING_SETUP, &rs);
		if (err) {
			printf("%s: %s\n", devices[i], strerror(-err));
			ret = 1;
			npr_close(fd);
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
		npr_close(fd);
	}
	return ret;
}
