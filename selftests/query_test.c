// SPDX-License-Identifier: MIT
/*
 * query_model: through the public API, every layer of real models is
 * supported on the cpu device (folded layers included, dynamic shapes or
 * not) and the names come with the -EMSGSIZE contract; then, white-box,
 * lib/query.c's rules with a device that refuses Convolution: the
 * Constants that only feed convolutions drop out, the Result of a
 * refused layer drops out, Parameters feeding a refused layer drop out.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "npuring.h"
#include "backend.h"
#include "object.h"
#include "query.h"
#include "graph/graph.h"
#include "ir/ir.h"

static int query(int fd, const char *rel, struct npr_query_model *q,
		 char **names)
{
	struct npr_model_load ml;
	char path[4096];
	int err;

	if (snprintf(path, sizeof(path), "%s/%s", npr_test_shared(), rel) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	npr_prep_model_load(&ml, path, NULL);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err)
		return err;
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->model = ml.handle;
	err = npr_ioctl(fd, NPR_IOCTL_QUERY_MODEL, q);
	if (err != -EMSGSIZE)
		return err ? err : -EPROTO;
	*names = malloc(q->len);
	if (!*names)
		return -ENOMEM;
	q->names = (uintptr_t)*names;
	return npr_ioctl(fd, NPR_IOCTL_QUERY_MODEL, q);
}

static bool listed(const char *l, const char *s)
{
	for (; *l; l += strlen(l) + 1)
		if (!strcmp(l, s))
			return true;
	return false;
}

TEST(cpu_supports_every_layer)
{
	static const char *const models[] = {
		"models/ir/face-detection-retail-0004/FP16-INT8/face-detection-retail-0004.xml",
		"models/ir/squeezenet1.1/FP16/squeezenet1.1.xml",
		"models/onnx/squeezenet1_1.onnx",	/* dynamic batch */
		"models/ir-stateful/summator_v10.xml",
	};
	struct npr_query_model q;
	char *names = NULL;
	size_t i;
	int fd;

	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s", npr_test_shared());
	fd = npr_open("cpu", 0);
	ASSERT_GE(fd, 0);
	for (i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		int err = query(fd, models[i], &q, &names);

		if (err)
			TH_LOG("%s: %s", models[i], npr_last_error());
		ASSERT_EQ(err, 0);
		EXPECT_GT(q.num_layers, 3);
		EXPECT_EQ(q.num_supported, q.num_layers);
		TH_LOG("%s: %u of %u layers", models[i], q.num_supported,
		       q.num_layers);
		free(names);
		names = NULL;
	}
	ASSERT_EQ(query(fd, models[3], &q, &names), 0);
	EXPECT_TRUE(listed(names, "read"));
	EXPECT_TRUE(listed(names, "save"));
	EXPECT_TRUE(listed(names, "init_value"));
	free(names);
	npr_close(fd);
}

TEST(names_buffer_contract)
{
	struct npr_query_model q;
	char *names = NULL, small[8];
	int fd;

	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s", npr_test_shared());
	fd = npr_open("cpu", 0);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(query(fd, "models/ir/open-closed-eye-0001/FP32/open-closed-eye-0001.xml",
			&q, &names), 0);
	q.names = (uintptr_t)small;
	q.len = sizeof(small);
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_QUERY_MODEL, &q), -EMSGSIZE);
	EXPECT_GT(q.len, sizeof(small));
	/* an exec handle is not a model */
	free(names);
	npr_close(fd);
}

/* ---- the rules, with a device that refuses Convolution ---------------- */

static int no_conv(struct npr_device *dev, const struct npr_graph *g,
		   bool *ok)
{
	int i;

	(void)dev;
	for (i = 0; i < g->nnodes; i++)
		ok[i] = strcmp(g->nodes[i].type, "Convolution") != 0;
	return 0;
}

/*
 * x -> Convolution(w) -> r1 (Result), and x -> ReLU -> r2: the weights
 * only feed the refused convolution, x feeds it too.
 */
static const char net[] =
	"<?xml version=\"1.0\"?><net name=\"q\" version=\"11\"><layers>"
	"<layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\">"
	"<data shape=\"1,1,2,2\" element_type=\"f32\"/><output>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim></port>"
	"</output></layer>"
	"<layer id=\"1\" name=\"w\" type=\"Const\" version=\"opset1\">"
	"<data element_type=\"f32\" shape=\"1,1,1,1\" offset=\"0\" size=\"4\"/><output>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>1</dim><dim>1</dim><dim>1</dim></port>"
	"</output></layer>"
	"<layer id=\"2\" name=\"conv\" type=\"Convolution\" version=\"opset1\">"
	"<data strides=\"1,1\" dilations=\"1,1\" pads_begin=\"0,0\" pads_end=\"0,0\"/><input>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim></port>"
	"<port id=\"1\" precision=\"FP32\"><dim>1</dim><dim>1</dim><dim>1</dim><dim>1</dim></port>"
	"</input><output>"
	"<port id=\"2\" precision=\"FP32\"><dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim></port>"
	"</output></layer>"
	"<layer id=\"3\" name=\"r1\" type=\"Result\" version=\"opset1\"><input>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim></port>"
	"</input></layer>"
	"<layer id=\"4\" name=\"relu\" type=\"ReLU\" version=\"opset1\"><input>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim></port>"
	"</input><output>"
	"<port id=\"1\" precision=\"FP32\"><dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim></port>"
	"</output></layer>"
	"<layer id=\"5\" name=\"r2\" type=\"Result\" version=\"opset1\"><input>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim></port>"
	"</input></layer>"
	"</layers><edges>"
	"<edge from-layer=\"0\" from-port=\"0\" to-layer=\"2\" to-port=\"0\"/>"
	"<edge from-layer=\"1\" from-port=\"0\" to-layer=\"2\" to-port=\"1\"/>"
	"<edge from-layer=\"2\" from-port=\"2\" to-layer=\"3\" to-port=\"0\"/>"
	"<edge from-layer=\"0\" from-port=\"0\" to-layer=\"4\" to-port=\"0\"/>"
	"<edge from-layer=\"4\" from-port=\"1\" to-layer=\"5\" to-port=\"0\"/>"
	"</edges></net>";

static bool supported(const struct npr_graph *g, const bool *ok,
		      const char *name)
{
	int i;

	for (i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i].name, name))
			return ok[i];
	return false;
}

TEST(housekeeping_nodes_follow_their_neighbours)
{
	static const float one = 1;
	struct npr_backend_ops ops = npr_cpu_backend_ops;
	struct npr_device dev = { .ops = &ops };
	struct npr_weights *w = NULL;
	struct npr_graph *g = NULL;
	bool ok[16];

	ops.query = no_conv;
	ASSERT_EQ(npr_ir_weights_from_memory(&one, sizeof(one), &w), 0);
	ASSERT_EQ(npr_ir_parse(net, strlen(net), w, &g), 0);
	npr_weights_put(w);
	ASSERT_LE(g->nnodes, 16);
	ASSERT_EQ(npr_device_supports(&dev, g, ok), 0);
	EXPECT_FALSE(supported(g, ok, "conv"));
	EXPECT_FALSE(supported(g, ok, "w"));	/* feeds only conv */
	EXPECT_FALSE(supported(g, ok, "r1"));	/* fed by conv */
	EXPECT_FALSE(supported(g, ok, "x"));	/* feeds conv too */
	EXPECT_TRUE(supported(g, ok, "relu"));
	EXPECT_TRUE(supported(g, ok, "r2"));
	/* the real cpu device: all of it */
	dev.ops = &npr_cpu_backend_ops;
	ASSERT_EQ(npr_device_supports(&dev, g, ok), 0);
	EXPECT_TRUE(supported(g, ok, "conv"));
	EXPECT_TRUE(supported(g, ok, "w"));
	EXPECT_TRUE(supported(g, ok, "x"));
	npr_graph_free(g);
}

TEST_HARNESS_MAIN
