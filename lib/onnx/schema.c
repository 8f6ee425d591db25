// SPDX-License-Identifier: MIT
/*
 * ONNX frontend: the attributes a node may carry.
 *
 * A node whose attribute its op does not define at the model's opset is
 * refused, as the ONNX checker and onnxruntime refuse it: a misspelled
 * attribute ("striles" for "strides") would otherwise be ignored and the
 * op run with its default.  The op's schema at the model's opset is the
 * version with the newest since-version not past it; attributes it
 * defines pass even when the translator ignores them (BatchNormalization's
 * is_test, the broadcast of Add before opset 7), and so do names starting
 * with "__", which ONNX keeps for implementations.
 *
 * The schemas come from the system's ONNX library at build time
 * (lib/onnx/gen-schemas.cc writes lib/onnx/gen/onnx-schemas.{h,c}).  The
 * one Debian 12 ships, ONNX 1.12, knows opsets up to 17; the versions
 * opset 18 added are listed here from the ONNX operator changelog, and
 * are used only while the generated table stops before them.  An op with
 * no version at the model's opset (an op of a later opset), or any op at
 * an opset neither table reaches, is not checked.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "onnx-schemas.h"
#include "translate.h"

/* the opsets the versions below cover */
#define LATE_FROM	18
#define LATE_TO		18

#define ATTRS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define NO_ATTRS ((const char *const[]){ NULL })
#define REDUCE18(op) \
	{ op, 18, false, ATTRS("keepdims", "noop_with_empty_axes") }

/* the op versions of opset 18 (ONNX 1.13) */
static const struct npr_onnx_schema late[] = {
	{ "BitwiseAnd", 18, false, NO_ATTRS },
	{ "BitwiseNot", 18, false, NO_ATTRS },
	{ "BitwiseOr", 18, false, NO_ATTRS },
	{ "BitwiseXor", 18, false, NO_ATTRS },
	{ "CenterCropPad", 18, false, ATTRS("axes") },
	{ "Col2Im", 18, false, ATTRS("dilations", "pads", "strides") },
	{ "GroupNormalization", 18, false, ATTRS("epsilon", "num_groups") },
	{ "LpPool", 18, false, ATTRS("auto_pad", "ceil_mode", "dilations",
				     "kernel_shape", "p", "pads", "strides") },
	{ "Mish", 18, false, NO_ATTRS },
	{ "OptionalGetElement", 18, false, NO_ATTRS },
	{ "OptionalHasElement", 18, false, NO_ATTRS },
	{ "Pad", 18, false, ATTRS("mode") },
	REDUCE18("ReduceL1"),
	REDUCE18("ReduceL2"),
	REDUCE18("ReduceLogSum"),
	REDUCE18("ReduceLogSumExp"),
	REDUCE18("ReduceMax"),
	REDUCE18("ReduceMean"),
	REDUCE18("ReduceMin"),
	REDUCE18("ReduceProd"),
	REDUCE18("ReduceSumSquare"),
	{ "Resize", 18, false, ATTRS("antialias", "axes",
				     "coordinate_transformation_mode",
				     "cubic_coeff_a", "exclude_outside",
				     "extrapolation_value",
				     "keep_aspect_ratio_policy", "mode",
				     "nearest_mode") },
	{ "ScatterElements", 18, false, ATTRS("axis", "reduction") },
	{ "ScatterND", 18, false, ATTRS("reduction") },
	{ "Split", 18, false, ATTRS("axis", "num_outputs") },
};

/* The newest opset the schemas reach. */
static int64_t opset_known(void)
{
	if (NPR_ONNX_SCHEMAS_OPSET_MAX >= LATE_FROM - 1 &&
	    NPR_ONNX_SCHEMAS_OPSET_MAX < LATE_TO)
		return LATE_TO;
	return NPR_ONNX_SCHEMAS_OPSET_MAX;
}

/* The version of @op at @opset, or NULL when neither table has one. */
static const struct npr_onnx_schema *schema_at(const char *op, int64_t opset)
{
	const struct npr_onnx_schema *best = NULL;
	size_t lo = 0, hi = NPR_ONNX_SCHEMAS_COUNT, i;

	/* the first version of @op in the generated table */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(npr_onnx_schemas[mid].op, op) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < NPR_ONNX_SCHEMAS_COUNT &&
		     !strcmp(npr_onnx_schemas[i].op, op) &&
		     npr_onnx_schemas[i].since <= opset; i++)
		best = &npr_onnx_schemas[i];
	for (i = 0; i < sizeof(late) / sizeof(late[0]); i++)
		if (late[i].since > NPR_ONNX_SCHEMAS_OPSET_MAX &&
		    late[i].since <= opset && !strcmp(late[i].op, op) &&
		    (!best || late[i].since > best->since))
			best = &late[i];
	return best;
}

/* @s's attributes, "a, b, c", into @buf. */
static void list_attrs(const struct npr_onnx_schema *s, char *buf, size_t len)
{
	size_t off = 0;
	int i;

	buf[0] = 0;
	for (i = 0; s->attrs[i] && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
				s->attrs[i]);
	if (!i)
		snprintf(buf, len, "no attributes");
}

/**
 * npr_onnx_check_attrs() - refuse attributes the node's op does not define
 * @c: the context, translating a node of the default domain.
 *
 * Every attribute of c->np must be defined by the schema of its op at the
 * model's opset (or start with "__"), and none may appear twice.  Ops and
 * opsets the schemas do not know are not checked.
 *
 * Return: 0, or -EINVAL with a message naming the node and the attribute.
 */
int npr_onnx_check_attrs(struct onnx_ctx *c)
{
	const Onnx__NodeProto *np = c->np;
	const struct npr_onnx_schema *s;
	uint64_t seen = 0;
	char defined[512];
	size_t k;
	int i;

	if (!np->n_attribute || c->opset > opset_known())
		return 0;
	s = schema_at(onnx_str(np->op_type), c->opset);
	if (!s || s->unchecked)
		return 0;
	for (k = 0; k < np->n_attribute; k++) {
		const char *name = np->attribute[k] ?
				   onnx_str(np->attribute[k]->name) : "";

		if (name[0] == '_' && name[1] == '_')
			continue;
		for (i = 0; s->attrs[i]; i++)
			if (!strcmp(s->attrs[i], name))
				break;
		if (!s->attrs[i]) {
			list_attrs(s, defined, sizeof(defined));
			return npr_onnx_err(c, -EINVAL,
					    "unknown attribute '%.64s' for %s at opset %lld (%s-%d defines %s)",
					    name, s->op, (long long)c->opset,
					    s->op, s->since, defined);
		}
		if (i < 64 && (seen & (1ULL << i)))
			return npr_onnx_err(c, -EINVAL,
					    "attribute '%s' appears twice",
					    s->attrs[i]);
		if (i < 64)
			seen |= 1ULL << i;
	}
	return 0;
}
