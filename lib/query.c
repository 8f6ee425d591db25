// SPDX-License-Identifier: MIT
/*
 * query_model: which layers of a model a device supports.
 *
 * The answer is about the original layers, computed after the pipeline
 * COMPILE runs (so a layer folded into a constant, or turned into ports
 * like ReadValue, counts as supported: the device never has to run it).
 * Compile keeps node positions, so compiled node i is model node i and
 * every node the passes added comes after the model's.  When the model
 * does not compile as it is (a dynamic input shape), or has shapes that
 * depend on input values and the device needs static ones, each layer is
 * judged by its op alone.  Then OpenVINO's rule for housekeeping nodes:
 * a Parameter or Constant is supported when every node it feeds is, a
 * Result when the node feeding it is.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "error.h"
#include "graph/graph.h"
#include "passes/compile.h"
#include "query.h"

static bool housekeeping(const struct npr_node *n)
{
	return n->op->flags & (NPR_OP_SOURCE | NPR_OP_SINK);
}

/**
 * npr_device_supports() - which layers of a model a device supports
 * @dev: the device.
 * @model: the loaded model (not modified).
 * @supported: per model node, filled.
 *
 * Return: 0, -ENOMEM, or the backend's error.
 */
int npr_device_supports(struct npr_device *dev,
			const struct npr_graph *model, bool *supported)
{
	struct npr_graph *g = NULL;
	unsigned long mark = npr_err_mark();
	bool *dev_ok = NULL, changed;
	int i, j, err;

	err = npr_compile_graph(model, NULL, npr_backend_evaluator(), &g);
	if (err == -ENOMEM)
		return err;
	npr_err_default(0, mark);	/* a compile failure is not ours */
	if (err)
		g = NULL;
	/* shapes from input values: only where the device infers them */
	if (g && !npr_backend_has(dev, NPR_BACKEND_CAP_DYNAMIC_SHAPES) &&
	    npr_graph_dynamic(g) >= 0) {
		npr_graph_free(g);
		g = NULL;
	}
	if (g) {
		dev_ok = calloc(g->nnodes ? g->nnodes : 1, sizeof(bool));
		if (!dev_ok) {
			npr_graph_free(g);
			return -ENOMEM;
		}
		err = npr_backend_query(dev, g, dev_ok);
		if (err) {
			free(dev_ok);
			npr_graph_free(g);
			return err;
		}
	}
	for (i = 0; i < model->nnodes; i++) {
		const struct npr_node *n = &model->nodes[i];

		if (housekeeping(n))
			supported[i] = true;	/* settled below */
		else if (!g)
			supported[i] = npr_backend_has_kernel(n->op);
		else
			supported[i] = g->nodes[i].dead || dev_ok[i];
	}
	/* housekeeping nodes follow their neighbours, to a fixed point */
	do {
		changed = false;
		for (i = 0; i < model->nnodes; i++) {
			const struct npr_node *n = &model->nodes[i];
			bool ok = true;

			if (!housekeeping(n))
				continue;
			if (n->op->flags & NPR_OP_SINK) {
				ok = supported[model->vals[n->in[0]].producer];
			} else {
				for (j = 0; j < model->nnodes && ok; j++) {
					const struct npr_node *c = &model->nodes[j];
					int k;

					for (k = 0; k < c->nin; k++)
						if (model->vals[c->in[k]].producer == i &&
						    !supported[j]) {
							ok = false;
							break;
						}
				}
			}
			if (ok != supported[i]) {
				supported[i] = ok;
				changed = true;
			}
		}
	} while (changed);
	free(dev_ok);
	npr_graph_free(g);
	return 0;
}
