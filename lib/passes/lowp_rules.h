/* SPDX-License-Identifier: MIT */
/*
 * Inside the low-precision pass: its state, the helpers lib/passes/
 * lowp.c lends to the rules of lib/passes/lowp_ir.c and those rules, for
 * those two files only.
 */
#ifndef NPR_PASSES_LOWP_RULES_H
#define NPR_PASSES_LOWP_RULES_H

#include <stdbool.h>
#include <stdint.h>

#include "graph/graph.h"

/* the pass: the graph and how many live nodes read each value */
struct lowp {
	struct npr_graph *g;
	int *uses;
};

#define NPR_LOWP_REGION_DEPTH	16	/* Relu/Clamp nodes on one path */
#define NPR_LOWP_REGION_NODES	64	/* nodes in a region */

int npr_lowp_dq_src(struct lowp *l, int v, float *s, int *z);
int npr_lowp_q_after(struct lowp *l, int v, float *s, int *z);
int npr_lowp_acts(struct lowp *l, int v, float *lo, float *hi);
int npr_lowp_new_node(struct lowp *l, int like, const char *type, int nin,
		      const int *in);
int npr_lowp_new_const(struct lowp *l, int like, unsigned int type,
		       int64_t d0, int64_t d1, void *data);
int npr_lowp_set(struct npr_node *n, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int npr_lowp_sole_user(struct lowp *l, int v);
int npr_lowp_finish(struct lowp *l, int ni, int old);
bool npr_lowp_pool_ok(struct lowp *l, const struct npr_node *n);

/* the rules of lib/passes/lowp_ir.c */
int npr_lowp_fq(struct lowp *l, int fi);
int npr_lowp_pool_dq(struct lowp *l, int pi);
int npr_lowp_requant(struct lowp *l, int ci);
int npr_lowp_concat_dq(struct lowp *l, int ci);
int npr_lowp_scale(struct lowp *l, int mi);

#endif /* NPR_PASSES_LOWP_RULES_H */
