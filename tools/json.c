// SPDX-License-Identifier: MIT
/*
 * The tools' streaming JSON writer (json.h).  Every value goes through
 * value_begin(), which writes the separator its container needs and
 * checks that a key came first inside an object, and value_end(), which
 * ends a top-level value with a newline.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

struct level {
	bool object;		/* an object, else an array */
	bool have_key;		/* object: a key waits for its value */
	size_t n;		/* members or elements so far */
};

struct npr_json {
	FILE *f;
	unsigned int flags;
	int err;		/* the first error, sticky */
	struct level *stack;
	size_t depth;
	size_t cap;
};

/**
 * npr_json_new() - start a writer on a stream
 * @f: where the JSON goes; the caller keeps owning it (closes it)
 * @flags: 0 for compact output, NPR_JSON_PRETTY for indented output
 *
 * Return: the writer, to be released with npr_json_free(); NULL when @f is
 * NULL, @flags has an unknown bit or memory runs out.
 */
struct npr_json *npr_json_new(FILE *f, unsigned int flags)
{
	struct npr_json *j;

	if (!f || (flags & ~NPR_JSON_PRETTY))
		return NULL;
	j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->f = f;
	j->flags = flags;
	return j;
}

static void fail(struct npr_json *j, int err)
{
	if (!j->err)
		j->err = err;
}

static void put(struct npr_json *j, const char *s, size_t n)
{
	if (j->err || !n)
		return;
	errno = 0;
	if (fwrite(s, 1, n, j->f) != n)
		fail(j, errno ? -errno : -EIO);
}

static void puts_(struct npr_json *j, const char *s)
{
	put(j, s, strlen(s));
}

static void newline_indent(struct npr_json *j, size_t depth)
{
	static const char spaces[] = "                ";
	size_t n = depth * 2;

	if (!(j->flags & NPR_JSON_PRETTY))
		return;
	put(j, "\n", 1);
	while (n) {
		size_t k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;

		put(j, spaces, k);
		n -= k;
	}
}

static struct level *top(struct npr_json *j)
{
	return j->depth ? &j->stack[j->depth - 1] : NULL;
}

/* Before a value: its separator; false when nothing may be written. */
static bool value_begin(struct npr_json *j)
{
	struct level *l;

	if (!j || j->err)
		return false;
	l = top(j);
	if (!l)
		return true;
	if (l->object) {
		if (!l->have_key) {
			fail(j, -EINVAL);
			return false;
		}
		l->have_key = false;
		return true;
	}
	if (l->n++)
		put(j, ",", 1);
	newline_indent(j, j->depth);
	return !j->err;
}

/* After a value: a top-level value ends its line. */
static void value_end(struct npr_json *j)
{
	if (!j->depth)
		put(j, "\n", 1);
}

static void push(struct npr_json *j, bool object)
{
	if (!value_begin(j))
		return;
	if (j->depth == j->cap) {
		size_t cap = j->cap ? j->cap * 2 : 8;
		struct level *s = realloc(j->stack, cap * sizeof(*s));

		if (!s) {
			fail(j, -ENOMEM);
			return;
		}
		j->stack = s;
		j->cap = cap;
	}
	j->stack[j->depth++] = (struct level){ .object = object };
	put(j, object ? "{" : "[", 1);
}

static void pop(struct npr_json *j, bool object)
{
	struct level *l;

	if (!j || j->err)
		return;
	l = top(j);
	if (!l || l->object != object || l->have_key) {
		fail(j, -EINVAL);
		return;
	}
	j->depth--;
	if (l->n)
		newline_indent(j, j->depth);
	put(j, object ? "}" : "]", 1);
	value_end(j);
}

/**
 * npr_json_begin_object() - open an object ("{")
 * @j: the writer
 */
void npr_json_begin_object(struct npr_json *j)
{
	push(j, true);
}

/**
 * npr_json_end_object() - close the innermost object ("}")
 * @j: the writer
 *
 * -EINVAL sticks when the innermost open value is not an object or a key
 * waits for its value.
 */
void npr_json_end_object(struct npr_json *j)
{
	pop(j, true);
}

/**
 * npr_json_begin_array() - open an array ("[")
 * @j: the writer
 */
void npr_json_begin_array(struct npr_json *j)
{
	push(j, false);
}

/**
 * npr_json_end_array() - close the innermost array ("]")
 * @j: the writer
 *
 * -EINVAL sticks when the innermost open value is not an array.
 */
void npr_json_end_array(struct npr_json *j)
{
	pop(j, false);
}

/*
 * The length of the valid UTF-8 sequence at @s (at most @n bytes long), or
 * 0 when it is not one: no overlong forms, no surrogates, nothing above
 * U+10FFFF.
 */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned int cp, min;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] < 0xc2)
		return 0;
	if (s[0] < 0xe0) {
		len = 2;
		cp = s[0] & 0x1f;
		min = 0x80;
	} else if (s[0] < 0xf0) {
		len = 3;
		cp = s[0] & 0x0f;
		min = 0x800;
	} else if (s[0] < 0xf5) {
		len = 4;
		cp = s[0] & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

static void put_string(struct npr_json *j, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0;

	put(j, "\"", 1);
	while (i < n && !j->err) {
		char esc[8];
		size_t len = utf8_seq(s + i, n - i);

		if (len > 1 || (len == 1 && s[i] >= 0x20 && s[i] != '"' &&
				 s[i] != '\\')) {
			i += len;
			run += len;
			continue;
		}
		put(j, (const char *)s + i - run, run);
		run = 0;
		switch (len ? s[i] : 0x100) {
		case '"':  puts_(j, "\\\""); break;
		case '\\': puts_(j, "\\\\"); break;
		case '\b': puts_(j, "\\b"); break;
		case '\f': puts_(j, "\\f"); break;
		case '\n': puts_(j, "\\n"); break;
		case '\r': puts_(j, "\\r"); break;
		case '\t': puts_(j, "\\t"); break;
		case 0x100: puts_(j, "\\ufffd"); break;
		default:
			snprintf(esc, sizeof(esc), "\\u%04x", s[i]);
			puts_(j, esc);
		}
		i++;
	}
	put(j, (const char *)s + i - run, run);
	put(j, "\"", 1);
}

/**
 * npr_json_key() - the name of the next member of the innermost object
 * @j: the writer
 * @key: the name, UTF-8 (escaped and repaired as a string value is)
 *
 * -EINVAL sticks outside an object, after a key without its value, or for
 * a NULL @key.
 */
void npr_json_key(struct npr_json *j, const char *key)
{
	struct level *l;

	if (!j || j->err)
		return;
	l = top(j);
	if (!l || !l->object || l->have_key || !key) {
		fail(j, -EINVAL);
		return;
	}
	if (l->n++)
		put(j, ",", 1);
	newline_indent(j, j->depth);
	put_string(j, key, strlen(key));
	puts_(j, j->flags & NPR_JSON_PRETTY ? ": " : ":");
	l->have_key = true;
}

/**
 * npr_json_string_len() - a string value of @n bytes
 * @j: the writer
 * @s: the bytes, UTF-8; may hold NUL bytes (written as \u0000)
 * @n: how many
 */
void npr_json_string_len(struct npr_json *j, const char *s, size_t n)
{
	if (!s && n) {
		if (j)
			fail(j, -EINVAL);
		return;
	}
	if (!value_begin(j))
		return;
	put_string(j, s ? s : "", n);
	value_end(j);
}

/**
 * npr_json_string() - a string value, or null for a NULL @s
 * @j: the writer
 * @s: a NUL-terminated UTF-8 string, or NULL
 */
void npr_json_string(struct npr_json *j, const char *s)
{
	if (!s)
		npr_json_null(j);
	else
		npr_json_string_len(j, s, strlen(s));
}

/**
 * npr_json_int() - a signed integer value
 * @j: the writer
 * @v: the value
 */
void npr_json_int(struct npr_json *j, long long v)
{
	char buf[32];

	if (!value_begin(j))
		return;
	snprintf(buf, sizeof(buf), "%lld", v);
	puts_(j, buf);
	value_end(j);
}

/**
 * npr_json_uint() - an unsigned integer value
 * @j: the writer
 * @v: the value
 */
void npr_json_uint(struct npr_json *j, unsigned long long v)
{
	char buf[32];

	if (!value_begin(j))
		return;
	snprintf(buf, sizeof(buf), "%llu", v);
	puts_(j, buf);
	value_end(j);
}

/**
 * npr_json_double() - a number value; null when @v is NaN or infinite
 * @j: the writer
 * @v: the value, written with the fewest digits (15 or 17) that read back
 *     as the same double
 *
 * Numbers are formatted with printf, so the program must keep LC_NUMERIC
 * in the "C" locale (the tools never call setlocale()).
 */
void npr_json_double(struct npr_json *j, double v)
{
	char buf[40];

	if (!isfinite(v)) {
		npr_json_null(j);
		return;
	}
	if (!value_begin(j))
		return;
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	puts_(j, buf);
	value_end(j);
}

/**
 * npr_json_bool() - true or false
 * @j: the writer
 * @v: the value
 */
void npr_json_bool(struct npr_json *j, bool v)
{
	if (!value_begin(j))
		return;
	puts_(j, v ? "true" : "false");
	value_end(j);
}

/**
 * npr_json_null() - null
 * @j: the writer
 */
void npr_json_null(struct npr_json *j)
{
	if (!value_begin(j))
		return;
	puts_(j, "null");
	value_end(j);
}

/**
 * npr_json_kv_string() - a member with a string value (null for NULL @s)
 * @j: the writer, inside an object
 * @key: the member's name
 * @s: the value
 */
void npr_json_kv_string(struct npr_json *j, const char *key, const char *s)
{
	npr_json_key(j, key);
	npr_json_string(j, s);
}

/**
 * npr_json_kv_int() - a member with a signed integer value
 * @j: the writer, inside an object
 * @key: the member's name
 * @v: the value
 */
void npr_json_kv_int(struct npr_json *j, const char *key, long long v)
{
	npr_json_key(j, key);
	npr_json_int(j, v);
}

/**
 * npr_json_kv_uint() - a member with an unsigned integer value
 * @j: the writer, inside an object
 * @key: the member's name
 * @v: the value
 */
void npr_json_kv_uint(struct npr_json *j, const char *key,
		      unsigned long long v)
{
	npr_json_key(j, key);
	npr_json_uint(j, v);
}

/**
 * npr_json_kv_double() - a member with a number value (null if not finite)
 * @j: the writer, inside an object
 * @key: the member's name
 * @v: the value
 */
void npr_json_kv_double(struct npr_json *j, const char *key, double v)
{
	npr_json_key(j, key);
	npr_json_double(j, v);
}

/**
 * npr_json_kv_bool() - a member with a boolean value
 * @j: the writer, inside an object
 * @key: the member's name
 * @v: the value
 */
void npr_json_kv_bool(struct npr_json *j, const char *key, bool v)
{
	npr_json_key(j, key);
	npr_json_bool(j, v);
}

/**
 * npr_json_error() - the writer's first error
 * @j: the writer
 *
 * Return: 0, or the sticky error: -EINVAL (a call out of order, or @j
 * NULL), -ENOMEM, or the write error (-EIO when the stream gave no errno).
 * Data still in the stream's buffer is not checked: see npr_json_flush().
 */
int npr_json_error(const struct npr_json *j)
{
	return j ? j->err : -EINVAL;
}

/**
 * npr_json_flush() - push the stream's buffer out and check for errors
 * @j: the writer
 *
 * Return: 0, or the writer's first error, including one from fflush() or
 * the stream's error flag (a full disk, a closed pipe).
 */
int npr_json_flush(struct npr_json *j)
{
	if (!j)
		return -EINVAL;
	if (j->err)
		return j->err;
	errno = 0;
	if (fflush(j->f) || ferror(j->f))
		fail(j, errno ? -errno : -EIO);
	return j->err;
}

/**
 * npr_json_free() - flush, check and release a writer
 * @j: the writer, or NULL
 *
 * The stream stays open (the caller closes it).
 *
 * Return: 0 when everything written reached the stream and every object
 * and array was closed; else the first error (-EINVAL for a value left
 * open).
 */
int npr_json_free(struct npr_json *j)
{
	int err;

	if (!j)
		return 0;
	err = npr_json_flush(j);
	if (!err && j->depth)
		err = -EINVAL;
	free(j->stack);
	free(j);
	return err;
}
