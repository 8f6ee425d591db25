/* SPDX-License-Identifier: MIT */
/*
 * The caller's argument structs (lib/uarg.c): copying them in and out with
 * the size rules of the uapi, the flags and reserved checks, and writing
 * bytes and strings to caller buffers with the -EMSGSIZE contract.
 */
#ifndef NPR_UARG_H
#define NPR_UARG_H

#include <stddef.h>
#include <stdint.h>

#ifndef offsetofend
#define offsetofend(TYPE, MEMBER) \
	(offsetof(TYPE, MEMBER) + sizeof(((TYPE *)0)->MEMBER))
#endif

/*
 * An argument struct as a table entry: its size in this library and the
 * smallest size a caller may pass, the end of its last version-1 field.
 */
#define NPR_UARG(TYPE, LAST_V1) sizeof(TYPE), offsetofend(TYPE, LAST_V1)

/*
 * The structs both the ioctl table (lib/dev.c) and the ring's jobs that
 * carry one (npr_uarg_job()) copy in: said once, here.
 */
#define NPR_UARG_IMPORT	NPR_UARG(struct npr_import, reserved)
#define NPR_UARG_EXPORT	NPR_UARG(struct npr_export, bytes)
#define NPR_UARG_STATE	NPR_UARG(struct npr_state_arg, bytes)

/**
 * struct npr_uarg_job - an ioctl's argument struct that a ring job carries
 * @op: NPR_OP_IMPORT, NPR_OP_EXPORT or one of NPR_OP_STATE_*.
 * @cmd: the ioctl whose struct it is.
 * @ksize: the struct's size in this library.
 * @v1: the smallest size a caller may pass.
 */
struct npr_uarg_job {
	unsigned int op;
	unsigned long cmd;
	size_t ksize, v1;
};

const struct npr_uarg_job *npr_uarg_job(unsigned int op);
int npr_uarg_job_in(const struct npr_uarg_job *ja, const void *uarg,
		    void *karg, uint32_t *usize);
int npr_uarg_in(void *karg, size_t ksize, size_t v1, const void *uarg,
		uint32_t *usize);
void npr_uarg_out(void *uarg, const void *karg, size_t ksize,
		  uint32_t usize);
int npr_check_flags(uint32_t flags, uint32_t known);
int npr_check_reserved(uint32_t v);
int npr_check_args(uint32_t flags, uint32_t known, uint32_t reserved);
int npr_put_bytes(const void *p, size_t n, uint64_t ptr, uint32_t *len);
int npr_put_string(const char *s, uint64_t ptr, uint32_t *len);

#endif /* NPR_UARG_H */
