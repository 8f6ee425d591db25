// SPDX-License-Identifier: MIT
/*
 * Fusion, a graph pass (see fuse.h): the chain of nodes after each
 * Convolution and GroupConvolution that its kernel can do the work of.
 *
 * The chain, each link optional, in this order: Add of a per-channel
 * constant (the bias), Add of a tensor shaped like the output (a
 * residual), Relu or Clamp, or else an activation the kernel applies
 * after its write-out (PReLU, Sigmoid, Swish, HSwish, HSigmoid); then a
 * MaxPool (not after a residual or an activation of the second kind), or
 * a ReduceMean over the plane.  Each link must be the only live reader
 * of the value before it and not taken by another convolution's chain.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "passes/fuse.h"
#include "ops/eltwise.h"
#include "ops/nn.h"

/**
 * npr_fuse_init() - start the fusion pass over @g
 * @fu: Out. The state; free with npr_fuse_fini().
 * @g: the compiled graph; must outlive @fu and not change meanwhile.
 *
 * Return: 0 or -ENOMEM.
 */
int npr_fuse_init(struct npr_fuse *fu, const struct npr_graph *g)
{
	int i, j;

	fu->g = g;
	fu->uses = calloc(g->nvals ? g->nvals : 1, sizeof(int));
	fu->taken = calloc(g->nnodes ? g->nnodes : 1, sizeof(bool));
	if (!fu->uses || !fu->taken) {
		npr_fuse_fini(fu);
		return -ENOMEM;
	}
	for (i = 0; i < g->nnodes; i++)
		for (j = 0; !g->nodes[i].dead && j < g->nodes[i].nin; j++)
			fu->uses[g->nodes[i].in[j]]++;
	return 0;
}

/**
 * npr_fuse_fini() - free what npr_fuse_init() allocated
 * @fu: the state; may be zeroed or already finished.
 */
void npr_fuse_fini(struct npr_fuse *fu)
{
	free(fu->uses);
	free(fu->taken);
	fu->uses = NULL;
	fu->taken = NULL;
}

/**
 * npr_fuse_take() - mark the nodes a fused step does the work of
 * @fu: the state.
 * @f: a description npr_fuse_match() gave.
 * @tail: the kernel took @f->tail_node too.
 */
void npr_fuse_take(struct npr_fuse *fu, const struct npr_fusion *f,
		   bool tail)
{
	int j;

	for (j = 0; j < f->nabsorbed; j++)
		fu->taken[f->absorbed[j]] = true;
	if (tail && f->tail_node >= 0)
		fu->taken[f->tail_node] = true;
}

static bool is_f32(const struct npr_graph *g, int v)
{
	return g->vals[v].type == NPR_ELEM_F32;
}

static const struct npr_shape *out_shape(const struct npr_graph *g,
					 const struct npr_node *n)
{
	return &g->vals[n->out[0]].shape;
}

/*
 * Is node @n, reading the convolution's output @v (shape @os, @K
 * channels), an activation the kernel can apply after its epilogue?
 * PReLU with a constant f32 slope that is one value or one per channel
 * (1-D of K as the reference kernel takes it, or K along dim 1 of a
 * shape of ones otherwise, numpy-aligned); Sigmoid, Swish (a constant
 * f32 beta), HSwish, HSigmoid.  Same functions as the standalone ops,
 * so the same bits.
 */
static bool post_of(const struct npr_graph *g, const struct npr_node *n,
		    int v, const struct npr_shape *os, int64_t K,
		    struct npr_fusion *f)
{
	const struct npr_eltwise_params *ep = n->params;
	const struct npr_value *ov;

	if (n->nout != 1 || n->in[0] != v || !is_f32(g, n->out[0]) ||
	    !npr_shape_eq(out_shape(g, n), os))
		return false;
	if (!strcmp(n->type, "PReLU") && n->nin == 2 && n->in[1] != v) {
		const struct npr_value *sv = &g->vals[n->in[1]];
		const struct npr_shape *ss = &sv->shape;
		int64_t cnt = npr_shape_numel(ss);
		int k, chdim = ss->rank - (os->rank - 1);

		if (!sv->data || sv->type != NPR_ELEM_F32 ||
		    ss->rank > os->rank)
			return false;
		if (cnt != 1) {
			if (cnt != K)
				return false;
			/* 1-D: per channel, as npr_ref_prelu() takes it */
			if (!(ss->rank == 1 && K > 1)) {
				if (chdim < 0 || ss->d[chdim] != K)
					return false;
				for (k = 0; k < ss->rank; k++)
					if (k != chdim && ss->d[k] != 1)
						return false;
			}
		}
		f->post = NPR_FUSE_POST_PRELU;
		f->slope = n->in[1];
		f->nslope = cnt;
		return true;
	}
	if (!ep || (strcmp(n->type, "Sigmoid") && strcmp(n->type, "Swish") &&
		    strcmp(n->type, "HSwish") && strcmp(n->type, "HSigmoid")))
		return false;
	if (ep->op != NPR_UN_SIGMOID && ep->op != NPR_UN_SWISH &&
	    ep->op != NPR_UN_HSWISH && ep->op != NPR_UN_HSIGMOID)
		return false;
	f->beta = 1.0f;
	if (n->nin == 2) {
		ov = &g->vals[n->in[1]];
		if (ep->op != NPR_UN_SWISH || !ov->data ||
		    ov->type != NPR_ELEM_F32 || npr_shape_numel(&ov->shape) < 1)
			return false;
		f->beta = ((const float *)ov->data)[0];
	} else if (n->nin != 1) {
		return false;
	}
	f->post = NPR_FUSE_POST_UNARY;
	f->unary = ep;
	return true;
}

/*
 * The only live node reading value @v, or -1.  Looked for from @v's
 * producer on (in a sorted graph its reader comes after it, most often
 * right after), then from the start: the same node, found without
 * walking the whole graph for every convolution.
 */
static int sole_user(const struct npr_fuse *fu, int v)
{
	const struct npr_graph *g = fu->g;
	int first = g->vals[v].producer + 1, k, i, j;

	if (fu->uses[v] != 1)
		return -1;
	if (first < 0 || first > g->nnodes)
		first = 0;
	for (k = 0; k < g->nnodes; k++) {
		const struct npr_node *n;

		i = first + k < g->nnodes ? first + k : first + k - g->nnodes;
		n = &g->nodes[i];
		if (n->dead)
			continue;
		for (j = 0; j < n->nin; j++)
			if (n->in[j] == v)
				return fu->taken[i] ? -1 : i;
	}
	return -1;
}

/* Is Add @a (reading @v) an Add of K per-channel constants? */
static bool bias_add(const struct npr_graph *g, const struct npr_node *a,
		     int v, int nsp, const struct npr_shape *os, int64_t K)
{
	int other = a->in[0] == v ? a->in[1] : a->in[0];
	const struct npr_value *ov = &g->vals[other];
	const struct npr_shape *s = &ov->shape;
	int64_t cnt = npr_shape_numel(s);
	int k, chdim = s->rank - 1 - nsp;
	bool perch = ov->data && ov->type == NPR_ELEM_F32 && cnt == K &&
		     chdim >= 0 && s->d[chdim] == K && a->in[0] != a->in[1];

	for (k = 0; perch && k < s->rank; k++)
		if (k != chdim && s->d[k] != 1)
			perch = false;
	return perch && npr_shape_eq(out_shape(g, a), os);
}

/* Is node @m a MaxPool the kernel may pool its output rows with? */
static bool pool_of(const struct npr_graph *g, const struct npr_node *m,
		    int64_t N, int64_t K, struct npr_fusion *f)
{
	const struct npr_conv_params *pp = m->params;
	const struct npr_shape *ps;

	if (strcmp(m->type, "MaxPool") || m->nin != 1 || m->nout != 1 ||
	    !is_f32(g, m->out[0]))
		return false;
	ps = out_shape(g, m);
	if (pp->nsp != 2 || pp->dil[0] != 1 || pp->dil[1] != 1 ||
	    ps->rank != 4 || ps->d[0] != N || ps->d[1] != K)
		return false;
	f->pool.kh = pp->kernel[0];
	f->pool.kw = pp->kernel[1];
	f->pool.sh = pp->stride[0];
	f->pool.sw = pp->stride[1];
	f->pool.ph = pp->pb[0];
	f->pool.pw = pp->pb[1];
	f->pool.OH = ps->d[2];
	f->pool.OW = ps->d[3];
	return true;
}

/* Is node @m (reading @v) the mean over the planes, [N, K] out? */
static bool mean_of(const struct npr_graph *g, const struct npr_node *m,
		    int v, int64_t N, int64_t K)
{
	const struct npr_nn_params *rp = m->params;

	if (strcmp(m->type, "ReduceMean") || m->in[0] != v || m->nout != 1 ||
	    !is_f32(g, m->out[0]) ||
	    npr_shape_numel(out_shape(g, m)) != N * K)
		return false;
	return rp->red == NPR_RED_MEAN && !rp->reduced[0] &&
	       !rp->reduced[1] && rp->reduced[2] && rp->reduced[3];
}

/**
 * npr_fuse_match() - what node @node's kernel can absorb
 * @fu: the state.
 * @node: a node index of the graph.
 * @out: Out. The description; written only on success.
 *
 * Nodes npr_fuse_take() marked are never absorbed again.
 *
 * Return: 0; -EOPNOTSUPP when @node is not an f32 Convolution or
 * GroupConvolution with 1 or 2 spatial dimensions and explicit padding.
 */
int npr_fuse_match(const struct npr_fuse *fu, int node,
		   struct npr_fusion *out)
{
	const struct npr_graph *g = fu->g;
	const struct npr_node *n = &g->nodes[node], *a;
	const struct npr_conv_params *cp = n->params;
	const struct npr_shape *os;
	struct npr_fusion f = { .node = node, .bias = -1, .residual = -1,
				.slope = -1, .tail_node = -1 };
	int64_t N, K;
	int v, u;

	if (strcmp(n->type, "Convolution") &&
	    strcmp(n->type, "GroupConvolution"))
		return -EOPNOTSUPP;
	if (cp->nsp < 1 || cp->nsp > 2 || !is_f32(g, n->in[0]) ||
	    !is_f32(g, n->in[1]) || !is_f32(g, n->out[0]) ||
	    cp->auto_pad != NPR_PAD_EXPLICIT)
		return -EOPNOTSUPP;
	os = out_shape(g, n);
	N = g->vals[n->in[0]].shape.d[0];
	K = os->d[1];
	/* the epilogue: Add(per-channel constant), Add(residual), Relu/Clamp */
	v = n->out[0];
	u = sole_user(fu, v);
	a = u >= 0 ? &g->nodes[u] : NULL;
	if (a && !strcmp(a->type, "Add") && a->nin == 2 &&
	    bias_add(g, a, v, cp->nsp, os, K)) {
		f.bias = a->in[0] == v ? a->in[1] : a->in[0];
		f.absorbed[f.nabsorbed++] = u;
		v = a->out[0];
		u = sole_user(fu, v);
		a = u >= 0 ? &g->nodes[u] : NULL;
	}
	if (a && !strcmp(a->type, "Add") && a->nin == 2) {
		int other = a->in[0] == v ? a->in[1] : a->in[0];
		const struct npr_value *ov = &g->vals[other];

		if (!ov->data && a->in[0] != a->in[1] && is_f32(g, other) &&
		    npr_shape_eq(&ov->shape, os) &&
		    npr_shape_eq(out_shape(g, a), os)) {
			f.residual = other;
			f.absorbed[f.nabsorbed++] = u;
			v = a->out[0];
			u = sole_user(fu, v);
			a = u >= 0 ? &g->nodes[u] : NULL;
		}
	}
	if (a && a->nin == 1 &&
	    (!strcmp(a->type, "Relu") || !strcmp(a->type, "ReLU"))) {
		f.act = NPR_FUSE_ACT_RELU;
		f.absorbed[f.nabsorbed++] = u;
		v = a->out[0];
	} else if (a && a->nin == 1 && !strcmp(a->type, "Clamp")) {
		const struct npr_eltwise_params *ep = a->params;

		f.act = NPR_FUSE_ACT_CLAMP;
		f.lo = (float)ep->lo;
		f.hi = (float)ep->hi;
		f.absorbed[f.nabsorbed++] = u;
		v = a->out[0];
	}
	/* or an activation the write-out does not compute, applied after */
	if (f.act == NPR_FUSE_ACT_NONE && a && post_of(g, a, v, os, K, &f)) {
		f.absorbed[f.nabsorbed++] = u;
		v = a->out[0];
	}
	/*
	 * The tail: a MaxPool after all that, or else a ReduceMean over
	 * the plane (global average pooling); not after a residual, nor
	 * after an activation applied after the write-out (the pool would
	 * come before it).
	 */
	if (f.post || f.residual >= 0 || cp->nsp != 2)
		goto out;
	u = sole_user(fu, v);
	if (u < 0)
		goto out;
	if (pool_of(g, &g->nodes[u], N, K, &f)) {
		f.tail = NPR_FUSE_TAIL_POOL;
		f.tail_node = u;
	} else if (mean_of(g, &g->nodes[u], v, N, K)) {
		f.tail = NPR_FUSE_TAIL_MEAN;
		f.tail_node = u;
	}
out:
	*out = f;
	return 0;
}
