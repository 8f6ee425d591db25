// SPDX-License-Identifier: MIT
/*
 * Graph construction, cloning and topological sort.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "graph.h"

/**
 * npr_weights_get() - take a reference on a blob
 * @b: the weights store, or NULL
 *
 * Context: any thread; the count is atomic.
 *
 * Return: @b.
 */
struct npr_weights *npr_weights_get(struct npr_weights *b)
{
	if (b)
		__atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
	return b;
}

/**
 * npr_weights_put() - drop a reference on a blob
 * @b: the weights store, or NULL
 *
 * The last reference unmaps a mapped store or frees a heap one, and frees
 * @b.
 *
 * Context: any thread; the count is atomic.
 */
void npr_weights_put(struct npr_weights *b)
{
	if (!b || __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL))
		return;
	if (b->mapped) {
		if (b->size)
			munmap(b->data, b->size);
	} else {
		free(b->data);
	}
	free(b);
}

/**
 * npr_graph_drop_pages() - let a constant's file pages leave memory
 * @g: the graph whose weights store @p may be in.
 * @p: the constant's bytes.
 * @n: their size.
 *
 * When @p..@p+@n lies in a mapped weights store (a read-only private file
 * mapping, never written), the whole pages inside it are unmapped from
 * the process with MADV_DONTNEED: they no longer count in its resident
 * memory, and a later read faults them back in from the page cache or
 * the file, with the same bytes.  Partial pages at either end are kept
 * (a neighbour may still be read).  Anything else (heap data, another
 * blob) is left alone.  For a constant nothing reads for a while: a
 * backend holding it in its own form, a compile that made its own copy.
 */
void npr_graph_drop_pages(const struct npr_graph *g, const void *p, size_t n)
{
	const struct npr_weights *b = g ? g->weights : NULL;
	uintptr_t lo = (uintptr_t)p, hi, pg;
	long ps;

	if (!b || !b->mapped || !p || !n || lo < (uintptr_t)b->data ||
	    n > b->size || lo - (uintptr_t)b->data > b->size - n)
		return;
	ps = sysconf(_SC_PAGESIZE);
	pg = ps > 0 ? (uintptr_t)ps : 4096;
	hi = (lo + n) & ~(pg - 1);
	lo = (lo + pg - 1) & ~(pg - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/**
 * npr_graph_drop_weights() - let all of a mapped weights store leave memory
 * @g: the graph; nothing happens unless g->weights is a mapped store.
 *
 * npr_graph_drop_pages() over the whole mapping, for when a compile is done:
 * fault-around maps pages beside the ones a compile reads (parts of
 * constants already dropped), and whatever a kernel still reads from the
 * file faults back in on first use.
 */
void npr_graph_drop_weights(const struct npr_graph *g)
{
	const struct npr_weights *b = g ? g->weights : NULL;
	long ps = sysconf(_SC_PAGESIZE);
	size_t pg = ps > 0 ? (size_t)ps : 4096;

	/* the mapping covers the file's last page whole */
	if (b && b->mapped && b->size)
		madvise(b->data, (b->size + pg - 1) & ~(pg - 1),
			MADV_DONTNEED);
}

/**
 * npr_graph_new() - an empty graph
 *
 * Return: a zeroed graph, freed with npr_graph_free(); NULL if out of
 * memory.
 */
struct npr_graph *npr_graph_new(void)
{
	return calloc(1, sizeof(struct npr_graph));
}

static void body_fini(struct npr_body *b)
{
	npr_graph_free(b->g);
	free(b->ports);
	free(b->back);
}

/**
 * npr_graph_str_borrowed() - does @s lie in the memory of @g's weights?
 * @g: the graph.
 * @s: one of its strings.
 *
 * A graph read from a blob (lib/store/blob.c) keeps its names, op types and
 * attributes where they are in the blob, which its weights reference
 * keeps alive; every other string of a graph is its own heap copy.  A
 * frontend's strings never lie in its weights (a mapped .bin or .onnx:
 * they are parsed out of the XML or the protobuf into the heap).
 */
bool npr_graph_str_borrowed(const struct npr_graph *g, const char *s)
{
	uintptr_t p = (uintptr_t)s, b;

	if (!g->weights || !s)
		return false;
	b = (uintptr_t)g->weights->data;
	return p >= b && p - b < g->weights->size;
}

/**
 * npr_graph_free_str() - free a string of a graph
 * @g: the graph
 * @s: one of its strings, or NULL
 *
 * A string borrowed from the blob (npr_graph_str_borrowed()) is left
 * alone; any other is freed.  Use this, never free(), to replace or remove
 * a graph's string.
 */
void npr_graph_free_str(const struct npr_graph *g, char *s)
{
	if (!npr_graph_str_borrowed(g, s))
		free(s);
}

/*
 * The arena: a graph read from a blob gets its nodes' input, output and
 * attribute arrays from a few large blocks instead of three allocations
 * per node.
 */
struct npr_arena {
	struct npr_arena *next;
	size_t used, size;
	max_align_t data[];
};

#define ARENA_BLOCK	(32u << 10)
#define ARENA_ALIGN	16

/**
 * npr_graph_alloc() - zeroed memory that lives as long as the graph
 * @g: the graph
 * @n: bytes wanted
 *
 * Carved from the graph's arena (32 KiB blocks, larger requests get a
 * block of their own) and freed by npr_graph_free() only.
 *
 * Return: @n zeroed bytes, 16-byte aligned; NULL if out of memory.
 */
void *npr_graph_alloc(struct npr_graph *g, size_t n)
{
	struct npr_arena *a = g->arena;
	void *p;

	n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (!n)
		n = ARENA_ALIGN;
	if (!a || a->size - a->used < n) {
		size_t size = n > ARENA_BLOCK ? n : ARENA_BLOCK;

		if (n > SIZE_MAX / 2)
			return NULL;
		a = malloc(sizeof(*a) + size);
		if (!a)
			return NULL;
		a->used = 0;
		a->size = size;
		a->next = g->arena;
		g->arena = a;
	}
	p = (char *)a->data + a->used;
	a->used += n;
	return memset(p, 0, n);
}

static void arena_free(struct npr_graph *g)
{
	while (g->arena) {
		struct npr_arena *a = g->arena;

		g->arena = a->next;
		free(a);
	}
}

static void node_fini(const struct npr_graph *g, struct npr_node *n)
{
	int i;

	for (i = 0; i < n->nbodies; i++)
		body_fini(&n->bodies[i]);
	free(n->bodies);

	npr_graph_free_str(g, n->name);
	npr_graph_free_str(g, n->type);
	if (!(n->packed & NPR_NODE_PACKED_IN))
		free(n->in);
	if (!(n->packed & NPR_NODE_PACKED_OUT))
		free(n->out);
	for (i = 0; i < n->nattr; i++) {
		npr_graph_free_str(g, n->attr[i].key);
		npr_graph_free_str(g, n->attr[i].val);
	}
	if (!(n->packed & NPR_NODE_PACKED_ATTR))
		free(n->attr);
	free(n->params);
}

/**
 * npr_graph_free() - free a graph and everything it owns
 * @g: the graph, or NULL
 *
 * Frees its nodes (with their params and bodies), values and their owned
 * data, strings not borrowed from the blob, variables and arena, and drops
 * its reference on the weights store.
 */
void npr_graph_free(struct npr_graph *g)
{
	int i;

	if (!g)
		return;
	if (g->view) {
		for (i = 0; i < g->nnodes; i++)
			free(g->nodes[i].params);
		for (i = 0; i < g->nvals; i++)
			free(g->vals[i].owned);
		free(g->nodes);
		free(g->vals);
		arena_free(g);
		free(g);
		return;
	}
	for (i = 0; i < g->nnodes; i++)
		node_fini(g, &g->nodes[i]);
	for (i = 0; i < g->nvals; i++) {
		free(g->vals[i].owned);
		npr_graph_free_str(g, g->vals[i].name);
	}
	free(g->nodes);
	free(g->vals);
	free(g->inputs);
	free(g->outputs);
	npr_graph_free_str(g, g->name);
	for (i = 0; i < g->nvars; i++)
		npr_graph_free_str(g, g->vars[i].id);
	free(g->vars);
	arena_free(g);
	npr_weights_put(g->weights);
	free(g);
}

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void *dup_array(const void *p, size_t n, size_t sz)
{
	void *d;

	if (!p || !n)
		return NULL;
	d = malloc(n * sz);
	if (d)
		memcpy(d, p, n * sz);
	return d;
}

/* Deep copy of the bodies of @s into @d (whose bodies field is a copy of
 * the pointer); on failure @d has no bodies. */
static int clone_bodies(struct npr_node *d, const struct npr_node *s)
{
	int i;

	d->bodies = NULL;
	d->nbodies = 0;
	if (!s->nbodies)
		return 0;
	d->bodies = calloc(s->nbodies, sizeof(*d->bodies));
	if (!d->bodies)
		return -ENOMEM;
	for (i = 0; i < s->nbodies; i++) {
		const struct npr_body *sb = &s->bodies[i];
		struct npr_body *db = &d->bodies[i];

		d->nbodies++;
		db->g = npr_graph_clone(sb->g);
		db->ports = dup_array(sb->ports, sb->nports, sizeof(*sb->ports));
		db->back = dup_array(sb->back, sb->nback, sizeof(*sb->back));
		db->nports = db->ports ? sb->nports : 0;
		db->nback = db->back ? sb->nback : 0;
		if (!db->g || db->nports != sb->nports ||
		    db->nback != sb->nback)
			return -ENOMEM;
	}
	return 0;
}

static struct npr_graph *clone(const struct npr_graph *g,
			       struct npr_graph *take, bool share);

/**
 * npr_graph_clone() - deep copy of a graph
 * @g: the graph.
 *
 * Constant data that lives in the weights store is shared (the clone takes a
 * reference); owned constant data is copied.  Parsed op params are not
 * copied: the clone's nodes have params NULL and must be parsed again.
 * Bodies are cloned too, recursively.
 *
 * Return: the clone, or NULL on allocation failure.
 */
struct npr_graph *npr_graph_clone(const struct npr_graph *g)
{
	return clone(g, NULL, false);
}

/**
 * npr_graph_clone_shared() - npr_graph_clone() that borrows owned data
 * @g: the graph; it must outlive the clone and keep its constants.
 *
 * The clone's constants point at @g's owned data instead of copies (the
 * clone owns none of it), so that a graph with large folded or aligned
 * weights clones in time proportional to its nodes: for a backend that
 * infers and plans a graph again per input shape signature.  Bodies are
 * deep copies, as with npr_graph_clone().
 *
 * Return: the clone, or NULL on allocation failure.
 */
struct npr_graph *npr_graph_clone_shared(const struct npr_graph *g)
{
	return clone(g, NULL, true);
}

/**
 * npr_graph_view() - a graph whose nodes and values are copies, over
 * everything else of another
 * @g: the graph, without bodies (a control-flow op infers its bodies in
 *     place: use npr_graph_clone_shared() for those); it must outlive the
 *     view and not change meanwhile.
 *
 * The view's nodes and values are shallow copies of @g's: names, types,
 * port and attribute arrays, bodies-free nodes, inputs, outputs,
 * variables and the weights store stay @g's, constants point at @g's
 * data (the view owns none: what it folds it owns), and every node's
 * params are NULL, to be parsed again.  So inferring and planning a
 * graph again for other input shapes (ref/signature.c) costs no string
 * or array copies.  Nothing may add nodes or values to a view; a pass
 * that rewrites a view's node gives it strings and arrays of the view's
 * own arena (npr_graph_alloc()), never freeing the shared ones;
 * npr_graph_free() frees what it owns.
 *
 * Return: the view, NULL if out of memory or @g has bodies.
 */
struct npr_graph *npr_graph_view(const struct npr_graph *g)
{
	struct npr_graph *c;
	int i;

	for (i = 0; i < g->nnodes; i++)
		if (g->nodes[i].nbodies)
			return NULL;
	c = malloc(sizeof(*c));
	if (!c)
		return NULL;
	*c = *g;
	c->view = true;
	c->arena = NULL;
	c->nodes = dup_array(g->nodes, g->nnodes, sizeof(*g->nodes));
	c->vals = dup_array(g->vals, g->nvals, sizeof(*g->vals));
	c->cap_nodes = g->nnodes;
	c->cap_vals = g->nvals;
	if ((g->nnodes && !c->nodes) || (g->nvals && !c->vals)) {
		free(c->nodes);
		free(c->vals);
		free(c);
		return NULL;
	}
	for (i = 0; i < c->nnodes; i++)
		c->nodes[i].params = NULL;
	for (i = 0; i < c->nvals; i++)
		c->vals[i].owned = NULL;
	return c;
}

/**
 * npr_graph_clone_take() - npr_graph_clone() that moves owned data
 * @g: the graph; its owned constant data moves to the clone (its values
 *     still point at it, valid while the clone lives and keeps it): use
 *     @g for its structure and names only, then free it.
 *
 * Return: the clone, or NULL on allocation failure (@g unchanged).
 */
struct npr_graph *npr_graph_clone_take(struct npr_graph *g)
{
	return clone(g, g, false);
}

static struct npr_graph *clone(const struct npr_graph *g,
			       struct npr_graph *take, bool share)
{
	struct npr_graph *c = npr_graph_new();
	int i, j;

	if (!c)
		return NULL;
	c->name = xstrdup(g->name);
	c->ir_version = g->ir_version;
	c->fold = g->fold;
	c->weights = npr_weights_get(g->weights);
	c->nodes = calloc(g->nnodes ? g->nnodes : 1, sizeof(*c->nodes));
	c->vals = calloc(g->nvals ? g->nvals : 1, sizeof(*c->vals));
	if (!c->nodes || !c->vals || (g->name && !c->name))
		goto fail;
	c->cap_nodes = g->nnodes;
	c->cap_vals = g->nvals;
	for (i = 0; i < g->nnodes; i++) {
		const struct npr_node *s = &g->nodes[i];
		struct npr_node *d = &c->nodes[i];

		c->nnodes++;
		*d = *s;
		d->packed = 0;
		d->name = xstrdup(s->name);
		d->type = xstrdup(s->type);
		d->in = dup_array(s->in, s->nin, sizeof(int));
		d->out = dup_array(s->out, s->nout, sizeof(int));
		d->params = NULL;
		d->attr = NULL;		/* not the source's, if bodies fail */
		d->nattr = 0;
		if (clone_bodies(d, s))
			goto fail;
		d->attr = s->nattr ? calloc(s->nattr, sizeof(*d->attr)) : NULL;
		d->nattr = d->attr ? s->nattr : 0;
		if ((s->nin && !d->in) || (s->nout && !d->out) ||
		    (s->nattr && !d->attr) || (s->name && !d->name) ||
		    (s->type && !d->type))
			goto fail;
		for (j = 0; j < d->nattr; j++) {
			d->attr[j].key = xstrdup(s->attr[j].key);
			d->attr[j].val = xstrdup(s->attr[j].val);
			if (!d->attr[j].key || !d->attr[j].val)
				goto fail;
		}
	}
	for (i = 0; i < g->nvals; i++) {
		const struct npr_value *s = &g->vals[i];
		struct npr_value *d = &c->vals[i];

		c->nvals++;
		*d = *s;
		d->name = xstrdup(s->name);
		d->owned = NULL;
		if (s->name && !d->name)
			goto fail;
		if (s->owned && take) {
			continue;	/* moved below, once nothing can fail */
		} else if (s->owned && !share) {
			d->owned = malloc(s->nbytes ? s->nbytes : 1);
			if (!d->owned)
				goto fail;
			memcpy(d->owned, s->owned, s->nbytes);
			d->data = d->owned;
		}
	}
	c->inputs = dup_array(g->inputs, g->ninputs, sizeof(int));
	c->outputs = dup_array(g->outputs, g->noutputs, sizeof(int));
	c->ninputs = g->ninputs;
	c->noutputs = g->noutputs;
	if ((g->ninputs && !c->inputs) || (g->noutputs && !c->outputs))
		goto fail;
	for (i = 0; take && i < g->nvals; i++) {
		c->vals[i].owned = take->vals[i].owned;
		take->vals[i].owned = NULL;
	}
	return c;
fail:
	npr_graph_free(c);
	return NULL;
}

static int grow(void **p, int *cap, int need, size_t sz)
{
	int ncap;
	void *np;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	while (ncap < need)
		ncap *= 2;
	np = realloc(*p, (size_t)ncap * sz);
	if (!np)
		return -ENOMEM;
	memset((char *)np + (size_t)*cap * sz, 0, (size_t)(ncap - *cap) * sz);
	*p = np;
	*cap = ncap;
	return 0;
}

/**
 * npr_graph_add_node() - append a node
 * @g: the graph; g->nodes may move, so re-read pointers into it
 * @name: the layer name, copied; NULL gives ""
 * @type: the op type, copied; NULL gives ""
 * @version: the opset number, 0 if not given
 * @layer_id: the id in the source file, for messages
 *
 * The node has no inputs, outputs or attributes yet, and no op.
 *
 * Return: the node's index, or -ENOMEM.
 */
int npr_graph_add_node(struct npr_graph *g, const char *name, const char *type,
		       unsigned int version, int64_t layer_id)
{
	struct npr_node *n;

	if (grow((void **)&g->nodes, &g->cap_nodes, g->nnodes + 1,
		 sizeof(*g->nodes)))
		return -ENOMEM;
	n = &g->nodes[g->nnodes];
	memset(n, 0, sizeof(*n));
	n->name = xstrdup(name ? name : "");
	n->type = xstrdup(type ? type : "");
	if (!n->name || !n->type) {
		free(n->name);
		free(n->type);
		return -ENOMEM;
	}
	n->version = version;
	n->layer_id = layer_id;
	return g->nnodes++;
}

/**
 * npr_graph_add_value() - append a value
 * @g: the graph; g->vals may move
 * @producer: the index of the node that produces it
 * @port: its output index on @producer
 *
 * The value has no type or data, and unknown shape and declared shape
 * (rank -1).
 *
 * Return: the value's index, or -ENOMEM.
 */
int npr_graph_add_value(struct npr_graph *g, int producer, int port)
{
	struct npr_value *v;

	if (grow((void **)&g->vals, &g->cap_vals, g->nvals + 1,
		 sizeof(*g->vals)))
		return -ENOMEM;
	v = &g->vals[g->nvals];
	memset(v, 0, sizeof(*v));
	v->producer = producer;
	v->port = port;
	v->shape.rank = -1;
	v->decl.rank = -1;
	return g->nvals++;
}

/**
 * npr_node_set_inputs() - give a node @nin inputs, all unconnected
 * @n: the node; its previous inputs are dropped
 * @nin: the number of inputs, 0 for none
 *
 * Every entry of n->in is -1; the caller sets the value indexes.
 *
 * Return: 0, or -ENOMEM (@n unchanged).
 */
int npr_node_set_inputs(struct npr_node *n, int nin)
{
	int *in = NULL;
	int i;

	if (nin) {
		in = malloc(sizeof(int) * nin);
		if (!in)
			return -ENOMEM;
		for (i = 0; i < nin; i++)
			in[i] = -1;
	}
	if (!(n->packed & NPR_NODE_PACKED_IN))
		free(n->in);
	n->packed &= ~NPR_NODE_PACKED_IN;
	n->in = in;
	n->nin = nin;
	return 0;
}

/**
 * npr_node_set_outputs() - give a node @nout new output values
 * @g: the graph; g->vals may move
 * @node: the node's index; its previous outputs are dropped (their values
 *        stay in @g)
 * @nout: the number of outputs, 0 for none
 *
 * Appends one value per output, produced by (@node, port i).
 *
 * Return: 0, or -ENOMEM (the node is unchanged; values appended before the
 * failure stay in @g, unused).
 */
int npr_node_set_outputs(struct npr_graph *g, int node, int nout)
{
	int *out = NULL;
	int i, v;

	if (nout) {
		out = malloc(sizeof(int) * nout);
		if (!out)
			return -ENOMEM;
	}
	for (i = 0; i < nout; i++) {
		v = npr_graph_add_value(g, node, i);
		if (v < 0) {
			free(out);
			return v;
		}
		out[i] = v;
	}
	if (!(g->nodes[node].packed & NPR_NODE_PACKED_OUT))
		free(g->nodes[node].out);
	g->nodes[node].packed &= ~NPR_NODE_PACKED_OUT;
	g->nodes[node].out = out;
	g->nodes[node].nout = nout;
	return 0;
}

/**
 * npr_node_wire() - give a new node its inputs and one fresh output
 * @g: the graph
 * @node: the node's index
 * @nin: its input count
 * @in: the values it reads, @nin of them
 *
 * What a pass that adds nodes does for each: npr_node_set_inputs(), the
 * values copied in, npr_node_set_outputs() with one output.
 *
 * Return: 0 or -ENOMEM.
 */
int npr_node_wire(struct npr_graph *g, int node, int nin, const int *in)
{
	int j, err = npr_node_set_inputs(&g->nodes[node], nin);

	if (!err)
		err = npr_node_set_outputs(g, node, 1);
	if (err)
		return err;
	for (j = 0; j < nin; j++)
		g->nodes[node].in[j] = in[j];
	return 0;
}

/**
 * npr_node_add_attr() - append an attribute to a node
 * @n: the node
 * @key: the attribute's name, copied
 * @val: its value as text, copied; NULL gives ""
 *
 * An existing attribute of the same name is not replaced: npr_attr()
 * finds the first.
 *
 * Return: 0, or -ENOMEM (@n keeps its attributes).
 */
int npr_node_add_attr(struct npr_node *n, const char *key, const char *val)
{
	struct npr_attr *a;

	if (n->packed & NPR_NODE_PACKED_ATTR) {
		/* out of the arena: a block of its own from now on */
		a = malloc(sizeof(*a) * (n->nattr + 1));
		if (!a)
			return -ENOMEM;
		memcpy(a, n->attr, sizeof(*a) * n->nattr);
		n->packed &= ~NPR_NODE_PACKED_ATTR;
	} else {
		a = realloc(n->attr, sizeof(*a) * (n->nattr + 1));
		if (!a)
			return -ENOMEM;
	}
	n->attr = a;
	a[n->nattr].key = strdup(key);
	a[n->nattr].val = strdup(val ? val : "");
	if (!a[n->nattr].key || !a[n->nattr].val) {
		free(a[n->nattr].key);
		free(a[n->nattr].val);
		return -ENOMEM;
	}
	n->nattr++;
	return 0;
}

/**
 * npr_node_add_body() - give a node a sub-graph
 * @n: the control-flow node
 * @body: the body; the node takes it over, also on failure (it is then
 *        freed)
 *
 * A frontend builds a body like a model: nodes with ->op resolved,
 * inputs[] listing its Parameters and outputs[] its Results (the order
 * port rules index), sorted with npr_graph_sort(), and a reference on the
 * weights store if its constants point into it.  Then it attaches the body
 * and adds the rules (npr_body_add_port(), npr_body_add_back_edge()).
 * Re-read &g->nodes[idx] after adding nodes to the outer graph, which may
 * move them.  Bodies are parsed and checked by the op's parse like any
 * attribute.
 *
 * Return: the body's index in n->bodies, or -ENOMEM.
 */
int npr_node_add_body(struct npr_node *n, struct npr_graph *body)
{
	struct npr_body *b;

	b = realloc(n->bodies, sizeof(*b) * (n->nbodies + 1));
	if (!b) {
		npr_graph_free(body);
		return -ENOMEM;
	}
	n->bodies = b;
	memset(&b[n->nbodies], 0, sizeof(*b));
	b[n->nbodies].g = body;
	return n->nbodies++;
}

/**
 * npr_body_add_port() - append a port map rule to a body
 * @b: the body
 * @p: the rule, copied
 *
 * Return: 0, or -ENOMEM.
 */
int npr_body_add_port(struct npr_body *b, const struct npr_body_port *p)
{
	struct npr_body_port *np;

	np = realloc(b->ports, sizeof(*np) * (b->nports + 1));
	if (!np)
		return -ENOMEM;
	b->ports = np;
	np[b->nports++] = *p;
	return 0;
}

/**
 * npr_body_add_back_edge() - append a back edge to a body
 * @b: the body
 * @from: the index in the body's outputs[] of the Result
 * @to: the index in the body's inputs[] of the Parameter it feeds in the
 *      next iteration
 *
 * Return: 0, or -ENOMEM.
 */
int npr_body_add_back_edge(struct npr_body *b, int from, int to)
{
	struct npr_back_edge *ne;

	ne = realloc(b->back, sizeof(*ne) * (b->nback + 1));
	if (!ne)
		return -ENOMEM;
	b->back = ne;
	ne[b->nback].from = from;
	ne[b->nback].to = to;
	b->nback++;
	return 0;
}

/**
 * npr_graph_sort() - order nodes so every producer precedes its consumers
 * @g: the graph; every node input must name an existing value.
 *
 * Kahn's algorithm, taking ready nodes in their current order, so a file
 * that is already sorted keeps its order.  Value producers and the
 * inputs/outputs index arrays are renumbered.
 *
 * Return: 0, -EINVAL for a dangling input, -ELOOP on a cycle (the message
 * names a node on it), -ENOMEM.
 */
int npr_graph_sort(struct npr_graph *g)
{
	int n = g->nnodes, i, j, head = 0, tail = 0, err = 0;
	int *indeg = calloc(n ? n : 1, sizeof(int));
	int *order = malloc(sizeof(int) * (n ? n : 1));
	int *newidx = malloc(sizeof(int) * (n ? n : 1));
	int *cons_cnt = calloc(n + 1, sizeof(int));
	int *cons = NULL;
	struct npr_node *nodes = NULL;

	if (!indeg || !order || !newidx || !cons_cnt) {
		err = -ENOMEM;
		goto out;
	}
	/* consumer lists in CSR form: producer node -> consumer nodes */
	for (i = 0; i < n; i++) {
		for (j = 0; j < g->nodes[i].nin; j++) {
			int v = g->nodes[i].in[j];

			if (v < 0 || v >= g->nvals || g->vals[v].producer < 0 ||
			    g->vals[v].producer >= n) {
				err = npr_node_err(&g->nodes[i], -EINVAL,
						   "input %d is not connected",
						   j);
				goto out;
			}
			cons_cnt[g->vals[v].producer + 1]++;
			indeg[i]++;
		}
	}
	for (i = 0; i < n; i++)
		cons_cnt[i + 1] += cons_cnt[i];
	cons = malloc(sizeof(int) * (cons_cnt[n] ? cons_cnt[n] : 1));
	if (!cons) {
		err = -ENOMEM;
		goto out;
	}
	{
		int *fill = calloc(n ? n : 1, sizeof(int));

		if (!fill) {
			err = -ENOMEM;
			goto out;
		}
		for (i = 0; i < n; i++)
			for (j = 0; j < g->nodes[i].nin; j++) {
				int p = g->vals[g->nodes[i].in[j]].producer;

				cons[cons_cnt[p] + fill[p]++] = i;
			}
		free(fill);
	}
	/*
	 * A min-ordered ready set keeps file order where possible; a simple
	 * queue seeded in index order is enough for that in practice.
	 */
	for (i = 0; i < n; i++)
		if (!indeg[i])
			order[tail++] = i;
	while (head < tail) {
		int u = order[head++];

		for (j = cons_cnt[u]; j < cons_cnt[u + 1]; j++)
			if (--indeg[cons[j]] == 0)
				order[tail++] = cons[j];
	}
	if (tail != n) {
		for (i = 0; i < n; i++)
			if (indeg[i])
				break;
		err = npr_node_err(&g->nodes[i], -ELOOP,
				   "the graph has a cycle through this layer");
		goto out;
	}
	nodes = malloc(sizeof(*nodes) * (n ? n : 1));
	if (!nodes) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		nodes[i] = g->nodes[order[i]];
		newidx[order[i]] = i;
	}
	memcpy(g->nodes, nodes, sizeof(*nodes) * n);
	for (i = 0; i < g->nvals; i++)
		if (g->vals[i].producer >= 0 && g->vals[i].producer < n)
			g->vals[i].producer = newidx[g->vals[i].producer];
	for (i = 0; i < g->ninputs; i++)
		g->inputs[i] = newidx[g->inputs[i]];
	for (i = 0; i < g->noutputs; i++)
		g->outputs[i] = newidx[g->outputs[i]];
out:
	free(nodes);
	free(cons);
	free(cons_cnt);
	free(newidx);
	free(order);
	free(indeg);
	return err;
}

/**
 * npr_const_ints() - read a constant input as int64 values
 * @g: the graph
 * @n: the node
 * @input: the input's index
 * @out: out: the values, room for @max
 * @max: the most values accepted
 *
 * The constant may be of any integer or floating-point type; floats are
 * truncated toward zero and saturated, as npr_convert() does.
 *
 * Return: the number of values; -ENODATA if the input is not a constant
 * (or not yet folded into one); -EINVAL if it is missing, has a dynamic
 * shape, more than @max elements, too few bytes or a non-numeric type.
 * npr_node_err() is set in every case.
 */
int npr_const_ints(struct npr_graph *g, const struct npr_node *n, int input,
		   int64_t *out, int max)
{
	const struct npr_value *v;
	int64_t cnt, i;
	int err;

	if (input >= n->nin)
		return npr_node_err(n, -EINVAL, "input %d is missing", input);
	v = &g->vals[n->in[input]];
	if (!v->data)
		return npr_node_err(n, -ENODATA,
				    "input %d must be a constant (or computable at compile time)",
				    input);
	cnt = npr_shape_numel(&v->shape);
	if (cnt < 0)
		return npr_node_err(n, -EINVAL, "input %d has a dynamic shape",
				    input);
	if (cnt > max)
		return npr_node_err(n, -EINVAL,
				    "input %d has %lld elements, at most %d allowed",
				    input, (long long)cnt, max);
	if (npr_tensor_bytes(v->type, cnt) > v->nbytes)
		return npr_node_err(n, -EINVAL, "input %d: short constant",
				    input);
	err = npr_convert(out, NPR_ELEM_I64, v->data, v->type, cnt);
	if (err)
		return npr_node_err(n, err,
				    "input %d: element type %s is not numeric",
				    input, npr_elem_name(v->type));
	for (i = 0; i < cnt; i++)
		(void)out[i];
	return (int)cnt;
}
