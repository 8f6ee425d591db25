/* SPDX-License-Identifier: MIT */
/*
 * files.h - whole files and directory trees, for the selftests and the
 * benchmark programs built beside them (it needs no harness).
 */
#ifndef NPR_SELFTESTS_FILES_H
#define NPR_SELFTESTS_FILES_H

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

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

/**
 * npr_test_rm_tree() - remove a directory and everything below it
 * @path: the directory (or a file); symbolic links are removed, not
 *        followed.
 *
 * Return: 0, or -1 with errno set by the first removal that failed (the
 * rest is still tried).
 */
static inline int npr_test_rm_tree(const char *path)
{
	struct stat st;
	struct dirent *e;
	int err = 0;
	DIR *d;

	if (lstat(path, &st))
		return -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char sub[PATH_MAX];

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >=
		    (int)sizeof(sub) || npr_test_rm_tree(sub))
			err = -1;
	}
	closedir(d);
	return rmdir(path) || err ? -1 : 0;
}

#endif /* NPR_SELFTESTS_FILES_H */
