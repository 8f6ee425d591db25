/* SPDX-License-Identifier: MIT */
/*
 * slurp.h - a whole file into memory, for the selftests and the
 * benchmark programs built beside them (it needs no harness).
 */
#ifndef NPR_SELFTESTS_SLURP_H
#define NPR_SELFTESTS_SLURP_H

#include <stdio.h>
#include <stdlib.h>

/**
 * npr_test_slurp() - a whole file into a malloc'd buffer
 * @path: the file.
 * @len: Out. Its size in bytes.
 *
 * The buffer holds one byte more than the file, a NUL, so that a text
 * file is also a string.
 *
 * Return: the buffer (free() it), or NULL if the file cannot be read.
 */
static inline void *npr_test_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 &&
	    !fseek(f, 0, SEEK_SET)) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (buf) {
			buf[n] = 0;
			*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

#endif /* NPR_SELFTESTS_SLURP_H */
