// SPDX-License-Identifier: MIT
/*
 * Deadlines of running jobs and the timeout of a synchronous INFER: a NOP
 * or a cpu INFER still running at its SQE's deadline completes with
 * -ETIME (status NPR_JOB_EXPIRED); an INFER longer than its compiled
 * model's NPR_INFER_TIMEOUT_MS fails with -ETIME, its result discarded
 * (a stateful model's variables unchanged).  The fixture tests run once
 * per completion path (ring_util.h); deadlines of jobs that never start
 * are in ring_test.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <npuring.h>

#include "harness.h"
#include "ring_util.h"

/*
 * A NOP sleeping 10 s with a deadline 200 ms away ends at the deadline:
 * -ETIME, having started, at or after the deadline.  A NOP that ends
 * before its deadline is not touched.
 */
TEST_F_TIMEOUT(ring, nop_deadline_while_running, HARNESS_TIMEOUT_RING)
{
	struct npr_sqe s[2];
	struct npr_cqe c[2];
	uint64_t dl = mono_ns() + 200000000ull;
	int i;

	s[0] = nop(1, 10000000, 0);
	s[0].deadline_ns = dl;
	s[1] = nop(2, 1000, 0);
	s[1].deadline_ns = dl + 10000000000ull;
	ASSERT_EQ(submit(self->fd, s, 2), 2);
	ASSERT_EQ(reap(self, c, 2), 2);
	for (i = 0; i < 2; i++) {
		if (c[i].user_data == 2) {
			EXPECT_EQ(c[i].res, 0);
			continue;
		}
		EXPECT_EQ(c[i].res, -ETIME);
		if (!self->full)
			continue;
		EXPECT_EQ(c[i].status, NPR_JOB_EXPIRED);
		EXPECT_LT(c[i].started_ns, c[i].finished_ns);
		EXPECT_GE(c[i].finished_ns, dl);
	}
	EXPECT_JOB_ERROR(self->fd, 1, -ETIME, "while it ran");
}

/*
 * A sigmoid chain compiled on @fd with NPR_INFER_TIMEOUT_MS @timeout_ms
 * (its handle in @exec if not NULL), and a request with input @in set.
 */
static uint32_t chain_request(struct npr_test *_metadata, int fd,
			      const float *in, uint32_t timeout_ms,
			      uint32_t *exec)
{
	struct npr_model_load ml = { .size = sizeof(ml) };
	struct npr_compile co = { .size = sizeof(co) };
	struct npr_req_create rc = { .size = sizeof(rc) };
	struct npr_tensor_arg ta = { .size = sizeof(ta) };
	struct npr_prop_arg pa = { .param = NPR_PARAM_NPR_INFER_TIMEOUT_MS };
	char *xml = sigmoid_chain_xml(CHAIN_LEN, CHAIN_WIDTH);

	if (!xml)
		return 0;
	ml.flags = NPR_MODEL_LOAD_MEMORY;
	ml.xml = (uintptr_t)xml;
	ml.xml_size = strlen(xml);
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	free(xml);
	co.model = ml.handle;
	pa.value = timeout_ms;
	co.props = (uintptr_t)&pa;
	co.num_props = 1;
	if (npr_ioctl(fd, NPR_IOCTL_COMPILE, &co))
		return 0;
	if (exec)
		*exec = co.exec;
	rc.exec = co.exec;
	if (npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc))
		return 0;
	ta.req = rc.req;
	ta.elem_type = NPR_ELEM_F32;
	ta.rank = 2;
	ta.dims[0] = 1;
	ta.dims[1] = CHAIN_WIDTH;
	ta.data = (uintptr_t)in;
	ta.bytes = CHAIN_WIDTH * sizeof(float);
	if (npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &ta))
		return 0;
	return rc.req;
}

static int get_output(int fd, uint32_t req, float *out)
{
	struct npr_tensor_arg ta = { .size = sizeof(ta) };

	ta.req = req;
	ta.flags = NPR_PORT_OUTPUT;
	ta.data = (uintptr_t)out;
	ta.bytes = CHAIN_WIDTH * sizeof(float);
	return npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &ta);
}

/*
 * A cpu INFER whose deadline passes while it runs stops at the next node
 * boundary with -ETIME.  When the deadline falls (queued, running or
 * after the end) depends on timing, so each attempt accepts all three and
 * checks what it got; over attempts with growing deadlines at least one
 * must have stopped mid-run.  The runs after a stopped one give the
 * output of an uninterrupted run.
 */
TEST_F_TIMEOUT(ring, infer_deadline_while_running, 120)
{
	size_t bytes = CHAIN_WIDTH * sizeof(float);
	float *in = malloc(bytes), *ref = malloc(bytes), *out = malloc(bytes);
	struct npr_infer inf = { .size = sizeof(inf) };
	int fd, k, midrun = 0, queued = 0, done = 0;
	uint32_t req;

	ASSERT_TRUE(in && ref && out);
	for (k = 0; k < CHAIN_WIDTH; k++)
		in[k] = (float)(k % 11) - 5.0f;
	fd = open_like(self, "cpu");
	ASSERT_GE(fd, 0);
	req = chain_request(_metadata, fd, in, 0, NULL);
	ASSERT_NE(req, 0);
	inf.req = req;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_INFER, &inf), 0);
	ASSERT_EQ(get_output(fd, req, ref), 0);

	for (k = 0; k < 12 && (!midrun || k < 4); k++) {
		struct npr_sqe s = { .opcode = NPR_OP_INFER };
		struct npr_cqe c;
		char msg[256];

		s.handle = req;
		s.user_data = 100 + k;
		s.deadline_ns = mono_ns() + (250000ull << (k < 8 ? k : 8));
		ASSERT_EQ(submit(fd, &s, 1), 1);
		ASSERT_EQ(reap_fd(self, fd, &c, 1), 1);
		if (c.res == 0) {
			done++;
			ASSERT_EQ(get_output(fd, req, out), 0);
			EXPECT_EQ(memcmp(out, ref, bytes), 0);
			continue;
		}
		ASSERT_EQ(c.res, -ETIME);
		if (self->full)
			EXPECT_EQ(c.status, NPR_JOB_EXPIRED);
		ASSERT_EQ(job_error(fd, 100 + k, msg, sizeof(msg), NULL), 0);
		if (strstr(msg, "while it ran")) {
			const char *p = strstr(msg, "after ");
			int at = -1, of = -1;

			/* stopped at a node boundary before the end */
			ASSERT_NE(p, NULL);
			ASSERT_EQ(sscanf(p, "after %d of %d", &at, &of), 2);
			EXPECT_GE(at, 0);
			EXPECT_LT(at, of);
			midrun++;
			if (self->full) {
				EXPECT_LT(c.started_ns, c.finished_ns);
				EXPECT_GE(c.finished_ns, s.deadline_ns);
			}
		} else if (strstr(msg, "past its deadline")) {
			done++;		/* ended after it: discarded */
		} else {
			EXPECT_NE(strstr(msg, "before the job started"), NULL);
			queued++;
		}
		/* the request runs again, whole */
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_INFER, &inf), 0);
		ASSERT_EQ(get_output(fd, req, out), 0);
		EXPECT_EQ(memcmp(out, ref, bytes), 0);
	}
	TH_LOG("%d attempts: %d stopped mid-run, %d expired queued, %d done",
	       k, midrun, queued, done);
	EXPECT_GT(midrun, 0);
	EXPECT_EQ(npr_close(fd), 0);
	free(in);
	free(ref);
	free(out);
}

/*
 * The device's NPR_INFER_TIMEOUT_MS, and what a compiled model keeps; and
 * a null device, which completes at once: its limit never fires.
 */
TEST(infer_timeout_property)
{
	struct npr_param pa = { .size = sizeof(pa) };
	struct npr_prop_info pi = { .size = sizeof(pi) };
	struct npr_infer inf = { .size = sizeof(inf) };
	float *in = calloc(CHAIN_WIDTH, sizeof(float));
	int fd = npr_open("null", 0);
	uint32_t exec = 0;

	ASSERT_NE(in, NULL);
	ASSERT_GE(fd, 0);
	pa.param = NPR_PARAM_NPR_INFER_TIMEOUT_MS;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &pa), 0);
	EXPECT_EQ(pa.value, 0);		/* no limit by default */
	EXPECT_EQ(pa.type, NPR_PROP_INT);
	pa.value = -1;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &pa), -ERANGE);
	pa.value = 250;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &pa), 0);
	pi.flags = NPR_PROP_INFO_BY_NAME;
	strcpy(pi.name, "NPR_INFER_TIMEOUT_MS");
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_PROP_INFO, &pi), 0);
	EXPECT_EQ(pi.id, NPR_PARAM_NPR_INFER_TIMEOUT_MS);
	/* a run-time limit: not one of the properties the cache key has */
	EXPECT_FALSE(pi.access & NPR_PROP_ACCESS_CACHING);
	EXPECT_TRUE(pi.access & NPR_PROP_ACCESS_COMPILE);
	/* COMPILE's value over the device's */
	inf.req = chain_request(_metadata, fd, in, 1, &exec);
	ASSERT_NE(inf.req, 0);
	pa.handle = exec;
	pa.value = 0;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &pa), 0);
	EXPECT_EQ(pa.value, 1);
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_INFER, &inf), 0);
	EXPECT_EQ(npr_close(fd), 0);
	free(in);
}

/*
 * NPR_INFER_TIMEOUT_MS on a cpu model: an inference longer than the limit
 * fails with -ETIME, its times still reported; the same model compiled
 * without the limit runs.  Needs a model that takes well over the 1 ms
 * limit (measured, else skipped): the check happens between nodes.
 */
TEST(sync_infer_timeout)
{
	size_t bytes = CHAIN_WIDTH * sizeof(float);
	float *in = calloc(1, bytes);
	struct npr_infer inf = { .size = sizeof(inf) };
	int fd = npr_open("cpu", 0);
	uint32_t req, slow;

	ASSERT_NE(in, NULL);
	ASSERT_GE(fd, 0);
	slow = chain_request(_metadata, fd, in, 0, NULL);
	req = chain_request(_metadata, fd, in, 1, NULL);
	ASSERT_NE(slow, 0);
	ASSERT_NE(req, 0);
	inf.req = slow;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_INFER, &inf), 0);
	if (inf.finished_ns - inf.started_ns < 20000000ull) {
		npr_close(fd);
		free(in);
		SKIP(return, "the model took %llu us: too fast to outlast 1 ms for sure",
		     (unsigned long long)(inf.finished_ns - inf.started_ns) /
		     1000);
	}
	memset(&inf, 0, sizeof(inf));
	inf.size = sizeof(inf);
	inf.req = req;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_INFER, &inf), -ETIME);
	EXPECT_NE(strstr(npr_last_error(), "NPR_INFER_TIMEOUT_MS"), NULL);
	EXPECT_NE(inf.started_ns, 0);
	EXPECT_GE(inf.finished_ns, inf.started_ns + 1000000ull);
	/* the limit fires every time; the other model still runs whole */
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_INFER, &inf), -ETIME);
	inf.req = slow;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_INFER, &inf), 0);
	EXPECT_EQ(npr_close(fd), 0);
	free(in);
}

/*
 * A stateful chain: state s, input x, s := chain(x + s), output x + s.
 * An INFER stopped by the timeout leaves s as it was; one that runs
 * changes it.
 */
static char *stateful_chain_xml(int n, int len)
{
	size_t cap = 4096 + (size_t)n * 512, off = 0;
	char *x = malloc(cap), dims[64];
	int k, last = n + 2;

	if (!x)
		return NULL;
	snprintf(dims, sizeof(dims), "<dim>1</dim><dim>%d</dim>", len);
	off += snprintf(x + off, cap - off,
			"<?xml version=\"1.0\"?>\n<net name=\"schain\" version=\"11\"><layers>"
			"<layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\">"
			"<data shape=\"1,%d\" element_type=\"f32\"/><output>"
			"<port id=\"0\" precision=\"FP32\" names=\"x\">%s</port></output></layer>"
			"<layer id=\"1\" name=\"s\" type=\"Parameter\" version=\"opset1\">"
			"<data shape=\"1,%d\" element_type=\"f32\"/><output>"
			"<port id=\"0\" precision=\"FP32\" names=\"s\">%s</port></output></layer>"
			"<layer id=\"2\" name=\"sum\" type=\"Add\" version=\"opset1\"><input>"
			"<port id=\"0\" precision=\"FP32\">%s</port>"
			"<port id=\"1\" precision=\"FP32\">%s</port></input><output>"
			"<port id=\"2\" precision=\"FP32\" names=\"y\">%s</port></output></layer>",
			len, dims, len, dims, dims, dims, dims);
	for (k = 3; k <= last; k++)
		off += snprintf(x + off, cap - off,
				"<layer id=\"%d\" name=\"g%d\" type=\"Sigmoid\" version=\"opset1\">"
				"<input><port id=\"0\" precision=\"FP32\">%s</port></input>"
				"<output><port id=\"1\" precision=\"FP32\"%s>%s</port></output></layer>",
				k, k, dims, k == last ? " names=\"s_out\"" : "",
				dims);
	off += snprintf(x + off, cap - off,
			"<layer id=\"%d\" name=\"s_out/sink\" type=\"Result\" version=\"opset1\">"
			"<input><port id=\"0\" precision=\"FP32\">%s</port></input></layer>"
			"<layer id=\"%d\" name=\"y/sink\" type=\"Result\" version=\"opset1\">"
			"<input><port id=\"0\" precision=\"FP32\">%s</port></input></layer>"
			"</layers><edges>"
			"<edge from-layer=\"0\" from-port=\"0\" to-layer=\"2\" to-port=\"0\"/>"
			"<edge from-layer=\"1\" from-port=\"0\" to-layer=\"2\" to-port=\"1\"/>"
			"<edge from-layer=\"2\" from-port=\"2\" to-layer=\"3\" to-port=\"0\"/>",
			last + 1, dims, last + 2, dims);
	for (k = 4; k <= last; k++)
		off += snprintf(x + off, cap - off,
				"<edge from-layer=\"%d\" from-port=\"1\" to-layer=\"%d\" to-port=\"0\"/>",
				k - 1, k);
	snprintf(x + off, cap - off,
		 "<edge from-layer=\"%d\" from-port=\"1\" to-layer=\"%d\" to-port=\"0\"/>"
		 "<edge from-layer=\"2\" from-port=\"2\" to-layer=\"%d\" to-port=\"0\"/>"
		 "</edges></net>\n", last, last + 1, last + 2);
	return x;
}

/* A request of the stateful chain compiled with @timeout_ms, s := @s. */
static uint32_t stateful_request(struct npr_test *_metadata, int fd,
				 uint32_t timeout_ms, const float *s)
{
	struct npr_model_load ml = { .size = sizeof(ml) };
	struct npr_make_stateful ms = { .size = sizeof(ms) };
	struct npr_state_pair pair = { (uintptr_t)"s", (uintptr_t)"s_out" };
	struct npr_compile co = { .size = sizeof(co) };
	struct npr_req_create rc = { .size = sizeof(rc) };
	struct npr_state_arg st = { .size = sizeof(st) };
	struct npr_prop_arg pa = { .param = NPR_PARAM_NPR_INFER_TIMEOUT_MS };
	char *xml = stateful_chain_xml(CHAIN_LEN, CHAIN_WIDTH);
	int err;

	if (!xml)
		return 0;
	ml.flags = NPR_MODEL_LOAD_MEMORY;
	ml.xml = (uintptr_t)xml;
	ml.xml_size = strlen(xml);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	free(xml);
	EXPECT_EQ(err, 0);
	ms.model = ml.handle;
	ms.count = 1;
	ms.pairs = (uintptr_t)&pair;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_MAKE_STATEFUL, &ms), 0);
	co.model = ml.handle;
	pa.value = timeout_ms;
	co.props = (uintptr_t)&pa;
	co.num_props = 1;
	if (npr_ioctl(fd, NPR_IOCTL_COMPILE, &co))
		return 0;
	rc.exec = co.exec;
	if (npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc))
		return 0;
	st.req = rc.req;
	st.elem_type = NPR_ELEM_F32;
	st.rank = 2;
	st.dims[0] = 1;
	st.dims[1] = CHAIN_WIDTH;
	st.data = (uintptr_t)s;
	st.bytes = CHAIN_WIDTH * sizeof(float);
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_STATE_SET, &st), 0);
	return rc.req;
}

static int state_get(int fd, uint32_t req, float *s)
{
	struct npr_state_arg st = { .size = sizeof(st) };

	st.req = req;
	st.data = (uintptr_t)s;
	st.bytes = CHAIN_WIDTH * sizeof(float);
	return npr_ioctl(fd, NPR_IOCTL_STATE_GET, &st);
}

TEST(sync_infer_timeout_keeps_variables)
{
	size_t bytes = CHAIN_WIDTH * sizeof(float);
	float *s0 = malloc(bytes), *s = malloc(bytes), *x = calloc(1, bytes);
	struct npr_tensor_arg ta = { .size = sizeof(ta) };
	struct npr_infer inf = { .size = sizeof(inf) };
	int fd = npr_open("cpu", 0), k;
	uint32_t req, slow;

	ASSERT_TRUE(s0 && s && x);
	ASSERT_GE(fd, 0);
	for (k = 0; k < CHAIN_WIDTH; k++)
		s0[k] = 3.0f;	/* sigmoid values are < 1: a run changes it */
	slow = stateful_request(_metadata, fd, 0, s0);
	req = stateful_request(_metadata, fd, 1, s0);
	ASSERT_NE(slow, 0);
	ASSERT_NE(req, 0);
	for (k = 0; k < 2; k++) {
		ta.req = k ? req : slow;
		ta.elem_type = NPR_ELEM_F32;
		ta.rank = 2;
		ta.dims[0] = 1;
		ta.dims[1] = CHAIN_WIDTH;
		ta.data = (uintptr_t)x;
		ta.bytes = bytes;
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
	}
	/* without a limit the run changes the variable */
	inf.req = slow;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_INFER, &inf), 0);
	ASSERT_EQ(state_get(fd, slow, s), 0);
	EXPECT_NE(memcmp(s, s0, bytes), 0);
	if (inf.finished_ns - inf.started_ns < 20000000ull) {
		npr_close(fd);
		SKIP(goto out, "the model took %llu us: too fast to outlast 1 ms for sure",
		     (unsigned long long)(inf.finished_ns - inf.started_ns) /
		     1000);
	}
	/* with it, the variable keeps its value */
	inf.req = req;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_INFER, &inf), -ETIME);
	ASSERT_EQ(state_get(fd, req, s), 0);
	EXPECT_EQ(memcmp(s, s0, bytes), 0);
	EXPECT_EQ(npr_close(fd), 0);
out:
	free(s0);
	free(s);
	free(x);
}

TEST_HARNESS_MAIN
