// SPDX-License-Identifier: MIT
/*
 * CTC greedy decoders: attributes and shape inference.  Kernels:
 * ref/kernels/ctc.c.
 *
 * CTCGreedyDecoder-1: data [T, N, C] and a sequence mask [T, N] give
 * [N, T, 1, 1] class indices (as the data type), -1 after the end.
 * CTCGreedyDecoderSeqLen-6: data [N, T, C], lengths [N] and an optional
 * blank index give [N, T] indices (-1 padded) and [N] decoded lengths.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctc.h"

static int ctc_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_ctc_params *p;
	bool seq = !strcmp(n->type, "CTCGreedyDecoderSeqLen");
	const char *s;
	int err;

	(void)g;
	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (!seq && n->nout != 1)
		return npr_node_err(n, -EINVAL, "%d outputs, expected 1",
				    n->nout);
	if (!seq)
		return npr_attr_bool(n, "ctc_merge_repeated", true, &p->merge);
	if (n->nout != 2)
		return npr_node_err(n, -EINVAL, "%d outputs, expected 2",
				    n->nout);
	err = npr_attr_bool(n, "merge_repeated", true, &p->merge);
	if (err)
		return err;
	p->index_type = p->len_type = NPR_ELEM_I32;
	s = npr_attr(n, "classes_index_type");
	if (s)
		p->index_type = npr_elem_parse(s);
	s = npr_attr(n, "sequence_length_type");
	if (s)
		p->len_type = npr_elem_parse(s);
	if ((p->index_type != NPR_ELEM_I32 && p->index_type != NPR_ELEM_I64) ||
	    (p->len_type != NPR_ELEM_I32 && p->len_type != NPR_ELEM_I64))
		return npr_node_err(n, -EINVAL,
				    "classes_index_type and sequence_length_type must be i32 or i64");
	return 0;
}

static int ctc_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_value *x = npr_in(g, n, 0), *m = npr_in(g, n, 1);
	struct npr_value *o = npr_out(g, n, 0);

	if (x->type != NPR_ELEM_F32)
		return npr_node_err(n, -EINVAL, "data must be f32, got %s",
				    npr_elem_name(x->type));
	if (x->shape.rank != 3 || !npr_shape_static(&x->shape) ||
	    x->shape.d[2] < 1)
		return npr_node_err(n, -EINVAL,
				    "data must be a static [T, N, C] with C > 0");
	if (m->type != NPR_ELEM_F32 || m->shape.rank != 2 ||
	    m->shape.d[0] != x->shape.d[0] || m->shape.d[1] != x->shape.d[1])
		return npr_node_err(n, -EINVAL,
				    "sequence mask must be f32 [%lld, %lld]",
				    (long long)x->shape.d[0],
				    (long long)x->shape.d[1]);
	o->type = x->type;
	o->shape.rank = 4;
	o->shape.d[0] = x->shape.d[1];
	o->shape.d[1] = x->shape.d[0];
	o->shape.d[2] = 1;
	o->shape.d[3] = 1;
	return 0;
}

static bool is_index(unsigned int t)
{
	return t == NPR_ELEM_I32 || t == NPR_ELEM_I64;
}

static int ctc_seq_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_ctc_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *l = npr_in(g, n, 1);
	struct npr_value *o = npr_out(g, n, 0), *ol = npr_out(g, n, 1);

	if (x->type != NPR_ELEM_F32)
		return npr_node_err(n, -EINVAL, "data must be f32, got %s",
				    npr_elem_name(x->type));
	if (x->shape.rank != 3 || !npr_shape_static(&x->shape) ||
	    x->shape.d[2] < 1)
		return npr_node_err(n, -EINVAL,
				    "data must be a static [N, T, C] with C > 0");
	if (!is_index(l->type) || l->shape.rank != 1 ||
	    l->shape.d[0] != x->shape.d[0])
		return npr_node_err(n, -EINVAL,
				    "sequence_length must be i32/i64 [%lld]",
				    (long long)x->shape.d[0]);
	if (n->nin > 2) {
		struct npr_value *bl = npr_in(g, n, 2);

		if (!is_index(bl->type) || npr_shape_numel(&bl->shape) != 1 ||
		    bl->shape.rank > 1)
			return npr_node_err(n, -EINVAL,
					    "blank_index must be one i32/i64 value");
	}
	o->type = p->index_type;
	o->shape.rank = 2;
	o->shape.d[0] = x->shape.d[0];
	o->shape.d[1] = x->shape.d[1];
	ol->type = p->len_type;
	ol->shape.rank = 1;
	ol->shape.d[0] = x->shape.d[0];
	return 0;
}

const struct npr_op_def npr_ops_ctc[] = {
	{ .type = "CTCGreedyDecoder", .vmin = 0, .vmax = 99, .nin_min = 2,
	  .nin_max = 2, .parse = ctc_parse, .infer = ctc_infer },
	{ .type = "CTCGreedyDecoderSeqLen", .vmin = 6, .vmax = 99,
	  .nin_min = 2, .nin_max = 3, .parse = ctc_parse,
	  .infer = ctc_seq_infer },
	{ .type = NULL },
};
