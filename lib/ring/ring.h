/* SPDX-License-Identifier: MIT */
/*
 * The submission ring of a device (lib/ring/ring.c, reap.c): what the
 * ioctl table (lib/dev.c) calls for RING_SETUP, SUBMIT, REAP, RING_RECORD
 * and GET_ERROR with NPR_GET_ERROR_JOB, and when the device closes.
 */
#ifndef NPR_RING_H
#define NPR_RING_H

#include <stdint.h>

#include "uapi/npuring.h"

struct npr_device;
struct npr_ring;

int npr_ring_setup(struct npr_device *dev, struct npr_ring_setup *a);

int npr_ring_submit(struct npr_device *dev, struct npr_submit *a);

int npr_ring_reap(struct npr_device *dev, struct npr_reap *a);

int npr_ring_record(struct npr_device *dev, struct npr_ring_record *a);

void npr_ring_destroy(struct npr_device *dev);

int npr_ring_job_error(struct npr_device *dev, uint64_t user_data,
		       char **msg, int32_t *res);

#endif /* NPR_RING_H */
