// SPDX-License-Identifier: MIT
/*
 * The layout pass: after lib/passes/lowp.c, every NprQConv of one group
 * or depthwise gets its weights in blocks of 16 output channels
 * (w_layout "blocked", lib/ops/quant.h), whose kernels read NHWC
 * activations as they lie; then the u8 tensors between such
 * convolutions are laid out NHWC.
 *
 * Tensors that an NprQAdd joins must share a layout, so they form
 * classes (union-find over the NprQAdd nodes' inputs and outputs, and
 * an NprQScale's u8 input and output: its kernel runs fastest on one
 * layout); so do the inputs and output of a u8 MaxPool or Concat along
 * the channels,
 * which become an NprQMaxPool or NprQConcat where their class goes NHWC.
 * A class of 4-D tensors goes NHWC when a convolution of blocked weights
 * reads one of them that has a multiple of four channels (another is
 * copied anyway), unless it holds one of the model's own inputs or
 * outputs (their values are its ports).  Then each node that writes or
 * reads a tensor of such a class says so in its x_layout / y_layout (the
 * convolutions of blocked weights, NprQAdd, NprQLut, NprQScale,
 * NprQuantize, NprDequantize, NprQMaxPool, NprQConcat); any other node (a grouped
 * NprQConv, a Reshape) gets an NprQLut with the identity table between
 * it and the tensor, which converts the layout.  Shapes stay the logical
 * NCHW ones.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "ops/quant.h"
#include "ops/infer.h"
#include "ops/nn.h"
#include "ops/shape.h"
#include "passes/lowp_graph.h"
#include "passes/qlayout.h"

struct ql {
	struct npr_graph *g;
	int *cls;		/* union-find parent per value */
	bool *nhwc;		/* per class root: goes NHWC */
	int ident;		/* the identity table's value, or -1 */
};

static bool is(const struct npr_node *n, const char *type)
{
	return !strcmp(n->type, type);
}

static int find(struct ql *q, int v)
{
	while (q->cls[v] != v) {
		q->cls[v] = q->cls[q->cls[v]];
		v = q->cls[v];
	}
	return v;
}

static void join(struct ql *q, int a, int b)
{
	a = find(q, a);
	b = find(q, b);
	if (a != b)
		q->cls[a] = b;
}

static bool blocked(const struct npr_node *n)
{
	return is(n, "NprQConv") &&
	       ((const struct npr_quant_params *)n->params)->wblocked;
}

/* one group, or depthwise (a channel a group) */
static bool blockable(struct npr_graph *g, const struct npr_node *n)
{
	const struct npr_quant_params *p = n->params;

	return p->groups == 1 ||
	       (p->groups == g->vals[n->in[0]].shape.d[1] &&
		p->groups == g->vals[n->in[2]].shape.d[0]);
}

/* the value of u8 tensor @v goes NHWC */
static bool nhwc(struct ql *q, int v)
{
	return q->g->vals[v].type == NPR_ELEM_U8 && q->nhwc[find(q, v)];
}

/* attribute @key of @n set to @val, in place or added */
static int set_attr(struct ql *q, struct npr_node *n, const char *key,
		    const char *val)
{
	char *s;
	int i;

	for (i = 0; i < n->nattr; i++) {
		if (strcmp(n->attr[i].key, key))
			continue;
		s = strdup(val);
		if (!s)
			return -ENOMEM;
		npr_graph_free_str(q->g, n->attr[i].val);
		n->attr[i].val = s;
		return 0;
	}
	return npr_node_add_attr(n, key, val);
}

static int reparse(struct ql *q, struct npr_node *n)
{
	int err = n->op->parse ? n->op->parse(q->g, n) : 0;

	return err ? err : n->op->infer(q->g, n);
}

/*
 * NprQConv @n of one group: its [K, kr] weight rows in (c, i, j) order
 * into blocks of 16 channels in (i, j, c) order, as a new constant;
 * depthwise, its rows of taps into blocks of 16 channels.
 */
static int block_weights(struct ql *q, int ni)
{
	struct npr_graph *g = q->g;
	struct npr_node *n = &g->nodes[ni];
	const struct npr_quant_params *p = n->params;
	const struct npr_value *wv = &g->vals[n->in[1]];
	int64_t K = g->vals[n->in[2]].shape.d[0];
	int64_t C = g->vals[n->in[0]].shape.d[1];
	bool dw = p->groups > 1;
	int64_t kh = p->kernel[0], kw = p->kernel[1], Cp = NPR_QC4(C);
	int64_t kr = dw ? NPR_QC4(kh * kw) : kh * kw * Cp, k, c, t, r;
	const int8_t *w = wv->data;
	char buf[256];
	int8_t *b;
	int vi, err;

	if (!w || wv->shape.d[0] != K || kr > INT32_MAX ||
	    NPR_QK16(K) > INT64_MAX / kr)
		return 0;
	b = calloc(NPR_QK16(K) * kr, 1);
	if (!b)
		return -ENOMEM;
	/* depthwise: one channel a group, the taps its reduction */
	for (k = 0; k < K; k++)
		for (c = 0; c < (dw ? 1 : C); c++)
			for (t = 0; t < kh * kw; t++) {
				r = dw ? t : t * Cp + c;
				b[((k / 16 * (kr / 4) + r / 4) * 16 + k % 16) *
				  4 + r % 4] = w[k * p->kr + c * kh * kw + t];
			}
	snprintf(buf, sizeof(buf), "%.200s/wblk", n->name);
	vi = npr_lowp_const(g, buf, n->layer_id, NPR_ELEM_I8, NPR_QK16(K), kr,
			    b);
	if (vi < 0)
		return vi;
	n = &g->nodes[ni];
	n->in[1] = vi;
	snprintf(buf, sizeof(buf), "%lld", (long long)kr);
	err = set_attr(q, n, "kr", buf);
	if (!err)
		err = set_attr(q, n, "w_layout", "blocked");
	return err ? err : reparse(q, n);
}

/* the identity table, made once */
static int ident(struct ql *q, int like)
{
	struct npr_graph *g = q->g;
	uint8_t *t;
	int vi, i;

	if (q->ident >= 0)
		return q->ident;
	t = malloc(256);
	if (!t)
		return -ENOMEM;
	for (i = 0; i < 256; i++)
		t[i] = (uint8_t)i;
	vi = npr_lowp_const(g, "npr_qlayout_identity", g->nodes[like].layer_id,
			    NPR_ELEM_U8, 256, 0, t);
	if (vi < 0)
		return vi;
	q->ident = vi;
	return vi;
}

/*
 * A converter reading @v (x_layout @from) into a new value (y_layout the
 * other one); its node index.
 */
static int converter(struct ql *q, int v, bool from_nhwc, int like)
{
	struct npr_graph *g = q->g;
	char name[256];
	int t = ident(q, like), ni, err;
	struct npr_node *n;

	if (t < 0)
		return t;
	snprintf(name, sizeof(name), "%.200s/%s", g->nodes[like].name,
		 from_nhwc ? "relayout" : "relayout_in");
	ni = npr_graph_add_node(g, name, "NprQLut", 1,
				g->nodes[like].layer_id);
	if (ni < 0)
		return ni;
	n = &g->nodes[ni];
	n->op = npr_op_find("NprQLut", 1);
	err = npr_node_set_inputs(n, 2);
	if (!err)
		err = npr_node_set_outputs(g, ni, 1);
	if (err)
		return err;
	n = &g->nodes[ni];
	n->in[0] = v;
	n->in[1] = t;
	err = npr_node_add_attr(n, from_nhwc ? "x_layout" : "y_layout",
				"nhwc");
	return err ? err : ni;
}

/* input @j of @n can be NHWC */
static bool capable(const struct npr_node *n, int j)
{
	if (blocked(n))
		return j == 0;
	if (is(n, "NprQMaxPool") || is(n, "NprQConcat"))
		return true;
	if (is(n, "NprQAdd") || is(n, "NprQLut") || is(n, "NprQScale"))
		return j == 0 || (is(n, "NprQAdd") && j == 1);
	/* scales per channel (input 1): nchw only */
	return is(n, "NprDequantize") && j == 0 && n->nin == 1;
}

static bool writes_either(const struct npr_node *n)
{
	return blocked(n) || is(n, "NprQAdd") || is(n, "NprQLut") ||
	       is(n, "NprQScale") ||
	       (is(n, "NprQuantize") && n->nin == 1) ||
	       is(n, "NprQMaxPool") ||
	       is(n, "NprQConcat");
}

static int set_layouts(struct ql *q, int ni)
{
	struct npr_node *n = &q->g->nodes[ni];
	int err = 0;

	if (capable(n, 0) && nhwc(q, n->in[0]))
		err = set_attr(q, n, "x_layout", "nhwc");
	if (!err && writes_either(n) && nhwc(q, n->out[0]))
		err = set_attr(q, n, "y_layout", "nhwc");
	return err ? err : reparse(q, &q->g->nodes[ni]);
}

/* readers of NHWC tensors that cannot read them get a converter */
static int convert_readers(struct ql *q, int nn)
{
	struct npr_graph *g = q->g;
	int *conv = malloc(sizeof(int) * (g->nvals ? g->nvals : 1));
	int i, j, v, c, err = 0;

	if (!conv)
		return -ENOMEM;
	for (i = 0; i < g->nvals; i++)
		conv[i] = -1;
	for (i = 0; !err && i < nn; i++) {
		for (j = 0; !err && j < g->nodes[i].nin; j++) {
			v = g->nodes[i].in[j];
			if (g->nodes[i].dead || !nhwc(q, v) ||
			    capable(&g->nodes[i], j))
				continue;
			if (conv[v] < 0) {
				c = converter(q, v, true, i);
				if (c < 0) {
					err = c;
					break;
				}
				conv[v] = g->nodes[c].out[0];
				err = reparse(q, &g->nodes[c]);
			}
			g->nodes[i].in[j] = conv[v];
		}
	}
	free(conv);
	return err;
}

/* writers of NHWC tensors that cannot write them get a converter */
static int convert_writers(struct ql *q, int nn)
{
	struct npr_graph *g = q->g;
	int i, j, v, c, f, err;

	for (i = 0; i < nn; i++) {
		struct npr_node *n = &g->nodes[i];

		if (n->dead || writes_either(n))
			continue;
		for (j = 0; j < n->nout; j++) {
			v = g->nodes[i].out[j];
			if (!nhwc(q, v))
				continue;
			/* i writes f, the converter f -> v */
			c = converter(q, v, false, i);
			if (c < 0)
				return c;
			f = g->nodes[c].out[0];
			g->nodes[i].out[j] = f;
			g->vals[f].producer = i;
			g->vals[f].port = j;
			g->vals[f].type = g->vals[v].type;
			g->vals[f].shape = g->vals[v].shape;
			g->nodes[c].out[0] = v;
			g->nodes[c].in[0] = f;
			g->vals[v].producer = c;
			g->vals[v].port = 0;
			err = reparse(q, &g->nodes[c]);
			if (err)
				return err;
		}
	}
	return 0;
}

/* a u8 4-D tensor of known shape */
static bool u8_4d(struct npr_graph *g, int v)
{
	return g->vals[v].type == NPR_ELEM_U8 && g->vals[v].shape.rank == 4 &&
	       npr_shape_static(&g->vals[v].shape);
}

/*
 * A u8 MaxPool NprQMaxPool can take the place of: its pads_end then,
 * the least one, not below 0, that gives the output's size with the
 * size rounded down.
 */
static bool pool_ok(struct npr_graph *g, const struct npr_node *n,
		    int64_t pe[2])
{
	const struct npr_conv_params *p = n->params;
	int i;

	if (!is(n, "MaxPool") || n->nin != 1 || n->nout != 1 || !p ||
	    p->nsp != 2 || !u8_4d(g, n->in[0]) || !u8_4d(g, n->out[0]))
		return false;
	for (i = 0; i < 2; i++) {
		int64_t span = (p->kernel[i] - 1) * p->dil[i] + 1;
		int64_t in = g->vals[n->in[0]].shape.d[2 + i];
		int64_t out = g->vals[n->out[0]].shape.d[2 + i];

		pe[i] = (out - 1) * p->stride[i] + span - in - p->pb[i];
		/* a stride past the window leaves the last rows unread */
		if (pe[i] < 0)
			pe[i] = 0;
		if (p->pb[i] < 0 || out < 1 ||
		    (in + p->pb[i] + pe[i] - span) / p->stride[i] + 1 != out)
			return false;
	}
	return true;
}

/* a u8 Concat along the channels */
static bool concat_ok(struct npr_graph *g, const struct npr_node *n)
{
	const struct npr_concat_params *p = n->params;
	int i;

	if (!is(n, "Concat") || n->nout != 1 || !p ||
	    (p->axis != 1 && p->axis != -3) || !u8_4d(g, n->out[0]))
		return false;
	for (i = 0; i < n->nin; i++)
		if (!u8_4d(g, n->in[i]))
			return false;
	return true;
}

/* MaxPool @n as NprQMaxPool, Concat as NprQConcat, both NHWC */
static int to_nhwc_op(struct ql *q, struct npr_node *n, const int64_t *pe)
{
	const struct npr_conv_params *cp = n->params;
	const char *type = pe ? "NprQMaxPool" : "NprQConcat";
	char buf[64], *t = strdup(type);
	int err = 0;

	if (!t)
		return -ENOMEM;
	if (pe) {
		snprintf(buf, sizeof(buf), "%lld,%lld",
			 (long long)cp->kernel[0], (long long)cp->kernel[1]);
		err = set_attr(q, n, "kernel", buf);
		snprintf(buf, sizeof(buf), "%lld,%lld",
			 (long long)cp->stride[0], (long long)cp->stride[1]);
		err = err ? err : set_attr(q, n, "strides", buf);
		snprintf(buf, sizeof(buf), "%lld,%lld",
			 (long long)cp->dil[0], (long long)cp->dil[1]);
		err = err ? err : set_attr(q, n, "dilations", buf);
		snprintf(buf, sizeof(buf), "%lld,%lld",
			 (long long)cp->pb[0], (long long)cp->pb[1]);
		err = err ? err : set_attr(q, n, "pads_begin", buf);
		snprintf(buf, sizeof(buf), "%lld,%lld", (long long)pe[0],
			 (long long)pe[1]);
		err = err ? err : set_attr(q, n, "pads_end", buf);
	}
	err = err ? err : set_attr(q, n, "x_layout", "nhwc");
	err = err ? err : set_attr(q, n, "y_layout", "nhwc");
	if (err) {
		free(t);
		return err;
	}
	npr_graph_free_str(q->g, n->type);
	n->type = t;
	n->version = 1;
	n->op = npr_op_find(type, 1);
	/* quant_parse() replaces the MaxPool's or Concat's params */
	return reparse(q, n);
}

/**
 * npr_pass_qlayout() - blocked weights and NHWC u8 tensors for the
 *                      low-precision nodes of @g
 * @g: a compiled graph after npr_pass_lowp(); gains nodes, is sorted
 *     again when it does.
 *
 * Return: 0 (also when there is nothing to do), or -errno.
 */
int npr_pass_qlayout(struct npr_graph *g)
{
	struct ql q = { .g = g, .ident = -1 };
	int nn = g->nnodes, i, err = 0, any = 0;

	for (i = 0; !err && i < nn; i++) {
		const struct npr_node *n = &g->nodes[i];

		if (!n->dead && is(n, "NprQConv") && blockable(g, n) &&
		    !npr_node_dynamic(g, n)) {
			err = block_weights(&q, i);
			any++;
		}
	}
	if (err || !any)
		return err;
	q.cls = malloc(sizeof(int) * g->nvals);
	q.nhwc = calloc(g->nvals, sizeof(bool));
	if (!q.cls || !q.nhwc) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < g->nvals; i++)
		q.cls[i] = i;
	/* NprQAdd, and the u8 MaxPool and Concat that can go NHWC too */
	for (i = 0; i < nn; i++) {
		const struct npr_node *n = &g->nodes[i];
		int64_t pe[2];
		int j;

		if (n->dead || !(is(n, "NprQAdd") || is(n, "NprQScale") ||
				 pool_ok(g, n, pe) || concat_ok(g, n)))
			continue;
		/* (an NprQScale's input 1 is its f32 multipliers) */
		for (j = 0; j < (is(n, "NprQScale") ? 1 : n->nin); j++)
			join(&q, n->in[j], n->out[0]);
	}
	/* (an input of C % 4 channels is copied to C4 anyway) */
	for (i = 0; i < nn; i++)
		if (!g->nodes[i].dead && blocked(&g->nodes[i]) &&
		    g->vals[g->nodes[i].in[0]].shape.d[1] % 4 == 0)
			q.nhwc[find(&q, g->nodes[i].in[0])] = true;
	/*
	 * The model's own inputs and outputs keep their layout (their
	 * values are its ports), and so does their class.
	 */
	for (i = 0; i < g->ninputs; i++)
		q.nhwc[find(&q, g->nodes[g->inputs[i]].out[0])] = false;
	for (i = 0; i < g->noutputs; i++)
		q.nhwc[find(&q, g->nodes[g->outputs[i]].in[0])] = false;
	/* a class with a tensor of another rank (or dynamic) stays NCHW */
	for (i = 0; i < g->nvals; i++)
		if (q.nhwc[find(&q, i)] && g->vals[i].type == NPR_ELEM_U8 &&
		    (g->vals[i].shape.rank != 4 ||
		     !npr_shape_static(&g->vals[i].shape)))
			q.nhwc[find(&q, i)] = false;
	for (i = 0; !err && i < nn; i++) {
		struct npr_node *n = &g->nodes[i];
		int64_t pe[2];

		if (n->dead || n->nout < 1 || !nhwc(&q, n->out[0]))
			continue;
		if (pool_ok(g, n, pe))
			err = to_nhwc_op(&q, n, pe);
		else if (concat_ok(g, n))
			err = to_nhwc_op(&q, n, NULL);
	}
	for (i = 0; !err && i < nn; i++)
		if (!g->nodes[i].dead && (writes_either(&g->nodes[i]) ||
					  is(&g->nodes[i], "NprDequantize")))
			err = set_layouts(&q, i);
	if (!err)
		err = convert_readers(&q, nn);
	if (!err)
		err = convert_writers(&q, nn);
	/* the converters come after their inputs; the old weights go */
	if (!err && g->nnodes != nn)
		err = npr_graph_sort(g);
	if (!err)
		err = npr_infer_mark_dead(g);
out:
	free(q.cls);
	free(q.nhwc);
	return err;
}
