/* SPDX-License-Identifier: MIT */
/*
 * Plans valid for every length of the growing variables (ref/poly.c).
 */
#ifndef NPR_REF_POLY_H
#define NPR_REF_POLY_H

#include <stdbool.h>

#include "graph/graph.h"

struct npr_exec;
struct npr_request;

/* per value: its shape depends on the lengths; its folded data does */
#define NPR_POLY_V	1
#define NPR_POLY_T	2

bool npr_cpu_poly_grows(const struct npr_exec *ex, int i);
bool npr_cpu_poly_shapes(const struct npr_exec *ex,
			 const struct npr_shape *in, struct npr_shape *out);
bool npr_cpu_poly_match(const struct npr_exec *ex,
			const struct npr_shape *planned,
			const struct npr_request *rq);
int npr_cpu_poly_classify(const struct npr_exec *ex,
			  const struct npr_graph *g, const struct npr_graph *g2,
			  unsigned char *cls, struct npr_shape *ps);
int npr_cpu_poly_apply(const struct npr_exec *ex, struct npr_graph *g,
		       const unsigned char *cls, const struct npr_shape *ps,
		       const bool *was_dead, bool **poly);

struct ref_exec;
struct ref_request;

int npr_cpu_poly_share(const struct npr_exec *ex, struct ref_exec *re);
bool npr_cpu_poly_share_ok(const struct ref_exec *re,
			   const struct ref_request *rr);

#endif /* NPR_REF_POLY_H */
