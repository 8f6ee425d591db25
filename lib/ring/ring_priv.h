/* SPDX-License-Identifier: MIT */
/*
 * What the parts of the ring share: ring.c (submission, workers,
 * completion, setup) and reap.c (REAP and RING_RECORD, the two ways
 * completions are read).  Locking rules are at the top of ring.c.
 */
#ifndef NPR_RING_PRIV_H
#define NPR_RING_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <liburing.h>

#include "uapi/npuring.h"

struct npr_device;
struct npr_request;

#define RING_MAX_ENTRIES	32768
/* user_data of a record's MSG_RING on the fd's own ring: tag | slot */
#define RECORD_TAG		(0x7ecdull << 48)

/**
 * struct job - one submitted SQE
 * @next: queue link.
 * @link: the job that runs after this one succeeds (NPR_SQE_LINK).
 * @sqe: the caller's SQE.
 * @rq: INFER, STATE_*: the request, marked busy.
 * @req: its handle.
 * @path: LOAD: a copy of the path.
 * @queued_ns: submission time.
 * @arg: IMPORT, EXPORT, STATE_*: the checked copy of the argument struct.
 * @uarg: the caller's struct, where the outputs go back.
 * @usize: its size field.
 */
struct job {
	struct job *next;
	struct job *link;
	struct npr_sqe sqe;
	struct npr_request *rq;
	uint32_t req;
	char *path;
	uint64_t queued_ns;
	union {
		struct npr_import im;
		struct npr_export ex;
		struct npr_state_arg st;
	} arg;
	void *uarg;
	uint32_t usize;
};

/**
 * struct async_op - an INFER job the backend runs without a worker
 * (npr_backend_ops @infer_async; async.c)
 * @next: r->async list link.
 * @prev: the link that points at this one.
 * @r: the ring.
 * @j: the job; NULL once it was completed early (CANCEL, its deadline,
 *     close): the backend's result is then discarded.
 * @rq: the request, held until the backend is done with it, also when
 *      the job was completed early.
 * @started: when the job was handed to the backend.
 * @drain: the job is a DRAIN job (r->drain_running until it completes).
 * @finishing: the backend's result arrived: it is being completed.
 */
struct async_op {
	struct async_op *next, **prev;
	struct npr_ring *r;
	struct job *j;
	struct npr_request *rq;
	uint64_t started;
	bool drain;
	bool finishing;
};

/**
 * struct job_err - the message of a job that completed with res < 0
 * @user_data: the job's.
 * @res: its res.
 * @msg: the detail, allocated.
 */
struct job_err {
	uint64_t user_data;
	int res;
	char *msg;
};

/**
 * struct worker - one worker thread
 * @r: its ring.
 * @idx: index in r->cur.
 * @has_ring: it runs an event loop on @ring (the io_uring path); else it
 *            waits on r->work (the fallback).
 * @sleeping: (r->lock) waiting for work; a waker clears it and posts one
 *            IORING_OP_MSG_RING into @ring.
 * @ring: the worker's own io_uring: wake-ups and its file reads.
 */
struct worker {
	struct npr_ring *r;
	int idx;
	bool has_ring;
	bool sleeping;
	struct io_uring ring;
};

struct npr_ring {
	struct npr_device *dev;
	pthread_mutex_t lock;
	pthread_cond_t work;
	pthread_cond_t reaped;		/* fallback: enough CQEs for the reaper */
	unsigned int want;		/* fallback: CQEs the reaper waits for */
	struct job *head, *tail;	/* runnable jobs, FIFO */
	struct job **cur;		/* per worker: the running job */
	pthread_t *tids;
	struct worker *w;
	bool wloop;			/* workers run io_uring loops */
	int nworkers, nrunning;
	bool drain_running, stop, inline_infer;
	unsigned int entries, inflight;
	struct npr_cqe *cq;
	unsigned int cq_head, cq_tail;
	int path, reason, err;
	bool attach;
	int attach_fd;
	struct io_uring cr;		/* io_uring path */
	pthread_mutex_t sq_lock;	/* cr's SQ; after lock, if both */
	unsigned int unsubmitted;	/* SQEs prepared on cr (sq_lock) */
	unsigned int notes_seen;	/* reaper: notes consumed, ever */
	unsigned int notes_lost;	/* notes that found no SQE, ever */
	bool signal;			/* fallback: eventfd write due */
	bool wake_reaper;		/* fallback: signal reaped */
	int reaping;
	unsigned int posted;		/* completions, ever */
	struct job_err *elog;		/* the last failures, a circle */
	unsigned int elog_n, elog_next;
	pthread_t timer_tid;		/* expires jobs that wait too long */
	bool has_timer;
	pthread_cond_t timer_cv;	/* the timer's sleep; CLOCK_MONOTONIC */
	uint64_t timer_at;		/* its wake-up time, 0: none */
	bool records;			/* NPR_RING_SETUP_RECORDS: cq is */
	uint8_t *rec_used;		/* a table of records, these taken */
	uint16_t *rec_free;		/* the free slots, a stack */
	unsigned int rec_nfree;
	bool infer_async;		/* INFER jobs go to infer_async */
	struct async_op *async;		/* INFER jobs the backend runs */
	unsigned int nasync;		/* ops whose end has not come */
	pthread_cond_t async_cv;	/* nasync reached 0 */
};

int npr_ring_get(struct npr_device *dev, struct npr_ring_setup *a,
		 struct npr_ring **out);

void npr_ring_record_free_locked(struct npr_ring *r, unsigned int slot);

/* ring.c, for async.c */
void npr_ring_complete_locked(struct npr_ring *r, struct job *j, int res,
			      int status, uint64_t started, const char *msg);
bool npr_ring_wake_locked(struct npr_ring *r, int n);
void npr_ring_flush(struct npr_ring *r);

/* async.c: INFER jobs on a backend with infer_async */
void npr_ring_async_run_locked(struct npr_ring *r, struct job *j,
			       uint64_t started);
int npr_ring_async_cancel_locked(struct npr_ring *r, uint64_t user_data);
void npr_ring_async_deadline_locked(struct npr_ring *r, uint64_t *t);
bool npr_ring_async_expire_locked(struct npr_ring *r, uint64_t now);
void npr_ring_async_stop(struct npr_ring *r);

#endif /* NPR_RING_PRIV_H */
