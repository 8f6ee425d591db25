// SPDX-License-Identifier: MIT
/*
 * The ring: asynchronous jobs and their completions.
 *
 * Jobs are validated and queued by SUBMIT, run by worker threads (or at
 * once, for jobs that cannot block), and completed into a fixed array of
 * struct npr_cqe that REAP copies out.  Every completion is also announced
 * on a pollable descriptor:
 *
 *   io_uring path:  a NOP with the job's user_data is posted into the
 *                   fd's own completion io_uring; in attach mode an
 *                   IORING_OP_MSG_RING carries user_data and res into the
 *                   caller's ring instead, and the array is not used, or
 *                   (NPR_RING_SETUP_RECORDS) is a table of records the
 *                   caller takes by the slot the CQE names (reap.c).
 *   fallback path:  the fd's eventfd is incremented.
 *
 * Workers: on the io_uring path each worker runs an event loop on an
 * io_uring of its own, woken by an IORING_OP_MSG_RING from whoever queued
 * work; the same ring carries its file reads (LOAD, in load.c).  On the fallback path
 * they wait on a condition variable and read with pread().
 *
 * A timer thread expires jobs whose deadline passes before they start,
 * wherever they wait (see "deadlines of waiting jobs").
 *
 * At most cq_entries jobs are in flight (submitted and not yet reaped), so
 * neither the array nor the io_uring CQ can overflow: SUBMIT pushes back
 * with -EBUSY instead of losing a completion.
 *
 * Locking: ring->lock protects everything below; it is taken before
 * dev->lock, never after.  Two exceptions keep a sleeping reaper to one
 * wake-up per batch: on the io_uring path REAP copies CQEs out of the
 * array without the lock (one producer at a time under the lock, one
 * reaper: cq_tail is published with release, cq_head and the in-flight
 * count go back with atomics), so it never sleeps on a mutex a worker
 * holds across its io_uring_submit(); and it waits for exactly the notes
 * of the completions it still needs, counted from the notes it has
 * consumed, so a note that arrives after its CQE was already copied cannot
 * wake it early.  The notes themselves are submitted after ring->lock is
 * released (under sq_lock, which only guards the fd's io_uring SQ), so a
 * thread woken by a note does not find the lock still held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <liburing.h>

#include "backend.h"
#include "error.h"
#include "model.h"
#include "object.h"
#include "request.h"
#include "sys.h"
#include "tsan.h"
#include "uarg.h"
#include "load.h"
#include "ring.h"
#include "ring_priv.h"

#ifndef IORING_MSG_RING_FLAGS_PASS
#define IORING_MSG_RING_FLAGS_PASS	(1U << 1)	/* Linux 6.3 */
#endif

#define RING_DEFAULT_ENTRIES	256
#define NOP_MAX_US		10000000u
#define WORKER_RING_ENTRIES	16
#define WAKE_TAG		(~0ull)		/* user_data of a wake-up */

#ifdef NPR_TSAN
char npr_tsan_cqe_keys[NPR_TSAN_CQE_KEYS];
#endif

/* ---- completion --------------------------------------------------------- */

static void job_free(struct npr_ring *r, struct job *j)
{
	if (j->rq)
		npr_request_release(r->dev, j->rq);
	free(j->path);
	free(j);
}

/* Caller holds sq_lock. */
static struct io_uring_sqe *get_sqe(struct npr_ring *r)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->cr);

	if (!sqe) {
		io_uring_submit(&r->cr);
		__atomic_store_n(&r->unsubmitted, 0, __ATOMIC_RELEASE);
		sqe = io_uring_get_sqe(&r->cr);
	}
	return sqe;
}

/*
 * Announce what completed since the last flush.  Called without
 * ring->lock, after the completions were posted under it.
 */
static void flush(struct npr_ring *r)
{
	unsigned int lost[64], nlost = 0;

	if (r->path == NPR_RING_PATH_URING) {
		/*
		 * Nothing prepared: whoever prepares a note flushes it, so
		 * do not queue behind a flush in progress.
		 */
		if (!__atomic_load_n(&r->unsubmitted, __ATOMIC_ACQUIRE))
			return;
		pthread_mutex_lock(&r->sq_lock);
		if (r->unsubmitted) {
			io_uring_submit(&r->cr);
			__atomic_store_n(&r->unsubmitted, 0, __ATOMIC_RELEASE);
		}
		if (r->attach) {
			/*
			 * Failed MSG_RINGs (the caller closed its ring): a
			 * record nobody will take frees its slot.
			 */
			struct io_uring_cqe *c;

			while (!io_uring_peek_cqe(&r->cr, &c)) {
				uint64_t ud = c->user_data;

				if (r->records && (ud & ~0xffffull) == RECORD_TAG &&
				    nlost < sizeof(lost) / sizeof(lost[0]))
					lost[nlost++] = ud & 0xffff;
				io_uring_cqe_seen(&r->cr, c);
			}
		}
		pthread_mutex_unlock(&r->sq_lock);
		if (nlost) {
			pthread_mutex_lock(&r->lock);
			while (nlost--)
				if (lost[nlost] < r->entries &&
				    r->rec_used[lost[nlost]])
					npr_ring_record_free_locked(r,
								lost[nlost]);
			pthread_mutex_unlock(&r->lock);
		}
	} else {
		if (__atomic_exchange_n(&r->signal, false, __ATOMIC_ACQ_REL))
			eventfd_write(r->dev->fd, 1);
		if (__atomic_exchange_n(&r->wake_reaper, false,
					__ATOMIC_ACQ_REL))
			pthread_cond_signal(&r->reaped);
	}
}

/* Remember why a job failed, for GET_ERROR with NPR_GET_ERROR_JOB. */
static void log_failure_locked(struct npr_ring *r, const struct job *j,
			       int res, const char *msg)
{
	struct job_err *e = &r->elog[r->elog_next];

	free(e->msg);
	e->user_data = j->sqe.user_data;
	e->res = res;
	e->msg = strdup(msg && *msg ? msg : strerror(-res));
	r->elog_next = (r->elog_next + 1) % r->elog_n;
}

/*
 * Wake up to @n sleeping workers.  On the io_uring path this prepares a
 * MSG_RING into each worker's own ring, which the caller's flush()
 * submits after unlocking; returns whether it prepared any.
 */
static bool wake_locked(struct npr_ring *r, int n)
{
	bool woke = false;
	int i;

	if (!r->wloop) {
		if (n > 1)
			pthread_cond_broadcast(&r->work);
		else if (n == 1)
			pthread_cond_signal(&r->work);
		return false;
	}
	for (i = 0; i < r->nworkers && n > 0; i++) {
		struct worker *w = &r->w[i];
		struct io_uring_sqe *sqe;

		if (!w->sleeping)
			continue;
		pthread_mutex_lock(&r->sq_lock);
		sqe = get_sqe(r);
		if (sqe) {
			io_uring_prep_msg_ring(sqe, w->ring.ring_fd, 0,
					       WAKE_TAG, 0);
			/* only a failure posts a CQE (res < 0) */
			sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
			io_uring_sqe_set_data64(sqe, WAKE_TAG);
			__atomic_store_n(&r->unsubmitted,
					 r->unsubmitted + 1, __ATOMIC_RELEASE);
			w->sleeping = false;
			woke = true;
			n--;
		}
		pthread_mutex_unlock(&r->sq_lock);
	}
	return woke;
}

static void complete_locked(struct npr_ring *r, struct job *j, int res,
			    int status, uint64_t started, const char *msg);

static void fill_cqe(struct npr_cqe *c, const struct job *j, int res,
		     int status, uint64_t started, uint64_t now)
{
	c->user_data = j->sqe.user_data;
	c->res = res;
	c->status = status;
	c->queued_ns = j->queued_ns;
	c->started_ns = started;
	c->finished_ns = now;
	c->reserved = 0;
}

static void break_chain_locked(struct npr_ring *r, struct job *j)
{
	while (j) {
		struct job *n = j->link;

		j->link = NULL;
		complete_locked(r, j, -ECANCELED, NPR_JOB_LINK_BROKEN, 0,
				"an earlier job of its chain failed or was cancelled");
		j = n;
	}
}

/*
 * Post @j's completion and free it; @msg says why when @res < 0.  Then its
 * chain goes on, or is broken.
 */
static void complete_locked(struct npr_ring *r, struct job *j, int res,
			    int status, uint64_t started, const char *msg)
{
	uint64_t now = npr_now_ns();
	struct job *link = j->link;

	/*
	 * The request is free again before the CQE is visible: the reaper
	 * copies CQEs without the lock and may resubmit it at once.
	 */
	if (j->rq) {
		npr_request_release(r->dev, j->rq);
		j->rq = NULL;
	}
	if (!started)
		started = now;
	r->posted++;
	if (res < 0)
		log_failure_locked(r, j, res, msg);
	if (r->attach) {
		unsigned int slot = NPR_CQE_NO_RECORD;
		struct io_uring_sqe *sqe;

		/* a record for the caller to take, unless the fd is closing */
		if (r->records && !r->stop && r->rec_nfree) {
			slot = r->rec_free[--r->rec_nfree];
			r->rec_used[slot] = 1;
			fill_cqe(&r->cq[slot], j, res, status, started, now);
		}
		/*
		 * The kernel orders this thread's writes (the job's outputs)
		 * before the caller's read of the CQE: tell TSan, whose
		 * caller acquires with npr_tsan_cqe_reaped().
		 */
		npr_tsan_cqe_posted(j->sqe.user_data);
		pthread_mutex_lock(&r->sq_lock);
		sqe = get_sqe(r);
		if (sqe) {
			io_uring_prep_msg_ring(sqe, r->attach_fd,
					       (unsigned int)res,
					       j->sqe.user_data, r->records ?
					       IORING_MSG_RING_FLAGS_PASS : 0);
			/* after the prep, which zeroes it */
			if (r->records)
				sqe->file_index = slot << NPR_CQE_RECORD_SHIFT;
			sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
			io_uring_sqe_set_data64(sqe, RECORD_TAG | slot);
			__atomic_store_n(&r->unsubmitted,
					 r->unsubmitted + 1, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&r->sq_lock);
		if (slot == NPR_CQE_NO_RECORD)
			__atomic_fetch_sub(&r->inflight, 1, __ATOMIC_RELEASE);
		else if (!sqe)	/* no CQE will name the record */
			npr_ring_record_free_locked(r, slot);
	} else {
		fill_cqe(&r->cq[r->cq_tail & (r->entries - 1)], j, res, status,
			 started, now);
		__atomic_store_n(&r->cq_tail, r->cq_tail + 1,
				 __ATOMIC_RELEASE);
		if (r->path == NPR_RING_PATH_URING) {
			struct io_uring_sqe *sqe;

			pthread_mutex_lock(&r->sq_lock);
			sqe = get_sqe(r);
			if (sqe) {
				io_uring_prep_nop(sqe);
				io_uring_sqe_set_data64(sqe, j->sqe.user_data);
				__atomic_store_n(&r->unsubmitted,
					 r->unsubmitted + 1, __ATOMIC_RELEASE);
			} else {
				__atomic_fetch_add(&r->notes_lost, 1,
						   __ATOMIC_RELEASE);
			}
			pthread_mutex_unlock(&r->sq_lock);
		} else {
			__atomic_store_n(&r->signal, true, __ATOMIC_RELEASE);
			if (r->want && r->cq_tail -
			    __atomic_load_n(&r->cq_head, __ATOMIC_ACQUIRE) >=
			    r->want) {
				/* signalled by flush(), after the unlock */
				r->want = 0;
				__atomic_store_n(&r->wake_reaper, true,
						 __ATOMIC_RELEASE);
			}
		}
	}
	j->link = NULL;
	job_free(r, j);
	if (!link)
		return;
	if (res >= 0 && !r->stop) {
		/* the chain goes on first */
		link->next = r->head;
		r->head = link;
		if (!r->tail)
			r->tail = link;
		wake_locked(r, 1);
	} else {
		break_chain_locked(r, link);
	}
}

/**
 * npr_ring_complete_locked() - post a job's completion (async.c's way in)
 * @r: the ring, r->lock held.
 * @j: the job, freed; its request, if it still holds one, released.
 * @res: the result.
 * @status: enum npr_job_status.
 * @started: when it started, 0: now.
 * @msg: why, when @res < 0.
 */
void npr_ring_complete_locked(struct npr_ring *r, struct job *j, int res,
			      int status, uint64_t started, const char *msg)
{
	complete_locked(r, j, res, status, started, msg);
}

/**
 * npr_ring_wake_locked() - wake up to @n sleeping workers
 * @r: the ring, r->lock held.
 * @n: how many.
 *
 * Return: whether a wake-up waits for npr_ring_flush().
 */
bool npr_ring_wake_locked(struct npr_ring *r, int n)
{
	return wake_locked(r, n);
}

/**
 * npr_ring_flush() - announce what completed, after r->lock is released
 * @r: the ring.
 */
void npr_ring_flush(struct npr_ring *r)
{
	flush(r);
}

/* ---- running jobs ------------------------------------------------------- */

static int run_arg_job(struct npr_ring *r, struct job *j)
{
	const struct npr_uarg_job *ja = npr_uarg_job(j->sqe.opcode);
	unsigned long mark = npr_err_mark();
	int err;

	switch (ja->cmd) {
	case NPR_IOCTL_IMPORT:
		err = npr_model_import_ioctl(r->dev, &j->arg);
		break;
	case NPR_IOCTL_EXPORT:
		err = npr_model_export_ioctl(r->dev, &j->arg);
		break;
	default:
		err = npr_request_state(j->rq, &j->arg.st, ja->cmd);
	}
	err = npr_err_default(err, mark);
	if (!err || err == -EMSGSIZE)
		npr_uarg_out(j->uarg, &j->arg, ja->ksize, j->usize);
	if (!err && j->sqe.opcode == NPR_OP_IMPORT)
		return (int)j->arg.im.exec;
	return err;
}

/* Sleep len us, or until the deadline if that comes first: -ETIME. */
static int run_nop(const struct job *j)
{
	uint64_t end = npr_now_ns() + j->sqe.len * 1000ull, now;
	struct timespec ts;

	if (!j->sqe.len)
		return 0;
	if (j->sqe.deadline_ns && j->sqe.deadline_ns < end) {
		ts.tv_sec = j->sqe.deadline_ns / 1000000000ull;
		ts.tv_nsec = j->sqe.deadline_ns % 1000000000ull;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
				       NULL) == EINTR)
			;
		now = npr_now_ns();
		return npr_err(-ETIME, "the deadline passed while it ran; %llu us of sleep were left",
			       (unsigned long long)(end > now ? end - now : 0) /
			       1000);
	}
	usleep(j->sqe.len);
	return 0;
}

static int run_job(struct npr_ring *r, struct worker *w, struct job *j)
{
	uint32_t h;
	int err;

	if (npr_uarg_job(j->sqe.opcode))
		return run_arg_job(r, j);
	switch (j->sqe.opcode) {
	case NPR_OP_NOP:
		return run_nop(j);
	case NPR_OP_INFER:
		return npr_request_infer(j->rq, j->sqe.deadline_ns);
	case NPR_OP_COMPILE:
		err = npr_model_compile_default(r->dev, j->sqe.handle, &h);
		return err ? err : (int)h;
	case NPR_OP_LOAD:
		err = npr_ring_load(r->dev, w->has_ring ? &w->ring : NULL,
				    j->path, &h);
		return err ? err : (int)h;
	}
	return -EINVAL;
}

/* ---- deadlines of waiting jobs ------------------------------------------ */

/*
 * A job waiting in the queue or behind a running job of its chain
 * completes with -ETIME at its deadline, whether or not a worker is free:
 * every worker may be busy with a long job, so the timer cannot live in
 * their loops.  One timer thread per ring sleeps until the earliest
 * deadline of a job not yet started; SUBMIT wakes it when a job brings an
 * earlier one.  Jobs without a deadline never touch it.
 */

static void min_deadline(uint64_t *t, const struct job *j)
{
	if (j->sqe.deadline_ns && (!*t || j->sqe.deadline_ns < *t))
		*t = j->sqe.deadline_ns;
}

/* The earliest deadline of a job not started yet, 0 if none. */
static uint64_t next_deadline_locked(struct npr_ring *r)
{
	const struct job *j, *l;
	uint64_t t = 0;
	int i;

	for (j = r->head; j; j = j->next)
		for (l = j; l; l = l->link)
			min_deadline(&t, l);
	for (i = 0; i < r->nworkers; i++)
		for (l = r->cur[i] ? r->cur[i]->link : NULL; l; l = l->link)
			min_deadline(&t, l);
	npr_ring_async_deadline_locked(r, &t);
	return t;
}

static bool expired(const struct job *j, uint64_t now)
{
	return j->sqe.deadline_ns && now >= j->sqe.deadline_ns;
}

#define EXPIRED_MSG "the deadline passed before the job started"

/* Expire the links of @j that are due: the rest of the chain breaks. */
static bool expire_links_locked(struct npr_ring *r, struct job *j,
				uint64_t now)
{
	struct job **lp;

	for (lp = &j->link; *lp; lp = &(*lp)->link) {
		struct job *t = *lp;

		if (!expired(t, now))
			continue;
		*lp = NULL;
		complete_locked(r, t, -ETIME, NPR_JOB_EXPIRED, 0, EXPIRED_MSG);
		return true;
	}
	return false;
}

/* Complete every job not started whose deadline is due; whether any. */
static bool expire_locked(struct npr_ring *r, uint64_t now)
{
	struct job **pp = &r->head, *j, *prev = NULL;
	struct async_op *op;
	bool any = false;
	int i;

	while ((j = *pp)) {
		if (expired(j, now)) {
			*pp = j->next;
			if (r->tail == j)
				r->tail = prev;
			j->next = NULL;
			complete_locked(r, j, -ETIME, NPR_JOB_EXPIRED, 0,
					EXPIRED_MSG);
			any = true;
			continue;
		}
		any |= expire_links_locked(r, j, now);
		prev = j;
		pp = &j->next;
	}
	for (i = 0; i < r->nworkers; i++)
		if (r->cur[i])
			any |= expire_links_locked(r, r->cur[i], now);
	for (op = r->async; op; op = op->next)
		if (op->j && !op->finishing)
			any |= expire_links_locked(r, op->j, now);
	return any | npr_ring_async_expire_locked(r, now);
}

static void *timer(void *p)
{
	struct npr_ring *r = p;

	pthread_mutex_lock(&r->lock);
	while (!r->stop) {
		struct timespec ts;

		if (expire_locked(r, npr_now_ns())) {
			/* a DRAIN job may have been holding the queue */
			if (r->head)
				wake_locked(r, INT_MAX);
			pthread_mutex_unlock(&r->lock);
			flush(r);
			pthread_mutex_lock(&r->lock);
			continue;
		}
		r->timer_at = next_deadline_locked(r);
		if (!r->timer_at) {
			pthread_cond_wait(&r->timer_cv, &r->lock);
			continue;
		}
		ts.tv_sec = r->timer_at / 1000000000ull;
		ts.tv_nsec = r->timer_at % 1000000000ull;
		pthread_cond_timedwait(&r->timer_cv, &r->lock, &ts);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* The first job a worker may start, unlinked from the queue, or NULL. */
static struct job *pick_locked(struct npr_ring *r)
{
	struct job *j = r->head;

	if (!j || r->drain_running)
		return NULL;
	if (j->sqe.flags & NPR_SQE_DRAIN) {
		if (r->nrunning)
			return NULL;
		r->drain_running = true;
	}
	r->head = j->next;
	if (!r->head)
		r->tail = NULL;
	j->next = NULL;
	return j;
}

/*
 * Sleep until the worker's io_uring has a completion (a wake-up), then
 * consume it.  The wait is poll(2) on the ring's descriptor, readable
 * when its CQ is not empty: one syscall like io_uring_enter(GETEVENTS),
 * and one that every tool knows may block (valgrind 3.19 runs the other
 * threads only during syscalls it knows to block, and io_uring_enter is
 * not among them: workers waiting in it stopped the whole process).
 */
static void wait_wake(struct worker *w)
{
	struct pollfd p = { .fd = w->ring.ring_fd, .events = POLLIN };
	struct io_uring_cqe *c;
	unsigned int head, seen = 0;

	if (!io_uring_cq_ready(&w->ring))
		poll(&p, 1, -1);
	io_uring_for_each_cqe(&w->ring, head, c)
		seen++;
	io_uring_cq_advance(&w->ring, seen);
}

static void *worker(void *p)
{
	struct worker *w = p;
	struct npr_ring *r = w->r;
	int idx = w->idx;
	struct job *j;

	pthread_mutex_lock(&r->lock);
	while (!r->stop) {
		unsigned long mark;
		uint64_t started;
		bool drain;
		int res, status;

		j = pick_locked(r);
		if (!j && !w->has_ring) {
			pthread_cond_wait(&r->work, &r->lock);
			continue;
		}
		if (!j) {
			/* the event loop: a waker clears sleeping */
			w->sleeping = true;
			pthread_mutex_unlock(&r->lock);
			wait_wake(w);
			pthread_mutex_lock(&r->lock);
			w->sleeping = false;
			continue;
		}
		drain = j->sqe.flags & NPR_SQE_DRAIN;
		started = npr_now_ns();
		if (j->sqe.deadline_ns && started > j->sqe.deadline_ns) {
			if (drain)
				r->drain_running = false;
			/* it never ran: no running time (started = finished) */
			complete_locked(r, j, -ETIME, NPR_JOB_EXPIRED, 0,
					EXPIRED_MSG);
			if (r->head)
				wake_locked(r, INT_MAX);
			pthread_mutex_unlock(&r->lock);
			flush(r);
			pthread_mutex_lock(&r->lock);
			continue;
		}
		if (j->sqe.opcode == NPR_OP_INFER && r->infer_async) {
			/* the backend completes it: the worker is free */
			r->nrunning++;
			npr_ring_async_run_locked(r, j, started);
			pthread_mutex_unlock(&r->lock);
			flush(r);
			pthread_mutex_lock(&r->lock);
			continue;
		}
		r->cur[idx] = j;
		r->nrunning++;
		if (j->rq)
			__atomic_store_n(&j->rq->cancel, 0, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&r->lock);
		mark = npr_err_mark();
		res = npr_err_default(run_job(r, w, j), mark);
		pthread_mutex_lock(&r->lock);
		r->cur[idx] = NULL;
		r->nrunning--;
		if (drain)
			r->drain_running = false;
		status = res >= 0 ? NPR_JOB_OK : NPR_JOB_FAILED;
		if (res == -ETIME && j->sqe.deadline_ns &&
		    (j->sqe.opcode == NPR_OP_INFER ||
		     j->sqe.opcode == NPR_OP_NOP))
			status = NPR_JOB_EXPIRED;	/* while it ran */
		if (j->rq) {
			/* set under the lock, so no CANCEL can come late */
			if (res == -ECANCELED && j->rq->cancel)
				status = NPR_JOB_CANCELED;
			__atomic_store_n(&j->rq->cancel, 0, __ATOMIC_RELAXED);
		}
		complete_locked(r, j, res, status, started, npr_last_error());
		/* a drain job may now be startable */
		if (r->head)
			wake_locked(r, INT_MAX);
		pthread_mutex_unlock(&r->lock);
		flush(r);
		pthread_mutex_lock(&r->lock);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* ---- setup and teardown ------------------------------------------------- */

static int io_uring_sysctl(void)
{
	FILE *f = fopen("/proc/sys/kernel/io_uring_disabled", "r");
	int v = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%d", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

static bool is_io_uring_fd(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = 0;
	return strstr(link, "io_uring") != NULL;
}

/* Whether @ring's kernel has IORING_OP_MSG_RING (5.18) and _READ. */
static bool has_msg_ring(struct io_uring *ring)
{
	struct io_uring_probe *p = io_uring_get_probe_ring(ring);
	bool ok = p && io_uring_opcode_supported(p, IORING_OP_MSG_RING) &&
		  io_uring_opcode_supported(p, IORING_OP_READ);

	if (p)
		io_uring_free_probe(p);
	return ok;
}

/*
 * Whether MSG_RING passes cqe->flags (IORING_MSG_RING_FLAGS_PASS, Linux
 * 6.3): one message from @ring into a ring of its own; an older kernel
 * refuses the flag with -EINVAL.
 */
static bool has_msg_flags_pass(struct io_uring *ring)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *c;
	struct io_uring t;
	bool ok = false;

	if (io_uring_queue_init(2, &t, 0) < 0)
		return false;
	sqe = io_uring_get_sqe(ring);
	if (sqe) {
		io_uring_prep_msg_ring(sqe, t.ring_fd, 0, 0,
				       IORING_MSG_RING_FLAGS_PASS);
		sqe->file_index = 1u << NPR_CQE_RECORD_SHIFT;
		if (io_uring_submit_and_wait(ring, 1) == 1 &&
		    !io_uring_peek_cqe(ring, &c)) {
			ok = c->res == 0;
			io_uring_cqe_seen(ring, c);
		}
	}
	io_uring_queue_exit(&t);
	return ok;
}

static int ring_create(struct npr_device *dev, struct npr_ring_setup *a,
		       struct npr_ring **out)
{
	const char *env = npr_env(NPR_ENV_RING_FALLBACK);
	struct npr_ring *r;
	int i, err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->dev = dev;
	r->entries = a->cq_entries ? a->cq_entries : RING_DEFAULT_ENTRIES;
	r->inline_infer = npr_backend_has(dev, NPR_BACKEND_CAP_INLINE_INFER);
	r->nworkers = r->inline_infer ? 2 : npr_cpu_count();
	r->infer_async = npr_backend_has_infer_async(dev);
	pthread_mutex_init(&r->lock, NULL);
	pthread_mutex_init(&r->sq_lock, NULL);
	pthread_cond_init(&r->work, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&r->reaped, &ca);
		pthread_cond_init(&r->timer_cv, &ca);
		pthread_condattr_destroy(&ca);
		pthread_cond_init(&r->async_cv, NULL);
	}
	r->path = NPR_RING_PATH_URING;
	if ((a->flags & NPR_RING_SETUP_FALLBACK) ||
	    (env && strcmp(env, "0") && *env)) {
		r->path = NPR_RING_PATH_FALLBACK;
		r->reason = NPR_RING_WHY_FORCED;
	} else if (io_uring_sysctl() == 2) {
		r->path = NPR_RING_PATH_FALLBACK;
		r->reason = NPR_RING_WHY_DISABLED;
	} else {
		err = io_uring_queue_init(r->entries, &r->cr, 0);
		if (err < 0) {
			r->path = NPR_RING_PATH_FALLBACK;
			r->reason = (err == -EPERM && io_uring_sysctl()) ?
				    NPR_RING_WHY_DISABLED : NPR_RING_WHY_ERRNO;
			r->err = -err;
		}
	}
	if (a->flags & NPR_RING_SETUP_ATTACH) {
		err = 0;
		if (r->path != NPR_RING_PATH_URING)
			err = npr_err(-EOPNOTSUPP,
				      "attaching a ring needs the io_uring path, which is not available");
		else if (a->attach_fd < 0 || !is_io_uring_fd(a->attach_fd))
			err = npr_err(-EBADF, "attach_fd %d is not an io_uring",
				      a->attach_fd);
		else if (!has_msg_ring(&r->cr))
			err = npr_err(-EOPNOTSUPP,
				      "attaching a ring needs IORING_OP_MSG_RING (Linux 5.18), which this kernel lacks");
		else if ((a->flags & NPR_RING_SETUP_RECORDS) &&
			 !has_msg_flags_pass(&r->cr))
			err = npr_err(-EOPNOTSUPP,
				      "NPR_RING_SETUP_RECORDS needs IORING_MSG_RING_FLAGS_PASS (Linux 6.3) to name a record in the CQE; this kernel lacks it: attach without records, or reap the fd's own ring");
		if (err) {
			if (r->path == NPR_RING_PATH_URING)
				io_uring_queue_exit(&r->cr);
			pthread_mutex_destroy(&r->lock);
			pthread_mutex_destroy(&r->sq_lock);
			pthread_cond_destroy(&r->work);
			pthread_cond_destroy(&r->reaped);
			pthread_cond_destroy(&r->timer_cv);
			pthread_cond_destroy(&r->async_cv);
			free(r);
			return err;
		}
		r->attach = true;
		r->attach_fd = a->attach_fd;
		r->records = a->flags & NPR_RING_SETUP_RECORDS;
	}
	if (r->records) {
		r->rec_used = calloc(r->entries, sizeof(*r->rec_used));
		r->rec_free = calloc(r->entries, sizeof(*r->rec_free));
		/* the lowest slot first */
		for (i = r->entries; r->rec_free && i-- > 0;)
			r->rec_free[r->rec_nfree++] = (uint16_t)i;
	}
	r->cq = calloc(r->entries, sizeof(*r->cq));
	r->cur = calloc(r->nworkers, sizeof(*r->cur));
	r->tids = calloc(r->nworkers, sizeof(*r->tids));
	r->w = calloc(r->nworkers, sizeof(*r->w));
	r->elog_n = r->entries;
	r->elog = calloc(r->elog_n, sizeof(*r->elog));
	err = -ENOMEM;
	if (!r->cq || !r->cur || !r->tids || !r->w || !r->elog ||
	    (r->records && (!r->rec_used || !r->rec_free)))
		goto fail;
	/*
	 * Each worker's own io_uring, all or none, woken by MSG_RING: else
	 * (also on a kernel without MSG_RING) the condition variable.
	 */
	r->wloop = r->path == NPR_RING_PATH_URING && has_msg_ring(&r->cr);
	for (i = 0; r->wloop && i < r->nworkers; i++) {
		if (io_uring_queue_init(WORKER_RING_ENTRIES, &r->w[i].ring,
					0) < 0) {
			while (i-- > 0)
				io_uring_queue_exit(&r->w[i].ring);
			r->wloop = false;
			break;
		}
	}
	for (i = 0; i < r->nworkers; i++) {
		r->w[i].r = r;
		r->w[i].idx = i;
		r->w[i].has_ring = r->wloop;
		err = -pthread_create(&r->tids[i], NULL, worker, &r->w[i]);
		if (err)
			goto fail_threads;
	}
	err = -pthread_create(&r->timer_tid, NULL, timer, r);
	if (err)
		goto fail_threads;
	r->has_timer = true;
	*out = r;
	return 0;
fail_threads:
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	wake_locked(r, INT_MAX);
	pthread_mutex_unlock(&r->lock);
	flush(r);
	while (i-- > 0)
		pthread_join(r->tids[i], NULL);
fail:
	for (i = 0; r->wloop && i < r->nworkers; i++)
		io_uring_queue_exit(&r->w[i].ring);
	free(r->w);
	if (r->path == NPR_RING_PATH_URING)
		io_uring_queue_exit(&r->cr);
	free(r->cq);
	free(r->rec_used);
	free(r->rec_free);
	free(r->cur);
	free(r->tids);
	free(r->elog);
	free(r);
	return err;
}

static void report(const struct npr_ring *r, struct npr_ring_setup *a)
{
	a->cq_entries = r->entries;
	a->ring_fd = r->path == NPR_RING_PATH_URING ? r->cr.ring_fd :
						      r->dev->fd;
	a->path = r->path;
	a->reason = r->reason;
	a->err = r->err;
	a->workers = r->nworkers;
}

/**
 * npr_ring_get() - the device's ring, set up once
 * @dev: the device.
 * @a: the setup to create it with if there is none yet, or NULL: then
 *     *@out is NULL when nothing set the ring up.  dev->lock serialises
 *     concurrent first calls.
 * @out: Out. The ring.
 *
 * Return: 0; -EBUSY when @a asks for another ring than the one set up;
 * ring_create()'s errors.
 */
int npr_ring_get(struct npr_device *dev, struct npr_ring_setup *a,
		 struct npr_ring **out)
{
	int err = 0;

	pthread_mutex_lock(&dev->lock);
	if (!dev->ring && a)
		err = ring_create(dev, a, &dev->ring);
	else if (a && (a->flags || (a->cq_entries &&
				    a->cq_entries != dev->ring->entries)))
		err = npr_err(-EBUSY, "the ring is already set up (%u entries, %s)",
			      dev->ring->entries,
			      dev->ring->attach ? "attached" : "own ring");
	*out = dev->ring;
	pthread_mutex_unlock(&dev->lock);
	return err;
}

/**
 * npr_ring_setup() - NPR_IOCTL_RING_SETUP: the device's ring, created once
 * @dev: the device.
 * @a: the argument, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_ring_setup(struct npr_device *dev, struct npr_ring_setup *a)
{
	const unsigned int known = NPR_RING_SETUP_FALLBACK |
				   NPR_RING_SETUP_ATTACH | NPR_RING_SETUP_RECORDS;
	struct npr_ring *r;
	int err;

	if (a->flags & ~known)
		return npr_err(-EOPNOTSUPP, "unknown flag bits 0x%x",
			       a->flags & ~known);
	if ((a->flags & NPR_RING_SETUP_RECORDS) &&
	    !(a->flags & NPR_RING_SETUP_ATTACH))
		return npr_err(-EINVAL, "NPR_RING_SETUP_RECORDS goes with NPR_RING_SETUP_ATTACH: REAP gives the whole completion already");
	if (a->reserved || a->ring_fd || a->path || a->reason || a->err ||
	    a->workers ||
	    (!(a->flags & NPR_RING_SETUP_ATTACH) && a->attach_fd))
		return npr_err(-EINVAL, "reserved or output field is not zero");
	if (a->cq_entries > RING_MAX_ENTRIES ||
	    (a->cq_entries & (a->cq_entries - 1)))
		return npr_err(-EINVAL, "cq_entries %u is not a power of two in 1..%d",
			       a->cq_entries, RING_MAX_ENTRIES);
	err = npr_ring_get(dev, a, &r);
	if (r)
		report(r, a);
	return err;
}

/**
 * npr_ring_destroy() - stop the workers and free the ring, at close
 * @dev: the device; no job runs after this returns.
 */
void npr_ring_destroy(struct npr_device *dev)
{
	struct npr_ring *r = dev->ring;
	struct job *j;
	int i;

	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	/*
	 * Queued jobs never run.  In attach mode the caller's ring outlives
	 * us: they complete with -ECANCELED there; otherwise they are
	 * dropped with the fd's own ring.
	 */
	while ((j = r->head)) {
		r->head = j->next;
		if (r->attach) {
			complete_locked(r, j, -ECANCELED, NPR_JOB_CANCELED, 0,
					"the fd was closed before the job ran");
		} else {
			struct job *l = j->link;

			while (l) {
				struct job *n = l->link;

				job_free(r, l);
				l = n;
			}
			job_free(r, j);
		}
	}
	r->tail = NULL;
	wake_locked(r, INT_MAX);
	pthread_cond_signal(&r->timer_cv);
	pthread_mutex_unlock(&r->lock);
	flush(r);
	if (r->has_timer)
		pthread_join(r->timer_tid, NULL);
	/* running jobs finish; links behind them complete as cancelled */
	for (i = 0; i < r->nworkers; i++)
		pthread_join(r->tids[i], NULL);
	/* and those the backend runs complete as cancelled, the device done */
	npr_ring_async_stop(r);
	flush(r);
	for (i = 0; r->wloop && i < r->nworkers; i++)
		io_uring_queue_exit(&r->w[i].ring);
	free(r->w);
	if (r->path == NPR_RING_PATH_URING)
		io_uring_queue_exit(&r->cr);
	pthread_mutex_destroy(&r->lock);
	pthread_mutex_destroy(&r->sq_lock);
	pthread_cond_destroy(&r->work);
	pthread_cond_destroy(&r->reaped);
	pthread_cond_destroy(&r->timer_cv);
	pthread_cond_destroy(&r->async_cv);
	for (i = 0; i < (int)r->elog_n; i++)
		free(r->elog[i].msg);
	free(r->elog);
	free(r->cq);
	free(r->rec_used);
	free(r->rec_free);
	free(r->cur);
	free(r->tids);
	free(r);
	dev->ring = NULL;
}

/**
 * npr_ring_job_error() - GET_ERROR with NPR_GET_ERROR_JOB
 * @dev: the device.
 * @user_data: the failed job's.
 * @msg: Out. A copy of its message, freed by the caller.
 * @res: Out. Its result.
 *
 * Return: 0; -ENOENT when no recent failure has @user_data (or the
 * device has no ring); -ENOMEM.
 */
int npr_ring_job_error(struct npr_device *dev, uint64_t user_data,
		       char **msg, int32_t *res)
{
	struct npr_ring *r;
	unsigned int i;
	int err = -ENOENT;

	pthread_mutex_lock(&dev->lock);
	r = dev->ring;
	pthread_mutex_unlock(&dev->lock);
	if (!r)
		return -ENOENT;
	pthread_mutex_lock(&r->lock);
	for (i = 1; i <= r->elog_n; i++) {
		const struct job_err *e =
			&r->elog[(r->elog_next + r->elog_n - i) % r->elog_n];

		if (!e->msg || e->user_data != user_data)
			continue;
		*msg = strdup(e->msg);
		*res = e->res;
		err = *msg ? 0 : -ENOMEM;
		break;
	}
	pthread_mutex_unlock(&r->lock);
	return err;
}

/* ---- submission --------------------------------------------------------- */

static int check_sqe(struct npr_device *dev, const struct npr_sqe *s,
		     unsigned int i)
{
	if (s->reserved0 || s->reserved1 || s->reserved2[0] ||
	    s->reserved2[1] || s->reserved2[2])
		return npr_err(-EINVAL, "sqe %u: reserved field is not zero", i);
	if (s->opcode >= NPR_OP_MAX)
		return npr_err(-EINVAL, "sqe %u: unknown opcode %u", i,
			       s->opcode);
	if (s->flags & ~(NPR_SQE_LINK | NPR_SQE_DRAIN))
		return npr_err(-EOPNOTSUPP, "sqe %u: unknown flag bits 0x%x", i,
			       s->flags & ~(NPR_SQE_LINK | NPR_SQE_DRAIN));
	switch (s->opcode) {
	case NPR_OP_NOP:
		if (s->handle || s->addr)
			return npr_err(-EINVAL, "sqe %u: NOP takes no handle or addr",
				       i);
		if (s->len > NOP_MAX_US)
			return npr_err(-EINVAL, "sqe %u: NOP len %u us exceeds %u",
				       i, s->len, NOP_MAX_US);
		break;
	case NPR_OP_INFER:
	case NPR_OP_COMPILE:
		if (s->addr || s->len)
			return npr_err(-EINVAL, "sqe %u: addr and len must be 0",
				       i);
		break;
	case NPR_OP_LOAD:
		if (s->handle || s->len || !s->addr)
			return npr_err(-EINVAL, "sqe %u: LOAD needs addr (a path) and nothing else",
				       i);
		break;
	case NPR_OP_CANCEL:
		if (s->handle || s->len || s->flags || s->deadline_ns)
			return npr_err(-EINVAL, "sqe %u: CANCEL takes only addr",
				       i);
		break;
	default:	/* the jobs with an argument struct */
		if (s->handle || s->len || !s->addr)
			return npr_err(-EINVAL, "sqe %u: opcode %u needs addr (its argument struct) and no handle or len",
				       i, s->opcode);
		break;
	}
	return 0;
}

/*
 * Hold request @h for job @i: a request with a job in flight is refused,
 * unless that job is an earlier one of the same chain in this batch (the
 * chain runs them one after another).
 */
static int hold_request(struct npr_device *dev, struct job **jobs,
			const struct npr_sqe *sq, unsigned int i, uint32_t h)
{
	struct job *j = jobs[i];
	unsigned int k;
	int err;

	j->req = h;
	err = npr_request_acquire(dev, h, &j->rq);
	for (k = i; err == -EBUSY && k-- > 0 &&
	     (sq[k].flags & NPR_SQE_LINK);) {
		if (jobs[k]->rq && jobs[k]->req == h) {
			j->rq = jobs[k]->rq;
			npr_request_hold(dev, j->rq);
			err = 0;
		}
	}
	return err;
}

/* Cancel the job with @ud chained behind @j: 0, or -ENOENT. */
static int cancel_link_locked(struct npr_ring *r, struct job *j,
			      uint64_t ud)
{
	struct job **lp;

	for (lp = &j->link; *lp; lp = &(*lp)->link) {
		struct job *t = *lp;

		if (t->sqe.user_data != ud)
			continue;
		*lp = NULL;
		complete_locked(r, t, -ECANCELED, NPR_JOB_CANCELED, 0,
				"cancelled before it started");
		return 0;
	}
	return -ENOENT;
}

/* Find the job with @ud among queued jobs and chain tails; unlink it. */
static int cancel_locked(struct npr_ring *r, uint64_t ud)
{
	struct async_op *op;
	struct job **pp, *j;
	int i;

	i = npr_ring_async_cancel_locked(r, ud);
	if (i != -ENOENT)
		return i;
	for (i = 0; i < r->nworkers; i++) {
		j = r->cur[i];
		if (!j || j->sqe.user_data != ud)
			continue;
		if (j->sqe.opcode != NPR_OP_INFER)
			return -EALREADY;
		/* the backend stops at its next node boundary, if any */
		__atomic_store_n(&j->rq->cancel, 1, __ATOMIC_RELAXED);
		return 0;
	}
	for (pp = &r->head; (j = *pp); pp = &j->next) {
		if (j->sqe.user_data != ud)
			continue;
		*pp = j->next;
		if (r->tail == j) {
			struct job *t = r->head;

			while (t && t->next)
				t = t->next;
			r->tail = t;
		}
		/* cancelled: the rest of its chain cannot run */
		complete_locked(r, j, -ECANCELED, NPR_JOB_CANCELED, 0,
				"cancelled before it started");
		return 0;
	}
	for (j = r->head; j; j = j->next)
		if (!cancel_link_locked(r, j, ud))
			return 0;
	for (i = 0; i < r->nworkers; i++)
		if (r->cur[i] && !cancel_link_locked(r, r->cur[i], ud))
			return 0;
	for (op = r->async; op; op = op->next)
		if (op->j && !cancel_link_locked(r, op->j, ud))
			return 0;
	return -ENOENT;
}

/**
 * npr_ring_submit() - NPR_IOCTL_SUBMIT
 * @dev: the device.
 * @a: the argument, copied in; @a->submitted goes back whatever happens.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_ring_submit(struct npr_device *dev, struct npr_submit *a)
{
	const struct npr_sqe *sq = (const void *)(uintptr_t)a->sqes;
	struct job **jobs = NULL, *prev = NULL;
	struct npr_ring *r;
	unsigned int i, n, fit, room, posted;
	int queued = 0;
	uint64_t now;
	int err;

	a->submitted = 0;
	if (a->flags)
		return npr_err(-EOPNOTSUPP, "unknown flag bits 0x%x", a->flags);
	if (!a->count || !sq)
		return npr_err(-EINVAL, "no SQEs (count %u, sqes %s)", a->count,
			       sq ? "set" : "NULL");
	err = npr_ring_get(dev, NULL, &r);
	if (err)
		return err;
	if (!r) {
		struct npr_ring_setup s = { .size = sizeof(s) };

		err = npr_ring_get(dev, &s, &r);
		if (err)
			return err;
	}
	if (a->count > r->entries)
		return npr_err(-EINVAL, "%u SQEs exceed the %u completion entries",
			       a->count, r->entries);
	n = a->count;
	jobs = calloc(n, sizeof(*jobs));
	if (!jobs)
		return -ENOMEM;
	now = npr_now_ns();
	for (i = 0; i < n; i++) {
		struct job *j;

		err = check_sqe(dev, &sq[i], i);
		if (err)
			goto fail;
		j = calloc(1, sizeof(*j));
		if (!j) {
			err = -ENOMEM;
			goto fail;
		}
		jobs[i] = j;
		j->sqe = sq[i];
		j->queued_ns = now;
		if (npr_uarg_job(j->sqe.opcode)) {
			j->uarg = (void *)(uintptr_t)j->sqe.addr;
			err = npr_uarg_job_in(npr_uarg_job(j->sqe.opcode),
					      j->uarg, &j->arg, &j->usize);
			if (!err && j->sqe.opcode >= NPR_OP_STATE_GET)
				err = hold_request(dev, jobs, sq, i,
						   j->arg.st.req);
		} else if (j->sqe.opcode == NPR_OP_INFER) {
			err = hold_request(dev, jobs, sq, i, j->sqe.handle);
		}
		if (err) {
			char why[256];

			/* npr_err() writes the buffer it would read */
			snprintf(why, sizeof(why), "%s", npr_last_error());
			npr_err(err, "sqe %u: %s", i, why);
			goto fail;
		}
		if (j->sqe.opcode == NPR_OP_LOAD) {
			j->path = strndup((const char *)(uintptr_t)j->sqe.addr,
					  4096);
			if (!j->path) {
				err = -ENOMEM;
				goto fail;
			}
		}
	}

	pthread_mutex_lock(&r->lock);
	if (r->stop) {
		pthread_mutex_unlock(&r->lock);
		err = npr_err(-EBADF, "the fd is closing");
		goto fail_all;
	}
	/* back-pressure: only whole chains that fit */
	room = r->entries - __atomic_load_n(&r->inflight, __ATOMIC_ACQUIRE);
	fit = 0;
	for (i = 0; i < n && i < room; i++)
		if (!(sq[i].flags & NPR_SQE_LINK) || i == n - 1)
			fit = i + 1;
	if (!fit) {
		pthread_mutex_unlock(&r->lock);
		err = npr_err(-EBUSY, "completion queue full (%u in flight): reap first",
			      r->entries - room);
		goto fail_all;
	}
	__atomic_fetch_add(&r->inflight, fit, __ATOMIC_ACQUIRE);
	posted = r->posted;
	for (i = 0; i < fit; i++) {
		struct job *j = jobs[i];
		bool chained = prev != NULL;

		jobs[i] = NULL;
		if (chained)
			prev->link = j;
		prev = (j->sqe.flags & NPR_SQE_LINK) ? j : NULL;
		if (chained)
			continue;
		if (j->sqe.opcode == NPR_OP_CANCEL) {
			int res = cancel_locked(r, j->sqe.addr);
			char why[96];

			snprintf(why, sizeof(why), res == -EALREADY ?
				 "job %llu is running and cannot be interrupted" :
				 "no job with user_data %llu is in flight",
				 (unsigned long long)j->sqe.addr);
			complete_locked(r, j, res, res < 0 ? NPR_JOB_FAILED :
					NPR_JOB_OK, 0, why);
			continue;
		}
		if (!r->head && !r->drain_running && !prev &&
		    !(j->sqe.flags & NPR_SQE_DRAIN) &&
		    ((j->sqe.opcode == NPR_OP_NOP && !j->sqe.len) ||
		     (j->sqe.opcode == NPR_OP_INFER && r->inline_infer))) {
			/* cannot block: complete at once */
			if (j->sqe.deadline_ns && now > j->sqe.deadline_ns)
				complete_locked(r, j, -ETIME, NPR_JOB_EXPIRED,
						0, EXPIRED_MSG);
			else
				complete_locked(r, j, 0, NPR_JOB_OK, 0, NULL);
			continue;
		}
		j->next = NULL;
		if (r->tail)
			r->tail->next = j;
		else
			r->head = j;
		r->tail = j;
		queued++;
	}
	posted = r->posted != posted;
	for (i = 0; i < fit; i++) {
		/* a deadline earlier than the timer's next wake-up */
		uint64_t d = sq[i].deadline_ns;

		if (d && (!r->timer_at || d < r->timer_at)) {
			r->timer_at = d;
			pthread_cond_signal(&r->timer_cv);
		}
	}
	/* a worker per queued job, not every worker for one job */
	if (queued && wake_locked(r, queued))
		posted = true;
	pthread_mutex_unlock(&r->lock);
	/* only what this call prepared: not a worker's note in flight */
	if (posted)
		flush(r);
	a->submitted = fit;
	err = 0;
	/* the SQEs that did not fit */
	for (i = fit; i < n; i++)
		if (jobs[i])
			job_free(r, jobs[i]);
	free(jobs);
	return err;
fail:
	a->submitted = i;
fail_all:
	for (i = 0; i < n; i++)
		if (jobs[i])
			job_free(r, jobs[i]);
	free(jobs);
	return err;
}
