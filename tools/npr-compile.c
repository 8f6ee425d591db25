// SPDX-License-Identifier: MIT
/*
 * npr-compile: compile a model for a device and write the compiled-model
 * blob (NPR_IOCTL_EXPORT) that npr-run, npr-bench and NPR_IOCTL_IMPORT
 * accept in place of the model.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "json.h"
#include "npuring.h"
#include "tool.h"

static const char usage[] =
"usage: npr-compile -d DEVICE -m MODEL -o FILE [--shape NAME=D0,D1,...]\n"
"                   [--prop NAME=VALUE ...] [--json]\n"
"\n"
"Compile MODEL (OpenVINO IR .xml with its .bin, or ONNX .onnx) for DEVICE and write the\n"
"compiled-model blob to FILE (a regular file is written as FILE.tmp and\n"
"renamed; a device or pipe is written directly).\n"
"\n"
"  -d, --device DEV      device (default cpu)\n"
"  -m, --model FILE      the model: IR .xml or ONNX .onnx\n"
"  -o, --output FILE     where the blob goes\n"
"      --shape SHAPE     an input's shape: NAME=1,3,224,224,\n"
"                        NAME[1,3,224,224], or [1,3,224,224] for the\n"
"                        only input; may repeat\n"
"      --prop NAME=VALUE a device property by its name, e.g.\n"
"                        PERFORMANCE_HINT=THROUGHPUT; compiled into the\n"
"                        blob (see Documentation/properties.rst)\n"
"      --json            print what was written as one JSON object\n"
"  -h, --help            show this help\n"
"      --version         print the version\n"
"\n"
"Exit status: 0 on success, 1 on failure, 2 on a usage error.\n";

#define fail npr_tool_fail

static void __attribute__((noreturn)) fail_lib(const char *what, int err)
{
	fail("%s: %s (%s)", what, npr_last_error(), strerror(-err));
}

/* A --prop or --shape error: the user's (status 2) or not (1). */
static void __attribute__((noreturn)) fail_arg(int err, const char *msg)
{
	if (npr_arg_is_usage(err))
		npr_tool_usage("%s", msg);
	fail("%s", msg);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "model", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "shape", required_argument, NULL, 'S' },
		{ "prop", required_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dev = "cpu", *model = NULL, *out = NULL;
	const char *props[64];
	struct npr_arg_shape *shapes = NULL;
	struct npr_shape_arg *sh;
	bool json = false;
	struct npr_model_load ml;
	struct npr_compile co;
	struct npr_export ea = { .size = sizeof(ea) };
	int nshapes = 0, nprops = 0, fd, c, i, err;
	char tmp[4096], msg[2048];
	struct stat st;
	void *blob;
	FILE *f;

	npr_tool_init("npr-compile");
	while ((c = getopt_long(argc, argv, "d:m:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'm': model = optarg; break;
		case 'o': out = optarg; break;
		case 'S':
			err = npr_arg_parse_shapes(optarg, &shapes, &nshapes,
						   msg, sizeof(msg));
			if (err)
				fail_arg(err, msg);
			break;
		case 'P':
			if (nprops == 64)
				npr_tool_usage("at most 64 --prop");
			props[nprops++] = optarg;
			break;
		case 'j': json = true; break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case 'V':
			npr_tool_version();
			return 0;
		default:
			npr_tool_usage(NULL);
		}
	}
	if (optind != argc)
		npr_tool_usage("unexpected argument '%s'", argv[optind]);
	if (!model)
		npr_tool_usage("no model: give -m MODEL");
	if (!out)
		npr_tool_usage("no output: give -o FILE");
	fd = npr_open(dev, 0);
	if (fd < 0)
		fail_lib(dev, fd);
	for (i = 0; i < nprops; i++)
		if ((err = npr_arg_set_prop(fd, props[i], msg, sizeof(msg))))
			fail_arg(err, msg);
	npr_prep_model_load(&ml, model, NULL);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err)
		fail_lib(model, err);
	sh = calloc(nshapes + 1, sizeof(*sh));
	if (!sh)
		fail("out of memory");
	err = npr_arg_resolve_shapes(fd, ml.handle, shapes, nshapes, sh, msg,
				     sizeof(msg));
	if (err)
		fail_arg(err, msg);
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
	if (json) {
		struct npr_json *j = npr_tool_json_begin(0);

		npr_json_begin_object(j);
		npr_json_kv_string(j, "output", out);
		npr_json_kv_uint(j, "bytes", ea.bytes);
		npr_json_kv_string(j, "device", dev);
		npr_json_kv_string(j, "model", model);
		npr_json_end_object(j);
		npr_tool_json_end(j);
	} else {
		printf("%s: %llu bytes for %s\n", out,
		       (unsigned long long)ea.bytes, dev);
	}
	free(blob);
	free(sh);
	npr_arg_free_shapes(shapes, nshapes);
	npr_close(fd);
	return 0;
}
