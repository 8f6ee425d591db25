// SPDX-License-Identifier: MIT
/*
 * Plans per input shape signature: the CPU backend's side of dynamic
 * input dimensions.
 *
 * An exec whose inputs have dynamic dimensions (-1 in its ports) is
 * compiled once, as every exec: its graph has the nodes that depend on
 * those dimensions with dynamic shapes, and everything that does not
 * (constant subgraphs, weights in their compute type) folded.  Nothing is
 * planned then.  At an inference, the shapes of the request's inputs
 * (the signature) pick a plan from a small cache, least recently used
 * first out, of CPU_RUNTIME_CACHE_CAPACITY entries; a miss makes one:
 *
 *   a view of the exec's graph (npr_graph_view(): its own nodes and
 *   values over the exec's strings, arrays and constants), the inputs'
 *   shapes set, every live node
 *   parsed and inferred again with folding (so that ShapeOf chains and
 *   the Reshape targets they feed become constants), dead nodes marked;
 *   then the same planning as a static exec (npr_cpu_plan_graph(): fast
 *   convolutions and fusion, in-place Concats, batch groups, arena).
 *
 * So a signature runs as fast as a static compile of those shapes, and a
 * miss costs a shape inference and a plan of the graph, never a parse of
 * the model.  What is left value-dependent stays a dynamic step
 * (ref/dynamic.c).
 *
 * A request keeps its memory laid out for the last signature it ran and
 * holds a reference to that plan, so an entry evicted while a request
 * uses it lives until the request moves on; the request's arena grows
 * (never shrinks) and is kept across signatures.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "object.h"
#include "ops/infer.h"
#include "passes/lmfuse.h"
#include "sys.h"
#include "tensor.h"
#include "cpu.h"
#include "dynamic.h"
#include "plan.h"
#include "poly.h"
#include "signature.h"
#include "state.h"

/**
 * struct ref_sig - the plan of one input shape signature
 * @in: per input of the exec, its shape.
 * @re: the plan; @re->g the graph inferred for @in (owned).
 * @poly: planned for every length of the growing variables (ref/poly.c):
 *        @in's lengths are those of the first.
 * @refs: the cache's (while listed) and each request's laid out for it.
 * @used: when last used (struct ref_sigs @clock).
 * @next: the cache's list.
 */
struct ref_sig {
	struct npr_shape *in;
	struct ref_exec *re;
	bool poly;
	int refs;
	uint64_t used;
	struct ref_sig *next;
};

/**
 * struct ref_sigs - an exec's plan cache
 * @lock: guards the list and the references (requests run concurrently).
 * @list: the entries kept, at most @cap.
 * @n: their number.
 * @clock: counts the lookups, for @used.
 * @cap: CPU_RUNTIME_CACHE_CAPACITY of the exec.
 * @no_poly: a plan for every length failed its check once: plans per
 *           signature only from then on.
 */
struct ref_sigs {
	pthread_mutex_t lock;
	struct ref_sig *list;
	int n;
	uint64_t clock;
	int cap;
	bool no_poly;
};

static void sig_free(struct npr_exec *ex, struct ref_sig *s)
{
	struct npr_graph *g = s->re ? s->re->g : NULL;

	if (s->re)
		npr_cpu_plan_free(ex, s->re);
	npr_graph_free(g);
	free(s->in);
	free(s);
}

/**
 * npr_cpu_sig_init() - an empty plan cache for an exec with dynamic
 * input dimensions
 * @ex: the exec; its props give the capacity.
 * @re: its plan (re->g = ex->g), which stays without steps.
 *
 * The exec's budget counts what does not depend on the shapes: the
 * request's tensor per value and step I/O arrays; arenas and plans are
 * sized per signature at run time (npr_request_grow() for the arena).
 *
 * Return: 0 or -ENOMEM.
 */
int npr_cpu_sig_init(struct npr_exec *ex, struct ref_exec *re)
{
	const struct npr_graph *g = ex->g;
	struct ref_sigs *c;
	int i;

	re->off = malloc(sizeof(size_t) * (g->nvals ? g->nvals : 1));
	c = calloc(1, sizeof(*c));
	if (!c || !re->off) {
		free(c);
		return -ENOMEM;
	}
	for (i = 0; i < g->nvals; i++)
		re->off[i] = SIZE_MAX;
	pthread_mutex_init(&c->lock, NULL);
	c->cap = (int)ex->props.runtime_cache_capacity;
	re->sigs = c;
	/* every node's ports: the plans of all signatures fit */
	for (i = 0; i < g->nnodes; i++) {
		if (g->nodes[i].nin > re->max_in)
			re->max_in = g->nodes[i].nin;
		if (g->nodes[i].nout > re->max_out)
			re->max_out = g->nodes[i].nout;
	}
	ex->be_exec_bytes = 0;
	ex->be_req_bytes = npr_alloc_cost(sizeof(struct ref_request)) +
			   npr_alloc_cost((uint64_t)g->nvals *
					  sizeof(struct npr_tensor)) +
			   npr_alloc_cost((uint64_t)(re->max_in + 1) *
					  sizeof(struct npr_tensor)) +
			   npr_alloc_cost((uint64_t)(re->max_out + 1) *
					  sizeof(struct npr_tensor));
	return 0;
}

/**
 * npr_cpu_sig_fini() - free the plan cache
 * @ex: the exec, going away (no request is left).
 * @re: its plan; nothing happens without a cache.
 */
void npr_cpu_sig_fini(struct npr_exec *ex, struct ref_exec *re)
{
	struct ref_sigs *c = re->sigs;

	if (!c)
		return;
	while (c->list) {
		struct ref_sig *s = c->list;

		c->list = s->next;
		sig_free(ex, s);
	}
	pthread_mutex_destroy(&c->lock);
	free(c);
	re->sigs = NULL;
}

/**
 * npr_cpu_sig_put() - drop a reference to a signature's plan
 * @ex: its exec.
 * @s: the plan; freed with its last reference.
 */
void npr_cpu_sig_put(struct npr_exec *ex, struct ref_sig *s)
{
	struct ref_sigs *c = ((struct ref_exec *)ex->priv)->sigs;
	bool last;

	pthread_mutex_lock(&c->lock);
	last = !--s->refs;
	pthread_mutex_unlock(&c->lock);
	if (last)
		sig_free(ex, s);
}

static bool sig_match(const struct npr_exec *ex, const struct ref_sig *s,
		      const struct npr_request *rq)
{
	int i;

	if (s->poly)
		return npr_cpu_poly_match(ex, s->in, rq);
	for (i = 0; i < ex->nin; i++)
		if (!npr_shape_eq(&s->in[i], &rq->in[i].shape))
			return false;
	return true;
}

/*
 * @out: a view of the exec's graph (a clone when it has bodies: their
 * infer changes them) inferred for the input shapes @in, its dead nodes
 * marked.
 */
static int sig_view(struct npr_exec *ex, const struct npr_shape *in,
		    struct npr_graph **out)
{
	struct npr_graph *g;
	int i, err = 0;

	g = npr_graph_view(ex->g);
	if (!g)
		g = npr_graph_clone_shared(ex->g);
	if (!g)
		return -ENOMEM;
	for (i = 0; i < ex->nin; i++)
		g->vals[ex->in[i].value].shape = in[i];
	/* the clone's params are not parsed; the dead nodes need none */
	for (i = 0; i < g->nnodes && !err; i++) {
		struct npr_node *n = &g->nodes[i];

		if (!n->dead && n->op->parse)
			err = n->op->parse(g, n);
	}
	if (!err)
		err = npr_infer_graph(g, false, true);
	if (!err)
		err = npr_infer_mark_dead(g);
	if (err) {
		npr_graph_free(g);
		return err;
	}
	*out = g;
	return 0;
}

/*
 * With @poly, which values of @g depend on the growing variables'
 * lengths (@cls, @ps): 1, or 0 when the graph cannot be planned for
 * every length.
 */
static int sig_classify(struct npr_exec *ex, struct ref_sig *s,
			const struct npr_graph *g, unsigned char *cls,
			struct npr_shape *ps)
{
	struct npr_shape *in2;
	struct npr_graph *g2;
	int r = 0;

	in2 = malloc(sizeof(*in2) * (ex->nin ? ex->nin : 1));
	if (!in2)
		return -ENOMEM;
	/* a length the model refuses (past its positions): no plan */
	if (g->view && npr_cpu_poly_shapes(ex, s->in, in2) &&
	    !sig_view(ex, in2, &g2)) {
		r = npr_cpu_poly_classify(ex, g, g2, cls, ps);
		npr_graph_free(g2);
	}
	free(in2);
	return r;
}

/*
 * Plan @s->re for the shapes @s->in: inferred again, fused
 * (lib/passes/lmfuse.c), planned.  With @poly, for every length of the
 * growing variables when the graph allows (ref/poly.c): then @s->poly;
 * -EAGAIN when it turned out not to after the graph was changed.
 */
static int sig_plan(struct npr_exec *ex, struct ref_sig *s, bool poly)
{
	struct ref_exec *re = ex->priv;
	struct npr_shape *ps = NULL;
	unsigned char *cls = NULL;
	bool *was_dead = NULL;
	struct npr_graph *g;
	int i, err;

	err = sig_view(ex, s->in, &g);
	if (err)
		return err;
	s->re->g = g;
	if (poly) {
		cls = malloc(g->nvals ? g->nvals : 1);
		ps = malloc(sizeof(*ps) * (g->nvals ? g->nvals : 1));
		was_dead = malloc(sizeof(*was_dead) *
				  (g->nnodes ? g->nnodes : 1));
		err = cls && ps && was_dead ?
		      sig_classify(ex, s, g, cls, ps) : -ENOMEM;
		poly = err > 0;
		for (i = 0; poly && i < g->nnodes; i++)
			was_dead[i] = g->nodes[i].dead;
	}
	/* the patterns have shapes now (MatMul weights: at compile) */
	if (err >= 0 && g->view)
		err = npr_pass_lmfuse(g, re->fuse, NULL);
	if (err >= 0 && poly) {
		err = npr_cpu_poly_apply(ex, g, cls, ps, was_dead,
					 &s->re->poly);
		if (!err)
			err = -EAGAIN;
	}
	free(cls);
	free(ps);
	free(was_dead);
	if (err >= 0)
		err = npr_cpu_plan_graph(ex, s->re);
	/* the growing variables read where they lie, at any length; no
	 * batch groups (their slices are planned) */
	if (poly && !err && s->re->gsteps)
		err = -EAGAIN;
	for (i = 0; poly && !err && i < ex->nin; i++)
		if (npr_cpu_poly_grows(ex, i) &&
		    !npr_cpu_state_in_place(s->re, i))
			err = -EAGAIN;
	s->poly = poly && !err;
	if (s->poly && !re->no_share)
		err = npr_cpu_poly_share(ex, s->re);
	return err;
}

/*
 * A new plan for the shapes of @rq's inputs: the exec's graph inferred
 * again for them, then planned; for every length of the growing
 * variables when it can (the request's are in blocks, and the cache
 * keeps plans).
 */
static int sig_make(struct npr_request *rq, struct ref_sig **out)
{
	struct npr_exec *ex = rq->ex;
	struct ref_sigs *c = ((struct ref_exec *)ex->priv)->sigs;
	struct ref_sig *s;
	bool poly;
	int i, err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->refs = 1;
	s->in = malloc(sizeof(*s->in) * (ex->nin ? ex->nin : 1));
	s->re = calloc(1, sizeof(*s->re));
	if (!s->in || !s->re) {
		sig_free(ex, s);
		return -ENOMEM;
	}
	for (i = 0; i < ex->nin; i++)
		s->in[i] = rq->in[i].shape;
	poly = c->cap > 0 && !__atomic_load_n(&c->no_poly, __ATOMIC_RELAXED) &&
	       npr_cpu_poly_match(ex, s->in, rq);
	err = sig_plan(ex, s, poly);
	if (err == -EAGAIN) {
		/* planned for this signature alone after all */
		npr_graph_free(s->re->g);
		npr_cpu_plan_free(ex, s->re);
		s->re = calloc(1, sizeof(*s->re));
		err = s->re ? sig_plan(ex, s, false) : -ENOMEM;
	}
	if (err) {
		char b[128], *msg;

		err = npr_err_default(err, 0);
		msg = strdup(npr_last_error());
		npr_err(err, "input shape %s%s: %s",
			npr_shape_str(&s->in[0], b, sizeof(b)),
			ex->nin > 1 ? ", ..." : "", msg ? msg : "");
		free(msg);
		sig_free(ex, s);
		return err;
	}
	__atomic_add_fetch(&ex->plan_misses, 1, __ATOMIC_RELAXED);
	*out = s;
	return 0;
}

/* The plan for @rq's input shapes, referenced: from the cache, or new. */
static int sig_get(struct npr_request *rq, struct ref_sig **out)
{
	struct npr_exec *ex = rq->ex;
	struct ref_sigs *c = ((struct ref_exec *)ex->priv)->sigs;
	struct ref_sig *s, *old, **pp, **lru;
	int err;

	pthread_mutex_lock(&c->lock);
	for (s = c->list; s; s = s->next)
		if (sig_match(ex, s, rq))
			break;
	if (s) {
		s->refs++;
		s->used = ++c->clock;
	}
	pthread_mutex_unlock(&c->lock);
	if (s) {
		*out = s;
		return 0;
	}
	/* planned unlocked: other signatures run meanwhile */
	err = sig_make(rq, &s);
	if (err)
		return err;
	pthread_mutex_lock(&c->lock);
	s->used = ++c->clock;
	if (c->cap > 0) {
		/* the cache's reference; room made by the least recent */
		s->refs++;
		s->next = c->list;
		c->list = s;
		c->n++;
		while (c->n > c->cap) {
			lru = &c->list;
			for (pp = &c->list; *pp; pp = &(*pp)->next)
				if ((*pp)->used < (*lru)->used)
					lru = pp;
			old = *lru;
			*lru = old->next;
			c->n--;
			__atomic_add_fetch(&ex->plan_evictions, 1,
					   __ATOMIC_RELAXED);
			if (!--old->refs) {
				pthread_mutex_unlock(&c->lock);
				sig_free(ex, old);
				pthread_mutex_lock(&c->lock);
			}
		}
	}
	pthread_mutex_unlock(&c->lock);
	*out = s;
	return 0;
}

/*
 * Lay @rr out for plan @s: the arena grown if need be (within the
 * model's memory budget), the tensors, the dynamic steps' copies.
 */
static int sig_bind(struct npr_request *rq, struct ref_request *rr,
		    struct ref_sig *s)
{
	const struct ref_exec *re = s->re;
	int err;

	npr_cpu_dyn_destroy(rr, rq->ex->g);
	if (re->arena_bytes > rr->arena_cap || !rr->arena) {
		/* by a quarter at least: a growing sequence (decoding)
		 * does not reallocate at every step */
		size_t want = re->arena_bytes, more = rr->arena_cap / 4;
		void *p;

		if (want - rr->arena_cap < more && rr->arena_cap)
			want = rr->arena_cap + more;
		err = npr_request_grow(rq, rr->arena_cap, want,
				       "the activations of these input shapes");
		if (err && want > re->arena_bytes) {
			want = re->arena_bytes;
			err = npr_request_grow(rq, rr->arena_cap, want,
					       "the activations of these input shapes");
		}
		if (err)
			return err;
		p = npr_alloc(want);
		if (!p)
			return -ENOMEM;
		free(rr->arena);
		rr->arena = p;
		rr->arena_cap = want;
	}
	npr_cpu_req_views(re, rr);
	return re->ndyn ? npr_cpu_dyn_create(re, rr, re->g) : 0;
}

/* No more plans for every length: those in the cache are dropped. */
static void sig_drop_poly(struct npr_exec *ex)
{
	struct ref_sigs *c = ((struct ref_exec *)ex->priv)->sigs;
	struct ref_sig **pp, *s, *gone = NULL;

	pthread_mutex_lock(&c->lock);
	__atomic_store_n(&c->no_poly, true, __ATOMIC_RELAXED);
	for (pp = &c->list; (s = *pp);) {
		if (!s->poly) {
			pp = &s->next;
			continue;
		}
		*pp = s->next;
		c->n--;
		if (!--s->refs) {
			s->next = gone;
			gone = s;
		}
	}
	pthread_mutex_unlock(&c->lock);
	while ((s = gone)) {
		gone = s->next;
		sig_free(ex, s);
	}
}

/**
 * npr_cpu_sig_infer() - one inference of an exec with dynamic input
 * dimensions
 * @rq: the request; its inputs' shapes are static (lib/request.c).
 *
 * Finds or makes the plan of the inputs' shapes, lays the request out
 * for it when it ran other shapes last, and runs it (npr_cpu_run()).
 * With a capacity of 0 the plan is dropped afterwards.
 *
 * Context: the request's thread; requests run concurrently.
 * Return: 0 or -errno with a message (a shape the model cannot take
 * names the layer; -EFBIG past NPR_MAX_MODEL_MEMORY_MB).
 */
int npr_cpu_sig_infer(struct npr_request *rq)
{
	struct npr_exec *ex = rq->ex;
	struct ref_request *rr = rq->priv;
	struct ref_sig *s;
	int err;

	err = sig_get(rq, &s);
	if (err)
		return err;
	if (s != rr->sig) {
		if (rr->sig)
			npr_cpu_sig_put(ex, rr->sig);
		rr->sig = s;
		err = sig_bind(rq, rr, s);
		if (err) {
			/* laid out for nothing: bind again next time */
			npr_cpu_dyn_destroy(rr, ex->g);
			rr->sig = NULL;
			npr_cpu_sig_put(ex, s);
			return err;
		}
	} else {
		npr_cpu_sig_put(ex, s);	/* the request holds one already */
	}
	err = npr_cpu_run(rq, s->re, rr);
	if (err == -ESTALE && s->poly) {
		/* a length the plan does not take: nothing was committed;
		 * plans per signature from now on */
		sig_drop_poly(ex);
		npr_cpu_dyn_destroy(rr, ex->g);
		rr->sig = NULL;
		npr_cpu_sig_put(ex, s);
		return npr_cpu_sig_infer(rq);
	}
	if (!((struct ref_exec *)ex->priv)->sigs->cap) {
		npr_cpu_dyn_destroy(rr, ex->g);
		rr->sig = NULL;
		npr_cpu_sig_put(ex, s);
	}
	return err;
}
