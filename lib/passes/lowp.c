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

static unsigned int g_type(struct lowp *l, int v)
{
	return l->g->vals[v].type;
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

	if (m && !m->dead && is(m, "NprDequantize") && m->params) {
		const struct npr_quant_params *qp = m->params;

		*s = qp->sa;
		*z = qp->za;
		return m->in[0];
	}
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

/*
 * Divide node @d starts a Q (or is an NprQuantize): its u8 output, scale
 * and zero point; or -1
 */
static int q_from(struct lowp *l, int d, float *s, int *z)
{
	struct npr_graph *g = l->g;
	const struct npr_node *n = &g->nodes[d];
	const struct npr_eltwise_params *ep;
	const struct npr_math_params *mp;
	int u;

	if (!n->dead && is(n, "NprQuantize") && n->params) {
		const struct npr_quant_params *qp = n->params;

		*s = qp->sy;
		*z = qp->zy;
		return n->out[0];
	}
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

static bool is_port(const struct npr_graph *g, int ni)
{
	int k;

	for (k = 0; k < g->ninputs; k++)
		if (g->inputs[k] == ni)
			return true;
	for (k = 0; k < g->noutputs; k++)
		if (g->outputs[k] == ni)
			return true;
	return false;
}

/*
 * Put new node @ni (the last one, its inputs produced before @p) just
 * before node @p, keeping every port node's index (the compiled model's
 * ports name them): the nodes between the last dead node before @p and
 * @p move up one place, the new node takes the freed place before @p
 * and the dead node the new node's.  Returns false (nothing moved)
 * when a port node or no dead node comes first.
 */
static bool place_before(struct lowp *l, int ni, int p)
{
	struct npr_graph *g = l->g;
	struct npr_node t;
	int d, i, j;

	for (d = p - 1; d >= 0 && !g->nodes[d].dead; d--)
		if (is_port(g, d))
			return false;
	if (d < 0)
		return false;
	t = g->nodes[d];
	memmove(&g->nodes[d], &g->nodes[d + 1],
		(size_t)(p - 1 - d) * sizeof(t));
	g->nodes[p - 1] = g->nodes[ni];
	g->nodes[ni] = t;
	for (i = d; i < p; i++)
		for (j = 0; j < g->nodes[i].nout; j++)
			g->vals[g->nodes[i].out[j]].producer = i;
	for (j = 0; j < g->nodes[ni].nout; j++)
		g->vals[g->nodes[ni].out[j]].producer = ni;
	return true;
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
 * The int8 weights behind folded f32 weights @w: [K, ...] i8 data, the
 * per-channel scales (@ns of them: 1 or K) and zero points (@nz of them:
 * 0, 1 or K; f32); NULL when @w is not a folded DQ of i8 weights.
 */
static const int8_t *w_src(struct lowp *l, int w, int64_t numel,
			   const float **sc, int64_t *ns, const float **zp,
			   int64_t *nz)
{
	struct npr_node *m = prod(l, w), *a, *c;
	const struct npr_value *sv, *qv;

	if (m && is(m, "Reshape"))
		m = prod(l, m->in[0]);
	if (!m || !is(m, "Multiply") || m->nin != 2)
		return NULL;
	sv = &l->g->vals[m->in[1]];
	a = prod(l, m->in[0]);
	*zp = NULL;
	*nz = 0;
	if (a && is(a, "Subtract") && a->nin == 2) {
		const struct npr_value *zv = &l->g->vals[a->in[1]];

		if (!zv->data || zv->type != NPR_ELEM_F32)
			return NULL;
		*zp = zv->data;
		*nz = npr_shape_numel(&zv->shape);
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

/*
 * Weight zero points (@nz: 0, 1 or one per each of the @K rows of @win
 * weights): integers that leave every w - zero point in int8.  The IR's
 * are f16 numbers after a conversion: within W_ZERO_TOL of an integer
 * counts as that integer (an error of at most that much of a step).
 */
#define W_ZERO_TOL	1e-3f

static bool w_zero_ok(const int8_t *wq, int64_t K, int64_t win,
		      const float *zp, int64_t nz)
{
	int64_t k, r;

	for (k = 0; nz && k < K; k++) {
		float z = nearbyintf(zp[nz == 1 ? 0 : k]);

		if (!(fabsf(zp[nz == 1 ? 0 : k] - z) <= W_ZERO_TOL &&
		      fabsf(z) <= 255))
			return false;
		for (r = 0; z != 0 && r < win; r++)
			if (wq[k * win + r] - z < -128 ||
			    wq[k * win + r] - z > 127)
				return false;
	}
	return true;
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
	const float *wsc, *wzp, *bias = NULL;
	int64_t K, G, cg, kh, kw, win, kr, ns, nz, k, r;
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
	wq = w_src(l, n->in[1], K * win, &wsc, &ns, &wzp, &nz);
	if (!wq || (ns != 1 && ns != K) || (nz > 1 && nz != K) ||
	    !w_zero_ok(wq, K, win, wzp, nz))
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

		int zw = nz ? (int)nearbyintf(wzp[nz == 1 ? 0 : k]) : 0;

		for (r = 0; r < win; r++) {
			W[k * kr + r] = (int8_t)(wq[k * win + r] - zw);
			ws32[k] += wq[k * win + r] - zw;
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

	if (!is(&g->nodes[di], "Divide") && !is(&g->nodes[di], "NprQuantize"))
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

	if (!is(&g->nodes[di], "Divide"))
		return 0;
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

/*
 * OpenVINO INT8 IR.  An activation FakeQuantize with 256 levels and
 * scalar limits is a quantize to u8 and a dequantize back: q =
 * round((x - il) / (ih - il) * 255) clamped to 0 .. 255, y = ol + q *
 * (oh - ol) / 255.  With s = (ih - il) / 255 and z = -il / s an integer,
 * q = clamp(round(x / s) + z), what NprQuantize computes; the same for
 * the output limits and NprDequantize.  The limits of the shipped
 * models are f16 numbers, so z is an integer only up to their rounding:
 * FQ_ZERO_TOL of a step is accepted, and the grid moves by at most that.
 * The pair then meets the rules above like an ONNX Q and DQ.
 */
#define FQ_ZERO_TOL	0.05f

/* will place_before(@p) find @k dead nodes? */
static bool place_ok(const struct npr_graph *g, int p, int k)
{
	int d;

	for (d = p - 1; d >= 0 && k > 0; d--) {
		if (is_port(g, d))
			return false;
		k -= g->nodes[d].dead;
	}
	return k == 0;
}

/* the u8 grid of the range @lo .. @hi: its scale and zero point */
static bool grid_of(float lo, float hi, float *s, int *z)
{
	float zf;

	if (!(hi > lo) || !isfinite(lo) || !isfinite(hi))
		return false;
	*s = (hi - lo) / 255.0f;
	zf = -lo / *s;
	if (!(*s > 0) || !(zf > -FQ_ZERO_TOL && zf < 255 + FQ_ZERO_TOL) ||
	    fabsf(zf - nearbyintf(zf)) > FQ_ZERO_TOL)
		return false;
	*z = (int)nearbyintf(zf);
	return true;
}

/* NprQuantize(@x) and NprDequantize of it: the dequantize's index */
static int q_dq(struct lowp *l, int like, int x, float sq, int zq, float sd,
		int zd)
{
	struct npr_graph *g = l->g;
	int qi, di, u, err;

	qi = new_node(l, like, "NprQuantize", 1, &x);
	if (qi < 0)
		return qi;
	err = set(&g->nodes[qi], "y_scale", "%.9g", sq);
	err = err ? err : set(&g->nodes[qi], "y_zero", "%d", zq);
	err = err ? err : parse_infer(g, qi);
	if (err)
		return err;
	u = g->nodes[qi].out[0];
	di = new_node(l, like, "NprDequantize", 1, &u);
	if (di < 0)
		return di;
	err = set(&g->nodes[di], "a_scale", "%.9g", sd);
	err = err ? err : set(&g->nodes[di], "a_zero", "%d", zd);
	err = err ? err : parse_infer(g, di);
	return err ? err : di;
}

/* FakeQuantize node @fi as NprQuantize and NprDequantize */
static int try_fq(struct lowp *l, int fi)
{
	struct npr_graph *g = l->g;
	const struct npr_node *n = &g->nodes[fi];
	const struct npr_eltwise_params *ep = n->params;
	float f[5], si, so;
	int zi, zo, k, di;

	if (!is(n, "FakeQuantize") || n->nin != 5 || !ep ||
	    ep->levels != 256 || g->vals[n->in[0]].type != NPR_ELEM_F32 ||
	    g->vals[n->out[0]].type != NPR_ELEM_F32 ||
	    g->vals[n->in[0]].data)
		return 0;
	for (k = 1; k < 5; k++)
		if (!scalar_of(l, n->in[k], &f[k]))
			return 0;
	if (!grid_of(f[1], f[2], &si, &zi) || !grid_of(f[3], f[4], &so, &zo))
		return 0;
	if (!place_ok(g, fi, 1))
		return 0;
	di = q_dq(l, fi, n->in[0], si, zi, so, zo);
	if (di < 0)
		return di;
	/* the quantize goes before the FakeQuantize, which then gives way */
	place_before(l, di - 1, fi);
	return finish(l, di, g->nodes[fi].out[0]);
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

	if (dq_src(l, v, &s, &z) >= 0) {
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
	if (!n || n->dead || depth > REGION_DEPTH || l->uses[v] != 1 ||
	    g_type(l, v) != NPR_ELEM_F32)
		return false;
	if (pool_ok(l, n))
		return leaves(l, n->in[0], lo, hi, s0, z0, same, depth + 1);
	if (!is(n, "Concat") || n->nout != 1 || n->nin > REGION_NODES)
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
static int try_requant(struct lowp *l, int ci)
{
	struct npr_graph *g = l->g;
	const struct npr_node *n = &g->nodes[ci];
	float lo = INFINITY, hi = -INFINITY, s0 = 0, s, sc;
	const float *wsc, *wzp;
	int v, z0 = 0, z, i, j, di, uses, y;
	int64_t ns, nz;
	bool same = true, ok;

	if (!is_conv(n) || n->nin != 2)
		return 0;
	v = n->in[0];
	if (dq_src(l, v, &s, &z) >= 0 ||
	    !g->vals[n->in[1]].data ||
	    !w_src(l, n->in[1], npr_shape_numel(&g->vals[n->in[1]].shape),
		   &wsc, &ns, &wzp, &nz))
		return 0;
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
	} else if (!grid_of(lo, hi, &sc, &z)) {
		return 0;
	}
	if (!place_ok(g, ci, 2))
		return 0;
	di = q_dq(l, ci, v, sc, z, sc, z);
	if (di < 0)
		return di;
	y = g->nodes[di].out[0];
	place_before(l, di - 1, ci);
	place_before(l, di, ci);
	for (i = 0; i < g->nnodes; i++)
		if (!g->nodes[i].dead && is_conv(&g->nodes[i]) &&
		    g->nodes[i].in[0] == v)
			g->nodes[i].in[0] = y;
	return 0;
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

	err = phase(&l, try_fq);
	if (!err)
		err = phase(&l, try_requant);
	for (i = 0; !err && i < sizeof(rules) / sizeof(rules[0]); i++)
		err = phase(&l, rules[i]);
	free(l.uses);
	return err;
}
