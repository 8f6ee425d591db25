// SPDX-License-Identifier: MIT
/*
 * The ops with a body, through the public API: small IR models built here
 * in memory (rnn_util.h) run on the cpu device and are checked against
 * the same computation unrolled by hand (TensorIterator, Loop), against
 * each branch (If), and for the errors a broken body must give; the
 * shared loop and TensorIterator models run too.  The recurrent cells,
 * sequences and attention are in rnn_test.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "xb.h"
#include "npuring.h"
#include "rnn_util.h"

/* ---- TensorIterator ---------------------------------------------------- */

/*
 * h = Tanh(Add(x_t, h)) over the 3 steps of X [1, 3, 2] (axis 1), h from
 * H [1, 1, 2]; outputs: every h concatenated on axis 1, and the last h.
 * With @rev the steps run backwards (start -1, end 0, stride -1) and are
 * concatenated backwards too.
 */
static void ti_net(struct xb *b, bool rev, const char *axis,
		   int internal_x)
{
	struct xb body = { 0 };
	char extra[4096];
	const char *sl = rev ? " start=\"-1\" end=\"0\" stride=\"-1\"" : "";

	xb_add(&body, "<layers>");
	param(&body, 0, "f32", "1,1,2");
	param(&body, 1, "f32", "1,1,2");
	layer(&body, 2, "Add", "opset1", NULL, "1,1,2|1,1,2", "1,1,2");
	layer(&body, 3, "Tanh", "opset1", NULL, "1,1,2", "1,1,2");
	result(&body, 4, "1,1,2");
	edges(&body);
	edge(&body, 0, 0, 2, 0);
	edge(&body, 1, 0, 2, 1);
	edge(&body, 2, 2, 3, 0);
	edge(&body, 3, 1, 4, 0);
	xb_add(&body, "</edges>");
	snprintf(extra, sizeof(extra),
		 "<port_map><input external_port_id=\"0\" internal_layer_id=\"%d\" axis=\"%s\"%s/>"
		 "<input external_port_id=\"1\" internal_layer_id=\"1\"/>"
		 "<output external_port_id=\"2\" internal_layer_id=\"4\" axis=\"1\"%s/>"
		 "<output external_port_id=\"3\" internal_layer_id=\"4\"/></port_map>"
		 "<back_edges><edge from-layer=\"4\" to-layer=\"1\"/></back_edges>"
		 "<body>%s</body>", internal_x, axis, sl, sl, body.buf);
	free(body.buf);
	begin(b);
	param(b, 0, "f32", "1,3,2");
	param(b, 1, "f32", "1,1,2");
	layer_x(b, 2, "TensorIterator", "opset1", NULL, "1,3,2|1,1,2",
		"1,3,2|1,1,2", extra);
	result(b, 3, "1,3,2");
	result(b, 4, "1,1,2");
	edges(b);
	edge(b, 0, 0, 2, 0);
	edge(b, 1, 0, 2, 1);
	edge(b, 2, 2, 3, 0);
	edge(b, 2, 3, 4, 0);
	end(b);
}

static void ti_matches_unrolled(FIXTURE_DATA(rnn) *self,
				struct npr_test *_metadata, bool rev)
{
	static const float x[6] = { 0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f };
	static const float h0[2] = { 0.05f, -0.05f };
	struct tin in[2] = { f32(3, 1, 3, 2, 0, x), f32(3, 1, 1, 2, 0, h0) };
	float y[6], last[2], *out[2] = { y, last };
	size_t cnt[2] = { 6, 2 };
	double h[2] = { h0[0], h0[1] }, ey[6];
	int i, k;

	ti_net(&self->x, rev, "1", 0);
	RUN(2, in, 2, out, cnt);
	/* the body unrolled by hand */
	for (i = 0; i < 3; i++) {
		int t = rev ? 2 - i : i;

		for (k = 0; k < 2; k++) {
			h[k] = tanh(x[t * 2 + k] + h[k]);
			ey[t * 2 + k] = h[k];
		}
	}
	for (i = 0; i < 6; i++)
		NEAR(y[i], ey[i]);
	NEAR(last[0], h[0]);
	NEAR(last[1], h[1]);
}

TEST_F(rnn, tensor_iterator_equals_the_unrolled_body)
{
	ti_matches_unrolled(self, _metadata, false);
}

TEST_F(rnn, tensor_iterator_with_negative_stride_runs_backwards)
{
	ti_matches_unrolled(self, _metadata, true);
}

TEST_F(rnn, port_map_naming_a_missing_body_layer_fails)
{
	ti_net(&self->x, false, "1", 9);
	RUN_FAILS(-EINVAL, "port map names body layer 9, which does not exist");
}

TEST_F(rnn, port_map_naming_a_body_layer_that_is_not_a_parameter_fails)
{
	ti_net(&self->x, false, "1", 2);
	RUN_FAILS(-EINVAL, "body layer 2, which is a Add, not a Parameter");
}

TEST_F(rnn, slicing_axis_out_of_range_fails)
{
	ti_net(&self->x, false, "5", 0);
	RUN_FAILS(-EINVAL, "axis 5 is out of range for input 0 of rank 3");
}

/*
 * A TensorIterator whose body holds another, @depth deep; the innermost
 * body computes Tanh.  Input and output [1, 2], sliced on axis 0 (one
 * iteration).
 */
static void nested_ti(struct xb *b, int id, int depth)
{
	struct xb body = { 0 };

	xb_add(&body, "<layers>");
	param(&body, 0, "f32", "1,2");
	if (depth > 1)
		nested_ti(&body, 1, depth - 1);
	else
		layer(&body, 1, "Tanh", "opset1", NULL, "1,2", "1,2");
	result(&body, 2, "1,2");
	edges(&body);
	edge(&body, 0, 0, 1, 0);
	edge(&body, 1, 1, 2, 0);
	xb_add(&body, "</edges>");
	xb_add(b, "<layer id=\"%d\" name=\"ti%d\" type=\"TensorIterator\" version=\"opset1\">"
	       "<input><port id=\"0\"><dim>1</dim><dim>2</dim></port></input>"
	       "<output><port id=\"1\" precision=\"FP32\"><dim>1</dim><dim>2</dim></port></output>"
	       "<port_map><input external_port_id=\"0\" internal_layer_id=\"0\" axis=\"0\"/>"
	       "<output external_port_id=\"1\" internal_layer_id=\"2\" axis=\"0\"/></port_map>"
	       "<body>%s</body></layer>\n", id, depth, body.buf);
	free(body.buf);
}

static void nested_net(struct xb *b, int depth)
{
	begin(b);
	param(b, 0, "f32", "1,2");
	nested_ti(b, 1, depth);
	result(b, 2, "1,2");
	edges(b);
	edge(b, 0, 0, 1, 0);
	edge(b, 1, 1, 2, 0);
	end(b);
}

TEST_F(rnn, nested_tensor_iterators_run)
{
	static const float x[2] = { 0.5f, -1.5f };
	struct tin in[1] = { f32(2, 1, 2, 0, 0, x) };
	float y[2], *out[1] = { y };
	size_t cnt[1] = { 2 };

	nested_net(&self->x, 3);
	RUN(1, in, 1, out, cnt);
	NEAR(y[0], tanh(0.5));
	NEAR(y[1], tanh(-1.5));
}

TEST_F(rnn, bodies_nested_too_deep_fail)
{
	nested_net(&self->x, 9);
	RUN_FAILS(-EFBIG, "nested more than 8 deep");
}

TEST_F(rnn, error_inside_a_body_names_the_outer_layer_and_the_body_layer)
{
	char *p;

	ti_net(&self->x, false, "1", 0);
	p = strstr(self->x.buf, "type=\"Tanh\"");
	ASSERT_NE(p, NULL);
	memcpy(p, "type=\"Tanx\"", 11);
	RUN_FAILS(-EOPNOTSUPP,
		  "layer 2 (l2, TensorIterator-1): body: layer 3 (l3): unknown op Tanx");
}

/*
 * f16 constants inside a body are lowered with the model: X [1, 2, 2]
 * sliced on axis 1, plus an f16 Const [1, 1, 2] = { 0.5, -0.25 } (0x3800,
 * 0xb400), concatenated back.
 */
TEST_F(rnn, f16_constant_inside_a_body_is_lowered)
{
	static const uint16_t half[2] = { 0x3800, 0xb400 };
	static const float x[4] = { 1.0f, 2.0f, 3.0f, 4.0f };
	struct tin in[1] = { f32(3, 1, 2, 2, 0, x) };
	float y[4], *out[1] = { y };
	size_t cnt[1] = { 4 };
	struct xb body = { 0 };
	char extra[4096];

	self->bin = half;
	self->bin_len = sizeof(half);
	xb_add(&body, "<layers>");
	param(&body, 0, "f32", "1,1,2");
	konst(&body, 1, "f16", "1,1,2", 0, 4);
	layer(&body, 2, "Add", "opset1", NULL, "1,1,2|1,1,2", "1,1,2");
	result(&body, 3, "1,1,2");
	edges(&body);
	edge(&body, 0, 0, 2, 0);
	edge(&body, 1, 0, 2, 1);
	edge(&body, 2, 2, 3, 0);
	xb_add(&body, "</edges>");
	snprintf(extra, sizeof(extra),
		 "<port_map><input external_port_id=\"0\" internal_layer_id=\"0\" axis=\"1\"/>"
		 "<output external_port_id=\"1\" internal_layer_id=\"3\" axis=\"1\"/></port_map>"
		 "<body>%s</body>", body.buf);
	free(body.buf);
	begin(&self->x);
	param(&self->x, 0, "f32", "1,2,2");
	layer_x(&self->x, 1, "TensorIterator", "opset1", NULL, "1,2,2",
		"1,2,2", extra);
	result(&self->x, 2, "1,2,2");
	edges(&self->x);
	edge(&self->x, 0, 0, 1, 0);
	edge(&self->x, 1, 1, 2, 0);
	end(&self->x);
	RUN(1, in, 1, out, cnt);
	NEAR(y[0], 1.5);
	NEAR(y[1], 1.75);
	NEAR(y[2], 3.5);
	NEAR(y[3], 3.75);
}

/* ---- Loop ----------------------------------------------------------- */

/*
 * a = a + [1, 10] while the trip count allows and the body's condition
 * (current_iteration < 2, checked after each iteration) holds.
 */
static void loop_net(FIXTURE_DATA(rnn) *self, int64_t trip, char *bin,
		     bool concat)
{
	static const float c[2] = { 1.0f, 10.0f };
	const int64_t limit = 2;
	struct xb body = { 0 };
	char extra[8192];

	memcpy(bin, &trip, 8);
	bin[8] = 1;
	memcpy(bin + 9, &limit, 8);
	memcpy(bin + 17, c, 8);
	self->bin = bin;
	self->bin_len = 25;
	xb_add(&body, "<layers>");
	param(&body, 0, "i64", "");
	param(&body, 1, "f32", "1,2");
	konst(&body, 2, "i64", "", 9, 8);
	layer(&body, 3, "Less", "opset1", NULL, "-|-", "-");
	result(&body, 4, "");
	konst(&body, 5, "f32", "1,2", 17, 8);
	layer(&body, 6, "Add", "opset1", NULL, "1,2|1,2", "1,2");
	result(&body, 7, "1,2");
	edges(&body);
	edge(&body, 0, 0, 3, 0);
	edge(&body, 2, 0, 3, 1);
	edge(&body, 3, 2, 4, 0);
	edge(&body, 1, 0, 6, 0);
	edge(&body, 5, 0, 6, 1);
	edge(&body, 6, 2, 7, 0);
	xb_add(&body, "</edges>");
	snprintf(extra, sizeof(extra),
		 "<port_map><input external_port_id=\"2\" internal_layer_id=\"1\"/>"
		 "<input external_port_id=\"-1\" internal_layer_id=\"0\" purpose=\"current_iteration\"/>"
		 "<output external_port_id=\"-1\" internal_layer_id=\"4\" purpose=\"execution_condition\"/>"
		 "<output external_port_id=\"3\" internal_layer_id=\"7\"/>%s</port_map>"
		 "<back_edges><edge from-layer=\"7\" to-layer=\"1\"/></back_edges>"
		 "<body>%s</body>",
		 concat ? "<output external_port_id=\"4\" internal_layer_id=\"7\" axis=\"0\"/>" :
			  "", body.buf);
	free(body.buf);
	begin(&self->x);
	konst(&self->x, 0, "i64", "1", 0, 8);
	konst(&self->x, 1, "boolean", "", 8, 1);
	param(&self->x, 2, "f32", "1,2");
	layer_x(&self->x, 3, "Loop", "opset5", NULL, "1|-|1,2",
		concat ? "1,2|3,2" : "1,2", extra);
	result(&self->x, 4, "1,2");
	if (concat)
		result(&self->x, 5, "3,2");
	edges(&self->x);
	edge(&self->x, 0, 0, 3, 0);
	edge(&self->x, 1, 0, 3, 1);
	edge(&self->x, 2, 0, 3, 2);
	edge(&self->x, 3, 3, 4, 0);
	if (concat)
		edge(&self->x, 3, 4, 5, 0);
	end(&self->x);
}

static void loop_runs(FIXTURE_DATA(rnn) *self, struct npr_test *_metadata,
		      int64_t trip, int iters)
{
	static const float a[2] = { 0.5f, -3.0f };
	struct tin in[1] = { f32(2, 1, 2, 0, 0, a) };
	float y[2], *out[1] = { y };
	size_t cnt[1] = { 2 };
	char bin[32];

	loop_net(self, trip, bin, false);
	RUN(1, in, 1, out, cnt);
	NEAR(y[0], 0.5 + iters * 1.0);
	NEAR(y[1], -3.0 + iters * 10.0);
}

TEST_F(rnn, loop_stops_when_its_body_condition_turns_false)
{
	/* iterations 0, 1, 2 run; after 2, 2 < 2 is false */
	loop_runs(self, _metadata, 5, 3);
}

TEST_F(rnn, loop_stops_at_its_trip_count)
{
	loop_runs(self, _metadata, 2, 2);
}

TEST_F(rnn, loop_with_zero_trip_count_passes_the_initial_value)
{
	loop_runs(self, _metadata, 0, 0);
}

TEST_F(rnn, loop_concatenating_a_data_dependent_count_fails)
{
	char bin[32];

	loop_net(self, 5, bin, true);
	RUN_FAILS(-EOPNOTSUPP,
		  "output 1 concatenates the iterations, but their number depends on data");
}

/*
 * Loop over the rows of X [3, 2] (sliced input, axis 0) with a constant
 * true body condition and trip count 3: y_t = x_t + x_t, concatenated
 * on axis 0.
 */
TEST_F(rnn, loop_slices_an_input_and_concatenates_an_output)
{
	static const float x[6] = { 1, -2, 3, -4, 5, -6 };
	struct tin in[1] = { f32(2, 3, 2, 0, 0, x) };
	float y[6], *out[1] = { y };
	size_t cnt[1] = { 6 };
	struct xb body = { 0 };
	char extra[4096], bin[16];
	const int64_t trip = 3;
	int i;

	memcpy(bin, &trip, 8);
	bin[8] = 1;
	self->bin = bin;
	self->bin_len = 9;
	xb_add(&body, "<layers>");
	param(&body, 0, "f32", "1,2");
	layer(&body, 1, "Add", "opset1", NULL, "1,2|1,2", "1,2");
	result(&body, 2, "1,2");
	konst(&body, 3, "boolean", "", 8, 1);
	result(&body, 4, "");
	edges(&body);
	edge(&body, 0, 0, 1, 0);
	edge(&body, 0, 0, 1, 1);
	edge(&body, 1, 2, 2, 0);
	edge(&body, 3, 0, 4, 0);
	xb_add(&body, "</edges>");
	snprintf(extra, sizeof(extra),
		 "<port_map><input external_port_id=\"2\" internal_layer_id=\"0\" axis=\"0\"/>"
		 "<output external_port_id=\"-1\" internal_layer_id=\"4\" purpose=\"execution_condition\"/>"
		 "<output external_port_id=\"3\" internal_layer_id=\"2\" axis=\"0\"/></port_map>"
		 "<body>%s</body>", body.buf);
	free(body.buf);
	begin(&self->x);
	konst(&self->x, 0, "i64", "", 0, 8);
	konst(&self->x, 1, "boolean", "", 8, 1);
	param(&self->x, 2, "f32", "3,2");
	layer_x(&self->x, 3, "Loop", "opset5", NULL, "-|-|3,2", "3,2", extra);
	result(&self->x, 4, "3,2");
	edges(&self->x);
	edge(&self->x, 0, 0, 3, 0);
	edge(&self->x, 1, 0, 3, 1);
	edge(&self->x, 2, 0, 3, 2);
	edge(&self->x, 3, 3, 4, 0);
	end(&self->x);
	RUN(1, in, 1, out, cnt);
	for (i = 0; i < 6; i++)
		NEAR(y[i], 2 * x[i]);
}

/* A back edge must carry a Result of the Parameter's shape: here the
 * body broadcasts h [1, 1, 1] against x [1, 1, 2]. */
TEST_F(rnn, back_edge_that_changes_the_shape_fails)
{
	struct xb body = { 0 };
	char extra[4096];

	xb_add(&body, "<layers>");
	param(&body, 0, "f32", "1,1,2");
	param(&body, 1, "f32", "1,1,1");
	layer(&body, 2, "Add", "opset1", NULL, "1,1,2|1,1,1", "1,1,2");
	result(&body, 3, "1,1,2");
	edges(&body);
	edge(&body, 0, 0, 2, 0);
	edge(&body, 1, 0, 2, 1);
	edge(&body, 2, 2, 3, 0);
	xb_add(&body, "</edges>");
	snprintf(extra, sizeof(extra),
		 "<port_map><input external_port_id=\"0\" internal_layer_id=\"0\" axis=\"1\"/>"
		 "<input external_port_id=\"1\" internal_layer_id=\"1\"/>"
		 "<output external_port_id=\"2\" internal_layer_id=\"3\"/></port_map>"
		 "<back_edges><edge from-layer=\"3\" to-layer=\"1\"/></back_edges>"
		 "<body>%s</body>", body.buf);
	free(body.buf);
	begin(&self->x);
	param(&self->x, 0, "f32", "1,3,2");
	param(&self->x, 1, "f32", "1,1,1");
	layer_x(&self->x, 2, "TensorIterator", "opset1", NULL, "1,3,2|1,1,1",
		"1,1,2", extra);
	result(&self->x, 3, "1,1,2");
	edges(&self->x);
	edge(&self->x, 0, 0, 2, 0);
	edge(&self->x, 1, 0, 2, 1);
	edge(&self->x, 2, 2, 3, 0);
	end(&self->x);
	RUN_FAILS(-EINVAL,
		  "back edge from body layer 3 to 1 turns f32[1,1,1] into f32[1,1,2]");
}

static bool shared_path(char *buf, size_t len, const char *name)
{
	int n = snprintf(buf, len, "%s/models/ir-small/%s", npr_test_shared(),
			 name);

	return n > 0 && (size_t)n < len;
}

/* loop_2d_add: a [1, 2] + 1 three times; outputs the last value and
 * every iteration's (axis 0), each plus a Const -0.0. */
TEST_F(rnn, shared_loop_2d_add_model_runs)
{
	static const float a[2] = { 0.25f, -2.0f };
	float y[2], all[6], *out[2] = { y, all };
	size_t cnt[2] = { 2, 6 };
	struct tin in[1] = { f32(2, 1, 2, 0, 0, a) };
	struct npr_model_load ml;
	struct npr_req_create rc;
	struct npr_tensor_arg ta;
	struct npr_compile co;
	struct npr_infer inf;
	char xml[4096];
	int i, k;

	if (!npr_test_shared_ok() ||
	    !shared_path(xml, sizeof(xml), "loop_2d_add.xml"))
		SKIP(return, "no shared models");
	npr_prep_model_load(&ml, xml, NULL);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	npr_prep_compile(&co, ml.handle);
	if (npr_ioctl(self->fd, NPR_IOCTL_COMPILE, &co))
		TH_LOG("compile: %s", npr_last_error());
	ASSERT_NE(co.exec, 0U);
	npr_prep_req_create(&rc, co.exec);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	npr_prep_tensor(&ta, rc.req, 0, 0, (void *)a, sizeof(a));
	ta.elem_type = NPR_ELEM_F32;
	ta.rank = 2;
	ta.dims[0] = 1;
	ta.dims[1] = 2;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &ta), 0);
	npr_prep_infer(&inf, rc.req);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_INFER, &inf), 0);
	for (i = 0; i < 2; i++) {
		npr_prep_tensor(&ta, rc.req, i, 1, out[i], cnt[i] * 4);
		ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
		ASSERT_EQ(ta.bytes, cnt[i] * 4);
	}
	(void)in;
	for (k = 0; k < 2; k++) {
		NEAR(y[k], a[k] + 3);
		for (i = 0; i < 3; i++)
			NEAR(all[i * 2 + k], a[k] + i + 1);
	}
}

/*
 * The shared TensorIterator + LSTMCell fixtures come without weights.
 * With zero W, R and B every gate's pre-activation is 0, so f = i = o =
 * 1/2, g = 0, and from the initial cell state C0:
 *   C_t = C0 / 2^t,   H_t = tanh(C_t) / 2
 * whatever the input.  Build such a .bin (the two Reshape targets are the
 * only non-zero constants) next to a copy of the xml, run, compare.
 */
struct ti_fixture {
	const char *name;
	size_t bin_size;
	int64_t t1[2];		/* Reshape targets at offset 0 ... */
	size_t t2_off;		/* ... and t2_off */
	int64_t t2[3];
	int T, S;
	bool rev;		/* iterations walk the sequence backwards */
	int nout;
};

static void ti_fixture_runs(FIXTURE_DATA(rnn) *self,
			    struct npr_test *_metadata,
			    const struct ti_fixture *f)
{
	char dir[] = "/tmp/npr-rnn-XXXXXX", src[4096], xml[4200], bin[4200];
	size_t in_len[3] = { (size_t)f->T * 512, (size_t)f->S, (size_t)f->S };
	size_t cnt[3] = { (size_t)f->T * f->S, (size_t)f->S, (size_t)f->S };
	struct npr_model_load ml;
	struct npr_req_create rc;
	struct npr_tensor_arg ta;
	struct npr_compile co;
	struct npr_infer inf;
	float *in[3], *out[3];
	FILE *fi, *fo;
	int fd, i, t, c, ret;

	if (!npr_test_shared_ok() || !shared_path(src, sizeof(src), f->name))
		SKIP(return, "no shared models");
	ASSERT_NE(mkdtemp(dir), NULL);
	snprintf(xml, sizeof(xml), "%s/m.xml", dir);
	snprintf(bin, sizeof(bin), "%s/m.bin", dir);
	fi = fopen(src, "rb");
	ASSERT_NE(fi, NULL);
	fo = fopen(xml, "wb");
	ASSERT_NE(fo, NULL);
	while ((c = fgetc(fi)) != EOF)
		fputc(c, fo);
	fclose(fi);
	fclose(fo);
	fd = open(bin, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(ftruncate(fd, f->bin_size), 0);
	ASSERT_EQ(pwrite(fd, f->t1, sizeof(f->t1), 0), (ssize_t)sizeof(f->t1));
	ASSERT_EQ(pwrite(fd, f->t2, sizeof(f->t2), f->t2_off),
		  (ssize_t)sizeof(f->t2));
	close(fd);
	npr_prep_model_load(&ml, xml, NULL);
	ret = npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml);
	unlink(xml);
	unlink(bin);
	rmdir(dir);
	if (ret)
		TH_LOG("load: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	npr_prep_compile(&co, ml.handle);
	ret = npr_ioctl(self->fd, NPR_IOCTL_COMPILE, &co);
	if (ret)
		TH_LOG("compile: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	npr_prep_req_create(&rc, co.exec);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	for (i = 0; i < 3; i++) {
		in[i] = malloc(in_len[i] * sizeof(float));
		out[i] = malloc(cnt[i] * sizeof(float));
		ASSERT_NE(in[i], NULL);
		ASSERT_NE(out[i], NULL);
		fill(in[i], (int)in_len[i], 21 + i);
		npr_prep_tensor(&ta, rc.req, i, 0, in[i],
				in_len[i] * sizeof(float));
		ta.elem_type = NPR_ELEM_F32;
		ta.rank = i ? 2 : 3;
		ta.dims[0] = i || f->rev ? 1 : f->T;
		ta.dims[1] = i ? f->S : f->rev ? f->T : 1;
		ta.dims[2] = i ? 0 : 512;
		ret = npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &ta);
		if (ret)
			TH_LOG("input %d: %s", i, npr_last_error());
		ASSERT_EQ(ret, 0);
	}
	npr_prep_infer(&inf, rc.req);
	ret = npr_ioctl(self->fd, NPR_IOCTL_INFER, &inf);
	if (ret)
		TH_LOG("infer: %s", npr_last_error());
	ASSERT_EQ(ret, 0);
	for (i = 0; i < f->nout; i++) {
		npr_prep_tensor(&ta, rc.req, i, 1, out[i], cnt[i] * 4);
		ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &ta), 0);
	}
	for (t = 0; t < f->T; t++) {
		int pos = f->rev ? f->T - 1 - t : t;

		for (c = 0; c < f->S; c += 37)
			NEAR(out[0][pos * f->S + c],
			     tanh(ldexp(in[2][c], -(t + 1))) / 2);
	}
	for (c = 0; f->nout > 1 && c < f->S; c += 37) {
		NEAR(out[1][c], tanh(ldexp(in[2][c], -f->T)) / 2);
		NEAR(out[2][c], ldexp(in[2][c], -f->T));
	}
	for (i = 0; i < 3; i++) {
		free(in[i]);
		free(out[i]);
	}
}

TEST_F(rnn, shared_ti_resnet_runs_with_zero_lstm_weights)
{
	static const struct ti_fixture f = {
		.name = "ti_resnet.xml", .bin_size = 8396840,
		.t1 = { 1, 512 }, .t2_off = 8396816, .t2 = { 1, 1, 512 },
		.T = 16, .S = 512, .rev = false, .nout = 3,
	};

	ti_fixture_runs(self, _metadata, &f);
}

TEST_F(rnn, shared_ti_negative_stride_runs_backwards_with_zero_weights)
{
	static const struct ti_fixture f = {
		.name = "ti_negative_stride.xml", .bin_size = 3149864,
		.t1 = { 1, 512 }, .t2_off = 3149840, .t2 = { 1, 1, 256 },
		.T = 25, .S = 256, .rev = true, .nout = 1,
	};

	ti_fixture_runs(self, _metadata, &f);
}

/* ---- If ----------------------------------------------------------------- */

/* then: x + x, else: Tanh(x), on x [2]. */
static void if_net(struct xb *b)
{
	struct xb tb = { 0 }, eb = { 0 };
	char extra[8192];
	const char *pm =
		"<input external_port_id=\"1\" internal_layer_id=\"0\"/>"
		"<output external_port_id=\"2\" internal_layer_id=\"2\"/>";

	xb_add(&tb, "<layers>");
	param(&tb, 0, "f32", "2");
	xb_add(&tb, "<layer id=\"1\" name=\"twice\" type=\"Add\" version=\"opset1\">"
	       "<input><port id=\"0\"><dim>2</dim></port><port id=\"1\"><dim>2</dim></port></input>"
	       "<output><port id=\"2\" precision=\"FP32\"><dim>2</dim></port></output></layer>");
	result(&tb, 2, "2");
	edges(&tb);
	edge(&tb, 0, 0, 1, 0);
	edge(&tb, 0, 0, 1, 1);
	edge(&tb, 1, 2, 2, 0);
	xb_add(&tb, "</edges>");
	xb_add(&eb, "<layers>");
	param(&eb, 0, "f32", "2");
	layer(&eb, 1, "Tanh", "opset1", NULL, "2", "2");
	result(&eb, 2, "2");
	edges(&eb);
	edge(&eb, 0, 0, 1, 0);
	edge(&eb, 1, 1, 2, 0);
	xb_add(&eb, "</edges>");
	snprintf(extra, sizeof(extra),
		 "<then_port_map>%s</then_port_map><else_port_map>%s</else_port_map>"
		 "<then_body>%s</then_body><else_body>%s</else_body>",
		 pm, pm, tb.buf, eb.buf);
	free(tb.buf);
	free(eb.buf);
	begin(b);
	param(b, 0, "boolean", "");
	param(b, 1, "f32", "2");
	layer_x(b, 2, "If", "opset8", NULL, "-|2", "2", extra);
	result(b, 3, "2");
	edges(b);
	edge(b, 0, 0, 2, 0);
	edge(b, 1, 0, 2, 1);
	edge(b, 2, 2, 3, 0);
	end(b);
}

static void if_runs(FIXTURE_DATA(rnn) *self, struct npr_test *_metadata,
		    bool cond)
{
	static const float x[2] = { 0.75f, -0.25f };
	uint8_t c = cond;
	struct tin in[2] = {
		{ .type = NPR_ELEM_BOOLEAN, .rank = 0, .data = &c },
		f32(1, 2, 0, 0, 0, x),
	};
	float y[2], *out[1] = { y };
	size_t cnt[1] = { 2 };
	int k;

	if_net(&self->x);
	RUN(2, in, 1, out, cnt);
	for (k = 0; k < 2; k++)
		NEAR(y[k], cond ? 2.0 * x[k] : tanh(x[k]));
}

TEST_F(rnn, if_true_runs_the_then_body)
{
	if_runs(self, _metadata, true);
}

TEST_F(rnn, if_false_runs_the_else_body)
{
	if_runs(self, _metadata, false);
}

TEST_F(rnn, if_without_an_else_body_fails)
{
	char *p;

	if_net(&self->x);
	p = strstr(self->x.buf, "<else_body>");
	ASSERT_NE(p, NULL);
	memcpy(p, "<elze_body>", 11);
	p = strstr(self->x.buf, "</else_body>");
	memcpy(p, "</elze_body>", 12);
	RUN_FAILS(-EINVAL, "has no <else_body>");
}

TEST_HARNESS_MAIN
