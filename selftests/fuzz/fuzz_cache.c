// SPDX-License-Identifier: MIT
/*
 * Fuzz target: model cache entries (Documentation/cache.rst).  A private
 * cache directory holds the entry a real compile of a small model wrote;
 * each input replaces that entry's blob, and the model is compiled again
 * with NPR_CACHE_REQUIRED, so that the hit path maps and imports the
 * input (lib/store/cache.c, npr_blob_import_compiled()) and nothing is
 * compiled or written on a miss.
 *
 * The input is tried twice: as it is, where the import and the backend's
 * compile run beside the checksum and a corrupt entry must never be
 * served, and with its checksum made right, so that mutations reach
 * whatever the checksum would have stopped; a served entry runs once.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "fuzz.h"
#include "../blob_io.h"

static int fd = -1;
static uint32_t model;
static char dir[64], entry[192], tmp[192];

static void cleanup(void)
{
	if (fd >= 0) {
		fz_destroy(fd, model);
		npr_close(fd);
	}
	fz_clear_dir(dir);
	rmdir(dir);
}

static int set_param(unsigned int id, uint64_t value, const char *s)
{
	struct npr_param p = { .size = sizeof(p), .param = id, .value = value };

	if (s) {
		p.ptr = (uintptr_t)s;
		p.len = strlen(s) + 1;
	}
	return npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &p);
}

/* The cache directory, the model, and the name of its entry's blob. */
static void setup(void)
{
	struct npr_model_load ml;
	struct npr_compile co;
	struct dirent *e;
	const char *t = getenv("TMPDIR");
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/npr-fuzz-cache.XXXXXX",
		 t && strlen(t) < 32 ? t : "/tmp");
	if (!mkdtemp(dir))
		abort();
	atexit(cleanup);
	fd = fz_open("cpu");
	if (fd < 0 || set_param(NPR_PARAM_CACHE_DIR, 0, dir))
		abort();
	npr_prep_model_load_mem(&ml, fz_add_xml, sizeof(fz_add_xml) - 1,
				fz_add_bin, sizeof(fz_add_bin));
	if (npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml))
		abort();
	model = ml.handle;
	npr_prep_compile(&co, model);
	if (npr_ioctl(fd, NPR_IOCTL_COMPILE, &co))
		abort();
	fz_destroy(fd, co.exec);
	d = opendir(dir);
	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n > 5 && !strcmp(e->d_name + n - 5, ".blob"))
			snprintf(entry, sizeof(entry), "%s/%s", dir, e->d_name);
	}
	if (d)
		closedir(d);
	if (!entry[0] || set_param(NPR_PARAM_NPR_CACHE_REQUIRED, 1, NULL))
		abort();
	snprintf(tmp, sizeof(tmp), "%s/.entry", dir);
}

/* Put @b in place of the entry, as the cache replaces one: by rename. */
static void write_entry(const unsigned char *b, size_t n)
{
	int f = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t done = 0;

	if (f < 0)
		abort();
	while (done < n) {
		ssize_t w = write(f, b + done, n - done);

		if (w <= 0)
			abort();
		done += w;
	}
	if (close(f) || rename(tmp, entry))
		abort();
}

/* Compile the model: a hit serves the entry. Return: served or not. */
static int hit(void)
{
	struct npr_compile co;
	struct npr_param p = {
		.size = sizeof(p), .param = NPR_PARAM_LOADED_FROM_CACHE,
	};

	npr_prep_compile(&co, model);
	if (npr_ioctl(fd, NPR_IOCTL_COMPILE, &co))
		return 0;
	p.handle = co.exec;
	/* with NPR_CACHE_REQUIRED a compiled model comes from the cache */
	if (npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &p) || p.value != 1)
		abort();
	fz_infer_exec(fd, co.exec);
	fz_destroy(fd, co.exec);
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *b;
	int sealed;

	if (fd < 0)
		setup();
	b = malloc(size ? size : 1);
	if (!b)
		abort();
	memcpy(b, data, size);
	sealed = size < BLOB_HDR;
	if (!sealed) {
		blob_reseal(b, size);
		sealed = !memcmp(b, data, size);
	}
	write_entry(data, size);
	/* served as it is: only with its checksum right */
	if (hit() && !sealed)
		abort();
	if (!sealed) {
		write_entry(b, size);
		hit();
	}
	free(b);
	return 0;
}
