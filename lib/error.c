// SPDX-License-Identifier: MIT
/*
 * What the library has to say, the one way it says it.
 *
 * Per-thread error detail: every failing call leaves a message here next
 * to the errno it returns; NPR_IOCTL_GET_ERROR and npr_last_error() read
 * it.
 *
 * The log: warnings and diagnostics go to the caller's npr_set_log()
 * callback, never to stderr; without a callback nothing is printed.  With
 * NPR_LOG_DEBUG the error details go there too as they are set, so that a
 * service sees why a call failed without asking each thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "include/npuring.h"
#include "error.h"
#include "graph/graph.h"

static __thread char err_msg[1024];
static __thread int err_code;
static __thread unsigned long err_seq;

/*
 * The callback, its pointer and level change under log_lock, which a
 * message also holds while the callback runs: one call at a time, and
 * npr_set_log() returns only when the old callback is done.  log_max
 * mirrors the level (-1: no callback) for the check of every message,
 * which takes no lock.  in_log stops a message the callback causes.
 */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static npr_log_fn log_fn;
static void *log_priv;
static _Atomic int log_max = -1;
static __thread bool in_log;

static void log_line(int level, int floor, const char *prefix,
		     const char *fmt, va_list ap)
{
	char line[1024];
	size_t n = 0;
	char *p;

	if (level < NPR_LOG_ERROR || in_log)
		return;
	if (prefix)
		n = (size_t)snprintf(line, sizeof(line), "%s", prefix);
	if (n >= sizeof(line))
		n = 0;
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	/* one line: inner newlines become spaces, trailing ones go */
	for (p = line; (p = strchr(p, '\n')); p++)
		*p = ' ';
	n = strlen(line);
	while (n && line[n - 1] == ' ')
		line[--n] = 0;
	pthread_mutex_lock(&log_lock);
	if (log_fn && (level <= atomic_load(&log_max) || level <= floor)) {
		in_log = true;
		log_fn(log_priv, level, line);
		in_log = false;
	}
	pthread_mutex_unlock(&log_lock);
}

static void log_fmt(int level, int floor, const char *prefix,
		    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line(level, floor, prefix, fmt, ap);
	va_end(ap);
}

static bool log_wanted(int level, int floor)
{
	int max = atomic_load_explicit(&log_max, memory_order_relaxed);

	return max >= 0 && (level <= max || level <= floor);
}

/**
 * npr_set_log() - route the library's log messages to the caller
 * @fn: the callback; NULL: print nothing.
 * @priv: passed to @fn.
 * @max_level: the least important level delivered.
 *
 * See lib/include/npuring.h.
 */
void npr_set_log(npr_log_fn fn, void *priv, int max_level)
{
	if (in_log)
		return;
	pthread_mutex_lock(&log_lock);
	log_fn = fn;
	log_priv = priv;
	atomic_store(&log_max, fn ? (max_level < 0 ? 0 : max_level) : -1);
	pthread_mutex_unlock(&log_lock);
}

/**
 * npr_log() - log one line through the caller's callback
 * @level: NPR_LOG_ERROR ... NPR_LOG_DEBUG.
 * @fmt: printf format; a trailing newline is not needed.
 *
 * Delivered when a callback is set and @level is within its max_level.
 */
void npr_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (!log_wanted(level, 0))
		return;
	va_start(ap, fmt);
	log_line(level, 0, NULL, fmt, ap);
	va_end(ap);
}

/**
 * npr_log_at() - npr_log() for a device or compiled model
 * @floor: its LOG_LEVEL property: messages up to this level are
 *         delivered even beyond the callback's max_level.
 * @level: NPR_LOG_ERROR ... NPR_LOG_DEBUG.
 * @fmt: printf format.
 */
void npr_log_at(int floor, int level, const char *fmt, ...)
{
	va_list ap;

	if (!log_wanted(level, floor))
		return;
	va_start(ap, fmt);
	log_line(level, floor, NULL, fmt, ap);
	va_end(ap);
}

/**
 * npr_log_enabled() - whether a message of @level would be delivered
 * @level: NPR_LOG_ERROR ... NPR_LOG_DEBUG.
 *
 * For a message that is costly to put together.
 *
 * Return: true if npr_log(@level, ...) reaches a callback.
 */
bool npr_log_enabled(int level)
{
	return log_wanted(level, 0);
}

/* NPR_LOG_DEBUG: the error detail just set */
static void log_err(void)
{
	char prefix[32];

	if (!log_wanted(NPR_LOG_DEBUG, 0))
		return;
	snprintf(prefix, sizeof(prefix), "error %d: ", err_code);
	log_fmt(NPR_LOG_DEBUG, 0, prefix, "%s", err_msg);
}

/**
 * npr_err() - set this thread's error message
 * @err: the -errno the caller is about to return.
 * @fmt: printf format of the message.
 *
 * Return: @err, so that "return npr_err(-EINVAL, ...);" reads naturally.
 */
int npr_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err_msg, sizeof(err_msg), fmt, ap);
	va_end(ap);
	err_code = err;
	err_seq++;
	log_err();
	return err;
}

/**
 * npr_node_err() - npr_err() with the layer named first
 * @n: the node.
 * @err: the -errno.
 * @fmt: printf format of the rest of the message.
 *
 * Return: @err.
 */
int npr_node_err(const struct npr_node *n, int err, const char *fmt, ...)
{
	va_list ap;
	int len;

	len = snprintf(err_msg, sizeof(err_msg), "layer %lld (%s, %s-%u): ",
		       (long long)n->layer_id, n->name ? n->name : "?",
		       n->type ? n->type : "?", n->version);
	if (len < 0 || (size_t)len >= sizeof(err_msg))
		len = 0;
	va_start(ap, fmt);
	vsnprintf(err_msg + len, sizeof(err_msg) - len, fmt, ap);
	va_end(ap);
	err_code = err;
	err_seq++;
	log_err();
	return err;
}

/**
 * npr_node_err_default() - npr_err_default() naming the layer whose op
 * failed
 * @n: the node.
 * @err: the op's result.
 * @mark: npr_err_mark() from before the op's call.
 *
 * Return: @err.
 */
int npr_node_err_default(const struct npr_node *n, int err,
			 unsigned long mark)
{
	if (err < 0 && (err_seq == mark || err_code != err))
		npr_node_err(n, err, "%s", strerror(-err));
	return err;
}

/**
 * npr_err_mark() - a mark taken before a call, for npr_err_default()
 *
 * Return: the mark.
 */
unsigned long npr_err_mark(void)
{
	return err_seq;
}

/**
 * npr_err_default() - make sure a failure has a message of its own, even
 * from a path that only returned an errno
 * @err: the call's result.
 * @mark: npr_err_mark() from before the call.
 *
 * Return: @err.
 */
int npr_err_default(int err, unsigned long mark)
{
	return npr_err_default_in(err, mark, NULL);
}

/**
 * npr_err_default_in() - npr_err_default() naming the call that failed
 * @err: the call's result.
 * @mark: npr_err_mark() from before the call.
 * @what: the call ("COMPILE"), first in the message; NULL for none.
 *
 * Return: @err.
 */
int npr_err_default_in(int err, unsigned long mark, const char *what)
{
	if (err < 0 && (err_seq == mark || err_code != err)) {
		if (what)
			npr_err(err, "%s: %s", what, strerror(-err));
		else
			npr_err(err, "%s", strerror(-err));
	}
	return err;
}

/**
 * npr_last_error() - this thread's last error message
 *
 * Return: the message; valid until the thread's next failing call.
 */
const char *npr_last_error(void)
{
	return err_msg;
}

/**
 * npr_last_errno() - the errno that came with npr_last_error()
 *
 * Return: the -errno.
 */
int npr_last_errno(void)
{
	return err_code;
}
