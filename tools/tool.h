/* SPDX-License-Identifier: MIT */
/*
 * What every tool does alike: its name in messages, --version, the exit
 * codes (0 success, 1 run-time failure, 2 usage error), a check at exit
 * that everything written to stdout got there, and OpenVINO
 * benchmark_app's single-dash long options (-niter) turned into the
 * tool's own (--niter) before getopt_long() sees them.
 */
#ifndef NPR_TOOLS_TOOL_H
#define NPR_TOOLS_TOOL_H

#include <getopt.h>
#include <stdbool.h>

#include "json.h"

#define NPR_EXIT_OK		0
#define NPR_EXIT_FAILURE	1
#define NPR_EXIT_USAGE		2

/* A single-dash word of benchmark_app and the tool's long option for it. */
struct npr_tool_alias {
	const char *word;	/* "niter" for -niter */
	const char *name;	/* "niter": becomes --niter */
};

void npr_tool_init(const char *name);
const char *npr_tool_name(void);
void npr_tool_version(void);

void __attribute__((noreturn, format(printf, 1, 2)))
npr_tool_usage(const char *fmt, ...);
void __attribute__((noreturn, format(printf, 1, 2)))
npr_tool_fail(const char *fmt, ...);

struct npr_json *npr_tool_json_begin(unsigned int flags);
void npr_tool_json_end(struct npr_json *j);

int npr_tool_int(const char *name, const char *s, int min, int max);
float npr_tool_float(const char *name, const char *s);
void npr_tool_floats3(const char *name, const char *arg, float *out);

void npr_tool_aliases(int argc, char **argv, const char *shortopts,
		      const struct option *longopts,
		      const struct npr_tool_alias *aliases);

#endif /* NPR_TOOLS_TOOL_H */
