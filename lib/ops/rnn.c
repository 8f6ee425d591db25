// SPDX-License-Identifier: MIT
/*
 * Recurrent cells and sequences: attributes and shape inference.
 * Kernels: ref/kernels/rnn.c.
 *
 * Cells (one time step):
 *   RNNCell   X [N, I], H [N, S], W [S, I], R [S, S], B [S]
 *   GRUCell   X, H, W [3S, I], R [3S, S], B [3S] (or [4S] with
 *             linear_before_reset) -> H' [N, S]
 *   LSTMCell  X, H, C [N, S], W [4S, I], R [4S, S], B [4S], LSTMCell-1
 *             also peepholes P [3S] -> H', C' [N, S]
 * B is optional for the cells (zero when omitted).
 *
 * Sequences (whole sequences, D = 2 when bidirectional, else 1):
 *   X [N, T, I], H [N, D, S], (LSTM: C [N, D, S]), sequence_lengths [N],
 *   W [D, G*S, I], R [D, G*S, S], B [D, G*S]  ->  Y [N, D, T, S],
 *   Ho [N, D, S] (LSTM: Co [N, D, S]).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rnn.h"

static int parse_activations(struct npr_node *n, struct npr_rnn_params *p)
{
	static const char *const names[] = { "sigmoid", "tanh", "relu" };
	const char *s = npr_attr(n, "activations"), *q;
	int cnt = 0;
	size_t i;

	if (!s)
		return 0;
	q = s;
	while (*q) {
		size_t len;

		while (*q == ' ' || *q == ',')
			q++;
		if (!*q)
			break;
		len = strcspn(q, ", ");
		if (cnt == p->nact)
			return npr_node_err(n, -EINVAL,
					    "activations=\"%.80s\": %s takes %d",
					    s, n->type, p->nact);
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i]) == len &&
			    !strncasecmp(q, names[i], len))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return npr_node_err(n, -EOPNOTSUPP,
					    "activation \"%.*s\" is not supported (sigmoid, tanh, relu are)",
					    (int)(len < 40 ? len : 40), q);
		p->act[cnt++] = (int)i;
		q += len;
	}
	if (cnt != p->nact)
		return npr_node_err(n, -EINVAL,
				    "activations=\"%.80s\": %s takes %d",
				    s, n->type, p->nact);
	return 0;
}

static int rnn_parse(struct npr_graph *g, struct npr_node *n)
{
	static const char *const dirs[] = {
		"forward", "reverse", "bidirectional", NULL,
	};
	struct npr_rnn_params *p;
	int64_t hidden;
	double clip;
	int nout, err;

	(void)g;
	free(n->params);
	n->params = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (!strncmp(n->type, "LSTM", 4)) {
		p->kind = NPR_RNN_LSTM;
		p->nact = 3;
		p->gates = 4;
		p->act[0] = NPR_RNN_SIGMOID;
		p->act[1] = p->act[2] = NPR_RNN_TANH;
	} else if (!strncmp(n->type, "GRU", 3)) {
		p->kind = NPR_RNN_GRU;
		p->nact = 2;
		p->gates = 3;
		p->act[0] = NPR_RNN_SIGMOID;
		p->act[1] = NPR_RNN_TANH;
	} else {
		p->kind = NPR_RNN_RNN;
		p->nact = 1;
		p->gates = 1;
		p->act[0] = NPR_RNN_TANH;
	}
	p->seq = strstr(n->type, "Sequence") != NULL;
	p->x = 0;
	p->h = 1;
	p->c = p->len = p->b = p->p = -1;
	{
		int k = 2;

		if (p->kind == NPR_RNN_LSTM)
			p->c = k++;
		if (p->seq)
			p->len = k++;
		p->w = k++;
		p->r = k++;
		if (n->nin > k)
			p->b = k++;
		if (n->nin > k)
			p->p = k++;
		if (p->seq && p->b < 0)
			return npr_node_err(n, -EINVAL, "input B is missing");
	}
	if (!npr_attr(n, "hidden_size"))
		return npr_node_err(n, -EINVAL, "attribute hidden_size is missing");
	err = npr_attr_int(n, "hidden_size", 0, &hidden);
	if (err)
		return err;
	if (hidden < 1 || hidden > (1 << 24))
		return npr_node_err(n, -EINVAL, "hidden_size %lld is out of range",
				    (long long)hidden);
	p->hidden = hidden;
	err = parse_activations(n, p);
	if (err)
		return err;
	err = npr_attr_float(n, "clip", 0.0, &clip);
	if (err)
		return err;
	if (!(clip >= 0))
		return npr_node_err(n, -EINVAL, "clip %g is negative", clip);
	p->clip = (float)clip;
	if (p->kind == NPR_RNN_GRU) {
		err = npr_attr_bool(n, "linear_before_reset", false,
				    &p->linear_before_reset);
		if (err)
			return err;
	}
	if (p->kind == NPR_RNN_LSTM) {
		err = npr_attr_bool(n, "input_forget", false, &p->input_forget);
		if (err)
			return err;
	}
	if (p->seq) {
		err = npr_attr_enum(n, "direction", dirs, NPR_RNN_FORWARD,
				    &p->direction);
		if (err)
			return err;
	}
	nout = (p->kind == NPR_RNN_LSTM ? 2 : 1) + p->seq;
	if (n->nout != nout)
		return npr_node_err(n, -EINVAL, "has %d outputs, %s has %d",
				    n->nout, n->type, nout);
	return 0;
}

/* Input @i must be f32 of the given dims (-1: any). */
static int check_input(struct npr_graph *g, struct npr_node *n, int i,
		       const char *what, int rank, int64_t d0, int64_t d1,
		       int64_t d2)
{
	struct npr_value *v = npr_in(g, n, i);
	struct npr_shape want = { .rank = rank, .d = { d0, d1, d2 } };
	char b1[128], b2[128];
	int k;

	if (v->type != NPR_ELEM_F32)
		return npr_node_err(n, -EINVAL, "%s must be f32, got %s", what,
				    npr_elem_name(v->type));
	if (v->shape.rank != rank)
		goto bad;
	for (k = 0; k < rank; k++)
		if (want.d[k] >= 0 && v->shape.d[k] != want.d[k])
			goto bad;
	return 0;
bad:
	return npr_node_err(n, -EINVAL, "%s has shape %s, expected %s", what,
			    npr_shape_str(&v->shape, b1, sizeof(b1)),
			    npr_shape_str(&want, b2, sizeof(b2)));
}

static void set_out(struct npr_graph *g, struct npr_node *n, int i, int rank,
		    int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
	struct npr_value *o = npr_out(g, n, i);

	o->type = NPR_ELEM_F32;
	o->shape.rank = rank;
	o->shape.d[0] = d0;
	o->shape.d[1] = d1;
	o->shape.d[2] = d2;
	o->shape.d[3] = d3;
}

static int rnn_infer(struct npr_graph *g, struct npr_node *n)
{
	struct npr_rnn_params *p = n->params;
	struct npr_value *x = npr_in(g, n, p->x);
	int64_t S = p->hidden, G = p->gates, N, T = 0, I, D = 1, nb;
	int err;

	if (p->seq) {
		struct npr_value *l = npr_in(g, n, p->len);

		if (x->shape.rank != 3)
			return npr_node_err(n, -EINVAL, "X must be [batch, seq_length, input_size]");
		N = x->shape.d[0];
		T = x->shape.d[1];
		I = x->shape.d[2];
		D = p->direction == NPR_RNN_BIDIRECTIONAL ? 2 : 1;
		err = check_input(g, n, p->x, "X", 3, N, T, I);
		if (!err)
			err = check_input(g, n, p->h, "initial_hidden_state",
					  3, N, D, S);
		if (!err && p->c >= 0)
			err = check_input(g, n, p->c, "initial_cell_state",
					  3, N, D, S);
		if (!err)
			err = check_input(g, n, p->w, "W", 3, D, G * S, I);
		if (!err)
			err = check_input(g, n, p->r, "R", 3, D, G * S, S);
		nb = (p->linear_before_reset ? G + 1 : G) * S;
		if (!err)
			err = check_input(g, n, p->b, "B", 2, D, nb, 0);
		if (!err && p->p >= 0)
			err = check_input(g, n, p->p, "P", 2, D, 3 * S, 0);
		if (err)
			return err;
		if (!npr_elem_size(l->type) || l->type == NPR_ELEM_F32 ||
		    l->type == NPR_ELEM_BOOLEAN || l->shape.rank != 1 ||
		    l->shape.d[0] != N)
			return npr_node_err(n, -EINVAL,
					    "sequence_lengths must be integers [%lld]",
					    (long long)N);
		set_out(g, n, 0, 4, N, D, T, S);
		set_out(g, n, 1, 3, N, D, S, 0);
		if (p->kind == NPR_RNN_LSTM)
			set_out(g, n, 2, 3, N, D, S, 0);
		return 0;
	}
	if (x->shape.rank != 2)
		return npr_node_err(n, -EINVAL, "X must be [batch, input_size]");
	N = x->shape.d[0];
	I = x->shape.d[1];
	err = check_input(g, n, p->x, "X", 2, N, I, 0);
	if (!err)
		err = check_input(g, n, p->h, "initial_hidden_state", 2, N, S, 0);
	if (!err && p->c >= 0)
		err = check_input(g, n, p->c, "initial_cell_state", 2, N, S, 0);
	if (!err)
		err = check_input(g, n, p->w, "W", 2, G * S, I, 0);
	if (!err)
		err = check_input(g, n, p->r, "R", 2, G * S, S, 0);
	nb = (p->linear_before_reset ? G + 1 : G) * S;
	if (!err && p->b >= 0)
		err = check_input(g, n, p->b, "B", 1, nb, 0, 0);
	if (!err && p->p >= 0)
		err = check_input(g, n, p->p, "P", 1, 3 * S, 0, 0);
	if (err)
		return err;
	set_out(g, n, 0, 2, N, S, 0, 0);
	if (p->kind == NPR_RNN_LSTM)
		set_out(g, n, 1, 2, N, S, 0, 0);
	return 0;
}

const struct npr_op_def npr_ops_rnn[] = {
	{ .type = "RNNCell", .vmin = 0, .vmax = 99, .nin_min = 4,
	  .nin_max = 5, .parse = rnn_parse, .infer = rnn_infer },
	{ .type = "GRUCell", .vmin = 3, .vmax = 99, .nin_min = 4,
	  .nin_max = 5, .parse = rnn_parse, .infer = rnn_infer },
	{ .type = "LSTMCell", .vmin = 1, .vmax = 3, .nin_min = 5,
	  .nin_max = 7, .parse = rnn_parse, .infer = rnn_infer },
	{ .type = "LSTMCell", .vmin = 4, .vmax = 99, .nin_min = 5,
	  .nin_max = 6, .parse = rnn_parse, .infer = rnn_infer },
	{ .type = "RNNSequence", .vmin = 5, .vmax = 99, .nin_min = 6,
	  .nin_max = 6, .parse = rnn_parse, .infer = rnn_infer },
	{ .type = "GRUSequence", .vmin = 5, .vmax = 99, .nin_min = 6,
	  .nin_max = 6, .parse = rnn_parse, .infer = rnn_infer },
	{ .type = "LSTMSequence", .vmin = 1, .vmax = 4, .nin_min = 7,
	  .nin_max = 8, .parse = rnn_parse, .infer = rnn_infer },
	{ .type = "LSTMSequence", .vmin = 5, .vmax = 99, .nin_min = 7,
	  .nin_max = 7, .parse = rnn_parse, .infer = rnn_infer },
	{ .type = NULL },
};
