// SPDX-License-Identifier: MIT
/*
 * ONNX translators: control flow.  If becomes If-8, Loop becomes Loop-5,
 * Scan (opset 9 on) becomes TensorIterator; their GRAPH attributes are
 * read into bodies by npr_onnx_body_read() (lib/onnx/build.c).
 *
 * ONNX bodies may name values of the graphs around them; OpenVINO bodies
 * only see their Parameters.  Every outer value a body names (other than
 * a constant, which is copied in) becomes an extra body Parameter, fed by
 * an extra node input after the ONNX inputs.
 *
 * Loop: the ONNX body takes (iteration number, condition, carried
 * values...) and gives (condition, carried values..., scan outputs...).
 * The iteration number is Loop-5's current_iteration port; the condition
 * Parameter is fed by the node's execution_condition input and then by a
 * back edge from the body's condition output (which is also Loop-5's
 * execution condition); each carried value has a back edge; each scan
 * output gets a leading axis of 1 in the body and is concatenated along
 * it.  A missing trip count is -1 (unbounded), a missing condition true.
 *
 * Scan: carried values as for Loop; each scan input is sliced (one
 * element per iteration along its axis, squeezed in the body) and each
 * scan output stacked along its axis, walking backwards where a direction
 * says so.  Scan-8, batched, runs that per batch row inside a
 * TensorIterator over the batch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "translate.h"

#define MAX_BODY_PORTS	1024

/*
 * Make node @node own body @b: the Parameters of b->caps are fed by node
 * inputs @first_cap onwards.  On return b->g belongs to the node.
 */
static int attach(struct onnx_ctx *c, int node, struct onnx_body *b,
		  int first_cap, struct npr_body **out)
{
	struct npr_graph *g = b->g;
	struct npr_body *body;
	int bi, k, err;

	b->g = NULL;
	bi = npr_node_add_body(&c->g->nodes[node], g);
	if (bi < 0)
		return bi;
	body = &c->g->nodes[node].bodies[bi];
	for (k = 0; k < b->ncaps; k++) {
		struct npr_body_port r = {
			.ext = first_cap + k,
			.internal = g->ninputs - b->ncaps + k,
		};

		err = npr_body_add_port(body, &r);
		if (err)
			return err;
	}
	*out = body;
	return 0;
}

/* The captured outer values of @b, as node inputs from @dst on. */
static void copy_caps(int *dst, const struct onnx_body *b)
{
	int k;

	for (k = 0; k < b->ncaps; k++)
		dst[k] = b->caps[k];
}

/* The value a body's Result @k gives. */
static const struct npr_value *body_out(const struct onnx_body *b, int k)
{
	const struct npr_graph *g = b->g;

	return &g->vals[g->nodes[g->outputs[k]].in[0]];
}

/* The body read must have one Parameter per GraphProto input. */
static int check_params(struct onnx_ctx *c, const struct onnx_body *b,
			const char *attr)
{
	if (b->g->ninputs - b->ncaps != b->nin)
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "%s: inputs that are also initializers are not supported",
				    attr);
	return 0;
}

static int add_output_rule(struct npr_body *body, int internal, int ext)
{
	struct npr_body_port r = { .out = true, .ext = ext,
				   .internal = internal };

	return npr_body_add_port(body, &r);
}

/* ---- If ----------------------------------------------------------------- */

static int tr_if(struct onnx_ctx *c, int *out)
{
	static const char *const attrs[2] = { "then_branch", "else_branch" };
	struct onnx_body b[2] = { { 0 } };
	int nout = (int)c->np->n_output, *in = NULL, nin, node, bi, k;
	struct npr_body *body;
	int err;

	for (bi = 0; bi < 2; bi++) {
		err = npr_onnx_body_read(c, attrs[bi], NULL, 0, NULL, 0,
					 &b[bi]);
		if (err)
			goto out;
		if (b[bi].nout != nout) {
			err = npr_onnx_err(c, -EINVAL,
					   "%s has %d outputs, the node %d",
					   attrs[bi], b[bi].nout, nout);
			goto out;
		}
	}
	nin = 1 + b[0].ncaps + b[1].ncaps;
	in = malloc(sizeof(int) * nin);
	if (!in) {
		err = -ENOMEM;
		goto out;
	}
	in[0] = onnx_need(c, 0);
	if (in[0] < 0) {
		err = in[0];
		goto out;
	}
	copy_caps(in + 1, &b[0]);
	copy_caps(in + 1 + b[0].ncaps, &b[1]);
	node = npr_onnx_node(c, "If", 8, NULL, nin, in, nout, out);
	if (node < 0) {
		err = node;
		goto out;
	}
	for (k = 0; k < nout; k++) {
		const struct npr_value *t = body_out(&b[0], k);
		const struct npr_value *e = body_out(&b[1], k);
		struct npr_value *v = onnx_val(c, out[k]);

		v->type = t->type ? t->type : e->type;
		v->shape.rank = -1;
		if (npr_shape_eq(&t->shape, &e->shape))
			v->shape = t->shape;
	}
	for (bi = 0; bi < 2; bi++) {
		err = attach(c, node, &b[bi], bi ? 1 + b[0].ncaps : 1, &body);
		for (k = 0; !err && k < nout; k++)
			err = add_output_rule(body, k, k);
		if (err)
			goto out;
	}
out:
	free(in);
	npr_onnx_body_fini(&b[0]);
	npr_onnx_body_fini(&b[1]);
	return err;
}

/* ---- Loop --------------------------------------------------------------- */

static int tr_loop(struct onnx_ctx *c, int *out)
{
	int nv = c->nin - 2, nout = (int)c->np->n_output, nbo = nout + 1;
	int *in = NULL, nin, node, k, err;
	struct onnx_body b = { 0 };
	struct npr_body *body;
	int64_t *axes = NULL;

	if (nv < 0 || nv > MAX_BODY_PORTS || nout < nv)
		return npr_onnx_err(c, -EINVAL,
				    "has %d inputs and %d outputs: needs 2 + N inputs and at least N outputs",
				    c->nin, nout);
	axes = malloc(sizeof(int64_t) * nbo);
	if (!axes)
		return -ENOMEM;
	for (k = 0; k < nbo; k++)
		axes[k] = k > nv ? 0 : -1;	/* scan outputs: stacked */
	err = npr_onnx_body_read(c, "body", NULL, 0, axes, nbo, &b);
	if (!err)
		err = check_params(c, &b, "body");
	if (!err && b.nin != nv + 2)
		err = npr_onnx_err(c, -EINVAL,
				   "body has %d inputs, %d expected",
				   b.nin, nv + 2);
	if (err)
		goto out;
	nin = 2 + nv + b.ncaps;
	in = malloc(sizeof(int) * nin);
	if (!in) {
		err = -ENOMEM;
		goto out;
	}
	in[0] = onnx_in(c, 0);
	if (in[0] < 0) {
		int64_t inf = -1;
		struct npr_shape s = { .rank = 0 };

		in[0] = npr_onnx_const(c, NPR_ELEM_I64, &s, &inf, "trip_count");
	}
	in[1] = onnx_in(c, 1);
	if (in[1] < 0) {
		uint8_t t = 1;
		struct npr_shape s = { .rank = 0 };

		in[1] = npr_onnx_const(c, NPR_ELEM_BOOLEAN, &s, &t, "cond");
	}
	if (in[0] < 0 || in[1] < 0) {
		err = in[0] < 0 ? in[0] : in[1];
		goto out;
	}
	for (k = 0; k < nv; k++) {
		in[2 + k] = c->vin[2 + k];
		if (in[2 + k] < 0) {
			err = npr_onnx_err(c, -EINVAL, "input %d is required",
					   2 + k);
			goto out;
		}
	}
	copy_caps(in + 2 + nv, &b);
	node = npr_onnx_node(c, "Loop", 5, NULL, nin, in, nout, out);
	if (node < 0) {
		err = node;
		goto out;
	}
	for (k = 0; k < nout; k++) {
		const struct npr_value *r = body_out(&b, k + 1);
		struct npr_value *v = onnx_val(c, out[k]);

		v->type = r->type;
		v->shape.rank = -1;
		if (k < nv)
			v->shape = r->shape;
	}
	err = attach(c, node, &b, 2 + nv, &body);
	if (err)
		goto out;
	{
		struct npr_body_port it = {
			.ext = -1, .internal = 0,
			.purpose = NPR_BODY_CURRENT_ITERATION,
		};
		struct npr_body_port cond = { .ext = 1, .internal = 1 };
		struct npr_body_port cond_out = {
			.out = true, .ext = -1, .internal = 0,
			.purpose = NPR_BODY_EXECUTION_CONDITION,
		};

		err = npr_body_add_port(body, &it);
		if (!err)
			err = npr_body_add_port(body, &cond);
		if (!err)
			err = npr_body_add_port(body, &cond_out);
		if (!err)
			err = npr_body_add_back_edge(body, 0, 1);
	}
	for (k = 0; !err && k < nv; k++) {
		struct npr_body_port r = { .ext = 2 + k, .internal = 2 + k };

		err = npr_body_add_port(body, &r);
		if (!err)
			err = add_output_rule(body, 1 + k, k);
		if (!err)
			err = npr_body_add_back_edge(body, 1 + k, 2 + k);
	}
	for (k = nv; !err && k < nout; k++) {
		struct npr_body_port r = {
			.out = true, .ext = k, .internal = 1 + k,
			.sliced = true, .axis = 0, .start = 0, .end = -1,
			.stride = 1, .part_size = 1,
		};

		err = npr_body_add_port(body, &r);
	}
out:
	free(in);
	free(axes);
	npr_onnx_body_fini(&b);
	return err;
}

/* ---- Scan --------------------------------------------------------------- */

/* An INTS attribute of @n entries, or @def for each when absent. */
static int ints_or(struct onnx_ctx *c, const char *name, int64_t *v, int n,
		   int64_t def)
{
	int cnt, k, err;

	err = npr_onnx_attr_ints(c, name, v, n, &cnt);
	if (err)
		return err;
	if (cnt >= 0 && cnt != n)
		return npr_onnx_err(c, -EINVAL,
				    "attribute %s has %d values, %d expected",
				    name, cnt, n);
	if (cnt < 0)
		for (k = 0; k < n; k++)
			v[k] = def;
	return 0;
}

/*
 * Scan over c->vin (states, then scan inputs).  @v8: the per-example body
 * of a Scan-8 (see tr_scan8()): scan inputs and outputs along axis 0,
 * input directions from "directions".
 */
static int scan_core(struct onnx_ctx *c, bool v8, int *out)
{
	int nout = (int)c->np->n_output, *in = NULL, nin, ns, nm, node, k;
	int64_t m, *in_axis = NULL, *out_axis = NULL, *in_dir, *out_dir;
	struct onnx_body b = { 0 };
	struct npr_body *body;
	int err;

	err = npr_onnx_attr_int(c, "num_scan_inputs", -1, &m);
	if (err)
		return err;
	if (m < 1 || m > c->nin || c->nin > MAX_BODY_PORTS)
		return npr_onnx_err(c, -EINVAL,
				    "num_scan_inputs %lld does not fit %d inputs",
				    (long long)m, c->nin);
	nm = (int)m;
	ns = c->nin - nm;
	if (nout < ns)
		return npr_onnx_err(c, -EINVAL,
				    "has %d outputs, fewer than the %d states",
				    nout, ns);
	in_axis = calloc(2 * (c->nin + nout), sizeof(int64_t));
	if (!in_axis)
		return -ENOMEM;
	out_axis = in_axis + c->nin;
	in_dir = out_axis + nout;
	out_dir = in_dir + c->nin;
	for (k = 0; k < ns; k++)
		in_axis[k] = -1;
	for (k = 0; k < ns; k++)
		out_axis[k] = -1;
	if (v8) {
		err = ints_or(c, "directions", in_dir + ns, nm, 0);
	} else {
		err = ints_or(c, "scan_input_axes", in_axis + ns, nm, 0);
		if (!err)
			err = ints_or(c, "scan_input_directions", in_dir + ns,
				      nm, 0);
		if (!err)
			err = ints_or(c, "scan_output_axes", out_axis + ns,
				      nout - ns, 0);
		if (!err)
			err = ints_or(c, "scan_output_directions",
				      out_dir + ns, nout - ns, 0);
	}
	if (err)
		goto out;
	for (k = ns; k < c->nin; k++) {
		if (in_axis[k] < 0 || in_axis[k] >= NPR_MAX_RANK) {
			err = npr_onnx_err(c, -EOPNOTSUPP,
					   "scan input axis %lld is not supported (0..%d are)",
					   (long long)in_axis[k], NPR_MAX_RANK - 1);
			goto out;
		}
		if (onnx_in(c, k) < 0) {
			err = npr_onnx_err(c, -EINVAL, "input %d is required",
					   k);
			goto out;
		}
	}
	for (k = ns; k < nout; k++)
		if (out_axis[k] < 0 || out_axis[k] >= NPR_MAX_RANK) {
			err = npr_onnx_err(c, -EOPNOTSUPP,
					   "scan output axis %lld is not supported (0..%d are)",
					   (long long)out_axis[k],
					   NPR_MAX_RANK - 1);
			goto out;
		}
	err = npr_onnx_body_read(c, "body", in_axis, c->nin, out_axis, nout,
				 &b);
	if (!err)
		err = check_params(c, &b, "body");
	if (err)
		goto out;
	nin = c->nin + b.ncaps;
	in = malloc(sizeof(int) * nin);
	if (!in) {
		err = -ENOMEM;
		goto out;
	}
	for (k = 0; k < c->nin; k++) {
		in[k] = onnx_in(c, k);
		if (in[k] < 0) {
			err = npr_onnx_err(c, -EINVAL, "input %d is required",
					   k);
			goto out;
		}
	}
	copy_caps(in + c->nin, &b);
	node = npr_onnx_node(c, "TensorIterator", 0, NULL, nin, in, nout, out);
	if (node < 0) {
		err = node;
		goto out;
	}
	for (k = 0; k < nout; k++) {
		const struct npr_value *r = body_out(&b, k);
		struct npr_value *v = onnx_val(c, out[k]);

		v->type = r->type;
		v->shape.rank = -1;
		if (k < ns)
			v->shape = r->shape;
	}
	err = attach(c, node, &b, c->nin, &body);
	for (k = 0; !err && k < c->nin; k++) {
		bool rev = in_dir[k] != 0;
		struct npr_body_port r = {
			.ext = k, .internal = k, .sliced = k >= ns,
			.axis = in_axis[k], .start = rev ? -1 : 0,
			.end = rev ? 0 : -1, .stride = rev ? -1 : 1,
			.part_size = 1,
		};

		if (k >= ns && rev && in_dir[k] != 1)
			err = npr_onnx_err(c, -EINVAL, "scan direction %lld",
					   (long long)in_dir[k]);
		if (k < ns)
			r.axis = 0;
		if (!err)
			err = npr_body_add_port(body, &r);
		if (!err && k < ns)
			err = npr_body_add_back_edge(body, k, k);
	}
	for (k = 0; !err && k < nout; k++) {
		bool rev = out_dir[k] != 0;
		struct npr_body_port r = {
			.out = true, .ext = k, .internal = k,
			.sliced = k >= ns, .axis = k >= ns ? out_axis[k] : 0,
			.start = rev ? -1 : 0, .end = rev ? 0 : -1,
			.stride = rev ? -1 : 1, .part_size = 1,
		};

		err = npr_body_add_port(body, &r);
	}
out:
	free(in);
	free(in_axis);
	npr_onnx_body_fini(&b);
	return err;
}

/*
 * Scan-8 (opset 8): a batch axis 0 in front of every state and scan input
 * (scanned along axis 1) and output, the body seeing one batch row.  A
 * TensorIterator over the batch holds a body of its own that squeezes the
 * row out, runs the per-row scan (scan_core()) and puts the axis back.
 * sequence_lens (input 0) must be left out: every row has the full length.
 */
static int tr_scan8(struct onnx_ctx *c, int *out)
{
	int nout = (int)c->np->n_output, nin = c->nin - 1, inner[16], k;
	int node, err, *in = NULL;
	struct onnx_body b = { 0 };
	struct npr_body *body;
	struct onnx_ctx sub;
	int64_t zero = 0;

	if (onnx_in(c, 0) >= 0)
		return npr_onnx_err(c, -EOPNOTSUPP,
				    "Scan-8 with sequence_lens is not supported");
	if (nin < 1 || nout > 16)
		return npr_onnx_err(c, -EINVAL, "has %d inputs and %d outputs",
				    c->nin, nout);
	for (k = 1; k < c->nin; k++)
		if (c->vin[k] < 0)
			return npr_onnx_err(c, -EINVAL, "input %d is required",
					    k);
	err = npr_onnx_sub_begin(c, &sub);
	if (!err) {
		sub.vin = malloc(sizeof(int) * nin);
		sub.nin = nin;
		err = sub.vin ? 0 : -ENOMEM;
	}
	for (k = 0; !err && k < nin; k++) {
		struct npr_shape sh = *onnx_vshape(c, c->vin[1 + k]);
		char name[32];
		int v;

		if (sh.rank >= 1)
			sh.d[0] = 1;
		snprintf(name, sizeof(name), "row_in%d", k);
		v = npr_onnx_sub_param(&sub, onnx_val(c, c->vin[1 + k])->type,
				       &sh,
				       name);
		v = v < 0 ? v : npr_onnx_with_list(&sub, "Squeeze", v, &zero, 1,
						   name);
		err = v < 0 ? v : 0;
		if (!err)
			sub.vin[k] = v;
	}
	if (!err) {
		for (k = 0; k < 16; k++)
			inner[k] = -1;
		err = scan_core(&sub, true, inner);
	}
	for (k = 0; !err && k < nout; k++) {
		char name[32];
		int v;

		snprintf(name, sizeof(name), "row_out%d", k);
		v = inner[k] < 0 ? -EINVAL :
		    npr_onnx_with_list(&sub, "Unsqueeze", inner[k], &zero, 1,
				       name);
		err = v < 0 ? v : npr_onnx_sub_result(&sub, v, name);
	}
	err = npr_onnx_sub_end(&sub, err, &b);
	if (err)
		goto out;
	in = malloc(sizeof(int) * (nin + b.ncaps));
	if (!in) {
		err = -ENOMEM;
		goto out;
	}
	for (k = 0; k < nin; k++)
		in[k] = c->vin[1 + k];
	copy_caps(in + nin, &b);
	node = npr_onnx_node(c, "TensorIterator", 0, NULL, nin + b.ncaps, in,
			     nout,
			     out);
	if (node < 0) {
		err = node;
		goto out;
	}
	for (k = 0; k < nout; k++) {
		onnx_val(c, out[k])->type = body_out(&b, k)->type;
		onnx_val(c, out[k])->shape.rank = -1;
	}
	err = attach(c, node, &b, nin, &body);
	for (k = 0; !err && k < nin + nout; k++) {
		bool o = k >= nin;
		struct npr_body_port r = {
			.out = o, .ext = o ? k - nin : k,
			.internal = o ? k - nin : k, .sliced = true,
			.axis = 0, .start = 0, .end = -1, .stride = 1,
			.part_size = 1,
		};

		err = npr_body_add_port(body, &r);
	}
out:
	free(in);
	npr_onnx_body_fini(&b);
	return err;
}

static int tr_scan(struct onnx_ctx *c, int *out)
{
	return c->opset < 9 ? tr_scan8(c, out) : scan_core(c, false, out);
}

const struct onnx_op npr_onnx_ops_control[] = {
	{ "If", tr_if, 1, 1, 16 },
	{ "Loop", tr_loop, 0, MAX_BODY_PORTS, 16 },
	{ "Scan", tr_scan, 0, MAX_BODY_PORTS, 16 },
	{ NULL },
};
