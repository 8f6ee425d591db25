// SPDX-License-Identifier: MIT
/*
 * The CPU backend: executes a compiled graph node by node with the
 * reference kernels.
 *
 * compile:        a step list (live, non-constant nodes in topological
 *                 order) and an arena layout: one 64-byte aligned slot per
 *                 computed value.
 * request_create: one arena per request, a tensor view per value.
 * infer:          convert inputs into the compute type, run the steps,
 *                 convert the results into the callers' output buffers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "../lib/core.h"

struct ref_exec {
	int nsteps;
	int *steps;		/* node indexes */
	size_t *off;		/* per value: arena offset, SIZE_MAX if none */
	size_t arena_bytes;
	int max_in, max_out;
};

struct ref_request {
	void *arena;
	struct npr_tensor *t;	/* per value */
	struct npr_tensor *in_buf, *out_buf;
};

static int cpu_probe(struct npr_device *dev, int index)
{
	struct utsname u;

	if (index != 0)
		return npr_err(-ENODEV, "cpu.%d: there is one CPU device, cpu.0",
			       index);
	dev->info.device_type = NPR_DEVICE_CPU;
	dev->info.caps = NPR_CAP_FP32 | NPR_CAP_FP16 | NPR_CAP_INT8;
	snprintf(dev->info.name, sizeof(dev->info.name), "cpu");
	if (uname(&u))
		snprintf(u.machine, sizeof(u.machine), "unknown");
	snprintf(dev->info.arch, sizeof(dev->info.arch), "%.31s", u.machine);
	{
		FILE *f = fopen("/proc/cpuinfo", "r");
		char line[256];

		snprintf(dev->info.full_name, sizeof(dev->info.full_name),
			 "CPU (%.64s)", u.machine);
		while (f && fgets(line, sizeof(line), f)) {
			char *p = strchr(line, ':');

			if (strncmp(line, "model name", 10) || !p)
				continue;
			p++;
			while (*p == ' ')
				p++;
			p[strcspn(p, "\n")] = 0;
			snprintf(dev->info.full_name,
				 sizeof(dev->info.full_name), "%s", p);
			break;
		}
		if (f)
			fclose(f);
	}
	return 0;
}

static void cpu_exec_destroy(struct npr_exec *ex)
{
	struct ref_exec *re = ex->priv;

	free(re->steps);
	free(re->off);
	free(re);
	ex->priv = NULL;
}

static int cpu_compile(struct npr_exec *ex)
{
	struct npr_graph *g = ex->g;
	struct ref_exec *re;
	int i, j;

	re = calloc(1, sizeof(*re));
	if (!re)
		return -ENOMEM;
	ex->priv = re;
	re->steps = malloc(sizeof(int) * (g->nnodes ? g->nnodes : 1));
	re->off = malloc(sizeof(size_t) * (g->nvals ? g->nvals : 1));
	if (!re->steps || !re->off)
		goto nomem;
	for (i = 0; i < g->nvals; i++)
		re->off[i] = SIZE_MAX;
	for (i = 0; i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];
		bool src = n->op->flags & NPR_OP_SOURCE;

		if (n->dead || (n->op->flags & NPR_OP_SINK))
			continue;
		if (src && strcmp(n->type, "Parameter"))
			continue;	/* constants */
		if (!src) {
			if (!n->op->eval)
				return npr_node_err(n, -EOPNOTSUPP,
						    "the cpu device has no kernel for this op");
			re->steps[re->nsteps++] = i;
			if (n->nin > re->max_in)
				re->max_in = n->nin;
			if (n->nout > re->max_out)
				re->max_out = n->nout;
		}
		for (j = 0; j < n->nout; j++) {
			struct npr_value *v = npr_out(g, n, j);
			size_t bytes = npr_tensor_bytes(v->type,
							npr_shape_numel(&v->shape));

			if (v->data)
				continue;
			re->off[n->out[j]] = re->arena_bytes;
			re->arena_bytes += (bytes + 63) & ~(size_t)63;
		}
	}
	return 0;
nomem:
	return -ENOMEM;
}

static void cpu_request_destroy(struct npr_request *rq)
{
	struct ref_request *rr = rq->priv;

	free(rr->arena);
	free(rr->t);
	free(rr->in_buf);
	free(rr->out_buf);
	free(rr);
	rq->priv = NULL;
}

static int cpu_request_create(struct npr_request *rq)
{
	struct npr_exec *ex = rq->ex;
	struct ref_exec *re = ex->priv;
	struct npr_graph *g = ex->g;
	struct ref_request *rr;
	int i;

	rr = calloc(1, sizeof(*rr));
	if (!rr)
		return -ENOMEM;
	rq->priv = rr;
	rr->arena = npr_alloc(re->arena_bytes);
	rr->t = calloc(g->nvals ? g->nvals : 1, sizeof(*rr->t));
	rr->in_buf = calloc(re->max_in + 1, sizeof(*rr->in_buf));
	rr->out_buf = calloc(re->max_out + 1, sizeof(*rr->out_buf));
	if (!rr->arena || !rr->t || !rr->in_buf || !rr->out_buf)
		return -ENOMEM;
	for (i = 0; i < g->nvals; i++) {
		struct npr_value *v = &g->vals[i];
		struct npr_tensor *t = &rr->t[i];

		t->type = v->type;
		t->shape = v->shape;
		t->nbytes = npr_tensor_bytes(v->type, npr_shape_numel(&v->shape));
		if (v->data)
			t->data = (void *)v->data;
		else if (re->off[i] != SIZE_MAX)
			t->data = (char *)rr->arena + re->off[i];
	}
	return 0;
}

static int cpu_infer(struct npr_request *rq)
{
	struct npr_exec *ex = rq->ex;
	struct ref_exec *re = ex->priv;
	struct ref_request *rr = rq->priv;
	struct npr_graph *g = ex->g;
	int i, j, err;

	for (i = 0; i < ex->nin; i++) {
		struct npr_tensor *t = &rr->t[ex->in[i].value];
		size_t numel = npr_shape_numel(&t->shape);

		if (!t->data)
			continue;	/* input no output depends on */
		err = npr_convert(t->data, t->type, rq->in[i].data,
				  rq->in[i].type, numel);
		if (err)
			return npr_err(err, "input %s: cannot convert %s to %s",
				       ex->in[i].name,
				       npr_elem_name(rq->in[i].type),
				       npr_elem_name(t->type));
	}
	for (i = 0; i < re->nsteps; i++) {
		const struct npr_node *n = &g->nodes[re->steps[i]];
		uint64_t t0 = rq->prof ? npr_now_ns() : 0;

		for (j = 0; j < n->nin; j++)
			rr->in_buf[j] = rr->t[n->in[j]];
		for (j = 0; j < n->nout; j++)
			rr->out_buf[j] = rr->t[n->out[j]];
		err = n->op->eval(n, rr->in_buf, rr->out_buf);
		if (err)
			return npr_err_default(err, 0);
		if (rq->prof) {
			rq->prof[re->steps[i]].ns = npr_now_ns() - t0;
			rq->prof[re->steps[i]].kernel = "ref";
		}
	}
	for (i = 0; i < ex->nout; i++) {
		struct npr_tensor *t = &rr->t[ex->out[i].value];
		size_t numel = npr_shape_numel(&t->shape);

		err = npr_convert(rq->out[i].data, rq->out[i].type, t->data,
				  t->type, numel);
		if (err)
			return npr_err(err, "output %s: cannot convert %s to %s",
				       ex->out[i].name, npr_elem_name(t->type),
				       npr_elem_name(rq->out[i].type));
	}
	return 0;
}

const struct npr_backend_ops npr_cpu_backend_ops = {
	.api_version = NPR_BACKEND_API_VERSION,
	.name = "cpu",
	.probe = cpu_probe,
	.compile = cpu_compile,
	.exec_destroy = cpu_exec_destroy,
	.request_create = cpu_request_create,
	.request_destroy = cpu_request_destroy,
	.infer = cpu_infer,
};
