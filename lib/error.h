/* SPDX-License-Identifier: MIT */
/*
 * The per-thread error detail (lib/error.c) beyond npr_err() and
 * npr_node_err() (graph/graph.h) and npr_last_error() (npuring.h), and
 * the log (npr_set_log() in npuring.h; levels NPR_LOG_* of the uapi).
 */
#ifndef NPR_ERROR_H
#define NPR_ERROR_H

#include <stdbool.h>

#include "uapi/npuring.h"	/* the levels, enum npr_log_level */

/* A mark taken before a call; after it, npr_err_default() gives a failure
 * that set no message since the mark one from its errno, and
 * npr_err_default_in() one naming the call too (lib/error.c). */
unsigned long npr_err_mark(void);
int npr_err_default(int err, unsigned long mark);
int npr_err_default_in(int err, unsigned long mark, const char *what);
int npr_last_errno(void);

/* One line to the caller's log callback, if any; the _at form for a
 * device or compiled model, whose LOG_LEVEL property is @floor. */
void npr_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void npr_log_at(int floor, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool npr_log_enabled(int level);

#endif /* NPR_ERROR_H */
