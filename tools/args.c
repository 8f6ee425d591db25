// SPDX-License-Identifier: MIT
/*
 * --prop and --shape for the tools (npr-compile, npr-cache), and reading
 * a compiled-model blob given where a model may be (npr-run, npr-bench).
 * Each returns >= 0, or -errno with a message for the user in @msg.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

/**
 * npr_arg_set_prop() - "NAME=VALUE": SET_PARAM on the device by the
 * property's OpenVINO name, typed by PROP_INFO (booleans take 0/1,
 * YES/NO or true/false; enums their names)
 * @fd: the device.
 * @arg: the argument.
 * @msg: where a failure is explained.
 * @len: its size.
 */
int npr_arg_set_prop(int fd, const char *arg, char *msg, size_t len)
{
	struct npr_prop_info pi = {
		.size = sizeof(pi), .flags = NPR_PROP_INFO_BY_NAME,
	};
	struct npr_param pa = { .size = sizeof(pa) };
	const char *eq = strchr(arg, '='), *v;
	char *end;
	int err;

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(pi.name)) {
		snprintf(msg, len, "--prop %s: expected NAME=VALUE", arg);
		return -EINVAL;
	}
	memcpy(pi.name, arg, eq - arg);
	err = npr_ioctl(fd, NPR_IOCTL_PROP_INFO, &pi);
	if (err)
		goto lib;
	pa.param = pi.id;
	v = eq + 1;
	switch (pi.type) {
	case NPR_PROP_BOOL:
		if (!strcmp(v, "YES") || !strcmp(v, "true")) {
			pa.value = 1;
			break;
		}
		if (!strcmp(v, "NO") || !strcmp(v, "false")) {
			pa.value = 0;
			break;
		}
		/* 0 or 1 */
		__attribute__((fallthrough));
	case NPR_PROP_INT:
		errno = 0;
		pa.value = (__u64)strtoll(v, &end, 0);
		if (errno || end == v || *end) {
			snprintf(msg, len, "--prop %s: %s is a number", arg,
				 pi.name);
			return -EINVAL;
		}
		break;
	default:	/* enum names and strings */
		pa.ptr = (uintptr_t)v;
		pa.len = (__u32)strlen(v) + 1;
	}
	err = npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &pa);
	if (!err)
		return 0;
lib:
	snprintf(msg, len, "--prop %s: %s (%s)", arg, npr_last_error(),
		 strerror(-err));
	return err;
}

/**
 * npr_arg_shape() - "NAME=1,3,224,224" for the input of @model called NAME
 * @fd: the device.
 * @model: model handle.
 * @arg: the argument.
 * @sh: filled.
 * @msg: where a failure is explained.
 * @len: its size.
 */
int npr_arg_shape(int fd, __u32 model, const char *arg,
		  struct npr_shape_arg *sh, char *msg, size_t len)
{
	struct npr_model_info mi = { .size = sizeof(mi), .handle = model };
	const char *eq = strchr(arg, '=');
	const char *p;
	char name[256];
	__u32 i;
	int err;

	if (!eq) {
		snprintf(msg, len, "--shape %s: expected NAME=DIMS", arg);
		return -EINVAL;
	}
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_INFO, &mi);
	if (err) {
		snprintf(msg, len, "MODEL_INFO: %s", npr_last_error());
		return err;
	}
	for (i = 0; i < mi.num_inputs; i++) {
		struct npr_port_info pi;

		npr_prep_port_info(&pi, model, i, 0, name, sizeof(name));
		if (npr_ioctl(fd, NPR_IOCTL_PORT_INFO, &pi))
			continue;
		if (strlen(name) == (size_t)(eq - arg) &&
		    !strncmp(name, arg, eq - arg))
			break;
	}
	if (i == mi.num_inputs) {
		snprintf(msg, len, "--shape %s: the model has no input of that name",
			 arg);
		return -ENOENT;
	}
	memset(sh, 0, sizeof(*sh));
	sh->index = i;
	for (p = eq + 1; *p; ) {
		char *end;
		long long d;

		errno = 0;
		d = strtoll(p, &end, 10);
		if (sh->rank == NPR_MAX_RANK || errno || end == p || d < 1 ||
		    (*end && *end != ',')) {
			snprintf(msg, len, "--shape %s: bad dimension (at most %d, each >= 1)",
				 arg, NPR_MAX_RANK);
			return -EINVAL;
		}
		sh->dims[sh->rank++] = d;
		p = *end == ',' ? end + 1 : end;
	}
	if (!sh->rank) {
		snprintf(msg, len, "--shape %s: no dimensions", arg);
		return -EINVAL;
	}
	return 0;
}

/**
 * npr_arg_read_blob() - read @path if it is a compiled-model blob
 * @path: what the user gave as the model.
 * @buf: Out. The whole file (malloc'd, the caller frees it) when it is a
 *       blob; NULL otherwise.
 * @blen: Out. Its size.
 * @msg: where a failure is explained.
 * @len: its size.
 *
 * A blob is told by its magic ("NPRBLOB\0", Documentation/blob.rst); the
 * import checks the rest.  A file that cannot be opened is "not a blob",
 * so that MODEL_LOAD reports it in its own words.
 *
 * Return: 1 for a blob, 0 for anything else, -errno when a blob could not
 * be read whole.
 */
int npr_arg_read_blob(const char *path, void **buf, size_t *blen,
		      char *msg, size_t len)
{
	char magic[8] = { 0 };
	FILE *f = fopen(path, "rb");
	long n = 0;
	int err = 0;

	*buf = NULL;
	*blen = 0;
	if (!f)
		return 0;
	if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "NPRBLOB", 8)) {
		fclose(f);
		return 0;
	}
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		err = -errno;
		snprintf(msg, len, "%s: cannot size the blob: %s", path,
			 strerror(errno));
	} else if (!(*buf = malloc(n ? n : 1))) {
		err = -ENOMEM;
		snprintf(msg, len, "%s: no memory for a blob of %ld bytes",
			 path, n);
	} else if (fread(*buf, 1, n, f) != (size_t)n) {
		err = -EIO;
		snprintf(msg, len, "%s: cannot read the blob", path);
		free(*buf);
		*buf = NULL;
	}
	fclose(f);
	if (err)
		return err;
	*blen = n;
	return 1;
}
