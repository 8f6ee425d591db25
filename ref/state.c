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
 *
 * When the present's only readers are fused attentions (FusedAttention
 * reading it as its key or value) and shape queries, the Concat copies
 * nothing at all: it writes the new positions into the room reserved in
 * the store (they count as appended only when the inference succeeds,
 * lib/request.c), and its output is the store itself, the cache grown
 * by the new positions, which attention reads block by block
 * (npr_ref_fused_attention_pitched()).  A step then costs O(new
 * positions) besides attention's own reading of the cache.  Both steps
 * show as kernel "kv_store" in a profile.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"
#include "sys.h"
#include "cpu.h"
#include "profile.h"
#include "ops/fused.h"
#include "ops/shape.h"
#include "tensor.h"
#include "kernels/fused.h"
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

/*
 * May Concat step @s (re->cat[@s] >= 0, of variable @v) write into the
 * store and output the store itself?  When every reader of its output
 * is a FusedAttention step reading it as its (untransposed) key or value,
 * or a ShapeOf, and its blocks are the attention's matrices: the
 * variable is f32 and grows along its next to last axis.  Marks the
 * attention steps' re->attn.
 */
static int plan_store(struct npr_exec *ex, struct ref_exec *re, int s,
		      const struct npr_variable *v)
{
	const struct npr_graph *g = re->g;
	int y = g->nodes[re->steps[s]].out[0], i = re->cat[s], t, j, uses = 0;

	if (v->type != NPR_ELEM_F32 || v->append_axis != v->shape.rank - 2)
		return 0;
	for (j = 0; j < ex->nout; j++)
		if (ex->out[j].value == y)
			return 0;
	for (t = 0; t < re->nsteps; t++) {
		const struct npr_node *n = &g->nodes[re->steps[t]];
		const struct ref_fast *f = re->fast[t];
		bool attn = !strcmp(n->type, "FusedAttention") && !f &&
			    t >= re->gsteps;

		if (ref_fast_real(f)) {
			if (f->x == y || f->res == y)
				return 0;
			continue;
		}
		if (!strcmp(n->type, "ShapeOf"))
			continue;
		for (j = 0; j < n->nin; j++) {
			if (n->in[j] != y)
				continue;
			if (!attn || (j != 1 && j != 2) || (j == 1 &&
			    ((const struct npr_fattn_params *)
			     n->params)->key_t))
				return 0;
			uses++;
		}
	}
	if (!uses)
		return 0;
	if (!re->attn) {
		re->attn = malloc(sizeof(int) * 2 * (re->nsteps + 1));
		re->cat_store = calloc(re->nsteps + 1, sizeof(bool));
		if (!re->attn || !re->cat_store)
			return -ENOMEM;
		for (t = 0; t < 2 * re->nsteps; t++)
			re->attn[t] = -1;
	}
	for (t = 0; t < re->nsteps; t++) {
		const struct npr_node *n = &g->nodes[re->steps[t]];

		if (strcmp(n->type, "FusedAttention"))
			continue;
		for (j = 1; j <= 2; j++)
			if (n->in[j] == y)
				re->attn[2 * t + j - 1] = i;
	}
	re->cat_store[s] = true;
	return 0;
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
 * ShapeOf reads its shape).  Of those, the ones whose output attention
 * alone reads write into the store (plan_store()), unless
 * NPR_CPU_KV_COPY was set at COMPILE.
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
		if (!((const struct ref_exec *)ex->priv)->kv_copy) {
			int err = plan_store(ex, re, reader, v);

			if (err)
				return err;
		}
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

/*
 * Concat step @s of a plan's re->cat_store: the new positions into the
 * store's room, the output the store grown by them.
 */
static int concat_store(struct npr_request *rq, const struct ref_exec *re,
			struct ref_request *rr, int s)
{
	const struct npr_node *n = &re->g->nodes[re->steps[s]];
	int i = re->cat[s], ax, r, err;
	const struct npr_tensor *x = &rr->t[n->in[1]], *a = &rq->in[i];
	struct npr_tensor *y = &rr->t[n->out[0]];
	const struct npr_pitched *p = &rq->pitch[i];
	size_t o, ba, bx;

	ax = ((const struct npr_concat_params *)n->params)->ax;
	if (x->shape.rank != a->shape.rank || ax < 0 || ax >= x->shape.rank)
		return npr_node_err(n, -EINVAL, "new positions of rank %d for a cache of rank %d",
				    x->shape.rank, a->shape.rank);
	for (r = 0; r < x->shape.rank; r++)
		if (r != ax && x->shape.d[r] != a->shape.d[r])
			return npr_node_err(n, -EINVAL, "new positions: dimension %d is %lld, the cache's %lld",
					    r, (long long)x->shape.d[r],
					    (long long)a->shape.d[r]);
	err = npr_request_var_room(rq, i, x->shape.d[ax]);
	if (err)
		return npr_node_err(n, err, "no room for %lld more positions in the cache",
				    (long long)x->shape.d[ax]);
	/* @a and @p describe the store as it is now (it may have moved) */
	ba = p->outer ? a->nbytes / p->outer : 0;
	bx = p->outer ? x->nbytes / p->outer : 0;
	for (o = 0; o < p->outer && bx; o++)
		memcpy((char *)a->data + o * p->pitch + ba,
		       (const char *)x->data + o * bx, bx);
	y->type = x->type;
	y->shape = a->shape;
	y->shape.d[ax] += x->shape.d[ax];
	y->data = a->data;
	y->nbytes = a->nbytes + x->nbytes;
	return 0;
}

/**
 * npr_cpu_state_attention() - run a FusedAttention step over the store
 * @rq: the request.
 * @re: the plan.
 * @rr: the request's memory.
 * @s: the step (re->attn[2 * @s] or [2 * @s + 1] >= 0).
 *
 * Its key, its value or both are a Concat's output that is a growing
 * variable's store (concat_store()): blocks its pitch apart.  A dynamic
 * step gets its output sized first.
 *
 * Return: 0, npr_cpu_dyn_run()'s or the kernel's error.
 */
int npr_cpu_state_attention(struct npr_request *rq, const struct ref_exec *re,
			    struct ref_request *rr, int s)
{
	const struct npr_node *n = &re->g->nodes[re->steps[s]];
	uint64_t t0 = rq->prof ? npr_now_ns() : 0;
	int k = re->attn[2 * s], v = re->attn[2 * s + 1], j, err;
	int64_t kblk, vblk;

	if (re->dyn[s]) {
		err = npr_cpu_dyn_run(rq, rr, re->g, re->steps[s], sized,
				      re->poly != NULL);
		if (err)
			return err;
	}
	kblk = k >= 0 ? (int64_t)(rq->pitch[k].pitch / sizeof(float)) : 0;
	vblk = v >= 0 ? (int64_t)(rq->pitch[v].pitch / sizeof(float)) : 0;
	for (j = 0; j < n->nin; j++)
		rr->in_buf[j] = rr->t[n->in[j]];
	rr->out_buf[0] = rr->t[n->out[0]];
	err = npr_ref_fused_attention_pitched(n, rr->in_buf, rr->out_buf,
					      kblk, vblk);
	npr_cpu_prof_add(rq, re->steps[s], rq->prof ? npr_now_ns() - t0 : 0,
			 "kv_store", true);
	return err;
}

/**
 * npr_cpu_state_concat() - run Concat(variable, new) reading the blocks
 * @rq: the request.
 * @re: the plan.
 * @rr: the request's memory.
 * @s: the step (re->cat[@s] >= 0).
 *
 * A dynamic step (its length varies) gets its output sized first.  A
 * step of re->cat_store writes into the store instead (concat_store()).
 *
 * Return: 0, npr_cpu_dyn_run()'s error, or the store's.
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

	if (re->cat_store && re->cat_store[s]) {
		err = concat_store(rq, re, rr, s);
		npr_cpu_prof_add(rq, re->steps[s],
				 rq->prof ? npr_now_ns() - t0 : 0, "kv_store",
				 true);
		return err;
	}
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
