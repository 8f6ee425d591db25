/* SPDX-License-Identifier: MIT */
/*
 * ONNX frontend: ModelProto -> npuring graph (OpenVINO opset semantics).
 */
#ifndef NPR_ONNX_H
#define NPR_ONNX_H

#include <stddef.h>

#include "graph/graph.h"

/**
 * npr_onnx_parse() - build a graph from a serialized ONNX ModelProto
 * @buf: the protobuf bytes.
 * @len: their size.
 * @base_dir: directory that external-data locations are relative to, or
 *            NULL to refuse external data.
 * @out: the graph, owned by the caller.
 *
 * Return: 0 or -errno with a message naming the node at fault.
 */
int npr_onnx_parse(const void *buf, size_t len, const char *base_dir,
		   struct npr_graph **out);

/**
 * npr_onnx_load_file() - read an .onnx file (and its external data)
 * Return: as npr_onnx_parse(), or the -errno of reading the file.
 */
int npr_onnx_load_file(const char *path, struct npr_graph **out);

#endif /* NPR_ONNX_H */
