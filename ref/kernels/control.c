// SPDX-License-Identifier: MIT
/*
 * Reference evaluator of the control-flow ops: TensorIterator, Loop, If.
 *
 * A body is run with the same scalar kernels as the model: struct
 * body_run lays every computed value of the compiled body out in one
 * block, feeds the Parameters, runs the live nodes in order and leaves
 * the Results in place.  Loops copy sliced inputs in and concatenated
 * outputs out per iteration, and carry back edges through a staging copy
 * (a Result may feed a Parameter that another back edge overwrites).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "registry.h"

struct body_run {
	struct npr_graph *g;
	struct npr_tensor *t;		/* per value */
	npr_eval_fn *eval;		/* per node, looked up once */
	void *mem;
	struct npr_tensor *inb, *outb;
};

static void body_run_fini(struct body_run *r)
{
	free(r->t);
	free(r->eval);
	free(r->mem);
	free(r->inb);
	free(r->outb);
}

static int body_run_init(struct body_run *r, struct npr_graph *g)
{
	size_t total = 0, *off = NULL;
	int max_in = 1, max_out = 1, i, j;

	memset(r, 0, sizeof(*r));
	r->g = g;
	r->t = calloc(g->nvals ? g->nvals : 1, sizeof(*r->t));
	r->eval = calloc(g->nnodes ? g->nnodes : 1, sizeof(*r->eval));
	off = malloc(sizeof(*off) * (g->nvals ? g->nvals : 1));
	if (!r->t || !r->eval || !off)
		goto nomem;
	for (i = 0; i < g->nvals; i++)
		off[i] = SIZE_MAX;
	/* every computed value gets a buffer, dead nodes' too: a body
	 * Parameter nothing reads is still fed, a Result still read */
	for (i = 0; i < g->nnodes; i++) {
		const struct npr_node *n = &g->nodes[i];

		if (n->op->flags & NPR_OP_SINK)
			continue;
		if (!n->dead && !(n->op->flags & NPR_OP_SOURCE)) {
			r->eval[i] = npr_kernel_find(n->op);
			if (!r->eval[i]) {
				free(off);
				body_run_fini(r);
				return npr_node_err(n, -EOPNOTSUPP,
						    "the cpu device has no kernel for this op");
			}
		}
		if (n->nin > max_in)
			max_in = n->nin;
		if (n->nout > max_out)
			max_out = n->nout;
		for (j = 0; j < n->nout; j++) {
			const struct npr_value *v = &g->vals[n->out[j]];

			if (v->data)
				continue;
			off[n->out[j]] = total;
			total += (npr_tensor_bytes(v->type,
						   npr_shape_numel(&v->shape)) +
				  63) & ~(size_t)63;
		}
	}
	r->mem = calloc(1, total ? total : 1);
	r->inb = calloc(max_in, sizeof(*r->inb));
	r->outb = calloc(max_out, sizeof(*r->outb));
	if (!r->mem || !r->inb || !r->outb)
		goto nomem;
	for (i = 0; i < g->nvals; i++) {
		const struct npr_value *v = &g->vals[i];
		struct npr_tensor *t = &r->t[i];

		t->type = v->type;
		t->shape = v->shape;
		t->nbytes = npr_tensor_bytes(v->type,
					     npr_shape_numel(&v->shape));
		if (v->data)
			t->data = (void *)v->data;
		else if (off[i] != SIZE_MAX)
			t->data = (char *)r->mem + off[i];
	}
	free(off);
	return 0;
nomem:
	free(off);
	body_run_fini(r);
	return -ENOMEM;
}

static int body_run_step(struct body_run *r)
{
	struct npr_graph *g = r->g;
	int i, j, err;

	for (i = 0; i < g->nnodes; i++) {
		const struct npr_node *n = &g->nodes[i];

		if (n->dead || (n->op->flags & (NPR_OP_SOURCE | NPR_OP_SINK)))
			continue;
		for (j = 0; j < n->nin; j++)
			r->inb[j] = r->t[n->in[j]];
		for (j = 0; j < n->nout; j++)
			r->outb[j] = r->t[n->out[j]];
		err = r->eval[i](n, r->inb, r->outb);
		if (err)
			return err;
	}
	return 0;
}

static struct npr_tensor *run_param(struct body_run *r, int k)
{
	return &r->t[r->g->nodes[r->g->inputs[k]].out[0]];
}

static struct npr_tensor *run_result(struct body_run *r, int k)
{
	return &r->t[r->g->nodes[r->g->outputs[k]].in[0]];
}

/*
 * Copy between @part (the whole of a tensor) and elements [begin, begin +
 * psize) along @axis of @big; @to_part selects the direction.
 */
static void slice_copy(const struct npr_tensor *big, int axis, int64_t begin,
		       int64_t psize, void *part, bool to_part)
{
	size_t esz = npr_elem_size(big->type), inner = esz, chunk;
	int64_t outer = 1, dim = big->shape.d[axis], o;
	int i;

	for (i = 0; i < axis; i++)
		outer *= big->shape.d[i];
	for (i = axis + 1; i < big->shape.rank; i++)
		inner *= (size_t)big->shape.d[i];
	chunk = (size_t)psize * inner;
	for (o = 0; o < outer; o++) {
		char *b = (char *)big->data +
			  (size_t)(o * dim + begin) * inner;
		char *p = (char *)part + (size_t)o * chunk;

		if (to_part)
			memcpy(p, b, chunk);
		else
			memcpy(b, p, chunk);
	}
}

static bool truth(const struct npr_tensor *t)
{
	uint8_t v = 0;

	if (npr_convert(&v, NPR_ELEM_BOOLEAN, t->data, t->type, 1))
		return false;
	return v;
}

/* Carry every back edge: Results into Parameters, through @stage. */
static void carry(const struct npr_body *b, struct body_run *r, void **stage)
{
	int e;

	for (e = 0; e < b->nback; e++) {
		struct npr_tensor *rt = run_result(r, b->back[e].from);

		memcpy(stage[e], rt->data, rt->nbytes);
	}
	for (e = 0; e < b->nback; e++) {
		struct npr_tensor *pt = run_param(r, b->back[e].to);

		memcpy(pt->data, stage[e], pt->nbytes);
	}
}

/* A loop's output when the body never ran: the initial value that a back
 * edge would have carried, else zeros. */
static void no_iteration(const struct npr_body *b, const struct npr_tensor *in,
			 const struct npr_body_port *r, struct npr_tensor *o)
{
	int e, k;

	memset(o->data, 0, o->nbytes);
	for (e = 0; e < b->nback; e++) {
		if (b->back[e].from != r->internal)
			continue;
		for (k = 0; k < b->nports; k++) {
			const struct npr_body_port *q = &b->ports[k];

			if (!q->out && q->internal == b->back[e].to &&
			    q->ext >= 0 && in[q->ext].nbytes == o->nbytes)
				memcpy(o->data, in[q->ext].data, o->nbytes);
		}
	}
}

static int run_loop(const struct npr_node *n, const struct npr_tensor *in,
		    struct npr_tensor *out, bool loop)
{
	const struct npr_loop_params *p = n->params;
	const struct npr_body *b = &n->bodies[0];
	int64_t limit = -1, it = 0, total;
	void **stage = NULL;
	struct body_run r;
	bool go = true;
	int k, err;

	err = body_run_init(&r, b->g);
	if (err)
		return err;
	stage = calloc(b->nback + 1, sizeof(*stage));
	if (!stage)
		goto nomem;
	for (k = 0; k < b->nback; k++) {
		stage[k] = malloc(run_param(&r, b->back[k].to)->nbytes + 1);
		if (!stage[k])
			goto nomem;
	}
	if (loop) {
		int64_t trip = -1;

		npr_convert(&trip, NPR_ELEM_I64, in[0].data, in[0].type, 1);
		if (trip >= 0)
			limit = trip;
		go = truth(&in[1]);
	}
	for (k = 0; k < b->nports; k++) {
		const struct npr_body_port *q = &b->ports[k];
		struct npr_tensor *pt;
		int64_t cnt;

		if (q->out || q->purpose)
			continue;
		pt = run_param(&r, q->internal);
		if (!q->sliced) {
			memcpy(pt->data, in[q->ext].data, pt->nbytes);
			continue;
		}
		cnt = npr_slice_count(q, in[q->ext].shape.d[p->axis[k]]);
		if (limit < 0 || cnt < limit)
			limit = cnt;
	}
	/* concatenated outputs were sized for exactly this many */
	total = limit;
	for (it = 0; go && (limit < 0 || it < limit); it++) {
		if (it)
			carry(b, &r, stage);
		for (k = 0; k < b->nports; k++) {
			const struct npr_body_port *q = &b->ports[k];
			struct npr_tensor *pt;

			if (q->out)
				continue;
			pt = run_param(&r, q->internal);
			if (q->purpose == NPR_BODY_CURRENT_ITERATION)
				npr_convert(pt->data, pt->type, &it,
					    NPR_ELEM_I64, 1);
			else if (q->sliced)
				slice_copy(&in[q->ext], p->axis[k],
					   npr_slice_begin(q,
						in[q->ext].shape.d[p->axis[k]],
						it),
					   q->part_size, pt->data, true);
		}
		err = body_run_step(&r);
		if (err)
			goto out;
		for (k = 0; k < b->nports; k++) {
			const struct npr_body_port *q = &b->ports[k];
			struct npr_tensor *rt;
			int64_t psz, pos;

			if (!q->out || q->ext < 0 || !q->sliced)
				continue;
			rt = run_result(&r, q->internal);
			psz = rt->shape.d[p->axis[k]];
			pos = q->stride > 0 ? it * psz : (total - 1 - it) * psz;
			if ((pos + psz) > out[q->ext].shape.d[p->axis[k]]) {
				err = npr_node_err(n, -EINVAL,
						   "iteration %lld overflows output %d",
						   (long long)it, q->ext);
				goto out;
			}
			slice_copy(&out[q->ext], p->axis[k], pos, psz,
				   rt->data, false);
		}
		if (loop && p->cond_out >= 0)
			go = truth(run_result(&r, p->cond_out));
	}
	for (k = 0; k < b->nports; k++) {
		const struct npr_body_port *q = &b->ports[k];

		if (!q->out || q->ext < 0 || q->sliced)
			continue;
		if (it)
			memcpy(out[q->ext].data,
			       run_result(&r, q->internal)->data,
			       out[q->ext].nbytes);
		else
			no_iteration(b, in, q, &out[q->ext]);
	}
	err = 0;
	goto out;
nomem:
	err = -ENOMEM;
out:
	for (k = 0; stage && k < b->nback; k++)
		free(stage[k]);
	free(stage);
	body_run_fini(&r);
	return err;
}

/**
 * npr_ref_tensor_iterator() - TensorIterator-1
 * @n: the node; n->params is a struct npr_loop_params, bodies[0] the body.
 * @in: the node's inputs, fed to the body by its port map.
 * @out: the node's outputs.
 *
 * Runs the body once per slice of the sliced inputs (the fewest slices of
 * any of them): slices are copied in, back edges carried from one
 * iteration to the next, sliced outputs concatenated, the others taken
 * from the last iteration.
 *
 * Return: 0; -ENOMEM; -EINVAL if an iteration overflows a concatenated
 * output; or the error of a body's kernel.
 */
int npr_ref_tensor_iterator(const struct npr_node *n,
			    const struct npr_tensor *in,
			    struct npr_tensor *out)
{
	return run_loop(n, in, out, false);
}

/**
 * npr_ref_loop() - Loop-5
 * @n: the node; n->params is a struct npr_loop_params, bodies[0] the body.
 * @in: the trip count (negative: none), the initial execution condition,
 *      then the inputs fed to the body by its port map.
 * @out: the node's outputs.
 *
 * As npr_ref_tensor_iterator(), bounded by the trip count and the sliced
 * inputs, and stopping once the body's condition output is false.  With
 * no iteration, an output that is not concatenated takes the input its
 * back edge would have carried, else zeros.
 *
 * Return: 0; -ENOMEM; -EINVAL if an iteration overflows a concatenated
 * output; or the error of a body's kernel.
 */
int npr_ref_loop(const struct npr_node *n, const struct npr_tensor *in,
		 struct npr_tensor *out)
{
	return run_loop(n, in, out, true);
}

/**
 * npr_ref_if() - If-8
 * @n: the node; bodies[0] is the then branch, bodies[1] the else branch.
 * @in: the condition, then the inputs fed to the branch by its port map.
 * @out: the node's outputs, copied from the branch's Results.
 *
 * Return: 0, -ENOMEM, or the error of a branch's kernel.
 */
int npr_ref_if(const struct npr_node *n, const struct npr_tensor *in,
	       struct npr_tensor *out)
{
	const struct npr_body *b = &n->bodies[truth(&in[0]) ? 0 : 1];
	struct body_run r;
	int k, err;

	err = body_run_init(&r, b->g);
	if (err)
		return err;
	for (k = 0; k < b->nports; k++) {
		const struct npr_body_port *q = &b->ports[k];

		if (!q->out)
			memcpy(run_param(&r, q->internal)->data,
			       in[q->ext].data, in[q->ext].nbytes);
	}
	err = body_run_step(&r);
	for (k = 0; !err && k < b->nports; k++) {
		const struct npr_body_port *q = &b->ports[k];

		if (q->out && q->ext >= 0)
			memcpy(out[q->ext].data,
			       run_result(&r, q->internal)->data,
			       out[q->ext].nbytes);
	}
	body_run_fini(&r);
	return err;
}

/* The op definitions of lib/ops/control.c these kernels evaluate. */
const struct npr_kernel npr_kernels_control[] = {
	{ "TensorIterator", 0, 99, npr_ref_tensor_iterator },
	{ "Loop", 5, 99, npr_ref_loop },
	{ "If", 8, 99, npr_ref_if },
	{ NULL },
};
