/* SPDX-License-Identifier: MIT */
/*
 * Variables that grow, read in place (ref/state.c).
 */
#ifndef NPR_REF_STATE_H
#define NPR_REF_STATE_H

#include <stdbool.h>

#include "cpu.h"

struct npr_exec;
struct npr_request;
struct npr_pitched;

int npr_cpu_plan_state(struct npr_exec *ex, struct ref_exec *re);
bool npr_cpu_state_in_place(const struct ref_exec *re, int i);
void npr_cpu_state_gather(void *dst, const struct npr_tensor *src,
			  const struct npr_pitched *p);
int npr_cpu_state_attention(struct npr_request *rq, const struct ref_exec *re,
			    struct ref_request *rr, int s);
int npr_cpu_state_concat(struct npr_request *rq, const struct ref_exec *re,
			 struct ref_request *rr, int s);

#endif /* NPR_REF_STATE_H */
