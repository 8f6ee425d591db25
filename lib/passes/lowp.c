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
 * - the same into MatMul (what ONNX MatMul and Gemm become) with constant
 *   2-D weights: an NprQConv of one image whose pixels are x's M rows,
 *   [1, K, M, 1] -> [1, N, M, 1], x and the result transposed to and from
 *   it (try_matmul());
 * - what ONNX ConvInteger, MatMulInteger, QLinearConv and QLinearMatMul
 *   become: the same groups with x and the weights centred but not
 *   scaled (Convert [-> Subtract]), QLinear's requantization (Multiply
 *   by x_scale * w_scale / y_scale, Round ...) taken as their Q;
 * - in both, an i8 x as the u8 x + 128 with its zero point + 128, made
 *   by an f32 Add and a Convert to u8 (s8_to_u8()) where the group has
 *   room for them;
 * - DQ(a) + DQ(b) (same shape), optional Relu/Clamp, Q: NprQAdd;
 * - DQ(x), Relu/Clamp chain, Q: NprQLut, a 256-byte table computed with
 *   the same float operations as the nodes it replaces;
 * - any other DQ: NprDequantize; any other Q: NprQuantize.
 *
 * DQ here is Convert(u8 -> f32) [-> Subtract(scalar)] -> Multiply(scalar)
 * (an integer product's x may be i8; weights: i8 or u8 minus zero points
 * per tensor or per channel, which must leave them within i8, times
 * scales per tensor or per output channel); Q is Divide(scalar) ->
 * Round(half_to_even) [-> Add(scalar)] -> Clamp(0, 255) -> Convert(u8):
 * what lib/onnx/math.c translates them into.  Everything else stays f32
 * (u8 weights off i8 once centred, batched weights).  Each new node
 * takes the place of the last node of its group (finish()); the others
 * are left to the dead-node marking.
 *
 * OpenVINO INT8 IR comes first: an activation FakeQuantize with 256
 * levels and limits per tensor, or per channel with one zero point,
 * becomes an NprQuantize and NprDequantize (scales per channel as their
 * input 1), which the rules above read as a Q and a DQ (try_fq(); per
 * channel: the tail of an NprQConv, the x of a depthwise one); a MaxPool
 * of a DQ runs on u8 with the DQ after it (try_pool_dq()); a
 * convolution reading a MaxPool or Concat of such pairs gets a pair in
 * front of it (try_requant()); a DQ straight into a Q is one NprQLut.
 * Weight zero points within W_ZERO_TOL of an integer (an IR's are f16)
 * count as that integer (lib/passes/lowp_graph.c).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "passes/lowp.h"
#include "passes/lowp_graph.h"
#include "passes/lowp_rules.h"
#include "ops/eltwise.h"
#include "ops/infer.h"
#include "ops/math.h"
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

/*
 * @v = DQ(u8 value) (or an NprDequantize's output): the u8 value, its
 * scale and zero point; or -1.
 */
static int dq_src(struct lowp *l, int v, float *s, int *z)
{
	struct npr_node *m = prod(l, v), *a, *c;
	int o;

	if (m && !m->dead && is(m, "NprDequantize") && m->params) {
		const struct npr_quant_params *qp = m->params;

		if (m->nin > 1)
			return -1;	/* scales per channel */
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
 * The rest of a Q from @v, its scaled value, on: Round(half_to_even)
 * [-> Add(zero point)] -> Clamp(0, 255) -> Convert(u8).  Its u8 output
 * and zero point; or -1.
 */
static int q_tail(struct lowp *l, int v, int *z)
{
	struct npr_graph *g = l->g;
	const struct npr_eltwise_params *ep;
	const struct npr_math_params *mp;
	const struct npr_node *n;
	int u = sole_user(l, v);

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

/*
 * Divide node @d starts a Q (or is an NprQuantize): its u8 output, scale
 * and zero point; or -1
 */
static int q_from(struct lowp *l, int d, float *s, int *z)
{
	struct npr_graph *g = l->g;
	const struct npr_node *n = &g->nodes[d];

	if (!n->dead && is(n, "NprQuantize") && n->params) {
		const struct npr_quant_params *qp = n->params;

		if (n->nin > 1)
			return -1;	/* scales per channel */
		*s = qp->sy;
		*z = qp->zy;
		return n->out[0];
	}
	if (n->dead || !is(n, "Divide") || n->nin != 2 ||
	    !scalar_of(l, n->in[1], s) || !(*s > 0) ||
	    g->vals[n->in[0]].type != NPR_ELEM_F32)
		return -1;
	return q_tail(l, n->out[0], z);
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

static int new_node_as(struct lowp *l, int like, const char *type,
		       const char *suffix, int nin, const int *in)
{
	return npr_lowp_node(l->g, like, type, suffix, nin, in);
}

static int new_node(struct lowp *l, int like, const char *type, int nin,
		    const int *in)
{
	return npr_lowp_node(l->g, like, type, type, nin, in);
}

/* a Const node holding @data (taken), named for node @like: its value */
static int new_const(struct lowp *l, int like, unsigned int type,
		     int64_t d0, int64_t d1, void *data)
{
	char name[256];

	snprintf(name, sizeof(name), "%.200s/Const", l->g->nodes[like].name);
	return npr_lowp_const(l->g, name, l->g->nodes[like].layer_id, type, d0,
			      d1, data);
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
	npr_lowp_swap(g, p, ni);
	return 0;
}

/* scalar @v, an integer in [@lo, @hi], in *@z */
static bool int_of(struct lowp *l, int v, int lo, int hi, int *z)
{
	float f;

	if (!scalar_of(l, v, &f) || f != floorf(f) || f < lo || f > hi)
		return false;
	*z = (int)f;
	return true;
}

/*
 * @v = x of an integer product: Convert(u8 or i8 -> f32) [-> Subtract
 * (scalar zero point)] [-> Multiply(scalar scale)], the DQ of a QDQ
 * model or, without a scale (1), how ONNX ConvInteger, MatMulInteger,
 * QLinearConv and QLinearMatMul centre their input, or an NprDequantize:
 * the u8 or i8 value, its scale and zero point, the Convert (or the
 * NprDequantize) in *@cv; or -1.  An NprDequantize's scales per channel
 * go to *@pc when @pc is given (else -1), NULL there otherwise.
 */
static int x_src(struct lowp *l, int v, float *s, int *z, int *cv,
		 const float **pc)
{
	struct npr_graph *g = l->g;
	struct npr_node *a = prod(l, v);
	const struct npr_value *x;
	int o;

	*s = 1;
	*z = 0;
	if (pc)
		*pc = NULL;
	/* an IR's FakeQuantize, once try_fq() made it a u8 pair */
	if (a && !a->dead && is(a, "NprDequantize") && a->params) {
		const struct npr_quant_params *qp = a->params;

		if (a->nin > 1 && !pc)
			return -1;
		if (a->nin > 1)
			*pc = g->vals[a->in[1]].data;
		*s = qp->sa;
		*z = qp->za;
		*cv = g->vals[v].producer;
		return a->in[0];
	}
	if (a && !a->dead && is(a, "Multiply") && a->nin == 2) {
		o = scalar_of(l, a->in[1], s) ? 0 :
		    scalar_of(l, a->in[0], s) ? 1 : -1;
		if (o < 0 || !(*s > 0))
			return -1;
		a = prod(l, a->in[o]);
	}
	if (a && !a->dead && is(a, "Subtract") && a->nin == 2) {
		if (!int_of(l, a->in[1], -128, 255, z))
			return -1;
		a = prod(l, a->in[0]);
	}
	if (!a || a->dead || !is(a, "Convert") || a->nin != 1 ||
	    g->vals[a->out[0]].type != NPR_ELEM_F32)
		return -1;
	x = &g->vals[a->in[0]];
	if (x->data || (x->type == NPR_ELEM_U8 ? *z < 0 :
			x->type != NPR_ELEM_I8 || *z > 127))
		return -1;
	*cv = g->vals[a->out[0]].producer;
	return a->in[0];
}

/* Is Add @a (reading @v, shape @s) an Add of per-channel constants? */
static const float *bias_of(struct lowp *l, const struct npr_node *a, int v,
			    int axis, int64_t k, int64_t *cnt)
{
	const struct npr_shape *s = &l->g->vals[v].shape;

	if (!is(a, "Add") || a->nin != 2 ||
	    !npr_shape_eq(&l->g->vals[a->out[0]].shape, s))
		return NULL;
	return npr_lowp_chan_of(l->g, a->in[0] == v ? a->in[1] : a->in[0], s,
				axis, k, cnt);
}

/*
 * @v's only reader starts a Q by multipliers (per tensor or per
 * channel): Multiply -> Round ... Convert(u8), as ONNX QLinearConv and
 * QLinearMatMul requantize.  Its u8 output; or -1.
 */
static int qm_after(struct lowp *l, int v, int axis, int64_t k,
		    const float **m, int64_t *nm, int *z)
{
	struct npr_graph *g = l->g;
	const struct npr_node *n;
	int u = sole_user(l, v);

	if (u < 0)
		return -1;
	n = &g->nodes[u];
	if (!is(n, "Multiply") || n->nin != 2 ||
	    !npr_shape_eq(&g->vals[n->out[0]].shape, &g->vals[v].shape))
		return -1;
	*m = npr_lowp_chan_of(l->g, n->in[0] == v ? n->in[1] : n->in[0],
		     &g->vals[v].shape, axis, k, nm);
	return *m ? q_tail(l, n->out[0], z) : -1;
}

/* what follows an integer product of @k channels along @axis */
struct tail {
	const float *bias, *m;	/* per channel (nb, nm of them), or NULL */
	const float *qs;	/* a Q's scales per channel (@k), or NULL */
	int64_t nb, nm;
	float lo, hi;		/* Relu/Clamp */
	int last;		/* the value the group ends in */
	bool u8;		/* in a Q: y_scale sy, zero point zy */
	float sy;
	int zy;
};

static void tail_of(struct lowp *l, int v, int axis, int64_t k,
		    struct tail *t)
{
	struct npr_graph *g = l->g;
	int u = sole_user(l, v), q;

	memset(t, 0, sizeof(*t));
	t->sy = 1;
	if (u >= 0 && (t->bias = bias_of(l, &g->nodes[u], v, axis, k, &t->nb)))
		v = g->nodes[u].out[0];
	t->last = acts(l, v, &t->lo, &t->hi);
	q = q_after(l, t->last, &t->sy, &t->zy);
	if (q < 0 && t->last == v)
		q = qm_after(l, v, axis, k, &t->m, &t->nm, &t->zy);
	u = q < 0 ? sole_user(l, t->last) : -1;
	/*
	 * An NprQuantize with scales per channel (an IR's per-channel
	 * FakeQuantize): each channel's scale divides its multiplier and
	 * offset; Relu's bound 0 is the zero point on every channel's grid,
	 * other bounds are not, so only those.
	 */
	if (u >= 0 && is(&g->nodes[u], "NprQuantize") &&
	    g->nodes[u].nin == 2 && axis == 1 &&
	    g->vals[g->nodes[u].in[1]].shape.d[0] == k &&
	    (isinf(t->lo) || t->lo == 0) && isinf(t->hi) && t->hi > 0) {
		t->qs = g->vals[g->nodes[u].in[1]].data;
		t->zy = ((const struct npr_quant_params *)
			 g->nodes[u].params)->zy;
		q = g->nodes[u].out[0];
	}
	if (q >= 0) {
		t->last = q;
		t->u8 = true;
	}
}

/* where an NprQConv is: strides, dilations, pads, kernel, groups */
struct geom {
	int64_t stride[2], dil[2], pb[2], pe[2], kernel[2], groups;
};

/*
 * An NprQConv of @k output channels reading u8 @x (zero point @zx,
 * scale @sx, or scales per input channel @sxc when each group reads one
 * channel) with weights @wc (centred, row r of channel c at
 * wc[c * win + r], or at wc[r * k + c] when @tr), scales @wsc (1 or @k)
 * and tail @t: its node index, not yet placed.
 */
static int qconv_node(struct lowp *l, int like, int x, float sx,
		      const float *sxc, int zx,
		      int64_t k, int64_t win, const int8_t *wc, bool tr,
		      const float *wsc, int64_t ns, const struct tail *t,
		      const struct geom *ge)
{
	struct npr_graph *g = l->g;
	int64_t kr = (win + 3) & ~(int64_t)3, c, r;
	int in[5], ni, err, qlo, qhi;
	struct npr_node *n;
	int8_t *W = calloc(k * kr, 1);
	int32_t *ws32 = calloc(k, sizeof(*ws32));
	float *mul = malloc(k * sizeof(*mul));
	float *add = malloc(k * sizeof(*add));

	if (!W || !ws32 || !mul || !add) {
		free(W);
		free(ws32);
		free(mul);
		free(add);
		return -ENOMEM;
	}
	for (c = 0; c < k; c++) {
		float s = (sxc ? sxc[c / (k / ge->groups)] : sx) *
			  wsc[ns == 1 ? 0 : c];
		float b = t->bias ? t->bias[t->nb == 1 ? 0 : c] : 0.0f;
		float m = t->m ? t->m[t->nm == 1 ? 0 : c] : 1.0f;

		for (r = 0; r < win; r++) {
			int8_t v = tr ? wc[r * k + c] : wc[c * win + r];

			W[c * kr + r] = v;
			ws32[c] += v;
		}
		/* a multiplier scales the whole sum: (acc * s + b) * m */
		mul[c] = t->m ? s * m : s;
		add[c] = t->m ? (float)((double)b * m) : b;
		/* scales per channel of the Q divide it: y_scale is 1 */
		if (t->qs) {
			mul[c] = (float)((double)s / t->qs[c]);
			add[c] = (float)((double)b / t->qs[c]);
		}
	}
	in[0] = x;
	in[1] = new_const(l, like, NPR_ELEM_I8, k, kr, W);
	in[2] = in[1] < 0 ? in[1] :
		new_const(l, like, NPR_ELEM_I32, k, 0, ws32);
	in[3] = in[2] < 0 ? in[2] : new_const(l, like, NPR_ELEM_F32, k, 0, mul);
	in[4] = in[3] < 0 ? in[3] : new_const(l, like, NPR_ELEM_F32, k, 0, add);
	if (in[4] < 0) {
		if (in[1] < 0)
			free(ws32);
		if (in[2] < 0)
			free(mul);
		if (in[3] < 0)
			free(add);
		return in[4];
	}
	ni = new_node(l, like, "NprQConv", 5, in);
	if (ni < 0)
		return ni;
	n = &g->nodes[ni];
	err = npr_lowp_set(n, "strides", "%lld,%lld", (long long)ge->stride[0],
			   (long long)ge->stride[1]);
	err = err ? err : npr_lowp_set(n, "dilations", "%lld,%lld",
				       (long long)ge->dil[0],
				       (long long)ge->dil[1]);
	err = err ? err : npr_lowp_set(n, "pads_begin", "%lld,%lld",
				       (long long)ge->pb[0],
				       (long long)ge->pb[1]);
	err = err ? err : npr_lowp_set(n, "pads_end", "%lld,%lld",
				       (long long)ge->pe[0],
				       (long long)ge->pe[1]);
	err = err ? err : npr_lowp_set(n, "kernel", "%lld,%lld",
				       (long long)ge->kernel[0],
				       (long long)ge->kernel[1]);
	err = err ? err : npr_lowp_set(n, "group", "%lld",
				       (long long)ge->groups);
	err = err ? err : npr_lowp_set(n, "kr", "%lld", (long long)kr);
	err = err ? err : npr_lowp_set(n, "x_zero", "%d", zx);
	if (t->u8) {
		npr_lowp_qbounds(t->lo, t->hi, t->sy, t->zy, &qlo, &qhi);
		err = err ? err : npr_lowp_set(n, "y_zero", "%d", t->zy);
		err = err ? err : npr_lowp_set(n, "y_scale", "%.9g", t->sy);
		err = err ? err : npr_lowp_set(n, "lo", "%d", qlo);
		err = err ? err : npr_lowp_set(n, "hi", "%d", qhi);
	} else {
		err = err ? err : npr_lowp_set(n, "out", "f32");
		if (!isinf(t->lo))
			err = err ? err : npr_lowp_set(n, "flo", "%.9g", t->lo);
		if (!isinf(t->hi))
			err = err ? err : npr_lowp_set(n, "fhi", "%.9g", t->hi);
	}
	return err ? err : ni;
}

/* npr_lowp_place() that keeps *@like the index of the node it names */
static int place_as(struct lowp *l, int ni, int slot, int *like)
{
	int v = npr_lowp_place(l->g, ni, slot);

	if (v >= 0 && *like == slot)
		*like = ni;
	return v;
}

/*
 * A Reshape of @v to the @rank dims @d, or a Transpose of it by the
 * order @d, named for node @like and @suffix.
 */
static int view_node(struct lowp *l, int like, const char *type, int v,
		     int rank, const int64_t *d, const char *suffix)
{
	int64_t *t = malloc(rank * sizeof(*t));
	int in[2], ni, err;

	if (t)
		memcpy(t, d, rank * sizeof(*t));
	in[0] = v;
	in[1] = new_const(l, like, NPR_ELEM_I64, rank, 0, t);
	if (in[1] < 0)
		return in[1];
	ni = new_node_as(l, like, type, suffix, 2, in);
	if (ni < 0 || strcmp(type, "Reshape"))
		return ni;
	err = npr_lowp_set(&l->g->nodes[ni], "special_zero", "false");
	return err ? err : ni;
}

/*
 * Places for new nodes before the last node @last of a group starting at
 * node @first (a convolution or MatMul, x @x): the nodes on x's way
 * from value @stop, when only that way reads them, and the group's
 * nodes from @first on before @last; in order, at most @max.  Their
 * count.
 */
static int group_slots(struct lowp *l, int first, int x, int stop,
		       int last, int *slot, int max)
{
	struct npr_graph *g = l->g;
	int n = 0, v, u, i, j, s;

	for (v = x; v != stop && n < max && l->uses[v] == 1;) {
		const struct npr_node *a = prod(l, v);

		slot[n++] = g->vals[v].producer;
		v = a->nin == 2 && g->vals[a->in[0]].data ? a->in[1] : a->in[0];
	}
	for (v = g->nodes[first].out[0], u = first; u != last && n < max;
	     v = g->nodes[u].out[0]) {
		slot[n++] = u;
		u = sole_user(l, v);
		if (u < 0)
			return 0;
	}
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && slot[j] < slot[j - 1]; j--) {
			s = slot[j];
			slot[j] = slot[j - 1];
			slot[j - 1] = s;
		}
	return n;
}

/*
 * An i8 x as u8, exactly: Convert(u8, its f32 value @xf + 128), in the
 * places @slot[*@s] and the next; the u8 value.
 */
static int s8_to_u8(struct lowp *l, int xf, const int *slot, int *s,
		    int *like)
{
	float *c = malloc(sizeof(*c));
	int in[2], ni, v, err;

	if (c)
		*c = 128;
	in[0] = xf;
	in[1] = new_const(l, *like, NPR_ELEM_F32, 1, 0, c);
	if (in[1] < 0)
		return in[1];
	ni = new_node_as(l, *like, "Add", "x_plus_128", 2, in);
	v = ni < 0 ? ni : place_as(l, ni, slot[(*s)++], like);
	ni = v < 0 ? v : new_node_as(l, *like, "Convert", "x_u8", 1, &v);
	if (ni < 0)
		return ni;
	err = npr_lowp_set(&l->g->nodes[ni], "destination_type", "u8");
	return err ? err : place_as(l, ni, slot[(*s)++], like);
}

/*
 * DQ(x) (or x centred) into a convolution with int8 weights, bias,
 * Relu/Clamp, Q: an NprQConv in the place of the group's last node.  An
 * i8 x goes through s8_to_u8() first, in two places before it
 * (group_slots(); fewer leave the group f32).
 */
static int try_conv(struct lowp *l, int ci)
{
	struct npr_graph *g = l->g;
	struct npr_node *n = &g->nodes[ci];
	const struct npr_conv_params *cp = n->params;
	const struct npr_shape *ws = &g->vals[n->in[1]].shape;
	const float *wsc, *sxc;
	struct geom ge;
	struct tail t;
	int64_t K, G, cg, kh, kw, win, ns;
	float sx;
	int qx, zx, qv, ni, i, cv, slot[8], s = 0;
	bool s8;
	int8_t *wc;

	if (!cp || cp->nsp != 2 || cp->auto_pad != NPR_PAD_EXPLICIT ||
	    g->vals[n->out[0]].type != NPR_ELEM_F32 ||
	    !g->vals[n->in[1]].data)
		return 0;
	qx = x_src(l, n->in[0], &sx, &zx, &cv, &sxc);
	if (qx < 0)
		return 0;
	s8 = g->vals[qx].type == NPR_ELEM_I8;
	K = g->vals[n->out[0]].shape.d[1];
	G = is(n, "GroupConvolution") ? ws->d[0] : 1;
	if (G < 1 || K % G)
		return 0;
	cg = g->vals[n->in[0]].shape.d[1] / G;
	/* x's scales per channel: when each group reads one channel */
	if (sxc && cg != 1)
		return 0;
	kh = ws->d[ws->rank - 2];
	kw = ws->d[ws->rank - 1];
	win = cg * kh * kw;
	/* the chain after it; without a Q, its last node gives way */
	tail_of(l, n->out[0], 1, K, &t);
	if (s8 && group_slots(l, ci, n->in[0], g->nodes[cv].out[0],
			      g->vals[t.last].producer, slot, 8) < 2)
		return 0;
	wc = npr_lowp_w_centred(l->g, n->in[1], 0, K, &qv, &wsc, &ns);
	if (!wc)
		return 0;
	if (npr_shape_numel(&g->vals[qv].shape) != K * win ||
	    g->vals[qv].shape.d[0] != K) {
		free(wc);
		return 0;
	}
	for (i = 0; i < 2; i++) {
		ge.stride[i] = cp->stride[i];
		ge.dil[i] = cp->dil[i];
		ge.pb[i] = cp->pb[i];
		ge.pe[i] = cp->pe[i];
	}
	ge.kernel[0] = kh;
	ge.kernel[1] = kw;
	ge.groups = G;
	if (s8) {
		qx = s8_to_u8(l, g->nodes[cv].out[0], slot, &s, &ci);
		zx += 128;
	}
	ni = qx < 0 ? qx : qconv_node(l, ci, qx, sx, sxc, zx, K, win, wc,
				      false, wsc, ns, &t, &ge);
	free(wc);
	return ni < 0 ? ni : finish(l, ni, t.last);
}

/*
 * MatMul of x (DQ'd or centred, u8 or i8) [..., K] and constant int8
 * weights [K, N] (or [N, K] transposed), bias, Relu/Clamp, Q: an
 * NprQConv of one image whose M pixels are x's rows, [1, K, M, 1] -> [1,
 * N, M, 1], with x and the result transposed to and from it (Reshape,
 * Transpose).  The nodes before the last take the places group_slots()
 * finds.  With fewer than four such places, or one row, the rows are
 * images of one pixel instead, [M, K, 1, 1] -> [M, N, 1, 1] between two
 * Reshapes (the kernel packs a block per image, slow for many rows);
 * with fewer than two, the group stays f32.  An i8 x takes two places
 * more (s8_to_u8()).
 */
static int try_matmul(struct lowp *l, int mi)
{
	static const struct geom ge = {
		{ 1, 1 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, { 1, 1 }, 1
	};
	static const int64_t swap12[4] = { 0, 2, 1, 3 };
	struct npr_graph *g = l->g;
	const struct npr_node *n = &g->nodes[mi];
	const struct npr_nn_params *p = n->params;
	const struct npr_shape *xs, *ws;
	struct npr_shape ys;
	const float *wsc;
	struct tail t;
	int64_t K, N, M, ns, d[4];
	int qx, zx, qv, v, ni, slot[10], nslot, s = 0, cv, xf;
	bool image, s8;
	float sx;
	int8_t *wc;

	if (!p || p->ta || n->nin != 2 ||
	    g->vals[n->out[0]].type != NPR_ELEM_F32 ||
	    !g->vals[n->in[1]].data)
		return 0;
	xs = &g->vals[n->in[0]].shape;
	ws = &g->vals[n->in[1]].shape;
	ys = g->vals[n->out[0]].shape;
	if (ws->rank != 2 || xs->rank < 1 || !npr_shape_static(xs))
		return 0;
	K = xs->d[xs->rank - 1];
	N = ws->d[p->tb ? 0 : 1];
	if (K < 1 || N < 1 || ws->d[p->tb ? 1 : 0] != K ||
	    npr_shape_numel(xs) < K)
		return 0;
	M = npr_shape_numel(xs) / K;
	qx = x_src(l, n->in[0], &sx, &zx, &cv, NULL);
	if (qx < 0)
		return 0;
	s8 = g->vals[qx].type == NPR_ELEM_I8;
	xf = g->nodes[cv].out[0];
	tail_of(l, n->out[0], ys.rank - 1, N, &t);
	nslot = group_slots(l, mi, n->in[0], s8 ? xf : qx,
			    g->vals[t.last].producer, slot, 10);
	if (nslot < (s8 ? 4 : 2))
		return 0;
	wc = npr_lowp_w_centred(l->g, n->in[1], p->tb ? 0 : 1, N, &qv, &wsc,
				&ns);
	if (!wc)
		return 0;
	if (!npr_shape_eq(&g->vals[qv].shape, ws)) {
		free(wc);
		return 0;
	}
	image = M > 1 && nslot >= (s8 ? 6 : 4);
	d[0] = image ? 1 : M;
	d[1] = image ? M : K;
	d[2] = image ? K : 1;
	d[3] = 1;
	/* the new nodes are named for the MatMul, wherever place() puts it */
	if (s8) {
		qx = s8_to_u8(l, xf, slot, &s, &mi);
		zx += 128;
	}
	ni = qx < 0 ? qx : view_node(l, mi, "Reshape", qx, 4, d, "x4d");
	v = ni < 0 ? ni : place_as(l, ni, slot[s++], &mi);
	if (image) {
		ni = v < 0 ? v : view_node(l, mi, "Transpose", v, 4, swap12,
					   "xt");
		v = ni < 0 ? ni : place_as(l, ni, slot[s++], &mi);
	}
	ni = v < 0 ? v : qconv_node(l, mi, v, sx, NULL, zx, N, K, wc,
				    !p->tb, wsc, ns, &t, &ge);
	free(wc);
	v = ni < 0 ? ni : place_as(l, ni, slot[s++], &mi);
	if (image) {
		ni = v < 0 ? v : view_node(l, mi, "Transpose", v, 4, swap12,
					   "yt");
		v = ni < 0 ? ni : place_as(l, ni, slot[s++], &mi);
	}
	ni = v < 0 ? v : view_node(l, mi, "Reshape", v, ys.rank, ys.d, "y");
	return ni < 0 ? ni : finish(l, ni, t.last);
}

/*
 * Node @u, a reader of an f32 value, starts a Q, or Relu/Clamp nodes and
 * a Q: the Q's u8 output, scale, zero point and the bounds; or -1.
 */
static int q_of_reader(struct lowp *l, int u, float *lo, float *hi,
		       float *sy, int *zy)
{
	const struct npr_node *n = &l->g->nodes[u];
	float l2, h2;
	int last;

	*lo = -INFINITY;
	*hi = INFINITY;
	if (n->nin != 1 || n->nout != 1 ||
	    !(is(n, "Relu") || is(n, "ReLU") || is(n, "Clamp")))
		return q_from(l, u, sy, zy);
	if (is(n, "Clamp")) {
		const struct npr_eltwise_params *ep = n->params;

		*lo = (float)ep->lo;
		*hi = (float)ep->hi;
	} else {
		*lo = 0;
	}
	last = acts(l, n->out[0], &l2, &h2);
	*lo = fminf(fmaxf(*lo, l2), h2);
	*hi = fmaxf(fminf(*hi, h2), l2);
	return q_after(l, last, sy, zy);
}

#define ADD_READERS	4

/*
 * DQ(a) + DQ(b), Relu/Clamp, Q: an NprQAdd; and one for each reader
 * when several read the sum, each through its own Relu/Clamp nodes to
 * its own Q (a residual block's sum, read by the next block and by its
 * shortcut): each NprQAdd computes the written arithmetic for its Q.
 */
static int try_add(struct lowp *l, int ai)
{
	struct npr_graph *g = l->g;
	const struct npr_node *n = &g->nodes[ai];
	float sa, sb, sy[ADD_READERS], lo[ADD_READERS], hi[ADD_READERS];
	int qa, qb, za, zb, zy[ADD_READERS], qy[ADD_READERS], ni, in[2], err;
	int qlo, qhi, i, j, k = 0, v = n->out[0];

	if (n->nin != 2 || g->vals[v].type != NPR_ELEM_F32 ||
	    l->uses[v] > ADD_READERS)
		return 0;
	qa = dq_src(l, n->in[0], &sa, &za);
	qb = dq_src(l, n->in[1], &sb, &zb);
	if (qa < 0 || qb < 0 ||
	    !npr_shape_eq(&g->vals[qa].shape, &g->vals[qb].shape) ||
	    !npr_shape_eq(&g->vals[qa].shape, &g->vals[v].shape))
		return 0;
	for (i = 0; i < g->nnodes; i++)
		for (j = 0; !g->nodes[i].dead && j < g->nodes[i].nin; j++) {
			if (g->nodes[i].in[j] != v)
				continue;
			if (k == l->uses[v])
				return 0;
			qy[k] = q_of_reader(l, i, &lo[k], &hi[k], &sy[k],
					    &zy[k]);
			if (qy[k++] < 0)
				return 0;
		}
	if (k != l->uses[v])
		return 0;
	for (i = 0; i < k; i++) {
		in[0] = qa;
		in[1] = qb;
		ni = new_node(l, ai, "NprQAdd", 2, in);
		if (ni < 0)
			return ni;
		npr_lowp_qbounds(lo[i], hi[i], sy[i], zy[i], &qlo, &qhi);
		err = npr_lowp_set(&g->nodes[ni], "a_scale", "%.9g", sa);
		err = err ? err : npr_lowp_set(&g->nodes[ni], "a_zero", "%d",
					       za);
		err = err ? err : npr_lowp_set(&g->nodes[ni], "b_scale",
					       "%.9g", sb);
		err = err ? err : npr_lowp_set(&g->nodes[ni], "b_zero", "%d",
					       zb);
		err = err ? err : npr_lowp_set(&g->nodes[ni], "y_scale",
					       "%.9g", sy[i]);
		err = err ? err : npr_lowp_set(&g->nodes[ni], "y_zero", "%d",
					       zy[i]);
		err = err ? err : npr_lowp_set(&g->nodes[ni], "lo", "%d", qlo);
		err = err ? err : npr_lowp_set(&g->nodes[ni], "hi", "%d", qhi);
		err = err ? err : finish(l, ni, qy[i]);
		if (err)
			return err;
	}
	return 0;
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

struct region {
	float lo[NPR_LOWP_REGION_DEPTH], hi[NPR_LOWP_REGION_DEPTH];
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
	if (!n || n->dead || l->uses[v] != 1 ||
	    ++r->nodes > NPR_LOWP_REGION_NODES ||
	    g->vals[v].type != NPR_ELEM_F32 || depth >= NPR_LOWP_REGION_DEPTH)
		return false;
	if ((is(n, "Relu") || is(n, "ReLU") || is(n, "Clamp")) &&
	    n->nin == 1 && n->nout == 1)
		return region_ok(l, r, n->in[0], depth + 1);
	if (pool_ok(l, n)) {
		r->structural = true;
		return region_ok(l, r, n->in[0], depth);
	}
	if (is(n, "Concat") && n->nout == 1 &&
	    n->nin <= NPR_LOWP_REGION_NODES) {
		r->structural = true;
		for (j = 0; j < n->nin; j++)
			if (!region_ok(l, r, n->in[j], depth))
				return false;
		return true;
	}
	return false;
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
	int q, z, i, ni, in[NPR_LOWP_REGION_NODES], like, nin, err;
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
		ni = npr_lowp_clone(l->g, like, nin, in);
	}
	if (ni < 0)
		return ni;
	if (v == top) {
		*root = ni;
		return 0;
	}
	err = npr_lowp_infer(g, ni);
	if (err)
		return err;
	/*
	 * In the place of the node it replaces (a DQ's Multiply, a MaxPool,
	 * a Concat), which then writes a value no one reads: after its
	 * inputs, before its readers.
	 */
	like = g->vals[v].producer;
	npr_lowp_swap(g, like, ni);
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
	/* a DQ straight into the Q: a requantization, one table */
	if (!region_ok(l, &r, x, 0) ||
	    (!r.structural && dq_src(l, x, &s, &z) < 0))
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
	err = npr_lowp_set(&g->nodes[ni], "a_scale", "%.9g", s);
	err = err ? err : npr_lowp_set(&g->nodes[ni], "a_zero", "%d", z);
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
	err = npr_lowp_set(&g->nodes[ni], "y_scale", "%.9g", s);
	err = err ? err : npr_lowp_set(&g->nodes[ni], "y_zero", "%d", z);
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
	ni = npr_lowp_clone(l->g, ci, 6, in);
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

	if (is(n, "MatMul"))
		return try_matmul(l, i);
	return is(n, "Convolution") || is(n, "GroupConvolution") ?
	       try_conv(l, i) : 0;
}

static int rule_add(struct lowp *l, int i)
{
	return is(&l->g->nodes[i], "Add") ? try_add(l, i) : 0;
}

static int rule_scale(struct lowp *l, int i)
{
	return is(&l->g->nodes[i], "Multiply") ? npr_lowp_scale(l, i) : 0;
}

/*
 * Helpers for the rules of lib/passes/lowp_ir.c (lib/passes/lowp_rules.h
 * says what each does).
 */

/**
 * npr_lowp_dq_src() - the u8 value under a DQ
 * @l: the pass.
 * @v: a value: DQ(u8 value) or an NprDequantize's output.
 * @s: out: the scale.
 * @z: out: the zero point.
 *
 * Return: the u8 value, or -1.
 */
int npr_lowp_dq_src(struct lowp *l, int v, float *s, int *z)
{
	return dq_src(l, v, s, z);
}

/**
 * npr_lowp_q_after() - a Q that reads a value
 * @l: the pass.
 * @v: the value, whose only reader starts the Q.
 * @s: out: the Q's scale.
 * @z: out: its zero point.
 *
 * Return: the Q's u8 output, or -1.
 */
int npr_lowp_q_after(struct lowp *l, int v, float *s, int *z)
{
	return q_after(l, v, s, z);
}

/**
 * npr_lowp_acts() - the Relu and Clamp nodes after a value
 * @l: the pass.
 * @v: the value.
 * @lo: out: their lower bound (-inf: none).
 * @hi: out: their upper bound (inf: none).
 *
 * Return: the last value of the chain (@v when there is none).
 */
int npr_lowp_acts(struct lowp *l, int v, float *lo, float *hi)
{
	return acts(l, v, lo, hi);
}

/**
 * npr_lowp_new_node() - a new node named for another
 * @l: the pass.
 * @like: the node it is named for.
 * @type: its type.
 * @nin: its inputs' count.
 * @in: its inputs.
 *
 * Return: its index, or -errno.
 */
int npr_lowp_new_node(struct lowp *l, int like, const char *type, int nin,
		      const int *in)
{
	return new_node(l, like, type, nin, in);
}

/**
 * npr_lowp_new_const() - a new constant named for a node
 * @l: the pass.
 * @like: the node.
 * @type: the element type.
 * @d0: the first dim.
 * @d1: the second, or 0.
 * @data: the values (taken).
 *
 * Return: its value, or -errno.
 */
int npr_lowp_new_const(struct lowp *l, int like, unsigned int type,
		       int64_t d0, int64_t d1, void *data)
{
	return new_const(l, like, type, d0, d1, data);
}

/**
 * npr_lowp_set() - a new attribute
 * @n: the node.
 * @key: its name.
 * @fmt: printf() format of its value.
 *
 * Return: 0 or -errno.
 */
int npr_lowp_set(struct npr_node *n, const char *key, const char *fmt, ...)
{
	char buf[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return npr_node_add_attr(n, key, buf);
}

/**
 * npr_lowp_sole_user() - the only reader of a value
 * @l: the pass.
 * @v: the value.
 *
 * Return: the live node that alone reads @v, or -1.
 */
int npr_lowp_sole_user(struct lowp *l, int v)
{
	return sole_user(l, v);
}

/**
 * npr_lowp_finish() - a new node in the place of a group's last
 * @l: the pass.
 * @ni: the new node.
 * @old: the value the group ends in, which the new node writes now.
 *
 * Return: 0 or -errno.
 */
int npr_lowp_finish(struct lowp *l, int ni, int old)
{
	return finish(l, ni, old);
}

/**
 * npr_lowp_pool_ok() - a MaxPool the u8 rules take
 * @l: the pass.
 * @n: the node.
 *
 * Return: true for a MaxPool whose indices no one reads.
 */
bool npr_lowp_pool_ok(struct lowp *l, const struct npr_node *n)
{
	return pool_ok(l, n);
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
		rule_conv, rule_add, rule_scale, try_region, try_lut, try_q,
		try_dq, try_fuse_lut,
	};
	struct lowp l = { .g = g };
	size_t i;
	int err = 0;

	err = phase(&l, npr_lowp_fq);
	if (!err)
		err = phase(&l, npr_lowp_pool_dq);
	if (!err)
		err = phase(&l, npr_lowp_concat_dq);
	if (!err)
		err = phase(&l, npr_lowp_requant);
	for (i = 0; !err && i < sizeof(rules) / sizeof(rules[0]); i++)
		err = phase(&l, rules[i]);
	free(l.uses);
	return err;
}
