/* SPDX-License-Identifier: MIT */
/*
 * The submission ring of a device (lib/ring/ring.c): what the ioctl table
 * (lib/dev.c) calls for RING_SETUP, SUBMIT, REAP and GET_ERROR with
 * NPR_GET_ERROR_JOB, and when the device closes.
 */
#ifndef NPR_RING_H
#define NPR_RING_H

#include <stdint.h>

#include "uapi/npuring.h"

struct npr_device;
struct npr_ring;

/**
 * npr_ring_setup() - NPR_IOCTL_RING_SETUP: the device's ring, created once
 * @dev: the device.
 * @a: the argument, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_ring_setup(struct npr_device *dev, struct npr_ring_setup *a);

/**
 * npr_ring_submit() - NPR_IOCTL_SUBMIT
 * @dev: the device.
 * @a: the argument, copied in; @a->submitted goes back whatever happens.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_ring_submit(struct npr_device *dev, struct npr_submit *a);

/**
 * npr_ring_reap() - NPR_IOCTL_REAP
 * @dev: the device.
 * @a: the argument, copied in; its outputs go back on -ETIME too.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_ring_reap(struct npr_device *dev, struct npr_reap *a);

/**
 * npr_ring_destroy() - stop the workers and free the ring, at close
 * @dev: the device; no job runs after this returns.
 */
void npr_ring_destroy(struct npr_device *dev);

/**
 * npr_ring_job_error() - GET_ERROR with NPR_GET_ERROR_JOB
 * @dev: the device.
 * @user_data: the failed job's.
 * @msg: Out. A copy of its message, freed by the caller.
 * @res: Out. Its result.
 *
 * Return: 0, or -ENOENT when no recent failure has @user_data.
 */
int npr_ring_job_error(struct npr_device *dev, uint64_t user_data,
		       char **msg, int32_t *res);

#endif /* NPR_RING_H */
