// SPDX-License-Identifier: MIT
/*
 * The ring's jobs that do work: INFER (busy and resubmitted requests,
 * cancelling a running one), IMPORT / EXPORT and STATE jobs and the
 * messages of failed ones, LOAD through the workers' io_uring, COMPILE, on
 * cpu and npu, and examples/uring-server with its client.  The fixture
 * tests run once per completion path (ring_util.h); the ring
 * itself (links, drain, cancel, deadlines, stress) is in ring_test.c.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>

#include <npuring.h>

#include "harness.h"
#include "ring_util.h"

static struct npr_sqe arg_job(unsigned int op, uint64_t ud, void *arg,
			      unsigned int flags)
{
	struct npr_sqe s = { .opcode = op };

	s.user_data = ud;
	s.addr = (uintptr_t)arg;
	s.flags = flags;
	return s;
}

static const char relu_xml[] =
	"<?xml version=\"1.0\"?>\n"
	"<net name=\"relu\" version=\"11\"><layers>"
	"<layer id=\"0\" name=\"in\" type=\"Parameter\" version=\"opset1\">"
	"<data shape=\"1,4\" element_type=\"f32\"/><output>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>4</dim></port>"
	"</output></layer>"
	"<layer id=\"1\" name=\"relu\" type=\"ReLU\" version=\"opset1\"><input>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>4</dim></port>"
	"</input><output>"
	"<port id=\"1\" precision=\"FP32\"><dim>1</dim><dim>4</dim></port>"
	"</output></layer>"
	"<layer id=\"2\" name=\"out\" type=\"Result\" version=\"opset1\"><input>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>4</dim></port>"
	"</input></layer></layers><edges>"
	"<edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\" to-port=\"0\"/>"
	"<edge from-layer=\"1\" from-port=\"1\" to-layer=\"2\" to-port=\"0\"/>"
	"</edges></net>\n";

static uint32_t make_request(struct npr_test *_metadata, int fd)
{
	struct npr_model_load ml = { .size = sizeof(ml) };
	struct npr_compile co = { .size = sizeof(co) };
	struct npr_req_create rc = { .size = sizeof(rc) };

	ml.flags = NPR_MODEL_LOAD_MEMORY;
	ml.xml = (uintptr_t)relu_xml;
	ml.xml_size = sizeof(relu_xml) - 1;
	if (npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml))
		return 0;
	co.model = ml.handle;
	if (npr_ioctl(fd, NPR_IOCTL_COMPILE, &co))
		return 0;
	rc.exec = co.exec;
	if (npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc))
		return 0;
	return rc.req;
}

TEST_F_TIMEOUT(ring, infer_busy_request, HARNESS_TIMEOUT_RING)
{
	struct npr_handle_destroy hd = { .size = sizeof(hd) };
	uint32_t req = make_request(_metadata, self->fd);
	struct npr_sqe s[2] = { { 0 } };
	struct npr_cqe c[2];

	ASSERT_NE(req, 0);
	s[0] = nop(1, 200000, NPR_SQE_LINK);
	s[1].opcode = NPR_OP_INFER;
	s[1].handle = req;
	s[1].user_data = 2;
	ASSERT_EQ(submit(self->fd, s, 2), 2);
	/* in flight: a second job on it, or destroying it, is refused */
	ASSERT_EQ(submit(self->fd, &s[1], 1), -EBUSY);
	hd.handle = req;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_HANDLE_DESTROY, &hd), -EBUSY);
	ASSERT_EQ(reap(self, c, 2), 2);
	EXPECT_EQ(c[1].user_data, 2);
	EXPECT_EQ(c[1].res, 0);
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_HANDLE_DESTROY, &hd), 0);
}

/*
 * A request is free again by the time its completion can be reaped: a
 * busy-polling reaper that resubmits it at once is never refused.  The
 * DRAIN flag keeps the null device's INFER off the inline path, so a
 * worker completes it.
 */
TEST_F_TIMEOUT(ring, infer_resubmit_after_reap, HARNESS_TIMEOUT_RING)
{
	uint32_t req = make_request(_metadata, self->fd);
	struct npr_sqe s = { .opcode = NPR_OP_INFER };
	struct npr_cqe c;
	int i;

	ASSERT_NE(req, 0);
	s.handle = req;
	s.flags = NPR_SQE_DRAIN;
	for (i = 0; i < 3000; i++) {
		s.user_data = i;
		ASSERT_EQ(submit(self->fd, &s, 1), 1);
		if (self->attach) {
			ASSERT_EQ(reap(self, &c, 1), 1);
		} else {
			struct npr_reap a = { .size = sizeof(a) };

			a.flags = NPR_REAP_POLL;
			a.cqes = (uintptr_t)&c;
			a.max = a.min = 1;
			a.timeout_ns = 10000000000ull;
			ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_REAP, &a), 0);
		}
		ASSERT_EQ(c.user_data, (uint64_t)i);
		ASSERT_EQ(c.res, 0);
	}
}

static uint32_t make_exec(struct npr_test *_metadata, int fd)
{
	struct npr_model_load ml = { .size = sizeof(ml) };
	struct npr_compile co = { .size = sizeof(co) };

	ml.flags = NPR_MODEL_LOAD_MEMORY;
	ml.xml = (uintptr_t)relu_xml;
	ml.xml_size = sizeof(relu_xml) - 1;
	if (npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml))
		return 0;
	co.model = ml.handle;
	if (npr_ioctl(fd, NPR_IOCTL_COMPILE, &co))
		return 0;
	return co.exec;
}

/* EXPORT then IMPORT as jobs give what the ioctls give. */
TEST_F_TIMEOUT(ring, export_import_jobs, HARNESS_TIMEOUT_RING)
{
	struct npr_export ex = { .size = sizeof(ex) }, sx = ex;
	struct npr_import im = { .size = sizeof(im) };
	struct npr_req_create rc = { .size = sizeof(rc) };
	uint32_t exec = make_exec(_metadata, self->fd);
	unsigned char *blob, *ref;
	struct npr_sqe s;
	struct npr_cqe c;

	ASSERT_NE(exec, 0);
	/* the size first: -EMSGSIZE with the size written back */
	ex.exec = exec;
	s = arg_job(NPR_OP_EXPORT, 1, &ex, 0);
	ASSERT_EQ(submit(self->fd, &s, 1), 1);
	ASSERT_EQ(reap(self, &c, 1), 1);
	EXPECT_EQ(c.user_data, 1);
	EXPECT_EQ(c.res, -EMSGSIZE);
	ASSERT_GT(ex.bytes, 64);
	EXPECT_JOB_ERROR(self->fd, 1, -EMSGSIZE, "bytes");
	blob = malloc(ex.bytes);
	ref = malloc(ex.bytes);
	ASSERT_NE(blob, NULL);
	ASSERT_NE(ref, NULL);
	ex.data = (uintptr_t)blob;
	s.user_data = 2;
	ASSERT_EQ(submit(self->fd, &s, 1), 1);
	ASSERT_EQ(reap(self, &c, 1), 1);
	EXPECT_EQ(c.res, 0);
	/* the same bytes as the synchronous export */
	sx.exec = exec;
	sx.data = (uintptr_t)ref;
	sx.bytes = ex.bytes;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_EXPORT, &sx), 0);
	ASSERT_EQ(sx.bytes, ex.bytes);
	EXPECT_EQ(memcmp(blob, ref, ex.bytes), 0);

	im.data = (uintptr_t)blob;
	im.bytes = ex.bytes;
	s = arg_job(NPR_OP_IMPORT, 3, &im, 0);
	ASSERT_EQ(submit(self->fd, &s, 1), 1);
	ASSERT_EQ(reap(self, &c, 1), 1);
	ASSERT_GT(c.res, 0);
	EXPECT_EQ(im.exec, (uint32_t)c.res);
	EXPECT_NE(im.exec, exec);
	rc.exec = im.exec;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	/* nothing failed under these user_data */
	EXPECT_EQ(job_error(self->fd, 3, NULL, 0, NULL), -ENOENT);
	free(blob);
	free(ref);
}

/* Each failure completes with -errno and a message of its own. */
TEST_F_TIMEOUT(ring, export_import_job_errors, HARNESS_TIMEOUT_RING)
{
	struct npr_export ex = { .size = sizeof(ex) };
	struct npr_import im[4];
	uint32_t exec = make_exec(_metadata, self->fd);
	static unsigned char junk[256];
	struct npr_sqe s[6];
	struct npr_cqe c[6];
	unsigned char *blob;
	int i;

	ASSERT_NE(exec, 0);
	ex.exec = exec;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_EXPORT, &ex), -EMSGSIZE);
	blob = malloc(ex.bytes);
	ASSERT_NE(blob, NULL);
	ex.data = (uintptr_t)blob;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_EXPORT, &ex), 0);
	memset(im, 0, sizeof(im));
	for (i = 0; i < 4; i++)
		im[i].size = sizeof(im[i]);
	im[0].data = (uintptr_t)blob;		/* truncated */
	im[0].bytes = ex.bytes - 9;
	im[1].data = (uintptr_t)junk;		/* not a blob */
	im[1].bytes = sizeof(junk);
	/* im[2]: no buffer at all */
	s[0] = arg_job(NPR_OP_IMPORT, 10, &im[0], 0);
	s[1] = arg_job(NPR_OP_IMPORT, 11, &im[1], 0);
	s[2] = arg_job(NPR_OP_IMPORT, 12, &im[2], 0);
	/* an exec handle that names nothing, and a model handle */
	ex.exec = 0x20000077;
	ex.data = (uintptr_t)blob;
	s[3] = arg_job(NPR_OP_EXPORT, 13, &ex, 0);
	ASSERT_EQ(submit(self->fd, s, 4), 4);
	ASSERT_EQ(reap(self, c, 4), 4);
	for (i = 0; i < 4; i++) {
		int want[] = { -EBADMSG, -ENOEXEC, -EINVAL, -ENOENT };

		ASSERT_GE(c[i].user_data, 10);
		ASSERT_LT(c[i].user_data, 14);
		EXPECT_EQ(c[i].res, want[c[i].user_data - 10]);
		if (self->full)
			EXPECT_EQ(c[i].status, NPR_JOB_FAILED);
	}
	EXPECT_JOB_ERROR(self->fd, 10, -EBADMSG, "");
	EXPECT_JOB_ERROR(self->fd, 11, -ENOEXEC, "");
	EXPECT_JOB_ERROR(self->fd, 12, -EINVAL, "no blob");
	EXPECT_JOB_ERROR(self->fd, 13, -ENOENT, "0x20000077");
	{
		char small[4];
		int32_t res;

		/* the message truncated, like GET_ERROR's own */
		EXPECT_EQ(job_error(self->fd, 12, small, sizeof(small), &res),
			  -EMSGSIZE);
		EXPECT_EQ(strlen(small), sizeof(small) - 1);
	}

	/* a failing job breaks its chain; the chain says why */
	s[0] = arg_job(NPR_OP_IMPORT, 20, &im[0], NPR_SQE_LINK);
	s[1] = nop(21, 0, 0);
	ASSERT_EQ(submit(self->fd, s, 2), 2);
	ASSERT_EQ(reap(self, c, 2), 2);
	EXPECT_EQ(c[0].res, -EBADMSG);
	EXPECT_EQ(c[1].res, -ECANCELED);
	EXPECT_JOB_ERROR(self->fd, 21, -ECANCELED, "chain");

	/* the struct is checked at submission, like the ioctl's */
	im[3] = im[0];
	im[3].reserved = 1;
	s[0] = arg_job(NPR_OP_IMPORT, 30, &im[3], 0);
	EXPECT_EQ(submit(self->fd, s, 1), -EINVAL);
	im[3].reserved = 0;
	im[3].flags = 1;
	EXPECT_EQ(submit(self->fd, s, 1), -EOPNOTSUPP);
	im[3].flags = 0;
	im[3].size = 8;
	EXPECT_EQ(submit(self->fd, s, 1), -EINVAL);
	im[3].size = sizeof(im[3]);
	s[0].addr = 0;
	EXPECT_EQ(submit(self->fd, s, 1), -EINVAL);
	s[0] = arg_job(NPR_OP_IMPORT, 30, &im[3], 0);
	s[0].handle = exec;
	EXPECT_EQ(submit(self->fd, s, 1), -EINVAL);
	/* unknown user_data, and GET_ERROR's own checks */
	EXPECT_EQ(job_error(self->fd, 999, NULL, 0, NULL), -ENOENT);
	{
		struct npr_get_error ge = { .size = sizeof(ge) };

		ge.user_data = 10;	/* without NPR_GET_ERROR_JOB */
		EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_ERROR, &ge),
			  -EINVAL);
		ge.flags = 2;
		EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_ERROR, &ge),
			  -EOPNOTSUPP);
	}
	free(blob);
}

/*
 * Whole completions from a cpu device on every path that has them (the
 * fd's own ring, the fallback, an attached ring with records, 16- or
 * 32-byte CQEs): status and queued <= started <= finished, for jobs that
 * ran, failed, expired and broke a chain.
 */
TEST_F_TIMEOUT(ring, completions_on_cpu, HARNESS_TIMEOUT_RING)
{
	int fd = open_like(self, "cpu");
	struct npr_sqe s[5] = { { 0 } };
	struct npr_cqe c[5];
	uint32_t req;
	int i, seen = 0;

	ASSERT_GE(fd, 0);
	req = make_request(_metadata, fd);
	ASSERT_NE(req, 0);
	s[0].opcode = NPR_OP_INFER;
	s[0].handle = req;
	s[0].user_data = 1;
	s[1].opcode = NPR_OP_CANCEL;	/* of nothing: fails */
	s[1].addr = 99;
	s[1].user_data = 2;
	s[2] = nop(3, 0, 0);
	s[2].deadline_ns = mono_ns() - 1;	/* expired */
	s[3].opcode = NPR_OP_COMPILE;	/* of no model: fails */
	s[3].handle = 0x20000099;
	s[3].user_data = 4;
	s[3].flags = NPR_SQE_LINK;
	s[4] = nop(5, 0, 0);		/* its chain is broken */
	ASSERT_EQ(submit(fd, s, 5), 5);
	ASSERT_EQ(reap_fd(self, fd, c, 5), 5);
	for (i = 0; i < 5; i++) {
		const int res[] = { 0, -ENOENT, -ETIME, -ENOENT, -ECANCELED };
		const unsigned int st[] = { NPR_JOB_OK, NPR_JOB_FAILED,
					    NPR_JOB_EXPIRED, NPR_JOB_FAILED,
					    NPR_JOB_LINK_BROKEN };
		unsigned int k = c[i].user_data - 1;

		ASSERT_LT(k, 5);
		seen |= 1 << k;
		EXPECT_EQ(c[i].res, res[k]);
		if (!self->full)
			continue;
		EXPECT_EQ(c[i].status, st[k]);
		EXPECT_NE(c[i].queued_ns, 0);
		EXPECT_LE(c[i].queued_ns, c[i].started_ns);
		EXPECT_LE(c[i].started_ns, c[i].finished_ns);
		/* jobs that never ran have no running time */
		if (k >= 2 && k != 3)
			EXPECT_EQ(c[i].started_ns, c[i].finished_ns);
	}
	EXPECT_EQ(seen, 0x1f);
	EXPECT_EQ(npr_close(fd), 0);
}

/* ir-stateful/adder_v11: out = x + s; s := out.  Returns the request. */
static uint32_t adder_request(struct npr_test *_metadata, int fd)
{
	struct npr_model_load ml = { .size = sizeof(ml) };
	struct npr_compile co = { .size = sizeof(co) };
	struct npr_req_create rc = { .size = sizeof(rc) };
	char path[PATH_MAX + 64];

	if (snprintf(path, sizeof(path), "%s/models/ir-stateful/adder_v11.xml",
		     npr_test_shared()) >= (int)sizeof(path))
		return 0;
	ml.xml = (uintptr_t)path;
	if (npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml))
		return 0;
	co.model = ml.handle;
	if (npr_ioctl(fd, NPR_IOCTL_COMPILE, &co))
		return 0;
	rc.exec = co.exec;
	if (npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc))
		return 0;
	return rc.req;
}

static struct npr_state_arg state_arg(uint32_t req, float *v)
{
	struct npr_state_arg a = { .size = sizeof(a) };

	a.req = req;
	a.elem_type = NPR_ELEM_F32;
	a.rank = 2;
	a.dims[0] = 1;
	a.dims[1] = 1;
	a.data = (uintptr_t)v;
	a.bytes = sizeof(*v);
	return a;
}

/*
 * One chain on one request: RESET, SET s = 2, INFER x = 1, GET: the
 * variable is 3 (the adder's closed form) and so is the output.
 */
TEST_F_TIMEOUT(ring, state_jobs_chain_on_one_request, HARNESS_TIMEOUT_RING)
{
	struct npr_tensor_arg ta = { .size = sizeof(ta) };
	float two = 2, one = 1, got = -1, out = -1, init = -1;
	struct npr_state_arg rs, ss, gs, g0;
	struct npr_sqe s[6] = { { 0 } };
	struct npr_cqe c[6];
	uint32_t req;
	int fd, i;

	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s", npr_test_shared());
	fd = open_like(self, "cpu");
	ASSERT_GE(fd, 0);
	req = adder_request(_metadata, fd);
	ASSERT_NE(req, 0);
	ta.req = req;
	ta.elem_type = NPR_ELEM_F32;
	ta.rank = 2;
	ta.dims[0] = 1;
	ta.dims[1] = 1;
	ta.data = (uintptr_t)&one;
	ta.bytes = sizeof(one);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &ta), 0);

	rs = state_arg(req, NULL);
	rs.flags = NPR_STATE_RESET_ALL;
	ss = state_arg(req, &two);
	gs = state_arg(req, &got);
	g0 = state_arg(req, &init);
	/* 200 ms first, so that the chain is surely still in flight */
	s[0] = nop(0, 200000, NPR_SQE_LINK);
	s[1] = arg_job(NPR_OP_STATE_RESET, 1, &rs, NPR_SQE_LINK);
	s[2] = arg_job(NPR_OP_STATE_GET, 2, &g0, NPR_SQE_LINK);
	s[3] = arg_job(NPR_OP_STATE_SET, 3, &ss, NPR_SQE_LINK);
	s[4].opcode = NPR_OP_INFER;
	s[4].handle = req;
	s[4].user_data = 4;
	s[4].flags = NPR_SQE_LINK;
	s[5] = arg_job(NPR_OP_STATE_GET, 5, &gs, 0);
	ASSERT_EQ(submit(fd, s, 6), 6);
	/* the chain holds the request: another batch may not use it */
	EXPECT_EQ(submit(fd, &s[5], 1), -EBUSY);
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_STATE_GET, &gs), -EBUSY);
	ASSERT_EQ(reap_fd(self, fd, c, 6), 6);
	for (i = 0; i < 6; i++) {
		EXPECT_EQ(c[i].user_data, (uint64_t)i);
		EXPECT_EQ(c[i].res, 0);
	}
	EXPECT_EQ(init, 0);	/* the ReadValue's initial value */
	EXPECT_EQ(got, 3);
	EXPECT_EQ(gs.bytes, sizeof(float));
	EXPECT_EQ(g0.count, 1);
	ta.flags = NPR_PORT_OUTPUT;
	ta.data = (uintptr_t)&out;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	EXPECT_EQ(out, 3);
	/* released: the synchronous ioctls may use it again */
	gs.bytes = sizeof(float);
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_STATE_GET, &gs), 0);
	EXPECT_EQ(npr_close(fd), 0);
}

TEST_F_TIMEOUT(ring, state_job_errors, HARNESS_TIMEOUT_RING)
{
	float v = 0, big[4];
	struct npr_state_arg a[4];
	struct npr_sqe s[4];
	struct npr_cqe c[4];
	uint32_t req;
	int fd, i;

	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s", npr_test_shared());
	fd = open_like(self, "cpu");
	ASSERT_GE(fd, 0);
	req = adder_request(_metadata, fd);
	ASSERT_NE(req, 0);
	a[0] = state_arg(req, &v);		/* GET: buffer too small */
	a[0].bytes = 2;
	a[1] = state_arg(req, big);		/* SET: wrong size */
	a[1].bytes = sizeof(big);
	a[2] = state_arg(req, &v);		/* GET: no such variable */
	a[2].index = 5;
	a[3] = state_arg(req, &v);		/* SET: wrong element type */
	a[3].elem_type = NPR_ELEM_I32;
	s[0] = arg_job(NPR_OP_STATE_GET, 40, &a[0], 0);
	s[1] = arg_job(NPR_OP_STATE_SET, 41, &a[1], 0);
	s[2] = arg_job(NPR_OP_STATE_GET, 42, &a[2], 0);
	s[3] = arg_job(NPR_OP_STATE_SET, 43, &a[3], 0);
	/* one job per request at a time, unless chained */
	ASSERT_EQ(submit(fd, s, 4), -EBUSY);
	for (i = 0; i < 3; i++)
		s[i].flags = NPR_SQE_LINK;
	ASSERT_EQ(submit(fd, s, 1), 1);
	ASSERT_EQ(reap_fd(self, fd, c, 1), 1);
	EXPECT_EQ(c[0].res, -EMSGSIZE);
	EXPECT_EQ(a[0].bytes, sizeof(float));	/* the size it needs */
	EXPECT_JOB_ERROR(fd, 40, -EMSGSIZE, "bytes needed");
	for (i = 1; i < 4; i++) {
		s[i].flags = 0;
		ASSERT_EQ(submit(fd, &s[i], 1), 1);
		ASSERT_EQ(reap_fd(self, fd, c, 1), 1);
		EXPECT_EQ(c[0].user_data, 40 + (uint64_t)i);
		EXPECT_EQ(c[0].res, i == 2 ? -ENOENT : -EINVAL);
	}
	EXPECT_JOB_ERROR(fd, 41, -EINVAL, "bytes expected");
	EXPECT_JOB_ERROR(fd, 42, -ENOENT, "variable 5");
	EXPECT_JOB_ERROR(fd, 43, -EINVAL, "variable");
	/* synchronous at submission: the handle and the flags */
	a[2].index = 0;
	a[2].req = 0x30000077;
	EXPECT_EQ(submit(fd, &s[2], 1), -ENOENT);
	a[2].req = req;
	a[2].flags = NPR_STATE_RESET_ALL;	/* RESET's only */
	EXPECT_EQ(submit(fd, &s[2], 1), -EOPNOTSUPP);
	EXPECT_EQ(npr_close(fd), 0);
}

/*
 * CANCEL of a running INFER: the CPU backend stops at the next node
 * boundary and the job completes with -ECANCELED.  Whether a given CANCEL
 * finds the job queued, running or done depends on timing, so each attempt
 * accepts all three and checks what it got; over attempts with growing
 * delays at least one must have been caught mid-run.  Completed runs and
 * the runs after a cancelled one give the uncancelled output.
 */
TEST_F_TIMEOUT(ring, cancel_running_infer, 120)
{
	struct npr_model_load ml = { .size = sizeof(ml) };
	struct npr_compile co = { .size = sizeof(co) };
	struct npr_req_create rc = { .size = sizeof(rc) };
	struct npr_tensor_arg ta = { .size = sizeof(ta) };
	struct npr_infer inf = { .size = sizeof(inf) };
	float *in, *ref, *out;
	int fd, k, midrun = 0, queued = 0, done = 0;
	char *xml = sigmoid_chain_xml(CHAIN_LEN, CHAIN_WIDTH);
	size_t bytes = CHAIN_WIDTH * sizeof(float);

	ASSERT_NE(xml, NULL);
	in = malloc(bytes);
	ref = malloc(bytes);
	out = malloc(bytes);
	ASSERT_TRUE(in && ref && out);
	for (k = 0; k < CHAIN_WIDTH; k++)
		in[k] = (float)(k % 13) - 6.0f;
	fd = open_like(self, "cpu");
	ASSERT_GE(fd, 0);
	ml.flags = NPR_MODEL_LOAD_MEMORY;
	ml.xml = (uintptr_t)xml;
	ml.xml_size = strlen(xml);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	co.model = ml.handle;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_COMPILE, &co), 0);
	rc.exec = co.exec;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	ta.req = rc.req;
	ta.elem_type = NPR_ELEM_F32;
	ta.rank = 2;
	ta.dims[0] = 1;
	ta.dims[1] = CHAIN_WIDTH;
	ta.data = (uintptr_t)in;
	ta.bytes = bytes;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
	inf.req = rc.req;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_INFER, &inf), 0);
	ta.flags = NPR_PORT_OUTPUT;
	ta.data = (uintptr_t)ref;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &ta), 0);

	for (k = 0; k < 12 && (!midrun || k < 4); k++) {
		struct npr_sqe s[2] = { { 0 } };
		struct npr_cqe c[2], *ci = NULL, *cc = NULL;
		char msg[256];
		int i;

		s[0].opcode = NPR_OP_INFER;
		s[0].handle = rc.req;
		s[0].user_data = 100 + k;
		s[1].opcode = NPR_OP_CANCEL;
		s[1].addr = 100 + k;
		s[1].user_data = 200 + k;
		ASSERT_EQ(submit(fd, &s[0], 1), 1);
		if (k)
			usleep(250u << (k < 8 ? k : 8));	/* 0.5-64 ms */
		ASSERT_EQ(submit(fd, &s[1], 1), 1);
		ASSERT_EQ(reap_fd(self, fd, c, 2), 2);
		for (i = 0; i < 2; i++) {
			if (c[i].user_data == 100u + k)
				ci = &c[i];
			else if (c[i].user_data == 200u + k)
				cc = &c[i];
		}
		ASSERT_TRUE(ci && cc);
		if (ci->res == 0) {
			/* done before the CANCEL came */
			EXPECT_TRUE(cc->res == 0 || cc->res == -ENOENT);
			ta.data = (uintptr_t)out;
			ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
			EXPECT_EQ(memcmp(out, ref, bytes), 0);
			done++;
			continue;
		}
		ASSERT_EQ(ci->res, -ECANCELED);
		EXPECT_EQ(cc->res, 0);
		if (self->full)
			EXPECT_EQ(ci->status, NPR_JOB_CANCELED);
		ASSERT_EQ(job_error(fd, 100 + k, msg, sizeof(msg), NULL), 0);
		if (strstr(msg, "while running")) {
			const char *p = strstr(msg, "after ");
			int at = -1, of = -1;

			/* stopped at a node boundary before the end */
			ASSERT_NE(p, NULL);
			ASSERT_EQ(sscanf(p, "after %d of %d", &at, &of), 2);
			EXPECT_GE(at, 0);
			EXPECT_LT(at, of);
			midrun++;
			if (self->full)
				EXPECT_LT(ci->started_ns, ci->finished_ns);
		} else {
			EXPECT_NE(strstr(msg, "before it started"), NULL);
			queued++;
		}
	}
	TH_LOG("%d attempts: %d cancelled mid-run, %d while queued, %d done first",
	       k, midrun, queued, done);
	EXPECT_GE(midrun, 1);

	/* the request runs to the end again, with the same result */
	{
		struct npr_sqe s = { .opcode = NPR_OP_INFER };
		struct npr_cqe c;

		s.handle = rc.req;
		s.user_data = 300;
		ASSERT_EQ(submit(fd, &s, 1), 1);
		ASSERT_EQ(reap_fd(self, fd, &c, 1), 1);
		EXPECT_EQ(c.res, 0);
		memset(out, 0, bytes);
		ta.data = (uintptr_t)out;
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
		EXPECT_EQ(memcmp(out, ref, bytes), 0);
		EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_INFER, &inf), 0);
	}
	EXPECT_EQ(npr_close(fd), 0);
	free(xml);
	free(in);
	free(ref);
	free(out);
}

#define ONNX_CLS "models/onnx/ppocr_mobile_v2.0_cls.onnx"
#define LMK_XML	"models/ir/landmarks-regression-retail-0009/FP32/landmarks-regression-retail-0009.xml"

/*
 * Compile model @model with defaults, make a request, feed input 0 a fixed
 * pattern, infer (through the ring with @ring), and return output 0 in a
 * malloc()ed buffer of *@bytes.
 */
static void *infer_model_shape(struct npr_test *_metadata,
			       FIXTURE_DATA(ring) *self, int fd, uint32_t model,
			       bool ring, const struct npr_shape_arg *shape,
			       size_t *bytes)
{
	struct npr_compile co = { .size = sizeof(co) };
	struct npr_req_create rc = { .size = sizeof(rc) };
	struct npr_tensor_arg t;
	float *in;
	void *out;
	size_t i;

	co.model = model;
	if (shape) {
		co.shapes = (uintptr_t)shape;
		co.num_shapes = 1;
	}
	if (npr_ioctl(fd, NPR_IOCTL_COMPILE, &co))
		return NULL;
	rc.exec = co.exec;
	if (npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc))
		return NULL;
	npr_prep_tensor(&t, rc.req, 0, 0, NULL, 0);
	if (npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &t) != -EMSGSIZE ||
	    t.elem_type != NPR_ELEM_F32)
		return NULL;
	in = malloc(t.bytes);
	if (!in)
		return NULL;
	for (i = 0; i < t.bytes / sizeof(float); i++)
		in[i] = (float)(i % 251) / 251.0f;
	t.flags = 0;
	t.data = (uintptr_t)in;
	if (npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &t)) {
		free(in);
		return NULL;
	}
	free(in);
	if (ring) {
		struct npr_sqe s = { .opcode = NPR_OP_INFER };
		struct npr_cqe c;

		s.handle = rc.req;
		s.user_data = 77;
		if (submit(fd, &s, 1) != 1 || reap_fd(self, fd, &c, 1) != 1 ||
		    c.res)
			return NULL;
	} else {
		struct npr_infer inf;

		npr_prep_infer(&inf, rc.req);
		if (npr_ioctl(fd, NPR_IOCTL_INFER, &inf))
			return NULL;
	}
	npr_prep_tensor(&t, rc.req, 0, 1, NULL, 0);
	if (npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &t) != -EMSGSIZE)
		return NULL;
	out = malloc(t.bytes);
	if (!out)
		return NULL;
	t.data = (uintptr_t)out;
	if (npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &t)) {
		free(out);
		return NULL;
	}
	*bytes = t.bytes;
	return out;
}

/*
 * A LOAD job of @rel (under the shared data) reads its files through the
 * worker's io_uring (pread on the fallback): the model it gives infers
 * byte for byte like the one MODEL_LOAD gives.
 */
static void load_matches(struct npr_test *_metadata, FIXTURE_DATA(ring) *self,
			 const char *rel, const struct npr_shape_arg *shape)
{
	struct npr_model_load ml = { .size = sizeof(ml) };
	char path[PATH_MAX + 128];
	size_t n_sync = 0, n_job = 0;
	void *o_sync, *o_job;
	struct npr_sqe s = { .opcode = NPR_OP_LOAD };
	struct npr_cqe c;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", npr_test_shared(), rel);
	fd = open_like(self, "cpu");
	ASSERT_GE(fd, 0);
	ml.xml = (uintptr_t)path;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	o_sync = infer_model_shape(_metadata, self, fd, ml.handle, false, shape,
				   &n_sync);
	ASSERT_NE(o_sync, NULL);

	s.addr = (uintptr_t)path;
	s.user_data = 1;
	ASSERT_EQ(submit(fd, &s, 1), 1);
	ASSERT_EQ(reap_fd(self, fd, &c, 1), 1);
	ASSERT_GT(c.res, 0);
	EXPECT_NE((uint32_t)c.res, ml.handle);
	o_job = infer_model_shape(_metadata, self, fd, c.res, true, shape,
				  &n_job);
	ASSERT_NE(o_job, NULL);
	ASSERT_EQ(n_job, n_sync);
	EXPECT_EQ(memcmp(o_job, o_sync, n_sync), 0);
	free(o_sync);
	free(o_job);
	EXPECT_EQ(npr_close(fd), 0);
}

TEST_F_TIMEOUT(ring, load_job_matches_model_load, HARNESS_TIMEOUT_RING)
{
	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s", npr_test_shared());
	load_matches(_metadata, self, LMK_XML, NULL);
}

/*
 * The same for an .onnx file (579 KB: three reads of 256 KiB at once),
 * compiled at its reference shape [1,3,48,192].
 */
TEST_F_TIMEOUT(ring, load_job_onnx_matches_model_load, HARNESS_TIMEOUT_RING)
{
	struct npr_shape_arg sh = { .index = 0, .rank = 4,
				    .dims = { 1, 3, 48, 192 } };

	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s", npr_test_shared());
	load_matches(_metadata, self, ONNX_CLS, &sh);
}

/* COMPILE @model with the device's properties: LOADED_FROM_CACHE, -errno. */
static int compile_from_cache(int fd, uint32_t model)
{
	struct npr_compile co = { .size = sizeof(co), .model = model };
	struct npr_param pa = { .size = sizeof(pa),
				.param = NPR_PARAM_LOADED_FROM_CACHE };
	int err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);

	if (err)
		return err;
	pa.handle = co.exec;
	err = npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &pa);
	return err ? err : (int)pa.value;
}

/*
 * On a device with a CACHE_DIR a LOAD job is MODEL_LOAD with
 * NPR_MODEL_LOAD_DEFER: a missing file still fails the job, the model's
 * first compile misses and stores an entry keyed by its files (file=),
 * the next LOAD's compile hits, and both infer byte for byte like the
 * model loaded without a cache.
 */
TEST_F_TIMEOUT(ring, load_job_with_cache_dir_is_deferred,
	       HARNESS_TIMEOUT_RING)
{
	char dir[] = "/tmp/npr-ring-cache-XXXXXX", path[PATH_MAX + 128];
	char meta[PATH_MAX + 64], text[64] = "";
	struct npr_model_load ml = { .size = sizeof(ml) };
	struct npr_param pa = { .size = sizeof(pa),
				.param = NPR_PARAM_CACHE_DIR };
	struct npr_sqe s = { .opcode = NPR_OP_LOAD };
	size_t n_sync = 0, n_job = 0;
	void *o_sync, *o_job;
	struct npr_cqe c;
	struct dirent *d;
	DIR *dp;
	FILE *f;
	int fd, round;

	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s", npr_test_shared());
	ASSERT_NE(mkdtemp(dir), NULL);
	snprintf(path, sizeof(path), "%s/%s", npr_test_shared(), LMK_XML);
	fd = open_like(self, "cpu");
	ASSERT_GE(fd, 0);
	ml.xml = (uintptr_t)path;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	o_sync = infer_model_shape(_metadata, self, fd, ml.handle, false, NULL,
				   &n_sync);
	ASSERT_NE(o_sync, NULL);
	pa.ptr = (uintptr_t)dir;
	pa.len = strlen(dir) + 1;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &pa), 0);

	s.addr = (uintptr_t)"/nonexistent/npr-ring-test.xml";
	s.user_data = 1;
	ASSERT_EQ(submit(fd, &s, 1), 1);
	ASSERT_EQ(reap_fd(self, fd, &c, 1), 1);
	EXPECT_EQ(c.res, -ENOENT);
	for (round = 0; round < 2; round++) {
		s.addr = (uintptr_t)path;
		s.user_data = 2 + round;
		ASSERT_EQ(submit(fd, &s, 1), 1);
		ASSERT_EQ(reap_fd(self, fd, &c, 1), 1);
		ASSERT_GT(c.res, 0);
		EXPECT_EQ(compile_from_cache(fd, c.res), round);
		o_job = infer_model_shape(_metadata, self, fd, c.res, true,
					  NULL, &n_job);
		ASSERT_NE(o_job, NULL);
		ASSERT_EQ(n_job, n_sync);
		EXPECT_EQ(memcmp(o_job, o_sync, n_sync), 0);
		free(o_job);
	}
	free(o_sync);
	EXPECT_EQ(npr_close(fd), 0);
	/* the one entry is keyed by the files */
	dp = opendir(dir);
	ASSERT_NE(dp, NULL);
	while ((d = readdir(dp))) {
		size_t l = strlen(d->d_name);

		snprintf(meta, sizeof(meta), "%s/%s", dir, d->d_name);
		if (l > 5 && !strcmp(d->d_name + l - 5, ".meta")) {
			f = fopen(meta, "r");
			if (f) {
				if (!fgets(text, sizeof(text), f))
					text[0] = 0;
				fclose(f);
			}
		}
		if (d->d_name[0] != '.')
			unlink(meta);
	}
	closedir(dp);
	rmdir(dir);
	EXPECT_EQ(strncmp(text, "file=/", 6), 0);
}

TEST_F_TIMEOUT(ring, load_job_errors, HARNESS_TIMEOUT_RING)
{
	char dir[] = "/tmp/npr-ring-load-XXXXXX", xml[64], path[PATH_MAX + 128];
	char empty[64], bad[64];
	struct npr_sqe s[5];
	struct npr_cqe c[5];
	int i, fd, out;
	FILE *f;

	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s", npr_test_shared());
	/* the .xml of a model that needs weights, without its .bin */
	ASSERT_NE(mkdtemp(dir), NULL);
	snprintf(xml, sizeof(xml), "%s/m.xml", dir);
	snprintf(path, sizeof(path), "%s/" LMK_XML, npr_test_shared());
	f = fopen(path, "r");
	ASSERT_NE(f, NULL);
	out = open(xml, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_GE(out, 0);
	for (;;) {
		char buf[4096];
		size_t n = fread(buf, 1, sizeof(buf), f);

		if (!n)
			break;
		ASSERT_EQ(write(out, buf, n), (ssize_t)n);
	}
	fclose(f);
	close(out);
	/* an empty .onnx, and an .onnx that is not a protobuf */
	snprintf(empty, sizeof(empty), "%s/empty.onnx", dir);
	snprintf(bad, sizeof(bad), "%s/bad.onnx", dir);
	out = open(empty, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_GE(out, 0);
	close(out);
	ASSERT_EQ(link(xml, bad), 0);

	fd = open_like(self, "cpu");
	ASSERT_GE(fd, 0);
	memset(s, 0, sizeof(s));
	s[0].addr = (uintptr_t)"/nonexistent/npr-ring-test.xml";
	s[1].addr = (uintptr_t)dir;		/* a directory */
	s[2].addr = (uintptr_t)xml;
	s[3].addr = (uintptr_t)empty;
	s[4].addr = (uintptr_t)bad;
	for (i = 0; i < 5; i++) {
		s[i].opcode = NPR_OP_LOAD;
		s[i].user_data = 50 + i;
	}
	ASSERT_EQ(submit(fd, s, 5), 5);
	ASSERT_EQ(reap_fd(self, fd, c, 5), 5);
	for (i = 0; i < 5; i++) {
		ASSERT_GE(c[i].user_data, 50);
		ASSERT_LT(c[i].user_data, 55);
		EXPECT_LT(c[i].res, 0);
		if (c[i].user_data == 50)
			EXPECT_EQ(c[i].res, -ENOENT);
		if (c[i].user_data == 51 || c[i].user_data == 53)
			EXPECT_EQ(c[i].res, -EINVAL);
	}
	EXPECT_JOB_ERROR(fd, 53, -EINVAL, "empty");
	{
		char m[512];
		int32_t r = 0;

		/* the parser's own message, whatever errno it picks */
		EXPECT_EQ(job_error(fd, 54, m, sizeof(m), &r), 0);
		EXPECT_LT(r, 0);
		EXPECT_GT(strlen(m), 0);
	}
	EXPECT_JOB_ERROR(fd, 50, -ENOENT, "/nonexistent/npr-ring-test.xml");
	EXPECT_JOB_ERROR(fd, 51, -EINVAL, "not a regular file");
	{
		char m[512];
		int32_t r = 0;

		EXPECT_EQ(job_error(fd, 52, m, sizeof(m), &r), 0);
		EXPECT_LT(r, 0);
		if (!strstr(m, "weights"))
			TH_LOG("job 52: %s", m);
		EXPECT_NE(strstr(m, "weights"), NULL);
	}
	EXPECT_EQ(npr_close(fd), 0);
	unlink(bad);
	unlink(empty);
	unlink(xml);
	rmdir(dir);
}

TEST_TIMEOUT_F(load_compile_infer_cpu, HARNESS_TIMEOUT_RING)
{
	int fd = npr_open("cpu", 0);
	struct npr_sqe s[2] = { { 0 } };
	struct npr_reap re = { .size = sizeof(re) };
	struct npr_submit su = { .size = sizeof(su) };
	struct npr_tensor_arg ta = { .size = sizeof(ta) };
	struct npr_req_create rc = { .size = sizeof(rc) };
	float in[4] = { -1, 2, -3, 4 }, out[4];
	uint32_t req;
	struct npr_cqe c[2];

	ASSERT_GE(fd, 0);
	req = make_request(_metadata, fd);
	ASSERT_NE(req, 0);
	ta.req = req;
	ta.elem_type = NPR_ELEM_F32;
	ta.rank = 2;
	ta.dims[0] = 1;
	ta.dims[1] = 4;
	ta.data = (uintptr_t)in;
	ta.bytes = sizeof(in);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
	s[0].opcode = NPR_OP_INFER;
	s[0].handle = req;
	s[0].user_data = 42;
	su.sqes = (uintptr_t)s;
	su.count = 1;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), 0);
	re.cqes = (uintptr_t)c;
	re.max = 1;
	re.min = 1;
	re.timeout_ns = 10000000000ull;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_REAP, &re), 0);
	ASSERT_EQ(c[0].user_data, 42);
	ASSERT_EQ(c[0].res, 0);
	ta.flags = NPR_PORT_OUTPUT;
	ta.data = (uintptr_t)out;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	EXPECT_EQ(out[0], 0);
	EXPECT_EQ(out[1], 2);
	EXPECT_EQ(out[2], 0);
	EXPECT_EQ(out[3], 4);

	/* a COMPILE job hands back a usable exec handle */
	{
		struct npr_model_load ml = { .size = sizeof(ml) };

		ml.flags = NPR_MODEL_LOAD_MEMORY;
		ml.xml = (uintptr_t)relu_xml;
		ml.xml_size = sizeof(relu_xml) - 1;
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
		memset(s, 0, sizeof(s));
		s[0].opcode = NPR_OP_COMPILE;
		s[0].handle = ml.handle;
		s[0].user_data = 7;
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), 0);
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_REAP, &re), 0);
		ASSERT_GT(c[0].res, 0);
		rc.exec = c[0].res;
		EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	}
	EXPECT_EQ(npr_close(fd), 0);
}

/*
 * The same on npu (vnpu with NPR_VNPU, as make check sets it): INFER jobs
 * of npu requests, a linked pair, and a COMPILE job through the driver.
 */
TEST_TIMEOUT_F(load_compile_infer_npu, HARNESS_TIMEOUT_RING)
{
	int fd = npr_open("npu", 0);
	struct npr_sqe s[2] = { { 0 } };
	struct npr_reap re = { .size = sizeof(re) };
	struct npr_submit su = { .size = sizeof(su) };
	struct npr_tensor_arg ta = { .size = sizeof(ta) };
	struct npr_req_create rc = { .size = sizeof(rc) };
	float in[4] = { -1, 2, -3, 4 }, out[4];
	uint32_t req[2];
	struct npr_cqe c[2];
	int k;

	if (fd < 0)
		SKIP(return, "no npu device: %s (make check sets NPR_VNPU)",
		     npr_last_error());
	for (k = 0; k < 2; k++) {
		req[k] = make_request(_metadata, fd);
		ASSERT_NE(req[k], 0);
		ta.req = req[k];
		ta.elem_type = NPR_ELEM_F32;
		ta.rank = 2;
		ta.dims[0] = 1;
		ta.dims[1] = 4;
		in[0] = (float)-k;
		ta.data = (uintptr_t)in;
		ta.bytes = sizeof(in);
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
		s[k].opcode = NPR_OP_INFER;
		s[k].handle = req[k];
		s[k].user_data = 42 + k;
	}
	s[0].flags = NPR_SQE_LINK;
	su.sqes = (uintptr_t)s;
	su.count = 2;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), 0);
	re.cqes = (uintptr_t)c;
	re.max = 2;
	re.min = 2;
	re.timeout_ns = 10000000000ull;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_REAP, &re), 0);
	ASSERT_EQ(re.count, 2);
	/* the link runs in order */
	EXPECT_EQ(c[0].user_data, 42);
	EXPECT_EQ(c[1].user_data, 43);
	for (k = 0; k < 2; k++) {
		EXPECT_EQ(c[k].res, 0);
		EXPECT_EQ(c[k].status, NPR_JOB_OK);
		ta.req = req[k];
		ta.flags = NPR_PORT_OUTPUT;
		ta.data = (uintptr_t)out;
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
		EXPECT_EQ(out[0], 0);	/* relu(-1), relu(-0) */
		EXPECT_EQ(out[1], 2);
		EXPECT_EQ(out[2], 0);
		EXPECT_EQ(out[3], 4);
	}
	{
		struct npr_model_load ml = { .size = sizeof(ml) };

		ml.flags = NPR_MODEL_LOAD_MEMORY;
		ml.xml = (uintptr_t)relu_xml;
		ml.xml_size = sizeof(relu_xml) - 1;
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
		memset(s, 0, sizeof(s));
		s[0].opcode = NPR_OP_COMPILE;
		s[0].handle = ml.handle;
		s[0].user_data = 7;
		su.count = 1;
		re.max = re.min = 1;
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), 0);
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_REAP, &re), 0);
		ASSERT_GT(c[0].res, 0);
		rc.exec = c[0].res;
		EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	}
	EXPECT_EQ(npr_close(fd), 0);
}

static pid_t spawn(char *const argv[])
{
	pid_t pid = fork();

	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static int wait_exit(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* examples/uring-server and uring-client on 400 requests, 4 in flight */
TEST_TIMEOUT_F(uring_server_example, HARNESS_TIMEOUT_RING)
{
	char self_path[PATH_MAX], server[PATH_MAX + 32], client[PATH_MAX + 32];
	char xml[] = "/tmp/npr-ring-test-XXXXXX.xml", sock[64];
	ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
	pid_t ps, pc;
	int fd, i;

	ASSERT_GT(n, 0);
	self_path[n] = 0;
	snprintf(server, sizeof(server), "%s/../examples/uring-server",
		 dirname(self_path));
	snprintf(client, sizeof(client), "%s/../examples/uring-client",
		 self_path);
	if (access(server, X_OK) || access(client, X_OK))
		SKIP(return, "examples not built next to the selftests");
	fd = mkstemps(xml, 4);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, relu_xml, sizeof(relu_xml) - 1),
		  (ssize_t)sizeof(relu_xml) - 1);
	close(fd);
	snprintf(sock, sizeof(sock), "/tmp/npr-ring-test-%d.sock", getpid());
	{
		char *sargv[] = { server, "-d", "cpu", "-m", xml, "-s", sock,
				  "-n", "400", NULL };

		ps = spawn(sargv);
	}
	ASSERT_GT(ps, 0);
	for (i = 0; i < 500 && access(sock, F_OK); i++)
		usleep(10000);
	{
		char *cargv[] = { client, "-s", sock, "-c", "4", "-n", "400",
				  NULL };

		pc = spawn(cargv);
	}
	ASSERT_GT(pc, 0);
	i = wait_exit(pc);
	if (i)
		kill(ps, SIGTERM);	/* the server would wait forever */
	EXPECT_EQ(i, 0);
	EXPECT_EQ(wait_exit(ps), 0);
	unlink(xml);
	unlink(sock);
}

TEST_HARNESS_MAIN
