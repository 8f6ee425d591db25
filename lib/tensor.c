// SPDX-License-Identifier: MIT
/*
 * What a backend calls back into lib/ while it runs a request: a dynamic
 * output sized for this inference.  Kept apart from lib/request.c, which
 * calls the backends, so that the backends' calls into lib/ end in files
 * that call no backend.
 */
#include <errno.h>
#include <stdlib.h>

#include "graph/graph.h"
#include "object.h"
#include "sys.h"
#include "tensor.h"

/**
 * npr_request_out_shape() - size a dynamic output for this inference
 * @rq: the request, being run by the backend.
 * @i: output index.
 * @s: its static shape.
 *
 * Dynamic outputs are never bound to caller memory, so the buffer is the
 * request's own; it grows and is kept.
 *
 * Return: 0 or -ENOMEM.
 */
int npr_request_out_shape(struct npr_request *rq, int i,
			  const struct npr_shape *s)
{
	struct npr_tensor *t = &rq->out[i];
	size_t bytes = npr_tensor_bytes(t->type, npr_shape_numel(s));

	if (bytes > rq->cap_out[i]) {
		void *p = npr_alloc(bytes);

		if (!p)
			return -ENOMEM;
		free(rq->own_out[i]);
		rq->own_out[i] = p;
		rq->cap_out[i] = bytes;
	}
	t->data = rq->own_out[i];
	t->shape = *s;
	t->nbytes = bytes;
	return 0;
}
