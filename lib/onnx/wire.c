// SPDX-License-Identifier: MIT
/*
 * ONNX frontend: the protobuf wire format.  A walk over the bytes driven
 * by the generated descriptors bounds how deeply messages nest before
 * protobuf-c unpacks them (it recurses without a limit), and cuts the
 * graph's initializers and their raw_data out of the wire format so that
 * protobuf-c, which copies every bytes field it unpacks, never copies the
 * weights (lib/onnx/read.c says why).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"

/* ---- wire format pre-check -------------------------------------------- */


static int pb_varint(const uint8_t *p, size_t len, size_t *off, uint64_t *v)
{
	uint64_t r = 0;
	int shift;

	for (shift = 0; shift < 70; shift += 7) {
		uint8_t b;

		if (*off >= len)
			return -EINVAL;
		b = p[(*off)++];
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -EINVAL;
}

/*
 * The field at *@off: its key, and the payload of a length-delimited one
 * (wire type 2) at *@body, *@blen bytes (0 for the other types).  *@off
 * moves past the whole field.  Groups and unknown wire types are refused.
 */
static int pb_next(const uint8_t *p, size_t len, size_t *off, uint64_t *key,
		   size_t *body, uint64_t *blen)
{
	uint64_t v;

	*blen = 0;
	if (pb_varint(p, len, off, key))
		return -EINVAL;
	switch (*key & 7) {
	case 0:
		return pb_varint(p, len, off, &v);
	case 1:
	case 5:
		v = (*key & 7) == 1 ? 8 : 4;
		if (len - *off < v)
			return -EINVAL;
		*off += v;
		return 0;
	case 2:
		if (pb_varint(p, len, off, &v) || v > len - *off)
			return -EINVAL;
		*body = *off;
		*blen = v;
		*off += v;
		return 0;
	default:
		return -EINVAL;	/* groups, or no wire type at all */
	}
}

/*
 * Walk one message: every field well formed, every sub-message (as the
 * descriptor says) walked in turn, at most ONNX_MAX_DEPTH deep.  Unknown
 * fields are skipped as protobuf-c skips them.
 */
static int pb_check(const uint8_t *p, size_t len,
		    const ProtobufCMessageDescriptor *d, int depth)
{
	size_t off = 0;

	if (depth > ONNX_MAX_DEPTH)
		return -ELOOP;
	while (off < len) {
		const ProtobufCFieldDescriptor *f;
		uint64_t key, blen;
		size_t body = 0;
		int err;

		if (pb_next(p, len, &off, &key, &body, &blen) || !(key >> 3) ||
		    (key >> 3) > 0x1fffffff)
			return -EINVAL;
		if ((key & 7) != 2)
			continue;
		f = protobuf_c_message_descriptor_get_field(d,
							(unsigned)(key >> 3));
		if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
			err = pb_check(p + body, blen, f->descriptor,
				       depth + 1);
			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * Split the message in @p/@len: the payload of every field numbered @num
 * with wire type 2 goes to *@spans (in order; *@spans NULL when there is
 * none), every other field is copied into *@rest (malloc'd) for protobuf-c
 * to unpack.  The bytes have passed pb_check().
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
static int pb_split(const uint8_t *p, size_t len, uint32_t num,
		    uint8_t **rest, size_t *rest_len,
		    struct pb_span **spans, size_t *nspans)
{
	size_t off, start, nrest = 0, n = 0, k = 0, w = 0;
	int pass;

	*rest = NULL;
	*spans = NULL;
	for (pass = 0; pass < 2; pass++) {
		for (off = 0; off < len;) {
			uint64_t key, blen;
			size_t body = 0;

			start = off;
			if (pb_next(p, len, &off, &key, &body, &blen))
				return -EINVAL;
			if ((key & 7) == 2 && (key >> 3) == num) {
				if (pass)
					(*spans)[k++] = (struct pb_span){
						p + body, (size_t)blen };
				else
					n++;
				continue;
			}
			if (pass) {
				memcpy(*rest + w, p + start, off - start);
				w += off - start;
			} else {
				nrest += off - start;
			}
		}
		if (pass)
			break;
		*rest = malloc(nrest ? nrest : 1);
		*spans = n ? malloc(n * sizeof(**spans)) : NULL;
		if (!*rest || (n && !*spans)) {
			free(*rest);
			free(*spans);
			*rest = NULL;
			*spans = NULL;
			return -ENOMEM;
		}
	}
	*rest_len = nrest;
	*nspans = n;
	return 0;
}

/* The field number of @name in message @d. */
static uint32_t pb_field(const ProtobufCMessageDescriptor *d,
			 const char *name)
{
	return protobuf_c_message_descriptor_get_field_by_name(d, name)->id;
}


/**
 * npr_onnx_init_unpack() - unpack one initializer cut out of the model
 * @in: the initializers of the model's graph.
 * @i: which one.
 *
 * Fills in->t[i] (the message without its raw_data) and in->raw[i] (the
 * raw_data left in the model's bytes).
 *
 * Return: 0, -EINVAL (malformed) or -ENOMEM.
 */
int npr_onnx_init_unpack(struct onnx_inits *in, size_t i)
{
	uint32_t f = pb_field(&onnx__tensor_proto__descriptor, "raw_data");
	struct pb_span *raw = NULL;
	size_t rlen, nraw;
	uint8_t *rest;
	int err;

	err = pb_split(in->msg[i].p, in->msg[i].len, f, &rest, &rlen, &raw,
		       &nraw);
	if (err)
		return err;
	in->t[i] = onnx__tensor_proto__unpack(NULL, rlen, rest);
	free(rest);
	/* a field given twice: the last one counts, as protobuf-c does */
	in->raw[i] = nraw ? raw[nraw - 1] : (struct pb_span){ NULL, 0 };
	free(raw);
	return in->t[i] ? 0 : -EINVAL;
}

/**
 * npr_onnx_inits_free() - free the initializers unpacked from a model
 * @in: what npr_onnx_unpack() and npr_onnx_init_unpack() filled in; may
 *      be zeroed.
 */
void npr_onnx_inits_free(struct onnx_inits *in)
{
	size_t i;

	for (i = 0; in->t && i < in->n; i++)
		if (in->t[i])
			onnx__tensor_proto__free_unpacked(in->t[i], NULL);
	free(in->t);
	free(in->raw);
	free(in->msg);
}

/**
 * npr_onnx_unpack() - unpack a model without copying its weights
 * @buf: the model's bytes, checked by npr_onnx_pb_check().
 * @len: their size.
 * @m: Out. The model without its graph (or whole, see below).
 * @gp: Out. Its graph without its initializers.
 * @in: Out. The initializers, to unpack one at a time with
 *      npr_onnx_init_unpack(); free with npr_onnx_inits_free().
 * @split: Out. Whether @gp and @in are apart from @m.
 *
 * The model without its graph, the graph without its initializers
 * (listed in @in for the graph builder), so that no initializer's
 * raw_data is copied.  A model that gives its graph field more than once
 * (protobuf merges them) is unpacked whole instead, *@split false and
 * *@gp its graph.
 *
 * Return: 0, -EINVAL (malformed) or -ENOMEM.
 */
int npr_onnx_unpack(const uint8_t *buf, size_t len, Onnx__ModelProto **m,
		    Onnx__GraphProto **gp, struct onnx_inits *in, bool *split)
{
	uint32_t fg = pb_field(&onnx__model_proto__descriptor, "graph");
	uint32_t fi = pb_field(&onnx__graph_proto__descriptor, "initializer");
	struct pb_span *g = NULL;
	size_t rlen, ng;
	uint8_t *rest;
	int err;

	err = pb_split(buf, len, fg, &rest, &rlen, &g, &ng);
	if (err)
		return err;
	*split = ng == 1;
	if (!*split) {
		free(rest);
		free(g);
		*m = onnx__model_proto__unpack(NULL, len, buf);
		*gp = *m ? (*m)->graph : NULL;
		return *m ? 0 : -EINVAL;
	}
	*m = onnx__model_proto__unpack(NULL, rlen, rest);
	free(rest);
	if (!*m) {
		free(g);
		return -EINVAL;
	}
	err = pb_split(g->p, g->len, fi, &rest, &rlen, &in->msg, &in->n);
	free(g);
	if (err)
		return err;
	*gp = onnx__graph_proto__unpack(NULL, rlen, rest);
	free(rest);
	if (!*gp)
		return -EINVAL;
	in->t = calloc(in->n ? in->n : 1, sizeof(*in->t));
	in->raw = calloc(in->n ? in->n : 1, sizeof(*in->raw));
	return in->t && in->raw ? 0 : -ENOMEM;
}


/**
 * npr_onnx_pb_check() - check the wire format of a serialized ModelProto
 * @buf: the bytes.
 * @len: their size.
 *
 * Every field well formed and messages nested at most ONNX_MAX_DEPTH
 * deep, so that protobuf-c may unpack them.  No message is set.
 *
 * Return: 0, -ELOOP (nested too deep) or -EINVAL.
 */
int npr_onnx_pb_check(const void *buf, size_t len)
{
	return pb_check(buf, len, &onnx__model_proto__descriptor, 0);
}
