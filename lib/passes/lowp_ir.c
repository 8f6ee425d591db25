// SPDX-License-Identifier: MIT
/*
 * The OpenVINO INT8 IR rules of the low-precision pass (lib/passes/lowp.c
 * runs them first): FakeQuantize as NprQuantize and NprDequantize, per
 * tensor or per channel; a MaxPool of a DQ, and a Concat of DQs on one
 * grid, on u8; a quantize and dequantize in front of a convolution that
 * reads a MaxPool or Concat of such pairs.  And one the later rules run,
 * for IR and QDQ alike: a DQ times values per channel, plus constants
 * per channel, requantized (npr_lowp_scale()).
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


/*
 * Concat(DQ(a), DQ(b), ...) along the channels, every DQ on one grid
 * (scale and zero point), is DQ(Concat(a, b, ...)) exactly: the Concat
 * runs on u8 in the place of the last DQ that only it reads (after every
 * u8 input), an NprDequantize after it (OpenVINO's low-precision rules
 * move a dequantization below a Concat the same way when the scales
 * agree).  A CReLU block (x and its negation quantized alike) is one.
 */
int npr_lowp_concat_dq(struct lowp *l, int ci)
{
	struct npr_graph *g = l->g;
	struct npr_node *n = &g->nodes[ci];
	int in[NPR_LOWP_REGION_NODES], j, z, z0 = 0, last = -1, ni, v, err;
	float s, s0 = 0;
	int64_t axis;

	if (!is(n, "Concat") || n->nout != 1 ||
	    n->nin > NPR_LOWP_REGION_NODES ||
	    g->vals[n->out[0]].shape.rank != 4 ||
	    g->vals[n->out[0]].type != NPR_ELEM_F32 ||
	    npr_attr_int(n, "axis", 0, &axis) || (axis != 1 && axis != -3))
		return 0;
	for (j = 0; j < n->nin; j++) {
		in[j] = npr_lowp_dq_src(l, n->in[j], &s, &z);
		if (in[j] < 0 || (j && (s != s0 || z != z0)))
			return 0;
		s0 = s;
		z0 = z;
		/* the place: the last DQ that only the Concat reads */
		if (l->uses[n->in[j]] == 1 &&
		    g->vals[n->in[j]].producer > last)
			last = g->vals[n->in[j]].producer;
	}
	for (j = 0; j < n->nin; j++)
		if (g->vals[in[j]].producer >= last)
			return 0;
	ni = npr_lowp_clone(g, ci, n->nin, in);
	v = ni < 0 ? ni : npr_lowp_place(g, ni, last);
	ni = v < 0 ? v : npr_lowp_new_node(l, ci, "NprDequantize", 1, &v);
	if (ni < 0)
		return ni;
	err = npr_lowp_set(&g->nodes[ni], "a_scale", "%.9g", s0);
	err = err ? err : npr_lowp_set(&g->nodes[ni], "a_zero", "%d", z0);
	return err ? err : npr_lowp_finish(l, ni, g->nodes[ci].out[0]);
}

/*
 * DQ(x) times values per channel (f32 [1, C, 1, ...]: constants, or
 * computed at run time, an attention gate), optional Add of constants
 * per channel (a folded BatchNorm), Relu/Clamp, Q: an NprQScale with the
 * multipliers m[c] = v[c] * sx / sy (folded now for constants, else a
 * Multiply of the C values in the place of the group's Multiply) and the
 * offsets b[c] / sy: one u8 pass where the DQ, the Multiply, the Add
 * and the Q were four over f32 (OpenVINO's low-precision rules fold
 * such a Multiply and Add into the dequantization the same way).
 */
int npr_lowp_scale(struct lowp *l, int mi)
{
	struct npr_graph *g = l->g;
	const struct npr_node *n = &g->nodes[mi];
	const struct npr_shape *ys = &g->vals[n->out[0]].shape, *vs;
	int qx, zx, zy, qy, o, j, in[3], ni, v, err, qlo, qhi, u, last;
	const float *vc, *b = NULL;
	float sx, sy, lo, hi, *c, *a;
	int64_t C, k, nb;

	if (!is(n, "Multiply") || n->nin != 2 || ys->rank < 3 ||
	    g->vals[n->out[0]].type != NPR_ELEM_F32)
		return 0;
	o = npr_lowp_dq_src(l, n->in[0], &sx, &zx) >= 0 ? 0 : 1;
	qx = npr_lowp_dq_src(l, n->in[o], &sx, &zx);
	vs = &g->vals[n->in[!o]].shape;
	C = ys->d[1];
	if (qx < 0 || g->vals[n->in[!o]].type != NPR_ELEM_F32 ||
	    !npr_shape_eq(&g->vals[qx].shape, ys) || vs->rank != ys->rank ||
	    vs->d[1] != C)
		return 0;
	for (j = 0; j < vs->rank; j++)
		if (j != 1 && vs->d[j] != 1)
			return 0;
	last = n->out[0];
	u = npr_lowp_sole_user(l, last);
	if (u >= 0 && is(&g->nodes[u], "Add") && g->nodes[u].nin == 2 &&
	    npr_shape_eq(&g->vals[g->nodes[u].out[0]].shape, ys)) {
		b = npr_lowp_chan_of(g, g->nodes[u].in[0] == last ?
				     g->nodes[u].in[1] : g->nodes[u].in[0],
				     ys, 1, C, &nb);
		if (b)
			last = g->nodes[u].out[0];
	}
	qy = npr_lowp_q_after(l, npr_lowp_acts(l, last, &lo, &hi), &sy, &zy);
	if (qy < 0)
		return 0;
	vc = g->vals[n->in[!o]].data;
	c = malloc((vc ? C : 1) * sizeof(*c));
	a = malloc(C * sizeof(*a));
	if (!c || !a) {
		free(c);
		free(a);
		return -ENOMEM;
	}
	for (k = 0; k < C; k++)
		a[k] = b ? b[nb == 1 ? 0 : k] / sy : 0.0f;
	for (k = 0; k < (vc ? C : 1); k++)
		c[k] = vc ? vc[k] * (sx / sy) : sx / sy;
	in[2] = npr_lowp_new_const(l, mi, NPR_ELEM_F32, C, 0, a);
	if (vc) {
		v = npr_lowp_new_const(l, mi, NPR_ELEM_F32, C, 0, c);
	} else {
		in[0] = n->in[!o];
		in[1] = npr_lowp_new_const(l, mi, NPR_ELEM_F32, 1, 0, c);
		ni = in[1] < 0 ? in[1] :
		     npr_lowp_new_node(l, mi, "Multiply", 2, in);
		/* in the Multiply's place, which moves to ni */
		v = ni < 0 ? ni : npr_lowp_place(g, ni, mi);
	}
	if (v < 0 || in[2] < 0)
		return v < 0 ? v : in[2];
	in[0] = qx;
	in[1] = v;
	ni = npr_lowp_new_node(l, mi, "NprQScale", 3, in);
	if (ni < 0)
		return ni;
	npr_lowp_qbounds(lo, hi, sy, zy, &qlo, &qhi);
	err = npr_lowp_set(&g->nodes[ni], "x_zero", "%d", zx);
	err = err ? err : npr_lowp_set(&g->nodes[ni], "y_zero", "%d", zy);
	err = err ? err : npr_lowp_set(&g->nodes[ni], "lo", "%d", qlo);
	err = err ? err : npr_lowp_set(&g->nodes[ni], "hi", "%d", qhi);
	return err ? err : npr_lowp_finish(l, ni, qy);
}
