// SPDX-License-Identifier: MIT
/*
 * ONNX frontend: a serialized ModelProto becomes a struct npr_graph with
 * OpenVINO opset semantics.
 *
 * The bytes are untrusted.  Before protobuf-c unpacks them, a walk over the
 * wire format driven by the generated descriptors bounds how deeply
 * messages nest (protobuf-c recurses without a limit).  Then every name,
 * count, dimension and data size is checked; a failure leaves a message
 * that names the node (index, name, op) or the tensor at fault.
 *
 * The weights are not copied at load.  protobuf-c copies every bytes
 * field it unpacks, so it unpacks the model without its graph's
 * initializers (lib/onnx/wire.c cuts them out of the wire format), and
 * each initializer on its own without its raw_data; a model read from its
 * file (npr_onnx_load_file(), the file mapped) then has Const nodes that
 * refer to their raw_data in the mapping, aligned or not (struct
 * npr_value says who may read what), and a model given in memory gets one
 * copy of each.  The typed fields and external data files are copied.
 * Graph inputs that are not initializers become Parameters (the graph
 * builder, lib/onnx/build.c; tensors in lib/onnx/tensor.c); each ONNX
 * node's attributes are checked against its op's schema at the model's
 * opset (lib/onnx/schema.c) and the node goes through its translator
 * (the tables of the translator files lib/onnx/<area>.c, one per op
 * group, built on lib/onnx/translate.c); each graph output gets a
 * Result.  Node names are the ONNX names
 * ("<op>_<index>" when empty) and a node's layer id is its index in the
 * ONNX graph; the helper nodes a translation adds carry "<name>/<what>"
 * and the same id.  Opsets 1..18 of the default domain are read; ops whose
 * old versions differ (legacy broadcasting, Cast by type name) are refused
 * at those versions.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "graph/file.h"
#include "onnx.h"
#include "reader.h"

/*
 * npr_onnx_parse() with @src, when not NULL, the weights store holding @buf (a
 * mapped file) that constants may keep referring to.
 */
static int parse(const void *buf, size_t len, const char *base_dir,
		 struct npr_weights *src, struct npr_graph **out)
{
	struct onnx_ctx c = { .base_dir = base_dir, .src = src };
	struct onnx_inits in = { 0 };
	Onnx__ModelProto *m = NULL;
	Onnx__GraphProto *gp = NULL;
	bool split = false;
	int err;

	if (!out || (!buf && len))
		return npr_err(-EINVAL, "no ONNX model given");
	if (len > ONNX_MAX_BYTES)
		return npr_err(-EFBIG,
			       "ONNX model of %zu bytes is larger than 2 GiB",
			       len);
	err = npr_onnx_pb_check(buf, len);
	if (err == -ELOOP)
		return npr_err(-EINVAL,
			       "malformed ONNX protobuf: messages nested more than %d deep",
			       ONNX_MAX_DEPTH);
	if (err)
		return npr_err(-EINVAL, "malformed ONNX protobuf");
	err = npr_onnx_unpack(buf, len, &m, &gp, &in, &split);
	if (err) {
		if (err != -ENOMEM)
			err = npr_err(-EINVAL, "malformed ONNX protobuf");
		goto out;
	}
	c.g = npr_graph_new();
	if (!c.g) {
		err = -ENOMEM;
		goto out;
	}
	err = npr_onnx_build(&c, m, gp, split ? &in : NULL);
	if (err) {
		npr_graph_free(c.g);
		goto out;
	}
	if (c.src_refs)
		c.g->weights = npr_weights_get(src);
	*out = c.g;
out:
	free(c.vin);
	free(c.names);
	if (split && gp)
		onnx__graph_proto__free_unpacked(gp, NULL);
	npr_onnx_inits_free(&in);
	if (m)
		onnx__model_proto__free_unpacked(m, NULL);
	return err;
}

/**
 * npr_onnx_parse() - build a graph from a serialized ONNX ModelProto
 * @buf: the protobuf bytes; not referenced after the call.
 * @len: their size, at most 2 GiB.
 * @base_dir: directory that external-data locations are relative to, or
 *            NULL to refuse external data.
 * @out: set to the new graph on success only; free with npr_graph_free().
 *
 * Reads models of the default ONNX domain at opsets ONNX_OPSET_MIN..
 * ONNX_OPSET_MAX.  Constant data is copied into the graph, once: the
 * initializers' raw_data is not unpacked by protobuf-c but copied from
 * @buf.  Graph inputs that have an initializer are constants; the others
 * become Parameters named after them, with symbolic dims as -1 (give
 * shapes at compile).
 *
 * Return: 0, or a negative errno with a message naming the node at fault:
 * -EINVAL (malformed protobuf, undefined or duplicate tensor names, sizes
 * that do not match dims, bad attributes), -EOPNOTSUPP (opset, op, data
 * type, attribute value), -EOVERFLOW, -EFBIG, -ENAMETOOLONG, -ENOMEM, or
 * the errno of reading an external data file.
 *
 * Context: any thread; concurrent calls are independent.
 */
int npr_onnx_parse(const void *buf, size_t len, const char *base_dir,
		   struct npr_graph **out)
{
	return parse(buf, len, base_dir, NULL, out);
}

/**
 * npr_onnx_load_file() - read an .onnx file (and its external data)
 * @path: the model file.
 * @out: set to the new graph on success only; free with npr_graph_free().
 *
 * The file is mapped read-only and stays mapped while the graph or a
 * clone of it lives (g->weights): initializers refer to their raw_data in
 * it instead of being copied when it is aligned to their element size or
 * is floating-point weights of at least ONNX_REF_MIN bytes (see
 * tensor_read() in lib/onnx/tensor.c).  The file must not be changed in
 * place (truncated or rewritten) meanwhile.  External data files are
 * looked up in its directory and read into memory.
 *
 * Return: as npr_onnx_parse(), or -ENOENT, -EACCES, ... (with the path in
 * the message) when the file cannot be opened or mapped.
 * Context: any thread.
 */
int npr_onnx_load_file(const char *path, struct npr_graph **out)
{
	struct npr_weights *b = NULL;
	char *dir;
	int err;

	if (!path || !out)
		return npr_err(-EINVAL, "no model path");
	err = npr_file_map(path, "model", ONNX_MAX_BYTES, &b);
	if (err)
		return err;
	if (!b->size) {
		npr_weights_put(b);
		return npr_err(-EINVAL, "model %s is empty", path);
	}
	dir = npr_file_dir(path);
	if (!dir) {
		npr_weights_put(b);
		return -ENOMEM;
	}
	err = parse(b->data, b->size, dir, b, out);
	free(dir);
	npr_weights_put(b);	/* the graph keeps its own reference */
	return err;
}
