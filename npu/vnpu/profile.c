// SPDX-License-Identifier: MIT
/*
 * vnpu's graph profiling extension ("ZE_extension_profiling_data" 1.0):
 * a pool of queries per graph created with ENABLE_PROFILING, one query
 * per recorded execute, and after each execution its per-layer records:
 * one per layer of the IR the graph was built from, with the time the
 * cpu device spent in it (npuring's own layer profile of the request
 * that executes the graph, ENABLE_PROFILING on vnpu's cpu compile).
 *
 * As the Intel driver: a pool of a graph without profiling is refused
 * with ZE_RESULT_ERROR_NOT_AVAILABLE; a profiling graph's execute needs
 * a query (graph.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vnpu.h"

#define POOL(h)		((struct vnpu_prof_pool *)(h))
#define QUERY(h)	((struct vnpu_prof_query *)(h))

/**
 * p_pool_create() - ProfilingPoolCreate
 * @h: a graph created with NPR_ZE_GRAPH_FLAG_ENABLE_PROFILING
 * @count: the number of queries the pool holds, at least 1
 * @out: out: the pool; the graph is in use (not destroyed) until the
 *       pool is
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_NULL_POINTER, _INVALID_SIZE for a count of 0,
 * _NOT_AVAILABLE for a graph without profiling, _OUT_OF_HOST_MEMORY.
 */
static ze_result_t p_pool_create(npr_ze_graph_handle_t h, uint32_t count,
				 npr_ze_prof_pool_handle_t *out)
{
	struct vnpu_graph *g = (struct vnpu_graph *)h;
	struct vnpu_prof_pool *p;

	if (!CHECK(g, M_GRAPH))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (!count)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	if (!g->profiling) {
		vnpu_warn("vnpu: ProfilingPoolCreate: the graph was created without ENABLE_PROFILING");
		return ZE_RESULT_ERROR_NOT_AVAILABLE;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	p->magic = M_PROF_POOL;
	p->graph = g;
	p->count = count;
	pthread_mutex_lock(&g->lock);
	g->users++;
	pthread_mutex_unlock(&g->lock);
	*out = (npr_ze_prof_pool_handle_t)p;
	return ZE_RESULT_SUCCESS;
}

/**
 * p_pool_destroy() - ProfilingPoolDestroy
 * @h: a pool whose queries are destroyed
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _HANDLE_OBJECT_IN_USE while a query of it lives.
 */
static ze_result_t p_pool_destroy(npr_ze_prof_pool_handle_t h)
{
	struct vnpu_prof_pool *p = POOL(h);
	struct vnpu_graph *g;

	if (!CHECK(p, M_PROF_POOL))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	g = p->graph;
	pthread_mutex_lock(&g->lock);
	if (p->queries) {
		pthread_mutex_unlock(&g->lock);
		vnpu_warn("vnpu: ProfilingPoolDestroy: %d queries of the pool live",
			  p->queries);
		return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
	}
	g->users--;
	pthread_mutex_unlock(&g->lock);
	p->magic = 0;
	free(p);
	return ZE_RESULT_SUCCESS;
}

/**
 * p_query_create() - ProfilingQueryCreate
 * @h: the pool
 * @index: the query's index in the pool, below its count
 * @out: out: the query, without data until an execute it was given to
 *       has run
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_NULL_POINTER, _INVALID_ARGUMENT for an index past the pool,
 * _OUT_OF_HOST_MEMORY.
 */
static ze_result_t p_query_create(npr_ze_prof_pool_handle_t h, uint32_t index,
				  npr_ze_prof_query_handle_t *out)
{
	struct vnpu_prof_pool *p = POOL(h);
	struct vnpu_prof_query *q;

	if (!CHECK(p, M_PROF_POOL))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (index >= p->count)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	q = calloc(1, sizeof(*q));
	if (!q)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	q->magic = M_PROF_QUERY;
	q->pool = p;
	pthread_mutex_init(&q->lock, NULL);
	pthread_mutex_lock(&p->graph->lock);
	p->queries++;
	pthread_mutex_unlock(&p->graph->lock);
	*out = (npr_ze_prof_query_handle_t)q;
	return ZE_RESULT_SUCCESS;
}

/**
 * p_query_destroy() - ProfilingQueryDestroy
 * @h: the query, which no recorded execute may still use
 *
 * Return: ZE_RESULT_SUCCESS, or ZE_RESULT_ERROR_INVALID_NULL_HANDLE.
 */
static ze_result_t p_query_destroy(npr_ze_prof_query_handle_t h)
{
	struct vnpu_prof_query *q = QUERY(h);

	if (!CHECK(q, M_PROF_QUERY))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&q->pool->graph->lock);
	q->pool->queries--;
	pthread_mutex_unlock(&q->pool->graph->lock);
	q->magic = 0;
	pthread_mutex_destroy(&q->lock);
	free(q->rec);
	free(q);
	return ZE_RESULT_SUCCESS;
}

/**
 * p_query_data() - ProfilingQueryGetData
 * @h: the query
 * @type: NPR_ZE_PROF_LAYER_LEVEL; vnpu has no task-level or raw data
 * @size: in: room in @data; out: the bytes of the records
 * @data: out: the last execution's layer records
 *        (struct npr_ze_profiling_layer_info), or NULL for the size
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_NULL_POINTER, _UNSUPPORTED_ENUMERATION for another type,
 * _NOT_AVAILABLE before an execution, _INVALID_SIZE if @data is too
 * small.
 */
static ze_result_t p_query_data(npr_ze_prof_query_handle_t h, uint32_t type,
				uint32_t *size, uint8_t *data)
{
	struct vnpu_prof_query *q = QUERY(h);
	ze_result_t r = ZE_RESULT_SUCCESS;
	uint32_t bytes;

	if (!CHECK(q, M_PROF_QUERY))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!size)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (type != NPR_ZE_PROF_LAYER_LEVEL)
		return ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
	pthread_mutex_lock(&q->lock);
	bytes = q->nrec * (uint32_t)sizeof(*q->rec);
	if (!q->nrec)
		r = ZE_RESULT_ERROR_NOT_AVAILABLE;
	else if (data && *size < bytes)
		r = ZE_RESULT_ERROR_INVALID_SIZE;
	else if (data)
		memcpy(data, q->rec, bytes);
	pthread_mutex_unlock(&q->lock);
	if (!r)
		*size = bytes;
	return r;
}

/**
 * p_dev_props() - DeviceGetProfilingDataProperties
 * @d: the device (loader-wrapped)
 * @p: out: extension version 1.0
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_NULL_POINTER.
 */
static ze_result_t p_dev_props(ze_device_handle_t d,
		struct npr_ze_device_profiling_data_properties *p)
{
	if (!vnpu_dev_ok(d, true))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	p->extensionVersion = NPR_ZE_PROFILING_VERSION_1_0;
	return ZE_RESULT_SUCCESS;
}

/**
 * p_log() - ProfilingLogGetString: vnpu keeps no profiling log
 * @h: the query
 * @size: in: room in @log; out: 1
 * @log: out: "", or NULL for the size
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_NULL_POINTER.
 */
static ze_result_t p_log(npr_ze_prof_query_handle_t h, uint32_t *size,
			 char *log)
{
	if (!CHECK(QUERY(h), M_PROF_QUERY))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!size)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (log && *size)
		log[0] = 0;
	*size = 1;
	return ZE_RESULT_SUCCESS;
}

const struct npr_ze_graph_profiling_ddi vnpu_prof_ddi = {
	.pfnProfilingPoolCreate = p_pool_create,
	.pfnProfilingPoolDestroy = p_pool_destroy,
	.pfnProfilingQueryCreate = p_query_create,
	.pfnProfilingQueryDestroy = p_query_destroy,
	.pfnProfilingQueryGetData = p_query_data,
	.pfnDeviceGetProfilingDataProperties = p_dev_props,
	.pfnProfilingLogGetString = p_log,
};

/**
 * vnpu_prof_query_of() - the profiling query an execute is given
 * @h: the handle AppendGraphExecute got
 * @g: the graph executed
 *
 * Return: the query, or NULL if @h is not a live query of a pool of @g.
 */
struct vnpu_prof_query *vnpu_prof_query_of(void *h, struct vnpu_graph *g)
{
	struct vnpu_prof_query *q = h;

	return CHECK(q, M_PROF_QUERY) && q->pool->graph == g ? q : NULL;
}

/**
 * vnpu_prof_collect() - the layer records of an execution just run
 * @cmd: the execute, with a query; its request has run
 *
 * One record per layer npuring's profile of the request lists (the IR's
 * operations), in its order: name, type, status, the time as sw_ns (the
 * cpu device is vnpu's "software" engine) and duration, start times
 * back to back.  A profile that cannot be read leaves the query without
 * data.
 */
void vnpu_prof_collect(struct vnpu_cmd *cmd)
{
	struct npr_profile pr = { .size = sizeof(pr), .req = cmd->req };
	struct vnpu_prof_query *q = cmd->query;
	struct npr_ze_profiling_layer_info *rec = NULL;
	struct npr_profile_rec *in = NULL;
	uint64_t t = 0;
	uint32_t i, n = 0;

	/* the count first */
	npr_ioctl(cmd->graph->fd, NPR_IOCTL_PROFILE, &pr);
	if (pr.count) {
		in = calloc(pr.count, sizeof(*in));
		rec = calloc(pr.count, sizeof(*rec));
		pr.recs = (uintptr_t)in;
	}
	if (in && rec && !npr_ioctl(cmd->graph->fd, NPR_IOCTL_PROFILE, &pr))
		n = pr.count;
	for (i = 0; i < n; i++) {
		struct npr_ze_profiling_layer_info *r = &rec[i];

		snprintf(r->name, sizeof(r->name), "%s", in[i].name);
		snprintf(r->layer_type, sizeof(r->layer_type), "%s",
			 in[i].type);
		r->status = in[i].status == NPR_PROF_EXECUTED ?
			    NPR_ZE_LAYER_EXECUTED :
			    in[i].status == NPR_PROF_OPTIMIZED_OUT ?
			    NPR_ZE_LAYER_OPTIMIZED_OUT : NPR_ZE_LAYER_NOT_RUN;
		r->start_time_ns = t;
		r->duration_ns = in[i].real_ns;
		r->sw_ns = in[i].real_ns;
		r->layer_id = i;
		r->fused_layer_id = UINT64_MAX;
		t += in[i].real_ns;
	}
	free(in);
	pthread_mutex_lock(&q->lock);
	free(q->rec);
	q->rec = n ? rec : NULL;
	q->nrec = n;
	pthread_mutex_unlock(&q->lock);
	if (!n)
		free(rec);
}
