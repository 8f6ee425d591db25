// SPDX-License-Identifier: MIT
/*
 * Fuzz target: an IR model (the .xml and its weights, split as
 * fz_split() says) loaded from memory, compiled, and run once on zeros.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	const uint8_t *xml, *bin;
	size_t xml_len, bin_len;

	if (fd < 0)
		fd = fz_open("cpu");
	if (fd < 0)
		abort();
	fz_split(data, size, &xml, &xml_len, &bin, &bin_len);
	fz_load_run(fd, xml, xml_len, bin_len ? bin : NULL, bin_len);
	return 0;
}
