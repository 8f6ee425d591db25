// SPDX-License-Identifier: MIT
/*
 * The npu backend's layer profile (ENABLE_PROFILING, OpenVINO's
 * PERF_COUNT) through the graph profiling extension
 * ("ZE_extension_profiling_data"): a graph compiled with the
 * ENABLE_PROFILING flag, per request a pool of one query that every
 * execute of its list is given, and after each inference the query's
 * per-layer records, matched by name to the compiled graph's nodes
 * (backend.c writes the graph as IR with their names).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if __has_include(<level_zero/ze_api.h>) && !defined(NPR_NO_LEVEL_ZERO)
#include "npu.h"

/**
 * npr_npu_prof_attach() - a request's profiling query
 * @rq: a request of a model compiled with profiling (ex->priv's
 *      profiling), whose layer records rq->prof holds; nothing to do
 *      otherwise
 *
 * Return: 0, or the npr_ze_errno() of a failed pool or query creation.
 */
int npr_npu_prof_attach(struct npr_request *rq)
{
	const struct npu_exec *ne = rq->ex->priv;
	struct npu_request *nr = rq->priv;
	ze_result_t r;

	if (!rq->prof || !ne->profiling)
		return 0;
	r = npr_npu.prof->pfnProfilingPoolCreate(ne->graph, 1, &nr->pool);
	if (r) {
		nr->pool = NULL;
		return ZE_FAIL(r, "ProfilingPoolCreate");
	}
	r = npr_npu.prof->pfnProfilingQueryCreate(nr->pool, 0, &nr->query);
	if (r) {
		nr->query = NULL;
		return ZE_FAIL(r, "ProfilingQueryCreate");
	}
	return 0;
}

/**
 * npr_npu_prof_detach() - destroy a request's profiling query and pool
 * @nr: the request's npu state, its command list destroyed already
 */
void npr_npu_prof_detach(struct npu_request *nr)
{
	if (nr->query)
		npr_npu.prof->pfnProfilingQueryDestroy(nr->query);
	if (nr->pool)
		npr_npu.prof->pfnProfilingPoolDestroy(nr->pool);
	nr->query = NULL;
	nr->pool = NULL;
}

static int node_named(const struct npr_graph *g, const char *name)
{
	int i;

	for (i = 0; i < g->nnodes; i++)
		if (g->nodes[i].name && !strcmp(g->nodes[i].name, name))
			return i;
	return -1;
}

/**
 * npr_npu_prof_read() - the last inference's layer records into rq->prof
 * @rq: a request with a profiling query, just executed
 *
 * Each record of the query's LAYER_LEVEL data names a layer of the IR
 * the driver compiled: an executed one gives its node its duration (the
 * kernel "npu"), one optimized out marks it fused; nodes without a record
 * stay not run.  Records of layers npuring did not write (a compiler's
 * own) are left out.
 *
 * Return: 0; -ENOMEM; the npr_ze_errno() of a failed query.
 */
int npr_npu_prof_read(struct npr_request *rq)
{
	const struct npr_graph *g = rq->ex->g;
	struct npu_request *nr = rq->priv;
	struct npr_ze_profiling_layer_info *rec;
	uint32_t size = 0, n, i;
	ze_result_t r;

	if (!nr->query)
		return 0;
	memset(rq->prof, 0, (size_t)(g->nnodes ? g->nnodes : 1) *
	       sizeof(*rq->prof));
	r = npr_npu.prof->pfnProfilingQueryGetData(nr->query,
					NPR_ZE_PROF_LAYER_LEVEL, &size, NULL);
	if (r)
		return ZE_FAIL(r, "ProfilingQueryGetData");
	n = size / sizeof(*rec);
	if (!n)
		return 0;
	rec = malloc((size_t)n * sizeof(*rec));
	if (!rec)
		return -ENOMEM;
	size = n * (uint32_t)sizeof(*rec);
	r = npr_npu.prof->pfnProfilingQueryGetData(nr->query,
			NPR_ZE_PROF_LAYER_LEVEL, &size, (uint8_t *)rec);
	if (r) {
		free(rec);
		return ZE_FAIL(r, "ProfilingQueryGetData");
	}
	for (i = 0; i < n && i < size / sizeof(*rec); i++) {
		int k;

		rec[i].name[sizeof(rec[i].name) - 1] = 0;
		k = node_named(g, rec[i].name);
		if (k < 0)
			continue;
		if (rec[i].status == NPR_ZE_LAYER_EXECUTED) {
			rq->prof[k].ns = rec[i].duration_ns;
			rq->prof[k].kernel = "npu";
		} else if (rec[i].status == NPR_ZE_LAYER_OPTIMIZED_OUT) {
			rq->prof[k].fused = true;
		}
	}
	free(rec);
	return 0;
}

#endif
