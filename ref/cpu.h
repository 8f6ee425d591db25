/* SPDX-License-Identifier: MIT */
/*
 * The CPU backend's private state, shared by its files:
 *
 *   ref/backend.c  the npr_cpu_backend_ops table: probe, compile (the
 *                  step list), requests, infer
 *   ref/plan.c     compile's plans: fast kernels and fusion, batch
 *                  groups, the arena memory planner
 *   ref/dynamic.c  steps whose output shapes depend on input values
 *   ref/signature.c  the plans per input shape signature of an exec
 *                  with dynamic input dimensions (the plan cache)
 *   ref/profile.c  NPR_CPU_PROFILE and per-request profile records
 *
 * struct ref_exec is an exec's compiled plan, read-only once compile
 * returns; struct ref_request is one request's memory.
 */
#ifndef NPR_REF_CPU_H
#define NPR_REF_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"
#include "ref/conv/conv.h"
#include "ref/threads.h"

/* a step done by a fast kernel instead of the node's reference kernel */
struct ref_fast {
	struct npr_conv_plan *conv;
	int x, res, y;		/* value indexes; res -1 if none */
	int head;		/* the convolution's node */
	int wv;			/* its weights' value if it holds them, or -1 */
};

struct ref_sigs;

struct ref_exec {
	struct npr_graph *g;	/* the graph planned: the exec's, or a
				 * signature's (ref/signature.c) */
	struct ref_sigs *sigs;	/* dynamic input dims: the plan cache; the
				 * exec's own plan is then empty */
	int nsteps;
	int *steps;		/* node indexes */
	struct ref_fast **fast;	/* per step, or NULL: the node's reference kernel */
	int nfast;		/* its entries: per node until the steps are made */
	npr_eval_fn *kern;	/* per step: that kernel, looked up at compile */
	int threads;		/* per request, 0: all CPUs */
	uint64_t *prof_ns;	/* per step, with NPR_CPU_PROFILE set */
	uint64_t *prof_cur;	/* per step: this run's time */
	uint64_t *prof_min;	/* per step: the fastest run's */
	uint64_t prof_infer_ns;	/* whole runs, inputs to outputs */
	struct npr_par_stats *pstats;	/* per step, NPR_CPU_PROFILE=3 */
	bool *fused;		/* per node: its work done by another step */
	uint64_t prof_runs;
	int prof_level;		/* NPR_CPU_PROFILE's value, 0: off */
	size_t *off;		/* per value: arena offset, SIZE_MAX if none */
	size_t arena_bytes;
	int max_in, max_out;
	bool *dyn;		/* per step: output shapes inferred per run */
	bool *no_idx;		/* per node: a MaxPool whose indices no one reads */
	int ndyn;
	/* batch groups: steps [0, gsteps) run @group images at a time */
	int gsteps;
	int64_t group, batch;
	bool group_set;		/* by NPR_CPU_GROUP */
	bool *gslot;		/* per value: one group's slot, every group */
	bool copy_inputs;	/* NPR_CPU_COPY_INPUTS: never read in place */
	unsigned int fuse;	/* lmfuse kinds each signature's plan makes */
	bool kv_copy;		/* NPR_CPU_KV_COPY at COMPILE: none of its
				 * plans writes into a variable's store
				 * (ref/state.c) */
	bool no_share;		/* NPR_CPU_NO_SHARE at COMPILE: every step
				 * runs (no npr_cpu_poly_share()) */
	bool *poly;		/* per node: a dynamic step of a plan for
				 * every length of the growing variables
				 * (ref/poly.c), or NULL */
	int *cat;		/* per step: the input of a growing variable
				 * its Concat reads in place (ref/state.c),
				 * -1; NULL when none */
	bool *cat_store;	/* per step: that Concat writes into the
				 * variable's store, its output the store */
	int *attn;		/* per step, two: the input of a growing
				 * variable whose store is a FusedAttention
				 * step's key, value (ref/state.c), -1; NULL
				 * when none */
	int *share;		/* per step: the earlier step it repeats
				 * (ref/poly.c), -1; NULL when none */
	int *share_in;		/* pairs of values of growing variables
				 * whose shapes must be equal for that */
	int nshare_in;
};

/* marks nodes whose work a fused step does (ref/plan.c) */
extern struct ref_fast npr_cpu_absorbed_mark;
/* marks a step with nothing to do (a Concat its producers write into) */
extern struct ref_fast npr_cpu_noop_mark;

struct ref_sig;

struct ref_request {
	struct ref_sig *sig;	/* dynamic input dims: the plan the request's
				 * memory is laid out for (referenced) */
	size_t arena_cap;	/* bytes of @arena */
	void *arena;
	struct npr_tensor *t;	/* per value */
	struct npr_tensor *in_buf, *out_buf;
	/* with dynamic steps: the request's view of the graph */
	struct npr_graph rg;	/* g's, with @rvals */
	struct npr_value *rvals;	/* shallow copy of g->vals */
	struct npr_node *rnodes;	/* per node; params of dynamic ones */
	bool share_ok;		/* this run skips re->share's steps */
	void **dbuf;		/* per value: buffer of a dynamic value */
	size_t *dcap;		/* its size */
};

/* Node @i's output shapes are inferred at every run? */
static inline bool ref_node_dyn(const struct ref_exec *re,
				const struct npr_graph *g, int i)
{
	return npr_node_dynamic(g, &g->nodes[i]) || (re->poly && re->poly[i]);
}

/* A fused step with a plan (not a mark)? */
static inline bool ref_fast_real(const struct ref_fast *f)
{
	return f && f != &npr_cpu_absorbed_mark && f != &npr_cpu_noop_mark;
}

#endif /* NPR_REF_CPU_H */
