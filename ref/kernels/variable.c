// SPDX-License-Identifier: MIT
/*
 * Kernel of the variable ops, ReadValue and Assign (lib/ops/variable.c),
 * for a graph run or folded before compile turns them into ports
 * (lib/passes/stateful.c): ReadValue gives its initial value (zeros
 * without one), Assign passes its input through.
 */
#include <string.h>

#include "graph/graph.h"
#include "registry.h"

static int state_eval(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out)
{
	if (!n->nout)
		return 0;
	if (!n->nin) {
		memset(out[0].data, 0, out[0].nbytes);
		return 0;
	}
	memcpy(out[0].data, in[0].data, out[0].nbytes);
	return 0;
}

/* The op definitions of lib/ops/variable.c these kernels evaluate. */
const struct npr_kernel npr_kernels_variable[] = {
	{ "ReadValue", 3, 5, state_eval },
	{ "ReadValue", 6, 99, state_eval },
	{ "Assign", 3, 99, state_eval },
	{ NULL },
};
