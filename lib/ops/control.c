// SPDX-License-Identifier: MIT
/*
 * Control flow: port maps and shape inference.  Kernels: ref/kernels/control.c.
 *
 * TensorIterator-0/1 runs its body once per part of its sliced inputs;
 * Loop-5 runs it while the trip count (input 0, -1: unbounded) and the
 * execution condition (input 1, then the body's condition output) allow;
 * If-8 runs one of two bodies on condition input 0.  Port map rules tie
 * node inputs to body Parameters (whole, or sliced along an axis) and
 * body Results to node outputs (the last iteration's value, or every
 * iteration's concatenated along an axis); back edges carry a Result into
 * a Parameter for the next iteration.
 *
 * Shapes are static here, so infer compiles each body for the shapes its
 * Parameters get, checks that back edges keep them, and needs the number
 * of iterations whenever an output concatenates them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "infer.h"

static int64_t body_layer_id(const struct npr_body *b, int k, bool result)
{
	int idx = result ? b->g->outputs[k] : b->g->inputs[k];

	return b->g->nodes[idx].layer_id;
}

/* Check the port map and back edges of body @bi against the node. */
static int check_body(struct npr_node *n, int bi, bool slices)
{
	struct npr_body *b = &n->bodies[bi];
	const char *what = n->nbodies > 1 ? (bi ? "else_body" : "then_body") :
			   "body";
	int nin = b->g->ninputs, k, err = 0;
	char *seen_in = calloc(nin + 1, 1);
	char *seen_out = calloc(n->nout + 1, 1);
	char *seen_to = calloc(nin + 1, 1);

	if (!seen_in || !seen_out || !seen_to) {
		err = -ENOMEM;
		goto out;
	}
	for (k = 0; k < b->nports; k++) {
		const struct npr_body_port *r = &b->ports[k];
		int lim = r->out ? b->g->noutputs : nin;

		if (r->ext >= (r->out ? n->nout : n->nin) || r->ext < -1 ||
		    r->internal < 0 || r->internal >= lim) {
			err = npr_node_err(n, -EINVAL,
					   "%s port map rule %d is out of range",
					   what, k);
			goto out;
		}
		if ((r->ext < 0 && r->purpose != NPR_BODY_CURRENT_ITERATION &&
		     r->purpose != NPR_BODY_EXECUTION_CONDITION) ||
		    (r->purpose == NPR_BODY_CURRENT_ITERATION && r->out) ||
		    (r->purpose == NPR_BODY_EXECUTION_CONDITION && !r->out) ||
		    (r->purpose && r->sliced)) {
			err = npr_node_err(n, -EINVAL,
					   "%s port map rule %d: no external port, or a purpose that does not fit",
					   what, k);
			goto out;
		}
		if (r->purpose && n->nbodies != 1) {
			err = npr_node_err(n, -EINVAL,
					   "%s port map rule %d has a purpose: only Loop has special ports",
					   what, k);
			goto out;
		}
		if (r->sliced && !slices) {
			err = npr_node_err(n, -EINVAL,
					   "%s port map rule %d has an axis: %s does not slice",
					   what, k, n->type);
			goto out;
		}
		if (r->sliced && (!r->stride || r->part_size < 1)) {
			err = npr_node_err(n, -EINVAL,
					   "%s port map rule %d: stride %lld, part_size %lld",
					   what, k, (long long)r->stride,
					   (long long)r->part_size);
			goto out;
		}
		if (!r->out && seen_in[r->internal]++) {
			int64_t id = body_layer_id(b, r->internal, false);

			err = npr_node_err(n, -EINVAL,
					   "%s Parameter layer %lld is mapped twice",
					   what, (long long)id);
			goto out;
		}
		if (r->out && r->ext >= 0 && seen_out[r->ext]++) {
			err = npr_node_err(n, -EINVAL,
					   "output %d is mapped twice in %s",
					   r->ext, what);
			goto out;
		}
	}
	for (k = 0; k < nin; k++) {
		if (seen_in[k])
			continue;
		err = npr_node_err(n, -EINVAL,
				   "%s Parameter layer %lld is fed by no input",
				   what, (long long)body_layer_id(b, k, false));
		goto out;
	}
	for (k = 0; k < n->nout; k++) {
		if (seen_out[k])
			continue;
		err = npr_node_err(n, -EINVAL,
				   "output %d comes from no Result of %s", k,
				   what);
		goto out;
	}
	for (k = 0; k < b->nback; k++) {
		const struct npr_back_edge *e = &b->back[k];

		if (e->from < 0 || e->from >= b->g->noutputs || e->to < 0 ||
		    e->to >= nin) {
			err = npr_node_err(n, -EINVAL,
					   "back edge %d is out of range", k);
			goto out;
		}
		if (seen_to[e->to]++) {
			err = npr_node_err(n, -EINVAL,
					   "two back edges feed body Parameter layer %lld",
					   (long long)body_layer_id(b, e->to,
								    false));
			goto out;
		}
	}
out:
	free(seen_to);
	free(seen_out);
	free(seen_in);
	return err;
}

static int loop_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_loop_params *p;
	bool loop = !strcmp(n->type, "Loop");
	int k, err;

	(void)g;
	if (n->nbodies != 1)
		return npr_node_err(n, -EINVAL, "has %d bodies, needs 1",
				    n->nbodies);
	free(n->params);
	n->params = p = calloc(1, sizeof(*p) +
			       sizeof(int) * (n->bodies[0].nports + 1));
	if (!p)
		return -ENOMEM;
	p->iters = -1;
	p->cond_out = p->iter_in = -1;
	err = check_body(n, 0, true);
	if (err)
		return err;
	for (k = 0; k < n->bodies[0].nports; k++) {
		const struct npr_body_port *r = &n->bodies[0].ports[k];

		if (r->purpose && !loop)
			return npr_node_err(n, -EINVAL,
					    "port map rule %d has a purpose: only Loop has special ports",
					    k);
		if (r->purpose == NPR_BODY_EXECUTION_CONDITION)
			p->cond_out = r->internal;
		if (r->purpose == NPR_BODY_CURRENT_ITERATION)
			p->iter_in = r->internal;
	}
	if (loop && n->nin < 2)
		return npr_node_err(n, -EINVAL,
				    "needs trip_count and execution_condition inputs");
	return 0;
}

static int if_parse(struct npr_graph *g, struct npr_node *n)
{
	int err;

	(void)g;
	if (n->nbodies != 2)
		return npr_node_err(n, -EINVAL,
				    "has %d bodies, needs then and else",
				    n->nbodies);
	err = check_body(n, 0, false);
	if (!err)
		err = check_body(n, 1, false);
	return err;
}

/* Infer body @b of node @n of @g, its message prefixed with the node and
 * @what; the body folds with @g's evaluator. */
static int compile_body(struct npr_graph *g, struct npr_node *n,
			struct npr_body *b, const char *what)
{
	char msg[1024];
	int err;

	b->g->fold = g->fold;
	err = npr_infer_body(b->g);
	if (!err || err == -ENOMEM)
		return err;
	snprintf(msg, sizeof(msg), "%s", npr_last_error());
	return npr_node_err(n, err, "%s: %s", what, msg);
}

/* Give the Parameter of input rule @r the type and shape of @ev. */
static int feed_param(struct npr_node *n, struct npr_body *b,
		      const struct npr_body_port *r, const struct npr_value *ev,
		      const char *what)
{
	struct npr_value *pv = npr_body_param(b, r->internal);

	if (pv->type && pv->type != ev->type)
		return npr_node_err(n, -EINVAL,
				    "%s Parameter layer %lld is %s but input %d is %s",
				    what,
				    (long long)body_layer_id(b, r->internal,
							     false),
				    npr_elem_name(pv->type), r->ext,
				    npr_elem_name(ev->type));
	pv->type = ev->type;
	pv->shape = ev->shape;
	return 0;
}

static int norm_axis(struct npr_node *n, int k, int64_t axis, int rank,
		     const char *dir, int port, int *out)
{
	int64_t a = axis < 0 ? axis + rank : axis;

	if (a < 0 || a >= rank)
		return npr_node_err(n, -EINVAL,
				    "port map rule %d: axis %lld is out of range for %s %d of rank %d",
				    k, (long long)axis, dir, port, rank);
	*out = (int)a;
	return 0;
}

/* A scalar or one-element value: its boolean / integer if constant. */
static int one_value(struct npr_node *n, const struct npr_value *v,
		     const char *what, bool *known, int64_t *val)
{
	if (npr_shape_numel(&v->shape) != 1 || v->shape.rank > 1)
		return npr_node_err(n, -EINVAL, "%s must hold one value",
				    what);
	*known = v->data != NULL;
	if (*known && npr_convert(val, NPR_ELEM_I64, v->data, v->type, 1))
		return npr_node_err(n, -EINVAL, "%s is not a number", what);
	return 0;
}

/*
 * Whether the body's condition output of a Loop can never turn false:
 * it is a constant true, or a Parameter that a back edge feeds from that
 * very output and whose initial value is a constant true.
 */
static bool cond_stays_true(struct npr_graph *g, struct npr_node *n,
			    int cond_out)
{
	struct npr_body *b = &n->bodies[0];
	struct npr_value *rv;
	const struct npr_node *src;
	int64_t v = 0;
	int k, e;

	if (cond_out < 0)
		return true;
	rv = npr_body_result(b, cond_out);
	if (rv->data)
		return !npr_convert(&v, NPR_ELEM_I64, rv->data, rv->type, 1) &&
		       v;
	src = &b->g->nodes[rv->producer];
	if (strcmp(src->type, "Parameter"))
		return false;
	for (k = 0; k < b->g->ninputs; k++)
		if (b->g->inputs[k] == rv->producer)
			break;
	for (e = 0; e < b->nback; e++)
		if (b->back[e].from == cond_out && b->back[e].to == k)
			break;
	if (k == b->g->ninputs || e == b->nback)
		return false;
	for (e = 0; e < b->nports; e++) {
		const struct npr_body_port *r = &b->ports[e];
		struct npr_value *ev;

		if (r->out || r->internal != k || r->ext < 0)
			continue;
		ev = npr_in(g, n, r->ext);
		return ev->data &&
		       !npr_convert(&v, NPR_ELEM_I64, ev->data, ev->type, 1) &&
		       v;
	}
	return false;
}

static int loop_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_loop_params *p = n->params;
	struct npr_body *b = &n->bodies[0];
	bool loop = !strcmp(n->type, "Loop"), exact = true;
	int64_t slices = -1, iters;
	char b1[128], b2[128];
	int k, err;

	for (k = 0; k < b->nports; k++) {
		const struct npr_body_port *r = &b->ports[k];
		struct npr_value *ev, *pv;
		int64_t dim, cnt, first, last;
		int axis = 0;

		if (r->out)
			continue;
		pv = npr_body_param(b, r->internal);
		if (r->purpose == NPR_BODY_CURRENT_ITERATION) {
			if (!pv->type)
				pv->type = NPR_ELEM_I64;
			if (pv->type != NPR_ELEM_I64 &&
			    pv->type != NPR_ELEM_I32)
				return npr_node_err(n, -EINVAL,
						    "the current_iteration Parameter must be i32 or i64");
			if (!npr_shape_static(&pv->shape) ||
			    npr_shape_numel(&pv->shape) != 1)
				pv->shape.rank = 0;
			continue;
		}
		ev = npr_in(g, n, r->ext);
		err = feed_param(n, b, r, ev, "body");
		if (err)
			return err;
		if (!r->sliced)
			continue;
		err = norm_axis(n, k, r->axis, ev->shape.rank, "input",
				r->ext, &axis);
		if (err)
			return err;
		p->axis[k] = axis;
		dim = ev->shape.d[axis];
		cnt = npr_slice_count(r, dim);
		first = npr_slice_begin(r, dim, 0);
		last = npr_slice_begin(r, dim, cnt ? cnt - 1 : 0);
		if (cnt < 1 || first < 0 || last < 0 ||
		    first + r->part_size > dim || last + r->part_size > dim)
			return npr_node_err(n, -EINVAL,
					    "port map rule %d: start %lld, end %lld, stride %lld, part_size %lld do not slice a dimension of %lld",
					    k, (long long)r->start,
					    (long long)r->end,
					    (long long)r->stride,
					    (long long)r->part_size,
					    (long long)dim);
		if (!loop && slices >= 0 && cnt != slices)
			return npr_node_err(n, -EINVAL,
					    "sliced inputs disagree on the number of iterations (%lld and %lld)",
					    (long long)slices, (long long)cnt);
		if (slices < 0 || cnt < slices)
			slices = cnt;
		pv->shape.d[axis] = r->part_size;
	}
	iters = slices;
	if (!loop && iters < 0)
		return npr_node_err(n, -EINVAL,
				    "no input is sliced: the number of iterations is unknown");
	if (loop) {
		bool known;
		int64_t v;

		err = one_value(n, npr_in(g, n, 0), "trip_count", &known, &v);
		if (err)
			return err;
		if (!known)
			exact = false;
		else if (v >= 0 && (iters < 0 || v < iters))
			iters = v;
		else if (v < 0 && iters < 0)
			exact = false;
		err = one_value(n, npr_in(g, n, 1), "execution_condition",
				&known, &v);
		if (err)
			return err;
		if (known && !v)
			iters = 0;
		else if (!known)
			exact = false;
	}
	p->iters = iters;
	err = compile_body(g, n, b, "body");
	if (err)
		return err;
	for (k = 0; k < b->nback; k++) {
		const struct npr_back_edge *e = &b->back[k];
		struct npr_value *rv = npr_body_result(b, e->from);
		struct npr_value *pv = npr_body_param(b, e->to);

		if (rv->type == pv->type && npr_shape_eq(&rv->shape, &pv->shape))
			continue;
		npr_shape_str(&pv->shape, b1, sizeof(b1));
		npr_shape_str(&rv->shape, b2, sizeof(b2));
		return npr_node_err(n, -EINVAL,
				    "back edge from body layer %lld to %lld turns %s%s into %s%s: a body must keep shapes (dynamic shapes are not supported)",
				    (long long)body_layer_id(b, e->from, true),
				    (long long)body_layer_id(b, e->to, false),
				    npr_elem_name(pv->type), b1,
				    npr_elem_name(rv->type), b2);
	}
	if (loop && p->cond_out >= 0) {
		struct npr_value *cv = npr_body_result(b, p->cond_out);

		if (npr_shape_numel(&cv->shape) != 1 ||
		    !npr_elem_size(cv->type))
			return npr_node_err(n, -EINVAL,
					    "the body's execution condition must hold one value");
		if (exact && !cond_stays_true(g, n, p->cond_out))
			exact = false;
	}
	for (k = 0; k < b->nports; k++) {
		const struct npr_body_port *r = &b->ports[k];
		struct npr_value *rv, *ov;
		int axis = 0;

		if (!r->out || r->ext < 0)
			continue;
		rv = npr_body_result(b, r->internal);
		ov = npr_out(g, n, r->ext);
		ov->type = rv->type;
		ov->shape = rv->shape;
		if (!r->sliced)
			continue;
		err = norm_axis(n, k, r->axis, rv->shape.rank, "output",
				r->ext, &axis);
		if (err)
			return err;
		p->axis[k] = axis;
		if (!exact || iters < 0)
			return npr_node_err(n, -EOPNOTSUPP,
					    "output %d concatenates the iterations, but their number depends on data (dynamic shapes are not supported)",
					    r->ext);
		if (rv->shape.d[axis] && iters > INT64_MAX / rv->shape.d[axis])
			return npr_node_err(n, -EOVERFLOW,
					    "output %d is too large", r->ext);
		ov->shape.d[axis] = rv->shape.d[axis] * iters;
	}
	return 0;
}

static int if_infer(struct npr_graph *g, struct npr_node *n)
{
	const struct npr_value *cv = npr_in(g, n, 0);
	char b1[128], b2[128];
	bool known;
	int64_t cond = 0;
	int bi, k, o, err;

	err = one_value(n, cv, "cond", &known, &cond);
	if (err)
		return err;
	for (bi = 0; bi < 2; bi++) {
		struct npr_body *b = &n->bodies[bi];
		const char *what = bi ? "else_body" : "then_body";

		for (k = 0; k < b->nports; k++) {
			const struct npr_body_port *r = &b->ports[k];

			if (r->out)
				continue;
			err = feed_param(n, b, r, npr_in(g, n, r->ext), what);
			if (err)
				return err;
		}
		err = compile_body(g, n, b, what);
		if (err)
			return err;
	}
	for (o = 0; o < n->nout; o++) {
		struct npr_value *rv[2] = { NULL, NULL };
		struct npr_value *ov = npr_out(g, n, o);

		for (bi = 0; bi < 2; bi++) {
			struct npr_body *b = &n->bodies[bi];

			for (k = 0; k < b->nports; k++) {
				const struct npr_body_port *r = &b->ports[k];

				if (r->out && r->ext == o)
					rv[bi] = npr_body_result(b, r->internal);
			}
		}
		bi = known && !cond ? 1 : 0;
		if (!known && (rv[0]->type != rv[1]->type ||
			       !npr_shape_eq(&rv[0]->shape, &rv[1]->shape))) {
			npr_shape_str(&rv[0]->shape, b1, sizeof(b1));
			npr_shape_str(&rv[1]->shape, b2, sizeof(b2));
			return npr_node_err(n, -EOPNOTSUPP,
					    "output %d is %s%s in then_body but %s%s in else_body (dynamic shapes are not supported)",
					    o, npr_elem_name(rv[0]->type), b1,
					    npr_elem_name(rv[1]->type), b2);
		}
		ov->type = rv[bi]->type;
		ov->shape = rv[bi]->shape;
	}
	return 0;
}

const struct npr_op_def npr_ops_control[] = {
	{ .type = "TensorIterator", .vmin = 0, .vmax = 99, .nin_min = 0,
	  .nin_max = 1024, .parse = loop_parse, .infer = loop_infer,
	  .flags = NPR_OP_BODIES },
	{ .type = "Loop", .vmin = 5, .vmax = 99, .nin_min = 2,
	  .nin_max = 1024, .parse = loop_parse, .infer = loop_infer,
	  .flags = NPR_OP_BODIES },
	{ .type = "If", .vmin = 8, .vmax = 99, .nin_min = 1,
	  .nin_max = 1024, .parse = if_parse, .infer = if_infer,
	  .flags = NPR_OP_BODIES },
	{ .type = NULL },
};
