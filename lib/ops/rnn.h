/* SPDX-License-Identifier: MIT */
/*
 * Recurrent cells and sequences: RNNCell-0/3, GRUCell-3, LSTMCell-1/4,
 * RNNSequence-5, GRUSequence-5, LSTMSequence-1/5.  Attributes and shape
 * inference in lib/ops/rnn.c, scalar reference kernels in ref/kernels/rnn.c.
 *
 * Gate order follows the OpenVINO specs: LSTM "fico" (forget, input,
 * cell, output), GRU "zrh" (update, reset, hidden); LSTMCell-1 peepholes
 * are "iof".
 */
#ifndef NPR_OPS_RNN_H
#define NPR_OPS_RNN_H

#include "graph/graph.h"

enum npr_rnn_kind {
	NPR_RNN_RNN, NPR_RNN_GRU, NPR_RNN_LSTM,
};

enum npr_rnn_act {
	NPR_RNN_SIGMOID, NPR_RNN_TANH, NPR_RNN_RELU,
};

enum npr_rnn_dir {
	NPR_RNN_FORWARD, NPR_RNN_REVERSE, NPR_RNN_BIDIRECTIONAL,
};

/**
 * struct npr_rnn_params - attributes and input layout of a recurrent op
 * @kind: enum npr_rnn_kind.
 * @seq: a Sequence op (else a Cell).
 * @hidden: hidden_size.
 * @nact: number of activations the kind uses (1 RNN, 2 GRU, 3 LSTM).
 * @act: enum npr_rnn_act for f, g, h.
 * @clip: clamp gate pre-activations to [-clip, clip]; 0 for none.
 * @linear_before_reset: GRU: apply the reset gate after the recurrent
 *                       product (B then has 4 * hidden entries).
 * @input_forget: LSTM-1: couple the gates, f = 1 - i.
 * @direction: sequences: enum npr_rnn_dir.
 * @gates: gates per direction (1, 3 or 4).
 * @x, @h, @c, @len, @w, @r, @b, @p: input index of each operand, -1 when
 *                                   the op has none or it is omitted.
 */
struct npr_rnn_params {
	int kind;
	bool seq;
	int64_t hidden;
	int nact;
	int act[3];
	float clip;
	bool linear_before_reset;
	bool input_forget;
	int direction;
	int gates;
	int x, h, c, len, w, r, b, p;
};

#endif /* NPR_OPS_RNN_H */
