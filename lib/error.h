/* SPDX-License-Identifier: MIT */
/*
 * The per-thread error detail (lib/error.c) beyond npr_err() and
 * npr_node_err() (graph/graph.h) and npr_last_error() (npuring.h).
 */
#ifndef NPR_ERROR_H
#define NPR_ERROR_H

/* A mark taken before a call; after it, npr_err_default() gives a failure
 * that set no message since the mark one from its errno, and
 * npr_err_default_in() one naming the call too (lib/error.c). */
unsigned long npr_err_mark(void);
int npr_err_default(int err, unsigned long mark);
int npr_err_default_in(int err, unsigned long mark, const char *what);
int npr_last_errno(void);

#endif /* NPR_ERROR_H */
