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

/**
 * npr_shape_static() - whether a shape is fully known
 * @s: the shape
 *
 * Return: true if the rank and every dimension are known (none -1).
 */
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

/**
 * npr_node_dynamic() - whether a node has an output of unknown shape
 * @g: the node's graph
 * @n: the node
 *
 * Return: true if some output of @n has a shape known only at inference
 * time (not npr_shape_static()).
 */
bool npr_node_dynamic(const struct npr_graph *g, const struct npr_node *n)
{
	int i;

	for (i = 0; i < n->nout; i++)
		if (!npr_shape_static(&g->vals[n->out[i]].shape))
			return true;
	return false;
}

/**
 * npr_graph_dynamic() - the first node with an output of unknown shape
 * @g: the graph
 *
 * Return: the index of the first live node for which npr_node_dynamic()
 * is true, or -1 if every shape in @g is static.
 */
int npr_graph_dynamic(const struct npr_graph *g)
{
	int i;

	for (i = 0; i < g->nnodes; i++)
		if (!g->nodes[i].dead && npr_node_dynamic(g, &g->nodes[i]))
			return i;
	return -1;
}

/**
 * npr_shape_numel() - the number of elements of a shape
 * @s: the shape
 *
 * Return: the product of the dimensions (1 for a scalar); -1 if @s is not
 * static or the product overflows int64_t.
 */
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

/**
 * npr_shape_eq() - whether two shapes are the same
 * @a: a shape
 * @b: another
 *
 * Return: true if the ranks and every dimension are equal (a dynamic
 * dimension equals only a dynamic one).
 */
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

/**
 * npr_shape_str() - a shape as text, for messages
 * @s: the shape
 * @buf: out: "[1,3,224,224]", "?" for a dynamic dimension, "[...]" for an
 *       unknown rank; truncated to @len
 * @len: the size of @buf; nothing is written if 0
 *
 * Return: @buf.
 */
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

/**
 * npr_shape_broadcast() - the numpy broadcast of two shapes
 * @a: a shape
 * @b: another
 * @out: out: the broadcast shape; written only on success; may be @a or @b
 *
 * A dynamic dimension against a known one other than 1 takes the known
 * one.
 *
 * Return: 0; -EINVAL (no npr_err() message) if a rank is unknown or the
 * shapes are incompatible.
 */
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
