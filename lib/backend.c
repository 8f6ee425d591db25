// SPDX-License-Identifier: MIT
/*
 * Backend registry: device names map to backend ops tables.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "ref/kernels/registry.h"

static const struct npr_backend_ops *const backends[] = {
	&npr_cpu_backend_ops,
	&npr_npu_backend_ops,
	&npr_null_backend_ops,
};

/**
 * npr_backend_find() - the backend behind a device name
 * @name: "cpu" or "cpu.N".
 * @index: set to N (0 when absent).
 *
 * Return: the backend ops, or NULL when no backend has that name.
 */
const struct npr_backend_ops *npr_backend_find(const char *name, int *index)
{
	size_t i;

	for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		const struct npr_backend_ops *b = backends[i];
		size_t len = strlen(b->name);
		char *end;
		long idx;

		if (strncmp(name, b->name, len))
			continue;
		if (!name[len]) {
			*index = 0;
			return b;
		}
		if (name[len] != '.' || !name[len + 1])
			continue;
		idx = strtol(name + len + 1, &end, 10);
		if (*end || idx < 0 || idx > 255)
			continue;
		*index = (int)idx;
		return b;
	}
	return NULL;
}

/**
 * npr_backend_evaluator() - the evaluator constant folding uses
 *
 * Compile folds a node whose inputs are all constant by running a kernel
 * (lib/ops/infer.c); the core compiles with the CPU backend's reference
 * kernels, whatever device runs the result, so folding gives the same
 * constants everywhere.  Only this registry names the backend.
 *
 * Context: any thread.
 * Return: npr_kernel_find() (ref/kernels/registry.c).
 */
npr_evaluator_fn npr_backend_evaluator(void)
{
	return npr_kernel_find;
}
