// SPDX-License-Identifier: MIT
/*
 * Running npu requests: INFER, synchronous (the infer op) or not (the
 * infer_async op, which the ring's INFER jobs use).
 *
 * Submission: copy the inputs into the request's buffers (a BO of the
 * device bound to a port is the argument itself, without a copy; loader
 * API 1.4 has no mutable command lists, so a change of binding records
 * the list again), reset the request's fence, execute its list on the
 * compiled model's command queue.
 *
 * Completion: one waiter thread per command queue (per compiled model,
 * started at its first inference) waits on the fences of the submitted
 * executions in submission order, which is the order the queue runs them
 * in, copies each one's outputs out and reports it: an asynchronous one
 * through its struct npr_infer_done, a synchronous one to the thread
 * waiting in npu_infer().  The inferences in flight are thus capped by
 * nothing but the requests: no thread waits per inference.
 *
 * A request with an execution on the device is busy until the waiter has
 * completed it (nr->state).  A synchronous INFER whose deadline
 * (NPR_INFER_TIMEOUT_MS) passes returns -ETIME at once and leaves the
 * execution to the waiter, which discards its result; so does an
 * asynchronous one the core gave up on (rq->cancel).  Another INFER of
 * the request meanwhile: a synchronous one waits for the device (within
 * its own deadline), an asynchronous one fails with -EBUSY.  Destroying
 * the request leaves its state to the waiter, which frees it when the
 * device is done (the destroy may hold dev->lock, which an asynchronous
 * end ahead of it in the queue needs); destroying the model stops its
 * waiter once the executions it waits for are done.
 *
 * Locking: ne->wlock guards the waiter's list and every request's state;
 * it is held across the execute, so that the list's order is the
 * queue's.  ne->lock (SetArgumentValue and Append as one step) nests
 * inside nothing of this file.  No lock is held while the waiter calls an
 * asynchronous inference's end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if __has_include(<level_zero/ze_api.h>) && !defined(NPR_NO_LEVEL_ZERO)
#include "npu.h"
#include "sys.h"

/*
 * Zero copy: the memory argument @i reads or writes.  A BO of this
 * device (BO_BIND) holding the port in the argument's own element type
 * is the argument itself; anything else goes through the request's
 * buffer, converted and copied.
 */
static void *arg_memory(const struct npr_request *rq,
			const struct npu_request *nr, const struct npu_arg *a,
			uint32_t i)
{
	const struct npr_bo *bo;
	const struct npr_tensor *t;

	if (a->port < 0 || a->var >= 0)
		return nr->buf[i];
	bo = a->out ? rq->bo_out[a->port] : rq->bo_in[a->port];
	t = a->out ? &rq->out[a->port] : &rq->in[a->port];
	if (!bo || bo->memfd >= 0 || bo->dev != rq->ex->dev ||
	    t->type != a->type)
		return nr->buf[i];
	return t->data;
}

/*
 * Loader API 1.4 has no mutable command lists: when the memory of an
 * argument changed (a BO bound or unbound since the list was recorded),
 * record the list again: reset, SetArgumentValue for every argument,
 * AppendGraphExecute, close.
 */
static int rebind(struct npr_request *rq)
{
	struct npu_exec *ne = rq->ex->priv;
	struct npu_request *nr = rq->priv;
	bool same = true;
	ze_result_t r;
	uint32_t i;

	for (i = 0; i < ne->nargs; i++)
		same &= arg_memory(rq, nr, &ne->arg[i], i) == nr->bound[i];
	if (same)
		return 0;
	r = npr_ze.CommandListReset(nr->list);
	if (r)
		return ZE_FAIL(r, "zeCommandListReset");
	pthread_mutex_lock(&ne->lock);
	for (i = 0; i < ne->nargs && !r; i++) {
		nr->bound[i] = arg_memory(rq, nr, &ne->arg[i], i);
		r = npr_npu.graph->pfnSetArgumentValue(ne->graph, i,
						       nr->bound[i]);
	}
	if (!r)
		r = npr_npu.graph->pfnAppendGraphExecute(nr->list, ne->graph,
						nr->query, NULL, 0, NULL);
	pthread_mutex_unlock(&ne->lock);
	if (!r)
		r = npr_ze.CommandListClose(nr->list);
	if (r) {
		/* record it again at the next inference */
		memset(nr->bound, 0, ne->nargs * sizeof(*nr->bound));
		return ZE_FAIL(r, "recording the graph execute again");
	}
	return 0;
}

/*
 * Inputs, and each variable's value into its shared buffer: the request
 * layer's copy, zeros after a reset (an NPU resets a variable by
 * zero-filling it).
 */
static int copy_in(struct npr_request *rq)
{
	struct npr_exec *ex = rq->ex;
	struct npu_exec *ne = ex->priv;
	struct npu_request *nr = rq->priv;
	int i, err;

	for (i = 0; i < (int)ne->nargs; i++) {
		const struct npu_arg *a = &ne->arg[i];
		const struct npr_tensor *t;

		if (a->out || nr->bound[i] != nr->buf[i] ||
		    (ne->state_on_device && a->var >= 0))
			continue;	/* an output, or a BO read as it is */
		t = &rq->in[a->port];
		err = npr_convert(nr->buf[i], a->type, t->data, t->type,
				  a->numel);
		if (err)
			return npr_err(err, "input %s: cannot convert %s to %s",
				       ex->in[a->port].name,
				       npr_elem_name(t->type),
				       npr_elem_name(a->type));
	}
	return 0;
}

static int copy_out(struct npr_request *rq)
{
	struct npr_exec *ex = rq->ex;
	struct npu_exec *ne = ex->priv;
	struct npu_request *nr = rq->priv;
	int i, err;

	for (i = 0; i < (int)ne->nargs; i++) {
		const struct npu_arg *a = &ne->arg[i];
		struct npr_tensor *t;

		if (!a->out || a->port < 0 || nr->bound[i] != nr->buf[i] ||
		    (ne->state_on_device && a->var >= 0))
			continue;	/* written in place when a BO */
		t = &rq->out[a->port];
		err = npr_convert(t->data, t->type, nr->buf[i], a->type,
				  a->numel);
		if (err)
			return npr_err(err, "output %s: cannot convert %s to %s",
				       ex->out[a->port].name,
				       npr_elem_name(a->type),
				       npr_elem_name(t->type));
	}
	return npr_npu_prof_read(rq);
}

/* The result of a signaled (or failed) fence, outputs copied unless @drop. */
static int finish(struct npr_request *rq, ze_result_t r, bool drop)
{
	struct npu_device *nd = rq->ex->dev->priv;

	if (r == ZE_RESULT_ERROR_DEVICE_LOST) {
		__atomic_store_n(&nd->lost, true, __ATOMIC_RELEASE);
		return npr_err(-ENODEV,
			       "npu: device lost during the inference; close and reopen the device");
	}
	if (r)
		return ZE_FAIL(r, "graph execution");
	return drop ? 0 : copy_out(rq);
}

static void *waiter(void *p)
{
	struct npu_exec *ne = p;

	pthread_mutex_lock(&ne->wlock);
	for (;;) {
		struct npu_request *nr;
		struct npr_infer_done done;
		struct npr_request *rq;
		uint64_t started, finished;
		ze_result_t r;
		bool drop;
		int res;

		while (!ne->whead && !ne->wstop)
			pthread_cond_wait(&ne->wcv, &ne->wlock);
		nr = ne->whead;
		if (!nr)
			break;
		pthread_mutex_unlock(&ne->wlock);
		r = npr_ze.FenceHostSynchronize(nr->fence, UINT64_MAX);
		pthread_mutex_lock(&ne->wlock);
		if (nr->orphan) {
			/* its request is gone: so is everything but this */
			ne->whead = nr->wnext;
			if (!ne->whead)
				ne->wtail = NULL;
			pthread_mutex_unlock(&ne->wlock);
			npr_npu_request_free(ne->nd, ne, nr);
			pthread_mutex_lock(&ne->wlock);
			continue;
		}
		/* from here on, a synchronous INFER waits for the copy */
		nr->state = NPU_FINISHING;
		rq = nr->rq;
		drop = nr->discard ||
		       __atomic_load_n(&rq->cancel, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&ne->wlock);
		res = finish(rq, r, drop);
		finished = npr_now_ns();
		pthread_mutex_lock(&ne->wlock);
		ne->whead = nr->wnext;
		if (!ne->whead)
			ne->wtail = NULL;
		nr->wnext = NULL;
		nr->state = NPU_IDLE;
		nr->res = res;
		nr->finished = finished;
		done = nr->done;
		started = nr->started;
		nr->done.fn = NULL;
		/* a synchronous INFER, request destroy, or another INFER */
		pthread_cond_broadcast(&ne->wcv);
		if (!done.fn)
			continue;
		pthread_mutex_unlock(&ne->wlock);
		done.fn(done.arg, res, started, finished);
		pthread_mutex_lock(&ne->wlock);
	}
	pthread_mutex_unlock(&ne->wlock);
	return NULL;
}

/* Wait on ne->wcv until @deadline (CLOCK_MONOTONIC ns, 0: for ever). */
static bool wait_until(struct npu_exec *ne, uint64_t deadline)
{
	struct timespec ts;

	if (!deadline) {
		pthread_cond_wait(&ne->wcv, &ne->wlock);
		return true;
	}
	if (npr_now_ns() >= deadline)
		return false;
	ts.tv_sec = deadline / 1000000000ull;
	ts.tv_nsec = deadline % 1000000000ull;
	pthread_cond_timedwait(&ne->wcv, &ne->wlock, &ts);
	return true;
}

/*
 * Execute @rq's list and queue it for the waiter; ne->wlock held, the
 * request idle.  The waiter reports to @done, or (fn NULL) to a thread
 * waiting in npu_infer().
 */
static int submit_locked(struct npr_request *rq,
			 const struct npr_infer_done *done)
{
	struct npu_exec *ne = rq->ex->priv;
	struct npu_request *nr = rq->priv;
	ze_result_t r;

	if (!ne->has_waiter) {
		int err = -pthread_create(&ne->waiter, NULL, waiter, ne);

		if (err)
			return npr_err(err, "npu: cannot start the thread that waits for the device");
		ne->has_waiter = true;
	}
	r = npr_ze.FenceReset(nr->fence);
	if (!r)
		r = npr_ze.CommandQueueExecuteCommandLists(ne->queue, 1,
							   &nr->list,
							   nr->fence);
	if (r)
		return finish(rq, r, true);
	nr->rq = rq;
	nr->state = NPU_ON_DEVICE;
	nr->discard = false;
	nr->started = npr_now_ns();
	nr->done = done ? *done : (struct npr_infer_done){ 0 };
	if (ne->wtail)
		ne->wtail->wnext = nr;
	else
		ne->whead = nr;
	ne->wtail = nr;
	pthread_cond_broadcast(&ne->wcv);
	return 0;
}

/* Inputs into the request's buffers; the request idle. */
static int prepare(struct npr_request *rq)
{
	struct npu_device *nd = rq->ex->dev->priv;
	int err;

	if (__atomic_load_n(&nd->lost, __ATOMIC_ACQUIRE))
		return npr_err(-ENODEV,
			       "npu: the device was lost; close and reopen it");
	err = rebind(rq);
	return err ? err : copy_in(rq);
}

/**
 * npr_npu_infer() - the infer op: run one inference and wait for it
 * @rq: the request; rq->deadline_ns (0: none) is when to stop waiting.
 *
 * An execution of the request still on the device (one an earlier INFER
 * gave up on) is waited for first, within the deadline.  Past the
 * deadline the execution stays on the device and its result is
 * discarded; the request is busy until it ends.
 *
 * Return: 0; -ETIME past the deadline; -ENODEV when the device is lost;
 * the errno of a failed Level Zero call or conversion.
 */
int npr_npu_infer(struct npr_request *rq)
{
	struct npu_exec *ne = rq->ex->priv;
	struct npu_request *nr = rq->priv;
	uint64_t deadline = rq->deadline_ns;
	int err;

	if (ne->llm)
		return npr_npu_llm_infer(rq);
	pthread_mutex_lock(&ne->wlock);
	while (nr->state != NPU_IDLE)
		if (!wait_until(ne, deadline)) {
			pthread_mutex_unlock(&ne->wlock);
			return npr_err(-ETIME, "npu: the request's earlier execution, whose result was discarded, was still on the device at the deadline");
		}
	nr->state = NPU_PREPARING;
	pthread_mutex_unlock(&ne->wlock);
	err = prepare(rq);
	pthread_mutex_lock(&ne->wlock);
	nr->state = NPU_IDLE;
	if (!err)
		err = submit_locked(rq, NULL);
	if (err) {
		pthread_cond_broadcast(&ne->wcv);
		pthread_mutex_unlock(&ne->wlock);
		return err;
	}
	while (nr->state != NPU_IDLE) {
		if (nr->state == NPU_ON_DEVICE && !wait_until(ne, deadline)) {
			/* the waiter drops its result and frees the request */
			nr->discard = true;
			pthread_mutex_unlock(&ne->wlock);
			return npr_err(-ETIME, "npu: the inference was still on the device at its deadline; its result is discarded and the request stays busy until the device is done");
		}
		if (nr->state == NPU_FINISHING)
			pthread_cond_wait(&ne->wcv, &ne->wlock);
	}
	err = nr->res;
	pthread_mutex_unlock(&ne->wlock);
	return err;
}

/**
 * npr_npu_infer_async() - the infer_async op: start one inference
 * @rq: the request.
 * @done: called by the queue's waiter thread when the device is done.
 *
 * Return: 0 when it is on the device; -EBUSY while an earlier execution
 * of the request (one a synchronous INFER gave up on) is; the errors of
 * npr_npu_infer() but -ETIME.
 */
int npr_npu_infer_async(struct npr_request *rq,
			const struct npr_infer_done *done)
{
	struct npu_exec *ne = rq->ex->priv;
	struct npu_request *nr = rq->priv;
	uint64_t started;
	int err;

	if (ne->llm) {
		/* two graphs and a copy between them, in order: run here */
		started = npr_now_ns();
		err = npr_npu_llm_infer(rq);
		done->fn(done->arg, err, started, npr_now_ns());
		return 0;
	}
	pthread_mutex_lock(&ne->wlock);
	if (nr->state != NPU_IDLE) {
		pthread_mutex_unlock(&ne->wlock);
		return npr_err(-EBUSY, "npu: the request's earlier execution, whose result was discarded, is still on the device");
	}
	nr->state = NPU_PREPARING;
	pthread_mutex_unlock(&ne->wlock);
	err = prepare(rq);
	pthread_mutex_lock(&ne->wlock);
	nr->state = NPU_IDLE;
	if (!err)
		err = submit_locked(rq, done);
	if (err)
		pthread_cond_broadcast(&ne->wcv);
	pthread_mutex_unlock(&ne->wlock);
	return err;
}

/**
 * npr_npu_request_orphan() - a request is destroyed: whether the waiter
 * frees its state, the device still owning its buffers
 * @rq: the request, about to be freed (the caller may hold dev->lock).
 * @nr: its state, already taken out of it.
 *
 * Return: true when an execution of @rq is on the device (one an INFER
 * gave up on): the waiter frees @nr once the device is done with it and
 * never touches @rq again; false when @rq is idle: the caller frees @nr.
 */
bool npr_npu_request_orphan(struct npr_request *rq, struct npu_request *nr)
{
	struct npu_exec *ne = rq->ex->priv;
	bool orphan;

	pthread_mutex_lock(&ne->wlock);
	orphan = nr->state != NPU_IDLE;
	nr->orphan = orphan;
	pthread_mutex_unlock(&ne->wlock);
	return orphan;
}

/**
 * npr_npu_waiter_init() - the waiter's lock and condition of a model
 * @ne: the compiled model, being created.
 * @nd: its device.
 */
void npr_npu_waiter_init(struct npu_exec *ne, struct npu_device *nd)
{
	pthread_condattr_t ca;

	ne->nd = nd;
	pthread_mutex_init(&ne->wlock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ne->wcv, &ca);
	pthread_condattr_destroy(&ca);
}

/**
 * npr_npu_waiter_stop() - stop a model's waiter, once it has completed
 * every execution, before the queue is destroyed
 * @ne: the compiled model, being destroyed.
 */
void npr_npu_waiter_stop(struct npu_exec *ne)
{
	pthread_mutex_lock(&ne->wlock);
	ne->wstop = true;
	pthread_cond_broadcast(&ne->wcv);
	pthread_mutex_unlock(&ne->wlock);
	if (ne->has_waiter)
		pthread_join(ne->waiter, NULL);
	pthread_cond_destroy(&ne->wcv);
	pthread_mutex_destroy(&ne->wlock);
}

#endif
