// SPDX-License-Identifier: MIT
/*
 * Per-thread error detail.  Every failing call leaves a message here next
 * to the errno it returns; NPR_IOCTL_GET_ERROR and npr_last_error() read it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "graph/graph.h"

static __thread char err_msg[1024];
static __thread int err_code;
static __thread unsigned long err_seq;

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
