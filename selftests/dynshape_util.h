/* SPDX-License-Identifier: MIT */
/*
 * Helpers of dynshape_test.c and dynshape_models_test.c: compile with
 * shapes (dims or ranges) and a property, set an input of any shape, read
 * an output, read an exec's integer property.
 */
#ifndef DYNSHAPE_UTIL_H
#define DYNSHAPE_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npuring.h"

/*
 * Compile @model: input @index gets @rank dims @lo (ranges: up to @hi)
 * unless @rank is 0; @cap >= 0 sets CPU_RUNTIME_CACHE_CAPACITY.
 */
static inline int dyn_compile(int fd, __u32 model, __u32 index, int rank,
			      const __s64 *lo, const __s64 *hi, int cap,
			      __u32 *exec)
{
	struct npr_shape_range sr = { .index = index, .rank = rank };
	struct npr_shape_arg sa = { .index = index, .rank = rank };
	struct npr_prop_arg pa = { .param = NPR_PARAM_CPU_RUNTIME_CACHE_CAPACITY };
	struct npr_compile co;
	int i, err;

	for (i = 0; i < rank; i++) {
		sa.dims[i] = lo[i];
		sr.lo[i] = lo[i];
		sr.hi[i] = hi ? hi[i] : lo[i];
	}
	npr_prep_compile(&co, model);
	if (rank) {
		co.shapes = hi ? (uintptr_t)&sr : (uintptr_t)&sa;
		co.flags = hi ? NPR_COMPILE_SHAPE_RANGES : 0;
		co.num_shapes = 1;
	}
	if (cap >= 0) {
		pa.value = cap;
		co.props = (uintptr_t)&pa;
		co.num_props = 1;
	}
	err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	if (!err)
		*exec = co.exec;
	return err;
}

static inline int dyn_request(int fd, __u32 exec, __u32 *req)
{
	struct npr_req_create rc;
	int err;

	npr_prep_req_create(&rc, exec);
	err = npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc);
	*req = rc.req;
	return err;
}

/* SET_TENSOR of an f32 input of shape @dims (rank @rank). */
static inline int dyn_set(int fd, __u32 req, __u32 index, int rank,
			  const __s64 *dims, const void *data, size_t bytes)
{
	struct npr_tensor_arg t;
	int i;

	npr_prep_tensor(&t, req, index, 0, (void *)data, bytes);
	t.elem_type = NPR_ELEM_F32;
	t.rank = rank;
	for (i = 0; i < rank; i++)
		t.dims[i] = dims[i];
	return npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &t);
}

static inline int dyn_infer(int fd, __u32 req)
{
	struct npr_infer in;

	npr_prep_infer(&in, req);
	return npr_ioctl(fd, NPR_IOCTL_INFER, &in);
}

/* Output @index into a malloc'd buffer, its shape into @t. */
static inline void *dyn_get(int fd, __u32 req, __u32 index,
			    struct npr_tensor_arg *t)
{
	void *buf;

	npr_prep_tensor(t, req, index, 1, NULL, 0);
	if (npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, t) != -EMSGSIZE &&
	    t->bytes)
		return NULL;
	buf = malloc(t->bytes ? t->bytes : 1);
	if (!buf)
		return NULL;
	t->data = (uintptr_t)buf;
	if (npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, t)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* An integer property of @h (an exec), or -1. */
static inline int64_t dyn_param(int fd, __u32 h, __u32 id)
{
	struct npr_param pa;

	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.handle = h;
	pa.param = id;
	if (npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &pa))
		return -1;
	return (int64_t)pa.value;
}

#endif /* DYNSHAPE_UTIL_H */
