// SPDX-License-Identifier: MIT
/*
 * What a backend calls back into lib/ while it runs a request: a dynamic
 * output sized for this inference, room in a growing variable's store
 * (whose other commands are lib/request.c's).  Kept apart from lib/request.c, which
 * calls the backends, so that the backends' calls into lib/ end in files
 * that call no backend.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/**
 * npr_var_publish() - the hidden input of a growing variable, from its store
 * @rq: the request.
 * @k: the variable (struct npr_variable @append_axis >= 0).
 *
 * The input describes the store's length, its blocks @rq->pitch.
 */
void npr_var_publish(struct npr_request *rq, int k)
{
	const struct npr_variable *v = &rq->ex->g->vars[k];
	struct npr_var_store *vs = &rq->vs[k];
	struct npr_tensor *t = &rq->in[v->state_in];

	t->shape = v->shape;
	t->shape.d[v->append_axis] = vs->len;
	t->data = vs->buf;
	t->nbytes = vs->outer * vs->len * vs->row;
	rq->pitch[v->state_in].pitch = vs->cap * vs->row;
	rq->pitch[v->state_in].outer = vs->outer;
}

/**
 * npr_var_reserve() - room for @need positions in variable @k's store
 * @rq: the request.
 * @k: the variable (struct npr_variable @append_axis >= 0).
 * @need: positions.
 *
 * The capacity at least doubles, so appending a token at a time moves
 * the cache O(log n) times.  The hidden input is not republished.
 *
 * Return: 0, -ENOMEM, or npr_request_grow()'s -EFBIG.
 */
int npr_var_reserve(struct npr_request *rq, int k, int64_t need)
{
	struct npr_var_store *vs = &rq->vs[k];
	int64_t cap = vs->cap * 2;
	size_t o, from = vs->outer * vs->cap * vs->row, to;
	char what[300];
	void *buf;
	int err;

	if (need <= vs->cap)
		return 0;
	if (cap < need)
		cap = need;
	if (cap < 16)
		cap = 16;
	to = vs->outer * cap * vs->row;
	snprintf(what, sizeof(what), "variable %.256s",
		 rq->ex->g->vars[k].id);
	err = npr_request_grow(rq, from, to, what);
	if (err)
		return err;
	buf = npr_alloc(to ? to : 1);
	if (!buf)
		return -ENOMEM;
	for (o = 0; o < vs->outer && vs->len; o++)
		memcpy((char *)buf + o * cap * vs->row,
		       (char *)vs->buf + o * vs->cap * vs->row,
		       vs->len * vs->row);
	free(vs->buf);
	vs->buf = buf;
	vs->cap = cap;
	return 0;
}

/**
 * npr_request_var_room() - room in a growing variable's store, mid-run
 * @rq: the request, being run by the backend.
 * @in: the exec input that is the variable's hidden input.
 * @add: positions wanted past those it holds.
 *
 * For a backend that writes the new positions straight into the store
 * (they are appended for good only when the inference succeeds).  The
 * store may move: @rq->in[@in] and @rq->pitch[@in] describe it after.
 *
 * Return: 0, -ENOENT when @in is no growing variable's, -ENOMEM, or
 * npr_request_grow()'s -EFBIG.
 */
int npr_request_var_room(struct npr_request *rq, int in, int64_t add)
{
	const struct npr_graph *g = rq->ex->g;
	int k, err;

	for (k = 0; k < g->nvars; k++)
		if (g->vars[k].append_axis >= 0 && g->vars[k].state_in == in)
			break;
	if (k == g->nvars || !rq->vs || add < 0)
		return -ENOENT;
	err = npr_var_reserve(rq, k, rq->vs[k].len + add);
	if (!err)
		npr_var_publish(rq, k);
	return err;
}
