// SPDX-License-Identifier: MIT
/*
 * Neural-network ops: attributes and shape inference.  Kernels: ref/kernels/nn.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"

static const char *const pad_names[] = {
	"explicit", "valid", "same_upper", "same_lower", "notset", NULL,
};

static int spatial_list(struct npr_node *n, const char *key, int64_t *out,
			int *nsp, bool optional, int64_t def, int64_t min)
{
	int cnt, i, err;

	err = npr_attr_ints(n, key, out, NPR_MAX_SPATIAL, &cnt, optional);
	if (err)
		return err;
	if (!cnt && optional) {
		for (i = 0; i < NPR_MAX_SPATIAL; i++)
			out[i] = def;
		return 0;
	}
	if (*nsp < 0)
		*nsp = cnt;
	if (cnt != *nsp)
		return npr_node_err(n, -EINVAL, "%s has %d values, expected %d",
				    key, cnt, *nsp);
	for (i = 0; i < cnt; i++)
		if (out[i] < min)
			return npr_node_err(n, -EINVAL, "%s[%d] = %lld is invalid",
					    key, i, (long long)out[i]);
	return 0;
}

static int conv_common_parse(struct npr_node *n, struct npr_conv_params *p,
			     bool pool)
{
	int err, ap;

	p->nsp = -1;
	if (pool) {
		err = spatial_list(n, "kernel", p->kernel, &p->nsp, false, 1, 1);
		if (err)
			return err;
	}
	err = spatial_list(n, "strides", p->stride, &p->nsp, false, 1, 1);
	if (!err)
		err = spatial_list(n, "dilations", p->dil, &p->nsp, pool, 1, 1);
	if (!err)
		err = spatial_list(n, "pads_begin", p->pb, &p->nsp, false, 0, 0);
	if (!err)
		err = spatial_list(n, "pads_end", p->pe, &p->nsp, false, 0, 0);
	if (!err)
		err = npr_attr_enum(n, "auto_pad", pad_names, 0, &ap);
	if (err)
		return err;
	p->auto_pad = ap == 4 ? NPR_PAD_EXPLICIT : ap;
	if (p->nsp < 1 || p->nsp > NPR_MAX_SPATIAL)
		return npr_node_err(n, -EINVAL, "%d spatial dims not supported",
				    p->nsp);
	return 0;
}

static int conv_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_conv_params *p;

	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->group = !strcmp(n->type, "GroupConvolution");
	return conv_common_parse(n, p, false);
}

/* Effective pads and output size of one spatial dim. */
static int64_t out_dim(struct npr_conv_params *p, int i, int64_t in,
		       int64_t k)
{
	int64_t ke = p->dil[i] * (k - 1) + 1, o, total;

	switch (p->auto_pad) {
	case NPR_PAD_VALID:
		p->pb[i] = p->pe[i] = 0;
		break;
	case NPR_PAD_SAME_UPPER:
	case NPR_PAD_SAME_LOWER:
		o = (in + p->stride[i] - 1) / p->stride[i];
		total = (o - 1) * p->stride[i] + ke - in;
		if (total < 0)
			total = 0;
		p->pb[i] = p->auto_pad == NPR_PAD_SAME_UPPER ? total / 2 :
							       total - total / 2;
		p->pe[i] = total - p->pb[i];
		return o;
	}
	total = in + p->pb[i] + p->pe[i] - ke;
	if (total < 0)
		return -1;
	if (p->ceil) {
		o = (total + p->stride[i] - 1) / p->stride[i] + 1;
		/* the last window must start inside the input or the
		 * begin padding */
		if ((o - 1) * p->stride[i] >= in + p->pb[i])
			o--;
		return o;
	}
	return total / p->stride[i] + 1;
}

static int conv_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_conv_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *w = npr_in(g, n, 1);
	struct npr_value *o = npr_out(g, n, 0);
	int off = p->group ? 1 : 0, i;
	int64_t cin, cout;

	if (x->shape.rank != p->nsp + 2 || w->shape.rank != p->nsp + 2 + off)
		return npr_node_err(n, -EINVAL,
				    "data rank %d / weights rank %d do not match %d spatial dims",
				    x->shape.rank, w->shape.rank, p->nsp);
	if (x->type != NPR_ELEM_F32 || w->type != NPR_ELEM_F32)
		return npr_node_err(n, -EINVAL, "data and weights must be f32 (after lowering), got %s and %s",
				    npr_elem_name(x->type), npr_elem_name(w->type));
	p->groups = p->group ? w->shape.d[0] : 1;
	cout = w->shape.d[off] * p->groups;
	cin = w->shape.d[off + 1] * p->groups;
	if (p->groups < 1 || cin != x->shape.d[1])
		return npr_node_err(n, -EINVAL,
				    "weights expect %lld input channels, data has %lld",
				    (long long)cin, (long long)x->shape.d[1]);
	o->shape.rank = x->shape.rank;
	o->shape.d[0] = x->shape.d[0];
	o->shape.d[1] = cout;
	for (i = 0; i < p->nsp; i++) {
		int64_t d = out_dim(p, i, x->shape.d[2 + i],
				    w->shape.d[2 + off + i]);

		if (d < 1)
			return npr_node_err(n, -EINVAL,
					    "spatial dim %d: kernel larger than padded input", i);
		o->shape.d[2 + i] = d;
	}
	o->type = x->type;
	return 0;
}

static int pool_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const rnd[] = { "floor", "ceil", NULL };
	struct npr_conv_params *p;
	int r, err;

	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	err = conv_common_parse(n, p, true);
	if (!err)
		err = npr_attr_enum(n, "rounding_type", rnd, 0, &r);
	if (err)
		return err;
	p->ceil = r == 1;
	if (!strcmp(n->type, "AvgPool")) {
		err = npr_attr_bool(n, "exclude-pad", false, &p->exclude_pad);
		if (err)
			return err;
	}
	p->index_type = NPR_ELEM_I64;
	if (npr_attr(n, "index_element_type")) {
		p->index_type = npr_elem_parse(npr_attr(n, "index_element_type"));
		if (p->index_type != NPR_ELEM_I32 &&
		    p->index_type != NPR_ELEM_I64)
			return npr_node_err(n, -EINVAL, "index_element_type must be i32 or i64");
	}
	return npr_attr_int(n, "axis", 0, &p->axis);
}

static int pool_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_conv_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	int i;

	if (x->shape.rank != p->nsp + 2)
		return npr_node_err(n, -EINVAL, "data rank %d, expected %d",
				    x->shape.rank, p->nsp + 2);
	/* MaxPool also moves 8- and 16-bit integers (exact through f32) */
	if (x->type != NPR_ELEM_F32 &&
	    (strcmp(n->type, "MaxPool") ||
	     (x->type != NPR_ELEM_U8 && x->type != NPR_ELEM_I8 &&
	      x->type != NPR_ELEM_U16 && x->type != NPR_ELEM_I16)))
		return npr_node_err(n, -EINVAL, "data must be f32%s",
				    strcmp(n->type, "MaxPool") ? "" :
				    " or an 8- or 16-bit integer");
	o->shape = x->shape;
	for (i = 0; i < p->nsp; i++) {
		int64_t d = out_dim(p, i, x->shape.d[2 + i], p->kernel[i]);

		if (d < 1)
			return npr_node_err(n, -EINVAL,
					    "spatial dim %d: kernel larger than padded input", i);
		o->shape.d[2 + i] = d;
	}
	o->type = x->type;
	if (n->nout > 1) {
		struct npr_value *ix = npr_out(g, n, 1);

		ix->shape = o->shape;
		ix->type = p->index_type;
	}
	return 0;
}

static int softmax_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_nn_params *p;

	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	return npr_attr_int(n, "axis", 1, &p->axis);
}

static int softmax_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_nn_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	int r = x->shape.rank;

	if (x->type != NPR_ELEM_F32)
		return npr_node_err(n, -EINVAL, "data must be f32");
	if (p->axis < -r || p->axis >= r || (p->axis < 0 && n->version < 8))
		return npr_node_err(n, -EINVAL, "axis %lld out of range for rank %d",
				    (long long)p->axis, r);
	if (p->axis < 0)
		p->axis += r;
	o->shape = x->shape;
	o->type = x->type;
	return 0;
}

static int reduce_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const names[] = {
		"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
		"ReduceProd", "ReduceL1", "ReduceL2",
	};
	struct npr_nn_params *p;
	int i;

	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (i = 0; i < 7; i++)
		if (!strcmp(n->type, names[i]))
			p->red = i;
	return npr_attr_bool(n, "keep_dims", false, &p->keep_dims);
}

static int reduce_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_nn_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	int64_t ax[NPR_MAX_RANK];
	int cnt, i, r = x->shape.rank, k = 0;

	cnt = npr_const_ints(g, n, 1, ax, NPR_MAX_RANK);
	if (cnt < 0)
		return cnt;
	memset(p->reduced, 0, sizeof(p->reduced));
	for (i = 0; i < cnt; i++) {
		int64_t a = ax[i] < 0 ? ax[i] + r : ax[i];

		if (a < 0 || a >= r)
			return npr_node_err(n, -EINVAL, "axis %lld out of range for rank %d",
					    (long long)ax[i], r);
		p->reduced[a] = true;
	}
	for (i = 0; i < r; i++) {
		if (!p->reduced[i])
			o->shape.d[k++] = x->shape.d[i];
		else if (p->keep_dims)
			o->shape.d[k++] = 1;
	}
	o->shape.rank = k;
	if (x->type != NPR_ELEM_F32 && x->type != NPR_ELEM_I32 &&
	    x->type != NPR_ELEM_I64)
		return npr_node_err(n, -EINVAL, "element type %s not supported",
				    npr_elem_name(x->type));
	o->type = x->type;
	return 0;
}

static int matmul_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_nn_params *p;
	int err;

	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	err = npr_attr_bool(n, "transpose_a", false, &p->ta);
	if (!err)
		err = npr_attr_bool(n, "transpose_b", false, &p->tb);
	return err;
}

static int matmul_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_nn_params *p = n->params;
	struct npr_value *a = npr_in(g, n, 0), *b = npr_in(g, n, 1);
	struct npr_value *o = npr_out(g, n, 0);
	struct npr_shape sa = a->shape, sb = b->shape, ba, bb, bo;
	int64_t m, k, k2, nn;
	int i;

	if (a->type != NPR_ELEM_F32 || b->type != NPR_ELEM_F32)
		return npr_node_err(n, -EINVAL, "inputs must be f32");
	if (sa.rank < 1 || sb.rank < 1)
		return npr_node_err(n, -EINVAL, "scalar inputs");
	/* 1-D: a becomes [1, K], b becomes [K, 1]; transposes ignored */
	if (sa.rank == 1) {
		sa.d[1] = sa.d[0];
		sa.d[0] = 1;
		sa.rank = 2;
	} else if (p->ta) {
		int64_t t = sa.d[sa.rank - 1];

		sa.d[sa.rank - 1] = sa.d[sa.rank - 2];
		sa.d[sa.rank - 2] = t;
	}
	if (sb.rank == 1) {
		sb.d[1] = 1;
		sb.rank = 2;
	} else if (p->tb) {
		int64_t t = sb.d[sb.rank - 1];

		sb.d[sb.rank - 1] = sb.d[sb.rank - 2];
		sb.d[sb.rank - 2] = t;
	}
	m = sa.d[sa.rank - 2];
	k = sa.d[sa.rank - 1];
	k2 = sb.d[sb.rank - 2];
	nn = sb.d[sb.rank - 1];
	if (k != k2)
		return npr_node_err(n, -EINVAL, "inner dims differ: %lld and %lld",
				    (long long)k, (long long)k2);
	ba = sa;
	ba.rank -= 2;
	bb = sb;
	bb.rank -= 2;
	if (npr_shape_broadcast(&ba, &bb, &bo))
		return npr_node_err(n, -EINVAL, "batch dims do not broadcast");
	o->shape = bo;
	if (a->shape.rank > 1)
		o->shape.d[o->shape.rank++] = m;
	if (b->shape.rank > 1)
		o->shape.d[o->shape.rank++] = nn;
	for (i = 0; i < o->shape.rank; i++)
		;
	o->type = a->type;
	return 0;
}

#define REDUCE(t) { .type = t, .vmin = 0, .vmax = 99, .nin_min = 2, \
	.nin_max = 2, .parse = reduce_parse, .infer = reduce_infer }

const struct npr_op_def npr_ops_nn[] = {
	{ .type = "Convolution", .vmin = 0, .vmax = 99, .nin_min = 2,
	  .nin_max = 2, .parse = conv_parse, .infer = conv_infer },
	{ .type = "GroupConvolution", .vmin = 0, .vmax = 99, .nin_min = 2,
	  .nin_max = 2, .parse = conv_parse, .infer = conv_infer },
	{ .type = "MaxPool", .vmin = 0, .vmax = 1, .nin_min = 1, .nin_max = 1,
	  .parse = pool_parse, .infer = pool_infer },
	{ .type = "MaxPool", .vmin = 8, .vmax = 13, .nin_min = 1,
	  .nin_max = 1, .parse = pool_parse, .infer = pool_infer },
	{ .type = "AvgPool", .vmin = 0, .vmax = 13, .nin_min = 1,
	  .nin_max = 1, .parse = pool_parse, .infer = pool_infer },
	{ .type = "SoftMax", .vmin = 0, .vmax = 1, .nin_min = 1, .nin_max = 1,
	  .parse = softmax_parse, .infer = softmax_infer },
	{ .type = "SoftMax", .vmin = 8, .vmax = 99, .nin_min = 1,
	  .nin_max = 1, .parse = softmax_parse, .infer = softmax_infer },
	REDUCE("ReduceSum"), REDUCE("ReduceMean"), REDUCE("ReduceMax"),
	REDUCE("ReduceMin"), REDUCE("ReduceProd"), REDUCE("ReduceL1"),
	REDUCE("ReduceL2"),
	{ .type = "MatMul", .vmin = 0, .vmax = 99, .nin_min = 2, .nin_max = 2,
	  .parse = matmul_parse, .infer = matmul_infer },
	{ .type = NULL },
};
