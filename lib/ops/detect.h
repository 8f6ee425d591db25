/* SPDX-License-Identifier: MIT */
/*
 * SSD detection ops: PriorBoxClustered, PriorBox, DetectionOutput.
 */
#ifndef NPR_OPS_DETECT_H
#define NPR_OPS_DETECT_H

#include "graph.h"

#define NPR_MAX_PRIORS	64

struct npr_prior_params {
	float widths[NPR_MAX_PRIORS], heights[NPR_MAX_PRIORS];
	int nsizes;			/* PriorBoxClustered */
	float min_size[NPR_MAX_PRIORS], max_size[NPR_MAX_PRIORS];
	float ratios[NPR_MAX_PRIORS];	/* expanded aspect ratios */
	int nmin, nmax, nratio;		/* PriorBox */
	bool flip, clip, scale_all, min_max_order;
	float step, step_w, step_h, offset;
	float variance[4];
	int nvar;
	int num_priors;			/* per cell */
};

enum npr_code_type {
	NPR_CODE_CORNER, NPR_CODE_CENTER_SIZE, NPR_CODE_CORNER_SIZE,
};

struct npr_detout_params {
	int64_t num_classes;		/* from the attribute or the shapes */
	int64_t background;
	int64_t top_k, keep_top_k_attr, keep_top_k;
	int code;
	bool share_location, var_in_target, normalized, clip_before,
	     clip_after, decrease_label;
	float nms_thr, conf_thr, objectness;
	int64_t in_h, in_w;
	int64_t num_priors, prior_size, num_loc_classes;	/* by infer */
};

int npr_ref_prior_box_clustered(const struct npr_node *n,
				const struct npr_tensor *in,
				struct npr_tensor *out);
int npr_ref_prior_box(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out);
int npr_ref_detection_output(const struct npr_node *n,
			     const struct npr_tensor *in,
			     struct npr_tensor *out);

#endif /* NPR_OPS_DETECT_H */
