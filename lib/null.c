// SPDX-License-Identifier: MIT
/*
 * The null backend (device "null"): compiles any model to nothing and
 * completes every inference at once without touching the tensors.  It
 * measures the ring and the ioctl layer alone and makes the uapi testable
 * without kernels.
 */
#include <errno.h>
#include <stdio.h>

#include "backend.h"
#include "object.h"

static int null_probe(struct npr_device *dev, int index)
{
	if (index != 0)
		return npr_err(-ENODEV, "null.%d: there is one null device, null.0",
			       index);
	dev->info.device_type = NPR_DEVICE_NULL;
	dev->info.caps = NPR_CAP_FP32 | NPR_CAP_FP16 | NPR_CAP_INT8;
	snprintf(dev->info.name, sizeof(dev->info.name), "null");
	snprintf(dev->info.full_name, sizeof(dev->info.full_name),
		 "Null device (completes every job at once)");
	snprintf(dev->info.arch, sizeof(dev->info.arch), "null");
	return 0;
}

static int null_compile(struct npr_exec *ex)
{
	return 0;
}

static int null_infer(struct npr_request *rq)
{
	return 0;
}

const struct npr_backend_ops npr_null_backend_ops = {
	.api_version = NPR_BACKEND_API_VERSION,
	.name = "null",
	.caps = NPR_BACKEND_CAP_INLINE_INFER,
	.probe = null_probe,
	.compile = null_compile,
	.infer = null_infer,
};
