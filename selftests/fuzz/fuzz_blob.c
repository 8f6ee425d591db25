// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the input as a compiled-model blob (Documentation/blob.rst)
 * with its checksum made right again, so that a mutation reaches the
 * parser and the validator rather than the checksum; IMPORT, then one
 * inference on zeros.
 */
#include "fuzz.h"
#include "../blob_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	unsigned char *b;
	__u32 exec;

	if (fd < 0)
		fd = fz_open("cpu");
	if (fd < 0)
		abort();
	b = malloc(size ? size : 1);
	if (!b)
		abort();
	memcpy(b, data, size);
	if (size >= BLOB_HDR)
		blob_reseal(b, size);
	if (!blob_import(fd, b, size, &exec)) {
		fz_infer_exec(fd, exec);
		fz_destroy(fd, exec);
	}
	free(b);
	return 0;
}
