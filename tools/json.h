/* SPDX-License-Identifier: MIT */
/*
 * A streaming JSON writer for the tools' --json output, shared by every
 * tool so that all of them escape, format numbers and report errors alike.
 *
 * A writer prints to a FILE * as it is called; nothing is buffered in the
 * writer itself except the nesting of the open objects and arrays, which
 * grows as needed.  Inside an object every value is preceded by
 * npr_json_key() (or given with one of the npr_json_kv_*() shorthands).
 * The first error sticks: a write error (-EIO, or the stream's errno), an
 * allocation failure (-ENOMEM) or a call out of order (-EINVAL); later
 * calls do nothing and npr_json_error() / npr_json_flush() return it.
 *
 * Strings are written as UTF-8: quotes, backslashes and control characters
 * are escaped, and every byte that is not part of a valid UTF-8 sequence is
 * replaced by U+FFFD, so the output is always valid JSON.  Doubles that are
 * not finite (NaN, infinities) are written as null.
 *
 * Each complete top-level value ends with a newline, so a sequence of
 * values written in compact mode is JSON Lines.
 */
#ifndef NPR_TOOLS_JSON_H
#define NPR_TOOLS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* npr_json_new() flags */
#define NPR_JSON_PRETTY		0x1	/* newlines, two-space indents */

struct npr_json;

struct npr_json *npr_json_new(FILE *f, unsigned int flags);
int npr_json_free(struct npr_json *j);

void npr_json_begin_object(struct npr_json *j);
void npr_json_end_object(struct npr_json *j);
void npr_json_begin_array(struct npr_json *j);
void npr_json_end_array(struct npr_json *j);

void npr_json_key(struct npr_json *j, const char *key);
void npr_json_string(struct npr_json *j, const char *s);
void npr_json_string_len(struct npr_json *j, const char *s, size_t n);
void npr_json_int(struct npr_json *j, long long v);
void npr_json_uint(struct npr_json *j, unsigned long long v);
void npr_json_double(struct npr_json *j, double v);
void npr_json_bool(struct npr_json *j, bool v);
void npr_json_null(struct npr_json *j);

void npr_json_kv_string(struct npr_json *j, const char *key, const char *s);
void npr_json_kv_int(struct npr_json *j, const char *key, long long v);
void npr_json_kv_uint(struct npr_json *j, const char *key,
		      unsigned long long v);
void npr_json_kv_double(struct npr_json *j, const char *key, double v);
void npr_json_kv_bool(struct npr_json *j, const char *key, bool v);

int npr_json_error(const struct npr_json *j);
int npr_json_flush(struct npr_json *j);

#endif /* NPR_TOOLS_JSON_H */
