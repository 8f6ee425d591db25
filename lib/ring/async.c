// SPDX-License-Identifier: MIT
/*
 * INFER jobs without a worker: on a backend with infer_async (struct
 * npr_backend_ops) a worker hands the job to the backend and is free at
 * once; the backend calls async_done() from a thread of its own when the
 * device is done, and the job completes from there as a worker would
 * complete it (the CQE, its status and times, links, records).  So the
 * jobs in flight are not capped by the workers.
 *
 * Each such job is a struct async_op on r->async until the backend's end
 * arrives.  CANCEL, the job's deadline and closing the fd complete the job
 * early (-ECANCELED or -ETIME, its result discarded: op->j becomes NULL),
 * but the op, which holds the request, stays until the device lets go of
 * the request's memory: until then the request is busy (SUBMIT of another
 * job on it fails with -EBUSY, DESTROY too), and closing the fd waits.
 *
 * Locking: r->lock, as in ring.c.  The backend's end takes it; the
 * backend never holds a lock of its own while it calls async_done().
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "backend.h"
#include "error.h"
#include "object.h"
#include "request.h"
#include "sys.h"
#include "ring_priv.h"

static void unlink_locked(struct npr_ring *r, struct async_op *op)
{
	*op->prev = op->next;
	if (op->next)
		op->next->prev = op->prev;
	if (!--r->nasync)
		pthread_cond_broadcast(&r->async_cv);
}

/* The job is no longer running: a DRAIN job behind it may start. */
static void stopped_locked(struct npr_ring *r, const struct async_op *op)
{
	r->nrunning--;
	if (op->drain)
		r->drain_running = false;
	if (r->head)
		npr_ring_wake_locked(r, INT_MAX);
}

/*
 * Complete @op's job now with @res; the device keeps the request, and its
 * result is discarded when it comes.
 */
static void abandon_locked(struct npr_ring *r, struct async_op *op, int res,
			   int status, const char *msg)
{
	struct job *j = op->j;

	op->j = NULL;
	j->rq = NULL;		/* op->rq holds it until the device is done */
	/* the backend need not write the outputs */
	__atomic_store_n(&op->rq->cancel, 1, __ATOMIC_RELAXED);
	stopped_locked(r, op);
	npr_ring_complete_locked(r, j, res, status, op->started, msg);
}

/* The backend's end of an inference (struct npr_infer_done). */
static void async_done(void *arg, int res, uint64_t started,
		       uint64_t finished)
{
	struct async_op *op = arg;
	struct npr_ring *r = op->r;
	const char *msg = NULL;
	struct job *j;
	int status;

	pthread_mutex_lock(&r->lock);
	j = op->j;
	op->finishing = true;	/* neither CANCEL nor the timer take it now */
	pthread_mutex_unlock(&r->lock);
	if (j)
		res = npr_request_infer_end(op->rq, res, j->sqe.deadline_ns,
					    finished);
	if (res < 0)
		msg = npr_last_error();
	pthread_mutex_lock(&r->lock);
	if (j) {
		status = res >= 0 ? NPR_JOB_OK : NPR_JOB_FAILED;
		if (res == -ETIME && j->sqe.deadline_ns)
			status = NPR_JOB_EXPIRED;
		stopped_locked(r, op);
		npr_ring_complete_locked(r, j, res, status,
					 started ? started : op->started, msg);
	} else {
		npr_request_release(r->dev, op->rq);
	}
	pthread_mutex_unlock(&r->lock);
	npr_ring_flush(r);
	/* last: npr_ring_destroy() frees the ring once nasync is 0 */
	pthread_mutex_lock(&r->lock);
	unlink_locked(r, op);
	pthread_mutex_unlock(&r->lock);
	free(op);
}

/**
 * npr_ring_async_run_locked() - hand an INFER job to the backend
 * @r: the ring, r->lock held (released and taken again).
 * @j: the job, picked by a worker and counted in r->nrunning.
 * @started: when the worker picked it.
 *
 * The job completes from the backend's end, or here if it did not start.
 */
void npr_ring_async_run_locked(struct npr_ring *r, struct job *j,
			       uint64_t started)
{
	struct async_op *op = calloc(1, sizeof(*op));
	struct npr_infer_done done = { .fn = async_done };
	unsigned long mark;
	int err;

	if (!op) {
		r->nrunning--;
		if (j->sqe.flags & NPR_SQE_DRAIN)
			r->drain_running = false;
		npr_ring_complete_locked(r, j, -ENOMEM, NPR_JOB_FAILED,
					 started, "no memory for the job");
		return;
	}
	op->r = r;
	op->j = j;
	op->rq = j->rq;
	op->started = started;
	op->drain = j->sqe.flags & NPR_SQE_DRAIN;
	op->next = r->async;
	op->prev = &r->async;
	if (op->next)
		op->next->prev = &op->next;
	r->async = op;
	r->nasync++;
	__atomic_store_n(&op->rq->cancel, 0, __ATOMIC_RELAXED);
	done.arg = op;
	pthread_mutex_unlock(&r->lock);
	mark = npr_err_mark();
	err = npr_err_default(npr_request_infer_async(op->rq, &done), mark);
	pthread_mutex_lock(&r->lock);
	if (!err)
		return;		/* op belongs to async_done() now */
	/* it never started: nothing will call async_done() */
	if (op->j) {
		stopped_locked(r, op);
		npr_ring_complete_locked(r, op->j, err, NPR_JOB_FAILED, started,
					 npr_last_error());
	} else {
		npr_request_release(r->dev, op->rq);
	}
	unlink_locked(r, op);
	free(op);
}

/**
 * npr_ring_async_cancel_locked() - CANCEL of an INFER job the backend runs
 * @r: the ring, r->lock held.
 * @user_data: the job's.
 *
 * The job completes at once with -ECANCELED (NPR_JOB_CANCELED); the
 * device's result is discarded when it comes.
 *
 * Return: 0; -EALREADY when the job's result is being completed;
 * -ENOENT when no such job runs on the backend.
 */
int npr_ring_async_cancel_locked(struct npr_ring *r, uint64_t user_data)
{
	struct async_op *op;

	for (op = r->async; op; op = op->next) {
		if (!op->j || op->j->sqe.user_data != user_data)
			continue;
		if (op->finishing)
			return -EALREADY;
		abandon_locked(r, op, -ECANCELED, NPR_JOB_CANCELED,
			       "cancelled while it ran on the device; its result is discarded");
		return 0;
	}
	return -ENOENT;
}

/**
 * npr_ring_async_deadline_locked() - the earliest deadline of a job the
 * backend runs, or of a job chained behind one
 * @r: the ring, r->lock held.
 * @t: In/out. The earliest deadline so far, 0 for none.
 */
void npr_ring_async_deadline_locked(struct npr_ring *r, uint64_t *t)
{
	const struct async_op *op;
	const struct job *l;

	for (op = r->async; op; op = op->next)
		for (l = op->finishing ? NULL : op->j; l; l = l->link)
			if (l->sqe.deadline_ns &&
			    (!*t || l->sqe.deadline_ns < *t))
				*t = l->sqe.deadline_ns;
}

/**
 * npr_ring_async_expire_locked() - the deadline of a job the backend runs
 * @r: the ring, r->lock held.
 * @now: the time.
 *
 * Each job due completes at once with -ETIME (NPR_JOB_EXPIRED), its
 * result discarded when the device's comes; the links behind it break.
 *
 * Return: whether any job expired.
 */
bool npr_ring_async_expire_locked(struct npr_ring *r, uint64_t now)
{
	struct async_op *op;
	bool any = false;

	for (op = r->async; op; op = op->next) {
		const struct job *j = op->j;

		if (!j || op->finishing || !j->sqe.deadline_ns ||
		    now < j->sqe.deadline_ns)
			continue;
		abandon_locked(r, op, -ETIME, NPR_JOB_EXPIRED,
			       "the deadline passed while it ran on the device; its result is discarded");
		any = true;
	}
	return any;
}

/**
 * npr_ring_async_stop() - at close: complete the jobs the backend runs
 * with -ECANCELED, then wait until the device is done with each
 * @r: the ring; its workers and timer have stopped.
 */
void npr_ring_async_stop(struct npr_ring *r)
{
	struct async_op *op;

	pthread_mutex_lock(&r->lock);
	for (op = r->async; op; op = op->next)
		if (op->j && !op->finishing)
			abandon_locked(r, op, -ECANCELED, NPR_JOB_CANCELED,
				       "the fd was closed while it ran on the device");
	pthread_mutex_unlock(&r->lock);
	npr_ring_flush(r);
	pthread_mutex_lock(&r->lock);
	while (r->nasync)
		pthread_cond_wait(&r->async_cv, &r->lock);
	pthread_mutex_unlock(&r->lock);
}
