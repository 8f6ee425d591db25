// SPDX-License-Identifier: MIT
/*
 * The CPU backend: executes a compiled graph node by node with the
 * reference kernels.  This file holds npr_cpu_backend_ops and the glue:
 *
 * compile:        the step list (live, non-constant nodes in topological
 *                 order) between the plans of ref/plan.c: the fast
 *                 kernels before it, the arena layout after it (one
 *                 64-byte aligned slot per computed value at first).
 * request_create: one arena per request, a tensor view per value.
 * infer:          convert inputs into the compute type, run the steps
 *                 (the leading ones a group of images at a time when the
 *                 batch is larger than a group, see ref/plan.c),
 *                 convert the results into the callers' output buffers.
 *
 * Steps whose shapes depend on input values are in ref/dynamic.c, the
 * plans per input shape signature of an exec with dynamic input
 * dimensions in ref/signature.c,
 * NPR_CPU_PROFILE and the request's profile records in ref/profile.c;
 * the state they share in ref/cpu.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "backend.h"
#include "error.h"
#include "object.h"
#include "sys.h"
#include "poly.h"
#include "tensor.h"
#include "passes/lmfuse.h"
#include "ref/gemm.h"
#include "ref/kernels/registry.h"
#include "cpu.h"
#include "dynamic.h"
#include "plan.h"
#include "profile.h"
#include "signature.h"
#include "state.h"

static int cpu_probe(struct npr_device *dev, int index)
{
	struct utsname u;

	if (index != 0)
		return npr_err(-ENODEV, "cpu.%d: there is one CPU device, cpu.0",
			       index);
	dev->info.device_type = NPR_DEVICE_CPU;
	dev->info.caps = NPR_CAP_FP32 | NPR_CAP_FP16 | NPR_CAP_INT8 |
			 NPR_CAP_EXPORT_IMPORT;
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

/**
 * npr_cpu_plan_free() - free a plan made by npr_cpu_plan_graph()
 * @ex: its exec.
 * @re: the plan (not its graph).
 */
void npr_cpu_plan_free(struct npr_exec *ex, struct ref_exec *re)
{
	int i;

	npr_cpu_prof_fini(ex, re);
	/* every plan is in one entry, at its step or (a compile that
	 * failed before the steps were made) at its node */
	for (i = 0; re->fast && i < re->nfast; i++) {
		if (!ref_fast_real(re->fast[i]))
			continue;
		npr_conv_plan_free(re->fast[i]->conv);
		free(re->fast[i]);
	}
	free(re->fast);
	free(re->kern);
	free(re->fused);
	free(re->dyn);
	free(re->no_idx);
	free(re->gslot);
	free(re->steps);
	free(re->off);
	free(re->cat);
	free(re->cat_store);
	free(re->attn);
	free(re->share);
	free(re->share_in);
	free(re->poly);
	free(re);
}

static void cpu_exec_destroy(struct npr_exec *ex)
{
	struct ref_exec *re = ex->priv;

	/* the threads' scratch buffers may be sized for this model */
	npr_scratch_release();
	npr_cpu_sig_fini(ex, re);
	npr_cpu_plan_free(ex, re);
	ex->priv = NULL;
}

static bool cpu_held(const struct npr_exec *ex, int value)
{
	const struct ref_exec *re = ex->priv;
	int i;

	for (i = 0; re && i < re->nsteps; i++)
		if (ref_fast_real(re->fast[i]) && re->fast[i]->wv == value)
			return true;
	return false;
}

/*
 * The exec's share of the memory budget (npr_exec_budget()): the packed
 * weights it holds, and what cpu_request_create() allocates: the arena,
 * the per-value tensors, the step I/O arrays and, with dynamic steps,
 * the request's view of the graph (npr_cpu_dyn_create(); a parsed node's
 * params counted as 4 KiB).
 */
static void budget(struct npr_exec *ex, const struct ref_exec *re)
{
	const struct npr_graph *g = ex->g;
	uint64_t nv = g->nvals ? g->nvals : 1, nn = g->nnodes ? g->nnodes : 1;
	uint64_t req, held = 0;
	int i, k, cnt;

	for (i = 0; i < re->nsteps; i++) {
		const struct ref_fast *f = re->fast[i];
		size_t bytes[64];

		if (!ref_fast_real(f))
			continue;
		cnt = npr_conv_plan_prepared(f->conv, NULL, bytes, 64);
		for (k = 0; k < cnt && k < 64; k++)
			held += npr_alloc_cost(bytes[k]);
	}
	req = npr_alloc_cost(sizeof(struct ref_request)) + npr_alloc_cost(re->arena_bytes) +
	      npr_alloc_cost(nv * sizeof(struct npr_tensor)) +
	      npr_alloc_cost((uint64_t)(re->max_in + 1) * sizeof(struct npr_tensor)) +
	      npr_alloc_cost((uint64_t)(re->max_out + 1) * sizeof(struct npr_tensor));
	if (re->ndyn)
		req += npr_alloc_cost(nv * sizeof(struct npr_value)) +
		       npr_alloc_cost(nn * sizeof(struct npr_node)) +
		       2 * npr_alloc_cost(nv * sizeof(void *)) +
		       (uint64_t)re->ndyn * 4096;
	ex->be_req_bytes = req;
	ex->be_exec_bytes = held;
}

/**
 * npr_cpu_plan_graph() - plan the steps of a graph
 * @ex: the exec (its ports and properties).
 * @re: a zeroed plan whose graph re->g is set: ex->g, or the graph of an
 *      input shape signature (ref/signature.c); freed by the caller with
 *      npr_cpu_plan_free(), also on failure.
 *
 * The step list between the fast kernels (npr_cpu_plan_kernels()) and
 * the arena (npr_cpu_plan_arena()).
 *
 * Return: 0 or -errno with a message.
 */
int npr_cpu_plan_graph(struct npr_exec *ex, struct ref_exec *re)
{
	struct npr_graph *g = re->g;
	int i, j, err;

	re->steps = malloc(sizeof(int) * (g->nnodes ? g->nnodes : 1));
	re->off = malloc(sizeof(size_t) * (g->nvals ? g->nvals : 1));
	if (!re->steps || !re->off)
		goto nomem;
	for (i = 0; i < g->nvals; i++)
		re->off[i] = SIZE_MAX;
	/*
	 * Threads per request: INFERENCE_NUM_THREADS when set; else LATENCY
	 * runs one request on every CPU and THROUGHPUT one CPU per request,
	 * so that requests on several threads run side by side.
	 */
	re->threads = ex->props.num_threads;
	re->copy_inputs = npr_env(NPR_ENV_CPU_COPY_INPUTS);
	if (!re->threads && ex->props.perf_hint == NPR_PERF_HINT_THROUGHPUT)
		re->threads = 1;
	re->fast = calloc(g->nnodes ? g->nnodes : 1, sizeof(*re->fast));
	re->fused = calloc(g->nnodes ? g->nnodes : 1, sizeof(*re->fused));
	re->dyn = calloc(g->nnodes ? g->nnodes : 1, sizeof(*re->dyn));
	re->kern = calloc(g->nnodes ? g->nnodes : 1, sizeof(*re->kern));
	if (!re->fast || !re->fused || !re->dyn || !re->kern)
		goto nomem;
	re->nfast = g->nnodes;
	err = npr_cpu_plan_kernels(ex, re);
	if (err)
		return err;
	err = npr_cpu_prof_init(re, g->nnodes);
	if (err)
		return err;
	for (i = 0; i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];
		bool src = n->op->flags & NPR_OP_SOURCE;

		if (n->dead || (n->op->flags & NPR_OP_SINK))
			continue;
		if (src && strcmp(n->type, "Parameter"))
			continue;	/* constants */
		if (!src) {
			npr_eval_fn kern = npr_kernel_find(n->op);

			if (!kern)
				return npr_node_err(n, -EOPNOTSUPP,
						    "the cpu device has no kernel for this op");
			if (re->fast[i] != &npr_cpu_absorbed_mark) {
				if (ref_node_dyn(re, g, i)) {
					if (n->op->flags & NPR_OP_BODIES)
						return npr_node_err(n, -EOPNOTSUPP,
								    "a sub-graph op with shapes that depend on input values is not supported");
					re->dyn[re->nsteps] = true;
					re->ndyn++;
				}
				re->fast[re->nsteps] = re->fast[i];
				if (re->nsteps != i)	/* moved, not copied */
					re->fast[i] = NULL;
				re->kern[re->nsteps] = kern;
				re->steps[re->nsteps++] = i;
			} else {
				re->fused[i] = true;
			}
			if (n->nin > re->max_in)
				re->max_in = n->nin;
			if (n->nout > re->max_out)
				re->max_out = n->nout;
		}
		for (j = 0; j < n->nout; j++) {
			struct npr_value *v = npr_out(g, n, j);
			size_t bytes = npr_tensor_bytes(v->type,
							npr_shape_numel(&v->shape));

			if (v->data || !npr_shape_static(&v->shape))
				continue;	/* constant, or sized per run */
			re->off[n->out[j]] = re->arena_bytes;
			/* saturates: npr_exec_budget() refuses the sizes */
			bytes = bytes > SIZE_MAX - 63 ? SIZE_MAX - 63 : bytes;
			bytes = (bytes + 63) & ~(size_t)63;
			re->arena_bytes = re->arena_bytes > SIZE_MAX - bytes ?
					  SIZE_MAX : re->arena_bytes + bytes;
		}
	}
	err = npr_cpu_plan_arena(ex, re);
	return err ? err : npr_cpu_plan_state(ex, re);
nomem:
	return -ENOMEM;
}

/*
 * The graph fusions of lib/passes/lmfuse.c (attention, norms, GELU,
 * SiLU, MatMul weights) on the exec's own graph, but those
 * NPR_CPU_NO_FUSE names.  An exec with dynamic input dimensions is
 * fused once here, where shapes allow: the graphs of its input shape
 * signatures are views of this one (ref/signature.c).
 */
static int cpu_fuse(struct npr_exec *ex, unsigned int *which)
{
	const char *no = npr_env(NPR_ENV_CPU_NO_FUSE);
	unsigned int off = 0, on;
	int err;

	if (no) {
		err = npr_lmfuse_parse(no, &off);
		if (err)
			return err;
	}
	on = NPR_LMFUSE_ALL & ~off;
	/*
	 * With dynamic input dimensions the patterns have no shapes yet:
	 * only the MatMul weights are rewritten here (once, in the exec's
	 * graph); each signature's plan fuses the rest (ref/signature.c).
	 */
	*which = on & ~(1u << NPR_LMFUSE_MATMUL);
	if (ex->dyn_inputs)
		on &= 1u << NPR_LMFUSE_MATMUL;
	err = npr_pass_lmfuse(ex->g, on, NULL);
	return err < 0 ? err : 0;
}

static int cpu_compile(struct npr_exec *ex)
{
	struct ref_exec *re;
	unsigned int which;
	int err;

	err = cpu_fuse(ex, &which);
	if (err)
		return err;
	re = calloc(1, sizeof(*re));
	if (!re)
		return -ENOMEM;
	ex->priv = re;
	re->g = ex->g;
	re->fuse = which;
	re->kv_copy = npr_env(NPR_ENV_CPU_KV_COPY) != NULL;
	re->no_share = npr_env(NPR_ENV_CPU_NO_SHARE) != NULL;
	/* dynamic input dimensions: a plan per input shape signature */
	if (ex->dyn_inputs)
		return npr_cpu_sig_init(ex, re);
	err = npr_cpu_plan_graph(ex, re);
	if (!err)
		budget(ex, re);
	return err;
}

static int cmp_prep(const void *a, const void *b)
{
	const struct npr_prep_buf *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return x->index - y->index;
}

/*
 * The packed weights of every fast convolution, for the blob: opaque
 * bytes, in the layout npr_cpu_prep_layout() names.  Import hands them back and
 * compile uses them in place instead of packing again.
 */
static int cpu_prepared(const struct npr_exec *ex, struct npr_prepared **out)
{
	const struct ref_exec *re = ex->priv;
	struct npr_prepared *prep;
	int i, k, n = 0, cnt;

	*out = NULL;
	for (i = 0; i < re->nsteps; i++) {
		const struct ref_fast *f = re->fast[i];

		if (ref_fast_real(f))
			n += npr_conv_plan_prepared(f->conv, NULL, NULL, 0);
	}
	if (!n)
		return 0;
	prep = calloc(1, sizeof(*prep) + sizeof(prep->buf[0]) * n);
	if (!prep)
		return -ENOMEM;
	npr_cpu_prep_layout(prep->layout, sizeof(prep->layout));
	for (i = 0; i < re->nsteps; i++) {
		const struct ref_fast *f = re->fast[i];
		const void **buf;
		size_t *bytes;

		if (!ref_fast_real(f))
			continue;
		cnt = npr_conv_plan_prepared(f->conv, NULL, NULL, 0);
		buf = malloc(sizeof(*buf) * cnt);
		bytes = malloc(sizeof(*bytes) * cnt);
		if (!buf || !bytes) {
			free(buf);
			free(bytes);
			free(prep);
			return -ENOMEM;
		}
		npr_conv_plan_prepared(f->conv, buf, bytes, cnt);
		for (k = 0; k < cnt; k++) {
			prep->buf[prep->n].node = f->head;
			prep->buf[prep->n].index = k;
			prep->buf[prep->n].data = buf[k];
			prep->buf[prep->n].bytes = bytes[k];
			prep->n++;
		}
		free(buf);
		free(bytes);
	}
	qsort(prep->buf, prep->n, sizeof(prep->buf[0]), cmp_prep);
	*out = prep;
	return 0;
}

static void cpu_request_destroy(struct npr_request *rq)
{
	struct ref_request *rr = rq->priv;

	npr_cpu_dyn_destroy(rr, rq->ex->g);
	if (rr->sig)
		npr_cpu_sig_put(rq->ex, rr->sig);
	free(rr->arena);
	free(rr->t);
	free(rr->in_buf);
	free(rr->out_buf);
	free(rr);
	rq->priv = NULL;
}

/**
 * npr_cpu_req_views() - a request's tensor per value, for a plan
 * @re: the plan.
 * @rr: the request's state: rr->t (one per value of re->g), rr->arena
 *      (at least re->arena_bytes).
 *
 * Constants point at their data, computed values at their arena slots;
 * values sized at run time (dynamic steps) get their buffers then.
 */
void npr_cpu_req_views(const struct ref_exec *re, struct ref_request *rr)
{
	const struct npr_graph *g = re->g;
	int i;

	for (i = 0; i < g->nvals; i++) {
		const struct npr_value *v = &g->vals[i];
		struct npr_tensor *t = &rr->t[i];

		t->type = v->type;
		t->shape = v->shape;
		t->nbytes = npr_tensor_bytes(v->type, npr_shape_numel(&v->shape));
		t->data = NULL;
		if (v->data)
			t->data = (void *)v->data;
		else if (re->off[i] != SIZE_MAX)
			t->data = (char *)rr->arena + re->off[i];
	}
}

static int cpu_request_create(struct npr_request *rq)
{
	struct npr_exec *ex = rq->ex;
	struct ref_exec *re = ex->priv;
	struct npr_graph *g = ex->g;
	struct ref_request *rr;

	rr = calloc(1, sizeof(*rr));
	if (!rr)
		return -ENOMEM;
	rq->priv = rr;
	/* with a plan per signature, the arena comes with the first one */
	rr->arena = re->sigs ? NULL : npr_alloc(re->arena_bytes);
	rr->arena_cap = re->arena_bytes;
	rr->t = calloc(g->nvals ? g->nvals : 1, sizeof(*rr->t));
	rr->in_buf = calloc(re->max_in + 1, sizeof(*rr->in_buf));
	rr->out_buf = calloc(re->max_out + 1, sizeof(*rr->out_buf));
	if ((!rr->arena && !re->sigs) || !rr->t || !rr->in_buf ||
	    !rr->out_buf)
		return -ENOMEM;
	if (re->sigs)
		return 0;
	npr_cpu_req_views(re, rr);
	return re->ndyn ? npr_cpu_dyn_create(re, rr, g) : 0;
}

/*
 * Value @v's tensor for images [@b0, @b0 + @nb) of the batch; a value
 * that lives inside the groups has one group's slot, the same for all.
 */
static struct npr_tensor slice_of(const struct ref_request *rr,
				  const struct ref_exec *re,
				  const struct npr_graph *g, int v,
				  int64_t b0, int64_t nb)
{
	struct npr_tensor t = rr->t[v];
	size_t per;

	if (!nb || g->vals[v].data)
		return t;	/* the whole batch, or a constant */
	per = t.nbytes / re->batch;
	if (!re->gslot[v])
		t.data = (char *)t.data + per * b0;
	t.nbytes = per * nb;
	t.shape.d[0] = nb;
	return t;
}

/*
 * Run step @i on images [@b0, @b0 + @nb) of the batch, or (@nb 0) on the
 * whole batch.
 */
static int run_step(struct npr_request *rq, struct ref_exec *re,
		    struct ref_request *rr, int i, int64_t b0, int64_t nb)
{
	struct npr_graph *g = re->g;
	const struct npr_node *n = &g->nodes[re->steps[i]];
	const struct ref_fast *f = re->fast[i];
	uint64_t t0 = re->prof_ns || rq->prof ? npr_now_ns() : 0;
	bool first = b0 == 0 || !nb;
	int j, err;

	if (re->cat && re->cat[i] >= 0 && rq->pitch &&
	    (rq->pitch[re->cat[i]].pitch ||
	     (re->cat_store && re->cat_store[i])))
		return npr_cpu_state_concat(rq, re, rr, i);
	if (re->attn && (re->attn[2 * i] >= 0 || re->attn[2 * i + 1] >= 0))
		return npr_cpu_state_attention(rq, re, rr, i);
	/* a step repeating an earlier one (ref/poly.c): its outputs */
	if (re->share && re->share[i] >= 0 && rr->share_ok) {
		const struct npr_node *m = &g->nodes[re->steps[re->share[i]]];

		if (!strcmp(n->type, "ShapeOf") &&
		    !npr_shape_eq(&rr->t[n->in[0]].shape,
				  &rr->t[m->in[0]].shape)) {
			rr->share_ok = false;
		} else {
			for (j = 0; j < n->nout; j++)
				rr->t[n->out[j]] = rr->t[m->out[j]];
			if (rq->prof)
				rq->prof[re->steps[i]].fused = true;
			return 0;
		}
	}
	if (f == &npr_cpu_noop_mark) {
		if (rq->prof)
			rq->prof[re->steps[i]].fused = true;
		return 0;
	}
	if (re->dyn[i]) {
		err = npr_cpu_dyn_run(rq, rr, g, re->steps[i], re->kern[i],
				      re->poly != NULL);
		if (re->prof_ns)
			npr_cpu_prof_step(re, i, npr_now_ns() - t0);
		npr_cpu_prof_add(rq, re->steps[i], npr_now_ns() - t0, "ref",
				 true);
		return err;
	}
	if (f) {
		struct npr_tensor x = slice_of(rr, re, g, f->x, b0, nb);
		struct npr_tensor y = slice_of(rr, re, g, f->y, b0, nb);
		struct npr_tensor r = { 0 };

		if (f->res >= 0)
			r = slice_of(rr, re, g, f->res, b0, nb);
		if (nb)
			err = npr_conv_plan_run_n(f->conv, x.data, y.data,
						  r.data, nb);
		else
			err = npr_conv_plan_run(f->conv, x.data, y.data,
						r.data);
		if (re->prof_ns)
			npr_cpu_prof_step(re, i, npr_now_ns() - t0);
		/* the time is the convolution's; the node the step sits at
		 * was fused into it */
		npr_cpu_prof_add(rq, f->head, npr_now_ns() - t0,
				 npr_conv_plan_kernel(f->conv), first);
		if (rq->prof && re->steps[i] != f->head)
			rq->prof[re->steps[i]].fused = true;
		return err;
	}
	for (j = 0; j < n->nin; j++)
		rr->in_buf[j] = slice_of(rr, re, g, n->in[j], b0, nb);
	for (j = 0; j < n->nout; j++)
		rr->out_buf[j] = slice_of(rr, re, g, n->out[j], b0, nb);
	if (re->no_idx && re->no_idx[re->steps[i]])
		rr->out_buf[1].data = NULL;
	err = re->kern[i](n, rr->in_buf, rr->out_buf);
	if (re->prof_ns)
		npr_cpu_prof_step(re, i, npr_now_ns() - t0);
	npr_cpu_prof_add(rq, re->steps[i], npr_now_ns() - t0, "ref",
			 first);
	return err;
}

/**
 * npr_cpu_run() - one inference with a plan
 * @rq: the request.
 * @re: the plan: the exec's, or that of the request's input shape
 *      signature (ref/signature.c).
 * @rr: the request's state, laid out for @re.
 *
 * Converts the inputs into the compute type, runs the steps, converts
 * the results into the output buffers (sizing those of outputs without
 * a static port shape for this inference).
 *
 * Return: 0 or -errno with a message.
 */
int npr_cpu_run(struct npr_request *rq, struct ref_exec *re,
		struct ref_request *rr)
{
	struct npr_exec *ex = rq->ex;
	struct npr_graph *g = re->g;
	int i, err = 0, old;
	int64_t b0 = 0, group;
	uint64_t t_run = 0;

	npr_scratch_trim();	/* before any kernel: none in use */
	for (i = 0; i < ex->nin; i++) {
		int v = ex->in[i].value;
		struct npr_tensor *t = &rr->t[v];
		size_t numel = npr_shape_numel(&t->shape);

		if (re->off[v] == SIZE_MAX)
			continue;	/* input no output depends on */
		/* a variable that grows: in blocks with room between */
		if (rq->pitch && rq->pitch[i].pitch) {
			if (npr_cpu_state_in_place(re, i)) {
				/* its length, for a plan of every length */
				t->shape = rq->in[i].shape;
				t->nbytes = rq->in[i].nbytes;
				t->data = rq->in[i].data;
			} else {
				t->data = (char *)rr->arena + re->off[v];
				npr_cpu_state_gather(t->data, &rq->in[i],
						     &rq->pitch[i]);
			}
			continue;
		}
		/*
		 * The request's own buffer (64-byte aligned, padded like an
		 * arena slot) in the compute type is read in place: no step
		 * writes a model input, and the copy was a serial pass over
		 * the batch before the first step (4.8 MB at batch 8).
		 */
		if (rq->in[i].type == t->type && rq->in[i].data == rq->own_in[i] &&
		    !re->copy_inputs) {
			t->data = rq->in[i].data;
			continue;
		}
		t->data = (char *)rr->arena + re->off[v];
		err = npr_convert(t->data, t->type, rq->in[i].data,
				  rq->in[i].type, numel);
		if (err)
			return npr_err(err, "input %s: cannot convert %s to %s",
				       ex->in[i].name,
				       npr_elem_name(rq->in[i].type),
				       npr_elem_name(t->type));
	}
	rr->share_ok = re->share && npr_cpu_poly_share_ok(re, rr);
	old = npr_par_set_limit(re->threads);
	if (re->prof_ns) {
		re->prof_runs++;
		t_run = npr_now_ns();
	}
	/*
	 * Groups of as many images as threads, up to the planned size: one
	 * thread runs best image by image (the smallest working set), two
	 * take an image each.
	 */
	group = re->group;
	if (!re->group_set && npr_par_threads() < group)
		group = npr_par_threads();
	/* the grouped steps, a group of images at a time; then the rest */
	for (i = 0; i < re->nsteps; i++) {
		int64_t nb = 0;

		if (i < re->gsteps) {
			nb = re->batch - b0 < group ? re->batch - b0 : group;
		}
		/*
		 * A ring CANCEL of this running job, or its deadline: stop
		 * at a node boundary (a clock read per step only with a
		 * deadline)
		 */
		if (__atomic_load_n(&rq->cancel, __ATOMIC_RELAXED)) {
			err = npr_err(-ECANCELED, "cancelled while running, after %d of %d steps",
				      i, re->nsteps);
			break;
		}
		if (rq->deadline_ns && npr_now_ns() > rq->deadline_ns) {
			err = npr_err(-ETIME, "the deadline passed while it ran, after %d of %d steps; its result is discarded",
				      i, re->nsteps);
			break;
		}
		if (re->pstats)
			npr_par_stats_attach(&re->pstats[i]);
		err = run_step(rq, re, rr, i, b0, nb);
		if (re->pstats)
			npr_par_stats_attach(NULL);
		if (err)
			break;
		if (i == re->gsteps - 1 && b0 + nb < re->batch) {
			b0 += nb;
			i = -1;		/* the next group from step 0 */
		}
	}
	/* nodes a fused step did the work of (not the convolutions) */
	for (i = 0; rq->prof && i < g->nnodes; i++)
		if (re->fused[i] && !rq->prof[i].kernel)
			rq->prof[i].fused = true;
	npr_par_set_limit(old);
	if (re->prof_ns)
		npr_cpu_prof_run_end(re, npr_now_ns() - t_run);
	if (err)
		return npr_err_default(err, 0);
	for (i = 0; i < ex->nout; i++) {
		struct npr_tensor *t = &rr->t[ex->out[i].value];
		size_t numel = npr_shape_numel(&t->shape);

		const struct npr_shape *ps = &ex->out[i].shape;
		char sbuf[2][96];

		/*
		 * A port COMPILE found static from a few probed sizes may
		 * still follow a dynamic input: size it for this inference
		 * when it is the request's own buffer; caller memory of the
		 * probed size is never written past.
		 */
		if (npr_shape_static(ps) && !npr_shape_eq(ps, &t->shape) &&
		    rq->out[i].data != rq->own_out[i])
			return npr_err(-EPROTO, "output %s is %s at run time; COMPILE reported %s, the size of the memory bound to it",
				       ex->out[i].name,
				       npr_shape_str(&t->shape, sbuf[0],
						     sizeof(sbuf[0])),
				       npr_shape_str(ps, sbuf[1],
						     sizeof(sbuf[1])));
		if (!npr_shape_static(ps) ||
		    !npr_shape_eq(&rq->out[i].shape, &t->shape)) {
			err = npr_request_out_shape(rq, i, &t->shape);
			if (err)
				return err;
		}
		err = npr_convert(rq->out[i].data, rq->out[i].type, t->data,
				  t->type, numel);
		if (err)
			return npr_err(err, "output %s: cannot convert %s to %s",
				       ex->out[i].name, npr_elem_name(t->type),
				       npr_elem_name(rq->out[i].type));
	}
	return 0;
}

/*
 * CPU_DENORMALS_OPTIMIZATION: FTZ and DAZ for the inference, on this
 * thread and (ref/threads.c) on the pool's workers while they run its
 * loops; the caller's own control bits come back after.
 */
static int cpu_infer(struct npr_request *rq)
{
	struct ref_exec *re = rq->ex->priv;
	bool flush = rq->ex->props.cpu_denormals;
	unsigned int fp = flush ? npr_fpcr_get() : 0;
	int err;

	if (flush)
		npr_fpcr_set(fp | NPR_FPCR_FTZ_DAZ);
	if (re->sigs)
		err = npr_cpu_sig_infer(rq);
	else
		err = npr_cpu_run(rq, re, rq->priv);
	if (flush)
		npr_fpcr_set(fp);
	return err;
}

const struct npr_backend_ops npr_cpu_backend_ops = {
	.api_version = NPR_BACKEND_API_VERSION,
	.name = "cpu",
	.caps = NPR_BACKEND_CAP_DYNAMIC_SHAPES | NPR_BACKEND_CAP_INT8,
	.probe = cpu_probe,
	.compile = cpu_compile,
	.exec_destroy = cpu_exec_destroy,
	.request_create = cpu_request_create,
	.request_destroy = cpu_request_destroy,
	.infer = cpu_infer,
	.prepared = cpu_prepared,
	.held = cpu_held,
};

