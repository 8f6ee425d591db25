// SPDX-License-Identifier: MIT
/*
 * The OpenVINO INT8 IR rules of the low-precision pass (lib/passes/lowp.c
 * runs them first): FakeQuantize as NprQuantize and NprDequantize, per
 * tensor or per channel; a MaxPool of a DQ on u8; a quantize and
 * dequantize in front of a convolution that reads a MaxPool or Concat of
 * such pairs.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes/lowp_graph.h"
#include "passes/lowp_rules.h"
#include "ops/eltwise.h"
#include "ops/nn.h"
#include "ops/quant.h"

static bool is(const struct npr_node *n, const char *type)
{
	return !strcmp(n->type, type);
}

static struct npr_node *prod(struct lowp *l, int v)
{
	int p = l->g->vals[v].producer;

	return p >= 0 && p < l->g->nnodes ? &l->g->nodes[p] : NULL;
}

/*
 * OpenVINO INT8 IR.  An activation FakeQuantize with 256 levels is a
 * quantize to u8 and a dequantize back: q = round((x - il) / (ih - il) *
 * 255) clamped to 0 .. 255, y = ol + q * (oh - ol) / 255.  With s = (ih
 * - il) / 255 and z = -il / s an integer, q = clamp(round(x / s) + z),
 * what NprQuantize computes; the same for the output limits and
 * NprDequantize (npr_lowp_grid()).  Limits per channel (axis 1) give
 * scales per channel, the ops' input 1, when every channel has the same
 * zero point (OpenVINO's FakeQuantizeDecomposition makes the same
 * quantize and a dequantize by per-channel Subtract and Multiply).  The
 * pair then meets the rules above like an ONNX Q and DQ.
 */

/* scale @sc as attribute @key of node @ni, or input 1 @cv (scales) */
static int scales_in(struct lowp *l, int ni, const char *key, float sc,
		     int cv)
{
	int x = l->g->nodes[ni].in[0], err;

	if (cv < 0)
		return npr_lowp_set(&l->g->nodes[ni], key, "%.9g", sc);
	err = npr_node_set_inputs(&l->g->nodes[ni], 2);
	if (!err) {
		l->g->nodes[ni].in[0] = x;
		l->g->nodes[ni].in[1] = cv;
	}
	return err;
}

/*
 * NprQuantize(@x) and NprDequantize of it, scales @sq and @sd (taken;
 * @nq and @nd of them): the dequantize's index, the quantize's just
 * before it.
 */
static int q_dq(struct lowp *l, int like, int x, float *sq, int64_t nq,
		int zq, float *sd, int64_t nd, int zd)
{
	struct npr_graph *g = l->g;
	float vq = sq[0], vd = sd[0];
	int qi, di, u, err, cq = -1, cd = -1;

	if (nq == 1)
		free(sq);
	if (nd == 1)
		free(sd);
	/* the constants first: the two nodes stay neighbours */
	if (nq > 1) {
		cq = npr_lowp_new_const(l, like, NPR_ELEM_F32, nq, 0, sq);
		if (cq < 0) {
			if (nd > 1)
				free(sd);
			return cq;
		}
	}
	if (nd > 1) {
		cd = npr_lowp_new_const(l, like, NPR_ELEM_F32, nd, 0, sd);
		if (cd < 0)
			return cd;
	}
	qi = npr_lowp_new_node(l, like, "NprQuantize", 1, &x);
	if (qi < 0)
		return qi;
	err = scales_in(l, qi, "y_scale", vq, cq);
	err = err ? err : npr_lowp_set(&g->nodes[qi], "y_zero", "%d", zq);
	err = err ? err : npr_lowp_infer(g, qi);
	if (err)
		return err;
	u = g->nodes[qi].out[0];
	di = npr_lowp_new_node(l, like, "NprDequantize", 1, &u);
	if (di < 0)
		return di;
	err = scales_in(l, di, "a_scale", vd, cd);
	err = err ? err : npr_lowp_set(&g->nodes[di], "a_zero", "%d", zd);
	err = err ? err : npr_lowp_infer(g, di);
	return err ? err : di;
}

/* FakeQuantize node @fi as NprQuantize and NprDequantize */
int npr_lowp_fq(struct lowp *l, int fi)
{
	struct npr_graph *g = l->g;
	const struct npr_node *n = &g->nodes[fi];
	const struct npr_eltwise_params *ep = n->params;
	const struct npr_shape *xs;
	float *si = NULL, *so = NULL;
	int64_t ni = 0, no = 0;
	int zi, zo, di;

	if (!is(n, "FakeQuantize") || n->nin != 5 || !ep ||
	    ep->levels != 256 || g->vals[n->in[0]].type != NPR_ELEM_F32 ||
	    g->vals[n->out[0]].type != NPR_ELEM_F32 ||
	    g->vals[n->in[0]].data)
		return 0;
	xs = &g->vals[n->in[0]].shape;
	si = npr_lowp_grids(g, n->in[1], n->in[2], xs, &ni, &zi);
	so = si ? npr_lowp_grids(g, n->in[3], n->in[4], xs, &no, &zo) : NULL;
	if (!si || !so || !npr_lowp_place_ok(g, fi, 1)) {
		free(si);
		free(so);
		return 0;
	}
	di = q_dq(l, fi, n->in[0], si, ni, zi, so, no, zo);
	if (di < 0)
		return di;
	/* the quantize goes before the FakeQuantize, which then gives way */
	npr_lowp_place_before(l->g, di - 1, fi);
	return npr_lowp_finish(l, di, g->nodes[fi].out[0]);
}

/*
 * The range of the DQs under value @v through MaxPool and Concat nodes
 * (each value read once); *@same: they all have scale *@s0, zero *@z0.
 */
static bool leaves(struct lowp *l, int v, float *lo, float *hi, float *s0,
		   int *z0, bool *same, int depth)
{
	const struct npr_node *n;
	float s;
	int z, j;

	if (npr_lowp_dq_src(l, v, &s, &z) >= 0) {
		if (*s0 == 0) {
			*s0 = s;
			*z0 = z;
		}
		*same = *same && s == *s0 && z == *z0;
		*lo = fminf(*lo, (float)-z * s);
		*hi = fmaxf(*hi, (float)(255 - z) * s);
		return l->uses[v] == 1;
	}
	n = prod(l, v);
	if (!n || n->dead || depth > NPR_LOWP_REGION_DEPTH || l->uses[v] != 1 ||
	    l->g->vals[v].type != NPR_ELEM_F32)
		return false;
	if (npr_lowp_pool_ok(l, n))
		return leaves(l, n->in[0], lo, hi, s0, z0, same, depth + 1);
	if (!is(n, "Concat") || n->nout != 1 || n->nin > NPR_LOWP_REGION_NODES)
		return false;
	for (j = 0; j < n->nin; j++)
		if (!leaves(l, n->in[j], lo, hi, s0, z0, same, depth + 1))
			return false;
	return true;
}

static bool is_conv(const struct npr_node *n)
{
	return is(n, "Convolution") || is(n, "GroupConvolution");
}

/*
 * A Convolution reading MaxPool or Concat of FakeQuantize outputs (the
 * IR quantizes before the pool or the concatenation, not after): a
 * quantize and dequantize between them on the grid that covers every
 * input (the inputs' own grid when they share one: then exact; else
 * the widest range, one more rounding for the narrower ones), so that
 * the region rule keeps the MaxPool or Concat in u8 and the convolutions
 * read u8.  Only when every reader of the value is such a convolution.
 */
int npr_lowp_requant(struct lowp *l, int ci)
{
	struct npr_graph *g = l->g;
	const struct npr_node *n = &g->nodes[ci];
	float lo = INFINITY, hi = -INFINITY, s0 = 0, s, sc, *sq, *sd;
	const float *wsc;
	int v, z0 = 0, z, i, j, di, uses, y, qv;
	int64_t ns;
	int8_t *wc;
	bool same = true, ok;

	if (!is_conv(n) || n->nin != 2)
		return 0;
	v = n->in[0];
	if (npr_lowp_dq_src(l, v, &s, &z) >= 0 || !g->vals[n->in[1]].data)
		return 0;
	/* int8 weights: the convolution rule will take it */
	wc = npr_lowp_w_centred(l->g, n->in[1], 0,
				g->vals[n->in[1]].shape.d[0], &qv, &wsc, &ns);
	if (!wc)
		return 0;
	free(wc);
	for (i = 0; i < g->nnodes; i++)
		for (j = 0; !g->nodes[i].dead && j < g->nodes[i].nin; j++)
			if (g->nodes[i].in[j] == v &&
			    (j || !is_conv(&g->nodes[i])))
				return 0;
	/* leaves() wants the value read once: count the convolutions once */
	uses = l->uses[v];
	l->uses[v] = 1;
	ok = leaves(l, v, &lo, &hi, &s0, &z0, &same, 0);
	l->uses[v] = uses;
	if (!ok)
		return 0;
	if (same) {
		sc = s0;
		z = z0;
	} else if (!npr_lowp_grid(lo, hi, &sc, &z)) {
		return 0;
	}
	if (!npr_lowp_place_ok(g, ci, 2))
		return 0;
	sq = malloc(sizeof(*sq));
	sd = malloc(sizeof(*sd));
	if (!sq || !sd) {
		free(sq);
		free(sd);
		return -ENOMEM;
	}
	*sq = *sd = sc;
	di = q_dq(l, ci, v, sq, 1, z, sd, 1, z);
	if (di < 0)
		return di;
	y = g->nodes[di].out[0];
	npr_lowp_place_before(l->g, di - 1, ci);
	npr_lowp_place_before(l->g, di, ci);
	for (i = 0; i < g->nnodes; i++)
		if (!g->nodes[i].dead && is_conv(&g->nodes[i]) &&
		    g->nodes[i].in[0] == v)
			g->nodes[i].in[0] = y;
	return 0;
}

/*
 * MaxPool(DQ(x)) is DQ(MaxPool(x)) for a positive scale (the maximum
 * commutes with a non-decreasing function; the padding -inf with u8 0):
 * the pool runs on u8 in the DQ's place, and an NprDequantize after it
 * is what its readers see, so a convolution reads the u8 pool and an Add
 * before a Q becomes an NprQAdd (OpenVINO's low-precision rules move a
 * dequantization below MaxPool the same way).
 */
int npr_lowp_pool_dq(struct lowp *l, int pi)
{
	struct npr_graph *g = l->g;
	const struct npr_node *n = &g->nodes[pi];
	int x, q, z, ni, v, err;
	float s;

	if (!npr_lowp_pool_ok(l, n) || g->vals[n->out[0]].type != NPR_ELEM_F32)
		return 0;
	x = n->in[0];
	q = npr_lowp_dq_src(l, x, &s, &z);
	if (q < 0 || l->uses[x] != 1)
		return 0;
	ni = npr_lowp_clone(g, pi, 1, &q);
	v = ni < 0 ? ni : npr_lowp_place(g, ni, g->vals[x].producer);
	ni = v < 0 ? v : npr_lowp_new_node(l, pi, "NprDequantize", 1, &v);
	if (ni < 0)
		return ni;
	err = npr_lowp_set(&g->nodes[ni], "a_scale", "%.9g", s);
	err = err ? err : npr_lowp_set(&g->nodes[ni], "a_zero", "%d", z);
	return err ? err : npr_lowp_finish(l, ni, g->nodes[pi].out[0]);
}

