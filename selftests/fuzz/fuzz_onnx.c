// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the input as an ONNX model (protobuf bytes) loaded from
 * memory, compiled with its own shapes, and run once on zeros.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;

	if (fd < 0)
		fd = fz_open("cpu");
	if (fd < 0)
		abort();
	fz_load_run(fd, data, size, NULL, 0);
	return 0;
}
