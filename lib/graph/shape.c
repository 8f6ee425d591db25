// SPDX-License-Identifier: MIT
/*
 * Shapes: static or not, element counts, equality, printing, numpy
 * broadcasting.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

bool npr_shape_static(const struct npr_shape *s)
{
	int i;

	if (s->rank < 0)
		return false;
	for (i = 0; i < s->rank; i++)
		if (s->d[i] < 0)
			return false;
	return true;
}

bool npr_node_dynamic(const struct npr_graph *g, const struct npr_node *n)
{
	int i;

	for (i = 0; i < n->nout; i++)
		if (!npr_shape_static(&g->vals[n->out[i]].shape))
			return true;
	return false;
}

int npr_graph_dynamic(const struct npr_graph *g)
{
	int i;

	for (i = 0; i < g->nnodes; i++)
		if (!g->nodes[i].dead && npr_node_dynamic(g, &g->nodes[i]))
			return i;
	return -1;
}

int64_t npr_shape_numel(const struct npr_shape *s)
{
	int64_t n = 1;
	int i;

	if (!npr_shape_static(s))
		return -1;
	for (i = 0; i < s->rank; i++) {
		if (s->d[i] && n > INT64_MAX / s->d[i])
			return -1;
		n *= s->d[i];
	}
	return n;
}

bool npr_shape_eq(const struct npr_shape *a, const struct npr_shape *b)
{
	int i;

	if (a->rank != b->rank)
		return false;
	for (i = 0; i < a->rank; i++)
		if (a->d[i] != b->d[i])
			return false;
	return true;
}

char *npr_shape_str(const struct npr_shape *s, char *buf, size_t len)
{
	size_t off = 0;
	int i;

	if (!len)
		return buf;
	buf[0] = 0;
	if (s->rank < 0) {
		snprintf(buf, len, "[...]");
		return buf;
	}
	off += snprintf(buf + off, len - off, "[");
	for (i = 0; i < s->rank && off < len; i++) {
		if (s->d[i] < 0)
			off += snprintf(buf + off, len - off, "%s?",
					i ? "," : "");
		else
			off += snprintf(buf + off, len - off, "%s%lld",
					i ? "," : "", (long long)s->d[i]);
	}
	if (off < len)
		snprintf(buf + off, len - off, "]");
	return buf;
}

int npr_shape_broadcast(const struct npr_shape *a, const struct npr_shape *b,
			struct npr_shape *out)
{
	int r = a->rank > b->rank ? a->rank : b->rank, i;
	struct npr_shape o;

	if (a->rank < 0 || b->rank < 0 || r > NPR_MAX_RANK)
		return -EINVAL;
	o.rank = r;
	for (i = 0; i < r; i++) {
		int ia = i - (r - a->rank), ib = i - (r - b->rank);
		int64_t da = ia >= 0 ? a->d[ia] : 1;
		int64_t db = ib >= 0 ? b->d[ib] : 1;

		if (da == db || db == 1)
			o.d[i] = da;
		else if (da == 1)
			o.d[i] = db;
		else if (da < 0 || db < 0)
			o.d[i] = da < 0 ? db : da;
		else
			return -EINVAL;
	}
	*out = o;
	return 0;
}
