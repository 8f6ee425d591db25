// SPDX-License-Identifier: MIT
/*
 * Buffer objects and remote tensors: a BO is device memory the caller can
 * reach by address and by file descriptor (one memory, two views); bound
 * to request ports it is read and written by inference without copies
 * and gives the outputs the copy path gives; every mismatch (element
 * type, shape, strides, offset, size, handle) is its own clear error; a
 * BO outlives its handle while a request holds it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "npuring.h"

#define EYE "models/ir/open-closed-eye-0001/FP32/open-closed-eye-0001.xml"

FIXTURE(bo) {
	int fd;
	__u32 exec, req;
	struct npr_port_info in, out;
};

FIXTURE_SETUP(bo)
{
	struct npr_model_load ml;
	struct npr_compile co;
	struct npr_req_create rc;
	char path[4096];

	self->fd = -1;
	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s", npr_test_shared());
	self->fd = npr_open("cpu", 0);
	ASSERT_GE(self->fd, 0);
	ASSERT_LT(snprintf(path, sizeof(path), "%s/%s", npr_test_shared(),
			   EYE), (int)sizeof(path));
	npr_prep_model_load(&ml, path, NULL);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_MODEL_LOAD, &ml), 0);
	npr_prep_compile(&co, ml.handle);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_COMPILE, &co), 0);
	self->exec = co.exec;
	npr_prep_req_create(&rc, co.exec);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	self->req = rc.req;
	npr_prep_port_info(&self->in, co.exec, 0, 0, NULL, 0);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_PORT_INFO, &self->in), 0);
	npr_prep_port_info(&self->out, co.exec, 0, 1, NULL, 0);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_PORT_INFO, &self->out), 0);
}

FIXTURE_TEARDOWN(bo)
{
	if (self->fd >= 0)
		npr_close(self->fd);
}

static size_t port_bytes(const struct npr_port_info *p)
{
	size_t n = npr_elem_size(p->elem_type);
	__u32 i;

	for (i = 0; i < p->rank; i++)
		n *= (size_t)p->dims[i];
	return n;
}

static int bo_create(int fd, size_t bytes, __u32 *h)
{
	struct npr_bo_create c = { .size = sizeof(c), .bytes = bytes };
	int err = npr_ioctl(fd, NPR_IOCTL_BO_CREATE, &c);

	*h = c.handle;
	return err;
}

static void *bo_addr(int fd, __u32 h)
{
	struct npr_bo_info i = { .size = sizeof(i), .handle = h };

	return npr_ioctl(fd, NPR_IOCTL_BO_INFO, &i) ? NULL :
	       (void *)(uintptr_t)i.addr;
}

static void prep_bind(struct npr_bo_bind *b, __u32 req, __u32 bo,
		      const struct npr_port_info *p, int output)
{
	memset(b, 0, sizeof(*b));
	b->size = sizeof(*b);
	b->flags = output ? NPR_PORT_OUTPUT : 0;
	b->req = req;
	b->index = p->index;
	b->bo = bo;
	b->elem_type = p->elem_type;
	b->rank = p->rank;
	memcpy(b->dims, p->dims, sizeof(b->dims));
}

TEST_F(bo, one_memory_two_views)
{
	struct npr_bo_info i = { .size = sizeof(i), .flags = NPR_BO_INFO_FD };
	unsigned char *view;
	__u32 h;

	ASSERT_EQ(bo_create(self->fd, 4096, &h), 0);
	i.handle = h;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_INFO, &i), 0);
	EXPECT_EQ(i.bytes, 4096);
	EXPECT_EQ(i.bound, 0);
	ASSERT_GE(i.fd, 0);
	view = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, i.fd, 0);
	ASSERT_NE(view, MAP_FAILED);
	EXPECT_EQ(((unsigned char *)(uintptr_t)i.addr)[100], 0);	/* zeroed */
	view[100] = 0xa5;
	EXPECT_EQ(((unsigned char *)(uintptr_t)i.addr)[100], 0xa5);
	munmap(view, 4096);
	close(i.fd);
	/* without the flag, no descriptor */
	i.flags = 0;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_INFO, &i), 0);
	EXPECT_EQ(i.fd, -1);
}

/* Inputs and outputs in BOs give what the copy path gives, in place. */
TEST_F(bo, inference_reads_and_writes_bos)
{
	size_t inb = port_bytes(&self->in), outb = port_bytes(&self->out), k;
	struct npr_tensor_arg t;
	struct npr_infer inf;
	struct npr_bo_bind b;
	float *x, *want, *got;
	__u32 bin, bout;

	ASSERT_EQ(bo_create(self->fd, inb + 256, &bin), 0);
	ASSERT_EQ(bo_create(self->fd, outb, &bout), 0);
	x = (float *)((char *)bo_addr(self->fd, bin) + 256);
	for (k = 0; k < inb / 4; k++)
		x[k] = (float)(k % 97);
	/* the copy path first */
	want = malloc(outb);
	ASSERT_NE(want, NULL);
	npr_prep_tensor(&t, self->req, 0, 0, x, inb);
	t.elem_type = self->in.elem_type;
	t.rank = self->in.rank;
	memcpy(t.dims, self->in.dims, sizeof(t.dims));
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &t), 0);
	npr_prep_infer(&inf, self->req);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_INFER, &inf), 0);
	npr_prep_tensor(&t, self->req, 0, 1, want, outb);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &t), 0);
	/* then BOs, the input at an offset */
	prep_bind(&b, self->req, bin, &self->in, 0);
	b.offset = 256;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_BIND, &b), 0);
	prep_bind(&b, self->req, bout, &self->out, 1);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_BIND, &b), 0);
	got = bo_addr(self->fd, bout);
	memset(got, 0xff, outb);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_INFER, &inf), 0);
	EXPECT_EQ(memcmp(got, want, outb), 0);
	/* the request's tensor is the BO */
	npr_prep_tensor(&t, self->req, 0, 1, NULL, 0);
	t.flags |= NPR_TENSOR_MAP;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_GET_TENSOR, &t), 0);
	EXPECT_EQ((void *)(uintptr_t)t.data, (void *)got);
	free(want);
}

TEST_F(bo, bind_errors)
{
	size_t inb = port_bytes(&self->in);
	struct npr_bo_bind b;
	__u32 h, small, other_req;

	ASSERT_EQ(bo_create(self->fd, inb, &h), 0);
	ASSERT_EQ(bo_create(self->fd, inb - 4, &small), 0);
	prep_bind(&b, self->req, h, &self->in, 0);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_BIND, &b), 0);

	prep_bind(&b, self->req, h, &self->in, 0);
	b.elem_type = NPR_ELEM_F16;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_BIND, &b), -EINVAL);
	prep_bind(&b, self->req, h, &self->in, 0);
	b.dims[1] += 1;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_BIND, &b), -EINVAL);
	prep_bind(&b, self->req, h, &self->in, 0);
	b.rank -= 1;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_BIND, &b), -EINVAL);
	/* dense strides are fine, others are not */
	prep_bind(&b, self->req, h, &self->in, 0);
	b.strides[b.rank - 1] = 4;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_BIND, &b), 0);
	b.strides[b.rank - 1] = 8;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_BIND, &b), -EINVAL);
	EXPECT_NE(strstr(npr_last_error(), "dense"), NULL);
	/* past the end, by size or offset; misaligned */
	prep_bind(&b, self->req, small, &self->in, 0);
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_BIND, &b), -ERANGE);
	prep_bind(&b, self->req, h, &self->in, 0);
	b.offset = 4;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_BIND, &b), -ERANGE);
	b.offset = 2;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_BIND, &b), -EINVAL);
	/* handles: a request is not a BO, a BO of another fd names nothing */
	prep_bind(&b, self->req, self->req, &self->in, 0);
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_BIND, &b), -EBADF);
	{
		int fd2 = npr_open("cpu", 0);
		__u32 h2;

		ASSERT_GE(fd2, 0);
		ASSERT_EQ(bo_create(fd2, inb, &h2), 0);
		prep_bind(&b, self->req, h2, &self->in, 0);
		if (h2 != h && h2 != small)
			EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_BIND, &b),
				  -ENOENT);
		npr_close(fd2);
	}
	/* port index */
	prep_bind(&b, self->req, h, &self->in, 0);
	b.index = 7;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_BIND, &b), -EINVAL);
	/* sizes */
	{
		struct npr_bo_create c = { .size = sizeof(c) };

		EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_CREATE, &c), -ERANGE);
		c.bytes = (1ULL << 40) + 1;
		EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_CREATE, &c), -ERANGE);
	}
	(void)other_req;
}

/* The request keeps the BO: its handle may go first. */
TEST_F(bo, bo_outlives_its_handle_while_bound)
{
	struct npr_handle_destroy d;
	struct npr_bo_info i = { .size = sizeof(i) };
	struct npr_infer inf;
	struct npr_bo_bind b;
	__u32 h;

	ASSERT_EQ(bo_create(self->fd, port_bytes(&self->in), &h), 0);
	prep_bind(&b, self->req, h, &self->in, 0);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_BIND, &b), 0);
	i.handle = h;
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_INFO, &i), 0);
	EXPECT_EQ(i.bound, 1);
	npr_prep_destroy(&d, h);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_HANDLE_DESTROY, &d), 0);
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_BO_INFO, &i), -ENOENT);
	npr_prep_infer(&inf, self->req);
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_INFER, &inf), 0);
	/* setting the port again lets it go (valgrind: no leak) */
	{
		size_t n = port_bytes(&self->in);
		void *x = calloc(1, n);
		struct npr_tensor_arg t;

		ASSERT_NE(x, NULL);
		npr_prep_tensor(&t, self->req, 0, 0, x, n);
		t.elem_type = self->in.elem_type;
		t.rank = self->in.rank;
		memcpy(t.dims, self->in.dims, sizeof(t.dims));
		EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_SET_TENSOR, &t), 0);
		free(x);
	}
}

TEST_HARNESS_MAIN
