/* SPDX-License-Identifier: MIT */
/*
 * Fusion, a graph pass: which nodes after a Convolution or
 * GroupConvolution a backend's convolution kernel can do the work of,
 * in its write-out or in a pass over its output while it is in cache.
 *
 * The pass reads the graph only.  It describes, per convolution, the
 * chain it matched (struct npr_fusion): a per-channel bias Add, a
 * residual Add, Relu/Clamp or an activation applied after them (PReLU,
 * Sigmoid, Swish, HSwish, HSigmoid), and a tail that the kernel may or
 * may not take depending on the path it picks (a MaxPool, or a
 * ReduceMean over the plane).  The backend plans its kernel from that
 * description (ref/conv: npr_conv_plan_build()) and then marks what it
 * took (npr_fuse_take()), so that no node is absorbed twice.
 */
#ifndef NPR_PASSES_FUSE_H
#define NPR_PASSES_FUSE_H

#include "graph/graph.h"

struct npr_eltwise_params;

/* at most a bias Add, a residual Add, an activation, and the tail */
#define NPR_FUSION_MAX	4

enum npr_fuse_act { NPR_FUSE_ACT_NONE, NPR_FUSE_ACT_RELU, NPR_FUSE_ACT_CLAMP };
enum npr_fuse_post { NPR_FUSE_POST_NONE, NPR_FUSE_POST_PRELU,
		     NPR_FUSE_POST_UNARY };
enum npr_fuse_tail { NPR_FUSE_TAIL_NONE, NPR_FUSE_TAIL_POOL,
		     NPR_FUSE_TAIL_MEAN };

/**
 * struct npr_fusion - a convolution and the nodes after it it can absorb
 * @node: the Convolution or GroupConvolution.
 * @nabsorbed: count of @absorbed.
 * @absorbed: the nodes the epilogue does, in graph order (bias Add,
 *            residual Add, the activation); not the tail.
 * @bias: value of K per-channel f32 constants added, or -1.
 * @residual: value of the tensor shaped like the output added, or -1.
 * @act: enum npr_fuse_act, done in the write-out.
 * @lo: Clamp's lower bound.
 * @hi: Clamp's upper bound.
 * @post: enum npr_fuse_post, an activation after the epilogue (never
 *        with @act).
 * @slope: PReLU: value of its constant f32 slopes, 1 or K of them.
 * @nslope: their count.
 * @unary: NPR_FUSE_POST_UNARY: the activation's params (graph-owned).
 * @beta: its Swish beta (1 for the others).
 * @tail: enum npr_fuse_tail: a node the kernel may take after all that.
 * @tail_node: that node, or -1.
 * @pool: NPR_FUSE_TAIL_POOL: the MaxPool's window @kh x @kw, stride
 *        @sh, @sw, padding before @ph, @pw, output plane @OH x @OW.
 *
 * Constant operands are named by value index; their bytes stay the
 * graph's.  Owned by the caller; holds no pointers but @unary.
 */
struct npr_fusion {
	int node;
	int nabsorbed;
	int absorbed[NPR_FUSION_MAX];
	int bias, residual;
	int act;
	float lo, hi;
	int post;
	int slope;
	int64_t nslope;
	const struct npr_eltwise_params *unary;
	float beta;
	int tail, tail_node;
	struct {
		int64_t kh, kw, sh, sw, ph, pw, OH, OW;
	} pool;
};

/**
 * struct npr_fuse - the pass's state over one graph
 * @g: the graph.
 * @uses: per value, how many live nodes read it.
 * @taken: per node, true once a fused step does its work.
 */
struct npr_fuse {
	const struct npr_graph *g;
	int *uses;
	bool *taken;
};

int npr_fuse_init(struct npr_fuse *fu, const struct npr_graph *g);

void npr_fuse_fini(struct npr_fuse *fu);

int npr_fuse_match(const struct npr_fuse *fu, int node,
		   struct npr_fusion *f);

void npr_fuse_take(struct npr_fuse *fu, const struct npr_fusion *f,
		   bool tail);

#endif /* NPR_PASSES_FUSE_H */
