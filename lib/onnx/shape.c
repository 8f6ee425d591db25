// SPDX-License-Identifier: MIT
/*
 * ONNX data-movement ops: Reshape, Flatten, Transpose, Concat, Squeeze,
 * Unsqueeze, Shape, Gather, Slice, Split, Pad, Expand, Tile, Range,
 * Constant and ConstantOfShape.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "translate.h"

#define MAXR	NPR_MAX_RANK

static int tr_flatten(struct onnx_ctx *c, int *out)
{
	int64_t axis;
	int err = npr_onnx_attr_int(c, "axis", 1, &axis);

	if (err)
		return err;
	if (axis < -MAXR || axis > MAXR)
		return npr_onnx_err(c, -EINVAL, "axis %lld", (long long)axis);
	out[0] = npr_onnx_flatten2d(c, c->vin[0], axis, NULL);
	return out[0] < 0 ? out[0] : 0;
}

static int tr_reshape(struct onnx_ctx *c, int *out)
{
	struct npr_shape xs0 = *onnx_vshape(c, c->vin[0]), *xs = &xs0;
	struct npr_shape s = { .rank = -1 };
	int64_t allowzero = 0, t[MAXR];
	int in[2] = { c->vin[0], onnx_in(c, 1) };
	int node, n, i, err;

	err = npr_onnx_attr_int(c, "allowzero", 0, &allowzero);
	if (err)
		return err;
	if (c->opset < 5) {
		/* the target shape was an attribute */
		err = npr_onnx_attr_ints(c, "shape", t, MAXR, &n);
		if (err)
			return err;
		if (n < 0)
			return npr_onnx_err(c, -EINVAL,
					    "attribute shape is missing");
		in[1] = npr_onnx_const_i64(c, t, n, "shape");
		if (in[1] < 0)
			return in[1];
	} else if (in[1] < 0) {
		return onnx_need(c, 1);
	}
	node = npr_onnx_node(c, "Reshape", 1, NULL, 2, in, 1, out);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "special_zero", "%s",
				onnx_tf(!allowzero));
	if (err)
		return err;
	n = npr_onnx_const_ints(c, in[1], t, MAXR);
	if (n < 0 && n != -ENODATA)
		return n;
	if (n >= 0) {
		s.rank = n;
		for (i = 0; i < n; i++)
			s.d[i] = t[i] > 0 ? t[i] :
				 !t[i] && !allowzero && i < xs->rank ?
				 xs->d[i] : t[i] ? -1 : 0;
	}
	c->g->vals[out[0]].shape = s;
	return 0;
}

static int tr_transpose(struct onnx_ctx *c, int *out)
{
	struct npr_shape xs0 = *onnx_vshape(c, c->vin[0]), *xs = &xs0, s;
	int64_t perm[MAXR];
	int n, i, err;

	err = npr_onnx_attr_ints(c, "perm", perm, MAXR, &n);
	if (err)
		return err;
	out[0] = npr_onnx_with_list(c, "Transpose", c->vin[0], perm,
				    n < 0 ? 0 : n, NULL);
	if (out[0] < 0)
		return out[0];
	if (xs->rank < 0 || (n >= 0 && n != xs->rank))
		return 0;
	s.rank = xs->rank;
	for (i = 0; i < s.rank; i++) {
		int64_t p = n < 0 ? s.rank - 1 - i : perm[i];

		if (p < 0 || p >= s.rank)
			return 0;
		s.d[i] = xs->d[p];
	}
	c->g->vals[out[0]].shape = s;
	return 0;
}

static int tr_concat(struct onnx_ctx *c, int *out)
{
	struct npr_shape s = *onnx_vshape(c, c->vin[0]);
	int64_t axis, a;
	int node, i, err;

	if (!npr_onnx_attr_find(c, "axis") && c->opset >= 4)
		return npr_onnx_err(c, -EINVAL, "attribute axis is missing");
	/* the default before opset 4 */
	err = npr_onnx_attr_int(c, "axis", 1, &axis);
	if (err)
		return err;
	for (i = 0; i < c->nin; i++)
		if (c->vin[i] < 0)
			return onnx_need(c, i);
	node = npr_onnx_node(c, "Concat", 1, NULL, c->nin, c->vin, 1, out);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "axis", "%lld", (long long)axis);
	if (err)
		return err;
	if (s.rank > 0 && !npr_onnx_norm_axis(c, axis, s.rank, &a)) {
		for (i = 1; i < c->nin; i++) {
			int64_t d = onnx_vshape(c, c->vin[i])->d[a];

			s.d[a] = s.d[a] < 0 || d < 0 ||
				 onnx_rank(c, c->vin[i]) != s.rank ?
				 -1 : s.d[a] + d;
		}
		c->g->vals[out[0]].shape = s;
	}
	return 0;
}

/* Squeeze and Unsqueeze; axes an attribute before opset 13. */
static int tr_squeeze(struct onnx_ctx *c, int *out)
{
	bool unsq = c->op->arg;
	struct npr_shape xs0 = *onnx_vshape(c, c->vin[0]), *xs = &xs0, s;
	int64_t ax[MAXR];
	bool mark[MAXR] = { false };
	int in[2] = { c->vin[0], -1 }, n = -1, i, k, node, r;

	if (c->opset < 13) {
		int err = npr_onnx_attr_ints(c, "axes", ax, MAXR, &n);

		if (err)
			return err;
		if (n >= 0) {
			in[1] = npr_onnx_const_i64(c, ax, n, "axes");
			if (in[1] < 0)
				return in[1];
		}
	} else if (onnx_in(c, 1) >= 0) {
		in[1] = onnx_in(c, 1);
		n = npr_onnx_const_ints(c, in[1], ax, MAXR);
		if (n < 0 && n != -ENODATA)
			return n;
	}
	if (unsq && in[1] < 0)
		return npr_onnx_err(c, -EINVAL, "axes are required");
	node = npr_onnx_node(c, unsq ? "Unsqueeze" : "Squeeze", 1, NULL,
			     in[1] < 0 ? 1 : 2, in, 1, out);
	if (node < 0)
		return node;
	/* the shape when the axes are known */
	r = xs->rank < 0 || n < 0 ? -1 : unsq ? xs->rank + n : xs->rank;
	if (r < 0 || r > MAXR)
		return 0;
	for (i = 0; i < n; i++) {
		int64_t a = ax[i] < 0 ? ax[i] + r : ax[i];

		if (a < 0 || a >= r)
			return 0;
		mark[a] = true;
	}
	s.rank = 0;
	for (i = 0, k = 0; i < r; i++) {
		if (unsq) {
			s.d[s.rank++] = mark[i] ? 1 : xs->d[k++];
		} else if (!mark[i]) {
			s.d[s.rank++] = xs->d[i];
		}
	}
	c->g->vals[out[0]].shape = s;
	return 0;
}

static int tr_shape(struct onnx_ctx *c, int *out)
{
	const Onnx__AttributeProto *as = npr_onnx_attr_find(c, "start");
	const Onnx__AttributeProto *ae = npr_onnx_attr_find(c, "end");
	int64_t b, e, z = 0, em;
	int v, err;

	v = npr_onnx_shape_of(c, c->vin[0], as || ae ? "shape" : NULL);
	if (v < 0 || (!as && !ae)) {
		out[0] = v;
		return v < 0 ? v : 0;
	}
	err = npr_onnx_attr_int(c, "start", 0, &b);
	if (!err)
		err = npr_onnx_attr_int(c, "end", 0, &e);
	if (err)
		return err;
	em = !ae;
	out[0] = npr_onnx_strided(c, v, &b, &e, NULL, &z, &em, 1, NULL);
	if (out[0] >= 0)
		c->g->vals[out[0]].shape.d[0] = -1;
	return out[0] < 0 ? out[0] : 0;
}

static int tr_gather(struct onnx_ctx *c, int *out)
{
	struct npr_shape d0 = *onnx_vshape(c, c->vin[0]), *d = &d0;
	struct npr_shape ix0 = *onnx_vshape(c, c->vin[1]), *ix = &ix0, s;
	struct npr_shape sc = { .rank = 0 };
	int in[3] = { c->vin[0], c->vin[1], -1 }, node, i;
	int64_t axis, a;
	int err;

	err = npr_onnx_attr_int(c, "axis", 0, &axis);
	if (err)
		return err;
	in[2] = npr_onnx_const(c, NPR_ELEM_I64, &sc, &axis, "axis");
	if (in[2] < 0)
		return in[2];
	node = npr_onnx_node(c, "Gather", 8, NULL, 3, in, 1, out);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "batch_dims", "0");
	if (err)
		return err;
	if (d->rank < 1 || ix->rank < 0 || d->rank - 1 + ix->rank > MAXR ||
	    npr_onnx_norm_axis(c, axis, d->rank, &a))
		return 0;
	s.rank = 0;
	for (i = 0; i < a; i++)
		s.d[s.rank++] = d->d[i];
	for (i = 0; i < ix->rank; i++)
		s.d[s.rank++] = ix->d[i];
	for (i = a + 1; i < d->rank; i++)
		s.d[s.rank++] = d->d[i];
	c->g->vals[out[0]].shape = s;
	return 0;
}

static int tr_constant(struct onnx_ctx *c, int *out)
{
	const Onnx__AttributeProto *a;
	struct npr_shape s = { .rank = 0 };

	if (c->np->n_attribute != 1 || !(a = c->np->attribute[0]) || !a->name)
		return npr_onnx_err(c, -EINVAL, "needs exactly one attribute");
	if (!strcmp(a->name, "value") && a->t) {
		out[0] = npr_onnx_tensor_const(c, a->t, NULL);
	} else if (!strcmp(a->name, "value_float")) {
		float f = a->f;

		out[0] = npr_onnx_const(c, NPR_ELEM_F32, &s, &f, NULL);
	} else if (!strcmp(a->name, "value_int")) {
		out[0] = npr_onnx_const(c, NPR_ELEM_I64, &s, &a->i, NULL);
	} else if (!strcmp(a->name, "value_floats")) {
		s.rank = 1;
		s.d[0] = (int64_t)a->n_floats;
		out[0] = npr_onnx_const(c, NPR_ELEM_F32, &s, a->floats, NULL);
	} else if (!strcmp(a->name, "value_ints")) {
		s.rank = 1;
		s.d[0] = (int64_t)a->n_ints;
		out[0] = npr_onnx_const(c, NPR_ELEM_I64, &s, a->ints, NULL);
	} else {
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "attribute %.64s is not supported", a->name);
	}
	return out[0] < 0 ? out[0] : 0;
}

static int tr_constant_of_shape(struct onnx_ctx *c, int *out)
{
	const Onnx__AttributeProto *a = npr_onnx_attr_find(c, "value");
	struct npr_shape s = { .rank = 0 }, vs;
	int64_t dims[MAXR], numel = 1;
	unsigned int t = NPR_ELEM_F32;
	uint64_t val = 0;
	size_t sz;
	char *p;
	int n, i, v, in[2];

	if (a && a->t) {
		v = npr_onnx_tensor_const(c, a->t, "value");
		if (v < 0)
			return v;
		vs = c->g->vals[v].shape;
		if (npr_shape_numel(&vs) != 1)
			return npr_onnx_err(c, -EINVAL,
					    "value must have one element");
		t = c->g->vals[v].type;
		memcpy(&val, c->g->vals[v].data, npr_elem_size(t));
	}
	n = npr_onnx_const_ints(c, c->vin[0], dims, MAXR);
	if (n == -ENODATA) {
		/* a shape computed at run time: broadcast the value */
		v = npr_onnx_const(c, t, &s, &val, "value");
		if (v < 0)
			return v;
		in[0] = v;
		in[1] = c->vin[0];
		v = npr_onnx_node(c, "Broadcast", 3, NULL, 2, in, 1, out);
		if (v < 0)
			return v;
		v = npr_onnx_set_attr(c, v, "mode", "numpy");
		return v < 0 ? v : 0;
	}
	if (n < 0)
		return n;
	s.rank = n;
	for (i = 0; i < n; i++) {
		if (dims[i] < 0 || dims[i] > (1LL << 40) ||
		    (dims[i] && numel > (1LL << 40) / dims[i]))
			return npr_onnx_err(c, -EINVAL, "bad shape");
		s.d[i] = dims[i];
		numel *= dims[i];
	}
	sz = npr_elem_size(t);
	if (!sz || numel * sz > (256u << 20))
		return npr_onnx_err(c, -EOPNOTSUPP, "constant too large");
	p = malloc(numel ? numel * sz : 1);
	if (!p)
		return -ENOMEM;
	for (i = 0; i < numel; i++)
		memcpy(p + i * sz, &val, sz);
	out[0] = npr_onnx_const(c, t, &s, p, NULL);
	free(p);
	return out[0] < 0 ? out[0] : 0;
}

/*
 * Slice whose bounds are computed (constant only once the model is
 * compiled): OpenVINO's Slice-8 has ONNX's inputs; it needs the steps, so
 * without them a vector of ones as long as the bounds.  @n, @ne: lengths
 * of starts and ends when constant; @na: of the axes, -1 if absent.
 */
static int slice_dynamic(struct onnx_ctx *c, int *out, int n, int ne,
			 int na)
{
	int in[5] = { c->vin[0], onnx_in(c, 1), onnx_in(c, 2), onnx_in(c, 4),
		      onnx_in(c, 3) };
	const struct npr_shape *ss = onnx_vshape(c, in[1]);
	int64_t ones[MAXR];
	int len = n >= 0 ? n : ne >= 0 ? ne : na >= 0 ? na :
		  ss->rank == 1 ? (int)ss->d[0] : -1;
	int node, i;

	if (in[3] < 0) {
		if (len < 0 || len > MAXR)
			return npr_onnx_err(c, -EOPNOTSUPP,
					    "computed starts of unknown length need steps");
		for (i = 0; i < len; i++)
			ones[i] = 1;
		in[3] = npr_onnx_const_i64(c, ones, len, "steps");
		if (in[3] < 0)
			return in[3];
	}
	node = npr_onnx_node(c, "Slice", 8, NULL, in[4] >= 0 ? 5 : 4, in, 1,
			     out);
	if (node < 0)
		return node;
	c->g->vals[out[0]].shape.rank = onnx_rank(c, in[0]);
	for (i = 0; i < onnx_rank(c, in[0]); i++)
		c->g->vals[out[0]].shape.d[i] = -1;
	return 0;
}

/* Slice: attributes before opset 10, inputs from then on. */
static int tr_slice(struct onnx_ctx *c, int *out)
{
	int64_t st[MAXR], en[MAXR], ax[MAXR], sp[MAXR];
	int64_t b[MAXR], e[MAXR], s[MAXR], bm[MAXR], em[MAXR];
	int x = c->vin[0], r = onnx_rank(c, x), n, ne, na = -1, ns = -1;
	int i, m = 0, err;

	if (c->opset < 10) {
		err = npr_onnx_attr_ints(c, "starts", st, MAXR, &n);
		if (!err)
			err = npr_onnx_attr_ints(c, "ends", en, MAXR, &ne);
		if (!err)
			err = npr_onnx_attr_ints(c, "axes", ax, MAXR, &na);
		if (err)
			return err;
		if (n < 0 || ne < 0)
			return npr_onnx_err(c, -EINVAL,
					    "starts and ends are required");
	} else {
		if (c->nin < 3)
			return npr_onnx_err(c, -EINVAL,
					    "starts and ends are required");
		if (onnx_in(c, 3) >= 0) {
			na = npr_onnx_const_ints(c, onnx_in(c, 3), ax, MAXR);
			if (na < 0 && na != -ENODATA)
				return na;
		}
		if (onnx_need(c, 1) < 0 || onnx_need(c, 2) < 0)
			return -EINVAL;
		n = npr_onnx_const_ints(c, onnx_in(c, 1), st, MAXR);
		ne = npr_onnx_const_ints(c, onnx_in(c, 2), en, MAXR);
		if (onnx_in(c, 4) >= 0)
			ns = npr_onnx_const_ints(c, onnx_in(c, 4), sp, MAXR);
		if (n == -ENODATA || ne == -ENODATA || ns == -ENODATA ||
		    na == -ENODATA)
			return slice_dynamic(c, out, n, ne, na);
		if (n < 0 || ne < 0 || (onnx_in(c, 4) >= 0 && ns < 0))
			return n < 0 ? n : ne < 0 ? ne : ns;
	}
	if (n != ne || (na >= 0 && na != n) || (ns >= 0 && ns != n))
		return npr_onnx_err(c, -EINVAL,
				    "starts, ends, axes and steps differ in length");
	/* Slice-8 takes negative axes of a rank not known yet */
	for (i = 0; r < 0 && c->opset >= 10 && na >= 0 && i < na; i++)
		if (ax[i] < 0)
			return slice_dynamic(c, out, n, ne, na);
	for (i = 0; i < MAXR; i++) {
		b[i] = e[i] = 0;
		s[i] = 1;
		bm[i] = em[i] = 1;
	}
	for (i = 0; i < n; i++) {
		int64_t a = na >= 0 ? ax[i] : i;

		err = npr_onnx_norm_axis(c, a, r, &a);
		if (err)
			return err;
		if (!bm[a])
			return npr_onnx_err(c, -EINVAL, "axis %lld repeats",
					    (long long)a);
		if (ns >= 0 && !sp[i])
			return npr_onnx_err(c, -EINVAL, "step 0");
		b[a] = st[i];
		e[a] = en[i];
		s[a] = ns >= 0 ? sp[i] : 1;
		bm[a] = em[a] = 0;
		if (a + 1 > m)
			m = (int)a + 1;
	}
	out[0] = npr_onnx_strided(c, x, b, e, s, bm, em, m, NULL);
	return out[0] < 0 ? out[0] : 0;
}

/*
 * Split: VariadicSplit when the sizes are given (or an uneven split of a
 * known axis), Split with num_splits for an even one.
 */
static int tr_split(struct onnx_ctx *c, int *out)
{
	int x = c->vin[0], r = onnx_rank(c, x), nout = (int)c->np->n_output;
	struct npr_shape sc = { .rank = 0 };
	int64_t axis, a, sizes[16], dim = -1, num = 0;
	int in[3] = { x, -1, -1 }, n = -1, k, node, err, computed = -1;
	int sin = c->opset < 2 ? 1 : c->opset >= 13 ? 1 : -1;

	err = npr_onnx_attr_int(c, "axis", 0, &axis);
	if (!err && c->opset < 13)
		err = npr_onnx_attr_ints(c, "split", sizes, 16, &n);
	if (!err && c->opset >= 18)
		err = npr_onnx_attr_int(c, "num_outputs", 0, &num);
	if (err)
		return err;
	if (sin > 0 && onnx_in(c, sin) >= 0) {
		n = npr_onnx_const_ints(c, onnx_in(c, sin), sizes, 16);
		if (n == -ENODATA) {
			/* computed sizes: split at inference time */
			computed = onnx_in(c, sin);
			n = nout;
		}
		if (n < 0)
			return n;
	} else if (sin < 0 && c->nin > 1) {
		return npr_onnx_err(c, -EINVAL,
				    "takes one input before opset 13");
	}
	if (r >= 0 && !npr_onnx_norm_axis(c, axis, r, &a))
		dim = onnx_vshape(c, x)->d[a];
	if (n < 0 && num && dim >= 0 && dim % nout) {
		/* opset 18: the last chunk is smaller */
		int64_t chunk = (dim + nout - 1) / nout, off = 0;

		for (k = 0; k < nout; k++) {
			sizes[k] = off + chunk > dim ? dim - off : chunk;
			off += sizes[k];
		}
		n = nout;
	}
	if ((n >= 0 && n != nout) || (num && num != nout))
		return npr_onnx_err(c, -EINVAL, "%d %s for %d outputs",
				    n >= 0 ? n : (int)num,
				    n >= 0 ? "sizes" : "num_outputs", nout);
	in[1] = npr_onnx_const(c, NPR_ELEM_I64, &sc, &axis, "axis");
	if (in[1] < 0)
		return in[1];
	if (n >= 0) {
		in[2] = computed >= 0 ? computed :
			npr_onnx_const_i64(c, sizes, n, "sizes");
		if (in[2] < 0)
			return in[2];
	}
	node = npr_onnx_node(c, n >= 0 ? "VariadicSplit" : "Split", 1, NULL,
			     n >= 0 ? 3 : 2, in, nout, out);
	if (node < 0)
		return node;
	if (n < 0) {
		err = npr_onnx_set_attr(c, node, "num_splits", "%d", nout);
		if (err)
			return err;
	}
	for (k = 0; k < nout; k++) {
		c->g->vals[out[k]].shape = *onnx_vshape(c, x);
		if (r >= 0 && !npr_onnx_norm_axis(c, axis, r, &a))
			c->g->vals[out[k]].shape.d[a] =
				computed >= 0 ? -1 : n >= 0 ? sizes[k] :
				dim < 0 ? -1 : dim / nout;
	}
	return 0;
}

/* The [lo, hi) elements of 1-D @v. */
static int slice1d(struct onnx_ctx *c, int v, int64_t lo, int64_t hi,
		   const char *suffix)
{
	int64_t z = 0;

	return npr_onnx_strided(c, v, &lo, &hi, NULL, &z, &z, 1, suffix);
}

/* Pad: pads/value attributes before opset 11, inputs from then on. */
static int tr_pad(struct onnx_ctx *c, int *out)
{
	static const char *const modes[] = { "constant", "reflect", "edge" };
	int64_t pads[2 * MAXR], ax[MAXR], pb[MAXR] = { 0 }, pe[MAXR] = { 0 };
	int in[4] = { c->vin[0], -1, -1, -1 }, n, na = -1, node, i, r;
	char mode[16];
	double value;
	int err;

	err = npr_onnx_attr_str(c, "mode", "constant", mode, sizeof(mode));
	if (err)
		return err;
	for (i = 0; i < 3 && strcmp(mode, modes[i]); i++)
		;
	if (i == 3)
		return npr_onnx_err(c, -EOPNOTSUPP, "mode %s is not supported",
				    mode);
	if (c->opset < 11) {
		err = npr_onnx_attr_ints(c, c->opset < 2 ? "paddings" : "pads",
					 pads, 2 * MAXR, &n);
		if (!err)
			err = npr_onnx_attr_float(c, "value", 0, &value);
		if (err)
			return err;
		if (n < 0)
			return npr_onnx_err(c, -EINVAL,
					    "attribute pads is missing");
		if (value != 0) {
			in[3] = npr_onnx_scalar(c, c->vin[0], value, "value");
			if (in[3] < 0)
				return in[3];
		}
	} else {
		if (onnx_need(c, 1) < 0)
			return -EINVAL;
		n = npr_onnx_const_ints(c, onnx_in(c, 1), pads, 2 * MAXR);
		if (n < 0 && n != -ENODATA)
			return n;
		in[3] = onnx_in(c, 2);
		if (onnx_in(c, 3) >= 0) {
			na = npr_onnx_const_ints(c, onnx_in(c, 3), ax, MAXR);
			if (na == -ENODATA || n == -ENODATA)
				return npr_onnx_err(c, -EOPNOTSUPP,
						    "pads and axes must be constant");
			if (na < 0)
				return na;
		}
	}
	if (n == -ENODATA) {
		/* pads computed at run time: split them in halves */
		r = npr_onnx_known_rank(c, c->vin[0], "Pad with computed pads");
		if (r < 0)
			return r;
		in[1] = slice1d(c, onnx_in(c, 1), 0, r, "pads_begin");
		in[2] = in[1] < 0 ? in[1] :
			slice1d(c, onnx_in(c, 1), r, 2 * r, "pads_end");
	} else {
		if (n % 2 || (na >= 0 && n != 2 * na))
			return npr_onnx_err(c, -EINVAL, "%d pads", n);
		r = na < 0 ? n / 2 :
		    npr_onnx_known_rank(c, c->vin[0], "Pad with axes");
		if (r < 0)
			return r;
		for (i = 0; i < n / 2; i++) {
			int64_t a = na < 0 ? i : ax[i];

			err = npr_onnx_norm_axis(c, a, r, &a);
			if (err)
				return err;
			pb[a] = pads[i];
			pe[a] = pads[n / 2 + i];
		}
		in[1] = npr_onnx_const_i64(c, pb, r, "pads_begin");
		in[2] = in[1] < 0 ? in[1] :
			npr_onnx_const_i64(c, pe, r, "pads_end");
	}
	if (in[1] < 0 || in[2] < 0)
		return in[1] < 0 ? in[1] : in[2];
	/* Pad-12: negative pads crop, as in ONNX */
	node = npr_onnx_node(c, "Pad", 12, NULL, in[3] >= 0 ? 4 : 3, in, 1,
			     out);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "pad_mode", "%s", mode);
	c->g->vals[out[0]].shape.rank = onnx_rank(c, c->vin[0]);
	for (i = 0; i < onnx_rank(c, c->vin[0]); i++)
		c->g->vals[out[0]].shape.d[i] = -1;
	return err;
}

/* Ops that map to one OpenVINO op with the same inputs: Expand, Tile. */
static int tr_direct(struct onnx_ctx *c, int *out)
{
	int node = npr_onnx_node(c, c->op->ov, c->op->arg, NULL, c->nin, c->vin,
				 1, out);

	if (node < 0)
		return node;
	if (!strcmp(c->op->ov, "Broadcast"))
		node = npr_onnx_set_attr(c, node, "mode", "bidirectional");
	return node < 0 ? node : 0;
}

static int tr_range(struct onnx_ctx *c, int *out)
{
	int node;

	if (!c->g->vals[c->vin[0]].type)
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "the element type of start is not known at load time");
	node = npr_onnx_node(c, "Range", 4, NULL, 3, c->vin, 1, out);
	if (node < 0)
		return node;
	node = npr_onnx_set_attr(c, node, "output_type", "%s",
				 npr_elem_name(c->g->vals[c->vin[0]].type));
	c->g->vals[out[0]].shape.rank = 1;
	c->g->vals[out[0]].shape.d[0] = -1;
	return node < 0 ? node : 0;
}

/* Size: the product of the shape, an i64 scalar. */
static int tr_size(struct onnx_ctx *c, int *out)
{
	int64_t zero = 0;
	int s = npr_onnx_shape_of(c, c->vin[0], "shape");

	if (s < 0)
		return s;
	out[0] = npr_onnx_reduce(c, "ReduceProd", s, &zero, 1, false, NULL);
	if (out[0] < 0)
		return out[0];
	c->g->vals[out[0]].shape.rank = 0;
	return 0;
}

/* ---- the table -------------------------------------------------------- */

const struct onnx_op npr_onnx_ops_shape[] = {
	{ "Concat", tr_concat, 1, -1, 1, NULL, 0 },
	{ "Constant", tr_constant, 0, 0, 1, NULL, 0 },
	{ "ConstantOfShape", tr_constant_of_shape, 1, 1, 1, NULL, 0 },
	{ "Expand", tr_direct, 2, 2, 1, "Broadcast", 3 },
	{ "Flatten", tr_flatten, 1, 1, 1, NULL, 0 },
	{ "Gather", tr_gather, 2, 2, 1, NULL, 0 },
	{ "Pad", tr_pad, 1, 4, 1, NULL, 0 },
	{ "Range", tr_range, 3, 3, 1, NULL, 0 },
	{ "Reshape", tr_reshape, 1, 2, 1, NULL, 0 },
	{ "Shape", tr_shape, 1, 1, 1, NULL, 0 },
	{ "Size", tr_size, 1, 1, 1, NULL, 0 },
	{ "Slice", tr_slice, 1, 5, 1, NULL, 0 },
	{ "Split", tr_split, 1, 2, 16, NULL, 0 },
	{ "Squeeze", tr_squeeze, 1, 2, 1, NULL, 0 },
	{ "Tile", tr_direct, 2, 2, 1, "Tile", 1 },
	{ "Transpose", tr_transpose, 1, 1, 1, NULL, 0 },
	{ "Unsqueeze", tr_squeeze, 1, 2, 1, NULL, 1 },
	{ NULL },
};
