// SPDX-License-Identifier: MIT
/*
 * vnpu: the names of a graph's arguments checked as the NPU compiler
 * makes them and OpenVINO's plugin reads them (graph.c calls it when it
 * creates a graph).
 */
#include <string.h>

#include "vnpu.h"

static bool has_prefix(const char *s, const char *pre)
{
	return !strncmp(s, pre, strlen(pre));
}

/**
 * vnpu_check_arg_names() - a graph's argument names as the driver's are
 * @g: the graph, its arguments described.
 *
 * The arguments' names as the NPU compiler makes them, and as OpenVINO's
 * plugin reads them (npu-level-zero.md 1.12: a state argument is known
 * by its prefix, and its input and output are paired by the rest of the
 * name): a state argument's name unique in its direction; the
 * compiler's prefixes on state arguments only; each vpux_ie_read_value_<id> input with exactly one
 * vpux_ie_assign_<id> output of the same element type and shape, and the
 * other way round.  A graph that breaks one is refused at creation.
 *
 * Return: ZE_RESULT_SUCCESS, or ZE_RESULT_ERROR_INVALID_ARGUMENT with the
 * reason in the build log.
 */
ze_result_t vnpu_check_arg_names(const struct vnpu_graph *g)
{
	static const char *const reserved[] = {
		VNPU_READ_PREFIX, VNPU_ASSIGN_PREFIX, "vpux_ie_shape_",
	};
	uint32_t i, j, k;

	for (i = 0; i < g->nargs; i++) {
		const struct vnpu_arg *a = &g->args[i];
		const char *pre = a->out ? VNPU_ASSIGN_PREFIX :
				  VNPU_READ_PREFIX;
		const char *peer = a->out ? VNPU_READ_PREFIX :
				   VNPU_ASSIGN_PREFIX;
		int pairs = 0;

		/* ordinary ones may share a name (OpenVINO matches them by
		 * index); a state argument's names its variable */
		for (j = 0; j < g->nargs; j++)
			if (j != i && g->args[j].out == a->out &&
			    (a->var >= 0 || g->args[j].var >= 0) &&
			    !strcmp(g->args[j].name, a->name)) {
				vnpu_set_log("vnpu: two %s arguments are named %s",
					     a->out ? "output" : "input", a->name);
				return ZE_RESULT_ERROR_INVALID_ARGUMENT;
			}
		if (a->var < 0) {
			for (k = 0; k < 3; k++)
				if (has_prefix(a->name, reserved[k])) {
					vnpu_set_log("vnpu: %s %s is an ordinary argument named with the compiler's prefix %s, which marks state and shape arguments",
						     a->out ? "output" : "input",
						     a->name, reserved[k]);
					return ZE_RESULT_ERROR_INVALID_ARGUMENT;
				}
			continue;
		}
		if (!has_prefix(a->name, pre)) {
			vnpu_set_log("vnpu: state %s %s lacks the prefix %s",
				     a->out ? "output" : "input", a->name, pre);
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
		}
		for (j = 0; j < g->nargs; j++) {
			const struct vnpu_arg *b = &g->args[j];

			if (b->out == a->out || b->var < 0 ||
			    !has_prefix(b->name, peer) ||
			    strcmp(b->name + strlen(peer),
				   a->name + strlen(pre)))
				continue;
			if (b->elem != a->elem || b->rank != a->rank ||
			    memcmp(b->dims, a->dims,
				   a->rank * sizeof(a->dims[0]))) {
				vnpu_set_log("vnpu: state arguments %s and %s differ in element type or shape",
					     a->name, b->name);
				return ZE_RESULT_ERROR_INVALID_ARGUMENT;
			}
			pairs++;
		}
		if (pairs != 1) {
			vnpu_set_log("vnpu: state %s %s has %s %s%s",
				     a->out ? "output" : "input", a->name,
				     pairs ? "more than one" : "no", peer,
				     a->name + strlen(pre));
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
		}
	}
	return ZE_RESULT_SUCCESS;
}
