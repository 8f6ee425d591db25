/* SPDX-License-Identifier: MIT */
/*
 * The fixture of ring_test.c and ring_jobs_test.c: a null device with a
 * ring, once per completion path (the fd's own io_uring, the eventfd
 * fallback, completions posted into the caller's io_uring with MSG_RING:
 * user_data and res alone, or with a record of the whole completion, into
 * a ring of 16-byte or of 32-byte CQEs), and the helpers that submit,
 * reap and read a failed job's message.
 */
#ifndef RING_UTIL_H
#define RING_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <liburing.h>

#include <npuring.h>

#include "harness.h"
#include "tsan.h"

#define HARNESS_TIMEOUT_RING	60

FIXTURE(ring) {
	int fd;
	bool attach;
	bool records;		/* attached, with NPR_RING_SETUP_RECORDS */
	bool full;		/* completions carry status and times */
	unsigned int record_errors;	/* records that did not match */
	struct io_uring caller;
	struct npr_ring_setup rs;
};

FIXTURE_VARIANT(ring) {
	unsigned int flags;
	bool attach;
	bool cqe32;		/* the caller's ring has 32-byte CQEs */
	unsigned int entries;
};

FIXTURE_VARIANT_ADD(ring, own) {
	.flags = 0,
};

FIXTURE_VARIANT_ADD(ring, fallback) {
	.flags = NPR_RING_SETUP_FALLBACK,
};

FIXTURE_VARIANT_ADD(ring, attach) {
	.flags = NPR_RING_SETUP_ATTACH,
	.attach = true,
};

FIXTURE_VARIANT_ADD(ring, attach_records) {
	.flags = NPR_RING_SETUP_ATTACH | NPR_RING_SETUP_RECORDS,
	.attach = true,
};

FIXTURE_VARIANT_ADD(ring, attach_records_cqe32) {
	.flags = NPR_RING_SETUP_ATTACH | NPR_RING_SETUP_RECORDS,
	.attach = true,
	.cqe32 = true,
};

FIXTURE_SETUP(ring)
{
	self->fd = npr_open("null", 0);
	ASSERT_GE(self->fd, 0);
	memset(&self->rs, 0, sizeof(self->rs));
	self->rs.size = sizeof(self->rs);
	self->rs.flags = variant->flags;
	self->rs.cq_entries = 64;
	self->attach = false;
	self->records = variant->flags & NPR_RING_SETUP_RECORDS;
	self->full = !variant->attach || self->records;
	self->record_errors = 0;
	if (variant->attach) {
		int err = io_uring_queue_init(256, &self->caller,
					      variant->cqe32 ?
					      IORING_SETUP_CQE32 : 0);

		if (err < 0)
			SKIP(return, "io_uring unavailable: %s", strerror(-err));
		self->attach = true;
		self->rs.attach_fd = self->caller.ring_fd;
	}
	if (variant->attach && getenv("NPR_RING_FALLBACK")) {
		EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_RING_SETUP, &self->rs),
			  -EOPNOTSUPP);
		SKIP(return, "NPR_RING_FALLBACK is set: no ring to attach");
	}
	{
		int err = npr_ioctl(self->fd, NPR_IOCTL_RING_SETUP, &self->rs);

		if (err == -EOPNOTSUPP && self->records)
			SKIP(return, "no records on this kernel: %s",
			     npr_last_error());
		ASSERT_EQ(err, 0);
	}
	if (!variant->flags && getenv("NPR_RING_FALLBACK"))
		ASSERT_EQ(self->rs.path, NPR_RING_PATH_FALLBACK);
	if (variant->flags & NPR_RING_SETUP_FALLBACK) {
		ASSERT_EQ(self->rs.path, NPR_RING_PATH_FALLBACK);
		ASSERT_EQ(self->rs.reason, NPR_RING_WHY_FORCED);
	}
	ASSERT_EQ(self->rs.cq_entries, 64);
}

FIXTURE_TEARDOWN(ring)
{
	EXPECT_EQ(self->record_errors, 0);
	if (self->fd >= 0)
		EXPECT_EQ(npr_close(self->fd), 0);
	if (self->attach)
		io_uring_queue_exit(&self->caller);
}

static inline int submit(int fd, struct npr_sqe *s, unsigned int n)
{
	struct npr_submit a = { .size = sizeof(a) };
	int err;

	a.sqes = (uintptr_t)s;
	a.count = n;
	err = npr_ioctl(fd, NPR_IOCTL_SUBMIT, &a);
	return err ? err : (int)a.submitted;
}

/*
 * The record that @q names, into @c, where it must agree with @q.  After
 * a close (@fd < 0) a job may name a record that is gone with its fd, or
 * none: then @c keeps what @q says.
 */
static inline void take_record(FIXTURE_DATA(ring) *self, int fd,
			       const struct io_uring_cqe *q,
			       struct npr_cqe *c)
{
	struct npr_ring_record rr = { .size = sizeof(rr) };
	unsigned int slot = NPR_CQE_RECORD(q->flags);

	if (q->flags & ((1u << NPR_CQE_RECORD_SHIFT) - 1))
		self->record_errors++;
	if (slot == NPR_CQE_NO_RECORD) {
		if (fd >= 0)
			self->record_errors++;
		return;
	}
	if (fd < 0)
		return;
	rr.slot = slot;
	rr.user_data = q->user_data;
	if (npr_ioctl(fd, NPR_IOCTL_RING_RECORD, &rr) ||
	    rr.cqe.user_data != q->user_data || rr.cqe.res != q->res ||
	    rr.cqe.queued_ns > rr.cqe.started_ns ||
	    rr.cqe.started_ns > rr.cqe.finished_ns || !rr.cqe.queued_ns) {
		self->record_errors++;
		return;
	}
	*c = rr.cqe;
	/* taken once */
	if (npr_ioctl(fd, NPR_IOCTL_RING_RECORD, &rr) != -ENOENT)
		self->record_errors++;
}

/* Wait for exactly @n completions of @fd (10 s at most), in order. */
static inline int reap_fd(FIXTURE_DATA(ring) *self, int fd,
			  struct npr_cqe *c, unsigned int n)
{
	unsigned int got = 0;

	if (self->attach) {
		while (got < n) {
			struct __kernel_timespec ts = { .tv_sec = 10 };
			struct io_uring_cqe *q;

			if (io_uring_wait_cqe_timeout(&self->caller, &q, &ts))
				return got;
			/* the job's outputs were written before its MSG_RING */
			npr_tsan_cqe_reaped(q->user_data);
			memset(&c[got], 0, sizeof(c[got]));
			c[got].user_data = q->user_data;
			c[got].res = q->res;
			c[got].status = q->res < 0 ? NPR_JOB_FAILED :
						     NPR_JOB_OK;
			if (self->records)
				take_record(self, fd, q, &c[got]);
			else if (q->flags)
				self->record_errors++;
			io_uring_cqe_seen(&self->caller, q);
			got++;
		}
		return got;
	} else {
		struct npr_reap a = { .size = sizeof(a) };

		a.cqes = (uintptr_t)c;
		a.max = n;
		a.min = n;
		a.timeout_ns = 10000000000ull;
		npr_ioctl(fd, NPR_IOCTL_REAP, &a);
		return a.count;
	}
}

static inline int reap(FIXTURE_DATA(ring) *self, struct npr_cqe *c,
		       unsigned int n)
{
	return reap_fd(self, self->fd, c, n);
}

/* The message of failed job @ud, and its res in @res. */
static inline int job_error(int fd, uint64_t ud, char *buf, uint32_t len,
			    int32_t *res)
{
	struct npr_get_error ge = { .size = sizeof(ge) };
	int err;

	ge.flags = NPR_GET_ERROR_JOB;
	ge.user_data = ud;
	ge.buf = (uintptr_t)buf;
	ge.len = len;
	err = npr_ioctl(fd, NPR_IOCTL_GET_ERROR, &ge);
	if (res)
		*res = ge.err;
	return err;
}

/* Job @ud failed with @res and says so, with a message containing @what. */
#define EXPECT_JOB_ERROR(fd, ud, res, what) do {			\
		char _m[512];						\
		int32_t _r = 0;						\
									\
		EXPECT_EQ(job_error(fd, ud, _m, sizeof(_m), &_r), 0);	\
		EXPECT_EQ(_r, res);					\
		if (!strstr(_m, what))					\
			TH_LOG("job %llu: \"%s\" lacks \"%s\"",	\
			       (unsigned long long)(ud), _m, what);	\
		EXPECT_NE(strstr(_m, what), NULL);			\
	} while (0)

static inline struct npr_sqe nop(uint64_t ud, unsigned int us,
				 unsigned int flags)
{
	struct npr_sqe s = { .opcode = NPR_OP_NOP };

	s.user_data = ud;
	s.len = us;
	s.flags = flags;
	return s;
}

static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* A second fd on @dev with the variant's kind of ring. */
static inline int open_like(FIXTURE_DATA(ring) *self, const char *dev)
{
	struct npr_ring_setup rs = { .size = sizeof(rs) };
	int fd = npr_open(dev, 0);

	if (fd < 0)
		return fd;
	rs.flags = self->rs.flags;
	rs.attach_fd = self->rs.attach_fd;
	rs.cq_entries = 64;
	if (npr_ioctl(fd, NPR_IOCTL_RING_SETUP, &rs)) {
		npr_close(fd);
		return -1;
	}
	return fd;
}

/* A chain of @n Sigmoid layers on [1, @len] f32: long, and cut into
 * @n node boundaries. */
static inline char *sigmoid_chain_xml(int n, int len)
{
	size_t cap = 1024 + (size_t)n * 512, off = 0;
	char *x = malloc(cap), dims[64];
	int k;

	if (!x)
		return NULL;
	snprintf(dims, sizeof(dims), "<dim>1</dim><dim>%d</dim>", len);
	off += snprintf(x + off, cap - off,
			"<?xml version=\"1.0\"?>\n<net name=\"chain\" version=\"11\"><layers>"
			"<layer id=\"0\" name=\"in\" type=\"Parameter\" version=\"opset1\">"
			"<data shape=\"1,%d\" element_type=\"f32\"/><output>"
			"<port id=\"0\" precision=\"FP32\">%s</port></output></layer>",
			len, dims);
	for (k = 1; k <= n; k++)
		off += snprintf(x + off, cap - off,
				"<layer id=\"%d\" name=\"s%d\" type=\"Sigmoid\" version=\"opset1\">"
				"<input><port id=\"0\" precision=\"FP32\">%s</port></input>"
				"<output><port id=\"1\" precision=\"FP32\">%s</port></output></layer>",
				k, k, dims, dims);
	off += snprintf(x + off, cap - off,
			"<layer id=\"%d\" name=\"out\" type=\"Result\" version=\"opset1\">"
			"<input><port id=\"0\" precision=\"FP32\">%s</port></input></layer>"
			"</layers><edges>", n + 1, dims);
	for (k = 1; k <= n + 1; k++)
		off += snprintf(x + off, cap - off,
				"<edge from-layer=\"%d\" from-port=\"%d\" to-layer=\"%d\" to-port=\"0\"/>",
				k - 1, k == 1 ? 0 : 1, k);
	snprintf(x + off, cap - off, "</edges></net>\n");
	return x;
}

#define CHAIN_LEN	200
#define CHAIN_WIDTH	65536

#endif /* RING_UTIL_H */
