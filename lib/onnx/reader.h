/* SPDX-License-Identifier: MIT */
/*
 * ONNX frontend internals of the model reader: what lib/onnx/read.c (the
 * model), lib/onnx/wire.c (the wire format), lib/onnx/build.c (the graph
 * builder) and lib/onnx/tensor.c (tensors) share beyond translate.h.
 */
#ifndef NPR_ONNX_READER_H
#define NPR_ONNX_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "translate.h"

/* Smallest unaligned raw_data left in the mapped file (smaller: copied). */
#define ONNX_REF_MIN		(16u << 10)
/* Largest model accepted: protobuf messages cannot exceed 2 GiB. */
#define ONNX_MAX_BYTES		(2ULL << 30)
/* Deepest nesting of messages (a model is ~6; If/Loop bodies add ~4). */
#define ONNX_MAX_DEPTH		64
/* Longest tensor, node or op name accepted. */
#define ONNX_MAX_NAME		4096
/* Most nodes; most inputs of one node, and of the graph; most outputs. */
#define ONNX_MAX_NODES		1000000
#define ONNX_MAX_PORTS		65536
/* Largest dimension accepted in a tensor or a declared shape. */
#define ONNX_MAX_DIM		(1LL << 40)

/*
 * The payload of a length-delimited field found in the model's bytes.
 */
struct pb_span {
	const uint8_t *p;
	size_t len;
};

/*
 * The model's graph unpacked without its initializers, and those one at
 * a time without their raw_data: protobuf-c copies every bytes field it
 * unpacks, so the weights would be in memory twice.
 * @n: number of initializers.
 * @msg: per initializer its TensorProto's bytes in the model.
 * @t: per initializer the message unpacked without raw_data (kept to the
 *     end of the load: the name table points at its name).
 * @raw: per initializer its raw_data in the model (p NULL: none).
 */
struct onnx_inits {
	size_t n;
	struct pb_span *msg;
	Onnx__TensorProto **t;
	struct pb_span *raw;
};

/* lib/onnx/wire.c */
int npr_onnx_pb_check(const void *buf, size_t len);
int npr_onnx_unpack(const uint8_t *buf, size_t len, Onnx__ModelProto **m,
		    Onnx__GraphProto **gp, struct onnx_inits *in, bool *split);
int npr_onnx_init_unpack(struct onnx_inits *in, size_t i);
void npr_onnx_inits_free(struct onnx_inits *in);

/* lib/onnx/tensor.c */
int npr_onnx_info_type(const Onnx__ValueInfoProto *vi, unsigned int *type,
		       struct npr_shape *sh);
int npr_onnx_tensor_const_raw(struct onnx_ctx *c, const Onnx__TensorProto *t,
			      const struct pb_span *raw, const char *suffix);

/* lib/onnx/build.c */
int npr_onnx_build(struct onnx_ctx *c, const Onnx__ModelProto *m,
		   const Onnx__GraphProto *gp, struct onnx_inits *in);

#endif /* NPR_ONNX_READER_H */
