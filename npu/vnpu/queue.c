// SPDX-License-Identifier: MIT
/*
 * vnpu command lists, command queues and fences.  Each queue owns a device
 * thread that runs submitted lists in order and signals their fences; a
 * list holds graph executions, each bound (when it was appended) to a
 * request of the cpu device that runs the graph.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vnpu.h"

/* ---- command lists ----------------------------------------------------- */

/**
 * vnpu_list_create() - zeCommandListCreate
 * @h: the context
 * @d: the device
 * @desc: the list descriptor; only command queue group 0 exists
 * @out: out: the new, open, empty list
 *
 * The graph extension's AppendGraphExecute adds graph executions, each
 * bound to its arguments' values at that time; a barrier is the only core
 * command, and a no-op.
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_NULL_POINTER, _INVALID_ARGUMENT for another queue group,
 * _OUT_OF_HOST_MEMORY.
 */
ze_result_t vnpu_list_create(ze_context_handle_t h,
				    ze_device_handle_t d,
				    const ze_command_list_desc_t *desc,
				    ze_command_list_handle_t *out)
{
	struct vnpu_context *c = vnpu_ctx_of(h, false);
	struct vnpu_list *l;

	if (!c || !vnpu_dev_ok(d, false))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->commandQueueGroupOrdinal)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	l = calloc(1, sizeof(*l));
	if (!l)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	l->magic = M_LIST;
	l->ctx = c;
	*out = (ze_command_list_handle_t)l;
	return ZE_RESULT_SUCCESS;
}

static void list_clear(struct vnpu_list *l)
{
	int i;

	for (i = 0; i < l->ncmds; i++) {
		struct npr_handle_destroy hd = {
			.size = sizeof(hd), .handle = l->cmds[i].req,
		};
		struct vnpu_graph *g = l->cmds[i].graph;

		if (!g)
			continue;	/* a memory copy */
		if (!l->cmds[i].init)
			npr_ioctl(g->fd, NPR_IOCTL_HANDLE_DESTROY, &hd);
		free(l->cmds[i].state);
		pthread_mutex_lock(&g->lock);
		g->users--;
		pthread_mutex_unlock(&g->lock);
	}
	l->ncmds = 0;
	l->closed = false;
}

/**
 * vnpu_list_destroy() - zeCommandListDestroy
 * @h: the list; must not be in a queue's unfinished execution (not checked)
 *
 * Destroys the cpu-device requests its graph executions were bound to.
 *
 * Return: ZE_RESULT_SUCCESS, or ZE_RESULT_ERROR_INVALID_NULL_HANDLE.
 */
ze_result_t vnpu_list_destroy(ze_command_list_handle_t h)
{
	struct vnpu_list *l = (void *)h;

	if (!CHECK(l, M_LIST))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	list_clear(l);
	free(l->cmds);
	l->magic = 0;
	free(l);
	return ZE_RESULT_SUCCESS;
}

/**
 * vnpu_list_close() - zeCommandListClose
 * @h: the list
 *
 * Marks the list closed: it can be executed, and no more is appended.
 *
 * Return: ZE_RESULT_SUCCESS, or ZE_RESULT_ERROR_INVALID_NULL_HANDLE.
 */
ze_result_t vnpu_list_close(ze_command_list_handle_t h)
{
	struct vnpu_list *l = (void *)h;

	if (!CHECK(l, M_LIST))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	l->closed = true;
	return ZE_RESULT_SUCCESS;
}

/**
 * vnpu_list_reset() - zeCommandListReset
 * @h: the list; must not be in a queue's unfinished execution (not checked)
 *
 * Drops its graph executions (destroying the cpu-device requests they
 * were bound to) and reopens it.
 *
 * Return: ZE_RESULT_SUCCESS, or ZE_RESULT_ERROR_INVALID_NULL_HANDLE.
 */
ze_result_t vnpu_list_reset(ze_command_list_handle_t h)
{
	struct vnpu_list *l = (void *)h;

	if (!CHECK(l, M_LIST))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	list_clear(l);
	return ZE_RESULT_SUCCESS;
}

/**
 * vnpu_list_barrier() - zeCommandListAppendBarrier
 * @h: the list
 * @sig: the event to signal; vnpu has no events: must be NULL
 * @nwait: the number of events to wait for; must be 0
 * @wait: the events to wait for; ignored
 *
 * A no-op: a queue runs its commands one after the other anyway.
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _UNSUPPORTED_FEATURE for events, _INVALID_ARGUMENT if the list is closed.
 */
ze_result_t vnpu_list_barrier(ze_command_list_handle_t h,
				     ze_event_handle_t sig, uint32_t nwait,
				     ze_event_handle_t *wait)
{
	struct vnpu_list *l = (void *)h;

	if (!CHECK(l, M_LIST))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (sig || nwait)
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	return l->closed ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_SUCCESS;
}

/**
 * vnpu_list_copy() - zeCommandListAppendMemoryCopy
 * @h: the list
 * @dst: where to, inside a zeMemAllocHost() allocation of the list's
 *       context
 * @src: where from, the same
 * @size: bytes
 * @sig: the event to signal; vnpu has no events: must be NULL
 * @nwait: the number of events to wait for; must be 0
 * @wait: the events to wait for; ignored
 *
 * A copy between device buffers, run by the queue's device thread in
 * its turn among the list's commands; traced as "copy dst=... src=...
 * bytes=..." (VNPU_TRACE).
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_NULL_POINTER, _UNSUPPORTED_FEATURE for events,
 * _INVALID_ARGUMENT if the list is closed or either range is not inside
 * an allocation of the context, _OUT_OF_HOST_MEMORY.
 */
ze_result_t vnpu_list_copy(ze_command_list_handle_t h, void *dst,
			   const void *src, size_t size, ze_event_handle_t sig,
			   uint32_t nwait, ze_event_handle_t *wait)
{
	struct vnpu_list *l = (void *)h;
	const struct vnpu_alloc *a, *b;
	struct vnpu_cmd *cmd;

	(void)wait;
	if (!CHECK(l, M_LIST))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!dst || !src)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (sig || nwait)
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	if (l->closed)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&vnpu_mem_lock);
	a = vnpu_alloc_find(dst, size);
	b = vnpu_alloc_find(src, size);
	pthread_mutex_unlock(&vnpu_mem_lock);
	if (!a || !b || a->ctx != l->ctx || b->ctx != l->ctx) {
		vnpu_warn("vnpu: a memory copy of %zu bytes outside the context's allocations",
			  size);
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	}
	if (l->ncmds == l->cap) {
		int cap = l->cap ? 2 * l->cap : 4;
		struct vnpu_cmd *c = realloc(l->cmds, cap * sizeof(*c));

		if (!c)
			return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		l->cmds = c;
		l->cap = cap;
	}
	cmd = &l->cmds[l->ncmds++];
	memset(cmd, 0, sizeof(*cmd));
	cmd->dst = dst;
	cmd->src = src;
	cmd->bytes = size;
	vnpu_trace("copy dst=%p src=%p bytes=%zu", dst, src, size);
	return ZE_RESULT_SUCCESS;
}

/* ---- queues, the device thread, fences --------------------------------- */

static int state_copy(struct vnpu_cmd *cmd, bool out)
{
	const struct vnpu_graph *g = cmd->graph;
	uint32_t i;
	int err;

	for (i = 0; i < g->nargs; i++) {
		const struct vnpu_arg *a = &g->args[i];
		struct npr_state_arg sa = {
			.size = sizeof(sa), .req = cmd->req,
		};
		uint32_t d;

		if (a->var < 0 || a->out != out)
			continue;
		sa.index = (uint32_t)a->var;
		sa.elem_type = a->elem;
		sa.rank = a->rank;
		for (d = 0; d < a->rank; d++)
			sa.dims[d] = a->dims[d];
		sa.data = (uintptr_t)cmd->state[2 * a->var + out];
		sa.bytes = a->bytes;
		err = npr_ioctl(g->fd, out ? NPR_IOCTL_STATE_GET :
				NPR_IOCTL_STATE_SET, &sa);
		if (err)
			return err;
	}
	return 0;
}

static ze_result_t run_graph(struct vnpu_context *c, struct vnpu_cmd *cmd)
{
	struct npr_infer inf = { .size = sizeof(inf), .req = cmd->req };
	long lose = vnpu_env_long("VNPU_FAULT_DEVICE_LOST");
	int err;

	if (!cmd->graph) {
		memmove(cmd->dst, cmd->src, cmd->bytes);
		return ZE_RESULT_SUCCESS;
	}
	if (cmd->init)
		return vnpu_run_init(cmd);
	if (!vnpu_initialized(cmd->graph)) {
		vnpu_warn("vnpu: a graph executed before its initialisation ran");
		return ZE_RESULT_ERROR_UNINITIALIZED;
	}
	pthread_mutex_lock(&c->lock);
	c->executions++;
	if (lose > 0 && c->executions == (unsigned long)lose)
		c->lost = true;
	if (c->lost) {
		pthread_mutex_unlock(&c->lock);
		return ZE_RESULT_ERROR_DEVICE_LOST;
	}
	pthread_mutex_unlock(&c->lock);
	/* state arguments: the read_value buffer in, the assign one out */
	err = state_copy(cmd, false);
	if (!err)
		err = npr_ioctl(cmd->graph->fd, NPR_IOCTL_INFER, &inf);
	if (!err)
		err = state_copy(cmd, true);
	if (!err && cmd->query)
		vnpu_prof_collect(cmd);
	if (err) {
		vnpu_warn("vnpu: graph execution failed: %s",
			npr_last_error());
		return ZE_RESULT_ERROR_UNKNOWN;
	}
	return ZE_RESULT_SUCCESS;
}

/*
 * VNPU_QUEUE_HOLD=N: the queue runs no graph execution until N
 * executions were submitted to it, or for at most 10 s, whichever comes
 * first (or it is destroyed); then it runs as usual.  Lists that only
 * initialise graphs are not held.
 */
static void hold(struct vnpu_queue *q)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	while (q->submitted < q->hold && !q->stop)
		if (pthread_cond_timedwait(&q->cond, &q->lock, &ts))
			break;
	vnpu_trace("queue hold=%lu released at %lu submitted", q->hold,
		   q->submitted);
	q->hold = 0;
}

/* Whether @j only initialises graphs (AppendGraphInitialize). */
static bool init_only(const struct vnpu_job *j)
{
	uint32_t i;
	int k;

	for (i = 0; i < j->nlists; i++)
		for (k = 0; k < j->lists[i]->ncmds; k++)
			if (!j->lists[i]->cmds[k].init)
				return false;
	return true;
}

/*
 * VNPU_EXEC_US: an execution takes at least this long; with
 * VNPU_EXEC_SLOW=K only the queue's first K executions do.
 */
static void exec_time(const struct vnpu_queue *q, const struct timespec *t0)
{
	struct timespec end = *t0;

	if (q->exec_us <= 0 ||
	    (q->exec_slow > 0 && q->completed >= (unsigned long)q->exec_slow))
		return;
	end.tv_sec += q->exec_us / 1000000;
	end.tv_nsec += (q->exec_us % 1000000) * 1000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL))
		;
}

static void *device_thread(void *arg)
{
	struct vnpu_queue *q = arg;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct vnpu_job *j;
		ze_result_t res = ZE_RESULT_SUCCESS;
		struct timespec t0;
		uint32_t i;
		int k;

		while (!q->head && !q->stop)
			pthread_cond_wait(&q->cond, &q->lock);
		if (!q->head)
			break;
		if (q->hold && !init_only(q->head))
			hold(q);
		j = q->head;
		pthread_mutex_unlock(&q->lock);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (i = 0; i < j->nlists && res == ZE_RESULT_SUCCESS; i++)
			for (k = 0; k < j->lists[i]->ncmds &&
				    res == ZE_RESULT_SUCCESS; k++)
				res = run_graph(q->ctx, &j->lists[i]->cmds[k]);
		exec_time(q, &t0);
		pthread_mutex_lock(&q->lock);
		q->head = j->next;
		if (!q->head)
			q->tail = NULL;
		if (j->fence) {
			j->fence->result = res;
			j->fence->pending = false;
			j->fence->signaled = true;
		}
		q->last = res;
		q->completed++;
		pthread_cond_broadcast(&q->cond);
		free(j->lists);
		free(j);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/**
 * vnpu_queue_create() - zeCommandQueueCreate
 * @h: the context
 * @d: the device
 * @desc: the queue descriptor: ordinal and index 0; its mode is ignored,
 *        its priority (normal, low or high) recorded; a chained NPU
 *        command-queue extension descriptor sets turbo
 * @out: out: the new queue
 *
 * Each queue starts a device thread that runs the submitted lists in
 * order.  VNPU_EXEC_US=N makes each execution take at least N us (with
 * VNPU_EXEC_SLOW=K only the first K of the queue);
 * VNPU_QUEUE_HOLD=N holds the queue until N executions were submitted
 * (at most 10 s), so that a test sees them all in flight at once.  Both
 * are read here, once per queue.
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_NULL_POINTER, _INVALID_ARGUMENT for another ordinal or index,
 * _INVALID_ENUMERATION for another priority, _OUT_OF_HOST_MEMORY (also if
 * the thread cannot be started).
 */
ze_result_t vnpu_queue_create(ze_context_handle_t h,
				     ze_device_handle_t d,
				     const ze_command_queue_desc_t *desc,
				     ze_command_queue_handle_t *out)
{
	struct vnpu_context *c = vnpu_ctx_of(h, false);
	const struct npr_ze_command_queue_desc_npu *ext;
	struct vnpu_queue *q;
	const char *prio;

	if (!c || !vnpu_dev_ok(d, false))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->ordinal || desc->index)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	switch (desc->priority) {
	case ZE_COMMAND_QUEUE_PRIORITY_NORMAL: prio = "normal"; break;
	case ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_LOW: prio = "low"; break;
	case ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH: prio = "high"; break;
	default:
		vnpu_warn("zeCommandQueueCreate: priority %d is none of normal, low and high",
			  desc->priority);
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	q->magic = M_QUEUE;
	q->ctx = c;
	/* the NPU command-queue extension's descriptor */
	for (ext = desc->pNext; ext; ext = ext->pNext)
		if (ext->stype == NPR_ZE_STYPE_COMMAND_QUEUE_DESC_NPU)
			q->turbo = ext->turbo;
	vnpu_trace("queue turbo=%d priority=%s", q->turbo, prio);
	q->exec_us = vnpu_env_long("VNPU_EXEC_US");
	q->exec_slow = vnpu_env_long("VNPU_EXEC_SLOW");
	q->hold = (unsigned long)(vnpu_env_long("VNPU_QUEUE_HOLD") > 0 ?
				  vnpu_env_long("VNPU_QUEUE_HOLD") : 0);
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	if (pthread_create(&q->thread, NULL, device_thread, q)) {
		free(q);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	*out = (ze_command_queue_handle_t)q;
	return ZE_RESULT_SUCCESS;
}

/**
 * cq_workload() - zeCommandQueueSetWorkloadType (NPU command-queue
 * extension pfnSetWorkloadType)
 * @h: the queue (loader-wrapped)
 * @type: 0 (default) or 1 (background); stored and traced ("workload
 *        type=N"), it changes nothing else
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_ENUMERATION for another type.
 */
static ze_result_t cq_workload(ze_command_queue_handle_t h, uint32_t type)
{
	struct vnpu_queue *q = vnpu_translate(ZEL_HANDLE_COMMAND_QUEUE, h);

	if (!CHECK(q, M_QUEUE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (type > 1)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	q->workload = type;
	vnpu_trace("workload type=%u", type);
	return ZE_RESULT_SUCCESS;
}

const struct npr_ze_command_queue_npu_ddi vnpu_cq_npu_ddi = {
	.pfnSetWorkloadType = cq_workload,
};

/**
 * vnpu_queue_destroy() - zeCommandQueueDestroy
 * @h: the queue
 *
 * Its device thread finishes what was submitted, then exits; this call
 * waits for it.  Traces "queue executions=N peak=M": the executions the
 * queue ran, and the most that were submitted and not yet completed at
 * any one time.
 *
 * Return: ZE_RESULT_SUCCESS, or ZE_RESULT_ERROR_INVALID_NULL_HANDLE.
 */
ze_result_t vnpu_queue_destroy(ze_command_queue_handle_t h)
{
	struct vnpu_queue *q = (void *)h;

	if (!CHECK(q, M_QUEUE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&q->lock);
	q->stop = true;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	vnpu_trace("queue executions=%lu peak=%lu", q->completed, q->peak);
	q->magic = 0;
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
	free(q);
	return ZE_RESULT_SUCCESS;
}

/**
 * vnpu_queue_execute() - zeCommandQueueExecuteCommandLists
 * @h: the queue
 * @n: the number of lists, at least 1
 * @lists: closed lists of the queue's context; they are not copied and
 *         must live, unchanged, until the execution completes
 * @fh: a fence of this queue, unsignaled and not pending, signaled when the
 *      lists have run; or NULL
 *
 * Queues the lists for the device thread and returns.  The thread runs
 * their graph executions in order and stops at the first that fails; that
 * result goes to the fence and to vnpu_queue_sync().
 *
 * Context: any thread; the queue's lock orders the submissions.
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_SIZE for no lists, _INVALID_ARGUMENT for an open list, a list of
 * another context or a fence of another queue or not reset,
 * _OUT_OF_HOST_MEMORY.
 */
ze_result_t vnpu_queue_execute(ze_command_queue_handle_t h, uint32_t n,
				      ze_command_list_handle_t *lists,
				      ze_fence_handle_t fh)
{
	struct vnpu_queue *q = (void *)h;
	struct vnpu_fence *f = (void *)fh;
	struct vnpu_job *j;
	uint32_t i;

	if (!CHECK(q, M_QUEUE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!n || !lists)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	if (f && (!CHECK(f, M_FENCE) || f->queue != q))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	for (i = 0; i < n; i++) {
		struct vnpu_list *l = (void *)lists[i];

		if (!CHECK(l, M_LIST))
			return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
		if (!l->closed || l->ctx != q->ctx)
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	}
	j = calloc(1, sizeof(*j));
	if (!j || !(j->lists = calloc(n, sizeof(*j->lists)))) {
		free(j);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	memcpy(j->lists, lists, n * sizeof(*lists));
	j->nlists = n;
	j->fence = f;
	pthread_mutex_lock(&q->lock);
	if (f && (f->pending || f->signaled)) {
		/* a fence must be reset before it is used again */
		pthread_mutex_unlock(&q->lock);
		free(j->lists);
		free(j);
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	}
	if (f)
		f->pending = true;
	if (q->tail)
		q->tail->next = j;
	else
		q->head = j;
	q->tail = j;
	q->submitted++;
	if (q->submitted - q->completed > q->peak)
		q->peak = q->submitted - q->completed;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	return ZE_RESULT_SUCCESS;
}

/* Wait on @q->cond until @done(), at most @timeout ns (UINT64_MAX: forever). */
static ze_result_t queue_wait(struct vnpu_queue *q, uint64_t timeout,
			      bool (*done)(void *), void *arg)
{
	struct timespec ts;

	if (timeout != UINT64_MAX) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += timeout / 1000000000;
		ts.tv_nsec += timeout % 1000000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
	}
	while (!done(arg)) {
		if (timeout == 0)
			return ZE_RESULT_NOT_READY;
		if (timeout == UINT64_MAX)
			pthread_cond_wait(&q->cond, &q->lock);
		else if (pthread_cond_timedwait(&q->cond, &q->lock, &ts))
			return done(arg) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
	}
	return ZE_RESULT_SUCCESS;
}

static bool queue_idle(void *arg)
{
	struct vnpu_queue *q = arg;

	return q->completed == q->submitted;
}

/**
 * vnpu_queue_sync() - zeCommandQueueSynchronize
 * @h: the queue
 * @t: the timeout in ns: 0 polls, UINT64_MAX waits for ever
 *
 * Return: once all submitted executions have completed, the result of the
 * last one (ZE_RESULT_SUCCESS, ZE_RESULT_ERROR_DEVICE_LOST,
 * _UNKNOWN); ZE_RESULT_NOT_READY on timeout;
 * ZE_RESULT_ERROR_INVALID_NULL_HANDLE.
 */
ze_result_t vnpu_queue_sync(ze_command_queue_handle_t h, uint64_t t)
{
	struct vnpu_queue *q = (void *)h;
	ze_result_t r;

	if (!CHECK(q, M_QUEUE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&q->lock);
	r = queue_wait(q, t, queue_idle, q);
	if (r == ZE_RESULT_SUCCESS)
		r = q->last;
	pthread_mutex_unlock(&q->lock);
	return r;
}

/**
 * vnpu_fence_create() - zeFenceCreate
 * @h: the queue the fence is used with
 * @desc: the fence descriptor; ZE_FENCE_FLAG_SIGNALED creates it signaled
 * @out: out: the new fence
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_NULL_POINTER, _OUT_OF_HOST_MEMORY.
 */
ze_result_t vnpu_fence_create(ze_command_queue_handle_t h,
				     const ze_fence_desc_t *desc,
				     ze_fence_handle_t *out)
{
	struct vnpu_queue *q = (void *)h;
	struct vnpu_fence *f;

	if (!CHECK(q, M_QUEUE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	f = calloc(1, sizeof(*f));
	if (!f)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	f->magic = M_FENCE;
	f->queue = q;
	f->signaled = desc->flags & ZE_FENCE_FLAG_SIGNALED;
	*out = (ze_fence_handle_t)f;
	return ZE_RESULT_SUCCESS;
}

/**
 * vnpu_fence_destroy() - zeFenceDestroy
 * @h: the fence
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
 * ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE while an execution that signals it
 * is pending (the fence is not destroyed).
 */
ze_result_t vnpu_fence_destroy(ze_fence_handle_t h)
{
	struct vnpu_fence *f = (void *)h;
	bool busy;

	if (!CHECK(f, M_FENCE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&f->queue->lock);
	busy = f->pending;
	pthread_mutex_unlock(&f->queue->lock);
	if (busy)
		return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
	f->magic = 0;
	free(f);
	return ZE_RESULT_SUCCESS;
}

static bool fence_done(void *arg)
{
	return ((struct vnpu_fence *)arg)->signaled;
}

/**
 * vnpu_fence_sync() - zeFenceHostSynchronize
 * @h: the fence
 * @t: the timeout in ns: 0 polls, UINT64_MAX waits for ever
 *
 * A fence that no submitted execution will signal is not waited on:
 * ZE_RESULT_NOT_READY at once, whatever @t.
 *
 * Return: once signaled, the result of the execution that signaled it
 * (ZE_RESULT_SUCCESS, ZE_RESULT_ERROR_DEVICE_LOST, _UNKNOWN);
 * ZE_RESULT_NOT_READY on timeout or if nothing will signal it;
 * ZE_RESULT_ERROR_INVALID_NULL_HANDLE.
 */
ze_result_t vnpu_fence_sync(ze_fence_handle_t h, uint64_t t)
{
	struct vnpu_fence *f = (void *)h;
	ze_result_t r;

	if (!CHECK(f, M_FENCE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&f->queue->lock);
	if (!f->pending && !f->signaled) {
		pthread_mutex_unlock(&f->queue->lock);
		return ZE_RESULT_NOT_READY;	/* nothing will signal it */
	}
	r = queue_wait(f->queue, t, fence_done, f);
	if (r == ZE_RESULT_SUCCESS)
		r = f->result;
	pthread_mutex_unlock(&f->queue->lock);
	return r;
}

/**
 * vnpu_fence_query() - zeFenceQueryStatus
 * @h: the fence
 *
 * Return: if signaled, the result of the execution that signaled it
 * (ZE_RESULT_SUCCESS for one created signaled); ZE_RESULT_NOT_READY;
 * ZE_RESULT_ERROR_INVALID_NULL_HANDLE.
 */
ze_result_t vnpu_fence_query(ze_fence_handle_t h)
{
	struct vnpu_fence *f = (void *)h;
	ze_result_t r;

	if (!CHECK(f, M_FENCE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&f->queue->lock);
	r = f->signaled ? f->result : ZE_RESULT_NOT_READY;
	pthread_mutex_unlock(&f->queue->lock);
	return r;
}

/**
 * vnpu_fence_reset() - zeFenceReset
 * @h: the fence
 *
 * Makes the fence unsignaled, ready for the next
 * zeCommandQueueExecuteCommandLists().
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
 * ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE while an execution that signals it
 * is pending (the fence stays pending).
 */
ze_result_t vnpu_fence_reset(ze_fence_handle_t h)
{
	struct vnpu_fence *f = (void *)h;
	ze_result_t r = ZE_RESULT_SUCCESS;

	if (!CHECK(f, M_FENCE))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&f->queue->lock);
	if (f->pending)
		r = ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
	else
		f->signaled = false;
	f->result = ZE_RESULT_SUCCESS;
	pthread_mutex_unlock(&f->queue->lock);
	return r;
}

