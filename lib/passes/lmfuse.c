// SPDX-License-Identifier: MIT
/*
 * The transformer fusion pass (see lmfuse.h).  It rewrites a compiled
 * graph in place: the last node of a matched pattern becomes the fused
 * node (its output value, and so every reader, unchanged) and the nodes
 * it did the work of are left without readers, for npr_infer_mark_dead().
 *
 * What is matched, each intermediate value read by the pattern alone:
 *
 * attention   SoftMax(last axis) of the scores, then MatMul by V, where
 *             the scores are MatMul(Q, K^T) (K through a Transpose of the
 *             last two axes, a transpose_b MatMul, or a key already
 *             transposed), scaled by Multiply/Divide by one constant on
 *             Q, K or the scores, and masked once: Add of an f32 mask, or
 *             Select(cond, constant, scores) / Select(cond, scores,
 *             constant).  K and V expanded for grouped-query attention by
 *             Unsqueeze, Broadcast (ONNX Expand) and Reshape are read
 *             unexpanded.
 * layernorm   ReduceMean over trailing axes, Subtract, Power 2 or a
 *             Multiply by itself, ReduceMean, Add eps, Sqrt, Divide (or
 *             Multiply by 1 / Sqrt, or by Power -0.5); eps after the Sqrt
 *             too; then Multiply by a scale and Add a bias.
 * rmsnorm     the same without the mean; a Multiply by a scale.
 * gelu        x * 0.5 * (1 + Erf(x / sqrt(2))) in any order of the
 *             products; the tanh form with 0.044715 x^3 and sqrt(2/pi).
 * silu        x * Sigmoid(x), x * Sigmoid(x * beta): Swish.
 * matmul      MatMul of a 2-D constant weight [K, N] read by it alone: the
 *             weight stored [N, K] and the MatMul made transpose_b, which
 *             the CPU's row kernel reads in order and splits over threads.
 *
 * Every constant is checked (one value, f32, the value the formula
 * needs), every reduction's axes, every broadcast (the pattern's output
 * has the shape of its input, a mask broadcasts to the scores), so a
 * fused graph computes what the primitive ops did up to float rounding.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/lmfuse.h"
#include "ops/fused.h"
#include "ops/infer.h"
#include "ops/nn.h"

const char *const npr_lmfuse_names[NPR_LMFUSE_KINDS] = {
	"attention", "layernorm", "rmsnorm", "gelu", "silu", "matmul",
};

/* most nodes one fusion absorbs */
#define MAX_ABS		32

struct lm {
	struct npr_graph *g;
	int *uses;	/* per value: live readers (reading twice: 2) */
	int *user;	/* per value: the last live reader */
	bool *gone;	/* per node: absorbed by a fusion */
};

struct absorbed {
	int n;
	int node[MAX_ABS];
};

/**
 * npr_lmfuse_parse() - which fusions a switch's value turns off
 * @s: "1", "all" or empty: all of them; else names of npr_lmfuse_names[]
 *     separated by commas.
 * @off: Out. One bit per enum npr_lmfuse_kind.
 *
 * Return: 0, or -EINVAL for a name that is none of them.
 */
int npr_lmfuse_parse(const char *s, unsigned int *off)
{
	*off = 0;
	if (!*s || !strcmp(s, "1") || !strcmp(s, "all")) {
		*off = NPR_LMFUSE_ALL;
		return 0;
	}
	while (*s) {
		size_t len = strcspn(s, ",");
		int k;

		for (k = 0; k < NPR_LMFUSE_KINDS; k++)
			if (strlen(npr_lmfuse_names[k]) == len &&
			    !strncmp(s, npr_lmfuse_names[k], len))
				break;
		if (k == NPR_LMFUSE_KINDS)
			return npr_err(-EINVAL,
				       "unknown fusion \"%.*s\" (attention, layernorm, rmsnorm, gelu, silu, matmul)",
				       (int)len, s);
		*off |= 1u << k;
		s += len;
		if (*s)
			s++;
	}
	return 0;
}

static void recount(struct lm *s)
{
	const struct npr_graph *g = s->g;
	int i, j;

	memset(s->uses, 0, sizeof(int) * g->nvals);
	for (i = 0; i < g->nnodes; i++) {
		const struct npr_node *n = &g->nodes[i];

		if (n->dead || s->gone[i])
			continue;
		for (j = 0; j < n->nin; j++) {
			if (n->in[j] < 0)
				continue;
			s->uses[n->in[j]]++;
			s->user[n->in[j]] = i;
		}
	}
}

/* The live node computing value @v, NULL for a constant or an input. */
static struct npr_node *prod(const struct lm *s, int v)
{
	const struct npr_value *val;
	int p;

	if (v < 0 || v >= s->g->nvals)
		return NULL;
	val = &s->g->vals[v];
	p = val->producer;
	if (val->data || p < 0 || p >= s->g->nnodes || s->g->nodes[p].dead ||
	    s->gone[p])
		return NULL;
	return &s->g->nodes[p];
}

static bool is(const struct npr_node *n, const char *type, int nin)
{
	return n && n->nin == nin && n->nout == 1 && !strcmp(n->type, type);
}

static int idx(const struct lm *s, const struct npr_node *n)
{
	return (int)(n - s->g->nodes);
}

/* @v is one f32 constant: its value. */
static bool scalar(const struct lm *s, int v, double *out)
{
	const struct npr_value *val = &s->g->vals[v];

	if (!val->data || val->type != NPR_ELEM_F32 ||
	    npr_shape_numel(&val->shape) != 1 || val->nbytes < sizeof(float))
		return false;
	*out = ((const float *)val->data)[0];
	return true;
}

static bool near(double a, double want)
{
	return fabs(a - want) <= 1e-6 * fabs(want);
}

static bool f32_static(const struct lm *s, int v)
{
	const struct npr_value *val = &s->g->vals[v];

	return val->type == NPR_ELEM_F32 && npr_shape_static(&val->shape);
}

static bool same_shape(const struct lm *s, int a, int b)
{
	return npr_shape_eq(&s->g->vals[a].shape, &s->g->vals[b].shape);
}

static bool take(struct absorbed *a, const struct lm *s,
		 const struct npr_node *n)
{
	if (a->n == MAX_ABS)
		return false;
	a->node[a->n++] = idx(s, n);
	return true;
}

/* The node's output, read by one node alone. */
static bool one_use(const struct lm *s, int v)
{
	return s->uses[v] == 1;
}

/*
 * A copy of @str that lives as long as @g: in the arena of a view (whose
 * strings are its source's, never freed with it), else malloc()ed.
 */
static char *gstrdup(struct npr_graph *g, const char *str)
{
	size_t len = strlen(str) + 1;
	char *t;

	if (!g->view)
		return strdup(str);
	t = npr_graph_alloc(g, len);
	return t ? memcpy(t, str, len) : NULL;
}

/*
 * Replace @n's type, attributes and params; its inputs stay.  A view's
 * node shares its strings and arrays with the source graph: they are
 * dropped, not freed.
 */
static int retype(struct lm *s, struct npr_node *n, const char *type,
		  unsigned int version)
{
	char *t = gstrdup(s->g, type);
	int i;

	if (!t)
		return -ENOMEM;
	if (!s->g->view) {
		npr_graph_free_str(s->g, n->type);
		if (!(n->packed & NPR_NODE_PACKED_ATTR)) {
			for (i = 0; i < n->nattr; i++) {
				npr_graph_free_str(s->g, n->attr[i].key);
				npr_graph_free_str(s->g, n->attr[i].val);
			}
			free(n->attr);
		}
	}
	n->type = t;
	n->version = version;
	n->op = npr_op_find(type, version);
	n->attr = NULL;
	n->nattr = 0;
	n->packed &= ~NPR_NODE_PACKED_ATTR;
	free(n->params);
	n->params = NULL;
	return n->op ? 0 : -ENOENT;
}

/*
 * Give @n the inputs @in and the attributes @kv: in a view, arrays of its
 * arena (marked packed: no one frees them on their own).
 */
static int set_ports(struct lm *s, struct npr_node *n, const int *in,
		     int nin, const char *const *kv, int nkv)
{
	struct npr_graph *g = s->g;
	int i, err;

	if (!g->view) {
		err = npr_node_set_inputs(n, nin);
		for (i = 0; !err && i < nin; i++)
			n->in[i] = in[i];
		for (i = 0; !err && i < nkv; i++)
			err = npr_node_add_attr(n, kv[2 * i], kv[2 * i + 1]);
		return err;
	}
	n->in = npr_graph_alloc(g, sizeof(int) * (nin ? nin : 1));
	n->attr = npr_graph_alloc(g, sizeof(*n->attr) * (nkv ? nkv : 1));
	if (!n->in || !n->attr)
		return -ENOMEM;
	n->packed |= NPR_NODE_PACKED_IN | NPR_NODE_PACKED_ATTR;
	n->nin = nin;
	memcpy(n->in, in, sizeof(int) * nin);
	for (i = 0; i < nkv; i++) {
		n->attr[i].key = gstrdup(g, kv[2 * i]);
		n->attr[i].val = gstrdup(g, kv[2 * i + 1]);
		if (!n->attr[i].key || !n->attr[i].val)
			return -ENOMEM;
		n->nattr++;
	}
	return 0;
}

/*
 * Make node @n a @type node reading @in (@nin values) with the
 * attributes @kv (@nkv key, value pairs), parse and infer it, and mark
 * the other absorbed nodes gone.  Its output value stays, and must keep
 * its type and shape.
 */
static int rewrite(struct lm *s, struct npr_node *n, const char *type,
		   unsigned int version, const int *in, int nin,
		   const char *const *kv, int nkv, const struct absorbed *a)
{
	struct npr_value *o = npr_out(s->g, n, 0);
	struct npr_shape was = o->shape;
	unsigned int wtype = o->type;
	int i, err;

	err = retype(s, n, type, version);
	if (!err)
		err = set_ports(s, n, in, nin, kv, nkv);
	if (!err && n->op->parse)
		err = n->op->parse(s->g, n);
	if (!err)
		err = n->op->infer(s->g, n);
	if (err)
		return err;
	if (o->type != wtype || !npr_shape_eq(&o->shape, &was))
		return npr_node_err(n, -EINVAL,
				    "fused %s changed the output", type);
	for (i = 0; i < a->n; i++)
		if (&s->g->nodes[a->node[i]] != n)
			s->gone[a->node[i]] = true;
	recount(s);
	return 1;
}

/* ---- products of single-use Multiply nodes ---------------------------- */

#define MAX_LEAVES	6

struct product {
	int n;
	int leaf[MAX_LEAVES];
	double c;		/* the constants multiplied (divided) in */
	struct absorbed abs;
	bool ok;
};

/*
 * Flatten the product @v into its non-constant leaves and the product of
 * its constants: Multiply nodes, Divide by a constant and Power by 2 or
 * 3 whose outputs are read once (@root: @v's own node, however many
 * readers it has).
 */
static void flatten(const struct lm *s, int v, bool root, struct product *p)
{
	struct npr_node *n = prod(s, v);
	double c;
	int k;

	if (!p->ok)
		return;
	if (scalar(s, v, &c)) {
		p->c *= c;
		return;
	}
	if (n && (root || one_use(s, v)) && f32_static(s, v)) {
		if (is(n, "Multiply", 2)) {
			p->ok = take(&p->abs, s, n);
			flatten(s, n->in[0], false, p);
			flatten(s, n->in[1], false, p);
			return;
		}
		if (is(n, "Divide", 2) && scalar(s, n->in[1], &c) && c != 0) {
			p->ok = take(&p->abs, s, n);
			p->c /= c;
			flatten(s, n->in[0], false, p);
			return;
		}
		if (is(n, "Power", 2) && scalar(s, n->in[1], &c) &&
		    (c == 2 || c == 3) && !scalar(s, n->in[0], &c)) {
			scalar(s, n->in[1], &c);
			p->ok = take(&p->abs, s, n);
			for (k = 0; k < (int)c; k++)
				flatten(s, n->in[0], false, p);
			return;
		}
	}
	if (p->n == MAX_LEAVES) {
		p->ok = false;
		return;
	}
	p->leaf[p->n++] = v;
}

static void product_of(const struct lm *s, int v, struct product *p)
{
	memset(p, 0, sizeof(*p));
	p->c = 1;
	p->ok = true;
	flatten(s, v, true, p);
}

static bool merge(struct absorbed *a, const struct absorbed *b)
{
	int i;

	if (a->n + b->n > MAX_ABS)
		return false;
	for (i = 0; i < b->n; i++)
		a->node[a->n++] = b->node[i];
	return true;
}

/* @v is Add(1, @op(z)) read once: z. */
static int one_plus(const struct lm *s, int v, const char *op,
		    struct absorbed *a)
{
	struct npr_node *n = prod(s, v), *f;
	double c;
	int k;

	if (!is(n, "Add", 2) || !one_use(s, v))
		return -1;
	for (k = 0; k < 2; k++) {
		f = prod(s, n->in[k]);
		if (scalar(s, n->in[1 - k], &c) && c == 1 &&
		    is(f, op, 1) && one_use(s, n->in[k]) &&
		    same_shape(s, n->in[k], v) && take(a, s, n) &&
		    take(a, s, f))
			return f->in[0];
	}
	return -1;
}

/* ---- GELU and SiLU ---------------------------------------------------- */

/* x * 0.5 * (1 + Erf(x / sqrt 2)) or its tanh form, ending at node @n. */
static int try_gelu(struct lm *s, struct npr_node *n)
{
	static const char *const erf_kv[] = { "approximation_mode", "erf" };
	static const char *const tanh_kv[] = { "approximation_mode", "tanh" };
	struct product p, z, w, t;
	int j, k, x, e, arg, in[1];

	product_of(s, n->out[0], &p);
	if (!p.ok || p.n != 2 || !near(p.c, 0.5))
		return 0;
	for (k = 0; k < 2; k++) {
		struct absorbed a = p.abs;
		struct npr_node *ad;

		x = p.leaf[k];
		e = p.leaf[1 - k];
		if (!f32_static(s, x) || !same_shape(s, x, n->out[0]))
			continue;
		/* erf: (1 + Erf(x * 1/sqrt 2)) */
		arg = one_plus(s, e, "Erf", &a);
		if (arg >= 0) {
			product_of(s, arg, &z);
			if (z.ok && z.n == 1 && z.leaf[0] == x &&
			    one_use(s, arg) && near(z.c, M_SQRT1_2) &&
			    merge(&a, &z.abs)) {
				in[0] = x;
				return rewrite(s, n, "Gelu", 7, in, 1, erf_kv,
					       1, &a);
			}
			continue;
		}
		/* tanh: (1 + Tanh(sqrt(2/pi) * (x + 0.044715 x^3))) */
		a = p.abs;
		arg = one_plus(s, e, "Tanh", &a);
		if (arg < 0 || !one_use(s, arg))
			continue;
		product_of(s, arg, &w);
		if (!w.ok || w.n != 1 || !near(w.c, sqrt(2 / M_PI)) ||
		    !merge(&a, &w.abs))
			continue;
		ad = prod(s, w.leaf[0]);
		if (!is(ad, "Add", 2) || !one_use(s, w.leaf[0]) ||
		    !take(&a, s, ad))
			continue;
		for (j = 0; j < 2; j++) {
			if (ad->in[j] != x || !one_use(s, ad->in[1 - j]))
				continue;
			product_of(s, ad->in[1 - j], &t);
			if (t.ok && t.n == 3 && t.leaf[0] == x &&
			    t.leaf[1] == x && t.leaf[2] == x &&
			    near(t.c, 0.044715) && merge(&a, &t.abs)) {
				in[0] = x;
				return rewrite(s, n, "Gelu", 7, in, 1, tanh_kv,
					       1, &a);
			}
		}
	}
	return 0;
}

/* x * Sigmoid(x), x * Sigmoid(x * beta) ending at Multiply @n: Swish. */
static int try_silu(struct lm *s, struct npr_node *n)
{
	int k, in[2];

	if (!is(n, "Multiply", 2))
		return 0;
	for (k = 0; k < 2; k++) {
		int x = n->in[k], sv = n->in[1 - k];
		struct npr_node *sg = prod(s, sv), *m;
		struct absorbed a = { 0 };
		double c;

		if (!is(sg, "Sigmoid", 1) || !one_use(s, sv) ||
		    !f32_static(s, x) || !same_shape(s, x, n->out[0]) ||
		    !same_shape(s, sv, n->out[0]) || !take(&a, s, sg))
			continue;
		in[0] = x;
		if (sg->in[0] == x)
			return rewrite(s, n, "Swish", 4, in, 1, NULL, 0, &a);
		/* beta: Sigmoid(Multiply(x, beta)) with beta one constant */
		m = prod(s, sg->in[0]);
		if (!is(m, "Multiply", 2) || !one_use(s, sg->in[0]) ||
		    !same_shape(s, sg->in[0], x) || !take(&a, s, m))
			continue;
		if (m->in[0] == x && scalar(s, m->in[1], &c))
			in[1] = m->in[1];
		else if (m->in[1] == x && scalar(s, m->in[0], &c))
			in[1] = m->in[0];
		else
			continue;
		if (s->g->vals[in[1]].shape.rank > 1)
			continue;	/* Swish takes a scalar or [1] */
		return rewrite(s, n, "Swish", 4, in, 2, NULL, 0, &a);
	}
	return 0;
}

/* ---- LayerNorm and RMSNorm -------------------------------------------- */

/*
 * ReduceMean of @v over the trailing axes from some axis on, keeping
 * them: that axis, else -1.
 */
static int64_t mean_axis(const struct lm *s, const struct npr_node *r)
{
	const struct npr_nn_params *p;
	const struct npr_shape *xs;
	int64_t a = -1;
	int i;

	if (!is(r, "ReduceMean", 2))
		return -1;
	p = r->params;
	xs = &s->g->vals[r->in[0]].shape;
	if (p->red != NPR_RED_MEAN || !p->keep_dims || xs->rank < 1 ||
	    !f32_static(s, r->in[0]))
		return -1;
	for (i = 0; i < xs->rank; i++) {
		if (p->reduced[i] && a < 0)
			a = i;
		if (!p->reduced[i] && a >= 0)
			return -1;
	}
	return a;
}

struct norm {
	int x, data;		/* the input; what is squared and divided */
	int64_t axis;
	double eps;
	bool inside;
	struct absorbed abs;
};

/* @v = Add(@w, eps) read once, eps one constant >= 0: @w. */
static int plus_eps(const struct lm *s, int v, struct norm *m)
{
	struct npr_node *n = prod(s, v);
	int k;

	if (!is(n, "Add", 2) || !one_use(s, v))
		return -1;
	for (k = 0; k < 2; k++)
		if (scalar(s, n->in[1 - k], &m->eps) && m->eps >= 0 &&
		    isfinite(m->eps) && same_shape(s, n->in[k], v) &&
		    take(&m->abs, s, n))
			return n->in[k];
	return -1;
}

/*
 * @v = ReduceMean(@t * @t) over trailing axes, read once: the variance
 * (mean square) of @t, which it returns; @m->axis set.
 */
static int mean_square(const struct lm *s, int v, struct norm *m)
{
	struct npr_node *r = prod(s, v), *sq;
	double c;

	if (!one_use(s, v) || (m->axis = mean_axis(s, r)) < 0)
		return -1;
	sq = prod(s, r->in[0]);
	if (!sq || !one_use(s, r->in[0]) || !take(&m->abs, s, r))
		return -1;
	if (is(sq, "Multiply", 2) && sq->in[0] == sq->in[1] &&
	    take(&m->abs, s, sq))
		return sq->in[0];
	if (is(sq, "Power", 2) && scalar(s, sq->in[1], &c) && c == 2 &&
	    take(&m->abs, s, sq))
		return sq->in[0];
	return -1;
}

/* @v is the standard deviation: sqrt(var + eps) or sqrt(var) + eps. */
static int std_of(const struct lm *s, int v, struct norm *m)
{
	struct npr_node *n = prod(s, v), *q;
	int w;

	if (!one_use(s, v))
		return -1;
	if (is(n, "Sqrt", 1) && take(&m->abs, s, n)) {
		m->inside = true;
		w = plus_eps(s, n->in[0], m);
		return w < 0 ? -1 : mean_square(s, w, m);
	}
	w = plus_eps(s, v, m);
	q = w < 0 ? NULL : prod(s, w);
	if (!is(q, "Sqrt", 1) || !one_use(s, w) || !take(&m->abs, s, q))
		return -1;
	m->inside = false;
	return mean_square(s, q->in[0], m);
}

/* @v is 1 / std: Divide(1, std) or Power(var + eps, -0.5). */
static int rstd_of(const struct lm *s, int v, struct norm *m)
{
	struct npr_node *n = prod(s, v);
	double c;
	int w;

	if (!one_use(s, v))
		return -1;
	if (is(n, "Divide", 2) && scalar(s, n->in[0], &c) && c == 1 &&
	    take(&m->abs, s, n))
		return std_of(s, n->in[1], m);
	if (is(n, "Power", 2) && scalar(s, n->in[1], &c) && c == -0.5 &&
	    take(&m->abs, s, n)) {
		m->inside = true;
		w = plus_eps(s, n->in[0], m);
		return w < 0 ? -1 : mean_square(s, w, m);
	}
	return -1;
}

/*
 * Node @y normalizes: Divide(d, std) or Multiply(d, 1 / std) where std
 * comes from the mean square of d.  Then d is x - ReduceMean(x) over the
 * same axes (layer) or x itself (rms).
 */
static bool norm_core(const struct lm *s, struct npr_node *y, struct norm *m)
{
	int k, t = -1, d = -1, reads;
	struct npr_node *sub, *mean;

	for (k = 0; k < 2 && t < 0; k++) {
		memset(m, 0, sizeof(*m));
		take(&m->abs, s, y);
		if (is(y, "Divide", 2) && k == 0) {
			d = y->in[0];
			t = std_of(s, y->in[1], m);
		} else if (is(y, "Multiply", 2)) {
			d = y->in[k];
			t = rstd_of(s, y->in[1 - k], m);
		}
		if (t != d)
			t = -1;
	}
	if (t < 0 || !f32_static(s, d) || !same_shape(s, d, y->out[0]))
		return false;
	m->data = d;
	m->x = d;
	/* layer: d = x - mean(x), read by the square and by y alone */
	sub = prod(s, d);
	reads = (m->abs.n >= 1 &&
		 is(&s->g->nodes[m->abs.node[m->abs.n - 1]], "Multiply", 2)) ?
		3 : 2;
	if (is(sub, "Subtract", 2) && s->uses[d] == reads &&
	    one_use(s, sub->in[1])) {
		mean = prod(s, sub->in[1]);
		if (mean && mean->in[0] == sub->in[0] &&
		    mean_axis(s, mean) == m->axis &&
		    same_shape(s, sub->in[0], d) && take(&m->abs, s, sub) &&
		    take(&m->abs, s, mean))
			m->x = sub->in[0];
	}
	return true;
}

/* The sole reader of @v when it is a @type node with a fitting operand. */
static struct npr_node *affine(const struct lm *s, int v, const char *type,
			       const struct norm *m, int *param)
{
	struct npr_node *n;
	int k;

	if (!one_use(s, v))
		return NULL;
	n = &s->g->nodes[s->user[v]];
	if (!is(n, type, 2) || s->gone[s->user[v]] ||
	    !same_shape(s, n->out[0], m->x))
		return NULL;
	for (k = 0; k < 2; k++) {
		const struct npr_value *pv = &s->g->vals[n->in[1 - k]];

		if (n->in[k] == v && n->in[1 - k] != v &&
		    pv->type == NPR_ELEM_F32 &&
		    npr_shape_static(&pv->shape) &&
		    npr_fnorm_param_ok(&s->g->vals[m->x].shape, m->axis,
				       &pv->shape)) {
			*param = n->in[1 - k];
			return n;
		}
	}
	return NULL;
}

static int try_norm(struct lm *s, struct npr_node *y, unsigned int which,
		    int *kind)
{
	struct npr_node *last = y, *n;
	struct norm m;
	char axis[24], eps[32];
	const char *kv[8];
	int in[3], nin = 1, rms;

	if (!norm_core(s, y, &m))
		return 0;
	rms = m.x == m.data;
	*kind = rms ? NPR_LMFUSE_RMSNORM : NPR_LMFUSE_LAYERNORM;
	if (!(which & (1u << *kind)))
		return 0;
	in[0] = m.x;
	n = affine(s, y->out[0], "Multiply", &m, &in[1]);
	if (n && take(&m.abs, s, n)) {
		last = n;
		nin = 2;
		n = affine(s, n->out[0], "Add", &m, &in[2]);
		if (n && take(&m.abs, s, n)) {
			last = n;
			nin = 3;
		}
	}
	snprintf(axis, sizeof(axis), "%lld", (long long)m.axis);
	snprintf(eps, sizeof(eps), "%.9g", m.eps);
	kv[0] = "mode";
	kv[1] = rms ? "rms" : "layer";
	kv[2] = "axis";
	kv[3] = axis;
	kv[4] = "epsilon";
	kv[5] = eps;
	kv[6] = "eps_inside";
	kv[7] = m.inside ? "true" : "false";
	return rewrite(s, last, "FusedNorm", 1, in, nin, kv, 4, &m.abs);
}

/* ---- attention -------------------------------------------------------- */

struct attn {
	int q, k, v, mask;
	double scale;
	bool key_t, fill_when;
	int mode;
	double fill;
	struct absorbed abs;
};

/* Strip Multiply/Divide by one constant read once off @v into @scale. */
static int unscale(const struct lm *s, int v, struct attn *a)
{
	for (;;) {
		struct npr_node *n = prod(s, v);
		double c;
		int k;

		if (!n || !one_use(s, v))
			return v;
		if (is(n, "Divide", 2) && scalar(s, n->in[1], &c) && c != 0 &&
		    same_shape(s, n->out[0], n->in[0]) &&
		    take(&a->abs, s, n)) {
			a->scale /= c;
			v = n->in[0];
			continue;
		}
		if (!is(n, "Multiply", 2))
			return v;
		for (k = 0; k < 2; k++)
			if (scalar(s, n->in[1 - k], &c) &&
			    same_shape(s, n->out[0], n->in[k]))
				break;
		if (k == 2 || !take(&a->abs, s, n))
			return v;
		a->scale *= c;
		v = n->in[k];
	}
}

/*
 * @v = Reshape(Broadcast(Unsqueeze(kv))) repeating each of kv's heads
 * (the axis before the last two) r times in place: kv, else @v.
 */
static int unexpand(const struct lm *s, int v, struct attn *a)
{
	struct npr_node *rs = prod(s, v), *bc, *us;
	const struct npr_shape *ks, *u, *b, *o;
	int i, R, at;

	if (!is(rs, "Reshape", 2) || !one_use(s, v))
		return v;
	bc = prod(s, rs->in[0]);
	if (!bc || strcmp(bc->type, "Broadcast") || !one_use(s, rs->in[0]))
		return v;
	us = prod(s, bc->in[0]);
	if (!is(us, "Unsqueeze", 2) || !one_use(s, bc->in[0]))
		return v;
	ks = &s->g->vals[us->in[0]].shape;
	u = &s->g->vals[us->out[0]].shape;
	b = &s->g->vals[bc->out[0]].shape;
	o = &s->g->vals[v].shape;
	R = ks->rank;
	if (R < 3 || u->rank != R + 1 || b->rank != R + 1 || o->rank != R ||
	    !npr_shape_static(ks) || !npr_shape_static(b))
		return v;
	at = R - 2;	/* the new axis, after the heads */
	for (i = 0; i <= R; i++) {
		int64_t kd = i < at ? ks->d[i] : i == at ? 1 : ks->d[i - 1];

		if (u->d[i] != kd || (i != at && b->d[i] != kd))
			return v;
	}
	for (i = 0; i < R; i++) {
		int64_t want = i == R - 3 ? ks->d[i] * b->d[at] : ks->d[i];

		if (o->d[i] != want)
			return v;
	}
	if (!take(&a->abs, s, rs) || !take(&a->abs, s, bc) ||
	    !take(&a->abs, s, us))
		return v;
	return us->in[0];
}

/* Is Transpose @t a swap of the last two axes? */
static bool swaps_last(struct lm *s, const struct npr_node *t)
{
	const struct npr_value *pv;
	int64_t perm[NPR_MAX_RANK];
	int i, r, cnt;

	if (!is(t, "Transpose", 2))
		return false;
	pv = &s->g->vals[t->in[1]];
	r = s->g->vals[t->in[0]].shape.rank;
	if (!pv->data || r < 2 || npr_shape_numel(&pv->shape) != r)
		return false;
	cnt = npr_const_ints(s->g, t, 1, perm, NPR_MAX_RANK);
	if (cnt != r)
		return false;
	for (i = 0; i < r - 2; i++)
		if (perm[i] != i && perm[i] != i - r)
			return false;
	return (perm[r - 2] == r - 1 || perm[r - 2] == -1) &&
	       (perm[r - 1] == r - 2 || perm[r - 1] == -2);
}

/* The scores @v: scaled MatMul(Q, K^T); fills @a. */
static bool qk_of(struct lm *s, int v, struct attn *a)
{
	struct npr_node *mm, *t;
	const struct npr_nn_params *p;
	int kx;

	v = unscale(s, v, a);
	mm = prod(s, v);
	if (!is(mm, "MatMul", 2) || !one_use(s, v))
		return false;
	p = mm->params;
	if (p->ta || !take(&a->abs, s, mm))
		return false;
	a->q = unscale(s, mm->in[0], a);
	kx = unscale(s, mm->in[1], a);
	a->key_t = false;
	if (p->tb) {
		a->k = kx;
	} else {
		t = prod(s, kx);
		if (t && one_use(s, kx) && swaps_last(s, t) &&
		    take(&a->abs, s, t)) {
			a->k = unscale(s, t->in[0], a);
		} else {
			a->k = kx;
			a->key_t = true;
		}
	}
	a->k = unexpand(s, a->k, a);
	return true;
}

static int try_attention(struct lm *s, struct npr_node *sm)
{
	static const char *const modes[] = { "none", "add", "select" };
	const struct npr_nn_params *p = sm->params;
	const struct npr_shape *xs = &s->g->vals[sm->in[0]].shape;
	struct npr_node *pv, *mk;
	struct npr_shape out, sc, mb;
	struct attn a;
	char scale[32], fill[32];
	const char *kv[10];
	int in[4], x, k, r = xs->rank;
	int64_t axis;
	double c;

	if (!is(sm, "SoftMax", 1) || r < 2 || !one_use(s, sm->out[0]) ||
	    !f32_static(s, sm->in[0]))
		return 0;
	axis = p->axis < 0 ? p->axis + r : p->axis;
	if (axis != r - 1)
		return 0;
	pv = &s->g->nodes[s->user[sm->out[0]]];
	if (!is(pv, "MatMul", 2) || pv->in[0] != sm->out[0] ||
	    pv->in[1] == sm->out[0] ||
	    ((const struct npr_nn_params *)pv->params)->ta ||
	    ((const struct npr_nn_params *)pv->params)->tb)
		return 0;
	memset(&a, 0, sizeof(a));
	a.scale = 1;
	a.mask = -1;
	take(&a.abs, s, sm);
	x = sm->in[0];
	mk = prod(s, x);
	if (!one_use(s, x))
		return 0;
	if (is(mk, "Add", 2)) {
		for (k = 0; k < 2; k++) {
			struct attn b = a;
			int m = mk->in[1 - k];

			if (m == mk->in[k] || !f32_static(s, m) ||
			    !same_shape(s, mk->in[k], x) ||
			    !take(&b.abs, s, mk) || !qk_of(s, mk->in[k], &b))
				continue;
			b.mode = NPR_FATTN_MASK_ADD;
			b.mask = m;
			a = b;
			break;
		}
	} else if (is(mk, "Select", 3)) {
		int chain = -1;

		if (scalar(s, mk->in[1], &c)) {
			a.fill_when = true;
			chain = mk->in[2];
		} else if (scalar(s, mk->in[2], &c)) {
			a.fill_when = false;
			chain = mk->in[1];
		}
		if (chain >= 0 && !isnan(c) &&
		    s->g->vals[mk->in[0]].type == NPR_ELEM_BOOLEAN &&
		    npr_shape_static(&s->g->vals[mk->in[0]].shape) &&
		    same_shape(s, chain, x) && take(&a.abs, s, mk) &&
		    qk_of(s, chain, &a)) {
			a.mode = NPR_FATTN_MASK_SELECT;
			a.fill = c;
			a.mask = mk->in[0];
		}
	}
	if (a.mode == NPR_FATTN_MASK_NONE && !qk_of(s, x, &a))
		return 0;
	a.v = unexpand(s, pv->in[1], &a);
	if (!isfinite(a.scale) || !f32_static(s, a.q) || !f32_static(s, a.k) ||
	    !f32_static(s, a.v) ||
	    npr_fattn_shape(&s->g->vals[a.q].shape, &s->g->vals[a.k].shape,
			    &s->g->vals[a.v].shape, a.key_t, &out, &sc) ||
	    !npr_shape_eq(&out, &s->g->vals[pv->out[0]].shape) ||
	    !npr_shape_eq(&sc, xs))
		return 0;
	if (a.mask >= 0 &&
	    (npr_shape_broadcast(&s->g->vals[a.mask].shape, &sc, &mb) ||
	     !npr_shape_eq(&mb, &sc)))
		return 0;
	if (!take(&a.abs, s, pv))
		return 0;
	in[0] = a.q;
	in[1] = a.k;
	in[2] = a.v;
	in[3] = a.mask;
	snprintf(scale, sizeof(scale), "%.9g", (float)a.scale);
	snprintf(fill, sizeof(fill), "%.9g", (float)a.fill);
	kv[0] = "scale";
	kv[1] = scale;
	kv[2] = "key_transposed";
	kv[3] = a.key_t ? "true" : "false";
	kv[4] = "mask";
	kv[5] = modes[a.mode];
	kv[6] = "fill";
	kv[7] = fill;
	kv[8] = "fill_when";
	kv[9] = a.fill_when ? "true" : "false";
	return rewrite(s, pv, "FusedAttention", 1, in,
		       a.mode == NPR_FATTN_MASK_NONE ? 3 : 4, kv, 5, &a.abs);
}

/* ---- MatMul weights --------------------------------------------------- */

/* MatMul(A, W [K, N] constant, read by it alone): W as [N, K], tb. */
static int try_matmul(struct lm *s, struct npr_node *n)
{
	const struct npr_nn_params *p = n->params;
	struct npr_value *w;
	int64_t K, N, i, j;
	const float *src;
	char *yes;
	float *t;
	int at;

	/* a view's weights and attributes are its source's */
	if (!is(n, "MatMul", 2) || p->ta || p->tb ||
	    (n->packed & NPR_NODE_PACKED_ATTR) || s->g->view)
		return 0;
	w = &s->g->vals[n->in[1]];
	/* A of unknown rank (dynamic input dimensions) has one at least */
	if (!w->data || w->type != NPR_ELEM_F32 || w->shape.rank != 2 ||
	    s->uses[n->in[1]] != 1 || n->in[0] == n->in[1] ||
	    s->g->vals[n->in[0]].shape.rank == 0)
		return 0;
	K = w->shape.d[0];
	N = w->shape.d[1];
	if (K < 1 || N < 1 || w->nbytes != (size_t)(K * N) * sizeof(float))
		return 0;
	/* transpose_b: the first of its name is the one read */
	for (at = 0; at < n->nattr; at++)
		if (!strcmp(n->attr[at].key, "transpose_b"))
			break;
	t = malloc(w->nbytes);
	yes = strdup("true");
	if (!t || !yes) {
		free(t);
		free(yes);
		return -ENOMEM;
	}
	if (at == n->nattr && npr_node_add_attr(n, "transpose_b", "")) {
		free(t);
		free(yes);
		return -ENOMEM;
	}
	npr_graph_free_str(s->g, n->attr[at].val);
	n->attr[at].val = yes;
	src = w->data;
	for (i = 0; i < K; i++)
		for (j = 0; j < N; j++)
			t[j * K + i] = src[i * N + j];
	if (!w->owned)
		npr_graph_drop_pages(s->g, w->data, w->nbytes);
	free(w->owned);
	w->owned = t;
	w->data = t;
	w->shape.d[0] = N;
	w->shape.d[1] = K;
	w->decl.rank = -1;
	if (n->op->parse(s->g, n) ||
	    (s->g->vals[n->in[0]].shape.rank > 0 && n->op->infer(s->g, n)))
		return -EINVAL;
	return 1;
}

/**
 * npr_pass_lmfuse() - fuse attention, norms and activations in place
 * @g: a compiled graph (shapes inferred, constants folded); the nodes
 *     absorbed are marked dead.
 * @which: bits (1 << enum npr_lmfuse_kind) of the fusions to make.
 * @counts: Out, or NULL. How many of each kind were made.
 *
 * Return: the number of fusions made, or -errno (-ENOMEM) with the graph
 * left valid (each rewrite is complete or not begun).
 */
int npr_pass_lmfuse(struct npr_graph *g, unsigned int which,
		    int counts[NPR_LMFUSE_KINDS])
{
	struct lm s = { .g = g };
	int i, r, kind, total = 0, err = 0;

	if (counts)
		memset(counts, 0, sizeof(int) * NPR_LMFUSE_KINDS);
	if (!which || !g->nnodes)
		return 0;
	s.uses = calloc(g->nvals ? g->nvals : 1, sizeof(int));
	s.user = calloc(g->nvals ? g->nvals : 1, sizeof(int));
	s.gone = calloc(g->nnodes, sizeof(bool));
	if (!s.uses || !s.user || !s.gone) {
		err = -ENOMEM;
		goto out;
	}
	recount(&s);
	for (i = 0; i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];

		if (n->dead || s.gone[i] || n->nout != 1)
			continue;
		r = 0;
		kind = -1;
		if (!strcmp(n->type, "SoftMax") &&
		    (which & (1u << NPR_LMFUSE_ATTENTION))) {
			kind = NPR_LMFUSE_ATTENTION;
			r = try_attention(&s, n);
		} else if (!strcmp(n->type, "Divide") ||
			   !strcmp(n->type, "Multiply")) {
			if (which & ((1u << NPR_LMFUSE_LAYERNORM) |
				     (1u << NPR_LMFUSE_RMSNORM)))
				r = try_norm(&s, n, which, &kind);
			if (!r && !strcmp(n->type, "Multiply") &&
			    (which & (1u << NPR_LMFUSE_GELU))) {
				kind = NPR_LMFUSE_GELU;
				r = try_gelu(&s, n);
			}
			if (!r && !strcmp(n->type, "Multiply") &&
			    (which & (1u << NPR_LMFUSE_SILU))) {
				kind = NPR_LMFUSE_SILU;
				r = try_silu(&s, n);
			}
		}
		if (r < 0) {
			err = r;
			goto out;
		}
		if (r > 0) {
			total++;
			if (counts)
				counts[kind]++;
		}
	}
	for (i = 0; (which & (1u << NPR_LMFUSE_MATMUL)) && i < g->nnodes;
	     i++) {
		struct npr_node *n = &g->nodes[i];

		if (n->dead || s.gone[i])
			continue;
		r = try_matmul(&s, n);
		if (r < 0) {
			err = r;
			goto out;
		}
		if (r > 0) {
			total++;
			if (counts)
				counts[NPR_LMFUSE_MATMUL]++;
		}
	}
	err = npr_infer_mark_dead(g);
out:
	free(s.uses);
	free(s.user);
	free(s.gone);
	return err ? err : total;
}
