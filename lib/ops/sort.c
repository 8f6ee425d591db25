// SPDX-License-Identifier: MIT
/*
 * TopK-1/-3/-11 and NonMaxSuppression-1/-3/-4/-5/-9: attributes and shape
 * inference after the OpenVINO opset specifications.  Kernels:
 * ref/kernels/sort.c.
 *
 *  - TopK: k must be constant and >= 0; the output has min(k, dim)
 *    elements along the axis.  Ties always keep the lower index first
 *    (what stable=true asks; a valid order for stable=false too), and
 *    sort="none" orders like sort="value".  NaN ranks above every number.
 *  - NonMaxSuppression: max_output_boxes_per_class must be constant: the
 *    outputs have the static upper bound of rows, num_batches *
 *    num_classes * min(num_boxes, max_output_boxes_per_class), and the
 *    rows after the selected ones are filled with -1 (valid_outputs, from
 *    version 5, gives the count).  Versions 1 to 4 have only the
 *    selected_indices output.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elem.h"
#include "sort.h"

#define MAX_NMS_ROWS	((int64_t)1 << 28)

static int out_type_attr(struct npr_node *n, const char *key,
			 unsigned int def, unsigned int *out)
{
	static const char *const types[] = { "i32", "i64", NULL };
	int t, err;

	err = npr_attr_enum(n, key, types, def == NPR_ELEM_I64, &t);
	*out = t ? NPR_ELEM_I64 : NPR_ELEM_I32;
	return err;
}

static int topk_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const modes[] = { "min", "max", NULL };
	static const char *const sorts[] = { "value", "index", "none", NULL };
	struct npr_sort_params *p = npr_params_new(n, sizeof(*p));
	int m, err;

	(void)g;
	if (!p)
		return -ENOMEM;
	if (!npr_attr(n, "axis") || !npr_attr(n, "mode"))
		return npr_node_err(n, -EINVAL,
				    "attributes axis and mode are required");
	err = npr_attr_int(n, "axis", 0, &p->axis);
	if (!err)
		err = npr_attr_enum(n, "mode", modes, 1, &m);
	if (!err)
		err = npr_attr_enum(n, "sort", sorts, NPR_TOPK_SORT_NONE,
				    &p->sort);
	if (!err)
		err = npr_attr_bool(n, "stable", false, &p->stable);
	if (err)
		return err;
	if (n->version && n->version < 11 && npr_attr(n, "stable"))
		return npr_node_err(n, -EINVAL,
				    "attribute stable needs TopK-11");
	p->largest = m == 1;
	if (n->version && n->version < 3) {
		if (npr_attr(n, "index_element_type"))
			return npr_node_err(n, -EINVAL,
					    "index_element_type needs TopK-3");
		p->out_type = NPR_ELEM_I32;
		return 0;
	}
	return out_type_attr(n, "index_element_type", NPR_ELEM_I32,
			     &p->out_type);
}

static int topk_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_sort_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *kv = npr_in(g, n, 1);
	struct npr_value *o0 = npr_out(g, n, 0), *o1 = npr_out(g, n, 1);
	int64_t k;
	int cnt, err;

	if (n->nout != 2)
		return npr_node_err(n, -EINVAL, "has %d outputs, expected 2",
				    n->nout);
	if (!npr_is_compute(x->type))
		return npr_node_err(n, -EINVAL,
				    "element type %s is not supported",
				    npr_elem_name(x->type));
	if (x->shape.rank < 1)
		return npr_node_err(n, -EINVAL, "data must have rank >= 1");
	if (!npr_is_index(kv->type) || npr_shape_numel(&kv->shape) != 1)
		return npr_node_err(n, -EINVAL,
				    "k must be one i32 or i64 value");
	cnt = npr_const_ints(g, n, 1, &k, 1);
	if (cnt < 0)
		return cnt;
	if (k < 0)
		return npr_node_err(n, -EINVAL, "k %lld is negative",
				    (long long)k);
	err = npr_norm_axis(n, "axis", p->axis, x->shape.rank, &p->ax);
	if (err)
		return err;
	p->k = k < x->shape.d[p->ax] ? k : x->shape.d[p->ax];
	o0->type = x->type;
	o0->shape = x->shape;
	o0->shape.d[p->ax] = p->k;
	o1->type = p->out_type;
	o1->shape = o0->shape;
	return 0;
}

static int nms_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const enc[] = { "corner", "center", NULL };
	struct npr_sort_params *p = npr_params_new(n, sizeof(*p));
	int e, err;

	(void)g;
	if (!p)
		return -ENOMEM;
	err = npr_attr_enum(n, "box_encoding", enc, 0, &e);
	if (!err)
		err = npr_attr_bool(n, "sort_result_descending", true,
				    &p->sort_desc);
	if (err)
		return err;
	p->center = e == 1;
	if (n->version && n->version < 3) {
		p->out_type = NPR_ELEM_I64;
		return 0;
	}
	return out_type_attr(n, "output_type", NPR_ELEM_I64, &p->out_type);
}

static int nms_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_sort_params *p = n->params;
	struct npr_value *b = npr_in(g, n, 0), *s = npr_in(g, n, 1);
	int nout = n->version >= 5 ? 3 : 1, i;
	int64_t maxb = 0, rows;

	if (n->nout != nout)
		return npr_node_err(n, -EINVAL, "has %d outputs, expected %d",
				    n->nout, nout);
	if (!npr_is_float(b->type) || b->type != s->type)
		return npr_node_err(n, -EINVAL,
				    "boxes (%s) and scores (%s) must be the same float type",
				    npr_elem_name(b->type),
				    npr_elem_name(s->type));
	if (b->shape.rank != 3 || b->shape.d[2] != 4)
		return npr_node_err(n, -EINVAL,
				    "boxes must be [num_batches, num_boxes, 4]");
	if (s->shape.rank != 3 || s->shape.d[0] != b->shape.d[0] ||
	    s->shape.d[2] != b->shape.d[1])
		return npr_node_err(n, -EINVAL,
				    "scores must be [num_batches, num_classes, num_boxes] matching the boxes");
	for (i = 2; i < n->nin; i++) {
		const struct npr_value *v = npr_in(g, n, i);

		if (npr_shape_numel(&v->shape) != 1)
			return npr_node_err(n, -EINVAL,
					    "input %d must hold one value", i);
		if (i > 2 && !npr_is_float(v->type))
			return npr_node_err(n, -EINVAL,
					    "input %d must be a float", i);
	}
	if (n->nin > 2) {
		int cnt;

		if (!npr_is_index(npr_in(g, n, 2)->type))
			return npr_node_err(n, -EINVAL,
					    "max_output_boxes_per_class must be i32 or i64");
		cnt = npr_const_ints(g, n, 2, &maxb, 1);
		if (cnt < 0)
			return cnt;
	}
	if (maxb < 0)
		maxb = 0;
	p->max_per_class = maxb < b->shape.d[1] ? maxb : b->shape.d[1];
	rows = p->max_per_class;
	if (rows && (b->shape.d[0] * s->shape.d[1] > MAX_NMS_ROWS / rows))
		return npr_node_err(n, -EINVAL, "too many output rows");
	rows *= b->shape.d[0] * s->shape.d[1];
	npr_out(g, n, 0)->type = p->out_type;
	npr_out(g, n, 0)->shape = (struct npr_shape){ .rank = 2,
						      .d = { rows, 3 } };
	if (nout == 3) {
		npr_out(g, n, 1)->type = s->type;
		npr_out(g, n, 1)->shape = npr_out(g, n, 0)->shape;
		npr_out(g, n, 2)->type = p->out_type;
		npr_out(g, n, 2)->shape = (struct npr_shape){ .rank = 1,
							      .d = { 1 } };
	}
	return 0;
}

const struct npr_op_def npr_ops_sort[] = {
	{ .type = "TopK", .vmin = 0, .vmax = 2, .nin_min = 2, .nin_max = 2,
	  .parse = topk_parse, .infer = topk_infer },
	{ .type = "TopK", .vmin = 3, .vmax = 10, .nin_min = 2, .nin_max = 2,
	  .parse = topk_parse, .infer = topk_infer },
	{ .type = "TopK", .vmin = 11, .vmax = 99, .nin_min = 2, .nin_max = 2,
	  .parse = topk_parse, .infer = topk_infer },
	{ .type = "NonMaxSuppression", .vmin = 0, .vmax = 2, .nin_min = 2,
	  .nin_max = 5, .parse = nms_parse, .infer = nms_infer },
	{ .type = "NonMaxSuppression", .vmin = 3, .vmax = 3, .nin_min = 2,
	  .nin_max = 5, .parse = nms_parse, .infer = nms_infer },
	{ .type = "NonMaxSuppression", .vmin = 4, .vmax = 4, .nin_min = 2,
	  .nin_max = 5, .parse = nms_parse, .infer = nms_infer },
	{ .type = "NonMaxSuppression", .vmin = 5, .vmax = 8, .nin_min = 2,
	  .nin_max = 6, .parse = nms_parse, .infer = nms_infer },
	{ .type = "NonMaxSuppression", .vmin = 9, .vmax = 99, .nin_min = 2,
	  .nin_max = 6, .parse = nms_parse, .infer = nms_infer },
	{ .type = NULL },
};
