// SPDX-License-Identifier: MIT
/*
 * Layout ops: attributes and shape inference of DepthToSpace-1,
 * SpaceToDepth-1, ShuffleChannels-1 and ReorgYolo-2 after the OpenVINO
 * opset specifications.  Kernels: ref/kernels/layout.c.
 *
 * ReorgYolo's specification refers to the Darknet reorg layer: output
 * element i (in C order) is the input, read as [N, C / s^2, H * s, W * s],
 * at the position Darknet computes for element i of an [N, C, H, W]
 * tensor (see the kernel, ref/kernels/layout.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elem.h"
#include "layout.h"

static int layout_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const modes[] = { "blocks_first", "depth_first",
					     NULL };
	struct npr_layout_params *p = npr_params_new(n, sizeof(*p));
	int err;

	(void)g;
	if (!p)
		return -ENOMEM;
	if (!strcmp(n->type, "ShuffleChannels")) {
		err = npr_attr_int(n, "axis", 1, &p->axis);
		if (!err)
			err = npr_attr_int(n, "group", 1, &p->group);
		if (!err && p->group < 1)
			err = npr_node_err(n, -EINVAL,
					   "group %lld must be positive",
					   (long long)p->group);
		return err;
	}
	if (!strcmp(n->type, "ReorgYolo")) {
		int64_t s[2];
		int cnt;

		err = npr_attr_ints(n, "stride", s, 2, &cnt, false);
		if (err == -ENOENT)
			return npr_node_err(n, -EINVAL,
					    "missing attribute stride");
		if (err)
			return err;
		if (cnt < 1 || (cnt == 2 && s[1] != s[0]))
			return npr_node_err(n, -EINVAL,
					    "stride must be one positive integer");
		p->block = s[0];
	} else {
		if (!npr_attr(n, "mode"))
			return npr_node_err(n, -EINVAL,
					    "missing attribute mode");
		err = npr_attr_enum(n, "mode", modes, 0, &p->mode);
		if (!err)
			err = npr_attr_int(n, "block_size", 1, &p->block);
		if (err)
			return err;
	}
	if (p->block < 1 || p->block > 65536)
		return npr_node_err(n, -EINVAL,
				    "block size %lld is out of range [1, 65536]",
				    (long long)p->block);
	return 0;
}

static int check_in(const struct npr_node *n, const struct npr_value *x,
		    int min_rank)
{
	if (n->nout != 1)
		return npr_node_err(n, -EINVAL, "has %d outputs, expected 1",
				    n->nout);
	if (!npr_elem_size(x->type))
		return npr_node_err(n, -EINVAL,
				    "element type %s is not supported",
				    npr_elem_name(x->type));
	if (x->shape.rank < min_rank)
		return npr_node_err(n, -EINVAL,
				    "input rank %d, at least %d needed",
				    x->shape.rank, min_rank);
	return 0;
}

static int depth_to_space_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_layout_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	int r = x->shape.rank, k = r - 2, i, err;
	int64_t bs = p->block, bk = 1, c;

	err = check_in(n, x, 3);
	if (err)
		return err;
	for (i = 0; i < k; i++) {
		if (bk > INT64_MAX / bs)
			return npr_node_err(n, -EINVAL, "block_size too large");
		bk *= bs;
	}
	c = x->shape.d[1];
	if (c % bk)
		return npr_node_err(n, -EINVAL,
				    "channels %lld are not divisible by block_size^%d = %lld",
				    (long long)c, k, (long long)bk);
	/* reshaped input: N, then bs x k and C/bs^k in mode order, spatial */
	p->rank = 2 * k + 2;
	p->dim[0] = x->shape.d[0];
	if (p->mode == 0) {
		for (i = 0; i < k; i++)
			p->dim[1 + i] = bs;
		p->dim[k + 1] = c / bk;
	} else {
		p->dim[1] = c / bk;
		for (i = 0; i < k; i++)
			p->dim[2 + i] = bs;
	}
	for (i = 0; i < k; i++)
		p->dim[k + 2 + i] = x->shape.d[2 + i];
	/* output order: N, C/bs^k, then (D_i, bs_i) pairs */
	p->perm[0] = 0;
	p->perm[1] = p->mode == 0 ? k + 1 : 1;
	for (i = 0; i < k; i++) {
		p->perm[2 + 2 * i] = k + 2 + i;
		p->perm[3 + 2 * i] = p->mode == 0 ? 1 + i : 2 + i;
	}
	o->type = x->type;
	o->shape = x->shape;
	o->shape.d[1] = c / bk;
	for (i = 0; i < k; i++) {
		if (x->shape.d[2 + i] > INT64_MAX / bs)
			return npr_node_err(n, -EINVAL, "output too large");
		o->shape.d[2 + i] = x->shape.d[2 + i] * bs;
	}
	return npr_check_numel(n, &o->shape);
}

static int space_to_depth_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_layout_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	int r = x->shape.rank, k = r - 2, i, j, err;
	int64_t bs = p->block, c = x->shape.d[1];

	err = check_in(n, x, 3);
	if (err)
		return err;
	o->type = x->type;
	o->shape = x->shape;
	for (i = 0; i < k; i++) {
		if (x->shape.d[2 + i] % bs)
			return npr_node_err(n, -EINVAL,
					    "spatial dim %d (%lld) is not divisible by block_size %lld",
					    2 + i, (long long)x->shape.d[2 + i],
					    (long long)bs);
		o->shape.d[2 + i] = x->shape.d[2 + i] / bs;
		if (c > INT64_MAX / bs)
			return npr_node_err(n, -EINVAL, "output too large");
		c *= bs;
	}
	o->shape.d[1] = c;
	/* reshaped input: N, C, (D_i / bs, bs) pairs */
	p->rank = 2 * k + 2;
	p->dim[0] = x->shape.d[0];
	p->dim[1] = x->shape.d[1];
	for (i = 0; i < k; i++) {
		p->dim[2 + 2 * i] = x->shape.d[2 + i] / bs;
		p->dim[3 + 2 * i] = bs;
	}
	j = 0;
	p->perm[j++] = 0;
	if (p->mode == 1)
		p->perm[j++] = 1;
	for (i = 0; i < k; i++)
		p->perm[j++] = 3 + 2 * i;
	if (p->mode == 0)
		p->perm[j++] = 1;
	for (i = 0; i < k; i++)
		p->perm[j++] = 2 + 2 * i;
	return npr_check_numel(n, &o->shape);
}

static int shuffle_channels_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_layout_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	int ax, err;
	int64_t c;

	err = check_in(n, x, 1);
	if (!err)
		err = npr_norm_axis(n, "axis", p->axis, x->shape.rank, &ax);
	if (err)
		return err;
	c = x->shape.d[ax];
	if (c % p->group)
		return npr_node_err(n, -EINVAL,
				    "dim %d (%lld) is not divisible by group %lld",
				    ax, (long long)c, (long long)p->group);
	p->rank = 4;
	p->dim[0] = npr_dims_prod(&x->shape, 0, ax);
	p->dim[1] = p->group;
	p->dim[2] = c / p->group;
	p->dim[3] = npr_dims_prod(&x->shape, ax + 1, x->shape.rank);
	p->perm[0] = 0;
	p->perm[1] = 2;
	p->perm[2] = 1;
	p->perm[3] = 3;
	o->type = x->type;
	o->shape = x->shape;
	return 0;
}

static int reorg_yolo_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_layout_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	int64_t s = p->block;
	int err;

	err = check_in(n, x, 4);
	if (err)
		return err;
	if (x->shape.rank != 4)
		return npr_node_err(n, -EINVAL, "input rank %d, expected 4",
				    x->shape.rank);
	if (x->shape.d[2] % s || x->shape.d[3] % s)
		return npr_node_err(n, -EINVAL,
				    "H and W (%lld, %lld) must be divisible by stride %lld",
				    (long long)x->shape.d[2],
				    (long long)x->shape.d[3], (long long)s);
	if (x->shape.d[1] < s * s || x->shape.d[1] % (s * s))
		return npr_node_err(n, -EINVAL,
				    "channels %lld must be a multiple of stride^2 = %lld",
				    (long long)x->shape.d[1],
				    (long long)(s * s));
	o->type = x->type;
	o->shape = x->shape;
	o->shape.d[1] = x->shape.d[1] * s * s;
	o->shape.d[2] = x->shape.d[2] / s;
	o->shape.d[3] = x->shape.d[3] / s;
	return 0;
}

#define LAYOUT_OP(t, v0, infer_fn) \
	{ .type = t, .vmin = v0, .vmax = 99, .nin_min = 1, .nin_max = 1, \
	  .parse = layout_parse, .infer = infer_fn }

const struct npr_op_def npr_ops_layout[] = {
	LAYOUT_OP("DepthToSpace", 0, depth_to_space_infer),
	LAYOUT_OP("SpaceToDepth", 0, space_to_depth_infer),
	LAYOUT_OP("ShuffleChannels", 0, shuffle_channels_infer),
	LAYOUT_OP("ReorgYolo", 0, reorg_yolo_infer),
	{ .type = NULL },
};
