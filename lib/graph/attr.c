// SPDX-License-Identifier: MIT
/*
 * Node attributes: the strings of the source file, parsed on demand with
 * strict checks.  Lists are comma-separated and may contain spaces.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "graph.h"

/**
 * npr_attr() - the raw string of a node attribute
 * @n: the node
 * @key: the attribute's name
 *
 * Return: the value as the source file gave it, owned by the node's graph;
 * NULL if @n has no attribute @key.
 */
const char *npr_attr(const struct npr_node *n, const char *key)
{
	int i;

	for (i = 0; i < n->nattr; i++)
		if (!strcmp(n->attr[i].key, key))
			return n->attr[i].val;
	return NULL;
}

static const char *skip_ws(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

static int parse_int(const char *s, const char **end, int64_t *out)
{
	char *e;
	long long v;

	s = skip_ws(s);
	errno = 0;
	v = strtoll(s, &e, 10);
	if (e == s || errno)
		return -EINVAL;
	/* accept "3.0"-style integers some converters write */
	if (*e == '.') {
		char *e2;
		double d = strtod(s, &e2);

		if (d != (double)(long long)d)
			return -EINVAL;
		v = (long long)d;
		e = e2;
	}
	*out = v;
	*end = skip_ws(e);
	return 0;
}

static int parse_float(const char *s, const char **end, double *out)
{
	char *e;
	double v;

	s = skip_ws(s);
	v = strtod(s, &e);
	if (e == s)
		return -EINVAL;
	*out = v;
	*end = skip_ws(e);
	return 0;
}

/**
 * npr_attr_int() - an integer attribute
 * @n: the node
 * @key: the attribute's name
 * @def: the value when the attribute is absent
 * @out: out: the value; "3.0" style integers are accepted
 *
 * Return: 0; -EINVAL with npr_node_err() set if the value is not an
 * integer (*@out is then undefined).
 */
int npr_attr_int(const struct npr_node *n, const char *key, int64_t def,
		 int64_t *out)
{
	const char *s = npr_attr(n, key), *end;

	if (!s) {
		*out = def;
		return 0;
	}
	if (parse_int(s, &end, out) || *end)
		return npr_node_err(n, -EINVAL,
				    "attribute %s=\"%s\" is not an integer",
				    key, s);
	return 0;
}

/**
 * npr_attr_float() - a floating-point attribute
 * @n: the node
 * @key: the attribute's name
 * @def: the value when the attribute is absent
 * @out: out: the value, as strtod() reads it
 *
 * Return: 0; -EINVAL with npr_node_err() set if the value is not a
 * number (*@out is then undefined).
 */
int npr_attr_float(const struct npr_node *n, const char *key, double def,
		   double *out)
{
	const char *s = npr_attr(n, key), *end;

	if (!s) {
		*out = def;
		return 0;
	}
	if (parse_float(s, &end, out) || *end)
		return npr_node_err(n, -EINVAL,
				    "attribute %s=\"%s\" is not a number",
				    key, s);
	return 0;
}

/**
 * npr_attr_ints() - a list of integers, comma-separated
 * @n: the node
 * @key: the attribute's name
 * @out: out: the values, room for @max
 * @max: the most values accepted
 * @count: out: the number of values; "" gives 0, so does an absent
 *         optional attribute; 0 on error
 * @optional: whether the attribute may be absent
 *
 * Return: 0; -EINVAL with npr_node_err() set if a required attribute is
 * missing, an entry is not an integer, or there are more than @max.
 */
int npr_attr_ints(const struct npr_node *n, const char *key, int64_t *out,
		  int max, int *count, bool optional)
{
	const char *s = npr_attr(n, key), *p;
	int cnt = 0;

	*count = 0;
	if (!s) {
		if (optional)
			return 0;
		return npr_node_err(n, -EINVAL, "attribute %s is missing",
				    key);
	}
	p = skip_ws(s);
	while (*p) {
		int64_t v;

		if (cnt == max)
			return npr_node_err(n, -EINVAL,
					    "attribute %s has more than %d values",
					    key, max);
		if (parse_int(p, &p, &v))
			return npr_node_err(n, -EINVAL,
					    "attribute %s=\"%s\" is not a list of integers",
					    key, s);
		out[cnt++] = v;
		if (*p == ',')
			p = skip_ws(p + 1);
		else if (*p)
			return npr_node_err(n, -EINVAL,
					    "attribute %s=\"%s\" is not a list of integers",
					    key, s);
	}
	*count = cnt;
	return 0;
}

/**
 * npr_attr_floats() - a list of numbers, comma-separated, as floats
 * @n: the node
 * @key: the attribute's name
 * @out: out: the values, room for @max
 * @max: the most values accepted
 * @count: out: the number of values; "" gives 0, so does an absent
 *         optional attribute; 0 on error
 * @optional: whether the attribute may be absent
 *
 * Return: 0; -EINVAL with npr_node_err() set if a required attribute is
 * missing, an entry is not a number, or there are more than @max.
 */
int npr_attr_floats(const struct npr_node *n, const char *key, float *out,
		    int max, int *count, bool optional)
{
	const char *s = npr_attr(n, key), *p;
	int cnt = 0;

	*count = 0;
	if (!s) {
		if (optional)
			return 0;
		return npr_node_err(n, -EINVAL, "attribute %s is missing",
				    key);
	}
	p = skip_ws(s);
	while (*p) {
		double v;

		if (cnt == max)
			return npr_node_err(n, -EINVAL,
					    "attribute %s has more than %d values",
					    key, max);
		if (parse_float(p, &p, &v))
			return npr_node_err(n, -EINVAL,
					    "attribute %s=\"%s\" is not a list of numbers",
					    key, s);
		out[cnt++] = (float)v;
		if (*p == ',')
			p = skip_ws(p + 1);
		else if (*p)
			return npr_node_err(n, -EINVAL,
					    "attribute %s=\"%s\" is not a list of numbers",
					    key, s);
	}
	*count = cnt;
	return 0;
}

/**
 * npr_attr_bool() - a boolean attribute
 * @n: the node
 * @key: the attribute's name
 * @def: the value when the attribute is absent
 * @out: out: the value: "true" (any case) or "1", "false" or "0"
 *
 * Return: 0; -EINVAL with npr_node_err() set for any other value.
 */
int npr_attr_bool(const struct npr_node *n, const char *key, bool def,
		  bool *out)
{
	const char *s = npr_attr(n, key);

	if (!s) {
		*out = def;
		return 0;
	}
	s = skip_ws(s);
	if (!strcasecmp(s, "true") || !strcmp(s, "1")) {
		*out = true;
		return 0;
	}
	if (!strcasecmp(s, "false") || !strcmp(s, "0")) {
		*out = false;
		return 0;
	}
	return npr_node_err(n, -EINVAL, "attribute %s=\"%s\" is not a boolean",
			    key, s);
}

/**
 * npr_attr_enum() - an attribute that is one of a list of words
 * @n: the node
 * @key: the attribute's name
 * @choices: the accepted words, NULL-terminated; matched ignoring case
 * @def: the index when the attribute is absent
 * @out: out: the index in @choices of the value
 *
 * Return: 0; -EINVAL with npr_node_err() set for a value not in @choices.
 */
int npr_attr_enum(const struct npr_node *n, const char *key,
		  const char *const *choices, int def, int *out)
{
	const char *s = npr_attr(n, key);
	int i;

	if (!s) {
		*out = def;
		return 0;
	}
	for (i = 0; choices[i]; i++)
		if (!strcasecmp(s, choices[i])) {
			*out = i;
			return 0;
		}
	return npr_node_err(n, -EINVAL, "attribute %s=\"%s\" is not supported",
			    key, s);
}
