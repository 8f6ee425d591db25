// SPDX-License-Identifier: MIT
/*
 * The kernel registry: from an op definition to the reference kernel that
 * evaluates it.  Every ref/kernels/<group>.c lists its kernels in a table
 * keyed like the op definitions of lib/ops/<group>.c (type and opset
 * range); on first use, each entry is looked up in the op registry once
 * and the definition it names goes into an open-addressed hash keyed by
 * the definition's address, so a lookup is a hash probe: the loop bodies
 * of ref/kernels/control.c and the dynamic steps of the backend look
 * kernels up per run.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>

#include "registry.h"

extern const struct npr_kernel npr_kernels_nn[];
extern const struct npr_kernel npr_kernels_eltwise[];
extern const struct npr_kernel npr_kernels_shape[];
extern const struct npr_kernel npr_kernels_detect[];
extern const struct npr_kernel npr_kernels_norm[];
extern const struct npr_kernel npr_kernels_deconv[];
extern const struct npr_kernel npr_kernels_ctc[];
extern const struct npr_kernel npr_kernels_variable[];
extern const struct npr_kernel npr_kernels_rnn[];
extern const struct npr_kernel npr_kernels_control[];
extern const struct npr_kernel npr_kernels_attn[];
extern const struct npr_kernel npr_kernels_fused[];
extern const struct npr_kernel npr_kernels_index[];
extern const struct npr_kernel npr_kernels_math[];
extern const struct npr_kernel npr_kernels_layout[];
extern const struct npr_kernel npr_kernels_interp[];
extern const struct npr_kernel npr_kernels_sort[];
extern const struct npr_kernel npr_kernels_misc[];
extern const struct npr_kernel npr_kernels_quant[];

static const struct npr_kernel *const groups[] = {
	npr_kernels_nn, npr_kernels_eltwise, npr_kernels_shape,
	npr_kernels_detect, npr_kernels_norm, npr_kernels_deconv,
	npr_kernels_ctc, npr_kernels_variable, npr_kernels_rnn,
	npr_kernels_control, npr_kernels_attn, npr_kernels_fused,
	npr_kernels_index,
	npr_kernels_math, npr_kernels_layout, npr_kernels_interp,
	npr_kernels_sort, npr_kernels_misc, npr_kernels_quant,
};

/* A power of two; filled at most half (169 entries today). */
#define SLOTS	1024

struct slot {
	const struct npr_op_def *op;
	npr_eval_fn eval;
};

static struct slot slots[SLOTS];
static int nplaced;
/* the first entry that names no op definition exactly, or names one that
 * another entry named already: a programming error npr_kernel_check()
 * reports */
static const struct npr_kernel *bad;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static size_t slot_of(const struct npr_op_def *op)
{
	uint64_t h = (uintptr_t)op;

	h ^= h >> 29;
	h *= 0x9e3779b97f4a7c15ULL;
	return (size_t)(h >> 40) & (SLOTS - 1);
}

static void place(const struct npr_kernel *k)
{
	const struct npr_op_def *op = npr_op_find(k->type, k->vmin);
	size_t i;

	if (!op || op->vmin != k->vmin || op->vmax != k->vmax ||
	    nplaced >= SLOTS / 2)
		goto bad;
	for (i = slot_of(op); slots[i].op; i = (i + 1) & (SLOTS - 1))
		if (slots[i].op == op)
			goto bad;
	slots[i].op = op;
	slots[i].eval = k->eval;
	nplaced++;
	return;
bad:
	if (!bad)
		bad = k;
}

static void build(void)
{
	const struct npr_kernel *k;
	size_t i;

	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		for (k = groups[i]; k->type; k++)
			place(k);
}

/**
 * npr_kernel_find() - the reference kernel of an op definition
 * @op: an op definition from npr_op_find(), or NULL.
 *
 * The first call builds the registry; the others probe a hash, in O(1).
 *
 * Context: any thread.
 * Return: the kernel, or NULL when the CPU backend has none for @op
 * (Parameter, Const, Result, or an op it cannot run).
 */
npr_eval_fn npr_kernel_find(const struct npr_op_def *op)
{
	size_t i;

	pthread_once(&once, build);
	if (!op)
		return NULL;
	for (i = slot_of(op); slots[i].op; i = (i + 1) & (SLOTS - 1))
		if (slots[i].op == op)
			return slots[i].eval;
	return NULL;
}

/**
 * npr_kernel_check() - check the kernel tables against the op registry
 *
 * Every entry of every table must name exactly one op definition (its
 * type, and a version range equal to the definition's), and no two
 * entries the same one.  The selftests call this; an entry that fails is
 * left out of the registry.
 *
 * Context: any thread.
 * Return: the number of op definitions that have a kernel, or -EINVAL
 * with npr_err() naming the first entry at fault.
 */
int npr_kernel_check(void)
{
	pthread_once(&once, build);
	if (bad)
		return npr_err(-EINVAL,
			       "kernel table entry %s-%u..%u matches no op definition, or one another entry matched",
			       bad->type, bad->vmin, bad->vmax);
	return nplaced;
}
