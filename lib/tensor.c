// SPDX-License-Identifier: MIT
/*
 * What a backend calls back into lib/ while it runs a request: a dynamic
 * output sized for this inference.  Kept apart from lib/request.c, which
 * calls the backends, so that the backends' calls into lib/ end in files
 * that call no backend.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "graph/graph.h"
#include "object.h"
#include "sys.h"
#include "tensor.h"

/**
 * npr_request_grow() - may a buffer sized at run time grow?
 * @rq: the request, being run by the backend.
 * @from: the buffer's bytes now (0 for a new one).
 * @to: the bytes it needs for this inference.
 * @what: the tensor, for the message ("output 0 of node 'x' (Tile)").
 *
 * What COMPILE reported (the compiled model's own bytes and a request's)
 * plus every buffer a request has grown from the input values stays
 * within the compiled model's NPR_MAX_MODEL_MEMORY_MB (0: no limit), so a
 * Range bound or a Tile count read from an input cannot ask for more
 * memory than a model whose shapes say so up front.  On success the
 * growth is counted in @rq->grown.
 *
 * Return: 0, or -EFBIG with a message naming @what.
 */
int npr_request_grow(struct npr_request *rq, size_t from, size_t to,
		     const char *what)
{
	const struct npr_exec *ex = rq->ex;
	uint64_t limit = (uint64_t)ex->props.max_model_mb << 20;
	uint64_t have = ex->exec_bytes + ex->req_bytes + rq->grown;

	if (to <= from)
		return 0;
	if (limit && (to - from > limit || have + (to - from) > limit))
		return npr_err(-EFBIG, "%s needs %zu bytes at run time; with the %llu the compiled model and its request hold, more than NPR_MAX_MODEL_MEMORY_MB (%u MiB)",
			       what, to, (unsigned long long)have,
			       ex->props.max_model_mb);
	rq->grown += to - from;
	return 0;
}

/**
 * npr_request_out_shape() - size a dynamic output for this inference
 * @rq: the request, being run by the backend.
 * @i: output index.
 * @s: its static shape.
 *
 * Dynamic outputs are never bound to caller memory, so the buffer is the
 * request's own; it grows and is kept.
 *
 * Return: 0, -EFBIG past the memory budget (npr_request_grow()) or
 * -ENOMEM.
 */
int npr_request_out_shape(struct npr_request *rq, int i,
			  const struct npr_shape *s)
{
	struct npr_tensor *t = &rq->out[i];
	size_t bytes = npr_tensor_bytes(t->type, npr_shape_numel(s));

	if (bytes > rq->cap_out[i]) {
		char what[96];
		void *p;
		int err;

		snprintf(what, sizeof(what), "output %d (%s)", i,
			 rq->ex->out[i].name ? rq->ex->out[i].name : "?");
		err = npr_request_grow(rq, rq->cap_out[i], bytes, what);
		if (err)
			return err;
		p = npr_alloc(bytes);
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
