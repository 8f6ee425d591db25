// SPDX-License-Identifier: MIT
/*
 * The IR reader, through the public API only: models built here in memory,
 * each broken in exactly one way, must fail with the documented errno and a
 * message that says what is wrong; valid ones, and every real model of the
 * shared data, must load.  make check runs this suite under valgrind.
 */
#include <errno.h>
#include <glob.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "xb.h"
#include "npuring.h"

/* ---- building models -------------------------------------------------- */

static void xb_dims(struct xb *b, const char *dims)
{
	xb_dims_n(b, dims, strlen(dims));
}

static void begin(struct xb *b, const char *version)
{
	xb_add(b, "<?xml version=\"1.0\"?>\n<net name=\"t\" version=\"%s\">\n<layers>\n",
	       version);
}

static void param(struct xb *b, int id, const char *et, const char *shape,
		  const char *dims)
{
	xb_add(b, "<layer id=\"%d\" name=\"in%d\" type=\"Parameter\" version=\"opset1\">"
	       "<data shape=\"%s\" element_type=\"%s\"/>"
	       "<output><port id=\"0\" precision=\"FP32\" names=\"in%d\">",
	       id, id, shape, et, id);
	xb_dims(b, dims);
	xb_add(b, "</port></output></layer>\n");
}

static void konst(struct xb *b, int id, const char *shape, const char *offset,
		  const char *size)
{
	xb_add(b, "<layer id=\"%d\" name=\"c%d\" type=\"Const\" version=\"opset1\">"
	       "<data element_type=\"f32\" shape=\"%s\" offset=\"%s\" size=\"%s\"/>"
	       "<output><port id=\"0\" precision=\"FP32\">",
	       id, id, shape, offset, size);
	xb_dims(b, shape);
	xb_add(b, "</port></output></layer>\n");
}

/* One input (port 0), one output (port 1). */
static void unary(struct xb *b, int id, const char *type, const char *version,
		  const char *dims_in, const char *dims_out)
{
	xb_add(b, "<layer id=\"%d\" name=\"op%d\" type=\"%s\" version=\"%s\">"
	       "<input><port id=\"0\" precision=\"FP32\">",
	       id, id, type, version);
	xb_dims(b, dims_in);
	xb_add(b, "</port></input><output><port id=\"1\" precision=\"FP32\" names=\"t%d\">",
	       id);
	xb_dims(b, dims_out);
	xb_add(b, "</port></output></layer>\n");
}

/* Two inputs (ports 0 and 1), one output (port 2). */
static void binary(struct xb *b, int id, const char *type, const char *dims)
{
	xb_add(b, "<layer id=\"%d\" name=\"op%d\" type=\"%s\" version=\"opset1\">"
	       "<data auto_broadcast=\"numpy\"/><input>"
	       "<port id=\"0\" precision=\"FP32\">", id, id, type);
	xb_dims(b, dims);
	xb_add(b, "</port><port id=\"1\" precision=\"FP32\">");
	xb_dims(b, dims);
	xb_add(b, "</port></input><output><port id=\"2\" precision=\"FP32\">");
	xb_dims(b, dims);
	xb_add(b, "</port></output></layer>\n");
}

static void result(struct xb *b, int id, const char *dims)
{
	xb_add(b, "<layer id=\"%d\" name=\"out%d\" type=\"Result\" version=\"opset1\">"
	       "<input><port id=\"0\" precision=\"FP32\">", id, id);
	xb_dims(b, dims);
	xb_add(b, "</port></input></layer>\n");
}

static void edges(struct xb *b)
{
	xb_add(b, "</layers>\n<edges>\n");
}

static void edge(struct xb *b, int fl, int fp, int tl, int tp)
{
	xb_add(b, "<edge from-layer=\"%d\" from-port=\"%d\" to-layer=\"%d\" to-port=\"%d\"/>\n",
	       fl, fp, tl, tp);
}

static void end(struct xb *b)
{
	xb_add(b, "</edges>\n<rt_info><framework value=\"test\"/></rt_info>\n</net>\n");
}

/* Parameter(0) -> ReLU(1) -> Result(2), f32[1,4]. */
static void relu_net(struct xb *b)
{
	begin(b, "11");
	param(b, 0, "f32", "1,4", "1,4");
	unary(b, 1, "ReLU", "opset1", "1,4", "1,4");
	result(b, 2, "1,4");
	edges(b);
	edge(b, 0, 0, 1, 0);
	edge(b, 1, 1, 2, 0);
	end(b);
}

/* Parameter(0) + Const(1) -> Add(2) -> Result(3), f32[4]. */
static void add_const_net(struct xb *b, const char *offset, const char *size)
{
	begin(b, "11");
	param(b, 0, "f32", "4", "4");
	konst(b, 1, "4", offset, size);
	binary(b, 2, "Add", "4");
	result(b, 3, "4");
	edges(b);
	edge(b, 0, 0, 2, 0);
	edge(b, 1, 0, 2, 1);
	edge(b, 2, 2, 3, 0);
	end(b);
}

/* ---- loading and checking --------------------------------------------- */

FIXTURE(ir) {
	int fd;
	struct xb x;
	__u32 handle;
};

FIXTURE_SETUP(ir)
{
	self->fd = npr_open("cpu", 0);
	ASSERT_GE(self->fd, 0);
	memset(&self->x, 0, sizeof(self->x));
}

FIXTURE_TEARDOWN(ir)
{
	free(self->x.buf);
	if (self->fd >= 0)
		npr_close(self->fd);
}

static int load_mem(int fd, const void *xml, size_t len, const void *bin,
		    size_t bin_len, __u32 *handle)
{
	struct npr_model_load a;
	int err;

	npr_prep_model_load_mem(&a, xml, len, bin, bin_len);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &a);
	if (!err && handle)
		*handle = a.handle;
	return err;
}

static int load_xb(FIXTURE_DATA(ir) *self, const void *bin, size_t bin_len)
{
	return load_mem(self->fd, self->x.buf, self->x.len, bin, bin_len,
			&self->handle);
}

/*
 * The last failure on this thread, as NPR_IOCTL_GET_ERROR reports it, must
 * be @err with @phrase in the message (and npr_last_error() agree).
 */
static void check_error(struct npr_test *_metadata, int fd, int ret, int err,
			const char *phrase)
{
	struct npr_get_error ge;
	char msg[1024] = "";

	memset(&ge, 0, sizeof(ge));
	ge.size = sizeof(ge);
	ge.buf = (uintptr_t)msg;
	ge.len = sizeof(msg);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_GET_ERROR, &ge), 0);
	TH_LOG("errno %d: %s", ret, msg);
	ASSERT_EQ(ret, err);
	ASSERT_EQ(ge.err, err);
	if (!strstr(msg, phrase)) {
		TH_LOG("the message lacks \"%s\"", phrase);
		ASSERT_TRUE(false);
	}
	ASSERT_STREQ(npr_last_error(), msg);
}

#define LOAD_FAILS(bin, bin_len, err, phrase)				\
	check_error(_metadata, self->fd, load_xb(self, bin, bin_len),	\
		    err, phrase)

static const float weights4[4] = { 1.0f, -2.0f, 3.0f, -4.0f };

/* ---- valid models ----------------------------------------------------- */

TEST_F(ir, tiny_relu_graph_loads)
{
	struct npr_model_info mi;
	struct npr_port_info pi;
	char name[32];

	relu_net(&self->x);
	ASSERT_EQ(load_xb(self, NULL, 0), 0);
	ASSERT_NE(self->handle, 0U);

	memset(&mi, 0, sizeof(mi));
	mi.size = sizeof(mi);
	mi.handle = self->handle;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MODEL_INFO, &mi), 0);
	EXPECT_EQ(mi.num_inputs, 1U);
	EXPECT_EQ(mi.num_outputs, 1U);
	EXPECT_EQ(mi.num_nodes, 3U);
	EXPECT_EQ(mi.ir_version, 11U);

	npr_prep_port_info(&pi, self->handle, 0, 0, name, sizeof(name));
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_PORT_INFO, &pi), 0);
	EXPECT_STREQ(name, "in0");
	EXPECT_EQ(pi.elem_type, (__u32)NPR_ELEM_F32);
	EXPECT_EQ(pi.rank, 2U);
	EXPECT_EQ(pi.dims[0], 1);
	EXPECT_EQ(pi.dims[1], 4);
}

TEST_F(ir, const_graph_with_weights_loads)
{
	add_const_net(&self->x, "0", "16");
	ASSERT_EQ(load_xb(self, weights4, sizeof(weights4)), 0);
}

TEST_F(ir, const_at_unaligned_offset_loads)
{
	char bin[1 + sizeof(weights4)];

	bin[0] = 0x55;
	memcpy(bin + 1, weights4, sizeof(weights4));
	add_const_net(&self->x, "1", "16");
	ASSERT_EQ(load_xb(self, bin, sizeof(bin)), 0);
}

TEST_F(ir, const_data_comes_from_its_offset_in_the_weights)
{
	static const float x[4] = { 10.0f, 20.0f, 30.0f, 40.0f };
	char bin[3 + sizeof(weights4)];
	struct npr_req_create rc;
	struct npr_tensor_arg t;
	struct npr_compile cc;
	struct npr_infer inf;
	float y[4];
	int i;

	/* an odd offset, so the reader has to copy the slice to align it */
	memset(bin, 0x7f, 3);
	memcpy(bin + 3, weights4, sizeof(weights4));
	add_const_net(&self->x, "3", "16");
	ASSERT_EQ(load_xb(self, bin, sizeof(bin)), 0);
	npr_prep_compile(&cc, self->handle);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_COMPILE, &cc), 0);
	npr_prep_req_create(&rc, cc.exec);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	npr_prep_tensor(&t, rc.req, 0, 0, (void *)x, sizeof(x));
	t.elem_type = NPR_ELEM_F32;
	t.rank = 1;
	t.dims[0] = 4;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &t), 0);
	npr_prep_infer(&inf, rc.req);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_INFER, &inf), 0);
	npr_prep_tensor(&t, rc.req, 0, 1, y, sizeof(y));
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &t), 0);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(y[i], x[i] + weights4[i]);
}

TEST_F(ir, ir_v10_loads)
{
	begin(&self->x, "10");
	param(&self->x, 0, "f32", "1,4", "1,4");
	unary(&self->x, 1, "ReLU", "opset1", "1,4", "1,4");
	result(&self->x, 2, "1,4");
	edges(&self->x);
	edge(&self->x, 0, 0, 1, 0);
	edge(&self->x, 1, 1, 2, 0);
	end(&self->x);
	ASSERT_EQ(load_xb(self, NULL, 0), 0);
}

TEST_F(ir, blank_line_before_xml_declaration_loads)
{
	/* one of the real v11 models starts like this */
	xb_add(&self->x, "  \n");
	relu_net(&self->x);
	ASSERT_EQ(load_xb(self, NULL, 0), 0);
}

TEST_F(ir, ports_are_matched_by_id_not_position)
{
	/* ReLU with its output port listed first and ids 7 / 3 */
	begin(&self->x, "11");
	param(&self->x, 0, "f32", "1,4", "1,4");
	xb_add(&self->x, "<layer id=\"1\" name=\"r\" type=\"ReLU\" version=\"opset1\">"
	       "<output><port id=\"3\" precision=\"FP32\"><dim>1</dim><dim>4</dim></port></output>"
	       "<input><port id=\"7\" precision=\"FP32\"><dim>1</dim><dim>4</dim></port></input>"
	       "</layer>\n");
	result(&self->x, 2, "1,4");
	edges(&self->x);
	edge(&self->x, 1, 3, 2, 0);
	edge(&self->x, 0, 0, 1, 7);
	end(&self->x);
	ASSERT_EQ(load_xb(self, NULL, 0), 0);
}

TEST_F(ir, tensor_name_is_first_of_names_with_escaped_commas)
{
	struct npr_port_info pi;
	char name[32];

	begin(&self->x, "11");
	xb_add(&self->x, "<layer id=\"0\" name=\"p\" type=\"Parameter\" version=\"opset1\">"
	       "<data shape=\"2\" element_type=\"f32\"/><output>"
	       "<port id=\"0\" precision=\"FP32\" names=\" a\\,b , c\"><dim>2</dim></port>"
	       "</output></layer>\n");
	result(&self->x, 1, "2");
	edges(&self->x);
	edge(&self->x, 0, 0, 1, 0);
	end(&self->x);
	ASSERT_EQ(load_xb(self, NULL, 0), 0);
	npr_prep_port_info(&pi, self->handle, 0, 0, name, sizeof(name));
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_PORT_INFO, &pi), 0);
	EXPECT_STREQ(name, "a,b");
}

TEST_F(ir, dynamic_dims_load)
{
	struct npr_port_info pi;

	begin(&self->x, "11");
	param(&self->x, 0, "f32", "?,4", "-1,4");
	unary(&self->x, 1, "ReLU", "opset1", "-1,4", "-1,4");
	result(&self->x, 2, "-1,4");
	edges(&self->x);
	edge(&self->x, 0, 0, 1, 0);
	edge(&self->x, 1, 1, 2, 0);
	end(&self->x);
	ASSERT_EQ(load_xb(self, NULL, 0), 0);
	npr_prep_port_info(&pi, self->handle, 0, 0, NULL, 0);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_PORT_INFO, &pi), 0);
	EXPECT_EQ(pi.rank, 2U);
	EXPECT_EQ(pi.dims[0], -1);
	EXPECT_EQ(pi.dims[1], 4);
}

/* ---- malformed XML ---------------------------------------------------- */

TEST_F(ir, truncated_xml_fails)
{
	relu_net(&self->x);
	self->x.len /= 2;
	LOAD_FAILS(NULL, 0, -EINVAL, "malformed XML");
}

TEST_F(ir, text_that_is_not_xml_fails)
{
	xb_add(&self->x, "this is not an IR model\n");
	LOAD_FAILS(NULL, 0, -EINVAL, "malformed XML");
}

TEST_F(ir, wrong_root_element_fails)
{
	xb_add(&self->x, "<?xml version=\"1.0\"?>\n<model version=\"11\"><layers/></model>\n");
	LOAD_FAILS(NULL, 0, -EINVAL, "root element is <model>");
}

TEST_F(ir, billion_laughs_is_refused_unexpanded)
{
	int i;

	xb_add(&self->x, "<?xml version=\"1.0\"?>\n<!DOCTYPE net [\n"
	       "<!ENTITY lol0 \"lol\">\n");
	for (i = 1; i < 10; i++)
		xb_add(&self->x, "<!ENTITY lol%d \"&lol%d;&lol%d;&lol%d;&lol%d;&lol%d;"
		       "&lol%d;&lol%d;&lol%d;&lol%d;&lol%d;\">\n",
		       i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1,
		       i - 1, i - 1, i - 1);
	xb_add(&self->x, "]>\n<net name=\"&lol9;\" version=\"11\"><layers>"
	       "<layer id=\"0\" name=\"&lol9;\" type=\"Parameter\"/>"
	       "</layers></net>\n");
	LOAD_FAILS(NULL, 0, -EINVAL, "DOCTYPE");
}

TEST_F(ir, external_entity_is_refused)
{
	xb_add(&self->x, "<?xml version=\"1.0\"?>\n<!DOCTYPE net [\n"
	       "<!ENTITY x SYSTEM \"file:///etc/passwd\">]>\n"
	       "<net name=\"&x;\" version=\"11\"><layers/></net>\n");
	LOAD_FAILS(NULL, 0, -EINVAL, "DOCTYPE");
}

/* ---- the <net> -------------------------------------------------------- */

TEST_F(ir, unsupported_ir_version_fails)
{
	begin(&self->x, "7");
	edges(&self->x);
	end(&self->x);
	LOAD_FAILS(NULL, 0, -EOPNOTSUPP, "IR version 7 is not supported");
}

TEST_F(ir, duplicate_layer_ids_fail)
{
	begin(&self->x, "11");
	param(&self->x, 0, "f32", "1,4", "1,4");
	unary(&self->x, 1, "ReLU", "opset1", "1,4", "1,4");
	unary(&self->x, 1, "ReLU", "opset1", "1,4", "1,4");
	result(&self->x, 2, "1,4");
	edges(&self->x);
	edge(&self->x, 0, 0, 1, 0);
	edge(&self->x, 1, 1, 2, 0);
	end(&self->x);
	LOAD_FAILS(NULL, 0, -EINVAL, "duplicate layer id");
}

TEST_F(ir, too_long_layer_name_fails)
{
	char *name = malloc(5001);

	ASSERT_NONNULL(name);
	memset(name, 'n', 5000);
	name[5000] = 0;
	begin(&self->x, "11");
	param(&self->x, 0, "f32", "1,4", "1,4");
	xb_add(&self->x, "<layer id=\"1\" name=\"%s\" type=\"ReLU\" version=\"opset1\">"
	       "<input><port id=\"0\"><dim>1</dim><dim>4</dim></port></input>"
	       "<output><port id=\"1\" precision=\"FP32\"><dim>1</dim><dim>4</dim></port></output>"
	       "</layer>\n", name);
	free(name);
	result(&self->x, 2, "1,4");
	edges(&self->x);
	edge(&self->x, 0, 0, 1, 0);
	edge(&self->x, 1, 1, 2, 0);
	end(&self->x);
	LOAD_FAILS(NULL, 0, -ENAMETOOLONG, "name longer than 4096");
}

/* ---- ops -------------------------------------------------------------- */

TEST_F(ir, unknown_op_fails)
{
	begin(&self->x, "11");
	param(&self->x, 0, "f32", "1,4", "1,4");
	unary(&self->x, 1, "FooBar", "opset3", "1,4", "1,4");
	result(&self->x, 2, "1,4");
	edges(&self->x);
	edge(&self->x, 0, 0, 1, 0);
	edge(&self->x, 1, 1, 2, 0);
	end(&self->x);
	LOAD_FAILS(NULL, 0, -EOPNOTSUPP,
		   "layer 1 (op1): unknown op FooBar (opset3)");
}

/* ---- ports, shapes and element types ---------------------------------- */

TEST_F(ir, negative_dim_fails)
{
	begin(&self->x, "11");
	param(&self->x, 0, "f32", "1,4", "1,4");
	unary(&self->x, 1, "ReLU", "opset1", "1,4", "1,-4");
	result(&self->x, 2, "1,4");
	edges(&self->x);
	edge(&self->x, 0, 0, 1, 0);
	edge(&self->x, 1, 1, 2, 0);
	end(&self->x);
	LOAD_FAILS(NULL, 0, -EINVAL, "bad dim \"-4\"");
}

TEST_F(ir, non_numeric_dim_fails)
{
	begin(&self->x, "11");
	param(&self->x, 0, "f32", "1,4", "1,4");
	unary(&self->x, 1, "ReLU", "opset1", "1,4", "1,four");
	result(&self->x, 2, "1,4");
	edges(&self->x);
	edge(&self->x, 0, 0, 1, 0);
	edge(&self->x, 1, 1, 2, 0);
	end(&self->x);
	LOAD_FAILS(NULL, 0, -EINVAL, "bad dim \"four\"");
}

TEST_F(ir, shape_whose_product_overflows_fails)
{
	/* each dim is legal (2^40), their product is 2^80 */
	begin(&self->x, "11");
	param(&self->x, 0, "f32", "1099511627776,1099511627776",
	      "1099511627776,1099511627776");
	result(&self->x, 1, "1099511627776,1099511627776");
	edges(&self->x);
	edge(&self->x, 0, 0, 1, 0);
	end(&self->x);
	LOAD_FAILS(NULL, 0, -EOVERFLOW, "more than 2^63 elements");
}

TEST_F(ir, dynamic_rank_parameter_fails)
{
	begin(&self->x, "11");
	param(&self->x, 0, "f32", "...", "");
	result(&self->x, 1, "");
	edges(&self->x);
	edge(&self->x, 0, 0, 1, 0);
	end(&self->x);
	LOAD_FAILS(NULL, 0, -EOPNOTSUPP, "dynamic rank");
}

TEST_F(ir, bad_element_type_fails)
{
	begin(&self->x, "11");
	param(&self->x, 0, "f33", "1,4", "1,4");
	unary(&self->x, 1, "ReLU", "opset1", "1,4", "1,4");
	result(&self->x, 2, "1,4");
	edges(&self->x);
	edge(&self->x, 0, 0, 1, 0);
	edge(&self->x, 1, 1, 2, 0);
	end(&self->x);
	LOAD_FAILS(NULL, 0, -EINVAL, "bad element_type \"f33\"");
}

TEST_F(ir, unknown_precision_fails)
{
	begin(&self->x, "11");
	param(&self->x, 0, "f32", "1,4", "1,4");
	xb_add(&self->x, "<layer id=\"1\" name=\"r\" type=\"ReLU\" version=\"opset1\">"
	       "<input><port id=\"0\"><dim>1</dim><dim>4</dim></port></input>"
	       "<output><port id=\"1\" precision=\"FP33\"><dim>1</dim><dim>4</dim></port></output>"
	       "</layer>\n");
	result(&self->x, 2, "1,4");
	edges(&self->x);
	edge(&self->x, 0, 0, 1, 0);
	edge(&self->x, 1, 1, 2, 0);
	end(&self->x);
	LOAD_FAILS(NULL, 0, -EINVAL, "unknown precision \"FP33\"");
}

TEST_F(ir, duplicate_port_id_fails)
{
	begin(&self->x, "11");
	param(&self->x, 0, "f32", "1,4", "1,4");
	xb_add(&self->x, "<layer id=\"1\" name=\"r\" type=\"ReLU\" version=\"opset1\">"
	       "<input><port id=\"0\"><dim>1</dim><dim>4</dim></port></input>"
	       "<output><port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>4</dim></port></output>"
	       "</layer>\n");
	result(&self->x, 2, "1,4");
	edges(&self->x);
	edge(&self->x, 0, 0, 1, 0);
	edge(&self->x, 1, 0, 2, 0);
	end(&self->x);
	LOAD_FAILS(NULL, 0, -EINVAL, "port id 0 is used twice");
}

/* ---- Const slices of the weights -------------------------------------- */

TEST_F(ir, const_past_the_end_of_a_truncated_bin_fails)
{
	add_const_net(&self->x, "0", "16");
	LOAD_FAILS(weights4, 8, -EINVAL, "past the end of the weights");
}

TEST_F(ir, const_offset_plus_size_overflow_fails)
{
	add_const_net(&self->x, "18446744073709551612", "16");
	LOAD_FAILS(weights4, sizeof(weights4), -EOVERFLOW, "overflows");
}

TEST_F(ir, const_size_not_matching_shape_fails)
{
	add_const_net(&self->x, "0", "12");
	LOAD_FAILS(weights4, sizeof(weights4), -EINVAL,
		   "size 12 does not match shape [4] of f32 (16 bytes)");
}

TEST_F(ir, const_without_weights_fails)
{
	add_const_net(&self->x, "0", "16");
	LOAD_FAILS(NULL, 0, -EINVAL, "no .bin");
}

TEST_F(ir, const_whose_byte_size_overflows_fails)
{
	/* 2^62 elements fit in int64, their 2^64 bytes do not */
	begin(&self->x, "11");
	konst(&self->x, 0, "1099511627776,4194304", "0", "16");
	result(&self->x, 1, "1099511627776,4194304");
	edges(&self->x);
	edge(&self->x, 0, 0, 1, 0);
	end(&self->x);
	LOAD_FAILS(weights4, sizeof(weights4), -EOVERFLOW, "too large");
}

/* ---- edges ------------------------------------------------------------ */

TEST_F(ir, cycle_fails_naming_its_layers)
{
	/* ReLU 1 feeds ReLU 2 feeds ReLU 1 */
	begin(&self->x, "11");
	param(&self->x, 0, "f32", "1,4", "1,4");
	unary(&self->x, 1, "ReLU", "opset1", "1,4", "1,4");
	unary(&self->x, 2, "ReLU", "opset1", "1,4", "1,4");
	result(&self->x, 3, "1,4");
	edges(&self->x);
	edge(&self->x, 2, 1, 1, 0);
	edge(&self->x, 1, 1, 2, 0);
	edge(&self->x, 2, 1, 3, 0);
	end(&self->x);
	LOAD_FAILS(NULL, 0, -ELOOP,
		   "cycle: layer 1 (op1) -> layer 2 (op2) -> layer 1 (op1)");
}

TEST_F(ir, edge_to_a_missing_layer_fails)
{
	begin(&self->x, "11");
	param(&self->x, 0, "f32", "1,4", "1,4");
	unary(&self->x, 1, "ReLU", "opset1", "1,4", "1,4");
	result(&self->x, 2, "1,4");
	edges(&self->x);
	edge(&self->x, 0, 0, 1, 0);
	edge(&self->x, 1, 1, 2, 0);
	edge(&self->x, 1, 1, 9, 0);
	end(&self->x);
	LOAD_FAILS(NULL, 0, -EINVAL, "layer 9 does not exist");
}

TEST_F(ir, edge_into_an_output_port_fails)
{
	begin(&self->x, "11");
	param(&self->x, 0, "f32", "1,4", "1,4");
	unary(&self->x, 1, "ReLU", "opset1", "1,4", "1,4");
	result(&self->x, 2, "1,4");
	edges(&self->x);
	edge(&self->x, 0, 0, 1, 0);
	edge(&self->x, 0, 0, 1, 1);
	edge(&self->x, 1, 1, 2, 0);
	end(&self->x);
	LOAD_FAILS(NULL, 0, -EINVAL, "ends at port 1, which is an output port");
}

TEST_F(ir, unconnected_input_port_fails)
{
	begin(&self->x, "11");
	param(&self->x, 0, "f32", "1,4", "1,4");
	unary(&self->x, 1, "ReLU", "opset1", "1,4", "1,4");
	result(&self->x, 2, "1,4");
	edges(&self->x);
	edge(&self->x, 1, 1, 2, 0);
	end(&self->x);
	LOAD_FAILS(NULL, 0, -EINVAL, "input port 0 is not connected");
}

TEST_F(ir, two_edges_into_one_input_port_fail)
{
	begin(&self->x, "11");
	param(&self->x, 0, "f32", "1,4", "1,4");
	param(&self->x, 3, "f32", "1,4", "1,4");
	unary(&self->x, 1, "ReLU", "opset1", "1,4", "1,4");
	result(&self->x, 2, "1,4");
	edges(&self->x);
	edge(&self->x, 0, 0, 1, 0);
	edge(&self->x, 3, 0, 1, 0);
	edge(&self->x, 1, 1, 2, 0);
	end(&self->x);
	LOAD_FAILS(NULL, 0, -EINVAL,
		   "input port 0 has two incoming edges (from layers 0 and 3)");
}

/* ---- real models ------------------------------------------------------ */

/* Load every file matching @pattern under the shared directory. */
static int load_all(struct npr_test *_metadata, int fd, const char *pattern,
		    bool must_load, int *nfiles)
{
	char path[PATH_MAX];
	int failed = 0;
	glob_t gl;
	size_t i;

	*nfiles = 0;
	if (snprintf(path, sizeof(path), "%s/%s", npr_test_shared(),
		     pattern) >= (int)sizeof(path))
		return 1;
	if (glob(path, 0, NULL, &gl))
		return 0;
	for (i = 0; i < gl.gl_pathc; i++) {
		struct npr_handle_destroy d;
		struct npr_model_load a;
		int err;

		npr_prep_model_load(&a, gl.gl_pathv[i], NULL);
		err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &a);
		(*nfiles)++;
		if (!err) {
			npr_prep_destroy(&d, a.handle);
			EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_HANDLE_DESTROY, &d),
				  0);
			continue;
		}
		TH_LOG("%s: errno %d: %s", gl.gl_pathv[i] +
		       strlen(npr_test_shared()) + 1, err, npr_last_error());
		EXPECT_NE(npr_last_error()[0], 0);
		if (must_load)
			failed++;
		else
			EXPECT_TRUE(err == -EOPNOTSUPP || err == -EINVAL ||
				    err == -ENOENT);
	}
	globfree(&gl);
	return failed;
}

TEST_F_TIMEOUT(ir, every_shared_ir_model_loads, 900)
{
	int n;

	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s (set NPR_SHARED)",
		     npr_test_shared());
	EXPECT_EQ(load_all(_metadata, self->fd, "models/ir/*/*/*.xml", true,
			   &n), 0);
	if (!n)
		SKIP(return, "no models under %s/models/ir",
		     npr_test_shared());
	TH_LOG("%d models", n);
}

TEST_F(ir, small_and_stateful_models_load_or_fail_cleanly)
{
	int n1, n2;

	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s (set NPR_SHARED)",
		     npr_test_shared());
	load_all(_metadata, self->fd, "models/ir-small/*.xml", false, &n1);
	load_all(_metadata, self->fd, "models/ir-stateful/*.xml", false,
		 &n2);
	if (!n1 && !n2)
		SKIP(return, "no models under %s/models/ir-small",
		     npr_test_shared());
}

TEST_HARNESS_MAIN
