// SPDX-License-Identifier: MIT
/*
 * Graph helpers of the low-precision passes (lib/passes/lowp.c,
 * lib/passes/qlayout.c): the int8 weights behind a folded dequantization,
 * per-channel constants, the u8 grids of FakeQuantize limits, new
 * constants, and new nodes placed where they keep the port nodes'
 * indexes.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/lowp_graph.h"

static bool is(const struct npr_node *n, const char *type)
{
	return !strcmp(n->type, type);
}

static const struct npr_node *prod(const struct npr_graph *g, int v)
{
	int p = g->vals[v].producer;

	return p >= 0 && p < g->nnodes ? &g->nodes[p] : NULL;
}

/**
 * npr_lowp_chan_of() - a constant's values per channel
 * @g: the graph.
 * @v: an f32 constant, broadcast against a value of shape @s with the
 *     trailing dims aligned.
 * @s: that shape.
 * @axis: the channel axis of @s.
 * @k: the channels.
 * @cnt: out: 1 or @k values.
 *
 * Return: the values, or NULL when @v is not such a constant (or one is
 * not finite).
 */
const float *npr_lowp_chan_of(const struct npr_graph *g, int v,
			      const struct npr_shape *s, int axis, int64_t k,
			      int64_t *cnt)
{
	const struct npr_value *x = &g->vals[v];
	const float *f = x->data;
	int64_t i;
	int j;

	if (!f || x->type != NPR_ELEM_F32 || x->shape.rank > s->rank)
		return NULL;
	for (j = 0; j < x->shape.rank; j++)
		if (x->shape.d[j] != 1 &&
		    (s->rank - x->shape.rank + j != axis || x->shape.d[j] != k))
			return NULL;
	*cnt = npr_shape_numel(&x->shape);
	if (*cnt != 1 && *cnt != k)
		return NULL;
	for (i = 0; i < *cnt; i++)
		if (!isfinite(f[i]))
			return NULL;
	return f;
}

/* flat index @i of shape @s in a tensor of shape @p broadcast to @s */
static int64_t bcast_index(const struct npr_shape *s, const struct npr_shape *p,
			   int64_t i)
{
	int64_t r = 0, st = 1, d;
	int j, pj;

	for (j = s->rank - 1; j >= 0; j--) {
		d = i % s->d[j];
		i /= s->d[j];
		pj = j - (s->rank - p->rank);
		if (pj < 0)
			continue;
		if (p->d[pj] != 1)
			r += d * st;
		st *= p->d[pj];
	}
	return r;
}

/*
 * Weight zero points: integers, or (an OpenVINO IR's, f16 numbers after a
 * conversion) within W_ZERO_TOL of one, which counts as that integer (an
 * error of at most that much of a step).
 */
#define W_ZERO_TOL	1e-3f

/* @q (@n values, i8 or u8) minus zero points @zv into @c; false if off i8 */
static bool centre(const struct npr_graph *g, const struct npr_value *q, int zv,
		   int8_t *c, int64_t n)
{
	const struct npr_value *z = zv >= 0 ? &g->vals[zv] : NULL;
	const float *zf = z ? z->data : NULL;
	int64_t i;
	int j;

	if (z && (!zf || z->type != NPR_ELEM_F32 ||
		  z->shape.rank > q->shape.rank))
		return false;
	for (j = 0; z && j < z->shape.rank; j++) {
		int64_t d = q->shape.d[q->shape.rank - z->shape.rank + j];

		if (z->shape.d[j] != 1 && z->shape.d[j] != d)
			return false;
	}
	/* zero points 0 (symmetric weights): nothing to index */
	for (i = 0; zf && i < npr_shape_numel(&z->shape) && !zf[i]; i++)
		;
	if (zf && i == npr_shape_numel(&z->shape))
		zf = NULL;
	for (i = 0; i < n; i++) {
		float v = q->type == NPR_ELEM_I8 ?
			  ((const int8_t *)q->data)[i] :
			  ((const uint8_t *)q->data)[i];

		if (zf) {
			float zi = zf[npr_shape_numel(&z->shape) == 1 ? 0 :
				      bcast_index(&q->shape, &z->shape, i)];

			/* an IR's zero points went through f16 */
			if (!(fabsf(zi - nearbyintf(zi)) <= W_ZERO_TOL))
				return false;
			v -= nearbyintf(zi);
		}
		if (!(v >= -128 && v <= 127) || v != floorf(v))
			return false;
		c[i] = (int8_t)v;
	}
	return true;
}

/* @v comes from a Subtract or a Convert */
static bool centring(const struct npr_graph *g, int v)
{
	const struct npr_node *a = prod(g, v);

	return a && (is(a, "Subtract") || is(a, "Convert"));
}

/**
 * npr_lowp_w_centred() - the int8 weights behind folded f32 weights
 * @g: the graph.
 * @w: the weights: a Convert of i8 or u8 constants [-> Subtract(zero
 *     points)] [-> Multiply(scales along axis @axis of them, 1 or @k)]
 *     [-> Reshape].
 * @axis: the scales' axis.
 * @k: the channels along it.
 * @qv: out: the quantized constant's value.
 * @sc: out: the scales.
 * @ns: out: their count, 1 or @k.
 *
 * Zero points are integers, or (an OpenVINO IR's, f16 numbers after a
 * conversion) within W_ZERO_TOL of one, which counts as that integer.
 *
 * Return: the constants minus their zero points (allocated), or NULL
 * when one leaves i8 or @w is no such value.
 */
int8_t *npr_lowp_w_centred(const struct npr_graph *g, int w, int axis,
			   int64_t k, int *qv, const float **sc, int64_t *ns)
{
	static const float one = 1.0f;
	const struct npr_node *m = prod(g, w), *a;
	const struct npr_value *q;
	int sv = -1, zv = -1, o;
	int64_t n;
	int8_t *c;

	if (m && is(m, "Reshape"))
		m = prod(g, m->in[0]);
	a = m;
	if (m && is(m, "Multiply") && m->nin == 2) {
		/* the weights come from a Subtract or a Convert, in[0] or 1 */
		o = !centring(g, m->in[0]) && centring(g, m->in[1]);
		sv = m->in[!o];
		a = prod(g, m->in[o]);
	}
	if (a && is(a, "Subtract") && a->nin == 2) {
		zv = a->in[1];
		a = prod(g, a->in[0]);
	}
	if (!a || !is(a, "Convert") || a->nin != 1)
		return NULL;
	*qv = a->in[0];
	q = &g->vals[*qv];
	n = npr_shape_numel(&q->shape);
	if (!q->data || (q->type != NPR_ELEM_I8 && q->type != NPR_ELEM_U8) ||
	    n != npr_shape_numel(&g->vals[w].shape) || n < 1)
		return NULL;
	*sc = &one;
	*ns = 1;
	if (sv >= 0) {
		*sc = npr_lowp_chan_of(g, sv, &q->shape, axis, k, ns);
		if (!*sc)
			return NULL;
	}
	c = malloc(n);
	if (c && !centre(g, q, zv, c, n)) {
		free(c);
		c = NULL;
	}
	return c;
}

/* node indexes in [@lo, @hi] of the port arrays move by @by */
static void shift_ports(struct npr_graph *g, int lo, int hi, int by)
{
	int k;

	for (k = 0; k < g->ninputs; k++)
		if (g->inputs[k] >= lo && g->inputs[k] <= hi)
			g->inputs[k] += by;
	for (k = 0; k < g->noutputs; k++)
		if (g->outputs[k] >= lo && g->outputs[k] <= hi)
			g->outputs[k] += by;
}

/**
 * npr_lowp_place_before() - put a new node just before another
 * @g: the graph.
 * @ni: the new node (the last one; its inputs produced before @p).
 * @p: the node it goes before.
 *
 * The nodes between the last dead node before @p and @p move up one
 * place (a Parameter or Result among them too: the port arrays follow,
 * as npr_graph_sort() renumbers them), the new node takes the freed
 * place before @p and the dead node the new node's.
 *
 * Return: false (nothing moved) when no dead node comes first.
 */
bool npr_lowp_place_before(struct npr_graph *g, int ni, int p)
{
	struct npr_node t;
	int d, i, j;

	for (d = p - 1; d >= 0 && !g->nodes[d].dead; d--)
		;
	if (d < 0)
		return false;
	t = g->nodes[d];
	memmove(&g->nodes[d], &g->nodes[d + 1],
		(size_t)(p - 1 - d) * sizeof(t));
	g->nodes[p - 1] = g->nodes[ni];
	g->nodes[ni] = t;
	shift_ports(g, d + 1, p - 1, -1);
	for (i = d; i < p; i++)
		for (j = 0; j < g->nodes[i].nout; j++)
			g->vals[g->nodes[i].out[j]].producer = i;
	for (j = 0; j < g->nodes[ni].nout; j++)
		g->vals[g->nodes[ni].out[j]].producer = ni;
	return true;
}

/**
 * npr_lowp_place_ok() - will npr_lowp_place_before() find room
 * @g: the graph.
 * @p: the node new ones go before.
 * @k: how many.
 *
 * Return: true when @k dead nodes come before @p.
 */
bool npr_lowp_place_ok(const struct npr_graph *g, int p, int k)
{
	int d;

	for (d = p - 1; d >= 0 && k > 0; d--)
		k -= g->nodes[d].dead;
	return k == 0;
}

/**
 * npr_lowp_const() - a new Const node
 * @g: the graph.
 * @name: its name.
 * @layer: its layer id.
 * @type: the element type.
 * @d0: the first dim.
 * @d1: the second, or 0 for a 1-D constant.
 * @data: the values (taken: freed on failure too; NULL fails).
 *
 * Return: the constant's value index, or -errno.
 */
int npr_lowp_const(struct npr_graph *g, const char *name, int64_t layer,
		   unsigned int type, int64_t d0, int64_t d1, void *data)
{
	struct npr_value *v;
	int ci = data ? npr_graph_add_node(g, name, "Const", 1, layer) :
		 -ENOMEM, err;

	if (ci < 0) {
		free(data);
		return ci;
	}
	g->nodes[ci].op = npr_op_find("Const", 1);
	err = npr_node_set_outputs(g, ci, 1);
	if (err) {
		free(data);
		return err;
	}
	v = &g->vals[g->nodes[ci].out[0]];
	v->type = type;
	v->shape.rank = d1 ? 2 : 1;
	v->shape.d[0] = d0;
	v->shape.d[1] = d1;
	v->owned = data;
	v->data = data;
	v->nbytes = npr_tensor_bytes(type, d1 ? d0 * d1 : d0);
	return g->nodes[ci].out[0];
}

/**
 * npr_lowp_grid() - the u8 grid of the range @lo .. @hi
 * @lo: the lower limit.
 * @hi: the upper limit.
 * @s: out: the scale, (@hi - @lo) / 255.
 * @z: out: the zero point, -@lo / @s rounded.
 *
 * The limits of the shipped models are f16 numbers, so -@lo / @s is an
 * integer only up to their rounding: NPR_LOWP_ZERO_TOL of a step is
 * accepted, and the grid moves by at most that.
 *
 * Return: false when there is no such grid.
 */
bool npr_lowp_grid(float lo, float hi, float *s, int *z)
{
	float zf;

	if (!(hi > lo) || !isfinite(lo) || !isfinite(hi))
		return false;
	*s = (hi - lo) / 255.0f;
	zf = -lo / *s;
	if (!(*s > 0) || !isfinite(*s) ||
	    !(zf > -NPR_LOWP_ZERO_TOL && zf < 255 + NPR_LOWP_ZERO_TOL) ||
	    fabsf(zf - nearbyintf(zf)) > NPR_LOWP_ZERO_TOL)
		return false;
	*z = (int)nearbyintf(zf);
	return true;
}

/**
 * npr_lowp_grids() - the u8 grids of FakeQuantize limits per channel
 * @g: the graph.
 * @lo: the lower limits: an f32 constant, one value or one per channel
 *      (axis 1 of @s, trailing dims aligned).
 * @hi: the upper limits, the same way.
 * @s: the shape of the FakeQuantize's input.
 * @cnt: out: 1, or the channels when either limit is per channel.
 * @z: out: the zero point every channel shares.
 *
 * Return: the scales (allocated, *@cnt of them), or NULL when a channel
 * has no grid (npr_lowp_grid()) or the channels' zero points differ.
 */
float *npr_lowp_grids(const struct npr_graph *g, int lo, int hi,
		      const struct npr_shape *s, int64_t *cnt, int *z)
{
	int64_t nl, nh, c, k = s->rank >= 2 ? s->d[1] : 1;
	const float *fl = npr_lowp_chan_of(g, lo, s, 1, k, &nl);
	const float *fh = npr_lowp_chan_of(g, hi, s, 1, k, &nh);
	float *sc;
	int zc;

	if (!fl || !fh || k < 1)
		return NULL;
	*cnt = nl > nh ? nl : nh;
	sc = malloc(*cnt * sizeof(*sc));
	for (c = 0; sc && c < *cnt; c++) {
		if (!npr_lowp_grid(fl[nl == 1 ? 0 : c], fh[nh == 1 ? 0 : c],
				   &sc[c], &zc) || (c && zc != *z)) {
			free(sc);
			return NULL;
		}
		*z = zc;
	}
	return sc;
}

/**
 * npr_lowp_qbounds() - the u8 bounds of Q(clamp(y, @lo, @hi))
 * @lo: the lower bound (-inf: none).
 * @hi: the upper bound (inf: none).
 * @s: the Q's scale.
 * @z: its zero point.
 * @qlo: out: the smallest u8 value.
 * @qhi: out: the largest.
 */
void npr_lowp_qbounds(float lo, float hi, float s, int z, int *qlo, int *qhi)
{
	float a = isinf(lo) ? -1024 :
		  fmaxf(fminf(nearbyintf(lo / s), 1024), -1024);
	float b = isinf(hi) ? 1024 :
		  fmaxf(fminf(nearbyintf(hi / s), 1024), -1024);

	*qlo = (int)fmaxf(a + (float)z, 0.0f);
	*qhi = (int)fminf(b + (float)z, 255.0f);
	if (*qhi < *qlo)
		*qhi = *qlo;
}

/* node @ni's inputs @in (@nin) and one output; its index */
static int wire(struct npr_graph *g, int ni, int nin, const int *in)
{
	int err = npr_node_wire(g, ni, nin, in);

	return err ? err : ni;
}

/**
 * npr_lowp_node() - a new node of version 1
 * @g: the graph.
 * @like: the node it is named for (and takes the layer id of).
 * @type: its type.
 * @suffix: its name is @like's, "/" and this.
 * @nin: its inputs' count.
 * @in: its inputs.
 *
 * Return: its index (the last; one output, not yet inferred), or -errno.
 */
int npr_lowp_node(struct npr_graph *g, int like, const char *type,
		  const char *suffix, int nin, const int *in)
{
	char name[256];
	int ni;

	snprintf(name, sizeof(name), "%.200s/%s", g->nodes[like].name, suffix);
	ni = npr_graph_add_node(g, name, type, 1, g->nodes[like].layer_id);
	if (ni < 0)
		return ni;
	g->nodes[ni].op = npr_op_find(type, 1);
	return wire(g, ni, nin, in);
}

/**
 * npr_lowp_clone() - a copy of a node (type, version, attributes)
 * @g: the graph.
 * @like: the node.
 * @nin: the copy's inputs' count.
 * @in: its inputs.
 *
 * Return: its index (the last; one output, not yet inferred), or -errno.
 */
int npr_lowp_clone(struct npr_graph *g, int like, int nin, const int *in)
{
	char name[256];
	int ni, j, err = 0;

	snprintf(name, sizeof(name), "%.200s/u8", g->nodes[like].name);
	ni = npr_graph_add_node(g, name, g->nodes[like].type,
				g->nodes[like].version,
				g->nodes[like].layer_id);
	if (ni < 0)
		return ni;
	g->nodes[ni].op = g->nodes[like].op;
	for (j = 0; !err && j < g->nodes[like].nattr; j++)
		err = npr_node_add_attr(&g->nodes[ni],
					g->nodes[like].attr[j].key,
					g->nodes[like].attr[j].val);
	return err ? err : wire(g, ni, nin, in);
}

/**
 * npr_lowp_swap() - two nodes trade places
 * @g: the graph.
 * @a: one node's index.
 * @b: the other's.
 *
 * Their outputs' producer fields follow them.
 */
void npr_lowp_swap(struct npr_graph *g, int a, int b)
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

/**
 * npr_lowp_infer() - parse and infer a new node
 * @g: the graph.
 * @ni: the node.
 *
 * Return: 0 or -errno.
 */
int npr_lowp_infer(struct npr_graph *g, int ni)
{
	struct npr_node *n = &g->nodes[ni];
	int err = n->op->parse ? n->op->parse(g, n) : 0;

	return err ? err : n->op->infer(g, n);
}

/**
 * npr_lowp_place() - a new node in the place of a node of a group
 * @g: the graph.
 * @ni: the new node (parsed and inferred here).
 * @slot: the node whose place it takes; that node, which then writes a
 *        value no one will read, takes @ni's.
 *
 * Return: the new node's output value (after its inputs, before its
 * readers), or -errno.
 */
int npr_lowp_place(struct npr_graph *g, int ni, int slot)
{
	int err = npr_lowp_infer(g, ni);

	if (err)
		return err;
	npr_lowp_swap(g, slot, ni);
	return g->nodes[slot].out[0];
}
