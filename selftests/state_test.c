// SPDX-License-Identifier: MIT
/*
 * Stateful models: the ReadValue/Assign snippets of ../shared/models/
 * ir-stateful run for 100 steps, with resets in between, and every output
 * is compared with its closed form; the variable ioctls (info, get, set,
 * reset) and their errors; requests keep separate variables; malformed
 * variable graphs fail at compile with a message naming the layer.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "npuring.h"

FIXTURE(state) {
	int fd;
	__u32 model, exec, req;
	bool loaded;
};

/* Every test on cpu, and on npu (vnpu, or an NPU) when there is one. */
FIXTURE_VARIANT(state) {
	const char *device;
};

FIXTURE_VARIANT_ADD(state, cpu) {
	.device = "cpu",
};

FIXTURE_VARIANT_ADD(state, npu) {
	.device = "npu",
};

FIXTURE_SETUP(state)
{
	self->fd = npr_open(variant->device, 0);
	if (self->fd < 0 && !strcmp(variant->device, "npu"))
		SKIP(return, "no npu device: %s (make check sets NPR_VNPU)",
		     npr_last_error());
	ASSERT_GE(self->fd, 0);
}

FIXTURE_TEARDOWN(state)
{
	if (self->fd >= 0)
		npr_close(self->fd);
}

/* Load ir-stateful/@file, compile it and create one request. */
static bool setup_model(struct npr_test *_metadata, FIXTURE_DATA(state) *self,
			const char *file)
{
	char path[4096];
	struct npr_model_load ml;
	struct npr_compile co;
	struct npr_req_create rc;
	int err;

	if (!npr_test_shared_ok())
		return false;
	if (snprintf(path, sizeof(path), "%s/models/ir-stateful/%s",
		     npr_test_shared(), file) >= (int)sizeof(path))
		return false;
	npr_prep_model_load(&ml, path, NULL);
	err = npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err)
		TH_LOG("%s: %s", file, npr_last_error());
	EXPECT_EQ(err, 0);
	if (err)
		return false;
	self->model = ml.handle;
	npr_prep_compile(&co, self->model);
	err = npr_ioctl(self->fd, NPR_IOCTL_COMPILE, &co);
	if (err)
		TH_LOG("%s: %s", file, npr_last_error());
	EXPECT_EQ(err, 0);
	if (err)
		return false;
	self->exec = co.exec;
	npr_prep_req_create(&rc, self->exec);
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	self->req = rc.req;
	return true;
}

#define SETUP_MODEL(file) do {						\
	if (!npr_test_shared_ok())					\
		SKIP(return, "no shared data at %s", npr_test_shared());	\
	ASSERT_TRUE(setup_model(_metadata, self, file));		\
} while (0)

/* Set input 0 to @x (@n floats), infer, read output 0 into @y. */
static int step(int fd, __u32 req, const float *x, size_t n, float *y,
		size_t ny)
{
	struct npr_tensor_arg t;
	struct npr_infer inf;
	int err;

	npr_prep_tensor(&t, req, 0, 0, NULL, 0);
	err = npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &t);	/* shape */
	if (err && err != -EMSGSIZE)
		return err;
	t.data = (uintptr_t)x;
	t.bytes = n * sizeof(float);
	t.flags = 0;
	err = npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &t);
	if (err)
		return err;
	npr_prep_infer(&inf, req);
	err = npr_ioctl(fd, NPR_IOCTL_INFER, &inf);
	if (err)
		return err;
	npr_prep_tensor(&t, req, 0, 1, y, ny * sizeof(float));
	return npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &t);
}

static int reset_all(int fd, __u32 req)
{
	struct npr_state_arg s = {
		.size = sizeof(s), .flags = NPR_STATE_RESET_ALL, .req = req,
	};

	return npr_ioctl(fd, NPR_IOCTL_STATE_RESET, &s);
}

static bool near(float a, float b)
{
	return fabsf(a - b) <= 1e-5f * (1 + fabsf(b));
}

static float input_at(int t)
{
	return 0.25f * (float)(t % 13) - 1.0f;
}

/* adder: out = in + s; s := out.  Resets at steps 40 and 77. */
TEST_F(state, adder_100_steps_with_resets)
{
	float s = 0, x, y;
	int t;

	SETUP_MODEL("adder_v11.xml");
	for (t = 0; t < 100; t++) {
		if (t == 40 || t == 77) {
			ASSERT_EQ(reset_all(self->fd, self->req), 0);
			s = 0;
		}
		x = input_at(t);
		ASSERT_EQ(step(self->fd, self->req, &x, 1, &y, 1), 0);
		s = x + s;
		if (!near(y, s))
			TH_LOG("step %d: %g, expected %g", t, y, s);
		ASSERT_TRUE(near(y, s));
	}
}

/* summator (v10, opset6): out = in + 2 s; s := in + s. */
TEST_F(state, summator_100_steps_with_resets)
{
	float s = 0, x, y, want;
	int t;

	SETUP_MODEL("summator_v10.xml");
	for (t = 0; t < 100; t++) {
		if (t == 33 || t == 66) {
			ASSERT_EQ(reset_all(self->fd, self->req), 0);
			s = 0;
		}
		x = input_at(t);
		ASSERT_EQ(step(self->fd, self->req, &x, 1, &y, 1), 0);
		want = x + 2 * s;
		s = x + s;
		if (!near(y, want))
			TH_LOG("step %d: %g, expected %g", t, y, want);
		ASSERT_TRUE(near(y, want));
	}
}

/* sliding window (v10, opset3): the last four inputs, zeros at first. */
TEST_F(state, sliding_window_100_steps_with_resets)
{
	float hist[4] = { 0 }, x, y[4];
	int t, i;

	SETUP_MODEL("sliding_window_summator_v10.xml");
	for (t = 0; t < 100; t++) {
		if (t == 50) {
			ASSERT_EQ(reset_all(self->fd, self->req), 0);
			memset(hist, 0, sizeof(hist));
		}
		x = input_at(t) + 3.0f;
		ASSERT_EQ(step(self->fd, self->req, &x, 1, y, 4), 0);
		memmove(hist, hist + 1, 3 * sizeof(float));
		hist[3] = x;
		for (i = 0; i < 4; i++) {
			if (y[i] != hist[i])
				TH_LOG("step %d [%d]: %g, expected %g", t, i,
				       y[i], hist[i]);
			ASSERT_EQ(y[i], hist[i]);
		}
	}
}

/* A variable never assigned keeps giving its initial value, here computed
 * from the input: out = squeeze(relu(x)). */
TEST_F(state, dynamic_variable_reads_its_initial_value)
{
	float x[128], y[128];
	int t, i;

	SETUP_MODEL("dynamic_variable_v11.xml");
	for (t = 0; t < 5; t++) {
		for (i = 0; i < 128; i++)
			x[i] = (float)((i * 7 + t * 3) % 17) - 8.0f;
		ASSERT_EQ(step(self->fd, self->req, x, 128, y, 128), 0);
		for (i = 0; i < 128; i++)
			ASSERT_EQ(y[i], x[i] > 0 ? x[i] : 0.0f);
	}
}

TEST_F(state, variable_ioctls)
{
	struct npr_state_arg s = { .size = sizeof(s) };
	char name[64];
	float v, x = 2, y;

	SETUP_MODEL("adder_v11.xml");
	s.req = self->req;
	s.name = (uintptr_t)name;
	s.name_len = sizeof(name);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_STATE_INFO, &s), 0);
	EXPECT_EQ(s.count, 1);
	EXPECT_STREQ(name, "variable0");
	EXPECT_EQ(s.elem_type, NPR_ELEM_F32);
	EXPECT_EQ(s.rank, 2);
	EXPECT_EQ(s.dims[0], 1);
	EXPECT_EQ(s.dims[1], 1);
	EXPECT_EQ(s.bytes, sizeof(float));

	/* the initial value, then what the inferences stored */
	s.data = (uintptr_t)&v;
	s.bytes = sizeof(v);
	v = -1;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_STATE_GET, &s), 0);
	EXPECT_EQ(v, 0);
	ASSERT_EQ(step(self->fd, self->req, &x, 1, &y, 1), 0);
	ASSERT_EQ(step(self->fd, self->req, &x, 1, &y, 1), 0);
	EXPECT_EQ(y, 4);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_STATE_GET, &s), 0);
	EXPECT_EQ(v, 4);

	/* SET feeds the next inference */
	v = 100;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_STATE_SET, &s), 0);
	ASSERT_EQ(step(self->fd, self->req, &x, 1, &y, 1), 0);
	EXPECT_EQ(y, 102);

	/* RESET of one variable */
	s.flags = 0;
	s.index = 0;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_STATE_RESET, &s), 0);
	ASSERT_EQ(step(self->fd, self->req, &x, 1, &y, 1), 0);
	EXPECT_EQ(y, 2);
}

TEST_F(state, variable_ioctl_errors)
{
	struct npr_state_arg s = { .size = sizeof(s) };
	double d = 0;
	float v = 0, big[4] = { 0 };

	SETUP_MODEL("adder_v11.xml");
	s.req = self->req;
	s.index = 1;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_STATE_INFO, &s), -ENOENT);
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_STATE_RESET, &s), -ENOENT);
	s.index = 0;
	/* GET into a buffer too small: -EMSGSIZE and the size */
	s.data = (uintptr_t)&v;
	s.bytes = 2;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_STATE_GET, &s), -EMSGSIZE);
	EXPECT_EQ(s.bytes, sizeof(float));
	/* SET: wrong type, rank, dims, size */
	s.elem_type = NPR_ELEM_F64;
	s.rank = 2;
	s.dims[0] = 1;
	s.dims[1] = 1;
	s.data = (uintptr_t)&d;
	s.bytes = sizeof(d);
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_STATE_SET, &s), -EINVAL);
	s.elem_type = NPR_ELEM_F32;
	s.rank = 1;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_STATE_SET, &s), -EINVAL);
	s.rank = 2;
	s.dims[1] = 4;
	s.data = (uintptr_t)big;
	s.bytes = sizeof(big);
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_STATE_SET, &s), -EINVAL);
	s.dims[1] = 1;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_STATE_SET, &s), -EINVAL);
	/* unknown flag; RESET_ALL only on RESET */
	s.bytes = sizeof(float);
	s.flags = NPR_STATE_RESET_ALL;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_STATE_GET, &s), -EOPNOTSUPP);
	s.flags = 1U << 7;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_STATE_RESET, &s), -EOPNOTSUPP);
	/* not a request */
	s.flags = 0;
	s.req = self->exec;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_STATE_INFO, &s), -EBADF);
	/* the state ports are not the caller's */
	{
		struct npr_model_info mi = { .size = sizeof(mi),
					     .handle = self->exec };

		ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MODEL_INFO, &mi), 0);
		EXPECT_EQ(mi.num_inputs, 1);
		EXPECT_EQ(mi.num_outputs, 1);
	}
}

/* Each request has its own variables. */
TEST_F(state, requests_keep_their_own_variables)
{
	struct npr_req_create rc;
	float one = 1, ten = 10, y;
	int t;

	SETUP_MODEL("adder_v11.xml");
	npr_prep_req_create(&rc, self->exec);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	for (t = 1; t <= 5; t++) {
		ASSERT_EQ(step(self->fd, self->req, &one, 1, &y, 1), 0);
		EXPECT_EQ(y, (float)t);
		ASSERT_EQ(step(self->fd, rc.req, &ten, 1, &y, 1), 0);
		EXPECT_EQ(y, 10.0f * t);
	}
}

/* A model without variables answers with count 0. */
TEST_F(state, stateless_model_has_no_variables)
{
	struct npr_state_arg s = { .size = sizeof(s) };
	char path[4096];
	struct npr_model_load ml;
	struct npr_compile co;
	struct npr_req_create rc;

	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s", npr_test_shared());
	ASSERT_LT(snprintf(path, sizeof(path),
			   "%s/models/ir/open-closed-eye-0001/FP32/open-closed-eye-0001.xml",
			   npr_test_shared()), (int)sizeof(path));
	npr_prep_model_load(&ml, path, NULL);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	npr_prep_compile(&co, ml.handle);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_COMPILE, &co), 0);
	npr_prep_req_create(&rc, co.exec);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	s.req = rc.req;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_STATE_INFO, &s), -ENOENT);
	/* RESET_ALL has nothing to do, and succeeds */
	s.flags = NPR_STATE_RESET_ALL;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_STATE_RESET, &s), 0);
	EXPECT_EQ(s.count, 0);
}

/* ---- malformed variable graphs ----------------------------------------- */

/*
 * Parameter x [1,2] -> ReadValue(@rv_id, init x) -> Add(x) -> Assign(@as_id)
 * and -> Result; @as_dims changes the Assign's input through a Concat.
 */
static int compile_xml(int fd, const char *xml)
{
	struct npr_model_load ml;
	struct npr_compile co;
	int err;

	npr_prep_model_load_mem(&ml, xml, strlen(xml), NULL, 0);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err)
		return err;
	npr_prep_compile(&co, ml.handle);
	return npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
}

#define P2 "<port id=\"%d\" precision=\"FP32\"><dim>1</dim><dim>2</dim></port>"

static char *net(const char *rv_id, const char *as_id, bool second_read,
		 bool concat)
{
	static char buf[8192];
	int n;

	n = snprintf(buf, sizeof(buf),
		"<?xml version=\"1.0\"?><net name=\"v\" version=\"11\"><layers>"
		"<layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\">"
		"<data shape=\"1,2\" element_type=\"f32\"/><output>" P2 "</output></layer>"
		"<layer id=\"1\" name=\"rv\" type=\"ReadValue\" version=\"opset6\">"
		"<data variable_id=\"%s\"/><input>" P2 "</input><output>" P2 "</output></layer>"
		"<layer id=\"2\" name=\"add\" type=\"Add\" version=\"opset1\">"
		"<input>" P2 P2 "</input><output>" P2 "</output></layer>"
		"<layer id=\"4\" name=\"out\" type=\"Result\" version=\"opset1\">"
		"<input>" P2 "</input></layer>",
		0, rv_id, 0, 1, 0, 1, 2, 0);
	if (concat)
		n += snprintf(buf + n, sizeof(buf) - n,
			"<layer id=\"5\" name=\"cat\" type=\"Concat\" version=\"opset1\">"
			"<data axis=\"1\"/><input>" P2 P2 "</input><output>"
			"<port id=\"2\" precision=\"FP32\"><dim>1</dim><dim>4</dim></port>"
			"</output></layer>"
			"<layer id=\"3\" name=\"as\" type=\"Assign\" version=\"opset6\">"
			"<data variable_id=\"%s\"/><input>"
			"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>4</dim></port>"
			"</input></layer>", 0, 1, as_id);
	else
		n += snprintf(buf + n, sizeof(buf) - n,
			"<layer id=\"3\" name=\"as\" type=\"Assign\" version=\"opset6\">"
			"<data variable_id=\"%s\"/><input>" P2 "</input></layer>",
			as_id, 0);
	if (second_read)
		n += snprintf(buf + n, sizeof(buf) - n,
			"<layer id=\"6\" name=\"rv2\" type=\"ReadValue\" version=\"opset6\">"
			"<data variable_id=\"%s\"/><input>" P2 "</input><output>" P2 "</output></layer>"
			"<layer id=\"7\" name=\"out2\" type=\"Result\" version=\"opset1\">"
			"<input>" P2 "</input></layer>", rv_id, 0, 1, 0);
	n += snprintf(buf + n, sizeof(buf) - n,
		"</layers><edges>"
		"<edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\" to-port=\"0\"/>"
		"<edge from-layer=\"0\" from-port=\"0\" to-layer=\"2\" to-port=\"0\"/>"
		"<edge from-layer=\"1\" from-port=\"1\" to-layer=\"2\" to-port=\"1\"/>"
		"<edge from-layer=\"2\" from-port=\"2\" to-layer=\"4\" to-port=\"0\"/>");
	if (concat)
		n += snprintf(buf + n, sizeof(buf) - n,
			"<edge from-layer=\"2\" from-port=\"2\" to-layer=\"5\" to-port=\"0\"/>"
			"<edge from-layer=\"0\" from-port=\"0\" to-layer=\"5\" to-port=\"1\"/>"
			"<edge from-layer=\"5\" from-port=\"2\" to-layer=\"3\" to-port=\"0\"/>");
	else
		n += snprintf(buf + n, sizeof(buf) - n,
			"<edge from-layer=\"2\" from-port=\"2\" to-layer=\"3\" to-port=\"0\"/>");
	if (second_read)
		n += snprintf(buf + n, sizeof(buf) - n,
			"<edge from-layer=\"0\" from-port=\"0\" to-layer=\"6\" to-port=\"0\"/>"
			"<edge from-layer=\"6\" from-port=\"1\" to-layer=\"7\" to-port=\"0\"/>");
	snprintf(buf + n, sizeof(buf) - n, "</edges></net>");
	return buf;
}

TEST_F(state, malformed_variable_graphs)
{
	/* sanity: the well-formed variant compiles */
	ASSERT_EQ(compile_xml(self->fd, net("v", "v", false, false)), 0);

	EXPECT_EQ(compile_xml(self->fd, net("v", "w", false, false)),
		  -EINVAL);
	EXPECT_NE(strstr(npr_last_error(), "which no ReadValue reads"), NULL);
	EXPECT_NE(strstr(npr_last_error(), "Assign"), NULL);

	EXPECT_EQ(compile_xml(self->fd, net("v", "v", true, false)), -EINVAL);
	EXPECT_NE(strstr(npr_last_error(), "second ReadValue"), NULL);

	EXPECT_EQ(compile_xml(self->fd, net("v", "v", false, true)), -EINVAL);
	EXPECT_NE(strstr(npr_last_error(), "[1,4]"), NULL);

	EXPECT_EQ(compile_xml(self->fd, net("", "", false, false)), -EINVAL);
	EXPECT_NE(strstr(npr_last_error(), "variable_id"), NULL);
}

/* ---- MakeStateful -------------------------------------------------------- */

/*
 * x [1,2], h_in [1,2] -> h_out = x + h_in -> y = h_out * 2 (Multiply by a
 * Constant).  Outputs y and h_out.  With (h_in, h_out) made a variable:
 * h_t = x_t + h_{t-1}, y_t = 2 h_t.
 */
static const char explicit_xml[] =
	"<?xml version=\"1.0\"?><net name=\"explicit\" version=\"11\"><layers>"
	"<layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\">"
	"<data shape=\"1,2\" element_type=\"f32\"/><output>"
	"<port id=\"0\" precision=\"FP32\" names=\"x\"><dim>1</dim><dim>2</dim></port></output></layer>"
	"<layer id=\"1\" name=\"h_in\" type=\"Parameter\" version=\"opset1\">"
	"<data shape=\"1,2\" element_type=\"f32\"/><output>"
	"<port id=\"0\" precision=\"FP32\" names=\"h_in\"><dim>1</dim><dim>2</dim></port></output></layer>"
	"<layer id=\"2\" name=\"add\" type=\"Add\" version=\"opset1\"><input>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>2</dim></port>"
	"<port id=\"1\" precision=\"FP32\"><dim>1</dim><dim>2</dim></port></input><output>"
	"<port id=\"2\" precision=\"FP32\" names=\"h_out\"><dim>1</dim><dim>2</dim></port></output></layer>"
	"<layer id=\"3\" name=\"two\" type=\"Const\" version=\"opset1\">"
	"<data element_type=\"f32\" shape=\"1\" offset=\"0\" size=\"4\"/><output>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim></port></output></layer>"
	"<layer id=\"4\" name=\"mul\" type=\"Multiply\" version=\"opset1\"><input>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>2</dim></port>"
	"<port id=\"1\" precision=\"FP32\"><dim>1</dim></port></input><output>"
	"<port id=\"2\" precision=\"FP32\" names=\"y\"><dim>1</dim><dim>2</dim></port></output></layer>"
	"<layer id=\"5\" name=\"y/sink\" type=\"Result\" version=\"opset1\"><input>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>2</dim></port></input></layer>"
	"<layer id=\"6\" name=\"h_out/sink\" type=\"Result\" version=\"opset1\"><input>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>2</dim></port></input></layer>"
	"</layers><edges>"
	"<edge from-layer=\"0\" from-port=\"0\" to-layer=\"2\" to-port=\"0\"/>"
	"<edge from-layer=\"1\" from-port=\"0\" to-layer=\"2\" to-port=\"1\"/>"
	"<edge from-layer=\"2\" from-port=\"2\" to-layer=\"4\" to-port=\"0\"/>"
	"<edge from-layer=\"3\" from-port=\"0\" to-layer=\"4\" to-port=\"1\"/>"
	"<edge from-layer=\"4\" from-port=\"2\" to-layer=\"5\" to-port=\"0\"/>"
	"<edge from-layer=\"2\" from-port=\"2\" to-layer=\"6\" to-port=\"0\"/>"
	"</edges></net>";

static int load_explicit(int fd, __u32 *model)
{
	static const float two = 2;
	struct npr_model_load ml;
	int err;

	npr_prep_model_load_mem(&ml, explicit_xml, strlen(explicit_xml), &two,
				sizeof(two));
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	*model = ml.handle;
	return err;
}

static int make_stateful(int fd, __u32 model, const char *in,
			 const char *out)
{
	struct npr_state_pair p = { (uintptr_t)in, (uintptr_t)out };
	struct npr_make_stateful a = {
		.size = sizeof(a), .model = model, .count = 1,
		.pairs = (uintptr_t)&p,
	};

	return npr_ioctl(fd, NPR_IOCTL_MAKE_STATEFUL, &a);
}

TEST_F(state, make_stateful_runs_the_explicit_model_as_a_stateful_one)
{
	struct npr_model_info mi = { .size = sizeof(mi) };
	struct npr_compile co;
	struct npr_req_create rc;
	float x[2], y[2], h[2] = { 0, 0 };
	int t;

	ASSERT_EQ(load_explicit(self->fd, &self->model), 0);
	ASSERT_EQ(make_stateful(self->fd, self->model, "h_in", "h_out"), 0);
	mi.handle = self->model;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MODEL_INFO, &mi), 0);
	EXPECT_EQ(mi.num_inputs, 1);
	EXPECT_EQ(mi.num_outputs, 1);
	npr_prep_compile(&co, self->model);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_COMPILE, &co), 0);
	npr_prep_req_create(&rc, co.exec);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	for (t = 0; t < 30; t++) {
		if (t == 17) {
			ASSERT_EQ(reset_all(self->fd, rc.req), 0);
			h[0] = h[1] = 0;
		}
		x[0] = input_at(t);
		x[1] = -2 * input_at(t + 5);
		ASSERT_EQ(step(self->fd, rc.req, x, 2, y, 2), 0);
		h[0] += x[0];
		h[1] += x[1];
		ASSERT_TRUE(near(y[0], 2 * h[0]));
		ASSERT_TRUE(near(y[1], 2 * h[1]));
	}
	{
		struct npr_state_arg s = { .size = sizeof(s), .req = rc.req };
		char name[32];

		s.name = (uintptr_t)name;
		s.name_len = sizeof(name);
		ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_STATE_INFO, &s), 0);
		EXPECT_STREQ(name, "h_in");
	}
}

TEST_F(state, make_stateful_errors_change_nothing)
{
	struct npr_model_info mi = { .size = sizeof(mi) };

	ASSERT_EQ(load_explicit(self->fd, &self->model), 0);
	EXPECT_EQ(make_stateful(self->fd, self->model, "nope", "h_out"),
		  -ENOENT);
	EXPECT_NE(strstr(npr_last_error(), "nope"), NULL);
	EXPECT_EQ(make_stateful(self->fd, self->model, "h_in", "nope"),
		  -ENOENT);
	/* y is [1,2] too, but x feeds it: fine by shape; h_in with itself
	 * as both ends of two pairs is not */
	{
		struct npr_state_pair p[2] = {
			{ (uintptr_t)"h_in", (uintptr_t)"h_out" },
			{ (uintptr_t)"h_in", (uintptr_t)"y" },
		};
		struct npr_make_stateful a = {
			.size = sizeof(a), .model = self->model, .count = 2,
			.pairs = (uintptr_t)p,
		};

		EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MAKE_STATEFUL, &a),
			  -EINVAL);
		a.count = 0;
		EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MAKE_STATEFUL, &a),
			  -EINVAL);
	}
	mi.handle = self->model;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MODEL_INFO, &mi), 0);
	EXPECT_EQ(mi.num_inputs, 2);
	EXPECT_EQ(mi.num_outputs, 2);
}

TEST_HARNESS_MAIN
