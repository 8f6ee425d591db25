/* SPDX-License-Identifier: MIT */
/*
 * What a backend calls back into lib/ while it runs a request
 * (lib/tensor.c), and the growing variables' stores it shares with
 * lib/request.c.
 */
#ifndef NPR_TENSOR_H
#define NPR_TENSOR_H

#include <stddef.h>
#include <stdint.h>

struct npr_request;
struct npr_shape;

int npr_request_out_shape(struct npr_request *rq, int i,
			  const struct npr_shape *s);

int npr_request_grow(struct npr_request *rq, size_t from, size_t to,
		     const char *what);

int npr_request_var_room(struct npr_request *rq, int in, int64_t add);
int npr_var_reserve(struct npr_request *rq, int k, int64_t need);
void npr_var_publish(struct npr_request *rq, int k);

#endif /* NPR_TENSOR_H */
