// SPDX-License-Identifier: MIT
/*
 * The conventions every tool shares (tool.h): messages prefixed with the
 * tool's name, --version, exit codes, stdout checked at exit, and
 * benchmark_app's single-dash long options.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "npuring.h"
#include "tool.h"

static const char *tool_name = "npr";

/*
 * At exit: push out what stdout still buffers and close it; a write that
 * failed now or earlier (a full disk, /dev/full, a closed descriptor)
 * turns the exit status into 1, with a message.
 */
static void check_stdout(void)
{
	bool failed = ferror(stdout);
	int err = 0;

	errno = 0;
	if (fflush(stdout)) {
		failed = true;
		err = errno;
	}
	errno = 0;
	if (fclose(stdout) && !failed) {
		failed = true;
		err = errno;
	}
	if (!failed)
		return;
	if (err)
		fprintf(stderr, "%s: write error on standard output: %s\n",
			tool_name, strerror(err));
	else
		fprintf(stderr, "%s: write error on standard output\n",
			tool_name);
	_exit(NPR_EXIT_FAILURE);
}

static void log_stderr(void *priv, int level, const char *msg)
{
	fprintf(stderr, "%s: npuring: %s\n", (const char *)priv, msg);
}

/**
 * npr_tool_init() - first call of a tool's main()
 * @name: the tool's name, for messages ("npr-run")
 *
 * Registers the check of stdout at exit (see check_stdout()) and prints
 * the library's log on stderr: warnings and errors, or the level that
 * NPR_LOG_LEVEL names (Documentation/environment.rst).
 */
void npr_tool_init(const char *name)
{
	static const char *const levels[] = {
		[NPR_LOG_NONE] = "none", [NPR_LOG_ERROR] = "error",
		[NPR_LOG_WARNING] = "warning", [NPR_LOG_INFO] = "info",
		[NPR_LOG_DEBUG] = "debug",
	};
	const char *want = getenv("NPR_LOG_LEVEL");
	int level = NPR_LOG_WARNING, i;

	tool_name = name;
	atexit(check_stdout);
	for (i = 0; want && i < (int)(sizeof(levels) / sizeof(levels[0])); i++)
		if (!strcasecmp(want, levels[i]))
			level = i;
	npr_set_log(log_stderr, (void *)name, level);
}

/**
 * npr_tool_name() - the name given to npr_tool_init()
 *
 * Return: the name.
 */
const char *npr_tool_name(void)
{
	return tool_name;
}

/**
 * npr_tool_version() - print "NAME (npuring) VERSION" on stdout
 *
 * The version is the library's (the tools link it statically).
 */
void npr_tool_version(void)
{
#ifdef NPURING_VERSION_MAJOR
	printf("%s (npuring) %s\n", tool_name, npr_version());
#else
	printf("%s (npuring) %s\n", tool_name, NPR_LIB_VERSION);
#endif
}

/**
 * npr_tool_usage() - report a usage error and exit with status 2
 * @fmt: printf format of the message, or NULL when getopt has already
 *       said what is wrong
 *
 * Prints "NAME: message" and a pointer to --help on stderr.
 */
void npr_tool_usage(const char *fmt, ...)
{
	va_list ap;

	if (fmt) {
		fprintf(stderr, "%s: ", tool_name);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	fprintf(stderr, "Try '%s --help' for more information.\n", tool_name);
	exit(NPR_EXIT_USAGE);
}

/**
 * npr_tool_fail() - report a run-time failure and exit with status 1
 * @fmt: printf format of the message
 */
void npr_tool_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", tool_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(NPR_EXIT_FAILURE);
}

static const struct option *long_opt(const struct option *lo,
				     const char *name, size_t len)
{
	for (; lo->name; lo++)
		if (strlen(lo->name) == len && !strncmp(lo->name, name, len))
			return lo;
	return NULL;
}

static const struct npr_tool_alias *alias_for(const struct npr_tool_alias *a,
					      const char *word, size_t len)
{
	for (; a && a->word; a++)
		if (strlen(a->word) == len && !strncmp(a->word, word, len))
			return a;
	return NULL;
}

/**
 * npr_tool_aliases() - rewrite benchmark_app's "-word" options in place
 * @argc: main()'s
 * @argv: main()'s; an argument "-WORD" or "-WORD=VALUE" whose WORD is in
 *        @aliases becomes "--NAME" or "--NAME=VALUE"
 * @shortopts: the tool's getopt short options
 * @longopts: its long options (to know which take an argument)
 * @aliases: the words, ended by an entry with a NULL word
 *
 * The walk follows getopt's rules so that only options are rewritten:
 * the argument of an option that takes one ("-m -niter", "--prop -hint")
 * is skipped, short options clustered ("-hd cpu") stay short, and
 * nothing after "--" is touched.  A WORD is matched whole, so -m, -d and
 * -b stay the short options they are.  Strings that replace arguments
 * live until the program exits.
 */
void npr_tool_aliases(int argc, char **argv, const char *shortopts,
		      const struct option *longopts,
		      const struct npr_tool_alias *aliases)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *eq;
		const struct npr_tool_alias *al;
		const struct option *lo;
		size_t len;

		if (a[0] != '-' || !a[1])
			continue;		/* an operand, or "-" */
		if (!strcmp(a, "--"))
			return;
		if (a[1] == '-') {
			eq = strchr(a + 2, '=');
			len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			lo = long_opt(longopts, a + 2, len);
			if (lo && lo->has_arg == required_argument && !eq)
				i++;
			continue;
		}
		eq = strchr(a + 1, '=');
		len = eq ? (size_t)(eq - a - 1) : strlen(a + 1);
		al = len > 1 ? alias_for(aliases, a + 1, len) : NULL;
		if (al) {
			char *s;

			if (asprintf(&s, "--%s%s", al->name, eq ? eq : "") < 0)
				npr_tool_fail("out of memory");
			argv[i] = s;
			lo = long_opt(longopts, al->name, strlen(al->name));
			if (lo && lo->has_arg == required_argument && !eq)
				i++;
			continue;
		}
		/* a cluster of short options: does one take the next word? */
		for (a++; *a; a++) {
			const char *o = strchr(shortopts, *a);

			if (o && *a != ':' && o[1] == ':') {
				if (!a[1] && o[2] != ':')
					i++;
				break;
			}
		}
	}
}

/**
 * npr_tool_json_begin() - a JSON writer on stdout, or exit with status 1
 * @flags: npr_json_new()'s
 *
 * Return: the writer, for npr_tool_json_end().
 */
struct npr_json *npr_tool_json_begin(unsigned int flags)
{
	struct npr_json *j = npr_json_new(stdout, flags);

	if (!j)
		npr_tool_fail("out of memory");
	return j;
}

/**
 * npr_tool_json_end() - flush and free a writer of npr_tool_json_begin()
 * @j: the writer
 *
 * A write error is left to the check of stdout at exit (it reports it
 * once, with status 1); any other error of the writer is a failure now.
 */
void npr_tool_json_end(struct npr_json *j)
{
	int err = npr_json_free(j);

	if (err && !ferror(stdout))
		npr_tool_fail("JSON output: %s", strerror(-err));
}

/**
 * npr_tool_int() - an integer option's value, or a usage error
 * @name: the option, for the message ("--nireq").
 * @s: its argument.
 * @min: the smallest value accepted.
 * @max: the largest.
 *
 * Return: the value; exits with status 2 when @s is not an integer in
 * [@min, @max].
 */
int npr_tool_int(const char *name, const char *s, int min, int max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		npr_tool_usage("%s: '%s' is not an integer in %d..%d", name, s,
			       min, max);
	return (int)v;
}

/**
 * npr_tool_float() - a finite number option's value, or a usage error
 * @name: the option, for the message.
 * @s: its argument.
 *
 * Return: the value; exits with status 2 when @s is not a finite number.
 */
float npr_tool_float(const char *name, const char *s)
{
	char *end;
	float v = strtof(s, &end);

	if (end == s || *end || !isfinite(v))
		npr_tool_usage("%s: '%s' is not a number", name, s);
	return v;
}

/**
 * npr_tool_floats3() - three comma-separated numbers ("--mean 1,2,3")
 * @name: the option, for the message.
 * @arg: its argument.
 * @out: the three values.
 *
 * Exits with status 2 when @arg is not three finite numbers.
 */
void npr_tool_floats3(const char *name, const char *arg, float *out)
{
	const char *s = arg;
	char *end;
	int i;

	for (i = 0; i < 3; i++) {
		out[i] = strtof(s, &end);
		if (end == s || !isfinite(out[i]) ||
		    *end != (i < 2 ? ',' : '\0'))
			npr_tool_usage("%s: '%s' is not three comma-separated numbers",
				       name, arg);
		s = end + 1;
	}
}
