// SPDX-License-Identifier: MIT
/*
 * The model cache (CACHE_DIR).
 *
 * An entry is a compiled-model blob (lib/store/blob.c), KEY.blob, and a text
 * file KEY.meta listing what the key was made of, one "name=value" line
 * each:
 *
 *   model=   128-bit hash of the loaded model: every node (op, version,
 *            attributes, edges), every value (type, shape, name) and the
 *            bytes of every constant, so the same model from IR, from
 *            memory or with its weights elsewhere gets the same key.
 *            Taken once per model handle (npr_model_hash(), kept in
 *            struct npr_model): at MODEL_LOAD when the device has a
 *            CACHE_DIR, else at the handle's first cached COMPILE
 *   file=, bin=  instead of model=, for a handle loaded with
 *            NPR_MODEL_LOAD_DEFER: the .xml (.onnx) and the weights file
 *            by absolute path, device, inode, size and mtime (ns), so a
 *            hit reads neither; "bin=-" for none
 *   shapes=  the input shapes given to COMPILE, "-" for the model's own
 *   backend=, arch=, version=   device backend and architecture, library
 *   caching= the caching properties (CACHING_PROPERTIES), NAME=VALUE,...
 *   name=    the model's name (not part of the key)
 *
 * KEY is the 128-bit hash of the key lines, in hex.  A hit's checksum is
 * taken beside its import (npr_blob_import_compiled()).  Writes go to a
 * temporary file in the directory, are fsync'ed and renamed over the
 * entry, so a reader sees the old entry or the new one.  An entry that
 * does not import (truncated, corrupt, from another library version) is
 * logged as a warning (npr_set_log()), compiled again and replaced.  A hit
 * sets the entry's modification time: it is its last use, and pruning
 * removes the least recently used entries until the directory is under
 * NPR_CACHE_MAX_MB.  With NPR_CACHE_REQUIRED a miss fails with -ENOENT
 * instead of compiling.  Failing to write an entry never fails a compile.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "blob.h"
#include "cache.h"
#include "error.h"
#include "graph/graph.h"
#include "object.h"
#include "props.h"

/*
 * Streaming 128-bit hash: two npr_blob_hash chains over chunks.  Small
 * items (counts, shapes, names) are gathered into @buf and hashed 4 KB at
 * a time; large ones (weights) are hashed where they are.
 */
struct h128 {
	uint64_t a, b;
	size_t len;
	unsigned char buf[4096];
};

static void h_chunk(struct h128 *h, const void *p, size_t n)
{
	uint64_t x = npr_blob_hash(p, n);

	h->a = (h->a ^ x) * 0x9e3779b97f4a7c15ull;
	h->a ^= h->a >> 29;
	h->b = (h->b + x) * 0xc2b2ae3d27d4eb4full;
	h->b ^= h->b >> 31;
	h->b += n;
}

static void h_flush(struct h128 *h)
{
	if (h->len)
		h_chunk(h, h->buf, h->len);
	h->len = 0;
}

static void h_add(struct h128 *h, const void *p, size_t n)
{
	if (n > 256) {
		h_flush(h);
		h_chunk(h, p, n);
		return;
	}
	if (h->len + n > sizeof(h->buf))
		h_flush(h);
	memcpy(h->buf + h->len, p, n);
	h->len += n;
}

static void h_u64(struct h128 *h, uint64_t v)
{
	h_add(h, &v, sizeof(v));
}

static void h_str(struct h128 *h, const char *s)
{
	h_add(h, s ? s : "\377", s ? strlen(s) + 1 : 1);
}

static void graph_hash_into(struct h128 *h, const struct npr_graph *g);

/**
 * npr_model_hash() - content hash of a loaded model, the key's model= line
 * @g: the graph.
 * @out: 33 bytes for 32 hex digits.
 *
 * It reads every constant's bytes: the caller keeps it with the model
 * (struct npr_model) rather than hashing again on every COMPILE.
 */
void npr_model_hash(const struct npr_graph *g, char *out)
{
	struct h128 h = { .a = 0x6a09e667f3bcc908ull,
			  .b = 0xbb67ae8584caa73bull };

	graph_hash_into(&h, g);
	h_flush(&h);
	snprintf(out, 33, "%016llx%016llx", (unsigned long long)h.a,
		 (unsigned long long)h.b);
}

static void graph_hash_into(struct h128 *h, const struct npr_graph *g)
{
	int i, j, k;

	h_u64(h, (uint64_t)g->nvals);
	for (i = 0; i < g->nvals; i++) {
		const struct npr_value *v = &g->vals[i];

		h_u64(h, v->type);
		h_u64(h, (uint64_t)v->shape.rank);
		for (j = 0; j < v->shape.rank && j < NPR_MAX_RANK; j++)
			h_u64(h, (uint64_t)v->shape.d[j]);
		h_u64(h, (uint64_t)v->producer);
		h_u64(h, (uint64_t)v->port);
		h_str(h, v->name);
		if (v->data)
			h_add(h, v->data, v->nbytes);
	}
	h_u64(h, (uint64_t)g->nnodes);
	for (i = 0; i < g->nnodes; i++) {
		const struct npr_node *n = &g->nodes[i];

		h_str(h, n->name);
		h_str(h, n->type);
		h_u64(h, n->version);
		for (j = 0; j < n->nin; j++)
			h_u64(h, (uint64_t)n->in[j]);
		h_u64(h, (uint64_t)n->nout);
		for (j = 0; j < n->nattr; j++) {
			h_str(h, n->attr[j].key);
			h_str(h, n->attr[j].val);
		}
		/* sub-graphs, with their port maps and back edges */
		h_u64(h, (uint64_t)n->nbodies);
		for (j = 0; j < n->nbodies; j++) {
			const struct npr_body *b = &n->bodies[j];

			graph_hash_into(h, b->g);
			for (k = 0; k < b->nports; k++) {
				const struct npr_body_port *p = &b->ports[k];
				int64_t f[10] = { p->out, p->sliced, p->ext,
						  p->internal, p->purpose,
						  p->axis, p->start, p->end,
						  p->stride, p->part_size };

				h_add(h, f, sizeof(f));
			}
			for (k = 0; k < b->nback; k++) {
				h_u64(h, (uint64_t)b->back[k].from);
				h_u64(h, (uint64_t)b->back[k].to);
			}
		}
	}
	for (i = 0; i < g->ninputs; i++)
		h_u64(h, (uint64_t)g->inputs[i]);
	for (i = 0; i < g->noutputs; i++)
		h_u64(h, (uint64_t)g->outputs[i]);
}

static size_t file_line(char *buf, size_t len, const char *name,
			const char *path, const struct npr_model_file *f)
{
	int n;

	if (!path || f->absent)
		n = snprintf(buf, len, "%s=-\n", name);
	else
		n = snprintf(buf, len,
			     "%s=%s dev=%llu ino=%llu size=%llu mtime=%lld.%09lld\n",
			     name, path, (unsigned long long)f->dev,
			     (unsigned long long)f->ino,
			     (unsigned long long)f->size, (long long)f->mtime_sec,
			     (long long)f->mtime_nsec);
	return n < 0 ? 0 : (size_t)n >= len ? len - 1 : (size_t)n;
}

/**
 * npr_cache_model_lines() - the key's lines that name the model
 * @m: the model handle; its hash taken (@m->hashed) unless @m->by_file.
 * @buf: filled with "model=HASH\n", or for a handle keyed by its files
 *       "file=PATH dev=.. ino=.. size=.. mtime=SEC.NSEC\n" and the same
 *       "bin=" line for the weights ("bin=-": none, or an ONNX model).
 * @len: its size.
 */
void npr_cache_model_lines(const struct npr_model *m, char *buf, size_t len)
{
	size_t n;

	if (!m->by_file) {
		snprintf(buf, len, "model=%s\n", m->hash);
		return;
	}
	n = file_line(buf, len, "file", m->xml_abs, &m->fx);
	file_line(buf + n, len - n, "bin", m->onnx ? NULL : m->bin_abs,
		  &m->fb);
}

/**
 * npr_cache_key() - the key lines and the entry name of a compile
 * @dev: the device.
 * @model_lines: npr_cache_model_lines() of the model.
 * @ninputs: entries in @shapes.
 * @shapes: per input a shape (rank -1: the model's), or NULL.
 * @p: the compiled model's properties: the values of every caching
 *      property (npr_props_key()) are part of the key.
 * @name: the model's name, for the .meta file only ("" if not known).
 * @weights: the model's weights file (for a weightless entry), or NULL.
 * @k: filled.
 */
void npr_cache_key(struct npr_device *dev, const char *model_lines,
		   int ninputs, const struct npr_shape *shapes,
		   const struct npr_props *p, const char *name,
		   const char *weights, struct npr_cache_key *k)
{
	char sh[512], caching[4096];
	struct h128 h = { .a = 1, .b = 2 };
	size_t len = 0;
	int i, j;

	sh[0] = 0;
	for (i = 0; shapes && i < ninputs; i++) {
		if (shapes[i].rank < 0)
			continue;
		len += snprintf(sh + len, sizeof(sh) - len, "%s%d:", len ? ";" : "",
				i);
		for (j = 0; j < shapes[i].rank && len < sizeof(sh); j++)
			len += snprintf(sh + len, sizeof(sh) - len, "%s%lld",
					j ? "," : "",
					(long long)shapes[i].d[j]);
		if (len >= sizeof(sh))
			len = sizeof(sh) - 1;
	}
	npr_props_key(dev, p, caching, sizeof(caching));
	snprintf(k->lines, sizeof(k->lines),
		 "%sshapes=%s\nbackend=%s\narch=%s\nversion=%s\ncaching=%s\n",
		 model_lines, sh[0] ? sh : "-", npr_backend_name(dev),
		 dev->info.arch, NPR_LIB_VERSION, caching);
	h_str(&h, k->lines);
	h_flush(&h);
	snprintf(k->name, sizeof(k->name), "%016llx%016llx",
		 (unsigned long long)h.a, (unsigned long long)h.b);
	snprintf(k->model_name, sizeof(k->model_name), "%s", name ? name : "");
	snprintf(k->weights, sizeof(k->weights), "%s", weights ? weights : "");
}

/* a warning to the caller's log; the device's LOG_LEVEL may raise it */
static void warn(const struct npr_props *p, const char *fmt, const char *a,
		 const char *b)
{
	npr_log_at((int)p->log_level, NPR_LOG_WARNING, fmt, a, b);
}

static int entry_path(char *buf, size_t len, const char *dir,
		      const char *name, const char *ext)
{
	if (snprintf(buf, len, "%s/%s.%s", dir, name, ext) >= (int)len)
		return npr_err(-ENAMETOOLONG, "CACHE_DIR path too long");
	return 0;
}

/*
 * Map a cache entry: import uses its constants and prepared weights in
 * place, so a hit copies nothing.  Entries are replaced by rename, never
 * rewritten, so the mapping stays valid while an exec uses it.
 */
static struct npr_weights *map_entry(const char *path)
{
	struct npr_weights *b;
	struct stat st;
	void *p;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return NULL;
	}
	/* not MAP_POPULATE: the checksum's page faults map the file in
	 * batches (fault-around), which costs less than populating it */
	p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	/* an entry read into the page cache through this mapping comes in
	 * large folios, which map (and unmap) at a fraction of the kernel's
	 * cost per page of small ones: 0.2 ms of a 2.6 MB entry's hit */
	madvise(p, st.st_size, MADV_HUGEPAGE);
	b = calloc(1, sizeof(*b));
	if (!b) {
		munmap(p, st.st_size);
		return NULL;
	}
	b->data = p;
	b->size = st.st_size;
	b->mapped = true;
	b->refs = 1;
	return b;
}

/**
 * npr_cache_get() - a compiled model from the cache
 * @dev: the device.
 * @k: the key.
 * @p: the properties the compile asked for (CACHE_DIR, logging).
 * @out: on a hit, the compiled model (given to the backend already).
 *
 * Return: 0 on a hit, -ENOENT on a miss (or an entry that does not
 * import, reported and left to be replaced), other -errno on failure.
 */
int npr_cache_get(struct npr_device *dev, const struct npr_cache_key *k,
		  const struct npr_props *p, struct npr_exec **out)
{
	char path[NPR_PROP_STR_MAX + 64];
	struct npr_exec *ex = NULL;
	struct npr_weights *mem;
	int err;

	err = entry_path(path, sizeof(path), p->cache_dir, k->name, "blob");
	if (err)
		return err;
	mem = map_entry(path);
	if (!mem)
		return -ENOENT;
	/* the checksum is taken beside the import and the compile; a
	 * weightless entry reads its constants from the model's file */
	err = npr_blob_import_compiled(dev, mem, k->weights, &ex);
	npr_weights_put(mem);	/* the exec's graph holds its own reference */
	if (err) {
		warn(p, "cache: entry %s does not import (%s); compiling again",
		     path, npr_last_error());
		return -ENOENT;
	}
	/* the compile's own properties (CACHE_DIR and the rest) win over
	 * the stored ones: the cache key covers only the caching ones */
	ex->props = *p;
	ex->from_cache = true;
	utimensat(AT_FDCWD, path, NULL, 0);	/* last use */
	*out = ex;
	return 0;
}

static int cmp_mtime(const void *a, const void *b)
{
	const struct stat *x = a, *y = b;

	if (x->st_mtim.tv_sec != y->st_mtim.tv_sec)
		return x->st_mtim.tv_sec < y->st_mtim.tv_sec ? -1 : 1;
	if (x->st_mtim.tv_nsec != y->st_mtim.tv_nsec)
		return x->st_mtim.tv_nsec < y->st_mtim.tv_nsec ? -1 : 1;
	return 0;
}

/**
 * npr_cache_prune() - remove least recently used entries
 * @dir: the cache directory.
 * @max: size limit in bytes, 0 for none.
 * @keep: an entry name never removed (the one just written), or NULL.
 *
 * Return: the number of entries removed, or -errno.
 */
int npr_cache_prune(const char *dir, uint64_t max, const char *keep)
{
	struct ent {
		struct stat st;	/* first: cmp_mtime sorts by it */
		char name[64];
	} *e = NULL;
	int n = 0, cap = 0, i, removed = 0;
	uint64_t total = 0;
	struct dirent *d;
	DIR *dp;

	if (!max)
		return 0;
	dp = opendir(dir);
	if (!dp)
		return -errno;
	while ((d = readdir(dp))) {
		size_t l = strlen(d->d_name);
		char path[NPR_PROP_STR_MAX + 80];
		struct stat st;

		if (l != 37 || strcmp(d->d_name + 32, ".blob"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			struct ent *m = realloc(e, sizeof(*e) * (cap ? 2 * cap : 16));

			if (!m)
				break;
			e = m;
			cap = cap ? 2 * cap : 16;
		}
		e[n].st = st;
		memcpy(e[n].name, d->d_name, 32);
		e[n].name[32] = 0;
		total += st.st_size;
		n++;
	}
	closedir(dp);
	if (n)	/* e is NULL with no entry, or none allocated */
		qsort(e, n, sizeof(*e), cmp_mtime);
	for (i = 0; i < n && total > max; i++) {
		char path[NPR_PROP_STR_MAX + 80];

		if (keep && !strcmp(e[i].name, keep))
			continue;
		snprintf(path, sizeof(path), "%s/%s.blob", dir, e[i].name);
		if (unlink(path))
			continue;
		snprintf(path, sizeof(path), "%s/%s.meta", dir, e[i].name);
		unlink(path);
		total -= e[i].st.st_size;
		removed++;
	}
	free(e);
	return removed;
}

/* Write @len bytes to DIR/NAME.EXT through a temporary file. */
static int write_atomic(const char *dir, const char *name, const char *ext,
			const void *buf, size_t len)
{
	char tmp[NPR_PROP_STR_MAX + 96], path[NPR_PROP_STR_MAX + 64];
	size_t done = 0;
	int fd, err = 0;

	if (entry_path(path, sizeof(path), dir, name, ext))
		return -ENAMETOOLONG;
	if (snprintf(tmp, sizeof(tmp), "%s/.%s.%s.XXXXXX", dir, name, ext) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t w = write(fd, (const char *)buf + done, len - done);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		done += w;
	}
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/**
 * npr_cache_put() - store a freshly compiled model
 * @ex: the compiled model.
 * @k: its key.
 *
 * Failures are logged as warnings (npr_set_log()) and otherwise ignored:
 * the compile succeeded, and the entries already stored are untouched.
 */
void npr_cache_put(const struct npr_exec *ex, const struct npr_cache_key *k)
{
	const struct npr_props *p = &ex->props;
	char meta[sizeof(k->lines) + 320];
	size_t len = 0;
	void *blob = NULL;
	int err;

	if (mkdir(p->cache_dir, 0755) && errno != EEXIST) {
		warn(p, "cache: CACHE_DIR %s: %s", p->cache_dir,
		     strerror(errno));
		return;
	}
	err = npr_blob_export(ex, &blob, &len);
	if (!err)
		err = write_atomic(p->cache_dir, k->name, "blob", blob, len);
	free(blob);
	if (!err) {
		int n = snprintf(meta, sizeof(meta), "%sname=%s\n", k->lines,
				 k->model_name);

		err = write_atomic(p->cache_dir, k->name, "meta", meta,
				   n < (int)sizeof(meta) ? (size_t)n :
				   sizeof(meta) - 1);
	}
	if (err) {
		warn(p, "cache: cannot write to the cache in %s: %s",
		     p->cache_dir, strerror(-err));
		return;
	}
	npr_cache_prune(p->cache_dir, (uint64_t)p->cache_max_mb << 20,
			k->name);
}
