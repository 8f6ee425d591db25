// SPDX-License-Identifier: MIT
/*
 * The ring: SUBMIT / REAP, links, drain, cancel, deadlines, back-pressure,
 * close with jobs in flight, a multi-threaded stress test, the records of
 * completions in an attached ring, and the checks on the setup, submit,
 * reap and record arguments.  Every fixture test runs five times: on the
 * fd's own io_uring, on the eventfd fallback, and with completions posted
 * into the caller's io_uring (MSG_RING): bare, with records, and with
 * records into a ring of 32-byte CQEs; see ring_util.h.  The jobs that do work (INFER, IMPORT / EXPORT, STATE, LOAD,
 * COMPILE) are in ring_jobs_test.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <npuring.h>

#include "harness.h"
#include "ring_util.h"

TEST_F_TIMEOUT(ring, nop_batch, HARNESS_TIMEOUT_RING)
{
	struct npr_sqe s[16];
	struct npr_cqe c[16];
	bool seen[16] = { 0 };
	int i;

	for (i = 0; i < 16; i++)
		s[i] = nop(100 + i, i % 2 ? 100 : 0, 0);
	ASSERT_EQ(submit(self->fd, s, 16), 16);
	ASSERT_EQ(reap(self, c, 16), 16);
	for (i = 0; i < 16; i++) {
		ASSERT_GE(c[i].user_data, 100);
		ASSERT_LT(c[i].user_data, 116);
		EXPECT_FALSE(seen[c[i].user_data - 100]);
		seen[c[i].user_data - 100] = true;
		EXPECT_EQ(c[i].res, 0);
		if (self->full) {
			EXPECT_EQ(c[i].status, NPR_JOB_OK);
			EXPECT_LE(c[i].queued_ns, c[i].started_ns);
			EXPECT_LE(c[i].started_ns, c[i].finished_ns);
		}
	}
}

TEST_F_TIMEOUT(ring, link_order, HARNESS_TIMEOUT_RING)
{
	struct npr_sqe s[6];
	struct npr_cqe c[6];
	int i;

	/* slow, fast, fast: linked, so they finish in order */
	s[0] = nop(1, 30000, NPR_SQE_LINK);
	s[1] = nop(2, 0, NPR_SQE_LINK);
	s[2] = nop(3, 0, 0);
	ASSERT_EQ(submit(self->fd, s, 3), 3);
	ASSERT_EQ(reap(self, c, 3), 3);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(c[i].user_data, (uint64_t)i + 1);
		EXPECT_EQ(c[i].res, 0);
	}
	/* a failing job breaks the rest of its chain */
	memset(s, 0, sizeof(s));
	s[0].opcode = NPR_OP_COMPILE;
	s[0].handle = 0x10000001;	/* no such model: fails when it runs */
	s[0].user_data = 10;
	s[0].flags = NPR_SQE_LINK;
	s[1] = nop(11, 0, NPR_SQE_LINK);
	s[2] = nop(12, 0, 0);
	ASSERT_EQ(submit(self->fd, s, 3), 3);
	ASSERT_EQ(reap(self, c, 3), 3);
	EXPECT_EQ(c[0].user_data, 10);
	EXPECT_EQ(c[0].res, -ENOENT);
	for (i = 1; i < 3; i++) {
		EXPECT_EQ(c[i].user_data, (uint64_t)10 + i);
		EXPECT_EQ(c[i].res, -ECANCELED);
		if (self->full)
			EXPECT_EQ(c[i].status, NPR_JOB_LINK_BROKEN);
	}
}

TEST_F_TIMEOUT(ring, drain, HARNESS_TIMEOUT_RING)
{
	struct npr_sqe s[3];
	struct npr_cqe c[3];

	s[0] = nop(1, 50000, 0);
	s[1] = nop(2, 0, NPR_SQE_DRAIN);
	s[2] = nop(3, 0, 0);
	ASSERT_EQ(submit(self->fd, s, 3), 3);
	ASSERT_EQ(reap(self, c, 3), 3);
	EXPECT_EQ(c[0].user_data, 1);
	EXPECT_EQ(c[1].user_data, 2);
	EXPECT_EQ(c[2].user_data, 3);
}

TEST_F_TIMEOUT(ring, cancel_queued, HARNESS_TIMEOUT_RING)
{
	struct npr_sqe s[3];
	struct npr_cqe c[3];
	int i;

	s[0] = nop(1, 100000, 0);
	s[1] = nop(2, 0, NPR_SQE_DRAIN);	/* waits behind 1 */
	memset(&s[2], 0, sizeof(s[2]));
	s[2].opcode = NPR_OP_CANCEL;
	s[2].addr = 2;
	s[2].user_data = 3;
	ASSERT_EQ(submit(self->fd, s, 3), 3);
	ASSERT_EQ(reap(self, c, 3), 3);
	for (i = 0; i < 3; i++) {
		switch (c[i].user_data) {
		case 1:
			EXPECT_EQ(c[i].res, 0);
			break;
		case 2:
			EXPECT_EQ(c[i].res, -ECANCELED);
			if (self->full)
				EXPECT_EQ(c[i].status, NPR_JOB_CANCELED);
			break;
		case 3:
			EXPECT_EQ(c[i].res, 0);
			break;
		default:
			ASSERT_TRUE(0);
		}
	}
	/* job 1 completes last: it was running the whole time */
	EXPECT_EQ(c[2].user_data, 1);
}

TEST_F_TIMEOUT(ring, cancel_running, HARNESS_TIMEOUT_RING)
{
	struct npr_sqe s[2];
	struct npr_cqe c[2];

	/* 300 ms: still running after the 50 ms pause, even on a busy box */
	s[0] = nop(1, 300000, 0);
	ASSERT_EQ(submit(self->fd, s, 1), 1);
	usleep(50000);
	memset(&s[1], 0, sizeof(s[1]));
	s[1].opcode = NPR_OP_CANCEL;
	s[1].addr = 1;
	s[1].user_data = 2;
	ASSERT_EQ(submit(self->fd, &s[1], 1), 1);
	ASSERT_EQ(reap(self, c, 2), 2);
	EXPECT_EQ(c[0].user_data, 2);
	EXPECT_EQ(c[0].res, -EALREADY);
	EXPECT_EQ(c[1].user_data, 1);
	EXPECT_EQ(c[1].res, 0);
	/* and a job that is not there */
	s[1].addr = 77;
	ASSERT_EQ(submit(self->fd, &s[1], 1), 1);
	ASSERT_EQ(reap(self, c, 1), 1);
	EXPECT_EQ(c[0].res, -ENOENT);
}

TEST_F_TIMEOUT(ring, deadline, HARNESS_TIMEOUT_RING)
{
	struct npr_sqe s[3];
	struct npr_cqe c[3];

	s[0] = nop(1, 0, 0);
	s[0].deadline_ns = mono_ns() - 1;
	ASSERT_EQ(submit(self->fd, s, 1), 1);
	ASSERT_EQ(reap(self, c, 1), 1);
	EXPECT_EQ(c[0].res, -ETIME);
	if (self->full)
		EXPECT_EQ(c[0].status, NPR_JOB_EXPIRED);
	/* expires while queued behind a 50 ms job */
	s[0] = nop(2, 50000, 0);
	s[1] = nop(3, 0, NPR_SQE_DRAIN);
	s[1].deadline_ns = mono_ns() + 10000000;
	s[2] = nop(4, 0, 0);
	s[2].deadline_ns = mono_ns() + 10000000000ull;
	ASSERT_EQ(submit(self->fd, s, 3), 3);
	ASSERT_EQ(reap(self, c, 3), 3);
	/* 3 expires at its deadline, then 4 no longer waits behind it */
	EXPECT_EQ(c[0].user_data, 3);
	EXPECT_EQ(c[0].res, -ETIME);
	EXPECT_EQ(c[1].user_data, 4);
	EXPECT_EQ(c[1].res, 0);
	EXPECT_EQ(c[2].user_data, 2);
	EXPECT_EQ(c[2].res, 0);
}

/*
 * @c expired: -ETIME, and unless the completion is @bare (user_data and
 * res alone), not started and on time.
 */
static void expect_expired(struct npr_test *_metadata, bool bare,
			   const struct npr_cqe *c, uint64_t deadline)
{
	EXPECT_EQ(c->res, -ETIME);
	if (bare)
		return;
	EXPECT_EQ(c->status, NPR_JOB_EXPIRED);
	EXPECT_EQ(c->started_ns, c->finished_ns);
	EXPECT_GE(c->finished_ns, deadline);
}

/*
 * A job whose deadline passes while it waits completes then, not when a
 * worker gets to it: behind a 1 s job in its chain, behind a DRAIN, and
 * behind workers all busy with 1 s jobs.  The order of the completions
 * says so (the margin is the whole second); the times are only checked
 * against the deadline, which they cannot precede.
 */
TEST_F_TIMEOUT(ring, deadline_while_waiting, HARNESS_TIMEOUT_RING)
{
	struct npr_sqe s[4];
	struct npr_cqe c[4];
	uint64_t dl;
	int i, n;

	s[0] = nop(1, 1000000, NPR_SQE_LINK);
	s[1] = nop(2, 0, NPR_SQE_LINK);
	s[2] = nop(3, 0, 0);
	s[3] = nop(4, 0, NPR_SQE_DRAIN);
	dl = mono_ns() + 20000000;
	s[1].deadline_ns = dl;
	s[3].deadline_ns = dl;
	ASSERT_EQ(submit(self->fd, s, 4), 4);
	ASSERT_EQ(reap(self, c, 4), 4);
	/* 2, 3 and 4 in some order, then 1 */
	for (i = 0; i < 3; i++) {
		switch (c[i].user_data) {
		case 2:
		case 4:
			expect_expired(_metadata, !self->full, &c[i], dl);
			if (self->full)
				EXPECT_LT(c[i].finished_ns, c[3].finished_ns);
			break;
		case 3:
			/* the chain broke at the expired job */
			EXPECT_EQ(c[i].res, -ECANCELED);
			if (self->full)
				EXPECT_EQ(c[i].status, NPR_JOB_LINK_BROKEN);
			break;
		default:
			TH_LOG("job %llu completed before the 1 s job",
			       (unsigned long long)c[i].user_data);
			EXPECT_TRUE(0);
		}
	}
	EXPECT_EQ(c[3].user_data, 1);
	EXPECT_EQ(c[3].res, 0);
	EXPECT_JOB_ERROR(self->fd, 2, -ETIME, "deadline");

	/* every worker busy: the waiting job still expires on time */
	n = (int)self->rs.workers;
	ASSERT_GE(n, 1);
	ASSERT_LE(n, 3);	/* the null device's few workers */
	for (i = 0; i < n; i++)
		s[i] = nop(10 + i, 1000000, 0);
	s[n] = nop(20, 1, 0);	/* not inline: it has to wait */
	dl = mono_ns() + 20000000;
	s[n].deadline_ns = dl;
	ASSERT_EQ(submit(self->fd, s, n + 1), n + 1);
	ASSERT_EQ(reap(self, c, n + 1), n + 1);
	EXPECT_EQ(c[0].user_data, 20);
	expect_expired(_metadata, !self->full, &c[0], dl);
	for (i = 1; i <= n; i++)
		EXPECT_EQ(c[i].res, 0);
}

TEST_F_TIMEOUT(ring, full_cq, HARNESS_TIMEOUT_RING)
{
	struct npr_sqe s[64];
	struct npr_cqe c[64];
	int i;

	for (i = 0; i < 64; i++)
		s[i] = nop(i, 0, 0);
	ASSERT_EQ(submit(self->fd, s, 40), 40);
	/* 24 fit; the rest is pushed back, never lost */
	ASSERT_EQ(submit(self->fd, s + 40, 24), 24);
	if (self->attach && !self->records) {
		/* completions left already: the caller's CQ holds them */
		ASSERT_EQ(reap(self, c, 64), 64);
		return;
	}
	ASSERT_EQ(submit(self->fd, s, 1), -EBUSY);
	ASSERT_EQ(reap(self, c, 64), 64);
	ASSERT_EQ(submit(self->fd, s, 64), 64);
	ASSERT_EQ(reap(self, c, 64), 64);
	if (!self->attach) {
		struct npr_reap a = { .size = sizeof(a) };

		a.cqes = (uintptr_t)c;
		a.max = 1;
		a.min = 1;
		a.timeout_ns = 1000000;
		EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_REAP, &a), -ETIME);
		EXPECT_EQ(a.count, 0);
	}
}

TEST_F_TIMEOUT(ring, close_in_flight, HARNESS_TIMEOUT_RING)
{
	struct npr_sqe s[8];
	int i;

	for (i = 0; i < 8; i++)
		s[i] = nop(i, 20000, i == 3 ? NPR_SQE_LINK : 0);
	ASSERT_EQ(submit(self->fd, s, 8), 8);
	usleep(5000);
	/* running jobs finish, queued ones are dropped (or cancelled) */
	ASSERT_EQ(npr_close(self->fd), 0);
	self->fd = -1;
	if (self->attach) {
		struct npr_cqe c[8];

		/* attach mode: every job gets exactly one CQE */
		ASSERT_EQ(reap(self, c, 8), 8);
	}
}

struct stress {
	int fd;
	int thread;
	unsigned int n;
};

#define STRESS_THREADS	4
#define STRESS_JOBS	2500

static void *stress_submit(void *p)
{
	struct stress *st = p;
	unsigned int seed = 1234 + st->thread, i = 0;

	while (i < st->n) {
		struct npr_sqe s[8];
		unsigned int k, n = 1 + rand_r(&seed) % 8;
		int ret;

		if (n > st->n - i)
			n = st->n - i;
		for (k = 0; k < n; k++) {
			unsigned int r = rand_r(&seed);

			s[k] = nop(((uint64_t)st->thread << 32) | (i + k),
				   r % 16 == 0 ? 50 : 0,
				   r % 32 == 1 ? NPR_SQE_DRAIN : 0);
		}
		ret = submit(st->fd, s, n);
		if (ret == -EBUSY) {
			usleep(50);
			continue;
		}
		if (ret <= 0)
			return (void *)1;
		i += ret;
	}
	return NULL;
}

TEST_F_TIMEOUT(ring, stress_4_threads, 120)
{
	static unsigned char seen[STRESS_THREADS][STRESS_JOBS];
	struct stress st[STRESS_THREADS];
	pthread_t t[STRESS_THREADS];
	unsigned int total = 0, i;
	struct npr_cqe c[64];

	memset(seen, 0, sizeof(seen));
	for (i = 0; i < STRESS_THREADS; i++) {
		st[i].fd = self->fd;
		st[i].thread = i;
		st[i].n = STRESS_JOBS;
		ASSERT_EQ(pthread_create(&t[i], NULL, stress_submit, &st[i]),
			  0);
	}
	while (total < STRESS_THREADS * STRESS_JOBS) {
		unsigned int n, k;

		if (self->attach) {
			n = reap(self, c, 1);
		} else {
			struct npr_reap a = { .size = sizeof(a) };

			a.cqes = (uintptr_t)c;
			a.max = 64;
			a.min = 1;
			a.timeout_ns = 10000000000ull;
			npr_ioctl(self->fd, NPR_IOCTL_REAP, &a);
			n = a.count;
		}
		ASSERT_GT(n, 0);
		for (k = 0; k < n; k++) {
			unsigned int th = c[k].user_data >> 32;
			unsigned int j = (uint32_t)c[k].user_data;

			ASSERT_LT(th, STRESS_THREADS);
			ASSERT_LT(j, STRESS_JOBS);
			ASSERT_EQ(c[k].res, 0);
			ASSERT_EQ(seen[th][j], 0);
			seen[th][j] = 1;
		}
		total += n;
	}
	for (i = 0; i < STRESS_THREADS; i++) {
		void *ret;

		pthread_join(t[i], &ret);
		EXPECT_EQ(ret, NULL);
	}
	EXPECT_EQ(total, STRESS_THREADS * STRESS_JOBS);
}

/*
 * RING_RECORD: a record is taken once, by its slot and user_data; a ring
 * without records has none to give.
 */
TEST_F_TIMEOUT(ring, record_validation, HARNESS_TIMEOUT_RING)
{
	struct npr_ring_record rr = { .size = sizeof(rr) };
	struct npr_sqe s = nop(7, 0, 0);
	struct io_uring_cqe *q;

	ASSERT_EQ(submit(self->fd, &s, 1), 1);
	if (!self->records) {
		struct npr_cqe c;

		ASSERT_EQ(reap(self, &c, 1), 1);
		EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_RING_RECORD, &rr),
			  -EINVAL);
		EXPECT_NE(strstr(npr_last_error(), "no records"), NULL);
		return;
	}
	ASSERT_EQ(io_uring_wait_cqe(&self->caller, &q), 0);
	EXPECT_EQ(q->user_data, 7);
	rr.slot = NPR_CQE_RECORD(q->flags);
	ASSERT_LT(rr.slot, self->rs.cq_entries);
	rr.user_data = 8;	/* another job's */
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_RING_RECORD, &rr), -ENOENT);
	rr.user_data = 7;
	rr.slot = (rr.slot + 1) % self->rs.cq_entries;	/* an empty slot */
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_RING_RECORD, &rr), -ENOENT);
	rr.slot = self->rs.cq_entries;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_RING_RECORD, &rr), -EINVAL);
	rr.slot = NPR_CQE_NO_RECORD;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_RING_RECORD, &rr), -EINVAL);
	rr.slot = NPR_CQE_RECORD(q->flags);
	rr.flags = 1;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_RING_RECORD, &rr),
		  -EOPNOTSUPP);
	rr.flags = 0;
	rr.reserved = 1;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_RING_RECORD, &rr), -EINVAL);
	rr.reserved = 0;
	/* REAP has nothing: the records are the caller's to take */
	{
		struct npr_reap a = { .size = sizeof(a) };
		struct npr_cqe c;

		a.cqes = (uintptr_t)&c;
		a.max = 1;
		EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_REAP, &a), -EINVAL);
		EXPECT_NE(strstr(npr_last_error(), "RING_RECORD"), NULL);
	}
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_RING_RECORD, &rr), 0);
	EXPECT_EQ(rr.cqe.user_data, 7);
	EXPECT_EQ(rr.cqe.res, 0);
	EXPECT_EQ(rr.cqe.status, NPR_JOB_OK);
	EXPECT_LE(rr.cqe.queued_ns, rr.cqe.started_ns);
	EXPECT_LE(rr.cqe.started_ns, rr.cqe.finished_ns);
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_RING_RECORD, &rr), -ENOENT);
	io_uring_cqe_seen(&self->caller, q);
}

/*
 * Records whose MSG_RING cannot be delivered (the caller closed its ring)
 * give their slots back: the fd takes jobs again instead of -EBUSY for
 * good.
 */
TEST_TIMEOUT_F(records_of_a_closed_caller_ring, HARNESS_TIMEOUT_RING)
{
	struct npr_ring_setup rs = { .size = sizeof(rs) };
	struct npr_sqe s[8];
	struct io_uring caller;
	int fd, i, k, ok = 0;

	if (getenv("NPR_RING_FALLBACK"))
		SKIP(return, "NPR_RING_FALLBACK is set: no ring to attach");
	if (io_uring_queue_init(8, &caller, 0) < 0)
		SKIP(return, "io_uring unavailable");
	fd = npr_open("null", 0);
	ASSERT_GE(fd, 0);
	rs.flags = NPR_RING_SETUP_ATTACH | NPR_RING_SETUP_RECORDS;
	rs.attach_fd = caller.ring_fd;
	rs.cq_entries = 8;
	i = npr_ioctl(fd, NPR_IOCTL_RING_SETUP, &rs);
	if (i == -EOPNOTSUPP) {
		npr_close(fd);
		io_uring_queue_exit(&caller);
		SKIP(return, "%s", npr_last_error());
	}
	ASSERT_EQ(i, 0);
	io_uring_queue_exit(&caller);
	for (i = 0; i < 8; i++)
		s[i] = nop(i, 0, 0);
	for (k = 0; k < 4; k++) {
		int n = submit(fd, s, 8);

		/* a worker may still hold a slot: give it time */
		for (i = 0; n == -EBUSY && i < 1000; i++) {
			usleep(1000);
			n = submit(fd, s, 8);
		}
		EXPECT_EQ(n, 8);
		ok += n == 8;
	}
	EXPECT_EQ(ok, 4);
	EXPECT_EQ(npr_close(fd), 0);
}

TEST(validation)
{
	int fd = npr_open("null", 0);
	struct npr_ring_setup rs = { .size = sizeof(rs) };
	struct npr_submit su = { .size = sizeof(su) };
	struct npr_reap re = { .size = sizeof(re) };
	struct npr_sqe s = { 0 };
	struct npr_cqe c;

	ASSERT_GE(fd, 0);
	rs.cq_entries = 3;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_RING_SETUP, &rs), -EINVAL);
	rs.cq_entries = 0;
	rs.flags = 1u << 7;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_RING_SETUP, &rs), -EOPNOTSUPP);
	rs.flags = 0;
	rs.reserved = 1;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_RING_SETUP, &rs), -EINVAL);
	rs.reserved = 0;
	rs.flags = NPR_RING_SETUP_RECORDS;	/* without ATTACH */
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_RING_SETUP, &rs), -EINVAL);
	rs.flags = NPR_RING_SETUP_ATTACH;
	rs.attach_fd = fd;	/* an eventfd, not an io_uring */
	EXPECT_NE(npr_ioctl(fd, NPR_IOCTL_RING_SETUP, &rs), 0);
	rs.flags = 0;
	rs.attach_fd = 0;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_RING_SETUP, &rs), 0);
	EXPECT_EQ(rs.cq_entries, 256);
	EXPECT_GE(rs.ring_fd, 0);
	rs.cq_entries = 8;
	rs.ring_fd = rs.path = rs.reason = rs.workers = 0;
	rs.err = 0;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_RING_SETUP, &rs), -EBUSY);

	su.sqes = (uintptr_t)&s;
	su.count = 0;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EINVAL);
	su.count = 1;
	su.flags = 1;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EOPNOTSUPP);
	su.flags = 0;
	s.reserved1 = 1;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EINVAL);
	s.reserved1 = 0;
	s.opcode = NPR_OP_MAX;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EINVAL);
	s.opcode = NPR_OP_NOP;
	s.flags = 0x80;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EOPNOTSUPP);
	s.flags = 0;
	s.len = 10000001;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EINVAL);
	s.len = 0;
	s.opcode = NPR_OP_INFER;
	s.handle = 0x30000001;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -ENOENT);
	s.opcode = NPR_OP_LOAD;
	s.handle = 0;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EINVAL);
	EXPECT_EQ(su.submitted, 0);

	re.cqes = (uintptr_t)&c;
	re.max = 0;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_REAP, &re), -EINVAL);
	re.max = 1;
	re.min = 2;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_REAP, &re), -EINVAL);
	re.min = 0;
	re.flags = 4;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_REAP, &re), -EOPNOTSUPP);
	re.flags = 0;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_REAP, &re), 0);
	EXPECT_EQ(re.count, 0);
	EXPECT_EQ(npr_close(fd), 0);
}

TEST_HARNESS_MAIN
