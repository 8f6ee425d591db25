/* SPDX-License-Identifier: MIT */
/*
 * The scalar reference kernels of the detection ops (ref/kernels/detect.c);
 * their params structs are in lib/ops/detect.h, which parse and infer fill.
 * The table npr_kernels_detect[] ties them to the op definitions
 * (ref/kernels/registry.c).
 */
#ifndef NPR_REF_KERNELS_DETECT_H
#define NPR_REF_KERNELS_DETECT_H

#include "ops/detect.h"

int npr_ref_prior_box_clustered(const struct npr_node *n,
				const struct npr_tensor *in,
				struct npr_tensor *out);
int npr_ref_prior_box(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out);
int npr_ref_region_yolo(const struct npr_node *n,
			const struct npr_tensor *in, struct npr_tensor *out);
int npr_ref_roi_pooling(const struct npr_node *n,
			const struct npr_tensor *in, struct npr_tensor *out);
int npr_ref_roi_align(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out);
int npr_ref_detection_output(const struct npr_node *n,
			     const struct npr_tensor *in,
			     struct npr_tensor *out);

#endif /* NPR_REF_KERNELS_DETECT_H */
