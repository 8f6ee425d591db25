// SPDX-License-Identifier: MIT
/*
 * The tools' JSON writer (tools/json.c): exact output for nesting, both
 * layouts, escapes, repaired UTF-8, numbers and JSON Lines; the sticky
 * errors for calls out of order and for a stream that cannot be written
 * (/dev/full); no fixed limit on depth or string length; and python3's
 * json module reading back a document full of awkward strings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "../tools/json.h"

/* A writer on a memory stream; out() closes it and gives the text. */
struct mem {
	FILE *f;
	char *buf;
	size_t len;
	struct npr_json *j;
};

static void mem_open(struct mem *m, unsigned int flags)
{
	memset(m, 0, sizeof(*m));
	m->f = open_memstream(&m->buf, &m->len);
	m->j = m->f ? npr_json_new(m->f, flags) : NULL;
}

static int mem_close(struct mem *m)
{
	int err = npr_json_free(m->j);

	fclose(m->f);
	return err;
}

/* One string value written alone, without its trailing newline. */
static char *one_string(const char *s, size_t n)
{
	struct mem m;

	mem_open(&m, 0);
	npr_json_string_len(m.j, s, n);
	if (mem_close(&m)) {
		free(m.buf);
		return NULL;
	}
	if (m.len && m.buf[m.len - 1] == '\n')
		m.buf[m.len - 1] = 0;
	return m.buf;
}

static char *one_double(double v)
{
	struct mem m;

	mem_open(&m, 0);
	npr_json_double(m.j, v);
	mem_close(&m);
	if (m.len && m.buf[m.len - 1] == '\n')
		m.buf[m.len - 1] = 0;
	return m.buf;
}

TEST(compact_nesting_is_exact)
{
	struct mem m;

	mem_open(&m, 0);
	ASSERT_NONNULL(m.j);
	npr_json_begin_object(m.j);
	npr_json_kv_string(m.j, "name", "eye");
	npr_json_key(m.j, "dims");
	npr_json_begin_array(m.j);
	npr_json_int(m.j, 1);
	npr_json_int(m.j, -3);
	npr_json_begin_object(m.j);
	npr_json_end_object(m.j);
	npr_json_begin_array(m.j);
	npr_json_end_array(m.j);
	npr_json_end_array(m.j);
	npr_json_kv_bool(m.j, "ok", true);
	npr_json_kv_bool(m.j, "bad", false);
	npr_json_key(m.j, "none");
	npr_json_null(m.j);
	npr_json_kv_string(m.j, "nullstr", NULL);
	npr_json_kv_uint(m.j, "big", ULLONG_MAX);
	npr_json_kv_int(m.j, "min", LLONG_MIN);
	npr_json_end_object(m.j);
	ASSERT_EQ(mem_close(&m), 0);
	EXPECT_STREQ(m.buf, "{\"name\":\"eye\",\"dims\":[1,-3,{},[]],"
		     "\"ok\":true,\"bad\":false,\"none\":null,"
		     "\"nullstr\":null,\"big\":18446744073709551615,"
		     "\"min\":-9223372036854775808}\n");
	free(m.buf);
}

TEST(pretty_layout_indents_by_two)
{
	struct mem m;

	mem_open(&m, NPR_JSON_PRETTY);
	npr_json_begin_object(m.j);
	npr_json_key(m.j, "a");
	npr_json_begin_array(m.j);
	npr_json_int(m.j, 1);
	npr_json_int(m.j, 2);
	npr_json_end_array(m.j);
	npr_json_key(m.j, "e");
	npr_json_begin_object(m.j);
	npr_json_end_object(m.j);
	npr_json_end_object(m.j);
	ASSERT_EQ(mem_close(&m), 0);
	EXPECT_STREQ(m.buf, "{\n  \"a\": [\n    1,\n    2\n  ],\n"
		     "  \"e\": {}\n}\n");
	free(m.buf);
}

TEST(top_level_values_are_json_lines)
{
	struct mem m;

	mem_open(&m, 0);
	npr_json_begin_object(m.j);
	npr_json_kv_int(m.j, "i", 0);
	npr_json_end_object(m.j);
	npr_json_begin_object(m.j);
	npr_json_kv_int(m.j, "i", 1);
	npr_json_end_object(m.j);
	npr_json_int(m.j, 7);
	ASSERT_EQ(mem_close(&m), 0);
	EXPECT_STREQ(m.buf, "{\"i\":0}\n{\"i\":1}\n7\n");
	free(m.buf);
}

TEST(strings_escape_quotes_backslashes_and_controls)
{
	static const char in[] = "a\"b\\c\b\f\n\r\t\x01\x1f\x7f/";
	char *s = one_string(in, sizeof(in) - 1);

	ASSERT_NONNULL(s);
	EXPECT_STREQ(s, "\"a\\\"b\\\\c\\b\\f\\n\\r\\t\\u0001\\u001f\x7f/\"");
	free(s);
	s = one_string("x\0y", 3);
	ASSERT_NONNULL(s);
	EXPECT_STREQ(s, "\"x\\u0000y\"");
	free(s);
	s = one_string(NULL, 0);
	ASSERT_NONNULL(s);
	EXPECT_STREQ(s, "\"\"");
	free(s);
}

TEST(valid_utf8_passes_through)
{
	/* é, €, U+10FFFF, U+1F600 */
	static const char in[] = "\xc3\xa9\xe2\x82\xac\xf4\x8f\xbf\xbf"
				 "\xf0\x9f\x98\x80";
	char *s = one_string(in, sizeof(in) - 1);
	char want[64];

	ASSERT_NONNULL(s);
	snprintf(want, sizeof(want), "\"%s\"", in);
	EXPECT_STREQ(s, want);
	free(s);
}

TEST(invalid_utf8_becomes_replacement_characters)
{
	static const struct {
		const char *in;
		size_t n;
		const char *want;
	} c[] = {
		/* a lone continuation byte */
		{ "a\x80z", 3, "\"a\\ufffdz\"" },
		/* overlong '/' (C0 AF): two bytes, two replacements */
		{ "\xc0\xaf", 2, "\"\\ufffd\\ufffd\"" },
		/* a surrogate, U+D800 (ED A0 80) */
		{ "\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"" },
		/* above U+10FFFF (F4 90 80 80) */
		{ "\xf4\x90\x80\x80", 4,
		  "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },
		/* a sequence cut short by the end, then by an ASCII byte */
		{ "\xe2\x82", 2, "\"\\ufffd\\ufffd\"" },
		{ "\xe2q", 2, "\"\\ufffdq\"" },
		/* bytes never used in UTF-8 */
		{ "\xff\xfe", 2, "\"\\ufffd\\ufffd\"" },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *s = one_string(c[i].in, c[i].n);

		ASSERT_NONNULL(s);
		EXPECT_STREQ(s, c[i].want);
		free(s);
	}
}

TEST(doubles_round_trip_and_non_finite_are_null)
{
	static const double v[] = {
		0.1, 1.0 / 3, 1e300, -2.5e-300, DBL_MAX, DBL_MIN, 123456789.0,
		5e-324,
	};
	size_t i;
	char *s;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		s = one_double(v[i]);
		ASSERT_NONNULL(s);
		EXPECT_EQ(strtod(s, NULL), v[i]);
		EXPECT_EQ(strspn(s, "0123456789-+.e"), strlen(s));
		free(s);
	}
	s = one_double(0.1);
	EXPECT_STREQ(s, "0.1");
	free(s);
	s = one_double(3.0);
	EXPECT_STREQ(s, "3");
	free(s);
	s = one_double(NAN);
	EXPECT_STREQ(s, "null");
	free(s);
	s = one_double(INFINITY);
	EXPECT_STREQ(s, "null");
	free(s);
	s = one_double(-INFINITY);
	EXPECT_STREQ(s, "null");
	free(s);
}

TEST(calls_out_of_order_stick_as_einval)
{
	struct mem m;

	/* a value in an object without its key */
	mem_open(&m, 0);
	npr_json_begin_object(m.j);
	npr_json_int(m.j, 1);
	EXPECT_EQ(npr_json_error(m.j), -EINVAL);
	npr_json_end_object(m.j);
	EXPECT_EQ(mem_close(&m), -EINVAL);
	free(m.buf);

	/* a key in an array; the wrong closer; a key left without value */
	mem_open(&m, 0);
	npr_json_begin_array(m.j);
	npr_json_key(m.j, "k");
	EXPECT_EQ(mem_close(&m), -EINVAL);
	free(m.buf);
	mem_open(&m, 0);
	npr_json_begin_array(m.j);
	npr_json_end_object(m.j);
	EXPECT_EQ(mem_close(&m), -EINVAL);
	free(m.buf);
	mem_open(&m, 0);
	npr_json_begin_object(m.j);
	npr_json_key(m.j, "k");
	npr_json_end_object(m.j);
	EXPECT_EQ(mem_close(&m), -EINVAL);
	free(m.buf);

	/* closing what was never opened; leaving an object open */
	mem_open(&m, 0);
	npr_json_end_array(m.j);
	EXPECT_EQ(mem_close(&m), -EINVAL);
	free(m.buf);
	mem_open(&m, 0);
	npr_json_begin_object(m.j);
	EXPECT_EQ(mem_close(&m), -EINVAL);
	free(m.buf);

	EXPECT_NULL(npr_json_new(NULL, 0));
	EXPECT_NULL(npr_json_new(stdout, 0x100));
	EXPECT_EQ(npr_json_error(NULL), -EINVAL);
	EXPECT_EQ(npr_json_free(NULL), 0);
}

TEST(a_full_device_reports_enospc)
{
	FILE *f = fopen("/dev/full", "w");
	struct npr_json *j;
	int i;

	if (!f)
		SKIP(return, "no /dev/full: %s", strerror(errno));
	j = npr_json_new(f, 0);
	ASSERT_NONNULL(j);
	npr_json_begin_array(j);
	for (i = 0; i < 10; i++)
		npr_json_string(j, "more than nothing");
	npr_json_end_array(j);
	EXPECT_EQ(npr_json_flush(j), -ENOSPC);
	EXPECT_EQ(npr_json_free(j), -ENOSPC);
	fclose(f);
}

TEST(depth_and_length_have_no_fixed_limit)
{
	enum { DEPTH = 5000, LEN = 200000 };
	struct mem m;
	char *big = malloc(LEN + 1);
	size_t i;

	ASSERT_NONNULL(big);
	memset(big, 'x', LEN);
	big[LEN] = 0;
	mem_open(&m, 0);
	for (i = 0; i < DEPTH; i++)
		npr_json_begin_array(m.j);
	npr_json_string(m.j, big);
	for (i = 0; i < DEPTH; i++)
		npr_json_end_array(m.j);
	ASSERT_EQ(mem_close(&m), 0);
	ASSERT_EQ(m.len, 2 * DEPTH + LEN + 2 + 1);
	EXPECT_EQ(m.buf[DEPTH - 1], '[');
	EXPECT_EQ(m.buf[DEPTH], '"');
	EXPECT_EQ(m.buf[DEPTH + 1 + LEN], '"');
	EXPECT_EQ(m.buf[m.len - 2], ']');
	free(m.buf);
	free(big);
}

TEST(python_reads_what_it_writes)
{
	static const char awkward[] = "q\"b\\\n\x01\xff\xc3\xa9\xed\xa0\x80";
	char path[] = "/tmp/npr-json-XXXXXX";
	char cmd[512];
	struct npr_json *j;
	FILE *f;
	int fd, rc;

	if (system("/usr/bin/python3 -c '' 2>/dev/null") != 0)
		SKIP(return, "no /usr/bin/python3 to read the JSON back");
	fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	f = fdopen(fd, "w");
	ASSERT_NONNULL(f);
	j = npr_json_new(f, NPR_JSON_PRETTY);
	npr_json_begin_object(j);
	npr_json_kv_string(j, awkward, awkward);
	npr_json_kv_double(j, "nan", NAN);
	npr_json_kv_double(j, "third", 1.0 / 3);
	npr_json_key(j, "list");
	npr_json_begin_array(j);
	npr_json_bool(j, true);
	npr_json_null(j);
	npr_json_end_array(j);
	npr_json_end_object(j);
	ASSERT_EQ(npr_json_free(j), 0);
	ASSERT_EQ(fclose(f), 0);
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import json,sys\n"
		 "d = json.load(open(sys.argv[1]))\n"
		 "want = \"q\\\"b\\\\\\n\\x01\\ufffd\\u00e9\\ufffd\\ufffd\\ufffd\"\n"
		 "assert d[want] == want, d\n"
		 "assert d[\"nan\"] is None and d[\"third\"] == 1/3\n"
		 "assert d[\"list\"] == [True, None]' %s", path);
	rc = system(cmd);
	unlink(path);
	EXPECT_EQ(rc, 0);
}

TEST_HARNESS_MAIN
