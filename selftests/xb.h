/* SPDX-License-Identifier: MIT */
/*
 * A growing text buffer for the test programs that write IR documents
 * in memory (ir_test.c, ops_util.h, rnn_util.h).
 */
#ifndef XB_H
#define XB_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An IR document under construction. */
struct xb {
	char *buf;
	size_t len, cap;
};

static inline void __attribute__((format(printf, 2, 3)))
xb_add(struct xb *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		if (b->cap > b->len) {
			va_start(ap, fmt);
			n = vsnprintf(b->buf + b->len, b->cap - b->len, fmt,
				      ap);
			va_end(ap);
			if (n >= 0 && (size_t)n < b->cap - b->len) {
				b->len += n;
				return;
			}
		}
		b->cap = b->cap ? 2 * b->cap : 4096;
		b->buf = realloc(b->buf, b->cap);
		if (!b->buf)
			abort();	/* test program: out of memory */
	}
}

/*
 * <dim> children for the first @len bytes of a list separated by ',' or
 * ';' ("1,4"; "" for a scalar).
 */
static inline void xb_dims_n(struct xb *b, const char *dims, size_t len)
{
	const char *p = dims, *e = dims + len;

	while (p < e) {
		size_t n = strcspn(p, ",;");

		if (p + n > e)
			n = e - p;
		xb_add(b, "<dim>%.*s</dim>", (int)n, p);
		p += n;
		if (p < e)
			p++;
	}
}

#endif /* XB_H */
