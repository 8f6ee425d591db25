// SPDX-License-Identifier: MIT
/*
 * Export and import of compiled models: real models exported, imported
 * and run give bit-identical outputs to the compiled original (stateful
 * models keep their variables) and export the same blob again; weights
 * the blob holds packed only come back exact; the checksum is the same on
 * every CPU; and the export size contract.  The ways a blob can be wrong
 * are blob_fuzz_test's.
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
	ASSERT_EQ(blob_export(self->fd, exec, &self->blob, &self->len), 0);
	ASSERT_GT(self->len, 96);
	err = blob_import(self->fd, self->blob, self->len, &imp);
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
	{
		/* the imported model exports the same bytes, its held
		 * weights and prepared buffers included */
		unsigned char *again = NULL;
		size_t len = 0;

		ASSERT_EQ(blob_export(self->fd, imp, &again, &len), 0);
		EXPECT_EQ(len, self->len);
		EXPECT_EQ(memcmp(again, self->blob, len < self->len ? len :
				 self->len), 0);
		free(again);
	}
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

/*
 * The blob holds convolution weights packed only, and compile frees the
 * graph's heap copy of them.  Imported with NPR_CPU_REF (the reference
 * kernels, which read the graph's weights: the backend unpacks them), the
 * model gives bit for bit what the same kernels give compiled from the
 * source.
 */
static void exported_weights(struct npr_test *_metadata,
			     FIXTURE_DATA(blob) *self, const char *rel,
			     int batch)
{
	unsigned char *a = NULL, *b = NULL;
	size_t alen = 0, blen = 0;
	__u32 exec, imp, ref;

	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s", npr_test_shared());
	ASSERT_EQ(compile_path_b(self->fd, rel, batch, &exec), 0);
	ASSERT_EQ(blob_export(self->fd, exec, &self->blob, &self->len), 0);
	setenv("NPR_CPU_REF", "1", 1);
	EXPECT_EQ(blob_import(self->fd, self->blob, self->len, &imp), 0);
	EXPECT_EQ(compile_path_b(self->fd, rel, batch, &ref), 0);
	unsetenv("NPR_CPU_REF");
	ASSERT_EQ(run(self->fd, imp, 1, &a, &alen), 0);
	ASSERT_EQ(run(self->fd, ref, 1, &b, &blen), 0);
	ASSERT_EQ(alen, blen);
	EXPECT_EQ(memcmp(a, b, alen), 0);
	free(a);
	free(b);
}

TEST_F(blob, held_weights_exact_squeezenet_fp16)
{
	exported_weights(_metadata, self,
			 "models/ir/squeezenet1.1/FP16/squeezenet1.1.xml", 0);
}

TEST_F(blob, held_weights_exact_onnx_mobilenet)
{
	exported_weights(_metadata, self, "models/onnx/mobilenet_v2.onnx", 1);
}

/* A Loop: its body, port map and back edges travel in the blob. */
TEST_F(blob, loop_with_a_body)
{
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
	ASSERT_EQ(blob_export(self->fd, self->exec, &self->blob, &self->len), 0);
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

uint64_t npr_blob_hash(const void *p, size_t n);

/*
 * The checksum as Documentation/blob.rst defines it, one word at a time:
 * the library's vectorised build (AVX-512, where the CPU has it) must give
 * the same value, or a blob written on one machine would not import on
 * another.
 */
static uint64_t hash_spec(const unsigned char *b, size_t n)
{
	const uint64_t k = 0x9e3779b97f4a7c15ull;
	uint64_t h[64], w, r;
	size_t i;
	int l;

	for (l = 0; l < 64; l++)
		h[l] = l + 1;
	for (i = 0; i + 512 <= n; i += 512)
		for (l = 0; l < 64; l++) {
			memcpy(&w, b + i + 8 * l, 8);
			h[l] = (h[l] ^ w) * k;
			h[l] = (h[l] << 29) | (h[l] >> 35);
		}
	r = n;
	for (l = 0; l < 64; l++)
		r = ((r ^ h[l]) * k) ^ (r >> 31);
	for (; i < n; i++)
		r = ((r ^ b[i]) * k) ^ (r >> 29);
	return r ^ (r >> 33);
}

TEST(checksum_is_the_same_on_every_cpu)
{
	static const size_t sizes[] = { 0, 1, 127, 128, 129, 511, 512, 513,
					4095, 4096, 4097, 65536 + 77,
					1 << 20 };
	unsigned char *b = malloc((1 << 20) + 1);
	uint64_t x = 88172645463325252ull;
	size_t i;

	ASSERT_NE(b, NULL);
	for (i = 0; i < (1 << 20) + 1; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i] = (unsigned char)x;
	}
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		EXPECT_EQ(npr_blob_hash(b, sizes[i]), hash_spec(b, sizes[i]));
		/* unaligned starts too */
		if (sizes[i])
			EXPECT_EQ(npr_blob_hash(b + 1, sizes[i]),
				  hash_spec(b + 1, sizes[i]));
	}
	/* and it sees a flipped bit in the vectorised part */
	x = npr_blob_hash(b, 1 << 20);
	b[777777] ^= 4;
	EXPECT_NE(npr_blob_hash(b, 1 << 20), x);
	EXPECT_EQ(npr_blob_hash(b, 1 << 20), hash_spec(b, 1 << 20));
	free(b);
}

TEST_HARNESS_MAIN
