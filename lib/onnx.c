// SPDX-License-Identifier: MIT
/*
 * ONNX frontend (placeholder until the frontend lands).
 */
#include <errno.h>

#include "onnx.h"

int npr_onnx_parse(const void *buf, size_t len, const char *base_dir,
		   struct npr_graph **out)
{
	return npr_err(-EINVAL, "not an IR xml document (ONNX models are not supported yet)");
}

int npr_onnx_load_file(const char *path, struct npr_graph **out)
{
	return npr_err(-EOPNOTSUPP, "ONNX models are not supported yet");
}
