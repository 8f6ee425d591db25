// SPDX-License-Identifier: MIT
/*
 * Reading completions: REAP copies them out of the fd's completion array
 * (its own ring or the fallback); RING_RECORD hands out the record of one
 * completion that went to an attached ring (NPR_RING_SETUP_RECORDS).
 *
 * The records: in attach mode with NPR_RING_SETUP_RECORDS the completion
 * array is a table of slots rather than a queue.  A completing job takes
 * a free slot (there always is one: a job holds its in-flight count until
 * its record is taken, and there are as many slots as jobs may be in
 * flight), writes its whole struct npr_cqe there and names the slot in the
 * upper flag bits of its IORING_OP_MSG_RING CQE.  RING_RECORD copies the
 * record out and frees the slot, in any order.  A MSG_RING that fails
 * (the caller closed its ring) frees its slot in flush() (ring.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <liburing.h>

#include "error.h"
#include "object.h"
#include "sys.h"
#include "ring.h"
#include "ring_priv.h"

/* ---- records ------------------------------------------------------------ */

/**
 * npr_ring_record_free_locked() - free record slot @slot, and its job's
 * place in flight
 * @r: the ring, in records mode; ring->lock held.
 * @slot: a slot in use.
 */
void npr_ring_record_free_locked(struct npr_ring *r, unsigned int slot)
{
	r->rec_used[slot] = 0;
	r->rec_free[r->rec_nfree++] = (uint16_t)slot;
	__atomic_fetch_sub(&r->inflight, 1, __ATOMIC_RELEASE);
}

/**
 * npr_ring_record() - NPR_IOCTL_RING_RECORD
 * @dev: the device.
 * @a: the argument, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_ring_record(struct npr_device *dev, struct npr_ring_record *a)
{
	struct npr_ring *r;
	int err;

	memset(&a->cqe, 0, sizeof(a->cqe));
	if (a->flags)
		return npr_err(-EOPNOTSUPP, "unknown flag bits 0x%x", a->flags);
	if (a->reserved)
		return npr_err(-EINVAL, "reserved field is not zero");
	err = npr_ring_get(dev, NULL, &r);
	if (err)
		return err;
	if (!r || !r->records)
		return npr_err(-EINVAL, "the ring keeps no records: set it up with NPR_RING_SETUP_ATTACH | NPR_RING_SETUP_RECORDS");
	if (a->slot == NPR_CQE_NO_RECORD)
		return npr_err(-EINVAL, "job %llu has no record: it completed while the fd was closing",
			       (unsigned long long)a->user_data);
	if (a->slot >= r->entries)
		return npr_err(-EINVAL, "slot %u: the ring has %u record slots",
			       a->slot, r->entries);
	pthread_mutex_lock(&r->lock);
	if (!r->rec_used[a->slot] || r->cq[a->slot].user_data != a->user_data) {
		err = npr_err(-ENOENT, "slot %u holds no record of job %llu (taken already?)",
			      a->slot, (unsigned long long)a->user_data);
	} else {
		a->cqe = r->cq[a->slot];
		npr_ring_record_free_locked(r, a->slot);
	}
	pthread_mutex_unlock(&r->lock);
	return err;
}

/* ---- reaping ------------------------------------------------------------ */

static void drain_notes(struct npr_ring *r)
{
	if (r->path == NPR_RING_PATH_URING) {
		struct io_uring_cqe *c;
		unsigned int head, n = 0, notes = 0;

		/* notes are NOPs (res 0); a failed wake-up is no note */
		io_uring_for_each_cqe(&r->cr, head, c) {
			n++;
			notes += c->res >= 0;
		}
		if (n)
			io_uring_cq_advance(&r->cr, n);
		r->notes_seen += notes;
	} else {
		eventfd_t v;

		eventfd_read(r->dev->fd, &v);
	}
}

/**
 * npr_ring_reap() - NPR_IOCTL_REAP
 * @dev: the device.
 * @a: the argument, copied in; its outputs go back on -ETIME too.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_ring_reap(struct npr_device *dev, struct npr_reap *a)
{
	struct npr_cqe *out = (void *)(uintptr_t)a->cqes;
	uint64_t deadline = 0;
	struct npr_ring *r;
	int err = 0;

	a->count = 0;
	if (a->flags & ~NPR_REAP_POLL)
		return npr_err(-EOPNOTSUPP, "unknown flag bits 0x%x",
			       a->flags & ~NPR_REAP_POLL);
	if (a->reserved)
		return npr_err(-EINVAL, "reserved field is not zero");
	if (!a->max || !out || a->min > a->max)
		return npr_err(-EINVAL, "need cqes, max >= 1 and min <= max (max %u, min %u)",
			       a->max, a->min);
	err = npr_ring_get(dev, NULL, &r);
	if (err)
		return err;
	if (!r)
		return a->min ? npr_err(-EINVAL, "nothing was submitted on this fd") : 0;
	if (r->attach)
		return npr_err(-EINVAL, "completions go to the attached ring%s",
			       r->records ? ": take their records with RING_RECORD" : "");
	if (__atomic_exchange_n(&r->reaping, 1, __ATOMIC_ACQUIRE))
		return npr_err(-EBUSY, "another thread is reaping this fd");
	if (a->timeout_ns)
		deadline = npr_now_ns() + a->timeout_ns;
	for (;;) {
		unsigned int k = 0, head, tail;

		drain_notes(r);
		/* lockless: see "Locking" at the top */
		head = r->cq_head;
		tail = __atomic_load_n(&r->cq_tail, __ATOMIC_ACQUIRE);
		while (a->count < a->max && head != tail) {
			out[a->count++] = r->cq[head++ & (r->entries - 1)];
			k++;
		}
		__atomic_store_n(&r->cq_head, head, __ATOMIC_RELEASE);
		if (k)
			__atomic_fetch_sub(&r->inflight, k, __ATOMIC_RELEASE);
		if (a->count >= a->min)
			break;
		if (deadline && npr_now_ns() >= deadline) {
			err = -ETIME;
			break;
		}
		if (a->flags & NPR_REAP_POLL) {
			while (__atomic_load_n(&r->cq_tail, __ATOMIC_ACQUIRE) ==
			       r->cq_head &&
			       (!deadline || npr_now_ns() < deadline))
				__builtin_ia32_pause();
			continue;
		}
		if (r->path == NPR_RING_PATH_URING) {
			struct io_uring_cqe *c;
			struct __kernel_timespec ts, *tp = NULL;
			/*
			 * Completion i has note i: wait until the note of the
			 * last completion needed is there.  Notes consumed
			 * already may belong to CQEs not yet copied, and CQEs
			 * copied to notes still to come.
			 */
			unsigned int need = r->cq_head + (a->min - a->count) -
				r->notes_seen -
				__atomic_load_n(&r->notes_lost,
						__ATOMIC_ACQUIRE);

			if ((int)need <= 0)
				continue;

			if (deadline) {
				uint64_t left = deadline - npr_now_ns();

				if ((int64_t)left <= 0)
					continue;
				ts.tv_sec = left / 1000000000ull;
				ts.tv_nsec = left % 1000000000ull;
				tp = &ts;
			}
			/* one wake-up for the whole batch still missing */
			io_uring_wait_cqes(&r->cr, &c, need, tp, NULL);
		} else {
			/*
			 * One wake-up when the whole missing count is there;
			 * the eventfd still counts for pollers of ring_fd.
			 */
			struct timespec ts;

			if (deadline) {
				ts.tv_sec = deadline / 1000000000ull;
				ts.tv_nsec = deadline % 1000000000ull;
			}
			pthread_mutex_lock(&r->lock);
			r->want = a->min - a->count;
			/* a completion that satisfies it clears want */
			while (r->want && !r->stop &&
			       r->cq_tail - r->cq_head < r->want) {
				if (!deadline)
					pthread_cond_wait(&r->reaped, &r->lock);
				else if (pthread_cond_timedwait(&r->reaped,
								&r->lock, &ts))
					break;
			}
			r->want = 0;
			pthread_mutex_unlock(&r->lock);
		}
	}
	__atomic_store_n(&r->reaping, 0, __ATOMIC_RELEASE);
	if (err)
		return npr_err(err, "%u of %u completions before the timeout",
			       a->count, a->min);
	return 0;
}
