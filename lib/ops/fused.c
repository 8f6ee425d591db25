// SPDX-License-Identifier: MIT
/*
 * FusedAttention-1 and FusedNorm-1 (see fused.h): attributes and shape
 * inference.  Kernels: ref/kernels/fused.c.
 *
 * FusedAttention: query [..., Hq, L, E], key [..., Hk, S, E] (or
 * [..., Hk, E, S] with key_transposed), value [..., Hk, S, Ev], an
 * optional mask broadcastable to the scores [..., Hq, L, S] ->
 * [..., Hq, L, Ev]:
 *
 *   softmax(query key^T * scale  (+ mask | masked to fill), last axis) value
 *
 * The leading dims broadcast numpy-style, but the one before L may also
 * group: Hq a multiple of Hk, query head h reading key and value head
 * h / (Hq / Hk) (grouped-query attention, the key and value heads never
 * copied).
 *
 * FusedNorm: x, optional scale and bias, each one value or one per
 * element of the normalized trailing axes -> x's shape:
 *
 *   layer: (x - mean) / sqrt(var + eps) * scale + bias
 *   rms:   x / sqrt(mean(x^2) + eps) * scale + bias
 *
 * over the axes from "axis" to the last (eps outside the square root when
 * eps_inside is false).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fused.h"

static int fattn_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const masks[] = { "none", "add", "select", NULL };
	struct npr_fattn_params *p;
	double scale, fill;
	int err;

	(void)g;
	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (n->nout != 1)
		return npr_node_err(n, -EINVAL, "has %d outputs, needs 1",
				    n->nout);
	err = npr_attr_float(n, "scale", 1.0, &scale);
	if (!err)
		err = npr_attr_bool(n, "key_transposed", false, &p->key_t);
	if (!err)
		err = npr_attr_enum(n, "mask", masks, 0, &p->mask);
	if (!err)
		err = npr_attr_bool(n, "fill_when", true, &p->fill_when);
	if (!err)
		err = npr_attr_float(n, "fill", -INFINITY, &fill);
	if (err)
		return err;
	if (!isfinite(scale))
		return npr_node_err(n, -EINVAL, "scale %g is not finite",
				    scale);
	if (isnan(fill))
		return npr_node_err(n, -EINVAL, "fill is NaN");
	p->scale = (float)scale;
	p->fill = (float)fill;
	if ((p->mask != NPR_FATTN_MASK_NONE) != (n->nin == 4))
		return npr_node_err(n, -EINVAL,
				    "mask=%s with %d inputs",
				    masks[p->mask], n->nin);
	return 0;
}

/**
 * npr_fattn_shape() - the shapes FusedAttention computes
 * @q: query [..., Hq, L, E].
 * @k: key [..., Hk, S, E], or [..., Hk, E, S] when @key_t.
 * @v: value [..., Hk, S, Ev].
 * @key_t: the key is transposed.
 * @out: Out. [..., Hq, L, Ev].
 * @scores: Out. [..., Hq, L, S], what a mask must broadcast to.
 *
 * Each leading dim of the three is 1 or the largest; the one before L of
 * key and value may also divide query's (grouped heads).
 *
 * Return: 0, or -EINVAL when the shapes do not fit (no message set).
 */
int npr_fattn_shape(const struct npr_shape *q, const struct npr_shape *k,
		    const struct npr_shape *v, bool key_t,
		    struct npr_shape *out, struct npr_shape *scores)
{
	const struct npr_shape *s[3] = { q, k, v };
	int nb, i, j, r;
	int64_t E, S;

	for (j = 0; j < 3; j++)
		if (s[j]->rank < 2 || !npr_shape_static(s[j]))
			return -EINVAL;
	E = q->d[q->rank - 1];
	S = k->d[k->rank - (key_t ? 1 : 2)];
	if (k->d[k->rank - (key_t ? 2 : 1)] != E || v->d[v->rank - 2] != S)
		return -EINVAL;
	nb = q->rank;
	if (k->rank > nb)
		nb = k->rank;
	if (v->rank > nb)
		nb = v->rank;
	nb -= 2;
	out->rank = nb + 2;
	for (i = 0; i < nb; i++) {
		int64_t d[3], m = 1;

		for (j = 0; j < 3; j++) {
			r = i - (nb - (s[j]->rank - 2));
			d[j] = r < 0 ? 1 : s[j]->d[r];
			if (d[j] > m)
				m = d[j];
		}
		for (j = 0; j < 3; j++) {
			if (d[j] == 1 || d[j] == m)
				continue;
			/* grouped heads: key and value, the axis before L */
			if (j == 0 || i != nb - 1 || d[0] != m || !d[j] ||
			    m % d[j])
				return -EINVAL;
		}
		out->d[i] = m;
	}
	out->d[nb] = q->d[q->rank - 2];
	out->d[nb + 1] = v->d[v->rank - 1];
	*scores = *out;
	scores->d[nb + 1] = S;
	return 0;
}

static int fattn_infer(struct npr_graph *g, struct npr_node *n)
{
	static const char *const names[] = { "query", "key", "value" };
	const struct npr_fattn_params *p = n->params;
	struct npr_value *o = npr_out(g, n, 0);
	struct npr_shape full, sc, mb;
	char b1[128], b2[128], b3[128];
	int i;

	for (i = 0; i < 3; i++) {
		struct npr_value *x = npr_in(g, n, i);

		if (x->type != NPR_ELEM_F32)
			return npr_node_err(n, -EINVAL,
					    "%s must be f32, got %s", names[i],
					    npr_elem_name(x->type));
	}
	if (npr_fattn_shape(&npr_in(g, n, 0)->shape, &npr_in(g, n, 1)->shape,
			    &npr_in(g, n, 2)->shape, p->key_t, &full, &sc))
		return npr_node_err(n, -EINVAL,
				    "query %s, key %s and value %s do not fit",
				    npr_shape_str(&npr_in(g, n, 0)->shape, b1,
						  sizeof(b1)),
				    npr_shape_str(&npr_in(g, n, 1)->shape, b2,
						  sizeof(b2)),
				    npr_shape_str(&npr_in(g, n, 2)->shape, b3,
						  sizeof(b3)));
	if (n->nin == 4) {
		struct npr_value *m = npr_in(g, n, 3);
		unsigned int want = p->mask == NPR_FATTN_MASK_ADD ?
				    NPR_ELEM_F32 : NPR_ELEM_BOOLEAN;

		if (m->type != want)
			return npr_node_err(n, -EINVAL,
					    "mask must be %s, got %s",
					    npr_elem_name(want),
					    npr_elem_name(m->type));
		if (!npr_shape_static(&m->shape) ||
		    npr_shape_broadcast(&m->shape, &sc, &mb) ||
		    !npr_shape_eq(&mb, &sc))
			return npr_node_err(n, -EINVAL,
					    "mask %s does not broadcast to %s",
					    npr_shape_str(&m->shape, b1,
							  sizeof(b1)),
					    npr_shape_str(&sc, b2, sizeof(b2)));
	}
	o->type = NPR_ELEM_F32;
	o->shape = full;
	return 0;
}

static int fnorm_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const modes[] = { "layer", "rms", NULL };
	struct npr_fnorm_params *p;
	double eps;
	int err;

	(void)g;
	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (!npr_attr(n, "epsilon"))
		return npr_node_err(n, -EINVAL,
				    "attribute epsilon is required");
	err = npr_attr_enum(n, "mode", modes, 0, &p->mode);
	if (!err)
		err = npr_attr_int(n, "axis", -1, &p->axis);
	if (!err)
		err = npr_attr_float(n, "epsilon", 0, &eps);
	if (!err)
		err = npr_attr_bool(n, "eps_inside", true, &p->inside);
	if (err)
		return err;
	if (!isfinite(eps) || eps < 0)
		return npr_node_err(n, -EINVAL, "epsilon = %g is invalid", eps);
	p->eps = (float)eps;
	return 0;
}

/**
 * npr_fnorm_param_ok() - whether FusedNorm takes @p as a scale or bias
 * @x: the data's shape.
 * @axis: the first normalized axis, counted from the front.
 * @p: the scale's or bias's shape.
 *
 * One value, or one per element of the normalized axes: aligned to the
 * end of @x, equal to @x's dims from @axis on and 1 before.
 *
 * Return: true if it is.
 */
bool npr_fnorm_param_ok(const struct npr_shape *x, int64_t axis,
			const struct npr_shape *p)
{
	int64_t cnt = npr_shape_numel(p);
	int i, r;

	if (cnt == 1)
		return p->rank <= x->rank;
	if (cnt < 1 || p->rank > x->rank)
		return false;
	for (i = 0; i < p->rank; i++) {
		r = i + x->rank - p->rank;
		if (r < axis ? p->d[i] != 1 : p->d[i] != x->d[r])
			return false;
	}
	return true;
}

static int fnorm_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_fnorm_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	char b1[128], b2[128];
	int i, r = x->shape.rank;

	if (x->type != NPR_ELEM_F32)
		return npr_node_err(n, -EINVAL, "data must be f32, got %s",
				    npr_elem_name(x->type));
	if (p->axis < -r || p->axis >= r)
		return npr_node_err(n, -EINVAL,
				    "axis %lld is out of range for rank %d",
				    (long long)p->axis, r);
	if (p->axis < 0)
		p->axis += r;
	for (i = 1; i < n->nin; i++) {
		struct npr_value *v = npr_in(g, n, i);

		if (v->type != NPR_ELEM_F32 ||
		    !npr_fnorm_param_ok(&x->shape, p->axis, &v->shape))
			return npr_node_err(n, -EINVAL,
					    "%s %s %s does not fit data %s from axis %lld",
					    i == 1 ? "scale" : "bias",
					    npr_elem_name(v->type),
					    npr_shape_str(&v->shape, b1,
							  sizeof(b1)),
					    npr_shape_str(&x->shape, b2,
							  sizeof(b2)),
					    (long long)p->axis);
	}
	o->type = NPR_ELEM_F32;
	o->shape = x->shape;
	return 0;
}

const struct npr_op_def npr_ops_fused[] = {
	{ .type = "FusedAttention", .vmin = 1, .vmax = 1, .nin_min = 3,
	  .nin_max = 4, .parse = fattn_parse, .infer = fattn_infer },
	{ .type = "FusedNorm", .vmin = 1, .vmax = 1, .nin_min = 1,
	  .nin_max = 3, .parse = fnorm_parse, .infer = fnorm_infer },
	{ .type = NULL },
};
