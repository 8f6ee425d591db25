/* SPDX-License-Identifier: MIT */
/*
 * SSD detection ops: PriorBoxClustered-1, PriorBox-1/-8 and
 * DetectionOutput-1/-8.  Attributes and shape inference in
 * lib/ops/detect.c, scalar reference kernels in ref/kernels/detect.c.
 */
#ifndef NPR_OPS_DETECT_H
#define NPR_OPS_DETECT_H

#include "graph/graph.h"

/* Most values an attribute list of these ops may hold. */
#define NPR_PRIOR_MAX		64

/**
 * struct npr_prior_clustered_params - PriorBoxClustered attributes
 * @width: box widths in pixels, @nsizes of them.
 * @height: box heights in pixels, as many as @width.
 * @nsizes: boxes per feature map cell.
 * @clip: clamp every coordinate to [0, 1].
 * @step: distance between cell centres, used when @step_w and @step_h are 0.
 * @step_w: horizontal distance between cell centres, 0 when not given.
 * @step_h: vertical distance between cell centres, 0 when not given.
 * @offset: position of a box centre inside its cell, in cells.
 * @img_w: image width overriding input 1, 0 when not given.
 * @img_h: image height overriding input 1, 0 when not given.
 * @variance: the values of the second output row.
 * @nvariance: 1 (one value for all four coordinates) or 4.
 */
struct npr_prior_clustered_params {
	float width[NPR_PRIOR_MAX];
	float height[NPR_PRIOR_MAX];
	int nsizes;
	bool clip;
	float step, step_w, step_h, offset;
	float img_w, img_h;
	float variance[4];
	int nvariance;
};

/**
 * struct npr_prior_box_params - PriorBox attributes
 * @min_size: box sizes in pixels (fractions of the image height when
 *            !@scale_all_sizes).
 * @max_size: second square box of size sqrt(min * max), one per min_size;
 *            ignored when !@scale_all_sizes.
 * @ratio: aspect ratios in output order: 1 first, then each distinct
 *         attribute value followed by its inverse when @flip.
 * @fixed_size: box sizes in pixels of the density mode.
 * @fixed_ratio: aspect ratios of the density mode.
 * @density: per fixed_size, the square root of the number of box centres
 *           in a cell.
 * @nmin, @nmax, @nratio, @nfixed_size, @nfixed_ratio, @ndensity: counts.
 * @flip: add the inverse of every aspect ratio.
 * @clip: clamp every coordinate to [0, 1].
 * @scale_all_sizes: false selects the MXNet layout (see ref/kernels/detect.c).
 * @min_max_order: emit [min, max, ratios] (Caffe) rather than
 *                 [min, ratios, max] (PriorBox-8 only; always true for -1).
 * @step: distance between cell centres in pixels, 0: image size / map size.
 * @offset: position of a box centre inside its cell, in cells.
 * @variance: the values of the second output row.
 * @nvariance: 1 or 4.
 * @num_priors: boxes per feature map cell, what the kernel writes.
 */
struct npr_prior_box_params {
	float min_size[NPR_PRIOR_MAX];
	float max_size[NPR_PRIOR_MAX];
	float ratio[2 * NPR_PRIOR_MAX + 1];
	float fixed_size[NPR_PRIOR_MAX];
	float fixed_ratio[NPR_PRIOR_MAX];
	float density[NPR_PRIOR_MAX];
	int nmin, nmax, nratio, nfixed_size, nfixed_ratio, ndensity;
	bool flip, clip, scale_all_sizes, min_max_order;
	float step, offset;
	float variance[4];
	int nvariance;
	int64_t num_priors;
};

enum npr_box_code {
	NPR_BOX_CORNER,
	NPR_BOX_CENTER_SIZE,
	NPR_BOX_CORNER_SIZE,
};

/**
 * struct npr_detection_output_params - DetectionOutput attributes
 * @num_classes: classes; the attribute of DetectionOutput-1, or set by
 *               infer from the input shapes when @derive_classes.
 * @derive_classes: DetectionOutput-8: @num_classes comes from the shapes.
 * @background: background class, -1 when there is none (a value past the
 *              last class also means none).
 * @top_k: candidates per class entering NMS (all candidates with MXNet
 *         NMS), -1 for all.
 * @keep_top_k: detections per image kept after NMS (the first value of the
 *              attribute list), -1 for all.
 * @code: enum npr_box_code, how box logits encode a box.
 * @share_location: one box per prior for all classes.
 * @variance_encoded: the logits already include the prior variances.
 * @normalized: priors are in [0, 1] coordinates; otherwise they are in
 *              pixels of @input_width x @input_height with a leading
 *              fifth value per prior.
 * @clip_before_nms: clamp decoded boxes to [0, 1] before NMS.
 * @clip_after_nms: clamp the output boxes to [0, 1].
 * @decrease_label_id: MXNet-style NMS (one class per prior, labels
 *                     reported minus one).
 * @nms_threshold: IoU above which a box is suppressed.
 * @confidence_threshold: scores at or below it are ignored.
 * @objectness_score: with 5 inputs, priors whose objectness is below it
 *                    count as background.
 * @input_width, @input_height: image size for non-normalized priors.
 * @num_priors: priors per image, by infer.
 * @num_loc_classes: 1 when @share_location, else @num_classes; by infer.
 * @prior_size: 4 or 5 values per prior, by infer.
 * @rows: output rows per image, by infer.
 *
 * Output rows are grouped per image, then by label ascending, then by
 * score descending; unused rows are [-1, 0, 0, 0, 0, 0, 0].
 */
struct npr_detection_output_params {
	int64_t num_classes;
	bool derive_classes;
	int64_t background;
	int64_t top_k, keep_top_k;
	int code;
	bool share_location, variance_encoded, normalized;
	bool clip_before_nms, clip_after_nms, decrease_label_id;
	float nms_threshold, confidence_threshold, objectness_score;
	float input_width, input_height;
	int64_t num_priors, num_loc_classes, prior_size, rows;
};

/**
 * struct npr_region_yolo_params - RegionYolo-0 attributes
 * @coords: box coordinates per anchor (x and y get a sigmoid).
 * @classes: class scores per anchor.
 * @num: anchors per cell (with do_softmax).
 * @nmask: entries of mask: anchors per cell without do_softmax.
 * @do_softmax: softmax over the class scores (else a sigmoid), and the
 *              output flattened from @axis to @end_axis.
 * @axis, @end_axis: as written; normalised by infer into @ax, @end.
 * @ax, @end: normalised flatten range.
 */
struct npr_region_yolo_params {
	int64_t coords, classes, num;
	int nmask;
	bool do_softmax;
	int64_t axis, end_axis;
	int ax, end;
};

/**
 * struct npr_roi_pooling_params - ROIPooling-2 attributes
 * @pooled_h, @pooled_w: output size per ROI.
 * @spatial_scale: feature map size over image size (method max).
 * @bilinear: method "bilinear" (ROI coordinates normalised to [0, 1]).
 */
struct npr_roi_pooling_params {
	int64_t pooled_h, pooled_w;
	float spatial_scale;
	bool bilinear;
};

enum npr_roi_align_mode {
	NPR_ROI_ALIGN_ASYMMETRIC,
	NPR_ROI_ALIGN_HALF_PIXEL_FOR_NN,
	NPR_ROI_ALIGN_HALF_PIXEL,
};

/**
 * struct npr_roi_align_params - ROIAlign-3/-9 attributes
 * @pooled_h, @pooled_w: output size per ROI.
 * @sampling_ratio: samples per bin and axis, 0 for ceil(roi / pooled).
 * @spatial_scale: feature map size over image size.
 * @max: mode "max" (else "avg").
 * @aligned: enum npr_roi_align_mode (ROIAlign-9; asymmetric before).
 */
struct npr_roi_align_params {
	int64_t pooled_h, pooled_w, sampling_ratio;
	float spatial_scale;
	bool max;
	int aligned;
};

/**
 * struct npr_prior_emitter - where npr_prior_box_cell() puts boxes
 * @dst: [n][4] f32 box corners, or NULL to count only.
 * @n: boxes emitted so far.
 * @inv_w, @inv_h: 1 / image width, 1 / image height.
 */
struct npr_prior_emitter {
	float *dst;
	int64_t n;
	float inv_w, inv_h;
};

void npr_prior_box_cell(struct npr_prior_emitter *e,
			const struct npr_prior_box_params *p,
			const float *min_size, float cx, float cy);
int64_t npr_prior_box_count(const struct npr_prior_box_params *p);

#endif /* NPR_OPS_DETECT_H */
