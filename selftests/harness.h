/* SPDX-License-Identifier: MIT */
/*
 * A small kselftest-style test harness, header-only.
 *
 *   TEST(name) { ... }
 *   FIXTURE(name) { fields; };
 *   FIXTURE_SETUP(name) { self->field = ...; }
 *   FIXTURE_TEARDOWN(name) { ... }
 *   FIXTURE_VARIANT(name) { fields; };
 *   FIXTURE_VARIANT_ADD(name, vname) { .field = ... };
 *   TEST_F(name, test) { self->..., variant->... }
 *   TEST_HARNESS_MAIN
 *
 * A fixture without variants runs each of its tests once, named
 * "fixture.test"; with variants once per variant, "fixture.variant.test".
 * Every test runs in a forked child with a timeout; setup and teardown run
 * in that child too, teardown only when setup returned.  ASSERT_*() stops
 * the test, EXPECT_*() records a failure and goes on.  SKIP() marks the test
 * skipped and then runs its statement (usually "return").
 *
 * Output is KTAP on stdout; diagnostics are "# " lines.  The program exits
 * 0 when no test failed, 1 when one did, 4 when every test was skipped.
 *
 * Timeouts: HARNESS_TIMEOUT (seconds, define it before including this
 * header) is the program's default, 120 unless set; the environment
 * variable TEST_TIMEOUT replaces it at run time; TEST_TIMEOUT_F() and
 * TEST_F_TIMEOUT() give single tests their own limit, which TEST_TIMEOUT
 * can only raise (say, for a run under valgrind).
 *
 * Command line: -l lists the tests, -t STR runs the tests whose full name
 * contains STR, -f NAME the tests of fixture NAME; -t and -f may repeat.
 */
#ifndef NPR_SELFTEST_HARNESS_H
#define NPR_SELFTEST_HARNESS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#ifndef HARNESS_TIMEOUT
#define HARNESS_TIMEOUT		120
#endif

/*
 * Under AddressSanitizer the leak checker runs when a process exits, but a
 * test child ends with _exit(): the child checks before, and a test that
 * passed but leaked fails (ASAN_OPTIONS=detect_leaks=0 turns it off).
 */
#if defined(__SANITIZE_ADDRESS__)
#define NPR_TH_LSAN		1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define NPR_TH_LSAN		1
#endif
#endif
#ifdef NPR_TH_LSAN
int __lsan_do_recoverable_leak_check(void);
#endif

/* Exit codes of a test child and of the whole program (kselftest's). */
#define NPR_KSFT_PASS		0
#define NPR_KSFT_FAIL		1
#define NPR_KSFT_SKIP		4

#define NPR_TH_UNUSED		__attribute__((unused))
#ifndef __maybe_unused
#define __maybe_unused		__attribute__((unused))
#endif

struct npr_test;
struct npr_fixture;

typedef void (*npr_fixture_fn)(struct npr_test *_metadata, void *self,
			       const void *variant);

/**
 * struct npr_fixture_variant - one FIXTURE_VARIANT_ADD()
 * @name: variant name.
 * @data: the variant's struct.
 * @line: where it was declared, for a stable order.
 */
struct npr_fixture_variant {
	const char *name;
	const void *data;
	int line;
	struct npr_fixture_variant *next;
};

/**
 * struct npr_fixture - one FIXTURE()
 * @name: fixture name.
 * @self_size: size of the fixture's struct.
 * @setup, @teardown: FIXTURE_SETUP() and FIXTURE_TEARDOWN(), or NULL.
 * @variants: FIXTURE_VARIANT_ADD() entries, NULL if none.
 */
struct npr_fixture {
	const char *name;
	size_t self_size;
	npr_fixture_fn setup;
	npr_fixture_fn teardown;
	struct npr_fixture_variant *variants;
};

/**
 * struct npr_test_case - one TEST() or TEST_F() as declared
 * @name: test name without fixture and variant.
 * @fixture: the fixture of a TEST_F(), NULL for a TEST().
 * @fn: the test body.
 * @timeout: seconds, 0 for the program default.
 * @line: where it was declared.
 */
struct npr_test_case {
	const char *name;
	struct npr_fixture *fixture;
	void (*fn)(struct npr_test *_metadata, void *self,
		   const void *variant);
	int timeout;
	int line;
	struct npr_test_case *next;
};

/*
 * What a running test sees as _metadata.  Lives in the child; the part
 * the parent needs (the skip reason) goes through a shared page.
 */
struct npr_test {
	const char *name;
	bool failed;
	bool skipped;
	bool in_teardown;
	jmp_buf bail;
	char *skip_reason;	/* shared with the parent */
	size_t skip_reason_len;
};

static struct npr_test_case *npr_th_cases;

static inline void npr_th_register_case(struct npr_test_case *c)
{
	struct npr_test_case **p = &npr_th_cases;

	/* keep declaration order whatever order constructors run in */
	while (*p && (*p)->line < c->line)
		p = &(*p)->next;
	c->next = *p;
	*p = c;
}

static inline void npr_th_register_variant(struct npr_fixture *f,
					   struct npr_fixture_variant *v)
{
	struct npr_fixture_variant **p = &f->variants;

	while (*p && (*p)->line < v->line)
		p = &(*p)->next;
	v->next = *p;
	*p = v;
}

/* ---- declaring tests ------------------------------------------------- */

#define TEST(test_name)							\
	TEST_TIMEOUT_F(test_name, 0)

#define TEST_TIMEOUT_F(test_name, seconds)				\
	static void npr_t_##test_name(struct npr_test *_metadata);	\
	static void npr_tw_##test_name(struct npr_test *_metadata,	\
				       void *self NPR_TH_UNUSED,	\
				       const void *variant NPR_TH_UNUSED) \
	{								\
		npr_t_##test_name(_metadata);				\
	}								\
	static struct npr_test_case npr_tc_##test_name = {		\
		.name = #test_name,					\
		.fn = npr_tw_##test_name,				\
		.timeout = (seconds),					\
		.line = __LINE__,					\
	};								\
	static void __attribute__((constructor))			\
	npr_tr_##test_name(void)					\
	{								\
		npr_th_register_case(&npr_tc_##test_name);		\
	}								\
	static void npr_t_##test_name(struct npr_test *_metadata NPR_TH_UNUSED)

#define FIXTURE_DATA(fixture_name)	struct npr_fx_##fixture_name
#define FIXTURE_VARIANT(fixture_name)	struct npr_fv_##fixture_name

#define FIXTURE(fixture_name)						\
	FIXTURE_VARIANT(fixture_name);					\
	FIXTURE_DATA(fixture_name);					\
	static struct npr_fixture npr_fixture_##fixture_name = {	\
		.name = #fixture_name,					\
	};								\
	FIXTURE_DATA(fixture_name)

#define NPR_TH_FIXTURE_FN(fixture_name, kind)				\
	static void npr_##kind##_##fixture_name(			\
		struct npr_test *_metadata,				\
		FIXTURE_DATA(fixture_name) *self,			\
		const FIXTURE_VARIANT(fixture_name) *variant);		\
	static void npr_##kind##w_##fixture_name(			\
		struct npr_test *_metadata, void *self,			\
		const void *variant)					\
	{								\
		npr_##kind##_##fixture_name(_metadata, self, variant);	\
	}								\
	static void __attribute__((constructor))			\
	npr_##kind##r_##fixture_name(void)				\
	{								\
		npr_fixture_##fixture_name.kind =			\
			npr_##kind##w_##fixture_name;			\
	}								\
	static void npr_##kind##_##fixture_name(			\
		struct npr_test *_metadata NPR_TH_UNUSED,		\
		FIXTURE_DATA(fixture_name) *self NPR_TH_UNUSED,		\
		const FIXTURE_VARIANT(fixture_name) *variant NPR_TH_UNUSED)

#define FIXTURE_SETUP(fixture_name)	NPR_TH_FIXTURE_FN(fixture_name, setup)
#define FIXTURE_TEARDOWN(fixture_name)					\
	NPR_TH_FIXTURE_FN(fixture_name, teardown)

#define FIXTURE_VARIANT_ADD(fixture_name, variant_name)			\
	static const FIXTURE_VARIANT(fixture_name)			\
		npr_fvd_##fixture_name##_##variant_name;		\
	static struct npr_fixture_variant				\
	npr_fvo_##fixture_name##_##variant_name = {			\
		.name = #variant_name,					\
		.data = &npr_fvd_##fixture_name##_##variant_name,	\
		.line = __LINE__,					\
	};								\
	static void __attribute__((constructor))			\
	npr_fvr_##fixture_name##_##variant_name(void)			\
	{								\
		npr_th_register_variant(&npr_fixture_##fixture_name,	\
			&npr_fvo_##fixture_name##_##variant_name);	\
	}								\
	static const FIXTURE_VARIANT(fixture_name)			\
		npr_fvd_##fixture_name##_##variant_name =

#define TEST_F(fixture_name, test_name)					\
	TEST_F_TIMEOUT(fixture_name, test_name, 0)

#define TEST_F_TIMEOUT(fixture_name, test_name, seconds)		\
	static void npr_t_##fixture_name##_##test_name(			\
		struct npr_test *_metadata,				\
		FIXTURE_DATA(fixture_name) *self,			\
		const FIXTURE_VARIANT(fixture_name) *variant);		\
	static void npr_tw_##fixture_name##_##test_name(		\
		struct npr_test *_metadata, void *self,			\
		const void *variant)					\
	{								\
		npr_t_##fixture_name##_##test_name(_metadata, self,	\
						   variant);		\
	}								\
	static struct npr_test_case npr_tc_##fixture_name##_##test_name = { \
		.name = #test_name,					\
		.fixture = &npr_fixture_##fixture_name,			\
		.fn = npr_tw_##fixture_name##_##test_name,		\
		.timeout = (seconds),					\
		.line = __LINE__,					\
	};								\
	static void __attribute__((constructor))			\
	npr_tr_##fixture_name##_##test_name(void)			\
	{								\
		npr_tc_##fixture_name##_##test_name.fixture->self_size = \
			sizeof(FIXTURE_DATA(fixture_name));		\
		npr_th_register_case(&npr_tc_##fixture_name##_##test_name); \
	}								\
	static void npr_t_##fixture_name##_##test_name(			\
		struct npr_test *_metadata NPR_TH_UNUSED,		\
		FIXTURE_DATA(fixture_name) *self NPR_TH_UNUSED,		\
		const FIXTURE_VARIANT(fixture_name) *variant NPR_TH_UNUSED)

/* ---- diagnostics and checks -------------------------------------------- */

static inline void __attribute__((format(printf, 1, 2)))
npr_th_diag(const char *fmt, ...)
{
	char buf[4096];
	char *line, *save = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* every line of a diagnostic is a KTAP comment */
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		printf("# %s\n", line);
	fflush(stdout);
}

#define TH_LOG(fmt, ...)	npr_th_diag(fmt, ##__VA_ARGS__)

/* Stop the test: teardown still runs if setup finished. */
static inline void __attribute__((noreturn))
npr_th_bail(struct npr_test *t)
{
	longjmp(t->bail, 1);
}

#define NPR_TH_FAIL(is_assert)						\
	do {								\
		_metadata->failed = true;				\
		if (is_assert)						\
			npr_th_bail(_metadata);				\
	} while (0)

/*
 * Values in failure messages: floating point as such, unsigned integers
 * as unsigned, everything else (signed integers, enums, pointers) as
 * signed.  The value is passed by address so that every branch compiles
 * whatever the type.
 */
#define NPR_TH_KIND(x)							\
	_Generic((x),							\
		 float: 1, double: 2, long double: 3,			\
		 _Bool: 4, unsigned char: 4, unsigned short: 4,		\
		 unsigned int: 4, unsigned long: 4,			\
		 unsigned long long: 4,					\
		 default: 0)

static inline const char *npr_th_fmt(char *buf, size_t len, const void *p,
				     size_t size, int kind)
{
	unsigned long long u = 0;
	long long s = 0;

	switch (kind) {
	case 1: {
		float f;

		memcpy(&f, p, sizeof(f));
		snprintf(buf, len, "%.9g", f);
		return buf;
	}
	case 2: {
		double d;

		memcpy(&d, p, sizeof(d));
		snprintf(buf, len, "%.17g", d);
		return buf;
	}
	case 3: {
		long double d;

		memcpy(&d, p, sizeof(d));
		snprintf(buf, len, "%.21Lg", d);
		return buf;
	}
	}
	switch (size) {
	case 1: { uint8_t v; memcpy(&v, p, 1); u = v; s = (int8_t)v; break; }
	case 2: { uint16_t v; memcpy(&v, p, 2); u = v; s = (int16_t)v; break; }
	case 4: { uint32_t v; memcpy(&v, p, 4); u = v; s = (int32_t)v; break; }
	case 8: { uint64_t v; memcpy(&v, p, 8); u = v; s = (int64_t)v; break; }
	default:
		snprintf(buf, len, "?");
		return buf;
	}
	if (kind == 4)
		snprintf(buf, len, "%llu", u);
	else
		snprintf(buf, len, "%lld", s);
	return buf;
}

/*
 * Compare with C's usual arithmetic conversions, as the expression
 * "a op b" would; -Wsign-compare is quiet here so that a __u32 field can
 * be checked against a literal.
 */
#define NPR_TH_CMP(a, op, b, is_assert)					\
	do {								\
		__typeof__(a) npr_th_a = (a);				\
		__typeof__(b) npr_th_b = (b);				\
		bool npr_th_ok;						\
		_Pragma("GCC diagnostic push")				\
		_Pragma("GCC diagnostic ignored \"-Wsign-compare\"")	\
		npr_th_ok = npr_th_a op npr_th_b;			\
		_Pragma("GCC diagnostic pop")				\
		if (!npr_th_ok) {					\
			char npr_th_ba[64], npr_th_bb[64];		\
			npr_th_diag("%s:%d: expected %s (%s) %s %s (%s)", \
				    __FILE__, __LINE__, #a,		\
				    npr_th_fmt(npr_th_ba, 64, &npr_th_a, \
					       sizeof(npr_th_a),	\
					       NPR_TH_KIND(npr_th_a)),	\
				    #op, #b,				\
				    npr_th_fmt(npr_th_bb, 64, &npr_th_b, \
					       sizeof(npr_th_b),	\
					       NPR_TH_KIND(npr_th_b)));	\
			NPR_TH_FAIL(is_assert);				\
		}							\
	} while (0)

#define NPR_TH_BOOL(x, want, is_assert)					\
	do {								\
		bool npr_th_v = (x);					\
		if (npr_th_v != (want)) {				\
			npr_th_diag("%s:%d: expected %s to be %s",	\
				    __FILE__, __LINE__, #x,		\
				    (want) ? "true" : "false");		\
			NPR_TH_FAIL(is_assert);				\
		}							\
	} while (0)

#define NPR_TH_PTR(p, want_null, is_assert)				\
	do {								\
		const void *npr_th_p = (p);				\
		if ((npr_th_p == NULL) != (want_null)) {		\
			npr_th_diag("%s:%d: expected %s (%p) to be %s",	\
				    __FILE__, __LINE__, #p, npr_th_p,	\
				    (want_null) ? "NULL" : "non-NULL");	\
			NPR_TH_FAIL(is_assert);				\
		}							\
	} while (0)

#define NPR_TH_STR(a, b, want_eq, is_assert)				\
	do {								\
		const char *npr_th_sa = (a), *npr_th_sb = (b);		\
		bool npr_th_eq = npr_th_sa && npr_th_sb ?		\
			!strcmp(npr_th_sa, npr_th_sb) :			\
			npr_th_sa == npr_th_sb;				\
		if (npr_th_eq != (want_eq)) {				\
			npr_th_diag("%s:%d: expected %s \"%s\" %s %s \"%s\"", \
				    __FILE__, __LINE__, #a,		\
				    npr_th_sa ? npr_th_sa : "(null)",	\
				    (want_eq) ? "==" : "!=", #b,	\
				    npr_th_sb ? npr_th_sb : "(null)");	\
			NPR_TH_FAIL(is_assert);				\
		}							\
	} while (0)

#define NPR_TH_NEAR(a, b, tol, is_assert)				\
	do {								\
		double npr_th_da = (a), npr_th_db = (b);		\
		double npr_th_tol = (tol);				\
		if (!(fabs(npr_th_da - npr_th_db) <= npr_th_tol)) {	\
			npr_th_diag("%s:%d: expected %s (%.9g) within %.3g of %s (%.9g), off by %.3g", \
				    __FILE__, __LINE__, #a, npr_th_da,	\
				    npr_th_tol, #b, npr_th_db,		\
				    fabs(npr_th_da - npr_th_db));	\
			NPR_TH_FAIL(is_assert);				\
		}							\
	} while (0)

#define ASSERT_EQ(a, b)		NPR_TH_CMP(a, ==, b, 1)
#define ASSERT_NE(a, b)		NPR_TH_CMP(a, !=, b, 1)
#define ASSERT_LT(a, b)		NPR_TH_CMP(a, <, b, 1)
#define ASSERT_LE(a, b)		NPR_TH_CMP(a, <=, b, 1)
#define ASSERT_GT(a, b)		NPR_TH_CMP(a, >, b, 1)
#define ASSERT_GE(a, b)		NPR_TH_CMP(a, >=, b, 1)
#define ASSERT_TRUE(x)		NPR_TH_BOOL(x, true, 1)
#define ASSERT_FALSE(x)		NPR_TH_BOOL(x, false, 1)
#define ASSERT_NULL(p)		NPR_TH_PTR(p, true, 1)
#define ASSERT_NONNULL(p)	NPR_TH_PTR(p, false, 1)
#define ASSERT_STREQ(a, b)	NPR_TH_STR(a, b, true, 1)
#define ASSERT_STRNE(a, b)	NPR_TH_STR(a, b, false, 1)
#define ASSERT_NEAR(a, b, tol)	NPR_TH_NEAR(a, b, tol, 1)

#define EXPECT_EQ(a, b)		NPR_TH_CMP(a, ==, b, 0)
#define EXPECT_NE(a, b)		NPR_TH_CMP(a, !=, b, 0)
#define EXPECT_LT(a, b)		NPR_TH_CMP(a, <, b, 0)
#define EXPECT_LE(a, b)		NPR_TH_CMP(a, <=, b, 0)
#define EXPECT_GT(a, b)		NPR_TH_CMP(a, >, b, 0)
#define EXPECT_GE(a, b)		NPR_TH_CMP(a, >=, b, 0)
#define EXPECT_TRUE(x)		NPR_TH_BOOL(x, true, 0)
#define EXPECT_FALSE(x)		NPR_TH_BOOL(x, false, 0)
#define EXPECT_NULL(p)		NPR_TH_PTR(p, true, 0)
#define EXPECT_NONNULL(p)	NPR_TH_PTR(p, false, 0)
#define EXPECT_STREQ(a, b)	NPR_TH_STR(a, b, true, 0)
#define EXPECT_STRNE(a, b)	NPR_TH_STR(a, b, false, 0)
#define EXPECT_NEAR(a, b, tol)	NPR_TH_NEAR(a, b, tol, 0)

/* Mark the test skipped, say why, then run @statement. */
#define SKIP(statement, fmt, ...)					\
	do {								\
		snprintf(_metadata->skip_reason,			\
			 _metadata->skip_reason_len, fmt, ##__VA_ARGS__); \
		_metadata->skipped = true;				\
		npr_th_diag("SKIP: %s", _metadata->skip_reason);	\
		statement;						\
	} while (0)

/* ---- shared test data ---------------------------------------------------- */

static inline bool npr_th_isdir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/*
 * npr_test_shared() - the shared data directory (models, images)
 *
 * $NPR_SHARED if set (the runner sets it); otherwise "shared" beside the
 * source tree, looked for from the test binary (selftests/../../shared)
 * and from the current directory (../shared).
 */
static inline const char *npr_test_shared(void)
{
	static char path[PATH_MAX];
	const char *env = getenv("NPR_SHARED");
	char exe[PATH_MAX];
	ssize_t n;
	int len;

	if (env && *env)
		return env;
	if (path[0])
		return path;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			len = snprintf(path, sizeof(path), "%s/../../shared",
				       exe);
			if (len > 0 && (size_t)len < sizeof(path) &&
			    npr_th_isdir(path))
				return path;
		}
	}
	snprintf(path, sizeof(path), "../shared");
	return path;
}

static inline bool npr_test_shared_ok(void)
{
	return npr_th_isdir(npr_test_shared());
}

/*
 * The path of the tool @name: in $NPR_TOOLS (the installed selftests'
 * runner sets it), else built next to this program (BUILD/tools/NAME).
 * Eight results stay valid at a time.
 */
static inline const char *npr_test_tool(const char *name)
{
	static char buf[8][PATH_MAX];
	static int next;
	char exe[PATH_MAX], *b = buf[next++ % 8], *slash;
	const char *dir = getenv("NPR_TOOLS");
	ssize_t n;

	if (dir && *dir) {
		if (snprintf(b, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
			b[0] = 0;
		return b;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n < 0 ? 0 : n] = 0;
	slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	if (snprintf(b, PATH_MAX, "%s/../tools/%s", slash ? exe : ".",
		     name) >= PATH_MAX)
		b[0] = 0;
	return b;
}

/* All of @fd from its start, NUL-terminated (malloc'd), or NULL. */
static inline char *npr_test_slurp_fd(int fd)
{
	size_t len = 0, cap = 65536;
	char *s = malloc(cap + 1);
	ssize_t r;

	if (!s)
		return NULL;
	lseek(fd, 0, SEEK_SET);
	while ((r = read(fd, s + len, cap - len)) > 0) {
		len += r;
		if (len == cap) {
			char *t = realloc(s, 2 * cap + 1);

			if (!t)
				break;
			s = t;
			cap *= 2;
		}
	}
	s[len] = 0;
	return s;
}

/*
 * Run argv (NULL-terminated, found on PATH if it has no '/') with @env
 * ("NAME=VALUE" or NULL) and standard input from @in (or /dev/null);
 * its stdout and stderr in *out and *err (malloc'd).  Return: the exit
 * status, or -1 when it did not exit normally.
 */
static inline int npr_test_run(char **out, char **err, const char *env,
			       const char *in, char *const argv[])
{
	char o[] = "/tmp/npr-test-run.XXXXXX", e[] = "/tmp/npr-test-run.XXXXXX";
	int fo = mkstemp(o), fe = mkstemp(e), st = 0, fi;
	pid_t pid;

	*out = *err = NULL;
	if (fo >= 0)
		unlink(o);
	if (fe >= 0)
		unlink(e);
	if (fo < 0 || fe < 0) {
		if (fo >= 0)
			close(fo);
		if (fe >= 0)
			close(fe);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		fi = open(in ? in : "/dev/null", O_RDONLY);
		if (fi < 0)
			_exit(126);
		dup2(fi, 0);
		dup2(fo, 1);
		dup2(fe, 2);
		if (env)
			putenv((char *)env);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		st = -1;
	*out = npr_test_slurp_fd(fo);
	*err = npr_test_slurp_fd(fe);
	close(fo);
	close(fe);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- running ----------------------------------------------------------- */

struct npr_th_run {
	struct npr_test_case *tc;
	struct npr_fixture_variant *variant;
	char name[256];
};

static volatile sig_atomic_t npr_th_alarm;

static inline void npr_th_on_alarm(int sig)
{
	(void)sig;
	npr_th_alarm = 1;
}

static inline int npr_th_timeout(const struct npr_test_case *tc)
{
	const char *env = getenv("TEST_TIMEOUT");
	int t = tc->timeout > 0 ? tc->timeout : HARNESS_TIMEOUT;

	/* the environment replaces the default and only raises a test's own */
	if (env && atoi(env) > 0 && (!tc->timeout || atoi(env) > t))
		t = atoi(env);
	return t;
}

/* The child: setup, body, teardown; the exit code is the verdict. */
static inline void __attribute__((noreturn))
npr_th_child(struct npr_th_run *r, char *reason, size_t reason_len)
{
	struct npr_fixture *f = r->tc->fixture;
	const void *variant = r->variant ? r->variant->data : NULL;
	/* static: it must keep its value across the longjmp() of ASSERT */
	static struct npr_test t;
	volatile bool setup_done = false;
	static void *self;
	int code;

	t.name = r->name;
	t.skip_reason = reason;
	t.skip_reason_len = reason_len;
	if (f && f->self_size) {
		self = calloc(1, f->self_size);
		if (!self) {
			npr_th_diag("%s: out of memory", r->name);
			_exit(NPR_KSFT_FAIL);
		}
	}
	if (!setjmp(t.bail)) {
		if (f && f->setup)
			f->setup(&t, self, variant);
		setup_done = true;
		if (!t.skipped)
			r->tc->fn(&t, self, variant);
	}
	if (setup_done && f && f->teardown && !setjmp(t.bail)) {
		t.in_teardown = true;
		f->teardown(&t, self, variant);
	}
	free(self);
	if (t.failed)
		code = NPR_KSFT_FAIL;
	else if (t.skipped)
		code = NPR_KSFT_SKIP;
	else
		code = NPR_KSFT_PASS;
#ifdef NPR_TH_LSAN
	if (code != NPR_KSFT_FAIL && __lsan_do_recoverable_leak_check()) {
		npr_th_diag("%s: leaks memory (LeakSanitizer's report above)",
			    r->name);
		code = NPR_KSFT_FAIL;
	}
#endif
	fflush(stdout);
	fflush(stderr);
	_exit(code);
}

/* Run one test in a child.  Returns NPR_KSFT_*; *why gets a reason. */
static inline int npr_th_run_one(struct npr_th_run *r, char *reason,
				 size_t reason_len)
{
	struct sigaction sa = { .sa_handler = npr_th_on_alarm };
	struct sigaction old;
	int status, timeout = npr_th_timeout(r->tc);
	pid_t pid, w;

	reason[0] = 0;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		snprintf(reason, reason_len, "fork: %s", strerror(errno));
		return NPR_KSFT_FAIL;
	}
	if (!pid) {
		signal(SIGALRM, SIG_DFL);
		npr_th_child(r, reason, reason_len);
	}
	npr_th_alarm = 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	alarm(timeout);
	for (;;) {
		w = waitpid(pid, &status, 0);
		if (w == pid)
			break;
		if (w < 0 && errno == EINTR && npr_th_alarm) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			alarm(0);
			sigaction(SIGALRM, &old, NULL);
			npr_th_diag("%s: timed out after %d s", r->name,
				    timeout);
			return NPR_KSFT_FAIL;
		}
		if (w < 0 && errno != EINTR) {
			alarm(0);
			sigaction(SIGALRM, &old, NULL);
			npr_th_diag("%s: waitpid: %s", r->name,
				    strerror(errno));
			return NPR_KSFT_FAIL;
		}
	}
	alarm(0);
	sigaction(SIGALRM, &old, NULL);
	if (WIFSIGNALED(status)) {
		npr_th_diag("%s: killed by signal %d (%s)", r->name,
			    WTERMSIG(status), strsignal(WTERMSIG(status)));
		return NPR_KSFT_FAIL;
	}
	if (!WIFEXITED(status)) {
		npr_th_diag("%s: ended with wait status 0x%x", r->name,
			    status);
		return NPR_KSFT_FAIL;
	}
	switch (WEXITSTATUS(status)) {
	case NPR_KSFT_PASS:
		return NPR_KSFT_PASS;
	case NPR_KSFT_SKIP:
		if (!reason[0])
			snprintf(reason, reason_len, "(no reason given)");
		return NPR_KSFT_SKIP;
	case NPR_KSFT_FAIL:
		return NPR_KSFT_FAIL;
	default:
		npr_th_diag("%s: exited with status %d", r->name,
			    WEXITSTATUS(status));
		return NPR_KSFT_FAIL;
	}
}

static inline bool npr_th_selected(const struct npr_th_run *r,
				   char **names, int nnames,
				   char **fixtures, int nfixtures)
{
	bool ok;
	int i;

	if (nfixtures) {
		ok = false;
		for (i = 0; i < nfixtures; i++)
			if (r->tc->fixture &&
			    !strcmp(r->tc->fixture->name, fixtures[i]))
				ok = true;
		if (!ok)
			return false;
	}
	if (nnames) {
		ok = false;
		for (i = 0; i < nnames; i++)
			if (strstr(r->name, names[i]))
				ok = true;
		if (!ok)
			return false;
	}
	return true;
}

static inline void npr_th_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-l] [-t NAME]... [-f FIXTURE]...\n"
		"  -l          list the tests and exit\n"
		"  -t NAME     run the tests whose name contains NAME\n"
		"  -f FIXTURE  run the tests of FIXTURE\n"
		"environment: TEST_TIMEOUT (seconds per test, default %d),\n"
		"             NPR_SHARED (shared data directory)\n",
		prog, HARNESS_TIMEOUT);
}

static inline int npr_th_main(int argc, char **argv)
{
	char **names = calloc(argc, sizeof(char *));
	char **fixtures = calloc(argc, sizeof(char *));
	int nnames = 0, nfixtures = 0, nruns = 0, cap = 0, opt, i;
	int pass = 0, fail = 0, skip = 0;
	struct npr_th_run *runs = NULL;
	struct npr_test_case *tc;
	bool list = false;
	char *reason;

	if (!names || !fixtures) {
		fprintf(stderr, "out of memory\n");
		return NPR_KSFT_FAIL;
	}
	while ((opt = getopt(argc, argv, "hlt:f:")) != -1) {
		switch (opt) {
		case 'l':
			list = true;
			break;
		case 't':
			names[nnames++] = optarg;
			break;
		case 'f':
			fixtures[nfixtures++] = optarg;
			break;
		case 'h':
			npr_th_usage(argv[0]);
			return NPR_KSFT_PASS;
		default:
			npr_th_usage(argv[0]);
			return NPR_KSFT_FAIL;
		}
	}

	/* expand fixtures over their variants, then filter */
	for (tc = npr_th_cases; tc; tc = tc->next) {
		struct npr_fixture_variant *v = NULL;
		struct npr_fixture_variant none = { .name = NULL };

		if (tc->fixture)
			v = tc->fixture->variants;
		if (!v)
			v = &none;
		for (; v; v = v->next) {
			struct npr_th_run r = { .tc = tc };

			r.variant = v->name ? v : NULL;
			if (!tc->fixture)
				snprintf(r.name, sizeof(r.name), "%s",
					 tc->name);
			else if (!r.variant)
				snprintf(r.name, sizeof(r.name), "%s.%s",
					 tc->fixture->name, tc->name);
			else
				snprintf(r.name, sizeof(r.name), "%s.%s.%s",
					 tc->fixture->name, v->name,
					 tc->name);
			if (!npr_th_selected(&r, names, nnames, fixtures,
					     nfixtures))
				continue;
			if (nruns == cap) {
				struct npr_th_run *n;

				cap = cap ? cap * 2 : 64;
				n = realloc(runs, sizeof(*runs) * cap);
				if (!n) {
					fprintf(stderr, "out of memory\n");
					return NPR_KSFT_FAIL;
				}
				runs = n;
			}
			runs[nruns++] = r;
		}
	}
	free(names);
	free(fixtures);

	if (list) {
		for (i = 0; i < nruns; i++)
			printf("%s\n", runs[i].name);
		free(runs);
		return NPR_KSFT_PASS;
	}

	/* the child writes a skip reason here; the parent reads it */
	reason = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (reason == MAP_FAILED) {
		fprintf(stderr, "mmap: %s\n", strerror(errno));
		return NPR_KSFT_FAIL;
	}
	printf("TAP version 13\n");
	printf("1..%d\n", nruns);
	if (!nruns)
		npr_th_diag("no test matches");
	for (i = 0; i < nruns; i++) {
		int res;

		npr_th_diag("RUN %s", runs[i].name);
		res = npr_th_run_one(&runs[i], reason, 4096);
		reason[4095] = 0;
		switch (res) {
		case NPR_KSFT_PASS:
			pass++;
			printf("ok %d %s\n", i + 1, runs[i].name);
			break;
		case NPR_KSFT_SKIP:
			skip++;
			/* a reason is one line */
			reason[strcspn(reason, "\n")] = 0;
			printf("ok %d %s # SKIP %s\n", i + 1, runs[i].name,
			       reason);
			break;
		default:
			fail++;
			printf("not ok %d %s\n", i + 1, runs[i].name);
			break;
		}
		fflush(stdout);
	}
	printf("# Totals: pass:%d fail:%d skip:%d\n", pass, fail, skip);
	fflush(stdout);
	munmap(reason, 4096);
	free(runs);
	if (fail)
		return NPR_KSFT_FAIL;
	if (skip == nruns)
		return NPR_KSFT_SKIP;
	return NPR_KSFT_PASS;
}

#define TEST_HARNESS_MAIN						\
	int main(int argc, char **argv)					\
	{								\
		return npr_th_main(argc, argv);				\
	}

#endif /* NPR_SELFTEST_HARNESS_H */
