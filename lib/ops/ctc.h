/* SPDX-License-Identifier: MIT */
/*
 * CTC greedy decoding: CTCGreedyDecoder-1 and CTCGreedyDecoderSeqLen-6.
 * Attributes and shape inference in lib/ops/ctc.c, scalar reference
 * kernels in ref/kernels/ctc.c.
 */
#ifndef NPR_OPS_CTC_H
#define NPR_OPS_CTC_H

#include "graph/graph.h"

/**
 * struct npr_ctc_params - attributes of the CTC decoders
 * @merge: merge repeated labels (ctc_merge_repeated, merge_repeated).
 * @index_type: SeqLen: element type of the class index output.
 * @len_type: SeqLen: element type of the sequence length output.
 */
struct npr_ctc_params {
	bool merge;
	unsigned int index_type;
	unsigned int len_type;
};

#endif /* NPR_OPS_CTC_H */
