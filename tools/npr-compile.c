// SPDX-License-Identifier: MIT
/*
 * npr-compile: compile a model for a device and write the compiled-model
 * blob (NPR_IOCTL_EXPORT) that npr-run, npr-bench and NPR_IOCTL_IMPORT
 * accept in place of the model.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "npuring.h"

static const char usage[] =
"usage: npr-compile -d DEVICE -m MODEL -o FILE [--shape NAME=D0,D1,...]\n"
"                   [--prop NAME=VALUE ...]\n"
"\n"
"Compile MODEL (OpenVINO IR .xml or ONNX .onnx) for DEVICE and write the\n"
"compiled-model blob to FILE (a regular file is written as FILE.tmp and\n"
"renamed; a device or pipe is written directly).\n"
"\n"
"  -d, --device DEV      device (default cpu)\n"
"  -m, --model FILE      the model\n"
"  -o, --output FILE     where the blob goes\n"
"      --shape NAME=DIMS input NAME's shape, e.g. input=1,3,224,224\n"
"      --prop NAME=VALUE a device property by its name, e.g.\n"
"                        PERFORMANCE_HINT=THROUGHPUT; compiled into the\n"
"                        blob (see Documentation/properties.rst)\n"
"  -h, --help            show this help\n";

static void __attribute__((noreturn, format(printf, 1, 2)))
fail(const char *fmt, ...)
{
	va_list ap;

	fputs("npr-compile: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void __attribute__((noreturn)) fail_lib(const char *what, int err)
{
	fail("%s: %s (%s)", what, npr_last_error(), strerror(-err));
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "model", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "shape", required_argument, NULL, 'S' },
		{ "prop", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dev = "cpu", *model = NULL, *out = NULL;
	const char *shapes[16], *props[64];
	struct npr_shape_arg sh[16];
	struct npr_model_load ml;
	struct npr_compile co;
	struct npr_export ea = { .size = sizeof(ea) };
	int nshapes = 0, nprops = 0, fd, c, i, err;
	char tmp[4096], msg[512];
	struct stat st;
	void *blob;
	FILE *f;

	while ((c = getopt_long(argc, argv, "d:m:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'm': model = optarg; break;
		case 'o': out = optarg; break;
		case 'S':
			if (nshapes == 16)
				fail("at most 16 --shape");
			shapes[nshapes++] = optarg;
			break;
		case 'P':
			if (nprops == 64)
				fail("at most 64 --prop");
			props[nprops++] = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs("Try 'npr-compile --help' for more information.\n",
			      stderr);
			return 2;
		}
	}
	if (!model || !out || optind != argc) {
		fputs(usage, stderr);
		return 2;
	}
	fd = npr_open(dev, 0);
	if (fd < 0)
		fail_lib(dev, fd);
	for (i = 0; i < nprops; i++)
		if (npr_arg_set_prop(fd, props[i], msg, sizeof(msg)))
			fail("%s", msg);
	npr_prep_model_load(&ml, model, NULL);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err)
		fail_lib(model, err);
	for (i = 0; i < nshapes; i++)
		if (npr_arg_shape(fd, ml.handle, shapes[i], &sh[i], msg,
				  sizeof(msg)))
			fail("%s", msg);
	npr_prep_compile(&co, ml.handle);
	co.shapes = (uintptr_t)sh;
	co.num_shapes = nshapes;
	err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	if (err)
		fail_lib("compile", err);
	ea.exec = co.exec;
	err = npr_ioctl(fd, NPR_IOCTL_EXPORT, &ea);
	if (err != -EMSGSIZE)
		fail_lib("export", err ? err : -EPROTO);
	blob = malloc(ea.bytes);
	if (!blob)
		fail("out of memory");
	ea.data = (uintptr_t)blob;
	err = npr_ioctl(fd, NPR_IOCTL_EXPORT, &ea);
	if (err)
		fail_lib("export", err);
	if (stat(out, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* a device or a pipe (/dev/null, /dev/stdout): write it */
		f = fopen(out, "wb");
		if (!f || fwrite(blob, 1, ea.bytes, f) != ea.bytes ||
		    fclose(f))
			fail("%s: %s", out, strerror(errno));
		goto done;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", out) >= (int)sizeof(tmp))
		fail("%s: path too long", out);
	f = fopen(tmp, "wb");
	if (!f)
		fail("%s: %s", tmp, strerror(errno));
	if (fwrite(blob, 1, ea.bytes, f) != ea.bytes || fflush(f) ||
	    fsync(fileno(f))) {
		fclose(f);
		unlink(tmp);
		fail("%s: %s", tmp, strerror(errno));
	}
	if (fclose(f) || rename(tmp, out)) {
		unlink(tmp);
		fail("%s: %s", out, strerror(errno));
	}
done:
	printf("%s: %llu bytes for %s\n", out, (unsigned long long)ea.bytes,
	       dev);
	free(blob);
	npr_close(fd);
	return 0;
}
