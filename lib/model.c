// SPDX-License-Identifier: MIT
/*
 * Model and compiled-model commands: MODEL_LOAD, MODEL_INFO, PORT_INFO,
 * COMPILE, EXPORT, IMPORT, QUERY_MODEL and MAKE_STATEFUL, and the ring's
 * LOAD and COMPILE jobs.
 *
 * Called from the ioctl table in lib/dev.c with the argument already
 * copied in and its size checked, or from a ring job (lib/ring/).  A model loaded with
 * NPR_MODEL_LOAD_DEFER has no graph until a command needs it
 * (npr_model_read()); COMPILE with a CACHE_DIR keys it by its files and
 * reads it only on a miss.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>

#include "backend.h"
#include "graph/file.h"
#include "ir/ir.h"
#include "model.h"
#include "object.h"
#include "onnx/onnx.h"
#include "passes/compile.h"
#include "passes/lowp.h"
#include "passes/qlayout.h"
#include "props.h"
#include "query.h"
#include "store/blob.h"
#include "store/cache.h"
#include "sys.h"
#include "uarg.h"

/*
 * IR is XML text; an ONNX ModelProto is protobuf, and protobuf writers
 * emit fields in number order, so it starts with field 1 (ir_version,
 * varint): the byte 0x08.  Anything else is taken for XML and gets the XML
 * parser's diagnosis.
 */
static char *weights_path(const char *xml, const char *bin);

static bool is_onnx_buffer(const unsigned char *p, size_t len)
{
	return len && p[0] == 0x08;
}

/**
 * npr_model_load_ioctl() - NPR_IOCTL_MODEL_LOAD
 * @dev: the device.
 * @arg: struct npr_model_load, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_model_load_ioctl(struct npr_device *dev, void *arg)
{
	struct npr_model_load *a = arg;
	struct npr_graph *g = NULL;
	struct npr_model *m;
	int err;

	err = npr_check_args(a->flags,
			     NPR_MODEL_LOAD_MEMORY | NPR_MODEL_LOAD_DEFER,
			     a->reserved);
	if (err)
		return err;
	if (!a->xml)
		return npr_err(-EINVAL, "no model given (xml is 0)");
	if ((a->flags & NPR_MODEL_LOAD_MEMORY) &&
	    (a->flags & NPR_MODEL_LOAD_DEFER))
		return npr_err(-EINVAL,
			       "NPR_MODEL_LOAD_DEFER defers reading files: not with NPR_MODEL_LOAD_MEMORY");
	if (a->flags & NPR_MODEL_LOAD_MEMORY) {
		struct npr_weights *w = NULL;

		if (!a->xml_size)
			return npr_err(-EINVAL, "xml_size is 0");
		if (a->bin_size && !a->bin)
			return npr_err(-EINVAL, "bin_size without bin");
		if (a->bin) {
			err = npr_ir_weights_from_memory((void *)(uintptr_t)a->bin,
						      a->bin_size, &w);
			if (err)
				return err;
		}
		if (is_onnx_buffer((void *)(uintptr_t)a->xml, a->xml_size)) {
			if (w)
				err = npr_err(-EINVAL,
					      "an ONNX model carries its weights: bin must be 0");
			else
				err = npr_onnx_parse((void *)(uintptr_t)a->xml,
						     a->xml_size, NULL, &g);
		} else {
			err = npr_ir_parse((void *)(uintptr_t)a->xml,
					   a->xml_size, w, &g);
		}
		npr_weights_put(w);
	} else {
		const char *xml = (const char *)(uintptr_t)a->xml;
		const char *bin = (const char *)(uintptr_t)a->bin;

		if (a->xml_size || a->bin_size)
			return npr_err(-EINVAL,
				       "xml_size and bin_size must be 0 for paths");
		if (strnlen(xml, PATH_MAX) >= PATH_MAX ||
		    (bin && strnlen(bin, PATH_MAX) >= PATH_MAX))
			return npr_err(-ENAMETOOLONG, "path too long");
		if (a->flags & NPR_MODEL_LOAD_DEFER)
			return npr_model_load_deferred(dev, xml, bin,
						       &a->handle);
		size_t len = strlen(xml);

		if (len > 5 && !strcmp(xml + len - 5, ".onnx")) {
			if (bin)
				return npr_err(-EINVAL,
					       "an ONNX model carries its weights: bin must be 0");
			err = npr_onnx_load_file(xml, &g);
		} else {
			err = npr_ir_load_file(xml, bin, &g);
		}
	}
	if (err)
		return err;
	m = calloc(1, sizeof(*m));
	if (!m) {
		npr_graph_free(g);
		return -ENOMEM;
	}
	m->g = g;
	if (!(a->flags & NPR_MODEL_LOAD_MEMORY)) {
		m->wpath = weights_path((const char *)(uintptr_t)a->xml,
					(const char *)(uintptr_t)a->bin);
		if (!m->wpath && errno == ENOMEM) {
			npr_model_destroy(m);
			return -ENOMEM;
		}
	}
	/* with a CACHE_DIR on the device every COMPILE needs the model's
	 * hash for its key: take it now, once */
	pthread_mutex_lock(&dev->lock);
	m->hashed = dev->props.cache_dir[0] != 0;
	pthread_mutex_unlock(&dev->lock);
	if (m->hashed) {
		npr_model_hash(g, m->hash);
		npr_graph_drop_weights(g);	/* the hash read the file in */
	}
	pthread_mutex_lock(&dev->lock);
	err = npr_handle_alloc(dev, m, NPR_HANDLE_MODEL, &a->handle);
	pthread_mutex_unlock(&dev->lock);
	if (err)
		npr_model_destroy(m);
	return err;
}

#define ONNX_LOAD_MAX		(2ull << 30)	/* as lib/onnx/read.c's */

static bool is_onnx_path(const char *path)
{
	size_t len = strlen(path);

	return len > 5 && !strcmp(path + len - 5, ".onnx");
}

/*
 * Open and stat a model file as reading it would (the same checks and
 * messages), into @f; -ENOENT for a derived .bin is left to the caller.
 */
static int file_stat(const char *path, const char *what, uint64_t max,
		     bool nonempty, struct npr_model_file *f)
{
	struct stat st;
	int fd;

	fd = npr_file_open(path, what, max, &st);
	if (fd < 0)
		return fd;
	close(fd);
	if (nonempty && !st.st_size)
		return npr_err(-EINVAL, "model %s is empty", path);
	memset(f, 0, sizeof(*f));
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->size = st.st_size;
	f->mtime_sec = st.st_mtim.tv_sec;
	f->mtime_nsec = st.st_mtim.tv_nsec;
	return 0;
}

/* The .xml path with ".xml" replaced by ".bin" (malloc'ed), or NULL. */
static char *derived_bin(const char *xml)
{
	size_t n = strlen(xml);
	char *bin = malloc(n + 5);

	if (!bin)
		return NULL;
	memcpy(bin, xml, n + 1);
	if (n > 4 && !strcasecmp(bin + n - 4, ".xml"))
		bin[n - 4] = 0;
	strcat(bin, ".bin");
	return bin;
}

/*
 * @path made absolute (malloc'ed): as given, or after the current
 * directory.  Not resolved (realpath() reads every component's link):
 * the key also names the file by device and inode, so another spelling
 * of the same path only costs a miss.
 */
static char *abs_path(const char *path)
{
	char cwd[PATH_MAX], *out;

	if (path[0] == '/')
		return strdup(path);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	if (asprintf(&out, "%s/%s", cwd, path) < 0)
		return NULL;
	return out;
}

/*
 * The weights file of a model read from @xml and @bin (NULL: derived),
 * absolute (malloc'ed): the .onnx itself, or the IR's .bin; NULL with
 * errno ENOMEM, or 0 when there is none.
 */
static char *weights_path(const char *xml, const char *bin)
{
	char *def = NULL, *out;

	errno = 0;
	if (is_onnx_path(xml))
		return abs_path(xml);
	if (!bin) {
		bin = def = derived_bin(xml);
		if (!def)
			return NULL;
		if (access(def, F_OK)) {
			free(def);
			errno = 0;
			return NULL;
		}
	}
	out = abs_path(bin);
	if (!out && !errno)
		errno = ENOMEM;
	free(def);
	return out;
}

/* Both files of a model as they are now: @fx, @fb. */
static int model_stat(bool onnx, const char *xml, const char *bin,
		      struct npr_model_file *fx, struct npr_model_file *fb)
{
	char *def = NULL;
	int err;

	memset(fb, 0, sizeof(*fb));
	fb->absent = true;
	err = file_stat(xml, "model", onnx ? ONNX_LOAD_MAX : NPR_IR_MAX_XML,
			onnx, fx);
	if (err || onnx)
		return err;
	if (!bin) {
		bin = def = derived_bin(xml);
		if (!def)
			return -ENOMEM;
	}
	err = file_stat(bin, "weights file", UINT64_MAX, false, fb);
	if (err == -ENOENT && def)
		err = 0;	/* fine unless a Const needs data */
	free(def);
	return err;
}

/**
 * npr_model_load_deferred() - MODEL_LOAD with NPR_MODEL_LOAD_DEFER
 * @dev: the device.
 * @xml: the .xml or .onnx path.
 * @bin: the weights file, or NULL for the .xml's with .bin.
 * @handle: Out. The model handle.
 *
 * The files are opened and stat'ed, not read: npr_model_read() reads
 * them when the graph is needed, COMPILE with a CACHE_DIR keys its entry
 * by their identity.
 *
 * Return: 0, or the errors of MODEL_LOAD for a file that cannot be
 * opened.
 */
int npr_model_load_deferred(struct npr_device *dev, const char *xml,
			    const char *bin, uint32_t *handle)
{
	struct npr_model_file fx, fb;
	char *xabs = NULL, *babs = NULL, *def = NULL, *p;
	bool onnx = is_onnx_path(xml);
	struct npr_model *m = NULL;
	size_t need;
	int err;

	if (onnx && bin)
		return npr_err(-EINVAL,
			       "an ONNX model carries its weights: bin must be 0");
	err = model_stat(onnx, xml, bin, &fx, &fb);
	if (err)
		return err;
	xabs = abs_path(xml);
	if (!xabs) {
		err = errno ? -errno : -ENOMEM;
		return npr_err(err, "cannot make the path of model %s absolute: %s",
			       xml, strerror(-err));
	}
	if (!onnx && !fb.absent) {
		if (!bin)
			bin = def = derived_bin(xml);
		babs = bin ? abs_path(bin) : NULL;
		if (!babs) {
			err = errno ? -errno : -ENOMEM;
			err = npr_err(err, "cannot make the path of weights file %s absolute: %s",
				      bin ? bin : xml, strerror(-err));
			goto out;
		}
		if (def)
			bin = NULL;	/* read it derived, as without the flag */
	}
	need = strlen(xml) + 1 + strlen(xabs) + 1 +
	       (bin ? strlen(bin) + 1 : 0) + (babs ? strlen(babs) + 1 : 0);
	m = calloc(1, sizeof(*m) + need);
	if (!m) {
		err = -ENOMEM;
		goto out;
	}
	p = m->buf;
	m->xml = strcpy(p, xml);
	p += strlen(p) + 1;
	m->xml_abs = strcpy(p, xabs);
	p += strlen(p) + 1;
	if (bin) {
		m->bin = strcpy(p, bin);
		p += strlen(p) + 1;
	}
	if (babs)
		m->bin_abs = strcpy(p, babs);
	m->by_file = true;
	m->onnx = onnx;
	m->fx = fx;
	m->fb = fb;
	if (onnx || babs) {
		m->wpath = strdup(onnx ? xabs : babs);
		if (!m->wpath) {
			npr_model_destroy(m);
			m = NULL;
			err = -ENOMEM;
			goto out;
		}
	}
	pthread_mutex_lock(&dev->lock);
	err = npr_handle_alloc(dev, m, NPR_HANDLE_MODEL, handle);
	pthread_mutex_unlock(&dev->lock);
	if (err)
		npr_model_destroy(m);
out:
	free(def);
	free(babs);
	free(xabs);
	return err;
}

/**
 * npr_model_read() - read the graph of a deferred model handle
 * @dev: the device.
 * @h: a handle; nothing to do for one that is not a deferred model's, or
 *     whose graph was read already.
 *
 * The files are stat'ed again first (the identity the cache key is made
 * of is then that of what was read, or older), then read and parsed as
 * MODEL_LOAD without NPR_MODEL_LOAD_DEFER would, unlocked.  A failure
 * leaves the handle unread: the next command tries again.
 *
 * Return: 0, or the errors of MODEL_LOAD.
 */
int npr_model_read(struct npr_device *dev, uint32_t h)
{
	struct npr_model_file fx, fb;
	struct npr_graph *g = NULL;
	char *xml = NULL, *bin = NULL;
	struct npr_model *m;
	bool onnx = false;
	int err = 0;

	if ((h >> HANDLE_TYPE_SHIFT) != NPR_HANDLE_MODEL)
		return 0;
	pthread_mutex_lock(&dev->lock);
	m = npr_handle_get_locked(dev, h, NPR_HANDLE_MODEL, &err);
	if (m && !m->g) {
		onnx = m->onnx;
		xml = strdup(m->xml);
		bin = m->bin ? strdup(m->bin) : NULL;
		if (!xml || (m->bin && !bin))
			err = -ENOMEM;
	}
	pthread_mutex_unlock(&dev->lock);
	if (err || !xml)
		goto out;
	err = model_stat(onnx, xml, bin, &fx, &fb);
	if (!err)
		err = onnx ? npr_onnx_load_file(xml, &g) :
			     npr_ir_load_file(xml, bin, &g);
	if (err)
		goto out;
	pthread_mutex_lock(&dev->lock);
	m = npr_handle_get_locked(dev, h, NPR_HANDLE_MODEL, &err);
	if (m && !m->g) {
		m->g = g;
		m->fx = fx;
		m->fb = fb;
		g = NULL;
	}
	pthread_mutex_unlock(&dev->lock);
out:
	npr_graph_free(g);
	free(xml);
	free(bin);
	return err;
}

/* A private clone of model @h's graph, to work on without dev->lock. */
static int model_graph_clone(struct npr_device *dev, uint32_t h,
			     struct npr_graph **g)
{
	struct npr_model *m;
	int err = 0;

	*g = NULL;
	pthread_mutex_lock(&dev->lock);
	m = npr_handle_get_locked(dev, h, NPR_HANDLE_MODEL, &err);
	if (m) {
		*g = npr_graph_clone(m->g);
		if (!*g)
			err = -ENOMEM;
	}
	pthread_mutex_unlock(&dev->lock);
	return err;
}

/* The graph and port list behind a model or exec handle. */
static int lookup_ports(struct npr_device *dev, uint32_t h,
			struct npr_model **m, struct npr_exec **ex)
{
	int err = 0;
	uint32_t type = h >> HANDLE_TYPE_SHIFT;

	*m = NULL;
	*ex = NULL;
	if (type == NPR_HANDLE_EXEC)
		*ex = npr_handle_get_locked(dev, h, NPR_HANDLE_EXEC, &err);
	else
		*m = npr_handle_get_locked(dev, h, NPR_HANDLE_MODEL, &err);
	return err;
}

/**
 * npr_model_info_ioctl() - NPR_IOCTL_MODEL_INFO
 * @dev: the device.
 * @arg: struct npr_model_info, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_model_info_ioctl(struct npr_device *dev, void *arg)
{
	struct npr_model_info *a = arg;
	struct npr_model *m;
	struct npr_exec *ex;
	struct npr_graph *g;
	int err;

	err = npr_check_args(a->flags, 0, a->reserved);
	if (!err)
		err = npr_model_read(dev, a->handle);
	if (err)
		return err;
	pthread_mutex_lock(&dev->lock);
	err = lookup_ports(dev, a->handle, &m, &ex);
	if (!err) {
		g = m ? m->g : ex->g;
		a->num_inputs = g->ninputs - g->nstate_in;
		a->num_outputs = g->noutputs - g->nstate_out;
		a->num_nodes = g->nnodes;
		a->ir_version = g->ir_version;
		a->exec_bytes = ex ? ex->exec_bytes : 0;
		a->request_bytes = ex ? ex->req_bytes : 0;
	}
	pthread_mutex_unlock(&dev->lock);
	return err;
}

/* Name of a model port: the tensor name, else the layer name. */
static const char *port_name(const struct npr_graph *g, int node, bool out)
{
	const struct npr_node *n = &g->nodes[node];
	const struct npr_value *v;

	if (!out) {
		v = &g->vals[n->out[0]];
		return v->name ? v->name : n->name;
	}
	v = &g->vals[n->in[0]];
	if (v->name)
		return v->name;
	return g->nodes[v->producer].name;
}

/**
 * npr_model_port_info_ioctl() - NPR_IOCTL_PORT_INFO
 * @dev: the device.
 * @arg: struct npr_port_info, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_model_port_info_ioctl(struct npr_device *dev, void *arg)
{
	struct npr_port_info *a = arg;
	struct npr_model *m;
	struct npr_exec *ex;
	bool out = a->flags & NPR_PORT_OUTPUT;
	const char *name;
	int err, i;

	err = npr_check_args(a->flags, NPR_PORT_OUTPUT, a->reserved);
	if (!err)
		err = npr_model_read(dev, a->handle);
	if (err)
		return err;
	pthread_mutex_lock(&dev->lock);
	err = lookup_ports(dev, a->handle, &m, &ex);
	if (err)
		goto out;
	if (m) {
		struct npr_graph *g = m->g;
		int cnt = out ? g->noutputs : g->ninputs;
		const struct npr_value *v;
		int node;

		if (a->index >= (uint32_t)cnt) {
			err = npr_err(-EINVAL, "%s index %u out of range (%d)",
				      out ? "output" : "input", a->index, cnt);
			goto out;
		}
		node = out ? g->outputs[a->index] : g->inputs[a->index];
		v = out ? &g->vals[g->nodes[node].in[0]] :
			  &g->vals[g->nodes[node].out[0]];
		name = port_name(g, node, out);
		a->elem_type = v->type;
		a->rank = v->shape.rank < 0 ? 0 : v->shape.rank;
		for (i = 0; i < NPR_MAX_RANK; i++)
			a->dims[i] = i < (int)a->rank ? v->shape.d[i] : 0;
	} else {
		int cnt = out ? npr_exec_user_outputs(ex) : npr_exec_user_inputs(ex);
		const struct npr_port *p;

		if (a->index >= (uint32_t)cnt) {
			err = npr_err(-EINVAL, "%s index %u out of range (%d)",
				      out ? "output" : "input", a->index, cnt);
			goto out;
		}
		p = out ? &ex->out[a->index] : &ex->in[a->index];
		name = p->name;
		a->elem_type = p->type;
		a->rank = p->shape.rank < 0 ? 0 : p->shape.rank;
		/* unknown rank (a shape that depends on input values):
		 * rank 0 with dims[0] = -1, unlike a scalar */
		for (i = 0; i < NPR_MAX_RANK; i++)
			a->dims[i] = p->shape.rank < 0 ? -1 :
				     i < p->shape.rank ? p->shape.d[i] : 0;
	}
	if (a->name || a->name_len)
		err = npr_put_string(name, a->name, &a->name_len);
	else
		a->name_len = strlen(name) + 1;
out:
	pthread_mutex_unlock(&dev->lock);
	return err;
}

/**
 * struct compile_bounds - COMPILE's bounds of one input's dimensions
 * @lo, @hi: as struct npr_shape_range: @hi -1 for no upper bound.
 */
struct compile_bounds {
	int64_t lo[NPR_MAX_RANK], hi[NPR_MAX_RANK];
};

/* Hidden port @k is that of a variable that grows (a KV cache). */
static bool grows(const struct npr_graph *g, int k, bool out)
{
	int i;

	for (i = 0; i < g->nvars; i++)
		if (g->vars[i].append_axis >= 0 &&
		    (out ? g->vars[i].state_out : g->vars[i].state_in) == k)
			return true;
	return false;
}

/* A variable of @g grows: a decoder's KV cache. */
static bool grows_any(const struct npr_graph *g)
{
	int i;

	for (i = 0; i < g->nvars; i++)
		if (g->vars[i].append_axis >= 0)
			return true;
	return false;
}

static int make_ports(struct npr_exec *ex, const struct npr_graph *model,
		      const struct npr_shape *over,
		      const struct compile_bounds *bounds)
{
	struct npr_graph *g = ex->g;
	int i, j;

	ex->nin = g->ninputs;
	ex->nout = g->noutputs;
	ex->in = calloc(ex->nin ? ex->nin : 1, sizeof(*ex->in));
	ex->out = calloc(ex->nout ? ex->nout : 1, sizeof(*ex->out));
	if (!ex->in || !ex->out)
		return -ENOMEM;
	for (i = 0; i < ex->nin + ex->nout; i++) {
		bool out = i >= ex->nin;
		int k = out ? i - ex->nin : i;
		struct npr_port *p = out ? &ex->out[k] : &ex->in[k];
		int node = out ? g->outputs[k] : g->inputs[k];
		int v = out ? g->nodes[node].in[0] : g->nodes[node].out[0];

		bool hidden = out ? k >= npr_exec_user_outputs(ex) : k >= npr_exec_user_inputs(ex);

		/* state ports (lib/passes/stateful.c) exist in the compiled graph only */
		p->name = strdup(hidden ? g->nodes[node].name :
				 port_name(model, out ? model->outputs[k] :
						   model->inputs[k], out));
		if (!p->name)
			return -ENOMEM;
		p->value = v;
		/* the caller's type, or the compute type of a state port */
		p->type = hidden ? g->vals[v].type : model->vals[v].type;
		p->shape = g->vals[v].shape;
		/* outputs may depend on input values (lib/passes/compile.c),
		 * the caller's inputs may have dynamic dimensions */
		if (!npr_shape_static(&p->shape) && hidden &&
		    !grows(g, k, out))
			return npr_err(-EINVAL, "%s %s has no static shape",
				       out ? "output" : "input", p->name);
		for (j = 0; !out && j < p->shape.rank; j++) {
			bool given = over && over[k].rank >= 0;

			p->lo[j] = p->shape.d[j] < 0 ? 0 : p->shape.d[j];
			p->hi[j] = p->shape.d[j];
			if (p->shape.d[j] < 0 && given) {
				p->lo[j] = bounds[k].lo[j];
				p->hi[j] = bounds[k].hi[j];
			}
			if (p->shape.d[j] < 0)
				ex->dyn_inputs = true;
		}
		p->bytes = npr_tensor_bytes(p->type,
					    npr_shape_numel(&p->shape));
		if (!npr_elem_size(p->type))
			return npr_err(-EOPNOTSUPP,
				       "%s %s: element type %s is not supported at the boundary",
				       out ? "output" : "input", p->name,
				       npr_elem_name(p->type));
	}
	return 0;
}

/* One dimension of shape @i: its bounds, checked. */
static int shape_dim(uint32_t i, uint32_t j, int64_t lo, int64_t hi,
		     bool ranges)
{
	const int64_t max = 1LL << 31;

	if (!ranges && (lo < -1 || lo > max))
		return npr_err(-EINVAL, "shape %u: dim %u = %lld out of range (-1 for a dynamic one)",
			       i, j, (long long)lo);
	if (ranges && (lo < 0 || lo > max || hi < -1 || hi > max ||
		       (hi >= 0 && hi < lo)))
		return npr_err(-EINVAL, "shape %u: dim %u: bounds %lld..%lld out of range (0 <= lo <= hi <= 2^31, hi -1: none)",
			       i, j, (long long)lo, (long long)hi);
	return 0;
}

/*
 * With dynamic input dimensions: the output ports' dimensions that do not
 * depend on them (npr_compile_output_dims()), where the graph has none.
 */
static int output_dims(struct npr_exec *ex)
{
	const struct npr_graph *g = ex->g;
	int64_t (*lo)[NPR_MAX_RANK] = calloc(g->ninputs + 1, sizeof(*lo));
	int64_t (*hi)[NPR_MAX_RANK] = calloc(g->ninputs + 1, sizeof(*hi));
	struct npr_shape *s = calloc(g->noutputs + 1, sizeof(*s));
	int i, err = -ENOMEM;

	if (!lo || !hi || !s)
		goto out;
	for (i = 0; i < g->ninputs; i++) {
		memcpy(lo[i], ex->in[i].lo, sizeof(lo[i]));
		memcpy(hi[i], ex->in[i].hi, sizeof(hi[i]));
	}
	err = npr_compile_output_dims(g, (const int64_t (*)[NPR_MAX_RANK])lo,
				      (const int64_t (*)[NPR_MAX_RANK])hi, s);
	for (i = 0; !err && i < ex->nout; i++)
		if (ex->out[i].shape.rank < 0)
			ex->out[i].shape = s[i];
out:
	free(lo);
	free(hi);
	free(s);
	return err;
}

/*
 * COMPILE's input shapes into @over (one per input, rank -1 where none is
 * given; -1 for a dynamic dimension) and their bounds into @bounds.
 * @ninputs < 0: the model is not read yet; the checks that need the
 * number of inputs wait for it (a cache hit cannot have a shape out of
 * range: its compile checked them).
 */
static int compile_shapes(const struct npr_compile *a, int ninputs,
			  struct npr_shape *over, struct compile_bounds *bounds)
{
	const struct npr_shape_arg *sa = (const void *)(uintptr_t)a->shapes;
	const struct npr_shape_range *sr = (const void *)(uintptr_t)a->shapes;
	bool ranges = a->flags & NPR_COMPILE_SHAPE_RANGES;
	int max = ninputs < 0 ? 256 : ninputs;
	uint32_t i, j;
	int err;

	if (a->num_shapes > (uint32_t)max || max > 256)
		return npr_err(-EINVAL, "%u shapes for %d inputs",
			       a->num_shapes, max);
	for (i = 0; i < (uint32_t)max; i++)
		over[i].rank = -1;
	for (i = 0; i < a->num_shapes; i++) {
		uint32_t idx = ranges ? sr[i].index : sa[i].index;
		uint32_t rank = ranges ? sr[i].rank : sa[i].rank;

		if (idx >= (uint32_t)max)
			return npr_err(-EINVAL, "shape %u: input index %u out of range",
				       i, idx);
		if (!rank || rank > NPR_MAX_RANK)
			return npr_err(-EINVAL, "shape %u: rank %u out of range 1..%d",
				       i, rank, NPR_MAX_RANK);
		if (over[idx].rank >= 0)
			return npr_err(-EINVAL, "input %u has two shapes", idx);
		over[idx].rank = rank;
		for (j = 0; j < rank; j++) {
			int64_t lo = ranges ? sr[i].lo[j] : sa[i].dims[j];
			int64_t hi = ranges ? sr[i].hi[j] : lo;

			err = shape_dim(i, j, lo, hi, ranges);
			if (err)
				return err;
			if (lo < 0)	/* -1 without ranges */
				lo = 0;
			over[idx].d[j] = lo == hi ? lo : -1;
			bounds[idx].lo[j] = lo;
			bounds[idx].hi[j] = hi;
		}
		for (j = rank; j < NPR_MAX_RANK; j++)
			if (ranges ? sr[i].lo[j] || sr[i].hi[j] : sa[i].dims[j])
				return npr_err(-EINVAL, "shape %u: dims past rank must be 0",
					       i);
	}
	return 0;
}

/*
 * The model handle's state for COMPILE: its number of inputs (-1 while a
 * deferred model is not read) and whether the cache key is its files'.
 */
static int compile_model_state(struct npr_device *dev, uint32_t h,
			       int *ninputs, bool *by_file, bool *wfile)
{
	struct npr_model *m;
	int err = 0;

	pthread_mutex_lock(&dev->lock);
	m = npr_handle_get_locked(dev, h, NPR_HANDLE_MODEL, &err);
	if (m) {
		*ninputs = m->g ? m->g->ninputs : -1;
		*by_file = m->by_file;
		*wfile = m->wpath != NULL;
	}
	pthread_mutex_unlock(&dev->lock);
	return err;
}

/* The cache key of compiling model @h with @over and @p. */
static int compile_key(struct npr_device *dev, uint32_t h, int ninputs,
		       const struct npr_shape *over, const struct npr_props *p,
		       struct npr_cache_key *key)
{
	char lines[2 * PATH_MAX + 256];
	struct npr_model *m;
	const char *name;
	int err = 0;

	pthread_mutex_lock(&dev->lock);
	m = npr_handle_get_locked(dev, h, NPR_HANDLE_MODEL, &err);
	if (m) {
		/* a hit needs no clone: the key is the model's files, or
		 * its hash, taken once per model handle */
		if (!m->by_file && !m->hashed) {
			npr_model_hash(m->g, m->hash);
			npr_graph_drop_weights(m->g);
			m->hashed = true;
		}
		npr_cache_model_lines(m, lines, sizeof(lines));
		name = m->g && m->g->name ? m->g->name : m->xml ? m->xml : "";
		npr_cache_key(dev, lines, ninputs < 0 ? 256 : ninputs, over,
			      p, name, m->wpath, key);
	}
	pthread_mutex_unlock(&dev->lock);
	return err;
}

/**
 * npr_model_compile_ioctl() - NPR_IOCTL_COMPILE
 * @dev: the device.
 * @arg: struct npr_compile, copied in.
 *
 * The model is cloned and compiled unlocked; with a CACHE_DIR the cache
 * is asked first and given the result.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_model_compile_ioctl(struct npr_device *dev, void *arg)
{
	struct npr_compile *a = arg;
	struct npr_shape shapes[256];
	struct npr_shape *over = NULL;
	struct compile_bounds *bounds = NULL;
	const struct npr_prop_arg *pa;
	struct npr_graph *src = NULL;
	struct npr_exec *ex;
	struct npr_cache_key key;
	struct npr_props props;
	bool by_file = false, wfile = false;
	int err, ninputs = 0;
	uint32_t i;

	err = npr_check_flags(a->flags, NPR_COMPILE_SHAPE_RANGES);
	if (err)
		return err;
	if ((a->num_shapes && !a->shapes) || (a->num_props && !a->props))
		return npr_err(-EINVAL, "array count without a pointer");
	pa = (const void *)(uintptr_t)a->props;
	for (i = 0; i < a->num_props; i++) {
		err = npr_check_reserved(pa[i].reserved);
		if (err)
			return err;
	}
	pthread_mutex_lock(&dev->lock);
	props = dev->props;
	pthread_mutex_unlock(&dev->lock);
	err = compile_model_state(dev, a->model, &ninputs, &by_file, &wfile);
	if (err)
		return err;
	for (i = 0; i < a->num_props; i++) {
		err = npr_prop_compile_arg(dev, &props, &pa[i]);
		if (err)
			return err;
	}
	/* a deferred model is read now unless its files key a cache entry */
	if (ninputs < 0 && !(props.cache_dir[0] && by_file)) {
		err = npr_model_read(dev, a->model);
		if (!err)
			err = compile_model_state(dev, a->model, &ninputs,
						  &by_file, &wfile);
		if (err)
			return err;
	}
	if (a->num_shapes) {
		over = shapes;
		bounds = calloc(256, sizeof(*bounds));
		if (!bounds)
			return -ENOMEM;
		err = compile_shapes(a, ninputs, over, bounds);
		if (err)
			goto fail_src;
	}
	if (props.cache_dir[0]) {
		err = compile_key(dev, a->model, ninputs, over, &props, &key);
		if (err)
			goto fail_src;
		err = npr_cache_get(dev, &key, &props, &ex);
		if (!err)
			goto have_exec;
		if (err != -ENOENT)
			goto fail_src;
		if (props.cache_required) {
			err = npr_err(-ENOENT, "model %s is not in the cache %s, and NPR_CACHE_REQUIRED is set",
				      key.model_name, props.cache_dir);
			goto fail_src;
		}
		if (ninputs < 0) {
			/* a miss: read the model, check the shapes against
			 * it, and key the entry by the files just read */
			err = npr_model_read(dev, a->model);
			if (!err)
				err = compile_model_state(dev, a->model,
							  &ninputs, &by_file,
							  &wfile);
			if (!err && over)
				err = compile_shapes(a, ninputs, over, bounds);
			if (!err)
				err = compile_key(dev, a->model, ninputs, over,
						  &props, &key);
			if (err)
				goto fail_src;
		}
	}
	/* the compile runs unlocked on a private clone */
	err = model_graph_clone(dev, a->model, &src);
	if (err)
		goto fail_src;
	ex = calloc(1, sizeof(*ex));
	if (!ex) {
		err = -ENOMEM;
		goto fail_src;
	}
	ex->refs = 1;
	ex->dev = dev;
	ex->props = props;
	ex->wfile = wfile;
	if (npr_backend_has(dev, NPR_BACKEND_CAP_AS_WRITTEN)) {
		/* the backend compiles the model as written, from src */
		err = npr_compile_graph(src, over, npr_backend_evaluator(),
					&ex->g);
		if (!err)
			err = npr_compile_as_written(src, ex->g);
	} else {
		/* src is this compile's own copy: its weights move */
		err = npr_compile_graph_take(src, over,
					     npr_backend_evaluator(), &ex->g);
	}
	if (!err && npr_backend_has(dev, NPR_BACKEND_CAP_INT8) &&
	    !npr_env(NPR_ENV_LOWP_OFF))
		err = npr_pass_lowp(ex->g);
	if (!err && npr_backend_has(dev, NPR_BACKEND_CAP_INT8) &&
	    !npr_env(NPR_ENV_LOWP_OFF) && !npr_env(NPR_ENV_QLAYOUT_OFF))
		err = npr_pass_qlayout(ex->g);
	if (err)
		goto fail_ex;
	err = npr_graph_dynamic(ex->g);
	if (err >= 0 && npr_backend_has(dev, NPR_BACKEND_CAP_STATIC_LM) &&
	    grows_any(ex->g))
		err = -1;
	if (err >= 0 && !npr_backend_has(dev, NPR_BACKEND_CAP_DYNAMIC_SHAPES) &&
	    (ex->g->nodes[err].op->flags & NPR_OP_SOURCE)) {
		const struct npr_value *v = npr_out(ex->g, &ex->g->nodes[err],
						    0);
		char b[128];

		err = npr_err(-EOPNOTSUPP, "input %s has the dynamic shape %s, which the %s device does not support: give a static shape at compile time",
			      v->name ? v->name : ex->g->nodes[err].name,
			      npr_shape_str(&v->shape, b, sizeof(b)),
			      npr_backend_name(dev));
		goto fail_ex;
	}
	if (err >= 0 && !npr_backend_has(dev, NPR_BACKEND_CAP_DYNAMIC_SHAPES)) {
		err = npr_node_err(&ex->g->nodes[err], -EOPNOTSUPP,
				   "the output shape depends on input values, which the %s device does not support",
				   npr_backend_name(dev));
		goto fail_ex;
	}
	err = make_ports(ex, src, over, bounds);
	if (err)
		goto fail_ex;
	if (ex->dyn_inputs) {
		err = output_dims(ex);
		if (err)
			goto fail_ex;
	}
	/* every tensor's size fits, and none alone is over the limit */
	err = npr_exec_budget(ex);
	if (err)
		goto fail_ex;
	/* a weightless blob converts again only what is unchanged since */
	if (props.cache_mode == NPR_CACHE_MODE_OPTIMIZE_SIZE) {
		err = npr_blob_weights_check(ex);
		if (err)
			goto fail_ex;
	}
	if (npr_backend_has(dev, NPR_BACKEND_CAP_AS_WRITTEN))
		ex->src = src;
	err = npr_backend_compile(ex);
	ex->src = NULL;
	if (err)
		goto fail_ex;
	/* the backend has its own form of the weights: let the file go */
	npr_graph_drop_weights(ex->g);
	err = npr_exec_budget(ex);
	if (err)
		goto fail_ex;
	if (props.cache_dir[0] && npr_graph_dynamic(ex->g) < 0)
		npr_cache_put(ex, &key);
	goto have_budget;
have_exec:
	err = npr_exec_budget(ex);
	if (err)
		goto fail_ex;
have_budget:
	npr_graph_free(src);
	free(bounds);
	pthread_mutex_lock(&dev->lock);
	err = npr_handle_alloc(dev, ex, NPR_HANDLE_EXEC, &a->exec);
	pthread_mutex_unlock(&dev->lock);
	if (err)
		npr_exec_put(ex);
	return err;
fail_ex:
	npr_exec_put(ex);
fail_src:
	npr_graph_free(src);
	free(bounds);
	return err;
}

/**
 * npr_model_export_ioctl() - NPR_IOCTL_EXPORT, also the ring's EXPORT job
 * @dev: the device.
 * @arg: struct npr_export, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_model_export_ioctl(struct npr_device *dev, void *arg)
{
	struct npr_export *a = arg;
	struct npr_exec *ex;
	size_t len = 0;
	void *blob = NULL;
	int err;

	err = npr_check_args(a->flags, 0, a->reserved);
	if (err)
		return err;
	ex = npr_exec_get(dev, a->exec, &err);
	if (!ex)
		return err;
	err = npr_blob_export(ex, &blob, &len);
	if (!err) {
		if (!a->data || a->bytes < len)
			err = npr_err(-EMSGSIZE, "the blob is %zu bytes, the buffer %llu",
				      len, (unsigned long long)a->bytes);
		else
			memcpy((void *)(uintptr_t)a->data, blob, len);
		a->bytes = len;
	}
	free(blob);
	pthread_mutex_lock(&dev->lock);
	npr_exec_put(ex);
	pthread_mutex_unlock(&dev->lock);
	return err;
}

/**
 * npr_model_import_ioctl() - NPR_IOCTL_IMPORT, also the ring's IMPORT job
 * @dev: the device.
 * @arg: struct npr_import, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_model_import_ioctl(struct npr_device *dev, void *arg)
{
	struct npr_import *a = arg;
	struct npr_exec *ex = NULL;
	char *weights;
	int err;

	err = npr_check_args(a->flags, 0, a->reserved);
	if (err)
		return err;
	if (!a->data || !a->bytes)
		return npr_err(-EINVAL, "no blob");
	pthread_mutex_lock(&dev->lock);
	weights = strdup(dev->props.weights_path);
	pthread_mutex_unlock(&dev->lock);
	if (!weights)
		return -ENOMEM;
	err = npr_blob_import(dev, (const void *)(uintptr_t)a->data,
			      a->bytes, weights, &ex);
	free(weights);
	if (!err) {
		pthread_mutex_lock(&dev->lock);
		ex->props.max_model_mb = dev->props.max_model_mb;
		pthread_mutex_unlock(&dev->lock);
		err = npr_exec_budget(ex);
	}
	if (!err)
		err = npr_backend_compile(ex);
	if (!err)
		err = npr_exec_budget(ex);
	if (!err) {
		pthread_mutex_lock(&dev->lock);
		err = npr_handle_alloc(dev, ex, NPR_HANDLE_EXEC, &a->exec);
		if (!err)
			ex = NULL;
		pthread_mutex_unlock(&dev->lock);
	}
	if (ex) {
		pthread_mutex_lock(&dev->lock);
		npr_exec_put(ex);
		pthread_mutex_unlock(&dev->lock);
	}
	return err;
}

/**
 * npr_model_query_ioctl() - NPR_IOCTL_QUERY_MODEL
 * @dev: the device.
 * @arg: struct npr_query_model, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_model_query_ioctl(struct npr_device *dev, void *arg)
{
	struct npr_query_model *a = arg;
	struct npr_graph *g = NULL;
	bool *ok = NULL;
	size_t need = 1;
	uint32_t n = 0;
	char *out;
	int err, i;

	err = npr_check_flags(a->flags, 0);
	if (!err)
		err = npr_model_read(dev, a->model);
	if (err)
		return err;
	err = model_graph_clone(dev, a->model, &g);
	if (err)
		return err;
	ok = calloc(g->nnodes ? g->nnodes : 1, sizeof(bool));
	err = ok ? npr_device_supports(dev, g, ok) : -ENOMEM;
	if (err)
		goto out;
	for (i = 0; i < g->nnodes; i++)
		if (ok[i]) {
			n++;
			need += strlen(g->nodes[i].name) + 1;
		}
	a->num_layers = g->nnodes;
	a->num_supported = n;
	if (need > UINT32_MAX) {
		err = npr_err(-EOVERFLOW, "layer names too long");
		goto out;
	}
	if (!a->names || a->len < need) {
		err = npr_err(-EMSGSIZE, "%zu bytes of names, buffer of %u",
			      need, a->len);
		a->len = (uint32_t)need;
		goto out;
	}
	out = (char *)(uintptr_t)a->names;
	for (i = 0; i < g->nnodes; i++) {
		size_t l;

		if (!ok[i])
			continue;
		l = strlen(g->nodes[i].name) + 1;
		memcpy(out, g->nodes[i].name, l);
		out += l;
	}
	*out = 0;
	a->len = (uint32_t)need;
out:
	free(ok);
	npr_graph_free(g);
	return err;
}

/*
 * MAKE_STATEFUL's input shapes, checked as COMPILE checks them, into
 * *@out: one per input, rank -1 where none is given.
 */
static int stateful_shapes(int ninputs, const struct npr_shape_arg *sa,
			   uint32_t num, bool dyn, struct npr_shape **out)
{
	struct npr_shape *s;
	uint32_t i, j;

	if (num > (uint32_t)ninputs)
		return npr_err(-EINVAL, "MakeStateful: %u shapes for %d inputs",
			       num, ninputs);
	s = calloc(ninputs, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (i = 0; i < (uint32_t)ninputs; i++)
		s[i].rank = -1;
	for (i = 0; i < num; i++) {
		const char *why = NULL;

		if (sa[i].index >= (uint32_t)ninputs)
			why = "input index out of range";
		else if (!sa[i].rank || sa[i].rank > NPR_MAX_RANK)
			why = "rank out of range";
		else if (s[sa[i].index].rank >= 0)
			why = "a second shape for its input";
		for (j = 0; !why && j < NPR_MAX_RANK; j++)
			if (j >= sa[i].rank ? sa[i].dims[j] != 0 :
			    sa[i].dims[j] < (dyn ? -1 : 0) ||
			    sa[i].dims[j] > (1LL << 31))
				why = "a dim out of range (or not 0 past the rank)";
		if (why) {
			free(s);
			return npr_err(-EINVAL, "MakeStateful: shape %u: %s",
				       i, why);
		}
		s[sa[i].index].rank = (int)sa[i].rank;
		for (j = 0; j < sa[i].rank; j++)
			s[sa[i].index].d[j] = sa[i].dims[j];
	}
	*out = s;
	return 0;
}

/**
 * npr_model_make_stateful_ioctl() - NPR_IOCTL_MAKE_STATEFUL
 * @dev: the device.
 * @arg: struct npr_make_stateful, copied in.
 *
 * Return: 0 or -errno (uapi/npuring.h lists them).
 */
int npr_model_make_stateful_ioctl(struct npr_device *dev, void *arg)
{
	struct npr_make_stateful *a = arg;
	const struct npr_state_pair *p;
	struct npr_shape *over = NULL;
	const char **names;
	struct npr_model *m;
	uint32_t i;
	int err;

	err = npr_check_args(a->flags, NPR_MAKE_STATEFUL_PATTERN, a->reserved);
	if (err)
		return err;
	if (!a->count || a->count > 1024 || !a->pairs)
		return npr_err(-EINVAL, "MakeStateful: %u pairs (1 .. 1024, and a pointer)",
			       a->count);
	if ((a->flags & NPR_MAKE_STATEFUL_PATTERN) && a->count != 1)
		return npr_err(-EINVAL, "MakeStateful: %u pairs of patterns, 1 expected",
			       a->count);
	if (a->num_shapes && !a->shapes)
		return npr_err(-EINVAL, "MakeStateful: %u shapes without a pointer",
			       a->num_shapes);
	err = npr_model_read(dev, a->model);
	if (err)
		return err;
	p = (const void *)(uintptr_t)a->pairs;
	names = calloc(2 * a->count, sizeof(*names));
	if (!names)
		return -ENOMEM;
	for (i = 0; i < a->count; i++) {
		names[2 * i] = (const char *)(uintptr_t)p[i].input;
		names[2 * i + 1] = (const char *)(uintptr_t)p[i].output;
		if (!names[2 * i] || !names[2 * i + 1]) {
			free(names);
			return npr_err(-EINVAL, "MakeStateful: pair %u without a name",
				       i);
		}
	}
	pthread_mutex_lock(&dev->lock);
	m = npr_handle_get_locked(dev, a->model, NPR_HANDLE_MODEL, &err);
	if (m && a->num_shapes)
		err = stateful_shapes(m->g->ninputs,
				      (const void *)(uintptr_t)a->shapes,
				      a->num_shapes,
				      a->flags & NPR_MAKE_STATEFUL_PATTERN,
				      &over);
	if (m && !err && (a->flags & NPR_MAKE_STATEFUL_PATTERN))
		err = npr_make_stateful_pattern(m->g, names[0], names[1],
						over);
	else if (m && !err)
		err = npr_make_stateful(m->g, names, (int)a->count, over,
					false);
	if (m && !err) {
		m->hashed = false;	/* another model now */
		m->by_file = false;	/* not the files' any more */
	}
	pthread_mutex_unlock(&dev->lock);
	free(over);
	free(names);
	return err;
}

/**
 * npr_model_add() - a model handle for a graph, the ring's LOAD job
 * @dev: the device.
 * @g: the graph, which the model takes over (freed on failure too).
 * @model: Out. The handle.
 *
 * Return: 0, -ENOMEM or -ENOSPC.
 */
int npr_model_add(struct npr_device *dev, struct npr_graph *g,
		  uint32_t *model)
{
	struct npr_model *m = calloc(1, sizeof(*m));
	int err;

	if (!m) {
		npr_graph_free(g);
		return -ENOMEM;
	}
	m->g = g;
	pthread_mutex_lock(&dev->lock);
	err = npr_handle_alloc(dev, m, NPR_HANDLE_MODEL, model);
	pthread_mutex_unlock(&dev->lock);
	if (err)
		npr_model_destroy(m);
	return err;
}

/**
 * npr_model_compile_default() - COMPILE with the device's properties and
 * no input shapes, the ring's COMPILE job
 * @dev: the device.
 * @model: the model handle.
 * @exec: Out. The compiled model's handle.
 *
 * Return: 0 or the errors of COMPILE.
 */
int npr_model_compile_default(struct npr_device *dev, uint32_t model,
			      uint32_t *exec)
{
	struct npr_compile a = { .size = sizeof(a) };
	int err;

	a.model = model;
	err = npr_model_compile_ioctl(dev, &a);
	if (!err)
		*exec = a.exec;
	return err;
}
