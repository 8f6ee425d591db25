// SPDX-License-Identifier: MIT
/*
 * The caller's argument structs: copy-in and copy-out with the uapi's size
 * rules, the flags and reserved checks in the uapi's validation order, and
 * the -EMSGSIZE contract of caller buffers.  Used by the ioctl table
 * (lib/dev.c), the command handlers and the ring's jobs that carry an
 * ioctl's argument struct (lib/ring/ring.c).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "graph/graph.h"
#include "uarg.h"

/**
 * npr_uarg_in() - copy the caller's struct into a zeroed library copy
 * @karg: Out. The copy, @ksize bytes.
 * @ksize: the struct's size in this library.
 * @v1: the smallest size a caller may pass.
 * @uarg: the caller's struct; its first __u32 is its size.
 * @usize: Out. The caller's size, for npr_uarg_out().
 *
 * Fields past the caller's size read 0; bytes past @ksize must be zero.
 *
 * Return: 0; -EINVAL for a NULL @uarg or a size below @v1; -E2BIG for a
 * non-zero byte past @ksize (in that order).
 */
int npr_uarg_in(void *karg, size_t ksize, size_t v1, const void *uarg,
		uint32_t *usize)
{
	uint32_t us;
	size_t i;

	if (!uarg)
		return npr_err(-EINVAL, "argument pointer is NULL");
	memcpy(&us, uarg, sizeof(us));
	if (us < v1)
		return npr_err(-EINVAL,
			       "argument size %u is smaller than %zu", us, v1);
	for (i = ksize; i < us; i++)
		if (((const unsigned char *)uarg)[i])
			return npr_err(-E2BIG,
				       "argument has non-zero bytes past the %zu this library knows",
				       ksize);
	memset(karg, 0, ksize);
	memcpy(karg, uarg, us < ksize ? us : ksize);
	*usize = us;
	return 0;
}

/**
 * npr_uarg_out() - copy the outputs back to the caller's struct
 * @uarg: the caller's struct.
 * @karg: the library copy.
 * @ksize: its size.
 * @usize: the caller's size (npr_uarg_in()): no byte past it is written,
 *         nor the size field itself.
 */
void npr_uarg_out(void *uarg, const void *karg, size_t ksize,
		  uint32_t usize)
{
	size_t n = usize < ksize ? usize : ksize;

	if (n > 4)
		memcpy((char *)uarg + 4, (const char *)karg + 4, n - 4);
}

/**
 * npr_check_flags() - refuse flag bits this library does not know
 * @flags: the argument's flags.
 * @known: the bits the command knows.
 *
 * Return: 0 or -EOPNOTSUPP.
 */
int npr_check_flags(uint32_t flags, uint32_t known)
{
	if (flags & ~known)
		return npr_err(-EOPNOTSUPP, "unknown flag bits 0x%x",
			       flags & ~known);
	return 0;
}

/**
 * npr_check_reserved() - refuse a reserved field that is not zero
 * @v: the field.
 *
 * Return: 0 or -EINVAL.
 */
int npr_check_reserved(uint32_t v)
{
	if (v)
		return npr_err(-EINVAL, "reserved field is not zero");
	return 0;
}

/**
 * npr_check_args() - flags, then the reserved word: the uapi's order
 * @flags: the argument's flags.
 * @known: the bits the command knows.
 * @reserved: the reserved field.
 *
 * Return: 0, -EOPNOTSUPP or -EINVAL.
 */
int npr_check_args(uint32_t flags, uint32_t known, uint32_t reserved)
{
	int err = npr_check_flags(flags, known);

	return err ? err : npr_check_reserved(reserved);
}

/**
 * npr_put_bytes() - copy @n bytes to a user buffer with the -EMSGSIZE
 * contract: *@len becomes @n; a missing or short buffer is -EMSGSIZE
 * @p: the bytes.
 * @n: how many.
 * @ptr: the user buffer, or 0 to ask for the size.
 * @len: In: its size.  Out: @n.
 *
 * Return: 0, -EMSGSIZE, or -EOVERFLOW when @n does not fit a __u32.
 */
int npr_put_bytes(const void *p, size_t n, uint64_t ptr, uint32_t *len)
{
	uint32_t have = *len;

	if (n > UINT32_MAX)
		return npr_err(-EOVERFLOW, "value too long");
	*len = (uint32_t)n;
	if (!ptr || have < n)
		return npr_err(-EMSGSIZE, "buffer of %u bytes, %zu needed",
			       have, n);
	memcpy((void *)(uintptr_t)ptr, p, n);
	return 0;
}

/**
 * npr_put_string() - npr_put_bytes() for a NUL-terminated string
 * @s: the string.
 * @ptr: the user buffer, or 0 to ask for the size.
 * @len: In: its size.  Out: strlen(@s) + 1.
 *
 * A short buffer gets the string cut, with a NUL.
 *
 * Return: as npr_put_bytes().
 */
int npr_put_string(const char *s, uint64_t ptr, uint32_t *len)
{
	size_t need = strlen(s) + 1;
	uint32_t have = *len;

	if (ptr && have && have < need) {
		memcpy((void *)(uintptr_t)ptr, s, have - 1);
		((char *)(uintptr_t)ptr)[have - 1] = 0;
	}
	return npr_put_bytes(s, need, ptr, len);
}

/*
 * Jobs that carry an ioctl's argument struct (IMPORT, EXPORT, the
 * variables): the ring copies and checks the struct like the ioctl's at
 * submission (steps 1-4 of the validation order), runs the job on a
 * worker, and writes the outputs back before it posts the completion.
 */
static const struct npr_uarg_job jobs[] = {
	{ NPR_OP_IMPORT, NPR_IOCTL_IMPORT, NPR_UARG_IMPORT },
	{ NPR_OP_EXPORT, NPR_IOCTL_EXPORT, NPR_UARG_EXPORT },
	{ NPR_OP_STATE_GET, NPR_IOCTL_STATE_GET, NPR_UARG_STATE },
	{ NPR_OP_STATE_SET, NPR_IOCTL_STATE_SET, NPR_UARG_STATE },
	{ NPR_OP_STATE_RESET, NPR_IOCTL_STATE_RESET, NPR_UARG_STATE },
};

/**
 * npr_uarg_job() - the argument struct a ring job of opcode @op carries
 * @op: enum npr_op.
 *
 * Return: its description, or NULL when jobs of @op carry none.
 */
const struct npr_uarg_job *npr_uarg_job(unsigned int op)
{
	size_t i;

	for (i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++)
		if (jobs[i].op == op)
			return &jobs[i];
	return NULL;
}

/**
 * npr_uarg_job_in() - copy in and check a job's argument struct
 * @ja: what the job carries (npr_uarg_job()).
 * @uarg: the caller's struct (the SQE's addr).
 * @karg: Out. The library's copy, @ja->ksize bytes.
 * @usize: Out. The size the caller declared.
 *
 * The checks of the ioctl itself up to its flags and reserved fields;
 * the rest is the command's, when the job runs.
 *
 * Return: 0, or the errors of npr_uarg_in(), npr_check_args() and
 * npr_check_flags().
 */
int npr_uarg_job_in(const struct npr_uarg_job *ja, const void *uarg,
		    void *karg, uint32_t *usize)
{
	const struct npr_state_arg *st = karg;
	const struct npr_import *im = karg;
	const struct npr_export *ex = karg;
	int err;

	err = npr_uarg_in(karg, ja->ksize, ja->v1, uarg, usize);
	if (err)
		return err;
	switch (ja->cmd) {
	case NPR_IOCTL_IMPORT:
		return npr_check_args(im->flags, 0, im->reserved);
	case NPR_IOCTL_EXPORT:
		return npr_check_args(ex->flags, 0, ex->reserved);
	default:
		return npr_check_flags(st->flags,
				       ja->cmd == NPR_IOCTL_STATE_RESET ?
				       NPR_STATE_RESET_ALL :
				       ja->cmd == NPR_IOCTL_STATE_SET ?
				       NPR_STATE_TRUNCATE : 0);
	}
}
