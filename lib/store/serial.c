// SPDX-License-Identifier: MIT
/*
 * Compiled-model blobs: the payload (lib/store/blob.c describes it), a
 * compiled model to bytes and back.  Writing puts the properties, the
 * caching properties, the ports, the graph with its bodies, the backend's
 * prepared constants and its native section one after the other.
 * Reading rebuilds them in place: strings, constants and prepared buffers
 * point into the blob's memory, and every count, index and string is
 * checked against the payload's bounds before it is used; what the graph
 * must satisfy beyond that is checked by lib/store/validate.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "blob.h"
#include "error.h"
#include "object.h"
#include "graph/graph.h"
#include "store.h"

#define NPR_BLOB_HELD		(UINT64_MAX - 1)	/* in the prepared data */
#define NPR_BLOB_FILE		(UINT64_MAX - 2)	/* in the weights file */
#define WSEC_BYTES		28	/* weights section: size, hash, total,
					 * count */
#define MAX_COUNT		(1 << 24)	/* nodes, values, attributes */
#define MAX_STR			(1 << 16)

/* ---- writing ----------------------------------------------------------- */

/*
 * The payload being written; for a weightless one (@wl, the weights
 * file's store) also whether the prepared constants are left out (every
 * held constant lies in the file: the import packs them again) and the
 * weights section's total and count so far.
 */
struct wbuf {
	unsigned char *p;
	size_t len, cap;
	int err;
	const struct npr_weights *wl;
	bool drop_prep;
	uint64_t wtotal;
	uint32_t wcount;
};

static void w_bytes(struct wbuf *w, const void *p, size_t n)
{
	if (w->err)
		return;
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;
		unsigned char *q;

		while (cap < w->len + n)
			cap *= 2;
		q = realloc(w->p, cap);
		if (!q) {
			w->err = -ENOMEM;
			return;
		}
		w->p = q;
		w->cap = cap;
	}
	if (p)
		memcpy(w->p + w->len, p, n);
	else
		memset(w->p + w->len, 0, n);
	w->len += n;
}

/* Zeros up to the next NPR_BLOB_ALIGN boundary of the blob. */
static void w_align(struct wbuf *w)
{
	size_t pad = (NPR_BLOB_ALIGN - w->len % NPR_BLOB_ALIGN) % NPR_BLOB_ALIGN;

	w_bytes(w, NULL, pad);
}

static void w_u32(struct wbuf *w, uint32_t v)
{
	w_bytes(w, &v, 4);
}

static void w_u64(struct wbuf *w, uint64_t v)
{
	w_bytes(w, &v, 8);
}

static void w_str(struct wbuf *w, const char *s)
{
	uint32_t n = s ? (uint32_t)strlen(s) : 0;

	w_u32(w, s ? n : UINT32_MAX);
	if (s)
		w_bytes(w, s, n + 1);	/* with its NUL: read in place */
}

static void w_shape(struct wbuf *w, const struct npr_shape *s)
{
	int i;

	w_u32(w, (uint32_t)s->rank);
	for (i = 0; i < s->rank; i++)
		w_u64(w, (uint64_t)s->d[i]);
}

static void w_props(struct wbuf *w, const struct npr_props *p)
{
	w_u32(w, p->num_threads);
	w_u32(w, p->log_level);
	w_u32(w, p->perf_hint);
	w_u32(w, p->profiling);
	w_u32(w, p->hint_num_requests);
	w_u32(w, p->precision_hint);
	w_u32(w, p->exec_mode);
	w_u32(w, (uint32_t)p->num_streams);
	w_u32(w, p->cpu_pinning);
	w_u32(w, p->priority);
	w_u32(w, p->disable_transformations);
	w_u32(w, p->exclusive_async);
	w_u32(w, p->compile_threads);
	w_str(w, p->cache_dir);
	w_u32(w, p->cache_max_mb);
	w_u32(w, p->cache_required);
}

/* Values a live node reads: their constant data goes into the blob. */
static bool *live_inputs(const struct npr_graph *g)
{
	bool *used = calloc(g->nvals ? g->nvals : 1, sizeof(bool));
	int i, j;

	if (!used)
		return NULL;
	for (i = 0; i < g->nnodes; i++) {
		if (g->nodes[i].dead)
			continue;
		for (j = 0; j < g->nodes[i].nin; j++)
			used[g->nodes[i].in[j]] = true;
	}
	return used;
}

static void w_graph(struct wbuf *w, const struct npr_graph *g,
		    const struct npr_exec *ex);

static void w_bodies(struct wbuf *w, const struct npr_node *n)
{
	int b, k;

	w_u32(w, (uint32_t)n->nbodies);
	for (b = 0; b < n->nbodies; b++) {
		const struct npr_body *body = &n->bodies[b];

		w_graph(w, body->g, NULL);
		w_u32(w, (uint32_t)body->nports);
		for (k = 0; k < body->nports; k++) {
			const struct npr_body_port *p = &body->ports[k];

			w_u32(w, p->out);
			w_u32(w, p->sliced);
			w_u32(w, (uint32_t)p->ext);
			w_u32(w, (uint32_t)p->internal);
			w_u32(w, (uint32_t)p->purpose);
			w_u64(w, (uint64_t)p->axis);
			w_u64(w, (uint64_t)p->start);
			w_u64(w, (uint64_t)p->end);
			w_u64(w, (uint64_t)p->stride);
			w_u64(w, (uint64_t)p->part_size);
		}
		w_u32(w, (uint32_t)body->nback);
		for (k = 0; k < body->nback; k++) {
			w_u32(w, (uint32_t)body->back[k].from);
			w_u32(w, (uint32_t)body->back[k].to);
		}
	}
}

static void w_graph(struct wbuf *w, const struct npr_graph *g,
		    const struct npr_exec *ex)
{
	bool *used = live_inputs(g);
	int i, j;

	if (!used) {
		w->err = -ENOMEM;
		return;
	}

	w_str(w, g->name);
	w_u32(w, (uint32_t)g->ir_version);
	w_u32(w, (uint32_t)g->nvals);
	for (i = 0; i < g->nvals; i++) {
		const struct npr_value *v = &g->vals[i];
		/* the backend's prepared constants carry it (packed) */
		bool held = used[i] && ex && npr_backend_held(ex, i);
		bool data = v->data && used[i] && !held;
		struct npr_blob_wref r;
		bool ref = w->wl && ex && (data || (held && w->drop_prep)) &&
			   npr_blob_wref(ex, w->wl, i, &r);

		w_u32(w, v->type);
		w_shape(w, &v->shape);
		w_u32(w, (uint32_t)v->producer);
		w_u32(w, (uint32_t)v->port);
		w_str(w, v->name);
		if (ref) {
			size_t vb = npr_tensor_bytes(v->type,
					npr_shape_numel(&v->shape));

			w_u64(w, NPR_BLOB_FILE);
			w_u64(w, r.off);
			w_u64(w, r.size);
			w_u32(w, r.type);
			w_u64(w, r.hash);
			w->wtotal += (vb + NPR_BLOB_ALIGN - 1) &
				     ~(uint64_t)(NPR_BLOB_ALIGN - 1);
			w->wcount++;
			continue;
		}
		w_u64(w, held ? NPR_BLOB_HELD : data ? v->nbytes : UINT64_MAX);
		if (data) {
			w_align(w);
			w_bytes(w, v->data, v->nbytes);
		}
	}
	w_u32(w, (uint32_t)g->nnodes);
	for (i = 0; i < g->nnodes; i++) {
		const struct npr_node *n = &g->nodes[i];

		w_str(w, n->name);
		w_str(w, n->type);
		w_u32(w, n->version);
		w_u64(w, (uint64_t)n->layer_id);
		w_u32(w, n->dead);
		w_u32(w, (uint32_t)n->nin);
		for (j = 0; j < n->nin; j++)
			w_u32(w, (uint32_t)n->in[j]);
		w_u32(w, (uint32_t)n->nout);
		for (j = 0; j < n->nout; j++)
			w_u32(w, (uint32_t)n->out[j]);
		w_u32(w, (uint32_t)n->nattr);
		for (j = 0; j < n->nattr; j++) {
			w_str(w, n->attr[j].key);
			w_str(w, n->attr[j].val);
		}
		w_bodies(w, n);
	}
	free(used);
	w_u32(w, (uint32_t)g->ninputs);
	for (i = 0; i < g->ninputs; i++)
		w_u32(w, (uint32_t)g->inputs[i]);
	w_u32(w, (uint32_t)g->noutputs);
	for (i = 0; i < g->noutputs; i++)
		w_u32(w, (uint32_t)g->outputs[i]);
	w_u32(w, (uint32_t)g->nvars);
	for (i = 0; i < g->nvars; i++) {
		const struct npr_variable *v = &g->vars[i];

		w_str(w, v->id);
		w_u32(w, v->type);
		w_shape(w, &v->shape);
		w_u32(w, (uint32_t)v->state_in);
		w_u32(w, (uint32_t)v->valid_in);
		w_u32(w, (uint32_t)v->state_out);
		w_u32(w, (uint32_t)v->read_node);
	}
	w_u32(w, (uint32_t)g->nstate_in);
	w_u32(w, (uint32_t)g->nstate_out);
}

static void w_ports(struct wbuf *w, const struct npr_port *p, int n)
{
	int i;

	w_u32(w, (uint32_t)n);
	for (i = 0; i < n; i++) {
		w_str(w, p[i].name);
		w_u32(w, p[i].type);
		w_u32(w, (uint32_t)p[i].value);
		w_shape(w, &p[i].shape);
	}
}

/* The backend's prepared constants: layout, then per buffer node, index,
 * size and the bytes, aligned. */
static void w_prepared(struct wbuf *w, const struct npr_prepared *prep)
{
	int i;

	if (!prep || !prep->n) {
		w_str(w, NULL);
		w_u32(w, 0);
		return;
	}
	w_str(w, prep->layout);
	w_u32(w, (uint32_t)prep->n);
	for (i = 0; i < prep->n; i++) {
		w_u32(w, (uint32_t)prep->buf[i].node);
		w_u32(w, (uint32_t)prep->buf[i].index);
		w_u64(w, prep->buf[i].bytes);
		w_align(w);
		w_bytes(w, prep->buf[i].data, prep->buf[i].bytes);
	}
}

/*
 * The compiled model's caching properties, as "NAME=VALUE" strings of
 * device @dev and properties @p: part of every blob and of the model
 * cache key.
 */
static void w_caching(struct wbuf *w, const struct npr_device *dev,
		      const struct npr_props *p)
{
	char buf[96];

	w_u32(w, 4);
	snprintf(buf, sizeof(buf), "DEVICE_ARCHITECTURE=%s", dev->info.arch);
	w_str(w, buf);
	snprintf(buf, sizeof(buf), "INFERENCE_PRECISION_HINT=%s",
		 npr_elem_name(p->precision_hint));
	w_str(w, buf);
	snprintf(buf, sizeof(buf), "EXECUTION_MODE_HINT=%s",
		 p->exec_mode == NPR_EXEC_MODE_ACCURACY ? "ACCURACY" :
		 "PERFORMANCE");
	w_str(w, buf);
	snprintf(buf, sizeof(buf), "DISABLE_TRANSFORMATIONS=%s",
		 p->disable_transformations ? "YES" : "NO");
	w_str(w, buf);
}

/* Does every constant the backend holds lie in the weights file? */
static bool held_in_file(const struct npr_exec *ex,
			 const struct npr_weights *wl)
{
	const struct npr_graph *g = ex->g;
	bool *used = live_inputs(g), ok = used != NULL;
	struct npr_blob_wref r;
	int i;

	for (i = 0; ok && i < g->nvals; i++)
		if (used[i] && npr_backend_held(ex, i) &&
		    !npr_blob_wref(ex, wl, i, &r))
			ok = false;
	free(used);
	return ok;
}

static int payload(const struct npr_exec *ex, struct wbuf *w)
{
	const struct npr_device *dev = ex->dev;
	struct npr_prepared *prep = NULL;
	int err;

	w_bytes(w, NULL, NPR_BLOB_HEADER);	/* room for the header */
	if (w->wl) {
		w->drop_prep = held_in_file(ex, w->wl);
		w_u64(w, w->wl->size);
		w_u64(w, npr_blob_hash(w->wl->data, w->wl->size));
		w_bytes(w, NULL, 12);	/* total and count, below */
	}
	w_props(w, &ex->props);
	w_caching(w, dev, &ex->props);
	w_ports(w, ex->in, ex->nin);
	w_ports(w, ex->out, ex->nout);
	w_graph(w, ex->g, ex);
	if (!w->wl || !w->drop_prep) {
		unsigned long mark = npr_err_mark();

		err = npr_backend_prepared(ex, &prep);
		if (err)
			return npr_err_default_in(err, mark, "export");
	}
	w_prepared(w, prep);
	free(prep);
	if (w->wl && npr_backend_has_native(dev)) {
		/* the driver's binary carries the weights: import compiles */
		w_u64(w, UINT64_MAX);
	} else if (npr_backend_has_native(dev)) {
		void *nat = NULL;
		size_t nlen = 0;

		err = npr_backend_native_export(ex, &nat, &nlen);
		if (err)
			return err;
		w_u64(w, nlen);
		w_bytes(w, nat, nlen);
		free(nat);
	}
	if (w->err)
		return npr_err(w->err, "out of memory writing the blob");
	if (w->wl) {
		memcpy(w->p + NPR_BLOB_HEADER + 16, &w->wtotal, 8);
		memcpy(w->p + NPR_BLOB_HEADER + 24, &w->wcount, 4);
	}
	return 0;
}

/**
 * npr_blob_payload_write() - a compiled model as the payload of a blob
 * @ex: the compiled model, its backend's compile done.
 * @out: set on success to a malloc'd buffer the caller owns:
 *       NPR_BLOB_HEADER bytes of room for the header, then the payload.
 * @len: set on success to its size, the room included.
 * @weightless: set to whether it is weightless (npr_blob_weightless()
 *              and some constant lies in the weights file): the payload
 *              then starts with the weights section.
 *
 * Return: 0, or -errno with a message: -ENOMEM, or what the backend's
 * prepared or native_export returned.
 */
int npr_blob_payload_write(const struct npr_exec *ex, unsigned char **out,
			   size_t *len, bool *weightless)
{
	struct wbuf w = { .wl = npr_blob_weightless(ex) };
	int err;

	err = payload(ex, &w);
	if (!err && w.wl && !w.wcount) {
		/* nothing lies in the file: an ordinary blob */
		free(w.p);
		memset(&w, 0, sizeof(w));
		err = payload(ex, &w);
	}
	if (err) {
		free(w.p);
		return err;
	}
	*weightless = w.wl != NULL;
	*out = w.p;
	*len = w.len;
	return 0;
}

/* ---- reading ----------------------------------------------------------- */

struct rbuf {
	const unsigned char *p;	/* the payload, NPR_BLOB_ALIGN aligned - 96 */
	size_t len, pos;
	int err;
	struct npr_weights *mem;	/* the whole blob, constants point into it */
	bool *held;		/* per value of the top graph: no bytes, the
				 * backend's prepared constants have them */
	int nheld;
	struct npr_wsrc *ws;	/* a weightless blob's weights file */
};

static bool r_need(struct rbuf *r, size_t n);

/* Skip the padding up to the next NPR_BLOB_ALIGN boundary of the blob. */
static void r_align(struct rbuf *r)
{
	size_t abs = NPR_BLOB_HEADER + r->pos;
	size_t pad = (NPR_BLOB_ALIGN - abs % NPR_BLOB_ALIGN) % NPR_BLOB_ALIGN;

	if (r_need(r, pad))
		r->pos += pad;
}

static bool r_need(struct rbuf *r, size_t n)
{
	if (r->err)
		return false;
	if (n > r->len - r->pos) {
		r->err = npr_err(-EBADMSG, "blob: payload ends early (at byte %zu of %zu)",
				 r->pos, r->len);
		return false;
	}
	return true;
}

static uint32_t r_u32(struct rbuf *r)
{
	uint32_t v = 0;

	if (r_need(r, 4)) {
		memcpy(&v, r->p + r->pos, 4);
		r->pos += 4;
	}
	return v;
}

static uint64_t r_u64(struct rbuf *r)
{
	uint64_t v = 0;

	if (r_need(r, 8)) {
		memcpy(&v, r->p + r->pos, 8);
		r->pos += 8;
	}
	return v;
}

static int bad(struct rbuf *r, const char *what)
{
	if (!r->err)
		r->err = npr_err(-EINVAL, "blob: %s", what);
	return r->err;
}

/* A count of at most @max. */
static int r_count(struct rbuf *r, uint32_t max, const char *what)
{
	uint32_t n = r_u32(r);

	if (!r->err && n > max) {
		char buf[96];

		snprintf(buf, sizeof(buf), "%s count %u is too large", what, n);
		bad(r, buf);
	}
	return r->err ? 0 : (int)n;
}

/*
 * A count of at most @max items of at least @min bytes each, which must
 * all fit in the rest of the payload: what is allocated for them is then
 * bounded by the blob's size, not by the count a corrupt blob claims.
 */
static int r_count_fit(struct rbuf *r, uint32_t max, size_t min,
		       const char *what)
{
	int n = r_count(r, max, what);

	if (!r->err && (size_t)n > (r->len - r->pos) / min)
		r->err = npr_err(-EBADMSG, "blob: payload ends early (%d %ss of at least %zu bytes at byte %zu of %zu)",
				 n, what, min, r->pos, r->len);
	return r->err ? 0 : n;
}

/*
 * A string in place in the blob (the graph's strings stay there: see
 * npr_graph_str_borrowed()), or NULL for an absent one (*present false).
 * It must end with the NUL after its length and have none before.
 */
static char *r_str(struct rbuf *r, bool *present)
{
	uint32_t n = r_u32(r);
	const char *s;

	*present = false;
	if (r->err || n == UINT32_MAX)
		return NULL;
	if (n > MAX_STR) {
		bad(r, "string too long");
		return NULL;
	}
	if (!r_need(r, (size_t)n + 1))
		return NULL;
	s = (const char *)r->p + r->pos;
	if (strnlen(s, (size_t)n + 1) != n) {
		bad(r, s[n] ? "string without its NUL" :
		    "string with a NUL inside");
		return NULL;
	}
	r->pos += (size_t)n + 1;
	*present = true;
	return (char *)s;
}

/* A string that must be there. */
static char *r_str_req(struct rbuf *r, const char *what)
{
	bool present;
	char *s = r_str(r, &present);

	if (!r->err && !present)
		bad(r, what);
	return s;
}

static void r_shape(struct rbuf *r, struct npr_shape *s)
{
	int i;

	s->rank = (int)r_u32(r);
	if (r->err)
		return;
	if (s->rank < 0 || s->rank > NPR_MAX_RANK) {
		bad(r, "rank out of range");
		return;
	}
	for (i = 0; i < s->rank; i++) {
		s->d[i] = (int64_t)r_u64(r);
		if (!r->err && (s->d[i] < 0 || s->d[i] > (1LL << 40)))
			bad(r, "dimension out of range");
	}
	if (!r->err && npr_shape_numel(s) < 0)
		bad(r, "shape too large");
}

static void r_props(struct rbuf *r, struct npr_props *p)
{
	bool present;
	char *dir;

	p->num_threads = r_u32(r);
	p->log_level = r_u32(r);
	p->perf_hint = r_u32(r);
	p->profiling = r_u32(r);
	p->hint_num_requests = r_u32(r);
	p->precision_hint = r_u32(r);
	p->exec_mode = r_u32(r);
	p->num_streams = (int32_t)r_u32(r);
	p->cpu_pinning = r_u32(r);
	p->priority = r_u32(r);
	p->disable_transformations = r_u32(r);
	p->exclusive_async = r_u32(r);
	p->compile_threads = r_u32(r);
	dir = r_str(r, &present);
	if (dir && strlen(dir) < sizeof(p->cache_dir))
		strcpy(p->cache_dir, dir);
	else if (dir)
		bad(r, "CACHE_DIR too long");
	p->cache_max_mb = r_u32(r);
	p->cache_required = r_u32(r);
}

static int r_ports(struct rbuf *r, struct npr_port **out, int *nout)
{
	struct npr_port *p;
	int n, i;

	n = r_count(r, 1 << 16, "port");
	if (r->err)
		return r->err;
	p = calloc(n ? n : 1, sizeof(*p));
	if (!p)
		return r->err = -ENOMEM;
	*out = p;
	*nout = n;
	for (i = 0; i < n && !r->err; i++) {
		const char *name = r_str_req(r, "port without a name");

		if (r->err)
			break;
		p[i].name = strdup(name);	/* the caller's, freed with it */
		if (!p[i].name)
			return r->err = -ENOMEM;
		p[i].type = r_u32(r);
		p[i].value = (int)r_u32(r);
		r_shape(r, &p[i].shape);
		if (!r->err && !npr_elem_size(p[i].type))
			bad(r, "port of an unsupported element type");
		if (!r->err)
			p[i].bytes = npr_tensor_bytes(p[i].type,
						      npr_shape_numel(&p[i].shape));
	}
	return r->err;
}

static int r_graph(struct rbuf *r, struct npr_graph *g, int depth);

static int r_bodies(struct rbuf *r, struct npr_node *nd, int depth)
{
	int nb, b, k, n;

	nb = r_count(r, 2, "body");
	if (r->err)
		return r->err;
	if (nb && depth >= NPR_MAX_BODY_DEPTH)
		return bad(r, "sub-graphs nested too deep");
	for (b = 0; b < nb; b++) {
		struct npr_graph *body = npr_graph_new();
		struct npr_body *bd;

		if (!body)
			return r->err = -ENOMEM;
		if (npr_node_add_body(nd, body) < 0)
			return r->err = -ENOMEM;
		if (r_graph(r, body, depth + 1))
			return r->err;
		bd = &nd->bodies[nd->nbodies - 1];
		n = r_count(r, 1 << 12, "body port");
		for (k = 0; k < n && !r->err; k++) {
			struct npr_body_port p;

			p.out = r_u32(r) != 0;
			p.sliced = r_u32(r) != 0;
			p.ext = (int)r_u32(r);
			p.internal = (int)r_u32(r);
			p.purpose = (int)r_u32(r);
			p.axis = (int64_t)r_u64(r);
			p.start = (int64_t)r_u64(r);
			p.end = (int64_t)r_u64(r);
			p.stride = (int64_t)r_u64(r);
			p.part_size = (int64_t)r_u64(r);
			if (r->err)
				break;
			if (p.internal < 0 || p.internal >=
			    (p.out ? body->noutputs : body->ninputs) ||
			    p.ext < -1 || p.ext >= (p.out ? nd->nout : nd->nin))
				return bad(r, "body port out of range");
			if (p.purpose < NPR_BODY_DATA ||
			    p.purpose > NPR_BODY_EXECUTION_CONDITION)
				return bad(r, "body port of an unknown purpose");
			if (npr_body_add_port(bd, &p))
				return r->err = -ENOMEM;
		}
		n = r_count(r, 1 << 12, "back edge");
		for (k = 0; k < n && !r->err; k++) {
			int from = (int)r_u32(r), to = (int)r_u32(r);

			if (r->err)
				break;
			if (from < 0 || from >= body->noutputs || to < 0 ||
			    to >= body->ninputs)
				return bad(r, "back edge out of range");
			if (npr_body_add_back_edge(bd, from, to))
				return r->err = -ENOMEM;
		}
	}
	return r->err;
}

static int r_graph(struct rbuf *r, struct npr_graph *g, int depth)
{
	bool present;
	int i, j, n;

	g->name = r_str(r, &present);
	g->ir_version = (int)r_u32(r);
	if (!g->weights)
		g->weights = npr_weights_get(r->mem);
	/* type, rank, producer, port, name, size */
	n = r_count_fit(r, MAX_COUNT, 28, "value");
	if (r->err)
		return r->err;
	g->vals = calloc(n ? n : 1, sizeof(*g->vals));
	if (!g->vals)
		return r->err = -ENOMEM;
	g->cap_vals = n;
	if (!depth) {
		r->held = calloc(n ? n : 1, sizeof(bool));
		if (!r->held)
			return r->err = -ENOMEM;
	}
	for (i = 0; i < n && !r->err; i++) {
		struct npr_value *v = &g->vals[i];
		uint64_t nbytes;

		g->nvals++;
		v->type = r_u32(r);
		r_shape(r, &v->shape);
		v->decl.rank = -1;
		v->producer = (int)r_u32(r);
		v->port = (int)r_u32(r);
		v->name = r_str(r, &present);
		nbytes = r_u64(r);
		if (r->err || nbytes == UINT64_MAX)
			continue;
		if (nbytes == NPR_BLOB_FILE) {
			struct npr_blob_wref wr;

			if (depth || !r->ws) {
				bad(r, "a weights-file reference outside a weightless blob's graph");
				break;
			}
			wr.off = r_u64(r);
			wr.size = r_u64(r);
			wr.type = r_u32(r);
			wr.hash = r_u64(r);
			if (!r->err)
				r->err = npr_blob_wsrc_read(r->ws, v, &wr, i);
			continue;
		}
		if (nbytes == NPR_BLOB_HELD) {
			if (depth) {
				bad(r, "a held constant in a sub-graph");
				break;
			}
			v->nbytes = npr_tensor_bytes(v->type,
						     npr_shape_numel(&v->shape));
			r->held[i] = true;
			r->nheld++;
			continue;
		}
		if (nbytes != npr_tensor_bytes(v->type,
					       npr_shape_numel(&v->shape))) {
			bad(r, "constant size does not match its shape");
			break;
		}
		r_align(r);
		if (!r_need(r, nbytes))
			break;
		/* in place: the graph holds a reference to the blob */
		v->data = r->p + r->pos;
		r->pos += nbytes;
		v->nbytes = nbytes;
	}
	/* name, type, version, layer id, dead, inputs */
	n = r_count_fit(r, MAX_COUNT, 28, "node");
	if (r->err)
		return r->err;
	g->nodes = calloc(n ? n : 1, sizeof(*g->nodes));
	if (!g->nodes)
		return r->err = -ENOMEM;
	g->cap_nodes = n;
	for (i = 0; i < n && !r->err; i++) {
		struct npr_node *nd = &g->nodes[i];
		int k;

		g->nnodes++;
		nd->name = r_str_req(r, "node without a name");
		nd->type = r_str_req(r, "node without a type");
		nd->version = r_u32(r);
		nd->layer_id = (int64_t)r_u64(r);
		nd->dead = r_u32(r) != 0;
		/* the arrays from the graph's arena, the strings in place */
		k = r_count(r, 1 << 12, "input");
		if (r->err)
			break;
		if (k) {
			nd->in = npr_graph_alloc(g, k * sizeof(int));
			if (!nd->in)
				return r->err = -ENOMEM;
			nd->packed |= NPR_NODE_PACKED_IN;
			nd->nin = k;
		}
		for (j = 0; j < k; j++)
			nd->in[j] = (int)r_u32(r);
		k = r_count(r, 1 << 12, "output");
		if (r->err)
			break;
		nd->out = npr_graph_alloc(g, (k ? k : 1) * sizeof(int));
		if (!nd->out)
			return r->err = -ENOMEM;
		nd->packed |= NPR_NODE_PACKED_OUT;
		nd->nout = k;
		for (j = 0; j < k; j++)
			nd->out[j] = (int)r_u32(r);
		k = r_count(r, 1 << 12, "attribute");
		if (r->err)
			break;
		if (k) {
			nd->attr = npr_graph_alloc(g, k * sizeof(*nd->attr));
			if (!nd->attr)
				return r->err = -ENOMEM;
			nd->packed |= NPR_NODE_PACKED_ATTR;
		}
		for (j = 0; j < k && !r->err; j++) {
			char *key = r_str_req(r, "attribute without a key");
			char *val = r_str_req(r, "attribute without a value");

			if (r->err)
				break;
			nd->attr[j].key = key;
			nd->attr[j].val = val;
			nd->nattr++;
		}
		if (!r->err)
			r_bodies(r, nd, depth);
	}
	if (r->err)
		return r->err;
	n = r_count(r, 1 << 16, "input");
	g->inputs = calloc(n ? n : 1, sizeof(int));
	if (!g->inputs)
		return r->err = -ENOMEM;
	g->ninputs = n;
	for (i = 0; i < n; i++)
		g->inputs[i] = (int)r_u32(r);
	n = r_count(r, 1 << 16, "output");
	g->outputs = calloc(n ? n : 1, sizeof(int));
	if (!g->outputs)
		return r->err = -ENOMEM;
	g->noutputs = n;
	for (i = 0; i < n; i++)
		g->outputs[i] = (int)r_u32(r);
	n = r_count(r, 1 << 16, "variable");
	if (r->err)
		return r->err;
	g->vars = calloc(n ? n : 1, sizeof(*g->vars));
	if (!g->vars)
		return r->err = -ENOMEM;
	for (i = 0; i < n && !r->err; i++) {
		struct npr_variable *v = &g->vars[i];

		g->nvars++;
		v->id = r_str_req(r, "variable without an id");
		v->type = r_u32(r);
		r_shape(r, &v->shape);
		v->state_in = (int)r_u32(r);
		v->valid_in = (int)r_u32(r);
		v->state_out = (int)r_u32(r);
		v->read_node = (int)r_u32(r);
		/* a variable that grows is dynamic: never exported */
		v->append_axis = -1;
	}
	g->nstate_in = (int)r_u32(r);
	g->nstate_out = (int)r_u32(r);
	if (!r->err && depth) {
		/* a body: checked here, compiled by its node's infer */
		for (i = 0; i < g->ninputs; i++)
			if (g->inputs[i] < 0 || g->inputs[i] >= g->nnodes)
				return bad(r, "body input out of range");
		for (i = 0; i < g->noutputs; i++)
			if (g->outputs[i] < 0 || g->outputs[i] >= g->nnodes)
				return bad(r, "body output out of range");
		if (g->nvars || g->nstate_in || g->nstate_out)
			return bad(r, "a body with variables");
		if (npr_blob_check_structure(g, NULL))
			r->err = npr_last_errno() ? npr_last_errno() : -EINVAL;
	}
	return r->err;
}

/* The backend's prepared constants, pointing into the blob. */
static int r_prepared(struct rbuf *r, const struct npr_graph *g,
		      struct npr_prepared **out)
{
	struct npr_prepared *prep;
	bool present;
	char *layout;
	int n, i;

	layout = r_str(r, &present);
	n = r_count_fit(r, MAX_COUNT, 16, "prepared buffer");
	if (!r->err && !present && n)
		bad(r, "prepared buffers without a layout");
	if (!r->err && layout && strlen(layout) >= sizeof(prep->layout))
		bad(r, "prepared layout name too long");
	if (r->err || !present)
		return r->err;
	prep = calloc(1, sizeof(*prep) + sizeof(prep->buf[0]) * (n ? n : 1));
	if (!prep)
		return r->err = -ENOMEM;
	strcpy(prep->layout, layout);
	*out = prep;
	for (i = 0; i < n && !r->err; i++) {
		struct npr_prep_buf *b = &prep->buf[i];

		b->node = (int)r_u32(r);
		b->index = (int)r_u32(r);
		b->bytes = r_u64(r);
		r_align(r);
		if (r->err)
			break;
		if (!in_range(b->node, g->nnodes) || g->nodes[b->node].dead ||
		    b->index < 0 || b->index >= MAX_COUNT)
			return bad(r, "prepared buffer of no live node");
		/* by node, and 0, 1, 2... within a node */
		if ((i && b->node < b[-1].node) ||
		    (i && b->node == b[-1].node ? b->index != b[-1].index + 1 :
		     b->index != 0))
			return bad(r, "prepared buffers out of order");
		if (!r_need(r, b->bytes))
			break;
		b->data = r->p + r->pos;
		r->pos += b->bytes;
		prep->n++;
	}
	return r->err;
}

/**
 * npr_blob_payload_read() - rebuild a compiled model from a blob's payload
 * @ex: the compiled model to fill: ex->dev set, ex->g a new graph, the
 *      properties at their defaults (for what the blob lacks).
 * @mem: the blob, NPR_BLOB_ALIGN aligned, its header checked.  The graph
 *       takes a reference; its strings, constants and the prepared
 *       buffers (ex->prep) point into it.
 * @ws: for a weightless blob (format NPR_BLOB_FORMAT_WL), its weights
 *      section, the file open (npr_blob_wsrc_open()) and @ws->dst room
 *      in @mem for the constants read from it; NULL for another blob.
 * @held: set to a malloc'd flag per value of the graph, whether the
 *        backend's prepared constants hold its bytes, or NULL; the caller
 *        frees it, on failure too.
 *
 * Every count, index and string is checked against the payload's bounds,
 * and each body's structure (npr_blob_check_structure()); the model's
 * graph is left to npr_blob_check_graph().
 *
 * Return: 0, or -errno with a message: -EBADMSG (the payload ends early),
 * -EINVAL (a malformed payload), -ENOMEM.
 */
int npr_blob_payload_read(struct npr_exec *ex, struct npr_weights *mem,
			  struct npr_wsrc *ws, bool **held)
{
	const struct npr_device *dev = ex->dev;
	struct npr_graph *g = ex->g;
	struct rbuf r = { 0 };
	uint64_t psize;
	int n, i;

	/* the header's, checked: @mem may go on with the weights' room */
	memcpy(&psize, (const unsigned char *)mem->data + 80, 8);
	r.p = (const unsigned char *)mem->data + NPR_BLOB_HEADER;
	r.len = psize;
	r.mem = mem;
	r.ws = ws;
	r.pos = ws ? WSEC_BYTES : 0;
	r_props(&r, &ex->props);
	n = r_count(&r, 64, "caching property");
	for (i = 0; i < n && !r.err; i++) {
		bool present;

		r_str(&r, &present);
	}
	if (!r.err)
		r_ports(&r, &ex->in, &ex->nin);
	if (!r.err)
		r_ports(&r, &ex->out, &ex->nout);
	if (!r.err)
		r_graph(&r, g, 0);
	if (!r.err)
		r_prepared(&r, g, &ex->prep);
	if (!r.err && npr_backend_has_native(dev)) {
		uint64_t nlen = r_u64(&r);

		bool absent = ws && nlen == UINT64_MAX;

		/* absent: the backend compiles the graph */
		if (!r.err && !absent && nlen > r.len - r.pos)
			bad(&r, "native section truncated");
		if (!r.err && !absent) {
			ex->native = malloc(nlen ? nlen : 1);
			if (!ex->native)
				r.err = -ENOMEM;
			else
				memcpy(ex->native, r.p + r.pos, nlen);
			ex->native_len = nlen;
			r.pos += nlen;
		}
	}
	if (!r.err && r.pos != r.len)
		bad(&r, "bytes after the prepared constants");
	if (!r.err && ws && ws->seen != ws->count)
		bad(&r, "fewer weights references than its section counts");
	/* the backend checks that it holds each one (compile) */
	if (!r.err && r.nheld && (!ex->prep || !npr_backend_holds_constants(dev)))
		bad(&r, "constants held by prepared data the blob has not");
	*held = r.held;
	return r.err;
}

/**
 * npr_blob_wsec_read() - the weights section of a weightless blob
 * @blob: the blob, its header checked (format NPR_BLOB_FORMAT_WL).
 * @len: its size.
 * @ws: filled: the weights file's size and hash, the bytes and the
 *      count of the constants the blob takes from it.
 *
 * Return: 0, or -EBADMSG (too short) or -EINVAL (counts that cannot be
 * right) with a message.
 */
int npr_blob_wsec_read(const unsigned char *blob, size_t len,
		       struct npr_wsrc *ws)
{
	const unsigned char *p = blob + NPR_BLOB_HEADER;

	memset(ws, 0, sizeof(*ws));
	if (len < NPR_BLOB_HEADER + WSEC_BYTES)
		return npr_err(-EBADMSG, "blob: payload ends early (in the weights section)");
	memcpy(&ws->fsize, p, 8);
	memcpy(&ws->fhash, p + 8, 8);
	memcpy(&ws->total, p + 16, 8);
	memcpy(&ws->count, p + 24, 4);
	/* a constant converted to f32 takes at most twice its bytes in
	 * the file, each at most NPR_BLOB_ALIGN - 1 of padding */
	if (!ws->count || ws->count > MAX_COUNT ||
	    ws->total % NPR_BLOB_ALIGN ||
	    ws->total > 2 * ws->fsize + (uint64_t)ws->count * NPR_BLOB_ALIGN)
		return npr_err(-EINVAL, "blob: weights section of %u constants in %llu bytes of a %llu-byte file cannot be right",
			       ws->count, (unsigned long long)ws->total,
			       (unsigned long long)ws->fsize);
	return 0;
}
