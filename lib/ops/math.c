// SPDX-License-Identifier: MIT
/*
 * Math ops: attributes, type checks and shape inference for Round-5,
 * Sign-1, ReduceLogicalAnd-1, ReduceLogicalOr-1, CumSum-3 and Einsum-7,
 * following the OpenVINO opset specifications.  Kernels: ref/kernels/math.c.
 *
 * Choices where the specifications leave room:
 *  - Round and Sign keep integer inputs as they are (Sign maps them to
 *    -1, 0, 1); Sign of NaN is 0.
 *  - ReduceLogical*: repeated axes are refused; reducing an empty axis
 *    gives the identity (true for And, false for Or).
 *  - Einsum: a label must have the same size wherever it occurs; the
 *    dimensions an ellipsis covers broadcast (numpy rules).  Spaces in
 *    the equation are ignored.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elem.h"
#include "math.h"

static int one_output(const struct npr_node *n)
{
	if (n->nout != 1)
		return npr_node_err(n, -EINVAL, "has %d outputs, expected 1",
				    n->nout);
	return 0;
}

static const struct {
	const char *type;
	int op;
} unary_names[] = {
	{ "Sin", NPR_MATH_SIN }, { "Cos", NPR_MATH_COS },
	{ "Tan", NPR_MATH_TAN }, { "Asin", NPR_MATH_ASIN },
	{ "Acos", NPR_MATH_ACOS }, { "Atan", NPR_MATH_ATAN },
	{ "Sinh", NPR_MATH_SINH }, { "Cosh", NPR_MATH_COSH },
	{ "Asinh", NPR_MATH_ASINH }, { "Acosh", NPR_MATH_ACOSH },
	{ "Atanh", NPR_MATH_ATANH }, { "SoftSign", NPR_MATH_SOFTSIGN },
	{ "HardSigmoid", NPR_MATH_HARD_SIGMOID }, { "Selu", NPR_MATH_SELU },
};

static int lrn_parse(struct npr_node *n, struct npr_math_params *p)
{
	static const char *const req[] = { "alpha", "beta", "bias", "size" };
	size_t i;
	int err = 0;

	for (i = 0; i < ARRAY_SIZE(req); i++)
		if (!npr_attr(n, req[i]))
			return npr_node_err(n, -EINVAL,
					    "missing attribute %s", req[i]);
	err = npr_attr_float(n, "alpha", 0, &p->alpha);
	if (!err)
		err = npr_attr_float(n, "beta", 0, &p->beta);
	if (!err)
		err = npr_attr_float(n, "bias", 0, &p->bias);
	if (!err)
		err = npr_attr_int(n, "size", 1, &p->size);
	if (err)
		return err;
	if (!isfinite(p->alpha) || !isfinite(p->beta) || !isfinite(p->bias))
		return npr_node_err(n, -EINVAL,
				    "alpha, beta and bias must be finite");
	if (p->size < 1 || p->size > 65535)
		return npr_node_err(n, -EINVAL,
				    "size %lld is out of range [1, 65535]",
				    (long long)p->size);
	return 0;
}

static int math_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const modes[] = { "half_to_even",
					     "half_away_from_zero", NULL };
	struct npr_math_params *p = npr_params_new(n, sizeof(*p));
	int err = 0;
	size_t i;

	(void)g;
	if (!p)
		return -ENOMEM;
	for (i = 0; i < ARRAY_SIZE(unary_names); i++) {
		if (!strcmp(n->type, unary_names[i].type)) {
			p->op = unary_names[i].op;
			return 0;
		}
	}
	if (!strcmp(n->type, "LogSoftmax")) {
		p->op = NPR_MATH_LOG_SOFTMAX;
		return npr_attr_int(n, "axis", 1, &p->axis_attr);
	}
	if (!strcmp(n->type, "LRN")) {
		p->op = NPR_MATH_LRN;
		return lrn_parse(n, p);
	}
	if (!strcmp(n->type, "Round")) {
		if (!npr_attr(n, "mode"))
			return npr_node_err(n, -EINVAL,
					    "missing attribute mode");
		err = npr_attr_enum(n, "mode", modes, 0, &p->op);
	} else if (!strcmp(n->type, "Sign")) {
		p->op = NPR_MATH_SIGN;
	} else if (!strcmp(n->type, "ReduceLogicalAnd") ||
		   !strcmp(n->type, "ReduceLogicalOr")) {
		p->op = strcmp(n->type, "ReduceLogicalAnd") ?
			NPR_MATH_REDUCE_OR : NPR_MATH_REDUCE_AND;
		err = npr_attr_bool(n, "keep_dims", false, &p->keep_dims);
	} else {
		p->op = NPR_MATH_CUMSUM;
		err = npr_attr_bool(n, "exclusive", false, &p->exclusive);
		if (!err)
			err = npr_attr_bool(n, "reverse", false, &p->reverse);
	}
	return err;
}

static int unary_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_value *x = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	int err = one_output(n);

	if (err)
		return err;
	if (!npr_is_compute(x->type))
		return npr_node_err(n, -EINVAL,
				    "element type %s is not supported",
				    npr_elem_name(x->type));
	o->type = x->type;
	o->shape = x->shape;
	return 0;
}

/* HardSigmoid (alpha, beta) and Selu (alpha, lambda): scalar inputs. */
static int scalar2_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_value *x = npr_in(g, n, 0);
	int i, err = unary_infer(g, n);

	if (err)
		return err;
	if (!npr_is_float(x->type))
		return npr_node_err(n, -EINVAL, "data is %s, not a float type",
				    npr_elem_name(x->type));
	for (i = 1; i < 3; i++) {
		const struct npr_value *v = npr_in(g, n, i);

		if (v->type != x->type || npr_shape_numel(&v->shape) != 1)
			return npr_node_err(n, -EINVAL,
					    "input %d must be one %s value", i,
					    npr_elem_name(x->type));
	}
	return 0;
}

static int log_softmax_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_math_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0);
	int err = unary_infer(g, n);

	if (err)
		return err;
	if (!npr_is_float(x->type))
		return npr_node_err(n, -EINVAL, "data is %s, not a float type",
				    npr_elem_name(x->type));
	return npr_norm_axis(n, "axis", p->axis_attr, x->shape.rank,
			     &p->axis);
}

static int lrn_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_math_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0);
	int64_t ax[NPR_MAX_RANK];
	int cnt, i, a, err = unary_infer(g, n);

	if (err)
		return err;
	if (!npr_is_float(x->type))
		return npr_node_err(n, -EINVAL, "data is %s, not a float type",
				    npr_elem_name(x->type));
	cnt = npr_const_ints(g, n, 1, ax, NPR_MAX_RANK);
	if (cnt < 0)
		return cnt;
	memset(p->reduced, 0, sizeof(p->reduced));
	for (i = 0; i < cnt; i++) {
		err = npr_norm_axis(n, "axis", ax[i], x->shape.rank, &a);
		if (err)
			return err;
		if (p->reduced[a])
			return npr_node_err(n, -EINVAL,
					    "axis %lld is repeated",
					    (long long)ax[i]);
		p->reduced[a] = true;
	}
	p->axis = cnt;
	return 0;
}

static int reduce_logical_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_math_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0), *o = npr_out(g, n, 0);
	struct npr_shape s = { .rank = 0 };
	int64_t ax[NPR_MAX_RANK];
	int cnt, i, a, r = x->shape.rank, err;

	err = one_output(n);
	if (err)
		return err;
	if (x->type != NPR_ELEM_BOOLEAN)
		return npr_node_err(n, -EINVAL, "data is %s, not boolean",
				    npr_elem_name(x->type));
	if (!npr_is_index(npr_in(g, n, 1)->type))
		return npr_node_err(n, -EINVAL, "axes are %s, not i32 or i64",
				    npr_elem_name(npr_in(g, n, 1)->type));
	cnt = npr_const_ints(g, n, 1, ax, NPR_MAX_RANK);
	if (cnt < 0)
		return cnt;
	memset(p->reduced, 0, sizeof(p->reduced));
	for (i = 0; i < cnt; i++) {
		err = npr_norm_axis(n, "axis", ax[i], r, &a);
		if (err)
			return err;
		if (p->reduced[a])
			return npr_node_err(n, -EINVAL,
					    "axis %lld is repeated",
					    (long long)ax[i]);
		p->reduced[a] = true;
	}
	for (i = 0; i < r; i++) {
		if (!p->reduced[i])
			s.d[s.rank++] = x->shape.d[i];
		else if (p->keep_dims)
			s.d[s.rank++] = 1;
	}
	o->type = NPR_ELEM_BOOLEAN;
	o->shape = s;
	return 0;
}

static int cumsum_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_math_params *p = n->params;
	struct npr_value *x = npr_in(g, n, 0);
	int64_t axis = 0;
	int err;

	err = unary_infer(g, n);
	if (err)
		return err;
	if (x->shape.rank < 1)
		return npr_node_err(n, -EINVAL, "data must have rank >= 1");
	if (n->nin > 1) {
		unsigned int at = npr_in(g, n, 1)->type;
		int cnt;

		if (!npr_is_index(at))
			return npr_node_err(n, -EINVAL,
					    "axis is %s, not i32 or i64",
					    npr_elem_name(at));
		cnt = npr_const_ints(g, n, 1, &axis, 1);
		if (cnt < 0)
			return cnt;
		if (cnt != 1)
			return npr_node_err(n, -EINVAL,
					    "axis (input 1) must have one element");
	}
	return npr_norm_axis(n, "axis", axis, x->shape.rank, &p->axis);
}

/* ---- Einsum-7 ---- */

static int einsum_parse(struct npr_graph *g, struct npr_node *n)
{
	struct npr_einsum_params *p = npr_params_new(n, sizeof(*p));
	const char *eq = npr_attr(n, "equation");
	size_t i, k = 0;

	(void)g;
	if (!p)
		return -ENOMEM;
	if (!eq)
		return npr_node_err(n, -EINVAL, "missing attribute equation");
	for (i = 0; eq[i]; i++) {
		char c = eq[i];

		if (c == ' ')
			continue;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      c == ',' || c == '.' || c == '-' || c == '>'))
			return npr_node_err(n, -EINVAL,
					    "equation: character '%c' is not a label, ',', '...' or '->'",
					    c);
		if (k + 1 >= sizeof(p->eq))
			return npr_node_err(n, -EINVAL,
					    "equation is longer than %zu characters",
					    sizeof(p->eq) - 1);
		p->eq[k++] = c;
	}
	p->eq[k] = 0;
	return 0;
}

static int label_of(char c)
{
	return c >= 'a' ? 26 + (c - 'a') : c - 'A';
}

static int label_err(const struct npr_node *n, int lab, int64_t a, int64_t b)
{
	char name[4] = "...";

	if (lab < 52) {
		name[0] = lab < 26 ? 'A' + lab : 'a' + lab - 26;
		name[1] = 0;
	}
	return npr_node_err(n, -EINVAL, "label %s has sizes %lld and %lld",
			    name, (long long)a, (long long)b);
}

/*
 * Labels of one subscript [@s, @e) for an operand of @rank dimensions
 * (-1 for the output): letters, at most one "...".  *@nlet letters,
 * *@ell the index of the ellipsis among them or -1.
 */
static int scan_subscript(const struct npr_node *n, const char *s,
			  const char *e, int *labs, int *nlet, int *ell)
{
	int k = 0;

	*ell = -1;
	while (s < e) {
		if (*s == '.') {
			if (e - s < 3 || s[1] != '.' || s[2] != '.' ||
			    *ell >= 0)
				return npr_node_err(n, -EINVAL,
						    "equation: malformed or repeated ellipsis");
			*ell = k;
			s += 3;
			continue;
		}
		if (*s == '-' || *s == '>')
			return npr_node_err(n, -EINVAL,
					    "equation: misplaced '->'");
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
			return npr_node_err(n, -EINVAL,
					    "equation: '%c' where a label belongs (a ',' in the output?)",
					    *s);
		if (k >= NPR_MAX_RANK)
			return npr_node_err(n, -EINVAL,
					    "equation: a subscript has more than %d labels",
					    NPR_MAX_RANK);
		labs[k++] = label_of(*s++);
	}
	*nlet = k;
	return 0;
}

static int einsum_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_einsum_params *p = n->params;
	struct npr_value *o = npr_out(g, n, 0);
	const char *s = p->eq, *arrow = strstr(p->eq, "->");
	const char *end = arrow ? arrow : p->eq + strlen(p->eq);
	int labs[NPR_MAX_RANK], nlet, ell, i, j, erank = 0, count[52] = { 0 };
	int ellr[NPR_EINSUM_MAX_IN];
	unsigned int type = npr_in(g, n, 0)->type;
	bool any_ell = false;
	int err;

	if (n->nout != 1)
		return npr_node_err(n, -EINVAL, "has %d outputs, expected 1",
				    n->nout);
	if (n->nin > NPR_EINSUM_MAX_IN)
		return npr_node_err(n, -EINVAL, "more than %d inputs",
				    NPR_EINSUM_MAX_IN);
	memset(p->size, 0, sizeof(p->size));
	memset(p->used, 0, sizeof(p->used));
	/* pass 1: ranks of the ellipses */
	for (i = 0; i < n->nin; i++) {
		const struct npr_value *v = npr_in(g, n, i);
		const char *c = memchr(s, ',', end - s);
		const char *te = i == n->nin - 1 ? end : c;

		if (!te || (i == n->nin - 1 && c))
			return npr_node_err(n, -EINVAL,
					    "equation has a different number of subscripts than the %d inputs",
					    n->nin);
		if (v->type != type || !npr_is_compute(type))
			return npr_node_err(n, -EINVAL,
					    "inputs must share one numeric type (input %d is %s)",
					    i, npr_elem_name(v->type));
		err = scan_subscript(n, s, te, labs, &nlet, &ell);
		if (err)
			return err;
		if (ell < 0 ? nlet != v->shape.rank : nlet > v->shape.rank)
			return npr_node_err(n, -EINVAL,
					    "input %d: subscript of %d labels for rank %d",
					    i, nlet, v->shape.rank);
		ellr[i] = ell < 0 ? 0 : v->shape.rank - nlet;
		if (ellr[i] > erank)
			erank = ellr[i];
		any_ell |= ell >= 0;
		p->rank[i] = v->shape.rank;
		for (j = 0; j < v->shape.rank; j++) {
			int lab;

			if (ell < 0 || j < ell)
				lab = labs[j];
			else if (j < ell + ellr[i])
				lab = 52 + (j - ell);	/* shifted below */
			else
				lab = labs[j - ellr[i]];
			p->lab[i][j] = lab;
		}
		for (j = 0; j < nlet; j++)
			count[labs[j]]++;
		s = te + 1;
	}
	/* pass 2: ellipsis labels right-aligned to the widest ellipsis */
	for (i = 0; i < n->nin; i++) {
		const struct npr_value *v = npr_in(g, n, i);

		for (j = 0; j < p->rank[i]; j++) {
			int lab = p->lab[i][j];
			int64_t d = v->shape.d[j];

			if (lab >= 52)
				lab = p->lab[i][j] = lab + erank - ellr[i];
			if (!p->used[lab]) {
				p->size[lab] = d;
				p->used[lab] = true;
			} else if (lab >= 52 && p->size[lab] == 1) {
				p->size[lab] = d;
			} else if (p->size[lab] != d &&
				   !(lab >= 52 && d == 1)) {
				return label_err(n, lab, p->size[lab], d);
			}
		}
	}
	/* the output */
	p->orank = 0;
	if (arrow) {
		bool seen[NPR_EINSUM_LABELS] = { false };

		err = scan_subscript(n, arrow + 2, arrow + strlen(arrow),
				     labs, &nlet, &ell);
		if (err)
			return err;
		if (ell >= 0 && !any_ell)
			return npr_node_err(n, -EINVAL,
					    "equation: ellipsis in the output only");
		for (j = 0; j < nlet + (ell >= 0 ? erank : 0); j++) {
			int lab;

			if (ell >= 0 && j >= ell && j < ell + erank)
				lab = 52 + (j - ell);
			else
				lab = labs[ell >= 0 && j >= ell + erank ?
					   j - erank : j];
			if (lab < 52 && (!p->used[lab] || seen[lab]))
				return npr_node_err(n, -EINVAL,
						    "equation: output label '%c' is not an input label or repeats",
						    lab < 26 ? 'A' + lab :
						    'a' + lab - 26);
			seen[lab] = true;
			if (p->orank >= NPR_MAX_RANK)
				return npr_node_err(n, -EINVAL,
						    "output rank exceeds %d",
						    NPR_MAX_RANK);
			p->olab[p->orank++] = lab;
		}
	} else {
		for (j = 0; j < erank; j++)
			p->olab[p->orank++] = 52 + j;
		for (j = 0; j < 52; j++) {
			if (count[j] != 1)
				continue;
			if (p->orank >= NPR_MAX_RANK)
				return npr_node_err(n, -EINVAL,
						    "output rank exceeds %d",
						    NPR_MAX_RANK);
			p->olab[p->orank++] = j;
		}
	}
	o->type = type;
	o->shape.rank = p->orank;
	for (j = 0; j < p->orank; j++)
		o->shape.d[j] = p->size[p->olab[j]];
	return npr_check_numel(n, &o->shape);
}

#define MATH_OP(t, v0, n0, n1, infer_fn) \
	{ .type = t, .vmin = v0, .vmax = 99, .nin_min = n0, .nin_max = n1, \
	  .parse = math_parse, .infer = infer_fn }

const struct npr_op_def npr_ops_math[] = {
	MATH_OP("Round", 5, 1, 1, unary_infer),
	MATH_OP("Sin", 0, 1, 1, unary_infer),
	MATH_OP("Cos", 0, 1, 1, unary_infer),
	MATH_OP("Tan", 0, 1, 1, unary_infer),
	MATH_OP("Asin", 0, 1, 1, unary_infer),
	MATH_OP("Acos", 0, 1, 1, unary_infer),
	MATH_OP("Atan", 0, 1, 1, unary_infer),
	MATH_OP("Sinh", 0, 1, 1, unary_infer),
	MATH_OP("Cosh", 0, 1, 1, unary_infer),
	MATH_OP("Asinh", 3, 1, 1, unary_infer),
	MATH_OP("Acosh", 3, 1, 1, unary_infer),
	MATH_OP("Atanh", 3, 1, 1, unary_infer),
	MATH_OP("SoftSign", 9, 1, 1, unary_infer),
	MATH_OP("HardSigmoid", 0, 3, 3, scalar2_infer),
	MATH_OP("Selu", 0, 3, 3, scalar2_infer),
	MATH_OP("LogSoftmax", 5, 1, 1, log_softmax_infer),
	MATH_OP("LRN", 0, 2, 2, lrn_infer),
	MATH_OP("Sign", 0, 1, 1, unary_infer),
	MATH_OP("ReduceLogicalAnd", 0, 2, 2, reduce_logical_infer),
	MATH_OP("ReduceLogicalOr", 0, 2, 2, reduce_logical_infer),
	MATH_OP("CumSum", 3, 1, 2, cumsum_infer),
	{ .type = "Einsum", .vmin = 7, .vmax = 99, .nin_min = 1,
	  .nin_max = NPR_EINSUM_MAX_IN, .parse = einsum_parse,
	  .infer = einsum_infer },
	{ .type = NULL },
};
