// SPDX-License-Identifier: MIT
/*
 * The arguments the tools share (args.h).  Each function returns >= 0,
 * or -errno with a message for the user in @msg that names what would
 * have been valid: the model's inputs, a property's values.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

/**
 * npr_arg_is_usage() - whether an error of these functions is the user's
 * @err: what one of them returned
 *
 * Return: true for a bad argument (an unknown name, a malformed or
 * out-of-range value, a read-only property), which the tools exit with
 * status 2 for; false for a run-time failure (status 1).
 */
bool npr_arg_is_usage(int err)
{
	return err == -EINVAL || err == -ENOENT || err == -ENOPROTOOPT ||
	       err == -EPERM || err == -ERANGE || err == -EPROTOTYPE;
}

/* Append @s to the list in @buf ("a, b"), "..." once it is full. */
static void list_add(char *buf, size_t len, const char *s)
{
	size_t o = strlen(buf);

	if (o + 4 >= len)
		return;
	if (o + strlen(s) + 2 + 4 >= len) {
		snprintf(buf + o, len - o, "%s...", o ? ", " : "");
		return;
	}
	snprintf(buf + o, len - o, "%s%s", o ? ", " : "", s);
}

/* The names of the properties of the device that can be set. */
static void writable_props(int fd, char *buf, size_t len)
{
	__u32 i;

	buf[0] = 0;
	for (i = 0;; i++) {
		struct npr_prop_info pi = {
			.size = sizeof(pi), .index = i,
		};

		if (npr_ioctl(fd, NPR_IOCTL_PROP_INFO, &pi))
			break;
		if (pi.access & NPR_PROP_ACCESS_RW)
			list_add(buf, len, pi.name);
	}
}

/*
 * The values of enum property @pi the device accepts.  PROP_INFO does
 * not list an enum's values, so each number is tried with SET_PARAM and
 * the accepted ones named by GET_PARAM; the property's value is put back
 * afterwards.
 */
static void enum_values(int fd, const struct npr_prop_info *pi, char *buf,
			size_t len)
{
	struct npr_param cur = { .size = sizeof(cur), .param = pi->id };
	__u64 v;

	buf[0] = 0;
	if (npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &cur))
		return;
	for (v = 0; v < 256; v++) {
		struct npr_param pa = {
			.size = sizeof(pa), .param = pi->id, .value = v,
		};
		char name[NPR_PROP_STR_MAX];

		if (npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &pa))
			continue;
		pa.value = 0;
		pa.ptr = (uintptr_t)name;
		pa.len = sizeof(name);
		if (!npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &pa))
			list_add(buf, len, name);
	}
	cur.ptr = 0;
	cur.len = 0;
	npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &cur);
}

/**
 * npr_arg_set_prop() - "NAME=VALUE": SET_PARAM on the device by the
 * property's OpenVINO name, typed by PROP_INFO (booleans take 0/1,
 * YES/NO or true/false; enums their names)
 * @fd: the device.
 * @arg: the argument.
 * @msg: where a failure is explained: an unknown name with the names of
 *       the device's writable properties, an enum's wrong value with the
 *       values the device accepts.
 * @len: its size.
 *
 * Return: 0, or -errno (npr_arg_is_usage() tells whose fault).
 */
int npr_arg_set_prop(int fd, const char *arg, char *msg, size_t len)
{
	struct npr_prop_info pi = {
		.size = sizeof(pi), .flags = NPR_PROP_INFO_BY_NAME,
	};
	struct npr_param pa = { .size = sizeof(pa) };
	const char *eq = strchr(arg, '='), *v;
	char valid[1024];
	char *end;
	int err;

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(pi.name)) {
		snprintf(msg, len, "--prop %s: expected NAME=VALUE", arg);
		return -EINVAL;
	}
	memcpy(pi.name, arg, eq - arg);
	err = npr_ioctl(fd, NPR_IOCTL_PROP_INFO, &pi);
	if (err == -ENOPROTOOPT) {
		snprintf(msg, len, "--prop %s: %s; the properties that can be set: ",
			 arg, npr_last_error());
		writable_props(fd, valid, sizeof(valid));
		snprintf(msg + strlen(msg), len - strlen(msg), "%s", valid);
		return err;
	}
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
		if (strcmp(v, "0") && strcmp(v, "1")) {
			snprintf(msg, len, "--prop %s: %s is a boolean: YES, NO, true, false, 1 or 0",
				 arg, pi.name);
			return -EINVAL;
		}
		pa.value = *v == '1';
		break;
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
	if (err == -EINVAL && pi.type == NPR_PROP_ENUM &&
	    (pi.access & NPR_PROP_ACCESS_RW)) {
		snprintf(msg, len, "--prop %s: %s; valid values: ", arg,
			 npr_last_error());
		enum_values(fd, &pi, valid, sizeof(valid));
		snprintf(msg + strlen(msg), len - strlen(msg), "%s",
			 valid[0] ? valid : "(none on this device)");
		return err;
	}
lib:
	snprintf(msg, len, "--prop %s: %s (%s)", arg, npr_last_error(),
		 strerror(-err));
	return err;
}

static const char shape_forms[] =
	"expected NAME=D0,D1,..., NAME[D0,D1,...] or [D0,D1,...]";

/* "D0,D1,..." up to @stop: static dimensions >= 0 (0: an empty tensor). */
static int parse_dims(const char *p, const char *stop,
		      struct npr_arg_shape *s)
{
	s->rank = 0;
	while (p < stop) {
		char *end;
		long long d;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		d = strtoll(p, &end, 10);
		if (errno || d < 0 || end > stop || s->rank == NPR_MAX_RANK ||
		    (end < stop && *end != ',') || (*end == ',' &&
						    end + 1 == stop))
			return -EINVAL;
		s->dims[s->rank++] = d;
		p = end < stop ? end + 1 : end;
	}
	return s->rank ? 0 : -EINVAL;
}

static int add_shape(struct npr_arg_shape **list, int *n, const char *name,
		     size_t nlen, const char *dims, const char *stop)
{
	struct npr_arg_shape *l, s = { 0 };

	if (parse_dims(dims, stop, &s))
		return -EINVAL;
	if (name) {
		s.name = strndup(name, nlen);
		if (!s.name)
			return -ENOMEM;
	}
	l = realloc(*list, (*n + 1) * sizeof(*l));
	if (!l) {
		free(s.name);
		return -ENOMEM;
	}
	l[(*n)++] = s;
	*list = l;
	return 0;
}

/**
 * npr_arg_set_weights() - --weights FILE: the weights file a weightless
 * blob (CACHE_MODE OPTIMIZE_SIZE) reads at IMPORT, as WEIGHTS_PATH
 * @fd: the device.
 * @path: the model's weights file (.bin, .onnx).
 * @msg: where a failure is explained.
 * @len: its size.
 *
 * Return: 0, or -errno (npr_arg_is_usage() tells whose fault).
 */
int npr_arg_set_weights(int fd, const char *path, char *msg, size_t len)
{
	struct npr_param pa = {
		.size = sizeof(pa), .param = NPR_PARAM_WEIGHTS_PATH,
		.ptr = (uintptr_t)path, .len = strlen(path) + 1,
	};
	int err;

	if (!*path) {
		snprintf(msg, len, "--weights: empty path");
		return -EINVAL;
	}
	err = npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &pa);
	if (err)
		snprintf(msg, len, "--weights %s: %s", path,
			 npr_last_error());
	return err;
}

/**
 * npr_arg_parse_shapes() - the syntax of one --shape argument
 * @arg: "NAME=D0,D1,..." (npuring's), or benchmark_app's
 *       "NAME[D0,D1,...]", "NAME1[...],NAME2[...]" and "[D0,D1,...]" (the
 *       model's only input)
 * @list: In/Out. The shapes so far (malloc'd); the new ones are appended.
 * @n: In/Out. Their number.
 * @msg: where a failure is explained.
 * @len: its size.
 *
 * Dimensions are static, each >= 0 (0 makes an empty tensor, the empty
 * past of a KV cache), at most NPR_MAX_RANK of them.  The
 * names are checked against a model by npr_arg_resolve_shapes().
 *
 * Return: 0, -EINVAL for a malformed argument, -ENOMEM.
 */
int npr_arg_parse_shapes(const char *arg, struct npr_arg_shape **list,
			 int *n, char *msg, size_t len)
{
	const char *p = arg, *open, *close;
	int err = 0;

	if (!strchr(arg, '[')) {
		const char *eq = strrchr(arg, '=');

		if (!eq || eq == arg)
			err = -EINVAL;
		else
			err = add_shape(list, n, arg, eq - arg, eq + 1,
					eq + strlen(eq));
		goto out;
	}
	for (;;) {
		open = strchr(p, '[');
		close = open ? strchr(open, ']') : NULL;
		if (!close || (open == p && (p != arg || close[1]))) {
			err = -EINVAL;
			break;
		}
		err = add_shape(list, n, open == p ? NULL : p, open - p,
				open + 1, close);
		if (err || !close[1])
			break;
		if (close[1] != ',' || !close[2]) {
			err = -EINVAL;
			break;
		}
		p = close + 2;
	}
out:
	if (err == -EINVAL)
		snprintf(msg, len, "--shape %s: %s, with 1 to %d dimensions >= 0",
			 arg, shape_forms, NPR_MAX_RANK);
	else if (err)
		snprintf(msg, len, "--shape %s: %s", arg, strerror(-err));
	return err;
}

static const struct {
	const char *name;
	unsigned int type;
} raw_types[] = {
	{ "f32", NPR_ELEM_F32 }, { "f16", NPR_ELEM_F16 },
	{ "i64", NPR_ELEM_I64 }, { "i32", NPR_ELEM_I32 },
	{ "u8", NPR_ELEM_U8 },
};

/**
 * npr_arg_raw_input() - the file and the element type of --input's FILE
 * @spec: FILE, or FILE:TYPE with TYPE one of f32 (the default), f16, i64,
 *        i32, u8: the element type of the file's little-endian values.
 * @path: Out. The file's name (malloc'd).
 * @type: Out. enum npr_elem_type.
 * @msg: where a failure is explained.
 * @len: its size.
 *
 * A suffix that is not a type (no letters then digits, as in a:b.f32)
 * stays part of the name.
 *
 * Return: 0, -EINVAL for a type this does not know (letters then digits,
 * e.g. :f64), -ENOMEM.
 */
int npr_arg_raw_input(const char *spec, char **path, unsigned int *type,
		      char *msg, size_t len)
{
	const char *colon = strrchr(spec, ':'), *q;
	size_t i;

	*type = NPR_ELEM_F32;
	*path = NULL;
	if (colon && colon > spec) {
		for (i = 0; i < sizeof(raw_types) / sizeof(raw_types[0]); i++)
			if (!strcmp(colon + 1, raw_types[i].name))
				break;
		if (i < sizeof(raw_types) / sizeof(raw_types[0])) {
			*type = raw_types[i].type;
			*path = strndup(spec, colon - spec);
			goto out;
		}
		for (q = colon + 1; *q >= 'a' && *q <= 'z'; q++)
			;
		if (q > colon + 1 && *q >= '0' && *q <= '9') {
			while (*q >= '0' && *q <= '9')
				q++;
			if (!*q) {
				snprintf(msg, len, "--input %s: element type \"%s\" is not one of f32, f16, i64, i32, u8",
					 spec, colon + 1);
				return -EINVAL;
			}
		}
	}
	*path = strdup(spec);
out:
	if (!*path) {
		snprintf(msg, len, "--input %s: %s", spec, strerror(ENOMEM));
		return -ENOMEM;
	}
	return 0;
}

/**
 * npr_arg_free_shapes() - free what npr_arg_parse_shapes() made
 * @list: the shapes
 * @n: their number
 */
void npr_arg_free_shapes(struct npr_arg_shape *list, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(list[i].name);
	free(list);
}

/**
 * npr_arg_input_names() - the names of a model's inputs, for a message
 * @fd: the device.
 * @handle: a model or exec handle.
 * @buf: Out. "a, b, c" (shortened with "..." to fit).
 * @len: its size.
 *
 * Return: the number of inputs, or -errno from MODEL_INFO.
 */
int npr_arg_input_names(int fd, __u32 handle, char *buf, size_t len)
{
	struct npr_model_info mi = { .size = sizeof(mi), .handle = handle };
	__u32 i;
	int err;

	buf[0] = 0;
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_INFO, &mi);
	if (err)
		return err;
	for (i = 0; i < mi.num_inputs; i++) {
		struct npr_port_info pi;
		char name[1024];

		npr_prep_port_info(&pi, handle, i, 0, name, sizeof(name));
		if (npr_ioctl(fd, NPR_IOCTL_PORT_INFO, &pi))
			snprintf(name, sizeof(name), "#%u", i);
		list_add(buf, len, name);
	}
	return (int)mi.num_inputs;
}

/* The index of the input of @handle called @name, or -ENOENT. */
static int input_index(int fd, __u32 handle, const char *name, __u32 n)
{
	__u32 i;

	for (i = 0; i < n; i++) {
		struct npr_port_info pi;
		char buf[1024];

		npr_prep_port_info(&pi, handle, i, 0, buf, sizeof(buf));
		if (!npr_ioctl(fd, NPR_IOCTL_PORT_INFO, &pi) &&
		    !strcmp(buf, name))
			return (int)i;
	}
	return -ENOENT;
}

/**
 * npr_arg_resolve_shapes() - the shapes of --shape for COMPILE
 * @fd: the device.
 * @model: the model handle.
 * @list: what npr_arg_parse_shapes() made.
 * @n: its length.
 * @out: Out. @n shapes, each with its input's index.
 * @msg: where a failure is explained, with the model's input names.
 * @len: its size.
 *
 * Return: 0; -ENOENT for a name the model has no input of; -EINVAL for
 * an input given twice or a shape without a name for a model with
 * several inputs; -errno from MODEL_INFO.
 */
int npr_arg_resolve_shapes(int fd, __u32 model,
			   const struct npr_arg_shape *list, int n,
			   struct npr_shape_arg *out, char *msg, size_t len)
{
	char names[1024];
	int ninputs = npr_arg_input_names(fd, model, names, sizeof(names));
	int i, k, idx;

	if (ninputs < 0) {
		snprintf(msg, len, "MODEL_INFO: %s", npr_last_error());
		return ninputs;
	}
	for (i = 0; i < n; i++) {
		if (!list[i].name) {
			if (ninputs != 1) {
				snprintf(msg, len, "--shape [...] without a name: the model has %d inputs (%s); give NAME[D0,D1,...]",
					 ninputs, names);
				return -EINVAL;
			}
			idx = 0;
		} else {
			idx = input_index(fd, model, list[i].name, ninputs);
			if (idx < 0) {
				snprintf(msg, len, "--shape: the model has no input \"%s\"; its inputs: %s",
					 list[i].name, names);
				return idx;
			}
		}
		for (k = 0; k < i; k++)
			if (out[k].index == (__u32)idx) {
				snprintf(msg, len,
					 "--shape: input %s given twice",
					 list[i].name ? list[i].name : names);
				return -EINVAL;
			}
		memset(&out[i], 0, sizeof(out[i]));
		out[i].index = idx;
		out[i].rank = list[i].rank;
		memcpy(out[i].dims, list[i].dims, sizeof(list[i].dims));
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

/* A varint of protobuf's wire format; -1 at the end or past 64 bits. */
static int read_varint(FILE *f, uint64_t *v)
{
	int c, shift;

	*v = 0;
	for (shift = 0; shift < 64; shift += 7) {
		c = fgetc(f);
		if (c == EOF)
			return -1;
		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
	}
	return -1;
}

/*
 * The opset of the default domain in an ONNX file: the version of the
 * ModelProto's opset_import (field 8) whose domain (1) is "" or
 * "ai.onnx".  Only the top level is walked; the graph is skipped.
 */
static long long onnx_opset(const char *path)
{
	FILE *f = fopen(path, "rb");
	long long opset = -1;
	uint64_t key, n;

	if (!f)
		return -1;
	while (!read_varint(f, &key)) {
		unsigned char sub[256];
		size_t i = 0;
		uint64_t ver = 0;
		bool dflt = true;

		switch (key & 7) {
		case 0:
			if (read_varint(f, &n))
				goto out;
			continue;
		case 1:
		case 5:
			if (fseek(f, (key & 7) == 1 ? 8 : 4, SEEK_CUR))
				goto out;
			continue;
		case 2:
			if (read_varint(f, &n) || n > INT64_MAX)
				goto out;
			if (key >> 3 != 8 || n > sizeof(sub)) {
				if (fseek(f, (long)n, SEEK_CUR))
					goto out;
				continue;
			}
			if (fread(sub, 1, n, f) != n)
				goto out;
			break;
		default:
			goto out;
		}
		/* OperatorSetIdProto: domain (1, bytes), version (2) */
		while (i < n) {
			uint64_t k = sub[i++], v = 0;
			int shift = 0;

			if ((k & 7) == 2 && i < n) {
				size_t l = sub[i++];

				if (l > 127 || i + l > n)
					break;
				dflt = (k >> 3 != 1) || !l || (l == 7 &&
					!memcmp(sub + i, "ai.onnx", 7));
				i += l;
				continue;
			}
			if ((k & 7) != 0)
				break;
			while (i < n && shift < 64) {
				v |= (uint64_t)(sub[i] & 0x7f) << shift;
				shift += 7;
				if (!(sub[i++] & 0x80))
					break;
			}
			if (k >> 3 == 2)
				ver = v;
		}
		if (dflt && ver)
			opset = (long long)ver;
	}
out:
	fclose(f);
	return opset;
}

/**
 * npr_arg_model_format() - what kind of model a file is, for the user
 * @path: the model as given with -m.
 * @ir_version: MODEL_INFO's ir_version of it.
 * @buf: Out. "IR v11", "ONNX (opset 13)", "compiled blob" or "model".
 * @len: its size.
 *
 * MODEL_INFO gives the IR version only; an ONNX file (the library tells
 * one by its .onnx suffix) is read here for its opset.
 *
 * Return: @buf.
 */
const char *npr_arg_model_format(const char *path, unsigned int ir_version,
				 char *buf, size_t len)
{
	size_t n = strlen(path);
	char magic[8] = { 0 };
	long long opset;
	FILE *f;

	if (ir_version) {
		snprintf(buf, len, "IR v%u", ir_version);
		return buf;
	}
	if (n > 5 && !strcmp(path + n - 5, ".onnx")) {
		opset = onnx_opset(path);
		if (opset > 0)
			snprintf(buf, len, "ONNX (opset %lld)", opset);
		else
			snprintf(buf, len, "ONNX");
		return buf;
	}
	f = fopen(path, "rb");
	if (f && fread(magic, 1, 8, f) == 8 && !memcmp(magic, "NPRBLOB", 8))
		snprintf(buf, len, "compiled blob");
	else
		snprintf(buf, len, "model");
	if (f)
		fclose(f);
	return buf;
}
