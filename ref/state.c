// SPDX-License-Identifier: MIT
/*
 * Variables that grow (a language model's KV cache) on the CPU backend.
 *
 * The request layer keeps such a variable in blocks with room to grow
 * (struct npr_var_store): a [1, heads, past, head_dim] cache appended
 * along past is heads blocks of capacity x head_dim values, so a step
 * appends the new positions in place and never copies the cache whole.
 * The hidden input that carries it into the graph is therefore not dense
 * (struct npr_pitched).  The model reads it through its own
 * Concat(past, new), the present output feeding attention: that step
 * reads the blocks where they lie, writing its dense output.  Any other
 * reader gets a dense copy made before the first step.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"
#include "sys.h"
#include "cpu.h"
#include "profile.h"
#include "ops/shape.h"
#include "dynamic.h"
#include "state.h"

/* Variable whose hidden input is @in, or NULL. */
static const struct npr_variable *var_of(const struct npr_graph *g, int in)
{
	int i;

	for (i = 0; i < g->nvars; i++)
		if (g->vars[i].append_axis >= 0 && g->vars[i].state_in == in)
			return &g->vars[i];
	return NULL;
}

/**
 * npr_cpu_plan_state() - the Concats that read a growing variable in place
 * @ex: the exec.
 * @re: a plan with its steps.
 *
 * A step qualifies when it is a plain (not fused, not in a batch group,
 * not dynamic but in a plan for every length: ref/poly.c) Concat of two
 * inputs whose first is the hidden input of a variable that grows along
 * the Concat's axis, and no other step reads that input's data (a
 * ShapeOf reads its shape).
 *
 * Return: 0 or -ENOMEM.
 */
int npr_cpu_plan_state(struct npr_exec *ex, struct ref_exec *re)
{
	const struct npr_graph *g = re->g;
	int i, s, t, j;

	if (!g->nvars)
		return 0;
	for (i = 0; i < ex->nin; i++) {
		const struct npr_variable *v = var_of(g, i);
		int val = ex->in[i].value, reader = -1, reads = 0;

		if (!v)
			continue;
		for (s = 0; s < re->nsteps; s++) {
			const struct npr_node *n = &g->nodes[re->steps[s]];
			const struct ref_fast *f = re->fast[s];

			if (ref_fast_real(f)) {
				reads += (f->x == val) + (f->res == val);
				continue;
			}
			/* reads the shape alone (a plan for every length) */
			if (!strcmp(n->type, "ShapeOf"))
				continue;
			for (j = 0; j < n->nin; j++)
				if (n->in[j] == val) {
					reads++;
					reader = s;
				}
		}
		for (j = 0; j < ex->nout; j++)
			reads += ex->out[j].value == val;
		if (reads != 1 || reader < 0 || reader < re->gsteps ||
		    re->fast[reader] || (re->dyn[reader] && !re->poly))
			continue;
		t = re->steps[reader];
		if (strcmp(g->nodes[t].type, "Concat") || g->nodes[t].nin != 2 ||
		    g->nodes[t].in[0] != val ||
		    ((const struct npr_concat_params *)
		     g->nodes[t].params)->ax != v->append_axis)
			continue;
		if (!re->cat) {
			re->cat = malloc(sizeof(int) * (re->nsteps + 1));
			if (!re->cat)
				return -ENOMEM;
			for (s = 0; s < re->nsteps; s++)
				re->cat[s] = -1;
		}
		re->cat[reader] = i;
	}
	return 0;
}

/**
 * npr_cpu_state_in_place() - is input @i read where it lies?
 * @re: the plan.
 * @i: an input of the exec.
 */
bool npr_cpu_state_in_place(const struct ref_exec *re, int i)
{
	int s;

	for (s = 0; re->cat && s < re->nsteps; s++)
		if (re->cat[s] == i)
			return true;
	return false;
}

/**
 * npr_cpu_state_gather() - a dense copy of a pitched input
 * @dst: the dense buffer, @src->nbytes.
 * @src: the request's input tensor.
 * @p: its blocks.
 */
void npr_cpu_state_gather(void *dst, const struct npr_tensor *src,
			  const struct npr_pitched *p)
{
	size_t o, blk = p->outer ? src->nbytes / p->outer : 0;

	for (o = 0; o < p->outer && blk; o++)
		memcpy((char *)dst + o * blk, (const char *)src->data +
		       o * p->pitch, blk);
}

/* The kernel of a step whose output is only sized. */
static int sized(const struct npr_node *n, const struct npr_tensor *in,
		 struct npr_tensor *out)
{
	(void)n;
	(void)in;
	(void)out;
	return 0;
}

/**
 * npr_cpu_state_concat() - run Concat(variable, new) reading the blocks
 * @rq: the request.
 * @re: the plan.
 * @rr: the request's memory.
 * @s: the step (re->cat[@s] >= 0).
 *
 * A dynamic step (its length varies) gets its output sized first.
 *
 * Return: 0, or npr_cpu_dyn_run()'s error.
 */
int npr_cpu_state_concat(struct npr_request *rq, const struct ref_exec *re,
			 struct ref_request *rr, int s)
{
	const struct npr_node *n = &re->g->nodes[re->steps[s]];
	const struct npr_pitched *p = &rq->pitch[re->cat[s]];
	const struct npr_tensor *a = &rr->t[n->in[0]], *x = &rr->t[n->in[1]];
	uint64_t t0 = rq->prof ? npr_now_ns() : 0;
	size_t o, ba, bx;
	char *y;
	int err;

	if (re->dyn[s]) {
		err = npr_cpu_dyn_run(rq, rr, re->g, re->steps[s], sized, true);
		if (err)
			return err;
	}
	y = rr->t[n->out[0]].data;
	ba = p->outer ? a->nbytes / p->outer : 0;
	bx = p->outer ? x->nbytes / p->outer : 0;
	for (o = 0; o < p->outer; o++) {
		if (ba)
			memcpy(y, (const char *)a->data + o * p->pitch, ba);
		if (bx)
			memcpy(y + ba, (const char *)x->data + o * bx, bx);
		y += ba + bx;
	}
	npr_cpu_prof_add(rq, re->steps[s], rq->prof ? npr_now_ns() - t0 : 0,
			 "state", true);
	return 0;
}
