/* SPDX-License-Identifier: MIT */
/*
 * Internal interface between the ring (ring.c) and its LOAD job (load.c).
 */
#ifndef NPR_RING_LOAD_H
#define NPR_RING_LOAD_H

#include <stdint.h>
#include <liburing.h>

struct npr_device;

int npr_ring_load(struct npr_device *dev, struct io_uring *ring,
		  const char *path, uint32_t *h);

#endif /* NPR_RING_LOAD_H */
