// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the input as a compiled-model blob (Documentation/blob.rst)
 * with its checksum made right again, so that a mutation reaches the
 * parser and the validator rather than the checksum; IMPORT, then one
 * inference on zeros.
 *
 * A weightless blob (format 4) is followed by its weights file: the
 * bytes after the payload the header states go to a memory file given
 * as WEIGHTS_PATH, and the weights section's file size and hash are made
 * right for them, so that a mutation reaches the weights references too.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "../blob_io.h"

/* Split off the weights of a weightless blob; its new size, or @size. */
static size_t weights_off(int fd, unsigned char *b, size_t size, int *wfd)
{
	struct npr_param pa = {
		.size = sizeof(pa), .param = NPR_PARAM_WEIGHTS_PATH,
	};
	uint64_t psize, wlen, h;
	char path[64];

	*wfd = -1;
	if (size < BLOB_HDR + 28 || *(uint32_t *)(b + 8) != 4)
		return size;
	memcpy(&psize, b + 80, 8);
	if (psize < 28 || psize > size - BLOB_HDR)
		return size;
	wlen = size - BLOB_HDR - psize;
	*wfd = memfd_create("weights", MFD_CLOEXEC);
	if (*wfd < 0)
		abort();
	if (wlen && pwrite(*wfd, b + BLOB_HDR + psize, wlen, 0) !=
	    (ssize_t)wlen)
		abort();
	h = npr_blob_hash(b + BLOB_HDR + psize, wlen);
	memcpy(b + BLOB_HDR, &wlen, 8);
	memcpy(b + BLOB_HDR + 8, &h, 8);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", *wfd);
	pa.ptr = (uintptr_t)path;
	pa.len = strlen(path) + 1;
	npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &pa);
	return BLOB_HDR + psize;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	unsigned char *b;
	__u32 exec;
	int wfd;

	if (fd < 0)
		fd = fz_open("cpu");
	if (fd < 0)
		abort();
	b = malloc(size ? size : 1);
	if (!b)
		abort();
	memcpy(b, data, size);
	size = weights_off(fd, b, size, &wfd);
	if (size >= BLOB_HDR)
		blob_reseal(b, size);
	if (!blob_import(fd, b, size, &exec)) {
		fz_infer_exec(fd, exec);
		fz_destroy(fd, exec);
	}
	if (wfd >= 0)
		close(wfd);
	free(b);
	return 0;
}
