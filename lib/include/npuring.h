/* SPDX-License-Identifier: MIT */
/*
 * npuring - public C API.
 *
 * A tiny surface: open a device, drive it with npr_ioctl(), close it.  The
 * argument structs live in the uapi header; the inline npr_prep_*() helpers
 * below only fill those structs and never read library internals.
 */
#ifndef NPURING_H
#define NPURING_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <npuring/uapi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header; npr_version() gives the library's. */
#define NPURING_VERSION_MAJOR	0
#define NPURING_VERSION_MINOR	3
#define NPURING_VERSION_PATCH	0

/**
 * npr_open() - open a device
 * @name: "cpu", "cpu.N", "npu", "npu.N" or "null" (lib/backend.c).
 * @flags: must be 0.
 *
 * Return: a file descriptor (>= 0) that names the device for the other
 * calls, or -ENODEV (no such device), -EINVAL (bad flags), -ENOMEM, -EMFILE.
 * The descriptor is a real one owned by the library: close it only with
 * npr_close().
 *
 * Context: any thread.
 */
int npr_open(const char *name, unsigned int flags);

/**
 * npr_close() - close a device and destroy every object it owns
 * @fd: a descriptor from npr_open().
 *
 * Objects are destroyed in reverse order of creation.  Pointers obtained
 * with NPR_TENSOR_MAP become invalid.
 *
 * Return: 0 or -EBADF.
 * Context: no other call on @fd may be running or start afterwards.
 */
int npr_close(int fd);

/**
 * npr_ioctl() - issue a command on a device
 * @fd: a descriptor from npr_open().
 * @cmd: NPR_IOCTL_*.
 * @arg: the command's argument struct, its size field set.
 *
 * Return: >= 0 on success, or a negative errno following the validation
 * order in the uapi header.  errno is never set.  After a failure the
 * detail message is available to the same thread through
 * NPR_IOCTL_GET_ERROR (or npr_last_error()).
 *
 * Context: calls on distinct requests may run concurrently from several
 * threads; MODEL_LOAD, COMPILE and HANDLE_DESTROY serialise on the fd.
 */
int npr_ioctl(int fd, unsigned long cmd, void *arg);

/**
 * npr_last_error() - the calling thread's last failure detail
 *
 * Return: a NUL-terminated message owned by the thread, valid until the
 * thread's next failing call; "" when there was none.
 */
const char *npr_last_error(void);

/**
 * npr_elem_size() - bytes per element of a byte-addressable element type
 * Return: the size, or 0 for sub-byte and unknown types.
 */
size_t npr_elem_size(unsigned int elem_type);

/** npr_elem_name() - short name ("f32", "i64") of an element type, or "?". */
const char *npr_elem_name(unsigned int elem_type);

/**
 * npr_version() - the version of the library the program runs with
 *
 * Return: "MAJOR.MINOR.PATCH", a static string; the header a program was
 * built with gives its own in NPURING_VERSION_MAJOR, _MINOR and _PATCH.
 *
 * Context: any thread.
 */
const char *npr_version(void);

/**
 * npr_backend_at() - the name of the library's backend at @index
 * @index: 0, 1, ... in registration order.
 *
 * A program lists the devices by opening each backend by its name and
 * reading its AVAILABLE_DEVICES property (every device of the backend, as
 * npr_open() names them: "npu" for one NPU, "npu.0", "npu.1" for two).
 *
 * Return: the backend's name ("cpu", "npu", "null"), a static string, or
 * NULL past the last.
 *
 * Context: any thread.
 */
const char *npr_backend_at(unsigned int index);

/*
 * Log levels are the uapi's enum npr_log_level (NPR_LOG_ERROR,
 * NPR_LOG_WARNING, NPR_LOG_INFO, NPR_LOG_DEBUG; the LOG_LEVEL property's
 * scale).  NPR_LOG_ERR is NPR_LOG_ERROR spelt as syslog spells it.
 */
#define NPR_LOG_ERR	NPR_LOG_ERROR

/**
 * typedef npr_log_fn - receives the library's log messages
 * @priv: the pointer given to npr_set_log().
 * @level: NPR_LOG_ERROR ... NPR_LOG_DEBUG.
 * @msg: one line, NUL-terminated, without a trailing newline; valid only
 *       during the call.
 */
typedef void (*npr_log_fn)(void *priv, int level, const char *msg);

/**
 * npr_set_log() - route the library's log messages to the caller
 * @fn: the callback; NULL (the default) and the library prints nothing.
 * @priv: passed to @fn unchanged.
 * @max_level: deliver messages of this level and more important ones
 *             (NPR_LOG_WARNING: warnings and errors).  A device or
 *             compiled model whose LOG_LEVEL property is higher gets its
 *             own messages up to that level as well.
 *
 * Process-wide.  With NPR_LOG_DEBUG the failure detail that
 * npr_last_error() reports is logged as well, as each failure happens.
 * The library calls @fn from whichever thread logs, one call at a time,
 * possibly with its own locks held: @fn must not call npuring (a call it
 * makes that fails is not logged; npr_set_log() from @fn is ignored).
 * When npr_set_log() returns, the previous callback is no longer running
 * and is not called again.
 *
 * Context: any thread, also while others log.
 */
void npr_set_log(npr_log_fn fn, void *priv, int max_level);

/* Inline helpers: fill argument structs, nothing more. */

static inline void npr_prep_model_load(struct npr_model_load *a,
				       const char *xml, const char *bin)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->xml = (uintptr_t)xml;
	a->bin = (uintptr_t)bin;
}

static inline void npr_prep_model_load_mem(struct npr_model_load *a,
					   const void *xml, size_t xml_size,
					   const void *bin, size_t bin_size)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->flags = NPR_MODEL_LOAD_MEMORY;
	a->xml = (uintptr_t)xml;
	a->xml_size = xml_size;
	a->bin = (uintptr_t)bin;
	a->bin_size = bin_size;
}

static inline void npr_prep_compile(struct npr_compile *a, __u32 model)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->model = model;
}

static inline void npr_prep_req_create(struct npr_req_create *a, __u32 exec)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->exec = exec;
}

static inline void npr_prep_port_info(struct npr_port_info *a, __u32 handle,
				      __u32 index, int output,
				      char *name, __u32 name_len)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->flags = output ? NPR_PORT_OUTPUT : 0;
	a->handle = handle;
	a->index = index;
	a->name = (uintptr_t)name;
	a->name_len = name_len;
}

static inline void npr_prep_tensor(struct npr_tensor_arg *a, __u32 req,
				   __u32 index, int output,
				   void *data, size_t bytes)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->flags = output ? NPR_PORT_OUTPUT : 0;
	a->req = req;
	a->index = index;
	a->data = (uintptr_t)data;
	a->bytes = bytes;
}

static inline void npr_prep_infer(struct npr_infer *a, __u32 req)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->req = req;
}

static inline void npr_prep_destroy(struct npr_handle_destroy *a, __u32 h)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->handle = h;
}

#ifdef __cplusplus
}
#endif

#endif /* NPURING_H */
