// SPDX-License-Identifier: MIT
/*
 * A stateful decoder on the NPU, as OpenVINO's NPU LLM pipeline runs one:
 * the model (its KV cache made state, its token and past dimensions
 * dynamic) compiled twice with static shapes by lib/passes/kvwindow.c,
 *
 *   prefill   MAX_PROMPT_LEN tokens, a KV window of as many positions;
 *             the prompt padded on the right, length input 0;
 *   generate  one token, a window of MAX_PROMPT_LEN + MIN_RESPONSE_LEN
 *             positions, the length input the tokens so far,
 *
 * each an ordinary static graph of backend.c whose variables stay in its
 * argument buffers (state_on_device).  After a prefill the prompt's KV
 * positions go from the prefill graph's variable buffers to the generate
 * graph's by zeCommandListAppendMemoryCopy on the generate graph's queue,
 * device buffer to device buffer, one copy per head and variable.
 *
 * The request layer keeps the variables that grow as on every device: the
 * new positions of each inference are read back from the generate
 * graph's buffers into the state outputs (O(new tokens)), so STATE_GET
 * answers, STATE_RESET starts a new prompt and truncating a variable
 * rolls the window back; a variable set longer than the window holds is
 * refused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if __has_include(<level_zero/ze_api.h>) && !defined(NPR_NO_LEVEL_ZERO)
#include "npu.h"
#include "passes/compile.h"
#include "passes/kvwindow.h"
#include "tensor.h"

enum { PREFILL, GENERATE, PARTS };

/* one growing variable: its window buffers in each part */
struct llm_var {
	int var;		/* the parent graph's variable */
	int arg[PARTS];		/* the part's read_value argument */
	int axis;
	size_t outer, row;	/* positions are rows of @row elements */
	unsigned int type[PARTS];	/* the argument's element type */
};

struct npu_llm {
	struct npr_exec *part[PARTS];
	int64_t cap[PARTS];	/* window positions */
	int64_t tokens[PARTS];
	int ids;		/* the parts' token input port */
	int length;		/* the parts' length input port */
	int logits;		/* the parts' (and the parent's) output port */
	int nvar;
	struct llm_var *var;
};

struct llm_request {
	struct npr_request *part[PARTS];
	ze_command_list_handle_t copies;
	ze_fence_handle_t fence;
	int64_t len;		/* positions the generate window holds */
};

static bool grows(const struct npr_graph *g, int *n)
{
	int i;

	*n = 0;
	for (i = 0; i < g->nvars; i++)
		*n += g->vars[i].append_axis >= 0;
	return *n > 0;
}

/**
 * npr_npu_llm_wanted() - whether COMPILE gave a decoder to run as two
 * static graphs
 * @ex: the exec being compiled.
 *
 * Return: true for a model with dynamic input dimensions and variables
 * that grow, compiled from a model (not imported).
 */
bool npr_npu_llm_wanted(const struct npr_exec *ex)
{
	int n;

	return ex->dyn_inputs && ex->src && grows(ex->g, &n);
}

static void part_free(struct npr_exec *p)
{
	int i;

	if (!p)
		return;
	npr_npu_part_destroy(p);
	for (i = 0; p->in && i < p->nin; i++)
		free(p->in[i].name);
	for (i = 0; p->out && i < p->nout; i++)
		free(p->out[i].name);
	free(p->in);
	free(p->out);
	npr_graph_free(p->g);
	free(p);
}

/* Ports of a part's compiled graph @c, named as lib/model.c names them. */
static int part_ports(struct npr_exec *p, const struct npr_graph *c)
{
	int i;

	p->nin = c->ninputs;
	p->nout = c->noutputs;
	p->in = calloc(p->nin + 1, sizeof(*p->in));
	p->out = calloc(p->nout + 1, sizeof(*p->out));
	if (!p->in || !p->out)
		return -ENOMEM;
	for (i = 0; i < p->nin + p->nout; i++) {
		bool out = i >= p->nin;
		int k = out ? i - p->nin : i;
		struct npr_port *pt = out ? &p->out[k] : &p->in[k];
		int node = out ? c->outputs[k] : c->inputs[k];
		int v = out ? c->nodes[node].in[0] : c->nodes[node].out[0];
		bool hidden = out ? k >= c->noutputs - c->nstate_out :
				    k >= c->ninputs - c->nstate_in;
		const char *name = c->nodes[node].name;

		if (!hidden && c->vals[v].name)
			name = c->vals[v].name;
		else if (!hidden && out)
			name = c->nodes[c->vals[v].producer].name;
		pt->name = strdup(name);
		if (!pt->name)
			return -ENOMEM;
		pt->value = v;
		pt->type = c->vals[v].type;
		pt->shape = c->vals[v].shape;
		pt->bytes = npr_tensor_bytes(pt->type,
					     npr_shape_numel(&pt->shape));
	}
	return 0;
}

/* One static graph: the model windowed, compiled, given to the driver. */
static int part_compile(struct npr_exec *ex, struct npu_llm *l, int which)
{
	struct npr_graph *s = npr_graph_clone(ex->src), *c = NULL;
	struct npr_shape *shapes = NULL;
	struct npr_exec *p;
	int i, err, n;

	if (!s)
		return -ENOMEM;
	err = npr_pass_kv_window(s, l->tokens[which], l->cap[which]);
	if (err >= 0 && (grows(ex->g, &n), err != n))
		err = npr_err(-EOPNOTSUPP, "npu: %d of the model's %d growing variables have a window",
			      err, n);
	if (err < 0)
		goto out;
	shapes = calloc(s->ninputs, sizeof(*shapes));
	err = -ENOMEM;
	if (!shapes)
		goto out;
	for (i = 0; i < s->ninputs; i++)
		shapes[i].rank = -1;
	shapes[l->ids].rank = 2;
	shapes[l->ids].d[0] = 1;
	shapes[l->ids].d[1] = l->tokens[which];
	err = npr_compile_graph(s, shapes, ex->g->fold, &c);
	if (!err)
		err = npr_compile_as_written(s, c);
	if (err)
		goto out;
	n = npr_graph_dynamic(c);
	if (n >= 0) {
		err = npr_node_err(&c->nodes[n], -EOPNOTSUPP,
				   "npu: the %s graph of the decoder keeps a dynamic shape",
				   which == PREFILL ? "prefill" : "generate");
		goto out;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		err = -ENOMEM;
		goto out;
	}
	l->part[which] = p;
	p->refs = 1;
	p->dev = ex->dev;
	p->props = ex->props;
	p->g = c;
	c = NULL;
	err = part_ports(p, p->g);
	if (err)
		goto out;
	p->src = s;
	err = npr_npu_part_compile(p);
	p->src = NULL;
	if (!err)
		((struct npu_exec *)p->priv)->state_on_device = true;
out:
	free(shapes);
	npr_graph_free(c);
	npr_graph_free(s);
	return err < 0 ? err : 0;
}

/* Each growing variable's window argument in both parts. */
static int map_vars(struct npr_exec *ex, struct npu_llm *l)
{
	const struct npr_graph *g = ex->g;
	int i, w, k, n = 0;

	grows(g, &n);
	l->var = calloc(n, sizeof(*l->var));
	if (!l->var)
		return -ENOMEM;
	for (i = 0; i < g->nvars; i++) {
		const struct npr_variable *v = &g->vars[i];
		struct llm_var *lv = &l->var[l->nvar];

		if (v->append_axis < 0)
			continue;
		lv->var = i;
		lv->axis = v->append_axis;
		lv->outer = 1;
		lv->row = 1;
		for (k = 0; k < v->shape.rank; k++) {
			if (k < lv->axis)
				lv->outer *= v->shape.d[k];
			else if (k > lv->axis)
				lv->row *= v->shape.d[k];
		}
		for (w = 0; w < PARTS; w++) {
			const struct npr_exec *p = l->part[w];
			const struct npu_exec *ne = p->priv;
			uint32_t a;

			lv->arg[w] = -1;
			for (a = 0; a < ne->nargs; a++) {
				const struct npu_arg *ar = &ne->arg[a];

				if (ar->var >= 0 && !ar->out &&
				    !strcmp(p->g->vars[ar->var].id, v->id) &&
				    ar->numel == lv->outer * lv->row *
						 (size_t)l->cap[w]) {
					lv->arg[w] = (int)a;
					lv->type[w] = ar->type;
				}
			}
			if (lv->arg[w] < 0)
				return npr_err(-EPROTO, "npu: the %s graph has no window argument of variable %s",
					       w == PREFILL ? "prefill" :
					       "generate", v->id);
		}
		l->nvar++;
	}
	return 0;
}

/**
 * npr_npu_llm_compile() - a decoder as a prefill and a generate graph
 * @ex: the exec: its graph has dynamic inputs and variables that grow,
 *      ex->src the model as written.
 *
 * Return: 0 or -errno with npr_err() set.
 */
int npr_npu_llm_compile(struct npr_exec *ex)
{
	const struct npr_graph *g = ex->g;
	struct npu_exec *ne;
	struct npu_llm *l;
	int err, w;

	if (ex->nin - g->nstate_in != 1 || ex->nout - g->nstate_out != 1 ||
	    ex->in[0].shape.rank != 2)
		return npr_err(-EOPNOTSUPP, "npu: a decoder with dynamic shapes needs one input, the token ids [batch, tokens], and one output, the logits [batch, tokens, vocabulary]; this one has %d inputs and %d outputs",
			       ex->nin - g->nstate_in,
			       ex->nout - g->nstate_out);
	ne = calloc(1, sizeof(*ne));
	l = calloc(1, sizeof(*l));
	if (!ne || !l) {
		free(ne);
		free(l);
		return -ENOMEM;
	}
	pthread_mutex_init(&ne->lock, NULL);
	ne->llm = l;
	ex->priv = ne;
	l->tokens[PREFILL] = ex->props.max_prompt_len;
	l->cap[PREFILL] = ex->props.max_prompt_len;
	l->tokens[GENERATE] = 1;
	l->cap[GENERATE] = (int64_t)ex->props.max_prompt_len +
			   ex->props.min_response_len;
	l->ids = 0;
	l->length = 1;
	l->logits = 0;
	for (w = 0; w < PARTS; w++) {
		err = part_compile(ex, l, w);
		if (err)
			return err;
		if (strcmp(l->part[w]->in[l->length].name,
			   NPR_KV_LENGTH_INPUT))
			return npr_err(-EPROTO, "npu: the decoder's length input is not where it was put");
	}
	err = map_vars(ex, l);
	if (err)
		return err;
	ex->be_exec_bytes = l->part[0]->be_exec_bytes +
			    l->part[1]->be_exec_bytes;
	ex->be_req_bytes = l->part[0]->be_req_bytes +
			   l->part[1]->be_req_bytes;
	return 0;
}

/**
 * npr_npu_llm_destroy() - free what npr_npu_llm_compile() made
 * @ex: the exec.
 */
void npr_npu_llm_destroy(struct npr_exec *ex)
{
	struct npu_exec *ne = ex->priv;
	struct npu_llm *l = ne->llm;
	int w;

	for (w = 0; w < PARTS; w++)
		part_free(l->part[w]);
	free(l->var);
	free(l);
	pthread_mutex_destroy(&ne->lock);
	free(ne);
	ex->priv = NULL;
}

static void part_request_free(struct npr_request *r)
{
	int i;

	if (!r)
		return;
	npr_npu_part_request_destroy(r);
	for (i = 0; r->in && i < r->ex->nin; i++)
		free(r->in[i].data);
	for (i = 0; r->out && i < r->ex->nout; i++)
		free(r->out[i].data);
	free(r->in);
	free(r->out);
	free(r->bo_in);
	free(r->bo_out);
	free(r);
}

static int part_request(struct npr_exec *p, struct npr_request **out)
{
	struct npr_request *r = calloc(1, sizeof(*r));
	int i;

	*out = r;
	if (!r)
		return -ENOMEM;
	r->ex = p;
	r->in = calloc(p->nin + 1, sizeof(*r->in));
	r->out = calloc(p->nout + 1, sizeof(*r->out));
	r->bo_in = calloc(p->nin + 1, sizeof(*r->bo_in));
	r->bo_out = calloc(p->nout + 1, sizeof(*r->bo_out));
	if (!r->in || !r->out || !r->bo_in || !r->bo_out)
		return -ENOMEM;
	for (i = 0; i < p->nin + p->nout; i++) {
		bool o = i >= p->nin;
		const struct npr_port *pt = o ? &p->out[i - p->nin] : &p->in[i];
		struct npr_tensor *t = o ? &r->out[i - p->nin] : &r->in[i];

		t->type = pt->type;
		t->shape = pt->shape;
		t->nbytes = pt->bytes;
		t->data = calloc(1, pt->bytes ? pt->bytes : 1);
		if (!t->data)
			return -ENOMEM;
	}
	return npr_npu_part_request(r);
}

/**
 * npr_npu_llm_request() - a request of a decoder: one of each graph
 * @rq: the request.
 *
 * Return: 0 or -errno with npr_err() set.
 */
int npr_npu_llm_request(struct npr_request *rq)
{
	struct npu_device *nd = rq->ex->dev->priv;
	struct npu_llm *l = ((struct npu_exec *)rq->ex->priv)->llm;
	const struct npu_exec *gen = l->part[GENERATE]->priv;
	ze_command_list_desc_t ld = {
		.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
	};
	ze_fence_desc_t fd = { .stype = ZE_STRUCTURE_TYPE_FENCE_DESC };
	struct llm_request *lr = calloc(1, sizeof(*lr));
	ze_result_t r;
	int w, err;

	if (!lr)
		return -ENOMEM;
	rq->priv = lr;
	for (w = 0; w < PARTS; w++) {
		err = part_request(l->part[w], &lr->part[w]);
		if (err)
			return err;
	}
	r = npr_ze.CommandListCreate(nd->ctx, nd->dev, &ld, &lr->copies);
	if (r) {
		lr->copies = NULL;
		return ZE_FAIL(r, "zeCommandListCreate");
	}
	r = npr_ze.FenceCreate(gen->queue, &fd, &lr->fence);
	if (r) {
		lr->fence = NULL;
		return ZE_FAIL(r, "zeFenceCreate");
	}
	return 0;
}

/**
 * npr_npu_llm_request_destroy() - free what npr_npu_llm_request() made
 * @rq: the request.
 */
void npr_npu_llm_request_destroy(struct npr_request *rq)
{
	struct llm_request *lr = rq->priv;
	int w;

	if (!lr)
		return;
	if (lr->fence)
		npr_ze.FenceDestroy(lr->fence);
	if (lr->copies)
		npr_ze.CommandListDestroy(lr->copies);
	for (w = 0; w < PARTS; w++)
		part_request_free(lr->part[w]);
	free(lr);
	rq->priv = NULL;
}

static void *window(const struct npr_request *part, const struct llm_var *v,
		    int w)
{
	const struct npu_request *nr = part->priv;

	return nr->buf[v->arg[w]];
}

/*
 * The prompt's @n positions of every variable from the prefill graph's
 * windows into the generate graph's: device copies on its queue.
 */
static int copy_prompt(struct npr_request *rq, int64_t n)
{
	struct npu_llm *l = ((struct npu_exec *)rq->ex->priv)->llm;
	const struct npu_exec *gen = l->part[GENERATE]->priv;
	struct llm_request *lr = rq->priv;
	ze_result_t r;
	int k;

	r = npr_ze.CommandListReset(lr->copies);
	for (k = 0; k < l->nvar && !r; k++) {
		const struct llm_var *v = &l->var[k];
		size_t es = npr_elem_size(v->type[PREFILL]), o;
		char *src = window(lr->part[PREFILL], v, PREFILL);
		char *dst = window(lr->part[GENERATE], v, GENERATE);

		if (v->type[PREFILL] != v->type[GENERATE])
			return npr_err(-EPROTO, "npu: the prefill and generate graphs keep variable %s in different types",
				       rq->ex->g->vars[v->var].id);
		for (o = 0; o < v->outer && !r; o++)
			r = npr_ze.CommandListAppendMemoryCopy(lr->copies,
				dst + o * l->cap[GENERATE] * v->row * es,
				src + o * l->cap[PREFILL] * v->row * es,
				(size_t)n * v->row * es, NULL, 0, NULL);
	}
	if (!r)
		r = npr_ze.CommandListClose(lr->copies);
	if (!r)
		r = npr_ze.FenceReset(lr->fence);
	if (!r)
		r = npr_ze.CommandQueueExecuteCommandLists(gen->queue, 1,
							   &lr->copies,
							   lr->fence);
	if (!r)
		r = npr_ze.FenceHostSynchronize(lr->fence, UINT64_MAX);
	return r ? ZE_FAIL(r, "copying the KV cache to the generate graph") :
		   0;
}

/* Run part @w on tokens @ids[0..count) at length @len. */
static int run_part(struct npr_request *rq, int w, const struct npr_tensor *ids,
		    int64_t from, int64_t count, int64_t len)
{
	struct npu_llm *l = ((struct npu_exec *)rq->ex->priv)->llm;
	struct npr_request *p = ((struct llm_request *)rq->priv)->part[w];
	struct npr_tensor *t = &p->in[l->ids];
	size_t es = npr_elem_size(ids->type);
	int err;

	memset(t->data, 0, t->nbytes);
	err = npr_convert(t->data, t->type, (const char *)ids->data + from * es,
			  ids->type, count);
	if (err)
		return npr_err(err, "npu: token ids of type %s",
			       npr_elem_name(ids->type));
	err = npr_convert(p->in[l->length].data, p->in[l->length].type, &len,
			  NPR_ELEM_I64, 1);
	return err ? err : npr_npu_part_infer(p);
}

/* Logits rows [0, @count) of part @w into the output's rows from @at. */
static int put_logits(struct npr_request *rq, int w, int64_t count,
		      int64_t at)
{
	struct npu_llm *l = ((struct npu_exec *)rq->ex->priv)->llm;
	const struct npr_tensor *s =
		&((struct llm_request *)rq->priv)->part[w]->out[l->logits];
	struct npr_tensor *t = &rq->out[l->logits];
	int64_t vocab = s->shape.d[2];

	return npr_convert((char *)t->data + at * vocab *
			   npr_elem_size(t->type), t->type, s->data, s->type,
			   count * vocab);
}

/* The new positions [@from, @from + @n) into the state outputs. */
static int put_state(struct npr_request *rq, int64_t from, int64_t n)
{
	struct npu_llm *l = ((struct npu_exec *)rq->ex->priv)->llm;
	struct llm_request *lr = rq->priv;
	int k, err;

	for (k = 0; k < l->nvar; k++) {
		const struct llm_var *v = &l->var[k];
		const struct npr_variable *var = &rq->ex->g->vars[v->var];
		struct npr_shape s = var->shape;
		const char *src = window(lr->part[GENERATE], v, GENERATE);
		size_t es = npr_elem_size(v->type[GENERATE]), o, ts;
		struct npr_tensor *t;

		s.d[v->axis] = n;
		err = npr_request_out_shape(rq, var->state_out, &s);
		if (err)
			return err;
		t = &rq->out[var->state_out];
		ts = npr_elem_size(t->type);
		for (o = 0; o < v->outer && !err; o++)
			err = npr_convert((char *)t->data + o * n * v->row * ts,
					  t->type, src + (o * l->cap[GENERATE] +
					  from) * v->row * es,
					  v->type[GENERATE], n * v->row);
		if (err)
			return err;
	}
	return 0;
}

/**
 * npr_npu_llm_infer() - one step of a decoder
 * @rq: the request; its token ids [1, n].  With no past (a new request or
 *      after STATE_RESET) they are the prompt, run by the prefill graph;
 *      else each runs the generate graph in turn.
 *
 * Return: 0; -EINVAL for a batch other than 1 or a prompt longer than
 * MAX_PROMPT_LEN; -ENOSPC past MAX_PROMPT_LEN + MIN_RESPONSE_LEN
 * positions; -EOPNOTSUPP for variables set longer than the window holds;
 * or the driver's error.
 */
int npr_npu_llm_infer(struct npr_request *rq)
{
	struct npu_llm *l = ((struct npu_exec *)rq->ex->priv)->llm;
	struct llm_request *lr = rq->priv;
	const struct npr_tensor *ids = &rq->in[l->ids];
	const struct npr_variable *v0 = &rq->ex->g->vars[l->var[0].var];
	int64_t n = ids->shape.d[1], past, i;
	struct npr_shape s;
	int err;

	past = rq->in[v0->state_in].shape.d[v0->append_axis];
	if (ids->shape.rank != 2 || ids->shape.d[0] != 1 || n < 1)
		return npr_err(-EINVAL, "npu: the decoder takes token ids of shape [1, n >= 1]");
	if (!past && n > l->tokens[PREFILL])
		return npr_err(-EINVAL, "npu: a prompt of %lld tokens is longer than MAX_PROMPT_LEN (%lld)",
			       (long long)n, (long long)l->tokens[PREFILL]);
	if (past + n > l->cap[GENERATE])
		return npr_err(-ENOSPC, "npu: %lld tokens after %lld are past the context of MAX_PROMPT_LEN + MIN_RESPONSE_LEN = %lld positions",
			       (long long)n, (long long)past,
			       (long long)l->cap[GENERATE]);
	if (past > lr->len)
		return npr_err(-EOPNOTSUPP, "npu: the variables hold %lld positions, the decoder's window %lld: a variable set from outside is not taken",
			       (long long)past, (long long)lr->len);
	s.rank = 3;
	s.d[0] = 1;
	s.d[1] = n;
	s.d[2] = l->part[GENERATE]->out[l->logits].shape.d[2];
	err = npr_request_out_shape(rq, l->logits, &s);
	if (err)
		return err;
	lr->len = past;		/* a truncated variable rolls back */
	if (!past) {
		err = run_part(rq, PREFILL, ids, 0, n, 0);
		if (!err)
			err = put_logits(rq, PREFILL, n, 0);
		if (!err)
			err = copy_prompt(rq, n);
		if (err)
			return err;
		lr->len = n;
	} else {
		for (i = 0; i < n; i++) {
			err = run_part(rq, GENERATE, ids, i, 1, lr->len);
			if (!err)
				err = put_logits(rq, GENERATE, 1, i);
			if (err)
				return err;
			lr->len++;
		}
	}
	return put_state(rq, past, n);
}

#endif
