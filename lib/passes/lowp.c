// SPDX-License-Identifier: MIT
/*
 * The low-precision pass: run on a compiled graph (shapes inferred,
 * constants folded) for devices with int8 kernels, it finds what
 * ONNX QuantizeLinear and DequantizeLinear became there and computes
 * those groups in u8 (the ops of lib/ops/quant.h):
 *
 * - DQ(x) and DQ(weights) into Convolution or GroupConvolution, then an
 *   optional per-channel bias Add and Relu/Clamp, then an optional Q:
 *   NprQConv, with the weights as int8 rows, their sums (the x zero
 *   point's correction) and the per-channel scale and offset made here,
 *   once; u8 out when a Q follows, else f32;
 * - DQ(a) + DQ(b) (same shape), optional Relu/Clamp, Q: NprQAdd;
 * - DQ(x), Relu/Clamp chain, Q: NprQLut, a 256-byte table computed with
 *   the same float operations as the nodes it replaces;
 * - any other DQ: NprDequantize; any other Q: NprQuantize.
 *
 * DQ here is Convert(u8 -> f32) [-> Subtract(scalar)] -> Multiply(scalar)
 * (weights: i8, per-channel scales along axis 0, zero points 0); Q is
 * Divide(scalar) -> Round(half_to_even) [-> Add(scalar)] ->
 * Clamp(0, 255) -> Convert(u8): what lib/onnx/math.c translates them
 * into.  Everything else stays f32.  Each new node takes the place of
 * the last node of its group (finish()); the others are left to the
 * dead-node marking.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "passes/lowp.h"
#include "ops/eltwise.h"
#include "ops/infer.h"
#include "ops/math.h"
#include "ops/nn.h"
#include "ops/quant.h"

struct lowp {
	struct npr_graph *g;
	int *uses;
};

static bool is(const struct npr_node *n, const char *type)
{
	return !strcmp(n->type, type);
}

static struct npr_node *prod(struct lowp *l, int v)
{
	int p = l->g->vals[v].producer;

	return p >= 0 && p < l->g->nnodes ? &l->g->nodes[p] : NULL;
}

static bool scalar_of(struct lowp *l, int v, float *f)
{
	const struct npr_value *x = &l->g->vals[v];

	if (!x->data || x->type != NPR_ELEM_F32 ||
	    npr_shape_numel(&x->shape) != 1)
		return false;
	*f = *(const float *)x->data;
	return isfinite(*f);
}

static bool zero_of(struct lowp *l, int v, int *z)
{
	float f;

	if (!scalar_of(l, v, &f) || f != floorf(f) || f < 0 || f > 255)
		return false;
	*z = (int)f;
	return true;
}

/* The only live node reading @v, or -1. */
static int sole_user(struct lowp *l, int v)
{
	struct npr_graph *g = l->g;
	int i, j;

	if (l->uses[v] != 1)
		return -1;
	for (i = 0; i < g->nnodes; i++)
		for (j = 0; !g->nodes[i].dead && j < g->nodes[i].nin; j++)
			if (g->nodes[i].in[j] == v)
				return i;
	return -1;
}

/* @v = DQ(u8 value): the u8 value, its scale and zero point; or -1. */
static int dq_src(struct lowp *l, int v, float *s, int *z)
{
	struct npr_node *m = prod(l, v), *a, *c;
	int o;

	if (!m || m->dead || !is(m, "Multiply") || m->nin != 2)
		return -1;
	o = scalar_of(l, m->in[1], s) ? 0 : scalar_of(l, m->in[0], s) ? 1 : -1;
	if (o < 0 || !(*s > 0))
		return -1;
	a = prod(l, m->in[o]);
	*z = 0;
	if (a && is(a, "Subtract") && a->nin == 2) {
		if (!zero_of(l, a->in[1], z))
			return -1;
		a = prod(l, a->in[0]);
	}
	c = a;
	if (!c || !is(c, "Convert") || c->nin != 1 ||
	    l->g->vals[c->in[0]].type != NPR_ELEM_U8 ||
	    l->g->vals[c->out[0]].type != NPR_ELEM_F32 ||
	    l->g->vals[c->in[0]].data)
		return -1;
	return c->in[0];
}

/* Divide node @d starts a Q: its u8 output, scale and zero point; or -1 */
static int q_from(struct lowp *l, int d, float *s, int *z)
{
	struct npr_graph *g = l->g;
	const struct npr_node *n = &g->nodes[d];
	const struct npr_eltwise_params *ep;
	const struct npr_math_params *mp;
	int u;

	if (n->dead || !is(n, "Divide") || n->nin != 2 ||
	    !scalar_of(l, n->in[1], s) || !(*s > 0) ||
	    g->vals[n->in[0]].type != NPR_ELEM_F32)
		return -1;
	u = sole_user(l, n->out[0]);
	if (u < 0 || !is(&g->nodes[u], "Round"))
		return -1;
	mp = g->nodes[u].params;
	if (!mp || mp->op != NPR_MATH_ROUND_EVEN)
		return -1;
	u = sole_user(l, g->nodes[u].out[0]);
	*z = 0;
	if (u >= 0 && is(&g->nodes[u], "Add") && g->nodes[u].nin == 2) {
		n = &g->nodes[u];
		if (!zero_of(l, n->in[1], z))
			return -1;
		u = sole_user(l, n->out[0]);
	}
	if (u < 0 || !is(&g->nodes[u], "Clamp"))
		return -1;
	ep = g->nodes[u].params;
	if (ep->lo != 0 || ep->hi != 255)
		return -1;
	u = sole_user(l, g->nodes[u].out[0]);
	if (u < 0 || !is(&g->nodes[u], "Convert"))
		return -1;
	if (g->vals[g->nodes[u].out[0]].type != NPR_ELEM_U8)
		return -1;
	return g->nodes[u].out[0];
}

/* @v's only reader starts a Q: as q_from(); or -1 */
static int q_after(struct lowp *l, int v, float *s, int *z)
{
	int u = sole_user(l, v);

	return u < 0 ? -1 : q_from(l, u, s, z);
}

/*
 * Relu and Clamp nodes from @v on, each the only reader of the one
 * before: their bounds in *lo, *hi; returns the last value.
 */
static int acts(struct lowp *l, int v, float *lo, float *hi)
{
	struct npr_graph *g = l->g;
	int u;

	*lo = -INFINITY;
	*hi = INFINITY;
	for (;;) {
		const struct npr_node *n;

		u = sole_user(l, v);
		if (u < 0)
			return v;
		n = &g->nodes[u];
		if (n->nin != 1 || n->nout != 1 ||
		    g->vals[n->out[0]].type != NPR_ELEM_F32)
			return v;
		if (is(n, "Relu") || is(n, "ReLU")) {
			*lo = fmaxf(*lo, 0.0f);
			*hi = fmaxf(*hi, 0.0f);
		} else if (is(n, "Clamp")) {
			const struct npr_eltwise_params *ep = n->params;

			*lo = fminf(fmaxf(*lo, (float)ep->lo), (float)ep->hi);
			*hi = fmaxf(fminf(*hi, (float)ep->hi), (float)ep->lo);
		} else {
			return v;
		}
		v = n->out[0];
	}
}

/* the u8 bounds of Q(clamp(y, lo, hi)) with scale @s, zero point @z */
static void qbounds(float lo, float hi, float s, int z, int *qlo, int *qhi)
{
	float a = isinf(lo) ? -1024 : fmaxf(fminf(nearbyintf(lo / s), 1024), -1024);
	float b = isinf(hi) ? 1024 : fmaxf(fminf(nearbyintf(hi / s), 1024), -1024);

	*qlo = (int)fmaxf(a + (float)z, 0.0f);
	*qhi = (int)fminf(b + (float)z, 255.0f);
	if (*qhi < *qlo)
		*qhi = *qlo;
}

static int new_node(struct lowp *l, int like, const char *type, int nin,
		    const int *in)
{
	struct npr_graph *g = l->g;
	char name[256];
	int ni, j, err;

	snprintf(name, sizeof(name), "%.200s/%s", g->nodes[like].name, type);
	ni = npr_graph_add_node(g, name, type, 1, g->nodes[like].layer_id);
	if (ni < 0)
		return ni;
	g->nodes[ni].op = npr_op_find(type, 1);
	err = npr_node_set_inputs(&g->nodes[ni], nin);
	if (!err)
		err = npr_node_set_outputs(g, ni, 1);
	if (err)
		return err;
	for (j = 0; j < nin; j++)
		g->nodes[ni].in[j] = in[j];
	return ni;
}

/* a Const node holding @data (taken), its value index */
static int new_const(struct lowp *l, int like, unsigned int type,
		     int64_t d0, int64_t d1, void *data)
{
	struct npr_graph *g = l->g;
	int ni = data ? new_node(l, like, "Const", 0, NULL) : -ENOMEM;
	struct npr_value *v;

	if (ni < 0) {
		free(data);
		return ni;
	}
	v = &g->vals[g->nodes[ni].out[0]];
	v->type = type;
	v->shape.rank = d1 ? 2 : 1;
	v->shape.d[0] = d0;
	v->shape.d[1] = d1;
	v->owned = data;
	v->data = data;
	v->nbytes = npr_tensor_bytes(type, d1 ? d0 * d1 : d0);
	return g->nodes[ni].out[0];
}

static int set(struct npr_node *n, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int set(struct npr_node *n, const char *key, const char *fmt, ...)
{
	char buf[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return npr_node_add_attr(n, key, buf);
}

/* nodes @a and @b trade places (and their outputs' producer fields) */
static void swap_nodes(struct npr_graph *g, int a, int b)
{
	struct npr_node t = g->nodes[a];
	int j;

	g->nodes[a] = g->nodes[b];
	g->nodes[b] = t;
	for (j = 0; j < g->nodes[a].nout; j++)
		g->vals[g->nodes[a].out[j]].producer = a;
	for (j = 0; j < g->nodes[b].nout; j++)
		g->vals[g->nodes[b].out[j]].producer = b;
}

/*
 * Parse and infer new node @ni, then make it the producer of value
 * @old, in the place of the node that produced it: readers, ports and
 * names stay as they were, the order stays topological (the new node's
 * inputs come before the group it replaces), and the replaced node
 * writes a fresh value no one reads, so dead-node marking drops it.
 */
static int finish(struct lowp *l, int ni, int old)
{
	struct npr_graph *g = l->g;
	struct npr_node *n = &g->nodes[ni];
	int err = n->op->parse ? n->op->parse(g, n) : 0;
	int nv = n->out[0], p = g->vals[old].producer, port;

	if (!err)
		err = n->op->infer(g, n);
	if (err)
		return err;
	if (g->vals[nv].type != g->vals[old].type ||
	    !npr_shape_eq(&g->vals[nv].shape, &g->vals[old].shape))
		return npr_node_err(n, -EINVAL, "low precision: the output changed");
	port = g->vals[old].port;
	g->nodes[p].out[port] = nv;
	g->vals[nv].producer = p;
	g->vals[nv].port = port;
	n->out[0] = old;
	g->vals[old].producer = ni;
	g->vals[old].port = 0;
	swap_nodes(g, p, ni);
	return 0;
}

/*
 * The int8 weights behind folded f32 weights @w: [K, ...] i8 data and
 * the per-channel scales (@ns of them: 1 or K); NULL when @w is not a
 * folded DQ of i8 weights with zero points 0.
 */
static const int8_t *w_src(struct lowp *l, int w, int64_t numel,
			   const float **sc, int64_t *ns)
{
	struct npr_node *m = prod(l, w), *a, *c;
	const struct npr_value *sv, *qv;
	int k;

	if (m && is(m, "Reshape"))
		m = prod(l, m->in[0]);
	if (!m || !is(m, "Multiply") || m->nin != 2)
		return NULL;
	sv = &l->g->vals[m->in[1]];
	a = prod(l, m->in[0]);
	if (a && is(a, "Subtract") && a->nin == 2) {
		const struct npr_value *zv = &l->g->vals[a->in[1]];

		if (!zv->data || zv->type != NPR_ELEM_F32)
			return NULL;
		for (k = 0; k < npr_shape_numel(&zv->shape); k++)
			if (((const float *)zv->data)[k] != 0)
				return NULL;
		a = prod(l, a->in[0]);
	}
	c = a;
	if (!c || !is(c, "Convert") || c->nin != 1)
		return NULL;
	qv = &l->g->vals[c->in[0]];
	if (!qv->data || qv->type != NPR_ELEM_I8 || !sv->data ||
	    sv->type != NPR_ELEM_F32 || npr_shape_numel(&qv->shape) != numel)
		return NULL;
	*sc = sv->data;
	*ns = npr_shape_numel(&sv->shape);
	return qv->data;
}

/* Is Add @a (reading @v) an Add of K per-channel f32 constants? */
static const float *bias_of(struct lowp *l, const struct npr_node *a, int v,
			    int64_t K)
{
	int other = a->in[0] == v ? a->in[1] : a->in[0];
	const struct npr_value *ov = &l->g->vals[other];
	const struct npr_shape *s = &ov->shape;
	int k;

	if (!is(a, "Add") || a->nin != 2 || !ov->data ||
	    ov->type != NPR_ELEM_F32 || npr_shape_numel(s) != K ||
	    s->rank != 4 || s->d[1] != K ||
	    !npr_shape_eq(&l->g->vals[a->out[0]].shape,
			  &l->g->vals[v].shape))
		return NULL;
	for (k = 0; k < 4; k++)
		if (k != 1 && s->d[k] != 1)
			return NULL;
	return ov->data;
}

static int try_conv(struct lowp *l, int ci)
{
	struct npr_graph *g = l->g;
	struct npr_node *n = &g->nodes[ci];
	const struct npr_conv_params *cp = n->params;
	const struct npr_shape *ws = &g->vals[n->in[1]].shape;
	const int8_t *wq;
	const float *wsc, *bias = NULL;
	int64_t K, G, cg, kh, kw, win, kr, ns, k, r;
	float sx, sy = 1, lo, hi;
	int qx, zx, zy = 0, v, u, last, qy, ni, in[5], err, qlo, qhi;
	int8_t *W;
	int32_t *ws32;
	float *mul, *add;

	if (!cp || cp->nsp != 2 || cp->auto_pad != NPR_PAD_EXPLICIT ||
	    g->vals[n->out[0]].type != NPR_ELEM_F32 ||
	    !g->vals[n->in[1]].data)
		return 0;
	qx = dq_src(l, n->in[0], &sx, &zx);
	if (qx < 0)
		return 0;
	K = g->vals[n->out[0]].shape.d[1];
	G = is(n, "GroupConvolution") ? ws->d[0] : 1;
	if (G < 1 || K % G)
		return 0;
	cg = g->vals[n->in[0]].shape.d[1] / G;
	kh = ws->d[ws->rank - 2];
	kw = ws->d[ws->rank - 1];
	win = cg * kh * kw;
	wq = w_src(l, n->in[1], K * win, &wsc, &ns);
	if (!wq || (ns != 1 && ns != K))
		return 0;
	/* the chain after it */
	v = n->out[0];
	u = sole_user(l, v);
	if (u >= 0 && (bias = bias_of(l, &g->nodes[u], v, K)))
		v = g->nodes[u].out[0];
	last = acts(l, v, &lo, &hi);
	qy = q_after(l, last, &sy, &zy);
	if (qy < 0) {
		/* f32 out: the last node of the chain gives way */
		qy = last;
	}
	kr = (win + 3) & ~(int64_t)3;
	W = calloc(K * kr, 1);
	ws32 = calloc(K, sizeof(*ws32));
	mul = malloc(K * sizeof(*mul));
	add = malloc(K * sizeof(*add));
	if (!W || !ws32 || !mul || !add) {
		free(W);
		free(ws32);
		free(mul);
		free(add);
		return -ENOMEM;
	}
	for (k = 0; k < K; k++) {
		float s = sx * wsc[ns == 1 ? 0 : k];
		float b = bias ? bias[k] : 0.0f;

		for (r = 0; r < win; r++) {
			W[k * kr + r] = wq[k * win + r];
			ws32[k] += wq[k * win + r];
		}
		mul[k] = s;
		add[k] = b;
	}
	in[0] = qx;
	in[1] = new_const(l, ci, NPR_ELEM_I8, K, kr, W);
	in[2] = in[1] < 0 ? in[1] :
		new_const(l, ci, NPR_ELEM_I32, K, 0, ws32);
	in[3] = in[2] < 0 ? in[2] : new_const(l, ci, NPR_ELEM_F32, K, 0, mul);
	in[4] = in[3] < 0 ? in[3] : new_const(l, ci, NPR_ELEM_F32, K, 0, add);
	if (in[4] < 0) {
		if (in[1] < 0)
			free(ws32);
		if (in[2] < 0)
			free(mul);
		if (in[3] < 0)
			free(add);
		return in[4];
	}
	ni = new_node(l, ci, "NprQConv", 5, in);
	if (ni < 0)
		return ni;
	n = &g->nodes[ni];
	cp = g->nodes[ci].params;
	err = set(n, "strides", "%lld,%lld", (long long)cp->stride[0],
		  (long long)cp->stride[1]);
	err = err ? err : set(n, "dilations", "%lld,%lld",
			      (long long)cp->dil[0], (long long)cp->dil[1]);
	err = err ? err : set(n, "pads_begin", "%lld,%lld",
			      (long long)cp->pb[0], (long long)cp->pb[1]);
	err = err ? err : set(n, "pads_end", "%lld,%lld",
			      (long long)cp->pe[0], (long long)cp->pe[1]);
	err = err ? err : set(n, "kernel", "%lld,%lld", (long long)kh,
			      (long long)kw);
	err = err ? err : set(n, "group", "%lld", (long long)G);
	err = err ? err : set(n, "kr", "%lld", (long long)kr);
	err = err ? err : set(n, "x_zero", "%d", zx);
	if (g->vals[qy].type == NPR_ELEM_U8) {
		qbounds(lo, hi, sy, zy, &qlo, &qhi);
		err = err ? err : set(n, "y_zero", "%d", zy);
		err = err ? err : set(n, "y_scale", "%.9g", sy);
		err = err ? err : set(n, "lo", "%d", qlo);
		err = err ? err : set(n, "hi", "%d", qhi);
	} else {
		err = err ? err : set(n, "out", "f32");
		if (!isinf(lo))
			err = err ? err : set(n, "flo", "%.9g", lo);
		if (!isinf(hi))
			err = err ? err : set(n, "fhi", "%.9g", hi);
	}
	return err ? err : finish(l, ni, qy);
}

/* DQ(a) + DQ(b), Relu/Clamp, Q */
static int try_add(struct lowp *l, int ai)
{
	struct npr_graph *g = l->g;
	struct npr_node *n = &g->nodes[ai];
	float sa, sb, sy, lo, hi;
	int qa, qb, za, zb, zy, qy, ni, in[2], err, qlo, qhi;

	if (n->nin != 2 || g->vals[n->out[0]].type != NPR_ELEM_F32)
		return 0;
	qa = dq_src(l, n->in[0], &sa, &za);
	qb = dq_src(l, n->in[1], &sb, &zb);
	if (qa < 0 || qb < 0 ||
	    !npr_shape_eq(&g->vals[qa].shape, &g->vals[qb].shape) ||
	    !npr_shape_eq(&g->vals[qa].shape, &g->vals[n->out[0]].shape))
		return 0;
	qy = q_after(l, acts(l, n->out[0], &lo, &hi), &sy, &zy);
	if (qy < 0)
		return 0;
	in[0] = qa;
	in[1] = qb;
	ni = new_node(l, ai, "NprQAdd", 2, in);
	if (ni < 0)
		return ni;
	n = &g->nodes[ni];
	qbounds(lo, hi, sy, zy, &qlo, &qhi);
	err = set(n, "a_scale", "%.9g", sa);
	err = err ? err : set(n, "a_zero", "%d", za);
	err = err ? err : set(n, "b_scale", "%.9g", sb);
	err = err ? err : set(n, "b_zero", "%d", zb);
	err = err ? err : set(n, "y_scale", "%.9g", sy);
	err = err ? err : set(n, "y_zero", "%d", zy);
	err = err ? err : set(n, "lo", "%d", qlo);
	err = err ? err : set(n, "hi", "%d", qhi);
	return err ? err : finish(l, ni, qy);
}

/* DQ, Relu/Clamp chain, Q: a table */
static int try_lut(struct lowp *l, int ri)
{
	struct npr_graph *g = l->g;
	const struct npr_node *n = &g->nodes[ri];
	float sa, sy, lo, hi;
	int qa, za, zy, qy, ni, in[2], i;
	uint8_t *t;

	if (n->nin != 1 || !(is(n, "Relu") || is(n, "ReLU") ||
			     is(n, "Clamp")))
		return 0;
	qa = dq_src(l, n->in[0], &sa, &za);
	if (qa < 0 || !npr_shape_eq(&g->vals[qa].shape,
				    &g->vals[n->out[0]].shape))
		return 0;
	qy = q_after(l, acts(l, n->in[0], &lo, &hi), &sy, &zy);
	if (qy < 0)
		return 0;
	t = malloc(256);
	if (!t)
		return -ENOMEM;
	for (i = 0; i < 256; i++) {
		float y = ((float)i - (float)za) * sa;

		y = fminf(fmaxf(y, lo), hi);
		y = nearbyintf(y / sy) + (float)zy;
		t[i] = (uint8_t)fminf(fmaxf(y, 0.0f), 255.0f);
	}
	in[0] = qa;
	in[1] = new_const(l, ri, NPR_ELEM_U8, 256, 0, t);
	if (in[1] < 0)
		return in[1];
	ni = new_node(l, ri, "NprQLut", 2, in);
	return ni < 0 ? ni : finish(l, ni, qy);
}

/*
 * Regions: a Q whose input comes from DQs through Relu/Clamp, MaxPool
 * and Concat only (each value read once, inside the region).  Every
 * one of these commutes with a non-decreasing function of each element
 * (the maximum of a window, the pieces of a concatenation), and the
 * composition Q(acts(DQ(x))) of each DQ with the Relu/Clamp chain on its
 * way to the Q is one (positive scales): so each DQ input becomes an
 * NprQLut with that composition as its table, the MaxPool and Concat
 * nodes run on u8 (MaxPool pads nothing: u8 0 is below every value, as
 * -inf is in f32), and the result is bit for bit the written one.
 */
#define REGION_DEPTH	16	/* Relu/Clamp nodes on one path */
#define REGION_NODES	64	/* nodes in a region */

struct region {
	float lo[REGION_DEPTH], hi[REGION_DEPTH];
	int nacts, nodes;
	bool structural;
	float sy;
	int zy;
};

static bool pool_ok(struct lowp *l, const struct npr_node *n)
{
	return is(n, "MaxPool") && n->nin == 1 &&
	       (n->nout == 1 || l->uses[n->out[1]] == 0);
}

/* can value @v (read once, by the region) be computed in u8? */
static bool region_ok(struct lowp *l, struct region *r, int v, int depth)
{
	struct npr_graph *g = l->g;
	const struct npr_node *n;
	float s;
	int z, j;

	if (dq_src(l, v, &s, &z) >= 0)
		return l->uses[v] == 1;
	n = prod(l, v);
	if (!n || n->dead || l->uses[v] != 1 || ++r->nodes > REGION_NODES ||
	    g->vals[v].type != NPR_ELEM_F32 || depth >= REGION_DEPTH)
		return false;
	if ((is(n, "Relu") || is(n, "ReLU") || is(n, "Clamp")) &&
	    n->nin == 1 && n->nout == 1)
		return region_ok(l, r, n->in[0], depth + 1);
	if (pool_ok(l, n)) {
		r->structural = true;
		return region_ok(l, r, n->in[0], depth);
	}
	if (is(n, "Concat") && n->nout == 1 && n->nin <= REGION_NODES) {
		r->structural = true;
		for (j = 0; j < n->nin; j++)
			if (!region_ok(l, r, n->in[j], depth))
				return false;
		return true;
	}
	return false;
}

/* a copy of node @like (type, version, attributes) reading @in */
static int clone_node(struct lowp *l, int like, int nin, const int *in)
{
	struct npr_graph *g = l->g;
	char name[256];
	int ni, j, err;

	snprintf(name, sizeof(name), "%.200s/u8", g->nodes[like].name);
	ni = npr_graph_add_node(g, name, g->nodes[like].type,
				g->nodes[like].version,
				g->nodes[like].layer_id);
	if (ni < 0)
		return ni;
	g->nodes[ni].op = g->nodes[like].op;
	err = npr_node_set_inputs(&g->nodes[ni], nin);
	if (!err)
		err = npr_node_set_outputs(g, ni, 1);
	for (j = 0; !err && j < g->nodes[like].nattr; j++)
		err = npr_node_add_attr(&g->nodes[ni],
					g->nodes[like].attr[j].key,
					g->nodes[like].attr[j].val);
	if (err)
		return err;
	for (j = 0; j < nin; j++)
		g->nodes[ni].in[j] = in[j];
	return ni;
}

static int parse_infer(struct npr_graph *g, int ni)
{
	struct npr_node *n = &g->nodes[ni];
	int err = n->op->parse ? n->op->parse(g, n) : 0;

	return err ? err : n->op->infer(g, n);
}

/*
 * The u8 value that stands for @v: a new node's output, or *@root set
 * to the node when @v is the region's top (finish() places it).  The
 * Relu/Clamp nodes of the way go into the tables.
 */
static int region_build(struct lowp *l, struct region *r, int v, int top,
			int *root)
{
	struct npr_graph *g = l->g;
	struct npr_node *n;
	float s, lo = -INFINITY, hi = INFINITY;
	int q, z, i, ni, in[REGION_NODES], like, nin, err;
	uint8_t *t;

	q = dq_src(l, v, &s, &z);
	if (q >= 0) {
		/* the Relu/Clamp nodes from here to the Q, first one first */
		for (i = r->nacts - 1; i >= 0; i--) {
			lo = fminf(fmaxf(lo, r->lo[i]), r->hi[i]);
			hi = fmaxf(fminf(hi, r->hi[i]), r->lo[i]);
		}
		t = malloc(256);
		if (!t)
			return -ENOMEM;
		for (i = 0; i < 256; i++) {
			float y = ((float)i - (float)z) * s;

			y = fminf(fmaxf(y, lo), hi);
			y = nearbyintf(y / r->sy) + (float)r->zy;
			t[i] = (uint8_t)fminf(fmaxf(y, 0.0f), 255.0f);
		}
		in[0] = q;
		in[1] = new_const(l, g->vals[v].producer, NPR_ELEM_U8, 256, 0,
				  t);
		if (in[1] < 0)
			return in[1];
		ni = new_node(l, g->vals[v].producer, "NprQLut", 2, in);
	} else {
		n = prod(l, v);
		like = g->vals[v].producer;
		if (is(n, "Relu") || is(n, "ReLU") || is(n, "Clamp")) {
			const struct npr_eltwise_params *ep = n->params;

			r->lo[r->nacts] = is(n, "Clamp") ? (float)ep->lo : 0;
			r->hi[r->nacts] = is(n, "Clamp") ? (float)ep->hi :
				INFINITY;
			r->nacts++;
			/* acts above the top structural node: it moves down */
			err = region_build(l, r, n->in[0],
					   v == top ? n->in[0] : top, root);
			r->nacts--;
			return err;
		}
		nin = n->nin;
		for (i = 0; i < nin; i++) {
			in[i] = region_build(l, r, g->nodes[like].in[i], -1,
					     root);
			if (in[i] < 0)
				return in[i];
		}
		ni = clone_node(l, like, nin, in);
	}
	if (ni < 0)
		return ni;
	if (v == top) {
		*root = ni;
		return 0;
	}
	err = parse_infer(g, ni);
	if (err)
		return err;
	/*
	 * In the place of the node it replaces (a DQ's Multiply, a MaxPool,
	 * a Concat), which then writes a value no one reads: after its
	 * inputs, before its readers.
	 */
	like = g->vals[v].producer;
	swap_nodes(g, like, ni);
	return g->nodes[like].out[0];
}

/* a region ending in the Q at Divide node @di */
static int try_region(struct lowp *l, int di)
{
	struct npr_graph *g = l->g;
	struct region r = { .nacts = 0 };
	int q, x, root = -1, err, z;
	float s;

	if (!is(&g->nodes[di], "Divide"))
		return 0;
	q = q_from(l, di, &r.sy, &r.zy);
	if (q < 0)
		return 0;
	x = g->nodes[di].in[0];
	if (dq_src(l, x, &s, &z) >= 0 || !region_ok(l, &r, x, 0) ||
	    !r.structural)
		return 0;
	err = region_build(l, &r, x, x, &root);
	if (!err && root < 0)
		err = -EINVAL;
	return err ? err : finish(l, root, q);
}

/* any other DQ (at its Multiply) */
static int try_dq(struct lowp *l, int mi)
{
	struct npr_graph *g = l->g;
	float s;
	int q, z, ni, err;

	if (!is(&g->nodes[mi], "Multiply"))
		return 0;
	q = dq_src(l, g->nodes[mi].out[0], &s, &z);
	if (q < 0 || !npr_shape_eq(&g->vals[q].shape,
				   &g->vals[g->nodes[mi].out[0]].shape))
		return 0;
	ni = new_node(l, mi, "NprDequantize", 1, &q);
	if (ni < 0)
		return ni;
	err = set(&g->nodes[ni], "a_scale", "%.9g", s);
	err = err ? err : set(&g->nodes[ni], "a_zero", "%d", z);
	return err ? err : finish(l, ni, g->nodes[mi].out[0]);
}

/* any other Q (at its Divide) */
static int try_q(struct lowp *l, int di)
{
	struct npr_graph *g = l->g;
	float s;
	int q, z, ni, err, x;

	q = q_from(l, di, &s, &z);
	if (q < 0)
		return 0;
	x = g->nodes[di].in[0];
	if (!npr_shape_eq(&g->vals[q].shape, &g->vals[x].shape))
		return 0;
	ni = new_node(l, di, "NprQuantize", 1, &x);
	if (ni < 0)
		return ni;
	err = set(&g->nodes[ni], "y_scale", "%.9g", s);
	err = err ? err : set(&g->nodes[ni], "y_zero", "%d", z);
	return err ? err : finish(l, ni, q);
}

/* an NprQLut reading an NprQConv's u8 output, its only reader: one node */
static int try_fuse_lut(struct lowp *l, int li)
{
	struct npr_graph *g = l->g;
	const struct npr_node *n = &g->nodes[li], *c;
	int in[6], ci, j, ni;

	if (!is(n, "NprQLut") || n->nin != 2)
		return 0;
	ci = g->vals[n->in[0]].producer;
	c = ci >= 0 && ci < g->nnodes ? &g->nodes[ci] : NULL;
	if (!c || c->dead || !is(c, "NprQConv") || c->nin != 5 ||
	    l->uses[n->in[0]] != 1 ||
	    g->vals[n->in[0]].type != NPR_ELEM_U8)
		return 0;
	for (j = 0; j < 5; j++)
		in[j] = c->in[j];
	in[5] = n->in[1];
	ni = clone_node(l, ci, 6, in);
	return ni < 0 ? ni : finish(l, ni, g->nodes[li].out[0]);
}

static int count_uses(struct lowp *l)
{
	struct npr_graph *g = l->g;
	int i, j;

	free(l->uses);
	l->uses = calloc(g->nvals ? g->nvals : 1, sizeof(int));
	if (!l->uses)
		return -ENOMEM;
	for (i = 0; i < g->nnodes; i++)
		for (j = 0; !g->nodes[i].dead && j < g->nodes[i].nin; j++)
			l->uses[g->nodes[i].in[j]]++;
	return 0;
}

typedef int (*rule_fn)(struct lowp *l, int node);

/* one rule over every live node of the graph as it was, then tidy up */
static int phase(struct lowp *l, rule_fn rule)
{
	struct npr_graph *g = l->g;
	int i, nn = g->nnodes, err = count_uses(l);

	for (i = 0; !err && i < nn; i++) {
		int before = g->nnodes;

		if (g->nodes[i].dead || npr_node_dynamic(g, &g->nodes[i]))
			continue;
		err = rule(l, i);
		if (!err && g->nnodes != before)
			err = count_uses(l);
	}
	return err ? err : npr_infer_mark_dead(g);
}

static int rule_conv(struct lowp *l, int i)
{
	const struct npr_node *n = &l->g->nodes[i];

	return is(n, "Convolution") || is(n, "GroupConvolution") ?
	       try_conv(l, i) : 0;
}

static int rule_add(struct lowp *l, int i)
{
	return is(&l->g->nodes[i], "Add") ? try_add(l, i) : 0;
}

/**
 * npr_pass_lowp() - compute quantized groups of @g in u8
 * @g: a compiled graph (npr_compile_graph()), not dynamic where the
 *     groups are; gains nodes and values, keeps its ports and order.
 *
 * Return: 0 (also when nothing matched), or -errno.
 */
int npr_pass_lowp(struct npr_graph *g)
{
	static const rule_fn rules[] = {
		rule_conv, rule_add, try_region, try_lut, try_q, try_dq,
		try_fuse_lut,
	};
	struct lowp l = { .g = g };
	size_t i;
	int err = 0;

	for (i = 0; !err && i < sizeof(rules) / sizeof(rules[0]); i++)
		err = phase(&l, rules[i]);
	free(l.uses);
	return err;
}
