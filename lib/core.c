// SPDX-License-Identifier: MIT
/*
 * Devices, fd-scoped handle tables and the ioctl dispatcher.
 *
 * Every argument is validated here, in the order the uapi header fixes,
 * before anything reaches a backend.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>

#include "core.h"
#include "ir.h"
#include "onnx.h"

/* ---- the fd -> device table -------------------------------------------- */

static pthread_mutex_t devtab_lock = PTHREAD_MUTEX_INITIALIZER;
static struct npr_device **devtab;
static int devtab_len;

static struct npr_device *dev_lookup(int fd)
{
	struct npr_device *dev = NULL;

	pthread_mutex_lock(&devtab_lock);
	if (fd >= 0 && fd < devtab_len)
		dev = devtab[fd];
	pthread_mutex_unlock(&devtab_lock);
	return dev;
}

static int dev_register(struct npr_device *dev)
{
	int fd = dev->fd, err = 0;

	pthread_mutex_lock(&devtab_lock);
	if (fd >= devtab_len) {
		int len = devtab_len ? devtab_len : 16;
		struct npr_device **t;

		while (len <= fd)
			len *= 2;
		t = realloc(devtab, sizeof(*t) * len);
		if (!t) {
			err = -ENOMEM;
			goto out;
		}
		memset(t + devtab_len, 0, sizeof(*t) * (len - devtab_len));
		devtab = t;
		devtab_len = len;
	}
	devtab[fd] = dev;
out:
	pthread_mutex_unlock(&devtab_lock);
	return err;
}

void *npr_alloc(size_t bytes)
{
	void *p = NULL;

	if (posix_memalign(&p, 64, bytes ? (bytes + 63) & ~(size_t)63 : 64))
		return NULL;
	return p;
}

int npr_cpu_count(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	n = CPU_COUNT(&set);
	return n > 0 ? n : 1;
}

/* ---- handles ------------------------------------------------------------ */

#define HANDLE_TYPE_SHIFT	28
#define HANDLE_GEN_SHIFT	16
#define HANDLE_GEN_MASK		0xfffu
#define HANDLE_IDX_MASK		0xffffu

static int handle_alloc(struct npr_device *dev, void *obj, int type,
			uint32_t *out)
{
	struct npr_slot *s;
	int idx;

	if (dev->free_slot >= 0) {
		idx = dev->free_slot;
		dev->free_slot = dev->slots[idx].next_free;
	} else {
		if (dev->nslots >= (int)HANDLE_IDX_MASK)
			return npr_err(-ENOSPC, "too many objects on this fd");
		if (dev->nslots == dev->cap_slots) {
			int cap = dev->cap_slots ? dev->cap_slots * 2 : 64;
			struct npr_slot *ns = realloc(dev->slots,
						      sizeof(*ns) * cap);

			if (!ns)
				return -ENOMEM;
			dev->slots = ns;
			dev->cap_slots = cap;
		}
		idx = dev->nslots++;
		dev->slots[idx].gen = 0;
	}
	s = &dev->slots[idx];
	s->obj = obj;
	s->type = type;
	s->gen = (s->gen + 1) & HANDLE_GEN_MASK;
	if (!s->gen)
		s->gen = 1;
	s->next_free = -1;
	*out = ((uint32_t)type << HANDLE_TYPE_SHIFT) |
	       ((uint32_t)s->gen << HANDLE_GEN_SHIFT) | (uint32_t)(idx + 1);
	return 0;
}

/* Caller holds dev->lock.  Returns the object, or NULL with *err set. */
static void *handle_get_locked(struct npr_device *dev, uint32_t h, int type,
			       int *err)
{
	uint32_t idx = (h & HANDLE_IDX_MASK), gen;
	struct npr_slot *s;

	if (!idx || idx > (uint32_t)dev->nslots)
		goto noent;
	s = &dev->slots[idx - 1];
	gen = (h >> HANDLE_GEN_SHIFT) & HANDLE_GEN_MASK;
	if (!s->obj || s->gen != gen ||
	    s->type != (h >> HANDLE_TYPE_SHIFT))
		goto noent;
	if (type && s->type != type) {
		*err = npr_err(-EBADF, "handle 0x%08x is not a %s", h,
			       type == NPR_HANDLE_MODEL ? "model" :
			       type == NPR_HANDLE_EXEC ? "compiled model" :
			       "request");
		return NULL;
	}
	return s->obj;
noent:
	*err = npr_err(-ENOENT, "handle 0x%08x does not name a live object",
		       h);
	return NULL;
}

static void handle_free_locked(struct npr_device *dev, uint32_t h)
{
	int idx = (int)(h & HANDLE_IDX_MASK) - 1;

	dev->slots[idx].obj = NULL;
	dev->slots[idx].next_free = dev->free_slot;
	dev->free_slot = idx;
}

/* ---- objects ------------------------------------------------------------ */

static void model_destroy(struct npr_model *m)
{
	if (!m)
		return;
	npr_graph_free(m->g);
	free(m);
}

static void ports_free(struct npr_port *p, int n)
{
	int i;

	for (i = 0; p && i < n; i++)
		free(p[i].name);
	free(p);
}

static void exec_put(struct npr_exec *ex)
{
	if (--ex->refs)
		return;
	if (ex->priv && ex->dev->ops->exec_destroy)
		ex->dev->ops->exec_destroy(ex);
	ports_free(ex->in, ex->nin);
	ports_free(ex->out, ex->nout);
	npr_graph_free(ex->g);
	free(ex->prep);
	free(ex->native);
	free(ex);
}

void npr_exec_free(struct npr_exec *ex)
{
	if (ex)
		exec_put(ex);
}

/* Drop a reference; the caller holds dev->lock. */
static void bo_put(struct npr_bo *bo)
{
	if (!bo || --bo->refs)
		return;
	munmap(bo->addr, bo->bytes);
	close(bo->memfd);
	free(bo);
}

/* The BO bound to a request port, if any, is let go. */
static void port_unbind(struct npr_bo **slot)
{
	if (!*slot)
		return;
	(*slot)->bound--;
	bo_put(*slot);
	*slot = NULL;
}

static void request_destroy(struct npr_request *rq)
{
	int i;

	free(rq->prof);
	for (i = 0; rq->bo_in && i < rq->ex->nin; i++)
		port_unbind(&rq->bo_in[i]);
	for (i = 0; rq->bo_out && i < rq->ex->nout; i++)
		port_unbind(&rq->bo_out[i]);
	free(rq->bo_in);
	free(rq->bo_out);
	if (rq->priv && rq->ex->dev->ops->request_destroy)
		rq->ex->dev->ops->request_destroy(rq);
	for (i = 0; rq->own_in && i < rq->ex->nin; i++)
		free(rq->own_in[i]);
	for (i = 0; rq->own_out && i < rq->ex->nout; i++)
		free(rq->own_out[i]);
	free(rq->own_in);
	free(rq->own_out);
	free(rq->cap_out);
	free(rq->in);
	free(rq->out);
	exec_put(rq->ex);
	free(rq);
}

static void object_destroy(int type, void *obj)
{
	switch (type) {
	case NPR_HANDLE_MODEL:
		model_destroy(obj);
		break;
	case NPR_HANDLE_EXEC:
		exec_put(obj);
		break;
	case NPR_HANDLE_REQUEST:
		request_destroy(obj);
		break;
	case NPR_HANDLE_BO:
		bo_put(obj);
		break;
	}
}

/* ---- open / close ------------------------------------------------------- */

static int do_open(const char *name, unsigned int flags)
{
	const struct npr_backend_ops *ops;
	unsigned long mark = npr_err_mark();
	struct npr_device *dev;
	int index = 0, err;

	if (!name)
		return npr_err(-EINVAL, "no device name");
	if (flags)
		return npr_err(-EINVAL, "npr_open: flags must be 0");
	ops = npr_backend_find(name, &index);
	if (!ops)
		return npr_err(-ENODEV, "no device \"%s\" (known: cpu, null)", name);
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return npr_err(-ENOMEM, "out of memory");
	dev->ops = ops;
	dev->free_slot = -1;
	npr_props_init(&dev->props);
	pthread_mutex_init(&dev->lock, NULL);
	dev->info.size = sizeof(dev->info);
	dev->info.api_version = NPR_UAPI_VERSION;
	err = ops->probe(dev, index);
	if (err)
		goto fail;
	dev->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (dev->fd < 0) {
		err = npr_err(-errno, "eventfd: %s", strerror(errno));
		goto fail;
	}
	err = dev_register(dev);
	if (err) {
		close(dev->fd);
		goto fail;
	}
	return dev->fd;
fail:
	pthread_mutex_destroy(&dev->lock);
	if (dev->priv && ops->release)
		ops->release(dev);
	free(dev->priv);
	free(dev);
	return npr_err_default(err, mark);
}

static int do_close(int fd)
{
	struct npr_device *dev;
	int i;

	pthread_mutex_lock(&devtab_lock);
	dev = (fd >= 0 && fd < devtab_len) ? devtab[fd] : NULL;
	if (dev)
		devtab[fd] = NULL;
	pthread_mutex_unlock(&devtab_lock);
	if (!dev)
		return npr_err(-EBADF, "fd %d is not an open npuring device",
			       fd);
	/* stops the workers: no job runs past this point */
	npr_ring_destroy(dev);
	/* reverse order of creation: newest slots were appended last */
	for (i = dev->nslots - 1; i >= 0; i--) {
		/* requests before execs before models, whatever the slot */
		if (dev->slots[i].obj &&
		    dev->slots[i].type == NPR_HANDLE_REQUEST)
			object_destroy(NPR_HANDLE_REQUEST, dev->slots[i].obj);
	}
	for (i = dev->nslots - 1; i >= 0; i--)
		if (dev->slots[i].obj &&
		    dev->slots[i].type != NPR_HANDLE_REQUEST)
			object_destroy(dev->slots[i].type, dev->slots[i].obj);
	free(dev->slots);
	close(dev->fd);
	pthread_mutex_destroy(&dev->lock);
	if (dev->ops->release)
		dev->ops->release(dev);
	free(dev->priv);
	free(dev);
	return 0;
}

/* ---- argument copy-in / copy-out ------------------------------------- */

/*
 * Copy the caller's struct into a zeroed kernel-side copy of @ksize bytes.
 * Order: NULL or size below version 0 -> -EINVAL; unknown non-zero tail
 * -> -E2BIG.
 */
static int copy_in(void *karg, size_t ksize, size_t v0, const void *uarg,
		   uint32_t *usize)
{
	uint32_t us;
	size_t i;

	if (!uarg)
		return npr_err(-EINVAL, "argument pointer is NULL");
	memcpy(&us, uarg, sizeof(us));
	if (us < v0)
		return npr_err(-EINVAL,
			       "argument size %u is smaller than %zu", us, v0);
	for (i = ksize; i < us; i++)
		if (((const unsigned char *)uarg)[i])
			return npr_err(-E2BIG,
				       "argument has non-zero bytes past the %zu this library knows",
				       ksize);
	memset(karg, 0, ksize);
	memcpy(karg, uarg, us < ksize ? us : ksize);
	*usize = us;
	return 0;
}

static void copy_out(void *uarg, const void *karg, size_t ksize,
		     uint32_t usize)
{
	/* never rewrite the caller's size field */
	size_t n = usize < ksize ? usize : ksize;

	if (n > 4)
		memcpy((char *)uarg + 4, (const char *)karg + 4, n - 4);
}

static int check_flags(uint32_t flags, uint32_t known)
{
	if (flags & ~known)
		return npr_err(-EOPNOTSUPP, "unknown flag bits 0x%x",
			       flags & ~known);
	return 0;
}

static int check_reserved(uint32_t v)
{
	if (v)
		return npr_err(-EINVAL, "reserved field is not zero");
	return 0;
}

uint64_t npr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/**
 * npr_put_bytes() - copy @n bytes to a user buffer with the -EMSGSIZE
 * contract: *@len becomes @n; a missing or short buffer is -EMSGSIZE
 * @p: the bytes.
 * @n: how many.
 * @ptr: the user buffer, or 0 to ask for the size.
 * @len: In: its size.  Out: @n.
 */
int npr_put_bytes(const void *p, size_t n, uint64_t ptr, uint32_t *len)
{
	uint32_t have = *len;

	if (n > UINT32_MAX)
		return npr_err(-EOVERFLOW, "value too long");
	*len = (uint32_t)n;
	if (!ptr || have < n)
		return npr_err(-EMSGSIZE, "buffer of %u bytes, %zu needed",
			       have, n);
	memcpy((void *)(uintptr_t)ptr, p, n);
	return 0;
}

/* A NUL-terminated string likewise; a short buffer gets it cut, with NUL. */
int npr_put_string(const char *s, uint64_t ptr, uint32_t *len)
{
	size_t need = strlen(s) + 1;
	uint32_t have = *len;

	if (ptr && have && have < need) {
		memcpy((void *)(uintptr_t)ptr, s, have - 1);
		((char *)(uintptr_t)ptr)[have - 1] = 0;
	}
	return npr_put_bytes(s, need, ptr, len);
}

/* ---- commands ------------------------------------------------------------ */

static int cmd_device_info(struct npr_device *dev, void *arg)
{
	struct npr_device_info *a = arg;
	uint32_t size = a->size;
	int err;

	err = check_flags(a->flags, 0);
	if (err)
		return err;
	err = check_reserved(a->reserved);
	if (err)
		return err;
	*a = dev->info;
	a->size = size;
	a->num_threads = dev->props.num_threads ? dev->props.num_threads :
						  (uint32_t)npr_cpu_count();
	return 0;
}

static int cmd_param(struct npr_device *dev, void *arg, bool set)
{
	struct npr_param *a = arg;
	struct npr_exec *ex = NULL;
	int err;

	err = check_flags(a->flags, 0);
	if (err)
		return err;
	pthread_mutex_lock(&dev->lock);
	if (a->handle) {
		ex = handle_get_locked(dev, a->handle, NPR_HANDLE_EXEC, &err);
		if (!ex)
			goto out;
	}
	err = npr_prop_param(dev, ex, a, set);
out:
	pthread_mutex_unlock(&dev->lock);
	return err;
}

static int cmd_prop_info(struct npr_device *dev, void *arg)
{
	struct npr_prop_info *a = arg;
	struct npr_exec *ex = NULL;
	int err;

	err = check_flags(a->flags, NPR_PROP_INFO_BY_ID |
			  NPR_PROP_INFO_BY_NAME);
	if (err)
		return err;
	if (a->flags == (NPR_PROP_INFO_BY_ID | NPR_PROP_INFO_BY_NAME))
		return npr_err(-EINVAL, "flags: BY_ID and BY_NAME exclude each other");
	err = check_reserved(a->reserved);
	if (err)
		return err;
	pthread_mutex_lock(&dev->lock);
	if (a->handle) {
		ex = handle_get_locked(dev, a->handle, NPR_HANDLE_EXEC, &err);
		if (!ex)
			goto out;
	}
	err = npr_prop_info(dev, ex, a);
out:
	pthread_mutex_unlock(&dev->lock);
	return err;
}

/*
 * IR is XML text; an ONNX ModelProto is protobuf, and protobuf writers
 * emit fields in number order, so it starts with field 1 (ir_version,
 * varint): the byte 0x08.  Anything else is taken for XML and gets the XML
 * parser's diagnosis.
 */
static bool is_onnx_buffer(const unsigned char *p, size_t len)
{
	return len && p[0] == 0x08;
}

static int cmd_model_load(struct npr_device *dev, void *arg)
{
	struct npr_model_load *a = arg;
	struct npr_graph *g = NULL;
	struct npr_model *m;
	int err;

	err = check_flags(a->flags, NPR_MODEL_LOAD_MEMORY);
	if (!err)
		err = check_reserved(a->reserved);
	if (err)
		return err;
	if (!a->xml)
		return npr_err(-EINVAL, "no model given (xml is 0)");
	if (a->flags & NPR_MODEL_LOAD_MEMORY) {
		struct npr_blob *w = NULL;

		if (!a->xml_size)
			return npr_err(-EINVAL, "xml_size is 0");
		if (a->bin_size && !a->bin)
			return npr_err(-EINVAL, "bin_size without bin");
		if (a->bin) {
			err = npr_ir_blob_from_memory((void *)(uintptr_t)a->bin,
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
		npr_blob_put(w);
	} else {
		const char *xml = (const char *)(uintptr_t)a->xml;
		const char *bin = (const char *)(uintptr_t)a->bin;

		if (a->xml_size || a->bin_size)
			return npr_err(-EINVAL,
				       "xml_size and bin_size must be 0 for paths");
		if (strnlen(xml, PATH_MAX) >= PATH_MAX ||
		    (bin && strnlen(bin, PATH_MAX) >= PATH_MAX))
			return npr_err(-ENAMETOOLONG, "path too long");
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
	/* with a CACHE_DIR on the device every COMPILE needs the model's
	 * hash for its key: take it now, once */
	pthread_mutex_lock(&dev->lock);
	m->hashed = dev->props.cache_dir[0] != 0;
	pthread_mutex_unlock(&dev->lock);
	if (m->hashed)
		npr_model_hash(g, m->hash);
	pthread_mutex_lock(&dev->lock);
	err = handle_alloc(dev, m, NPR_HANDLE_MODEL, &a->handle);
	pthread_mutex_unlock(&dev->lock);
	if (err)
		model_destroy(m);
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
		*ex = handle_get_locked(dev, h, NPR_HANDLE_EXEC, &err);
	else
		*m = handle_get_locked(dev, h, NPR_HANDLE_MODEL, &err);
	return err;
}

static int cmd_model_info(struct npr_device *dev, void *arg)
{
	struct npr_model_info *a = arg;
	struct npr_model *m;
	struct npr_exec *ex;
	struct npr_graph *g;
	int err;

	err = check_flags(a->flags, 0);
	if (!err)
		err = check_reserved(a->reserved);
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

/* Ports the caller sees: the compiled graph's, less the state ports. */
static int user_inputs(const struct npr_exec *ex)
{
	return ex->nin - ex->g->nstate_in;
}

static int user_outputs(const struct npr_exec *ex)
{
	return ex->nout - ex->g->nstate_out;
}

static int cmd_port_info(struct npr_device *dev, void *arg)
{
	struct npr_port_info *a = arg;
	struct npr_model *m;
	struct npr_exec *ex;
	bool out = a->flags & NPR_PORT_OUTPUT;
	const char *name;
	int err, i;

	err = check_flags(a->flags, NPR_PORT_OUTPUT);
	if (!err)
		err = check_reserved(a->reserved);
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
		int cnt = out ? user_outputs(ex) : user_inputs(ex);
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

static int make_ports(struct npr_exec *ex, const struct npr_graph *model)
{
	struct npr_graph *g = ex->g;
	int i;

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

		bool hidden = out ? k >= user_outputs(ex) : k >= user_inputs(ex);

		/* state ports (lib/state.c) exist in the compiled graph only */
		p->name = strdup(hidden ? g->nodes[node].name :
				 port_name(model, node, out));
		if (!p->name)
			return -ENOMEM;
		p->value = v;
		/* the caller's type, or the compute type of a state port */
		p->type = hidden ? g->vals[v].type : model->vals[v].type;
		p->shape = g->vals[v].shape;
		/* outputs may depend on input values (lib/compile.c) */
		if (!npr_shape_static(&p->shape) && (!out || hidden))
			return npr_err(-EINVAL, "%s %s has no static shape",
				       out ? "output" : "input", p->name);
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

static int cmd_compile(struct npr_device *dev, void *arg)
{
	struct npr_compile *a = arg;
	struct npr_shape shapes[256];
	struct npr_shape *over = NULL;
	const struct npr_shape_arg *sa;
	const struct npr_prop_arg *pa;
	struct npr_graph *src = NULL;
	struct npr_exec *ex;
	struct npr_model *m;
	struct npr_cache_key key;
	struct npr_props props;
	int err, ninputs = 0;
	uint32_t i, j;

	err = check_flags(a->flags, 0);
	if (err)
		return err;
	if ((a->num_shapes && !a->shapes) || (a->num_props && !a->props))
		return npr_err(-EINVAL, "array count without a pointer");
	sa = (const void *)(uintptr_t)a->shapes;
	pa = (const void *)(uintptr_t)a->props;
	for (i = 0; i < a->num_props; i++) {
		err = check_reserved(pa[i].reserved);
		if (err)
			return err;
	}
	pthread_mutex_lock(&dev->lock);
	m = handle_get_locked(dev, a->model, NPR_HANDLE_MODEL, &err);
	if (m)
		ninputs = m->g->ninputs;
	props = dev->props;
	pthread_mutex_unlock(&dev->lock);
	if (err)
		return err;
	for (i = 0; i < a->num_props; i++) {
		err = npr_prop_compile_arg(dev, &props, &pa[i]);
		if (err)
			goto fail_src;
	}
	if (a->num_shapes) {
		if (a->num_shapes > (uint32_t)ninputs || ninputs > 256) {
			err = npr_err(-EINVAL, "%u shapes for %d inputs",
				      a->num_shapes, ninputs);
			goto fail_src;
		}
		over = shapes;
		for (i = 0; i < (uint32_t)ninputs; i++)
			over[i].rank = -1;
		for (i = 0; i < a->num_shapes; i++) {
			if (sa[i].index >= (uint32_t)ninputs) {
				err = npr_err(-EINVAL, "shape %u: input index %u out of range",
					      i, sa[i].index);
				goto fail_src;
			}
			if (!sa[i].rank || sa[i].rank > NPR_MAX_RANK) {
				err = npr_err(-EINVAL, "shape %u: rank %u out of range 1..%d",
					      i, sa[i].rank, NPR_MAX_RANK);
				goto fail_src;
			}
			if (over[sa[i].index].rank >= 0) {
				err = npr_err(-EINVAL, "input %u has two shapes",
					      sa[i].index);
				goto fail_src;
			}
			over[sa[i].index].rank = sa[i].rank;
			for (j = 0; j < sa[i].rank; j++) {
				if (sa[i].dims[j] < 0 ||
				    sa[i].dims[j] > (1LL << 31)) {
					err = npr_err(-EINVAL, "shape %u: dim %u = %lld out of range",
						      i, j, (long long)sa[i].dims[j]);
					goto fail_src;
				}
				over[sa[i].index].d[j] = sa[i].dims[j];
			}
			for (j = sa[i].rank; j < NPR_MAX_RANK; j++)
				if (sa[i].dims[j]) {
					err = npr_err(-EINVAL, "shape %u: dims past rank must be 0",
						      i);
					goto fail_src;
				}
		}
	}
	if (props.cache_dir[0]) {
		/* a hit needs no clone: the key is hashed from the model,
		 * once per model handle */
		pthread_mutex_lock(&dev->lock);
		m = handle_get_locked(dev, a->model, NPR_HANDLE_MODEL, &err);
		if (m && !m->hashed) {
			npr_model_hash(m->g, m->hash);
			m->hashed = true;
		}
		if (m)
			npr_cache_key(dev, m->hash, m->g, over, &props, &key);
		pthread_mutex_unlock(&dev->lock);
		if (!m)
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
	}
	err = 0;
	pthread_mutex_lock(&dev->lock);
	m = handle_get_locked(dev, a->model, NPR_HANDLE_MODEL, &err);
	if (m) {
		/* the compile runs unlocked on a private clone */
		src = npr_graph_clone(m->g);
		if (!src)
			err = -ENOMEM;
	}
	pthread_mutex_unlock(&dev->lock);
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
	/* src is this compile's own copy: its weights move, not copied */
	err = npr_compile_graph_take(src, over, &ex->g);
	if (err)
		goto fail_ex;
	err = npr_graph_dynamic(ex->g);
	if (err >= 0 && !dev->ops->dynamic_shapes) {
		err = npr_node_err(&ex->g->nodes[err], -EOPNOTSUPP,
				   "the output shape depends on input values, which the %s device does not support",
				   dev->ops->name);
		goto fail_ex;
	}
	err = make_ports(ex, src);
	if (err)
		goto fail_ex;
	err = dev->ops->compile(ex);
	if (err)
		goto fail_ex;
	if (props.cache_dir[0])
		npr_cache_put(ex, &key);
have_exec:
	npr_graph_free(src);
	pthread_mutex_lock(&dev->lock);
	err = handle_alloc(dev, ex, NPR_HANDLE_EXEC, &a->exec);
	pthread_mutex_unlock(&dev->lock);
	if (err)
		exec_put(ex);
	return err;
fail_ex:
	exec_put(ex);
fail_src:
	npr_graph_free(src);
	return err;
}

/* ---- variables of stateful models (lib/state.c) ------------------------- */

/* A request no ring job holds: -ENOENT, -EBADF or -EBUSY otherwise. */
static struct npr_request *request_idle(struct npr_device *dev, uint32_t h,
					int *err)
{
	struct npr_request *rq;

	pthread_mutex_lock(&dev->lock);
	rq = handle_get_locked(dev, h, NPR_HANDLE_REQUEST, err);
	if (rq && rq->busy) {
		*err = npr_err(-EBUSY, "request 0x%08x has a job in flight", h);
		rq = NULL;
	}
	pthread_mutex_unlock(&dev->lock);
	return rq;
}

/* Variable @k (all when -1) back to its initial value. */
static void state_reset(struct npr_request *rq, int k)
{
	const struct npr_graph *g = rq->ex->g;
	int i;

	for (i = 0; i < g->nvars; i++) {
		const struct npr_variable *v = &g->vars[i];

		if (k >= 0 && i != k)
			continue;
		memset(rq->in[v->state_in].data, 0, rq->in[v->state_in].nbytes);
		if (v->valid_in >= 0)
			*(uint8_t *)rq->in[v->valid_in].data = 0;
	}
}

/* After a successful inference: keep what each Assign computed. */
static void state_commit(struct npr_request *rq)
{
	const struct npr_graph *g = rq->ex->g;
	int i;

	for (i = 0; i < g->nvars; i++) {
		const struct npr_variable *v = &g->vars[i];

		if (v->state_out < 0)
			continue;
		memcpy(rq->in[v->state_in].data, rq->out[v->state_out].data,
		       rq->in[v->state_in].nbytes);
		if (v->valid_in >= 0)
			*(uint8_t *)rq->in[v->valid_in].data = 1;
	}
}

/*
 * The variable ioctls.  A variable that is not set yet reads as its
 * initial value when that is a constant (the usual case), else as zeros:
 * an initial value computed from the inputs exists only during INFER.
 */
static int state_op(struct npr_request *rq, struct npr_state_arg *a,
		    unsigned int nr)
{
	const struct npr_variable *v;
	const struct npr_graph *g;
	struct npr_tensor *t;
	int i;

	g = rq->ex->g;
	a->count = g->nvars;
	if (nr == _IOC_NR(NPR_IOCTL_STATE_RESET) &&
	    (a->flags & NPR_STATE_RESET_ALL)) {
		state_reset(rq, -1);
		return 0;
	}
	if (a->index >= (uint32_t)g->nvars)
		return npr_err(-ENOENT, "variable %u: the model has %d variables",
			       a->index, g->nvars);
	v = &g->vars[a->index];
	t = &rq->in[v->state_in];
	switch (nr) {
	case _IOC_NR(NPR_IOCTL_STATE_INFO):
		a->elem_type = v->type;
		a->rank = v->shape.rank;
		for (i = 0; i < NPR_MAX_RANK; i++)
			a->dims[i] = i < v->shape.rank ? v->shape.d[i] : 0;
		a->bytes = t->nbytes;
		return npr_put_string(v->id, a->name, &a->name_len);
	case _IOC_NR(NPR_IOCTL_STATE_GET):
		a->elem_type = v->type;
		a->rank = v->shape.rank;
		for (i = 0; i < NPR_MAX_RANK; i++)
			a->dims[i] = i < v->shape.rank ? v->shape.d[i] : 0;
		if (!a->data || a->bytes < t->nbytes) {
			a->bytes = t->nbytes;
			return npr_err(-EMSGSIZE, "variable %s: %zu bytes needed",
				       v->id, t->nbytes);
		}
		if (v->valid_in >= 0 &&
		    !*(uint8_t *)rq->in[v->valid_in].data) {
			const struct npr_value *init =
				&g->vals[g->nodes[v->read_node].in[2]];

			if (init->data && init->nbytes == t->nbytes)
				memcpy((void *)(uintptr_t)a->data, init->data,
				       t->nbytes);
			else
				memset((void *)(uintptr_t)a->data, 0,
				       t->nbytes);
		} else
			memcpy((void *)(uintptr_t)a->data, t->data, t->nbytes);
		a->bytes = t->nbytes;
		return 0;
	case _IOC_NR(NPR_IOCTL_STATE_SET):
		if (a->elem_type != v->type || a->rank != (uint32_t)v->shape.rank)
			return npr_err(-EINVAL, "variable %s is %s of rank %d",
				       v->id, npr_elem_name(v->type),
				       v->shape.rank);
		for (i = 0; i < v->shape.rank; i++)
			if (a->dims[i] != v->shape.d[i])
				return npr_err(-EINVAL, "variable %s: dimension %d is %lld, not %lld",
					       v->id, i,
					       (long long)v->shape.d[i],
					       (long long)a->dims[i]);
		if (!a->data || a->bytes != t->nbytes)
			return npr_err(-EINVAL, "variable %s: %zu bytes expected, got %llu",
				       v->id, t->nbytes,
				       (unsigned long long)a->bytes);
		memcpy(t->data, (const void *)(uintptr_t)a->data, t->nbytes);
		if (v->valid_in >= 0)
			*(uint8_t *)rq->in[v->valid_in].data = 1;
		return 0;
	default:	/* RESET */
		state_reset(rq, (int)a->index);
		return 0;
	}
}

static int cmd_state(struct npr_device *dev, void *arg, unsigned int nr)
{
	struct npr_state_arg *a = arg;
	struct npr_request *rq;
	int err;

	err = check_flags(a->flags, nr == _IOC_NR(NPR_IOCTL_STATE_RESET) ?
			  NPR_STATE_RESET_ALL : 0);
	if (err)
		return err;
	rq = request_idle(dev, a->req, &err);
	if (!rq)
		return err;
	return state_op(rq, a, nr);
}

static int cmd_export(struct npr_device *dev, void *arg)
{
	struct npr_export *a = arg;
	struct npr_exec *ex;
	size_t len = 0;
	void *blob = NULL;
	int err;

	err = check_flags(a->flags, 0);
	if (!err)
		err = check_reserved(a->reserved);
	if (err)
		return err;
	pthread_mutex_lock(&dev->lock);
	ex = handle_get_locked(dev, a->exec, NPR_HANDLE_EXEC, &err);
	if (ex)
		ex->refs++;
	pthread_mutex_unlock(&dev->lock);
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
	exec_put(ex);
	pthread_mutex_unlock(&dev->lock);
	return err;
}

static int cmd_import(struct npr_device *dev, void *arg)
{
	struct npr_import *a = arg;
	struct npr_exec *ex = NULL;
	int err;

	err = check_flags(a->flags, 0);
	if (!err)
		err = check_reserved(a->reserved);
	if (err)
		return err;
	if (!a->data || !a->bytes)
		return npr_err(-EINVAL, "no blob");
	err = npr_blob_import(dev, (const void *)(uintptr_t)a->data,
			      a->bytes, &ex);
	if (!err)
		err = dev->ops->compile(ex);
	if (!err) {
		pthread_mutex_lock(&dev->lock);
		err = handle_alloc(dev, ex, NPR_HANDLE_EXEC, &a->exec);
		if (!err)
			ex = NULL;
		pthread_mutex_unlock(&dev->lock);
	}
	if (ex) {
		pthread_mutex_lock(&dev->lock);
		exec_put(ex);
		pthread_mutex_unlock(&dev->lock);
	}
	return err;
}

/*
 * Node @i's record: operations only (no Parameter, Const or Result);
 * nodes that compile removed are "optimized out" with no time.
 */
static bool prof_listed(const struct npr_graph *g, int i)
{
	const struct npr_node *n = &g->nodes[i];

	return !(n->op->flags & (NPR_OP_SOURCE | NPR_OP_SINK));
}

static int cmd_profile(struct npr_device *dev, void *arg)
{
	struct npr_profile *a = arg;
	struct npr_profile_rec *r = (void *)(uintptr_t)a->recs;
	const struct npr_graph *g;
	struct npr_request *rq;
	uint32_t n = 0, k = 0;
	int err, i;

	err = check_flags(a->flags, 0);
	if (err)
		return err;
	rq = request_idle(dev, a->req, &err);
	if (!rq)
		return err;
	if (!rq->prof)
		return npr_err(-ENODATA, "ENABLE_PROFILING was off when this model was compiled");
	g = rq->ex->g;
	for (i = 0; i < g->nnodes; i++)
		n += prof_listed(g, i);
	if (!a->recs || a->count < n) {
		uint32_t room = a->recs ? a->count : 0;

		a->count = n;
		return npr_err(-EMSGSIZE, "%u profile records, room for %u",
			       n, room);
	}
	for (i = 0; i < g->nnodes; i++) {
		const struct npr_node *nd = &g->nodes[i];
		const struct npr_prof *p = &rq->prof[i];
		struct npr_profile_rec *o = &r[k];

		if (!prof_listed(g, i))
			continue;
		memset(o, 0, sizeof(*o));
		snprintf(o->name, sizeof(o->name), "%s", nd->name);
		snprintf(o->type, sizeof(o->type), "%s", nd->type);
		if (nd->dead || p->fused) {
			o->status = NPR_PROF_OPTIMIZED_OUT;
		} else if (p->kernel) {
			o->status = NPR_PROF_EXECUTED;
			snprintf(o->kernel, sizeof(o->kernel), "%s", p->kernel);
			o->real_ns = p->ns;
		} else {
			o->status = NPR_PROF_NOT_RUN;
		}
		k++;
	}
	a->count = k;
	return 0;
}

static int cmd_query_model(struct npr_device *dev, void *arg)
{
	struct npr_query_model *a = arg;
	struct npr_graph *g = NULL;
	struct npr_model *m;
	bool *ok = NULL;
	size_t need = 1;
	uint32_t n = 0;
	char *out;
	int err, i;

	err = check_flags(a->flags, 0);
	if (err)
		return err;
	pthread_mutex_lock(&dev->lock);
	m = handle_get_locked(dev, a->model, NPR_HANDLE_MODEL, &err);
	if (m) {
		g = npr_graph_clone(m->g);
		if (!g)
			err = -ENOMEM;
	}
	pthread_mutex_unlock(&dev->lock);
	if (err)
		return err;
	ok = calloc(g->nnodes ? g->nnodes : 1, sizeof(bool));
	err = ok ? npr_query_model(dev, g, ok) : -ENOMEM;
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

/* ---- buffer objects (remote tensors) ------------------------------------ */

static int cmd_bo_create(struct npr_device *dev, void *arg)
{
	struct npr_bo_create *a = arg;
	struct npr_bo *bo;
	int err;

	err = check_flags(a->flags, 0);
	if (!err)
		err = check_reserved(a->reserved);
	if (err)
		return err;
	if (!a->bytes || a->bytes > (1ULL << 40))
		return npr_err(-ERANGE, "BO of %llu bytes: 1 .. 2^40",
			       (unsigned long long)a->bytes);
	bo = calloc(1, sizeof(*bo));
	if (!bo)
		return -ENOMEM;
	bo->refs = 1;
	bo->bytes = a->bytes;
	bo->memfd = memfd_create("npuring-bo", MFD_CLOEXEC);
	if (bo->memfd < 0) {
		err = npr_err(-errno, "memfd_create: %s", strerror(errno));
		free(bo);
		return err;
	}
	if (ftruncate(bo->memfd, (off_t)a->bytes)) {
		err = npr_err(-errno, "BO of %llu bytes: %s",
			      (unsigned long long)a->bytes, strerror(errno));
		goto fail;
	}
	bo->addr = mmap(NULL, a->bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
			bo->memfd, 0);
	if (bo->addr == MAP_FAILED) {
		err = npr_err(errno == ENOMEM ? -ENOMEM : -errno,
			      "BO of %llu bytes: mmap: %s",
			      (unsigned long long)a->bytes, strerror(errno));
		goto fail;
	}
	pthread_mutex_lock(&dev->lock);
	err = handle_alloc(dev, bo, NPR_HANDLE_BO, &a->handle);
	if (err)
		bo_put(bo);
	pthread_mutex_unlock(&dev->lock);
	return err;
fail:
	close(bo->memfd);
	free(bo);
	return err;
}

static int cmd_bo_info(struct npr_device *dev, void *arg)
{
	struct npr_bo_info *a = arg;
	struct npr_bo *bo;
	int err;

	err = check_flags(a->flags, NPR_BO_INFO_FD);
	if (!err)
		err = check_reserved(a->reserved);
	if (err)
		return err;
	pthread_mutex_lock(&dev->lock);
	bo = handle_get_locked(dev, a->handle, NPR_HANDLE_BO, &err);
	if (bo) {
		a->bytes = bo->bytes;
		a->addr = (uintptr_t)bo->addr;
		a->bound = bo->bound;
		a->fd = -1;
		if (a->flags & NPR_BO_INFO_FD) {
			a->fd = fcntl(bo->memfd, F_DUPFD_CLOEXEC, 3);
			if (a->fd < 0)
				err = npr_err(-errno, "dup: %s", strerror(errno));
		}
	}
	pthread_mutex_unlock(&dev->lock);
	return err;
}

static int cmd_bo_bind(struct npr_device *dev, void *arg)
{
	struct npr_bo_bind *a = arg;
	bool out = a->flags & NPR_PORT_OUTPUT;
	struct npr_request *rq;
	struct npr_port *p;
	struct npr_bo *bo;
	int64_t stride;
	int err, i, cnt;

	err = check_flags(a->flags, NPR_PORT_OUTPUT);
	if (!err)
		err = check_reserved(a->reserved);
	if (err)
		return err;
	pthread_mutex_lock(&dev->lock);
	rq = handle_get_locked(dev, a->req, NPR_HANDLE_REQUEST, &err);
	if (rq && rq->busy) {
		err = npr_err(-EBUSY, "request 0x%08x has a job in flight", a->req);
		goto out;
	}
	if (!rq)
		goto out;
	bo = handle_get_locked(dev, a->bo, NPR_HANDLE_BO, &err);
	if (!bo)
		goto out;
	cnt = out ? user_outputs(rq->ex) : user_inputs(rq->ex);
	if (a->index >= (uint32_t)cnt) {
		err = npr_err(-EINVAL, "%s index %u out of range (%d)",
			      out ? "output" : "input", a->index, cnt);
		goto out;
	}
	p = out ? &rq->ex->out[a->index] : &rq->ex->in[a->index];
	if (!npr_shape_static(&p->shape)) {
		err = npr_err(-EOPNOTSUPP, "output %s depends on input values: its buffer is the request's, read it with GET_TENSOR",
			      p->name);
		goto out;
	}
	if (a->elem_type != p->type || a->rank != (uint32_t)p->shape.rank) {
		err = npr_err(-EINVAL, "%s %s is %s of rank %d, not %s of rank %u",
			      out ? "output" : "input", p->name,
			      npr_elem_name(p->type), p->shape.rank,
			      npr_elem_name(a->elem_type), a->rank);
		goto out;
	}
	for (i = 0; i < NPR_MAX_RANK; i++) {
		int64_t want = i < p->shape.rank ? p->shape.d[i] : 0;

		if (a->dims[i] != want) {
			err = npr_err(-EINVAL, "%s %s: dimension %d is %lld, not %lld",
				      out ? "output" : "input", p->name, i,
				      (long long)want, (long long)a->dims[i]);
			goto out;
		}
	}
	/* strides: all zero, or exactly the dense ones */
	stride = (int64_t)npr_elem_size(p->type);
	for (i = p->shape.rank - 1; i >= 0; i--) {
		if (a->strides[i] && a->strides[i] != stride) {
			err = npr_err(-EINVAL, "%s %s: stride %lld of dimension %d is not dense (%lld); the device reads dense tensors",
				      out ? "output" : "input", p->name,
				      (long long)a->strides[i], i,
				      (long long)stride);
			goto out;
		}
		stride *= p->shape.d[i];
	}
	for (i = p->shape.rank; i < NPR_MAX_RANK; i++)
		if (a->strides[i]) {
			err = npr_err(-EINVAL, "strides past the rank must be 0");
			goto out;
		}
	if (a->offset % npr_elem_size(p->type)) {
		err = npr_err(-EINVAL, "offset %llu is not a multiple of the element size",
			      (unsigned long long)a->offset);
		goto out;
	}
	if (a->offset > bo->bytes || p->bytes > bo->bytes - a->offset) {
		err = npr_err(-ERANGE, "%s %s needs %zu bytes at offset %llu; the BO has %zu",
			      out ? "output" : "input", p->name, p->bytes,
			      (unsigned long long)a->offset, bo->bytes);
		goto out;
	}
	{
		struct npr_bo **slot = out ? &rq->bo_out[a->index] :
					     &rq->bo_in[a->index];
		struct npr_tensor *t = out ? &rq->out[a->index] :
					     &rq->in[a->index];

		bo->refs++;
		bo->bound++;
		port_unbind(slot);
		*slot = bo;
		t->data = (char *)bo->addr + a->offset;
	}
out:
	pthread_mutex_unlock(&dev->lock);
	return err;
}

/*
 * MAKE_STATEFUL's input shapes, checked as COMPILE checks them, into
 * *@out: one per input, rank -1 where none is given.
 */
static int stateful_shapes(int ninputs, const struct npr_shape_arg *sa,
			   uint32_t num, struct npr_shape **out)
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
			    sa[i].dims[j] < 0 || sa[i].dims[j] > (1LL << 31))
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

static int cmd_make_stateful(struct npr_device *dev, void *arg)
{
	struct npr_make_stateful *a = arg;
	const struct npr_state_pair *p;
	struct npr_shape *over = NULL;
	const char **names;
	struct npr_model *m;
	uint32_t i;
	int err;

	err = check_flags(a->flags, 0);
	if (!err)
		err = check_reserved(a->reserved);
	if (err)
		return err;
	if (!a->count || a->count > 1024 || !a->pairs)
		return npr_err(-EINVAL, "MakeStateful: %u pairs (1 .. 1024, and a pointer)",
			       a->count);
	if (a->num_shapes && !a->shapes)
		return npr_err(-EINVAL, "MakeStateful: %u shapes without a pointer",
			       a->num_shapes);
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
	m = handle_get_locked(dev, a->model, NPR_HANDLE_MODEL, &err);
	if (m && a->num_shapes)
		err = stateful_shapes(m->g->ninputs,
				      (const void *)(uintptr_t)a->shapes,
				      a->num_shapes, &over);
	if (m && !err) {
		err = npr_make_stateful(m->g, names, (int)a->count, over);
		m->hashed = false;	/* another model now */
	}
	pthread_mutex_unlock(&dev->lock);
	free(over);
	free(names);
	return err;
}

static int cmd_req_create(struct npr_device *dev, void *arg)
{
	struct npr_req_create *a = arg;
	struct npr_request *rq;
	struct npr_exec *ex;
	int err, i;

	err = check_flags(a->flags, 0);
	if (err)
		return err;
	pthread_mutex_lock(&dev->lock);
	ex = handle_get_locked(dev, a->exec, NPR_HANDLE_EXEC, &err);
	if (ex)
		ex->refs++;
	pthread_mutex_unlock(&dev->lock);
	if (!ex)
		return err;
	rq = calloc(1, sizeof(*rq));
	if (!rq) {
		pthread_mutex_lock(&dev->lock);
		exec_put(ex);
		pthread_mutex_unlock(&dev->lock);
		return -ENOMEM;
	}
	rq->ex = ex;
	rq->in = calloc(ex->nin + 1, sizeof(*rq->in));
	rq->out = calloc(ex->nout + 1, sizeof(*rq->out));
	rq->own_in = calloc(ex->nin + 1, sizeof(void *));
	rq->own_out = calloc(ex->nout + 1, sizeof(void *));
	rq->bo_in = calloc(ex->nin + 1, sizeof(*rq->bo_in));
	rq->bo_out = calloc(ex->nout + 1, sizeof(*rq->bo_out));
	rq->cap_out = calloc(ex->nout + 1, sizeof(*rq->cap_out));
	err = -ENOMEM;
	if (!rq->in || !rq->out || !rq->own_in || !rq->own_out ||
	    !rq->bo_in || !rq->bo_out || !rq->cap_out)
		goto fail;
	for (i = 0; i < ex->nin + ex->nout; i++) {
		bool out = i >= ex->nin;
		int k = out ? i - ex->nin : i;
		struct npr_port *p = out ? &ex->out[k] : &ex->in[k];
		struct npr_tensor *t = out ? &rq->out[k] : &rq->in[k];
		void **own = out ? &rq->own_out[k] : &rq->own_in[k];

		*own = npr_alloc(p->bytes);
		if (!*own)
			goto fail;
		memset(*own, 0, p->bytes);
		t->type = p->type;
		t->shape = p->shape;
		t->data = *own;
		t->nbytes = p->bytes;
		if (out)
			rq->cap_out[k] = p->bytes;
	}
	state_reset(rq, -1);
	if (ex->props.profiling) {
		rq->prof = calloc(ex->g->nnodes ? ex->g->nnodes : 1,
				  sizeof(*rq->prof));
		if (!rq->prof)
			goto fail;
	}
	if (dev->ops->request_create) {
		err = dev->ops->request_create(rq);
		if (err)
			goto fail;
	}
	pthread_mutex_lock(&dev->lock);
	err = handle_alloc(dev, rq, NPR_HANDLE_REQUEST, &a->req);
	if (err)
		request_destroy(rq);
	pthread_mutex_unlock(&dev->lock);
	return err;
fail:
	pthread_mutex_lock(&dev->lock);
	request_destroy(rq);
	pthread_mutex_unlock(&dev->lock);
	return err;
}

static int cmd_tensor(struct npr_device *dev, void *arg, bool set)
{
	struct npr_tensor_arg *a = arg;
	uint32_t known = NPR_PORT_OUTPUT |
			 (set ? NPR_TENSOR_BIND : NPR_TENSOR_MAP);
	struct npr_request *rq;
	struct npr_port *p;
	struct npr_tensor *t;
	bool out = a->flags & NPR_PORT_OUTPUT;
	int err, i, cnt;

	err = check_flags(a->flags, known);
	if (err)
		return err;
	pthread_mutex_lock(&dev->lock);
	rq = handle_get_locked(dev, a->req, NPR_HANDLE_REQUEST, &err);
	pthread_mutex_unlock(&dev->lock);
	if (!rq)
		return err;
	cnt = out ? user_outputs(rq->ex) : user_inputs(rq->ex);
	if (a->index >= (uint32_t)cnt)
		return npr_err(-EINVAL, "%s index %u out of range (%d)",
			       out ? "output" : "input", a->index, cnt);
	p = out ? &rq->ex->out[a->index] : &rq->ex->in[a->index];
	t = out ? &rq->out[a->index] : &rq->in[a->index];
	if (!set) {
		/* the request's shape: a dynamic output's last one */
		if (!npr_shape_static(&t->shape))
			return npr_err(-ENODATA, "output %s depends on input values and has no shape before the first inference",
				       p->name);
		a->elem_type = p->type;
		a->rank = t->shape.rank;
		for (i = 0; i < NPR_MAX_RANK; i++)
			a->dims[i] = i < t->shape.rank ? t->shape.d[i] : 0;
		if (a->flags & NPR_TENSOR_MAP) {
			a->data = (uintptr_t)t->data;
			a->bytes = t->nbytes;
			return 0;
		}
		if ((!a->data && t->nbytes) || a->bytes < t->nbytes) {
			err = npr_err(-EMSGSIZE, "%s %s needs %zu bytes, buffer has %llu",
				      out ? "output" : "input", p->name,
				      t->nbytes, (unsigned long long)a->bytes);
			a->bytes = t->nbytes;
			return err;
		}
		if (t->nbytes)
			memcpy((void *)(uintptr_t)a->data, t->data, t->nbytes);
		a->bytes = t->nbytes;
		return 0;
	}
	if (!npr_shape_static(&p->shape))
		return npr_err(-EOPNOTSUPP, "output %s depends on input values: its buffer is the request's, read it with GET_TENSOR",
			       p->name);
	if (a->elem_type != p->type)
		return npr_err(-EINVAL, "%s %s is %s, not %s",
			       out ? "output" : "input", p->name,
			       npr_elem_name(p->type),
			       npr_elem_name(a->elem_type));
	if (a->rank != (uint32_t)p->shape.rank)
		return npr_err(-EINVAL, "%s %s has rank %d, not %u",
			       out ? "output" : "input", p->name,
			       p->shape.rank, a->rank);
	for (i = 0; i < NPR_MAX_RANK; i++) {
		int64_t want = i < p->shape.rank ? p->shape.d[i] : 0;

		if (a->dims[i] != want) {
			char buf[128];

			return npr_err(-EINVAL, "%s %s has shape %s (dim %d is %lld, not %lld)",
				       out ? "output" : "input", p->name,
				       npr_shape_str(&p->shape, buf, sizeof(buf)),
				       i, (long long)want,
				       (long long)a->dims[i]);
		}
	}
	if ((!a->data && p->bytes) || a->bytes != p->bytes)
		return npr_err(-EINVAL, "%s %s needs exactly %zu bytes, got %llu",
			       out ? "output" : "input", p->name, p->bytes,
			       (unsigned long long)a->bytes);
	pthread_mutex_lock(&dev->lock);
	port_unbind(out ? &rq->bo_out[a->index] : &rq->bo_in[a->index]);
	pthread_mutex_unlock(&dev->lock);
	if (a->flags & NPR_TENSOR_BIND) {
		t->data = (void *)(uintptr_t)a->data;
	} else {
		void **own = out ? &rq->own_out[a->index] :
				   &rq->own_in[a->index];

		t->data = *own;
		if (p->bytes)
			memcpy(t->data, (void *)(uintptr_t)a->data, p->bytes);
	}
	return 0;
}

static int cmd_infer(struct npr_device *dev, void *arg)
{
	struct npr_infer *a = arg;
	struct npr_request *rq;
	int err;

	err = check_flags(a->flags, 0);
	if (!err)
		err = check_reserved(a->reserved);
	if (err)
		return err;
	pthread_mutex_lock(&dev->lock);
	rq = handle_get_locked(dev, a->req, NPR_HANDLE_REQUEST, &err);
	pthread_mutex_unlock(&dev->lock);
	if (!rq)
		return err;
	a->started_ns = npr_now_ns();
	err = npr_request_infer(rq);
	a->finished_ns = npr_now_ns();
	return err;
}

static int cmd_destroy(struct npr_device *dev, void *arg)
{
	struct npr_handle_destroy *a = arg;
	void *obj;
	int err;

	err = check_flags(a->flags, 0);
	if (!err)
		err = check_reserved(a->reserved);
	if (err)
		return err;
	pthread_mutex_lock(&dev->lock);
	obj = handle_get_locked(dev, a->handle, 0, &err);
	if (obj && (a->handle >> HANDLE_TYPE_SHIFT) == NPR_HANDLE_REQUEST &&
	    ((struct npr_request *)obj)->busy) {
		err = npr_err(-EBUSY, "request 0x%08x has a job in flight",
			      a->handle);
		obj = NULL;
	}
	if (obj) {
		handle_free_locked(dev, a->handle);
		object_destroy(a->handle >> HANDLE_TYPE_SHIFT, obj);
	}
	pthread_mutex_unlock(&dev->lock);
	return err;
}

static int cmd_get_error(struct npr_device *dev, void *arg)
{
	struct npr_get_error *a = arg;
	const char *msg = npr_last_error();
	char *job = NULL;
	size_t need;
	int err = 0;

	/* never overwrite the message */
	if (a->flags & ~NPR_GET_ERROR_JOB)
		return -EOPNOTSUPP;
	if (a->flags & NPR_GET_ERROR_JOB) {
		err = npr_ring_job_error(dev, a->user_data, &job, &a->err);
		if (err)
			return err;
		msg = job;
	} else if (a->user_data) {
		return -EINVAL;
	} else {
		a->err = npr_last_errno();
	}
	need = strlen(msg) + 1;
	if (!a->buf || a->len < need) {
		if (a->buf && a->len) {
			memcpy((void *)(uintptr_t)a->buf, msg, a->len - 1);
			((char *)(uintptr_t)a->buf)[a->len - 1] = 0;
		}
		err = -EMSGSIZE;
	} else {
		memcpy((void *)(uintptr_t)a->buf, msg, need);
	}
	a->len = need;
	free(job);
	return err;
}

/* ---- helpers for ring jobs (lib/ring.c) ------------------------------- */

/**
 * npr_request_out_shape() - size a dynamic output for this inference
 * @rq: the request, being run by the backend.
 * @i: output index.
 * @s: its static shape.
 *
 * Dynamic outputs are never bound to caller memory, so the buffer is the
 * request's own; it grows and is kept.
 *
 * Return: 0 or -ENOMEM.
 */
int npr_request_out_shape(struct npr_request *rq, int i,
			  const struct npr_shape *s)
{
	struct npr_tensor *t = &rq->out[i];
	size_t bytes = npr_tensor_bytes(t->type, npr_shape_numel(s));

	if (bytes > rq->cap_out[i]) {
		void *p = npr_alloc(bytes);

		if (!p)
			return -ENOMEM;
		free(rq->own_out[i]);
		rq->own_out[i] = p;
		rq->cap_out[i] = bytes;
	}
	t->data = rq->own_out[i];
	t->shape = *s;
	t->nbytes = bytes;
	return 0;
}

/**
 * npr_request_infer() - run a request once: the backend, then the
 * variables of a stateful model keep what its Assign ops computed
 * @rq: the request (not running elsewhere).
 *
 * Return: the backend's result.
 */
int npr_request_infer(struct npr_request *rq)
{
	int err = rq->ex->dev->ops->infer(rq);

	if (!err)
		state_commit(rq);
	return err;
}

/* A model handle for @g, which it takes over (freed on failure too). */
int npr_job_model_add(struct npr_device *dev, struct npr_graph *g,
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
	err = handle_alloc(dev, m, NPR_HANDLE_MODEL, model);
	pthread_mutex_unlock(&dev->lock);
	if (err)
		model_destroy(m);
	return err;
}

int npr_job_compile(struct npr_device *dev, uint32_t model, uint32_t *exec)
{
	struct npr_compile a = { .size = sizeof(a) };
	int err;

	a.model = model;
	err = cmd_compile(dev, &a);
	if (!err)
		*exec = a.exec;
	return err;
}

/* Mark a request busy for a job: -ENOENT, -EBADF, or -EBUSY. */
int npr_req_acquire(struct npr_device *dev, uint32_t h,
		    struct npr_request **out)
{
	struct npr_request *rq;
	int err = 0;

	pthread_mutex_lock(&dev->lock);
	rq = handle_get_locked(dev, h, NPR_HANDLE_REQUEST, &err);
	if (rq && rq->busy) {
		err = npr_err(-EBUSY, "request 0x%08x already has a job in flight",
			      h);
		rq = NULL;
	}
	if (rq)
		rq->busy = 1;
	pthread_mutex_unlock(&dev->lock);
	*out = rq;
	return rq ? 0 : err;
}

/* One more job of the chain that already holds @rq. */
void npr_req_hold(struct npr_device *dev, struct npr_request *rq)
{
	pthread_mutex_lock(&dev->lock);
	rq->busy++;
	pthread_mutex_unlock(&dev->lock);
}

void npr_req_release(struct npr_device *dev, struct npr_request *rq)
{
	pthread_mutex_lock(&dev->lock);
	rq->busy--;
	pthread_mutex_unlock(&dev->lock);
}

/* ---- dispatch ------------------------------------------------------------ */

static const struct cmd {
	size_t ksize, v0;
} cmds[] = {
	[0x00] = { sizeof(struct npr_device_info), sizeof(struct npr_device_info) },
	[0x01] = { sizeof(struct npr_param), sizeof(struct npr_param) },
	[0x02] = { sizeof(struct npr_param), sizeof(struct npr_param) },
	[0x03] = { sizeof(struct npr_model_load), sizeof(struct npr_model_load) },
	[0x04] = { sizeof(struct npr_model_info), sizeof(struct npr_model_info) },
	[0x05] = { sizeof(struct npr_port_info), sizeof(struct npr_port_info) },
	[0x06] = { sizeof(struct npr_compile), sizeof(struct npr_compile) },
	[0x07] = { sizeof(struct npr_req_create), sizeof(struct npr_req_create) },
	[0x08] = { sizeof(struct npr_tensor_arg), sizeof(struct npr_tensor_arg) },
	[0x09] = { sizeof(struct npr_tensor_arg), sizeof(struct npr_tensor_arg) },
	[0x0a] = { sizeof(struct npr_infer), sizeof(struct npr_infer) },
	[0x0b] = { sizeof(struct npr_handle_destroy), sizeof(struct npr_handle_destroy) },
	[0x0c] = { sizeof(struct npr_get_error),
		   offsetof(struct npr_get_error, user_data) },
	[0x10] = { sizeof(struct npr_prop_info), sizeof(struct npr_prop_info) },
	[0x11] = { sizeof(struct npr_state_arg), sizeof(struct npr_state_arg) },
	[0x12] = { sizeof(struct npr_state_arg), sizeof(struct npr_state_arg) },
	[0x13] = { sizeof(struct npr_state_arg), sizeof(struct npr_state_arg) },
	[0x14] = { sizeof(struct npr_state_arg), sizeof(struct npr_state_arg) },
	[0x15] = { sizeof(struct npr_export), sizeof(struct npr_export) },
	[0x16] = { sizeof(struct npr_import), sizeof(struct npr_import) },
	[0x17] = { sizeof(struct npr_profile), sizeof(struct npr_profile) },
	[0x18] = { sizeof(struct npr_query_model), sizeof(struct npr_query_model) },
	[0x19] = { sizeof(struct npr_bo_create), sizeof(struct npr_bo_create) },
	[0x1a] = { sizeof(struct npr_bo_info), sizeof(struct npr_bo_info) },
	[0x1b] = { sizeof(struct npr_bo_bind), sizeof(struct npr_bo_bind) },
	[0x1c] = { sizeof(struct npr_make_stateful), 24 },
	[0x0d] = { sizeof(struct npr_ring_setup), sizeof(struct npr_ring_setup) },
	[0x0e] = { sizeof(struct npr_submit), sizeof(struct npr_submit) },
	[0x0f] = { sizeof(struct npr_reap), sizeof(struct npr_reap) },
};

/*
 * Ring jobs that carry an ioctl's argument struct (IMPORT, EXPORT, the
 * variables): the struct is copied and checked like the ioctl's at
 * submission (steps 1-4 of the validation order), run on a worker, and its
 * outputs are written back before the completion is posted.
 */
int npr_job_arg_in(unsigned long cmd, const void *uarg, void *karg,
		   uint32_t *usize)
{
	unsigned int nr = _IOC_NR(cmd);
	const struct npr_state_arg *st = karg;
	int err;

	err = copy_in(karg, cmds[nr].ksize, cmds[nr].v0, uarg, usize);
	if (err)
		return err;
	switch (nr) {
	case _IOC_NR(NPR_IOCTL_IMPORT):
		err = check_flags(((struct npr_import *)karg)->flags, 0);
		return err ? err :
		       check_reserved(((struct npr_import *)karg)->reserved);
	case _IOC_NR(NPR_IOCTL_EXPORT):
		err = check_flags(((struct npr_export *)karg)->flags, 0);
		return err ? err :
		       check_reserved(((struct npr_export *)karg)->reserved);
	default:
		return check_flags(st->flags,
				   nr == _IOC_NR(NPR_IOCTL_STATE_RESET) ?
				   NPR_STATE_RESET_ALL : 0);
	}
}

void npr_job_arg_out(unsigned long cmd, void *uarg, const void *karg,
		     uint32_t usize)
{
	copy_out(uarg, karg, cmds[_IOC_NR(cmd)].ksize, usize);
}

/* Run it; @rq is the request a variable job holds, NULL otherwise. */
int npr_job_run_arg(struct npr_device *dev, struct npr_request *rq,
		    unsigned long cmd, void *karg)
{
	unsigned long mark = npr_err_mark();
	unsigned int nr = _IOC_NR(cmd);
	int err;

	switch (nr) {
	case _IOC_NR(NPR_IOCTL_IMPORT):
		err = cmd_import(dev, karg);
		break;
	case _IOC_NR(NPR_IOCTL_EXPORT):
		err = cmd_export(dev, karg);
		break;
	default:
		err = state_op(rq, karg, nr);
	}
	return npr_err_default(err, mark);
}

static int do_ioctl(int fd, unsigned long cmd, void *arg)
{
	union {
		struct npr_device_info di;
		struct npr_param pa;
		struct npr_model_load ml;
		struct npr_model_info mi;
		struct npr_port_info pi;
		struct npr_compile co;
		struct npr_req_create rc;
		struct npr_tensor_arg ta;
		struct npr_infer in;
		struct npr_handle_destroy hd;
		struct npr_get_error ge;
		struct npr_prop_info pi2;
		struct npr_state_arg st;
		struct npr_export ex;
		struct npr_import im;
		struct npr_profile pr;
		struct npr_query_model qm;
		struct npr_bo_create bc;
		struct npr_bo_info bi;
		struct npr_bo_bind bb;
		struct npr_make_stateful mk;
		struct npr_ring_setup rs;
		struct npr_submit su;
		struct npr_reap re;
	} k;
	unsigned long mark = npr_err_mark();
	unsigned int nr = _IOC_NR(cmd);
	struct npr_device *dev;
	uint32_t usize = 0;
	int err;

	if (_IOC_TYPE(cmd) != NPR_IOCTL_TYPE || _IOC_DIR(cmd) !=
	    (_IOC_READ | _IOC_WRITE) || nr >= sizeof(cmds) / sizeof(cmds[0]) ||
	    !cmds[nr].ksize)
		return npr_err(-ENOTTY, "unknown ioctl 0x%lx", cmd);
	if (nr == _IOC_NR(NPR_IOCTL_GET_ERROR)) {
		/* reads the message without replacing it */
		dev = dev_lookup(fd);
		if (!dev)
			return -EBADF;
		if (!arg)
			return -EINVAL;
		memcpy(&usize, arg, 4);
		if (usize < cmds[nr].v0)
			return -EINVAL;
		for (size_t i = cmds[nr].ksize; i < usize; i++)
			if (((unsigned char *)arg)[i])
				return -E2BIG;
		memset(&k, 0, cmds[nr].ksize);
		memcpy(&k, arg, usize < cmds[nr].ksize ? usize :
			   cmds[nr].ksize);
		err = cmd_get_error(dev, &k);
		copy_out(arg, &k, cmds[nr].ksize, usize);
		return err;
	}
	dev = dev_lookup(fd);
	if (!dev)
		return npr_err(-EBADF, "fd %d is not an open npuring device",
			       fd);
	err = copy_in(&k, cmds[nr].ksize, cmds[nr].v0, arg, &usize);
	if (err)
		return err;
	switch (nr) {
	case 0x00: err = cmd_device_info(dev, &k); break;
	case 0x01: err = cmd_param(dev, &k, false); break;
	case 0x02: err = cmd_param(dev, &k, true); break;
	case 0x03: err = cmd_model_load(dev, &k); break;
	case 0x04: err = cmd_model_info(dev, &k); break;
	case 0x05: err = cmd_port_info(dev, &k); break;
	case 0x06: err = cmd_compile(dev, &k); break;
	case 0x07: err = cmd_req_create(dev, &k); break;
	case 0x08: err = cmd_tensor(dev, &k, true); break;
	case 0x09: err = cmd_tensor(dev, &k, false); break;
	case 0x0a: err = cmd_infer(dev, &k); break;
	case 0x0b: err = cmd_destroy(dev, &k); break;
	case 0x10: err = cmd_prop_info(dev, &k); break;
	case 0x11: case 0x12: case 0x13: case 0x14:
		err = cmd_state(dev, &k, nr);
		break;
	case 0x15: err = cmd_export(dev, &k); break;
	case 0x16: err = cmd_import(dev, &k); break;
	case 0x17: err = cmd_profile(dev, &k); break;
	case 0x18: err = cmd_query_model(dev, &k); break;
	case 0x19: err = cmd_bo_create(dev, &k); break;
	case 0x1a: err = cmd_bo_info(dev, &k); break;
	case 0x1b: err = cmd_bo_bind(dev, &k); break;
	case 0x1c: err = cmd_make_stateful(dev, &k); break;
	case 0x0d: err = npr_ring_setup(dev, &k.rs); break;
	case 0x0e: err = npr_ring_submit(dev, &k.su); break;
	case 0x0f: err = npr_ring_reap(dev, &k.re); break;
	default: err = -ENOTTY;
	}
	/* outputs (including needed sizes on -EMSGSIZE) go back either way */
	if (!err || err == -EMSGSIZE ||
	    nr == 0x0e || (nr == 0x0f && err == -ETIME))
		copy_out(arg, &k, cmds[nr].ksize, usize);
	return npr_err_default(err, mark);
}

/*
 * The public entry points: the library never changes errno, whatever the
 * code below (libc, libxml2, libpng) does to it.
 */
int npr_open(const char *name, unsigned int flags)
{
	int saved = errno, ret = do_open(name, flags);

	errno = saved;
	return ret;
}

int npr_close(int fd)
{
	int saved = errno, ret = do_close(fd);

	errno = saved;
	return ret;
}

int npr_ioctl(int fd, unsigned long cmd, void *arg)
{
	int saved = errno, ret = do_ioctl(fd, cmd, arg);

	errno = saved;
	return ret;
}
