/* SPDX-License-Identifier: MIT */
/*
 * Internal interface between the ring (ring.c) and its LOAD job (load.c).
 */
#ifndef NPR_RING_LOAD_H
#define NPR_RING_LOAD_H

#include <stdint.h>
#include <liburing.h>

struct npr_device;

/**
 * npr_ring_load() - the LOAD job: a model file read and added as a model
 * @dev: the device.
 * @ring: the worker's io_uring for the reads, NULL to read with pread().
 *        Nothing else may be in flight on it; a CQE that is not one of
 *        the reads (a wake-up) is consumed and ignored.
 * @path: the model's path.
 * @h: the new model handle.
 *
 * Return: 0 or -errno with a message naming the file.
 */
int npr_ring_load(struct npr_device *dev, struct io_uring *ring,
		  const char *path, uint32_t *h);

#endif /* NPR_RING_LOAD_H */
