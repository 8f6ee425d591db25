/* SPDX-License-Identifier: MIT */
/*
 * Request commands (lib/request.c): requests, their tensors, INFER, the
 * variables of stateful models, profiles and buffer objects; the ioctl
 * handlers the table in lib/dev.c calls with the argument copied in and
 * its size checked, and the entry points of the ring's INFER and STATE_*
 * jobs.
 */
#ifndef NPR_REQUEST_H
#define NPR_REQUEST_H

#include <stdint.h>

#include "uapi/npuring.h"

struct npr_device;
struct npr_request;

int npr_request_create_ioctl(struct npr_device *dev, void *arg);
int npr_request_set_tensor_ioctl(struct npr_device *dev, void *arg);
int npr_request_get_tensor_ioctl(struct npr_device *dev, void *arg);
int npr_request_infer_ioctl(struct npr_device *dev, void *arg);
int npr_request_profile_ioctl(struct npr_device *dev, void *arg);
int npr_state_info_ioctl(struct npr_device *dev, void *arg);
int npr_state_get_ioctl(struct npr_device *dev, void *arg);
int npr_state_set_ioctl(struct npr_device *dev, void *arg);
int npr_state_reset_ioctl(struct npr_device *dev, void *arg);
int npr_bo_create_ioctl(struct npr_device *dev, void *arg);
int npr_bo_info_ioctl(struct npr_device *dev, void *arg);
int npr_bo_bind_ioctl(struct npr_device *dev, void *arg);

int npr_request_infer(struct npr_request *rq, uint64_t deadline_ns);
struct npr_infer_done;
int npr_request_infer_async(struct npr_request *rq,
			    const struct npr_infer_done *done);
int npr_request_infer_end(struct npr_request *rq, int err,
			  uint64_t deadline_ns, uint64_t end);
int npr_request_state(struct npr_request *rq, struct npr_state_arg *a,
		      unsigned long cmd);
int npr_request_acquire(struct npr_device *dev, uint32_t h,
			struct npr_request **rq);
void npr_request_hold(struct npr_device *dev, struct npr_request *rq);
void npr_request_release(struct npr_device *dev, struct npr_request *rq);

#endif /* NPR_REQUEST_H */
