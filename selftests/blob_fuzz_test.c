// SPDX-License-Identifier: MIT
/*
 * Every way a compiled-model blob can be wrong - truncated, bit-flipped,
 * another backend, architecture, format or library version, a payload
 * whose checksum is right but whose graph is not - is a clear error,
 * never a crash; on npu, the same for the driver's native section.
 * Runs under valgrind.
 */
#define _GNU_SOURCE
#include "blob_util.h"
#include "graph/graph.h"

/* The blob layout (Documentation/blob.rst) and the library's checksum. */
#define HDR		BLOB_HDR
#define FORMAT		3
#define OFF_BACKEND	16
#define OFF_ARCH	32
#define OFF_VERSION	64

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

TEST_F(blob, truncated)
{
	static const size_t cuts[] = { 0, 1, 7, 8, 95, 96, 97, 200 };
	__u32 imp;
	size_t i;

	NEED_SHARED();
	small(_metadata, self);
	EXPECT_EQ(blob_import(self->fd, self->blob, 0, &imp), -EINVAL);
	for (i = 1; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		int err = blob_import(self->fd, self->blob, cuts[i], &imp);

		EXPECT_TRUE(err == -EBADMSG || err == -ENOEXEC)
			;
		if (err != -EBADMSG && err != -ENOEXEC)
			TH_LOG("cut at %zu: %d", cuts[i], err);
	}
	EXPECT_EQ(blob_import(self->fd, self->blob, self->len / 2, &imp), -EBADMSG);
	EXPECT_EQ(blob_import(self->fd, self->blob, self->len - 1, &imp), -EBADMSG);
	EXPECT_NE(strstr(npr_last_error(), "truncated"), NULL);
	/* the original still imports */
	EXPECT_EQ(blob_import(self->fd, self->blob, self->len, &imp), 0);
}

/* Every single-bit flip is caught, wherever it lands. */
TEST_F(blob, bit_flips)
{
	unsigned char *c;
	__u32 imp;
	int i, err;

	NEED_SHARED();
	small(_metadata, self);
	c = malloc(self->len);
	ASSERT_NE(c, NULL);
	for (i = 0; i < 400; i++) {
		size_t pos = i < 96 ? (size_t)i :
			     (size_t)(((uint64_t)i * 2654435761u) % self->len);

		memcpy(c, self->blob, self->len);
		c[pos] ^= (unsigned char)(1u << (i % 8));
		err = blob_import(self->fd, c, self->len, &imp);
		if (err == 0)
			TH_LOG("flip at byte %zu bit %d accepted", pos, i % 8);
		EXPECT_NE(err, 0);
		EXPECT_TRUE(err == -EBADMSG || err == -ENOEXEC ||
			    err == -EPROTONOSUPPORT);
	}
	free(c);
}

static int import_patched(FIXTURE_DATA(blob) *self, size_t off,
			  const char *s, size_t field)
{
	unsigned char *c = malloc(self->len);
	__u32 imp;
	int err;

	if (!c)
		return -ENOMEM;
	memcpy(c, self->blob, self->len);
	memset(c + off, 0, field);
	memcpy(c + off, s, strlen(s));
	blob_reseal(c, self->len);
	err = blob_import(self->fd, c, self->len, &imp);
	free(c);
	return err;
}

TEST_F(blob, wrong_backend_architecture_version)
{
	NEED_SHARED();
	small(_metadata, self);
	EXPECT_EQ(import_patched(self, OFF_BACKEND, "npu", 16), -ENODEV);
	EXPECT_NE(strstr(npr_last_error(), "npu"), NULL);
	EXPECT_EQ(import_patched(self, OFF_ARCH, "riscv64", 32), -ENODEV);
	EXPECT_NE(strstr(npr_last_error(), "riscv64"), NULL);
	EXPECT_EQ(import_patched(self, OFF_VERSION, "9.9.9", 16),
		  -EPROTONOSUPPORT);
	EXPECT_NE(strstr(npr_last_error(), "9.9.9"), NULL);
	{
		/* a format from the future (FORMAT + 1 is the weightless
		 * one, weightless_test's) */
		unsigned char *c = malloc(self->len);
		__u32 imp, v = FORMAT + 2;

		ASSERT_NE(c, NULL);
		memcpy(c, self->blob, self->len);
		memcpy(c + 8, &v, 4);
		EXPECT_EQ(blob_import(self->fd, c, self->len, &imp),
			  -EPROTONOSUPPORT);
		memcpy(c, "NOTABLOB", 8);
		EXPECT_EQ(blob_import(self->fd, c, self->len, &imp), -ENOEXEC);
		free(c);
	}
}

/*
 * The checksum guards against accidents, not against crafted blobs: the
 * payload is validated on its own.  Random byte changes with a fixed-up
 * checksum must fail cleanly or import a model that runs.
 */
/*
 * Where the prepared constants start: the layout string ("conv1 avx512
 * mr16 nr32", a 32-bit length before it and its NUL after it) the CPU
 * backend writes after the graph; the blob's length when there is none.
 */
/* Does @p[0..n) contain the 3 bytes @s? */
static bool has3(const unsigned char *p, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i + 3 <= n; i++)
		if (!memcmp(p + i, s, 3))
			return true;
	return false;
}

static size_t prepared_at(const unsigned char *b, size_t len)
{
	size_t i;

	for (i = HDR; i + 8 < len; i++) {
		uint32_t n;

		if (memcmp(b + i + 4, "conv", 4))
			continue;
		memcpy(&n, b + i, 4);
		if (n < 8 || n >= 64 || i + 4 + n + 1 + 4 > len ||
		    b[i + 4 + n])
			continue;
		if (has3(b + i + 4, n, " mr") && has3(b + i + 4, n, " nr"))
			return i;
	}
	return len;
}

static void crafted(struct npr_test *_metadata, FIXTURE_DATA(blob) *self)
{
	size_t outlen, end = prepared_at(self->blob, self->len);
	unsigned char *c, *out;
	uint64_t x = 0x243f6a8885a308d3ull;
	int i, k, rejected = 0, accepted = 0;
	__u32 imp;

	c = malloc(self->len);
	ASSERT_NE(c, NULL);
	for (i = 0; i < 300; i++) {
		int err;

		memcpy(c, self->blob, self->len);
		for (k = 0; k < 1 + i % 4; k++) {
			size_t pos;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* most of a small model's payload is weights: aim
			 * at the structure after them (before the prepared
			 * constants) half of the time */
			pos = HDR + (size_t)(x % (self->len - HDR));
			if (i % 2)
				pos = end - 1 - (size_t)(x % (end - HDR < 2048 ?
							      end - HDR : 2048));
			c[pos] = (unsigned char)(x >> 32);
		}
		blob_reseal(c, self->len);
		err = blob_import(self->fd, c, self->len, &imp);
		if (err) {
			EXPECT_TRUE(err == -EINVAL || err == -EBADMSG ||
				    err == -ENOMEM || err == -EOPNOTSUPP);
			if (err != -EINVAL && err != -EBADMSG &&
			    err != -ENOMEM && err != -EOPNOTSUPP)
				TH_LOG("errno %d: %s", err, npr_last_error());
			EXPECT_NE(npr_last_error()[0], 0);
			rejected++;
			continue;
		}
		accepted++;
		/* an accepted blob is a valid model: it runs */
		if (run(self->fd, imp, 1, &out, &outlen) == 0)
			free(out);
	}
	TH_LOG("%d rejected, %d accepted (changed weights or names)",
	       rejected, accepted);
	EXPECT_GT(rejected, 50);
	free(c);
}

TEST_F_TIMEOUT(blob, crafted_payloads, 300)
{
	NEED_SHARED();
	small(_metadata, self);
	crafted(_metadata, self);
}

/*
 * Every Result the outputs name must be live: a dead one is not checked
 * with the nodes, and what it reads may then be computed by nothing (a
 * fuzzed blob with its Result and the node before it marked dead made
 * INFER read a NULL buffer).
 */
TEST_F(blob, dead_result_is_refused)
{
	static const unsigned char rec[] = "\x06\0\0\0Result";
	unsigned char *c;
	size_t i, at = 0;
	int found = 0;
	__u32 imp, one = 1;

	NEED_SHARED();
	small(_metadata, self);
	c = malloc(self->len);
	ASSERT_NE(c, NULL);
	memcpy(c, self->blob, self->len);
	/* a node's type string (length, bytes, NUL), then version (4),
	 * layer id (8) and the dead flag (4) */
	for (i = HDR; i + sizeof(rec) + 16 <= self->len; i++)
		if (!memcmp(c + i, rec, sizeof(rec))) {
			at = i + sizeof(rec) + 12;
			found++;
		}
	ASSERT_EQ(found, 1);
	memcpy(c + at, &one, 4);
	blob_reseal(c, self->len);
	EXPECT_EQ(blob_import(self->fd, c, self->len, &imp), -EINVAL);
	EXPECT_NE(strstr(npr_last_error(), "live Result"), NULL);
	free(c);
}

/*
 * The prepared constants (packed weights): another layout is refused with
 * its own errno and both names; a count, node, index or size that does
 * not fit is -EINVAL, never a crash, and a blob without them imports.
 */
TEST_F(blob, prepared_constants)
{
	unsigned char *c;
	size_t at, i;
	uint32_t n;
	__u32 imp;
	static const struct {
		size_t off;	/* from the count */
		int bytes;
		uint64_t val;
	} bad[] = {
		{ 0, 4, 0 }, { 0, 4, 1 }, { 0, 4, 0x7fffffff },	/* count */
		{ 4, 4, 0 }, { 4, 4, 0xffffffff }, { 4, 4, 100000 },	/* node */
		{ 8, 4, 1 }, { 8, 4, 0xffffffff },			/* index */
		{ 12, 8, 0 }, { 12, 8, 64 }, { 12, 8, ~0ull },		/* size */
	};

	NEED_SHARED();
	small(_metadata, self);
	at = prepared_at(self->blob, self->len);
	ASSERT_LT(at, self->len);
	memcpy(&n, self->blob + at, 4);
	c = malloc(self->len);
	ASSERT_NE(c, NULL);

	/* another layout */
	memcpy(c, self->blob, self->len);
	c[at + 4 + 4] = '9';
	blob_reseal(c, self->len);
	EXPECT_EQ(blob_import(self->fd, c, self->len, &imp), -EPROTONOSUPPORT);
	EXPECT_NE(strstr(npr_last_error(), "layout"), NULL);
	EXPECT_NE(strstr(npr_last_error(), "conv9"), NULL);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err;

		memcpy(c, self->blob, self->len);
		memcpy(c + at + 4 + n + 1 + bad[i].off, &bad[i].val,
		       bad[i].bytes);
		blob_reseal(c, self->len);
		err = blob_import(self->fd, c, self->len, &imp);
		if (err != -EINVAL && err != -EBADMSG)
			TH_LOG("case %zu: errno %d: %s", i, err,
			       npr_last_error());
		EXPECT_TRUE(err == -EINVAL || err == -EBADMSG);
		EXPECT_NE(npr_last_error()[0], 0);
	}
	free(c);
	/* the original imports */
	EXPECT_EQ(blob_import(self->fd, self->blob, self->len, &imp), 0);
}

/*
 * A count of values, nodes or prepared buffers is checked against the
 * bytes left in the payload before anything is allocated for it: a
 * fuzzed blob of 1 KB claiming 2^24 values asked for 3 GB.
 */
TEST_F(blob, count_larger_than_the_payload)
{
	uint32_t n, big = 1u << 24;
	unsigned char *c;
	size_t at;
	__u32 imp;

	NEED_SHARED();
	small(_metadata, self);
	at = prepared_at(self->blob, self->len);
	ASSERT_LT(at, self->len);
	memcpy(&n, self->blob + at, 4);
	c = malloc(self->len);
	ASSERT_NE(c, NULL);
	memcpy(c, self->blob, self->len);
	memcpy(c + at + 4 + n + 1, &big, 4);
	blob_reseal(c, self->len);
	EXPECT_EQ(blob_import(self->fd, c, self->len, &imp), -EBADMSG);
	TH_LOG("%s", npr_last_error());
	EXPECT_NE(strstr(npr_last_error(),
			 "16777216 prepared buffers of at least 16 bytes"),
		  NULL);
	free(c);
}

/*
 * Strings are read in place (Documentation/blob.rst): one whose NUL is
 * gone, or with a NUL before its end, is refused with its own message.
 * The layout string is one (the graph's are alike, found less easily).
 */
TEST_F(blob, string_terminators)
{
	unsigned char *c;
	uint32_t n;
	size_t at;
	__u32 imp;

	NEED_SHARED();
	small(_metadata, self);
	at = prepared_at(self->blob, self->len);
	ASSERT_LT(at, self->len);
	memcpy(&n, self->blob + at, 4);
	c = malloc(self->len);
	ASSERT_NE(c, NULL);

	memcpy(c, self->blob, self->len);
	c[at + 4 + n] = 'x';
	blob_reseal(c, self->len);
	EXPECT_EQ(blob_import(self->fd, c, self->len, &imp), -EINVAL);
	EXPECT_NE(strstr(npr_last_error(), "without its NUL"), NULL);

	memcpy(c, self->blob, self->len);
	c[at + 4 + 2] = 0;
	blob_reseal(c, self->len);
	EXPECT_EQ(blob_import(self->fd, c, self->len, &imp), -EINVAL);
	EXPECT_NE(strstr(npr_last_error(), "NUL inside"), NULL);
	free(c);
}

/*
 * Constants "held" by the prepared data (no bytes in the graph, marker
 * 0xffff...fe where the size goes): turning a computed value's marker
 * (0xffff...ff) into one, or a held one into a computed one, fails
 * cleanly or gives a model that runs.
 */
TEST_F(blob, held_constants)
{
	static const unsigned char none[8] = { 0xff, 0xff, 0xff, 0xff,
					       0xff, 0xff, 0xff, 0xff };
	static const unsigned char held[8] = { 0xfe, 0xff, 0xff, 0xff,
					       0xff, 0xff, 0xff, 0xff };
	size_t i, end;
	int nheld = 0, nnone = 0, rejected = 0;
	unsigned char *c, *out;
	size_t outlen;
	__u32 imp;

	NEED_SHARED();
	small(_metadata, self);
	end = prepared_at(self->blob, self->len);
	c = malloc(self->len);
	ASSERT_NE(c, NULL);
	for (i = HDR; i + 8 <= end; i++) {
		bool is_held = !memcmp(self->blob + i, held, 8);
		int err;

		if (!is_held && (memcmp(self->blob + i, none, 8) ||
				 nnone >= 40))
			continue;
		memcpy(c, self->blob, self->len);
		memcpy(c + i, is_held ? none : held, 8);
		blob_reseal(c, self->len);
		err = blob_import(self->fd, c, self->len, &imp);
		nheld += is_held;
		nnone += !is_held;
		if (err) {
			if (err != -EINVAL)
				TH_LOG("at %zu: errno %d: %s", i, err,
				       npr_last_error());
			EXPECT_EQ(err, -EINVAL);
			EXPECT_NE(npr_last_error()[0], 0);
			rejected++;
		} else if (run(self->fd, imp, 1, &out, &outlen) == 0) {
			free(out);
		}
		i += 7;
	}
	TH_LOG("%d held and %d computed markers swapped, %d rejected",
	       nheld, nnone, rejected);
	EXPECT_GT(nheld, 0);	/* the model's convolution weights */
	EXPECT_GT(nnone, 0);
	EXPECT_GE(rejected, nheld);
	free(c);
}

/*
 * A graph read from a blob keeps its strings in the blob and its nodes'
 * arrays in its arena (Documentation/blob.rst): built here as import
 * builds it, then changed the ways a pass may change a graph, cloned and
 * freed.  Under valgrind an attempt to free or write a borrowed string
 * or a packed array is an error.
 */
TEST(imported_graph_ownership)
{
	static const char bytes[] = "conv1\0Convolution\0strides\0001,1";
	struct npr_graph *g = npr_graph_new(), *c;
	struct npr_weights *mem = calloc(1, sizeof(*mem));
	char *heap = strdup("mine");
	struct npr_node *n;
	int *out;
	int v;

	ASSERT_NONNULL(g);
	ASSERT_NONNULL(mem);
	ASSERT_NONNULL(heap);
	mem->data = malloc(sizeof(bytes));
	ASSERT_NONNULL(mem->data);
	memcpy(mem->data, bytes, sizeof(bytes));
	mem->size = sizeof(bytes);
	mem->refs = 1;
	g->weights = mem;		/* the graph's reference */

	ASSERT_EQ(npr_graph_add_node(g, "x", "Parameter", 1, 0), 0);
	v = npr_graph_add_value(g, 0, 0);
	ASSERT_EQ(v, 0);
	/* node 1 as import makes it */
	ASSERT_EQ(npr_graph_add_node(g, NULL, NULL, 1, 1), 1);
	n = &g->nodes[1];
	free(n->name);
	free(n->type);
	n->name = (char *)mem->data;
	n->type = (char *)mem->data + 6;
	n->in = npr_graph_alloc(g, sizeof(int));
	out = npr_graph_alloc(g, sizeof(int));
	n->attr = npr_graph_alloc(g, sizeof(*n->attr));
	ASSERT_NONNULL(n->in);
	ASSERT_NONNULL(out);
	ASSERT_NONNULL(n->attr);
	EXPECT_EQ((uintptr_t)n->in % 16, 0);
	n->in[0] = v;
	n->nin = 1;
	n->out = out;
	n->out[0] = npr_graph_add_value(g, 1, 0);
	n->nout = 1;
	n->attr[0].key = (char *)mem->data + 18;
	n->attr[0].val = (char *)mem->data + 26;
	n->nattr = 1;
	n->packed = NPR_NODE_PACKED_IN | NPR_NODE_PACKED_OUT |
		    NPR_NODE_PACKED_ATTR;
	EXPECT_TRUE(npr_graph_str_borrowed(g, n->name));
	EXPECT_TRUE(npr_graph_str_borrowed(g, n->attr[0].val));
	EXPECT_FALSE(npr_graph_str_borrowed(g, g->nodes[0].name));
	EXPECT_FALSE(npr_graph_str_borrowed(g, heap));
	EXPECT_STREQ(npr_attr(n, "strides"), "1,1");

	/* a clone owns copies of everything */
	c = npr_graph_clone(g);
	ASSERT_NONNULL(c);
	EXPECT_EQ(c->nodes[1].packed, 0);
	EXPECT_FALSE(npr_graph_str_borrowed(c, c->nodes[1].type));
	EXPECT_STREQ(c->nodes[1].type, "Convolution");
	npr_graph_free(c);

	/* replaced arrays and strings leave the arena and the blob alone */
	ASSERT_EQ(npr_node_add_attr(n, "pads_begin", "0,0"), 0);
	EXPECT_EQ(n->packed & NPR_NODE_PACKED_ATTR, 0);
	EXPECT_STREQ(npr_attr(n, "strides"), "1,1");
	EXPECT_STREQ(npr_attr(n, "pads_begin"), "0,0");
	ASSERT_EQ(npr_node_set_inputs(n, 2), 0);
	EXPECT_EQ(n->packed & NPR_NODE_PACKED_IN, 0);
	n->in[0] = n->in[1] = v;
	npr_graph_free_str(g, n->type);
	n->type = heap;
	EXPECT_NE(n->packed & NPR_NODE_PACKED_OUT, 0);
	npr_graph_free(g);	/* frees heap, the new arrays and the blob */
}

/* The same with a Loop: sub-graphs, port maps and back edges. */
TEST_F_TIMEOUT(blob, crafted_payloads_with_a_body, 300)
{
	NEED_SHARED();
	ASSERT_EQ(compile_path(self->fd, "models/ir-small/loop_2d_add.xml",
			       &self->exec), 0);
	ASSERT_EQ(blob_export(self->fd, self->exec, &self->blob, &self->len), 0);
	crafted(_metadata, self);
}

/* ---- the npu device's native section ---------------------------------- */

/*
 * An npu blob ends with the driver's native binary (Documentation/npu.rst):
 * a u64 size, the binary, the compile-time NPU properties and a 48-byte
 * trailer whose own checksum covers the binary and the properties.  Each
 * test runs on npu (vnpu with NPR_VNPU, or an NPU) and skips otherwise.
 */
#define TRAILER		48
#define T_SIZE		24	/* u64 binary size */
#define T_HASH		32	/* u64 checksum */
#define T_PSIZE		40	/* u32 size of the properties */

FIXTURE(native) {
	int fd;
	unsigned char *blob;
	size_t len;
	size_t sec;		/* the binary's offset */
	size_t tr;		/* the trailer's offset */
	unsigned char *out;	/* the original's outputs */
	size_t outlen;
};

/* a small convolutional model, and a Loop (its body read from the binary) */
FIXTURE_VARIANT(native) {
	const char *path;
};

FIXTURE_VARIANT_ADD(native, eye) {
	.path = "models/ir/open-closed-eye-0001/FP32/open-closed-eye-0001.xml",
};
FIXTURE_VARIANT_ADD(native, loop) {
	.path = "models/ir-small/loop_2d_add.xml",
};

FIXTURE_SETUP(native)
{
	__u32 exec;
	uint64_t n;
	size_t cut;

	self->blob = self->out = NULL;
	self->fd = -1;
	NEED_SHARED();
	self->fd = npr_open("npu", 0);
	if (self->fd < 0)
		SKIP(return, "no npu device: %s (make check sets NPR_VNPU)",
		     npr_last_error());
	ASSERT_EQ(compile_path(self->fd, variant->path, &exec), 0);
	ASSERT_EQ(blob_export(self->fd, exec, &self->blob, &self->len), 0);
	ASSERT_EQ(run(self->fd, exec, 1, &self->out, &self->outlen), 0);
	ASSERT_GT(self->len, HDR + 8 + TRAILER);
	self->tr = self->len - TRAILER;
	ASSERT_EQ(memcmp(self->blob + self->tr, "NPRNPUN", 8), 0);
	/* the section's u64 size sits before the binary */
	for (cut = HDR; cut + 8 <= self->tr; cut++) {
		memcpy(&n, self->blob + cut, 8);
		if (n == self->len - cut - 8)
			break;
	}
	ASSERT_LT(cut + 8, self->tr);
	self->sec = cut + 8;
}

FIXTURE_TEARDOWN(native)
{
	free(self->blob);
	free(self->out);
	if (self->fd >= 0)
		npr_close(self->fd);
}

/* The trailer's checksum recomputed from what its sizes cover. */
static void reseal_native(unsigned char *c, size_t sec, size_t len)
{
	const unsigned char *t = c + len - TRAILER;
	uint64_t n, h;
	uint32_t psize;

	memcpy(&n, t + T_SIZE, 8);
	memcpy(&psize, t + T_PSIZE, 4);
	if (n + psize != len - TRAILER - sec)
		return;
	h = npr_blob_hash(c + sec, (size_t)(n + psize));
	memcpy(c + len - TRAILER + T_HASH, &h, 8);
}

/*
 * Import @c; a refusal must be one of the native section's errnos (or
 * the driver's, for a binary it does not take) with a message, and an
 * accepted blob must run.  Returns the errno.
 */
static int import_clean(struct npr_test *_metadata,
			FIXTURE_DATA(native) *self, const unsigned char *c,
			size_t len, const char *what, size_t pos)
{
	unsigned char *out = NULL;
	size_t outlen = 0;
	__u32 imp;
	int err;

	err = blob_import(self->fd, c, len, &imp);
	if (!err) {
		EXPECT_EQ(run(self->fd, imp, 1, &out, &outlen), 0);
		free(out);
		return 0;
	}
	if (err != -EBADMSG && err != -ENOEXEC && err != -EPROTONOSUPPORT &&
	    err != -ENODEV && err != -EINVAL)
		TH_LOG("%s at %zu: errno %d: %s", what, pos, err,
		       npr_last_error());
	EXPECT_TRUE(err == -EBADMSG || err == -ENOEXEC ||
		    err == -EPROTONOSUPPORT || err == -ENODEV ||
		    err == -EINVAL);
	EXPECT_NE(npr_last_error()[0], 0);
	return err;
}

/*
 * Cut anywhere in the section, its size and the blob's payload size made
 * to agree and the blob resealed: refused (a cut in the trailer moves it,
 * so the magic or the sizes no longer fit).  Plain cuts fail the blob's
 * own size check.
 */
TEST_F(native, truncated)
{
	size_t span = self->len - self->sec, step, cut;
	unsigned char *c;
	__u32 imp;
	int tested = 0;

	if (self->fd < 0)
		return;
	c = malloc(self->len);
	ASSERT_NONNULL(c);
	step = span / 64 ? span / 64 : 1;
	for (cut = 1; cut < span; cut += cut <= TRAILER ? 1 : step) {
		size_t l = self->len - cut;
		uint64_t v;

		EXPECT_EQ(blob_import(self->fd, self->blob, l, &imp), -EBADMSG);
		memcpy(c, self->blob, l);
		v = l - self->sec;
		memcpy(c + self->sec - 8, &v, 8);
		v = l - HDR;
		memcpy(c + 80, &v, 8);
		blob_reseal(c, l);
		EXPECT_NE(import_clean(_metadata, self, c, l, "cut", cut), 0);
		tested++;
	}
	TH_LOG("%d cuts of a %zu-byte section refused", tested, span);
	free(c);
}

/*
 * Every bit of the trailer flipped, the blob resealed: refused, except
 * the compiler and graph extension versions (bytes 16..23), which are
 * the driver's to judge: vnpu takes its binary whatever they say, and
 * the model then computes what the original does.
 */
TEST_F(native, trailer_bit_flips)
{
	unsigned char *c, *out;
	size_t outlen, pos;
	int bit, refused = 0, taken = 0;
	__u32 imp;

	if (self->fd < 0)
		return;
	c = malloc(self->len);
	ASSERT_NONNULL(c);
	for (pos = self->tr; pos < self->len; pos++)
		for (bit = 0; bit < 8; bit++) {
			size_t off = pos - self->tr;
			int err;

			memcpy(c, self->blob, self->len);
			c[pos] ^= (unsigned char)(1u << bit);
			blob_reseal(c, self->len);
			if (off < 16 || off >= 24) {
				err = import_clean(_metadata, self, c,
						   self->len, "trailer flip",
						   off);
				if (!err)
					TH_LOG("trailer byte %zu bit %d accepted",
					       off, bit);
				EXPECT_NE(err, 0);
				refused++;
				continue;
			}
			if (bit % 4)	/* a few per byte are enough */
				continue;
			err = blob_import(self->fd, c, self->len, &imp);
			if (err) {
				TH_LOG("version byte %zu bit %d: %s", off, bit,
				       npr_last_error());
				continue;
			}
			ASSERT_EQ(run(self->fd, imp, 1, &out, &outlen), 0);
			ASSERT_EQ(outlen, self->outlen);
			EXPECT_EQ(memcmp(out, self->out, outlen), 0);
			free(out);
			taken++;
		}
	TH_LOG("%d trailer flips refused, %d version flips taken", refused,
	       taken);
	free(c);
}

/*
 * Bits flipped in the binary and the properties: with the trailer as it
 * was, its checksum refuses every one (-EBADMSG); with the checksum
 * recomputed, the properties' own checks and the driver see them, and
 * each import fails cleanly or gives a model that runs (a flip in the
 * weights, or in the text of the IR where it still reads).  Half of the
 * flips land in vnpu's header and xml, the rest anywhere.
 */
TEST_F_TIMEOUT(native, binary_bit_flips, 300)
{
	size_t body = self->tr - self->sec, head = body, pos;
	uint64_t x = 0x13198a2e03707344ull, xs;
	int i, refused = 0, taken = 0;
	unsigned char *c;

	if (self->fd < 0)
		return;
	if (body > 24 && !memcmp(self->blob + self->sec, "VNPUBLOB", 8)) {
		memcpy(&xs, self->blob + self->sec + 16, 8);
		if (xs < body - 32)
			head = 32 + (size_t)xs;
	}
	c = malloc(self->len);
	ASSERT_NONNULL(c);
	for (i = 0; i < 120; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		pos = self->sec + (size_t)(x % (i % 2 ? body : head));
		memcpy(c, self->blob, self->len);
		c[pos] ^= (unsigned char)(1u << (x >> 61));
		blob_reseal(c, self->len);
		EXPECT_EQ(import_clean(_metadata, self, c, self->len,
				       "binary flip", pos - self->sec),
			  -EBADMSG);
		reseal_native(c, self->sec, self->len);
		blob_reseal(c, self->len);
		if (import_clean(_metadata, self, c, self->len,
				 "binary flip, resealed", pos - self->sec))
			refused++;
		else
			taken++;
	}
	TH_LOG("resealed: %d refused, %d taken of %zu binary + properties bytes (%zu header and xml)",
	       refused, taken, body, head);
	EXPECT_GT(refused, 0);
	free(c);
}

TEST_HARNESS_MAIN
