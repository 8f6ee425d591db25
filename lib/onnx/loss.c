// SPDX-License-Identifier: MIT
/*
 * ONNX translators for the loss ops, decomposed into OpenVINO ops:
 *
 * NegativeLogLikelihoodLoss(input [N, C, d...], target [N, d...],
 * weight [C]): loss = -input[n, target, d...] * weight[target], zero where
 * target == ignore_index; reduction none, sum, or mean (the sum divided by
 * the sum of the weights used).  GatherElements picks the class, Gather
 * the weight.
 *
 * SoftmaxCrossEntropyLoss: the same over LogSoftmax(scores) along axis 1,
 * which is its second output.
 */
#include <errno.h>
#include <string.h>

#include "translate.h"

static int scalar_i64(struct onnx_ctx *c, int64_t v, const char *suffix)
{
	struct npr_shape s = { .rank = 0 };

	return npr_onnx_const(c, NPR_ELEM_I64, &s, &v, suffix);
}

/* log(softmax(x)) along axis 1, stable: x - max - log(sum(exp(x - max))). */
static int log_softmax1(struct onnx_ctx *c, int x)
{
	int64_t one = 1;
	int m, d, e, s, l;

	m = npr_onnx_reduce(c, "ReduceMax", x, &one, 1, true, "max");
	d = m < 0 ? m : npr_onnx_binary(c, "Subtract", x, m, "shifted");
	e = d < 0 ? d : npr_onnx_unary(c, "Exp", d, "exp");
	s = e < 0 ? e : npr_onnx_reduce(c, "ReduceSum", e, &one, 1, true,
					"sum");
	l = s < 0 ? s : npr_onnx_unary(c, "Log", s, "log");
	l = l < 0 ? l : npr_onnx_binary(c, "Subtract", d, l, "log_prob");
	if (l >= 0)
		c->g->vals[l].shape = *onnx_vshape(c, x);
	return l;
}

/*
 * The loss of log-probabilities @lp against @t with class weights @w (or
 * -1), as the attributes of the current node say, into @out.
 */
static int nll(struct onnx_ctx *c, int lp, int t, int w, int *out)
{
	const Onnx__AttributeProto *ia = npr_onnx_attr_find(c, "ignore_index");
	int64_t ii = 0, one = 1, axes[NPR_MAX_RANK];
	int mask = -1, ts = t, g, wt = -1, loss, in[3], node, r, i, err;
	char red[8];

	err = npr_onnx_attr_str(c, "reduction", "mean", red, sizeof(red));
	if (!err && ia)
		err = npr_onnx_attr_int(c, "ignore_index", 0, &ii);
	if (err)
		return err;
	if (strcmp(red, "none") && strcmp(red, "sum") && strcmp(red, "mean"))
		return npr_onnx_err(c, -EINVAL, "reduction \"%s\"", red);
	if (ia) {
		int k = scalar_i64(c, ii, "ignore_index"), z;

		if (k < 0)
			return k;
		if (c->g->vals[t].type != NPR_ELEM_I64) {
			node = npr_onnx_node(c, "ConvertLike", 1, "ignore_like",
					     2,
					     (int[]){ k, t }, 1, &k);
			if (node < 0)
				return node;
			c->g->vals[k].type = c->g->vals[t].type;
		}
		mask = npr_onnx_binary(c, "NotEqual", t, k, "keep");
		if (mask < 0)
			return mask;
		c->g->vals[mask].type = NPR_ELEM_BOOLEAN;
		z = npr_onnx_scalar(c, t, 0, "zero_class");
		if (z < 0)
			return z;
		in[0] = mask;
		in[1] = t;
		in[2] = z;
		node = npr_onnx_node(c, "Select", 1, "target", 3, in, 1, &ts);
		if (node < 0)
			return node;
		c->g->vals[ts].type = c->g->vals[t].type;
		c->g->vals[ts].shape = *onnx_vshape(c, t);
		err = npr_onnx_set_attr(c, node, "auto_broadcast", "numpy");
		if (err)
			return err;
	}
	/* -lp[n, t, d...] */
	in[0] = npr_onnx_with_list(c, "Unsqueeze", ts, &one, 1, "target_1");
	if (in[0] < 0)
		return in[0];
	in[1] = in[0];
	in[0] = lp;
	node = npr_onnx_node(c, "GatherElements", 6, "pick", 2, in, 1, &g);
	if (node < 0)
		return node;
	err = npr_onnx_set_attr(c, node, "axis", "1");
	if (err)
		return err;
	g = npr_onnx_with_list(c, "Squeeze", g, &one, 1, "picked");
	g = g < 0 ? g : npr_onnx_unary(c, "Negative", g, "neg");
	if (g < 0)
		return g;
	if (w >= 0) {
		int ax = scalar_i64(c, 0, "weight_axis");

		if (ax < 0)
			return ax;
		in[0] = w;
		in[1] = ts;
		in[2] = ax;
		node = npr_onnx_node(c, "Gather", 8, "weight", 3, in, 1, &wt);
		if (node < 0)
			return node;
		err = npr_onnx_set_attr(c, node, "batch_dims", "0");
		if (err)
			return err;
	}
	if (mask >= 0) {
		int m;

		in[0] = mask;
		in[1] = lp;
		node = npr_onnx_node(c, "ConvertLike", 1, "keep_f", 2, in, 1,
				     &m);
		if (node < 0)
			return node;
		c->g->vals[m].type = c->g->vals[lp].type;
		wt = wt < 0 ? m : npr_onnx_binary(c, "Multiply", wt, m,
						  "weight_kept");
		if (wt < 0)
			return wt;
	}
	loss = g;
	if (wt >= 0) {
		loss = npr_onnx_binary(c, "Multiply", g, wt,
				       strcmp(red, "none") ? "weighted" : NULL);
		if (loss < 0)
			return loss;
	}
	if (!strcmp(red, "none")) {
		if (loss == g) {
			/* name the result: an identity-like multiply by 1 */
			int k = npr_onnx_scalar(c, g, 1, "one");

			loss = k < 0 ? k : npr_onnx_binary(c, "Multiply", g, k,
							   NULL);
		}
		out[0] = loss;
		return loss < 0 ? loss : 0;
	}
	r = npr_onnx_known_rank(c, t, "the target");
	if (r < 0)
		return r;
	for (i = 0; i < r; i++)
		axes[i] = i;
	if (!strcmp(red, "sum") || wt < 0) {
		out[0] = npr_onnx_reduce(c, strcmp(red, "sum") ? "ReduceMean" :
					 "ReduceSum", loss, axes, r, false, NULL);
		return out[0] < 0 ? out[0] : 0;
	}
	in[0] = npr_onnx_reduce(c, "ReduceSum", loss, axes, r, false,
				"loss_sum");
	in[1] = in[0] < 0 ? in[0] :
		npr_onnx_reduce(c, "ReduceSum", wt, axes, r, false,
				"weight_sum");
	if (in[1] < 0)
		return in[1];
	out[0] = npr_onnx_binary(c, "Divide", in[0], in[1], NULL);
	return out[0] < 0 ? out[0] : 0;
}

static int tr_nll(struct onnx_ctx *c, int *out)
{
	return nll(c, c->vin[0], c->vin[1], c->nin > 2 ? c->vin[2] : -1,
		   out);
}

static int tr_sce(struct onnx_ctx *c, int *out)
{
	int lp = log_softmax1(c, c->vin[0]);

	if (lp < 0)
		return lp;
	out[1] = lp;
	return nll(c, lp, c->vin[1], c->nin > 2 ? c->vin[2] : -1, out);
}

const struct onnx_op npr_onnx_ops_loss[] = {
	{ "NegativeLogLikelihoodLoss", tr_nll, 2, 3, 1, NULL, 0 },
	{ "SoftmaxCrossEntropyLoss", tr_sce, 2, 3, 2, NULL, 0 },
	{ NULL },
};
