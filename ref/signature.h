/* SPDX-License-Identifier: MIT */
/*
 * Plans per input shape signature (ref/signature.c), and what that file
 * uses of ref/backend.c: a request's tensors for a plan, a run.
 */
#ifndef NPR_REF_SIGNATURE_H
#define NPR_REF_SIGNATURE_H

#include "cpu.h"

struct npr_exec;
struct npr_request;

int npr_cpu_sig_init(struct npr_exec *ex, struct ref_exec *re);

void npr_cpu_sig_fini(struct npr_exec *ex, struct ref_exec *re);

void npr_cpu_sig_put(struct npr_exec *ex, struct ref_sig *s);

int npr_cpu_sig_infer(struct npr_request *rq);

/* ref/backend.c */
void npr_cpu_req_views(const struct ref_exec *re, struct ref_request *rr);

int npr_cpu_run(struct npr_request *rq, struct ref_exec *re,
		struct ref_request *rr);

#endif /* NPR_REF_SIGNATURE_H */
