// SPDX-License-Identifier: MIT
/*
 * The library's log (npr_set_log()): by default nothing is written to
 * stderr, not even a warning the model cache has; a callback receives
 * that warning as one line at NPR_LOG_WARNING; max_level filters, and a
 * model's LOG_LEVEL lets its own messages through; NPR_LOG_DEBUG carries
 * each failure's detail as it is set; NULL restores silence; a testing
 * switch found set is named in a warning; a callback that calls the
 * library neither recurses nor deadlocks; and the callback may be set and
 * unset while other threads log: never two calls at once, never a call
 * to a callback after npr_set_log() replaced it.
 */
#define _GNU_SOURCE
#include "uapi_util.h"

#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define MSGS	16

/* What a callback received. */
struct seen {
	int count;
	int level[MSGS];
	char msg[MSGS][512];
};

static void record(void *priv, int level, const char *msg)
{
	struct seen *s = priv;

	if (s->count < MSGS) {
		s->level[s->count] = level;
		snprintf(s->msg[s->count], sizeof(s->msg[0]), "%s", msg);
	}
	s->count++;
}

/* The index of the first message containing @what, or -1. */
static int find(const struct seen *s, const char *what)
{
	int i;

	for (i = 0; i < s->count && i < MSGS; i++)
		if (strstr(s->msg[i], what))
			return i;
	return -1;
}

/*
 * Compile the relu model with CACHE_DIR under a regular file, so that the
 * cache cannot make its directory: the compile succeeds and the cache
 * warns.  @log_level: the compile's LOG_LEVEL, 0 to leave it.
 */
static int compile_warning(struct npr_test *_metadata, int fd,
			   const char *file, int log_level)
{
	char dir[512];
	struct npr_prop_arg pa[2];
	struct npr_compile co;
	__u32 model;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/cache", file);
	load_relu(_metadata, fd, &model);
	pa[n++] = (struct npr_prop_arg){ .param = NPR_PARAM_CACHE_DIR,
					 .value = (uintptr_t)dir };
	if (log_level)
		pa[n++] = (struct npr_prop_arg){ .param = NPR_PARAM_LOG_LEVEL,
						 .value = (__u64)log_level };
	npr_prep_compile(&co, model);
	co.props = (uintptr_t)pa;
	co.num_props = n;
	return npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
}

FIXTURE(log) {
	int fd;
	char file[64];		/* a regular file: no directory under it */
	char err[64];		/* where stderr goes */
	int saved;		/* the real stderr */
};

FIXTURE_SETUP(log)
{
	int f;

	self->saved = -1;
	self->file[0] = self->err[0] = 0;
	self->fd = npr_open("cpu", 0);
	ASSERT_GE(self->fd, 0);
	strcpy(self->file, "/tmp/npr-log-test.XXXXXX");
	f = mkstemp(self->file);
	ASSERT_GE(f, 0);
	close(f);
	/* stderr into a file, checked empty by the tests that want it */
	strcpy(self->err, "/tmp/npr-log-test-err.XXXXXX");
	f = mkstemp(self->err);
	ASSERT_GE(f, 0);
	fflush(stderr);
	self->saved = dup(2);
	ASSERT_GE(self->saved, 0);
	ASSERT_EQ(dup2(f, 2), 2);
	close(f);
}

FIXTURE_TEARDOWN(log)
{
	npr_set_log(NULL, NULL, 0);
	if (self->saved >= 0) {
		fflush(stderr);
		dup2(self->saved, 2);
		close(self->saved);
	}
	if (self->fd >= 0)
		npr_close(self->fd);
	if (self->file[0])
		unlink(self->file);
	if (self->err[0])
		unlink(self->err);
}

/* Bytes written to the test's stderr so far. */
static long err_bytes(FIXTURE_DATA(log) *self)
{
	struct stat st;

	fflush(stderr);
	return stat(self->err, &st) ? -1 : (long)st.st_size;
}

TEST_F(log, silent_by_default)
{
	/* LOG_LEVEL warning: what used to reach stderr */
	ASSERT_EQ(compile_warning(_metadata, self->fd, self->file,
				  NPR_LOG_WARNING), 0);
	EXPECT_EQ(err_bytes(self), 0);
}

TEST_F(log, callback_gets_the_cache_warning)
{
	struct seen s = { 0 };
	int i;

	npr_set_log(record, &s, NPR_LOG_WARNING);
	ASSERT_EQ(compile_warning(_metadata, self->fd, self->file, 0), 0);
	npr_set_log(NULL, NULL, 0);
	i = find(&s, "CACHE_DIR");
	ASSERT_GE(i, 0);
	EXPECT_EQ(s.level[i], NPR_LOG_WARNING);
	EXPECT_NE(strstr(s.msg[i], self->file), NULL);
	EXPECT_NE(strstr(s.msg[i], strerror(ENOTDIR)), NULL);
	EXPECT_EQ(strchr(s.msg[i], '\n'), NULL);
	EXPECT_EQ(err_bytes(self), 0);
}

TEST_F(log, max_level_filters)
{
	struct seen s = { 0 };

	/* errors only: the warning is dropped */
	npr_set_log(record, &s, NPR_LOG_ERROR);
	ASSERT_EQ(compile_warning(_metadata, self->fd, self->file, 0), 0);
	EXPECT_EQ(find(&s, "CACHE_DIR"), -1);
	/* ... unless the model's LOG_LEVEL asks for its warnings */
	ASSERT_EQ(compile_warning(_metadata, self->fd, self->file,
				  NPR_LOG_WARNING), 0);
	EXPECT_GE(find(&s, "CACHE_DIR"), 0);
	/* NPR_LOG_ERR is NPR_LOG_ERROR */
	EXPECT_EQ(NPR_LOG_ERR, NPR_LOG_ERROR);
	npr_set_log(NULL, NULL, 0);
}

TEST_F(log, debug_carries_the_failure_detail)
{
	struct seen s = { 0 };
	char want[1100];
	int i;

	npr_set_log(record, &s, NPR_LOG_INFO);
	EXPECT_EQ(npr_open("no-such-device", 0), -ENODEV);
	EXPECT_EQ(find(&s, "error "), -1);
	npr_set_log(record, &s, NPR_LOG_DEBUG);
	EXPECT_EQ(npr_open("no-such-device", 0), -ENODEV);
	npr_set_log(NULL, NULL, 0);
	snprintf(want, sizeof(want), "error %d: %s", -ENODEV,
		 npr_last_error());
	i = find(&s, "error ");
	ASSERT_GE(i, 0);
	EXPECT_EQ(s.level[i], NPR_LOG_DEBUG);
	EXPECT_STREQ(s.msg[i], want);
}

TEST_F(log, null_restores_silence)
{
	struct seen s = { 0 };

	npr_set_log(record, &s, NPR_LOG_DEBUG);
	npr_set_log(NULL, &s, NPR_LOG_DEBUG);
	ASSERT_EQ(compile_warning(_metadata, self->fd, self->file,
				  NPR_LOG_WARNING), 0);
	EXPECT_EQ(npr_open("no-such-device", 0), -ENODEV);
	EXPECT_EQ(s.count, 0);
	EXPECT_EQ(err_bytes(self), 0);
}

TEST_F(log, a_testing_switch_is_named)
{
	struct seen s = { 0 };
	__u32 model, exec;
	int i;

	if (getenv("NPR_CPU_COPY_INPUTS"))
		SKIP(return, "NPR_CPU_COPY_INPUTS is set already");
	setenv("NPR_CPU_COPY_INPUTS", "1", 1);
	npr_set_log(record, &s, NPR_LOG_WARNING);
	load_relu(_metadata, self->fd, &model);
	compile_model(_metadata, self->fd, model, &exec);
	compile_model(_metadata, self->fd, model, &exec);
	npr_set_log(NULL, NULL, 0);
	unsetenv("NPR_CPU_COPY_INPUTS");
	i = find(&s, "NPR_CPU_COPY_INPUTS=1 is set");
	ASSERT_GE(i, 0);
	EXPECT_EQ(s.level[i], NPR_LOG_WARNING);
	EXPECT_NE(strstr(s.msg[i], "testing"), NULL);
	/* once per process */
	s.msg[i][0] = 0;
	EXPECT_EQ(find(&s, "NPR_CPU_COPY_INPUTS=1 is set"), -1);
}

/* A callback that calls the library: its failure is not logged again. */
static void reenter(void *priv, int level, const char *msg)
{
	int *calls = priv;

	(void)level;
	(void)msg;
	(*calls)++;
	npr_set_log(NULL, NULL, 0);	/* ignored */
	npr_open("no-such-device", 0);
}

TEST_F(log, a_callback_may_call_the_library)
{
	int calls = 0;

	npr_set_log(reenter, &calls, NPR_LOG_DEBUG);
	EXPECT_EQ(npr_open("no-such-device", 0), -ENODEV);
	EXPECT_EQ(calls, 1);
	/* npr_set_log() from the callback changed nothing */
	EXPECT_EQ(npr_open("no-such-device", 0), -ENODEV);
	EXPECT_EQ(calls, 2);
	npr_set_log(NULL, NULL, 0);
}

/* ---- set and unset while other threads log ---- */

#define LOGGERS	3

struct sink {
	unsigned int magic;	/* SINK_MAGIC while the sink may be called */
	atomic_int calls;
};

#define SINK_MAGIC	0x5eedf00d

static atomic_int inside;	/* callbacks running now */
static atomic_int overlaps;	/* two at once seen */
static atomic_int stale;	/* a sink called after it was retired */
static atomic_bool stop;

static void count(void *priv, int level, const char *msg)
{
	struct sink *s = priv;

	(void)level;
	(void)msg;
	if (atomic_fetch_add(&inside, 1))
		atomic_fetch_add(&overlaps, 1);
	if (s->magic != SINK_MAGIC)
		atomic_fetch_add(&stale, 1);
	atomic_fetch_add(&s->calls, 1);
	atomic_fetch_sub(&inside, 1);
}

static void *logger(void *arg)
{
	atomic_long *fails = arg;

	while (!atomic_load(&stop)) {
		npr_open("no-such-device", 0);
		atomic_fetch_add(fails, 1);
	}
	return NULL;
}

TEST(set_and_unset_while_threads_log)
{
	struct sink a = { SINK_MAGIC, 0 }, b = { SINK_MAGIC, 0 };
	pthread_t t[LOGGERS];
	atomic_long fails = 0;
	long before;
	int i, after;

	atomic_store(&stop, false);
	for (i = 0; i < LOGGERS; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, logger, &fails), 0);
	/* until both sinks were called, and at least 3000 changes */
	for (i = 0; i < 3000 || !atomic_load(&a.calls) ||
	     !atomic_load(&b.calls); i++) {
		switch (i % 3) {
		case 0:
			npr_set_log(count, &a, NPR_LOG_DEBUG);
			break;
		case 1:
			npr_set_log(count, &b, NPR_LOG_DEBUG);
			break;
		default:
			npr_set_log(NULL, NULL, 0);
		}
		if (i % 100 == 0)
			sched_yield();
	}
	/* retired: neither sink may be called from here on */
	npr_set_log(NULL, NULL, 0);
	a.magic = b.magic = 0;
	after = atomic_load(&a.calls) + atomic_load(&b.calls);
	before = atomic_load(&fails);
	while (atomic_load(&fails) < before + 1000)
		sched_yield();
	atomic_store(&stop, true);
	for (i = 0; i < LOGGERS; i++)
		pthread_join(t[i], NULL);
	EXPECT_EQ(atomic_load(&a.calls) + atomic_load(&b.calls), after);
	EXPECT_EQ(atomic_load(&overlaps), 0);
	EXPECT_EQ(atomic_load(&stale), 0);
	EXPECT_GT(after, 0);
}

TEST_HARNESS_MAIN
