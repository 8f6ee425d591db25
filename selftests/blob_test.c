// SPDX-License-Identifier: MIT
/*
 * Export and import of compiled models: real models exported, imported
 * and run give bit-identical outputs to the compiled original (stateful
 * models keep their variables), and the export size contract.  The ways
 * a blob can be wrong are blob_fuzz_test's.
 */
#include "blob_util.h"

/* On cpu, and on npu (vnpu with NPR_VNPU, or an NPU) when there is one. */
FIXTURE_VARIANT_ADD(blob, cpu) {
	.device = "cpu",
};

FIXTURE_VARIANT_ADD(blob, npu) {
	.device = "npu",
};

static void round_trip_b(struct npr_test *_metadata,
			 FIXTURE_DATA(blob) *self, const char *rel, int steps,
			 int batch)
{
	unsigned char *a = NULL, *b = NULL;
	size_t alen = 0, blen = 0;
	__u32 exec, imp;
	int err;

	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s", npr_test_shared());
	err = compile_path_b(self->fd, rel, batch, &exec);
	if (err)
		TH_LOG("%s: %s", rel, npr_last_error());
	ASSERT_EQ(err, 0);
	ASSERT_EQ(export(self->fd, exec, &self->blob, &self->len), 0);
	ASSERT_GT(self->len, 96);
	err = import(self->fd, self->blob, self->len, &imp);
	if (err)
		TH_LOG("import %s: %s", rel, npr_last_error());
	ASSERT_EQ(err, 0);
	ASSERT_EQ(run(self->fd, exec, steps, &a, &alen), 0);
	ASSERT_EQ(run(self->fd, imp, steps, &b, &blen), 0);
	ASSERT_EQ(alen, blen);
	EXPECT_EQ(memcmp(a, b, alen), 0);
	TH_LOG("%s: blob %zu bytes, outputs %zu bytes identical", rel,
	       self->len, alen);
	free(a);
	free(b);
}

static void round_trip(struct npr_test *_metadata, FIXTURE_DATA(blob) *self,
		       const char *rel, int steps)
{
	round_trip_b(_metadata, self, rel, steps, 0);
}

TEST_F(blob, squeezenet_fp16)
{
	round_trip(_metadata, self, "models/ir/squeezenet1.1/FP16/squeezenet1.1.xml", 1);
}

TEST_F(blob, landmarks_int8)
{
	round_trip(_metadata, self,
		   "models/ir/landmarks-regression-retail-0009/FP16-INT8/landmarks-regression-retail-0009.xml", 1);
}

TEST_F(blob, face_detection_v10)
{
	round_trip(_metadata, self,
		   "models/ir/face-detection-retail-0004/FP32-v10/face-detection-retail-0004.xml", 1);
}

TEST_F(blob, onnx_mobilenet_batch2)
{
	round_trip_b(_metadata, self, "models/onnx/mobilenet_v2.onnx", 1, 2);
}

/* A Loop: its body, port map and back edges travel in the blob. */
TEST_F(blob, loop_with_a_body)
{
	if (!strcmp(variant->device, "npu"))
		SKIP(return, "npu: models with sub-graphs are not supported yet (Documentation/npu.rst)");
	round_trip(_metadata, self, "models/ir-small/loop_2d_add.xml", 1);
}

/* The variables survive: three steps of the sliding window. */
TEST_F(blob, stateful_sliding_window)
{
	round_trip(_metadata, self,
		   "models/ir-stateful/sliding_window_summator_v10.xml", 3);
}

/* A small model for the failure cases. */
static void small(struct npr_test *_metadata, FIXTURE_DATA(blob) *self)
{
	ASSERT_EQ(compile_path(self->fd,
			       "models/ir/open-closed-eye-0001/FP32/open-closed-eye-0001.xml",
			       &self->exec), 0);
	ASSERT_EQ(export(self->fd, self->exec, &self->blob, &self->len), 0);
}

#define NEED_SHARED() do {						\
	if (!npr_test_shared_ok())					\
		SKIP(return, "no shared data at %s", npr_test_shared());	\
} while (0)

TEST_F(blob, export_size_contract)
{
	struct npr_export ea = { .size = sizeof(ea) };
	unsigned char tiny[16];

	NEED_SHARED();
	small(_metadata, self);
	ea.exec = self->exec;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_EXPORT, &ea), -EMSGSIZE);
	EXPECT_EQ(ea.bytes, self->len);
	ea.data = (uintptr_t)tiny;
	ea.bytes = sizeof(tiny);
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_EXPORT, &ea), -EMSGSIZE);
	EXPECT_EQ(ea.bytes, self->len);
	/* a model handle is not an exec */
	ea.exec = self->exec & ~(0xfU << 28);
	ea.exec |= (__u32)NPR_HANDLE_MODEL << 28;
	EXPECT_NE(npr_ioctl(self->fd, NPR_IOCTL_EXPORT, &ea), 0);
}

TEST_HARNESS_MAIN
