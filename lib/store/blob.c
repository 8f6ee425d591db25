// SPDX-License-Identifier: MIT
/*
 * Compiled-model blobs: export and import.
 *
 * A blob is a fixed header followed by a payload:
 *
 *   header (96 bytes, little-endian)
 *     0  magic "NPRBLOB\0"
 *     8  u32 format version (NPR_BLOB_FORMAT)
 *    12  u32 header size
 *    16  backend name, 16 bytes, NUL-padded
 *    32  device architecture, 32 bytes, NUL-padded
 *    64  library version, 16 bytes, NUL-padded
 *    80  u64 payload size
 *    88  u64 checksum: npr_blob_hash() of the payload, mixed with that of
 *        header bytes 0..87
 *   payload
 *     the compiled model's properties, its caching properties as
 *     "NAME=VALUE" strings, its ports as the caller sees them (names,
 *     element types, shapes), and the compiled graph: every value (type,
 *     shape, producer, name, constant data where a live node reads it),
 *     every node (op type, version, attributes, edges, dead flag), the
 *     inputs, outputs and variables; then the backend's prepared constants
 *     (packed weights) as opaque buffers under a layout name; then, for a
 *     backend with a native form (ops->native_export: npu), a u64 size
 *     and that many bytes the backend wrote and checks itself.  Constant
 *     data and prepared buffers are 64-byte aligned within the blob.
 *
 * The graph is the one compile produced (lowered to compute types,
 * constants folded, variables turned into ports), so import skips the
 * frontend and the compile passes and goes straight to the backend.
 * Import trusts nothing: the header, the checksum, every count, index and
 * string against the payload's bounds, every op against the registry,
 * and every shape by running shape inference again; the backend checks
 * the prepared buffers.  It copies nothing: constants and prepared
 * buffers point into the blob's memory (npr_blob_import_mem(): a mapped
 * cache entry; npr_blob_import(): one aligned copy of the caller's).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "backend.h"
#include "blob.h"
#include "error.h"
#include "graph/graph.h"
#include "object.h"
#include "props.h"

#define NPR_BLOB_MAGIC		"NPRBLOB"
#define NPR_BLOB_FORMAT		3
#define NPR_BLOB_ALIGN		64	/* constant and prepared data */
#define NPR_BLOB_HELD		(UINT64_MAX - 1)	/* in the prepared data */
#define NPR_BLOB_HEADER		96
#define MAX_COUNT		(1 << 24)	/* nodes, values, attributes */
#define MAX_STR			(1 << 16)

#ifndef NPR_LIB_VERSION
#define NPR_LIB_VERSION		"unknown"
#endif

/*
 * npr_blob_hash() - checksum of a byte range
 * @p: data.
 * @n: its size.
 *
 * Sixty-four independent multiply-rotate lanes over 64-bit words, then
 * the tail: every step is invertible, so any change confined to one word
 * (every single-bit flip) changes the result.  The lanes are independent
 * so that the compiler vectorises them; on x86-64 a second build for
 * AVX-512 (64-bit vector multiplies) runs at several times memory speed:
 * eight vectors of lanes, so that the multiplies' latency is hidden (35
 * us for 2.6 MB in the cache with sixteen lanes, 26 us with 64).  Both
 * builds compute the same value.
 */
#define HASH_LANES	64
#define HASH_BLOCK	(8 * HASH_LANES)	/* bytes per step of the lanes */
#define HASH_K		0x9e3779b97f4a7c15ull

/* The lanes over @n bytes (a multiple of HASH_BLOCK) of @b, from @hp. */
#define HASH_LANES_BODY							\
	uint64_t h[HASH_LANES], w;					\
	size_t i;							\
	int l;								\
									\
	memcpy(h, hp, sizeof(h));					\
	for (i = 0; i + HASH_BLOCK <= n; i += HASH_BLOCK)		\
		for (l = 0; l < HASH_LANES; l++) {			\
			memcpy(&w, b + i + 8 * l, 8);			\
			h[l] = (h[l] ^ w) * HASH_K;			\
			h[l] = (h[l] << 29) | (h[l] >> 35);		\
		}							\
	memcpy(hp, h, sizeof(h))

static void lanes_generic(uint64_t *hp, const unsigned char *b, size_t n)
{
	HASH_LANES_BODY;
}

#if defined(__x86_64__)
__attribute__((target("avx512f,avx512dq")))
static void lanes_avx512(uint64_t *hp, const unsigned char *b, size_t n)
{
	HASH_LANES_BODY;
}
#endif

static void hash_init(uint64_t *h)
{
	int l;

	for (l = 0; l < HASH_LANES; l++)
		h[l] = l + 1;
}

/* The lanes over the whole blocks of @n bytes at @b. */
static void hash_lanes(uint64_t *h, const unsigned char *b, size_t n)
{
	n -= n % HASH_BLOCK;
#if defined(__x86_64__)
	if (n >= 4096) {
		__builtin_cpu_init();
		if (__builtin_cpu_supports("avx512f") &&
		    __builtin_cpu_supports("avx512dq")) {
			lanes_avx512(h, b, n);
			return;
		}
	}
#endif
	lanes_generic(h, b, n);
}

/* The value: the lanes, the size and the bytes past the last block. */
static uint64_t hash_final(const uint64_t *h, const unsigned char *b,
			   size_t n)
{
	uint64_t r = n;
	size_t i;
	int l;

	for (l = 0; l < HASH_LANES; l++)
		r = ((r ^ h[l]) * HASH_K) ^ (r >> 31);
	for (i = n - n % HASH_BLOCK; i < n; i++)
		r = ((r ^ b[i]) * HASH_K) ^ (r >> 29);
	return r ^ (r >> 33);
}

uint64_t npr_blob_hash(const void *p, size_t n)
{
	uint64_t h[HASH_LANES];

	hash_init(h);
	hash_lanes(h, p, n);
	return hash_final(h, p, n);
}

/* The header's checksum of the payload's hash @a. */
static uint64_t checksum_of(const unsigned char *h, uint64_t a)
{
	uint64_t b = npr_blob_hash(h, 88);

	return a ^ ((b << 17) | (b >> 47));
}

/* The header's checksum: payload and header (up to the checksum). */
static uint64_t blob_checksum(const unsigned char *h, uint64_t psize)
{
	return checksum_of(h, npr_blob_hash(h + NPR_BLOB_HEADER, psize));
}

/* ---- writing ------------------------------------------------------------ */

struct wbuf {
	unsigned char *p;
	size_t len, cap;
	int err;
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

		w_u32(w, v->type);
		w_shape(w, &v->shape);
		w_u32(w, (uint32_t)v->producer);
		w_u32(w, (uint32_t)v->port);
		w_str(w, v->name);
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

static void header_field(unsigned char *dst, size_t len, const char *s)
{
	memset(dst, 0, len);
	memcpy(dst, s, strnlen(s, len - 1));
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

/**
 * npr_blob_caching_props() - the compiled model's caching properties
 * @dev: the device.
 * @p: the compiled model's properties.
 * @w: where "NAME=VALUE" strings go.
 *
 * The strings are part of every blob and of the model cache key.
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

/**
 * npr_blob_export() - serialize a compiled model
 * @ex: the compiled model.
 * @out: the blob, malloc'd, owned by the caller.
 * @len: its size.
 *
 * Return: 0 or -ENOMEM.
 */
int npr_blob_export(const struct npr_exec *ex, void **out, size_t *len)
{
	const struct npr_device *dev = ex->dev;
	struct npr_prepared *prep = NULL;
	struct wbuf w = { 0 };
	unsigned char *h;
	uint64_t psize;
	int dyn = npr_graph_dynamic(ex->g);
	int err;

	if (dyn >= 0)
		return npr_node_err(&ex->g->nodes[dyn], -EOPNOTSUPP,
				    "export: the output shape depends on input values; such models are not exported yet");
	w_bytes(&w, NULL, NPR_BLOB_HEADER);	/* room for the header */
	w_props(&w, &ex->props);
	w_caching(&w, dev, &ex->props);
	w_ports(&w, ex->in, ex->nin);
	w_ports(&w, ex->out, ex->nout);
	w_graph(&w, ex->g, ex);
	{
		unsigned long mark = npr_err_mark();

		err = npr_backend_prepared(ex, &prep);
		if (err) {
			free(w.p);
			return npr_err_default(err, mark);
		}
	}
	w_prepared(&w, prep);
	free(prep);
	if (npr_backend_has_native(dev)) {
		void *nat = NULL;
		size_t nlen = 0;

		err = npr_backend_native_export(ex, &nat, &nlen);
		if (err) {
			free(w.p);
			return err;
		}
		w_u64(&w, nlen);
		w_bytes(&w, nat, nlen);
		free(nat);
	}
	if (w.err) {
		free(w.p);
		return npr_err(w.err, "out of memory writing the blob");
	}
	h = w.p;
	memset(h, 0, NPR_BLOB_HEADER);
	memcpy(h, NPR_BLOB_MAGIC, 8);
	*(uint32_t *)(h + 8) = NPR_BLOB_FORMAT;
	*(uint32_t *)(h + 12) = NPR_BLOB_HEADER;
	header_field(h + 16, 16, npr_backend_name(dev));
	header_field(h + 32, 32, dev->info.arch);
	header_field(h + 64, 16, NPR_LIB_VERSION);
	psize = w.len - NPR_BLOB_HEADER;
	memcpy(h + 80, &psize, 8);
	*(uint64_t *)(h + 88) = blob_checksum(h, psize);
	*out = w.p;
	*len = w.len;
	return 0;
}

/* ---- reading ------------------------------------------------------------ */

struct rbuf {
	const unsigned char *p;	/* the payload, NPR_BLOB_ALIGN aligned - 96 */
	size_t len, pos;
	int err;
	struct npr_blob *mem;	/* the whole blob, constants point into it */
	bool *held;		/* per value of the top graph: no bytes, the
				 * backend's prepared constants have them */
	int nheld;
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

static int check_structure(struct npr_graph *g, const bool *held);

static int r_graph(struct rbuf *r, struct npr_graph *g, int depth)
{
	bool present;
	int i, j, n;

	g->name = r_str(r, &present);
	g->ir_version = (int)r_u32(r);
	if (!g->weights)
		g->weights = npr_blob_get(r->mem);
	n = r_count(r, MAX_COUNT, "value");
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
	n = r_count(r, MAX_COUNT, "node");
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
		if (check_structure(g, NULL))
			r->err = npr_last_errno() ? npr_last_errno() : -EINVAL;
	}
	return r->err;
}

static bool in_range(int v, int n)
{
	return v >= 0 && v < n;
}

/*
 * npr_op_find() walks every op definition; a compiled graph has a few
 * distinct (type, version) pairs over many nodes: remember the last ones.
 */
struct op_memo {
	const char *type[16];
	unsigned int version[16];
	const struct npr_op_def *op[16];
	int n, next;
};

static const struct npr_op_def *op_find_memo(struct op_memo *m,
					     const char *type,
					     unsigned int version)
{
	const struct npr_op_def *op;
	int i;

	for (i = 0; i < m->n; i++)
		if (m->version[i] == version && m->type[i][0] == type[0] &&
		    !strcmp(m->type[i], type))
			return m->op[i];
	op = npr_op_find(type, version);
	if (op) {
		i = m->n < 16 ? m->n++ : m->next++ % 16;
		m->type[i] = type;
		m->version[i] = version;
		m->op[i] = op;
	}
	return op;
}

/* Every index in range, edges consistent, ops known; then parse and
 * infer every live node again and compare with what the blob says. */
/* Indices, producers, ops, order: what must hold before any op code
 * looks at the graph. */
static int check_structure(struct npr_graph *g, const bool *held)
{
	struct op_memo memo;
	int i, j;

	memo.n = 0;
	memo.next = 0;

	for (i = 0; i < g->nvals; i++) {
		const struct npr_value *v = &g->vals[i];

		if (!in_range(v->producer, g->nnodes) ||
		    !in_range(v->port, g->nodes[v->producer].nout) ||
		    g->nodes[v->producer].out[v->port] != i)
			return npr_err(-EINVAL, "blob: value %d has a bad producer",
				       i);
		if (!npr_elem_size(v->type) && v->type != NPR_ELEM_BOOLEAN)
			return npr_err(-EINVAL, "blob: value %d has element type %u",
				       i, v->type);
	}

	for (i = 0; i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];

		n->op = op_find_memo(&memo, n->type, n->version);
		if (!n->op)
			return npr_err(-EINVAL, "blob: node %d: unknown op %.64s-%u",
				       i, n->type, n->version);
		if (!(n->op->flags & NPR_OP_BODIES) != !n->nbodies)
			return npr_err(-EINVAL, "blob: node %d: %s with %d sub-graphs",
				       i, n->type, n->nbodies);
		for (j = 0; j < n->nout; j++)
			if (!in_range(n->out[j], g->nvals) ||
			    g->vals[n->out[j]].producer != i)
				return npr_err(-EINVAL, "blob: node %d: bad output %d",
					       i, j);
		for (j = 0; j < n->nin; j++)
			if (!in_range(n->in[j], g->nvals))
				return npr_err(-EINVAL, "blob: node %d: bad input %d",
					       i, j);
	}
	for (i = 0; held && i < g->nvals; i++) {
		const struct npr_node *p = &g->nodes[g->vals[i].producer];

		/* a constant: a Const, or a node compile folded */
		if (held[i] && !p->dead && (!(p->op->flags & NPR_OP_SOURCE) ||
					    !strcmp(p->type, "Parameter")))
			return npr_err(-EINVAL, "blob: value %d is held but computed",
				       i);
	}
	for (i = 0; i < g->nnodes; i++) {
		const struct npr_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		if (n->nin < n->op->nin_min ||
		    (n->op->nin_max >= n->op->nin_min &&
		     n->nin > n->op->nin_max))
			return npr_err(-EINVAL, "blob: node %d: %d inputs", i,
				       n->nin);
		for (j = 0; j < n->nin; j++) {
			const struct npr_value *v = npr_in(g, n, j);
			const struct npr_node *p = &g->nodes[v->producer];

			if (v->data || (held && held[n->in[j]]))
				continue;
			/* computed: by a live node that runs earlier, or a
			 * Parameter (state ports come last) */
			if (!strcmp(p->type, "Parameter") && !p->dead)
				continue;
			if ((p->op->flags & NPR_OP_SOURCE) || p->dead ||
			    v->producer >= i)
				return npr_err(-EINVAL, "blob: node %d input %d is not computed before it",
					       i, j);
		}
	}
	for (i = 0; i < g->ninputs; i++)
		if (!in_range(g->inputs[i], g->nnodes) ||
		    strcmp(g->nodes[g->inputs[i]].type, "Parameter") ||
		    g->nodes[g->inputs[i]].nout != 1)
			return npr_err(-EINVAL, "blob: input %d is not a Parameter", i);
	for (i = 0; i < g->noutputs; i++)
		if (!in_range(g->outputs[i], g->nnodes) ||
		    strcmp(g->nodes[g->outputs[i]].type, "Result") ||
		    g->nodes[g->outputs[i]].nin != 1)
			return npr_err(-EINVAL, "blob: output %d is not a Result", i);
	return 0;
}

static int check_graph(struct npr_graph *g, const bool *held,
		       const struct npr_port *in, int nin,
		       const struct npr_port *out, int nout)
{
	char b1[128], b2[128];
	int i, j, err;

	err = check_structure(g, held);
	if (err)
		return err;
	if (g->ninputs != nin || g->noutputs != nout)
		return npr_err(-EINVAL, "blob: port counts differ from the graph's");
	for (i = 0; i < nin + nout; i++) {
		bool o = i >= nin;
		int k = o ? i - nin : i;
		int node = o ? g->outputs[k] : g->inputs[k];
		const struct npr_port *p = o ? &out[k] : &in[k];

		if (!in_range(node, g->nnodes) ||
		    !in_range(p->value, g->nvals) ||
		    strcmp(g->nodes[node].type, o ? "Result" : "Parameter") ||
		    (o ? g->nodes[node].nin : g->nodes[node].nout) != 1 ||
		    p->value != (o ? g->nodes[node].in[0] :
				 g->nodes[node].out[0]) ||
		    !npr_shape_eq(&p->shape, &g->vals[p->value].shape))
			return npr_err(-EINVAL, "blob: %s port %d does not match the graph",
				       o ? "output" : "input", k);
	}
	if (g->nstate_in < 0 || g->nstate_in > g->ninputs ||
	    g->nstate_out < 0 || g->nstate_out > g->noutputs)
		return npr_err(-EINVAL, "blob: bad state port counts");
	for (i = 0; i < g->nvars; i++) {
		const struct npr_variable *v = &g->vars[i];
		int first_in = g->ninputs - g->nstate_in;
		int first_out = g->noutputs - g->nstate_out;

		if (v->state_in < first_in || v->state_in >= g->ninputs ||
		    (v->valid_in != -1 && (v->valid_in < first_in ||
					   v->valid_in >= g->ninputs)) ||
		    (v->state_out != -1 && (v->state_out < first_out ||
					    v->state_out >= g->noutputs)) ||
		    !in_range(v->read_node, g->nnodes) ||
		    (v->valid_in != -1 &&
		     g->nodes[v->read_node].nin != 3))
			return npr_err(-EINVAL, "blob: variable %d is malformed",
				       i);
		if (v->state_out != -1 &&
		    in[v->state_in].bytes != out[v->state_out].bytes)
			return npr_err(-EINVAL, "blob: variable %d: sizes differ",
				       i);
	}
	for (i = 0; i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];
		struct npr_value saved[16];
		int err;

		if (n->dead || (n->op->flags & NPR_OP_SOURCE))
			continue;
		if (n->nout > 16)
			return npr_err(-EINVAL, "blob: node %d has %d outputs",
				       i, n->nout);
		for (j = 0; j < n->nin; j++)
			if (!npr_shape_static(&npr_in(g, n, j)->shape))
				return npr_err(-EINVAL, "blob: node %d input %d has no shape",
					       i, j);
		for (j = 0; j < n->nout; j++)
			saved[j] = *npr_out(g, n, j);
		if (n->op->parse) {
			err = n->op->parse(g, n);
			if (err)
				return npr_err_default(err, 0);
		}
		err = n->op->infer(g, n);
		if (err)
			return npr_err_default(err, 0);
		for (j = 0; j < n->nout; j++) {
			struct npr_value *v = npr_out(g, n, j);

			if (v->type != saved[j].type ||
			    !npr_shape_eq(&v->shape, &saved[j].shape))
				return npr_node_err(n, -EINVAL,
						    "blob: output %d is %s %s, the blob says %s %s",
						    j, npr_elem_name(v->type),
						    npr_shape_str(&v->shape, b1, sizeof(b1)),
						    npr_elem_name(saved[j].type),
						    npr_shape_str(&saved[j].shape, b2, sizeof(b2)));
			if (v->data != saved[j].data)
				return npr_node_err(n, -EINVAL,
						    "blob: output %d became constant", j);
		}
	}
	return 0;
}

static void header_str(char *dst, const unsigned char *src, size_t len)
{
	memcpy(dst, src, len);
	dst[len - 1] = 0;
}

/**
 * npr_blob_check_header() - is this a blob for this device?
 * @dev: the device.
 * @buf: the blob.
 * @len: its size.
 *
 * Return: 0, -ENOEXEC (not a blob), -EPROTONOSUPPORT (another format or
 * library version), -EBADMSG (truncated, or the checksum does not match),
 * -ENODEV (another backend or architecture), in this order.
 */
static int check_header(const struct npr_device *dev, const void *buf,
			size_t len, bool sum)
{
	const unsigned char *h = buf;
	char backend[16], arch[32], version[16];
	uint64_t psize, hash;

	if (len < 8 || memcmp(h, NPR_BLOB_MAGIC, 8))
		return npr_err(-ENOEXEC, "not an npuring compiled-model blob");
	if (len < NPR_BLOB_HEADER)
		return npr_err(-EBADMSG, "blob truncated: %zu bytes, the header alone is %d",
			       len, NPR_BLOB_HEADER);
	if (*(const uint32_t *)(h + 8) != NPR_BLOB_FORMAT ||
	    *(const uint32_t *)(h + 12) != NPR_BLOB_HEADER)
		return npr_err(-EPROTONOSUPPORT, "blob format %u, this library reads %d",
			       *(const uint32_t *)(h + 8), NPR_BLOB_FORMAT);
	memcpy(&psize, h + 80, 8);
	memcpy(&hash, h + 88, 8);
	if (psize != len - NPR_BLOB_HEADER)
		return npr_err(-EBADMSG, "blob truncated or padded: payload of %zu bytes, the header says %llu",
			       len - NPR_BLOB_HEADER,
			       (unsigned long long)psize);
	if (sum && blob_checksum(h, psize) != hash)
		return npr_err(-EBADMSG, "blob corrupt: checksum mismatch");
	header_str(backend, h + 16, sizeof(backend));
	header_str(arch, h + 32, sizeof(arch));
	header_str(version, h + 64, sizeof(version));
	if (strcmp(version, NPR_LIB_VERSION))
		return npr_err(-EPROTONOSUPPORT, "blob written by library %s, this is %s",
			       version, NPR_LIB_VERSION);
	if (strcmp(backend, npr_backend_name(dev)))
		return npr_err(-ENODEV, "blob compiled for the %s device, not %s",
			       backend, npr_backend_name(dev));
	if (strcmp(arch, dev->info.arch))
		return npr_err(-ENODEV, "blob compiled for architecture %s, this device is %s",
			       arch, dev->info.arch);
	return 0;
}

int npr_blob_check_header(const struct npr_device *dev, const void *buf,
			  size_t len)
{
	return check_header(dev, buf, len, true);
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
	n = r_count(r, MAX_COUNT, "prepared buffer");
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
 * npr_blob_import_mem() - rebuild a compiled model from a blob in memory
 * @dev: the device.
 * @mem: the blob, NPR_BLOB_ALIGN aligned (a mapped file or a heap copy).
 *       The compiled model's constants and prepared buffers point into it;
 *       its graph takes a reference.
 * @out: the compiled model (graph, ports, properties, ex->prep), not yet
 *       given to the backend; set also on failure (free it).
 *
 * Return: 0 or -errno with the message set (npr_blob_check_header()'s,
 * -EINVAL for a payload that is not a valid compiled graph, -ENOMEM).
 */
static int import_mem(struct npr_device *dev, struct npr_blob *mem,
		      bool checked, struct npr_exec **out)
{
	struct rbuf r = { 0 };
	struct npr_exec *ex;
	struct npr_graph *g;
	int err, n, i;

	*out = NULL;
	err = checked ? 0 : npr_blob_check_header(dev, mem->data, mem->size);
	if (err)
		return err;
	if ((uintptr_t)mem->data % NPR_BLOB_ALIGN)
		return npr_err(-EINVAL, "blob memory not %d-byte aligned",
			       NPR_BLOB_ALIGN);
	r.p = (const unsigned char *)mem->data + NPR_BLOB_HEADER;
	r.len = mem->size - NPR_BLOB_HEADER;
	r.mem = mem;
	ex = calloc(1, sizeof(*ex));
	g = npr_graph_new();
	if (!ex || !g) {
		free(ex);
		npr_graph_free(g);
		return -ENOMEM;
	}
	ex->refs = 1;
	ex->dev = dev;
	ex->g = g;
	*out = ex;	/* the caller frees it like any exec */
	npr_props_init(&ex->props);	/* defaults for what blobs lack */
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

		if (!r.err && nlen > r.len - r.pos)
			bad(&r, "native section truncated");
		if (!r.err) {
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
	/* the backend checks that it holds each one (compile) */
	if (!r.err && r.nheld && (!ex->prep || !npr_backend_holds_constants(dev)))
		bad(&r, "constants held by prepared data the blob has not");
	err = r.err;
	if (!err)
		err = check_graph(g, r.held, ex->in, ex->nin, ex->out,
				  ex->nout);
	free(r.held);
	return err;
}

int npr_blob_import_mem(struct npr_device *dev, struct npr_blob *mem,
			struct npr_exec **out)
{
	return import_mem(dev, mem, false, out);
}

/*
 * The checksum beside the import.  A cache hit's import reads the graph
 * and the backend plans it while a hashing thread (started on first use,
 * one per process, at the lowest priority) hashes the entry, a chunk at
 * a time, publishing the lanes after each chunk.  When the import is
 * done the caller takes what is left: the whole job if the thread has
 * not picked it up, else the rest after its last published chunk.  The
 * hand-over is lock-free, so the caller never waits for the thread: one
 * that gets no CPU (a busy machine) costs the hit nothing but the
 * posting.  A mismatch fails the hit as before.  Import checks every
 * count, index and string against the blob's bounds, so reading a
 * corrupt entry before its sum is known is safe.  One job at a time: a
 * second hit meanwhile, or a process whose thread could not be started
 * (or a forked child), hashes inline.
 *
 * The job's state word is (published chunks << 1 | taken).  The thread
 * writes chunk k + 1's lanes into the checkpoint k + 1 does not share
 * with k, then publishes with a compare-and-swap that fails once the
 * caller has taken the job; the caller sets taken and reads the
 * checkpoint of the count it got, which the thread no longer writes.
 */
#define SUM_CHUNK	(128u << 10)	/* bytes hashed at once */
#define SUM_ASYNC_MIN	(2 * SUM_CHUNK)	/* smaller entries: inline */

struct blob_sum {
	struct npr_blob *mem;	/* a reference while the thread may read */
	const unsigned char *p;	/* the payload */
	size_t n;
	struct {
		uint64_t lanes[HASH_LANES];	/* over p[0, done) */
		size_t done;
	} ckpt[2];
	uint64_t state;		/* atomic: published << 1 | taken */
	int refs;		/* atomic: the caller's and the thread's */
};

static struct blob_sum *sum_slot;	/* atomic: the job to pick up */
static int sum_seq;			/* atomic: futex word, bumped per post */
static pthread_once_t sum_once = PTHREAD_ONCE_INIT;
static bool sum_thread;			/* the hashing thread runs */

static void sum_put(struct blob_sum *s)
{
	if (__atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL))
		return;
	npr_blob_put(s->mem);
	free(s);
}

static void sum_run(struct blob_sum *s)
{
	uint64_t h[HASH_LANES], k = 0;
	size_t off = 0;

	memcpy(h, s->ckpt[0].lanes, sizeof(h));
	while (off < s->n) {
		size_t len = s->n - off < SUM_CHUNK ? s->n - off : SUM_CHUNK;
		uint64_t expect = k << 1;

		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) & 1)
			break;		/* taken */
		hash_lanes(h, s->p + off, len);
		off += len - len % HASH_BLOCK;
		memcpy(s->ckpt[(k + 1) & 1].lanes, h, sizeof(h));
		s->ckpt[(k + 1) & 1].done = off;
		if (!__atomic_compare_exchange_n(&s->state, &expect,
						 (k + 1) << 1, false,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			break;		/* taken meanwhile */
		k++;
		if (len < SUM_CHUNK)
			break;
	}
	sum_put(s);
}

static void *sum_main(void *arg)
{
	(void)arg;
	/* the lowest priority: a CPU nothing else wants */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	for (;;) {
		int seq = __atomic_load_n(&sum_seq, __ATOMIC_ACQUIRE);
		struct blob_sum *s = __atomic_exchange_n(&sum_slot, NULL,
							 __ATOMIC_ACQ_REL);

		if (s)
			sum_run(s);
		else
			syscall(SYS_futex, &sum_seq, FUTEX_WAIT_PRIVATE, seq,
				NULL, NULL, 0);
	}
	return NULL;
}

/* the child of a fork has no hashing thread: it hashes inline */
static void sum_child(void)
{
	sum_thread = false;
	__atomic_store_n(&sum_slot, NULL, __ATOMIC_RELAXED);
}

static void sum_init(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;

	if (pthread_atfork(NULL, NULL, sum_child))
		return;
	if (pthread_attr_init(&attr))
		return;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 << 10);
	/* the hashing thread takes no signals of the process */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	sum_thread = !pthread_create(&t, &attr, sum_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
}

/* Hand the payload of @mem to the hashing thread; NULL: hash it inline. */
static struct blob_sum *sum_start(struct npr_blob *mem)
{
	struct blob_sum *s, *none = NULL;

	if (mem->size - NPR_BLOB_HEADER < SUM_ASYNC_MIN)
		return NULL;
	pthread_once(&sum_once, sum_init);
	if (!sum_thread || !(s = calloc(1, sizeof(*s))))
		return NULL;
	s->mem = npr_blob_get(mem);
	s->p = (const unsigned char *)mem->data + NPR_BLOB_HEADER;
	s->n = mem->size - NPR_BLOB_HEADER;
	hash_init(s->ckpt[0].lanes);
	s->refs = 2;		/* ours, and the thread's once it picks it */
	if (!__atomic_compare_exchange_n(&sum_slot, &none, s, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		npr_blob_put(s->mem);	/* another hit's job is waiting */
		free(s);
		return NULL;
	}
	__atomic_add_fetch(&sum_seq, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &sum_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	return s;
}

/* The checksum of @mem: what the hashing thread did of @s, and the rest. */
static uint64_t sum_finish(struct blob_sum *s, const struct npr_blob *mem)
{
	const unsigned char *h = mem->data;
	uint64_t lanes[HASH_LANES], k;
	struct blob_sum *mine = s;
	size_t done;

	if (!s)
		return blob_checksum(h, mem->size - NPR_BLOB_HEADER);
	if (__atomic_compare_exchange_n(&sum_slot, &mine, NULL, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		sum_put(s);	/* not picked up: the thread's share too */
	k = __atomic_fetch_or(&s->state, 1, __ATOMIC_ACQ_REL) >> 1;
	memcpy(lanes, s->ckpt[k & 1].lanes, sizeof(lanes));
	done = k ? s->ckpt[k & 1].done : 0;
	sum_put(s);
	hash_lanes(lanes, h + NPR_BLOB_HEADER + done,
		   mem->size - NPR_BLOB_HEADER - done);
	return checksum_of(h, hash_final(lanes, h + NPR_BLOB_HEADER,
					 mem->size - NPR_BLOB_HEADER));
}

/**
 * npr_blob_import_compiled() - import a mapped cache entry and compile it
 * @dev: the device.
 * @mem: the entry's memory, 64-byte aligned (a mapping); the compiled
 *       model takes its own reference.
 * @out: on success, the compiled model (the backend's compile done).
 *
 * npr_blob_import_mem() and the backend's compile, with the checksum
 * taken beside them (above).  The checks and their errors are those of
 * the two, but for their order: a checksum mismatch is reported in place
 * of whatever the corrupt bytes made fail first.
 *
 * Return: 0, or -errno with a message; on failure *@out is NULL.
 */
int npr_blob_import_compiled(struct npr_device *dev, struct npr_blob *mem,
			     struct npr_exec **out)
{
	const unsigned char *h = mem->data;
	struct npr_exec *ex = NULL;
	struct blob_sum *sum;
	uint64_t hash;
	int err;

	*out = NULL;
	err = check_header(dev, mem->data, mem->size, false);
	if (err)
		return err;
	sum = sum_start(mem);
	err = import_mem(dev, mem, true, &ex);
	if (!err)
		err = npr_backend_compile(ex);
	memcpy(&hash, h + 88, 8);
	if (sum_finish(sum, mem) != hash)
		err = npr_err(-EBADMSG, "blob corrupt: checksum mismatch");
	if (err) {
		npr_exec_free(ex);
		return err;
	}
	*out = ex;
	return 0;
}

/**
 * npr_blob_import() - rebuild a compiled model from a blob the caller owns
 * @dev: the device.
 * @buf: the blob; copied once (aligned), so it need not outlive the call.
 * @len: its size.
 * @out: as for npr_blob_import_mem().
 *
 * Return: as npr_blob_import_mem().
 */
int npr_blob_import(struct npr_device *dev, const void *buf, size_t len,
		    struct npr_exec **out)
{
	struct npr_blob *mem;
	int err;

	*out = NULL;
	/* the header first: a wrong file costs no copy */
	err = npr_blob_check_header(dev, buf, len);
	if (err)
		return err;
	mem = calloc(1, sizeof(*mem));
	if (!mem)
		return -ENOMEM;
	if (posix_memalign(&mem->data, NPR_BLOB_ALIGN, len)) {
		free(mem);
		return npr_err(-ENOMEM, "no memory for a blob of %zu bytes", len);
	}
	memcpy(mem->data, buf, len);
	mem->size = len;
	mem->refs = 1;
	err = import_mem(dev, mem, true, out);
	npr_blob_put(mem);	/* the graph holds its own reference */
	return err;
}
