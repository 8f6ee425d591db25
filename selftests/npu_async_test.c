// SPDX-License-Identifier: MIT
/*
 * npu INFER without a blocked thread per inference (npu/run.c,
 * lib/ring/async.c), checked against vnpu: many inferences in flight at
 * once with few ring workers (vnpu's queue trace counts them; its
 * VNPU_QUEUE_HOLD keeps the queue from running until they are all
 * there), their results those of the synchronous path; CANCEL of a queued
 * and of a running job; the deadline of a running job and the sync
 * INFER's NPR_INFER_TIMEOUT_MS (vnpu's VNPU_EXEC_US makes an execution
 * long); closing the fd with jobs in flight.
 *
 * vnpu reads its variables when a queue is created (at COMPILE), so each
 * test sets them around its compile only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "npu_util.h"

#define NREQ	16
#define SLOW_US	2000000		/* a slow execution: 2 s */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * EYE compiled on n->fd (opened here) with NPR_INFER_TIMEOUT_MS @timeout
 * (0: none), vnpu's variables @env ("NAME=VALUE" pairs, NULL-terminated)
 * set for the compile; n->req its first request, inputs filled.
 */
static void open_eye(struct npr_test *_metadata, struct net *n,
		     uint32_t timeout, const char *const *env)
{
	struct npr_prop_arg pa = { .param = NPR_PARAM_NPR_INFER_TIMEOUT_MS };
	struct npr_model_load ml;
	struct npr_compile co;
	char path[4096], name[64];
	int i;

	model_path(path, sizeof(path), EYE);
	memset(n, 0, sizeof(*n));
	n->fd = npr_open("npu", 0);
	ASSERT_GE(n->fd, 0);
	npr_prep_model_load(&ml, path, NULL);
	ASSERT_EQ(npr_ioctl(n->fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	npr_prep_compile(&co, ml.handle);
	if (timeout) {
		pa.value = timeout;
		co.props = (uintptr_t)&pa;
		co.num_props = 1;
	}
	for (i = 0; env && env[i]; i++)
		putenv((char *)env[i]);
	ASSERT_EQ(npr_ioctl(n->fd, NPR_IOCTL_COMPILE, &co), 0);
	for (i = 0; env && env[i]; i++) {
		snprintf(name, sizeof(name), "%.*s",
			 (int)(strchr(env[i], '=') - env[i]), env[i]);
		unsetenv(name);
	}
	ASSERT_EQ(net_attach(_metadata, n, co.exec), 0);
	net_fill(_metadata, n, 7);
}

/* One more request of n->exec, inputs from @seed. */
static uint32_t new_req(struct npr_test *_metadata, struct net *n,
			uint32_t seed)
{
	struct npr_req_create rc;
	uint32_t first = n->req;

	npr_prep_req_create(&rc, n->exec);
	if (npr_ioctl(n->fd, NPR_IOCTL_REQ_CREATE, &rc))
		return 0;
	n->req = rc.req;
	net_fill(_metadata, n, seed);
	n->req = first;
	return rc.req;
}

static int infer_sync(int fd, uint32_t req, struct npr_infer *inf)
{
	memset(inf, 0, sizeof(*inf));
	inf->size = sizeof(*inf);
	inf->req = req;
	return npr_ioctl(fd, NPR_IOCTL_INFER, inf);
}

/* Output 0 of @req, malloc'd. */
static void *out0(struct net *n, uint32_t req)
{
	struct npr_tensor_arg t;
	void *buf = malloc(n->bytes[1][0]);

	npr_prep_tensor(&t, req, 0, 1, buf, n->bytes[1][0]);
	if (buf && npr_ioctl(n->fd, NPR_IOCTL_GET_TENSOR, &t)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static struct npr_sqe infer_sqe(uint32_t req, uint64_t ud)
{
	struct npr_sqe s = { .opcode = NPR_OP_INFER, .handle = req,
			     .user_data = ud };

	return s;
}

static int submit(int fd, struct npr_sqe *s, unsigned int n)
{
	struct npr_submit a = { .size = sizeof(a) };
	int err;

	a.sqes = (uintptr_t)s;
	a.count = n;
	err = npr_ioctl(fd, NPR_IOCTL_SUBMIT, &a);
	return err ? err : (int)a.submitted;
}

/* Exactly @n completions (20 s at most). */
static int reap(int fd, struct npr_cqe *c, unsigned int n)
{
	struct npr_reap a = { .size = sizeof(a) };

	a.cqes = (uintptr_t)c;
	a.max = n;
	a.min = n;
	a.timeout_ns = 20000000000ull;
	npr_ioctl(fd, NPR_IOCTL_REAP, &a);
	return (int)a.count;
}

/*
 * INFER @req as a job once the device has let go of it (SUBMIT says
 * -EBUSY until then; 30 s at most): its completion's res.
 */
static int infer_job_when_free(struct npr_test *_metadata, int fd,
			       uint32_t req, uint64_t ud)
{
	struct npr_sqe s = infer_sqe(req, ud);
	struct npr_cqe c;
	int i, ret = -EBUSY;

	for (i = 0; i < 3000 && ret == -EBUSY; i++) {
		ret = submit(fd, &s, 1);
		if (ret == -EBUSY)
			usleep(10000);
	}
	EXPECT_EQ(ret, 1);
	if (ret != 1)
		return ret;
	EXPECT_EQ(reap(fd, &c, 1), 1);
	EXPECT_EQ(c.user_data, ud);
	return c.res;
}

/* The largest "queue ... peak=N" of a vnpu trace. */
static long trace_peak(const char *t)
{
	const char *p = t;
	long peak = -1;

	while ((p = strstr(p, "queue executions="))) {
		const char *q = strstr(p, " peak=");
		long v = q ? strtol(q + 6, NULL, 10) : -1;

		if (v > peak)
			peak = v;
		p++;
	}
	return peak;
}

TEST(npu_async_many_in_flight)
{
	static const char *const env[] = { "VNPU_QUEUE_HOLD=16", NULL };
	char trace[] = "/tmp/npu_async_traceXXXXXX", want[64];
	struct npr_ring_setup rs = { .size = sizeof(rs) };
	struct npr_sqe s[NREQ];
	struct npr_cqe c[NREQ];
	void *ring_out[NREQ];
	uint32_t req[NREQ];
	struct npr_infer inf;
	struct net n;
	int i, tfd;
	char *t;

	REQUIRE_NPU();
	tfd = mkstemp(trace);
	ASSERT_GE(tfd, 0);
	close(tfd);
	setenv("VNPU_TRACE", trace, 1);
	open_eye(_metadata, &n, 0, env);
	ASSERT_EQ(npr_ioctl(n.fd, NPR_IOCTL_RING_SETUP, &rs), 0);
	TH_LOG("%u ring workers, %d inferences", rs.workers, NREQ);
	ASSERT_LT(rs.workers, NREQ);
	for (i = 0; i < NREQ; i++) {
		req[i] = i ? new_req(_metadata, &n, 100 + i) : n.req;
		ASSERT_NE(req[i], 0);
		s[i] = infer_sqe(req[i], 1000 + i);
	}
	/* the queue runs nothing before all 16 are on it */
	ASSERT_EQ(submit(n.fd, s, NREQ), NREQ);
	ASSERT_EQ(reap(n.fd, c, NREQ), NREQ);
	for (i = 0; i < NREQ; i++) {
		EXPECT_EQ(c[i].res, 0);
		EXPECT_EQ(c[i].status, NPR_JOB_OK);
		EXPECT_LE(c[i].started_ns, c[i].finished_ns);
	}
	for (i = 0; i < NREQ; i++) {
		ring_out[i] = out0(&n, req[i]);
		ASSERT_NONNULL(ring_out[i]);
	}
	/* the synchronous path gives the same results */
	for (i = 0; i < NREQ; i++) {
		void *sync_out;

		ASSERT_EQ(infer_sync(n.fd, req[i], &inf), 0);
		sync_out = out0(&n, req[i]);
		ASSERT_NONNULL(sync_out);
		EXPECT_EQ(memcmp(sync_out, ring_out[i], n.bytes[1][0]), 0);
		if (i)
			EXPECT_NE(memcmp(ring_out[0], ring_out[i],
					 n.bytes[1][0]), 0);
		free(sync_out);
	}
	for (i = 0; i < NREQ; i++)
		free(ring_out[i]);
	net_close(&n);	/* the queue's trace line */
	t = slurp(trace);
	ASSERT_NONNULL(t);
	TH_LOG("most executions in flight at once: %ld", trace_peak(t));
	EXPECT_GE(trace_peak(t), NREQ);
	snprintf(want, sizeof(want), "hold=%d released at %d submitted", NREQ,
		 NREQ);
	EXPECT_NONNULL(strstr(t, want));
	free(t);
	unlink(trace);
	unsetenv("VNPU_TRACE");
}

TEST(npu_async_cancel_queued_and_running)
{
	static const char *const env[] = { "VNPU_EXEC_US=2000000",
					   "VNPU_EXEC_SLOW=1", NULL };
	struct npr_sqe s[3];
	struct npr_cqe c[4];
	struct npr_infer inf;
	uint32_t b;
	void *ref, *got;
	struct net n;
	int i;

	REQUIRE_NPU();
	open_eye(_metadata, &n, 0, env);
	b = new_req(_metadata, &n, 9);
	ASSERT_NE(b, 0);
	/* A runs on the device for 2 s; B (DRAIN) waits for it */
	s[0] = infer_sqe(n.req, 1);
	s[1] = infer_sqe(b, 2);
	s[1].flags = NPR_SQE_DRAIN;
	ASSERT_EQ(submit(n.fd, s, 2), 2);
	memset(s, 0, sizeof(s));
	s[0].opcode = NPR_OP_CANCEL;
	s[0].addr = 2;
	s[0].user_data = 3;
	s[1].opcode = NPR_OP_CANCEL;
	s[1].addr = 1;
	s[1].user_data = 4;
	ASSERT_EQ(submit(n.fd, s, 2), 2);
	ASSERT_EQ(reap(n.fd, c, 4), 4);
	for (i = 0; i < 4; i++) {
		switch (c[i].user_data) {
		case 1:	/* running: completed at once, result discarded */
		case 2:	/* queued: removed */
			EXPECT_EQ(c[i].res, -ECANCELED);
			EXPECT_EQ(c[i].status, NPR_JOB_CANCELED);
			EXPECT_LT(c[i].finished_ns - c[i].queued_ns,
				  SLOW_US * 1000ull);
			break;
		case 3:
		case 4:
			EXPECT_EQ(c[i].res, 0);
			break;
		default:
			ASSERT_TRUE(0);
		}
	}
	/* B never ran: it is free; A is busy until the device is done */
	EXPECT_EQ(infer_job_when_free(_metadata, n.fd, b, 5), 0);
	EXPECT_EQ(infer_job_when_free(_metadata, n.fd, n.req, 6), 0);
	got = out0(&n, n.req);
	ASSERT_NONNULL(got);
	ASSERT_EQ(infer_sync(n.fd, n.req, &inf), 0);
	ref = out0(&n, n.req);
	ASSERT_NONNULL(ref);
	EXPECT_EQ(memcmp(got, ref, n.bytes[1][0]), 0);
	free(got);
	free(ref);
	net_close(&n);
}

TEST(npu_async_deadline_of_a_running_job)
{
	static const char *const env[] = { "VNPU_EXEC_US=2000000",
					   "VNPU_EXEC_SLOW=1", NULL };
	struct npr_sqe s = { 0 };
	struct npr_cqe c;
	struct net n;

	REQUIRE_NPU();
	open_eye(_metadata, &n, 0, env);
	s = infer_sqe(n.req, 1);
	s.deadline_ns = now_ns() + 200000000ull;
	ASSERT_EQ(submit(n.fd, &s, 1), 1);
	ASSERT_EQ(reap(n.fd, &c, 1), 1);
	EXPECT_EQ(c.res, -ETIME);
	EXPECT_EQ(c.status, NPR_JOB_EXPIRED);
	/* at its deadline, not when the device ends 2 s later */
	EXPECT_GE(c.finished_ns, s.deadline_ns);
	EXPECT_LT(c.finished_ns - s.deadline_ns, 1500000000ull);
	/* a DESTROY waits for nothing: the request is busy */
	{
		struct npr_handle_destroy hd = { .size = sizeof(hd),
						 .handle = n.req };

		EXPECT_EQ(npr_ioctl(n.fd, NPR_IOCTL_HANDLE_DESTROY, &hd),
			  -EBUSY);
	}
	EXPECT_EQ(infer_job_when_free(_metadata, n.fd, n.req, 2), 0);
	net_close(&n);
}

TEST(npu_sync_infer_timeout)
{
	static const char *const env[] = { "VNPU_EXEC_US=2000000",
					   "VNPU_EXEC_SLOW=1", NULL };
	struct npr_infer inf;
	struct net n, r;
	void *ref, *got;
	int i, ret;

	REQUIRE_NPU();
	/* the reference: the same model without timeout or slowness */
	open_eye(_metadata, &r, 0, NULL);
	ASSERT_EQ(net_infer(&r), 0);
	ref = out0(&r, r.req);
	ASSERT_NONNULL(ref);
	net_close(&r);
	open_eye(_metadata, &n, 300, env);
	ASSERT_EQ(infer_sync(n.fd, n.req, &inf), -ETIME);
	TH_LOG("%s", npr_last_error());
	EXPECT_LT(inf.finished_ns - inf.started_ns, 1500000000ull);
	/* each INFER waits for the discarded one, within its 300 ms */
	for (i = 0, ret = -ETIME; i < 100 && ret == -ETIME; i++)
		ret = infer_sync(n.fd, n.req, &inf);
	EXPECT_EQ(ret, 0);
	EXPECT_GT(i, 1);
	got = out0(&n, n.req);
	ASSERT_NONNULL(got);
	EXPECT_EQ(memcmp(got, ref, n.bytes[1][0]), 0);
	free(got);
	free(ref);
	net_close(&n);
}

TEST(npu_destroy_a_request_the_device_still_owns)
{
	static const char *const env[] = { "VNPU_EXEC_US=1000000", NULL };
	struct npr_handle_destroy hd = { .size = sizeof(hd) };
	struct npr_sqe s;
	struct npr_infer inf;
	struct net n;
	uint32_t b;

	REQUIRE_NPU();
	open_eye(_metadata, &n, 200, env);
	b = new_req(_metadata, &n, 5);
	ASSERT_NE(b, 0);
	/* a ring job ahead of it on the queue, then the discarded one */
	s = infer_sqe(b, 1);
	ASSERT_EQ(submit(n.fd, &s, 1), 1);
	ASSERT_EQ(infer_sync(n.fd, n.req, &inf), -ETIME);
	/* freed by the queue's waiter once the device is done with it */
	hd.handle = n.req;
	EXPECT_EQ(npr_ioctl(n.fd, NPR_IOCTL_HANDLE_DESTROY, &hd), 0);
	net_close(&n);
}

TEST(npu_async_close_with_jobs_in_flight)
{
	static const char *const env[] = { "VNPU_EXEC_US=300000", NULL };
	struct npr_sqe s[4];
	struct net n;
	int i;

	REQUIRE_NPU();
	open_eye(_metadata, &n, 0, env);
	for (i = 0; i < 4; i++) {
		uint32_t req = i ? new_req(_metadata, &n, 20 + i) : n.req;

		ASSERT_NE(req, 0);
		s[i] = infer_sqe(req, 1 + i);
	}
	ASSERT_EQ(submit(n.fd, s, 4), 4);
	/* the device still runs them: close waits for it, frees all */
	EXPECT_EQ(npr_close(n.fd), 0);
}

TEST_HARNESS_MAIN
