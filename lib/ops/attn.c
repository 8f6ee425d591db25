// SPDX-License-Identifier: MIT
/*
 * ScaledDotProductAttention-13: attributes and shape inference.  Kernel:
 * ref/kernels/attn.c.
 *
 * query [..., L, E], key [..., S, E], value [..., S, Ev] (leading dims
 * broadcast numpy-style), optional attention_mask (boolean: false masks;
 * float: added) broadcastable to [..., L, S], optional scale (one value,
 * default 1 / sqrt(E)) -> [..., L, Ev]:
 *
 *   softmax(query key^T * scale + bias, last axis) value
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"

static int sdpa_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_attn_params *p;

	(void)g;
	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (n->nout != 1)
		return npr_node_err(n, -EINVAL, "has %d outputs, needs 1",
				    n->nout);
	return npr_attr_bool(n, "causal", false, &p->causal);
}

/* The leading (batch) dims of @s, all but the last two. */
static struct npr_shape batch_of(const struct npr_shape *s)
{
	struct npr_shape b = *s;

	b.rank = s->rank - 2;
	return b;
}

static int sdpa_infer(struct npr_graph *g, struct npr_node *n)
{
	static const char *const names[] = { "query", "key", "value" };
	struct npr_value *q = npr_in(g, n, 0), *k = npr_in(g, n, 1);
	struct npr_value *v = npr_in(g, n, 2), *o = npr_out(g, n, 0);
	struct npr_shape bq, bk, bv, b, full;
	char b1[128], b2[128];
	int i, r;

	for (i = 0; i < 3; i++) {
		struct npr_value *x = npr_in(g, n, i);

		if (x->type != NPR_ELEM_F32)
			return npr_node_err(n, -EINVAL, "%s must be f32, got %s",
					    names[i], npr_elem_name(x->type));
		if (x->shape.rank < 2)
			return npr_node_err(n, -EINVAL,
					    "%s has rank %d, needs at least 2",
					    names[i], x->shape.rank);
	}
	r = q->shape.rank;
	if (k->shape.d[k->shape.rank - 1] != q->shape.d[r - 1] ||
	    k->shape.d[k->shape.rank - 2] != v->shape.d[v->shape.rank - 2])
		return npr_node_err(n, -EINVAL,
				    "query %s, key %s and value do not agree on E and S",
				    npr_shape_str(&q->shape, b1, sizeof(b1)),
				    npr_shape_str(&k->shape, b2, sizeof(b2)));
	bq = batch_of(&q->shape);
	bk = batch_of(&k->shape);
	bv = batch_of(&v->shape);
	if (npr_shape_broadcast(&bq, &bk, &b) ||
	    npr_shape_broadcast(&b, &bv, &b) || b.rank + 2 > NPR_MAX_RANK)
		return npr_node_err(n, -EINVAL,
				    "the leading dims of query, key and value do not broadcast");
	full = b;
	full.rank = b.rank + 2;
	full.d[b.rank] = q->shape.d[r - 2];
	full.d[b.rank + 1] = k->shape.d[k->shape.rank - 2];
	if (n->nin > 3) {
		struct npr_value *m = npr_in(g, n, 3);
		struct npr_shape mb;

		if (m->type != NPR_ELEM_F32 && m->type != NPR_ELEM_BOOLEAN)
			return npr_node_err(n, -EINVAL,
					    "attention_mask must be f32 or boolean, got %s",
					    npr_elem_name(m->type));
		if (npr_shape_broadcast(&m->shape, &full, &mb) ||
		    !npr_shape_eq(&mb, &full)) {
			npr_shape_str(&m->shape, b1, sizeof(b1));
			npr_shape_str(&full, b2, sizeof(b2));
			return npr_node_err(n, -EINVAL,
					    "attention_mask %s does not broadcast to %s",
					    b1, b2);
		}
	}
	if (n->nin > 4) {
		struct npr_value *s = npr_in(g, n, 4);

		if (s->type != NPR_ELEM_F32 || npr_shape_numel(&s->shape) != 1)
			return npr_node_err(n, -EINVAL,
					    "scale must be one f32 value");
	}
	o->type = NPR_ELEM_F32;
	o->shape = full;
	o->shape.d[b.rank + 1] = v->shape.d[v->shape.rank - 1];
	return 0;
}

const struct npr_op_def npr_ops_attn[] = {
	{ .type = "ScaledDotProductAttention", .vmin = 13, .vmax = 99,
	  .nin_min = 3, .nin_max = 5, .parse = sdpa_parse,
	  .infer = sdpa_infer },
	{ .type = NULL },
};
